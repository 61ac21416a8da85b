// SPDX-License-Identifier: MIT
/*
 * cm_link.c - two CMs joined by an in-memory channel with faults and a fake clock
 * (cm_link.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm_link.h"
#include "wire/cma.h"

static uint32_t rnd(struct cm_link *l)
{
	l->rng ^= l->rng >> 12;
	l->rng ^= l->rng << 25;
	l->rng ^= l->rng >> 27;
	return (uint32_t)((l->rng * 0x2545f4914f6cdd1dull) >> 32);
}

void link_config(struct urnic_cm_config *cfg)
{
	urnic_cm_config_init(cfg);
	cfg->max_conns = 64;
	cfg->max_listeners = 8;
	cfg->out_slots = 16;
	cfg->event_slots = 16;
	cfg->ack_delay = 15; /* rxe's local_ca_ack_delay */
	cfg->hi_tid = 2;
}

void link_init(struct cm_link *l, const struct urnic_cm_config *cfg, uint64_t seed)
{
	memset(l, 0, sizeof(*l));
	l->rng = seed ? seed : 1;
	l->delay_ns = 10000;
	l->flight = calloc(LINK_MAX_FLIGHT, sizeof(*l->flight));
	CHECK(l->flight != NULL);
	for (int s = 0; s < 2; s++) {
		struct urnic_cm_config c = *cfg;
		struct link_side *side = &l->side[s];

		side->guid = 0x525400fffe500000ull | (uint64_t)(s + 1);
		c.ca_guid = side->guid;
		c.owner = (uint8_t)(s + 1);
		c.seed = seed * 2 + (uint64_t)s + 1;
		CHECK_EQ(urnic_cm_new(&side->cm, &c), 0);
		side->addr.gid[10] = 0xff;
		side->addr.gid[11] = 0xff;
		side->addr.gid[12] = 10;
		side->addr.gid[15] = (uint8_t)(s + 1);
		side->addr.udp_sport = (uint16_t)(49152 + s);
	}
}

/* Prints what a side still holds (a leak's report). */
static void link_dump(const struct cm_link *l, int s)
{
	for (uint32_t id = 0; id < 1u << 24; id++) {
		struct urnic_cm_conn_info info;
		uint32_t conn = (uint32_t)(s + 1) << 24 | id;

		if (!urnic_cm_query(l->side[s].cm, conn, &info))
			fprintf(stderr, "side %d: conn %08x %s\n", s, conn,
				urnic_cm_state_name(info.state));
	}
	for (int i = 0; i < URNIC_CM_C_COUNT; i++)
		if (urnic_cm_counter(l->side[s].cm, i))
			fprintf(stderr, "side %d: %s %llu\n", s, urnic_cm_counter_name(i),
				(unsigned long long)urnic_cm_counter(l->side[s].cm, i));
}

void link_fini(struct cm_link *l)
{
	for (int s = 0; s < 2; s++) {
		if (urnic_cm_conns_in_use(l->side[s].cm))
			link_dump(l, s);
		CHECK_EQ(urnic_cm_conns_in_use(l->side[s].cm), 0);
		urnic_cm_free(l->side[s].cm);
	}
	free(l->flight);
}

static void put_flight(struct cm_link *l, int to, const uint8_t *mad)
{
	struct link_flight *f;

	CHECK(l->nflight < LINK_MAX_FLIGHT);
	f = &l->flight[l->nflight++];
	f->at_ns = l->now_ns + l->delay_ns + (l->jitter_ns ? rnd(l) % l->jitter_ns : 0);
	f->seq = l->seq++;
	f->to = to;
	memcpy(f->mad, mad, URNIC_MAD_BYTES);
}

/* A MAD side `from` queued: through the filter and the faults onto the channel. */
static void send_mad(struct cm_link *l, int from, const struct urnic_cm_out *o)
{
	struct urnic_cm_mad m;

	CHECK_EQ(o->dst_qpn, URNIC_GSI_QPN);
	CHECK(!memcmp(o->dst.gid, l->side[1 - from].addr.gid, 16));
	CHECK_EQ(urnic_cm_decode(&m, o->mad, URNIC_MAD_BYTES, NULL), URNIC_MAD_BYTES);
	if (m.hdr.attr_id >= 0x10 && m.hdr.attr_id < 0x30)
		l->side[from].sent[m.hdr.attr_id - 0x10]++;
	if ((l->filter && l->filter(l, from, &m)) || (l->loss_pct && rnd(l) % 100 < l->loss_pct)) {
		l->dropped++;
		return;
	}
	put_flight(l, 1 - from, o->mad);
	if (l->dup_pct && rnd(l) % 100 < l->dup_pct) {
		l->duplicated++;
		put_flight(l, 1 - from, o->mad);
	}
}

static void take_event(struct cm_link *l, int s, const struct urnic_cm_event *ev)
{
	struct link_side *side = &l->side[s];

	CHECK((unsigned)ev->type < URNIC_CM_EVENT_COUNT);
	side->events[ev->type]++;
	side->at_ns[ev->type] = l->now_ns;
	if (ev->type == URNIC_CM_EVENT_ESTABLISHED) {
		CHECK(side->nestablished < LINK_MAX_ESTABLISHED);
		side->established[side->nestablished++] = ev->conn;
	}
	side->log[side->nlog++ % LINK_LOG] = *ev;
	if (side->handler)
		side->handler(l, s, ev);
}

void link_pump(struct cm_link *l)
{
	bool busy = true;

	while (busy) {
		busy = false;
		for (int s = 0; s < 2; s++) {
			struct urnic_cm_out o;
			struct urnic_cm_event ev;

			while (urnic_cm_out_pop(l->side[s].cm, &o)) {
				send_mad(l, s, &o);
				busy = true;
			}
			if (urnic_cm_event_pop(l->side[s].cm, &ev)) {
				take_event(l, s, &ev);
				busy = true;
			}
		}
	}
}

/* The earliest flight, or -1. */
static int earliest(const struct cm_link *l)
{
	int best = -1;

	for (unsigned i = 0; i < l->nflight; i++) {
		const struct link_flight *f = &l->flight[i];

		if (best < 0 || f->at_ns < l->flight[best].at_ns ||
		    (f->at_ns == l->flight[best].at_ns && f->seq < l->flight[best].seq))
			best = (int)i;
	}
	return best;
}

static void deliver(struct cm_link *l, int i)
{
	struct link_flight f = l->flight[i];

	l->flight[i] = l->flight[--l->nflight];
	l->delivered++;
	urnic_cm_input_bytes(l->side[f.to].cm, f.mad, URNIC_MAD_BYTES, &l->side[1 - f.to].addr,
			     l->now_ns);
}

static uint64_t min_time(uint64_t a, uint64_t b)
{
	return !a ? b : !b ? a : a < b ? a : b;
}

void link_run(struct cm_link *l, uint64_t until_ns)
{
	for (;;) {
		uint64_t next = 0;
		int f;

		link_pump(l);
		f = earliest(l);
		if (f >= 0)
			next = l->flight[f].at_ns;
		for (int s = 0; s < 2; s++)
			next = min_time(next, urnic_cm_next_deadline(l->side[s].cm));
		if (!next || next > until_ns)
			break;
		if (next > l->now_ns)
			l->now_ns = next;
		if (f >= 0 && l->flight[f].at_ns <= l->now_ns) {
			deliver(l, f);
			continue;
		}
		for (int s = 0; s < 2; s++) {
			uint64_t d = urnic_cm_next_deadline(l->side[s].cm);

			if (d && d <= l->now_ns)
				urnic_cm_tick(l->side[s].cm, l->now_ns);
		}
	}
	if (until_ns > l->now_ns)
		l->now_ns = until_ns;
}

uint64_t link_service(uint16_t port)
{
	return urnic_cma_service_id(URNIC_RDMA_PS_TCP, port);
}

void link_connect_param(const struct cm_link *l, int from, uint16_t port, uint32_t qpn,
			uint32_t psn, struct urnic_cm_connect_param *p)
{
	*p = (struct urnic_cm_connect_param){
		.service_id = link_service(port),
		.peer = l->side[1 - from].addr,
		.qpn = qpn,
		.starting_psn = psn,
		.transport = URNIC_CM_TRANSPORT_RC,
		.responder_resources = 1,
		.initiator_depth = 1,
		.remote_cm_response_timeout = URNIC_CM_RDMA_RESPONSE_TIMEOUT,
		.local_cm_response_timeout = URNIC_CM_RDMA_RESPONSE_TIMEOUT,
		.packet_life_time = URNIC_CM_RDMA_PACKET_LIFETIME,
		.max_cm_retries = URNIC_CM_RDMA_MAX_RETRIES,
		.retry_count = 7,
		.rnr_retry_count = 7,
		.path_mtu = 3,
		.pkey = 0xffff,
		.hop_limit = 64,
	};
	p->peer.udp_sport = 0;
	memcpy(p->local_gid, l->side[from].addr.gid, 16);
}

const struct urnic_cm_event *link_last(const struct cm_link *l, int side,
				       enum urnic_cm_event_type t)
{
	const struct link_side *s = &l->side[side];
	unsigned n = s->nlog < LINK_LOG ? s->nlog : LINK_LOG;

	for (unsigned i = 0; i < n; i++) {
		const struct urnic_cm_event *ev = &s->log[(s->nlog - 1 - i) % LINK_LOG];

		if (ev->type == t)
			return ev;
	}
	return NULL;
}

void link_disconnect_all(struct cm_link *l, int s)
{
	struct link_side *side = &l->side[s];

	for (unsigned i = 0; i < side->nestablished; i++) {
		if (link_state(l, s, side->established[i]) != URNIC_CM_ESTABLISHED)
			continue;
		CHECK_EQ(urnic_cm_disconnect(side->cm, side->established[i], NULL, 0, l->now_ns),
			 0);
		link_pump(l);
	}
}

int link_state(const struct cm_link *l, int side, uint32_t conn)
{
	struct urnic_cm_conn_info info;

	if (urnic_cm_query(l->side[side].cm, conn, &info))
		return -1;
	return (int)info.state;
}

void link_check_clean(const struct cm_link *l)
{
	for (int s = 0; s < 2; s++) {
		CHECK_EQ(urnic_cm_counter(l->side[s].cm, URNIC_CM_C_internal_bad_transition), 0);
		CHECK_EQ(urnic_cm_counter(l->side[s].cm, URNIC_CM_C_internal_encode), 0);
	}
}

void link_auto(struct cm_link *l, int s, const struct urnic_cm_event *ev)
{
	struct urnic_cm *cm = l->side[s].cm;
	bool sidr = ev->mad.hdr.attr_id == URNIC_CM_ATTR_SIDR_REQ ||
		    ev->mad.hdr.attr_id == URNIC_CM_ATTR_SIDR_REP;
	struct urnic_cm_accept_param ap = {
		.qpn = 0x200 + (ev->conn & 0xfff),
		.starting_psn = ev->conn & 0xffffff,
		.responder_resources = 1,
		.initiator_depth = 1,
		.rnr_retry_count = 7,
	};
	struct urnic_cm_sidr_reply_param sp = { .qpn = 0x300, .qkey = 0x11111111 };

	switch (ev->type) {
	case URNIC_CM_EVENT_CONNECT_REQUEST:
		if (sidr) {
			CHECK_EQ(urnic_cm_sidr_reply(cm, ev->conn, &sp, l->now_ns), 0);
			CHECK_EQ(urnic_cm_destroy(cm, ev->conn, l->now_ns), 0);
		} else {
			CHECK_EQ(urnic_cm_accept(cm, ev->conn, &ap, l->now_ns), 0);
		}
		break;
	case URNIC_CM_EVENT_CONNECT_RESPONSE:
		CHECK_EQ(urnic_cm_establish(cm, ev->conn, NULL, 0, l->now_ns), 0);
		break;
	case URNIC_CM_EVENT_DISCONNECTED:
		if (link_state(l, s, ev->conn) == URNIC_CM_DREQ_RCVD)
			CHECK_EQ(urnic_cm_disconnect(cm, ev->conn, NULL, 0, l->now_ns), 0);
		break;
	case URNIC_CM_EVENT_ESTABLISHED:
		if (sidr)
			CHECK_EQ(urnic_cm_destroy(cm, ev->conn, l->now_ns), 0);
		break;
	case URNIC_CM_EVENT_TIMEWAIT_EXIT:
	case URNIC_CM_EVENT_REJECTED:
	case URNIC_CM_EVENT_UNREACHABLE:
		CHECK_EQ(urnic_cm_destroy(cm, ev->conn, l->now_ns), 0);
		break;
	default:
		break;
	}
}
