// SPDX-License-Identifier: MIT
/*
 * test_cm_hostile.c - a CM facing MADs it never asked for: REPs, RTUs, MRAs, REJs, DREPs
 * and SIDR_REPs for comm IDs it does not have, messages for its connections from another
 * GID, a DREQ naming another QP, REQs with comm ID 0, REQ floods past the backlog and the
 * table, bytes that are no MAD, a full output queue, actions on bad handles, and a storm
 * of random well-formed MADs aimed at live connections. Each refusal is counted under its
 * reason; nothing is left in the table afterwards and no state change fell outside the
 * transition table.
 *
 *   attacker (GID ::ffff:10.6.6.6) --MADs by hand--> CM "victim" (listening on 7174)
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "cm_link.h"
#include "cmgen.h"

static const uint64_t S = 1000000000ull;

static struct urnic_cm *cm;
static struct urnic_cm_addr attacker, friend;
static unsigned out_by_attr[32], nevents;
static struct urnic_cm_out last_out;

static void setup(uint32_t max_conns, uint32_t backlog)
{
	struct urnic_cm_config cfg;
	uint32_t h;

	link_config(&cfg);
	cfg.max_conns = max_conns;
	cfg.owner = 7;
	cfg.ca_guid = 0x77;
	cfg.seed = 17;
	CHECK_EQ(urnic_cm_new(&cm, &cfg), 0);
	CHECK_EQ(urnic_cm_listen(cm, link_service(7174), backlog, 0, &h), 0);
	memset(&attacker, 0, sizeof(attacker));
	attacker.gid[10] = attacker.gid[11] = 0xff;
	attacker.gid[12] = 10;
	attacker.gid[13] = attacker.gid[14] = attacker.gid[15] = 6;
	friend = attacker;
	friend.gid[15] = 1;
	memset(out_by_attr, 0, sizeof(out_by_attr));
	nevents = 0;
}

/* Takes what the CM queued; events of new connections are remembered for destroy. */
static uint32_t conns[1024];
static unsigned nconns;

static void drain(void)
{
	struct urnic_cm_event ev;

	while (urnic_cm_out_pop(cm, &last_out)) {
		struct urnic_cm_mad m;

		CHECK_EQ(urnic_cm_decode(&m, last_out.mad, URNIC_MAD_BYTES, NULL), URNIC_MAD_BYTES);
		out_by_attr[m.hdr.attr_id - 0x10]++;
	}
	while (urnic_cm_event_pop(cm, &ev)) {
		nevents++;
		if (ev.type == URNIC_CM_EVENT_CONNECT_REQUEST) {
			CHECK(nconns < 1024);
			conns[nconns++] = ev.conn;
		}
	}
}

static void teardown(void)
{
	for (unsigned i = 0; i < nconns; i++) {
		CHECK_EQ(urnic_cm_destroy(cm, conns[i], 0), 0);
		drain();
	}
	nconns = 0;
	urnic_cm_tick(cm, 1000 * S);
	drain();
	CHECK_EQ(urnic_cm_conns_in_use(cm), 0);
	CHECK_EQ(urnic_cm_counter(cm, URNIC_CM_C_internal_bad_transition), 0);
	urnic_cm_free(cm);
}

static void req(struct urnic_cm_mad *m, uint32_t comm_id, uint32_t qpn, uint16_t port)
{
	struct urnic_cm_req *r = &m->msg.req;

	urnic_cm_mad_init(m, URNIC_CM_ATTR_REQ, 0x1234);
	r->local_comm_id = comm_id;
	r->service_id = link_service(port);
	r->local_ca_guid = 0xbad;
	r->local_qpn = qpn;
	r->path_mtu = 3;
	r->max_cm_retries = 15;
	r->local_cm_response_timeout = 20;
}

static int feed(const struct urnic_cm_mad *m, const struct urnic_cm_addr *from)
{
	int ret = urnic_cm_input(cm, m, from, 0);

	drain();
	return ret;
}

static void test_unknown_comm_ids(void)
{
	static const uint16_t attrs[] = { URNIC_CM_ATTR_REP,  URNIC_CM_ATTR_RTU,
					  URNIC_CM_ATTR_MRA,  URNIC_CM_ATTR_REJ,
					  URNIC_CM_ATTR_DREP, URNIC_CM_ATTR_SIDR_REP };
	struct urnic_cm_mad m;
	unsigned n = 0;

	setup(16, 8);
	for (unsigned i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		for (uint32_t id = 1; id < 1u << 30; id = id * 7 + 0x07000001) {
			urnic_cm_mad_init(&m, attrs[i], id);
			/* Every message leads with two comm IDs (SIDR_REP: the request ID). */
			m.msg.rep.local_comm_id = id ^ 0x5a5a5a5a;
			m.msg.rep.remote_comm_id = id;
			if (attrs[i] == URNIC_CM_ATTR_REP)
				m.msg.rep.starting_psn = 1;
			CHECK_EQ(feed(&m, &attacker), -EPROTO);
			n++;
		}
	}
	CHECK_EQ(urnic_cm_counter(cm, URNIC_CM_C_drop_unknown_conn), n);
	CHECK_EQ(nevents, 0);
	for (unsigned i = 0; i < 32; i++)
		CHECK_EQ(out_by_attr[i], 0);
	/* A DREQ for no connection still gets its DREP (cm_issue_drep). */
	urnic_cm_mad_init(&m, URNIC_CM_ATTR_DREQ, 0xfeed);
	m.msg.dreq.local_comm_id = 0x1111;
	m.msg.dreq.remote_comm_id = 0x07abcdef;
	CHECK_EQ(feed(&m, &attacker), 0);
	CHECK_EQ(out_by_attr[URNIC_CM_ATTR_DREP - 0x10], 1);
	CHECK(!memcmp(last_out.dst.gid, attacker.gid, 16));
	CHECK_EQ(urnic_cm_decode(&m, last_out.mad, URNIC_MAD_BYTES, NULL), URNIC_MAD_BYTES);
	CHECK(m.hdr.tid == 0xfeed && m.msg.drep.local_comm_id == 0x07abcdef &&
	      m.msg.drep.remote_comm_id == 0x1111);
	CHECK_EQ(urnic_cm_conns_in_use(cm), 0);
	teardown();
}

/* A connection made from `friend`, then messages for it from the attacker. */
static void test_wrong_peer(void)
{
	struct urnic_cm_accept_param ap = { .qpn = 0x44, .responder_resources = 1 };
	struct urnic_cm_conn_info info;
	struct urnic_cm_mad m;

	setup(16, 8);
	req(&m, 0x100, 0x11, 7174);
	CHECK_EQ(feed(&m, &friend), 0);
	CHECK_EQ(nconns, 1);
	CHECK_EQ(urnic_cm_accept(cm, conns[0], &ap, 0), 0);
	drain();
	urnic_cm_mad_init(&m, URNIC_CM_ATTR_RTU, 0x1234);
	m.msg.rtu.local_comm_id = 0x100;
	m.msg.rtu.remote_comm_id = conns[0];
	CHECK_EQ(feed(&m, &attacker), -EPROTO);
	urnic_cm_mad_init(&m, URNIC_CM_ATTR_DREQ, 0x1234);
	m.msg.dreq.local_comm_id = 0x100;
	m.msg.dreq.remote_comm_id = conns[0];
	m.msg.dreq.remote_qpn_eecn = 0x44;
	CHECK_EQ(feed(&m, &attacker), -EPROTO);
	CHECK_EQ(urnic_cm_counter(cm, URNIC_CM_C_drop_wrong_peer), 2);
	CHECK_EQ(urnic_cm_query(cm, conns[0], &info), 0);
	CHECK_EQ(info.state, URNIC_CM_REP_SENT);
	/* From the friend, but naming another QP than ours. */
	m.msg.dreq.remote_qpn_eecn = 0x45;
	CHECK_EQ(feed(&m, &friend), -EPROTO);
	CHECK_EQ(urnic_cm_counter(cm, URNIC_CM_C_drop_dreq_qpn), 1);
	/* A REP naming our passive connection is no answer to any REQ of ours. */
	urnic_cm_mad_init(&m, URNIC_CM_ATTR_REP, 0x1234);
	m.msg.rep.local_comm_id = 0x100;
	m.msg.rep.remote_comm_id = conns[0];
	CHECK_EQ(feed(&m, &friend), -EPROTO);
	CHECK_EQ(urnic_cm_counter(cm, URNIC_CM_C_drop_unknown_conn), 1);
	/* REQ and REP naming their sender 0. */
	req(&m, 0, 0x12, 7174);
	CHECK_EQ(feed(&m, &friend), -EPROTO);
	CHECK_EQ(urnic_cm_counter(cm, URNIC_CM_C_drop_zero_comm_id), 1);
	CHECK_EQ(nevents, 1);
	teardown();
}

/* 10000 REQs, each a new connection, at a listener with a backlog of 8 and a table of
 * 16: 8 wait for the application, the rest are dropped without a word. Then the same
 * against a table of 16 and a backlog of 100. Then REQs for no listener: REJ each. */
static void test_req_flood(void)
{
	struct urnic_cm_mad m;

	setup(16, 8);
	for (uint32_t i = 1; i <= 10000; i++) {
		req(&m, i, i, 7174);
		feed(&m, &attacker);
	}
	CHECK_EQ(nconns, 8);
	CHECK_EQ(urnic_cm_conns_in_use(cm), 8);
	CHECK_EQ(urnic_cm_counter(cm, URNIC_CM_C_req_backlog_full), 9992);
	for (unsigned i = 0; i < 32; i++)
		CHECK_EQ(out_by_attr[i], 0);
	/* The same REQ again and again is one connection; rdma_cm MRAs each duplicate. */
	for (unsigned i = 0; i < 100; i++) {
		req(&m, 1, 1, 7174);
		CHECK_EQ(feed(&m, &attacker), 0);
	}
	CHECK_EQ(urnic_cm_counter(cm, URNIC_CM_C_dup_req), 100);
	CHECK_EQ(out_by_attr[URNIC_CM_ATTR_MRA - 0x10], 100);
	teardown();
	/* Destroyed unanswered, each sent a REJ. */
	CHECK_EQ(out_by_attr[URNIC_CM_ATTR_REJ - 0x10], 8);

	setup(16, 100);
	for (uint32_t i = 1; i <= 1000; i++) {
		req(&m, i, i, 7174);
		feed(&m, &attacker);
	}
	CHECK_EQ(nconns, 16);
	CHECK_EQ(urnic_cm_counter(cm, URNIC_CM_C_conn_table_full), 984);
	teardown();

	setup(16, 8);
	for (uint32_t i = 1; i <= 1000; i++) {
		req(&m, i, i, 7175);
		CHECK_EQ(feed(&m, &attacker), 0);
	}
	/* The first few wait for a listener (passive.c), bounded; the rest are refused now. */
	CHECK_EQ(urnic_cm_counter(cm, URNIC_CM_C_req_parked), URNIC_CM_PARK_SLOTS);
	CHECK_EQ(out_by_attr[URNIC_CM_ATTR_REJ - 0x10], 1000 - URNIC_CM_PARK_SLOTS);
	CHECK_EQ(urnic_cm_next_deadline(cm), URNIC_CM_PARK_NS);
	urnic_cm_tick(cm, URNIC_CM_PARK_NS - 1);
	drain();
	CHECK_EQ(out_by_attr[URNIC_CM_ATTR_REJ - 0x10], 1000 - URNIC_CM_PARK_SLOTS);
	urnic_cm_tick(cm, URNIC_CM_PARK_NS);
	drain();
	CHECK_EQ(out_by_attr[URNIC_CM_ATTR_REJ - 0x10], 1000);
	CHECK_EQ(urnic_cm_counter(cm, URNIC_CM_C_rej_invalid_service), 1000);
	CHECK_EQ(urnic_cm_conns_in_use(cm), 0);
	CHECK_EQ(urnic_cm_next_deadline(cm), 0);
	teardown();
}

static void test_not_mads(void)
{
	uint8_t buf[URNIC_MAD_BYTES + 1];
	struct wire_rng r = { 42 };

	setup(16, 8);
	for (unsigned i = 0; i < 1000; i++) {
		for (unsigned b = 0; b < sizeof(buf); b++)
			buf[b] = (uint8_t)wire_rng_u32(&r);
		buf[1] = URNIC_MGMT_CLASS_CM; /* past the first check, mostly refused later */
		CHECK_EQ(urnic_cm_input_bytes(cm, buf, wire_rng_below(&r, sizeof(buf) + 1),
					      &attacker, 0),
			 -EBADMSG);
	}
	CHECK_EQ(urnic_cm_counter(cm, URNIC_CM_C_drop_decode), 1000);
	CHECK_EQ(urnic_cm_counter(cm, URNIC_CM_C_rx_mads), 1000);
	drain();
	CHECK_EQ(nevents, 0);
	teardown();
}

/* Nobody drains the output queue: MADs are dropped whole, actions refused. */
static void test_no_room(void)
{
	struct urnic_cm_mad m;
	unsigned taken = 0;

	setup(16, 8);
	for (uint32_t i = 1; i <= 100; i++) {
		req(&m, i, i, 7175); /* no listener: each wants a REJ */
		if (urnic_cm_input(cm, &m, &attacker, 0) == 0)
			taken++;
	}
	/* The first ones wait for a listener and send nothing yet (passive.c); then 16 output
	 * slots, room kept for two MADs per input. */
	CHECK_EQ(taken, URNIC_CM_PARK_SLOTS + 15);
	CHECK_EQ(urnic_cm_counter(cm, URNIC_CM_C_drop_no_room), 100 - taken);
	drain();
	CHECK_EQ(out_by_attr[URNIC_CM_ATTR_REJ - 0x10], 15);
	teardown();
}

static void test_bad_handles(void)
{
	struct urnic_cm_accept_param ap = { .qpn = 1 };
	struct urnic_cm_connect_param p;
	struct urnic_cm_mad m;
	uint32_t h;

	setup(16, 8);
	CHECK_EQ(urnic_cm_accept(cm, 0x07000001, &ap, 0), -ENOENT);
	CHECK_EQ(urnic_cm_destroy(cm, 0, 0), -ENOENT);
	CHECK_EQ(urnic_cm_disconnect(cm, 0x01000001, NULL, 0, 0), -ENOENT);
	CHECK_EQ(urnic_cm_listen(cm, link_service(7174), 8, 0, &h), -EADDRINUSE);
	CHECK_EQ(urnic_cm_listen(cm, link_service(1), 0, 0, &h), -EINVAL);
	CHECK_EQ(urnic_cm_unlisten(cm, 99), -ENOENT);
	for (uint16_t port = 1; port < 8; port++)
		CHECK_EQ(urnic_cm_listen(cm, link_service(port), 1, 0, &h), 0);
	CHECK_EQ(urnic_cm_listen(cm, link_service(8), 1, 0, &h), -ENOSPC);
	CHECK_EQ(urnic_cm_unlisten(cm, h), 0);
	req(&m, 0x100, 0x11, 7174);
	feed(&m, &attacker);
	ap.qpn = 1u << 24;
	CHECK_EQ(urnic_cm_accept(cm, conns[0], &ap, 0), -EINVAL);
	ap.qpn = 1;
	ap.private_data_len = 197;
	ap.private_data = "";
	CHECK_EQ(urnic_cm_accept(cm, conns[0], &ap, 0), -EINVAL);
	CHECK_EQ(urnic_cm_disconnect(cm, conns[0], NULL, 0, 0), -EINVAL);
	CHECK_EQ(urnic_cm_establish(cm, conns[0], NULL, 0, 0), -EINVAL);
	memset(&p, 0, sizeof(p));
	p.transport = URNIC_CM_TRANSPORT_RC;
	p.path_mtu = 6;
	CHECK_EQ(urnic_cm_connect(cm, &p, 0, &h), -EINVAL);
	p.path_mtu = 3;
	p.max_cm_retries = 16;
	CHECK_EQ(urnic_cm_connect(cm, &p, 0, &h), -EINVAL);
	p.max_cm_retries = 15;
	p.private_data_len = 93;
	p.private_data = "";
	CHECK_EQ(urnic_cm_connect(cm, &p, 0, &h), -EINVAL);
	teardown();
}

/* Random well-formed MADs from a peer that has live connections with the victim, their
 * comm IDs and QPNs often the live ones: whatever they do to those connections, every
 * change is one of the table's, and all of it drains away. */
static void test_random_storm(void)
{
	struct cm_link l;
	struct urnic_cm_config cfg;
	struct wire_rng r = { 7 };
	uint32_t h, ids[2][32];
	unsigned nids[2] = { 0, 0 };

	link_config(&cfg);
	link_init(&l, &cfg, 23);
	l.side[0].handler = link_auto;
	l.side[1].handler = link_auto;
	CHECK_EQ(urnic_cm_listen(l.side[1].cm, link_service(7174), 32, 0, &h), 0);
	for (unsigned i = 0; i < 16; i++) {
		struct urnic_cm_connect_param p;
		uint32_t conn;

		link_connect_param(&l, 0, 7174, 0x100 + i, i, &p);
		CHECK_EQ(urnic_cm_connect(l.side[0].cm, &p, l.now_ns, &conn), 0);
		link_pump(&l);
	}
	link_run(&l, 1 * S);
	for (int s = 0; s < 2; s++)
		for (unsigned i = 0; i < l.side[s].nestablished && nids[s] < 32; i++)
			ids[s][nids[s]++] = l.side[s].established[i];
	for (unsigned i = 0; i < 20000; i++) {
		struct urnic_cm_mad m;
		uint16_t attr = (uint16_t)(URNIC_CM_ATTR_REQ + wire_rng_below(&r, 9));

		wire_cm_random(&m, attr, &r);
		if (wire_rng_below(&r, 4)) {
			m.msg.rep.remote_comm_id = ids[1][wire_rng_below(&r, nids[1])];
			m.msg.rep.local_comm_id = ids[0][wire_rng_below(&r, nids[0])];
		}
		if (attr == URNIC_CM_ATTR_REQ && wire_rng_below(&r, 2)) {
			m.msg.req.service_id = link_service(7174);
			m.msg.req.local_ca_guid = l.side[0].guid;
			m.msg.req.local_qpn = 0x100 + wire_rng_below(&r, 16);
		}
		if (attr == URNIC_CM_ATTR_DREQ && wire_rng_below(&r, 2))
			m.msg.dreq.remote_qpn_eecn = 0x200 + (m.msg.dreq.remote_comm_id & 0xfff);
		urnic_cm_input(l.side[1].cm, &m, &l.side[0].addr, l.now_ns);
		link_run(&l, l.now_ns + 1000);
	}
	link_disconnect_all(&l, 0);
	link_disconnect_all(&l, 1);
	/* An MRA may have stretched a wait to 4.096 us * 2^31: run past it. */
	link_run(&l, l.now_ns + 20000000 * S);
	link_check_clean(&l);
	link_fini(&l);
}

int main(void)
{
	RUN(test_unknown_comm_ids);
	RUN(test_wrong_peer);
	RUN(test_req_flood);
	RUN(test_not_mads);
	RUN(test_no_room);
	RUN(test_bad_handles);
	RUN(test_random_storm);
	return 0;
}
