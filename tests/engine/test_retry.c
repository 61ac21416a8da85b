/* SPDX-License-Identifier: MIT */
/*
 * test_retry.c - the local ACK timeout and retry_cnt (IBTA 9.7.6.1.3, C9-139..141).
 *
 * With nothing getting through, the requester resends after every timeout
 * (4.096 us * 2^timeout) and after retry_cnt retries completes the oldest WR with
 * IBV_WC_RETRY_EXC_ERR, moves the QP to error and flushes the rest. retry_cnt = 7 means
 * exactly seven retries: urnic follows the IBTA here, where rxe retries forever (our
 * documented deviation). timeout = 0 disables the timer. Progress resets the budget.
 */
#include <string.h>

#include "fabric.h"

struct env {
	struct fab_pair p;
	struct fab_buf la, ra;
	uint64_t rto;
};

static void env_open(struct env *v, uint8_t retry_cnt, uint8_t timeout, uint64_t seed)
{
	struct fab_conn c = fab_conn_default();

	c.retry_cnt = retry_cnt;
	c.timeout = timeout;
	fab_pair_open(&v->p, &c, seed);
	fab_buf_new(v->p.f, &v->la, 0, &v->p.pd[0], 65536, FAB_ALL_ACCESS);
	fab_buf_new(v->p.f, &v->ra, 1, &v->p.pd[1], 65536, FAB_ALL_ACCESS);
	fab_fill(v->la.p, 65536, (uint32_t)seed);
	v->rto = urnic_qp_rto_ns(timeout);
}

static void env_close(struct env *v)
{
	fab_buf_free(v->p.f, &v->la);
	fab_buf_free(v->p.f, &v->ra);
	fab_pair_close(&v->p);
}

static void post_writes(struct env *v, int n)
{
	for (int i = 0; i < n; i++)
		CHECK_EQ(fab_post_send(
				 v->p.a,
				 &(struct fab_send_wr){
					 .wr_id = (uint64_t)i,
					 .opcode = URNIC_WR_RDMA_WRITE,
					 .remote_addr = v->ra.mr->iova + 2048 * (uint64_t)i,
					 .rkey = v->ra.mr->key,
					 .num_sge = 1,
					 .sge = { fab_sge(v->la.mr, 2048 * (uint64_t)i, 2000) } }),
			 0);
}

static void check_exhausted(struct env *v, uint8_t retry_cnt, uint64_t t0, int n)
{
	struct urnic_cqe sc[8];
	uint32_t sends = 0;

	fab_wait_cqes(v->p.f, &v->p.a->scq, sc, n);
	fabric_settle(v->p.f);
	CHECK_EQ(sc[0].wr_id, 0);
	CHECK_EQ(sc[0].status, URNIC_WC_RETRY_EXC_ERR);
	CHECK_EQ(sc[0].status, 12);
	CHECK_EQ(sc[0].opcode, URNIC_WC_RDMA_WRITE);
	for (int i = 1; i < n; i++) {
		CHECK_EQ(sc[i].wr_id, (uint64_t)i);
		CHECK_EQ(sc[i].status, URNIC_WC_WR_FLUSH_ERR);
	}
	CHECK_EQ(fab_poll(&v->p.a->scq, sc, 1), 0);
	CHECK_EQ(v->p.a->qp.state, URNIC_QPS_ERR);
	CHECK_EQ(fab_ctr(v->p.f, 0, URNIC_CTR_retry_timeout), retry_cnt + 1u);
	CHECK_EQ(fab_ctr(v->p.f, 0, URNIC_CTR_retry_exceeded), 1);
	/* The first PSN went out once and then once per retry, one timeout apart. */
	for (uint32_t i = 0; i < v->p.f->ntrace; i++) {
		const struct fab_pktinfo *pi = &v->p.f->trace[i];

		if (pi->src == 0 && pi->psn == 0x100) {
			CHECK_EQ(pi->t_ns, t0 + sends * v->rto);
			sends++;
		}
	}
	CHECK_EQ(sends, retry_cnt + 1u);
	/* It failed at the (retry_cnt + 1)th expiry, and nothing ran after that. */
	CHECK_EQ(v->p.f->now_ns, t0 + (retry_cnt + 1u) * v->rto);
}

/* Requests never arrive. */
static void test_retry_exhausted_requests_lost(void)
{
	for (uint8_t n = 0; n <= 7; n++) {
		struct env v;
		uint64_t t0;

		env_open(&v, n, 10, 100 + n);
		fab_add_rule(v.p.f, &(struct fab_rule){
					    .match = FAB_M_SRC, .src = 0, .action = FAB_DROP });
		t0 = v.p.f->now_ns;
		post_writes(&v, 3);
		check_exhausted(&v, n, t0, 3);
		CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_rx_packets), 0);
		CHECK_EQ(v.p.b->qp.state, URNIC_QPS_RTS);
		env_close(&v);
	}
}

/* retry_cnt = 7 is seven retries, not rxe's "forever" (IBTA 9.7.6.1.3). */
static void test_retry_cnt_7_is_seven_retries(void)
{
	struct env v;
	uint64_t t0;

	env_open(&v, 7, 14, 7);
	fab_add_rule(v.p.f, &(struct fab_rule){ .match = FAB_M_SRC, .src = 0, .action = FAB_DROP });
	t0 = v.p.f->now_ns;
	post_writes(&v, 1);
	check_exhausted(&v, 7, t0, 1);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retry_timeout), 8);
	/* 2 packets per WRITE, sent 8 times: 14 of them retransmissions. */
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retransmit_pkts), 14);
	env_close(&v);
}

/* Requests arrive and execute, every response is lost: the same failure, and the
 * responder saw the retries as duplicates. */
static void test_retry_exhausted_responses_lost(void)
{
	struct env v;
	uint64_t t0;

	env_open(&v, 3, 12, 8);
	fab_add_rule(v.p.f, &(struct fab_rule){ .match = FAB_M_SRC, .src = 1, .action = FAB_DROP });
	t0 = v.p.f->now_ns;
	post_writes(&v, 2);
	check_exhausted(&v, 3, t0, 2);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request), 3 * 4);
	CHECK(memcmp(v.ra.p, v.la.p, 2000) == 0);
	CHECK_EQ(v.p.b->qp.state, URNIC_QPS_RTS);
	env_close(&v);
}

/* A READ whose responses never come back fails the same way. */
static void test_retry_exhausted_read(void)
{
	struct env v;
	struct urnic_cqe sc;

	env_open(&v, 2, 10, 9);
	fab_add_rule(v.p.f, &(struct fab_rule){ .match = FAB_M_SRC, .src = 1, .action = FAB_DROP });
	CHECK_EQ(
		fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 1,
							    .opcode = URNIC_WR_RDMA_READ,
							    .remote_addr = v.ra.mr->iova,
							    .rkey = v.ra.mr->key,
							    .num_sge = 1,
							    .sge = { fab_sge(v.la.mr, 0, 3000) } }),
		0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	fabric_settle(v.p.f);
	CHECK_EQ(sc.wr_id, 1);
	CHECK_EQ(sc.status, URNIC_WC_RETRY_EXC_ERR);
	CHECK_EQ(sc.opcode, URNIC_WC_RDMA_READ);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retry_timeout), 3);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request), 2);
	env_close(&v);
}

/* timeout = 0: no timer (IBTA 9.7.6.1.3), so a lost request waits forever. */
static void test_timeout_0_never_retries(void)
{
	struct env v;
	struct urnic_cqe sc;
	uint64_t t0;

	env_open(&v, 7, 0, 10);
	fab_add_rule(v.p.f, &(struct fab_rule){ .match = FAB_M_SRC, .src = 0, .action = FAB_DROP });
	t0 = v.p.f->now_ns;
	post_writes(&v, 1);
	fabric_settle(v.p.f); /* goes quiet: nothing armed */
	CHECK_EQ(fab_poll(&v.p.a->scq, &sc, 1), 0);
	CHECK_EQ(v.p.f->now_ns, t0);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retry_timeout), 0);
	CHECK_EQ(v.p.a->qp.state, URNIC_QPS_RTS);
	/* Moving it to error flushes the stuck WR. */
	CHECK_EQ(fab_modify(v.p.a, &v.p.a->qp.attr, URNIC_QPS_ERR, URNIC_QP_STATE), 0);
	CHECK_EQ(fab_poll(&v.p.a->scq, &sc, 1), 1);
	CHECK_EQ(sc.status, URNIC_WC_WR_FLUSH_ERR);
	env_close(&v);
}

/* Each message needs one timeout, with retry_cnt = 1: progress resets the budget, so
 * none of them fails. */
static void test_progress_resets_retry_budget(void)
{
	struct env v;
	struct urnic_cqe sc[6];

	env_open(&v, 1, 10, 11);
	/* The last packet of each WRITE is lost once (each WRITE is two packets). */
	fab_add_rule(v.p.f, &(struct fab_rule){ .match = FAB_M_SRC | FAB_M_OPCODE,
						.src = 0,
						.opcode = URNIC_OP_RC_RDMA_WRITE_LAST,
						.count = 1,
						.action = FAB_DROP });
	post_writes(&v, 1);
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 1);
	for (int i = 1; i < 6; i++) {
		v.p.f->rules[0].hits = 0;
		CHECK_EQ(fab_post_send(
				 v.p.a,
				 &(struct fab_send_wr){
					 .wr_id = (uint64_t)i,
					 .opcode = URNIC_WR_RDMA_WRITE,
					 .remote_addr = v.ra.mr->iova + 2048 * (uint64_t)i,
					 .rkey = v.ra.mr->key,
					 .num_sge = 1,
					 .sge = { fab_sge(v.la.mr, 2048 * (uint64_t)i, 2000) } }),
			 0);
		fab_wait_cqes(v.p.f, &v.p.a->scq, &sc[i], 1);
	}
	fabric_settle(v.p.f);
	for (int i = 0; i < 6; i++)
		CHECK_CQE(sc[i], (uint64_t)i, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 2000);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retry_timeout), 6);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retry_exceeded), 0);
	for (int i = 0; i < 6; i++)
		CHECK(memcmp(v.ra.p + 2048 * i, v.la.p + 2048 * i, 2000) == 0);
	env_close(&v);
}

int main(void)
{
	RUN(test_retry_exhausted_requests_lost);
	RUN(test_retry_cnt_7_is_seven_retries);
	RUN(test_retry_exhausted_responses_lost);
	RUN(test_retry_exhausted_read);
	RUN(test_timeout_0_never_retries);
	RUN(test_progress_resets_retry_budget);
	return 0;
}
