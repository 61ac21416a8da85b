/* SPDX-License-Identifier: MIT */
/*
 * tm.c - tag matching on the receive side (rdma-core Documentation/tag_matching.md,
 * ibv_post_srq_ops(3)). A SEND's first packet carries a TMH: NO_TAG (and FIN, and a
 * payload too short for a TMH) goes whole to a plain SRQ WQE as IBV_WC_TM_NO_TAG; EAGER
 * and RNDV look for the earliest posted tag that accepts theirs. Without one the message
 * is unexpected: whole, TMH included, to a plain WQE, IBV_WC_TM_RECV without
 * IBV_WC_TM_MATCH, and the SRQ's unexpected count goes up (tags posted from then on wait
 * for the application's IBV_OPS_TM_SYNC). A matched EAGER message goes to the tag's
 * buffer without its TMH (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID). A matched RNDV
 * completes IBV_WC_TM_MATCH at once; the QP's own requester then READs the RVH's buffer
 * into the tag's, and a FIN (a TMH, fenced behind the READ) tells the sender its buffer
 * is free; the READ's completion is the tag's IBV_WC_TM_DATA_VALID one. Reusing the RC
 * requester gives the READ its retries, ordering and error handling for nothing.
 */
#include <errno.h>
#include <string.h>

#include "engine/roce/tm.h"
#include "engine/roce/msg.h"
#include "wire/tmh.h"

/* Send queue slots a QP on a tag-matching SRQ has beyond what its application asked
 * for (src/verbs/qp.c): a rendezvous takes two, its READ and its FIN. */
_Static_assert(URNIC_TM_SQ_RESERVE >= 2, "one rendezvous at a time at least");

/* The send queue has room for a rendezvous's two WQEs. The application cannot take it
 * before sq_append: its posts stop at max_wr, URNIC_TM_SQ_RESERVE below the depth. */
static bool sq_room(const struct urnic_qp *qp)
{
	uint32_t prod = atomic_load_explicit(&qp->sq.prod, memory_order_acquire);
	uint32_t cons = atomic_load_explicit(&qp->sq.cons, memory_order_relaxed);

	return qp->sq.depth - (prod - cons) >= 2;
}

/* Appends a WQE to the QP's own send queue, as ibv_post_send would (under its lock:
 * the application may be posting at the same time). */
static void sq_append(struct urnic_qp *qp, const struct urnic_send_wqe *a,
		      const struct urnic_send_wqe *b)
{
	struct urnic_wq *sq = &qp->sq;
	uint32_t prod;

	pthread_spin_lock(&sq->lock);
	prod = atomic_load_explicit(&sq->prod, memory_order_relaxed);
	memcpy(urnic_wq_slot(sq, prod), a, sizeof(*a));
	memcpy(urnic_wq_slot(sq, prod + 1), b, sizeof(*b));
	atomic_store_explicit(&sq->prod, prod + 2, memory_order_release);
	pthread_spin_unlock(&sq->lock);
}

static void push_tm(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_cqe *cqe)
{
	cqe->qp_num = qp->qpn;
	urnic_complete(e, qp, qp->srq->cq, cqe, false);
}

/* A matched rendezvous (its RVH read): the tag's first completion, then the READ into
 * its buffer and the FIN behind it. */
static void rndv_start(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_tmh *h,
		       const struct urnic_rvh *rvh, uint32_t handle)
{
	const struct urnic_tm_tag *t = &qp->srq->tm->tags[handle];
	struct urnic_cqe cqe = {
		.wr_id = t->wqe.wr_id,
		.opcode = URNIC_WC_TM_RECV,
		.wc_flags = URNIC_WC_TM_MATCH,
		.tm_tag = h->tag,
		.tm_priv = h->app_ctx,
	};
	struct urnic_send_wqe rd = {
		.wr_id = t->wqe.wr_id,
		.opcode = URNIC_WR_RDMA_READ,
		.rkey = rvh->rkey,
		.remote_addr = rvh->va,
		.length = rvh->len,
		.num_sge = t->wqe.num_sge,
		.role = URNIC_SWQE_TM_READ,
		.tm_handle = handle,
	};
	struct urnic_send_wqe fin = {
		.opcode = URNIC_WR_SEND,
		/* IBTA 10.8.3.3: a fenced WR waits for the READs before it to complete, so
		 * the sender hears FIN only once its data is here. */
		.flags = URNIC_SEND_INLINE | URNIC_SEND_FENCE,
		.length = URNIC_TMH_BYTES,
		.role = URNIC_SWQE_TM_FIN,
	};
	struct urnic_tmh fh = { .op = URNIC_TMH_FIN, .app_ctx = h->app_ctx, .tag = h->tag };

	push_tm(e, qp, &cqe);
	if (rvh->len > t->wqe.length) {
		/* The sender's data does not fit the tagged buffer: the tag completes in
		 * error and nothing is read; the sender gets no FIN. */
		cqe.wc_flags = 0;
		cqe.status = URNIC_WC_LOC_LEN_ERR;
		cqe.byte_len = rvh->len;
		urnic_tm_list_release(qp->srq->tm, handle);
		push_tm(e, qp, &cqe);
		return;
	}
	memcpy(rd.sge, t->wqe.sge, t->wqe.num_sge * sizeof(rd.sge[0]));
	urnic_tmh_put(fin.inline_data, &fh);
	sq_append(qp, &rd, &fin);
	urnic_engine_qp_wake(e, qp);
}

/* A message for the SRQ's plain WQEs. */
static bool take_plain(struct urnic_engine *e, struct urnic_qp *qp, uint8_t kind,
		       const struct urnic_tmh *h)
{
	if (!urnic_roce_take_rwqe(e, qp))
		return false;
	qp->resp.tm = (struct urnic_tm_msg){ .kind = kind, .tag = h->tag, .app_ctx = h->app_ctx };
	if (kind == URNIC_TM_MSG_UNEXPECTED) {
		urnic_tm_list_unexpected(qp->srq->tm);
		urnic_count(e, URNIC_CTR_tm_unexpected);
	}
	return true;
}

bool urnic_roce_tm_take(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt)
{
	struct urnic_resp *r = &qp->resp;
	struct urnic_tm_list *l = qp->srq->tm;
	uint32_t flags = urnic_opcode_info(pkt->bth.opcode)->flags;
	struct urnic_tmh h = { .op = URNIC_TMH_NO_TAG };
	struct urnic_rvh rvh = { 0 };
	bool rndv;
	int handle;

	if (!(flags & URNIC_OPF_FIRST)) /* the message's first packet chose */
		return r->tm.kind == URNIC_TM_MSG_RNDV || urnic_roce_take_rwqe(e, qp);
	if (pkt->payload_bytes >= URNIC_TMH_BYTES)
		h = urnic_tmh_get(pkt->payload);
	if (h.op != URNIC_TMH_EAGER && h.op != URNIC_TMH_RNDV)
		return take_plain(e, qp, URNIC_TM_MSG_NO_TAG, &h);
	rndv = h.op == URNIC_TMH_RNDV;
	handle = urnic_tm_list_match(l, h.tag);
	if (handle >= 0 && rndv &&
	    (pkt->payload_bytes < URNIC_TMH_BYTES + URNIC_RVH_BYTES || !qp->attr.max_rd_atomic ||
	     qp->state != URNIC_QPS_RTS)) {
		/* No RVH to read from, or a QP that may not READ (max_rd_atomic 0, or still
		 * in RTR: it sends nothing yet): the application handles it, as a message no
		 * tag matched. */
		urnic_count(e, URNIC_CTR_tm_rndv_unexpected);
		handle = -ENOENT;
	}
	if (handle < 0)
		return take_plain(e, qp, URNIC_TM_MSG_UNEXPECTED, &h);
	if (rndv && !sq_room(qp)) {
		urnic_count(e, URNIC_CTR_tm_rndv_sq_full);
		return false;
	}
	r->tm = (struct urnic_tm_msg){
		.kind = rndv ? URNIC_TM_MSG_RNDV : URNIC_TM_MSG_EAGER,
		.handle = (uint32_t)handle,
		.tag = h.tag,
		.app_ctx = h.app_ctx,
	};
	urnic_tm_list_consume(l, (uint32_t)handle, rndv);
	if (rndv) {
		rvh = urnic_rvh_get(pkt->payload + URNIC_TMH_BYTES);
		rndv_start(e, qp, &h, &rvh, (uint32_t)handle);
		return true;
	}
	r->srq_wqe = l->tags[handle].wqe;
	r->have_rwqe = true;
	r->rwqe_off = 0;
	return true;
}

void urnic_roce_tm_swqe_done(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_send_wqe *w,
			     uint8_t status)
{
	struct urnic_cqe cqe = {
		.wr_id = w->wr_id,
		.status = status,
		.opcode = URNIC_WC_TM_RECV,
		.wc_flags = status == URNIC_WC_SUCCESS ? URNIC_WC_TM_DATA_VALID : 0,
		.byte_len = w->length,
		.qp_num = qp->qpn,
	};
	enum urnic_swqe_role role = (enum urnic_swqe_role)w->role;

	w->role = URNIC_SWQE_APP; /* the slot goes back to the application's posts */
	if (role != URNIC_SWQE_TM_READ || !urnic_roce_tm_qp(qp))
		return;
	urnic_tm_list_release(qp->srq->tm, w->tm_handle);
	if (qp->state == URNIC_QPS_ERR) {
		/* Flushing: the CQ may be full already (urnic_rc_flush counts such). */
		if (urnic_cq_has_room(qp->srq->cq))
			urnic_cq_push(qp->srq->cq, &cqe, false);
		else
			urnic_count(e, URNIC_CTR_cq_overflow);
		return;
	}
	urnic_complete(e, qp, qp->srq->cq, &cqe, false);
}
