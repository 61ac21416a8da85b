/* SPDX-License-Identifier: MIT */
/*
 * ops_common.c - the pair the RC operation tests share (ops_common.h): opened on a
 * clean fabric with a fixed seed, closed only after checking that the run was clean
 * (no retransmission, duplicate, bad ICRC, stale response or NAK on either host).
 */
#include "ops_common.h"

static void check_clean(struct fabric *f)
{
	for (int h = 0; h < 2; h++) {
		CHECK_EQ(fab_ctr(f, h, URNIC_CTR_retransmit_pkts), 0);
		CHECK_EQ(fab_ctr(f, h, URNIC_CTR_retry_timeout), 0);
		CHECK_EQ(fab_ctr(f, h, URNIC_CTR_dup_request), 0);
		CHECK_EQ(fab_ctr(f, h, URNIC_CTR_drop_bad_icrc), 0);
		CHECK_EQ(fab_ctr(f, h, URNIC_CTR_drop_stale_response), 0);
		CHECK_EQ(fab_ctr(f, h, URNIC_CTR_nak_seq_sent), 0);
		CHECK_EQ(fab_ctr(f, h, URNIC_CTR_rnr_nak_sent), 0);
		CHECK_EQ(fab_ctr(f, h, URNIC_CTR_rx_packets),
			 fab_ctr(f, 1 - h, URNIC_CTR_tx_packets));
	}
}

void env_open(struct env *v, uint32_t mtu)
{
	struct fab_conn c = fab_conn_default();

	c.mtu = mtu;
	fab_pair_open(&v->p, &c, 7);
	fab_buf_new(v->p.f, &v->la, 0, &v->p.pd[0], BIG, FAB_ALL_ACCESS);
	fab_buf_new(v->p.f, &v->ra, 1, &v->p.pd[1], BIG, FAB_ALL_ACCESS);
	fab_fill(v->la.p, BIG, 1);
	fab_fill(v->ra.p, BIG, 2);
}

void env_close(struct env *v)
{
	check_clean(v->p.f);
	CHECK_EQ(v->p.a->qp.state, URNIC_QPS_RTS);
	CHECK_EQ(v->p.b->qp.state, URNIC_QPS_RTS);
	fab_buf_free(v->p.f, &v->la);
	fab_buf_free(v->p.f, &v->ra);
	fab_pair_close(&v->p);
}
