/* SPDX-License-Identifier: MIT */
/*
 * device.h - a urnic device: one IP address, its engine thread, transport, clock and
 * counters. The composition root: the sans-I/O core (engine/, queue/, mem/) meets the
 * sockets, the clock and the threads here.
 *
 * A device is opened once per process however many contexts use it; the first QP binds
 * UDP 4791 on the address (a UET device 4793, and its entropy values' source ports; an
 * iWARP device binds nothing: its connection manager hands it each QP's TCP
 * connection, iw_conn.h) and starts the engine thread, the last close
 * stops it. The
 * engine thread busy-polls while there is work and a short while after, then sleeps in
 * ppoll on the socket and a doorbell eventfd, so an idle device costs no CPU; an
 * application thread that polls or posts may run the pipeline itself (handover.h).
 * Context: the device lock serializes a pass with control verbs (create, modify,
 * destroy, register); posting and polling do not take it.
 */
#ifndef URNIC_DEV_DEVICE_H
#define URNIC_DEV_DEVICE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "dev/dm.h"
#include "dev/handover.h"
#include "dev/iw_conn.h"
#include "dev/post_batch.h"
#include "engine/cm/cm.h"
#include "engine/engine.h"
#include "queue/wq.h"
#include "transport/packet.h"
#include "transport/udp.h"

enum {
	URNIC_MAX_DEVICES = 16,
	URNIC_GID_TABLE_LEN = 16,
};

/* A device's protocol (kinds.def). */
enum urnic_dev_kind {
#define URNIC_KIND(id, name, supported) URNIC_KIND_##id,
#include "dev/kinds.def"
#undef URNIC_KIND
	URNIC_KIND_COUNT
};

/* The kind's name as URNIC_ADDR spells it ("roce", "iwarp", "uet"). */
const char *urnic_dev_kind_name(enum urnic_dev_kind k);

/* How long the engine thread polls after its last work before it sleeps, when it may
 * (engine_thread.c, SPIN_LIGHT_PKTS: no application polling, light traffic). On a
 * 2-vCPU machine a spinning engine steals the core of a spinning application
 * (ibv_rc_pingpong -s 1 with the engine thread alone: 8298 us/iter spinning 2 ms after
 * work, 911 spinning 50 us, 460 sleeping at once), so it never spins beside one;
 * applications that poll drive the pipeline themselves (urnic_dev_progress). */
#define URNIC_DEFAULT_SPIN_NS 50000u
/* The port's rate as ibv_query_port reports it (4X EDR, verbs/device.c): DCQCN's line
 * rate, the rate of a QP no CNP has cut. */
#define URNIC_PORT_RATE_BPS 100000000000ull

/*
 * Where a device's CM events go: event() runs under the device lock in whichever thread
 * ran the pass that made them (the engine thread, or the caller of urnic_dev_cm_end), in
 * the order the CM made them. It must not call into the device; it queues the event for
 * the application and wakes it. ev->user is what connect/listen/set_user stored (a
 * passive connection starts with its listener's). It returns false for a
 * CONNECT_REQUEST nobody will answer (its listener is going): the device destroys that
 * connection at once, which rejects the REQ, as Linux's ucma has cm.c do for a request
 * whose listener closed before the application took it.
 */
struct urnic_dev;
struct urnic_dev_iw;
struct urnic_cm_event;

struct urnic_dev_cm_sink {
	bool (*event)(void *ctx, struct urnic_dev *d, const struct urnic_cm_event *ev);
	void *ctx;
};

/* The configurable limits (limits.def), process-wide, from the config file and
 * URNIC_LIMITS. */
struct urnic_limits {
#define URNIC_LIMIT(name, def, max, desc) uint32_t name;
#include "dev/limits.def"
#undef URNIC_LIMIT
};

/* The objects a device counts against its limits. */
enum urnic_dev_res { URNIC_RES_QP, URNIC_RES_CQ, URNIC_RES_SRQ, URNIC_RES_COUNT };

struct urnic_dev {
	char name[32];
	char addr_str[64];
	enum urnic_dev_kind kind; /* RoCEv2 unless the address was named `iwarp:` or `uet:` */
	bool ipv6;
	uint8_t addr[16];
	/* RoCEv2: both the address GID (config.c says why twice); iWARP: gid[0] as siw's
	 * (the MAC, zeros after it), gid[1] unused. */
	uint8_t gid[2][16];
	uint64_t guid;	  /* network order */
	int active_mtu;	  /* IB MTU enum for the port */
	bool dcqcn;	  /* URNIC_CONGESTION: DCQCN on its RC, UC and XRC QPs (engine/roce/cc.h) */
	bool nscc_off;	  /* URNIC_CONGESTION=none on a uet device: NSCC off on its QPs */
	uint32_t spin_ns; /* how long the engine polls after the last work */
	struct urnic_limits lim;
	_Atomic uint32_t nres[URNIC_RES_COUNT]; /* live objects, against lim */
	struct urnic_dm_pool dm;		/* device memory, against lim.max_dm_size */

	pthread_mutex_t lock;
	int refs;
	pthread_t thread;
	/* Who runs the pipeline, and whether the engine thread must be woken (handover.h).
	 * What follows stays outside those states, each for its reason. */
	struct urnic_handover ho;
	/* A time, not a state: when an application thread last drove the pipeline. */
	_Atomic uint64_t app_poll_ns;
	/* A request to whichever thread runs the next pass, which may be an application's
	 * on the engine thread's behalf: read the packets other processes forwarded here
	 * (the engine thread asks; an application's own passes skip that recvmmsg). */
	_Atomic bool forwarded_due;
	/* Results of the last pass, for the engine thread's choice of sleep and for the
	 * kick after an application's pass: its timer deadline (0: none); the same with a
	 * held ACK's relaxed by the engine thread's longest nap (a sleeping engine thread is
	 * woken for this one only); urnic_engine_app_awaits() after it; the packets it
	 * received, or sent if more. */
	_Atomic uint64_t last_deadline;
	_Atomic uint64_t last_kick_deadline;
	_Atomic bool last_awaits;
	_Atomic uint32_t last_pass_pkts;
	struct urnic_post_batch posts; /* posts in a row sent together (post_batch.h) */
	/* The CQs whose completion channel is due an event (queue/wq.h): queue/ makes no
	 * system call, the passes write them (urnic_dev_notify_cqs). Under the lock. */
	struct urnic_cq_due cq_due;
	int wake_fd;
	struct urnic_engine *eng;
	struct urnic_udp *udp;
	/* The raw packet QPs' wire (dev/raw_port.h): open while raw_qps > 0, under the
	 * lock; raw_fd is its fd (-1: closed) for the engine thread's sleep. */
	struct urnic_packet raw_port;
	uint32_t raw_qps;
	_Atomic int raw_fd;
	uint64_t *shm_counters; /* the counters file under /dev/shm, or NULL */
	char shm_path[128];
	int shm_fd; /* open, holding a shared flock: the file is alive (counters_file.c) */
	/* QP 1's connection manager while this process's librdmacm has the device open
	 * (cm.h), its opens and where its events go. Under the lock. */
	struct urnic_cm *cm;
	uint32_t cm_refs;
	struct urnic_dev_cm_sink cm_sink;
	uint64_t cm_ctr_seen[URNIC_CM_C_COUNT]; /* its counters as last copied (cm.c) */
	/* An iWARP device's TCP connections (iw_dev.h), from its first open, and where
	 * their ends go (iw_conn.h). Under the lock. */
	struct urnic_dev_iw *iw;
	struct urnic_dev_iw_sink iw_sink;
};

/* Fills the process-wide device list from URNIC_ADDR / the config / the host's
 * addresses. Returns the number of devices. */
int urnic_dev_list(struct urnic_dev ***out);

/* Counts one more object of kind r, or returns -ENOMEM when the device's limit for it
 * (lim.max_qp, max_cq, max_srq) is reached. urnic_dev_res_put undoes it. Context: any
 * thread, no lock. */
int urnic_dev_res_get(struct urnic_dev *d, enum urnic_dev_res r);
void urnic_dev_res_put(struct urnic_dev *d, enum urnic_dev_res r);

/* Creates (first user) or references the device's engine. Returns 0 or -errno. */
int urnic_dev_get(struct urnic_dev *d);

/* Binds <address>:4791 (UET: 4793) and starts the engine thread, once (the first QP).
 * Returns 0 or -errno: -EADDRINUSE when another process has the address. */
int urnic_dev_start_io(struct urnic_dev *d);
void urnic_dev_put(struct urnic_dev *d);

/* Doorbell: wakes the engine thread if it waits for one (DROWSY, ASLEEP, NAPPING:
 * urnic_handover_must_ring, which also orders the caller's work before the check).
 * Context: any thread, no lock. */
static inline void urnic_dev_kick(struct urnic_dev *d)
{
	if (urnic_handover_must_ring(&d->ho, NULL)) {
		uint64_t one = 1;
		ssize_t n = write(d->wake_fd, &one, sizeof(one));

		(void)n;
	}
}

/* The device clock: CLOCK_MONOTONIC in nanoseconds, what the engine is given as its time
 * and completion timestamps count (a "core clock" of 1 GHz, in ibv_query_device_ex's kHz). */
#define URNIC_DEV_CLOCK_KHZ 1000000
uint64_t urnic_dev_now_ns(void);

/* Runs one pass of the pipeline in the calling thread if no one else is (ibv_poll_cq
 * on an empty CQ, ibv_post_send): the application's polling thread becomes the NIC,
 * saving a wake-up of the engine thread. polling: the caller busy-polls a CQ that is
 * not armed for events, so it will keep driving the pipeline, and only tries; without
 * it a pass is guaranteed: run here, or by the thread in a pass now, before it leaves.
 * Returns true if a pass here did anything or (not polling) a pass ran here or was
 * handed to that thread: nobody needs to be woken. False if the device is not running,
 * or a polling caller's pass found nothing to do. */
bool urnic_dev_progress(struct urnic_dev *d, bool polling);
/* The doorbell of ibv_post_send: a pass as urnic_dev_progress(d, false), that sends
 * the new work without first reading the socket (the pollers and the engine thread
 * read it): an empty recvmmsg of ~1 us less on the latency path and per post. In a
 * streak of posts, a small request's (small: a few packets) may instead be left to
 * the next pass, which sends it with the rest (post_batch.h). */
bool urnic_dev_doorbell(struct urnic_dev *d, bool small);

/* The application stops polling (it arms a CQ to sleep on its channel): the engine
 * thread takes the socket back at once. */
void urnic_dev_app_idle(struct urnic_dev *d);

/* An application thread is about to block (ibv_get_cq_event): an engine thread may
 * poll on where it ran (pipeline.c, APP_RECENT_NS). Context: any thread. */
void urnic_dev_app_sleeps(void);

/* ibv_poll_cq was called, whatever it found: a streak of posts ends (pipeline.c,
 * urnic_dev_doorbell). Context: any thread, no lock. */
static inline void urnic_dev_polled(struct urnic_dev *d)
{
	urnic_post_batch_polled(&d->posts);
}

/* The engine thread's longest nap while an application polls (engine_thread.c): each of its
 * wake-ups preempts a polling thread on this two-vCPU machine (a ping-pong round hit by
 * one took 5-10 us longer), and while the application polls there is nothing for it to
 * do. A held ACK may leave this much late (engine.ack_hold_slack_ns). */
enum { URNIC_APP_NAP_MAX_NS = 1000000 };

/* Writes the completion channels of the CQs a pass or a control verb's call into the
 * engine made due (queue/wq.h, urnic_cq_due). Context: the device lock held; a control
 * verb that may complete work (ibv_modify_qp to the error state, ibv_destroy_qp) calls
 * it before unlocking, as every pass does. */
void urnic_dev_notify_cqs(struct urnic_dev *d);

/* Prints the device counters (URNIC_PRINT_COUNTERS=1 at close). */
void urnic_dev_print_counters(const struct urnic_dev *d, FILE *f);

#endif
