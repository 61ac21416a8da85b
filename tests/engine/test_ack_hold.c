/* SPDX-License-Identifier: MIT */
/*
 * test_ack_hold.c - the responder holds its ACK for the application's answer
 * (src/engine/roce/hold.c, urnic_roce_hold_ack; IBTA 9.7.5.1.1 coalescing).
 *
 * Ping-pong: once a QP has answered soon after an ACK that left alone, its ACKs wait
 * for the answer and leave right behind it, in the same batch; one ACK per message
 * still. One-way traffic is never held. An answer that does not come: the ACK leaves at
 * the hold deadline (the fabric clock jumps there), and after ROCE_HOLD_MISSES such
 * misses in a row the QP stops holding. A QP whose timeout is short does not hold. An
 * ACK that is not held leaves before the answer of the same pass, a held one behind it.
 * A hold runs longer while the holder's own request still waits for its ACK.
 */
#include <string.h>

#include "write_pingpong.h"

enum { ROUNDS = 12 };

static void test_pingpong_carries_ack(void)
{
	struct wpp v;
	struct fabric *f;
	uint32_t pairs = 0, acks_b = 0, writes_b = 0;

	wpp_open(&v, URNIC_QPT_RC, 14, 11);
	f = v.f;
	wpp_run(&v, ROUNDS);
	fabric_settle(f);
	/* After the first rounds, every ACK of b leaves right behind b's answer. */
	for (uint32_t i = 0; i < f->ntrace; i++) {
		const struct fab_pktinfo *pi = &f->trace[i];

		if (pi->src != 1)
			continue;
		if (pi->opcode == URNIC_OP_RC_ACKNOWLEDGE) {
			acks_b++;
			if (i > 0 && f->trace[i - 1].src == 1 &&
			    f->trace[i - 1].opcode == URNIC_OP_RC_RDMA_WRITE_ONLY &&
			    f->trace[i - 1].t_ns == pi->t_ns)
				pairs++;
		} else if (pi->opcode == URNIC_OP_RC_RDMA_WRITE_ONLY) {
			writes_b++;
		}
	}
	CHECK_EQ(writes_b, ROUNDS);
	CHECK_EQ(acks_b, ROUNDS); /* one ACK per WRITE received, none extra */
	CHECK(pairs >= ROUNDS - 2);
	CHECK(fab_ctr(f, 1, URNIC_CTR_ack_held) >= ROUNDS - 2);
	CHECK(fab_ctr(f, 0, URNIC_CTR_ack_held) >= ROUNDS - 2);
	CHECK(fab_ctr(f, 0, URNIC_CTR_ack_hold_expired) <= 1); /* the last one */
	CHECK_EQ(fab_ctr(f, 1, URNIC_CTR_ack_hold_expired), 0);
	CHECK_EQ(fab_ctr(f, 0, URNIC_CTR_retransmit_pkts), 0);
	CHECK_EQ(fab_ctr(f, 1, URNIC_CTR_retransmit_pkts), 0);
	wpp_close(&v);
}

/* a writes and waits for each completion; b never answers: nothing is held. */
static void test_one_way_not_held(void)
{
	struct wpp v;

	wpp_open(&v, URNIC_QPT_RC, 14, 12);
	for (int r = 1; r <= ROUNDS; r++) {
		wpp_write(&v, true, (uint8_t)r);
		wpp_reap(&v, v.p.a, (uint8_t)r);
	}
	fabric_settle(v.f);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_ack_held), 0);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_ack_sent), ROUNDS);
	wpp_close(&v);
}

/* Time from a's last WRITE to b's ACK of it. */
static uint64_t last_ack_delay(const struct fabric *f)
{
	uint64_t t_write = 0, t_ack = 0;

	for (uint32_t i = 0; i < f->ntrace; i++) {
		const struct fab_pktinfo *pi = &f->trace[i];

		if (pi->src == 0 && pi->opcode == URNIC_OP_RC_RDMA_WRITE_ONLY)
			t_write = pi->t_ns;
		if (pi->src == 1 && pi->opcode == URNIC_OP_RC_ACKNOWLEDGE)
			t_ack = pi->t_ns;
	}
	return t_ack - t_write;
}

/* Interactive, then b stops answering: each ACK leaves at the hold deadline, and after
 * four misses b acknowledges at once again. */
static void test_unanswered_hold_expires(void)
{
	struct wpp v;
	struct fabric *f;
	uint64_t held;

	wpp_open_answering(&v, URNIC_QPT_RC, 14, 13, 3);
	f = v.f;
	held = fab_ctr(f, 1, URNIC_CTR_ack_held);
	CHECK(held >= 1);
	for (int r = 0; r < 4; r++) {
		wpp_write(&v, true, (uint8_t)(100 + r));
		wpp_reap(&v, v.p.a, (uint8_t)(100 + r));
		CHECK(last_ack_delay(f) >= URNIC_ACK_HOLD_DEFAULT_NS);
		CHECK_EQ(fab_ctr(f, 1, URNIC_CTR_ack_hold_expired), (uint64_t)r + 1);
	}
	CHECK_EQ(fab_ctr(f, 1, URNIC_CTR_ack_held), held + 4);
	/* No longer interactive: the next ACK goes at once. */
	wpp_write(&v, true, 110);
	wpp_reap(&v, v.p.a, 110);
	CHECK_EQ(last_ack_delay(f), 0);
	CHECK_EQ(fab_ctr(f, 1, URNIC_CTR_ack_held), held + 4);
	CHECK_EQ(fab_ctr(f, 0, URNIC_CTR_retransmit_pkts), 0);
	fabric_settle(f);
	wpp_close(&v);
}

/* timeout 4 (65 us): four hold times do not fit under it, so nothing is held. */
static void test_short_timeout_not_held(void)
{
	struct wpp v;

	wpp_open(&v, URNIC_QPT_RC, 4, 14);
	wpp_run(&v, ROUNDS);
	fabric_settle(v.f);
	CHECK_EQ(fab_ctr(v.f, 0, URNIC_CTR_ack_held), 0);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_ack_held), 0);
	wpp_close(&v);
}

/* Order of b's ACK and b's own WRITE when a pass produces both. */
static int ack_before_write(const struct fabric *f, uint32_t from)
{
	for (uint32_t i = from; i < f->ntrace; i++) {
		if (f->trace[i].src != 1)
			continue;
		if (f->trace[i].opcode == URNIC_OP_RC_ACKNOWLEDGE)
			return 1;
		if (f->trace[i].opcode == URNIC_OP_RC_RDMA_WRITE_ONLY)
			return 0;
	}
	return -1;
}

/* b's CQ armed (an application waiting for events): one pass takes in a's WRITE and
 * sends b's answer, posted already; the ACK is not held and goes before the answer, as
 * rxe sends it on receipt (perftest -e counts on its send completion coming first).
 * b polling: the pass that takes in a's WRITE holds the ACK, and it goes right behind
 * the answer posted after. */
static void test_order_in_one_pass(void)
{
	for (int armed = 0; armed <= 1; armed++) {
		struct wpp v;
		struct fabric *f;
		uint32_t from;

		wpp_open_answering(&v, URNIC_QPT_RC, 14, 15 + (uint64_t)armed, 3);
		f = v.f;
		if (armed)
			atomic_store(&v.p.b->scq.arm, URNIC_CQ_ARM_NEXT);
		from = f->ntrace;
		wpp_write(&v, true, 50);
		if (armed)
			wpp_until_byte(&v, &v.bb, 50);
		else
			wpp_wait_byte(&v, &v.bb, 50);
		wpp_write(&v, false, 51);
		fabric_run(f, NULL, NULL, 1);
		CHECK_EQ(ack_before_write(f, from), armed);
		wpp_reap(&v, v.p.a, 50);
		wpp_wait_byte(&v, &v.ba, 51);
		atomic_store(&v.p.b->scq.arm, URNIC_CQ_DISARMED);
		wpp_reap(&v, v.p.b, 51);
		fabric_settle(f);
		wpp_close(&v);
	}
}

/* b holds its ACK of a's WRITE while b's own WRITE still waits for a's ACK (a's
 * message and the ACK behind it came as two datagrams, the second late): b cannot
 * answer before that completion, so the hold is extended once, past the 20 us, and the
 * ACK still leaves right behind b's answer. */
static void test_hold_extended_while_awaiting(void)
{
	struct wpp v;
	struct fabric *f;
	struct fab_rule late_ack = {
		.match = FAB_M_SRC | FAB_M_OPCODE,
		.src = 0,
		.opcode = URNIC_OP_RC_ACKNOWLEDGE,
		.count = 1,
		.action = FAB_DELAY,
		.delay_ns = 2 * URNIC_ACK_HOLD_DEFAULT_NS,
	};
	uint64_t expired, t_ack = 0, t_write = 0;

	wpp_open_answering(&v, URNIC_QPT_RC, 14, 18, 3);
	f = v.f;
	expired = fab_ctr(f, 1, URNIC_CTR_ack_hold_expired);
	wpp_write(&v, false, 60); /* b's WRITE: a holds its ACK */
	wpp_wait_byte(&v, &v.ba, 60);
	fab_add_rule(f, &late_ack); /* ... which reaches b 40 us after a's answer */
	wpp_write(&v, true, 61);    /* a's answer, its ACK behind it */
	wpp_reap(&v, v.p.b, 60);    /* b's completion: the late ACK (the hold ran 20 us) */
	wpp_wait_byte(&v, &v.bb, 61);
	wpp_write(&v, false, 62); /* b answers a's WRITE */
	wpp_reap(&v, v.p.a, 61);
	wpp_wait_byte(&v, &v.ba, 62);
	CHECK_EQ(fab_ctr(f, 1, URNIC_CTR_ack_hold_expired), expired);
	for (uint32_t i = 0; i < f->ntrace; i++) {
		const struct fab_pktinfo *pi = &f->trace[i];

		if (pi->src == 1 && pi->opcode == URNIC_OP_RC_ACKNOWLEDGE)
			t_ack = pi->t_ns;
		if (pi->src == 1 && pi->opcode == URNIC_OP_RC_RDMA_WRITE_ONLY)
			t_write = pi->t_ns;
	}
	CHECK_EQ(t_ack, t_write); /* the ACK of 61 left with the WRITE 62 */
	fab_clear_rules(f);
	wpp_reap(&v, v.p.b, 62);
	fabric_settle(f);
	wpp_close(&v);
}

/* engine.answers_due counts ACKs that came before the peer's answer to what we sent:
 * the driver wakes its engine thread to take the answer in (pipeline.c, watch_due).
 * Carried ACKs come with the answer, behind it: none of a's is due; of b's, the first
 * (a's ACK left before a's answer until a was seen to answer) and the last (a never
 * answers it). An ACK that comes after the answer in a pass of its own (a
 * message of several datagrams) is not due either: a's WRITE arrives, a pass runs,
 * then b's ACK. A peer that never holds: each of its ACKs is due. */
static void test_answers_due(void)
{
	struct wpp v;
	struct fabric *f;

	wpp_open(&v, URNIC_QPT_RC, 14, 16);
	f = v.f;
	wpp_run(&v, ROUNDS);
	fabric_settle(f);
	CHECK_EQ(fab_engine(f, 0)->hold.answers_due, 0);
	CHECK(fab_engine(f, 1)->hold.answers_due <= 2);
	wpp_close(&v);

	wpp_open(&v, URNIC_QPT_RC, 14, 17);
	f = v.f;
	fab_engine(f, 1)->hold.max_ns = 0; /* b never holds */
	wpp_run(&v, ROUNDS);
	fabric_settle(f);
	CHECK_EQ(fab_ctr(f, 1, URNIC_CTR_ack_held), 0);
	CHECK(fab_engine(f, 0)->hold.answers_due >= ROUNDS - 2);
	wpp_close(&v);
}

int main(void)
{
	RUN(test_pingpong_carries_ack);
	RUN(test_one_way_not_held);
	RUN(test_unanswered_hold_expires);
	RUN(test_short_timeout_not_held);
	RUN(test_order_in_one_pass);
	RUN(test_answers_due);
	RUN(test_hold_extended_while_awaiting);
	return 0;
}
