/* SPDX-License-Identifier: MIT */
/*
 * tmh.h - the tag-matching headers at the start of a SEND's payload (rdma-core
 * Documentation/tag_matching.md, <infiniband/tm_types.h>): the TMH (operation, app_ctx,
 * 64-bit tag) of every tag-matching message, and the RVH (the sender's buffer: VA,
 * R_Key, length) after it in a rendezvous request. Big endian, read into host order.
 */
#ifndef URNIC_WIRE_TMH_H
#define URNIC_WIRE_TMH_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/byteorder.h"

/* TMH operations, numerically enum ibv_tmh_op. */
enum urnic_tmh_op {
	URNIC_TMH_NO_TAG = 0,
	URNIC_TMH_RNDV = 1,
	URNIC_TMH_FIN = 2,
	URNIC_TMH_EAGER = 3,
};

/* Field offsets (tag_matching.md's diagrams: TMH 16 bytes, RVH 16 bytes after it). */
enum {
	URNIC_TMH_OFF_OP = 0,
	URNIC_TMH_OFF_APP_CTX = 4,
	URNIC_TMH_OFF_TAG = 8,
	URNIC_TMH_BYTES = 16,
	URNIC_RVH_OFF_VA = 0,
	URNIC_RVH_OFF_RKEY = 8,
	URNIC_RVH_OFF_LEN = 12,
	URNIC_RVH_BYTES = 16,
};

_Static_assert(URNIC_TMH_OFF_TAG + 8 == URNIC_TMH_BYTES, "the tag ends the TMH");
_Static_assert(URNIC_RVH_OFF_LEN + 4 == URNIC_RVH_BYTES, "the length ends the RVH");

struct urnic_tmh {
	uint8_t op;
	uint32_t app_ctx;
	uint64_t tag;
};

struct urnic_rvh {
	uint64_t va;
	uint32_t rkey;
	uint32_t len;
};

/* The TMH at p (URNIC_TMH_BYTES readable). */
static inline struct urnic_tmh urnic_tmh_get(const uint8_t *p)
{
	return (struct urnic_tmh){
		.op = p[URNIC_TMH_OFF_OP],
		.app_ctx = urnic_get_be32(p + URNIC_TMH_OFF_APP_CTX),
		.tag = urnic_get_be64(p + URNIC_TMH_OFF_TAG),
	};
}

/* Writes a TMH at p, its reserved bytes zero (tm_types.h: "must be zero"). */
static inline void urnic_tmh_put(uint8_t *p, const struct urnic_tmh *h)
{
	p[URNIC_TMH_OFF_OP] = h->op;
	p[1] = p[2] = p[3] = 0;
	urnic_put_be32(p + URNIC_TMH_OFF_APP_CTX, h->app_ctx);
	urnic_put_be32(p + URNIC_TMH_OFF_TAG, (uint32_t)(h->tag >> 32));
	urnic_put_be32(p + URNIC_TMH_OFF_TAG + 4, (uint32_t)h->tag);
}

/* The RVH at p (URNIC_RVH_BYTES readable). */
static inline struct urnic_rvh urnic_rvh_get(const uint8_t *p)
{
	return (struct urnic_rvh){
		.va = urnic_get_be64(p + URNIC_RVH_OFF_VA),
		.rkey = urnic_get_be32(p + URNIC_RVH_OFF_RKEY),
		.len = urnic_get_be32(p + URNIC_RVH_OFF_LEN),
	};
}

#endif
