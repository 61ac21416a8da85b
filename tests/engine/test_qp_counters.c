/* SPDX-License-Identifier: MIT */
/*
 * test_qp_counters.c - every counter is kept per QP as well as per device.
 *
 * Two RC connections between the same two hosts; faults aimed at one of them move that
 * QP's counters and leave the other's at zero, while the device counters add both up.
 * A counter that no QP can own (a packet for an unknown QP) moves only the device's.
 * A destroyed QP's slot is marked unused; a new QP in it starts from zero.
 */
#include <string.h>

#include "fabric.h"

#define BUF (64 * 1024)

static const struct urnic_qp_counters *slot(struct fabric *f, int host, const struct fab_qp *q)
{
	const struct urnic_qp_counters *s =
		&fab_engine(f, host)->stats.qp[q->qp.qpn & (URNIC_MAX_QP - 1)];

	CHECK_EQ(s->qpn, q->qp.qpn);
	return s;
}

static void write_one(struct fabric *f, struct fab_qp *q, struct fab_buf *l, struct fab_buf *r,
		      uint64_t wr_id)
{
	struct urnic_cqe c;

	CHECK_EQ(fab_post_send(q, &(struct fab_send_wr){ .wr_id = wr_id,
							 .opcode = URNIC_WR_RDMA_WRITE,
							 .remote_addr = (uintptr_t)r->p,
							 .rkey = r->mr->key,
							 .num_sge = 1,
							 .sge = { fab_sge(l->mr, 0, 4096) } }),
		 0);
	fab_wait_cqes(f, &q->scq, &c, 1);
	CHECK_CQE(c, wr_id, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 4096);
}

static void test_faults_move_only_their_qps_counters(void)
{
	struct fab_conn c = fab_conn_default();
	struct fab_pair p;
	struct fab_qp *a2, *b2;
	struct fab_buf la, ra;
	const struct urnic_qp_counters *s1, *s2;
	uint8_t junk[64];

	fab_pair_open(&p, &c, 11);
	a2 = fab_qp_new(p.f, 0, &p.pd[0], 16, 16, true);
	b2 = fab_qp_new(p.f, 1, &p.pd[1], 16, 16, true);
	fab_connect(a2, b2, &c);
	fab_buf_new(p.f, &la, 0, &p.pd[0], BUF, FAB_ALL_ACCESS);
	fab_buf_new(p.f, &ra, 1, &p.pd[1], BUF, FAB_ALL_ACCESS);

	/* The first WRITE_FIRST of QP pair 1 is lost: a retransmission on a's first QP. */
	fab_add_rule(p.f, &(struct fab_rule){ .match = FAB_M_SRC | FAB_M_OPCODE,
					      .src = 0,
					      .opcode = URNIC_OP_RC_RDMA_WRITE_FIRST,
					      .count = 1,
					      .action = FAB_DROP });
	write_one(p.f, p.a, &la, &ra, 1);
	fab_clear_rules(p.f);
	write_one(p.f, a2, &la, &ra, 2);
	fabric_settle(p.f);

	s1 = slot(p.f, 0, p.a);
	s2 = slot(p.f, 0, a2);
	CHECK(s1->c[URNIC_CTR_retransmit_pkts] > 0);
	CHECK_EQ(s2->c[URNIC_CTR_retransmit_pkts], 0);
	CHECK_EQ(s1->c[URNIC_CTR_retransmit_pkts] + s2->c[URNIC_CTR_retransmit_pkts],
		 fab_ctr(p.f, 0, URNIC_CTR_retransmit_pkts));
	CHECK_EQ(s1->c[URNIC_CTR_tx_packets] + s2->c[URNIC_CTR_tx_packets],
		 fab_ctr(p.f, 0, URNIC_CTR_tx_packets));
	CHECK(s2->c[URNIC_CTR_tx_packets] >= 4); /* 4 KiB at MTU 1024 */
	CHECK_EQ(s1->state, URNIC_QPS_RTS);
	CHECK_EQ(s1->type, URNIC_QPT_RC);

	/* The responder side: each QP received its own packets, the sum is the device's. */
	s1 = slot(p.f, 1, p.b);
	s2 = slot(p.f, 1, b2);
	CHECK(s2->c[URNIC_CTR_rx_packets] >= 4);
	CHECK_EQ(s1->c[URNIC_CTR_rx_packets] + s2->c[URNIC_CTR_rx_packets],
		 fab_ctr(p.f, 1, URNIC_CTR_rx_packets));

	/* A packet for no QP is the device's alone. */
	memset(junk, 0, sizeof(junk));
	{
		struct urnic_pkt h = { 0 };
		ssize_t n;

		h.bth.opcode = URNIC_OP_RC_SEND_ONLY;
		h.bth.pkey = 0xffff;
		h.bth.dqpn = 0x00fff0;
		n = urnic_pkt_encode_hdr(&h, junk, sizeof(junk));
		CHECK(n > 0);
		fab_inject(p.f, p.f->hosts[0].ip, 1, URNIC_ROCE_UDP_PORT, junk,
			   (uint32_t)n + URNIC_ICRC_BYTES, true);
		fabric_settle(p.f);
	}
	CHECK_EQ(fab_ctr(p.f, 1, URNIC_CTR_drop_unknown_qp), 1);
	CHECK_EQ(s1->c[URNIC_CTR_drop_unknown_qp] + s2->c[URNIC_CTR_drop_unknown_qp], 0);

	/* A destroyed QP frees its slot; the next QP there starts from zero, under a new
	 * number. */
	{
		uint32_t idx = a2->qp.qpn & (URNIC_MAX_QP - 1), qpn2 = a2->qp.qpn;
		struct fab_qp *a3;

		fab_qp_free(a2);
		fab_qp_free(b2);
		CHECK_EQ(fab_engine(p.f, 0)->stats.qp[idx].qpn, 0);
		/* Slots are taken in turn (urnic_engine_qp_add): the slot comes round
		 * again after every other free one. */
		for (;;) {
			a3 = fab_qp_new(p.f, 0, &p.pd[0], 16, 16, true);
			if ((a3->qp.qpn & (URNIC_MAX_QP - 1)) == idx)
				break;
			fab_qp_free(a3);
		}
		CHECK_EQ(slot(p.f, 0, a3)->c[URNIC_CTR_tx_packets], 0);
		CHECK_EQ(slot(p.f, 0, a3)->state, URNIC_QPS_RESET);
		CHECK(a3->qp.qpn != qpn2);
		fab_qp_free(a3);
	}
	fab_buf_free(p.f, &la);
	fab_buf_free(p.f, &ra);
	fab_pair_close(&p);
}

int main(void)
{
	RUN(test_faults_move_only_their_qps_counters);
	return 0;
}
