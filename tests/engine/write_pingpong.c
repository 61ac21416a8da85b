/* SPDX-License-Identifier: MIT */
/*
 * write_pingpong.c - ib_write_lat's loop over the fabric. See write_pingpong.h.
 */
#include "write_pingpong.h"

#include <string.h>

void wpp_open(struct wpp *v, enum urnic_qp_type type, uint8_t timeout, uint64_t seed)
{
	memset(v, 0, sizeof(*v));
	v->c = fab_conn_default();
	v->c.timeout = timeout;
	fab_pair_open(&v->p, NULL, seed);
	v->f = v->p.f;
	v->p.a->qp.type = type; /* still in RESET */
	v->p.b->qp.type = type;
	fab_connect(v->p.a, v->p.b, &v->c);
	fab_buf_new(v->f, &v->ba, 0, &v->p.pd[0], 4096, FAB_ALL_ACCESS);
	fab_buf_new(v->f, &v->bb, 1, &v->p.pd[1], 4096, FAB_ALL_ACCESS);
}

void wpp_close(struct wpp *v)
{
	fab_buf_free(v->f, &v->ba);
	fab_buf_free(v->f, &v->bb);
	fab_pair_close(&v->p);
}

void wpp_open_answering(struct wpp *v, enum urnic_qp_type type, uint8_t timeout, uint64_t seed,
			int rounds)
{
	wpp_open(v, type, timeout, seed);
	wpp_run(v, rounds);
	fabric_settle(v->f);
}

void wpp_write(struct wpp *v, bool from_a, uint8_t tag)
{
	struct fab_buf *src = from_a ? &v->ba : &v->bb, *dst = from_a ? &v->bb : &v->ba;
	struct fab_send_wr wr = { 0 };

	src->p[64] = tag;
	wr.wr_id = tag;
	wr.opcode = URNIC_WR_RDMA_WRITE;
	wr.flags = URNIC_SEND_SIGNALED;
	wr.remote_addr = dst->mr->iova;
	wr.rkey = dst->mr->key;
	wr.num_sge = 1;
	wr.sge[0] = fab_sge(src->mr, 64, WPP_LEN);
	CHECK_EQ(fab_post_send(from_a ? v->p.a : v->p.b, &wr), 0);
}

struct byte_is {
	const uint8_t *p;
	uint8_t v;
};

static bool byte_arrived(struct fabric *f, void *arg)
{
	const struct byte_is *w = arg;

	(void)f;
	return *w->p == w->v;
}

void wpp_until_byte(struct wpp *v, const struct fab_buf *b, uint8_t tag)
{
	struct byte_is w = { b->p, tag };

	CHECK(fabric_run(v->f, byte_arrived, &w, 100000));
}

void wpp_wait_byte(struct wpp *v, const struct fab_buf *b, uint8_t tag)
{
	wpp_until_byte(v, b, tag);
	if (v->p.a->qp.type == URNIC_QPT_RC)
		fabric_run(v->f, NULL, NULL, 1);
}

void wpp_reap(struct wpp *v, struct fab_qp *q, uint8_t tag)
{
	struct urnic_cqe cqe;

	fab_wait_cqes(v->f, &q->scq, &cqe, 1);
	CHECK_CQE(cqe, tag, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, WPP_LEN);
}

int wpp_run(struct wpp *v, int rounds)
{
	int with_answer = 0;

	wpp_write(v, true, 2);
	for (int r = 1; r <= rounds; r++) {
		wpp_wait_byte(v, &v->bb, (uint8_t)(2 * r));
		wpp_write(v, false, (uint8_t)(2 * r + 1));
		wpp_reap(v, v->p.a, (uint8_t)(2 * r));
		with_answer += v->ba.p[0] == (uint8_t)(2 * r + 1);
		wpp_wait_byte(v, &v->ba, (uint8_t)(2 * r + 1));
		if (r < rounds)
			wpp_write(v, true, (uint8_t)(2 * r + 2));
		wpp_reap(v, v->p.b, (uint8_t)(2 * r + 1));
	}
	return with_answer;
}
