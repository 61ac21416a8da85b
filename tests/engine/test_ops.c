/* SPDX-License-Identifier: MIT */
/*
 * test_ops.c - RC data movement end to end between two engines on a clean fabric.
 *
 * SEND, SEND with immediate, RDMA WRITE, WRITE with immediate (consumes a receive WQE,
 * IBTA 9.4.3), RDMA READ, scatter/gather on both sides, inline data, signaled vs
 * unsignaled WRs (IBTA 10.8.4), zero-length SEND/WRITE/READ (C9-88: no R_Key check), the
 * solicited event bit (9.2.3), many QPs at once, a receive CQ overflow (11.4.2.1). Each
 * asserts the completions, the memory and the counters. Not here: atomics
 * (test_atomics.c), request ordering and fences (test_ordering.c), loss (test_loss.c).
 */
#include <string.h>

#include "ops_common.h"

static void send_message(uint32_t opcode, uint32_t len)
{
	struct env v;
	struct urnic_cqe sc, rc;
	struct urnic_sge rs;

	env_open(&v, 1024);
	rs = fab_sge(v.ra.mr, 0, BIG);
	CHECK_EQ(fab_post_recv(v.p.b, 77, &rs, 1), 0);
	CHECK_EQ(fab_post_send(v.p.a,
			       &(struct fab_send_wr){ .wr_id = 11,
						      .opcode = opcode,
						      .imm_be = 0x12345678,
						      .num_sge = 1,
						      .sge = { fab_sge(v.la.mr, 100, len) } }),
		 0);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, &rc, 1);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	fabric_settle(v.p.f);
	CHECK_CQE(rc, 77, URNIC_WC_SUCCESS, URNIC_WC_RECV, len);
	CHECK_EQ(rc.qp_num, v.p.b->qp.qpn);
	CHECK_EQ(rc.src_qp, v.p.a->qp.qpn);
	if (opcode == URNIC_WR_SEND_WITH_IMM) {
		CHECK(rc.wc_flags & URNIC_WC_WITH_IMM);
		CHECK_EQ(rc.imm_be, 0x12345678);
	} else {
		CHECK(!(rc.wc_flags & URNIC_WC_WITH_IMM));
	}
	CHECK_CQE(sc, 11, URNIC_WC_SUCCESS, URNIC_WC_SEND, len);
	CHECK_EQ(sc.qp_num, v.p.a->qp.qpn);
	CHECK(memcmp(v.ra.p, v.la.p + 100, len) == 0);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_ack_sent), 1);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_ack_rcvd), 1);
	CHECK_EQ(fab_poll(&v.p.b->rcq, &rc, 1), 0);
	CHECK_EQ(fab_poll(&v.p.a->scq, &sc, 1), 0);
	env_close(&v);
}

static void test_send(void)
{
	send_message(URNIC_WR_SEND, 1000);
}

static void test_send_with_imm(void)
{
	send_message(URNIC_WR_SEND_WITH_IMM, 3000);
}

static void test_rdma_write(void)
{
	struct env v;
	struct urnic_cqe sc;
	uint8_t before[BIG];

	env_open(&v, 1024);
	memcpy(before, v.ra.p, BIG);
	CHECK_EQ(
		fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 5,
							    .opcode = URNIC_WR_RDMA_WRITE,
							    .remote_addr = v.ra.mr->iova + 17,
							    .rkey = v.ra.mr->key,
							    .num_sge = 1,
							    .sge = { fab_sge(v.la.mr, 3, 2500) } }),
		0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	fabric_settle(v.p.f);
	CHECK_CQE(sc, 5, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 2500);
	CHECK(memcmp(v.ra.p + 17, v.la.p + 3, 2500) == 0);
	CHECK(memcmp(v.ra.p, before, 17) == 0);
	CHECK(memcmp(v.ra.p + 17 + 2500, before + 17 + 2500, BIG - 17 - 2500) == 0);
	/* No receive WQE involved, no receive completion. */
	CHECK_EQ(fab_poll(&v.p.b->rcq, &sc, 1), 0);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_ack_sent), 1);
	env_close(&v);
}

static void test_rdma_write_with_imm_consumes_recv(void)
{
	struct env v;
	struct urnic_cqe sc, rc;
	struct urnic_sge rs;

	env_open(&v, 1024);
	rs = fab_sge(v.ra.mr, 0, 16); /* not where the data goes */
	CHECK_EQ(fab_post_recv(v.p.b, 91, &rs, 1), 0);
	CHECK_EQ(fab_post_recv(v.p.b, 92, &rs, 1), 0);
	CHECK_EQ(
		fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 6,
							    .opcode = URNIC_WR_RDMA_WRITE_WITH_IMM,
							    .imm_be = 0xa1b2c3d4,
							    .remote_addr = v.ra.mr->iova + 1000,
							    .rkey = v.ra.mr->key,
							    .num_sge = 1,
							    .sge = { fab_sge(v.la.mr, 0, 4000) } }),
		0);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, &rc, 1);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	fabric_settle(v.p.f);
	CHECK_CQE(rc, 91, URNIC_WC_SUCCESS, URNIC_WC_RECV_RDMA_WITH_IMM, 4000);
	CHECK(rc.wc_flags & URNIC_WC_WITH_IMM);
	CHECK_EQ(rc.imm_be, 0xa1b2c3d4);
	CHECK_CQE(sc, 6, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 4000);
	CHECK(memcmp(v.ra.p + 1000, v.la.p, 4000) == 0);
	/* Exactly one receive WQE consumed: the second is still posted. */
	CHECK_EQ(atomic_load(&v.p.b->qp.rq.cons), 1);
	CHECK_EQ(atomic_load(&v.p.b->qp.rq.prod), 2);
	env_close(&v);
}

static void test_rdma_read(void)
{
	struct env v;
	struct urnic_cqe sc;

	env_open(&v, 1024);
	CHECK_EQ(fab_post_send(v.p.a,
			       &(struct fab_send_wr){ .wr_id = 8,
						      .opcode = URNIC_WR_RDMA_READ,
						      .remote_addr = v.ra.mr->iova + 33,
						      .rkey = v.ra.mr->key,
						      .num_sge = 1,
						      .sge = { fab_sge(v.la.mr, 50, 5000) } }),
		 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	fabric_settle(v.p.f);
	CHECK_CQE(sc, 8, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 5000);
	CHECK(memcmp(v.la.p + 50, v.ra.p + 33, 5000) == 0);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_read_resp_sent), 5);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_ack_sent), 0);
	CHECK_EQ(fab_poll(&v.p.b->rcq, &sc, 1), 0);
	env_close(&v);
}

/* Gather from several SGEs in two MRs, scatter into several SGEs, across packets. */
static void test_sge_lists_both_sides(void)
{
	struct env v;
	struct fab_buf l2, r2;
	struct urnic_cqe sc, rc;
	struct urnic_sge rsg[4];
	uint8_t want[BIG];
	uint32_t total = 0;
	struct fab_send_wr wr = { .wr_id = 21, .opcode = URNIC_WR_SEND, .num_sge = 3 };

	env_open(&v, 256);
	fab_buf_new(v.p.f, &l2, 0, &v.p.pd[0], 1024, FAB_ALL_ACCESS);
	fab_buf_new(v.p.f, &r2, 1, &v.p.pd[1], 1024, FAB_ALL_ACCESS);
	fab_fill(l2.p, 1024, 3);
	memset(v.ra.p, 0, BIG);
	memset(r2.p, 0, 1024);
	wr.sge[0] = fab_sge(v.la.mr, 10, 300);
	wr.sge[1] = fab_sge(l2.mr, 0, 1);
	wr.sge[2] = fab_sge(v.la.mr, 4000, 700);
	for (uint32_t i = 0; i < wr.num_sge; i++) {
		memcpy(want + total, (void *)(uintptr_t)wr.sge[i].addr, wr.sge[i].length);
		total += wr.sge[i].length;
	}
	rsg[0] = fab_sge(r2.mr, 5, 7);
	rsg[1] = fab_sge(v.ra.mr, 100, 256);
	rsg[2] = fab_sge(r2.mr, 500, 300);
	rsg[3] = fab_sge(v.ra.mr, 2000, 1000);
	CHECK_EQ(fab_post_recv(v.p.b, 31, rsg, 4), 0);
	CHECK_EQ(fab_post_send(v.p.a, &wr), 0);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, &rc, 1);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	CHECK_CQE(rc, 31, URNIC_WC_SUCCESS, URNIC_WC_RECV, total);
	CHECK_CQE(sc, 21, URNIC_WC_SUCCESS, URNIC_WC_SEND, total);
	CHECK(memcmp(r2.p + 5, want, 7) == 0);
	CHECK(memcmp(v.ra.p + 100, want + 7, 256) == 0);
	CHECK(memcmp(r2.p + 500, want + 263, 300) == 0);
	CHECK(memcmp(v.ra.p + 2000, want + 563, total - 563) == 0);
	CHECK_EQ(v.ra.p[2000 + total - 563], 0); /* nothing past the message */

	/* WRITE gathering from several SGEs, READ scattering into several. */
	wr = (struct fab_send_wr){ .wr_id = 22,
				   .opcode = URNIC_WR_RDMA_WRITE,
				   .num_sge = 3,
				   .remote_addr = v.ra.mr->iova + 5000,
				   .rkey = v.ra.mr->key };
	wr.sge[0] = fab_sge(l2.mr, 1, 255);
	wr.sge[1] = fab_sge(v.la.mr, 0, 2);
	wr.sge[2] = fab_sge(l2.mr, 300, 600);
	CHECK_EQ(fab_post_send(v.p.a, &wr), 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	CHECK_CQE(sc, 22, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 857);
	CHECK(memcmp(v.ra.p + 5000, l2.p + 1, 255) == 0);
	CHECK(memcmp(v.ra.p + 5255, v.la.p, 2) == 0);
	CHECK(memcmp(v.ra.p + 5257, l2.p + 300, 600) == 0);

	wr = (struct fab_send_wr){ .wr_id = 23,
				   .opcode = URNIC_WR_RDMA_READ,
				   .num_sge = 3,
				   .remote_addr = v.ra.mr->iova + 5000,
				   .rkey = v.ra.mr->key };
	memset(v.la.p + 6000, 0, 2000);
	wr.sge[0] = fab_sge(v.la.mr, 6000, 3);
	wr.sge[1] = fab_sge(v.la.mr, 6500, 600);
	wr.sge[2] = fab_sge(v.la.mr, 7500, 254);
	CHECK_EQ(fab_post_send(v.p.a, &wr), 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	CHECK_CQE(sc, 23, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 857);
	CHECK(memcmp(v.la.p + 6000, v.ra.p + 5000, 3) == 0);
	CHECK(memcmp(v.la.p + 6500, v.ra.p + 5003, 600) == 0);
	CHECK(memcmp(v.la.p + 7500, v.ra.p + 5603, 254) == 0);
	fabric_settle(v.p.f);
	fab_buf_free(v.p.f, &l2);
	fab_buf_free(v.p.f, &r2);
	env_close(&v);
}

/* Inline data is copied at post time (IBTA 10.8.3 allows it): the buffer needs no MR
 * and may change right after posting. */
static void test_inline_send_and_write(void)
{
	struct env v;
	struct urnic_cqe sc[2], rc;
	struct urnic_sge rs;
	uint8_t src[URNIC_MAX_INLINE], want[URNIC_MAX_INLINE];

	env_open(&v, 256);
	fab_fill(src, sizeof(src), 9);
	memcpy(want, src, sizeof(src));
	rs = fab_sge(v.ra.mr, 0, BIG);
	CHECK_EQ(fab_post_recv(v.p.b, 41, &rs, 1), 0);
	CHECK_EQ(fab_post_send(
			 v.p.a,
			 &(struct fab_send_wr){ .wr_id = 42,
						.opcode = URNIC_WR_SEND,
						.flags = URNIC_SEND_INLINE,
						.num_sge = 2,
						.sge = { { (uintptr_t)src, 100, 0xdead },
							 { (uintptr_t)(src + 100), 300, 0 } } }),
		 0);
	CHECK_EQ(fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 43,
							     .opcode = URNIC_WR_RDMA_WRITE,
							     .flags = URNIC_SEND_INLINE,
							     .remote_addr = v.ra.mr->iova + 4096,
							     .rkey = v.ra.mr->key,
							     .num_sge = 1,
							     .sge = { { (uintptr_t)src,
									URNIC_MAX_INLINE, 0 } } }),
		 0);
	memset(src, 0xee, sizeof(src));
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 2);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, &rc, 1);
	CHECK_CQE(sc[0], 42, URNIC_WC_SUCCESS, URNIC_WC_SEND, 400);
	CHECK_CQE(sc[1], 43, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, URNIC_MAX_INLINE);
	CHECK_CQE(rc, 41, URNIC_WC_SUCCESS, URNIC_WC_RECV, 400);
	CHECK(memcmp(v.ra.p, want, 400) == 0);
	CHECK(memcmp(v.ra.p + 4096, want, URNIC_MAX_INLINE) == 0);
	/* More than the inline area is refused at post time. */
	CHECK_EQ(fab_post_send(v.p.a,
			       &(struct fab_send_wr){
				       .opcode = URNIC_WR_SEND,
				       .flags = URNIC_SEND_INLINE,
				       .num_sge = 1,
				       .sge = { { (uintptr_t)src, URNIC_MAX_INLINE + 1, 0 } } }),
		 22 /* EINVAL */);
	fabric_settle(v.p.f);
	env_close(&v);
}

/* sq_sig_all = 0: unsignaled WRs complete silently; a later signaled WR completes and
 * frees every slot before it (IBTA 10.8.4). */
static void test_unsignaled_then_signaled(void)
{
	struct env v;
	struct urnic_cqe sc[4], rc;
	struct urnic_sge rs;

	env_open(&v, 1024);
	v.p.a->qp.sq_sig_all = false;
	rs = fab_sge(v.ra.mr, 7000, 1000);
	CHECK_EQ(fab_post_recv(v.p.b, 50, &rs, 1), 0);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(fab_post_send(
				 v.p.a,
				 &(struct fab_send_wr){
					 .wr_id = (uint64_t)i,
					 .opcode = URNIC_WR_RDMA_WRITE,
					 .remote_addr = v.ra.mr->iova + 1000 * (uint64_t)i,
					 .rkey = v.ra.mr->key,
					 .num_sge = 1,
					 .sge = { fab_sge(v.la.mr, 1000 * (uint64_t)i, 1000) } }),
			 0);
	CHECK_EQ(fab_post_send(v.p.a,
			       &(struct fab_send_wr){ .wr_id = 3,
						      .opcode = URNIC_WR_SEND,
						      .flags = URNIC_SEND_SIGNALED,
						      .num_sge = 1,
						      .sge = { fab_sge(v.la.mr, 5000, 1000) } }),
		 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 1);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, &rc, 1);
	fabric_settle(v.p.f);
	CHECK_CQE(sc[0], 3, URNIC_WC_SUCCESS, URNIC_WC_SEND, 1000);
	CHECK_EQ(fab_poll(&v.p.a->scq, sc, 4), 0);
	CHECK_EQ(atomic_load(&v.p.a->qp.sq.cons), 4);
	CHECK(memcmp(v.ra.p, v.la.p, 3000) == 0);
	CHECK(memcmp(v.ra.p + 7000, v.la.p + 5000, 1000) == 0);
	/* An unsignaled READ still lands its data. */
	CHECK_EQ(fab_post_send(v.p.a,
			       &(struct fab_send_wr){ .wr_id = 4,
						      .opcode = URNIC_WR_RDMA_READ,
						      .remote_addr = v.ra.mr->iova,
						      .rkey = v.ra.mr->key,
						      .num_sge = 1,
						      .sge = { fab_sge(v.la.mr, 4000, 100) } }),
		 0);
	fabric_settle(v.p.f);
	CHECK_EQ(fab_poll(&v.p.a->scq, sc, 4), 0);
	CHECK_EQ(atomic_load(&v.p.a->qp.sq.cons), 5);
	CHECK(memcmp(v.la.p + 4000, v.ra.p, 100) == 0);
	env_close(&v);
}

/* Zero-length SEND, WRITE and READ: one ONLY packet each, and no R_Key is checked for
 * the WRITE and READ (C9-88), so a bogus rkey is fine. */
static void test_zero_length(void)
{
	struct env v;
	struct urnic_cqe sc[3], rc;

	env_open(&v, 1024);
	CHECK_EQ(fab_post_recv(v.p.b, 60, NULL, 0), 0);
	CHECK_EQ(
		fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 61, .opcode = URNIC_WR_SEND }),
		0);
	CHECK_EQ(fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 62,
							     .opcode = URNIC_WR_RDMA_WRITE,
							     .remote_addr = 0x1234,
							     .rkey = 0x77 }),
		 0);
	CHECK_EQ(fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 63,
							     .opcode = URNIC_WR_RDMA_READ,
							     .remote_addr = 0x1234,
							     .rkey = 0x77 }),
		 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 3);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, &rc, 1);
	fabric_settle(v.p.f);
	CHECK_CQE(rc, 60, URNIC_WC_SUCCESS, URNIC_WC_RECV, 0);
	CHECK_CQE(sc[0], 61, URNIC_WC_SUCCESS, URNIC_WC_SEND, 0);
	CHECK_CQE(sc[1], 62, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 0);
	CHECK_CQE(sc[2], 63, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 0);
	{
		const uint8_t ops[] = { URNIC_OP_RC_SEND_ONLY, URNIC_OP_RC_RDMA_WRITE_ONLY,
					URNIC_OP_RC_RDMA_READ_REQUEST };
		int k = 0;

		for (uint32_t i = 0; i < v.p.f->ntrace; i++) {
			const struct fab_pktinfo *pi = &v.p.f->trace[i];

			if (pi->src != 0)
				continue;
			CHECK(k < 3);
			CHECK_EQ(pi->opcode, ops[k]);
			CHECK_EQ(pi->payload_bytes, 0);
			CHECK(pi->ackreq);
			k++;
		}
		CHECK_EQ(k, 3);
	}
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_read_resp_sent), 1);
	env_close(&v);
}

/* Solicited SEND: SE set on the last packet only (IBTA 9.2.3). */
static void test_solicited_event_bit(void)
{
	struct env v;
	struct urnic_cqe sc, rc;
	struct urnic_sge rs;
	int last = -1;

	env_open(&v, 256);
	rs = fab_sge(v.ra.mr, 0, BIG);
	CHECK_EQ(fab_post_recv(v.p.b, 70, &rs, 1), 0);
	CHECK_EQ(fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 71,
							     .opcode = URNIC_WR_SEND_WITH_IMM,
							     .flags = URNIC_SEND_SOLICITED,
							     .num_sge = 1,
							     .sge = { fab_sge(v.la.mr, 0, 600) } }),
		 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, &rc, 1);
	for (uint32_t i = 0; i < v.p.f->ntrace; i++) {
		const struct fab_pktinfo *pi = &v.p.f->trace[i];

		if (pi->src != 0)
			continue;
		CHECK_EQ(pi->se, pi->opcode == URNIC_OP_RC_SEND_LAST_WITH_IMMEDIATE);
		last = pi->opcode;
	}
	CHECK_EQ(last, URNIC_OP_RC_SEND_LAST_WITH_IMMEDIATE);
	fabric_settle(v.p.f);
	env_close(&v);
}

/* Every kind of WR in one stream, in both directions at once. */
static void test_bidirectional_mixed(void)
{
	struct env v;
	struct fab_buf lb, rb; /* the reverse direction's buffers */
	struct urnic_cqe c[16];
	struct urnic_sge rs;

	env_open(&v, 512);
	fab_buf_new(v.p.f, &lb, 1, &v.p.pd[1], BIG, FAB_ALL_ACCESS);
	fab_buf_new(v.p.f, &rb, 0, &v.p.pd[0], BIG, FAB_ALL_ACCESS);
	fab_fill(lb.p, BIG, 4);
	memset(rb.p, 0, BIG);
	for (int i = 0; i < 2; i++) {
		rs = fab_sge(rb.mr, 4096 * (uint64_t)i, 4096);
		CHECK_EQ(fab_post_recv(v.p.a, 100 + (uint64_t)i, &rs, 1), 0);
	}
	/* b -> a: SEND, WRITE, SEND; a -> b: READ, WRITE. */
	CHECK_EQ(fab_post_send(v.p.b, &(struct fab_send_wr){ .wr_id = 1,
							     .opcode = URNIC_WR_SEND,
							     .num_sge = 1,
							     .sge = { fab_sge(lb.mr, 0, 3000) } }),
		 0);
	CHECK_EQ(
		fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 2,
							    .opcode = URNIC_WR_RDMA_READ,
							    .remote_addr = lb.mr->iova + 4000,
							    .rkey = lb.mr->key,
							    .num_sge = 1,
							    .sge = { fab_sge(v.la.mr, 0, 2000) } }),
		0);
	CHECK_EQ(fab_post_send(v.p.a,
			       &(struct fab_send_wr){ .wr_id = 3,
						      .opcode = URNIC_WR_RDMA_WRITE,
						      .remote_addr = v.ra.mr->iova,
						      .rkey = v.ra.mr->key,
						      .num_sge = 1,
						      .sge = { fab_sge(v.la.mr, 4000, 3000) } }),
		 0);
	CHECK_EQ(
		fab_post_send(v.p.b, &(struct fab_send_wr){ .wr_id = 4,
							    .opcode = URNIC_WR_SEND,
							    .num_sge = 1,
							    .sge = { fab_sge(lb.mr, 5000, 100) } }),
		0);
	fab_wait_cqes(v.p.f, &v.p.b->scq, c, 2);
	CHECK_CQE(c[0], 1, URNIC_WC_SUCCESS, URNIC_WC_SEND, 3000);
	CHECK_CQE(c[1], 4, URNIC_WC_SUCCESS, URNIC_WC_SEND, 100);
	fab_wait_cqes(v.p.f, &v.p.a->scq, c, 2);
	CHECK_CQE(c[0], 2, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 2000);
	CHECK_CQE(c[1], 3, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 3000);
	fab_wait_cqes(v.p.f, &v.p.a->rcq, c, 2);
	CHECK_CQE(c[0], 100, URNIC_WC_SUCCESS, URNIC_WC_RECV, 3000);
	CHECK_CQE(c[1], 101, URNIC_WC_SUCCESS, URNIC_WC_RECV, 100);
	fabric_settle(v.p.f);
	CHECK(memcmp(rb.p, lb.p, 3000) == 0);
	CHECK(memcmp(rb.p + 4096, lb.p + 5000, 100) == 0);
	CHECK(memcmp(v.la.p, lb.p + 4000, 2000) == 0);
	CHECK(memcmp(v.ra.p, v.la.p + 4000, 3000) == 0);
	fab_buf_free(v.p.f, &lb);
	fab_buf_free(v.p.f, &rb);
	env_close(&v);
}

/* Eight QP pairs between the two hosts (and one to a third host), all at once: each
 * packet finds its QP, each QP its own PSNs and completions. */
static void test_many_qps_interleaved(void)
{
	enum { NQ = 8 };
	struct fabric *f = fabric_new(3, 21);
	struct urnic_pd pd[3] = { { 1 }, { 1 }, { 1 } };
	struct fab_qp *qa[NQ + 1], *qb[NQ + 1];
	struct fab_buf la, ra, xa;
	struct fab_conn c = fab_conn_default();

	fab_buf_new(f, &la, 0, &pd[0], (NQ + 1) * 8192, FAB_ALL_ACCESS);
	fab_buf_new(f, &ra, 1, &pd[1], NQ * 8192, FAB_ALL_ACCESS);
	fab_buf_new(f, &xa, 2, &pd[2], 8192, FAB_ALL_ACCESS);
	fab_fill(la.p, (NQ + 1) * 8192, 3);
	for (int i = 0; i <= NQ; i++) {
		qa[i] = fab_qp_new(f, 0, &pd[0], 64, 64, true);
		qb[i] = fab_qp_new(f, i < NQ ? 1 : 2, &pd[i < NQ ? 1 : 2], 64, 64, true);
		c.psn_a = 0x1000 * (uint32_t)i;
		c.psn_b = 0xfffff0 - (uint32_t)i;
		c.mtu = 256u << (i % 5);
		fab_connect(qa[i], qb[i], &c);
	}
	for (int i = 0; i <= NQ; i++) {
		struct fab_buf *dst = i < NQ ? &ra : &xa;
		uint64_t off = i < NQ ? 8192 * (uint64_t)i : 0;
		struct urnic_sge rs = fab_sge(dst->mr, off, 4000);

		CHECK_EQ(fab_post_recv(qb[i], 100 + (uint64_t)i, &rs, 1), 0);
		CHECK_EQ(fab_post_send(
				 qa[i],
				 &(struct fab_send_wr){
					 .wr_id = (uint64_t)i,
					 .opcode = URNIC_WR_SEND,
					 .num_sge = 1,
					 .sge = { fab_sge(la.mr, 8192 * (uint64_t)i, 4000) } }),
			 0);
		CHECK_EQ(fab_post_send(qa[i],
				       &(struct fab_send_wr){
					       .wr_id = 50 + (uint64_t)i,
					       .opcode = URNIC_WR_RDMA_WRITE,
					       .remote_addr = dst->mr->iova + off + 4096,
					       .rkey = dst->mr->key,
					       .num_sge = 1,
					       .sge = { fab_sge(la.mr, 8192 * (uint64_t)i + 4096,
								4000) } }),
			 0);
	}
	for (int i = 0; i <= NQ; i++) {
		struct fab_buf *dst = i < NQ ? &ra : &xa;
		uint64_t off = i < NQ ? 8192 * (uint64_t)i : 0;
		struct urnic_cqe sc[2], rc;

		fab_wait_cqes(f, &qa[i]->scq, sc, 2);
		fab_wait_cqes(f, &qb[i]->rcq, &rc, 1);
		CHECK_CQE(sc[0], (uint64_t)i, URNIC_WC_SUCCESS, URNIC_WC_SEND, 4000);
		CHECK_CQE(sc[1], 50 + (uint64_t)i, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 4000);
		CHECK_CQE(rc, 100 + (uint64_t)i, URNIC_WC_SUCCESS, URNIC_WC_RECV, 4000);
		CHECK_EQ(rc.qp_num, qb[i]->qp.qpn);
		CHECK_EQ(rc.src_qp, qa[i]->qp.qpn);
		CHECK(memcmp(dst->p + off, la.p + 8192 * i, 4000) == 0);
		CHECK(memcmp(dst->p + off + 4096, la.p + 8192 * i + 4096, 4000) == 0);
	}
	fabric_settle(f);
	for (int h = 0; h < 3; h++) {
		CHECK_EQ(fab_ctr(f, h, URNIC_CTR_retransmit_pkts), 0);
		CHECK_EQ(fab_ctr(f, h, URNIC_CTR_drop_unknown_qp), 0);
		CHECK_EQ(fab_ctr(f, h, URNIC_CTR_drop_addr_mismatch), 0);
	}
	for (int i = 0; i <= NQ; i++) {
		fab_qp_free(qa[i]);
		fab_qp_free(qb[i]);
	}
	fab_buf_free(f, &la);
	fab_buf_free(f, &ra);
	fab_buf_free(f, &xa);
	fabric_free(f);
}

/* A receive CQ that overflows: the QP goes to error (IBTA 11.4.2.1), the overrun is
 * counted, and the sender finds out by retrying into a QP in error. */
static void test_recv_cq_overflow_errors_qp(void)
{
	struct env v;
	struct urnic_cqe sc[3], rc[2];

	env_open(&v, 1024);
	urnic_cq_fini(&v.p.b->rcq);
	CHECK_EQ(urnic_cq_init(&v.p.b->rcq, 2), 0);
	v.p.a->qp.attr.retry_cnt = 1;
	v.p.a->qp.req.retry_left = 1;
	for (int i = 0; i < 3; i++) {
		struct urnic_sge rs = fab_sge(v.ra.mr, 100 * (uint64_t)i, 100);

		CHECK_EQ(fab_post_recv(v.p.b, 10 + (uint64_t)i, &rs, 1), 0);
		CHECK_EQ(fab_post_send(
				 v.p.a,
				 &(struct fab_send_wr){
					 .wr_id = (uint64_t)i,
					 .opcode = URNIC_WR_SEND,
					 .num_sge = 1,
					 .sge = { fab_sge(v.la.mr, 100 * (uint64_t)i, 100) } }),
			 0);
	}
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 3);
	fabric_settle(v.p.f);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_cq_overflow), 1);
	CHECK_EQ(v.p.b->qp.state, URNIC_QPS_ERR);
	CHECK_EQ(fab_poll(&v.p.b->rcq, rc, 2), 2);
	CHECK_CQE(rc[0], 10, URNIC_WC_SUCCESS, URNIC_WC_RECV, 100);
	CHECK_CQE(rc[1], 11, URNIC_WC_SUCCESS, URNIC_WC_RECV, 100);
	CHECK_EQ(sc[0].status, URNIC_WC_SUCCESS);
	CHECK_EQ(sc[1].status, URNIC_WC_SUCCESS);
	CHECK_EQ(sc[2].wr_id, 2);
	CHECK_EQ(sc[2].status, URNIC_WC_RETRY_EXC_ERR);
	CHECK(fab_ctr(v.p.f, 1, URNIC_CTR_drop_qp_error) >= 1);
	/* env_close's clean-run checks do not apply: tear down by hand. */
	fab_buf_free(v.p.f, &v.la);
	fab_buf_free(v.p.f, &v.ra);
	fab_pair_close(&v.p);
}

int main(void)
{
	RUN(test_send);
	RUN(test_send_with_imm);
	RUN(test_rdma_write);
	RUN(test_rdma_write_with_imm_consumes_recv);
	RUN(test_rdma_read);
	RUN(test_sge_lists_both_sides);
	RUN(test_inline_send_and_write);
	RUN(test_unsignaled_then_signaled);
	RUN(test_zero_length);
	RUN(test_solicited_event_bit);
	RUN(test_bidirectional_mixed);
	RUN(test_many_qps_interleaved);
	RUN(test_recv_cq_overflow_errors_qp);
	return 0;
}
