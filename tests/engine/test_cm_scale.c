// SPDX-License-Identifier: MIT
/*
 * test_cm_scale.c - 1000 connections over a lossy link: 5% of MADs lost, 2% duplicated,
 * all of them reordered within 20 us. Every connection ends ESTABLISHED on both sides,
 * exactly once; then half are disconnected from each side, every connection is reported
 * DISCONNECTED once per side, TimeWait ends, and neither table holds anything. Queues
 * of 64 MADs and events make the CMs wait for room along the way.
 *
 *   side 0: 1000 connects --- cm_link (loss 5%, dup 2%, jitter 20 us) --- side 1: listener
 */
#include <string.h>

#include "cm_link.h"

static const uint64_t S = 1000000000ull;

enum { CONNS = 1000 };

static void test_thousand_connections_with_loss(void)
{
	struct urnic_cm_config cfg;
	struct cm_link l;
	uint32_t h;

	link_config(&cfg);
	cfg.max_conns = 1024;
	cfg.out_slots = 64;
	cfg.event_slots = 64;
	link_init(&l, &cfg, 1000);
	l.side[0].handler = link_auto;
	l.side[1].handler = link_auto;
	l.loss_pct = 5;
	l.dup_pct = 2;
	l.jitter_ns = 20000;
	CHECK_EQ(urnic_cm_listen(l.side[1].cm, link_service(7174), CONNS, 0, &h), 0);
	for (uint32_t i = 0; i < CONNS; i++) {
		struct urnic_cm_connect_param p;
		uint32_t conn;

		link_connect_param(&l, 0, 7174, 0x1000 + i, i * 7919 & 0xffffff, &p);
		CHECK_EQ(urnic_cm_connect(l.side[0].cm, &p, l.now_ns, &conn), 0);
		link_run(&l, l.now_ns + 1000);
	}
	link_run(&l, 300 * S);
	CHECK(l.dropped > 100);
	CHECK(l.duplicated > 20);
	for (int s = 0; s < 2; s++) {
		CHECK_EQ(l.side[s].events[URNIC_CM_EVENT_ESTABLISHED], CONNS);
		CHECK_EQ(l.side[s].events[URNIC_CM_EVENT_UNREACHABLE], 0);
		CHECK_EQ(l.side[s].events[URNIC_CM_EVENT_REJECTED], 0);
		CHECK_EQ(urnic_cm_conns_in_use(l.side[s].cm), CONNS);
		for (unsigned i = 0; i < CONNS; i++)
			CHECK_EQ(link_state(&l, s, l.side[s].established[i]), URNIC_CM_ESTABLISHED);
	}
	CHECK_EQ(l.side[1].events[URNIC_CM_EVENT_CONNECT_REQUEST], CONNS);
	CHECK_EQ(l.side[0].events[URNIC_CM_EVENT_CONNECT_RESPONSE], CONNS);
	CHECK(urnic_cm_counter(l.side[0].cm, URNIC_CM_C_tx_retries) > 0);
	CHECK(urnic_cm_counter(l.side[1].cm, URNIC_CM_C_tx_retries) > 0);

	/* Half go from each side: every other connection from its passive end. */
	for (unsigned i = 0; i < CONNS; i++) {
		struct urnic_cm_conn_info info;
		uint32_t conn = l.side[0].established[i];
		int s = i % 2;

		if (s) {
			CHECK_EQ(urnic_cm_query(l.side[0].cm, conn, &info), 0);
			conn = info.remote_id;
		}
		CHECK_EQ(urnic_cm_disconnect(l.side[s].cm, conn, NULL, 0, l.now_ns), 0);
		link_run(&l, l.now_ns + 1000);
	}
	link_run(&l, l.now_ns + 300 * S);
	for (int s = 0; s < 2; s++) {
		CHECK_EQ(l.side[s].events[URNIC_CM_EVENT_DISCONNECTED], CONNS);
		CHECK_EQ(l.side[s].events[URNIC_CM_EVENT_TIMEWAIT_EXIT], CONNS);
		CHECK_EQ(urnic_cm_conns_in_use(l.side[s].cm), 0);
		CHECK_EQ(urnic_cm_next_deadline(l.side[s].cm), 0);
	}
	link_check_clean(&l);
	link_fini(&l);
}

int main(void)
{
	RUN(test_thousand_connections_with_loss);
	return 0;
}
