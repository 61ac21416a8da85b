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

#include "write_pingpong.h"

enum { ROUNDS = 12, UC_HOLD_NS = URNIC_ACK_HOLD_DEFAULT_NS }; /* UC_HOLD_FACTOR 1 */

/* a WRITEs tag and waits for its completion: how long that took on the fabric clock. */
static uint64_t a_write_ns(struct wpp *v, uint8_t tag)
{
	uint64_t t0 = v->f->now_ns;

	wpp_write(v, true, tag);
	wpp_reap(v, v->p.a, tag);
	return v->f->now_ns - t0;
}

static void test_pingpong_completes_with_answer(void)
{
	struct wpp v;
	struct fabric *f;
	int with_answer;

	wpp_open(&v, URNIC_QPT_UC, 14, 21);
	f = v.f;
	with_answer = wpp_run(&v, ROUNDS);
	fabric_settle(f);
	/* The first round teaches a that b answers; from then on every completion of a
	 * waited for b's answer. */
	CHECK(with_answer >= ROUNDS - 2);
	CHECK(fab_ctr(f, 0, URNIC_CTR_comp_held) >= ROUNDS - 2);
	CHECK(fab_ctr(f, 1, URNIC_CTR_comp_held) >= ROUNDS - 3);
	CHECK_EQ(fab_ctr(f, 0, URNIC_CTR_comp_hold_expired), 0);
	CHECK(fab_ctr(f, 1, URNIC_CTR_comp_hold_expired) <= 1); /* b's last: no answer */
	wpp_close(&v);
}

/* a writes and waits for each completion; b never sends: nothing is held. */
static void test_one_way_not_held(void)
{
	struct wpp v;

	wpp_open(&v, URNIC_QPT_UC, 14, 22);
	for (int r = 1; r <= ROUNDS; r++) {
		CHECK(a_write_ns(&v, (uint8_t)r) < URNIC_ACK_HOLD_DEFAULT_NS);
	}
	fabric_settle(v.f);
	CHECK_EQ(fab_ctr(v.f, 0, URNIC_CTR_comp_held), 0);
	wpp_close(&v);
}

/* Interactive, then b stops answering: each completion of a comes at the hold
 * deadline, and after four misses at once again. */
static void test_unanswered_hold_expires(void)
{
	struct wpp v;
	struct fabric *f;
	uint64_t held;

	wpp_open_answering(&v, URNIC_QPT_UC, 14, 23, 3);
	f = v.f;
	held = fab_ctr(f, 0, URNIC_CTR_comp_held);
	CHECK(held >= 1);
	for (int r = 0; r < 4; r++) {
		CHECK(a_write_ns(&v, (uint8_t)(100 + r)) >= UC_HOLD_NS);
		CHECK_EQ(fab_ctr(f, 0, URNIC_CTR_comp_hold_expired), (uint64_t)r + 1);
	}
	CHECK_EQ(fab_ctr(f, 0, URNIC_CTR_comp_held), held + 4);
	/* No longer interactive: the next completion comes at once. */
	CHECK(a_write_ns(&v, 110) < URNIC_ACK_HOLD_DEFAULT_NS);
	CHECK_EQ(fab_ctr(f, 0, URNIC_CTR_comp_held), held + 4);
	fabric_settle(f);
	wpp_close(&v);
}

/* A held completion is reported, successful, when the QP goes to error: the WRITE had
 * left, and only what had not is flushed. */
static void test_error_reports_held_first(void)
{
	struct wpp v;
	struct fabric *f;
	struct urnic_cqe cqe;

	wpp_open_answering(&v, URNIC_QPT_UC, 14, 24, 3);
	f = v.f;
	wpp_write(&v, true, 120);
	fabric_run(f, NULL, NULL, 2); /* sent, held: b does not answer */
	CHECK_EQ(v.bb.p[0], 120);
	CHECK_EQ(fab_poll(&v.p.a->scq, &cqe, 1), 0);
	CHECK(v.p.a->qp.comp.uc_hold_ns != 0);
	CHECK_EQ(fab_modify(v.p.a, NULL, URNIC_QPS_ERR, URNIC_QP_STATE), 0);
	CHECK_EQ(fab_poll(&v.p.a->scq, &cqe, 1), 1);
	CHECK_CQE(cqe, 120, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, WPP_LEN);
	fabric_settle(f);
	wpp_close(&v);
}

/* Two WRITEs posted together: a stream, not a ping-pong. Neither waits for an answer,
 * however interactive the QP. */
static void test_stream_not_held(void)
{
	struct wpp v;
	struct fabric *f;
	struct urnic_cqe cqe[2];
	uint64_t t0;

	wpp_open_answering(&v, URNIC_QPT_UC, 14, 26, 3);
	f = v.f;
	t0 = f->now_ns;
	wpp_write(&v, true, 140);
	wpp_write(&v, true, 141);
	fab_wait_cqes(f, &v.p.a->scq, cqe, 2);
	CHECK_CQE(cqe[0], 140, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, WPP_LEN);
	CHECK_CQE(cqe[1], 141, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, WPP_LEN);
	CHECK(f->now_ns - t0 < URNIC_ACK_HOLD_DEFAULT_NS);
	CHECK_EQ(fab_ctr(f, 0, URNIC_CTR_comp_hold_expired), 0);
	fabric_settle(f);
	wpp_close(&v);
}

/* An application that armed its send CQ waits for an event: its completions are not
 * held, however interactive the QP. */
static void test_armed_cq_not_held(void)
{
	struct wpp v;
	struct fabric *f;
	uint64_t held;

	wpp_open_answering(&v, URNIC_QPT_UC, 14, 25, 3);
	f = v.f;
	held = fab_ctr(f, 0, URNIC_CTR_comp_held);
	atomic_store(&v.p.a->scq.arm, URNIC_CQ_ARM_NEXT);
	CHECK(a_write_ns(&v, 130) < URNIC_ACK_HOLD_DEFAULT_NS);
	CHECK_EQ(fab_ctr(f, 0, URNIC_CTR_comp_held), held);
	atomic_store(&v.p.a->scq.arm, URNIC_CQ_DISARMED);
	fabric_settle(f);
	wpp_close(&v);
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
