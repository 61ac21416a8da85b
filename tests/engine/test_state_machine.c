/* SPDX-License-Identifier: MIT */
/*
 * test_state_machine.c - urnic_qp_check_modify against IBTA 10.3.1 table 91.
 *
 * Accepted: RESET->INIT->RTR->RTS with exactly the required attributes (plus allowed
 * optional ones), INIT->INIT and RTS->RTS with optional ones, any state -> ERR and
 * -> RESET with nothing else. Refused with -EINVAL, with the QP unchanged: transitions
 * not in the table, a missing required attribute, an attribute the transition does not
 * allow, and out-of-range values (port, P_Key index, MTU, timeout, retry counts, RNR
 * timer, RD/atomic depths, QPN width, unknown access bits). The UC and UD columns for
 * the attributes that differ from RC.
 */
#include <errno.h>
#include <string.h>

#include "fabric.h"

enum {
	INIT_REQ = URNIC_QP_PKEY_INDEX | URNIC_QP_PORT | URNIC_QP_ACCESS_FLAGS,
	RTR_REQ = URNIC_QP_AV | URNIC_QP_PATH_MTU | URNIC_QP_DEST_QPN | URNIC_QP_RQ_PSN |
		  URNIC_QP_MAX_DEST_RD_ATOMIC | URNIC_QP_MIN_RNR_TIMER,
	RTS_REQ = URNIC_QP_SQ_PSN | URNIC_QP_TIMEOUT | URNIC_QP_RETRY_CNT | URNIC_QP_RNR_RETRY |
		  URNIC_QP_MAX_QP_RD_ATOMIC,
	S = URNIC_QP_STATE,
};

static struct urnic_qp_attr good_attr(void)
{
	struct urnic_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.port_num = 1;
	a.pkey_index = 0;
	a.access = FAB_ALL_ACCESS;
	a.path_mtu = 1024;
	a.dest_qp_num = 0x1234;
	a.rq_psn = 5;
	a.sq_psn = 6;
	a.max_dest_rd_atomic = 4;
	a.max_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.peer.ip[0] = 10;
	a.peer.ip[3] = 2;
	a.qkey = 0x11111111;
	return a;
}

static int check(enum urnic_qp_type t, enum urnic_qp_state cur, enum urnic_qp_state next,
		 uint32_t mask, const struct urnic_qp_attr *a)
{
	struct urnic_qp qp;

	memset(&qp, 0, sizeof(qp));
	qp.type = t;
	qp.state = cur;
	return urnic_qp_check_modify(&qp, a, cur, next, mask);
}

static int rc_check(enum urnic_qp_state cur, enum urnic_qp_state next, uint32_t mask)
{
	struct urnic_qp_attr a = good_attr();

	return check(URNIC_QPT_RC, cur, next, mask, &a);
}

static void test_table_91_transitions_accepted(void)
{
	CHECK_EQ(rc_check(URNIC_QPS_RESET, URNIC_QPS_INIT, S | INIT_REQ), 0);
	CHECK_EQ(rc_check(URNIC_QPS_INIT, URNIC_QPS_INIT, S), 0);
	CHECK_EQ(rc_check(URNIC_QPS_INIT, URNIC_QPS_INIT, S | URNIC_QP_ACCESS_FLAGS), 0);
	CHECK_EQ(rc_check(URNIC_QPS_INIT, URNIC_QPS_RTR, S | RTR_REQ), 0);
	CHECK_EQ(rc_check(URNIC_QPS_INIT, URNIC_QPS_RTR,
			  S | RTR_REQ | URNIC_QP_ACCESS_FLAGS | URNIC_QP_PKEY_INDEX),
		 0);
	CHECK_EQ(rc_check(URNIC_QPS_RTR, URNIC_QPS_RTS, S | RTS_REQ), 0);
	CHECK_EQ(rc_check(URNIC_QPS_RTR, URNIC_QPS_RTS,
			  S | RTS_REQ | URNIC_QP_CUR_STATE | URNIC_QP_MIN_RNR_TIMER |
				  URNIC_QP_ACCESS_FLAGS),
		 0);
	CHECK_EQ(rc_check(URNIC_QPS_RTS, URNIC_QPS_RTS, S), 0);
	CHECK_EQ(rc_check(URNIC_QPS_RTS, URNIC_QPS_RTS, S | URNIC_QP_MIN_RNR_TIMER), 0);
	CHECK_EQ(rc_check(URNIC_QPS_RTS, URNIC_QPS_RTS, S | URNIC_QP_ACCESS_FLAGS), 0);
	CHECK_EQ(rc_check(URNIC_QPS_SQE, URNIC_QPS_RTS, S), 0);
	/* Any state to ERR and to RESET. */
	for (int cur = URNIC_QPS_RESET; cur < URNIC_QPS_COUNT; cur++) {
		CHECK_EQ(rc_check((enum urnic_qp_state)cur, URNIC_QPS_ERR, S), 0);
		CHECK_EQ(rc_check((enum urnic_qp_state)cur, URNIC_QPS_RESET, S), 0);
		CHECK_EQ(rc_check((enum urnic_qp_state)cur, URNIC_QPS_ERR, S | URNIC_QP_CUR_STATE),
			 0);
	}
	/* No state bit: the attributes of the current state's self-transition. */
	CHECK_EQ(rc_check(URNIC_QPS_RTS, URNIC_QPS_RTS, URNIC_QP_MIN_RNR_TIMER), 0);
}

static void test_transitions_not_in_table_refused(void)
{
	static const struct {
		enum urnic_qp_state cur, next;
		uint32_t mask;
	} bad[] = {
		{ URNIC_QPS_RESET, URNIC_QPS_RTR, S | RTR_REQ },
		{ URNIC_QPS_RESET, URNIC_QPS_RTS, S | RTS_REQ },
		{ URNIC_QPS_INIT, URNIC_QPS_RTS, S | RTS_REQ },
		{ URNIC_QPS_RTR, URNIC_QPS_INIT, S },
		{ URNIC_QPS_RTR, URNIC_QPS_RTR, S },
		{ URNIC_QPS_RTS, URNIC_QPS_RTR, S | RTR_REQ },
		{ URNIC_QPS_RTS, URNIC_QPS_INIT, S | INIT_REQ },
		{ URNIC_QPS_ERR, URNIC_QPS_INIT, S | INIT_REQ },
		{ URNIC_QPS_ERR, URNIC_QPS_RTS, S | RTS_REQ },
		{ URNIC_QPS_ERR, URNIC_QPS_ERR + 0, S | URNIC_QP_ACCESS_FLAGS },
		{ URNIC_QPS_RESET, URNIC_QPS_RESET, S | INIT_REQ },
		{ URNIC_QPS_RTS, URNIC_QPS_SQD, S },
		{ URNIC_QPS_RTS, URNIC_QPS_SQE, S },
		{ URNIC_QPS_RESET, URNIC_QPS_COUNT, S },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_EQ(rc_check(bad[i].cur, bad[i].next, bad[i].mask), -EINVAL);
}

static void test_missing_required_attribute_refused(void)
{
	static const struct {
		enum urnic_qp_state cur, next;
		uint32_t req;
	} tr[] = {
		{ URNIC_QPS_RESET, URNIC_QPS_INIT, INIT_REQ },
		{ URNIC_QPS_INIT, URNIC_QPS_RTR, RTR_REQ },
		{ URNIC_QPS_RTR, URNIC_QPS_RTS, RTS_REQ },
	};

	for (size_t i = 0; i < sizeof(tr) / sizeof(tr[0]); i++)
		for (uint32_t bitm = 1; bitm; bitm <<= 1)
			if (tr[i].req & bitm)
				CHECK_EQ(rc_check(tr[i].cur, tr[i].next, S | (tr[i].req & ~bitm)),
					 -EINVAL);
}

static void test_attribute_not_allowed_refused(void)
{
	/* Everything the RC column does not list for each transition. */
	static const uint32_t every =
		URNIC_QP_CUR_STATE | URNIC_QP_EN_SQD_ASYNC_NOTIFY | URNIC_QP_ACCESS_FLAGS |
		URNIC_QP_PKEY_INDEX | URNIC_QP_PORT | URNIC_QP_QKEY | URNIC_QP_AV |
		URNIC_QP_PATH_MTU | URNIC_QP_TIMEOUT | URNIC_QP_RETRY_CNT | URNIC_QP_RNR_RETRY |
		URNIC_QP_RQ_PSN | URNIC_QP_MAX_QP_RD_ATOMIC | URNIC_QP_ALT_PATH |
		URNIC_QP_MIN_RNR_TIMER | URNIC_QP_SQ_PSN | URNIC_QP_MAX_DEST_RD_ATOMIC |
		URNIC_QP_PATH_MIG_STATE | URNIC_QP_CAP | URNIC_QP_DEST_QPN | URNIC_QP_RATE_LIMIT;
	static const struct {
		enum urnic_qp_state cur, next;
		uint32_t req, allowed;
	} tr[] = {
		{ URNIC_QPS_RESET, URNIC_QPS_INIT, INIT_REQ, 0 },
		{ URNIC_QPS_INIT, URNIC_QPS_INIT, 0, INIT_REQ },
		{ URNIC_QPS_INIT, URNIC_QPS_RTR, RTR_REQ,
		  URNIC_QP_ALT_PATH | URNIC_QP_ACCESS_FLAGS | URNIC_QP_PKEY_INDEX },
		{ URNIC_QPS_RTR, URNIC_QPS_RTS, RTS_REQ,
		  URNIC_QP_CUR_STATE | URNIC_QP_ALT_PATH | URNIC_QP_ACCESS_FLAGS |
			  URNIC_QP_MIN_RNR_TIMER | URNIC_QP_PATH_MIG_STATE },
		{ URNIC_QPS_RTS, URNIC_QPS_RTS, 0,
		  URNIC_QP_CUR_STATE | URNIC_QP_ALT_PATH | URNIC_QP_ACCESS_FLAGS |
			  URNIC_QP_MIN_RNR_TIMER | URNIC_QP_PATH_MIG_STATE },
		{ URNIC_QPS_RTS, URNIC_QPS_ERR, 0, URNIC_QP_CUR_STATE },
		{ URNIC_QPS_RTS, URNIC_QPS_RESET, 0, URNIC_QP_CUR_STATE },
	};

	for (size_t i = 0; i < sizeof(tr) / sizeof(tr[0]); i++) {
		uint32_t extra = every & ~(tr[i].req | tr[i].allowed);

		CHECK_EQ(rc_check(tr[i].cur, tr[i].next, S | tr[i].req | tr[i].allowed), 0);
		for (uint32_t bitm = 1; bitm; bitm <<= 1)
			if (extra & bitm)
				CHECK_EQ(rc_check(tr[i].cur, tr[i].next, S | tr[i].req | bitm),
					 -EINVAL);
	}
}

static void test_out_of_range_refused(void)
{
	struct urnic_qp_attr a;

#define BAD(field, value, cur, next, mask)                                                         \
	do {                                                                                       \
		a = good_attr();                                                                   \
		CHECK_EQ(check(URNIC_QPT_RC, cur, next, mask, &a), 0);                             \
		a.field = value;                                                                   \
		CHECK_EQ(check(URNIC_QPT_RC, cur, next, mask, &a), -EINVAL);                       \
	} while (0)
	BAD(port_num, 0, URNIC_QPS_RESET, URNIC_QPS_INIT, S | INIT_REQ);
	BAD(port_num, 2, URNIC_QPS_RESET, URNIC_QPS_INIT, S | INIT_REQ);
	BAD(pkey_index, 1, URNIC_QPS_RESET, URNIC_QPS_INIT, S | INIT_REQ);
	BAD(access, 0x1000, URNIC_QPS_RESET, URNIC_QPS_INIT, S | INIT_REQ);
	BAD(access, URNIC_ACCESS_ZERO_BASED, URNIC_QPS_INIT, URNIC_QPS_INIT,
	    S | URNIC_QP_ACCESS_FLAGS);
	BAD(path_mtu, 0, URNIC_QPS_INIT, URNIC_QPS_RTR, S | RTR_REQ);
	BAD(dest_qp_num, 0x1000000, URNIC_QPS_INIT, URNIC_QPS_RTR, S | RTR_REQ);
	BAD(max_dest_rd_atomic, URNIC_MAX_RD_ATOMIC + 1, URNIC_QPS_INIT, URNIC_QPS_RTR,
	    S | RTR_REQ);
	BAD(min_rnr_timer, 32, URNIC_QPS_INIT, URNIC_QPS_RTR, S | RTR_REQ);
	BAD(timeout, 32, URNIC_QPS_RTR, URNIC_QPS_RTS, S | RTS_REQ);
	BAD(retry_cnt, 8, URNIC_QPS_RTR, URNIC_QPS_RTS, S | RTS_REQ);
	BAD(rnr_retry, 8, URNIC_QPS_RTR, URNIC_QPS_RTS, S | RTS_REQ);
	BAD(max_rd_atomic, URNIC_MAX_RD_ATOMIC + 1, URNIC_QPS_RTR, URNIC_QPS_RTS, S | RTS_REQ);
	BAD(min_rnr_timer, 255, URNIC_QPS_RTS, URNIC_QPS_RTS, S | URNIC_QP_MIN_RNR_TIMER);
#undef BAD
	/* The extremes that are fine. */
	a = good_attr();
	a.timeout = 31;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = URNIC_MAX_RD_ATOMIC;
	CHECK_EQ(check(URNIC_QPT_RC, URNIC_QPS_RTR, URNIC_QPS_RTS, S | RTS_REQ, &a), 0);
	a.timeout = 0;
	a.retry_cnt = 0;
	a.rnr_retry = 0;
	a.max_rd_atomic = 0;
	CHECK_EQ(check(URNIC_QPT_RC, URNIC_QPS_RTR, URNIC_QPS_RTS, S | RTS_REQ, &a), 0);
}

/* The UC and UD columns where they differ from RC. */
static void test_uc_ud_columns(void)
{
	struct urnic_qp_attr a = good_attr();

	CHECK_EQ(check(URNIC_QPT_UD, URNIC_QPS_RESET, URNIC_QPS_INIT,
		       S | URNIC_QP_PKEY_INDEX | URNIC_QP_PORT | URNIC_QP_QKEY, &a),
		 0);
	CHECK_EQ(check(URNIC_QPT_UD, URNIC_QPS_RESET, URNIC_QPS_INIT, S | INIT_REQ, &a), -EINVAL);
	CHECK_EQ(check(URNIC_QPT_UD, URNIC_QPS_INIT, URNIC_QPS_RTR, S, &a), 0);
	CHECK_EQ(check(URNIC_QPT_UD, URNIC_QPS_INIT, URNIC_QPS_RTR, S | URNIC_QP_AV, &a), -EINVAL);
	CHECK_EQ(check(URNIC_QPT_UD, URNIC_QPS_RTR, URNIC_QPS_RTS, S | URNIC_QP_SQ_PSN, &a), 0);
	CHECK_EQ(check(URNIC_QPT_UC, URNIC_QPS_INIT, URNIC_QPS_RTR,
		       S | URNIC_QP_AV | URNIC_QP_PATH_MTU | URNIC_QP_DEST_QPN | URNIC_QP_RQ_PSN,
		       &a),
		 0);
	CHECK_EQ(check(URNIC_QPT_UC, URNIC_QPS_INIT, URNIC_QPS_RTR, S | RTR_REQ, &a), -EINVAL);
	CHECK_EQ(check(URNIC_QPT_UC, URNIC_QPS_RTR, URNIC_QPS_RTS, S | URNIC_QP_SQ_PSN, &a), 0);
	CHECK_EQ(check(URNIC_QPT_UC, URNIC_QPS_RTR, URNIC_QPS_RTS, S | RTS_REQ, &a), -EINVAL);
	CHECK_EQ(check((enum urnic_qp_type)7, URNIC_QPS_RESET, URNIC_QPS_ERR, S, &a), -EINVAL);
}

/* Through the engine: a refused modify leaves the QP as it was; an accepted one moves
 * it and applies the attributes; state names print. */
static void test_apply_only_after_accept(void)
{
	struct fab_pair p;
	struct urnic_qp_attr a;
	struct fab_conn c = fab_conn_default();

	fab_pair_open(&p, NULL, 1);
	a = good_attr();
	a.port_num = 3;
	CHECK_EQ(fab_modify(p.a, &a, URNIC_QPS_INIT, S | INIT_REQ), -EINVAL);
	CHECK_EQ(p.a->qp.state, URNIC_QPS_RESET);
	CHECK_EQ(p.a->qp.attr.access, 0);
	a.port_num = 1;
	CHECK_EQ(fab_modify(p.a, &a, URNIC_QPS_INIT, S | INIT_REQ), 0);
	CHECK_EQ(p.a->qp.state, URNIC_QPS_INIT);
	CHECK_EQ(p.a->qp.attr.access, FAB_ALL_ACCESS);
	/* Straight to RTS is refused. */
	CHECK_EQ(fab_modify(p.a, &a, URNIC_QPS_RTS, S | RTS_REQ), -EINVAL);
	CHECK_EQ(p.a->qp.state, URNIC_QPS_INIT);
	CHECK_EQ(fab_modify(p.a, &p.a->qp.attr, URNIC_QPS_RESET, S), 0);
	CHECK_EQ(p.a->qp.state, URNIC_QPS_RESET);
	fab_connect(p.a, p.b, &c);
	CHECK_EQ(p.a->qp.attr.path_mtu, c.mtu);
	CHECK_EQ(p.a->qp.req.psn, c.psn_a);
	CHECK_EQ(p.a->qp.resp.epsn, c.psn_b);
	CHECK_EQ(p.a->qp.attr.dest_qp_num, p.b->qp.qpn);
	/* RTS -> RTS changes the RNR timer the responder advertises. */
	a = p.b->qp.attr;
	a.min_rnr_timer = 3;
	CHECK_EQ(fab_modify(p.b, &a, URNIC_QPS_RTS, S | URNIC_QP_MIN_RNR_TIMER), 0);
	CHECK_EQ(p.b->qp.attr.min_rnr_timer, 3);
	CHECK(strcmp(urnic_qp_state_name(URNIC_QPS_RTS), "RTS") == 0);
	CHECK(strcmp(urnic_qp_state_name(URNIC_QPS_ERR), "ERR") == 0);
	CHECK(strcmp(urnic_qp_state_name(URNIC_QPS_COUNT), "?") == 0);
	/* Timeout arithmetic (IBTA 9.7.6.1.3) and MTU codes. */
	CHECK_EQ(urnic_qp_rto_ns(0), 0);
	CHECK_EQ(urnic_qp_rto_ns(1), 8192);
	CHECK_EQ(urnic_qp_rto_ns(14), 67108864);
	CHECK_EQ(urnic_mtu_bytes(1), 256);
	CHECK_EQ(urnic_mtu_bytes(5), 4096);
	CHECK_EQ(urnic_mtu_bytes(6), 0);
	fab_pair_close(&p);
}

int main(void)
{
	RUN(test_table_91_transitions_accepted);
	RUN(test_transitions_not_in_table_refused);
	RUN(test_missing_required_attribute_refused);
	RUN(test_attribute_not_allowed_refused);
	RUN(test_out_of_range_refused);
	RUN(test_uc_ud_columns);
	RUN(test_apply_only_after_accept);
	return 0;
}
