// SPDX-License-Identifier: MIT
/*
 * test_cm.c - the CM state machine's main paths between two CMs over a clean link
 * (cm_link.h): connect, accept, RTU and a disconnect with TimeWait on both sides; what
 * each side's QP learns; transaction and comm IDs as Linux builds them; a consumer
 * reject with private data; a REQ for no listener; the listener's backlog and the
 * connection table's bound; SIDR request and reply; TimeWait keeping a comm ID from reuse.
 */
#include <errno.h>
#include <string.h>

#include "cm_link.h"
#include "wire/cma.h"

static const uint64_t MS = 1000000ull, S = 1000000000ull;

static struct cm_link link;

static void setup(void)
{
	struct urnic_cm_config cfg;

	link_config(&cfg);
	link_init(&link, &cfg, 7);
	link.side[0].handler = link_auto;
	link.side[1].handler = link_auto;
}

static void teardown(void)
{
	link_disconnect_all(&link, 0);
	link_run(&link, link.now_ns + 300 * S);
	link_check_clean(&link);
	link_fini(&link);
}

static uint32_t listen_on(int side, uint16_t port, uint32_t backlog)
{
	uint32_t h;

	CHECK_EQ(urnic_cm_listen(link.side[side].cm, link_service(port), backlog, 0x1157, &h), 0);
	return h;
}

static uint32_t connect_from0(uint16_t port, uint32_t qpn, uint32_t psn)
{
	struct urnic_cm_connect_param p;
	uint32_t conn;

	link_connect_param(&link, 0, port, qpn, psn, &p);
	p.user = 0xc0ffee;
	CHECK_EQ(urnic_cm_connect(link.side[0].cm, &p, link.now_ns, &conn), 0);
	link_pump(&link);
	return conn;
}

/* The passive side checks the REQ it is told about, then accepts. */
static void accept_checked(struct cm_link *l, int s, const struct urnic_cm_event *ev)
{
	const struct urnic_cm_req *req = &ev->mad.msg.req;
	struct urnic_cm_accept_param ap = {
		.qpn = 0x22,
		.starting_psn = 0x13e344,
		.responder_resources = 1,
		.initiator_depth = 1,
		.rnr_retry_count = 7,
		.private_data = "rep!",
		.private_data_len = 4,
	};

	if (ev->type != URNIC_CM_EVENT_CONNECT_REQUEST) {
		link_auto(l, s, ev);
		return;
	}
	CHECK_EQ(ev->mad.hdr.attr_id, URNIC_CM_ATTR_REQ);
	CHECK_EQ(ev->user, 0x1157); /* the listener's */
	CHECK(ev->listener != 0);
	CHECK_EQ(req->local_qpn, 0x11);
	CHECK_EQ(req->starting_psn, 0x05b7fc);
	CHECK_EQ(req->local_ca_guid, l->side[0].guid);
	CHECK(!memcmp(req->private_data, "req?", 4));
	CHECK(!memcmp(ev->peer.gid, l->side[0].addr.gid, 16));
	CHECK_EQ(link_state(l, s, ev->conn), URNIC_CM_MRA_REQ_SENT); /* rdma_cm's */
	CHECK_EQ(urnic_cm_accept(l->side[s].cm, ev->conn, &ap, l->now_ns), 0);
	CHECK_EQ(urnic_cm_accept(l->side[s].cm, ev->conn, &ap, l->now_ns), -EINVAL);
}

static void test_establish_and_disconnect(void)
{
	struct urnic_cm_connect_param p;
	struct urnic_cm_conn_info a, b;
	const struct urnic_cm_event *ev;
	uint32_t conn, pconn;

	setup();
	link.side[1].handler = accept_checked;
	listen_on(1, 7174, 4);
	link_connect_param(&link, 0, 7174, 0x11, 0x05b7fc, &p);
	p.private_data = "req?";
	p.private_data_len = 4;
	p.user = 0xc0ffee;
	CHECK_EQ(urnic_cm_connect(link.side[0].cm, &p, 0, &conn), 0);
	CHECK_EQ(conn >> 24, 1); /* the owner's bits */
	link_run(&link, 1 * S);

	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_CONNECT_RESPONSE], 1);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_ESTABLISHED], 1);
	CHECK_EQ(link.side[1].events[URNIC_CM_EVENT_CONNECT_REQUEST], 1);
	CHECK_EQ(link.side[1].events[URNIC_CM_EVENT_ESTABLISHED], 1);
	CHECK_EQ(link.side[0].sent[0], 1); /* one REQ */
	CHECK_EQ(link.side[1].sent[3], 1); /* one REP */
	CHECK_EQ(link.side[0].sent[4], 1); /* one RTU */
	ev = link_last(&link, 0, URNIC_CM_EVENT_CONNECT_RESPONSE);
	CHECK(ev && !memcmp(ev->mad.msg.rep.private_data, "rep!", 4));
	/* cm.c cm_form_tid: hi_tid << 32 | the comm ID's bytes as they lie in memory. */
	CHECK_EQ(ev->mad.hdr.tid, 2ull << 32 | __builtin_bswap32(conn));
	CHECK_EQ(ev->mad.msg.rep.remote_comm_id, conn);
	pconn = ev->mad.msg.rep.local_comm_id;
	CHECK_EQ(pconn >> 24, 2);

	/* What each QP learns (ib_cm_init_qp_attr): the REQ's PSN is where the passive
	 * side sends from, the REP's where the active side does. */
	CHECK_EQ(urnic_cm_query(link.side[0].cm, conn, &a), 0);
	CHECK_EQ(urnic_cm_query(link.side[1].cm, pconn, &b), 0);
	CHECK(a.state == URNIC_CM_ESTABLISHED && b.state == URNIC_CM_ESTABLISHED);
	CHECK(!a.passive && b.passive);
	CHECK_EQ(a.user, 0xc0ffee);
	CHECK_EQ(a.remote_qpn, 0x22);
	CHECK_EQ(b.remote_qpn, 0x11);
	CHECK_EQ(a.sq_psn, 0x13e344);
	CHECK_EQ(a.rq_psn, 0x05b7fc);
	CHECK_EQ(b.sq_psn, 0x05b7fc);
	CHECK_EQ(b.rq_psn, 0x13e344);
	CHECK_EQ(a.remote_id, pconn);
	CHECK_EQ(b.remote_id, conn);
	CHECK_EQ(a.remote_guid, link.side[1].guid);
	/* The QP's ACK timeout: cm_ack_timeout(15, 16) = 17 at both ends. */
	CHECK_EQ(a.ack_timeout, 17);
	CHECK_EQ(b.ack_timeout, 17);
	CHECK_EQ(urnic_cm_establish(link.side[0].cm, conn, NULL, 0, link.now_ns), -EISCONN);

	/* Active side disconnects: DREQ, the peer's DREP, TimeWait at both ends. */
	CHECK_EQ(urnic_cm_disconnect(link.side[0].cm, conn, "bye", 3, link.now_ns), 0);
	link_run(&link, link.now_ns + 100 * MS);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_DISCONNECTED], 1);
	CHECK_EQ(link.side[1].events[URNIC_CM_EVENT_DISCONNECTED], 1);
	ev = link_last(&link, 1, URNIC_CM_EVENT_DISCONNECTED);
	CHECK(ev && !memcmp(ev->mad.msg.dreq.private_data, "bye", 3));
	CHECK_EQ(ev->mad.msg.dreq.remote_qpn_eecn, 0x22);
	CHECK_EQ(link_state(&link, 0, conn), URNIC_CM_TIMEWAIT);
	CHECK_EQ(link_state(&link, 1, pconn), URNIC_CM_TIMEWAIT);
	link_run(&link, link.now_ns + 1 * S);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_TIMEWAIT_EXIT], 1);
	CHECK_EQ(link.side[1].events[URNIC_CM_EVENT_TIMEWAIT_EXIT], 1);
	CHECK_EQ(urnic_cm_conns_in_use(link.side[0].cm), 0);
	CHECK_EQ(urnic_cm_conns_in_use(link.side[1].cm), 0);
	teardown();
}

/* The passive application says no, with a reason of its own in the private data. */
static void reject_all(struct cm_link *l, int s, const struct urnic_cm_event *ev)
{
	if (ev->type != URNIC_CM_EVENT_CONNECT_REQUEST) {
		link_auto(l, s, ev);
		return;
	}
	CHECK_EQ(urnic_cm_reject(l->side[s].cm, ev->conn, URNIC_CM_REJ_CONSUMER_DEFINED, "go away",
				 7, l->now_ns),
		 0);
	/* Rejected before any REP: IDLE, the handle still held until destroyed. */
	CHECK_EQ(link_state(l, s, ev->conn), URNIC_CM_IDLE);
	CHECK_EQ(urnic_cm_destroy(l->side[s].cm, ev->conn, l->now_ns), 0);
}

static void test_reject_by_consumer(void)
{
	const struct urnic_cm_event *ev;
	uint32_t conn;

	setup();
	link.side[1].handler = reject_all;
	listen_on(1, 5000, 4);
	conn = connect_from0(5000, 0x11, 1);
	link_run(&link, 1 * S);
	ev = link_last(&link, 0, URNIC_CM_EVENT_REJECTED);
	CHECK(ev && ev->conn == conn);
	CHECK_EQ(ev->status, URNIC_CM_REJ_CONSUMER_DEFINED);
	CHECK_EQ(ev->user, 0xc0ffee);
	CHECK(!memcmp(ev->mad.msg.rej.private_data, "go away", 7));
	CHECK_EQ(ev->mad.msg.rej.message_rejected, URNIC_CM_MSG_CODE_REQ);
	CHECK_EQ(ev->mad.msg.rej.remote_comm_id, conn);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_ESTABLISHED], 0);
	CHECK_EQ(link.side[1].sent[2], 1); /* one REJ, no REP */
	CHECK_EQ(link.side[1].sent[3], 0);
	/* Rejected before any REP: no TimeWait, nothing left on either side. */
	CHECK_EQ(urnic_cm_conns_in_use(link.side[0].cm), 0);
	CHECK_EQ(link.side[1].events[URNIC_CM_EVENT_CONNECT_REQUEST], 1);
	teardown();
}

static void test_invalid_service_id(void)
{
	const struct urnic_cm_event *ev;

	setup();
	listen_on(1, 5000, 4);
	connect_from0(5001, 0x11, 1);
	link_run(&link, 1 * S);
	ev = link_last(&link, 0, URNIC_CM_EVENT_REJECTED);
	CHECK(ev && ev->status == URNIC_CM_REJ_INVALID_SERVICE_ID);
	CHECK_EQ(ev->mad.msg.rej.message_rejected, URNIC_CM_MSG_CODE_REQ);
	CHECK_EQ(urnic_cm_counter(link.side[1].cm, URNIC_CM_C_rej_invalid_service), 1);
	CHECK_EQ(link.side[1].events[URNIC_CM_EVENT_CONNECT_REQUEST], 0);
	CHECK_EQ(urnic_cm_conns_in_use(link.side[1].cm), 0);
	teardown();
}

/* A REQ that comes just before its listener (passive.c) is taken once the listener is
 * there, within the wait; not rejected. */
static void test_listen_after_req(void)
{
	setup();
	connect_from0(5002, 0x11, 1);
	link_run(&link, link.now_ns + URNIC_CM_PARK_NS / 2);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_REJECTED], 0);
	CHECK_EQ(urnic_cm_counter(link.side[1].cm, URNIC_CM_C_req_parked), 1);
	listen_on(1, 5002, 4);
	link_run(&link, link.now_ns + 10 * MS);
	CHECK_EQ(link.side[1].events[URNIC_CM_EVENT_CONNECT_REQUEST], 1);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_ESTABLISHED], 1);
	CHECK_EQ(urnic_cm_counter(link.side[1].cm, URNIC_CM_C_req_unparked), 1);
	CHECK_EQ(urnic_cm_counter(link.side[1].cm, URNIC_CM_C_rej_invalid_service), 0);
	teardown();
}

/* A parked REQ another process on the address listens for now (transport/udp_unheld.c
 * hands it on) leaves the park without a REJ: that process's CM answers it. */
static void test_unpark_handed_on(void)
{
	uint32_t conn;

	setup();
	conn = connect_from0(5004, 0x11, 1);
	link_run(&link, link.now_ns + URNIC_CM_PARK_NS / 2);
	CHECK_EQ(urnic_cm_counter(link.side[1].cm, URNIC_CM_C_req_parked), 1);
	CHECK(!urnic_cm_unpark(link.side[1].cm, conn ^ 1, link.side[0].guid));
	CHECK(!urnic_cm_unpark(link.side[1].cm, conn, link.side[0].guid + 1));
	CHECK(urnic_cm_unpark(link.side[1].cm, conn, link.side[0].guid));
	CHECK(!urnic_cm_unpark(link.side[1].cm, conn, link.side[0].guid));
	link_run(&link, link.now_ns + 2 * URNIC_CM_PARK_NS);
	CHECK_EQ(urnic_cm_counter(link.side[1].cm, URNIC_CM_C_req_handed_on), 1);
	CHECK_EQ(urnic_cm_counter(link.side[1].cm, URNIC_CM_C_rej_invalid_service), 0);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_REJECTED], 0);
	teardown();
}

/* The process goes with its connections (urnic_cm_destroy_all): the established one
 * sends its DREQ, and the peer hears of it. */
static void test_destroy_all(void)
{
	uint32_t conn;

	setup();
	listen_on(1, 5003, 4);
	conn = connect_from0(5003, 0x11, 1);
	link_run(&link, link.now_ns + 10 * MS);
	CHECK_EQ(link_state(&link, 0, conn), URNIC_CM_ESTABLISHED);
	CHECK_EQ(urnic_cm_destroy_all(link.side[0].cm, link.now_ns), 0);
	link_pump(&link);
	link_run(&link, link.now_ns + 10 * MS);
	CHECK_EQ(link.side[1].events[URNIC_CM_EVENT_DISCONNECTED], 1);
	CHECK_EQ(urnic_cm_destroy(link.side[0].cm, conn, link.now_ns), -ENOENT);
	teardown();
}

/* A process leaving with a connection it answered a DREQ for sends that DREP once
 * more (drep_parting): nothing will be left to answer the DREQ if the first is lost. */
static void test_drep_parting(void)
{
	uint32_t conn;

	setup();
	listen_on(1, 5005, 4);
	conn = connect_from0(5005, 0x11, 1);
	link_run(&link, link.now_ns + 10 * MS);
	CHECK_EQ(urnic_cm_disconnect(link.side[0].cm, conn, NULL, 0, link.now_ns), 0);
	link_pump(&link);
	link_run(&link, link.now_ns + 10 * MS);
	CHECK_EQ(link.side[1].sent[URNIC_CM_ATTR_DREP - 0x10], 1);
	CHECK_EQ(urnic_cm_destroy_all(link.side[1].cm, link.now_ns), 0);
	link_pump(&link);
	CHECK_EQ(link.side[1].sent[URNIC_CM_ATTR_DREP - 0x10], 2);
	CHECK_EQ(urnic_cm_counter(link.side[1].cm, URNIC_CM_C_drep_parting), 1);
	/* The side that sent the DREQ has no DREP of its own to repeat. */
	CHECK_EQ(urnic_cm_destroy_all(link.side[0].cm, link.now_ns), 0);
	CHECK_EQ(urnic_cm_counter(link.side[0].cm, URNIC_CM_C_drep_parting), 0);
	teardown();
}

/* Holds every connect request unanswered; remembers them. */
static uint32_t held[16];
static unsigned nheld;

static void hold_requests(struct cm_link *l, int s, const struct urnic_cm_event *ev)
{
	if (ev->type == URNIC_CM_EVENT_CONNECT_REQUEST) {
		CHECK(nheld < 16);
		held[nheld++] = ev->conn;
	} else {
		link_auto(l, s, ev);
	}
}

static void test_backlog_overflow(void)
{
	struct urnic_cm_accept_param ap = { .qpn = 0x40, .responder_resources = 1 };

	setup();
	nheld = 0;
	link.side[1].handler = hold_requests;
	listen_on(1, 6000, 2);
	for (uint32_t i = 0; i < 4; i++)
		connect_from0(6000, 0x11 + i, i);
	link_run(&link, 1 * S);
	/* Two wait for the application; the REQs beyond the backlog are dropped without a
	 * word, as Linux's ucma drops them: their senders try again. */
	CHECK_EQ(nheld, 2);
	CHECK_EQ(urnic_cm_counter(link.side[1].cm, URNIC_CM_C_req_backlog_full), 2);
	CHECK_EQ(link.side[1].sent[2], 0);
	CHECK_EQ(urnic_cm_conns_in_use(link.side[1].cm), 2);
	/* An answer frees a slot: the next retransmitted REQ takes it. */
	CHECK_EQ(urnic_cm_accept(link.side[1].cm, held[0], &ap, link.now_ns), 0);
	link_run(&link, 6 * S);
	CHECK_EQ(nheld, 3);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_ESTABLISHED], 1);
	/* The duplicate of the REQ still held gets rdma_cm's MRA. */
	CHECK_EQ(link.side[1].sent[1], 1);
	CHECK_EQ(urnic_cm_counter(link.side[0].cm, URNIC_CM_C_dup_mra), 0);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_UNREACHABLE], 0);
	for (unsigned i = 1; i < nheld; i++)
		CHECK_EQ(urnic_cm_destroy(link.side[1].cm, held[i], link.now_ns), 0);
	link_run(&link, 20 * S);
	/* Destroyed unanswered: REJ 'consumer defined' (cm_destroy_id). */
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_REJECTED], 2);
	/* The last one got room, and nobody answers it. */
	CHECK_EQ(nheld, 4);
	CHECK_EQ(urnic_cm_destroy(link.side[1].cm, held[3], link.now_ns), 0);
	teardown();
}

static void test_table_full(void)
{
	struct urnic_cm_connect_param p;
	struct urnic_cm_config cfg;
	uint32_t conn;

	link_config(&cfg);
	cfg.max_conns = 2;
	link_init(&link, &cfg, 9);
	link.side[0].handler = link_auto;
	link.side[1].handler = link_auto;
	listen_on(1, 6000, 8);
	connect_from0(6000, 0x11, 0);
	connect_from0(6000, 0x12, 0);
	link_connect_param(&link, 0, 6000, 0x13, 0, &p);
	CHECK_EQ(urnic_cm_connect(link.side[0].cm, &p, link.now_ns, &conn), -ENOMEM);
	CHECK_EQ(urnic_cm_counter(link.side[0].cm, URNIC_CM_C_conn_table_full), 1);
	link_run(&link, 1 * S);
	CHECK_EQ(link.side[1].events[URNIC_CM_EVENT_ESTABLISHED], 2);
	teardown();
}

/* TimeWait holds the comm ID and its slot: a one-slot table cannot connect again until
 * it is over, and then does with another comm ID. A REQ seen again in TimeWait is
 * answered as stale. */
static void test_timewait(void)
{
	struct urnic_cm_connect_param p;
	struct urnic_cm_config cfg;
	uint32_t conn, again;
	uint64_t t0;

	link_config(&cfg);
	cfg.max_conns = 1;
	link_init(&link, &cfg, 11);
	link.side[0].handler = link_auto;
	link.side[1].handler = link_auto;
	listen_on(1, 6000, 8);
	conn = connect_from0(6000, 0x11, 0);
	link_run(&link, 1 * S);
	CHECK_EQ(link_state(&link, 0, conn), URNIC_CM_ESTABLISHED);
	/* Destroyed while established: one DREQ, TimeWait without a handle. */
	t0 = link.now_ns;
	CHECK_EQ(urnic_cm_destroy(link.side[0].cm, conn, t0), 0);
	CHECK_EQ(link_state(&link, 0, conn), -1);
	CHECK_EQ(urnic_cm_destroy(link.side[0].cm, conn, t0), -ENOENT);
	CHECK_EQ(urnic_cm_conns_in_use(link.side[0].cm), 1);
	link_connect_param(&link, 0, 6000, 0x12, 0, &p);
	CHECK_EQ(urnic_cm_connect(link.side[0].cm, &p, t0, &again), -ENOMEM);
	link_run(&link, t0 + 400 * MS);
	CHECK_EQ(urnic_cm_conns_in_use(link.side[0].cm), 1);
	link_run(&link, t0 + 600 * MS); /* TimeWait: cm_convert_to_ms(17) = 512 ms */
	CHECK_EQ(urnic_cm_conns_in_use(link.side[0].cm), 0);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_TIMEWAIT_EXIT], 0); /* destroyed: no word */
	CHECK_EQ(urnic_cm_counter(link.side[0].cm, URNIC_CM_C_timewait_exits), 1);
	CHECK_EQ(urnic_cm_connect(link.side[0].cm, &p, link.now_ns, &again), 0);
	CHECK(again != conn);
	link_run(&link, link.now_ns + 1 * S);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_ESTABLISHED], 2);
	teardown();
}

static void test_sidr(void)
{
	struct urnic_cm_sidr_param sp = {
		.service_id = urnic_cma_service_id(URNIC_RDMA_PS_UDP, 4000),
		.pkey = 0xffff,
		.timeout_ms = 4096,
		.max_cm_retries = 15,
		.private_data = "who",
		.private_data_len = 3,
		.user = 5,
	};
	const struct urnic_cm_event *ev;
	uint32_t h, conn;

	setup();
	sp.peer = link.side[1].addr;
	CHECK_EQ(urnic_cm_listen(link.side[1].cm, sp.service_id, 4, 9, &h), 0);
	CHECK_EQ(urnic_cm_sidr_request(link.side[0].cm, &sp, 0, &conn), 0);
	link_run(&link, 1 * S);
	ev = link_last(&link, 1, URNIC_CM_EVENT_CONNECT_REQUEST);
	CHECK(ev && ev->mad.hdr.attr_id == URNIC_CM_ATTR_SIDR_REQ);
	CHECK_EQ(ev->mad.msg.sidr_req.request_id, conn);
	CHECK(!memcmp(ev->mad.msg.sidr_req.private_data, "who", 3));
	ev = link_last(&link, 0, URNIC_CM_EVENT_ESTABLISHED);
	CHECK(ev && ev->conn == conn && ev->user == 5);
	CHECK_EQ(ev->mad.msg.sidr_rep.qpn, 0x300);
	CHECK_EQ(ev->mad.msg.sidr_rep.qkey, 0x11111111);
	CHECK_EQ(ev->mad.msg.sidr_rep.service_id, sp.service_id);
	CHECK_EQ(ev->mad.hdr.tid, 2ull << 32 | __builtin_bswap32(conn));

	/* No listener: SIDR_REP 'unsupported', reported as UNREACHABLE with that status. */
	sp.service_id = urnic_cma_service_id(URNIC_RDMA_PS_UDP, 4001);
	CHECK_EQ(urnic_cm_sidr_request(link.side[0].cm, &sp, link.now_ns, &conn), 0);
	link_run(&link, link.now_ns + 1 * S);
	ev = link_last(&link, 0, URNIC_CM_EVENT_UNREACHABLE);
	CHECK(ev && ev->conn == conn && ev->status == URNIC_CM_SIDR_UNSUPPORTED);
	CHECK_EQ(urnic_cm_counter(link.side[1].cm, URNIC_CM_C_sidr_unsupported), 1);
	teardown();
}

static void test_sidr_backlog(void)
{
	struct urnic_cm_sidr_param sp = {
		.service_id = urnic_cma_service_id(URNIC_RDMA_PS_UDP, 4000),
		.timeout_ms = 4096,
		.max_cm_retries = 15,
	};
	uint32_t h, a, b;

	setup();
	nheld = 0;
	link.side[1].handler = hold_requests;
	sp.peer = link.side[1].addr;
	CHECK_EQ(urnic_cm_listen(link.side[1].cm, sp.service_id, 1, 0, &h), 0);
	CHECK_EQ(urnic_cm_sidr_request(link.side[0].cm, &sp, 0, &a), 0);
	CHECK_EQ(urnic_cm_sidr_request(link.side[0].cm, &sp, 0, &b), 0);
	link_run(&link, 1 * S);
	/* The second finds the backlog full: SIDR_REP 'rejected' (cm_reject_sidr_req). */
	CHECK_EQ(nheld, 1);
	CHECK_EQ(link_last(&link, 0, URNIC_CM_EVENT_UNREACHABLE)->status, URNIC_CM_SIDR_REJECT);
	CHECK_EQ(urnic_cm_counter(link.side[1].cm, URNIC_CM_C_sidr_backlog_full), 1);
	/* Destroyed unanswered: a SIDR_REP 'rejected' too. */
	CHECK_EQ(urnic_cm_destroy(link.side[1].cm, held[0], link.now_ns), 0);
	link_run(&link, link.now_ns + 1 * S);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_UNREACHABLE], 2);
	teardown();
}

/* The active application gives up on its REQ before any answer: cm_destroy_id sends a
 * REJ 'timeout' with its CA GUID, by which the passive side finds the connection its
 * REQ made (the REJ cannot name it). */
static void test_abandoned_req(void)
{
	const struct urnic_cm_event *ev;
	uint32_t conn;

	setup();
	nheld = 0;
	link.side[1].handler = hold_requests;
	listen_on(1, 6000, 2);
	conn = connect_from0(6000, 0x11, 0);
	link_run(&link, 10 * MS);
	CHECK_EQ(nheld, 1);
	CHECK_EQ(urnic_cm_destroy(link.side[0].cm, conn, link.now_ns), 0);
	CHECK_EQ(urnic_cm_conns_in_use(link.side[0].cm), 0);
	link_run(&link, 20 * MS);
	ev = link_last(&link, 1, URNIC_CM_EVENT_REJECTED);
	CHECK(ev && ev->conn == held[0] && ev->status == URNIC_CM_REJ_TIMEOUT);
	CHECK_EQ(ev->mad.msg.rej.ari_length, 8);
	CHECK_EQ(link_state(&link, 1, held[0]), -1); /* the handler destroyed it */
	teardown();
}

/* Unlistening leaves the requests already made; new ones find no listener. */
static void test_unlisten(void)
{
	struct urnic_cm_accept_param ap = { .qpn = 0x40, .responder_resources = 1 };
	uint32_t h;

	setup();
	nheld = 0;
	link.side[1].handler = hold_requests;
	h = listen_on(1, 6000, 2);
	connect_from0(6000, 0x11, 0);
	link_run(&link, 10 * MS);
	CHECK_EQ(urnic_cm_unlisten(link.side[1].cm, h), 0);
	CHECK_EQ(urnic_cm_unlisten(link.side[1].cm, h), -ENOENT);
	connect_from0(6000, 0x12, 0);
	link_run(&link, 20 * MS + URNIC_CM_PARK_NS); /* it waits for a listener first */
	CHECK(link_last(&link, 0, URNIC_CM_EVENT_REJECTED));
	CHECK_EQ(link_last(&link, 0, URNIC_CM_EVENT_REJECTED)->status,
		 URNIC_CM_REJ_INVALID_SERVICE_ID);
	CHECK_EQ(urnic_cm_accept(link.side[1].cm, held[0], &ap, link.now_ns), 0);
	link_run(&link, link.now_ns + 10 * MS);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_ESTABLISHED], 1);
	/* The listener's slot can take another service. */
	listen_on(1, 6001, 1);
	teardown();
}

/* Both sides disconnect at once: the DREQs cross, each side is told once and answers
 * the other's DREQ; both end in TimeWait. */
static void test_crossing_dreqs(void)
{
	uint32_t conn, pconn;

	setup();
	listen_on(1, 6000, 2);
	conn = connect_from0(6000, 0x11, 0);
	link_run(&link, 10 * MS);
	pconn = link_last(&link, 1, URNIC_CM_EVENT_ESTABLISHED)->conn;
	CHECK_EQ(urnic_cm_disconnect(link.side[0].cm, conn, NULL, 0, link.now_ns), 0);
	CHECK_EQ(urnic_cm_disconnect(link.side[1].cm, pconn, NULL, 0, link.now_ns), 0);
	link_run(&link, link.now_ns + 10 * MS);
	CHECK_EQ(link_state(&link, 0, conn), URNIC_CM_TIMEWAIT);
	CHECK_EQ(link_state(&link, 1, pconn), URNIC_CM_TIMEWAIT);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_DISCONNECTED], 1);
	CHECK_EQ(link.side[1].events[URNIC_CM_EVENT_DISCONNECTED], 1);
	CHECK_EQ(link.side[0].sent[5] + link.side[1].sent[5], 2); /* DREQs */
	CHECK_EQ(link.side[0].sent[6] + link.side[1].sent[6], 2); /* DREPs */
	/* Each side's DREP found the other in TimeWait already: ignored, not refused. */
	for (int s = 0; s < 2; s++) {
		CHECK_EQ(urnic_cm_counter(link.side[s].cm, URNIC_CM_C_drep_in_timewait), 1);
		CHECK_EQ(urnic_cm_counter(link.side[s].cm, URNIC_CM_C_drop_state), 0);
	}
	teardown();
}

/* Traffic comes before the RTU (IB_EVENT_COMM_EST): the passive side establishes
 * without it and stops sending its REP. */
static bool drop_rtu(struct cm_link *l, int from, const struct urnic_cm_mad *m)
{
	return m->hdr.attr_id == URNIC_CM_ATTR_RTU;
}

static void test_established_without_rtu(void)
{
	uint32_t pconn;

	setup();
	link.filter = drop_rtu;
	listen_on(1, 6000, 2);
	connect_from0(6000, 0x11, 0);
	link_run(&link, 100 * MS);
	CHECK_EQ(link.side[1].events[URNIC_CM_EVENT_ESTABLISHED], 0);
	pconn = link_last(&link, 1, URNIC_CM_EVENT_CONNECT_REQUEST)->conn;
	CHECK_EQ(urnic_cm_establish(link.side[1].cm, pconn, NULL, 0, link.now_ns), 0);
	link_pump(&link);
	CHECK_EQ(link.side[1].events[URNIC_CM_EVENT_ESTABLISHED], 1);
	link_run(&link, 10 * S);
	CHECK_EQ(link.side[1].sent[3], 1); /* the REP was not sent again */
	link.filter = NULL;
	teardown();
}

static void test_names(void)
{
	CHECK(!strcmp(urnic_cm_state_name(URNIC_CM_MRA_REP_RCVD), "MRA_REP_RCVD"));
	CHECK(!strcmp(urnic_cm_state_name(URNIC_CM_STATE_COUNT), "?"));
	CHECK(!strcmp(urnic_cm_event_name(URNIC_CM_EVENT_TIMEWAIT_EXIT), "TIMEWAIT_EXIT"));
	CHECK(!strcmp(urnic_cm_counter_name(URNIC_CM_C_req_backlog_full), "req_backlog_full"));
	/* cm.c's conversions: 2^(t-8) ms, and cm_ack_timeout. */
	CHECK_EQ(urnic_cm_time_ns(20), 4096 * MS);
	CHECK_EQ(urnic_cm_time_ns(3), 1 * MS);
	CHECK_EQ(urnic_cm_ack_timeout(15, 18), 19); /* rxe's REQ: Local ACK Timeout 19 */
	CHECK_EQ(urnic_cm_ack_timeout(15, 16), 17);
	CHECK_EQ(urnic_cm_ack_timeout(20, 16), 20);
	CHECK_EQ(urnic_cm_ack_timeout(18, 16), 19);
	CHECK_EQ(urnic_cm_ack_timeout(0, 31), 31);
}

int main(void)
{
	RUN(test_names);
	RUN(test_establish_and_disconnect);
	RUN(test_reject_by_consumer);
	RUN(test_invalid_service_id);
	RUN(test_listen_after_req);
	RUN(test_unpark_handed_on);
	RUN(test_drep_parting);
	RUN(test_destroy_all);
	RUN(test_backlog_overflow);
	RUN(test_table_full);
	RUN(test_timewait);
	RUN(test_sidr);
	RUN(test_sidr_backlog);
	RUN(test_abandoned_req);
	RUN(test_unlisten);
	RUN(test_crossing_dreqs);
	RUN(test_established_without_rtu);
	return 0;
}
