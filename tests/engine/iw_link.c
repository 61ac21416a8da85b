/* SPDX-License-Identifier: MIT */
/*
 * iw_link.c - the two connected iWARP QPs of iw_link.h and the byte pipes between them.
 */
#include <stdlib.h>
#include <string.h>

#include "iw_link.h"
#include "iwarp_pipe.h"
#include "wire/fpdu.h"

enum { IWL_SCRATCH = 1 << 20, IWL_MAX_ROUNDS = 1 << 20 };

static void open_link(struct iwl *l, uint64_t seed, const struct urnic_iw_conn_params *p[2],
		      struct urnic_srq *(*srq1)(struct urnic_pd *pd));

void iwl_open(struct iwl *l, uint64_t seed, const struct urnic_iw_conn_params *p)
{
	iwl_open_srq(l, seed, p, NULL);
}

void iwl_open_srq(struct iwl *l, uint64_t seed, const struct urnic_iw_conn_params *p,
		  struct urnic_srq *(*srq1)(struct urnic_pd *pd))
{
	const struct urnic_iw_conn_params *both[2] = { p, p };

	open_link(l, seed, both, srq1);
}

void iwl_open_pair(struct iwl *l, uint64_t seed, const struct urnic_iw_conn_params *p0,
		   const struct urnic_iw_conn_params *p1)
{
	const struct urnic_iw_conn_params *both[2] = { p0, p1 };

	open_link(l, seed, both, NULL);
}

static void open_link(struct iwl *l, uint64_t seed, const struct urnic_iw_conn_params *p[2],
		      struct urnic_srq *(*srq1)(struct urnic_pd *pd))
{
	struct urnic_qp_attr a = { .port_num = 1, .access = FAB_ALL_ACCESS };

	memset(l, 0, sizeof(*l));
	l->f = fabric_new(2, seed);
	l->max_split = 1 + seed % 3000;
	l->max_take = 1 << 20;
	l->scratch = malloc(IWL_SCRATCH);
	CHECK(l->scratch);
	iwp_seed = seed | 1;
	for (int i = 0; i < 2; i++) {
		l->f->hosts[i].e->cfg.iwarp = true;
		l->pd[i].handle = 1;
		if (i == 1 && srq1)
			l->srq = srq1(&l->pd[1]);
		l->q[i] = fab_qp_new_type(l->f, i, &l->pd[i], URNIC_QPT_RC, i ? l->srq : NULL, 1024,
					  1024, true);
		CHECK_EQ(fab_modify(l->q[i], &a, URNIC_QPS_INIT,
				    URNIC_QP_STATE | URNIC_QP_PKEY_INDEX | URNIC_QP_PORT |
					    URNIC_QP_ACCESS_FLAGS),
			 0);
		CHECK_EQ(urnic_iw_qp_connect(l->f->hosts[i].e, &l->q[i]->qp, p[i], l->f->now_ns),
			 0);
		CHECK_EQ(l->q[i]->qp.state, URNIC_QPS_RTS);
	}
}

void iwl_close(struct iwl *l)
{
	for (int i = 0; i < 2; i++)
		fab_qp_free(l->q[i]);
	if (l->srq)
		fab_srq_free(l->srq);
	fabric_free(l->f);
	free(l->scratch);
}

size_t iwl_inject(struct iwl *l, int to, const uint8_t *p, size_t n)
{
	struct urnic_engine *e = l->f->hosts[to].e;
	size_t done = 0;

	while (done < n) {
		size_t k = 1 + iwp_rand() % l->max_split, took;

		if (k > n - done)
			k = n - done;
		took = urnic_iw_rx(e, &l->q[to]->qp, p + done, k, l->f->now_ns);
		done += took;
		if (took < k)
			break;
	}
	return done;
}

size_t iwl_peek(struct iwl *l, int from, uint8_t *out, size_t cap)
{
	struct iovec iov[4];
	unsigned n = urnic_iw_tx_peek(&l->q[from]->qp, iov, 4);
	size_t got = 0;

	for (unsigned i = 0; i < n && got < cap; i++) {
		size_t k = iov[i].iov_len < cap - got ? iov[i].iov_len : cap - got;

		memcpy(out + got, iov[i].iov_base, k);
		got += k;
	}
	return got;
}

/* What a device does for one QP urnic_iw_tx_ready named: write, then close if due. */
static size_t move_from(struct iwl *l, int from)
{
	struct urnic_qp *qp = &l->q[from]->qp;
	struct urnic_engine *e = l->f->hosts[from].e;
	size_t n = 0;

	if (!l->hold[from] && !l->closed[from]) {
		size_t cap = l->max_take < IWL_SCRATCH ? l->max_take : IWL_SCRATCH;

		n = iwl_peek(l, from, l->scratch, 1 + iwp_rand() % cap);
		urnic_iw_tx_done(e, qp, n);
		if (n && !l->closed[1 - from])
			iwl_inject(l, 1 - from, l->scratch, n);
		l->moved[from] += n;
	}
	if (!urnic_iw_tx_pending(qp) && urnic_iw_close_due(qp) && !l->closed[from]) {
		l->closed[from] = true;
		urnic_iw_llp_closed(e, qp, 0, l->f->now_ns);
		/* The peer sees the FIN. */
		if (!l->closed[1 - from]) {
			l->closed[1 - from] = true;
			urnic_iw_llp_closed(l->f->hosts[1 - from].e, &l->q[1 - from]->qp, 0,
					    l->f->now_ns);
		}
		n++;
	}
	return n;
}

void iwl_settle(struct iwl *l)
{
	for (uint32_t round = 0; round < IWL_MAX_ROUNDS; round++) {
		size_t moved = 0;

		for (int i = 0; i < 2; i++) {
			struct urnic_engine *e = l->f->hosts[i].e;
			uint64_t deadline;
			uint32_t cursor = 0;
			struct urnic_qp *qp;

			urnic_engine_pass(e, l->f->now_ns, &deadline);
			while ((qp = urnic_iw_tx_ready(e, &cursor)) != NULL) {
				CHECK(qp == &l->q[i]->qp);
				moved += move_from(l, i);
			}
		}
		l->f->now_ns += 1000;
		if (!moved)
			return;
	}
	CHECK(!"iwl_settle: bytes kept moving");
}

size_t iwl_fpdu(uint8_t *out, size_t cap, const struct urnic_ddp_hdr *h, const void *p, size_t n,
		bool crc)
{
	ssize_t hb = urnic_ddp_encode(h, out + URNIC_FPDU_LEN_BYTES, cap - URNIC_FPDU_LEN_BYTES);
	ssize_t r;

	CHECK(hb > 0);
	CHECK((size_t)hb + n + 8 <= cap);
	if (n)
		memcpy(out + URNIC_FPDU_LEN_BYTES + hb, p, n);
	r = urnic_fpdu_encode(out, cap, out + URNIC_FPDU_LEN_BYTES, (size_t)hb + n,
			      crc ? URNIC_FPDU_CRC : 0);
	CHECK(r > 0);
	return (size_t)r;
}
