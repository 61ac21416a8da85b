/* SPDX-License-Identifier: MIT */
/*
 * test_duplicates.c - duplicate requests at the responder (IBTA 9.7.5.1.2).
 *
 * A duplicate SEND or WRITE is acknowledged again and not executed again (C9-105): no
 * second receive completion, no receive WQE consumed, memory written once. A duplicate
 * READ is answered again from the saved responder resource (9.7.5.1.3), re-reading
 * memory. A duplicate atomic returns the saved original value and is not executed
 * again (9.4.5): the word changes once, and a CMP_AND_SWP retried after it succeeded
 * still reports success. Duplicated responses at the requester change nothing.
 */
#include <string.h>

#include "fabric.h"

#define BUF (256 * 1024)
#define LATE_NS 1000000ull /* a copy that arrives 1 ms after the original */

struct env {
	struct fab_pair p;
	struct fab_buf la, ra;
};

static void env_open(struct env *v, uint64_t seed)
{
	struct fab_conn c = fab_conn_default();

	fab_pair_open(&v->p, &c, seed);
	fab_buf_new(v->p.f, &v->la, 0, &v->p.pd[0], BUF, FAB_ALL_ACCESS);
	fab_buf_new(v->p.f, &v->ra, 1, &v->p.pd[1], BUF, FAB_ALL_ACCESS);
	fab_fill(v->la.p, BUF, (uint32_t)seed);
	fab_fill(v->ra.p, BUF, (uint32_t)seed + 1);
}

static void env_close(struct env *v)
{
	CHECK_EQ(v->p.a->qp.state, URNIC_QPS_RTS);
	CHECK_EQ(v->p.b->qp.state, URNIC_QPS_RTS);
	CHECK_EQ(v->p.a->qp.req.psn, v->p.b->qp.resp.epsn);
	fab_buf_free(v->p.f, &v->la);
	fab_buf_free(v->p.f, &v->ra);
	fab_pair_close(&v->p);
}

static struct fab_rule *dup_rule(struct env *v, int src, uint8_t opcode, uint64_t delay_ns)
{
	return fab_add_rule(v->p.f, &(struct fab_rule){ .match = FAB_M_SRC | FAB_M_OPCODE,
							.src = src,
							.opcode = opcode,
							.count = 1,
							.action = FAB_DUP,
							.delay_ns = delay_ns });
}

static void test_duplicate_send_acked_not_redelivered(void)
{
	struct env v;
	struct urnic_cqe sc, rc;
	struct urnic_sge rs[2];

	env_open(&v, 1);
	rs[0] = fab_sge(v.ra.mr, 0, 1000);
	rs[1] = fab_sge(v.ra.mr, 1000, 1000);
	CHECK_EQ(fab_post_recv(v.p.b, 1, &rs[0], 1), 0);
	CHECK_EQ(fab_post_recv(v.p.b, 2, &rs[1], 1), 0);
	dup_rule(&v, 0, URNIC_OP_RC_SEND_ONLY, 0);
	CHECK_EQ(
		fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 10,
							    .opcode = URNIC_WR_SEND,
							    .num_sge = 1,
							    .sge = { fab_sge(v.la.mr, 0, 1000) } }),
		0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	fabric_settle(v.p.f);
	CHECK_CQE(sc, 10, URNIC_WC_SUCCESS, URNIC_WC_SEND, 1000);
	CHECK_EQ(fab_poll(&v.p.b->rcq, &rc, 1), 1);
	CHECK_CQE(rc, 1, URNIC_WC_SUCCESS, URNIC_WC_RECV, 1000);
	CHECK_EQ(fab_poll(&v.p.b->rcq, &rc, 1), 0);
	CHECK_EQ(atomic_load(&v.p.b->qp.rq.cons), 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request), 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_ack_sent), 2); /* the ACK, then again */
	CHECK_EQ(fab_poll(&v.p.a->scq, &sc, 1), 0);
	/* The next SEND goes to the second receive. */
	CHECK_EQ(fab_post_send(v.p.a,
			       &(struct fab_send_wr){ .wr_id = 11,
						      .opcode = URNIC_WR_SEND,
						      .num_sge = 1,
						      .sge = { fab_sge(v.la.mr, 5000, 700) } }),
		 0);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, &rc, 1);
	fabric_settle(v.p.f);
	CHECK_CQE(rc, 2, URNIC_WC_SUCCESS, URNIC_WC_RECV, 700);
	CHECK(memcmp(v.ra.p, v.la.p, 1000) == 0);
	CHECK(memcmp(v.ra.p + 1000, v.la.p + 5000, 700) == 0);
	env_close(&v);
}

/* A copy of a multi-packet SEND's middle packet arriving after the whole message. */
static void test_duplicate_send_middle_late(void)
{
	struct env v;
	struct urnic_cqe sc, rc;
	struct urnic_sge rs;

	env_open(&v, 2);
	rs = fab_sge(v.ra.mr, 0, 8000);
	CHECK_EQ(fab_post_recv(v.p.b, 1, &rs, 1), 0);
	CHECK_EQ(fab_post_recv(v.p.b, 2, &rs, 1), 0);
	dup_rule(&v, 0, URNIC_OP_RC_SEND_MIDDLE, LATE_NS);
	CHECK_EQ(
		fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 10,
							    .opcode = URNIC_WR_SEND,
							    .num_sge = 1,
							    .sge = { fab_sge(v.la.mr, 0, 8000) } }),
		0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, &rc, 1);
	memset(v.ra.p, 0xaa, 8000);
	fabric_settle(v.p.f);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request), 1);
	CHECK_EQ(fab_poll(&v.p.b->rcq, &rc, 1), 0);
	CHECK_EQ(atomic_load(&v.p.b->qp.rq.cons), 1);
	for (int i = 0; i < 8000; i++)
		CHECK_EQ(v.ra.p[i], 0xaa);
	env_close(&v);
}

static void test_duplicate_write_not_reexecuted(void)
{
	struct env v;
	struct urnic_cqe sc;

	env_open(&v, 3);
	dup_rule(&v, 0, URNIC_OP_RC_RDMA_WRITE_ONLY, LATE_NS);
	CHECK_EQ(fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 20,
							     .opcode = URNIC_WR_RDMA_WRITE,
							     .remote_addr = v.ra.mr->iova + 64,
							     .rkey = v.ra.mr->key,
							     .num_sge = 1,
							     .sge = { fab_sge(v.la.mr, 0, 512) } }),
		 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	CHECK_CQE(sc, 20, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 512);
	CHECK(memcmp(v.ra.p + 64, v.la.p, 512) == 0);
	/* The application reuses the buffer; the late copy must not write it again. */
	memset(v.ra.p + 64, 0x5c, 512);
	fabric_settle(v.p.f);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request), 1);
	for (int i = 0; i < 512; i++)
		CHECK_EQ(v.ra.p[64 + i], 0x5c);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_ack_sent), 2);
	CHECK_EQ(fab_poll(&v.p.a->scq, &sc, 1), 0);
	env_close(&v);
}

/* WRITE with immediate: the duplicate consumes no second receive WQE. */
static void test_duplicate_write_with_imm_consumes_once(void)
{
	struct env v;
	struct urnic_cqe sc, rc;

	env_open(&v, 4);
	CHECK_EQ(fab_post_recv(v.p.b, 1, NULL, 0), 0);
	CHECK_EQ(fab_post_recv(v.p.b, 2, NULL, 0), 0);
	dup_rule(&v, 0, URNIC_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 0);
	CHECK_EQ(fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 20,
							     .opcode = URNIC_WR_RDMA_WRITE_WITH_IMM,
							     .imm_be = 0x01020304,
							     .remote_addr = v.ra.mr->iova,
							     .rkey = v.ra.mr->key,
							     .num_sge = 1,
							     .sge = { fab_sge(v.la.mr, 0, 100) } }),
		 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	fabric_settle(v.p.f);
	CHECK_EQ(fab_poll(&v.p.b->rcq, &rc, 1), 1);
	CHECK_CQE(rc, 1, URNIC_WC_SUCCESS, URNIC_WC_RECV_RDMA_WITH_IMM, 100);
	CHECK_EQ(rc.imm_be, 0x01020304);
	CHECK_EQ(fab_poll(&v.p.b->rcq, &rc, 1), 0);
	CHECK_EQ(atomic_load(&v.p.b->qp.rq.cons), 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request), 1);
	env_close(&v);
}

static void test_duplicate_read_replayed(void)
{
	struct env v;
	struct urnic_cqe sc;

	env_open(&v, 5);
	dup_rule(&v, 0, URNIC_OP_RC_RDMA_READ_REQUEST, LATE_NS);
	CHECK_EQ(
		fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 30,
							    .opcode = URNIC_WR_RDMA_READ,
							    .remote_addr = v.ra.mr->iova + 100,
							    .rkey = v.ra.mr->key,
							    .num_sge = 1,
							    .sge = { fab_sge(v.la.mr, 0, 4000) } }),
		0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	CHECK_CQE(sc, 30, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 4000);
	CHECK(memcmp(v.la.p, v.ra.p + 100, 4000) == 0);
	memset(v.la.p, 0, 4000);
	fabric_settle(v.p.f);
	/* Answered again (4 response packets twice) ... */
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request), 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_read_resp_sent), 8);
	/* ... and the requester, done with that READ, ignores the replay. */
	for (int i = 0; i < 4000; i++)
		CHECK_EQ(v.la.p[i], 0);
	CHECK_EQ(fab_poll(&v.p.a->scq, &sc, 1), 0);
	env_close(&v);
}

/* A duplicate of a READ still being answered restarts the replay; data is right. */
static void test_duplicate_read_while_replying(void)
{
	struct env v;
	struct urnic_cqe sc;

	env_open(&v, 6);
	dup_rule(&v, 0, URNIC_OP_RC_RDMA_READ_REQUEST, 0);
	CHECK_EQ(fab_post_send(v.p.a,
			       &(struct fab_send_wr){ .wr_id = 31,
						      .opcode = URNIC_WR_RDMA_READ,
						      .remote_addr = v.ra.mr->iova,
						      .rkey = v.ra.mr->key,
						      .num_sge = 1,
						      .sge = { fab_sge(v.la.mr, 0, 200000) } }),
		 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	fabric_settle(v.p.f);
	CHECK_CQE(sc, 31, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 200000);
	CHECK(memcmp(v.la.p, v.ra.p, 200000) == 0);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request), 1);
	env_close(&v);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t x;

	memcpy(&x, p, 8);
	return x;
}

static void test_duplicate_atomic_returns_saved_value(void)
{
	struct env v;
	struct urnic_cqe sc;
	uint64_t x = 1000;

	env_open(&v, 7);
	memcpy(v.ra.p + 8, &x, 8);
	dup_rule(&v, 0, URNIC_OP_RC_FETCH_ADD, LATE_NS);
	CHECK_EQ(
		fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 40,
							    .opcode = URNIC_WR_ATOMIC_FETCH_AND_ADD,
							    .remote_addr = v.ra.mr->iova + 8,
							    .rkey = v.ra.mr->key,
							    .compare_add = 5,
							    .num_sge = 1,
							    .sge = { fab_sge(v.la.mr, 0, 8) } }),
		0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	fabric_settle(v.p.f);
	CHECK_CQE(sc, 40, URNIC_WC_SUCCESS, URNIC_WC_FETCH_ADD, 8);
	CHECK_EQ(get64(v.la.p), 1000);
	CHECK_EQ(get64(v.ra.p + 8), 1005); /* once */
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_atomic_executed), 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request), 1);
	/* The replayed AtomicAckETH went out with the saved value. */
	{
		uint32_t acks = 0;

		for (uint32_t i = 0; i < v.p.f->ntrace; i++)
			acks += v.p.f->trace[i].src == 1 &&
				v.p.f->trace[i].opcode == URNIC_OP_RC_ATOMIC_ACKNOWLEDGE;
		CHECK_EQ(acks, 2);
	}
	env_close(&v);
}

/* CMP_AND_SWP whose ACK is lost: the retry is a duplicate; executing it again would
 * fail the compare (the word now holds the swap value) and report the wrong original. */
static void test_retried_cmp_swap_reports_first_result(void)
{
	struct env v;
	struct urnic_cqe sc;
	uint64_t x = 5;

	env_open(&v, 8);
	memcpy(v.ra.p + 16, &x, 8);
	fab_add_rule(v.p.f, &(struct fab_rule){ .match = FAB_M_SRC | FAB_M_OPCODE,
						.src = 1,
						.opcode = URNIC_OP_RC_ATOMIC_ACKNOWLEDGE,
						.count = 1,
						.action = FAB_DROP });
	CHECK_EQ(fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 41,
							     .opcode = URNIC_WR_ATOMIC_CMP_AND_SWP,
							     .remote_addr = v.ra.mr->iova + 16,
							     .rkey = v.ra.mr->key,
							     .compare_add = 5,
							     .swap = 9,
							     .num_sge = 1,
							     .sge = { fab_sge(v.la.mr, 0, 8) } }),
		 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	fabric_settle(v.p.f);
	CHECK_CQE(sc, 41, URNIC_WC_SUCCESS, URNIC_WC_COMP_SWAP, 8);
	CHECK_EQ(get64(v.la.p), 5);
	CHECK_EQ(get64(v.ra.p + 16), 9);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_atomic_executed), 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request), 1);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retry_timeout), 1);
	env_close(&v);
}

/* Every packet in both directions arrives twice. */
static void test_everything_duplicated(void)
{
	struct env v;
	struct urnic_cqe sc[5], rc[2];
	struct urnic_sge rs;
	uint64_t x = 7;

	env_open(&v, 9);
	memcpy(v.ra.p, &x, 8);
	rs = fab_sge(v.ra.mr, 1000, 5000);
	CHECK_EQ(fab_post_recv(v.p.b, 1, &rs, 1), 0);
	CHECK_EQ(fab_post_recv(v.p.b, 2, &rs, 1), 0);
	CHECK_EQ(fab_post_recv(v.p.b, 3, &rs, 1), 0);
	fab_add_rule(v.p.f, &(struct fab_rule){ .action = FAB_DUP, .hold = 1 });
	CHECK_EQ(
		fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 1,
							    .opcode = URNIC_WR_SEND,
							    .num_sge = 1,
							    .sge = { fab_sge(v.la.mr, 0, 5000) } }),
		0);
	CHECK_EQ(fab_post_send(v.p.a,
			       &(struct fab_send_wr){ .wr_id = 2,
						      .opcode = URNIC_WR_RDMA_WRITE,
						      .remote_addr = v.ra.mr->iova + 10000,
						      .rkey = v.ra.mr->key,
						      .num_sge = 1,
						      .sge = { fab_sge(v.la.mr, 10000, 5000) } }),
		 0);
	CHECK_EQ(fab_post_send(v.p.a,
			       &(struct fab_send_wr){ .wr_id = 3,
						      .opcode = URNIC_WR_RDMA_READ,
						      .remote_addr = v.ra.mr->iova + 20000,
						      .rkey = v.ra.mr->key,
						      .num_sge = 1,
						      .sge = { fab_sge(v.la.mr, 20000, 5000) } }),
		 0);
	CHECK_EQ(fab_post_send(v.p.a,
			       &(struct fab_send_wr){ .wr_id = 4,
						      .opcode = URNIC_WR_ATOMIC_FETCH_AND_ADD,
						      .remote_addr = v.ra.mr->iova,
						      .rkey = v.ra.mr->key,
						      .compare_add = 3,
						      .num_sge = 1,
						      .sge = { fab_sge(v.la.mr, 40000, 8) } }),
		 0);
	CHECK_EQ(fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 5,
							     .opcode = URNIC_WR_SEND_WITH_IMM,
							     .imm_be = 77,
							     .num_sge = 1,
							     .sge = { fab_sge(v.la.mr, 0, 10) } }),
		 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 5);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, rc, 2);
	fabric_settle(v.p.f);
	for (int i = 0; i < 5; i++) {
		CHECK_EQ(sc[i].wr_id, (uint64_t)i + 1);
		CHECK_EQ(sc[i].status, URNIC_WC_SUCCESS);
	}
	CHECK_CQE(rc[0], 1, URNIC_WC_SUCCESS, URNIC_WC_RECV, 5000);
	CHECK_CQE(rc[1], 2, URNIC_WC_SUCCESS, URNIC_WC_RECV, 10);
	CHECK_EQ(rc[1].imm_be, 77);
	CHECK_EQ(fab_poll(&v.p.b->rcq, rc, 1), 0);
	CHECK_EQ(atomic_load(&v.p.b->qp.rq.cons), 2);
	CHECK(memcmp(v.ra.p + 10000, v.la.p + 10000, 5000) == 0);
	CHECK(memcmp(v.la.p + 20000, v.ra.p + 20000, 5000) == 0);
	CHECK_EQ(get64(v.la.p + 40000), 7);
	CHECK_EQ(get64(v.ra.p), 10);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_atomic_executed), 1);
	CHECK(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request) >= 5);
	env_close(&v);
}

int main(void)
{
	RUN(test_duplicate_send_acked_not_redelivered);
	RUN(test_duplicate_send_middle_late);
	RUN(test_duplicate_write_not_reexecuted);
	RUN(test_duplicate_write_with_imm_consumes_once);
	RUN(test_duplicate_read_replayed);
	RUN(test_duplicate_read_while_replying);
	RUN(test_duplicate_atomic_returns_saved_value);
	RUN(test_retried_cmp_swap_reports_first_result);
	RUN(test_everything_duplicated);
	return 0;
}
