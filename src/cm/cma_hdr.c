/* SPDX-License-Identifier: MIT */
/*
 * cma_hdr.c - the rdma_cm private-data header's codec (cma_hdr.h).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "cm/cma_hdr.h"

void urnic_rdma_hdr_encode(const struct urnic_rdma_hdr *h, uint8_t buf[URNIC_RDMA_HDR_BYTES])
{
	buf[0] = 0;
	buf[1] = (uint8_t)(h->ip_version << 4);
	buf[2] = (uint8_t)(h->src_port >> 8);
	buf[3] = (uint8_t)h->src_port;
	memcpy(buf + 4, h->src_addr, 16);
	memcpy(buf + 20, h->dst_addr, 16);
	if (h->ip_version == 4) {
		memset(buf + 4, 0, 12);
		memset(buf + 20, 0, 12);
	}
}

int urnic_rdma_hdr_decode(struct urnic_rdma_hdr *h, const uint8_t *buf, size_t len)
{
	if (len < URNIC_RDMA_HDR_BYTES || buf[0] != 0)
		return -EBADMSG;
	h->ip_version = (uint8_t)(buf[1] >> 4);
	if (h->ip_version != 4 && h->ip_version != 6)
		return -EBADMSG;
	h->src_port = (uint16_t)(buf[2] << 8 | buf[3]);
	memcpy(h->src_addr, buf + 4, 16);
	memcpy(h->dst_addr, buf + 20, 16);
	if (h->ip_version == 4) {
		memset(h->src_addr, 0, 12);
		memset(h->dst_addr, 0, 12);
	}
	return 0;
}
