/* SPDX-License-Identifier: MIT */
/*
 * cm.c - a device's connection manager on QP 1 (cm.h): created on the first open of the
 * process's librdmacm, fed by the engine's GSI (engine/gsi.c), ticked and drained in
 * every pass (urnic_dev_cm_pass) and after every action of the application.
 */
#include <endian.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "dev/cm.h"
#include "dev/pipeline.h"
#include "engine/gsi.h"

/* The device's cm_* counters are the CM's (stats/cm_counters.def, in its order). */
_Static_assert(URNIC_CTR_cm_rx_mads + URNIC_CM_C_COUNT <= URNIC_CTR_COUNT &&
		       URNIC_CTR_cm_rx_mads + 1 == URNIC_CTR_cm_tx_mads,
	       "the cm_* device counters follow stats/cm_counters.def");

/* Adds what the CM counted since the last copy: a CM opened again starts from 0, the
 * device's counters never go back. */
static void sync_counters(struct urnic_dev *d)
{
	uint64_t *c = &d->eng->stats.counters[URNIC_CTR_cm_rx_mads];

	for (uint32_t i = 0; i < URNIC_CM_C_COUNT; i++) {
		uint64_t now = urnic_cm_counter(d->cm, (enum urnic_cm_counter)i);

		c[i] += now - d->cm_ctr_seen[i];
		d->cm_ctr_seen[i] = now;
	}
}

/* The CA's ACK delay the REP announces: ibv_query_device's local_ca_ack_delay (rxe's). */
enum { CA_ACK_DELAY = 15 };

static int cm_create(struct urnic_dev *d)
{
	struct urnic_cm_config cfg;
	uint64_t seed;

	urnic_cm_config_init(&cfg);
	cfg.owner = (uint8_t)d->eng->cfg.qpn_owner;
	cfg.ca_guid = be64toh(d->guid);
	cfg.ack_delay = CA_ACK_DELAY;
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = urnic_dev_now_ns() ^ (uint64_t)getpid() << 32;
	cfg.seed = seed;
	cfg.hi_tid = (uint32_t)(seed >> 32) | 1;
	return urnic_cm_new(&d->cm, &cfg);
}

int urnic_dev_cm_open(struct urnic_dev *d, const struct urnic_dev_cm_sink *sink)
{
	int ret;

	/* RFC 5044 7: an iWARP connection is set up by MPA on its own TCP stream, by
	 * librdmacm's iWARP CM (cm/iw_cm.h): the device has no QP 1, no IB CM and no
	 * rdma_cm port space. */
	if (d->kind == URNIC_KIND_IWARP)
		return -EPROTONOSUPPORT;
	/* UE 1.0 sets a connection up with its first packet (PDS SYN), not with IB CM
	 * MADs on QP 1, and urnic offers no rdma_cm port space over it yet: said once,
	 * so that a program that walks every device learns why this one failed. */
	if (d->kind == URNIC_KIND_UET) {
		static atomic_flag said = ATOMIC_FLAG_INIT;

		if (!atomic_flag_test_and_set(&said))
			fprintf(stderr,
				"urnic: %s (uet:%s): rdma_cm is not offered on UET devices: "
				"connect their RC QPs with ibv_modify_qp\n",
				d->name, d->addr_str);
		return -EOPNOTSUPP;
	}
	ret = urnic_dev_get(d);
	if (ret)
		return ret;
	ret = urnic_dev_start_io(d);
	if (ret)
		goto put;
	pthread_mutex_lock(&d->lock);
	if (d->cm_refs && (d->cm_sink.event != sink->event || d->cm_sink.ctx != sink->ctx))
		ret = -EINVAL;
	else if (!d->cm_refs && (ret = cm_create(d)) == 0) {
		d->cm_sink = *sink;
		memset(d->cm_ctr_seen, 0, sizeof(d->cm_ctr_seen));
		/* The port QP 1 sends from must have a socket (4791 if it cannot). */
		d->eng->gsi_sport = urnic_udp_prepare_sport(d->udp, URNIC_GSI_UDP_SPORT);
		d->eng->cm = d->cm;
	}
	if (!ret)
		d->cm_refs++;
	pthread_mutex_unlock(&d->lock);
	if (!ret)
		return 0;
put:
	urnic_dev_put(d);
	return ret;
}

void urnic_dev_cm_close(struct urnic_dev *d)
{
	pthread_mutex_lock(&d->lock);
	if (d->cm_refs && --d->cm_refs == 0) {
		sync_counters(d);
		d->eng->cm = NULL;
		urnic_cm_free(d->cm);
		d->cm = NULL;
	}
	pthread_mutex_unlock(&d->lock);
	urnic_dev_put(d);
}

struct urnic_cm *urnic_dev_cm_begin(struct urnic_dev *d, uint64_t *now_ns)
{
	pthread_mutex_lock(&d->lock);
	if (!d->cm) {
		pthread_mutex_unlock(&d->lock);
		return NULL;
	}
	*now_ns = urnic_dev_now_ns();
	return d->cm;
}

static bool cm_unpark(void *ctx, uint32_t comm_id, uint64_t ca_guid)
{
	struct urnic_dev *d = ctx;

	/* Without a CM here, the REQ was dropped (drop_gsi_no_cm): nobody answered it. */
	return !d->cm || urnic_cm_unpark(d->cm, comm_id, ca_guid);
}

void urnic_dev_cm_pass(struct urnic_dev *d, uint64_t now_ns, uint64_t *deadline)
{
	struct urnic_cm_event ev;
	uint64_t next;

	/* A REQ parked here (or dropped, with no CM here) whose listener is in another process on
	 * the address goes to it; the kept copies are looked at every URNIC_CM_RESTEER_NS
	 * meanwhile. */
	if (urnic_udp_unheld_pending(d->udp)) {
		urnic_udp_unheld_resteer(d->udp, now_ns, cm_unpark, d, d->eng->stats.counters);
		if (urnic_udp_unheld_pending(d->udp) &&
		    (!*deadline || now_ns + URNIC_CM_RESTEER_NS < *deadline))
			*deadline = now_ns + URNIC_CM_RESTEER_NS;
	}
	if (!d->cm)
		return;
	next = urnic_cm_next_deadline(d->cm);
	if (next && next <= now_ns)
		urnic_cm_tick(d->cm, now_ns);
	while (urnic_cm_event_pop(d->cm, &ev))
		if (!d->cm_sink.event(d->cm_sink.ctx, d, &ev) &&
		    ev.type == URNIC_CM_EVENT_CONNECT_REQUEST)
			urnic_cm_destroy(d->cm, ev.conn, now_ns);
	urnic_gsi_send(d->eng); /* after the events: the REJs of the requests refused there */
	sync_counters(d);
	next = urnic_cm_next_deadline(d->cm);
	if (next && (!*deadline || next < *deadline))
		*deadline = next;
}

void urnic_dev_cm_end(struct urnic_dev *d)
{
	uint64_t deadline = 0;

	urnic_dev_cm_pass(d, urnic_dev_now_ns(), &deadline);
	if (d->eng->tx.n)
		urnic_dev_flush_tx(d->eng);
	urnic_dev_publish_counters(d); /* what was sent here shows in `urnic counters` */
	pthread_mutex_unlock(&d->lock);
	/* The engine thread may sleep past the CM's new timer: a pass recomputes its wait. */
	if (deadline)
		urnic_dev_kick(d);
}

int urnic_dev_cm_port_hold(struct urnic_dev *d, uint16_t ps, uint16_t *port,
			   struct urnic_cm_port *held)
{
	int ret = -ENODEV;

	pthread_mutex_lock(&d->lock);
	if (d->cm)
		ret = urnic_cm_port_hold(held, d->udp->share.addr_str, d->udp->share.slot, ps,
					 port);
	pthread_mutex_unlock(&d->lock);
	return ret;
}

void urnic_dev_cm_port_release(struct urnic_cm_port *held)
{
	urnic_cm_port_release(held);
}

int urnic_dev_cm_devices(struct urnic_dev ***out)
{
	return urnic_dev_list(out);
}

void urnic_dev_cm_exit(struct urnic_dev *d)
{
	uint32_t left = 1;

	pthread_mutex_lock(&d->lock);
	for (int round = 0; d->cm && left && round < 64; round++) {
		left = urnic_cm_destroy_all(d->cm, urnic_dev_now_ns());
		urnic_gsi_send(d->eng);
		if (d->eng->tx.n)
			urnic_dev_flush_tx(d->eng);
	}
	pthread_mutex_unlock(&d->lock);
}
