// SPDX-License-Identifier: MIT
/*
 * test_cm_mra.c - Message Receipt Acknowledgement (IBTA 12.6.6): a slow application
 * keeps its peer waiting past the REQ's or REP's retries with an MRA, the one rdma_cm
 * prepares for duplicates (service timeout 24, about 69 s) or one it sends itself. The
 * MRA stretches the wait under way; the retries left and later waits stay as they were;
 * a second MRA for the same message changes nothing.
 *
 *   side 0 (active) --- cm_link, no faults --- side 1 (passive, answers late)
 */
#include <errno.h>
#include <string.h>

#include "cm_link.h"

static const uint64_t MS = 1000000ull, US = 1000ull, S = 1000000000ull;
/* connect_short(): REQ wait 2 * 2^(10-8)... = 2 * 4 ms + 64 ms, 3 retries; the QP's ACK
 * timeout (av.timeout) 11: 8 ms, which an MRA's wait adds. */
static const uint64_t REQ_WAIT = 72 * 1000000ull, AV = 8 * 1000000ull;
static const uint64_t MRA_24 = 65536 * 1000000ull;

static struct cm_link link;
static uint32_t held;
static bool mra_now, mra_twice;

/* Holds the connect request (and sends an MRA when asked to). */
static void slow_server(struct cm_link *l, int s, const struct urnic_cm_event *ev)
{
	if (ev->type != URNIC_CM_EVENT_CONNECT_REQUEST) {
		link_auto(l, s, ev);
		return;
	}
	held = ev->conn;
	if (mra_now)
		CHECK_EQ(urnic_cm_mra(l->side[s].cm, ev->conn, 20, l->now_ns), 0);
	if (mra_twice)
		CHECK_EQ(urnic_cm_mra(l->side[s].cm, ev->conn, 20, l->now_ns), 0);
}

/* Holds the REP on the active side. */
static void slow_client(struct cm_link *l, int s, const struct urnic_cm_event *ev)
{
	if (ev->type == URNIC_CM_EVENT_CONNECT_RESPONSE)
		held = ev->conn;
	else
		link_auto(l, s, ev);
}

static void setup(bool prepare_mra)
{
	struct urnic_cm_config cfg;
	uint32_t h;

	link_config(&cfg);
	cfg.prepare_mra = prepare_mra;
	link_init(&link, &cfg, 5);
	link.side[0].handler = link_auto;
	link.side[1].handler = slow_server;
	held = 0;
	mra_now = mra_twice = false;
	CHECK_EQ(urnic_cm_listen(link.side[1].cm, link_service(7174), 8, 0, &h), 0);
}

static void teardown(void)
{
	link_disconnect_all(&link, 0);
	link_run(&link, link.now_ns + 300 * S);
	link_check_clean(&link);
	link_fini(&link);
}

static uint32_t connect_short(uint8_t remote_timeout, uint8_t local_timeout)
{
	struct urnic_cm_connect_param p;
	uint32_t conn;

	link_connect_param(&link, 0, 7174, 0x11, 0x100, &p);
	p.remote_cm_response_timeout = remote_timeout;
	p.local_cm_response_timeout = local_timeout;
	p.packet_life_time = 10;
	p.max_cm_retries = 3;
	CHECK_EQ(urnic_cm_connect(link.side[0].cm, &p, link.now_ns, &conn), 0);
	link_pump(&link);
	return conn;
}

static void accept_held(void)
{
	struct urnic_cm_accept_param ap = { .qpn = 0x22, .responder_resources = 1 };

	CHECK_EQ(urnic_cm_accept(link.side[1].cm, held, &ap, link.now_ns), 0);
}

/* Without an MRA the REQ's 1 + 3 sends are over at 4 * 72 ms. */
static void test_no_mra_unreachable(void)
{
	setup(false);
	connect_short(14, 20);
	link_run(&link, 1 * S);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_UNREACHABLE], 1);
	CHECK_EQ(link.side[0].at_ns[URNIC_CM_EVENT_UNREACHABLE], 4 * REQ_WAIT);
	CHECK_EQ(urnic_cm_counter(link.side[1].cm, URNIC_CM_C_dup_req), 3);
	CHECK_EQ(link.side[1].sent[1], 0);
	CHECK_EQ(urnic_cm_destroy(link.side[1].cm, held, link.now_ns), 0);
	teardown();
}

/* rdma_cm's prepared MRA: the first duplicate REQ gets it, and the wait stretches to
 * 2^(24-8) ms + 8 ms from its arrival; the application answers after 2 s. */
static void test_prepared_mra_for_req(void)
{
	struct urnic_cm_conn_info info;
	uint32_t conn;
	uint64_t t_mra = REQ_WAIT + 20 * US;

	setup(true);
	conn = connect_short(14, 20);
	link_run(&link, 1 * S);
	CHECK_EQ(urnic_cm_query(link.side[0].cm, conn, &info), 0);
	CHECK_EQ(info.state, URNIC_CM_MRA_REQ_RCVD);
	CHECK_EQ(info.deadline_ns, t_mra + MRA_24 + AV);
	CHECK_EQ(link.side[1].sent[1], 1);
	link_run(&link, 2 * S);
	accept_held();
	link_run(&link, 3 * S);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_ESTABLISHED], 1);
	CHECK_EQ(link.side[1].events[URNIC_CM_EVENT_ESTABLISHED], 1);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_UNREACHABLE], 0);
	teardown();
}

/* Nobody answers: after the stretched wait the REQ goes again with the retries it had
 * left, the usual wait apart; the MRA each draws is a duplicate and stretches nothing. */
static void test_mra_keeps_retries(void)
{
	uint64_t deadline = REQ_WAIT + 20 * US + MRA_24 + AV;

	setup(true);
	connect_short(14, 20);
	link_run(&link, deadline + 1 * S);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_UNREACHABLE], 1);
	CHECK_EQ(link.side[0].at_ns[URNIC_CM_EVENT_UNREACHABLE], deadline + 2 * REQ_WAIT);
	CHECK_EQ(link.side[0].sent[0], 4);
	CHECK_EQ(urnic_cm_counter(link.side[0].cm, URNIC_CM_C_dup_mra), 2);
	CHECK_EQ(urnic_cm_destroy(link.side[1].cm, held, link.now_ns), 0);
	teardown();
}

/* The application's own MRA, at once, with a service timeout of 20 (4096 ms); a second
 * one finds the wait already stretched. */
static void test_mra_by_application(void)
{
	struct urnic_cm_conn_info info;
	uint32_t conn;

	setup(false);
	mra_now = mra_twice = true;
	conn = connect_short(14, 20);
	link_run(&link, 1 * S);
	CHECK_EQ(urnic_cm_query(link.side[0].cm, conn, &info), 0);
	CHECK_EQ(info.state, URNIC_CM_MRA_REQ_RCVD);
	CHECK_EQ(info.deadline_ns, 20 * US + 4096 * MS + AV);
	CHECK_EQ(urnic_cm_counter(link.side[0].cm, URNIC_CM_C_dup_mra), 1);
	CHECK_EQ(urnic_cm_mra(link.side[1].cm, held, 32, link.now_ns), -EINVAL);
	accept_held();
	link_run(&link, 2 * S);
	CHECK_EQ(link.side[0].events[URNIC_CM_EVENT_ESTABLISHED], 1);
	teardown();
}

/* The active application takes its time over the REP: the passive side's REP retries
 * (64 ms apart, 3 of them) would run out at 256 ms, but its duplicate REP draws the
 * prepared MRA for the REP. */
static void test_prepared_mra_for_rep(void)
{
	uint32_t pconn;

	setup(true);
	link.side[0].handler = slow_client;
	link.side[1].handler = link_auto;
	connect_short(20, 14);
	link_run(&link, 500 * MS);
	CHECK(held != 0);
	CHECK_EQ(link_state(&link, 0, held), URNIC_CM_MRA_REP_SENT);
	CHECK_EQ(link.side[0].sent[1], 1);
	pconn = link_last(&link, 1, URNIC_CM_EVENT_CONNECT_REQUEST)->conn;
	CHECK_EQ(link_state(&link, 1, pconn), URNIC_CM_MRA_REP_RCVD);
	CHECK_EQ(urnic_cm_establish(link.side[0].cm, held, NULL, 0, link.now_ns), 0);
	link_run(&link, 1 * S);
	CHECK_EQ(link.side[1].events[URNIC_CM_EVENT_ESTABLISHED], 1);
	CHECK_EQ(link.side[1].events[URNIC_CM_EVENT_UNREACHABLE], 0);
	teardown();
}

int main(void)
{
	RUN(test_no_mra_unreachable);
	RUN(test_prepared_mra_for_req);
	RUN(test_mra_keeps_retries);
	RUN(test_mra_by_application);
	RUN(test_prepared_mra_for_rep);
	return 0;
}
