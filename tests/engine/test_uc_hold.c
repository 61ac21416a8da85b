/* SPDX-License-Identifier: MIT */
/*
 * test_uc_hold.c - a UC requester holds its send completions for the peer's answer
 * (src/engine/roce/uc.c, urnic_uc_comp_held).
 *
 *   host 0 UC QP a <--- fabric ---> UC QP b host 1, ib_write_lat's loop
 *
 * Nothing acknowledges UC, so a WRITE is complete once it has left; in a ping-pong
 * whose application waits for the answer on memory, that completion came before the
 * answer and ended the application's polling. Once the peer has answered, a QP holds
 * each completion until the peer's next request arrives, and reports it before that
 * request is executed. One-way traffic is never held, nor a stream of several WQEs at
 * once. An answer that does not come:
 * the completion is reported at the hold deadline, and after four such misses in a
 * row the QP stops holding. A state change reports held completions successfully
 * before anything is flushed, and an armed CQ (an application waiting for events) is
 * not held for.
 */
#include <string.h>

#include "fabric.h"

enum { LEN = 8, ROUNDS = 12, UC_HOLD_NS = 5 * URNIC_ACK_HOLD_DEFAULT_NS };

struct env {
	struct fab_pair p;
	struct fab_buf ba, bb; /* each side's buffer: [0, LEN) is written by the peer */
	struct fab_conn c;
};

static void env_open(struct env *v, uint64_t seed)
{
	memset(v, 0, sizeof(*v));
	v->c = fab_conn_default();
	fab_pair_open(&v->p, NULL, seed);
	v->p.a->qp.type = URNIC_QPT_UC; /* still in RESET: a UC QP from now on */
	v->p.b->qp.type = URNIC_QPT_UC;
	fab_connect(v->p.a, v->p.b, &v->c);
	fab_buf_new(v->p.f, &v->ba, 0, &v->p.pd[0], 4096, FAB_ALL_ACCESS);
	fab_buf_new(v->p.f, &v->bb, 1, &v->p.pd[1], 4096, FAB_ALL_ACCESS);
}

static void env_close(struct env *v)
{
	fab_buf_free(v->p.f, &v->ba);
	fab_buf_free(v->p.f, &v->bb);
	fab_pair_close(&v->p);
}

/* WRITE of LEN bytes from the sender's buffer at 64 to the peer's buffer at 0, the
 * first byte set to tag, as ib_write_lat does. */
static void write_tag(struct env *v, bool from_a, uint8_t tag)
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
	wr.sge[0] = fab_sge(src->mr, 64, LEN);
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

/* The application's spin on memory: runs until the peer's WRITE put tag there. */
static void wait_byte(struct env *v, const struct fab_buf *b, uint8_t tag)
{
	struct byte_is w = { b->p, tag };

	CHECK(fabric_run(v->p.f, byte_arrived, &w, 100000));
}

static void reap(struct env *v, struct fab_qp *q, uint8_t tag)
{
	struct urnic_cqe cqe;

	fab_wait_cqes(v->p.f, &q->scq, &cqe, 1);
	CHECK_CQE(cqe, tag, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, LEN);
}

/* ib_write_lat's loop, both sides interleaved as their threads would run: each posts
 * its WRITE once the peer's data is there, then waits for its own completion. Returns
 * how many of a's completions came with b's answer already in a's buffer. */
static int pingpong(struct env *v, int rounds)
{
	int with_answer = 0;

	write_tag(v, true, 2);
	for (int r = 1; r <= rounds; r++) {
		wait_byte(v, &v->bb, (uint8_t)(2 * r));
		write_tag(v, false, (uint8_t)(2 * r + 1));
		reap(v, v->p.a, (uint8_t)(2 * r));
		with_answer += v->ba.p[0] == (uint8_t)(2 * r + 1);
		wait_byte(v, &v->ba, (uint8_t)(2 * r + 1));
		if (r < rounds)
			write_tag(v, true, (uint8_t)(2 * r + 2));
		reap(v, v->p.b, (uint8_t)(2 * r + 1));
	}
	return with_answer;
}

static void test_pingpong_completes_with_answer(void)
{
	struct env v;
	struct fabric *f;
	int with_answer;

	env_open(&v, 21);
	f = v.p.f;
	with_answer = pingpong(&v, ROUNDS);
	fabric_settle(f);
	/* The first round teaches a that b answers; from then on every completion of a
	 * waited for b's answer. */
	CHECK(with_answer >= ROUNDS - 2);
	CHECK(fab_ctr(f, 0, URNIC_CTR_comp_held) >= ROUNDS - 2);
	CHECK(fab_ctr(f, 1, URNIC_CTR_comp_held) >= ROUNDS - 3);
	CHECK_EQ(fab_ctr(f, 0, URNIC_CTR_comp_hold_expired), 0);
	CHECK(fab_ctr(f, 1, URNIC_CTR_comp_hold_expired) <= 1); /* b's last: no answer */
	env_close(&v);
}

/* a writes and waits for each completion; b never sends: nothing is held. */
static void test_one_way_not_held(void)
{
	struct env v;

	env_open(&v, 22);
	for (int r = 1; r <= ROUNDS; r++) {
		uint64_t t0 = v.p.f->now_ns;

		write_tag(&v, true, (uint8_t)r);
		reap(&v, v.p.a, (uint8_t)r);
		CHECK(v.p.f->now_ns - t0 < URNIC_ACK_HOLD_DEFAULT_NS);
	}
	fabric_settle(v.p.f);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_comp_held), 0);
	env_close(&v);
}

/* Interactive, then b stops answering: each completion of a comes at the hold
 * deadline, and after four misses at once again. */
static void test_unanswered_hold_expires(void)
{
	struct env v;
	struct fabric *f;
	uint64_t held;

	env_open(&v, 23);
	f = v.p.f;
	pingpong(&v, 3);
	fabric_settle(f);
	held = fab_ctr(f, 0, URNIC_CTR_comp_held);
	CHECK(held >= 1);
	for (int r = 0; r < 4; r++) {
		uint64_t t0 = f->now_ns;

		write_tag(&v, true, (uint8_t)(100 + r));
		reap(&v, v.p.a, (uint8_t)(100 + r));
		CHECK(f->now_ns - t0 >= UC_HOLD_NS);
		CHECK_EQ(fab_ctr(f, 0, URNIC_CTR_comp_hold_expired), (uint64_t)r + 1);
	}
	CHECK_EQ(fab_ctr(f, 0, URNIC_CTR_comp_held), held + 4);
	/* No longer interactive: the next completion comes at once. */
	{
		uint64_t t0 = f->now_ns;

		write_tag(&v, true, 110);
		reap(&v, v.p.a, 110);
		CHECK(f->now_ns - t0 < URNIC_ACK_HOLD_DEFAULT_NS);
	}
	CHECK_EQ(fab_ctr(f, 0, URNIC_CTR_comp_held), held + 4);
	fabric_settle(f);
	env_close(&v);
}

/* A held completion is reported, successful, when the QP goes to error: the WRITE had
 * left, and only what had not is flushed. */
static void test_error_reports_held_first(void)
{
	struct env v;
	struct fabric *f;
	struct urnic_cqe cqe;

	env_open(&v, 24);
	f = v.p.f;
	pingpong(&v, 3);
	fabric_settle(f);
	write_tag(&v, true, 120);
	fabric_run(f, NULL, NULL, 2); /* sent, held: b does not answer */
	CHECK_EQ(v.bb.p[0], 120);
	CHECK_EQ(fab_poll(&v.p.a->scq, &cqe, 1), 0);
	CHECK(v.p.a->qp.comp.uc_hold_ns != 0);
	CHECK_EQ(fab_modify(v.p.a, NULL, URNIC_QPS_ERR, URNIC_QP_STATE), 0);
	CHECK_EQ(fab_poll(&v.p.a->scq, &cqe, 1), 1);
	CHECK_CQE(cqe, 120, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, LEN);
	fabric_settle(f);
	env_close(&v);
}

/* Two WRITEs posted together: a stream, not a ping-pong. Neither waits for an answer,
 * however interactive the QP. */
static void test_stream_not_held(void)
{
	struct env v;
	struct fabric *f;
	struct urnic_cqe cqe[2];
	uint64_t t0;

	env_open(&v, 26);
	f = v.p.f;
	pingpong(&v, 3);
	fabric_settle(f);
	t0 = f->now_ns;
	write_tag(&v, true, 140);
	write_tag(&v, true, 141);
	fab_wait_cqes(f, &v.p.a->scq, cqe, 2);
	CHECK_CQE(cqe[0], 140, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, LEN);
	CHECK_CQE(cqe[1], 141, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, LEN);
	CHECK(f->now_ns - t0 < URNIC_ACK_HOLD_DEFAULT_NS);
	CHECK_EQ(fab_ctr(f, 0, URNIC_CTR_comp_hold_expired), 0);
	fabric_settle(f);
	env_close(&v);
}

/* An application that armed its send CQ waits for an event: its completions are not
 * held, however interactive the QP. */
static void test_armed_cq_not_held(void)
{
	struct env v;
	struct fabric *f;
	uint64_t held;

	env_open(&v, 25);
	f = v.p.f;
	pingpong(&v, 3);
	fabric_settle(f);
	held = fab_ctr(f, 0, URNIC_CTR_comp_held);
	atomic_store(&v.p.a->scq.arm, URNIC_CQ_ARM_NEXT);
	{
		uint64_t t0 = f->now_ns;

		write_tag(&v, true, 130);
		reap(&v, v.p.a, 130);
		CHECK(f->now_ns - t0 < URNIC_ACK_HOLD_DEFAULT_NS);
	}
	CHECK_EQ(fab_ctr(f, 0, URNIC_CTR_comp_held), held);
	atomic_store(&v.p.a->scq.arm, URNIC_CQ_DISARMED);
	fabric_settle(f);
	env_close(&v);
}

int main(void)
{
	RUN(test_pingpong_completes_with_answer);
	RUN(test_one_way_not_held);
	RUN(test_unanswered_hold_expires);
	RUN(test_error_reports_held_first);
	RUN(test_stream_not_held);
	RUN(test_armed_cq_not_held);
	return 0;
}
