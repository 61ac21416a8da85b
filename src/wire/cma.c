/* SPDX-License-Identifier: MIT */
/*
 * cma.c - the rdma_cm private-data header and port-space service IDs (cma.h, IBTA
 * Annex A11, Linux cma.c's cma_format_hdr() and cma_save_ip_info()).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "wire/byteorder.h"
#include "wire/cma.h"

#define IPV4_PAD_BYTES 12
#define PS_SHIFT 16
#define PORT_MASK 0xffffu

static const uint8_t zero_pad[IPV4_PAD_BYTES];

/* What encode refuses: an IP version rdma_cm has not, or an IPv4 address that is not
 * 12 zero bytes and the address (Linux's cma_set_ip_ver()/cma_format_hdr() write them so). */
static bool hdr_ok(const struct urnic_cma_hdr *h)
{
	if (h->ip_version == 4)
		return !memcmp(h->src_addr, zero_pad, IPV4_PAD_BYTES) &&
		       !memcmp(h->dst_addr, zero_pad, IPV4_PAD_BYTES);
	return h->ip_version == 6;
}

/* Decoding is as tolerant as Linux's cma_save_ip_info(): the lower nibble of the IP
 * version byte (reserved, Annex A11) and an IPv4 address's first 12 bytes are not read;
 * the decoded header holds them as zeros, as encode writes them. */
static enum urnic_cm_reason decode(struct urnic_cma_hdr *h, const uint8_t *buf, size_t len)
{
	if (len < URNIC_CMA_HDR_BYTES)
		return URNIC_CM_R_CMA_TRUNCATED;
	/* cma_save_ip_info(): any other version is refused (-EINVAL). */
	if (buf[0] != URNIC_CMA_VERSION)
		return URNIC_CM_R_CMA_VERSION;
	h->ip_version = (uint8_t)(buf[1] >> 4);
	if (h->ip_version != 4 && h->ip_version != 6)
		return URNIC_CM_R_CMA_IP_VERSION;
	h->src_port = urnic_get_be16(buf + 2);
	memcpy(h->src_addr, buf + 4, 16);
	memcpy(h->dst_addr, buf + 20, 16);
	if (h->ip_version == 4) {
		memset(h->src_addr, 0, IPV4_PAD_BYTES);
		memset(h->dst_addr, 0, IPV4_PAD_BYTES);
	}
	return URNIC_CM_R_OK;
}

ssize_t urnic_cma_hdr_decode(struct urnic_cma_hdr *h, const uint8_t *buf, size_t len,
			     enum urnic_cm_reason *why)
{
	struct urnic_cma_hdr out;
	enum urnic_cm_reason r = decode(&out, buf, len);

	if (why)
		*why = r;
	if (r != URNIC_CM_R_OK)
		return -EBADMSG;
	*h = out;
	return URNIC_CMA_HDR_BYTES;
}

ssize_t urnic_cma_hdr_encode(const struct urnic_cma_hdr *h, uint8_t *buf, size_t cap)
{
	if (cap < URNIC_CMA_HDR_BYTES)
		return -ENOBUFS;
	if (!hdr_ok(h))
		return -EINVAL;
	buf[0] = URNIC_CMA_VERSION;
	buf[1] = (uint8_t)(h->ip_version << 4);
	urnic_put_be16(buf + 2, h->src_port);
	memcpy(buf + 4, h->src_addr, 16);
	memcpy(buf + 20, h->dst_addr, 16);
	return URNIC_CMA_HDR_BYTES;
}

uint64_t urnic_cma_service_id(enum urnic_rdma_ps ps, uint16_t port)
{
	return (uint64_t)ps << PS_SHIFT | port;
}

int urnic_cma_service_id_decode(uint64_t service_id, enum urnic_rdma_ps *ps, uint16_t *port,
				enum urnic_cm_reason *why)
{
	static const enum urnic_rdma_ps spaces[] = { URNIC_RDMA_PS_IPOIB, URNIC_RDMA_PS_IB,
						     URNIC_RDMA_PS_TCP, URNIC_RDMA_PS_UDP };
	size_t i;

	for (i = 0; i < sizeof(spaces) / sizeof(spaces[0]); i++) {
		if (service_id >> PS_SHIFT != (uint64_t)spaces[i])
			continue;
		*ps = spaces[i];
		*port = (uint16_t)(service_id & PORT_MASK);
		if (why)
			*why = URNIC_CM_R_OK;
		return 0;
	}
	if (why)
		*why = URNIC_CM_R_SERVICE_ID;
	return -EBADMSG;
}
