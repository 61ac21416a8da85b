/* SPDX-License-Identifier: MIT */
/*
 * test_flush.c - the error state flushes work (IBTA 10.3.1, 11.4.2; ibv_modify_qp(3)).
 *
 * Moving a QP to ERR completes every outstanding send and receive WR with
 * IBV_WC_WR_FLUSH_ERR (5), in posting order, signaled or not; WRs posted while in ERR
 * are flushed too. RESET empties the queues; a QP taken back through INIT, RTR and RTS
 * works again.
 */
#include <string.h>

#include "fabric.h"

struct env {
	struct fab_pair p;
	struct fab_buf la, ra;
};

static void env_open(struct env *v, uint64_t seed)
{
	struct fab_conn c = fab_conn_default();

	fab_pair_open(&v->p, &c, seed);
	fab_buf_new(v->p.f, &v->la, 0, &v->p.pd[0], 65536, FAB_ALL_ACCESS);
	fab_buf_new(v->p.f, &v->ra, 1, &v->p.pd[1], 65536, FAB_ALL_ACCESS);
	fab_fill(v->la.p, 65536, (uint32_t)seed);
}

static void env_close(struct env *v)
{
	fab_buf_free(v->p.f, &v->la);
	fab_buf_free(v->p.f, &v->ra);
	fab_pair_close(&v->p);
}

static void to_error(struct fab_qp *q)
{
	CHECK_EQ(fab_modify(q, &q->qp.attr, URNIC_QPS_ERR, URNIC_QP_STATE), 0);
	CHECK_EQ(q->qp.state, URNIC_QPS_ERR);
}

static const uint32_t mixed_ops[] = { URNIC_WR_SEND,
				      URNIC_WR_RDMA_WRITE,
				      URNIC_WR_RDMA_READ,
				      URNIC_WR_ATOMIC_FETCH_AND_ADD,
				      URNIC_WR_SEND_WITH_IMM,
				      URNIC_WR_ATOMIC_CMP_AND_SWP,
				      URNIC_WR_RDMA_WRITE_WITH_IMM };
static const uint8_t mixed_wc[] = { URNIC_WC_SEND,	URNIC_WC_RDMA_WRITE, URNIC_WC_RDMA_READ,
				    URNIC_WC_FETCH_ADD, URNIC_WC_SEND,	     URNIC_WC_COMP_SWAP,
				    URNIC_WC_RDMA_WRITE };

static void post_mixed(struct env *v, int n, uint32_t unsignaled_every)
{
	for (int i = 0; i < n; i++) {
		uint32_t op = mixed_ops[i % 7];
		bool atomic =
			op == URNIC_WR_ATOMIC_FETCH_AND_ADD || op == URNIC_WR_ATOMIC_CMP_AND_SWP;

		CHECK_EQ(fab_post_send(v->p.a,
				       &(struct fab_send_wr){
					       .wr_id = 1000 + (uint64_t)i,
					       .opcode = op,
					       .flags = unsignaled_every && i % unsignaled_every
								? 0
								: URNIC_SEND_SIGNALED,
					       .remote_addr = v->ra.mr->iova + 64 * (uint64_t)i,
					       .rkey = v->ra.mr->key,
					       .num_sge = 1,
					       .sge = { fab_sge(v->la.mr, 64 * (uint64_t)i,
								atomic ? 8 : 64) } }),
			 0);
	}
}

/* Outstanding sends (the peer hears nothing) and posted receives, then ERR. */
static void test_modify_to_err_flushes_everything(void)
{
	struct env v;
	struct urnic_cqe sc[20], rc[5];
	uint64_t timeouts;

	env_open(&v, 1);
	v.p.a->qp.sq_sig_all = false;
	fab_add_rule(v.p.f, &(struct fab_rule){ .match = FAB_M_SRC, .src = 0, .action = FAB_DROP });
	for (int i = 0; i < 5; i++) {
		struct urnic_sge rs = fab_sge(v.la.mr, 4096 * (uint64_t)i, 100);

		CHECK_EQ(fab_post_recv(v.p.a, 500 + (uint64_t)i, &rs, 1), 0);
	}
	post_mixed(&v, 20, 3); /* a third of them signaled */
	/* Let them go out (and get lost), and time out a few times. */
	(void)fabric_run(v.p.f, NULL, NULL, 5);
	CHECK_EQ(fab_poll(&v.p.a->scq, sc, 20), 0);
	timeouts = fab_ctr(v.p.f, 0, URNIC_CTR_retry_timeout);
	to_error(v.p.a);
	/* Flushed at once, in order, all of them: errors are always reported. */
	CHECK_EQ(fab_poll(&v.p.a->scq, sc, 20), 20);
	for (int i = 0; i < 20; i++) {
		CHECK_EQ(sc[i].wr_id, 1000 + (uint64_t)i);
		CHECK_EQ(sc[i].status, URNIC_WC_WR_FLUSH_ERR);
		CHECK_EQ(sc[i].opcode, mixed_wc[i % 7]);
		CHECK_EQ(sc[i].qp_num, v.p.a->qp.qpn);
	}
	CHECK_EQ(fab_poll(&v.p.a->rcq, rc, 5), 5);
	for (int i = 0; i < 5; i++) {
		CHECK_EQ(rc[i].wr_id, 500 + (uint64_t)i);
		CHECK_EQ(rc[i].status, URNIC_WC_WR_FLUSH_ERR);
		CHECK_EQ(rc[i].opcode, URNIC_WC_RECV);
	}
	CHECK_EQ(atomic_load(&v.p.a->qp.sq.cons), atomic_load(&v.p.a->qp.sq.prod));
	CHECK_EQ(atomic_load(&v.p.a->qp.rq.cons), atomic_load(&v.p.a->qp.rq.prod));
	/* Nothing more: no timer, no retries from a QP in error. */
	fabric_settle(v.p.f);
	CHECK_EQ(fab_poll(&v.p.a->scq, sc, 20), 0);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retry_timeout), timeouts);
	env_close(&v);
}

/* In ERR, posting is allowed and what is posted is flushed by the engine. */
static void test_post_in_err_is_flushed(void)
{
	struct env v;
	struct urnic_cqe sc[10], rc[3];

	env_open(&v, 2);
	to_error(v.p.a);
	post_mixed(&v, 10, 0);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(fab_post_recv(v.p.a, 700 + (uint64_t)i, NULL, 0), 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 10);
	fab_wait_cqes(v.p.f, &v.p.a->rcq, rc, 3);
	fabric_settle(v.p.f);
	for (int i = 0; i < 10; i++) {
		CHECK_EQ(sc[i].wr_id, 1000 + (uint64_t)i);
		CHECK_EQ(sc[i].status, URNIC_WC_WR_FLUSH_ERR);
	}
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(rc[i].wr_id, 700 + (uint64_t)i);
		CHECK_EQ(rc[i].status, URNIC_WC_WR_FLUSH_ERR);
	}
	/* None of it reached the wire. */
	for (uint32_t i = 0; i < v.p.f->ntrace; i++)
		CHECK(v.p.f->trace[i].src != 0);
	env_close(&v);
}

/* The responder in ERR: packets to it are dropped and counted, the requester's WR
 * ends with RETRY_EXC_ERR. */
static void test_peer_in_err_drops_requests(void)
{
	struct env v;
	struct urnic_cqe sc;

	env_open(&v, 3);
	v.p.a->qp.attr.retry_cnt = 1;
	v.p.a->qp.req.retry_left = 1;
	to_error(v.p.b);
	CHECK_EQ(fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 1,
							     .opcode = URNIC_WR_RDMA_WRITE,
							     .remote_addr = v.ra.mr->iova,
							     .rkey = v.ra.mr->key,
							     .num_sge = 1,
							     .sge = { fab_sge(v.la.mr, 0, 100) } }),
		 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	fabric_settle(v.p.f);
	CHECK_EQ(sc.status, URNIC_WC_RETRY_EXC_ERR);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_drop_qp_error), 2);
	env_close(&v);
}

/* ERR -> RESET -> INIT -> RTR -> RTS on both sides: a fresh connection that works,
 * with none of the old queue contents or PSNs. */
static void test_reset_and_reconnect(void)
{
	struct env v;
	struct fab_conn c = fab_conn_default();
	struct urnic_cqe sc, rc;
	struct urnic_sge rs;

	env_open(&v, 4);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = (uint64_t)i,
								     .opcode = URNIC_WR_RDMA_WRITE,
								     .remote_addr = v.ra.mr->iova,
								     .rkey = v.ra.mr->key,
								     .num_sge = 1,
								     .sge = { fab_sge(v.la.mr, 0,
										      3000) } }),
			 0);
	fabric_settle(v.p.f);
	to_error(v.p.a);
	to_error(v.p.b);
	while (fab_poll(&v.p.a->scq, &sc, 1) == 1)
		;
	CHECK_EQ(fab_modify(v.p.a, &v.p.a->qp.attr, URNIC_QPS_RESET, URNIC_QP_STATE), 0);
	CHECK_EQ(fab_modify(v.p.b, &v.p.b->qp.attr, URNIC_QPS_RESET, URNIC_QP_STATE), 0);
	CHECK_EQ(atomic_load(&v.p.a->qp.sq.prod), 0);
	CHECK_EQ(atomic_load(&v.p.a->qp.sq.cons), 0);
	CHECK_EQ(v.p.a->qp.req.psn, 0);
	CHECK_EQ(v.p.a->qp.comp.idx, 0);
	c.psn_a = 0x777;
	c.psn_b = 0x888;
	fab_connect(v.p.a, v.p.b, &c);
	rs = fab_sge(v.ra.mr, 0, 500);
	CHECK_EQ(fab_post_recv(v.p.b, 2, &rs, 1), 0);
	CHECK_EQ(fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 3,
							     .opcode = URNIC_WR_SEND,
							     .num_sge = 1,
							     .sge = { fab_sge(v.la.mr, 0, 500) } }),
		 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, &rc, 1);
	fabric_settle(v.p.f);
	CHECK_CQE(sc, 3, URNIC_WC_SUCCESS, URNIC_WC_SEND, 500);
	CHECK_CQE(rc, 2, URNIC_WC_SUCCESS, URNIC_WC_RECV, 500);
	CHECK(memcmp(v.ra.p, v.la.p, 500) == 0);
	CHECK_EQ(v.p.a->qp.req.psn, 0x778);
	env_close(&v);
}

/* A CQ too small for the flush: the overrun is counted, nothing is written past it. */
static void test_cq_overrun_on_flush(void)
{
	struct env v;
	struct urnic_cqe sc[8];

	env_open(&v, 5);
	urnic_cq_fini(&v.p.a->scq);
	CHECK_EQ(urnic_cq_init(&v.p.a->scq, 4), 0);
	fab_add_rule(v.p.f, &(struct fab_rule){ .match = FAB_M_SRC, .src = 0, .action = FAB_DROP });
	post_mixed(&v, 6, 0);
	(void)fabric_run(v.p.f, NULL, NULL, 3);
	to_error(v.p.a);
	CHECK_EQ(fab_poll(&v.p.a->scq, sc, 8), 4);
	CHECK(fab_ctr(v.p.f, 0, URNIC_CTR_cq_overflow) >= 1);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(sc[i].wr_id, 1000 + (uint64_t)i);
	/* Room again: the rest comes out on the next pass. */
	fabric_settle(v.p.f);
	CHECK_EQ(fab_poll(&v.p.a->scq, sc, 8), 2);
	CHECK_EQ(sc[0].wr_id, 1004);
	CHECK_EQ(sc[1].wr_id, 1005);
	env_close(&v);
}

int main(void)
{
	RUN(test_modify_to_err_flushes_everything);
	RUN(test_post_in_err_is_flushed);
	RUN(test_peer_in_err_drops_requests);
	RUN(test_reset_and_reconnect);
	RUN(test_cq_overrun_on_flush);
	return 0;
}
