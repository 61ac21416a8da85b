/* SPDX-License-Identifier: MIT */
/*
 * engine_thread.c - a device's engine thread: the software NIC that completes a
 * one-sided WRITE or READ without the target's CPU doing anything. It runs passes while
 * there is work, polls on a while after light traffic, then sleeps in ppoll on its
 * doorbell (an eventfd), the address's sockets and its next timer; while an application
 * thread drives the pipeline it naps on the doorbell only (an iWARP device's sockets are
 * one epoll fd, iw_dev.h). Its states, and how others
 * wake it: handover.h. What a pass is: pipeline.c.
 * Context: one per started device, created and joined by device.c.
 */
#include "dev/iw_dev.h"
#include "dev/pipeline.h"
#include "dev/raw_port.h"
#include "dev/spin.h"

#include <poll.h>
#include <time.h>
#include <unistd.h>

/* How long after an application thread last drove the pipeline (ibv_poll_cq,
 * ibv_post_send) the engine thread leaves the socket to it and sleeps on the doorbell
 * and timers only: two threads racing for each packet on two vCPUs cost more than
 * either alone. ibv_req_notify_cq ends the window at once (urnic_dev_app_idle), and
 * so does the application having nothing left to poll for (no send outstanding, no
 * receive posted: urnic_engine_app_awaits), as when it waits for a peer's RDMA WRITE
 * by spinning on memory: then only the engine thread can take the packet in. A pass
 * that leaves the application so, on an ACK that came without the peer's answer, wakes
 * a napping engine thread to watch the socket (pipeline.c, progress).
 * While the application keeps polling, the engine thread naps for APP_ACTIVE_NS, then
 * twice as long each time it finds the application still at it, up to
 * URNIC_APP_NAP_MAX_NS (device.h). */
#define APP_ACTIVE_NS 50000ull
/* After its last work the engine thread polls on for spin_ns (URNIC_SPIN_US, default
 * URNIC_DEFAULT_SPIN_NS; grown to cover a request/response peer's gaps, spin.h) before
 * it sleeps, but only while it owns the socket (no application polling: two spinning
 * threads per process on two vCPUs took the CPU the applications needed) and while the
 * traffic is light, no pass having received or sent more than SPIN_LIGHT_PKTS packets
 * since it last slept. A request/response peer (the READ responder of ib_read_lat, an
 * event-driven ibv_rc_pingpong) then finds it awake instead of paying a wake-up on the
 * other vCPU (~30 us here); a bulk stream keeps the sleeping receiver, whose wake-up
 * lets a large batch gather (polling, it took the packets a few at a time and
 * ib_write_bw halved), and the sleeping sender, whose passes find a few ACKs each
 * (spinning for them, it took a quarter of a vCPU from the peer and the application).
 * Nor on the CPU the application last called from (pipeline.c, APP_RECENT_NS). */
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

enum { WAKE_FD, SHARE_FD, FIRST_RX_FD };

/* The engine thread's own state between its passes and sleeps. */
struct engine_loop {
	struct urnic_dev *d;
	uint64_t idle_since;	/* end of the last pass that did anything, or of a sleep */
	uint64_t nap;		/* the next nap while an application polls */
	uint64_t busy_nap;	/* the next nap after finding another thread in a pass */
	uint64_t share_read_ns; /* when a pass last read the share socket */
	bool share_woke;	/* the last sleep ended on the share socket */
	uint32_t pkts_most;	/* the most packets a pass received or sent since the last sleep */
	uint64_t spin;		/* the current polling window (spin.h) */
	bool light;		/* the traffic before this sleep was light */
	/* The doorbell and the share socket, then the address's sockets (or its packet
	 * rings first), then the joined multicast groups' sockets. */
	struct pollfd fds[FIRST_RX_FD + URNIC_UDP_RX_FDS + URNIC_MAX_MCAST_GRP + 1];
	int nrx;
};

/* The fds a sleep may watch; returns how many. The doorbell and the share socket are
 * watched in every sleep (only this thread's passes read forwarded packets), the
 * address's and the groups' sockets when the receive is this thread's job. */
static nfds_t watch_list(struct engine_loop *l)
{
	struct urnic_dev *d = l->d;
	int rx_fds[URNIC_UDP_RX_FDS];
	nfds_t n = FIRST_RX_FD;

	l->fds[WAKE_FD] = (struct pollfd){ .fd = d->wake_fd, .events = POLLIN };
	if (d->iw) { /* iWARP: no UDP sockets; its connections' epoll set (iw_dev.h) */
		l->fds[SHARE_FD] = (struct pollfd){ .fd = -1 };
		l->fds[n++] = (struct pollfd){ .fd = urnic_dev_iw_fd(d), .events = POLLIN };
		l->nrx = 1;
		return n;
	}
	l->fds[SHARE_FD] = (struct pollfd){ .fd = d->udp->share.fd, .events = POLLIN };
	l->nrx = urnic_udp_rx_fds(d->udp, rx_fds);
	for (int i = 0; i < l->nrx; i++)
		l->fds[n++] = (struct pollfd){ .fd = rx_fds[i], .events = POLLIN };
	for (int g = 0; g < URNIC_MAX_MCAST_GRP; g++) {
		int gfd = atomic_load_explicit(&d->udp->groups[g].fd, memory_order_relaxed);

		if (gfd >= 0)
			l->fds[n++] = (struct pollfd){ .fd = gfd, .events = POLLIN };
	}
	if (urnic_dev_raw_fd(d) >= 0) /* raw packet QPs' frames */
		l->fds[n++] = (struct pollfd){ .fd = urnic_dev_raw_fd(d), .events = POLLIN };
	return n;
}

/* The next pass reads the share socket: after a sleep it ended, else every
 * SHARE_READ_NS. A request to whichever thread runs that pass (forwarded_due). */
static void ask_forwarded(struct engine_loop *l)
{
	if (l->share_woke || urnic_dev_now_ns() - l->share_read_ns >= SHARE_READ_NS) {
		atomic_store(&l->d->forwarded_due, true);
		l->share_read_ns = urnic_dev_now_ns();
		l->share_woke = false;
	}
}

/* Poll on instead of sleeping: the socket is ours (ran: not while an application thread
 * holds the pipeline, whose passes run ours; spinning for it took the CPU the
 * application's sends needed), no application polls, the traffic is light and the
 * window is open (SPIN_LIGHT_PKTS). */
static bool polls_on(const struct engine_loop *l, bool ran, bool app_polls, uint64_t now)
{
	return ran && !app_polls && l->pkts_most <= SPIN_LIGHT_PKTS &&
	       now - l->idle_since < l->spin && !urnic_dev_beside_app(now);
}

/* How long to sleep, and on how many fds, in the state settle chose, given the pass's
 * deadline (0: none). Blind while an application polls: naps growing to
 * URNIC_APP_NAP_MAX_NS; blind behind a doorbell's pass: BUSY_RETRY_NS growing. */
static uint64_t choose_wait(struct engine_loop *l, enum urnic_eng_state s, bool app_polls,
			    uint64_t deadline, uint64_t now, nfds_t *nfds)
{
	uint64_t wait_ns = deadline ? (deadline > now ? deadline - now : 1) : 0;

	if (s == URNIC_ENG_NAPPING && app_polls) {
		*nfds = FIRST_RX_FD; /* an application is polling: the socket is its job */
		if (!wait_ns || l->nap < wait_ns)
			wait_ns = l->nap;
		l->nap = l->nap * 2 < URNIC_APP_NAP_MAX_NS ? l->nap * 2 : URNIC_APP_NAP_MAX_NS;
		return wait_ns;
	}
	l->nap = APP_ACTIVE_NS;
	if (s == URNIC_ENG_NAPPING) { /* a doorbell's pass: look again soon */
		*nfds = FIRST_RX_FD;
		if (!wait_ns || l->busy_nap < wait_ns)
			wait_ns = l->busy_nap;
		l->busy_nap =
			l->busy_nap * 2 < BUSY_RETRY_MAX_NS ? l->busy_nap * 2 : BUSY_RETRY_MAX_NS;
	}
	return wait_ns;
}

/* What ended the sleep: the window for next time (spin.h), the share socket, and the
 * doorbell's count read off. */
static void woken(struct engine_loop *l, nfds_t nfds, uint64_t slept_at)
{
	bool woke_pkt = false, bell = l->fds[WAKE_FD].revents & POLLIN;
	uint64_t drain;

	for (nfds_t i = FIRST_RX_FD; i < FIRST_RX_FD + (nfds_t)l->nrx && i < nfds; i++)
		woke_pkt |= l->fds[i].revents & POLLIN;
	/* A packet soon after a spin ran out: spin longer next time. */
	l->spin = urnic_spin_next(l->spin, l->d->spin_ns, urnic_dev_now_ns() - slept_at,
				  l->light && woke_pkt ? URNIC_WOKE_PACKET
				  : bell	       ? URNIC_WOKE_DOORBELL
						       : URNIC_WOKE_OTHER);
	l->share_woke = l->fds[SHARE_FD].revents & POLLIN;
	/* The local lanes' fd: their offers, ends and wake-up bytes are served in the
	 * passes that read the share socket. */
	if (!l->d->iw && l->d->udp->local.on)
		for (nfds_t i = FIRST_RX_FD; i < nfds; i++)
			if (l->fds[i].fd == urnic_local_fd(&l->d->udp->local) && l->fds[i].revents)
				l->share_woke = true;
	if (bell && read(l->d->wake_fd, &drain, sizeof(drain)) < 0)
		drain = 0;
	l->idle_since = urnic_dev_now_ns();
}

/* Before a sleep that watches the sockets: local senders ring (local.h); a record
 * already waiting makes the sleep a look. Returns whether the lanes were armed. */
static bool lanes_arm(struct urnic_dev *d, struct timespec *ts, uint64_t *wait_ns)
{
	if (d->iw || !d->udp->local.on)
		return false;
	if (urnic_local_arm(&d->udp->local)) {
		*wait_ns = 1;
		ts->tv_sec = 0;
		ts->tv_nsec = 1;
	}
	return true;
}

/*
 * The sleep after the last work: DROWSY, a last look (a doorbell rung between the last
 * pass and DROWSY is not missed: the poster checks the state after publishing its work,
 * urnic_dev_kick), then ASLEEP or NAPPING in ppoll, AWAKE again. Returns false when the
 * device stops.
 */
static bool sleep_once(struct engine_loop *l, bool app_polls)
{
	struct urnic_dev *d = l->d;
	nfds_t nfds = watch_list(l);
	enum urnic_eng_state s;
	uint64_t deadline, now, wait_ns, slept_at;
	struct timespec ts;
	bool did = false, ran, blind, armed;

	l->light = l->pkts_most <= SPIN_LIGHT_PKTS;
	l->pkts_most = 0;
	if (urnic_handover_doze(&d->ho))
		return false;
	ran = urnic_dev_pass(d, true, true, true, &did, NULL, 0) == URNIC_CLAIM_RUN;
	if (did) {
		l->idle_since = urnic_dev_now_ns();
		return !urnic_handover_rouse(&d->ho);
	}
	if (ran)
		l->busy_nap = BUSY_RETRY_NS;
	/* Not ran: an application thread is in a pass and runs ours after it. Without
	 * the socket while an application polls it (and awaits something) or runs a
	 * pass, unless an application's pass asked us to watch it (settle). */
	blind = !ran || (app_polls && atomic_load_explicit(&d->last_awaits, memory_order_relaxed));
	s = urnic_handover_settle(&d->ho, blind);
	if (s == URNIC_ENG_STOPPING)
		return false;
	deadline = atomic_load_explicit(&d->last_deadline, memory_order_relaxed);
	now = urnic_dev_now_ns();
	wait_ns = choose_wait(l, s, app_polls, deadline, now, &nfds);
	/* Publish when we wake, then look at the deadline once more: a pass that ran
	 * after ours either sees this (and kicks us if it needs us sooner) or left its
	 * deadline for us to see here. */
	urnic_handover_sleeps_until(&d->ho, wait_ns ? now + wait_ns : 0);
	deadline = atomic_load(&d->last_deadline);
	if (deadline && (!wait_ns || deadline < now + wait_ns))
		wait_ns = deadline > now ? deadline - now : 1;
	ts.tv_sec = (time_t)(wait_ns / 1000000000ull);
	ts.tv_nsec = (long)(wait_ns % 1000000000ull);
	slept_at = urnic_dev_now_ns();
	armed = nfds > FIRST_RX_FD && lanes_arm(d, &ts, &wait_ns);
	ppoll(l->fds, nfds, wait_ns ? &ts : NULL, NULL);
	if (armed)
		urnic_local_disarm(&d->udp->local);
	if (urnic_handover_wake(&d->ho))
		return false;
	woken(l, nfds, slept_at);
	return true;
}

void *urnic_dev_engine_thread(void *arg)
{
	struct engine_loop l = {
		.d = arg,
		.idle_since = urnic_dev_now_ns(),
		.nap = APP_ACTIVE_NS,
		.busy_nap = BUSY_RETRY_NS,
		.spin = ((struct urnic_dev *)arg)->spin_ns,
	};
	struct urnic_dev *d = l.d;

	while (!urnic_handover_stopping(&d->ho)) {
		bool did = false, ran, app_polls;
		uint64_t now, app;

		ask_forwarded(&l);
		ran = urnic_dev_pass(d, true, true, true, &did, NULL, 0) == URNIC_CLAIM_RUN;
		if (did) {
			uint32_t got =
				atomic_load_explicit(&d->last_pass_pkts, memory_order_relaxed);

			l.idle_since = urnic_dev_now_ns();
			if (got > l.pkts_most)
				l.pkts_most = got;
			continue;
		}
		now = urnic_dev_now_ns();
		app = atomic_load(&d->app_poll_ns);
		app_polls = app && now - app < APP_ACTIVE_NS;
		if (polls_on(&l, ran, app_polls, now))
			continue;
		if (!sleep_once(&l, app_polls))
			break;
	}
	return NULL;
}
