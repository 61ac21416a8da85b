/* SPDX-License-Identifier: MIT */
/*
 * pipeline.c - who runs the NIC pipeline: an application thread's pass (ibv_poll_cq,
 * a doorbell), the engine thread, and how they hand the socket and the lock to each
 * other. See device.h (urnic_dev_progress, urnic_dev_doorbell, urnic_dev_kick).
 */
#include "dev/device.h"
#include "dev/counters_shm.h"
#include "dev/spin.h"
#include "engine/roce/roce.h"

#include <poll.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void urnic_dev_flush_tx(struct urnic_engine *e)
{
	struct urnic_dev *d = e->hooks.io;

	urnic_udp_send(d->udp, &e->tx, e->stats.counters);
}

/* The transport's sink: each received RoCE packet goes to the engine's receive entry
 * point. */
static void rx_to_engine(void *ctx, const struct urnic_rx_meta *m, const uint8_t *buf, size_t len)
{
	urnic_roce_rx(ctx, m, buf, len);
}

/* How long after an application thread last drove the pipeline (ibv_poll_cq,
 * ibv_post_send) the engine thread leaves the socket to it and sleeps on the doorbell
 * and timers only: two threads racing for each packet on two vCPUs cost more than
 * either alone. ibv_req_notify_cq ends the window at once (urnic_dev_app_idle), and
 * so does the application having nothing left to poll for (no send outstanding, no
 * receive posted: urnic_engine_app_awaits), as when it waits for a peer's RDMA WRITE
 * by spinning on memory: then only the engine thread can take the packet in. A pass
 * that leaves the application so, on an ACK that came without the peer's answer, wakes
 * a napping engine thread to watch the socket (progress(), watch_due). */
#define APP_ACTIVE_NS 50000ull
/* While the application keeps polling, the engine thread naps for APP_ACTIVE_NS, then
 * twice as long each time it finds the application still at it, up to
 * URNIC_APP_NAP_MAX_NS (device.h). */
/* After its last work the engine thread polls on for spin_ns (URNIC_SPIN_US, default
 * URNIC_DEFAULT_SPIN_NS; grown to cover a request/response peer's gaps, spin.h) before
 * it sleeps, but only while it owns the socket (no application polling: two spinning
 * threads per process on two vCPUs took the CPU the applications needed) and while the
 * traffic is light, no pass having received or sent more than SPIN_LIGHT_PKTS packets
 * since it last slept. A request/response peer (the READ responder of ib_read_lat, an
 * event-driven ibv_rc_pingpong) then finds it awake instead of paying a wake-up on the
 * other vCPU (~30 us here); a bulk stream keeps
 * the sleeping receiver, whose wake-up lets a large batch gather (polling, it took the
 * packets a few at a time and ib_write_bw halved), and the sleeping sender, whose
 * passes find a few ACKs each (spinning for them, it took a quarter of a vCPU from
 * the peer and the application). Nor on the CPU the application last called from
 * (APP_RECENT_NS). */
#define SPIN_LIGHT_PKTS 4
/* The engine thread's passes read the share socket (packets other processes on the
 * address forwarded: share.h) when its sleep was ended by one, else at most this
 * often: forwarding is the fallback for a steering miss, and reading an empty socket
 * in every pass was a quarter of a bulk receiver's system calls. */
#define SHARE_READ_NS 100000ull
/* The engine thread found a doorbell's pass running (no application polling): look
 * again this soon. */
#define BUSY_RETRY_NS 20000ull
/* ... and twice as long each time it finds another one running, up to this. */
#define BUSY_RETRY_MAX_NS 200000ull

/*
 * Posts in a row are sent together. An application that fills its send queue between
 * two polls (ib_write_bw: ~100 posts after each completion it reaps) paid a pass, and
 * a sendmmsg of ~5 us, per message: 0.18 Mpps of 8-byte WRITEs. A post of a small
 * request (a few packets: post.c) now leaves it in the send queue for the next pass
 * when it is in the middle of such a streak: it follows another post by less than
 * POST_STREAK_NS with no ibv_poll_cq between, the streak before this one was at least
 * POST_STREAK_MIN posts long, and this one is not among the last POST_STREAK_TAIL
 * posts the streak before predicts. The post after POST_BATCH_MAX such posts, the
 * streak's tail, the next empty poll or a pass of the engine thread sends them
 * together, GSO runs of equal packets (~1.1 Mpps). A ping-pong, whose streaks are one
 * post long, always sends at once, and so does an application that posts a few
 * requests and then waits on memory without polling. Should a streak stop short of
 * what the last one predicted and the application then only watch memory, the rest
 * leaves with the engine thread's next pass: it sleeps at most URNIC_APP_NAP_MAX_NS
 * after the application polled (~60 us more here, tests/system/verbs_post_streak.c),
 * and a post that finds it asleep for longer sends at once instead (nothing answers
 * UC or UD, so no ACK would wake it).
 */
#define POST_STREAK_NS 5000ull
#define POST_STREAK_MIN 8u
#define POST_STREAK_TAIL 2u
#define POST_BATCH_MAX 32u

/*
 * Where this process's application last called in (a post, an empty poll), on any
 * device, and when: an engine thread does not poll on (SPIN_LIGHT_PKTS) on that CPU
 * for APP_RECENT_NS after. An application waiting on memory (for a WRITE, with no
 * verbs call) keeps its CPU busy, and the packet that wakes an engine thread is
 * delivered on the sender's CPU, which the scheduler prefers for the woken thread.
 * Polling on there, the engine thread used up its turn beside the spinning
 * application and then waited out the application's: up to a scheduler tick (4 ms
 * here) while the other vCPU idled, and the next packets waited with it
 * (tests/system/verbs_post_streak.c, after_a_pause: 3-3.5 ms a round, 0.2 ms asleep
 * instead). An engine thread that sleeps is woken, and preempts, per packet. Arming a
 * CQ or blocking in ibv_get_cq_event (urnic_dev_app_sleeps) says the application
 * sleeps instead. Refreshed at most every APP_CPU_REFRESH_NS (sched_getcpu is ~20 ns;
 * a post ~100). Best effort, for scheduling only: several application threads share
 * the one record.
 */
#define APP_RECENT_NS 10000000ull
#define APP_CPU_REFRESH_NS 10000ull
static _Atomic int app_cpu = -1;
static _Atomic uint64_t app_seen_ns;

static void app_here(uint64_t now)
{
	if (now - atomic_load_explicit(&app_seen_ns, memory_order_relaxed) < APP_CPU_REFRESH_NS &&
	    atomic_load_explicit(&app_cpu, memory_order_relaxed) >= 0)
		return;
	atomic_store_explicit(&app_cpu, sched_getcpu(), memory_order_relaxed);
	atomic_store_explicit(&app_seen_ns, now, memory_order_relaxed);
}

void urnic_dev_app_sleeps(void)
{
	atomic_store_explicit(&app_cpu, -1, memory_order_relaxed);
}

/* Whether the calling engine thread runs where the application may be busy. */
static bool beside_app(uint64_t now)
{
	int cpu = atomic_load_explicit(&app_cpu, memory_order_relaxed);

	return cpu >= 0 &&
	       now - atomic_load_explicit(&app_seen_ns, memory_order_relaxed) < APP_RECENT_NS &&
	       sched_getcpu() == cpu;
}

/*
 * The completion channels a pass (or a control verb's call into the engine) made due:
 * queue/ makes no system call, so an armed CQ that got its completion was only put on
 * the device's list (queue/wq.h, urnic_cq_due), and its channel is written here, before
 * the pass's packets leave, as it was when the write came with the completion. Under
 * the device lock: ibv_destroy_cq detaches a channel under it, so the fd is still the
 * channel's.
 */
void urnic_dev_notify_cqs(struct urnic_dev *d)
{
	struct urnic_cq *cq;
	uint32_t n;

	while ((cq = urnic_cq_due_pop(&d->cq_due, &n))) {
		void *cookie = cq->event_cookie;

		for (; n && cq->event_fd >= 0; n--) {
			ssize_t w = write(cq->event_fd, &cookie, sizeof(cookie));

			/* A full pipe means the consumer already has events to read. */
			(void)w;
		}
	}
}

/* One pass of the NIC pipeline (without the receive if !rx: a doorbell's) at now_ns (0:
 * read the clock). Returns true if it did anything. The caller holds the device lock. */
static bool pass_locked(struct urnic_dev *d, uint64_t *deadline, bool rx, uint64_t now_ns)
{
	struct urnic_engine *e = d->eng;
	uint64_t held;
	bool did = false;

	uint64_t rx0 = e->stats.counters[URNIC_CTR_rx_packets], tx0 = e->stats.counters[URNIC_CTR_tx_packets];
	uint64_t rxn, txn;
	uint64_t app = atomic_load_explicit(&d->app_poll_ns, memory_order_relaxed);

	/* This pass sends what posts left to it (POST_STREAK_NS). */
	if (atomic_load_explicit(&d->posts_deferred, memory_order_relaxed))
		atomic_store_explicit(&d->posts_deferred, 0, memory_order_relaxed);
	struct urnic_udp_sink sink = { rx_to_engine, e, e->stats.counters };

	if (!now_ns)
		now_ns = urnic_dev_now_ns();
	/* ACKs and UC completions may wait for an answer while the application polls
	 * (it armed no CQ since, urnic_dev_app_idle) or did so within the engine thread's
	 * longest nap, and in a doorbell's pass (!rx), run by an application thread that
	 * just posted: it polls for the completion next, unless it armed the CQ, which the
	 * engine checks. A UC requester whose completions were never held never saw its
	 * application poll an empty CQ, so it would never have held one. */
	e->hold.app_polling = !rx || (app && now_ns - app < URNIC_APP_NAP_MAX_NS);
	e->hold.rx_requests = 0;
	e->hold.answers_due = 0;
	if (rx)
		did = urnic_udp_recv(d->udp, &sink, now_ns,
				     atomic_exchange(&d->forwarded_due, false)) > 0;
	did |= urnic_engine_pass(e, now_ns, deadline);
	held = urnic_udp_deadline(d->udp); /* a delayed packet of the faulty wire */
	if (held && (!*deadline || held < *deadline))
		*deadline = held;
	urnic_dev_notify_cqs(d);
	if (e->tx.n) {
		urnic_dev_flush_tx(e);
		did = true;
	}
	rxn = e->stats.counters[URNIC_CTR_rx_packets] - rx0;
	txn = e->stats.counters[URNIC_CTR_tx_packets] - tx0;
	atomic_store_explicit(&d->last_pass_pkts, (uint32_t)(rxn > txn ? rxn : txn),
			      memory_order_relaxed);
	if (did && d->shm_counters) {
		memcpy(d->shm_counters, e->stats.counters, sizeof(e->stats.counters));
		((struct urnic_shm_header *)d->shm_counters - 1)->qp_end = e->qpt.end;
	}
	return did;
}


/* The deadline a sleeping engine thread must be woken for: the earliest retransmission
 * or RNR timer, or a held ACK's (responder.c, rc_ack_held) plus URNIC_APP_NAP_MAX_NS.
 * A held ACK is a latency optimisation, not a protocol timer: while an application
 * polls, it sends the ACK itself when the hold expires, else the napping engine thread
 * does on waking; waking that thread on every ping-pong round (an eventfd write and a
 * wake-up on the other CPU) would cost what holding the ACK saves. The engine is told
 * the slack (ack_hold_slack_ns) and holds only where the QP's timeout leaves room. */
static uint64_t kick_deadline(const struct urnic_engine *e)
{
	uint64_t hard = e->timers.deadline, soft = e->hold.deadline;

	if (soft)
		soft += URNIC_APP_NAP_MAX_NS;
	return !hard || (soft && soft < hard) ? soft : hard;
}

/*
 * Passes are combined, never waited for. A thread that must have a pass run (the
 * engine thread, a doorbell) leaves a request, pass_wanted, before it tries the lock;
 * whoever holds the lock runs another pass before it leaves if it finds one. So no
 * thread sleeps on the device lock in the data path: an engine thread blocked behind a
 * polling application cost the ib_write_bw client 0.9 futex calls per 64 KiB message
 * and a sixth of its CPU (37.8 -> 31.1 us per message once combined). An opportunistic
 * caller (an application polling an empty CQ) only tries the lock. Returns false if this
 * thread ran no pass (another one has the lock and, if `must`, will run the pass asked
 * for). Each pass leaves its timer deadline
 * and urnic_engine_app_awaits() in last_deadline / last_awaits. *alone (the engine
 * thread passes NULL: it decides by itself) is set when a pass left the application's
 * answer to come without it (progress()).
 */
static bool pass_combined(struct urnic_dev *d, bool must, bool rx, bool *did, bool *alone,
			  uint64_t now_ns)
{
	bool ran = false, locked;

	if (must)
		atomic_store(&d->pass_wanted, true);
	locked = pthread_mutex_trylock(&d->lock) == 0;
	while (locked) {
		struct urnic_engine *e = d->eng;
		uint64_t deadline;
		bool awaits, awaited;

		atomic_store(&d->pass_wanted, false);
		/* A pass asked for again runs later: it reads the clock. */
		*did |= pass_locked(d, &deadline, rx || ran, ran ? 0 : now_ns);
		atomic_store_explicit(&d->last_deadline, deadline, memory_order_relaxed);
		atomic_store_explicit(&d->last_kick_deadline, kick_deadline(e),
				      memory_order_relaxed);
		awaits = urnic_engine_app_awaits(e);
		awaited = atomic_exchange_explicit(&d->last_awaits, awaits, memory_order_relaxed);
		/* This pass gave the application the last completion it waited for, on a
		 * QP whose peer answers, and no answer came with it: see progress(). */
		if (alone && awaited && !awaits && e->hold.answers_due && !e->hold.rx_requests)
			*alone = true;
		pthread_mutex_unlock(&d->lock);
		ran = true;
		locked = atomic_load(&d->pass_wanted) && pthread_mutex_trylock(&d->lock) == 0;
	}
	return ran;
}

/* now_ns: the caller's clock reading (0: none). Reading the clock costs ~60 ns on this
 * VM (kvm-clock), ~10 % of a polling turn: each caller reads it once per turn. */
static bool progress(struct urnic_dev *d, bool polling, bool rx, uint64_t now_ns)
{
	uint64_t deadline;
	bool did = false, alone = false;

	if (polling) {
		if (!now_ns)
			now_ns = urnic_dev_now_ns();
		atomic_store_explicit(&d->app_poll_ns, now_ns, memory_order_relaxed);
		app_here(now_ns);
	}
	if (!d->running)
		return false;
	if (!pass_combined(d, !polling, rx, &did, &alone, now_ns))
		return !polling; /* handed to the thread in a pass (pass_wanted) */
	/* The ACK of a ping-pong came alone: the peer held it for its answer longer than
	 * the hold allows (its application was off the CPU), and the answer follows. This
	 * application has its completion and nothing else to poll for; it may well wait
	 * for the answer by spinning on memory (ib_write_lat), where only the engine
	 * thread can take the answer in. A thread napping without the socket
	 * (URNIC_APP_NAP_MAX_NS) took up to 1 ms to do so (~2 % of ib_write_lat's rounds
	 * here); it is told to watch the socket, and woken if it already sleeps without
	 * it. Paired with the engine thread's store of `blind` and load of `watch_due`,
	 * both seq_cst. */
	if (alone) {
		atomic_store(&d->watch_due, true);
		if (atomic_load(&d->blind))
			urnic_dev_kick(d);
	}
	/* A sleeping engine thread must learn of a timer armed here (retransmission
	 * must not depend on the application polling again). */
	deadline = atomic_load_explicit(&d->last_kick_deadline, memory_order_relaxed);
	if (deadline && atomic_load(&d->sleeping)) {
		uint64_t slept_until = atomic_load(&d->sleep_deadline);

		if (slept_until == 0 || deadline < slept_until)
			urnic_dev_kick(d);
	}
	/* A doorbell's pass saw the new work: what it could not send yet waits for ACKs,
	 * which a polling application or the engine thread takes in; no wake-up needed. */
	return did || !polling;
}

bool urnic_dev_progress(struct urnic_dev *d, bool polling)
{
	return progress(d, polling, true, 0);
}

/* Whether the post that makes n posts since the last poll leaves its work to the next
 * pass (POST_STREAK_NS). */
static bool post_defers(struct urnic_dev *d, uint32_t n, uint64_t now)
{
	uint32_t before = atomic_load_explicit(&d->last_streak, memory_order_relaxed);
	uint64_t sleeps_until;

	if (!d->running || !d->post_batch || n < 2 || before < POST_STREAK_MIN ||
	    n + POST_STREAK_TAIL > before ||
	    now - atomic_load_explicit(&d->last_post_ns, memory_order_relaxed) >= POST_STREAK_NS ||
	    atomic_fetch_add_explicit(&d->posts_deferred, 1, memory_order_relaxed) + 1 >=
		    POST_BATCH_MAX)
		return false;
	/* A sleeping engine thread must wake within URNIC_APP_NAP_MAX_NS (it does after
	 * the application polled); if it sleeps longer, this post sends: waking it would
	 * cost more than the send (a system call, a wake-up on a CPU the application may
	 * be spinning on: see APP_RECENT_NS). The work is in the queue: either its last
	 * pass before sleeping sees it, or this sees it asleep (seq_cst, as
	 * urnic_dev_kick). */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&d->sleeping, memory_order_relaxed)) {
		sleeps_until = atomic_load(&d->sleep_deadline);
		if (!sleeps_until || sleeps_until > now + URNIC_APP_NAP_MAX_NS)
			return false;
	}
	return true;
}

bool urnic_dev_doorbell(struct urnic_dev *d, bool small)
{
	uint32_t n = atomic_load_explicit(&d->streak, memory_order_relaxed) + 1;
	uint64_t now = urnic_dev_now_ns();
	bool ret;

	atomic_store_explicit(&d->streak, n, memory_order_relaxed);
	atomic_store_explicit(&d->posting, true, memory_order_relaxed);
	app_here(now);
	if (small && post_defers(d, n, now)) {
		/* Left to the next pass: this post took ~0.1 us, `now` is when it ends. */
		atomic_store_explicit(&d->last_post_ns, now, memory_order_relaxed);
		return true;
	}
	ret = progress(d, false, false, now);
	atomic_store_explicit(&d->last_post_ns, urnic_dev_now_ns(), memory_order_relaxed);
	return ret;
}

void *urnic_dev_engine_thread(void *arg)
{
	struct urnic_dev *d = arg;
	uint64_t idle_since = urnic_dev_now_ns();
	uint64_t nap = APP_ACTIVE_NS, busy_nap = BUSY_RETRY_NS, share_read_ns = 0;
	bool share_woke = false;
	uint32_t pkts_most = 0; /* the most packets a pass received or sent since the last sleep */
	uint64_t spin = d->spin_ns, slept_at = 0;
	bool light = false;

	while (!atomic_load(&d->stop)) {
		/* The doorbell and the share socket are watched in every sleep (only this
		 * thread's passes read forwarded packets: forwarded_due, SHARE_READ_NS),
		 * the address's and the groups' sockets when the receive is this
		 * thread's job. */
		struct pollfd fds[5 + URNIC_MAX_MCAST_GRP] = {
			{ .fd = d->wake_fd, .events = POLLIN },
			{ .fd = d->udp->share.fd, .events = POLLIN },
		};
		int rx_fds[3], nrx = urnic_udp_rx_fds(d->udp, rx_fds);
		bool woke_pkt = false;
		uint64_t deadline, now, app, wait_ns = 0;
		struct timespec ts;
		nfds_t nfds = 2;
		uint64_t drain;
		bool did = false, ran, app_polls, blind;

		/* The address's socket (or its packet rings first), then the joined
		 * multicast groups' sockets. */
		for (int i = 0; i < nrx; i++)
			fds[nfds++] = (struct pollfd){ .fd = rx_fds[i], .events = POLLIN };
		for (int g = 0; g < URNIC_MAX_MCAST_GRP; g++) {
			int gfd = atomic_load_explicit(&d->udp->groups[g].fd, memory_order_relaxed);

			if (gfd >= 0)
				fds[nfds++] = (struct pollfd){ .fd = gfd, .events = POLLIN };
		}
		if (share_woke || urnic_dev_now_ns() - share_read_ns >= SHARE_READ_NS) {
			atomic_store(&d->forwarded_due, true);
			share_read_ns = urnic_dev_now_ns();
			share_woke = false;
		}
		ran = pass_combined(d, true, true, &did, NULL, 0);
		if (did) {
			uint32_t got = atomic_load_explicit(&d->last_pass_pkts, memory_order_relaxed);

			idle_since = urnic_dev_now_ns();
			if (got > pkts_most)
				pkts_most = got;
			continue;
		}
		now = urnic_dev_now_ns();
		app = atomic_load(&d->app_poll_ns);
		app_polls = app && now - app < APP_ACTIVE_NS;
		/* Poll on while the socket is ours and the traffic is light: see SPIN_LIGHT_PKTS.
		 * Not while an application thread holds the pipeline (ran: false): its
		 * passes run ours (pass_wanted), and spinning for the lock took the CPU the
		 * application's sends needed. */
		if (ran && !app_polls && pkts_most <= SPIN_LIGHT_PKTS &&
		    now - idle_since < spin && !beside_app(now))
			continue;
		light = pkts_most <= SPIN_LIGHT_PKTS;
		pkts_most = 0;
		/* Going to sleep: announce it, then look once more, so that a doorbell
		 * rung between the last pass and now is not missed (the poster checks
		 * `sleeping` after publishing its work, urnic_dev_kick()). */
		atomic_store(&d->sleeping, 1);
		ran = pass_combined(d, true, true, &did, NULL, 0);
		if (did) {
			atomic_store(&d->sleeping, 0);
			idle_since = urnic_dev_now_ns();
			continue;
		}
		if (ran)
			busy_nap = BUSY_RETRY_NS;
		/* Not ran: an application thread is in a pass and runs ours after it. */
		deadline = atomic_load_explicit(&d->last_deadline, memory_order_relaxed);
		now = urnic_dev_now_ns();
		if (deadline)
			wait_ns = deadline > now ? deadline - now : 1;
		/* Without the socket while an application polls it (and awaits something)
		 * or runs a pass, unless an application's pass asked us to watch it
		 * (watch_due, see progress()), before or after we say so here. */
		blind = !ran ||
			(app_polls && atomic_load_explicit(&d->last_awaits, memory_order_relaxed));
		if (blind) {
			atomic_store(&d->blind, true);
			if (atomic_exchange(&d->watch_due, false)) {
				atomic_store(&d->blind, false);
				blind = false;
			}
		}
		if (blind && app_polls) {
			nfds = 2; /* an application is polling: the socket is its job */
			if (!wait_ns || nap < wait_ns)
				wait_ns = nap;
			nap = nap * 2 < URNIC_APP_NAP_MAX_NS ? nap * 2 : URNIC_APP_NAP_MAX_NS;
		} else {
			nap = APP_ACTIVE_NS;
			if (blind) { /* a doorbell's pass: look again soon */
				nfds = 2;
				if (!wait_ns || busy_nap < wait_ns)
					wait_ns = busy_nap;
				busy_nap = busy_nap * 2 < BUSY_RETRY_MAX_NS ? busy_nap * 2
									 : BUSY_RETRY_MAX_NS;
			}
		}
		/* Publish when we wake, then look at the deadline once more: a pass that
		 * ran after ours either sees this (and kicks us if it needs us sooner) or
		 * left its deadline for us to see here. */
		atomic_store(&d->sleep_deadline, wait_ns ? now + wait_ns : 0);
		deadline = atomic_load(&d->last_deadline);
		if (deadline && (!wait_ns || deadline < now + wait_ns))
			wait_ns = deadline > now ? deadline - now : 1;
		ts.tv_sec = (time_t)(wait_ns / 1000000000ull);
		ts.tv_nsec = (long)(wait_ns % 1000000000ull);
		slept_at = urnic_dev_now_ns();
		ppoll(fds, nfds, wait_ns ? &ts : NULL, NULL);
		atomic_store(&d->sleep_deadline, UINT64_MAX); /* next sleep's: not chosen yet */
		atomic_store(&d->sleeping, 0);
		atomic_store(&d->blind, false);
		for (nfds_t i = 2; i < 2 + (nfds_t)nrx && i < nfds; i++)
			woke_pkt |= fds[i].revents & POLLIN;
		/* A packet soon after a spin ran out: spin longer next time (spin.h). */
		spin = urnic_spin_next(spin, d->spin_ns, urnic_dev_now_ns() - slept_at,
				       light && woke_pkt
					       ? URNIC_WOKE_PACKET
				       : fds[0].revents & POLLIN ? URNIC_WOKE_DOORBELL
								 : URNIC_WOKE_OTHER);
		share_woke = fds[1].revents & POLLIN;
		if (fds[0].revents & POLLIN) {
			if (read(d->wake_fd, &drain, sizeof(drain)) < 0)
				drain = 0;
		}
		idle_since = urnic_dev_now_ns();
	}
	return NULL;
}

void urnic_dev_app_idle(struct urnic_dev *d)
{
	atomic_store(&d->app_poll_ns, 0);
	urnic_dev_app_sleeps();
	urnic_dev_polled(d);
	urnic_dev_kick(d); /* its pass also sends what posts left (POST_STREAK_NS) */
}
