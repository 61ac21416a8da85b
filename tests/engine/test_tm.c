/* SPDX-License-Identifier: MIT */
/*
 * test_tm.c - tag matching (rdma-core Documentation/tag_matching.md) over the fabric.
 *
 *   host 0: RC QP a (plain RQ) ----- fabric ----- b, RC QP on a tag-matching SRQ: host 1
 *
 * a sends tag-matching messages (a TMH at the start of each SEND). A message whose tag
 * a posted tag accepts lands in the tag's buffer without its TMH (IBV_WC_TM_MATCH |
 * IBV_WC_TM_DATA_VALID, tag and app_ctx reported), one packet or several; one no tag
 * accepts goes whole to a plain SRQ WQE as unexpected, and a tag posted before the
 * application reports it carries IBV_WC_TM_SYNC_REQ and matches nothing until then;
 * NO_TAG goes whole to a plain WQE (IBV_WC_TM_NO_TAG). A rendezvous completes
 * IBV_WC_TM_MATCH, then b READs a's buffer into the tag's, completes it
 * IBV_WC_TM_DATA_VALID and sends a FIN that a receives; b's send CQ stays empty; if b
 * fails meanwhile the tag completes in error, if it is reset the tag goes back to the
 * list; a QP that may not READ hands the request over as unexpected, one whose send
 * queue is full answers RNR until it has room. A removed tag matches nothing; removing
 * it again fails with IBV_WC_TM_ERR.
 */
#include <errno.h>
#include <string.h>

#include "fabric.h"
#include "queue/tm.h"
#include "wire/tmh.h"

struct env {
	struct fabric *f;
	struct urnic_pd pd[2];
	struct urnic_srq *srq; /* host 1, tag matching */
	struct urnic_tm_list tm;
	struct urnic_cq tmcq; /* the SRQ's CQ: every completion of its QP's receives */
	struct fab_qp *a, *b;
	struct fab_buf la, ra;
};

static void env_open_conn(struct env *v, uint64_t seed, const struct fab_conn *c)
{
	memset(v, 0, sizeof(*v));
	v->f = fabric_new(2, seed);
	v->pd[0].handle = v->pd[1].handle = 1;
	v->srq = fab_srq_new(&v->pd[1], 64);
	CHECK_EQ(urnic_tm_list_init(&v->tm, 8, 8), 0);
	CHECK_EQ(urnic_cq_init(&v->tmcq, 256), 0);
	v->srq->tm = &v->tm;
	v->srq->cq = &v->tmcq;
	v->a = fab_qp_new_type(v->f, 0, &v->pd[0], URNIC_QPT_RC, NULL, 16, 16, true);
	/* As src/verbs/qp.c: no send WQE of its own, the reserve for rendezvous. */
	v->b = fab_qp_new_type(v->f, 1, &v->pd[1], URNIC_QPT_RC, v->srq, URNIC_TM_SQ_RESERVE, 0,
			       false);
	fab_connect(v->a, v->b, c);
	fab_buf_new(v->f, &v->la, 0, &v->pd[0], 65536, FAB_ALL_ACCESS);
	fab_buf_new(v->f, &v->ra, 1, &v->pd[1], 65536, FAB_ALL_ACCESS);
	fab_fill(v->la.p, 65536, (uint32_t)seed);
}

static void env_open(struct env *v, uint64_t seed)
{
	struct fab_conn c = fab_conn_default();

	env_open_conn(v, seed, &c);
}

static void env_close(struct env *v)
{
	struct urnic_cqe c;

	CHECK_EQ(fab_poll(&v->b->scq, &c, 1), 0); /* the engine's READs and FINs: silent */
	fab_buf_free(v->f, &v->la);
	fab_buf_free(v->f, &v->ra);
	fab_qp_free(v->a);
	fab_qp_free(v->b);
	urnic_tm_list_fini(&v->tm);
	urnic_cq_fini(&v->tmcq);
	fab_srq_free(v->srq);
	fabric_free(v->f);
}

/* One list operation; its completion checked when signaled. Returns the handle. */
static uint32_t tm_op(struct env *v, uint32_t opcode, uint64_t wr_id, uint64_t tag, uint32_t handle,
		      uint32_t off, uint8_t want_flags)
{
	struct urnic_tm_op op = {
		.wr_id = wr_id,
		.opcode = opcode,
		.flags = URNIC_TM_OP_SIGNALED,
		.handle = handle,
		.tag = tag,
		.mask = ~0ull,
	};
	struct urnic_cqe c;
	static const uint16_t wc[] = { URNIC_WC_TM_ADD, URNIC_WC_TM_DEL, URNIC_WC_TM_SYNC };

	if (opcode == URNIC_TM_OP_SYNC) {
		op.flags |= URNIC_TM_OP_SYNC_CNT;
		op.unexpected_cnt = (uint32_t)tag;
	}
	op.wqe.wr_id = 1000 + wr_id;
	op.wqe.num_sge = 1;
	op.wqe.length = 8192;
	op.wqe.sge[0] = fab_sge(v->ra.mr, off, 8192);
	CHECK_EQ(urnic_engine_tm_op(fab_engine(v->f, 1), v->srq, &op), 0);
	CHECK_EQ(fab_poll(&v->tmcq, &c, 1), 1);
	CHECK_CQE(c, wr_id, URNIC_WC_SUCCESS, wc[opcode], 0);
	CHECK_EQ(c.wc_flags, want_flags);
	return op.handle;
}

/* a posts len bytes from la at off, a TMH first. */
static void post_tm(struct env *v, uint8_t op, uint64_t tag, uint32_t off, uint32_t len)
{
	struct fab_send_wr wr = { .wr_id = 7, .opcode = URNIC_WR_SEND, .num_sge = 1 };
	struct urnic_tmh h = { .op = op, .app_ctx = 0xc0ffee, .tag = tag };

	urnic_tmh_put(v->la.p + off, &h);
	wr.sge[0] = fab_sge(v->la.mr, off, len);
	CHECK_EQ(fab_post_send(v->a, &wr), 0);
}

/* The same, and its send completion. */
static void send_tm(struct env *v, uint8_t op, uint64_t tag, uint32_t off, uint32_t len)
{
	struct urnic_cqe c;

	post_tm(v, op, tag, off, len);
	fab_wait_cqes(v->f, &v->a->scq, &c, 1);
	CHECK_CQE(c, 7, URNIC_WC_SUCCESS, URNIC_WC_SEND, len);
}

static void srq_post(struct env *v, uint64_t wr_id, uint32_t off)
{
	struct urnic_sge sge = fab_sge(v->ra.mr, off, 8192);

	CHECK_EQ(fab_post_srq_recv(v->srq, wr_id, &sge, 1), 0);
}

static void expected_eager_lands_without_its_tmh(void)
{
	struct env v;
	struct urnic_cqe c;

	env_open(&v, 1);
	tm_op(&v, URNIC_TM_OP_ADD, 1, 0x51, 0, 0, 0);
	tm_op(&v, URNIC_TM_OP_ADD, 2, 0x52, 0, 16384, 0);
	/* One packet, then three (MTU 1024): only the first packet carries the TMH. */
	send_tm(&v, URNIC_TMH_EAGER, 0x52, 0, 116);
	fab_wait_cqes(v.f, &v.tmcq, &c, 1);
	CHECK_CQE(c, 1002, URNIC_WC_SUCCESS, URNIC_WC_TM_RECV, 100);
	CHECK_EQ(c.wc_flags, URNIC_WC_TM_MATCH | URNIC_WC_TM_DATA_VALID);
	CHECK_EQ(c.tm_tag, 0x52);
	CHECK_EQ(c.tm_priv, 0xc0ffee);
	CHECK_EQ(c.qp_num, v.b->qp.qpn);
	CHECK(memcmp(v.ra.p + 16384, v.la.p + 16, 100) == 0);
	send_tm(&v, URNIC_TMH_EAGER, 0x51, 4096, 3000);
	fab_wait_cqes(v.f, &v.tmcq, &c, 1);
	CHECK_CQE(c, 1001, URNIC_WC_SUCCESS, URNIC_WC_TM_RECV, 2984);
	CHECK_EQ(c.tm_tag, 0x51);
	CHECK(memcmp(v.ra.p, v.la.p + 4096 + 16, 2984) == 0);
	CHECK_EQ(v.tm.posted, 0);
	CHECK_EQ(fab_poll(&v.b->rcq, &c, 1), 0); /* the QP's own CQ: nothing */
	env_close(&v);
}

static void unexpected_goes_whole_to_a_plain_wqe_until_sync(void)
{
	struct env v;
	struct urnic_cqe c;
	uint32_t h;

	env_open(&v, 2);
	srq_post(&v, 500, 32768);
	srq_post(&v, 501, 40960);
	send_tm(&v, URNIC_TMH_EAGER, 0x99, 0, 200);
	fab_wait_cqes(v.f, &v.tmcq, &c, 1);
	CHECK_CQE(c, 500, URNIC_WC_SUCCESS, URNIC_WC_TM_RECV, 200);
	CHECK_EQ(c.wc_flags, 0);
	CHECK_EQ(c.tm_tag, 0);
	CHECK(memcmp(v.ra.p + 32768, v.la.p, 200) == 0); /* the TMH too */
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_tm_unexpected), 1);
	/* Posted before the application handled that message: out of phase. */
	h = tm_op(&v, URNIC_TM_OP_ADD, 3, 0x99, 0, 0, URNIC_WC_TM_SYNC_REQ);
	send_tm(&v, URNIC_TMH_EAGER, 0x99, 0, 200);
	fab_wait_cqes(v.f, &v.tmcq, &c, 1);
	CHECK_CQE(c, 501, URNIC_WC_SUCCESS, URNIC_WC_TM_RECV, 200);
	CHECK_EQ(c.wc_flags, 0);
	tm_op(&v, URNIC_TM_OP_SYNC, 4, 2, 0, 0, 0);
	send_tm(&v, URNIC_TMH_EAGER, 0x99, 0, 200);
	fab_wait_cqes(v.f, &v.tmcq, &c, 1);
	CHECK_CQE(c, 1003, URNIC_WC_SUCCESS, URNIC_WC_TM_RECV, 184);
	CHECK_EQ(c.wc_flags, URNIC_WC_TM_MATCH | URNIC_WC_TM_DATA_VALID);
	CHECK_EQ(v.tm.tags[h].state, URNIC_TM_TAG_FREE);
	env_close(&v);
}

static void no_tag_goes_whole_to_a_plain_wqe(void)
{
	struct env v;
	struct urnic_cqe c;

	env_open(&v, 3);
	tm_op(&v, URNIC_TM_OP_ADD, 1, 0x7, 0, 0, 0);
	srq_post(&v, 600, 32768);
	srq_post(&v, 601, 40960);
	send_tm(&v, URNIC_TMH_NO_TAG, 0x7, 0, 64);
	fab_wait_cqes(v.f, &v.tmcq, &c, 1);
	CHECK_CQE(c, 600, URNIC_WC_SUCCESS, URNIC_WC_TM_NO_TAG, 64);
	CHECK_EQ(c.wc_flags, 0);
	CHECK(memcmp(v.ra.p + 32768, v.la.p, 64) == 0);
	/* An EAGER TMH and 4 bytes: tag 0x7 takes the 4 bytes. The same 8 bytes short of
	 * a whole TMH: no tag to match, a plain WQE as NO_TAG. */
	send_tm(&v, URNIC_TMH_EAGER, 0x7, 0, 20);
	fab_wait_cqes(v.f, &v.tmcq, &c, 1);
	CHECK_CQE(c, 1001, URNIC_WC_SUCCESS, URNIC_WC_TM_RECV, 4);
	send_tm(&v, URNIC_TMH_EAGER, 0x7, 0, 8);
	fab_wait_cqes(v.f, &v.tmcq, &c, 1);
	CHECK_CQE(c, 601, URNIC_WC_SUCCESS, URNIC_WC_TM_NO_TAG, 8);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_tm_unexpected), 0);
	env_close(&v);
}

/* Writes an RVH for len bytes of la at src after the TMH at off. */
static void put_rvh(struct env *v, uint32_t off, uint32_t src, uint32_t len)
{
	uint8_t *p = v->la.p + off + URNIC_TMH_BYTES;
	uint64_t va = v->la.mr->iova + src;

	urnic_put_be32(p + URNIC_RVH_OFF_VA, (uint32_t)(va >> 32));
	urnic_put_be32(p + URNIC_RVH_OFF_VA + 4, (uint32_t)va);
	urnic_put_be32(p + URNIC_RVH_OFF_RKEY, v->la.mr->key);
	urnic_put_be32(p + URNIC_RVH_OFF_LEN, len);
}

/* a's rendezvous request for len bytes of la at src, its headers at off. */
static void send_rndv(struct env *v, uint64_t tag, uint32_t off, uint32_t src, uint32_t len)
{
	put_rvh(v, off, src, len);
	send_tm(v, URNIC_TMH_RNDV, tag, off, URNIC_TM_MAX_RNDV_HDR);
}

static void rendezvous_reads_the_senders_buffer(void)
{
	struct env v;
	struct urnic_cqe c[2];
	struct urnic_tmh fin;
	struct urnic_sge sge;

	env_open(&v, 4);
	sge = fab_sge(v.la.mr, 60000, 64);
	CHECK_EQ(fab_post_recv(v.a, 77, &sge, 1), 0); /* for the FIN */
	tm_op(&v, URNIC_TM_OP_ADD, 1, 0x33, 0, 8192, 0);
	send_rndv(&v, 0x33, 0, 1024, 5000);
	fab_wait_cqes(v.f, &v.tmcq, c, 2);
	CHECK_CQE(c[0], 1001, URNIC_WC_SUCCESS, URNIC_WC_TM_RECV, 0);
	CHECK_EQ(c[0].wc_flags, URNIC_WC_TM_MATCH);
	CHECK_EQ(c[0].tm_tag, 0x33);
	CHECK_EQ(c[0].tm_priv, 0xc0ffee);
	CHECK_CQE(c[1], 1001, URNIC_WC_SUCCESS, URNIC_WC_TM_RECV, 5000);
	CHECK_EQ(c[1].wc_flags, URNIC_WC_TM_DATA_VALID);
	CHECK(memcmp(v.ra.p + 8192, v.la.p + 1024, 5000) == 0);
	fab_wait_cqes(v.f, &v.a->rcq, c, 1);
	CHECK_CQE(c[0], 77, URNIC_WC_SUCCESS, URNIC_WC_RECV, URNIC_TMH_BYTES);
	fin = urnic_tmh_get(v.la.p + 60000);
	CHECK_EQ(fin.op, URNIC_TMH_FIN);
	CHECK_EQ(fin.tag, 0x33);
	CHECK_EQ(fin.app_ctx, 0xc0ffee);
	CHECK_EQ(v.tm.posted, 0);
	/* More than the tagged buffer holds: the tag fails, nothing is read, no FIN. */
	tm_op(&v, URNIC_TM_OP_ADD, 2, 0x34, 0, 8192, 0);
	send_rndv(&v, 0x34, 0, 1024, 9000);
	fab_wait_cqes(v.f, &v.tmcq, c, 2);
	CHECK_EQ(c[0].wc_flags, URNIC_WC_TM_MATCH);
	CHECK_CQE(c[1], 1002, URNIC_WC_LOC_LEN_ERR, URNIC_WC_TM_RECV, 9000);
	fabric_settle(v.f);
	CHECK_EQ(fab_poll(&v.a->rcq, c, 1), 0);
	CHECK_EQ(v.tm.posted, 0);
	env_close(&v);
}

static bool is_read_response(const struct fab_pktinfo *pi, void *arg)
{
	(void)arg;
	return pi->opcode >= URNIC_OP_RC_RDMA_READ_RESPONSE_FIRST &&
	       pi->opcode <= URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY;
}

/* The QP fails while its READ is out: the tag completes with FLUSH_ERR on the SRQ's CQ
 * (not on b's send CQ) and its entry goes back to the list. */
static void rendezvous_cut_short_completes_its_tag_in_error(void)
{
	struct env v;
	struct urnic_cqe c;
	struct urnic_qp_attr a = { 0 };

	env_open(&v, 6);
	fab_add_rule(v.f, &(struct fab_rule){ .match = FAB_M_PRED,
					      .pred = is_read_response,
					      .action = FAB_DROP });
	tm_op(&v, URNIC_TM_OP_ADD, 1, 0x35, 0, 0, 0);
	send_rndv(&v, 0x35, 0, 1024, 3000);
	fab_wait_cqes(v.f, &v.tmcq, &c, 1);
	CHECK_EQ(c.wc_flags, URNIC_WC_TM_MATCH);
	CHECK_EQ(v.tm.posted, 1);
	CHECK_EQ(fab_modify(v.b, &a, URNIC_QPS_ERR, URNIC_QP_STATE), 0);
	fab_wait_cqes(v.f, &v.tmcq, &c, 1);
	CHECK_CQE(c, 1001, URNIC_WC_WR_FLUSH_ERR, URNIC_WC_TM_RECV, 3000);
	CHECK_EQ(c.wc_flags, 0);
	CHECK_EQ(v.tm.posted, 0);
	fab_clear_rules(v.f);
	env_close(&v);
}

/* Reset (or destroyed) while its READ is out: no completion (IBTA 10.3.1: RESET empties
 * the queues), but the tag goes back to the list. */
static void rendezvous_of_a_reset_qp_gives_its_tag_back(void)
{
	struct env v;
	struct urnic_cqe c;
	struct urnic_qp_attr a = { 0 };

	env_open(&v, 7);
	fab_add_rule(v.f, &(struct fab_rule){ .match = FAB_M_PRED,
					      .pred = is_read_response,
					      .action = FAB_DROP });
	tm_op(&v, URNIC_TM_OP_ADD, 1, 0x36, 0, 0, 0);
	send_rndv(&v, 0x36, 0, 1024, 3000);
	fab_wait_cqes(v.f, &v.tmcq, &c, 1);
	CHECK_EQ(v.tm.posted, 1);
	CHECK_EQ(fab_modify(v.b, &a, URNIC_QPS_RESET, URNIC_QP_STATE), 0);
	CHECK_EQ(v.tm.posted, 0);
	CHECK_EQ(fab_poll(&v.tmcq, &c, 1), 0);
	fab_clear_rules(v.f);
	env_close(&v);
}

/* A QP that may not READ (max_rd_atomic 0): the application gets the request whole, as
 * unexpected (counter tm_rndv_unexpected), and the tag stays posted. */
static void rendezvous_without_reads_goes_unexpected(void)
{
	struct env v;
	struct fab_conn conn = fab_conn_default();
	struct urnic_cqe c;

	conn.max_rd_atomic = 0;
	env_open_conn(&v, 8, &conn);
	tm_op(&v, URNIC_TM_OP_ADD, 1, 0x38, 0, 0, 0);
	srq_post(&v, 800, 32768);
	send_rndv(&v, 0x38, 0, 1024, 3000);
	fab_wait_cqes(v.f, &v.tmcq, &c, 1);
	CHECK_CQE(c, 800, URNIC_WC_SUCCESS, URNIC_WC_TM_RECV, URNIC_TM_MAX_RNDV_HDR);
	CHECK_EQ(c.wc_flags, 0);
	CHECK(memcmp(v.ra.p + 32768, v.la.p, URNIC_TM_MAX_RNDV_HDR) == 0);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_tm_rndv_unexpected), 1);
	CHECK_EQ(v.tm.posted, 1);
	env_close(&v);
}

static bool sq_full_seen(struct fabric *f, void *arg)
{
	(void)arg;
	return fab_ctr(f, 1, URNIC_CTR_tm_rndv_sq_full) > 0;
}

/* b's send queue (here no larger than the reserve) is full of its application's
 * unacknowledged SENDs: the request is refused RNR (counter tm_rndv_sq_full) and
 * succeeds once they are acknowledged. */
static void rendezvous_waits_for_send_queue_room(void)
{
	struct env v;
	struct urnic_cqe c[URNIC_TM_SQ_RESERVE + 1];
	struct urnic_sge sge;
	struct fab_rule *mute;

	env_open(&v, 9);
	for (uint32_t i = 0; i <= URNIC_TM_SQ_RESERVE; i++) {
		sge = fab_sge(v.la.mr, 40000 + 64 * i, 64);
		CHECK_EQ(fab_post_recv(v.a, 50 + i, &sge, 1), 0);
	}
	mute = fab_add_rule(v.f,
			    &(struct fab_rule){ .match = FAB_M_SRC, .src = 1, .action = FAB_DROP });
	for (uint32_t i = 0; i < URNIC_TM_SQ_RESERVE; i++) {
		struct fab_send_wr wr = { .wr_id = i, .opcode = URNIC_WR_SEND, .num_sge = 1 };

		wr.sge[0] = fab_sge(v.ra.mr, 60000, 10);
		CHECK_EQ(fab_post_send(v.b, &wr), 0);
	}
	tm_op(&v, URNIC_TM_OP_ADD, 1, 0x39, 0, 0, 0);
	put_rvh(&v, 0, 1024, 2000);
	post_tm(&v, URNIC_TMH_RNDV, 0x39, 0, URNIC_TM_MAX_RNDV_HDR);
	CHECK(fabric_run(v.f, sq_full_seen, NULL, 100000));
	CHECK_EQ(fab_poll(&v.tmcq, c, 1), 0);
	CHECK_EQ(v.tm.posted, 1);
	mute->action = FAB_PASS;
	fab_wait_cqes(v.f, &v.tmcq, c, 2);
	CHECK_EQ(c[0].wc_flags, URNIC_WC_TM_MATCH);
	CHECK_CQE(c[1], 1001, URNIC_WC_SUCCESS, URNIC_WC_TM_RECV, 2000);
	CHECK(memcmp(v.ra.p, v.la.p + 1024, 2000) == 0);
	fab_wait_cqes(v.f, &v.a->scq, c, 1);
	fab_wait_cqes(v.f, &v.a->rcq, c, URNIC_TM_SQ_RESERVE + 1); /* b's sends, the FIN */
	CHECK_EQ(c[URNIC_TM_SQ_RESERVE].byte_len, URNIC_TMH_BYTES);
	fab_clear_rules(v.f);
	env_close(&v);
}

static void removed_tag_matches_nothing(void)
{
	struct env v;
	struct urnic_tm_op op = { .wr_id = 9, .opcode = URNIC_TM_OP_DEL, .handle = 8 };
	struct urnic_cqe c;
	uint32_t h;

	env_open(&v, 5);
	h = tm_op(&v, URNIC_TM_OP_ADD, 1, 0x44, 0, 0, 0);
	tm_op(&v, URNIC_TM_OP_DEL, 2, 0, h, 0, 0);
	srq_post(&v, 700, 32768);
	send_tm(&v, URNIC_TMH_EAGER, 0x44, 0, 100);
	fab_wait_cqes(v.f, &v.tmcq, &c, 1);
	CHECK_CQE(c, 700, URNIC_WC_SUCCESS, URNIC_WC_TM_RECV, 100);
	CHECK_EQ(c.wc_flags, 0);
	/* Gone already: IBV_WC_TM_ERR, reported although not signaled. */
	op.handle = h;
	CHECK_EQ(urnic_engine_tm_op(fab_engine(v.f, 1), v.srq, &op), 0);
	CHECK_EQ(fab_poll(&v.tmcq, &c, 1), 1);
	CHECK_CQE(c, 9, URNIC_WC_TM_ERR, URNIC_WC_TM_DEL, 0);
	/* No such handle, an unknown opcode, two SGEs, a full list: refused, no completion. */
	op.handle = 8;
	CHECK_EQ(urnic_engine_tm_op(fab_engine(v.f, 1), v.srq, &op), -EINVAL);
	op.opcode = 3;
	CHECK_EQ(urnic_engine_tm_op(fab_engine(v.f, 1), v.srq, &op), -EINVAL);
	op.opcode = URNIC_TM_OP_ADD;
	op.wqe.num_sge = 2;
	CHECK_EQ(urnic_engine_tm_op(fab_engine(v.f, 1), v.srq, &op), -EINVAL);
	op.wqe.num_sge = 1;
	for (int i = 0; i < 8; i++)
		CHECK_EQ(urnic_engine_tm_op(fab_engine(v.f, 1), v.srq, &op), 0);
	CHECK_EQ(urnic_engine_tm_op(fab_engine(v.f, 1), v.srq, &op), -ENOMEM);
	CHECK_EQ(fab_poll(&v.tmcq, &c, 1), 0);
	env_close(&v);
}

int main(void)
{
	RUN(expected_eager_lands_without_its_tmh);
	RUN(unexpected_goes_whole_to_a_plain_wqe_until_sync);
	RUN(no_tag_goes_whole_to_a_plain_wqe);
	RUN(rendezvous_reads_the_senders_buffer);
	RUN(rendezvous_cut_short_completes_its_tag_in_error);
	RUN(rendezvous_of_a_reset_qp_gives_its_tag_back);
	RUN(rendezvous_without_reads_goes_unexpected);
	RUN(rendezvous_waits_for_send_queue_room);
	RUN(removed_tag_matches_nothing);
	return 0;
}
