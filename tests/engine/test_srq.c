/* SPDX-License-Identifier: MIT */
/*
 * test_srq.c - shared receive queues (IBTA 10.2.9) and their events (11.6.3).
 *
 *   host 0 (10.0.0.1): RC QPs a0 a1 a2 ----- fabric ----- b0 b1 b2 on one SRQ, host 1
 *                                                          (10.0.0.2); UC and UD QPs too
 *
 * The QPs attached to an SRQ take their receive WQEs from it, each WQE once, even when
 * their messages arrive interleaved; completions go to each QP's own receive CQ. An
 * empty SRQ makes RC answer RNR, as an empty RQ does. An armed limit raises
 * IBV_EVENT_SRQ_LIMIT_REACHED once, when fewer WQEs than the limit remain, and disarms.
 * A QP on an SRQ that enters error (by modify or by itself) raises Last WQE Reached;
 * the WQE it had taken completes with FLUSH_ERR, the SRQ's others stay for the rest.
 */
#include <errno.h>
#include <string.h>

#include "fabric.h"

enum { NQ = 3 };

static int limit_events;
static struct urnic_srq *limit_srq;
static int last_wqe_events;
static struct urnic_qp *last_wqe_qp;
static int fatal_events;

static void on_srq_limit(struct urnic_engine *e, struct urnic_srq *srq)
{
	(void)e;
	limit_events++;
	limit_srq = srq;
}

static void on_last_wqe(struct urnic_engine *e, struct urnic_qp *qp)
{
	(void)e;
	last_wqe_events++;
	last_wqe_qp = qp;
}

static void on_fatal(struct urnic_engine *e, struct urnic_qp *qp, enum urnic_qp_event ev)
{
	(void)e;
	(void)qp;
	CHECK_EQ(ev, URNIC_QP_EV_FATAL);
	fatal_events++;
}

struct env {
	struct fabric *f;
	struct urnic_pd pd[2];
	struct urnic_srq *srq; /* host 1 */
	struct fab_qp *a[NQ], *b[NQ];
	struct fab_buf la, ra;
	struct fab_conn c;
};

static void env_open(struct env *v, uint32_t srq_wr, uint64_t seed)
{
	memset(v, 0, sizeof(*v));
	v->f = fabric_new(2, seed);
	v->pd[0].handle = v->pd[1].handle = 1;
	v->c = fab_conn_default();
	v->srq = fab_srq_new(&v->pd[1], srq_wr);
	for (int i = 0; i < 2; i++) {
		v->f->hosts[i].e->hooks.srq_limit = on_srq_limit;
		v->f->hosts[i].e->hooks.qp_last_wqe = on_last_wqe;
		v->f->hosts[i].e->hooks.qp_error = on_fatal;
	}
	limit_events = last_wqe_events = fatal_events = 0;
	limit_srq = NULL;
	last_wqe_qp = NULL;
	for (int i = 0; i < NQ; i++) {
		v->a[i] = fab_qp_new_type(v->f, 0, &v->pd[0], URNIC_QPT_RC, NULL, 64, 64, true);
		v->b[i] = fab_qp_new_type(v->f, 1, &v->pd[1], URNIC_QPT_RC, v->srq, 64, 0, true);
		fab_connect(v->a[i], v->b[i], &v->c);
	}
	fab_buf_new(v->f, &v->la, 0, &v->pd[0], 65536, FAB_ALL_ACCESS);
	fab_buf_new(v->f, &v->ra, 1, &v->pd[1], 65536, FAB_ALL_ACCESS);
	fab_fill(v->la.p, 65536, (uint32_t)seed);
}

static void env_close(struct env *v)
{
	fab_buf_free(v->f, &v->la);
	fab_buf_free(v->f, &v->ra);
	for (int i = 0; i < NQ; i++) {
		fab_qp_free(v->a[i]);
		fab_qp_free(v->b[i]);
	}
	fab_srq_free(v->srq);
	fabric_free(v->f);
}

static void srq_post(struct env *v, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct urnic_sge sge = fab_sge(v->ra.mr, off, len);

	CHECK_EQ(fab_post_srq_recv(v->srq, wr_id, &sge, 1), 0);
}

static void send(struct fab_qp *q, struct fab_buf *b, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct fab_send_wr wr = { .wr_id = wr_id, .opcode = URNIC_WR_SEND, .num_sge = 1 };

	wr.sge[0] = fab_sge(b->mr, off, len);
	CHECK_EQ(fab_post_send(q, &wr), 0);
}

static void test_srq_shared_by_several_qps(void)
{
	struct env v;
	struct urnic_cqe c[4];
	bool used[2 * NQ] = { false };
	struct fab_rule *hold;

	env_open(&v, 16, 1);
	for (uint32_t i = 0; i < 2 * NQ; i++)
		srq_post(&v, 100 + i, 4096 * i, 4096);
	/* Hold a0's LAST back until a1's and a2's messages have started: three messages in
	 * progress at once, each must have its own WQE. */
	hold = fab_add_rule(v.f, &(struct fab_rule){ .match = FAB_M_SRC | FAB_M_OPCODE,
						     .src = 0,
						     .opcode = URNIC_OP_RC_SEND_LAST,
						     .count = 1,
						     .action = FAB_HOLD,
						     .hold = 4 });
	for (int i = 0; i < NQ; i++)
		send(v.a[i], &v.la, (uint64_t)i, 8192u * (uint32_t)i, 2500);
	for (int i = 0; i < NQ; i++) {
		fab_wait_cqes(v.f, &v.b[i]->rcq, c, 1);
		CHECK_EQ(c[0].status, URNIC_WC_SUCCESS);
		CHECK_EQ(c[0].qp_num, v.b[i]->qp.qpn);
		CHECK_EQ(c[0].byte_len, 2500);
		CHECK(c[0].wr_id >= 100 && c[0].wr_id < 100 + 2 * NQ && !used[c[0].wr_id - 100]);
		used[c[0].wr_id - 100] = true;
		CHECK(memcmp(v.ra.p + 4096 * (c[0].wr_id - 100), v.la.p + 8192 * i, 2500) == 0);
	}
	CHECK_EQ(hold->hits, 1);
	/* b0 took the first WQE, then b1 and b2 theirs while b0's message was open. */
	CHECK_EQ(urnic_srq_count(v.srq), 2 * NQ - NQ);
	/* Second round, no tricks. */
	for (int i = 0; i < NQ; i++)
		send(v.a[i], &v.la, 10 + (uint64_t)i, 8192u * (uint32_t)i + 100, 100);
	for (int i = 0; i < NQ; i++) {
		fab_wait_cqes(v.f, &v.b[i]->rcq, c, 1);
		CHECK_EQ(c[0].byte_len, 100);
		CHECK(!used[c[0].wr_id - 100]);
		used[c[0].wr_id - 100] = true;
	}
	CHECK_EQ(urnic_srq_count(v.srq), 0);
	for (int i = 0; i < NQ; i++)
		fab_wait_cqes(v.f, &v.a[i]->scq, c, 2);
	CHECK_EQ(limit_events, 0);
	env_close(&v);
}

static void test_srq_limit_event_fires_once_when_armed(void)
{
	struct env v;
	struct urnic_cqe c[1];
	uint64_t id = 0;

	env_open(&v, 16, 2);
	for (uint32_t i = 0; i < 10; i++)
		srq_post(&v, 100 + i, 1024 * i, 1024);
	v.srq->limit = 4; /* ibv_modify_srq(IBV_SRQ_LIMIT) under the device lock */
	for (int n = 1; n <= 10; n++) {
		send(v.a[n % NQ], &v.la, id++, 0, 10);
		fab_wait_cqes(v.f, &v.b[n % NQ]->rcq, c, 1);
		/* 10 - n left: the event comes with the 7th, when 3 < 4 remain. */
		CHECK_EQ(limit_events, n >= 7 ? 1 : 0);
	}
	CHECK(limit_srq == v.srq);
	CHECK_EQ(v.srq->limit, 0); /* disarmed: ibv_query_srq reports 0 */
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_srq_limit_reached), 1);
	/* Re-armed, it fires again. */
	for (uint32_t i = 0; i < 10; i++)
		srq_post(&v, 200 + i, 1024 * i, 1024);
	v.srq->limit = 2;
	for (int n = 1; n <= 9; n++) {
		send(v.a[0], &v.la, id++, 0, 10);
		fab_wait_cqes(v.f, &v.b[0]->rcq, c, 1);
		CHECK_EQ(limit_events, n >= 9 ? 2 : 1);
	}
	fabric_settle(v.f);
	env_close(&v);
}

static void test_srq_empty_is_rnr_for_rc(void)
{
	struct env v;
	struct urnic_cqe c[1];

	env_open(&v, 16, 3);
	send(v.a[0], &v.la, 1, 0, 2000);
	(void)fabric_run(v.f, NULL, NULL, 50); /* RNR retries forever: not quiet */
	CHECK(fab_ctr(v.f, 1, URNIC_CTR_rnr_nak_sent) >= 1);
	srq_post(&v, 100, 0, 4096);
	fab_wait_cqes(v.f, &v.b[0]->rcq, c, 1);
	CHECK_CQE(c[0], 100, URNIC_WC_SUCCESS, URNIC_WC_RECV, 2000);
	fab_wait_cqes(v.f, &v.a[0]->scq, c, 1);
	CHECK_CQE(c[0], 1, URNIC_WC_SUCCESS, URNIC_WC_SEND, 2000);
	env_close(&v);
}

static void test_srq_feeds_uc_and_ud_qps(void)
{
	struct env v;
	struct urnic_cqe c[1];
	struct fab_qp *ua, *ub, *da, *db;
	struct fab_send_wr wr = { .wr_id = 7, .opcode = URNIC_WR_SEND, .num_sge = 1 };

	env_open(&v, 16, 4);
	ua = fab_qp_new_type(v.f, 0, &v.pd[0], URNIC_QPT_UC, NULL, 16, 16, true);
	ub = fab_qp_new_type(v.f, 1, &v.pd[1], URNIC_QPT_UC, v.srq, 16, 0, true);
	fab_connect(ua, ub, &v.c);
	da = fab_qp_new_type(v.f, 0, &v.pd[0], URNIC_QPT_UD, NULL, 16, 16, true);
	db = fab_qp_new_type(v.f, 1, &v.pd[1], URNIC_QPT_UD, v.srq, 16, 0, true);
	fab_ud_ready(da, 0x1234, 0);
	fab_ud_ready(db, 0x1234, 0);
	CHECK_EQ(fab_post_recv(ub, 1, NULL, 0), EINVAL); /* no RQ of its own */
	srq_post(&v, 100, 0, 4096);
	srq_post(&v, 101, 4096, 4096);
	send(ua, &v.la, 1, 0, 3000);
	fab_wait_cqes(v.f, &ub->rcq, c, 1);
	CHECK_CQE(c[0], 100, URNIC_WC_SUCCESS, URNIC_WC_RECV, 3000);
	CHECK(memcmp(v.ra.p, v.la.p, 3000) == 0);
	wr.sge[0] = fab_sge(v.la.mr, 100, 500);
	wr.ud_dst = fab_peer(v.f, 1);
	wr.remote_qpn = db->qp.qpn;
	wr.remote_qkey = 0x1234;
	CHECK_EQ(fab_post_send(da, &wr), 0);
	fab_wait_cqes(v.f, &db->rcq, c, 1);
	CHECK_CQE(c[0], 101, URNIC_WC_SUCCESS, URNIC_WC_RECV, 540);
	CHECK_EQ(c[0].src_qp, da->qp.qpn);
	CHECK(memcmp(v.ra.p + 4096 + 40, v.la.p + 100, 500) == 0);
	/* Too long for the SRQ WQE it took: that WQE completes with REM_INV_REQ_ERR (rxe
	 * class E) and the QP goes on. */
	{
		struct urnic_sge sge = fab_sge(v.ra.mr, 8192, 100);

		CHECK_EQ(fab_post_srq_recv(v.srq, 102, &sge, 1), 0);
	}
	srq_post(&v, 103, 12288, 4096);
	CHECK_EQ(fab_post_send(da, &wr), 0);
	fab_wait_cqes(v.f, &db->rcq, c, 1);
	CHECK_EQ(c[0].wr_id, 102);
	CHECK_EQ(c[0].status, URNIC_WC_REM_INV_REQ_ERR);
	CHECK_EQ(db->qp.state, URNIC_QPS_RTS);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_drop_recv_too_long), 1);
	CHECK_EQ(fab_post_send(da, &wr), 0);
	fab_wait_cqes(v.f, &db->rcq, c, 1);
	CHECK_CQE(c[0], 103, URNIC_WC_SUCCESS, URNIC_WC_RECV, 540);
	fabric_settle(v.f);
	fab_qp_free(ua);
	fab_qp_free(ub);
	fab_qp_free(da);
	fab_qp_free(db);
	env_close(&v);
}

static void test_srq_qp_error_raises_last_wqe_reached(void)
{
	struct env v;
	struct urnic_qp_attr a = { 0 };
	struct urnic_cqe c[2];

	env_open(&v, 16, 5);
	for (uint32_t i = 0; i < 8; i++)
		srq_post(&v, 100 + i, 4096 * i, 4096);

	/* By modify: Last WQE Reached, no QP fatal. */
	CHECK_EQ(fab_modify(v.b[0], &a, URNIC_QPS_ERR, URNIC_QP_STATE), 0);
	CHECK_EQ(last_wqe_events, 1);
	CHECK(last_wqe_qp == &v.b[0]->qp);
	CHECK_EQ(fatal_events, 0);
	CHECK_EQ(fab_poll(&v.b[0]->rcq, c, 1), 0); /* nothing of the SRQ's is flushed */
	CHECK_EQ(urnic_srq_count(v.srq), 8);

	/* By itself (a class C error: WRITE with a bad R_Key): QP fatal, then the event. */
	{
		struct fab_send_wr wr = { .wr_id = 1,
					  .opcode = URNIC_WR_RDMA_WRITE,
					  .num_sge = 1,
					  .remote_addr = v.ra.mr->iova,
					  .rkey = v.ra.mr->key ^ 0x80 };

		wr.sge[0] = fab_sge(v.la.mr, 0, 10);
		CHECK_EQ(fab_post_send(v.a[1], &wr), 0);
		fab_wait_cqes(v.f, &v.a[1]->scq, c, 1);
		CHECK_EQ(c[0].status, URNIC_WC_REM_ACCESS_ERR);
	}
	CHECK_EQ(v.b[1]->qp.state, URNIC_QPS_ERR);
	CHECK_EQ(fatal_events, 2); /* b1 and, on the NAK, a1 */
	CHECK_EQ(last_wqe_events, 2);
	CHECK(last_wqe_qp == &v.b[1]->qp);

	/* A QP in the middle of a message holds an SRQ WQE: flushed when it errs. */
	fab_add_rule(v.f, &(struct fab_rule){ .match = FAB_M_SRC | FAB_M_OPCODE,
					      .src = 0,
					      .opcode = URNIC_OP_RC_SEND_LAST,
					      .action = FAB_DROP });
	send(v.a[2], &v.la, 1, 0, 2500);
	(void)fabric_run(v.f, NULL, NULL, 20); /* the LAST is retried: not quiet */
	CHECK_EQ(urnic_srq_count(v.srq), 7);
	CHECK_EQ(fab_modify(v.b[2], &a, URNIC_QPS_ERR, URNIC_QP_STATE), 0);
	CHECK_EQ(last_wqe_events, 3);
	CHECK_EQ(fab_poll(&v.b[2]->rcq, c, 2), 1);
	CHECK_EQ(c[0].status, URNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(c[0].wr_id, 100);
	CHECK_EQ(c[0].qp_num, v.b[2]->qp.qpn);
	CHECK_EQ(urnic_srq_count(v.srq), 7); /* the others stay for the other QPs */
	/* Modifying an errored QP to error again raises nothing more. */
	CHECK_EQ(fab_modify(v.b[2], &a, URNIC_QPS_ERR, URNIC_QP_STATE), 0);
	CHECK_EQ(last_wqe_events, 3);
	fab_clear_rules(v.f);
	CHECK_EQ(fab_modify(v.a[2], &a, URNIC_QPS_ERR, URNIC_QP_STATE), 0);
	fabric_settle(v.f);
	env_close(&v);
}

int main(void)
{
	RUN(test_srq_shared_by_several_qps);
	RUN(test_srq_limit_event_fires_once_when_armed);
	RUN(test_srq_empty_is_rnr_for_rc);
	RUN(test_srq_feeds_uc_and_ud_qps);
	RUN(test_srq_qp_error_raises_last_wqe_reached);
	return 0;
}
