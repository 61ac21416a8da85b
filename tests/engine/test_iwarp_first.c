/* SPDX-License-Identifier: MIT */
/*
 * test_iwarp_first.c - who speaks first on an iWARP connection (RFC 5044 7.1.2, RFC 6581
 * 3), between two engines over byte pipes split at random (iw_link.h):
 *
 *   host 0: MPA Initiator, RC QP === TCP byte stream === host 1: MPA Responder, RC QP
 *
 * The Responder's QP frames nothing (Send, Write, Read Request, Read Response) until the
 * Initiator's first FPDU is whole, and then everything posted meanwhile goes without a
 * further post or doorbell; a Terminate is not held. In peer-to-peer mode that first
 * FPDU is the RTR: each kind is taken (a Read answered with a zero-length Read Response
 * that the Initiator takes), both sides count it on its queue's MSNs, and an RTR other
 * than the one agreed is refused with a Terminate. Without an RTR the hold ends at the
 * engine's iw_await_first_ns (siw's Initiator may never speak first), unless that is 0;
 * with one it does not.
 */
#include <string.h>

#include "engine/iwarp/mpa_rtr.h"
#include "iw_link.h"

#define BUF (64u * 1024)
#define MSS 1460

static const struct urnic_iw_conn_params ini = { .mss = MSS, .ird = 8, .ord = 8 };

struct env {
	struct iwl l;
	struct fab_buf b[2]; /* host 0's, host 1's */
};

static void env_open(struct env *v, uint64_t seed, const struct urnic_iw_conn_params *p0,
		     const struct urnic_iw_conn_params *p1)
{
	iwl_open_pair(&v->l, seed, p0, p1);
	for (int i = 0; i < 2; i++) {
		fab_buf_new(v->l.f, &v->b[i], i, &v->l.pd[i], BUF, FAB_ALL_ACCESS);
		fab_fill(v->b[i].p, BUF, (uint32_t)(seed * 2 + (uint64_t)i));
	}
}

static void env_close(struct env *v)
{
	for (int i = 0; i < 2; i++)
		fab_buf_free(v->l.f, &v->b[i]);
	iwl_close(&v->l);
}

static void post(struct env *v, int side, const struct fab_send_wr *wr)
{
	CHECK_EQ(fab_post_send(v->l.q[side], wr), 0);
	urnic_engine_doorbell(v->l.f->hosts[side].e, v->l.q[side]->qp.qpn);
}

static void post_recv(struct env *v, int side, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct urnic_sge sge = fab_sge(v->b[side].mr, off, len);

	CHECK_EQ(fab_post_recv(v->l.q[side], wr_id, &sge, 1), 0);
}

static struct fab_send_wr send_wr(struct env *v, int side, uint64_t wr_id, uint32_t off,
				  uint32_t len)
{
	return (struct fab_send_wr){ .wr_id = wr_id,
				     .opcode = URNIC_WR_SEND,
				     .num_sge = 1,
				     .sge = { fab_sge(v->b[side].mr, off, len) } };
}

/* An RDMA op of side's from its buffer at off to (Write) or from (Read) the peer's at
 * roff. */
static struct fab_send_wr rdma_wr(struct env *v, int side, uint64_t wr_id, uint32_t op,
				  uint32_t off, uint32_t roff, uint32_t len)
{
	return (struct fab_send_wr){ .wr_id = wr_id,
				     .opcode = op,
				     .remote_addr = v->b[1 - side].mr->iova + roff,
				     .rkey = v->b[1 - side].mr->key,
				     .num_sge = 1,
				     .sge = { fab_sge(v->b[side].mr, off, len) } };
}

static void check_clean(const struct env *v)
{
	for (int i = 0; i < 2; i++) {
		CHECK_EQ(iwl_ctr(&v->l, i, URNIC_CTR_iw_term_sent), 0);
		CHECK_EQ(iwl_ctr(&v->l, i, URNIC_CTR_iw_refused_rtr), 0);
		CHECK_EQ(iwl_ctr(&v->l, i, URNIC_CTR_iw_refused_rresp), 0);
		CHECK_EQ(v->l.q[i]->qp.state, URNIC_QPS_RTS);
	}
}

/* Host 1 posts a Send, a Write, a Read and an empty Send before host 0 said anything. */
static void post_held_work(struct env *v)
{
	struct fab_send_wr w;

	post_recv(v, 0, 10, 0, 64);
	post_recv(v, 0, 11, 64, 64);
	w = send_wr(v, 1, 1, 0, 64);
	post(v, 1, &w);
	w = rdma_wr(v, 1, 2, URNIC_WR_RDMA_WRITE, 1000, 2000, 100);
	post(v, 1, &w);
	w = rdma_wr(v, 1, 3, URNIC_WR_RDMA_READ, 3000, 4000, 50);
	post(v, 1, &w);
	w = send_wr(v, 1, 4, 0, 0);
	post(v, 1, &w);
}

/* What post_held_work posted has gone, arrived and completed, in post order. */
static void check_held_work_went(struct env *v)
{
	struct urnic_cqe c[8];

	CHECK_EQ(fab_poll(&v->l.q[1]->scq, c, 8), 4);
	CHECK_CQE(c[0], 1, URNIC_WC_SUCCESS, URNIC_WC_SEND, 64);
	CHECK_CQE(c[1], 2, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 100);
	CHECK_CQE(c[2], 3, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 50);
	CHECK_CQE(c[3], 4, URNIC_WC_SUCCESS, URNIC_WC_SEND, 0);
	CHECK_EQ(fab_poll(&v->l.q[0]->rcq, c, 8), 2);
	CHECK_CQE(c[0], 10, URNIC_WC_SUCCESS, URNIC_WC_RECV, 64);
	CHECK_CQE(c[1], 11, URNIC_WC_SUCCESS, URNIC_WC_RECV, 0);
	CHECK(memcmp(v->b[0].p, v->b[1].p, 64) == 0);
	CHECK(memcmp(v->b[0].p + 2000, v->b[1].p + 1000, 100) == 0);
	CHECK(memcmp(v->b[1].p + 3000, v->b[0].p + 4000, 50) == 0);
}

static void test_responder_holds_until_the_first_fpdu(void)
{
	for (uint64_t seed = 1; seed <= 6; seed++) {
		struct urnic_iw_conn_params p0 = ini, p1 = ini;
		bool read_first = seed & 1;
		struct urnic_cqe c[4];
		struct fab_send_wr w;
		struct env v;

		p0.crc = p1.crc = seed > 3;
		p1.await_first = true;
		env_open(&v, seed, &p0, &p1);
		CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_await_first), 1);
		CHECK_EQ(iwl_ctr(&v.l, 0, URNIC_CTR_iw_await_first), 0);
		post_held_work(&v);
		iwl_settle(&v.l);
		/* RFC 5044 7.1.2: not a byte from the Responder, and nothing refused. */
		CHECK_EQ(v.l.moved[1], 0);
		CHECK(!urnic_iw_tx_pending(&v.l.q[1]->qp));
		CHECK_EQ(fab_poll(&v.l.q[1]->scq, c, 4), 0);
		CHECK_EQ(fab_poll(&v.l.q[0]->rcq, c, 4), 0);
		check_clean(&v);
		/* The Initiator's first FPDU: a Send, or a Read Request the Responder answers. */
		if (read_first) {
			w = rdma_wr(&v, 0, 5, URNIC_WR_RDMA_READ, 8000, 9000, 300);
		} else {
			post_recv(&v, 1, 20, 8000, 64);
			w = send_wr(&v, 0, 5, 9000, 8);
		}
		post(&v, 0, &w);
		iwl_settle(&v.l);
		check_held_work_went(&v);
		CHECK_EQ(fab_poll(&v.l.q[0]->scq, c, 4), 1);
		CHECK_CQE(c[0], 5, URNIC_WC_SUCCESS,
			  read_first ? URNIC_WC_RDMA_READ : URNIC_WC_SEND, read_first ? 300 : 8);
		CHECK_EQ(fab_poll(&v.l.q[1]->rcq, c, 4), read_first ? 0 : 1);
		CHECK(memcmp(v.b[0].p + 8000, v.b[1].p + 9000, 8) == 0 || !read_first);
		CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_await_first_expired), 0);
		check_clean(&v);
		env_close(&v);
	}
}

/* An Initiator that agreed no RTR and says nothing (siw's, under a server that speaks
 * first): the Responder's work goes once the bound has passed, posted before it (woken
 * by the timer) or after it (at the post), and nothing before. */
static void test_responder_hold_ends_at_its_bound(void)
{
	for (uint64_t seed = 1; seed <= 4; seed++) {
		struct urnic_iw_conn_params p0 = ini, p1 = ini;
		bool post_late = seed & 1;
		struct urnic_cqe c[4];
		struct fab_send_wr w;
		struct env v;
		uint64_t t0;

		p0.crc = p1.crc = seed > 2;
		p1.await_first = true;
		env_open(&v, seed + 200, &p0, &p1);
		t0 = v.l.f->now_ns;
		if (!post_late)
			post_held_work(&v);
		iwl_settle(&v.l);
		v.l.f->now_ns = t0 + URNIC_IW_AWAIT_FIRST_NS - 100000; /* 0.1 ms short of it */
		iwl_settle(&v.l);
		CHECK_EQ(v.l.moved[1], 0);
		CHECK_EQ(fab_poll(&v.l.q[1]->scq, c, 4), 0);
		CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_await_first_expired), 0);
		v.l.f->now_ns = t0 + URNIC_IW_AWAIT_FIRST_NS;
		if (post_late)
			post_held_work(&v);
		iwl_settle(&v.l);
		check_held_work_went(&v);
		CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_await_first_expired), 1);
		check_clean(&v);
		/* The Initiator's first FPDU, after the hold, is taken as any other. */
		post_recv(&v, 1, 20, 8000, 64);
		w = send_wr(&v, 0, 5, 9000, 8);
		post(&v, 0, &w);
		iwl_settle(&v.l);
		CHECK_EQ(fab_poll(&v.l.q[1]->rcq, c, 4), 1);
		CHECK_CQE(c[0], 20, URNIC_WC_SUCCESS, URNIC_WC_RECV, 8);
		CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_await_first_expired), 1);
		check_clean(&v);
		env_close(&v);
	}
}

/* iw_await_first_ns 0 (URNIC_IW_HOLD_US=0): RFC 5044 7.1.2 to the letter, the hold lasts
 * until the Initiator's first FPDU, however late. */
static void test_responder_hold_unbounded(void)
{
	struct urnic_iw_conn_params p0 = ini, p1 = ini;
	struct fab_send_wr w;
	struct env v;

	p1.await_first = true;
	env_open(&v, 300, &p0, &p1);
	CHECK_EQ(v.l.f->hosts[1].e->cfg.iw_await_first_ns, URNIC_IW_AWAIT_FIRST_NS);
	v.l.f->hosts[1].e->cfg.iw_await_first_ns = 0;
	post_held_work(&v);
	iwl_settle(&v.l);
	v.l.f->now_ns += 1000 * URNIC_IW_AWAIT_FIRST_NS;
	iwl_settle(&v.l);
	CHECK_EQ(v.l.moved[1], 0);
	CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_await_first_expired), 0);
	post_recv(&v, 1, 20, 8000, 64);
	w = send_wr(&v, 0, 5, 9000, 8);
	post(&v, 0, &w);
	iwl_settle(&v.l);
	check_held_work_went(&v);
	check_clean(&v);
	env_close(&v);
}

static void test_p2p_rtr_is_the_first_fpdu(void)
{
	static const uint8_t rtrs[] = { URNIC_MPA_RTR_WRITE, URNIC_MPA_RTR_READ,
					URNIC_MPA_RTR_SEND };

	for (uint64_t seed = 1; seed <= 6; seed++) {
		struct urnic_iw_conn_params p0 = ini, p1 = ini;
		uint8_t rtr = rtrs[seed % 3], f[URNIC_MPA_RTR_FPDU_MAX];
		struct urnic_cqe c[4];
		struct fab_send_wr w;
		struct env v;
		ssize_t n;

		p0.crc = p1.crc = seed > 3;
		p0.rtr_out = rtr;
		p1.rtr_in = rtr;
		p1.await_first = true;
		env_open(&v, seed + 100, &p0, &p1);
		post_held_work(&v);
		iwl_settle(&v.l);
		/* An Initiator that agreed an RTR sends it first: no bound to the hold. */
		v.l.f->now_ns += 2 * URNIC_IW_AWAIT_FIRST_NS;
		iwl_settle(&v.l);
		CHECK_EQ(v.l.moved[1], 0);
		CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_await_first_expired), 0);
		/* MPA setup sent the RTR ahead of the Initiator QP's bytes (mpa_conn.h). */
		n = urnic_mpa_rtr_fpdu(rtr, p0.crc, f, sizeof(f));
		CHECK(n > 0);
		post_recv(&v, 1, 20, 8000, 64); /* a Send RTR takes no receive WQE */
		CHECK_EQ(iwl_inject(&v.l, 1, f, (size_t)n), (size_t)n);
		iwl_settle(&v.l);
		check_held_work_went(&v);
		check_clean(&v);
		/* RFC 5041 5.1: the RTR took MSN 1 of its queue on both sides. */
		w = rdma_wr(&v, 0, 5, URNIC_WR_RDMA_READ, 8000, 9000, 300);
		post(&v, 0, &w);
		w = send_wr(&v, 0, 6, 12000, 8);
		post(&v, 0, &w);
		iwl_settle(&v.l);
		CHECK_EQ(fab_poll(&v.l.q[0]->scq, c, 4), 2);
		CHECK_CQE(c[0], 5, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 300);
		CHECK_CQE(c[1], 6, URNIC_WC_SUCCESS, URNIC_WC_SEND, 8);
		CHECK_EQ(fab_poll(&v.l.q[1]->rcq, c, 4), 1);
		CHECK_CQE(c[0], 20, URNIC_WC_SUCCESS, URNIC_WC_RECV, 8);
		CHECK(memcmp(v.b[0].p + 8000, v.b[1].p + 9000, 300) == 0);
		check_clean(&v);
		env_close(&v);
	}
}

static void test_another_rtr_is_refused(void)
{
	struct urnic_iw_conn_params p0 = ini, p1 = ini;
	uint8_t f[URNIC_MPA_RTR_FPDU_MAX];
	struct urnic_cqe c[8];
	struct env v;
	ssize_t n;

	p0.rtr_out = URNIC_MPA_RTR_SEND;
	p1.rtr_in = URNIC_MPA_RTR_WRITE;
	p1.await_first = true;
	env_open(&v, 77, &p0, &p1);
	post_held_work(&v);
	iwl_settle(&v.l);
	n = urnic_mpa_rtr_fpdu(URNIC_MPA_RTR_SEND, false, f, sizeof(f));
	CHECK(n > 0);
	CHECK(iwl_inject(&v.l, 1, f, (size_t)n) < (size_t)n + 1);
	iwl_settle(&v.l);
	/* The Terminate is not held; the held work is flushed, none of it sent. */
	CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_refused_rtr), 1);
	CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_term_sent), 1);
	CHECK_EQ(iwl_ctr(&v.l, 0, URNIC_CTR_iw_term_rcvd), 1);
	CHECK_EQ(v.l.q[1]->qp.state, URNIC_QPS_ERR);
	CHECK_EQ(fab_poll(&v.l.q[1]->scq, c, 8), 4);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(c[i].status, URNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(fab_poll(&v.l.q[0]->rcq, c, 8), 2); /* flushed by the Terminate */
	CHECK_EQ(c[0].status, URNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(iwl_ctr(&v.l, 0, URNIC_CTR_iw_refused_rtr), 0);
	env_close(&v);
}

static void test_connect_refuses_inconsistent_rtr_params(void)
{
	struct urnic_iw_conn_params p = ini;
	struct fabric *f = fabric_new(1, 3);
	struct urnic_pd pd = { .handle = 1 };
	struct urnic_qp_attr a = { .port_num = 1, .access = FAB_ALL_ACCESS };
	struct fab_qp *q;

	f->hosts[0].e->cfg.iwarp = true;
	q = fab_qp_new_type(f, 0, &pd, URNIC_QPT_RC, NULL, 16, 16, true);
	CHECK_EQ(fab_modify(q, &a, URNIC_QPS_INIT,
			    URNIC_QP_STATE | URNIC_QP_PKEY_INDEX | URNIC_QP_PORT |
				    URNIC_QP_ACCESS_FLAGS),
		 0);
	p.rtr_in = URNIC_MPA_RTR_WRITE; /* an RTR awaited without the hold */
	CHECK_EQ(urnic_iw_qp_connect(f->hosts[0].e, &q->qp, &p, 0), -EINVAL);
	p.await_first = true;
	p.rtr_out = URNIC_MPA_RTR_READ; /* both sides' RTR at once */
	CHECK_EQ(urnic_iw_qp_connect(f->hosts[0].e, &q->qp, &p, 0), -EINVAL);
	p.rtr_out = URNIC_MPA_RTR_NONE;
	p.rtr_in = URNIC_MPA_RTR_SEND + 1;
	CHECK_EQ(urnic_iw_qp_connect(f->hosts[0].e, &q->qp, &p, 0), -EINVAL);
	CHECK_EQ(q->qp.state, URNIC_QPS_INIT);
	fab_qp_free(q);
	fabric_free(f);
}

int main(void)
{
	RUN(test_responder_holds_until_the_first_fpdu);
	RUN(test_responder_hold_ends_at_its_bound);
	RUN(test_responder_hold_unbounded);
	RUN(test_p2p_rtr_is_the_first_fpdu);
	RUN(test_another_rtr_is_refused);
	RUN(test_connect_refuses_inconsistent_rtr_params);
	return 0;
}
