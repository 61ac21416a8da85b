/* SPDX-License-Identifier: MIT */
/*
 * device.c - a device's life: its engine state from the first open, its port, counters
 * file and engine thread from the first QP, all of it gone at the last close; the
 * clock; the count of objects against the limits. Discovery and configuration are
 * config.c; who runs the NIC pipeline is handover.c, pipeline.c and engine_thread.c.
 * See device.h.
 * Context: start and stop under open_lock; the device lock is taken where the engine
 * is touched while others may run passes.
 */
#include "dev/config.h"
#include "dev/counters_file.h"
#include "dev/iw_dev.h"
#include "dev/odp.h"
#include "dev/pipeline.h"
#include "dev/trace.h"
#include "engine/uet/uet_rc.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <time.h>

uint64_t urnic_dev_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void urnic_dev_init(struct urnic_dev *d)
{
	pthread_mutex_init(&d->lock, NULL);
	urnic_handover_init(&d->ho);
	urnic_cq_due_init(&d->cq_due);
	urnic_dev_dm_init(&d->dm);
	d->wake_fd = -1;
	d->shm_fd = -1;
	d->raw_port.fd = -1;
	atomic_init(&d->raw_fd, -1);
}

int urnic_dev_res_get(struct urnic_dev *d, enum urnic_dev_res r)
{
	uint32_t max = r == URNIC_RES_QP   ? d->lim.max_qp
		       : r == URNIC_RES_CQ ? d->lim.max_cq
					   : d->lim.max_srq;
	uint32_t n = atomic_load(&d->nres[r]);

	do {
		if (n >= max)
			return -ENOMEM;
	} while (!atomic_compare_exchange_weak(&d->nres[r], &n, n + 1));
	return 0;
}

void urnic_dev_res_put(struct urnic_dev *d, enum urnic_dev_res r)
{
	atomic_fetch_sub(&d->nres[r], 1);
}

/* The engine state exists from the first open; the port and the thread only from the
 * first QP (start_io), so that opening a device to query it (ibv_devinfo, urnic
 * devices) never takes the address's UDP port 4791 from the process that uses it. */
static int start(struct urnic_dev *d)
{
	const struct urnic_dev_settings *set = urnic_dev_settings();
	uint64_t seed = 0;
	int ret;

	if (urnic_dev_config_check())
		return -EINVAL; /* a bad setting, said when it was read (config.c) */
	urnic_dev_counters_sweep();
	d->eng = calloc(1, sizeof(*d->eng));
	d->udp = calloc(1, sizeof(*d->udp));
	if (!d->eng || !d->udp) {
		ret = -ENOMEM;
		goto free_mem;
	}
	d->udp->fd = -1;
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = urnic_dev_now_ns() ^ (uint64_t)getpid() << 32;
	ret = urnic_engine_init(d->eng, d->ipv6, d->addr, urnic_dev_flush_tx, d, seed);
	if (ret)
		goto free_mem;
	d->eng->cfg.icrc_any_ipv4_id = !set->icrc_strict; /* engine.h */
	d->eng->cfg.max_msg_bytes = d->lim.max_msg_sz;	  /* limits.def */
	d->eng->hold.slack_ns = (uint32_t)URNIC_APP_NAP_MAX_NS;
	d->eng->mrs.odp = urnic_dev_odp_ops(); /* on-demand regions' copies (odp.h) */
	if (set->ack_hold_us >= 0)	       /* at most 1 s (config.c) */
		d->eng->hold.max_ns = (uint32_t)set->ack_hold_us * 1000u;
	d->eng->cfg.uet_cc_off = d->nscc_off; /* URNIC_CONGESTION=none on a uet device */
	if (d->dcqcn) {
		/* ConnectX's parameters for the port's rate, the 4X EDR (100 Gb/s) that
		 * ibv_query_port reports (verbs/device.c). */
		d->eng->cfg.dcqcn = true;
		urnic_dcqcn_defaults(&d->eng->cfg.dcqcn_params, URNIC_PORT_RATE_BPS);
	}
	if (d->kind == URNIC_KIND_IWARP) {
		/* RC QPs speaking RDMAP on the TCP connections of iw_conn.c. */
		d->eng->cfg.iwarp = true;
		if (set->iw_hold_us >= 0) /* at most 10 s (config.c) */
			d->eng->cfg.iw_await_first_ns = (uint64_t)set->iw_hold_us * 1000u;
		ret = urnic_dev_iw_init(d);
		if (ret) {
			urnic_engine_fini(d->eng);
			goto free_mem;
		}
	}
	/* RC QPs carried by UET's packet delivery contexts (engine/uet/uet_rc.h). */
	if (d->kind == URNIC_KIND_UET)
		d->eng->cfg.uet = true;
	return 0;

free_mem:
	free(d->eng);
	free(d->udp);
	d->eng = NULL;
	d->udp = NULL;
	return ret;
}

/* The engine thread, named after its device for top -H and the tests (15 bytes). */
static int start_thread(struct urnic_dev *d)
{
	char name[16];
	int ret;

	if (urnic_handover_start(&d->ho))
		return -EALREADY;
	ret = -pthread_create(&d->thread, NULL, urnic_dev_engine_thread, d);
	if (ret) {
		urnic_handover_stop_engine(&d->ho);
		urnic_handover_engine_gone(&d->ho);
		urnic_handover_drain(&d->ho);
		return ret;
	}
	snprintf(name, sizeof(name), "urnic:%.9s", d->name);
	pthread_setname_np(d->thread, name);
	return 0;
}

/* An iWARP device's I/O: no port of its own (its TCP connections come from its
 * connection manager, iw_conn.h), the doorbell, the counters file and the thread. The
 * faulty wire and captures are the UDP transport's, not applied to TCP. */
static int start_io_iwarp(struct urnic_dev *d)
{
	const struct urnic_dev_settings *set = urnic_dev_settings();
	int ret;

	if (urnic_dev_fault_conf() || set->pcap || set->ring)
		fprintf(stderr,
			"urnic: %s (iwarp:%s): URNIC_FAULT, URNIC_PCAP and URNIC_RING apply to "
			"RoCEv2 devices only, not to this one\n",
			d->name, d->addr_str);

	d->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (d->wake_fd < 0)
		return -errno;
	urnic_dev_counters_open(d, urnic_dev_counters_mode());
	ret = start_thread(d);
	if (ret) {
		urnic_dev_counters_close(d);
		close(d->wake_fd);
		d->wake_fd = -1;
	}
	return ret;
}

/*
 * A UET device's transport before start_io's common part: UDP 4793, its own (udp.h), and
 * a sending socket for each of the engine's entropy values, bound now rather than per
 * QP: 32 fixed ports (uet_rc.h). What reads a BTH is RoCE's alone: packet rings
 * (URNIC_RING: said and ignored, as an iWARP device says it) and shared memory lanes
 * (URNIC_LOCAL: off without a word, as it is on by default).
 */
static int open_uet(struct urnic_dev *d)
{
	int ret;

	if (urnic_dev_settings()->ring)
		fprintf(stderr,
			"urnic: %s (uet:%s): URNIC_RING applies to RoCEv2 devices only, not to "
			"this one: receiving from the UDP socket\n",
			d->name, d->addr_str);
	ret = urnic_udp_open(d->udp, d->ipv6, d->addr, d->addr_str, URNIC_UDP_UET);
	if (ret)
		return ret;
	for (uint16_t ev = 0; ev < URNIC_UET_EVS; ev++)
		if (urnic_udp_prepare_sport(d->udp, (uint16_t)(URNIC_UET_EV_BASE + ev)) !=
		    URNIC_UET_EV_BASE + ev)
			fprintf(stderr,
				"urnic: %s (uet:%s): UDP port %d is taken: packets of that "
				"entropy value leave from port %d\n",
				d->name, d->addr_str, URNIC_UET_EV_BASE + ev, d->udp->port);
	return 0;
}

static int start_io(struct urnic_dev *d)
{
	const struct urnic_fault_conf *fault = urnic_dev_fault_conf();
	const struct urnic_dev_settings *set = urnic_dev_settings();
	bool uet = d->kind == URNIC_KIND_UET;
	int ret;

	if (d->kind == URNIC_KIND_IWARP)
		return start_io_iwarp(d);
	if (uet)
		ret = open_uet(d);
	else
		ret = urnic_udp_open(d->udp, d->ipv6, d->addr, d->addr_str, URNIC_UDP_ROCE);
	if (ret)
		return ret;
	urnic_udp_offloads(d->udp, set->gso, set->gro); /* URNIC_NO_GSO, URNIC_NO_GRO */
	if (set->pcap) {
		ret = urnic_dev_trace_start(d, set->pcap); /* URNIC_PCAP */
		if (ret)
			goto close_udp;
	}
	if (fault) {
		uint64_t seed = 0;
		char spec[256];

		if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
			seed = urnic_dev_now_ns();
		ret = urnic_udp_set_fault(d->udp, fault, seed, d->eng->stats.counters);
		if (ret)
			goto close_udp;
		urnic_fault_format(&d->udp->fault->conf, spec, sizeof(spec));
		fprintf(stderr, "urnic: %s (%s): fault injection %s\n", d->name, d->addr_str, spec);
	}
	/* URNIC_RING=1: receive from packet rings (transport/ring.h), else the socket. */
	if (set->ring && !uet) {
		ret = urnic_udp_use_ring(d->udp);
		if (ret)
			fprintf(stderr,
				"urnic: %s (%s): URNIC_RING: no packet ring (%s): receiving "
				"from the UDP socket\n",
				d->name, d->addr_str, strerror(-ret));
	}
	/* URNIC_LOCAL (default on): urnic processes on this host get shared memory
	 * lanes (transport/local.h). */
	if (set->local && !uet) {
		ret = urnic_udp_use_local(d->udp);
		if (ret == -EADDRINUSE && d->udp->local.holder_uid != UINT32_MAX)
			fprintf(stderr,
				"urnic: %s (%s): URNIC_LOCAL: no shared memory lanes: their name "
				"is held by a process of uid %u: sending to local peers through "
				"the socket\n",
				d->name, d->addr_str, d->udp->local.holder_uid);
		else if (ret)
			fprintf(stderr,
				"urnic: %s (%s): URNIC_LOCAL: no shared memory lanes (%s): "
				"sending to local peers through the socket\n",
				d->name, d->addr_str, strerror(-ret));
	}
	pthread_mutex_lock(&d->lock);
	d->eng->cfg.qpn_owner = d->udp->share.slot;
	/* URNIC_LOCAL_DIRECT (default on): READs and WRITEs between processes with a lane
	 * are placed with one copy (wire/addr.h), but not beside a capture or the faulty
	 * wire, which would not show it: then this device's lanes say it takes no notes,
	 * and it sends none. The hooks are there whenever lanes are, so that a note that
	 * comes after direct placement went off is answered as it must be (a direct
	 * WRITE asked for again). */
	d->udp->local.direct =
		d->udp->local.on && set->local_direct && !d->udp->pcap && !d->udp->fault;
	if (d->udp->local.on) {
		d->eng->hooks.direct_write = urnic_dev_direct_write;
		d->eng->hooks.direct_read = urnic_dev_direct_read;
		d->eng->hooks.direct_ready = urnic_dev_direct_ready;
	}
	pthread_mutex_unlock(&d->lock);
	d->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (d->wake_fd < 0) {
		ret = -errno;
		goto close_udp;
	}
	urnic_dev_counters_open(d, urnic_dev_counters_mode());
	ret = start_thread(d);
	if (ret)
		goto close_counters;
	return 0;

close_counters:
	urnic_dev_counters_close(d);
	close(d->wake_fd);
	d->wake_fd = -1;
close_udp:
	urnic_dev_trace_stop(d);
	urnic_udp_close(d->udp);
	return ret;
}

static void stop(struct urnic_dev *d)
{
	uint64_t one = 1;

	if (urnic_handover_started(&d->ho)) {
		urnic_handover_stop_engine(&d->ho);
		if (write(d->wake_fd, &one, sizeof(one)) < 0)
			one = 0;
		pthread_join(d->thread, NULL);
		urnic_handover_engine_gone(&d->ho);
		/* An application's pass still running (its CQs outlive the close: a misuse)
		 * ends before the socket and the engine go. */
		while (!urnic_handover_drain(&d->ho))
			sched_yield();
		if (urnic_dev_settings()->print_counters)
			urnic_dev_print_counters(d, stderr);
		urnic_dev_counters_close(d);
		close(d->wake_fd);
		d->wake_fd = -1;
		if (d->kind != URNIC_KIND_IWARP) {
			urnic_dev_trace_stop(d);
			urnic_udp_close(d->udp);
		}
	}
	urnic_dev_iw_fini(d); /* its connections' sockets, before the engine's QPs go */
	urnic_engine_fini(d->eng);
	urnic_dev_dm_release_all(&d->dm);
	free(d->eng);
	free(d->udp);
	d->eng = NULL;
	d->udp = NULL;
}

static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;

/* A process that exits without closing its devices (an error path, exit() from a
 * tool) still tells its rdma_cm peers (urnic_dev_cm_exit), prints its counters when
 * asked, leaves no counters file behind and has its captures written. The library is never unmapped
 * (-z nodelete, src/CMakeLists.txt), so this runs at exit only, with the engine threads still
 * running: it only reads, unlinks and writes out. */
static void at_exit(void)
{
	bool print = urnic_dev_settings()->print_counters;
	struct urnic_dev **devices;
	int n = urnic_dev_list(&devices);

	for (int i = 0; i < n; i++) {
		struct urnic_dev *d = devices[i];

		if (!urnic_handover_started(&d->ho))
			continue;
		urnic_dev_cm_exit(d);
		if (print)
			urnic_dev_print_counters(d, stderr);
		if (d->shm_path[0])
			unlink(d->shm_path);
	}
	urnic_dev_trace_flush_all(); /* the captures as of now: engine threads still run */
}

int urnic_dev_get(struct urnic_dev *d)
{
	int ret = 0;

	static bool exit_hook;

	pthread_mutex_lock(&open_lock);
	if (!exit_hook) {
		atexit(at_exit);
		exit_hook = true;
	}
	if (d->refs == 0)
		ret = start(d);
	if (ret == 0)
		d->refs++;
	pthread_mutex_unlock(&open_lock);
	return ret;
}

int urnic_dev_start_io(struct urnic_dev *d)
{
	int ret = 0;

	pthread_mutex_lock(&open_lock);
	if (!urnic_handover_started(&d->ho))
		ret = start_io(d);
	pthread_mutex_unlock(&open_lock);
	return ret;
}

void urnic_dev_put(struct urnic_dev *d)
{
	pthread_mutex_lock(&open_lock);
	if (--d->refs == 0)
		stop(d);
	pthread_mutex_unlock(&open_lock);
}
