/* SPDX-License-Identifier: MIT */
/*
 * test_ack_hold.c - the responder holds its ACK for the application's answer
 * (src/engine/roce/responder.c, rc_ack_held; IBTA 9.7.5.1.1 coalescing).
 *
 * Ping-pong: once a QP has answered soon after an ACK that left alone, its ACKs wait
 * for the answer and leave right behind it, in the same batch; one ACK per message
 * still. One-way traffic is never held. An answer that does not come: the ACK leaves at
 * the hold deadline (the fabric clock jumps there), and after ACK_HOLD_MISSES such
 * misses in a row the QP stops holding. A QP whose timeout is short does not hold. An
 * ACK that is not held leaves before the answer of the same pass, a held one behind it.
 * A hold runs longer while the holder's own request still waits for its ACK.
 */
#include <string.h>

#include "fabric.h"

enum { LEN = 8, ROUNDS = 12 };

struct env {
	struct fab_pair p;
	struct fab_buf ba, bb; /* each side's buffer: [0, LEN) is written by the peer */
	struct fab_conn c;
};

static void env_open(struct env *v, uint8_t timeout, uint64_t seed)
{
	v->c = fab_conn_default();
	v->c.timeout = timeout;
	fab_pair_open(&v->p, &v->c, seed);
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

/* Runs until the peer's WRITE put tag into buf (the application's spin on memory),
 * stopping right after its delivery: no pass of the receiver has run since. */
static void until_byte(struct env *v, const struct fab_buf *b, uint8_t tag)
{
	struct byte_is w = { b->p, tag };

	CHECK(fabric_run(v->p.f, byte_arrived, &w, 100000));
}

/* until_byte, then one pass: the pass that took the WRITE in decides about its ACK
 * before the answer is posted, as on the device (the receive and the ACK are one pass
 * there). */
static void wait_byte(struct env *v, const struct fab_buf *b, uint8_t tag)
{
	until_byte(v, b, tag);
	fabric_run(v->p.f, NULL, NULL, 1);
}

static void reap(struct env *v, struct fab_qp *q, uint8_t tag)
{
	struct urnic_cqe cqe;

	fab_wait_cqes(v->p.f, &q->scq, &cqe, 1);
	CHECK_CQE(cqe, tag, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, LEN);
}

/* ib_write_lat's loop, both sides interleaved as their threads would run: each posts
 * its WRITE once the peer's data is there, then waits for its own completion (which
 * the peer's ACK, held for the peer's answer, brings). a's answer to b's last WRITE
 * never comes, so that one ACK of a leaves when its hold expires. */
static void pingpong(struct env *v, int rounds)
{
	write_tag(v, true, 2);
	for (int r = 1; r <= rounds; r++) {
		wait_byte(v, &v->bb, (uint8_t)(2 * r));
		write_tag(v, false, (uint8_t)(2 * r + 1));
		reap(v, v->p.a, (uint8_t)(2 * r));
		wait_byte(v, &v->ba, (uint8_t)(2 * r + 1));
		if (r < rounds)
			write_tag(v, true, (uint8_t)(2 * r + 2));
		reap(v, v->p.b, (uint8_t)(2 * r + 1));
	}
}


static void test_pingpong_carries_ack(void)
{
	struct env v;
	struct fabric *f;
	uint32_t pairs = 0, acks_b = 0, writes_b = 0;

	env_open(&v, 14, 11);
	f = v.p.f;
	pingpong(&v, ROUNDS);
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
	env_close(&v);
}

/* a writes and waits for each completion; b never answers: nothing is held. */
static void test_one_way_not_held(void)
{
	struct env v;

	env_open(&v, 14, 12);
	for (int r = 1; r <= ROUNDS; r++) {
		write_tag(&v, true, (uint8_t)r);
		reap(&v, v.p.a, (uint8_t)r);
	}
	fabric_settle(v.p.f);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_ack_held), 0);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_ack_sent), ROUNDS);
	env_close(&v);
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
	struct env v;
	struct fabric *f;
	uint64_t held;

	env_open(&v, 14, 13);
	f = v.p.f;
	pingpong(&v, 3);
	fabric_settle(f);
	held = fab_ctr(f, 1, URNIC_CTR_ack_held);
	CHECK(held >= 1);
	for (int r = 0; r < 4; r++) {
		write_tag(&v, true, (uint8_t)(100 + r));
		reap(&v, v.p.a, (uint8_t)(100 + r));
		CHECK(last_ack_delay(f) >= URNIC_ACK_HOLD_DEFAULT_NS);
		CHECK_EQ(fab_ctr(f, 1, URNIC_CTR_ack_hold_expired), (uint64_t)r + 1);
	}
	CHECK_EQ(fab_ctr(f, 1, URNIC_CTR_ack_held), held + 4);
	/* No longer interactive: the next ACK goes at once. */
	write_tag(&v, true, 110);
	reap(&v, v.p.a, 110);
	CHECK_EQ(last_ack_delay(f), 0);
	CHECK_EQ(fab_ctr(f, 1, URNIC_CTR_ack_held), held + 4);
	CHECK_EQ(fab_ctr(f, 0, URNIC_CTR_retransmit_pkts), 0);
	fabric_settle(f);
	env_close(&v);
}

/* timeout 4 (65 us): four hold times do not fit under it, so nothing is held. */
static void test_short_timeout_not_held(void)
{
	struct env v;

	env_open(&v, 4, 14);
	pingpong(&v, ROUNDS);
	fabric_settle(v.p.f);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_ack_held), 0);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_ack_held), 0);
	env_close(&v);
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
		struct env v;
		struct fabric *f;
		uint32_t from;

		env_open(&v, 14, 15 + (uint64_t)armed);
		f = v.p.f;
		pingpong(&v, 3);
		fabric_settle(f);
		if (armed)
			atomic_store(&v.p.b->scq.arm, URNIC_CQ_ARM_NEXT);
		from = f->ntrace;
		write_tag(&v, true, 50);
		if (armed)
			until_byte(&v, &v.bb, 50);
		else
			wait_byte(&v, &v.bb, 50);
		write_tag(&v, false, 51);
		fabric_run(f, NULL, NULL, 1);
		CHECK_EQ(ack_before_write(f, from), armed);
		reap(&v, v.p.a, 50);
		wait_byte(&v, &v.ba, 51);
		atomic_store(&v.p.b->scq.arm, URNIC_CQ_DISARMED);
		reap(&v, v.p.b, 51);
		fabric_settle(f);
		env_close(&v);
	}
}

/* b holds its ACK of a's WRITE while b's own WRITE still waits for a's ACK (a's
 * message and the ACK behind it came as two datagrams, the second late): b cannot
 * answer before that completion, so the hold is extended once, past the 20 us, and the
 * ACK still leaves right behind b's answer. */
static void test_hold_extended_while_awaiting(void)
{
	struct env v;
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

	env_open(&v, 14, 18);
	f = v.p.f;
	pingpong(&v, 3);
	fabric_settle(f);
	expired = fab_ctr(f, 1, URNIC_CTR_ack_hold_expired);
	write_tag(&v, false, 60);     /* b's WRITE: a holds its ACK */
	wait_byte(&v, &v.ba, 60);
	fab_add_rule(f, &late_ack);   /* ... which reaches b 40 us after a's answer */
	write_tag(&v, true, 61);      /* a's answer, its ACK behind it */
	reap(&v, v.p.b, 60);          /* b's completion: the late ACK (the hold ran 20 us) */
	wait_byte(&v, &v.bb, 61);
	write_tag(&v, false, 62);     /* b answers a's WRITE */
	reap(&v, v.p.a, 61);
	wait_byte(&v, &v.ba, 62);
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
	reap(&v, v.p.b, 62);
	fabric_settle(f);
	env_close(&v);
}

/* engine.answers_due counts ACKs that came before the peer's answer to what we sent:
 * the driver wakes its engine thread to take the answer in (device.c, watch_due).
 * Carried ACKs come with the answer, behind it: none of a's is due; of b's, the first
 * (a's ACK left before a's answer until a was seen to answer) and the last (a never
 * answers it). An ACK that comes after the answer in a pass of its own (a
 * message of several datagrams) is not due either: a's WRITE arrives, a pass runs,
 * then b's ACK. A peer that never holds: each of its ACKs is due. */
static void test_answers_due(void)
{
	struct env v;
	struct fabric *f;

	env_open(&v, 14, 16);
	f = v.p.f;
	pingpong(&v, ROUNDS);
	fabric_settle(f);
	CHECK_EQ(fab_engine(f, 0)->answers_due, 0);
	CHECK(fab_engine(f, 1)->answers_due <= 2);
	env_close(&v);

	env_open(&v, 14, 17);
	f = v.p.f;
	fab_engine(f, 1)->ack_hold_max_ns = 0; /* b never holds */
	pingpong(&v, ROUNDS);
	fabric_settle(f);
	CHECK_EQ(fab_ctr(f, 1, URNIC_CTR_ack_held), 0);
	CHECK(fab_engine(f, 0)->answers_due >= ROUNDS - 2);
	env_close(&v);
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
