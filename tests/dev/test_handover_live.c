/* SPDX-License-Identifier: MIT */
/*
 * test_handover_live.c - the hand-over between application threads and the engine
 * threads, live: two urnic devices in one process over the loopback, through the verbs.
 *
 *   thread "a" --- urnic0 (URNIC_ADDR first) === RC over lo === urnic1 --- thread "b"
 *
 *   app_polls_while_the_engine_thread_naps
 *       both sides poll their CQs in a SEND ping-pong: the applications drive the
 *       pipelines, so each engine thread naps: it uses under a quarter of the CPU the
 *       two polling threads use together (polling beside them, it uses about what
 *       each of them does).
 *   the_engine_thread_takes_over_when_the_app_stops_polling
 *       b answers by polling, then arms its CQ and sleeps on its channel, again and
 *       again: each time the engine thread must take the socket back at once and
 *       deliver a's requests (the median first round after the switch under 10 ms,
 *       not a timer's tens), or the round never ends.
 *   a_write_target_that_never_polls_is_served
 *       b makes no verbs call at all; a's RDMA WRITEs land and complete, which only
 *       urnic1's engine thread can do (it takes the WRITE in and sends the ACK), also
 *       after pauses that let it fall asleep.
 *   write_ping_pong_on_memory
 *       as ib_write_lat: each side WRITEs, then waits for the peer's WRITE by watching
 *       its memory, reaping its own completion on the way.
 *   no_lost_wakeup_in_event_driven_rounds
 *       SEND ping-pong with both sides asleep on completion channels between rounds,
 *       a's rounds now and then polled instead and paced by pauses of random length:
 *       a wake-up lost anywhere in the hand-over stalls a round.
 *
 * Every round must end within ROUND_MS; each test is bounded (RUN_S) and an alarm ends
 * a hung run. An argument runs only the tests whose name contains it.
 */
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "check.h"
#include "verbs_loop.h"
#include "verbs_side.h"

enum {
	ROUND_MS = 3000, /* a round not over by then: a lost wake-up */
	RUN_S = 30,	 /* each test's rounds stop early after this long */
	ALARM_S = 280,
	BUF = 4096,
	DEPTH = 64,
};

static struct side s0, s1;
static struct ibv_comp_channel *ch0, *ch1;
static struct ibv_cq *ecq0, *ecq1; /* event CQs: receive completions, on the channels */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool late(uint64_t t0)
{
	return now_ns() - t0 > (uint64_t)ROUND_MS * 1000000ull;
}

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* ---- QPs ---- */

static struct ibv_qp *create_qp(struct side *s, struct ibv_cq *recv_cq)
{
	struct ibv_qp_init_attr ia = { .send_cq = s->cq,
				       .recv_cq = recv_cq,
				       .cap = { .max_send_wr = DEPTH,
						.max_recv_wr = DEPTH,
						.max_send_sge = 1,
						.max_recv_sge = 1 },
				       .qp_type = IBV_QPT_RC };
	struct ibv_qp *qp = ibv_create_qp(s->pd, &ia);

	CHECK(qp);
	return qp;
}

/* A pair: qa on urnic0, qb on urnic1, receives completing on rcq0 / rcq1. */
static void make_pair(struct ibv_qp **qa, struct ibv_cq *rcq0, struct ibv_qp **qb,
		      struct ibv_cq *rcq1)
{
	*qa = create_qp(&s0, rcq0);
	*qb = create_qp(&s1, rcq1);
	loop_connect_to(*qa, &s1.gid, (*qb)->qp_num);
	loop_connect_to(*qb, &s0.gid, (*qa)->qp_num);
}

/* One 8-byte receive into slot 0 of the side's buffer (the message itself is not
 * looked at: the rounds count completions). */
static void post_recv(struct side *s, struct ibv_qp *qp)
{
	struct ibv_sge sge = { (uintptr_t)s->buf, 8, s->mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	CHECK(ibv_post_recv(qp, &wr, &bad) == 0);
}

/* An unsignaled 8-byte SEND: only receive completions are waited for. */
static void post_send(struct side *s, struct ibv_qp *qp)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + 64, 8, s->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_INLINE },
			   *bad;

	CHECK(ibv_post_send(qp, &wr, &bad) == 0);
}

/* A signaled 8-byte WRITE of v from `from`'s slot to `to`'s slot at off. */
static void post_write(struct side *from, struct ibv_qp *qp, struct side *to, size_t off,
		       uint64_t v)
{
	uint64_t *src = (uint64_t *)(from->buf + 128);
	struct ibv_sge sge = { (uintptr_t)src, 8, from->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr = { .rdma = { (uintptr_t)(to->buf + off), to->mr->rkey } },
	};
	struct ibv_send_wr *bad;

	*src = v;
	CHECK(ibv_post_send(qp, &wr, &bad) == 0);
}

/* Polls cq for one completion (successful) within ROUND_MS. */
static void poll_one(struct ibv_cq *cq, const char *what, uint64_t round)
{
	uint64_t t0 = now_ns();
	struct ibv_wc wc;
	int got;

	while ((got = ibv_poll_cq(cq, 1, &wc)) == 0) {
		if (late(t0)) {
			fprintf(stderr, "%s: round %llu: no completion after %d ms\n", what,
				(unsigned long long)round, ROUND_MS);
			exit(1);
		}
	}
	CHECK_EQ(got, 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
}

/* Waits for one receive completion on an event CQ as an event-driven application
 * does: arm, look, sleep on the channel (poll(2), ROUND_MS), take and ack the event. */
static void wait_event(struct ibv_cq *cq, struct ibv_comp_channel *ch, const char *what,
		       uint64_t round)
{
	uint64_t t0 = now_ns();
	struct ibv_wc wc;

	for (;;) {
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
		struct ibv_cq *got_cq;
		void *ctx;
		int got;

		CHECK(ibv_req_notify_cq(cq, 0) == 0);
		got = ibv_poll_cq(cq, 1, &wc);
		if (got == 1)
			break;
		CHECK_EQ(got, 0);
		if (poll(&pfd, 1, ROUND_MS) != 1 || late(t0)) {
			fprintf(stderr, "%s: round %llu: no completion event after %d ms\n", what,
				(unsigned long long)round, ROUND_MS);
			exit(1);
		}
		CHECK(ibv_get_cq_event(ch, &got_cq, &ctx) == 0);
		CHECK(got_cq == cq);
		ibv_ack_cq_events(cq, 1);
	}
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_RECV);
}

/* Events left in a channel by CQs armed when a phase ended. */
static void drain_events(struct ibv_comp_channel *ch)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };

	while (poll(&pfd, 1, 0) == 1) {
		struct ibv_cq *cq;
		void *ctx;

		CHECK(ibv_get_cq_event(ch, &cq, &ctx) == 0);
		ibv_ack_cq_events(cq, 1);
	}
}

/* ---- CPU time of the engine threads ---- */

/* The thread id of the engine thread of the device named dev ("urnic:urnic0"). */
static pid_t engine_tid(const char *dev)
{
	char want[32], path[300], comm[32];
	DIR *dir = opendir("/proc/self/task");
	struct dirent *e;
	pid_t tid = -1;

	CHECK(dir);
	snprintf(want, sizeof(want), "urnic:%s\n", dev);
	while ((e = readdir(dir))) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && strcmp(comm, want) == 0)
			tid = atoi(e->d_name);
		fclose(f);
	}
	closedir(dir);
	return tid;
}

/* CPU time of the thread tid, through its thread CPU clock (as pthread_getcpuclockid
 * makes it: the kernel's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)). */
static uint64_t tid_cpu_ns(pid_t tid)
{
	clockid_t clk = (clockid_t)((~(unsigned int)tid << 3) | 6);
	struct timespec ts;

	CHECK(clock_gettime(clk, &ts) == 0);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t self_cpu_ns(void)
{
	struct timespec ts;

	CHECK(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the responder thread b ---- */

enum b_mode { B_POLL, B_EVENTS, B_POLL_THEN_EVENTS };

struct responder {
	struct ibv_qp *qb;
	struct ibv_cq *rcq; /* b's receive CQ (ecq1 for events) */
	enum b_mode mode;
	uint64_t rounds;
	uint32_t poll_run, event_run; /* B_POLL_THEN_EVENTS: rounds of each, in turn */
	uint64_t cpu_ns;
};

/* b: for each of a's SENDs, a SEND back; receives by polling or by events. */
static void *responder(void *arg)
{
	struct responder *r = arg;
	uint64_t cpu0 = self_cpu_ns();

	for (uint64_t i = 0; i < r->rounds; i++) {
		bool events = r->mode == B_EVENTS;

		if (r->mode == B_POLL_THEN_EVENTS)
			events = i % (r->poll_run + r->event_run) >= r->poll_run;
		if (events)
			wait_event(r->rcq, ch1, "b (events)", i);
		else
			poll_one(r->rcq, "b (polling)", i);
		post_recv(&s1, r->qb);
		post_send(&s1, r->qb);
	}
	r->cpu_ns = self_cpu_ns() - cpu0;
	return NULL;
}

/* a's side of the SEND ping-pong on qa (receives on rcq): SEND, wait for the answer,
 * by polling or (events) on ch0. */
struct asker {
	struct ibv_qp *qa;
	struct ibv_cq *rcq;
	bool events;	  /* a sleeps on ch0 (else polls rcq) */
	uint32_t mixed;	  /* with events: 1 in mixed rounds polled instead (0: none) */
	bool pace;	  /* pauses of up to 300 us before some rounds */
	uint64_t *rtt_ns; /* each round's time, or NULL */
};

static void ask(const struct asker *k, uint64_t n)
{
	uint32_t seed = 99;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t t0;

		if (k->pace && rnd(&seed) % 4 == 0) {
			struct timespec ts = { 0, (long)(rnd(&seed) % 300000) };

			nanosleep(&ts, NULL);
		}
		t0 = now_ns();
		post_send(&s0, k->qa);
		if (k->events && !(k->mixed && rnd(&seed) % k->mixed == 0))
			wait_event(k->rcq, ch0, "a (events)", i);
		else
			poll_one(k->rcq, "a (polling)", i);
		post_recv(&s0, k->qa);
		if (k->rtt_ns)
			k->rtt_ns[i] = now_ns() - t0;
	}
}

static void prepost(struct ibv_qp *qa, struct ibv_qp *qb)
{
	for (int i = 0; i < 8; i++) {
		post_recv(&s0, qa);
		post_recv(&s1, qb);
	}
}

static void destroy_pair(struct ibv_qp *qa, struct ibv_qp *qb)
{
	CHECK(ibv_destroy_qp(qa) == 0);
	CHECK(ibv_destroy_qp(qb) == 0);
	drain_events(ch0);
	drain_events(ch1);
	/* Receive completions of flushed receives, and the send CQs' leftovers. */
	for (struct ibv_wc wc; ibv_poll_cq(ecq0, 1, &wc) > 0 || ibv_poll_cq(ecq1, 1, &wc) > 0 ||
			       ibv_poll_cq(s0.cq, 1, &wc) > 0 || ibv_poll_cq(s1.cq, 1, &wc) > 0;)
		;
}

/* ---- the tests ---- */

static void app_polls_while_the_engine_thread_naps(void)
{
	struct responder r = { .mode = B_POLL };
	struct asker k = { 0 };
	uint64_t e0[2], t0, a_cpu, wall, eng[2], n = 3000;
	pid_t tid[2];
	pthread_t tb;

	make_pair(&k.qa, s0.cq, &r.qb, s1.cq);
	k.rcq = s0.cq;
	r.rcq = s1.cq;
	prepost(k.qa, r.qb);
	tid[0] = engine_tid(s0.ctx->device->name);
	tid[1] = engine_tid(s1.ctx->device->name);
	CHECK(tid[0] > 0 && tid[1] > 0);
	r.rounds = 200 + n;
	CHECK(pthread_create(&tb, NULL, responder, &r) == 0);
	ask(&k, 200); /* warm-up: the engine threads see the applications poll */
	for (int i = 0; i < 2; i++)
		e0[i] = tid_cpu_ns(tid[i]);
	t0 = now_ns();
	a_cpu = self_cpu_ns();
	ask(&k, n);
	a_cpu = self_cpu_ns() - a_cpu;
	wall = now_ns() - t0;
	for (int i = 0; i < 2; i++)
		eng[i] = tid_cpu_ns(tid[i]) - e0[i];
	pthread_join(tb, NULL);
	printf("%llu rounds in %.1f ms: a %.1f ms CPU, b %.1f ms, engine threads %.1f and %.1f "
	       "ms\n",
	       (unsigned long long)n, wall / 1e6, a_cpu / 1e6, r.cpu_ns / 1e6, eng[0] / 1e6,
	       eng[1] / 1e6);
	/* An engine thread that polled on beside the applications would use about what
	 * each of them uses (they yield now and then, ibv_poll_cq); napping, it wakes
	 * every 50 us to 1 ms. */
	CHECK(eng[0] * 4 < a_cpu + r.cpu_ns);
	CHECK(eng[1] * 4 < a_cpu + r.cpu_ns);
	destroy_pair(k.qa, r.qb);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t p = *(const uint64_t *)x, q = *(const uint64_t *)y;

	return p < q ? -1 : p > q;
}

static void the_engine_thread_takes_over_when_the_app_stops_polling(void)
{
	enum { POLLED = 40, SLEPT = 10, PHASES = 40, TAKEOVER_MS = 10 };
	static uint64_t rtt[(POLLED + SLEPT) * PHASES], first[PHASES];
	struct responder r = { .mode = B_POLL_THEN_EVENTS, .poll_run = POLLED, .event_run = SLEPT };
	struct asker k = { .rtt_ns = rtt };
	uint64_t n = (uint64_t)(POLLED + SLEPT) * PHASES;
	pthread_t tb;

	make_pair(&k.qa, s0.cq, &r.qb, ecq1);
	k.rcq = s0.cq;
	r.rcq = ecq1;
	r.rounds = n;
	prepost(k.qa, r.qb);
	CHECK(pthread_create(&tb, NULL, responder, &r) == 0);
	ask(&k, n);
	pthread_join(tb, NULL);
	/* The first event-driven round of each phase: b has just stopped polling. Taken
	 * over at once (the doorbell of ibv_req_notify_cq), it is a round like the others;
	 * left to a timer (a retransmission's, ~67 ms here), tens of milliseconds. */
	for (int p = 0; p < PHASES; p++)
		first[p] = rtt[p * (POLLED + SLEPT) + POLLED];
	qsort(first, PHASES, sizeof(first[0]), cmp_u64);
	printf("%d phases of %d polled and %d event-driven rounds: first event-driven round "
	       "median %.1f us, max %.1f us\n",
	       PHASES, POLLED, SLEPT, first[PHASES / 2] / 1e3, first[PHASES - 1] / 1e3);
	CHECK(first[PHASES / 2] < (uint64_t)TAKEOVER_MS * 1000000ull);
	destroy_pair(k.qa, r.qb);
}

static void a_write_target_that_never_polls_is_served(void)
{
	volatile uint64_t *dst = (volatile uint64_t *)(s1.buf + 256);
	struct ibv_qp *qa, *qb;
	uint32_t seed = 5;
	uint64_t n = 2000, t_end = now_ns() + (uint64_t)RUN_S * 1000000000ull, i;

	make_pair(&qa, s0.cq, &qb, s1.cq);
	for (i = 1; i <= n && now_ns() < t_end; i++) {
		/* Now and then long enough for urnic1's engine thread to fall asleep. */
		if (rnd(&seed) % 8 == 0) {
			struct timespec ts = { 0, (long)(rnd(&seed) % 2000000) };

			nanosleep(&ts, NULL);
		}
		post_write(&s0, qa, &s1, 256, i);
		poll_one(s0.cq, "a's WRITE", i);
		CHECK(*dst == i);
	}
	printf("%llu WRITEs to a target that never polls\n", (unsigned long long)(i - 1));
	destroy_pair(qa, qb);
}

struct mem_side {
	struct side *me, *peer;
	struct ibv_qp *qp;
	bool starts;
	uint64_t rounds;
};

/* ib_write_lat's loop: WRITE i (signaled), reap its completion, wait for the peer's
 * WRITE i in memory; the one that starts writes first. */
static void *mem_pingpong(void *arg)
{
	struct mem_side *m = arg;
	volatile uint64_t *mine = (volatile uint64_t *)(m->me->buf + 512);

	for (uint64_t i = 1; i <= m->rounds; i++) {
		uint64_t t0 = now_ns();

		if (!m->starts) {
			while (*mine != i)
				CHECK(!late(t0));
		}
		post_write(m->me, m->qp, m->peer, 512, i);
		poll_one(m->me->cq, "WRITE on memory", i);
		if (m->starts) {
			while (*mine != i) {
				if (late(t0)) {
					fprintf(stderr, "round %llu: the peer's WRITE not landed\n",
						(unsigned long long)i);
					exit(1);
				}
			}
		}
	}
	return NULL;
}

static void write_ping_pong_on_memory(void)
{
	struct mem_side a = { &s0, &s1, NULL, true, 3000 }, b = { &s1, &s0, NULL, false, 3000 };
	pthread_t tb;

	memset(s0.buf + 512, 0, 8);
	memset(s1.buf + 512, 0, 8);
	make_pair(&a.qp, s0.cq, &b.qp, s1.cq);
	CHECK(pthread_create(&tb, NULL, mem_pingpong, &b) == 0);
	mem_pingpong(&a);
	pthread_join(tb, NULL);
	printf("%llu rounds\n", (unsigned long long)a.rounds);
	destroy_pair(a.qp, b.qp);
}

static void no_lost_wakeup_in_event_driven_rounds(void)
{
	struct responder r = { .mode = B_EVENTS };
	struct asker k = { .events = true, .mixed = 8, .pace = true };
	uint64_t t0 = now_ns(), n = 0, batch = 500;
	pthread_t tb;

	make_pair(&k.qa, ecq0, &r.qb, ecq1);
	k.rcq = ecq0;
	r.rcq = ecq1;
	prepost(k.qa, r.qb);
	/* Batches, so that the run stops after RUN_S with b expecting no more. */
	while (n < 20000 && now_ns() - t0 < (uint64_t)RUN_S * 1000000000ull) {
		r.rounds = batch;
		CHECK(pthread_create(&tb, NULL, responder, &r) == 0);
		ask(&k, batch);
		pthread_join(tb, NULL);
		n += batch;
	}
	printf("%llu rounds in %.1f s\n", (unsigned long long)n, (now_ns() - t0) / 1e9);
	destroy_pair(k.qa, r.qb);
}

/* With an argument, only the tests whose name contains it. */
#define RUN_IF(test)                                                                               \
	do {                                                                                       \
		if (argc < 2 || strstr(#test, argv[1]))                                            \
			RUN(test);                                                                 \
	} while (0)

int main(int argc, char **argv)
{
	struct ibv_device **list;
	int ndev;

	alarm(ALARM_S);
	if (!getenv("URNIC_ADDR"))
		setenv("URNIC_ADDR", "127.0.7.1,127.0.7.2", 1);
	list = ibv_get_device_list(&ndev);
	CHECK(list && ndev >= 2);
	side_open(&s0, list[0], 4 * DEPTH, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	side_open(&s1, list[1], 4 * DEPTH, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	ch0 = ibv_create_comp_channel(s0.ctx);
	ch1 = ibv_create_comp_channel(s1.ctx);
	CHECK(ch0 && ch1);
	ecq0 = ibv_create_cq(s0.ctx, 4 * DEPTH, NULL, ch0, 0);
	ecq1 = ibv_create_cq(s1.ctx, 4 * DEPTH, NULL, ch1, 0);
	CHECK(ecq0 && ecq1);

	RUN_IF(app_polls_while_the_engine_thread_naps);
	RUN_IF(the_engine_thread_takes_over_when_the_app_stops_polling);
	RUN_IF(a_write_target_that_never_polls_is_served);
	RUN_IF(write_ping_pong_on_memory);
	RUN_IF(no_lost_wakeup_in_event_driven_rounds);

	CHECK(ibv_destroy_cq(ecq0) == 0);
	CHECK(ibv_destroy_cq(ecq1) == 0);
	CHECK(ibv_destroy_comp_channel(ch0) == 0);
	CHECK(ibv_destroy_comp_channel(ch1) == 0);
	side_close(&s0);
	side_close(&s1);
	ibv_free_device_list(list);
	return 0;
}
