// SPDX-License-Identifier: MIT
/*
 * test_cm_loss.c - the CM when MADs are lost, duplicated or late (IBTA 12.9, Linux
 * cm.c): a lost REQ, REP, RTU, DREQ or DREP is recovered, each by the retransmission
 * or duplicate answer that owes it; retries that run out end in UNREACHABLE (or, for a
 * DREQ, TimeWait) after exactly the time cm.c waits; an MRA extends the wait; a REQ from
 * a QP that still has a connection is stale; a REQ seen again in TimeWait is answered as
 * stale.
 *
 *   side 0 (active, owner 1) --- cm_link: a filter drops chosen MADs --- side 1 (passive)
 */
#include <errno.h>
#include <string.h>

#include "cm_link.h"

static const uint64_t MS = 1000000ull, S = 1000000000ull;
/* rdma_cm's REQ: 2 * 2^(16-8) ms + 2^(20-8) ms; the REP waits 2^(20-8) ms. */
static const uint64_t REQ_WAIT = 4608 * 1000000ull, REP_WAIT = 4096 * 1000000ull;

static struct cm_link link;

/* Drops the next `count` MADs of attribute `attr` sent by side `from`. */
struct drop_rule {
	int from;
	uint16_t attr;
	unsigned count;
};
static struct drop_rule rules[4];
static uint8_t saved[URNIC_MAD_BYTES]; /* the last REQ side 0 sent */

static bool drop_some(struct cm_link *l, int from, const struct urnic_cm_mad *m)
{
	if (from == 0 && m->hdr.attr_id == URNIC_CM_ATTR_REQ)
		CHECK_EQ(urnic_cm_encode(m, saved, sizeof(saved)), URNIC_MAD_BYTES);
	for (unsigned i = 0; i < 4; i++) {
		struct drop_rule *r = &rules[i];

		if (r->count && r->from == from && r->attr == m->hdr.attr_id) {
			r->count--;
			return true;
		}
	}
	return false;
}

static void setup_with(const struct urnic_cm_config *cfg)
{
	uint32_t h;

	memset(rules, 0, sizeof(rules));
	link_init(&link, cfg, 3);
	link.side[0].handler = link_auto;
	link.side[1].handler = link_auto;
	link.filter = drop_some;
	CHECK_EQ(urnic_cm_listen(link.side[1].cm, link_service(7174), 8, 0, &h), 0);
}

static void setup(void)
{
	struct urnic_cm_config cfg;

	link_config(&cfg);
	setup_with(&cfg);
}

static void teardown(void)
{
	memset(rules, 0, sizeof(rules));
	link_disconnect_all(&link, 0);
	link_run(&link, link.now_ns + 600 * S);
	link_check_clean(&link);
	link_fini(&link);
}

static void drop(int rule, int from, uint16_t attr, unsigned count)
{
	rules[rule] = (struct drop_rule){ from, attr, count };
}

static uint32_t connect_with(uint8_t remote_timeout, uint8_t local_timeout, uint8_t life,
			     uint8_t retries)
{
	struct urnic_cm_connect_param p;
	uint32_t conn;

	link_connect_param(&link, 0, 7174, 0x11, 0x100, &p);
	p.remote_cm_response_timeout = remote_timeout;
	p.local_cm_response_timeout = local_timeout;
	p.packet_life_time = life;
	p.max_cm_retries = retries;
	CHECK_EQ(urnic_cm_connect(link.side[0].cm, &p, link.now_ns, &conn), 0);
	link_pump(&link);
	return conn;
}

static uint32_t connect_rdma(void)
{
	return connect_with(20, 20, 16, 15);
}

static void check_established(uint32_t conn)
{
	CHECK_EQ(link_state(&link, 0, conn), URNIC_CM_ESTABLISHED);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_ESTABLISHED], 1);
	CHECK_EQ(link.side[1].events[URNIC_CM_EVENT_ESTABLISHED], 1);
	CHECK_EQ(link.side[1].events[URNIC_CM_EVENT_CONNECT_REQUEST], 1);
}

static void test_lost_req(void)
{
	uint32_t conn;

	setup();
	drop(0, 0, URNIC_CM_ATTR_REQ, 1);
	conn = connect_rdma();
	link_run(&link, REQ_WAIT - 1);
	CHECK_EQ(link.side[1].events[URNIC_CM_EVENT_CONNECT_REQUEST], 0);
	link_run(&link, REQ_WAIT + 1 * S);
	check_established(conn);
	/* The second REQ left exactly one wait after the first. */
	CHECK_EQ(link.side[1].at_ns[URNIC_CM_EVENT_CONNECT_REQUEST], REQ_WAIT + link.delay_ns);
	CHECK_EQ(urnic_cm_counter(link.side[0].cm, URNIC_CM_C_tx_retries), 1);
	teardown();
}

/* The REP is lost; the active side's REQ, sent again before the REP's own timer, finds
 * the connection in REP_SENT and gets the REP again at once. */
static void test_lost_rep_recovered_by_dup_req(void)
{
	uint32_t conn;

	setup();
	drop(0, 1, URNIC_CM_ATTR_REP, 1);
	/* REQ wait: 2 * 4 ms + 256 ms; the REP's: 2^(20-8) ms. */
	conn = connect_with(16, 20, 10, 15);
	link_run(&link, 1 * S);
	check_established(conn);
	CHECK_EQ(urnic_cm_counter(link.side[1].cm, URNIC_CM_C_dup_req), 1);
	CHECK_EQ(link.side[1].sent[3], 2);
	CHECK_EQ(link.side[0].at_ns[URNIC_CM_EVENT_ESTABLISHED], 264 * MS + 2 * link.delay_ns);
	teardown();
}

/* The REP is lost and the REP's timer comes first: it is sent again. */
static void test_lost_rep_recovered_by_timer(void)
{
	uint32_t conn;

	setup();
	drop(0, 1, URNIC_CM_ATTR_REP, 1);
	conn = connect_rdma();
	link_run(&link, 5 * S);
	check_established(conn);
	CHECK_EQ(urnic_cm_counter(link.side[1].cm, URNIC_CM_C_tx_retries), 1);
	CHECK_EQ(urnic_cm_counter(link.side[0].cm, URNIC_CM_C_tx_retries), 0);
	teardown();
}

/* The RTU is lost: the REP comes again, and the established active side answers the
 * duplicate with its RTU again (cm_dup_rep_handler). */
static void test_lost_rtu(void)
{
	uint32_t conn;

	setup();
	drop(0, 0, URNIC_CM_ATTR_RTU, 1);
	conn = connect_rdma();
	link_run(&link, 1 * S);
	CHECK_EQ(link_state(&link, 0, conn), URNIC_CM_ESTABLISHED);
	CHECK_EQ(link.side[1].events[URNIC_CM_EVENT_ESTABLISHED], 0);
	link_run(&link, 5 * S);
	check_established(conn);
	CHECK_EQ(urnic_cm_counter(link.side[0].cm, URNIC_CM_C_dup_rep), 1);
	CHECK_EQ(link.side[0].sent[4], 2);
	CHECK_EQ(link.side[1].at_ns[URNIC_CM_EVENT_ESTABLISHED], REP_WAIT + 3 * link.delay_ns);
	teardown();
}

static uint32_t establish(void)
{
	uint32_t conn = connect_rdma();

	link_run(&link, link.now_ns + 100 * MS);
	check_established(conn);
	return conn;
}

static void test_lost_dreq(void)
{
	uint32_t conn;
	uint64_t t0;

	setup();
	conn = establish();
	drop(0, 0, URNIC_CM_ATTR_DREQ, 1);
	t0 = link.now_ns;
	CHECK_EQ(urnic_cm_disconnect(link.side[0].cm, conn, NULL, 0, t0), 0);
	link_run(&link, t0 + REQ_WAIT + 1 * MS);
	CHECK_EQ(link.side[1].events[URNIC_CM_EVENT_DISCONNECTED], 1);
	CHECK_EQ(link.side[1].at_ns[URNIC_CM_EVENT_DISCONNECTED], t0 + REQ_WAIT + link.delay_ns);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_DISCONNECTED], 1);
	CHECK_EQ(link_last(&link, 0, URNIC_CM_EVENT_DISCONNECTED)->status, 0);
	CHECK_EQ(link_state(&link, 0, conn), URNIC_CM_TIMEWAIT);
	teardown();
}

/* The DREP is lost: the DREQ comes again and gets a DREP again, whatever became of the
 * connection meanwhile (TimeWait, or gone: cm_issue_drep). */
static void test_lost_drep(void)
{
	uint32_t conn;
	uint64_t t0;

	setup();
	conn = establish();
	drop(0, 1, URNIC_CM_ATTR_DREP, 1);
	t0 = link.now_ns;
	CHECK_EQ(urnic_cm_disconnect(link.side[0].cm, conn, NULL, 0, t0), 0);
	link_run(&link, t0 + 1 * S);
	CHECK_EQ(link_state(&link, 0, conn), URNIC_CM_DREQ_SENT);
	link_run(&link, t0 + REQ_WAIT + 1 * MS);
	CHECK_EQ(link_state(&link, 0, conn), URNIC_CM_TIMEWAIT);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_DISCONNECTED], 1);
	CHECK_EQ(link.side[1].sent[6], 2);
	/* The passive side's TimeWait (512 ms) was over: the connection was gone. */
	CHECK_EQ(urnic_cm_counter(link.side[1].cm, URNIC_CM_C_drep_unknown), 1);
	teardown();
}

/* As above, the passive application holding its connection after TimeWait: the DREQ
 * again finds it IDLE and gets the DREP it sent. */
static void keep_after_timewait(struct cm_link *l, int s, const struct urnic_cm_event *ev)
{
	if (ev->type != URNIC_CM_EVENT_TIMEWAIT_EXIT)
		link_auto(l, s, ev);
}

static void test_lost_drep_held(void)
{
	uint32_t conn, pconn;
	uint64_t t0;

	setup();
	link.side[1].handler = keep_after_timewait;
	conn = establish();
	pconn = link_last(&link, 1, URNIC_CM_EVENT_ESTABLISHED)->conn;
	drop(0, 1, URNIC_CM_ATTR_DREP, 1);
	t0 = link.now_ns;
	CHECK_EQ(urnic_cm_disconnect(link.side[0].cm, conn, "x", 1, t0), 0);
	link_run(&link, t0 + REQ_WAIT + 1 * MS);
	CHECK_EQ(link_state(&link, 0, conn), URNIC_CM_TIMEWAIT);
	CHECK_EQ(link_state(&link, 1, pconn), URNIC_CM_IDLE);
	CHECK_EQ(urnic_cm_counter(link.side[1].cm, URNIC_CM_C_dup_dreq), 1);
	CHECK_EQ(link.side[1].sent[6], 2);
	CHECK_EQ(urnic_cm_destroy(link.side[1].cm, pconn, link.now_ns), 0);
	teardown();
}

/* No REQ ever arrives: 1 + 15 REQs, REQ_WAIT apart, then UNREACHABLE (cm.c
 * IB_CM_REQ_ERROR, which cma.c reports as RDMA_CM_EVENT_UNREACHABLE). */
static void test_req_retries_exhausted(void)
{
	const struct urnic_cm_event *ev;
	uint32_t conn;

	setup();
	drop(0, 0, URNIC_CM_ATTR_REQ, 100);
	conn = connect_rdma();
	link_run(&link, 16 * REQ_WAIT - 1);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_UNREACHABLE], 0);
	CHECK_EQ(link_state(&link, 0, conn), URNIC_CM_REQ_SENT);
	link_run(&link, 16 * REQ_WAIT + 1 * S);
	ev = link_last(&link, 0, URNIC_CM_EVENT_UNREACHABLE);
	CHECK(ev && ev->conn == conn && ev->status == -ETIMEDOUT);
	CHECK_EQ(link.side[0].at_ns[URNIC_CM_EVENT_UNREACHABLE], 16 * REQ_WAIT);
	CHECK_EQ(link.side[0].sent[0], 16);
	CHECK_EQ(urnic_cm_counter(link.side[0].cm, URNIC_CM_C_unreachable), 1);
	teardown();
}

/* The RTU never arrives: the passive side sends its REP 1 + 15 times, REP_WAIT apart,
 * then gives up (IB_CM_REP_ERROR: UNREACHABLE). */
static void test_rep_retries_exhausted(void)
{
	const struct urnic_cm_event *ev;
	uint32_t conn;

	setup();
	drop(0, 0, URNIC_CM_ATTR_RTU, 100);
	conn = connect_rdma();
	link_run(&link, 16 * REP_WAIT + 1 * S);
	ev = link_last(&link, 1, URNIC_CM_EVENT_UNREACHABLE);
	CHECK(ev && ev->status == -ETIMEDOUT);
	CHECK_EQ(link.side[1].at_ns[URNIC_CM_EVENT_UNREACHABLE], 16 * REP_WAIT + link.delay_ns);
	CHECK_EQ(link.side[1].sent[3], 16);
	/* The active side had established; it learns of nothing until it disconnects. */
	CHECK_EQ(link_state(&link, 0, conn), URNIC_CM_ESTABLISHED);
	teardown();
}

/* No DREP ever comes: TimeWait after the DREQ's retries, DISCONNECTED -ETIMEDOUT. */
static void test_dreq_retries_exhausted(void)
{
	uint32_t conn;
	uint64_t t0;

	setup();
	conn = establish();
	drop(0, 0, URNIC_CM_ATTR_DREQ, 100);
	t0 = link.now_ns;
	CHECK_EQ(urnic_cm_disconnect(link.side[0].cm, conn, NULL, 0, t0), 0);
	link_run(&link, t0 + 16 * REQ_WAIT + 1 * MS);
	CHECK_EQ(link_last(&link, 0, URNIC_CM_EVENT_DISCONNECTED)->status, -ETIMEDOUT);
	CHECK_EQ(link.side[0].at_ns[URNIC_CM_EVENT_DISCONNECTED], t0 + 16 * REQ_WAIT);
	CHECK_EQ(urnic_cm_counter(link.side[0].cm, URNIC_CM_C_dreq_timeout), 1);
	CHECK_EQ(link_state(&link, 0, conn), URNIC_CM_TIMEWAIT);
	/* The passive side never heard: disconnect it from there. */
	link_disconnect_all(&link, 1);
	teardown();
}

/* IBTA 12.9.8.3: side 0 restarts (a new CM, the same CA) and connects from the QP its
 * old connection used. Side 1 still has that connection: the new REQ is stale (REJ,
 * reason 10) and the old connection gets a DREQ, which the new CM answers with a DREP
 * for a connection it does not know. */
static void test_stale_connection(void)
{
	struct urnic_cm *old = link.side[0].cm, *fresh;
	struct urnic_cm_config cfg;
	const struct urnic_cm_event *ev;
	uint32_t conn, pconn;

	setup();
	old = link.side[0].cm;
	establish();
	pconn = link_last(&link, 1, URNIC_CM_EVENT_ESTABLISHED)->conn;
	link_config(&cfg);
	cfg.ca_guid = link.side[0].guid;
	cfg.owner = 1;
	cfg.seed = 99;
	CHECK_EQ(urnic_cm_new(&fresh, &cfg), 0);
	link.side[0].cm = fresh;
	memset(link.side[0].events, 0, sizeof(link.side[0].events));
	link.side[0].nestablished = 0;
	conn = connect_rdma();
	link_run(&link, link.now_ns + 100 * MS);
	ev = link_last(&link, 0, URNIC_CM_EVENT_REJECTED);
	CHECK(ev && ev->conn == conn && ev->status == URNIC_CM_REJ_STALE_CONN);
	CHECK_EQ(urnic_cm_counter(link.side[1].cm, URNIC_CM_C_rej_stale), 1);
	CHECK_EQ(urnic_cm_counter(fresh, URNIC_CM_C_drep_unknown), 1);
	ev = link_last(&link, 1, URNIC_CM_EVENT_DISCONNECTED);
	CHECK(ev && ev->conn == pconn);
	CHECK_EQ(link_state(&link, 1, pconn), URNIC_CM_TIMEWAIT);
	CHECK_EQ(link.side[1].events[URNIC_CM_EVENT_CONNECT_REQUEST], 1);
	urnic_cm_free(old);
	teardown();
}

/* A REQ delayed until its connection is in TimeWait is not a new connection: REJ
 * 'stale connection' (cm_dup_req_handler). */
static void test_dup_req_in_timewait(void)
{
	uint32_t conn, pconn;

	setup();
	conn = establish();
	pconn = link_last(&link, 1, URNIC_CM_EVENT_ESTABLISHED)->conn;
	CHECK_EQ(urnic_cm_disconnect(link.side[0].cm, conn, NULL, 0, link.now_ns), 0);
	link_run(&link, link.now_ns + 100 * MS);
	CHECK_EQ(link_state(&link, 1, pconn), URNIC_CM_TIMEWAIT);
	CHECK_EQ(urnic_cm_input_bytes(link.side[1].cm, saved, sizeof(saved), &link.side[0].addr,
				      link.now_ns),
		 0);
	link_pump(&link);
	CHECK_EQ(urnic_cm_counter(link.side[1].cm, URNIC_CM_C_dup_req), 1);
	CHECK_EQ(urnic_cm_counter(link.side[1].cm, URNIC_CM_C_rej_stale), 1);
	CHECK_EQ(link.side[1].events[URNIC_CM_EVENT_CONNECT_REQUEST], 1);
	link_run(&link, link.now_ns + 100 * MS);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_REJECTED], 0); /* TimeWait takes no REJ */
	teardown();
}

/* Every MAD may come twice and out of order: each connection is made once. */
static void test_duplicates_and_reordering(void)
{
	setup();
	link.dup_pct = 50;
	link.jitter_ns = 200000;
	for (unsigned i = 0; i < 20; i++) {
		struct urnic_cm_connect_param p;
		uint32_t conn;

		link_connect_param(&link, 0, 7174, 0x100 + i, i, &p);
		CHECK_EQ(urnic_cm_connect(link.side[0].cm, &p, link.now_ns, &conn), 0);
		link_pump(&link);
	}
	link_run(&link, 1 * S);
	CHECK(link.duplicated > 10);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_ESTABLISHED], 20);
	CHECK_EQ(link.side[1].events[URNIC_CM_EVENT_ESTABLISHED], 20);
	CHECK_EQ(link.side[1].events[URNIC_CM_EVENT_CONNECT_REQUEST], 20);
	CHECK(urnic_cm_counter(link.side[1].cm, URNIC_CM_C_dup_req) > 0);
	link_disconnect_all(&link, 1);
	link_run(&link, link.now_ns + 1 * S);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_DISCONNECTED], 20);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_UNREACHABLE], 0);
	teardown();
}

int main(void)
{
	RUN(test_lost_req);
	RUN(test_lost_rep_recovered_by_dup_req);
	RUN(test_lost_rep_recovered_by_timer);
	RUN(test_lost_rtu);
	RUN(test_lost_dreq);
	RUN(test_lost_drep);
	RUN(test_lost_drep_held);
	RUN(test_req_retries_exhausted);
	RUN(test_rep_retries_exhausted);
	RUN(test_dreq_retries_exhausted);
	RUN(test_stale_connection);
	RUN(test_dup_req_in_timewait);
	RUN(test_duplicates_and_reordering);
	return 0;
}
