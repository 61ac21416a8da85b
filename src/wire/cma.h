/* SPDX-License-Identifier: MIT */
/*
 * cma.h - what rdma_cm adds on the CM's wire: the header at the front of a REQ's private
 * data and the service IDs of its port spaces (IBTA Vol.1 Annex A11, "RDMA IP CM
 * Service"), as Linux's drivers/infiniband/core/cma.c writes them (struct cma_hdr,
 * cma_get_service_id()).
 *
 * The header: version 0, IP version in the upper nibble (4 or 6), the active side's
 * source port, then source and destination addresses of 16 bytes each, an IPv4 address
 * in the last 4 after 12 zero bytes. Out of scope: AF_IB addressing (no header), SDP.
 */
#ifndef URNIC_WIRE_CMA_H
#define URNIC_WIRE_CMA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "wire/cm.h"

enum {
	URNIC_CMA_HDR_BYTES = 36,
	URNIC_CMA_VERSION = 0,
};

/* rdma_cm port spaces (rdma-core's enum rdma_port_space). The service ID of IP port p in
 * space ps is ps << 16 | p (cma_get_service_id()): 0x0000000001060000 | p for TCP. */
enum urnic_rdma_ps {
	URNIC_RDMA_PS_IPOIB = 0x0002,
	URNIC_RDMA_PS_IB = 0x013f,
	URNIC_RDMA_PS_TCP = 0x0106,
	URNIC_RDMA_PS_UDP = 0x0111,
};

struct urnic_cma_hdr {
	uint8_t ip_version; /* 4 or 6 */
	uint16_t src_port;  /* the active side's port; the passive one is the service ID's */
	uint8_t src_addr[16];
	uint8_t dst_addr[16]; /* IPv4: 12 zero bytes, then the address */
};

/*
 * Decode the header at the front of private data (len bytes). Returns
 * URNIC_CMA_HDR_BYTES with *h filled, or -EBADMSG with *h untouched and *why (may be
 * NULL) saying why: too short, version not 0, IP version neither 4 nor 6, the reserved
 * lower nibble set, an IPv4 address with a non-zero pad.
 */
ssize_t urnic_cma_hdr_decode(struct urnic_cma_hdr *h, const uint8_t *buf, size_t len,
			     enum urnic_cm_reason *why);

/* URNIC_CMA_HDR_BYTES, -ENOBUFS, or -EINVAL for a header decode would refuse. */
ssize_t urnic_cma_hdr_encode(const struct urnic_cma_hdr *h, uint8_t *buf, size_t cap);

/* The service ID a REQ carries for an IP port in port space ps. */
uint64_t urnic_cma_service_id(enum urnic_rdma_ps ps, uint16_t port);

/* The port space and port of a service ID: 0, or -EBADMSG when it is in none of the four
 * spaces (*ps and *port untouched; *why, if not NULL, URNIC_CM_R_SERVICE_ID). */
int urnic_cma_service_id_decode(uint64_t service_id, enum urnic_rdma_ps *ps, uint16_t *port,
				enum urnic_cm_reason *why);

#endif
