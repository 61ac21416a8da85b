/* SPDX-License-Identifier: MIT */
/*
 * verbs_side.h - one device's end of a two-device verbs system test (verbs_limits.c,
 * verbs_ud_srq.c): the device opened, a PD, one CQ, a zeroed buffer registered as one
 * MR, and GID 1 of port 1. Header-only, like check.h: each test is one program and
 * sizes its CQ, buffer and MR rights for what it runs.
 */
#ifndef URNIC_TESTS_VERBS_SIDE_H
#define URNIC_TESTS_VERBS_SIDE_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <infiniband/verbs.h>

#include "check.h"

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
};

/* Opens dev with a CQ of cqe entries and len zeroed bytes registered with access. */
static inline void side_open(struct side *s, struct ibv_device *dev, int cqe, size_t len,
			     int access)
{
	s->ctx = ibv_open_device(dev);
	CHECK(s->ctx);
	s->pd = ibv_alloc_pd(s->ctx);
	CHECK(s->pd);
	s->cq = ibv_create_cq(s->ctx, cqe, NULL, NULL, 0);
	CHECK(s->cq);
	s->buf = calloc(1, len);
	CHECK(s->buf);
	s->mr = ibv_reg_mr(s->pd, s->buf, len, access);
	CHECK(s->mr);
	CHECK(ibv_query_gid(s->ctx, 1, 1, &s->gid) == 0);
}

/* Everything side_open made; the test has destroyed its QPs (and SRQs, AHs) first. */
static inline void side_close(struct side *s)
{
	CHECK(ibv_dereg_mr(s->mr) == 0);
	CHECK(ibv_destroy_cq(s->cq) == 0);
	CHECK(ibv_dealloc_pd(s->pd) == 0);
	CHECK(ibv_close_device(s->ctx) == 0);
	free(s->buf);
}

#endif
