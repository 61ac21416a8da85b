/* SPDX-License-Identifier: MIT */
/*
 * test_idle_qps.c - idle QPs cost a pass nothing (src/engine/engine.c, the active set).
 *
 * An application may keep many QPs connected and use a few (an MPI job keeps one per
 * peer). The engine's passes visit the QPs that may have work: a QP joins the active
 * set when a packet for it passes validation, when it is modified and when work is
 * posted to it (urnic_engine_doorbell), and leaves when a pass finds it quiet. Here,
 * with 200 idle pairs beside a busy one: the set holds only the busy QP while it works
 * and nothing once all is done; a post to a QP that left wakes it; a QP in error still
 * flushes what is posted to it; and urnic_engine_app_awaits still sees a receive posted
 * on an idle QP. Every pass of the fabric also runs the audit (engine.h, audit_idle):
 * a QP outside the set that a pass would have work for aborts the test.
 */
#include <string.h>

#include "fabric.h"

enum { NIDLE = 200, LEN = 8192 };

struct env {
	struct fab_pair p;
	struct fab_qp *idle[2 * NIDLE]; /* pair k: idle[2k] at host 0, idle[2k+1] at host 1 */
	struct fab_buf la, ra;
};

static uint32_t active_qps(struct fabric *f, int host)
{
	const struct urnic_engine *e = fab_engine(f, host);
	uint32_t n = 0;

	for (uint32_t w = 0; w < URNIC_QP_WORDS; w++)
		n += (uint32_t)__builtin_popcountll(e->qpt.active[w]);
	return n;
}

static void env_open(struct env *v)
{
	struct fab_conn c = fab_conn_default();

	fab_pair_open(&v->p, &c, 97);
	for (int k = 0; k < NIDLE; k++) {
		v->idle[2 * k] = fab_qp_new(v->p.f, 0, &v->p.pd[0], 16, 16, true);
		v->idle[2 * k + 1] = fab_qp_new(v->p.f, 1, &v->p.pd[1], 16, 16, true);
		fab_connect(v->idle[2 * k], v->idle[2 * k + 1], &c);
	}
	fab_buf_new(v->p.f, &v->la, 0, &v->p.pd[0], LEN, FAB_ALL_ACCESS);
	fab_buf_new(v->p.f, &v->ra, 1, &v->p.pd[1], LEN, FAB_ALL_ACCESS);
	fab_fill(v->la.p, LEN, 3);
	fabric_settle(v->p.f);
}

static void env_close(struct env *v)
{
	fab_buf_free(v->p.f, &v->la);
	fab_buf_free(v->p.f, &v->ra);
	for (int i = 0; i < 2 * NIDLE; i++)
		fab_qp_free(v->idle[i]);
	fab_pair_close(&v->p);
}

static void write(struct env *v, struct fab_qp *q, uint64_t wr_id, uint32_t off)
{
	CHECK_EQ(fab_post_send(q, &(struct fab_send_wr){ .wr_id = wr_id,
							 .opcode = URNIC_WR_RDMA_WRITE,
							 .remote_addr = v->ra.mr->iova + off,
							 .rkey = v->ra.mr->key,
							 .num_sge = 1,
							 .sge = { fab_sge(v->la.mr, off, 1024) } }),
		 0);
}

struct watch {
	struct urnic_cq *cq;
	uint32_t most[2]; /* the largest active set seen at each host */
};

static bool watch_step(struct fabric *f, void *arg)
{
	struct watch *w = arg;

	for (int h = 0; h < 2; h++) {
		uint32_t n = active_qps(f, h);

		if (n > w->most[h])
			w->most[h] = n;
	}
	return atomic_load(&w->cq->prod) != atomic_load(&w->cq->cons); /* a completion */
}

/* While one pair works, only its QPs are in the sets; once done, none are. */
static void test_only_busy_qps_are_visited(void)
{
	struct urnic_cqe c;
	struct env v;
	struct watch w;

	env_open(&v);
	CHECK_EQ(active_qps(v.p.f, 0), 0);
	CHECK_EQ(active_qps(v.p.f, 1), 0);
	for (uint64_t i = 0; i < 4; i++) {
		memset(&w, 0, sizeof(w));
		w.cq = &v.p.a->scq;
		write(&v, v.p.a, i, (uint32_t)i * 1024);
		CHECK(fabric_run(v.p.f, watch_step, &w, 10000));
		CHECK_EQ(fab_poll(&v.p.a->scq, &c, 1), 1);
		CHECK_EQ(c.status, URNIC_WC_SUCCESS);
		CHECK(w.most[0] <= 1);
		CHECK(w.most[1] <= 1);
	}
	fabric_settle(v.p.f);
	CHECK_EQ(active_qps(v.p.f, 0), 0);
	CHECK_EQ(active_qps(v.p.f, 1), 0);
	CHECK(memcmp(v.ra.p, v.la.p, 4096) == 0);
	env_close(&v);
}

/* A post to a QP that left the set long ago is seen, and so is a post to a QP in
 * error, which completes flushed (IBTA 10.3.1). */
static void test_posts_wake_idle_qps(void)
{
	struct urnic_cqe c;
	struct env v;

	env_open(&v);
	v.p.f->now_ns += 10ull * 1000 * 1000 * 1000; /* idle for 10 s */
	write(&v, v.idle[2 * 137], 7, 2048);
	fab_wait_cqes(v.p.f, &v.idle[2 * 137]->scq, &c, 1);
	CHECK_EQ(c.wr_id, 7);
	CHECK_EQ(c.status, URNIC_WC_SUCCESS);
	CHECK(memcmp(v.ra.p + 2048, v.la.p + 2048, 1024) == 0);

	fabric_settle(v.p.f);
	CHECK_EQ(fab_modify(v.idle[2 * 50], &(struct urnic_qp_attr){ 0 }, URNIC_QPS_ERR,
			    URNIC_QP_STATE),
		 0);
	fabric_settle(v.p.f);
	CHECK_EQ(active_qps(v.p.f, 0), 0);
	write(&v, v.idle[2 * 50], 8, 0);
	fab_wait_cqes(v.p.f, &v.idle[2 * 50]->scq, &c, 1);
	CHECK_EQ(c.wr_id, 8);
	CHECK_EQ(c.status, URNIC_WC_WR_FLUSH_ERR);
	fabric_settle(v.p.f);
	CHECK_EQ(active_qps(v.p.f, 0), 0);
	env_close(&v);
}

/* A receive posted on an idle QP is awaited, and no longer once a SEND took it. */
static void test_receive_on_idle_qp_is_awaited(void)
{
	struct urnic_sge rsge;
	struct urnic_cqe c;
	struct env v;
	struct fab_qp *r;

	env_open(&v);
	r = v.idle[2 * 199 + 1];
	CHECK(!urnic_engine_app_awaits(fab_engine(v.p.f, 1)));
	rsge = fab_sge(v.ra.mr, 0, 1024);
	CHECK_EQ(fab_post_recv(r, 11, &rsge, 1), 0);
	CHECK(urnic_engine_app_awaits(fab_engine(v.p.f, 1)));
	fabric_settle(v.p.f);
	CHECK(urnic_engine_app_awaits(fab_engine(v.p.f, 1)));
	CHECK_EQ(fab_post_send(v.idle[2 * 199],
			       &(struct fab_send_wr){ .wr_id = 12,
						      .opcode = URNIC_WR_SEND,
						      .num_sge = 1,
						      .sge = { fab_sge(v.la.mr, 0, 512) } }),
		 0);
	fab_wait_cqes(v.p.f, &r->rcq, &c, 1);
	CHECK_EQ(c.wr_id, 11);
	CHECK_EQ(c.byte_len, 512);
	fabric_settle(v.p.f);
	CHECK(!urnic_engine_app_awaits(fab_engine(v.p.f, 1)));
	CHECK_EQ(fab_poll(&v.idle[2 * 199]->scq, &c, 1), 1);
	env_close(&v);
}

int main(void)
{
	RUN(test_only_busy_qps_are_visited);
	RUN(test_posts_wake_idle_qps);
	RUN(test_receive_on_idle_qp_is_awaited);
	return 0;
}
