/* SPDX-License-Identifier: MIT */
/*
 * test_cq_events.c - completion events of a CQ (urnic_cq_arm, urnic_cq_push and the
 * list of CQs due an event, queue/wq.h), behind ibv_req_notify_cq(3).
 *
 *   next_arming_fires_once                 one event per arming however many completions
 *                                          follow; armed again before the device wrote
 *                                          the channel: one list entry owing two events
 *   solicited_arming_fires_on_se_or_failure
 *                                          ARM_SOLICITED lets a successful completion
 *                                          without the SE bit pass, and fires on the SE
 *                                          bit or on an unsuccessful status
 *   arming_and_a_completion_never_both_miss
 *                                          two threads in lock-step rounds: one pushes a
 *                                          completion, the other arms and then polls, as
 *                                          rping's completion thread does. In every round
 *                                          the push fired the event or the poll found the
 *                                          completion (the store-buffering pattern: with
 *                                          neither, the application sleeps for ever)
 *
 * Out of scope: writing the channel (dev/pipeline.c), the verbs wrapper (verbs/cq.c).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "check.h"
#include "queue/wq.h"

enum {
	ROUNDS = 2000000, /* lock-step rounds of the race, at most */
	RUN_S = 10,	  /* the race stops early after this long, passing */
	SPREAD = 64,	  /* each side waits 0..SPREAD-1 spins before its step */
	FAKE_FD = 1000,	  /* a channel's write end: never written by the queue */
};

/* A CQ with a channel, on the list l. */
static void cq_with_channel(struct urnic_cq *cq, struct urnic_cq_due *l, uint32_t cqe)
{
	CHECK_EQ(urnic_cq_init(cq, cqe), 0);
	urnic_cq_due_init(l);
	cq->event_fd = FAKE_FD;
	cq->due = l;
}

static void push(struct urnic_cq *cq, uint8_t status, bool se)
{
	struct urnic_cqe c = { .status = status, .opcode = URNIC_WC_RECV };

	CHECK(urnic_cq_push(cq, &c, se));
}

/* The events the list owes cq (0: not on it), taken off. */
static uint32_t take_events(struct urnic_cq_due *l, struct urnic_cq *cq)
{
	uint32_t n = 0;
	struct urnic_cq *got = urnic_cq_due_pop(l, &n);

	if (!got)
		return 0;
	CHECK(got == cq);
	CHECK(!urnic_cq_due_pop(l, &n));
	return n;
}

static void drain(struct urnic_cq *cq)
{
	struct urnic_cqe c[8];

	while (urnic_cq_poll(cq, c, 8) > 0)
		;
}

static void next_arming_fires_once(void)
{
	struct urnic_cq cq;
	struct urnic_cq_due l;

	cq_with_channel(&cq, &l, 16);
	push(&cq, URNIC_WC_SUCCESS, false);
	CHECK_EQ(take_events(&l, &cq), 0); /* not armed */
	urnic_cq_arm(&cq, false);
	push(&cq, URNIC_WC_SUCCESS, false);
	push(&cq, URNIC_WC_SUCCESS, false);
	CHECK_EQ(atomic_load(&cq.arm), URNIC_CQ_DISARMED);
	CHECK_EQ(take_events(&l, &cq), 1);
	/* Armed twice, fired twice, before the device wrote the channel. */
	urnic_cq_arm(&cq, false);
	push(&cq, URNIC_WC_SUCCESS, false);
	urnic_cq_arm(&cq, false);
	push(&cq, URNIC_WC_SUCCESS, false);
	CHECK_EQ(take_events(&l, &cq), 2);
	drain(&cq);
	urnic_cq_fini(&cq);
}

static void solicited_arming_fires_on_se_or_failure(void)
{
	struct urnic_cq cq;
	struct urnic_cq_due l;

	cq_with_channel(&cq, &l, 16);
	urnic_cq_arm(&cq, true);
	push(&cq, URNIC_WC_SUCCESS, false);
	CHECK_EQ(take_events(&l, &cq), 0);
	CHECK_EQ(atomic_load(&cq.arm), URNIC_CQ_ARM_SOLICITED);
	push(&cq, URNIC_WC_SUCCESS, true);
	CHECK_EQ(take_events(&l, &cq), 1);
	/* ibv_req_notify_cq(3): a CQE whose status is not successful is solicited. */
	urnic_cq_arm(&cq, true);
	push(&cq, URNIC_WC_WR_FLUSH_ERR, false);
	CHECK_EQ(take_events(&l, &cq), 1);
	urnic_cq_arm(&cq, true);
	push(&cq, URNIC_WC_REM_ACCESS_ERR, false);
	CHECK_EQ(take_events(&l, &cq), 1);
	drain(&cq);
	urnic_cq_fini(&cq);
}

/* ---- the race ---- */

struct race {
	struct urnic_cq cq;
	struct urnic_cq_due due;
	_Atomic uint32_t go;	 /* the round both sides may run */
	_Atomic uint32_t pushed; /* the last round whose push is done */
	_Atomic bool stop;
};

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void spin(uint32_t n)
{
	for (volatile uint32_t i = 0; i < n; i++)
		;
}

/* Waits for *w to reach r, yielding now and then (the machine may have one CPU free). */
static bool wait_for(_Atomic uint32_t *w, uint32_t r, _Atomic bool *stop)
{
	for (uint32_t i = 1; atomic_load_explicit(w, memory_order_acquire) != r; i++) {
		if (stop && atomic_load_explicit(stop, memory_order_relaxed))
			return false;
		if (i % 256 == 0)
			sched_yield();
	}
	return true;
}

/* The engine's side: a completion in each round. */
static void *pusher(void *arg)
{
	struct race *x = arg;
	uint32_t seed = 0x9e3779b9u;
	struct urnic_cqe c = { .status = URNIC_WC_SUCCESS, .opcode = URNIC_WC_RECV };

	for (uint32_t r = 1; wait_for(&x->go, r, &x->stop); r++) {
		spin(rnd(&seed) % SPREAD);
		CHECK(urnic_cq_push(&x->cq, &c, false));
		atomic_store_explicit(&x->pushed, r, memory_order_release);
	}
	return NULL;
}

static uint64_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

static void arming_and_a_completion_never_both_miss(void)
{
	static struct race x;
	uint32_t seed = 0x2545f491u, r, both = 0;
	uint64_t until = now_s() + RUN_S;
	pthread_t t;

	cq_with_channel(&x.cq, &x.due, 4);
	CHECK_EQ(pthread_create(&t, NULL, pusher, &x), 0);
	for (r = 1; r <= ROUNDS && (r % 4096 || now_s() < until); r++) {
		struct urnic_cqe c;
		int got;
		uint32_t events;

		atomic_store_explicit(&x.go, r, memory_order_release);
		spin(rnd(&seed) % SPREAD);
		urnic_cq_arm(&x.cq, false);
		got = urnic_cq_poll(&x.cq, &c, 1);
		wait_for(&x.pushed, r, NULL);
		events = take_events(&x.due, &x.cq);
		if (!got && !events)
			fprintf(stderr,
				"round %u: the completion fired no event and the poll "
				"after arming missed it\n",
				r);
		CHECK(got || events);
		both += got && events;
		drain(&x.cq);
		atomic_store(&x.cq.arm, URNIC_CQ_DISARMED);
	}
	atomic_store(&x.stop, true);
	CHECK_EQ(pthread_join(t, NULL), 0);
	printf("  %u rounds, %u with both the event and the completion\n", r - 1, both);
	urnic_cq_fini(&x.cq);
}

int main(void)
{
	RUN(next_arming_fires_once);
	RUN(solicited_arming_fires_on_se_or_failure);
	RUN(arming_and_a_completion_never_both_miss);
	return 0;
}
