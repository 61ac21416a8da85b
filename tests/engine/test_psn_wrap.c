/* SPDX-License-Identifier: MIT */
/*
 * test_psn_wrap.c - transfers across the 24-bit PSN wrap (IBTA 9.7.1: PSNs are modulo
 * 2^24 and compared by serial arithmetic, wire/psn.h).
 *
 * Both QPs start at 0xfffff0 so that multi-packet SENDs, WRITEs and READs straddle
 * 0xffffff -> 0, on a clean fabric and with the packets at the wrap dropped (NAK and
 * timeout recovery must compute ranges across it too).
 */
#include <string.h>

#include "fabric.h"

#define LEN (64 * 1024)

struct env {
	struct fab_pair p;
	struct fab_buf la, ra;
};

static void env_open(struct env *v, uint32_t psn_a, uint32_t psn_b)
{
	struct fab_conn c = fab_conn_default();

	c.mtu = 256;
	c.psn_a = psn_a;
	c.psn_b = psn_b;
	fab_pair_open(&v->p, &c, 11);
	fab_buf_new(v->p.f, &v->la, 0, &v->p.pd[0], LEN, FAB_ALL_ACCESS);
	fab_buf_new(v->p.f, &v->ra, 1, &v->p.pd[1], LEN, FAB_ALL_ACCESS);
	fab_fill(v->la.p, LEN, 1);
	fab_fill(v->ra.p, LEN, 2);
}

static void env_close(struct env *v)
{
	fab_buf_free(v->p.f, &v->la);
	fab_buf_free(v->p.f, &v->ra);
	fab_pair_close(&v->p);
}

/* SEND (recv posted), WRITE, READ of 8 KiB each = 32 packets each, in one go. */
static void three_ops(struct env *v, uint64_t base)
{
	struct urnic_cqe sc[3], rc;
	struct urnic_sge rs = fab_sge(v->ra.mr, 0, 8192);

	CHECK_EQ(fab_post_recv(v->p.b, base, &rs, 1), 0);
	CHECK_EQ(fab_post_send(v->p.a,
			       &(struct fab_send_wr){ .wr_id = base,
						      .opcode = URNIC_WR_SEND,
						      .num_sge = 1,
						      .sge = { fab_sge(v->la.mr, 0, 8192) } }),
		 0);
	CHECK_EQ(fab_post_send(v->p.a,
			       &(struct fab_send_wr){ .wr_id = base + 1,
						      .opcode = URNIC_WR_RDMA_WRITE,
						      .remote_addr = v->ra.mr->iova + 16384,
						      .rkey = v->ra.mr->key,
						      .num_sge = 1,
						      .sge = { fab_sge(v->la.mr, 8192, 8192) } }),
		 0);
	CHECK_EQ(fab_post_send(v->p.a,
			       &(struct fab_send_wr){ .wr_id = base + 2,
						      .opcode = URNIC_WR_RDMA_READ,
						      .remote_addr = v->ra.mr->iova + 32768,
						      .rkey = v->ra.mr->key,
						      .num_sge = 1,
						      .sge = { fab_sge(v->la.mr, 32768, 8192) } }),
		 0);
	fab_wait_cqes(v->p.f, &v->p.a->scq, sc, 3);
	fab_wait_cqes(v->p.f, &v->p.b->rcq, &rc, 1);
	fabric_settle(v->p.f);
	CHECK_CQE(sc[0], base, URNIC_WC_SUCCESS, URNIC_WC_SEND, 8192);
	CHECK_CQE(sc[1], base + 1, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 8192);
	CHECK_CQE(sc[2], base + 2, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 8192);
	CHECK_CQE(rc, base, URNIC_WC_SUCCESS, URNIC_WC_RECV, 8192);
	CHECK(memcmp(v->ra.p, v->la.p, 8192) == 0);
	CHECK(memcmp(v->ra.p + 16384, v->la.p + 8192, 8192) == 0);
	CHECK(memcmp(v->la.p + 32768, v->ra.p + 32768, 8192) == 0);
}

static void test_transfer_across_wrap(void)
{
	struct env v;
	bool saw_top = false, saw_zero = false;

	env_open(&v, 0xfffff0, 0xffffe0);
	three_ops(&v, 10);
	for (uint32_t i = 0; i < v.p.f->ntrace; i++) {
		const struct fab_pktinfo *pi = &v.p.f->trace[i];

		saw_top |= pi->src == 0 && pi->psn == 0xffffff;
		saw_zero |= pi->src == 0 && pi->psn == 0;
	}
	CHECK(saw_top && saw_zero);
	/* 96 PSNs later. */
	CHECK_EQ(v.p.a->qp.req.psn, (0xfffff0 + 96) & URNIC_PSN_MASK);
	CHECK_EQ(v.p.b->qp.resp.epsn, (0xfffff0 + 96) & URNIC_PSN_MASK);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retransmit_pkts), 0);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request), 0);
	/* And the other direction, whose PSNs wrap too. */
	{
		struct urnic_cqe sc;

		CHECK_EQ(fab_post_send(v.p.b, &(struct fab_send_wr){ .wr_id = 99,
								     .opcode = URNIC_WR_RDMA_WRITE,
								     .remote_addr = v.la.mr->iova,
								     .rkey = v.la.mr->key,
								     .num_sge = 1,
								     .sge = { fab_sge(v.ra.mr, 0,
										      16384) } }),
			 0);
		fab_wait_cqes(v.p.f, &v.p.b->scq, &sc, 1);
		CHECK_CQE(sc, 99, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 16384);
		CHECK(memcmp(v.la.p, v.ra.p, 16384) == 0);
		CHECK_EQ(v.p.b->qp.req.psn, (0xffffe0 + 64) & URNIC_PSN_MASK);
	}
	env_close(&v);
}

/* Go-back-N across the wrap: the packets on both sides of it are lost once. */
static void test_loss_at_wrap(void)
{
	struct env v;

	env_open(&v, 0xfffff8, 0x123);
	fab_add_rule(v.p.f, &(struct fab_rule){ .match = FAB_M_SRC | FAB_M_PSN,
						.src = 0,
						.psn = 0xffffff,
						.count = 1,
						.action = FAB_DROP });
	fab_add_rule(v.p.f, &(struct fab_rule){ .match = FAB_M_SRC | FAB_M_PSN,
						.src = 0,
						.psn = 0,
						.count = 1,
						.action = FAB_DROP });
	/* A READ response too (the READ reserves PSNs 0x38..0x57). */
	fab_add_rule(v.p.f, &(struct fab_rule){ .match = FAB_M_SRC | FAB_M_PSN,
						.src = 1,
						.psn = 0x40,
						.count = 1,
						.action = FAB_DROP });
	three_ops(&v, 20);
	CHECK_EQ(v.p.f->rules[0].hits, 1);
	CHECK_EQ(v.p.f->rules[1].hits, 1);
	CHECK_EQ(v.p.f->rules[2].hits, 1);
	CHECK(fab_ctr(v.p.f, 0, URNIC_CTR_retransmit_pkts) > 0);
	CHECK(fab_ctr(v.p.f, 1, URNIC_CTR_nak_seq_sent) >= 1);
	/* Again, now starting right at the top PSN, with the last packet before the wrap
	 * lost so that only the timer recovers it. */
	env_close(&v);
	env_open(&v, 0xffffe1, 0);
	fab_add_rule(v.p.f, &(struct fab_rule){ .match = FAB_M_SRC | FAB_M_PSN,
						.src = 0,
						.psn = 0x000000,
						.count = 1,
						.action = FAB_DROP });
	{
		struct urnic_cqe sc;

		/* 32 packets: 0xffffe1 .. 0x000000, the last one lost. */
		CHECK_EQ(fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 1,
								     .opcode = URNIC_WR_RDMA_WRITE,
								     .remote_addr = v.ra.mr->iova,
								     .rkey = v.ra.mr->key,
								     .num_sge = 1,
								     .sge = { fab_sge(v.la.mr, 0,
										      8192) } }),
			 0);
		fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
		CHECK_CQE(sc, 1, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 8192);
		CHECK(memcmp(v.ra.p, v.la.p, 8192) == 0);
		CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retry_timeout), 1);
		CHECK_EQ(v.p.a->qp.req.psn, 1);
	}
	fabric_settle(v.p.f);
	env_close(&v);
}

int main(void)
{
	RUN(test_transfer_across_wrap);
	RUN(test_loss_at_wrap);
	return 0;
}
