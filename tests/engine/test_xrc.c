/* SPDX-License-Identifier: MIT */
/*
 * test_xrc.c - XRC (IBTA Annex A14): one send QP reaching two SRQs through one receive
 * QP, with the SRQ named by each request.
 *
 *   host 0 (10.0.0.1): XRC send QP s ---- fabric ----> XRC receive QP t, domain D,
 *                                                       host 1 (10.0.0.2)
 *                                                        SRQ A (PD pa, CQ ca) of D
 *                                                        SRQ B (PD pb, CQ cb) of D
 *
 * A SEND takes a WQE of the SRQ it names and completes on that SRQ's CQ; WRITE, READ and
 * atomics reach memory of the named SRQ's PD and no other; every packet is an XRC one,
 * every request with the SRQ's number in its XRCETH. A number that names no SRQ of D, or
 * another SRQ than the first packet of its message, is refused with NAK invalid request
 * and counted; a request to the send QP or a response to the receive QP is dropped and
 * counted. Loss, an empty SRQ (RNR) and an SRQ that goes away behave as on RC.
 */
#include <string.h>

#include "fabric.h"
#include "wire/byteorder.h"

enum { A = 0, B = 1, BUF = 65536 };

struct env {
	struct fabric *f;
	struct urnic_pd pd0, pd[2]; /* host 0's; host 1: SRQ A's and SRQ B's */
	struct urnic_xrcd dom, other;
	struct fab_qp *s, *t;
	struct urnic_srq *srq[2];
	struct urnic_cq cq[2];
	struct fab_buf la, rb[2]; /* la on host 0; rb[i] on host 1 in SRQ i's PD */
	struct fab_conn c;
};

static struct urnic_srq *xrc_srq_new(struct env *v, struct urnic_pd *pd, struct urnic_xrcd *dom,
				     struct urnic_cq *cq)
{
	struct urnic_srq *srq = fab_srq_new(pd, 16);

	srq->xrcd = dom;
	srq->cq = cq;
	CHECK_EQ(urnic_engine_srq_add(fab_engine(v->f, 1), srq), 0);
	CHECK(srq->srqn != 0);
	CHECK(urnic_engine_srq_find(fab_engine(v->f, 1), srq->srqn) == srq);
	return srq;
}

static void xrc_srq_free(struct env *v, struct urnic_srq *srq)
{
	urnic_engine_srq_remove(fab_engine(v->f, 1), srq);
	CHECK(urnic_engine_srq_find(fab_engine(v->f, 1), srq->srqn) == NULL);
	fab_srq_free(srq);
}

static void env_open(struct env *v, uint64_t seed)
{
	memset(v, 0, sizeof(*v));
	v->f = fabric_new(2, seed);
	v->pd0.handle = 1;
	v->pd[A].handle = 1;
	v->pd[B].handle = 2;
	v->c = fab_conn_default();
	/* As src/verbs creates them: the send QP has no receive side, the receive QP no PD,
	 * CQ or queue of its own (ibv_create_qp_ex with IBV_QP_INIT_ATTR_XRCD). */
	v->s = fab_qp_new_type(v->f, 0, &v->pd0, URNIC_QPT_XRC_SEND, NULL, 64, 0, true);
	v->s->qp.recv_cq = NULL;
	v->t = fab_qp_new_type(v->f, 1, NULL, URNIC_QPT_XRC_RECV, NULL, 0, 0, false);
	v->t->qp.xrcd = &v->dom;
	v->t->qp.send_cq = v->t->qp.recv_cq = NULL;
	fab_connect_one(v->s, v->t, &v->c, v->c.psn_a, v->c.psn_b);
	fab_connect_one(v->t, v->s, &v->c, v->c.psn_b, v->c.psn_a);
	for (int i = 0; i < 2; i++) {
		CHECK_EQ(urnic_cq_init(&v->cq[i], 256), 0);
		v->srq[i] = xrc_srq_new(v, &v->pd[i], &v->dom, &v->cq[i]);
		fab_buf_new(v->f, &v->rb[i], 1, &v->pd[i], BUF, FAB_ALL_ACCESS);
		fab_fill(v->rb[i].p, BUF, (uint32_t)seed + 10 + (uint32_t)i);
	}
	CHECK(v->srq[A]->srqn != v->srq[B]->srqn);
	fab_buf_new(v->f, &v->la, 0, &v->pd0, BUF, FAB_ALL_ACCESS);
	fab_fill(v->la.p, BUF, (uint32_t)seed);
}

static void env_close(struct env *v)
{
	fab_buf_free(v->f, &v->la);
	fab_qp_free(v->s);
	fab_qp_free(v->t);
	for (int i = 0; i < 2; i++) {
		fab_buf_free(v->f, &v->rb[i]);
		xrc_srq_free(v, v->srq[i]);
		urnic_cq_fini(&v->cq[i]);
	}
	fabric_free(v->f);
}

static void srq_post(struct env *v, int i, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct urnic_sge sge = fab_sge(v->rb[i].mr, off, len);

	CHECK_EQ(fab_post_srq_recv(v->srq[i], wr_id, &sge, 1), 0);
}

/* A work request from la[loff, loff + len) to the SRQ with number srqn. */
static struct fab_send_wr wr(uint64_t id, uint32_t op, uint32_t srqn, const struct env *v,
			     uint32_t loff, uint32_t len)
{
	return (struct fab_send_wr){ .wr_id = id,
				     .opcode = op,
				     .xrc_srqn = srqn,
				     .num_sge = 1,
				     .sge = { fab_sge(v->la.mr, loff, len) } };
}

/* The same to memory of host 1 (rb[i] at roff). */
static struct fab_send_wr rwr(uint64_t id, uint32_t op, uint32_t srqn, const struct env *v, int i,
			      uint32_t roff, uint32_t loff, uint32_t len)
{
	struct fab_send_wr w = wr(id, op, srqn, v, loff, len);

	w.remote_addr = v->rb[i].mr->iova + roff;
	w.rkey = v->rb[i].mr->key;
	return w;
}

static void post(struct env *v, struct fab_send_wr w)
{
	CHECK_EQ(fab_post_send(v->s, &w), 0);
}

/* Every packet on the wire is an XRC one: requests from host 0 with the XRCETH of an SRQ
 * named, responses from host 1. */
static void check_all_xrc(const struct env *v)
{
	for (uint32_t k = 0; k < v->f->ntrace; k++) {
		const struct fab_pktinfo *pi = &v->f->trace[k];
		uint32_t flags = urnic_opcode_info(pi->opcode)->flags;

		CHECK(flags & URNIC_OPF_XRC);
		CHECK_EQ(pi->src == 0, (flags & URNIC_OPF_REQ) != 0);
	}
}

static void test_xrc_send_reaches_the_srq_it_names(void)
{
	struct env v;
	struct urnic_cqe c[2];

	env_open(&v, 1);
	srq_post(&v, A, 100, 0, 4096);
	srq_post(&v, B, 200, 0, 4096);
	srq_post(&v, B, 201, 4096, 4096);
	post(&v, wr(1, URNIC_WR_SEND, v.srq[A]->srqn, &v, 0, 3000)); /* FIRST MIDDLE LAST */
	post(&v, wr(2, URNIC_WR_SEND_WITH_IMM, v.srq[B]->srqn, &v, 4000, 100));
	fab_wait_cqes(v.f, &v.cq[A], c, 1);
	CHECK_CQE(c[0], 100, URNIC_WC_SUCCESS, URNIC_WC_RECV, 3000);
	CHECK_EQ(c[0].qp_num, v.t->qp.qpn);
	CHECK_EQ(c[0].src_qp, v.s->qp.qpn);
	CHECK(memcmp(v.rb[A].p, v.la.p, 3000) == 0);
	fab_wait_cqes(v.f, &v.cq[B], c, 1);
	CHECK_CQE(c[0], 200, URNIC_WC_SUCCESS, URNIC_WC_RECV, 100);
	CHECK(c[0].wc_flags & URNIC_WC_WITH_IMM);
	CHECK(memcmp(v.rb[B].p, v.la.p + 4000, 100) == 0);
	fab_wait_cqes(v.f, &v.s->scq, c, 2);
	CHECK_CQE(c[0], 1, URNIC_WC_SUCCESS, URNIC_WC_SEND, 3000);
	CHECK_CQE(c[1], 2, URNIC_WC_SUCCESS, URNIC_WC_SEND, 100);
	fabric_settle(v.f);
	/* B keeps its second WQE; nothing completed on the QPs' own CQs. */
	CHECK_EQ(urnic_srq_count(v.srq[A]), 0);
	CHECK_EQ(urnic_srq_count(v.srq[B]), 1);
	CHECK_EQ(fab_poll(&v.t->rcq, c, 1), 0);
	CHECK_EQ(fab_poll(&v.s->rcq, c, 1), 0);
	check_all_xrc(&v);
	CHECK(v.f->ntrace >= 5); /* 3 + 1 requests, an ACK at least */
	CHECK_EQ(v.f->trace[0].opcode, URNIC_OP_XRC_SEND_FIRST);
	CHECK_EQ(v.s->qp.state, URNIC_QPS_RTS);
	CHECK_EQ(v.t->qp.state, URNIC_QPS_RTS);
	env_close(&v);
}

static void test_xrc_one_sided_ops_use_the_named_srq_pd(void)
{
	struct env v;
	struct urnic_cqe c[6];
	uint64_t before[2];

	env_open(&v, 2);
	memcpy(&before[A], v.rb[A].p + 8192, 8);
	memcpy(&before[B], v.rb[B].p + 8192, 8);
	srq_post(&v, B, 300, 0, 16);
	post(&v, rwr(1, URNIC_WR_RDMA_WRITE, v.srq[A]->srqn, &v, A, 100, 0, 2500));
	post(&v, rwr(2, URNIC_WR_RDMA_READ, v.srq[B]->srqn, &v, B, 4096, 16384, 3000));
	post(&v, rwr(3, URNIC_WR_RDMA_WRITE_WITH_IMM, v.srq[B]->srqn, &v, B, 20000, 6000, 700));
	{
		struct fab_send_wr w = rwr(4, URNIC_WR_ATOMIC_FETCH_AND_ADD, v.srq[A]->srqn, &v, A,
					   8192, 32768, 8);

		w.compare_add = 5;
		post(&v, w);
		w = rwr(5, URNIC_WR_ATOMIC_CMP_AND_SWP, v.srq[B]->srqn, &v, B, 8192, 32776, 8);
		w.compare_add = before[B];
		w.swap = 0x1122334455667788ull;
		post(&v, w);
	}
	fab_wait_cqes(v.f, &v.s->scq, c, 5);
	for (int i = 0; i < 5; i++)
		CHECK_EQ(c[i].status, URNIC_WC_SUCCESS);
	CHECK(memcmp(v.rb[A].p + 100, v.la.p, 2500) == 0);
	CHECK(memcmp(v.la.p + 16384, v.rb[B].p + 4096, 3000) == 0);
	CHECK(memcmp(v.rb[B].p + 20000, v.la.p + 6000, 700) == 0);
	{
		uint64_t got, orig;

		memcpy(&got, v.rb[A].p + 8192, 8);
		CHECK_EQ(got, before[A] + 5);
		memcpy(&orig, v.la.p + 32768, 8);
		CHECK_EQ(orig, before[A]);
		memcpy(&got, v.rb[B].p + 8192, 8);
		CHECK_EQ(got, 0x1122334455667788ull);
		memcpy(&orig, v.la.p + 32776, 8);
		CHECK_EQ(orig, before[B]);
	}
	/* The WRITE with immediate took B's WQE and completed on B's CQ. */
	fab_wait_cqes(v.f, &v.cq[B], c, 1);
	CHECK_CQE(c[0], 300, URNIC_WC_SUCCESS, URNIC_WC_RECV_RDMA_WITH_IMM, 700);
	CHECK_EQ(fab_poll(&v.cq[A], c, 1), 0);
	check_all_xrc(&v);

	/* A's memory through B: B's PD does not hold A's R_Key. Remote access error, the
	 * memory untouched, both QPs in error. */
	{
		uint8_t keep[64];

		memcpy(keep, v.rb[A].p + 40000, sizeof(keep));
		post(&v, rwr(6, URNIC_WR_RDMA_WRITE, v.srq[B]->srqn, &v, A, 40000, 0, 64));
		fab_wait_cqes(v.f, &v.s->scq, c, 1);
		CHECK_EQ(c[0].wr_id, 6);
		CHECK_EQ(c[0].status, URNIC_WC_REM_ACCESS_ERR);
		CHECK(memcmp(keep, v.rb[A].p + 40000, sizeof(keep)) == 0);
		CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_nak_rem_access_sent), 1);
		CHECK_EQ(v.t->qp.state, URNIC_QPS_ERR);
	}
	fabric_settle(v.f);
	env_close(&v);
}

/* An SRQ number the receive QP may not use: refused, counted, nothing taken. */
static void refused(uint32_t op, int which, uint64_t seed)
{
	struct env v;
	struct urnic_cqe c[1];
	struct urnic_cq ocq;
	struct urnic_srq *foreign;
	uint32_t srqn;

	env_open(&v, seed);
	CHECK_EQ(urnic_cq_init(&ocq, 16), 0);
	foreign = xrc_srq_new(&v, &v.pd[A], &v.other, &ocq); /* another domain's */
	srq_post(&v, A, 100, 0, 4096);
	{
		struct urnic_sge sge = fab_sge(v.rb[A].mr, 0, 4096);

		CHECK_EQ(fab_post_srq_recv(foreign, 900, &sge, 1), 0);
	}
	srqn = which == 0   ? foreign->srqn
	       : which == 1 ? v.srq[A]->srqn ^ (1u << URNIC_QPN_INDEX_BITS) /* a stale generation */
			    : 0xffffff;
	post(&v, rwr(1, op, srqn, &v, A, 0, 0, 8));
	fab_wait_cqes(v.f, &v.s->scq, c, 1);
	CHECK_EQ(c[0].status, URNIC_WC_REM_INV_REQ_ERR);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_refused_xrc_srq), 1);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_nak_inv_req_sent), 1);
	CHECK_EQ(fab_ctr(v.f, 0, URNIC_CTR_nak_inv_req_rcvd), 1);
	CHECK_EQ(v.t->qp.state, URNIC_QPS_ERR);
	fabric_settle(v.f);
	CHECK_EQ(urnic_srq_count(v.srq[A]), 1);
	CHECK_EQ(urnic_srq_count(foreign), 1);
	CHECK_EQ(fab_poll(&ocq, c, 1), 0);
	CHECK_EQ(fab_poll(&v.cq[A], c, 1), 0);
	xrc_srq_free(&v, foreign);
	urnic_cq_fini(&ocq);
	env_close(&v);
}

static void test_xrc_srq_of_another_domain_or_none_is_refused(void)
{
	static const uint32_t ops[] = { URNIC_WR_SEND, URNIC_WR_RDMA_WRITE, URNIC_WR_RDMA_READ,
					URNIC_WR_ATOMIC_FETCH_AND_ADD };

	for (int which = 0; which < 3; which++)
		for (unsigned k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
			refused(ops[k], which, 10 + 4 * (uint64_t)which + k);
}

/* A message's later packets must name the SRQ of its first. */
static void to_srq_b(uint8_t *buf, uint32_t len, void *arg)
{
	const struct urnic_srq *b = arg;

	(void)len;
	urnic_put_be24(buf + URNIC_BTH_BYTES + 1, b->srqn);
}

static void test_xrc_message_keeps_its_srq(void)
{
	struct env v;
	struct urnic_cqe c[1];
	struct fab_rule *r;

	env_open(&v, 20);
	srq_post(&v, A, 100, 0, 4096);
	srq_post(&v, B, 200, 0, 4096);
	r = fab_add_rule(v.f, &(struct fab_rule){ .match = FAB_M_OPCODE,
						  .opcode = URNIC_OP_XRC_SEND_MIDDLE,
						  .count = 1,
						  .action = FAB_MUTATE,
						  .mutate = to_srq_b,
						  .arg = v.srq[B] });
	post(&v, wr(1, URNIC_WR_SEND, v.srq[A]->srqn, &v, 0, 3000));
	fab_wait_cqes(v.f, &v.s->scq, c, 1);
	CHECK_EQ(c[0].status, URNIC_WC_REM_INV_REQ_ERR);
	CHECK_EQ(r->hits, 1);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_refused_xrc_srq), 1);
	/* The WQE the receive QP took from A completes with FLUSH_ERR on A's CQ as it enters
	 * error (IBTA 10.3.1); B's stays. */
	fab_wait_cqes(v.f, &v.cq[A], c, 1);
	CHECK_EQ(c[0].wr_id, 100);
	CHECK_EQ(c[0].status, URNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(urnic_srq_count(v.srq[B]), 1);
	fabric_settle(v.f);
	env_close(&v);
}

/* Builds and delivers an XRC packet of this opcode from host `from` to QP qpn. */
static void inject(struct env *v, int from, uint8_t opcode, uint32_t qpn, uint32_t psn,
		   uint32_t srqn)
{
	struct urnic_pkt h = { 0 };
	uint8_t buf[128];
	ssize_t n;

	h.bth.opcode = opcode;
	h.bth.pkey = URNIC_DEFAULT_PKEY;
	h.bth.dqpn = qpn;
	h.bth.psn = psn;
	h.xrc_srqn = srqn;
	h.aeth.syndrome = URNIC_AETH_ACK_UNLIMITED;
	n = urnic_pkt_encode_hdr(&h, buf, sizeof(buf));
	CHECK(n > 0);
	fab_inject(v->f, v->f->hosts[from].ip, 1 - from, 0xc123, buf,
		   (uint32_t)n + URNIC_ICRC_BYTES, true);
}

static void test_xrc_wrong_direction_is_dropped_and_counted(void)
{
	struct env v;
	struct urnic_cqe c[1];

	env_open(&v, 30);
	/* A request to the send QP: it has no responder. */
	inject(&v, 1, URNIC_OP_XRC_SEND_ONLY, v.s->qp.qpn, v.c.psn_b, v.srq[A]->srqn);
	CHECK_EQ(fab_ctr(v.f, 0, URNIC_CTR_drop_xrc_request_to_send_qp), 1);
	/* A response to the receive QP: it sends no request. */
	inject(&v, 0, URNIC_OP_XRC_ACKNOWLEDGE, v.t->qp.qpn, v.c.psn_a, 0);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_drop_xrc_response_to_recv_qp), 1);
	/* RC opcodes are another transport's. */
	inject(&v, 0, URNIC_OP_RC_SEND_ONLY, v.t->qp.qpn, v.c.psn_a, 0);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_drop_opcode_qp_type), 1);
	fabric_settle(v.f);
	CHECK_EQ(v.f->ntrace, 0); /* nothing answered any of them */
	/* Both still work. */
	srq_post(&v, A, 100, 0, 64);
	post(&v, wr(1, URNIC_WR_SEND, v.srq[A]->srqn, &v, 0, 64));
	fab_wait_cqes(v.f, &v.cq[A], c, 1);
	CHECK_CQE(c[0], 100, URNIC_WC_SUCCESS, URNIC_WC_RECV, 64);
	fab_wait_cqes(v.f, &v.s->scq, c, 1);
	CHECK_EQ(c[0].status, URNIC_WC_SUCCESS);
	env_close(&v);
}

/* The send QP carries SEND, WRITE, READ and atomics only (msg.c). */
static void test_xrc_send_qp_refuses_other_work(void)
{
	static const uint32_t ops[] = { URNIC_WR_SEND_WITH_INV, URNIC_WR_LOCAL_INV,
					URNIC_WR_ATOMIC_WRITE };

	for (unsigned k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		struct env v;
		struct urnic_cqe c[1];

		env_open(&v, 40 + k);
		post(&v, rwr(1, ops[k], v.srq[A]->srqn, &v, A, 0, 0, 8));
		fab_wait_cqes(v.f, &v.s->scq, c, 1);
		CHECK_EQ(c[0].status, URNIC_WC_LOC_QP_OP_ERR);
		CHECK_EQ(v.f->ntrace, 0);
		fabric_settle(v.f);
		env_close(&v);
	}
}

/* An empty SRQ is RNR, as on RC (IBTA 9.7.5.1.5); a post lets the retry through. */
static void test_xrc_empty_srq_is_rnr(void)
{
	struct env v;
	struct urnic_cqe c[1];

	env_open(&v, 50);
	post(&v, wr(1, URNIC_WR_SEND, v.srq[B]->srqn, &v, 0, 2000));
	(void)fabric_run(v.f, NULL, NULL, 50);
	CHECK(fab_ctr(v.f, 1, URNIC_CTR_rnr_nak_sent) >= 1);
	srq_post(&v, B, 200, 0, 4096);
	fab_wait_cqes(v.f, &v.cq[B], c, 1);
	CHECK_CQE(c[0], 200, URNIC_WC_SUCCESS, URNIC_WC_RECV, 2000);
	fab_wait_cqes(v.f, &v.s->scq, c, 1);
	CHECK_EQ(c[0].status, URNIC_WC_SUCCESS);
	check_all_xrc(&v);
	env_close(&v);
}

/* An SRQ that goes away: the receive QP forgets it, a request that names it is refused. */
static void test_xrc_srq_removed_is_forgotten(void)
{
	struct env v;
	struct urnic_cqe c[1];
	uint32_t gone;

	env_open(&v, 60);
	srq_post(&v, A, 100, 0, 64);
	post(&v, wr(1, URNIC_WR_SEND, v.srq[A]->srqn, &v, 0, 64));
	fab_wait_cqes(v.f, &v.s->scq, c, 1);
	CHECK(v.t->qp.srq == v.srq[A] && v.t->qp.pd == &v.pd[A] && v.t->qp.recv_cq == &v.cq[A]);
	fab_wait_cqes(v.f, &v.cq[A], c, 1);
	gone = v.srq[A]->srqn;
	urnic_engine_srq_remove(fab_engine(v.f, 1), v.srq[A]);
	CHECK(v.t->qp.srq == NULL && v.t->qp.pd == NULL && v.t->qp.recv_cq == NULL);
	post(&v, wr(2, URNIC_WR_SEND, gone, &v, 0, 64));
	fab_wait_cqes(v.f, &v.s->scq, c, 1);
	CHECK_EQ(c[0].status, URNIC_WC_REM_INV_REQ_ERR);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_refused_xrc_srq), 1);
	fabric_settle(v.f);
	CHECK_EQ(urnic_engine_srq_add(fab_engine(v.f, 1), v.srq[A]), 0); /* for env_close */
	CHECK(v.srq[A]->srqn != gone);					 /* a new generation */
	env_close(&v);
}

/* Loss, duplication and reordering: go-back-N and duplicate answers across both SRQs,
 * a duplicate READ answered under the PD it was executed with although the next
 * request named the other SRQ. */
static void test_xrc_survives_loss(void)
{
	struct env v;
	struct urnic_cqe c[1];
	int recvs[2] = { 0, 0 };

	env_open(&v, 70);
	v.f->drop_ppm = 60000;
	v.f->dup_ppm = 20000;
	v.f->reorder_ppm = 20000;
	for (uint32_t k = 0; k < 40; k++) {
		int i = (int)(k & 1);
		uint32_t len = 500 + 97 * k;
		uint64_t id = 1000 + k;

		switch (k % 4) {
		case 0:
		case 1:
			srq_post(&v, i, id, 0, 8192);
			post(&v, wr(id, URNIC_WR_SEND, v.srq[i]->srqn, &v, 1000 * k, len));
			break;
		case 2:
			post(&v, rwr(id, URNIC_WR_RDMA_WRITE, v.srq[i]->srqn, &v, i, 10000, k * 100,
				     len));
			break;
		default:
			post(&v,
			     rwr(id, URNIC_WR_RDMA_READ, v.srq[i]->srqn, &v, i, 20000, 40000, len));
			break;
		}
		fab_wait_cqes(v.f, &v.s->scq, c, 1);
		CHECK_EQ(c[0].wr_id, id);
		CHECK_EQ(c[0].status, URNIC_WC_SUCCESS);
		if (k % 4 < 2) {
			fab_wait_cqes(v.f, &v.cq[i], c, 1);
			CHECK_CQE(c[0], id, URNIC_WC_SUCCESS, URNIC_WC_RECV, len);
			CHECK(memcmp(v.rb[i].p, v.la.p + 1000 * k, len) == 0);
			recvs[i]++;
		} else if (k % 4 == 2) {
			CHECK(memcmp(v.rb[i].p + 10000, v.la.p + k * 100, len) == 0);
		} else {
			CHECK(memcmp(v.la.p + 40000, v.rb[i].p + 20000, len) == 0);
		}
	}
	CHECK_EQ(recvs[A], 10);
	CHECK_EQ(recvs[B], 10);
	CHECK(fab_ctr(v.f, 0, URNIC_CTR_retransmit_pkts) > 0);
	CHECK_EQ(v.s->qp.state, URNIC_QPS_RTS);
	CHECK_EQ(v.t->qp.state, URNIC_QPS_RTS);
	v.f->drop_ppm = v.f->dup_ppm = v.f->reorder_ppm = 0;
	fabric_settle(v.f);
	env_close(&v);
}

int main(void)
{
	RUN(test_xrc_send_reaches_the_srq_it_names);
	RUN(test_xrc_one_sided_ops_use_the_named_srq_pd);
	RUN(test_xrc_srq_of_another_domain_or_none_is_refused);
	RUN(test_xrc_message_keeps_its_srq);
	RUN(test_xrc_wrong_direction_is_dropped_and_counted);
	RUN(test_xrc_send_qp_refuses_other_work);
	RUN(test_xrc_empty_srq_is_rnr);
	RUN(test_xrc_srq_removed_is_forgotten);
	RUN(test_xrc_survives_loss);
	return 0;
}
