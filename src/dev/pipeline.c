/* SPDX-License-Identifier: MIT */
/*
 * pipeline.c - a pass of the NIC pipeline and who asks for one: an application thread
 * (ibv_poll_cq on an empty CQ, the doorbell of ibv_post_send) or the engine thread
 * (engine_thread.c). handover.h decides which thread runs it; this file runs it, writes
 * the completion channels it made due, and records where the application last called
 * from. See device.h (urnic_dev_progress, urnic_dev_doorbell, urnic_dev_kick).
 */
#include "dev/pipeline.h"
#include "dev/counters_shm.h"
#include "dev/iw_dev.h"
#include "dev/raw_port.h"
#include "dev/trace.h"
#include "engine/raw.h"
#include "engine/roce/roce.h"
#include "engine/uet/uet_rc.h"

#include <sched.h>
#include <string.h>
#include <unistd.h>

void urnic_dev_flush_tx(struct urnic_engine *e)
{
	struct urnic_dev *d = e->hooks.io;

	if (e->tx.n)
		urnic_udp_send(d->udp, &e->tx, e->stats.counters);
	if (urnic_engine_raw_pending(e))
		urnic_dev_raw_send(d);
}

int urnic_dev_direct_write(struct urnic_engine *e, const struct urnic_qp *qp,
			   const struct urnic_direct_note *note, const uint8_t *src, uint32_t len)
{
	struct urnic_dev *d = e->hooks.io;

	return urnic_udp_direct_write(d->udp, qp->attr.peer.ip, qp->attr.dest_qp_num, note, src,
				      len, e->stats.counters);
}

int urnic_dev_direct_read(struct urnic_engine *e, const struct urnic_qp *qp,
			  const struct urnic_direct_note *note, const struct urnic_direct_seg *to,
			  uint32_t nto, bool by_lane)
{
	struct urnic_dev *d = e->hooks.io;

	return urnic_udp_direct_read(d->udp, qp->attr.peer.ip, qp->attr.dest_qp_num, note, to, nto,
				     by_lane, e->stats.counters);
}

bool urnic_dev_direct_ready(struct urnic_engine *e, const struct urnic_qp *qp)
{
	struct urnic_dev *d = e->hooks.io;

	return urnic_udp_direct_ready(d->udp, qp->attr.peer.ip, qp->attr.dest_qp_num);
}

/* The transport's sink: each received RoCE packet goes to the engine's receive entry
 * point. */
static void rx_to_engine(void *ctx, const struct urnic_rx_meta *m, const uint8_t *buf, size_t len)
{
	urnic_roce_rx(ctx, m, buf, len);
}

/* A UET device's sink: each UDP payload that arrived on port 4793 (uet_rc.h). */
static void rx_to_uet(void *ctx, const struct urnic_rx_meta *m, const uint8_t *buf, size_t len)
{
	urnic_uet_rx(ctx, m, buf, len);
}

/*
 * Where this process's application last called in (a post, an empty poll), on any
 * device, and when: an engine thread does not poll on (engine_thread.c,
 * SPIN_LIGHT_PKTS) on that CPU for APP_RECENT_NS after. An application waiting on
 * memory (for a WRITE, with no verbs call) keeps its CPU busy, and the packet that wakes
 * an engine thread is delivered on the sender's CPU, which the scheduler prefers for the
 * woken thread. Polling on there, the engine thread used up its turn beside the spinning
 * application and then waited out the application's: up to a scheduler tick (4 ms here)
 * while the other vCPU idled, and the next packets waited with it
 * (tests/system/verbs_post_streak.c, after_a_pause: 3-3.5 ms a round, 0.2 ms asleep
 * instead). An engine thread that sleeps is woken, and preempts, per packet. Arming a
 * CQ or blocking in ibv_get_cq_event (urnic_dev_app_sleeps) says the application
 * sleeps instead. Refreshed at most every APP_CPU_REFRESH_NS (sched_getcpu is ~20 ns;
 * a post ~100). Best effort, for scheduling only: several application threads share
 * the one record, with relaxed atomics.
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

bool urnic_dev_beside_app(uint64_t now)
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

void urnic_dev_publish_counters(struct urnic_dev *d)
{
	if (!d->shm_counters)
		return;
	memcpy(d->shm_counters, d->eng->stats.counters, sizeof(d->eng->stats.counters));
	((struct urnic_shm_header *)d->shm_counters - 1)->qp_end = d->eng->qpt.end;
}

/* An iWARP device's pass: its sockets' bytes to their QPs, the engine, what the QPs
 * queued to their sockets (iw_dev.h). No UDP, multicast, raw port or QP 1 CM. */
static bool pass_iwarp(struct urnic_dev *d, uint64_t *deadline, bool rx, uint64_t now_ns)
{
	struct urnic_engine *e = d->eng;
	uint64_t app = atomic_load_explicit(&d->app_poll_ns, memory_order_relaxed);
	bool did = false;

	urnic_post_batch_pass(&d->posts);
	if (!now_ns)
		now_ns = urnic_dev_now_ns();
	e->hold.app_polling = !rx || (app && now_ns - app < URNIC_APP_NAP_MAX_NS);
	e->hold.rx_requests = 0;
	e->hold.answers_due = 0;
	if (rx)
		did = urnic_dev_iw_rx(d, now_ns);
	did |= urnic_engine_pass(e, now_ns, deadline);
	did |= urnic_dev_iw_tx(d, now_ns, deadline);
	urnic_dev_notify_cqs(d);
	atomic_store_explicit(&d->last_pass_pkts, 0, memory_order_relaxed);
	if (did)
		urnic_dev_publish_counters(d);
	return did;
}

/* One pass of the NIC pipeline (without the receive if !rx: a doorbell's) at now_ns (0:
 * read the clock). Returns true if it did anything. The caller holds the device lock. */
static bool pass_locked(struct urnic_dev *d, uint64_t *deadline, bool rx, uint64_t now_ns)
{
	struct urnic_engine *e = d->eng;
	uint64_t held;
	bool did = false;

	uint64_t rx0 = e->stats.counters[URNIC_CTR_rx_packets],
		 tx0 = e->stats.counters[URNIC_CTR_tx_packets];
	uint64_t rxn, txn;
	uint64_t app = atomic_load_explicit(&d->app_poll_ns, memory_order_relaxed);

	/* This pass sends what posts left to it (post_batch.h). */
	urnic_post_batch_pass(&d->posts);
	/* A traced device's packets go to the capture too (trace.h): one test per pass. */
	struct urnic_udp_sink sink = { d->kind == URNIC_KIND_UET ? rx_to_uet : rx_to_engine, e,
				       e->stats.counters };

	if (d->iw)
		return pass_iwarp(d, deadline, rx, now_ns);
	if (d->udp->pcap)
		sink = (struct urnic_udp_sink){ urnic_dev_trace_rx, d, e->stats.counters };

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
	/* Beside lanes, work posted since the last pass joins the tx batch before the
	 * receive, whose direct placements copy for tens of microseconds (responder.c)
	 * and send the batch first: UCX's rendezvous SENDs, posted while a copy ran, waited
	 * for the next one, and the peer's CPU idled. */
	if (rx && d->udp->local.on && urnic_engine_progress_posted(e, now_ns))
		did = true;
	if (rx)
		did |= urnic_udp_recv(d->udp, &sink, now_ns,
				      atomic_exchange(&d->forwarded_due, false)) > 0;
	if (rx && d->raw_qps)
		urnic_dev_raw_recv(d, now_ns);
	did |= urnic_engine_pass(e, now_ns, deadline);
	if (d->kind != URNIC_KIND_UET) /* no QP 1 there: cm.c refuses rdma_cm on it */
		urnic_dev_cm_pass(d, now_ns, deadline);
	held = urnic_udp_deadline(d->udp); /* a delayed packet of the faulty wire */
	if (held && (!*deadline || held < *deadline))
		*deadline = held;
	urnic_dev_notify_cqs(d);
	if (e->tx.n || urnic_engine_raw_pending(e)) {
		urnic_dev_flush_tx(e);
		did = true;
	}
	rxn = e->stats.counters[URNIC_CTR_rx_packets] - rx0;
	txn = e->stats.counters[URNIC_CTR_tx_packets] - tx0;
	atomic_store_explicit(&d->last_pass_pkts, (uint32_t)(rxn > txn ? rxn : txn),
			      memory_order_relaxed);
	if (did)
		urnic_dev_publish_counters(d);
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

/* One pass under the device lock, and what it leaves for the others: its deadlines and
 * whether the application awaits something (relaxed: read by the engine thread to
 * choose its sleep, which a kick corrects when it chose wrong). */
static void pass_once(struct urnic_dev *d, bool rx, uint64_t now_ns, bool *did, bool *alone)
{
	struct urnic_engine *e = d->eng;
	uint64_t deadline;
	bool awaits, awaited;

	pthread_mutex_lock(&d->lock);
	*did |= pass_locked(d, &deadline, rx, now_ns);
	atomic_store_explicit(&d->last_deadline, deadline, memory_order_relaxed);
	atomic_store_explicit(&d->last_kick_deadline, kick_deadline(e), memory_order_relaxed);
	awaits = urnic_engine_app_awaits(e);
	awaited = atomic_exchange_explicit(&d->last_awaits, awaits, memory_order_relaxed);
	/* This pass gave the application the last completion it waited for, on a QP whose
	 * peer answers, and no answer came with it: see progress(). */
	if (alone && awaited && !awaits && e->hold.answers_due && !e->hold.rx_requests)
		*alone = true;
	pthread_mutex_unlock(&d->lock);
}

enum urnic_pipe_claim urnic_dev_pass(struct urnic_dev *d, bool engine, bool must, bool rx,
				     bool *did, bool *alone, uint64_t now_ns)
{
	enum urnic_pipe_claim c = urnic_handover_claim(&d->ho, engine, must);
	bool ran = false;

	if (c != URNIC_CLAIM_RUN)
		return c;
	/* The lock is taken after the claim, so only a control verb can hold it here. A
	 * pass asked for again runs later: it reads the socket and the clock. Leaving
	 * after unlocking: a pass asked for in between is ours to run (handover.c). */
	do {
		pass_once(d, rx || ran, ran ? 0 : now_ns, did, alone);
		ran = true;
	} while (urnic_handover_leave(&d->ho) > 0);
	return URNIC_CLAIM_RUN;
}

/* now_ns: the caller's clock reading (0: none). Reading the clock costs ~60 ns on this
 * VM (kvm-clock), ~10 % of a polling turn: each caller reads it once per turn. */
static bool progress(struct urnic_dev *d, bool polling, bool rx, uint64_t now_ns)
{
	uint64_t deadline, wake_ns;
	bool did = false, alone = false;
	enum urnic_pipe_claim c;

	if (polling) {
		if (!now_ns)
			now_ns = urnic_dev_now_ns();
		atomic_store_explicit(&d->app_poll_ns, now_ns, memory_order_relaxed);
		app_here(now_ns);
	}
	c = urnic_dev_pass(d, false, !polling, rx, &did, &alone, now_ns);
	if (c == URNIC_CLAIM_OFF)
		return false;
	if (c != URNIC_CLAIM_RUN)
		return c == URNIC_CLAIM_HANDED; /* the thread in a pass runs ours */
	/* The ACK of a ping-pong came alone: the peer held it for its answer longer than
	 * the hold allows (its application was off the CPU), and the answer follows. This
	 * application has its completion and nothing else to poll for; it may well wait
	 * for the answer by spinning on memory (ib_write_lat), where only the engine
	 * thread can take the answer in. A thread napping without the socket
	 * (URNIC_APP_NAP_MAX_NS) took up to 1 ms to do so (~2 % of ib_write_lat's rounds
	 * here); it is told to watch the socket, and woken if it already naps without it
	 * (handover.c, urnic_handover_settle). */
	if (alone && urnic_handover_ask_watch(&d->ho))
		urnic_dev_kick(d);
	/* A sleeping engine thread must learn of a timer armed here (retransmission must
	 * not depend on the application polling again). */
	deadline = atomic_load_explicit(&d->last_kick_deadline, memory_order_relaxed);
	if (deadline && urnic_handover_sleeping(&d->ho, &wake_ns) && deadline < wake_ns)
		urnic_dev_kick(d);
	/* A doorbell's pass saw the new work: what it could not send yet waits for ACKs,
	 * which a polling application or the engine thread takes in; no wake-up needed. */
	return did || !polling;
}

bool urnic_dev_progress(struct urnic_dev *d, bool polling)
{
	return progress(d, polling, true, 0);
}

/* Whether the post that makes n posts since the last poll leaves its work to the next
 * pass (post_batch.h). */
static bool post_defers(struct urnic_dev *d, uint32_t n, uint64_t now)
{
	uint64_t wake_ns;

	if (!urnic_post_batch_defers(&d->posts, n, now, urnic_handover_started(&d->ho)))
		return false;
	/* A sleeping engine thread must wake within URNIC_APP_NAP_MAX_NS (it does after
	 * the application polled); if it sleeps longer, this post sends: waking it would
	 * cost more than the send (a system call, a wake-up on a CPU the application may
	 * be spinning on: see APP_RECENT_NS). The work is in the queue: either its last
	 * pass before sleeping sees it, or this sees it waiting (urnic_handover_must_ring). */
	if (urnic_handover_must_ring(&d->ho, &wake_ns) && wake_ns > now + URNIC_APP_NAP_MAX_NS)
		return false;
	return true;
}

bool urnic_dev_doorbell(struct urnic_dev *d, bool small)
{
	uint32_t n = urnic_post_batch_post(&d->posts);
	uint64_t now = urnic_dev_now_ns();
	bool ret;

	app_here(now);
	if (small && post_defers(d, n, now)) {
		/* Left to the next pass: this post took ~0.1 us, `now` is when it ends. */
		urnic_post_batch_post_done(&d->posts, now);
		return true;
	}
	ret = progress(d, false, false, now);
	urnic_post_batch_post_done(&d->posts, urnic_dev_now_ns());
	return ret;
}

void urnic_dev_app_idle(struct urnic_dev *d)
{
	atomic_store(&d->app_poll_ns, 0);
	urnic_dev_app_sleeps();
	urnic_dev_polled(d);
	urnic_dev_kick(d); /* its pass also sends what posts left (post_batch.h) */
}
