/* SPDX-License-Identifier: MIT */
/*
 * cma_hdr.h - the rdma_cm header at the front of a REQ's or SIDR_REQ's private data and
 * the service ID of a port (IBTA Vol.1 Annex A11; Linux cma.c struct cma_hdr,
 * cma_get_service_id): the layout wire/cma.h codes, which this layer may reach only
 * through dev/ (scripts/check-layers); to fold into it once dev/cm.h shows it.
 */
#ifndef URNIC_CM_CMA_HDR_H
#define URNIC_CM_CMA_HDR_H

#include <stdint.h>

enum { URNIC_RDMA_HDR_BYTES = 36 };

/* Version 0, IP version in the upper nibble of byte 1, the active side's port, then
 * source and destination addresses of 16 bytes (IPv4: 12 zero bytes, then the address). */
struct urnic_rdma_hdr {
	uint8_t ip_version;
	uint16_t src_port;
	uint8_t src_addr[16];
	uint8_t dst_addr[16];
};

void urnic_rdma_hdr_encode(const struct urnic_rdma_hdr *h, uint8_t buf[URNIC_RDMA_HDR_BYTES]);
/* 0, or -EBADMSG for a header cma.c's cma_save_ip_info refuses (too short, version,
 * IP version). */
int urnic_rdma_hdr_decode(struct urnic_rdma_hdr *h, const uint8_t *buf, size_t len);

static inline uint64_t urnic_rdma_service_id(int ps, uint16_t port)
{
	return (uint64_t)(uint32_t)ps << 16 | port;
}

#endif
