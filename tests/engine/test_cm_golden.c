// SPDX-License-Identifier: MIT
/*
 * test_cm_golden.c - the CM against Linux's own MADs: the rdma_cm exchanges of rping and
 * ib_write_bw -R over rxe (tests/golden/rxe_cm_{rping,write}.pcap, client 10.50.0.12,
 * server 10.50.0.11).
 *
 * Passive: each REQ the client sent goes into a CM listening on its service ID; the
 * application accepts with the values rxe's server put in its REP, and our REP must be
 * that REP byte for byte but for our own comm ID: TID, the client's comm ID, QPN, PSN,
 * resources, Target ACK Delay and CA GUID as Linux expects them. The client's RTU and
 * DREQ (their comm IDs ours) establish and release it, and our DREP is rxe's.
 * Active: a CM connecting with the client's values sends the client's REQ, byte for byte
 * but for the comm ID and the TID built from it (cm.c cm_form_tid, hi_tid 2); the
 * server's REP draws the client's RTU, and disconnect() the client's DREQ.
 */
#include <stdio.h>
#include <string.h>

#include "cm_link.h"
#include "cmgen.h"
#include "pcap.h"
#include "wire/cma.h"

static const uint64_t S = 1000000000ull;

enum { MAX_MADS = 16 };

struct capture {
	struct urnic_cm_mad mads[MAX_MADS];
	uint8_t src_ip[MAX_MADS][4];
	unsigned n;
};

static const uint8_t client_ip[4] = { 10, 50, 0, 12 }, server_ip[4] = { 10, 50, 0, 11 };

static void read_capture(const char *name, struct capture *c)
{
	struct wire_pcap pc;
	struct wire_frame fr;
	struct wire_udp u;
	struct urnic_pkt pkt;
	char path[4096];

	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), "%s/%s", URNIC_GOLDEN_DIR, name);
	CHECK_EQ(wire_pcap_open(&pc, path), 0);
	while (wire_pcap_next(&pc, &fr) == 1) {
		if (!wire_frame_udp(&fr, &u) || u.dport != URNIC_ROCE_UDP_PORT)
			continue;
		CHECK(urnic_pkt_decode(&pkt, u.payload, u.payload_bytes) > 0);
		if (pkt.bth.opcode != URNIC_OP_UD_SEND_ONLY)
			continue;
		CHECK(c->n < MAX_MADS);
		CHECK_EQ(urnic_cm_decode_pkt(&c->mads[c->n], &pkt, NULL), URNIC_MAD_BYTES);
		memcpy(c->src_ip[c->n], u.ip + 12, 4);
		c->n++;
	}
	wire_pcap_close(&pc);
}

static struct urnic_cm_addr addr_of(const uint8_t *ip)
{
	struct urnic_cm_addr a = { .udp_sport = 0 };

	a.gid[10] = a.gid[11] = 0xff;
	memcpy(a.gid + 12, ip, 4);
	return a;
}

/* The capture's message of attribute attr whose (local, remote) comm IDs are these;
 * remote 0: any. */
static const struct urnic_cm_mad *find(const struct capture *c, uint16_t attr, uint32_t local,
				       uint32_t remote)
{
	for (unsigned i = 0; i < c->n; i++) {
		const struct urnic_cm_mad *m = &c->mads[i];

		if (m->hdr.attr_id == attr && m->msg.rtu.local_comm_id == local &&
		    (!remote || m->msg.rtu.remote_comm_id == remote))
			return m;
	}
	return NULL;
}

/* The one MAD the CM queued, which must be `want` byte for byte, sent to QP 1 of `to`. */
static void expect_out(struct urnic_cm *cm, const struct urnic_cm_mad *want,
		       const struct urnic_cm_addr *to)
{
	struct urnic_cm_out o;
	struct urnic_cm_mad got;
	uint8_t bytes[URNIC_MAD_BYTES];
	const char *diff;

	CHECK(urnic_cm_out_pop(cm, &o));
	CHECK_EQ(o.dst_qpn, URNIC_GSI_QPN);
	CHECK(!memcmp(o.dst.gid, to->gid, 16));
	CHECK_EQ(urnic_cm_decode(&got, o.mad, URNIC_MAD_BYTES, NULL), URNIC_MAD_BYTES);
	diff = wire_cm_diff(want, &got);
	if (diff)
		fprintf(stderr, "%s: %s differs from Linux's\n",
			urnic_cm_attr_name(want->hdr.attr_id), diff);
	CHECK(diff == NULL);
	CHECK_EQ(urnic_cm_encode(want, bytes, sizeof(bytes)), URNIC_MAD_BYTES);
	CHECK(!memcmp(bytes, o.mad, URNIC_MAD_BYTES));
	CHECK(!urnic_cm_out_pop(cm, &o));
}

static void expect_event(struct urnic_cm *cm, enum urnic_cm_event_type t, struct urnic_cm_event *ev)
{
	CHECK(urnic_cm_event_pop(cm, ev));
	if (ev->type != t)
		fprintf(stderr, "event %s, not %s\n", urnic_cm_event_name(ev->type),
			urnic_cm_event_name(t));
	CHECK_EQ(ev->type, t);
}

static struct urnic_cm *new_cm(uint64_t guid, uint32_t seed)
{
	struct urnic_cm_config cfg;
	struct urnic_cm *cm;

	urnic_cm_config_init(&cfg);
	cfg.ca_guid = guid;
	cfg.ack_delay = 15; /* rxe's; its REP's Target ACK Delay */
	cfg.hi_tid = 2;
	cfg.seed = seed;
	CHECK_EQ(urnic_cm_new(&cm, &cfg), 0);
	return cm;
}

/* One connection of the capture, from its REQ, with us as the server. */
static void replay_passive(const struct capture *c, const struct urnic_cm_mad *req, uint16_t port)
{
	const struct urnic_cm_mad *rep, *rtu, *dreq, *drep;
	struct urnic_cm_addr client = addr_of(client_ip);
	struct urnic_cm_accept_param ap;
	struct urnic_cm_conn_info info;
	struct urnic_cm_event ev;
	struct urnic_cm_mad want, in;
	struct urnic_cm *cm;
	uint32_t h, conn, linux_id;

	rep = NULL;
	for (unsigned i = 0; i < c->n; i++)
		if (c->mads[i].hdr.attr_id == URNIC_CM_ATTR_REP &&
		    c->mads[i].msg.rep.remote_comm_id == req->msg.req.local_comm_id)
			rep = &c->mads[i];
	CHECK(rep != NULL);
	linux_id = rep->msg.rep.local_comm_id;
	cm = new_cm(rep->msg.rep.local_ca_guid, port);
	CHECK_EQ(req->msg.req.service_id, urnic_cma_service_id(URNIC_RDMA_PS_TCP, port));
	CHECK_EQ(urnic_cm_listen(cm, req->msg.req.service_id, 1, 0, &h), 0);

	CHECK_EQ(urnic_cm_input(cm, req, &client, 0), 0);
	expect_event(cm, URNIC_CM_EVENT_CONNECT_REQUEST, &ev);
	CHECK(wire_cm_diff(&ev.mad, req) == NULL);
	conn = ev.conn;
	CHECK_EQ(urnic_cm_query(cm, conn, &info), 0);
	CHECK_EQ(info.remote_qpn, req->msg.req.local_qpn);
	CHECK_EQ(info.sq_psn, req->msg.req.starting_psn);
	CHECK_EQ(info.ack_timeout, req->msg.req.primary.local_ack_timeout);
	CHECK_EQ(info.responder_resources, req->msg.req.initiator_depth);

	ap = (struct urnic_cm_accept_param){
		.qpn = rep->msg.rep.local_qpn,
		.starting_psn = rep->msg.rep.starting_psn,
		.responder_resources = rep->msg.rep.responder_resources,
		.initiator_depth = rep->msg.rep.initiator_depth,
		.rnr_retry_count = rep->msg.rep.rnr_retry_count,
		.failover_accepted = rep->msg.rep.failover_accepted,
		.flow_control = rep->msg.rep.end_to_end_flow_control,
		.srq = rep->msg.rep.srq,
		.private_data = rep->msg.rep.private_data,
		.private_data_len = sizeof(rep->msg.rep.private_data),
	};
	CHECK_EQ(urnic_cm_accept(cm, conn, &ap, 0), 0);
	want = *rep;
	want.msg.rep.local_comm_id = conn;
	expect_out(cm, &want, &client);

	/* Linux's RTU names Linux's comm ID: no connection here. */
	rtu = find(c, URNIC_CM_ATTR_RTU, req->msg.req.local_comm_id, linux_id);
	CHECK(rtu != NULL);
	CHECK(urnic_cm_input(cm, rtu, &client, 1000) < 0);
	CHECK_EQ(urnic_cm_counter(cm, URNIC_CM_C_drop_unknown_conn), 1);
	in = *rtu;
	in.msg.rtu.remote_comm_id = conn;
	CHECK_EQ(urnic_cm_input(cm, &in, &client, 1000), 0);
	expect_event(cm, URNIC_CM_EVENT_ESTABLISHED, &ev);

	/* The capture's DREQ (either side's) and DREP, seen from the server. */
	dreq = find(c, URNIC_CM_ATTR_DREQ, req->msg.req.local_comm_id, linux_id);
	if (dreq) {
		in = *dreq;
		in.msg.dreq.remote_comm_id = conn;
		CHECK_EQ(urnic_cm_input(cm, &in, &client, 2000), 0);
		expect_event(cm, URNIC_CM_EVENT_DISCONNECTED, &ev);
		CHECK_EQ(urnic_cm_disconnect(cm, conn, NULL, 0, 2000), 0);
		drep = find(c, URNIC_CM_ATTR_DREP, linux_id, req->msg.req.local_comm_id);
		CHECK(drep != NULL);
		want = *drep;
		want.msg.drep.local_comm_id = conn;
		expect_out(cm, &want, &client);
	} else {
		dreq = find(c, URNIC_CM_ATTR_DREQ, linux_id, req->msg.req.local_comm_id);
		CHECK(dreq != NULL);
		CHECK_EQ(urnic_cm_disconnect(cm, conn, NULL, 0, 2000), 0);
		want = *dreq;
		want.msg.dreq.local_comm_id = conn;
		want.hdr.tid = 2ull << 32 | __builtin_bswap32(conn);
		expect_out(cm, &want, &client);
		drep = find(c, URNIC_CM_ATTR_DREP, req->msg.req.local_comm_id, linux_id);
		CHECK(drep != NULL);
		in = *drep;
		in.msg.drep.remote_comm_id = conn;
		in.hdr.tid = want.hdr.tid;
		CHECK_EQ(urnic_cm_input(cm, &in, &client, 3000), 0);
		expect_event(cm, URNIC_CM_EVENT_DISCONNECTED, &ev);
	}
	urnic_cm_tick(cm, 10 * S);
	expect_event(cm, URNIC_CM_EVENT_TIMEWAIT_EXIT, &ev);
	CHECK_EQ(urnic_cm_destroy(cm, conn, 10 * S), 0);
	CHECK_EQ(urnic_cm_conns_in_use(cm), 0);
	CHECK_EQ(urnic_cm_counter(cm, URNIC_CM_C_internal_bad_transition), 0);
	urnic_cm_free(cm);
}

/* The rping client, as ourselves. */
static void replay_active(const struct capture *c)
{
	const struct urnic_cm_mad *req = &c->mads[0], *rep = &c->mads[1], *rtu = &c->mads[2];
	const struct urnic_cm_mad *dreq = &c->mads[3], *drep = &c->mads[4];
	struct urnic_cm_addr server = addr_of(server_ip);
	const struct urnic_cm_req *r = &req->msg.req;
	struct urnic_cm_connect_param p = {
		.service_id = r->service_id,
		.peer = server,
		.qpn = r->local_qpn,
		.starting_psn = r->starting_psn,
		.transport = r->transport_type,
		.responder_resources = r->responder_resources,
		.initiator_depth = r->initiator_depth,
		.remote_cm_response_timeout = r->remote_cm_response_timeout,
		.local_cm_response_timeout = r->local_cm_response_timeout,
		.packet_life_time = 18, /* Local ACK Timeout 19 = cm_ack_timeout(15, 18) */
		.max_cm_retries = r->max_cm_retries,
		.retry_count = r->retry_count,
		.rnr_retry_count = r->rnr_retry_count,
		.path_mtu = r->path_mtu,
		.srq = r->srq,
		.flow_control = r->end_to_end_flow_control,
		.pkey = r->pkey,
		.flow_label = r->primary.flow_label,
		.traffic_class = r->primary.traffic_class,
		.hop_limit = r->primary.hop_limit,
		.sl = r->primary.sl,
		.packet_rate = r->primary.packet_rate,
		.private_data = r->private_data,
		.private_data_len = sizeof(r->private_data),
	};
	struct urnic_cm_mad want, in;
	struct urnic_cm_event ev;
	struct urnic_cm *cm = new_cm(r->local_ca_guid, 1);
	uint32_t conn;
	uint64_t tid;

	CHECK(!memcmp(c->src_ip[0], client_ip, 4) && dreq->hdr.attr_id == URNIC_CM_ATTR_DREQ);
	memcpy(p.local_gid, r->primary.local_gid, 16);
	CHECK_EQ(urnic_cm_connect(cm, &p, 0, &conn), 0);
	tid = 2ull << 32 | __builtin_bswap32(conn);
	want = *req;
	want.msg.req.local_comm_id = conn;
	want.hdr.tid = tid;
	expect_out(cm, &want, &server);

	in = *rep;
	in.msg.rep.remote_comm_id = conn;
	in.hdr.tid = tid;
	CHECK_EQ(urnic_cm_input(cm, &in, &server, 1000), 0);
	expect_event(cm, URNIC_CM_EVENT_CONNECT_RESPONSE, &ev);
	CHECK_EQ(urnic_cm_establish(cm, conn, NULL, 0, 1000), 0);
	want = *rtu;
	want.msg.rtu.local_comm_id = conn;
	want.hdr.tid = tid;
	expect_out(cm, &want, &server);
	expect_event(cm, URNIC_CM_EVENT_ESTABLISHED, &ev);

	CHECK_EQ(urnic_cm_disconnect(cm, conn, NULL, 0, 2000), 0);
	want = *dreq;
	want.msg.dreq.local_comm_id = conn;
	want.hdr.tid = tid;
	expect_out(cm, &want, &server);
	in = *drep;
	in.msg.drep.remote_comm_id = conn;
	in.hdr.tid = tid;
	CHECK_EQ(urnic_cm_input(cm, &in, &server, 3000), 0);
	expect_event(cm, URNIC_CM_EVENT_DISCONNECTED, &ev);
	urnic_cm_tick(cm, 10 * S);
	expect_event(cm, URNIC_CM_EVENT_TIMEWAIT_EXIT, &ev);
	CHECK_EQ(urnic_cm_destroy(cm, conn, 10 * S), 0);
	CHECK_EQ(urnic_cm_conns_in_use(cm), 0);
	urnic_cm_free(cm);
}

static void test_rping_passive(void)
{
	static struct capture c;

	read_capture("rxe_cm_rping.pcap", &c);
	CHECK_EQ(c.n, 5);
	CHECK_EQ(c.mads[0].hdr.attr_id, URNIC_CM_ATTR_REQ);
	/* cm.c cm_form_tid, as the capture shows it: hi_tid 2, the comm ID's bytes. */
	CHECK_EQ(c.mads[0].hdr.tid,
		 2ull << 32 | __builtin_bswap32(c.mads[0].msg.req.local_comm_id));
	replay_passive(&c, &c.mads[0], 7174);
}

static void test_rping_active(void)
{
	static struct capture c;

	read_capture("rxe_cm_rping.pcap", &c);
	replay_active(&c);
}

static void test_write_bw_passive(void)
{
	static struct capture c;
	unsigned reqs = 0;

	read_capture("rxe_cm_write.pcap", &c);
	for (unsigned i = 0; i < c.n; i++) {
		if (c.mads[i].hdr.attr_id != URNIC_CM_ATTR_REQ)
			continue;
		replay_passive(&c, &c.mads[i], 18515);
		reqs++;
	}
	CHECK_EQ(reqs, 2);
}

int main(void)
{
	RUN(test_rping_passive);
	RUN(test_rping_active);
	RUN(test_write_bw_passive);
	return 0;
}
