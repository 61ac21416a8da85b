/* SPDX-License-Identifier: MIT */
/*
 * test_segmentation.c - messages cut at the path MTU, checked on the wire.
 *
 * IBTA 9.7.4.1.1: a message of n > 1 packets is FIRST, MIDDLE..., LAST, one packet is
 * ONLY; FIRST and MIDDLE carry exactly the path MTU, LAST/ONLY the rest; PSNs are
 * consecutive. AckReq is set on LAST/ONLY and inside long messages at least every
 * URNIC_ACKREQ_EVERY packets (rxe's cadence, rxe-siw-perftest.md 2.9). A READ request
 * reserves one PSN per response packet; READ responses are FIRST/MIDDLE/LAST/ONLY from
 * the request's PSN, with an AETH on all but MIDDLE (IBTA 9.2.1). Path MTUs 256..4096,
 * messages of 1 B, MTU-1, MTU, MTU+1, several MTUs and 1 MiB.
 */
#include <string.h>

#include "fabric.h"

#define MIB (1u << 20)
#define BUF (MIB + 8192)

struct seg {
	struct fab_pair p;
	struct fab_buf la, ra;
	uint32_t mtu;
	uint32_t psn_a; /* next request PSN from host 0 */
	uint64_t wr_id;
};

static void seg_open(struct seg *s, uint32_t mtu)
{
	struct fab_conn c = fab_conn_default();

	c.mtu = mtu;
	fab_pair_open(&s->p, &c, mtu);
	fab_buf_new(s->p.f, &s->la, 0, &s->p.pd[0], BUF, FAB_ALL_ACCESS);
	fab_buf_new(s->p.f, &s->ra, 1, &s->p.pd[1], BUF, FAB_ALL_ACCESS);
	fab_fill(s->la.p, BUF, mtu);
	s->mtu = mtu;
	s->psn_a = c.psn_a;
	s->wr_id = 1;
}

static void seg_close(struct seg *s)
{
	for (int h = 0; h < 2; h++) {
		CHECK_EQ(fab_ctr(s->p.f, h, URNIC_CTR_retransmit_pkts), 0);
		CHECK_EQ(fab_ctr(s->p.f, h, URNIC_CTR_dup_request), 0);
		CHECK_EQ(fab_ctr(s->p.f, h, URNIC_CTR_nak_seq_sent), 0);
		CHECK_EQ(fab_ctr(s->p.f, h, URNIC_CTR_drop_stale_response), 0);
		CHECK_EQ(fab_ctr(s->p.f, h, URNIC_CTR_drop_bad_header), 0);
	}
	fab_buf_free(s->p.f, &s->la);
	fab_buf_free(s->p.f, &s->ra);
	fab_pair_close(&s->p);
}

struct expect_ops {
	uint8_t first, middle, last, only;
};

/* Checks the packets host `src` sent for one message of len bytes starting at psn. */
static void check_segments(struct seg *s, int src, uint32_t psn, uint32_t len,
			   const struct expect_ops *ops, bool request)
{
	uint32_t n = len ? (len + s->mtu - 1) / s->mtu : 1;
	uint32_t k = 0, noack_run = 0, max_run = 0, mid_ackreq = 0;

	for (uint32_t i = 0; i < s->p.f->ntrace; i++) {
		const struct fab_pktinfo *pi = &s->p.f->trace[i];
		uint8_t want;

		if (pi->src != src)
			continue;
		CHECK(k < n);
		want = n == 1	    ? ops->only
		       : k == 0	    ? ops->first
		       : k == n - 1 ? ops->last
				    : ops->middle;
		CHECK_EQ(pi->opcode, want);
		CHECK_EQ(pi->psn, urnic_psn_add(psn, k));
		CHECK_EQ(pi->payload_bytes, k == n - 1 ? len - (n - 1) * s->mtu : s->mtu);
		if (request) {
			/* AckReq on the last packet, and never 64+ packets without one. */
			if (k == n - 1)
				CHECK(pi->ackreq);
			if (pi->ackreq) {
				if (k != n - 1)
					mid_ackreq++;
				noack_run = 0;
			} else if (++noack_run > max_run) {
				max_run = noack_run;
			}
		} else {
			/* READ responses: AETH on FIRST, LAST and ONLY only (IBTA 9.2.1). */
			CHECK_EQ(pi->has_aeth, want != ops->middle);
			if (pi->has_aeth)
				CHECK_EQ(pi->syndrome, URNIC_AETH_ACK_UNLIMITED);
		}
		k++;
	}
	CHECK_EQ(k, n);
	CHECK(max_run <= URNIC_ACKREQ_EVERY);
	if (request && n > URNIC_ACKREQ_EVERY + 1)
		CHECK(mid_ackreq >= (n - 1) / (URNIC_ACKREQ_EVERY + 1));
}

static const struct expect_ops send_ops = { URNIC_OP_RC_SEND_FIRST, URNIC_OP_RC_SEND_MIDDLE,
					    URNIC_OP_RC_SEND_LAST, URNIC_OP_RC_SEND_ONLY };
static const struct expect_ops send_imm_ops = { URNIC_OP_RC_SEND_FIRST, URNIC_OP_RC_SEND_MIDDLE,
						URNIC_OP_RC_SEND_LAST_WITH_IMMEDIATE,
						URNIC_OP_RC_SEND_ONLY_WITH_IMMEDIATE };
static const struct expect_ops write_ops = { URNIC_OP_RC_RDMA_WRITE_FIRST,
					     URNIC_OP_RC_RDMA_WRITE_MIDDLE,
					     URNIC_OP_RC_RDMA_WRITE_LAST,
					     URNIC_OP_RC_RDMA_WRITE_ONLY };
static const struct expect_ops write_imm_ops = { URNIC_OP_RC_RDMA_WRITE_FIRST,
						 URNIC_OP_RC_RDMA_WRITE_MIDDLE,
						 URNIC_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
						 URNIC_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE };
static const struct expect_ops read_resp_ops = { URNIC_OP_RC_RDMA_READ_RESPONSE_FIRST,
						 URNIC_OP_RC_RDMA_READ_RESPONSE_MIDDLE,
						 URNIC_OP_RC_RDMA_READ_RESPONSE_LAST,
						 URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY };

/* One message of len bytes with opcode op; checks wire, completions and memory. */
static void transfer(struct seg *s, uint32_t op, uint32_t len)
{
	uint32_t n = len ? (len + s->mtu - 1) / s->mtu : 1;
	uint32_t off = (uint32_t)(s->wr_id * 13 % 4096); /* vary the alignment */
	uint64_t id = s->wr_id++;
	bool recv = op == URNIC_WR_SEND || op == URNIC_WR_SEND_WITH_IMM ||
		    op == URNIC_WR_RDMA_WRITE_WITH_IMM;
	struct urnic_cqe sc, rc;
	struct urnic_sge rs;
	uint8_t want_wc;

	fab_trace_clear(s->p.f);
	memset(s->ra.p, 0, BUF);
	if (op == URNIC_WR_RDMA_READ) {
		fab_fill(s->ra.p + off, len, (uint32_t)id);
		memset(s->la.p + 1, 0, len);
	}
	if (recv) {
		rs = fab_sge(s->ra.mr, op == URNIC_WR_RDMA_WRITE_WITH_IMM ? 0 : off, len);
		CHECK_EQ(fab_post_recv(s->p.b, id, &rs, 1), 0);
	}
	CHECK_EQ(fab_post_send(s->p.a,
			       &(struct fab_send_wr){ .wr_id = id,
						      .opcode = op,
						      .imm_be = (uint32_t)id,
						      .remote_addr = s->ra.mr->iova + off,
						      .rkey = s->ra.mr->key,
						      .num_sge = 1,
						      .sge = { fab_sge(s->la.mr, 1, len) } }),
		 0);
	fab_wait_cqes(s->p.f, &s->p.a->scq, &sc, 1);
	fabric_settle(s->p.f);
	switch (op) {
	case URNIC_WR_RDMA_READ:
		want_wc = URNIC_WC_RDMA_READ;
		break;
	case URNIC_WR_RDMA_WRITE:
	case URNIC_WR_RDMA_WRITE_WITH_IMM:
		want_wc = URNIC_WC_RDMA_WRITE;
		break;
	default:
		want_wc = URNIC_WC_SEND;
	}
	CHECK_CQE(sc, id, URNIC_WC_SUCCESS, want_wc, len);
	if (recv) {
		CHECK_EQ(fab_poll(&s->p.b->rcq, &rc, 1), 1);
		CHECK_CQE(rc, id, URNIC_WC_SUCCESS,
			  op == URNIC_WR_RDMA_WRITE_WITH_IMM ? URNIC_WC_RECV_RDMA_WITH_IMM
							     : URNIC_WC_RECV,
			  len);
		if (op != URNIC_WR_SEND)
			CHECK_EQ(rc.imm_be, (uint32_t)id);
	}
	CHECK_EQ(fab_poll(&s->p.b->rcq, &rc, 1), 0);
	if (op == URNIC_WR_RDMA_READ) {
		CHECK(memcmp(s->la.p + 1, s->ra.p + off, len) == 0);
		/* One request (AckReq), its PSNs reserved; n responses. */
		for (uint32_t i = 0, k = 0; i < s->p.f->ntrace; i++) {
			const struct fab_pktinfo *pi = &s->p.f->trace[i];

			if (pi->src != 0)
				continue;
			CHECK_EQ(k, 0);
			CHECK_EQ(pi->opcode, URNIC_OP_RC_RDMA_READ_REQUEST);
			CHECK_EQ(pi->psn, s->psn_a);
			CHECK(pi->ackreq);
			k++;
		}
		check_segments(s, 1, s->psn_a, len, &read_resp_ops, false);
	} else {
		CHECK(memcmp(s->ra.p + off, s->la.p + 1, len) == 0);
		CHECK_EQ(s->ra.p[off + len], 0);
		if (off)
			CHECK_EQ(s->ra.p[off - 1], 0);
		check_segments(s, 0, s->psn_a, len,
			       op == URNIC_WR_SEND	      ? &send_ops
			       : op == URNIC_WR_SEND_WITH_IMM ? &send_imm_ops
			       : op == URNIC_WR_RDMA_WRITE    ? &write_ops
							      : &write_imm_ops,
			       true);
	}
	s->psn_a = urnic_psn_add(s->psn_a, n);
}

static void segment_at(uint32_t mtu)
{
	static const uint32_t ops[] = { URNIC_WR_SEND, URNIC_WR_SEND_WITH_IMM, URNIC_WR_RDMA_WRITE,
					URNIC_WR_RDMA_WRITE_WITH_IMM, URNIC_WR_RDMA_READ };
	const uint32_t sizes[] = { 1, mtu - 1, mtu, mtu + 1, 2 * mtu, 5 * mtu + 3, MIB };
	struct seg s;

	seg_open(&s, mtu);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
			/* The 1 MiB messages once per kind of packet train. */
			if (sizes[i] != MIB || ops[k] == URNIC_WR_SEND ||
			    ops[k] == URNIC_WR_RDMA_WRITE || ops[k] == URNIC_WR_RDMA_READ)
				transfer(&s, ops[k], sizes[i]);
	seg_close(&s);
}

static void test_mtu_256(void)
{
	segment_at(256);
}

static void test_mtu_512(void)
{
	segment_at(512);
}

static void test_mtu_1024(void)
{
	segment_at(1024);
}

static void test_mtu_2048(void)
{
	segment_at(2048);
}

static void test_mtu_4096(void)
{
	segment_at(4096);
}

/* The receiving side checks the MTU too: a FIRST/MIDDLE shorter than the path MTU is an
 * invalid request (IBTA 9.7.5.1.6). The two ends disagree on the MTU here. */
static void test_mtu_mismatch_is_invalid_request(void)
{
	struct fab_conn c = fab_conn_default();
	struct fab_pair p;
	struct fab_buf la, ra;
	struct urnic_cqe sc, rc;
	struct urnic_sge rs;

	c.mtu = 512;
	fab_pair_open(&p, NULL, 3);
	fab_connect_one(p.a, p.b, &c, c.psn_a, c.psn_b);
	c.mtu = 1024;
	fab_connect_one(p.b, p.a, &c, c.psn_b, c.psn_a);
	fab_buf_new(p.f, &la, 0, &p.pd[0], 4096, FAB_ALL_ACCESS);
	fab_buf_new(p.f, &ra, 1, &p.pd[1], 4096, FAB_ALL_ACCESS);
	rs = fab_sge(ra.mr, 0, 4096);
	CHECK_EQ(fab_post_recv(p.b, 1, &rs, 1), 0);
	CHECK_EQ(fab_post_send(p.a, &(struct fab_send_wr){ .wr_id = 2,
							   .opcode = URNIC_WR_SEND,
							   .num_sge = 1,
							   .sge = { fab_sge(la.mr, 0, 2000) } }),
		 0);
	fab_wait_cqes(p.f, &p.a->scq, &sc, 1);
	fab_wait_cqes(p.f, &p.b->rcq, &rc, 1);
	fabric_settle(p.f);
	CHECK_EQ(sc.wr_id, 2);
	CHECK_EQ(sc.status, URNIC_WC_REM_INV_REQ_ERR);
	CHECK_EQ(rc.wr_id, 1);
	CHECK_EQ(rc.status, URNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(fab_ctr(p.f, 1, URNIC_CTR_nak_inv_req_sent), 1);
	CHECK_EQ(fab_ctr(p.f, 0, URNIC_CTR_nak_inv_req_rcvd), 1);
	CHECK_EQ(p.a->qp.state, URNIC_QPS_ERR);
	CHECK_EQ(p.b->qp.state, URNIC_QPS_ERR);
	fab_buf_free(p.f, &la);
	fab_buf_free(p.f, &ra);
	fab_pair_close(&p);
}

int main(void)
{
	RUN(test_mtu_256);
	RUN(test_mtu_512);
	RUN(test_mtu_1024);
	RUN(test_mtu_2048);
	RUN(test_mtu_4096);
	RUN(test_mtu_mismatch_is_invalid_request);
	return 0;
}
