/* SPDX-License-Identifier: MIT */
/*
 * test_handover_threads.c - the hand-over's protocols under real threads, with the
 * real src/dev/handover.c and a model of the rest: a "pass" consumes tickets that
 * "posters" publish (a counter, as a ring's prod), under a mutex standing for the device
 * lock, and a model engine thread sleeps in ppoll on an eventfd, as engine_thread.c.
 *
 *   passes_asked_for_are_run        3 threads (one claims as the engine thread) post
 *                                   tickets and claim passes in lock-step rounds; a
 *                                   pass handed to the owner (-> *_ARMED) is run: at
 *                                   the end of every round every ticket has been seen,
 *                                   and two passes never overlap.
 *   a_doorbell_always_wakes_the_engine
 *                                   a poster publishes work, then rings only if
 *                                   urnic_handover_must_ring says so (or runs/hands a
 *                                   pass); the engine thread dozes, looks once more,
 *                                   sleeps without a timer. A lost wake-up leaves a
 *                                   ticket unseen: the poster gives up after LIMIT_MS.
 *   a_watch_request_is_never_lost   an application asks the napping engine thread to
 *                                   watch (urnic_handover_ask_watch) and rings when told;
 *                                   the engine thread's next blind settle must see it.
 *
 * Each runs for at most RUN_S seconds of rounds and fails on the first lost ticket or
 * request; an alarm ends a hung run.
 */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "dev/handover.h"

enum {
	ROUNDS = 40000,	 /* lock-step rounds of passes_asked_for_are_run */
	POSTS = 20000,	 /* tickets of a_doorbell_always_wakes_the_engine */
	WATCHES = 20000, /* requests of a_watch_request_is_never_lost */
	RUN_S = 20,	 /* each test stops early after this long, passing */
	LIMIT_MS = 2000, /* a ticket or request not served by then is lost */
	ALARM_S = 240,
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A small deterministic per-thread random walk (xorshift). */
static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Spins for up to max ~ns-ish steps, or yields, or naps: lands the next step in any
 * phase of the other threads. */
static void jitter(uint32_t *seed, bool may_sleep)
{
	uint32_t r = rnd(seed);

	if (may_sleep && r % 16 == 0) {
		struct timespec ts = { 0, (long)(r % 60000) };

		nanosleep(&ts, NULL);
	} else if (r % 8 == 0) {
		sched_yield();
	} else {
		for (volatile uint32_t i = 0; i < r % 2000; i++)
			;
	}
}

/* ---- the model pipeline: tickets, passes, the lock ---- */

static struct urnic_handover h;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t posted;	  /* tickets published (the work) */
static _Atomic uint64_t max_seen; /* the most tickets a pass has seen */
static _Atomic int in_pass;

/* One pass: sees every ticket published before it; never two at once. */
static void one_pass(uint32_t *seed)
{
	uint64_t seen;

	pthread_mutex_lock(&lock);
	CHECK_EQ(atomic_fetch_add(&in_pass, 1), 0);
	seen = atomic_load_explicit(&posted, memory_order_acquire);
	if (seen > atomic_load(&max_seen))
		atomic_store(&max_seen, seen);
	if (seed && rnd(seed) % 4 == 0)
		jitter(seed, false);
	CHECK_EQ(atomic_fetch_sub(&in_pass, 1), 1);
	pthread_mutex_unlock(&lock);
}

/* A thread that wants a pass, as pipeline.c's urnic_dev_pass: RUN, then one more per
 * leave that says so. */
static enum urnic_pipe_claim want_pass(bool engine, bool must, uint32_t *seed)
{
	enum urnic_pipe_claim c = urnic_handover_claim(&h, engine, must);

	if (c != URNIC_CLAIM_RUN)
		return c;
	do
		one_pass(seed);
	while (urnic_handover_leave(&h) > 0);
	return c;
}

static void reset(void)
{
	urnic_handover_init(&h);
	CHECK_EQ(urnic_handover_start(&h), 0);
	atomic_store(&posted, 0);
	atomic_store(&max_seen, 0);
}

/* ---- passes_asked_for_are_run ---- */

enum { NTHREADS = 3 };
static pthread_barrier_t round_start, round_end;
static _Atomic bool stop_rounds;
static uint64_t rounds_run;

static void *round_thread(void *arg)
{
	int id = (int)(intptr_t)arg;
	uint32_t seed = 0x9e3779b9u * (uint32_t)(id + 1);
	uint64_t t0 = now_ns();

	for (uint64_t r = 0; r < ROUNDS; r++) {
		bool must = id == 0 || rnd(&seed) % 4 != 0;

		pthread_barrier_wait(&round_start);
		if (atomic_load(&stop_rounds))
			break;
		jitter(&seed, false);
		/* A poller's try publishes nothing: its pass may be skipped. */
		if (must)
			atomic_fetch_add_explicit(&posted, 1, memory_order_release);
		want_pass(id == 0, must, &seed);
		pthread_barrier_wait(&round_end);
		if (id == 0) {
			/* Nobody claims between the barriers: every ticket must be seen. */
			if (atomic_load(&max_seen) != atomic_load(&posted)) {
				fprintf(stderr,
					"round %llu: %llu tickets posted, %llu seen: a pass "
					"asked for was not run\n",
					(unsigned long long)r,
					(unsigned long long)atomic_load(&posted),
					(unsigned long long)atomic_load(&max_seen));
				exit(1);
			}
			CHECK_EQ(atomic_load(&h.pipe), URNIC_PIPE_IDLE);
			rounds_run = r + 1;
			if (now_ns() - t0 > (uint64_t)RUN_S * 1000000000ull)
				atomic_store(&stop_rounds, true);
		}
	}
	return NULL;
}

static void passes_asked_for_are_run(void)
{
	pthread_t t[NTHREADS];

	reset();
	pthread_barrier_init(&round_start, NULL, NTHREADS);
	pthread_barrier_init(&round_end, NULL, NTHREADS);
	for (int i = 0; i < NTHREADS; i++)
		CHECK(pthread_create(&t[i], NULL, round_thread, (void *)(intptr_t)i) == 0);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&round_start);
	pthread_barrier_destroy(&round_end);
	printf("%llu rounds, %llu tickets\n", (unsigned long long)rounds_run,
	       (unsigned long long)atomic_load(&posted));
	CHECK(rounds_run > 0);
}

/* ---- a_doorbell_always_wakes_the_engine ---- */

static int bell = -1;
static _Atomic bool engine_stop;
static _Atomic uint64_t sleeps; /* ppolls the model engine thread entered */

static void ring(void)
{
	uint64_t one = 1;

	CHECK(write(bell, &one, sizeof(one)) == sizeof(one));
}

/* The model engine thread: passes while they find tickets, then DROWSY, a last look,
 * ASLEEP in ppoll on the doorbell with no timer (the long timeout is only for a hung
 * test), AWAKE. */
static void *engine_thread(void *arg)
{
	uint64_t had = 0, drain;
	struct pollfd pfd = { .fd = bell, .events = POLLIN };
	uint32_t seed = 4242;

	(void)arg;
	while (!atomic_load(&engine_stop)) {
		want_pass(true, true, NULL);
		if (atomic_load(&max_seen) != had) {
			had = atomic_load(&max_seen);
			continue;
		}
		CHECK_EQ(urnic_handover_doze(&h), 0);
		want_pass(true, true, NULL); /* the last look */
		if (atomic_load(&max_seen) != had) {
			had = atomic_load(&max_seen);
			CHECK_EQ(urnic_handover_rouse(&h), 0);
			continue;
		}
		/* The real thread chooses its sleep here: a post may land in DROWSY. */
		jitter(&seed, false);
		CHECK_EQ(urnic_handover_settle(&h, false), URNIC_ENG_ASLEEP);
		urnic_handover_sleeps_until(&h, 0);
		atomic_fetch_add(&sleeps, 1);
		poll(&pfd, 1, 60000);
		CHECK_EQ(urnic_handover_wake(&h), 0);
		if ((pfd.revents & POLLIN) && read(bell, &drain, sizeof(drain)) < 0)
			drain = 0;
	}
	return NULL;
}

/* Waits until a pass has seen ticket t; false after LIMIT_MS. */
static bool seen_soon(uint64_t t)
{
	uint64_t t0 = now_ns();

	while (atomic_load(&max_seen) < t)
		if (now_ns() - t0 > (uint64_t)LIMIT_MS * 1000000ull)
			return false;
	return true;
}

static void a_doorbell_always_wakes_the_engine(void)
{
	uint32_t seed = 12345;
	uint64_t t0 = now_ns(), n = 0, rung = 0;
	pthread_t eng;

	reset();
	bell = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	CHECK(bell >= 0);
	atomic_store(&engine_stop, false);
	CHECK(pthread_create(&eng, NULL, engine_thread, NULL) == 0);
	for (; n < POSTS && now_ns() - t0 < (uint64_t)RUN_S * 1000000000ull; n++) {
		uint64_t t;

		jitter(&seed, true);
		t = atomic_fetch_add_explicit(&posted, 1, memory_order_release) + 1;
		/* As urnic_dev_kick after a post, or as a doorbell's pass
		 * (urnic_dev_progress), which needs no ring when it ran or was handed. */
		if (rnd(&seed) % 2 || want_pass(false, true, &seed) == URNIC_CLAIM_OFF) {
			if (urnic_handover_must_ring(&h, NULL)) {
				ring();
				rung++;
			}
		}
		if (!seen_soon(t)) {
			fprintf(stderr,
				"ticket %llu unseen after %d ms: engine thread %s, pipe "
				"%s: a lost wake-up\n",
				(unsigned long long)t, LIMIT_MS,
				urnic_eng_state_name(atomic_load(&h.eng)),
				urnic_pipe_state_name(atomic_load(&h.pipe)));
			exit(1);
		}
	}
	atomic_store(&engine_stop, true);
	ring();
	pthread_join(eng, NULL);
	close(bell);
	printf("%llu tickets, %llu rings, %llu sleeps\n", (unsigned long long)n,
	       (unsigned long long)rung, (unsigned long long)atomic_load(&sleeps));
	CHECK(atomic_load(&sleeps) > 0);
}

/* ---- a_watch_request_is_never_lost ---- */

static _Atomic uint64_t watched; /* requests the engine thread's settles took */

/* The model engine thread naps blind (as while an application polls) until told to
 * watch: a settle that finds the request counts it. */
static void *napping_thread(void *arg)
{
	struct pollfd pfd = { .fd = bell, .events = POLLIN };
	uint64_t drain;
	uint32_t seed = 4243;

	(void)arg;
	while (!atomic_load(&engine_stop)) {
		enum urnic_eng_state s;

		CHECK_EQ(urnic_handover_doze(&h), 0);
		jitter(&seed, false); /* its last look: a request may land in DROWSY */
		s = urnic_handover_settle(&h, true);
		if (s == URNIC_ENG_ASLEEP) {
			atomic_fetch_add(&watched, 1);
			CHECK_EQ(urnic_handover_wake(&h), 0);
			continue;
		}
		CHECK_EQ(s, URNIC_ENG_NAPPING);
		poll(&pfd, 1, 60000);
		CHECK_EQ(urnic_handover_wake(&h), 0);
		if ((pfd.revents & POLLIN) && read(bell, &drain, sizeof(drain)) < 0)
			drain = 0;
	}
	return NULL;
}

static void a_watch_request_is_never_lost(void)
{
	uint32_t seed = 777;
	uint64_t t0 = now_ns(), n = 0;
	pthread_t eng;

	reset();
	bell = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	CHECK(bell >= 0);
	atomic_store(&engine_stop, false);
	atomic_store(&watched, 0);
	CHECK(pthread_create(&eng, NULL, napping_thread, NULL) == 0);
	for (; n < WATCHES && now_ns() - t0 < (uint64_t)RUN_S * 1000000000ull; n++) {
		uint64_t before = atomic_load(&watched), t1 = now_ns();

		jitter(&seed, true);
		if (urnic_handover_ask_watch(&h))
			ring();
		while (atomic_load(&watched) == before) {
			if (now_ns() - t1 > (uint64_t)LIMIT_MS * 1000000ull) {
				fprintf(stderr,
					"watch request %llu unseen after %d ms (engine "
					"thread %s)\n",
					(unsigned long long)n, LIMIT_MS,
					urnic_eng_state_name(atomic_load(&h.eng)));
				exit(1);
			}
		}
	}
	atomic_store(&engine_stop, true);
	atomic_store(&h.watch_due, true);
	ring();
	pthread_join(eng, NULL);
	close(bell);
	printf("%llu requests\n", (unsigned long long)n);
}

int main(void)
{
	alarm(ALARM_S);
	RUN(passes_asked_for_are_run);
	RUN(a_doorbell_always_wakes_the_engine);
	RUN(a_watch_request_is_never_lost);
	return 0;
}
