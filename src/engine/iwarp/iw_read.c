/* SPDX-License-Identifier: MIT */
/*
 * iw_read.c - RDMA Read on iWARP (RFC 5040 4.4, 5.2.1): the requester's Read Request on
 * untagged queue 1, its Read Responses matched to the oldest READ outstanding and placed
 * into its SGEs (siw_rresp_check_ntoh: the sink STag, TO and length the request named);
 * the responder's Read Requests checked (MSN, IRD, source STag with remote read, bounds)
 * when they arrive, queued in order and answered as tagged Read Responses to the sink
 * STag, the source resolved again for every FPDU. Refusals get siw's Terminates.
 */
#include <errno.h>
#include <string.h>

#include "engine/iwarp/iw.h"
#include "engine/roce/rc.h"
#include "mem/odp.h"
#include "mem/sge.h"

/* The sink of a READ: siw names its first SGE (sink STag = L_Key, TO = address) and
 * places the response by offset from there; the SGE list maps the offset. */
static uint32_t sink_stag(const struct urnic_send_wqe *w)
{
	return w->num_sge ? w->sge[0].lkey : 0;
}

static uint64_t sink_to(const struct urnic_send_wqe *w)
{
	return w->num_sge ? w->sge[0].addr : 0;
}

int urnic_iw_send_rreq(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_send_wqe *w)
{
	struct urnic_iw_qp *iw = qp->iw;
	struct urnic_ddp_hdr h = {
		.last = true,
		.opcode = URNIC_RDMAP_READ_REQ,
		.qn = URNIC_DDP_QN_READ_REQ,
		.msn = iw->tx_msn[URNIC_DDP_QN_READ_REQ],
		.rreq = {
			.sink_stag = sink_stag(w),
			.sink_to = sink_to(w),
			.size = w->length,
			.src_stag = w->rkey,
			.src_to = w->remote_addr,
		},
	};

	if (urnic_iw_frame(e, qp, &h, 0, NULL, 0, NULL) <= 0)
		return -ENOBUFS;
	iw->tx_msn[URNIC_DDP_QN_READ_REQ]++;
	iw->orq[iw_slot(iw->orq_head + iw->orq_count, URNIC_MAX_RD_ATOMIC)] = qp->req.idx;
	iw->orq_count++;
	return 0;
}

/* ---- responder ---- */

/* The rule a failed source STag broke (siw_rdmap_error), with the request's header; siw
 * finds it making the response and raises IBV_EVENT_QP_REQ_ERR (siw_qp_sq_process). */
static void rreq_refused(struct urnic_engine *e, struct urnic_qp *qp, enum urnic_mr_check c)
{
	const enum urnic_qp_event req = URNIC_QP_EV_REQ_ERR;

	switch (c) {
	case URNIC_MR_OUT_OF_RANGE:
		urnic_iw_fail_event(e, qp, URNIC_IW_TERM_RDMAP_BASE_BOUNDS,
				    URNIC_CTR_iw_refused_read_bounds, 0, req);
		break;
	case URNIC_MR_BAD_PD:
	case URNIC_MR_BAD_QP:
		urnic_iw_fail_event(e, qp, URNIC_IW_TERM_RDMAP_STAG_NOT_ASSOC,
				    URNIC_CTR_iw_refused_read_stag, 0, req);
		break;
	case URNIC_MR_NO_RIGHT:
		urnic_iw_fail_event(e, qp, URNIC_IW_TERM_RDMAP_ACCESS_RIGHTS,
				    URNIC_CTR_iw_refused_read_rights, 0, req);
		break;
	default:
		urnic_iw_fail_event(e, qp, URNIC_IW_TERM_RDMAP_INVALID_STAG,
				    URNIC_CTR_iw_refused_read_stag, 0, req);
		break;
	}
}

bool urnic_iw_rx_rreq_head(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_iw_qp *iw = qp->iw;
	const struct urnic_ddp_hdr *h = &iw->rx_stream.hdr;
	const struct urnic_rdmap_read_req *rr = &h->rreq;
	struct urnic_mr_at at = { 0 };
	enum urnic_mr_check c = URNIC_MR_OK;

	if (iw->rx.send_mid) { /* siw: one untagged message at a time */
		urnic_iw_fail(e, qp, URNIC_IW_TERM_RDMAP_OPCODE, URNIC_CTR_iw_refused_intersect, 0);
		return false;
	}
	if (h->msn != iw->rx.msn[URNIC_DDP_QN_READ_REQ]) {
		urnic_iw_fail(e, qp, URNIC_IW_TERM_DDP_U_MSN_RANGE, URNIC_CTR_iw_refused_rreq_msn,
			      0);
		return false;
	}
	/* RFC 5040 6.4 / siw_init_rresp: beyond IRD, the stream is lost. */
	if (iw->irq_count >= iw->ird) {
		urnic_iw_fail(e, qp, URNIC_IW_TERM_RDMAP_CATASTROPHIC_STREAM,
			      URNIC_CTR_iw_refused_ird, 0);
		return false;
	}
	if (rr->src_to + rr->size < rr->src_to) {
		urnic_iw_fail(e, qp, URNIC_IW_TERM_RDMAP_TO_WRAP, URNIC_CTR_iw_refused_read_bounds,
			      0);
		return false;
	}
	if (rr->size > e->cfg.max_msg_bytes)
		c = URNIC_MR_OUT_OF_RANGE;
	else if (rr->size)
		c = urnic_mr_resolve_remote(&e->mrs, qp->pd, qp->qpn, rr->src_stag, rr->src_to,
					    rr->size, URNIC_ACCESS_REMOTE_READ, &at);
	if (c != URNIC_MR_OK) {
		rreq_refused(e, qp, c);
		return false;
	}
	iw->rx.rreq_gen = at.gen;
	iw->rx.seg = URNIC_IW_SEG_RREQ;
	return true;
}

/* Queued once its FPDU is whole (and its CRC checked). */
void urnic_iw_rx_rreq_end(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_iw_qp *iw = qp->iw;
	const struct urnic_rdmap_read_req *rr = &iw->rx_stream.hdr.rreq;
	struct urnic_iw_rresp *q =
		&iw->irq[iw_slot(iw->irq_head + iw->irq_count, URNIC_MAX_RD_ATOMIC)];

	*q = (struct urnic_iw_rresp){
		.sink_stag = rr->sink_stag,
		.sink_to = rr->sink_to,
		.src_stag = rr->src_stag,
		.src_to = rr->src_to,
		.len = rr->size,
		.gen = iw->rx.rreq_gen,
	};
	memcpy(q->hdr, iw->rx_stream.hdr_buf, sizeof(q->hdr));
	iw->rx.msn[URNIC_DDP_QN_READ_REQ]++;
	iw->irq_count++;
	qp->resp.replying = iw->irq_count; /* the pass keeps the QP until they are sent */
	urnic_engine_qp_wake(e, qp);
}

struct rresp_src {
	uint8_t *host;
	bool odp;
	uint32_t base; /* the response offset host points at */
};

static int fill_rresp(struct urnic_engine *e, struct urnic_qp *qp, uint8_t *dst, uint32_t off,
		      uint32_t len, const void *arg)
{
	const struct rresp_src *s = arg;

	(void)qp;
	if (!s->odp) {
		memcpy(dst, s->host + (off - s->base), len);
		return 0;
	}
	if (urnic_odp_read(e->mrs.odp, dst, s->host + (off - s->base), len)) {
		urnic_count(e, URNIC_CTR_odp_fault_remote);
		return -EFAULT;
	}
	return 0;
}

/* The next FPDU of the oldest response: 1 framed, 0 no room, -1 failed (Terminate). */
static int rresp_fpdu(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_iw_rresp *rr,
		      bool *last)
{
	struct urnic_iw_qp *iw = qp->iw;
	uint32_t n = (uint32_t)urnic_fpdu_tx_fit(iw->mulpdu, URNIC_DDP_TAGGED_BYTES,
						 rr->len - rr->sent, last);
	struct urnic_ddp_hdr h = {
		.tagged = true,
		.last = *last,
		.opcode = URNIC_RDMAP_READ_RESP,
		.stag = rr->sink_stag,
		.to = rr->sink_to + rr->sent,
	};
	struct urnic_mr_at at = { 0 };
	struct rresp_src src = { 0 };
	ssize_t r;

	/* The source is resolved for every FPDU: a region deregistered or a window
	 * invalidated since the request stops the response (RFC 5040 5.2.1). */
	if (n &&
	    (urnic_mr_resolve_remote(&e->mrs, qp->pd, qp->qpn, rr->src_stag, rr->src_to + rr->sent,
				     n, URNIC_ACCESS_REMOTE_READ, &at) != URNIC_MR_OK ||
	     at.gen != rr->gen)) {
		urnic_iw_fail_rreq(e, qp, rr, URNIC_IW_TERM_RDMAP_INVALID_STAG,
				   URNIC_CTR_iw_read_key_revoked);
		return -1;
	}
	src = (struct rresp_src){ at.host, at.odp, rr->sent };
	r = urnic_iw_frame(e, qp, &h, n, fill_rresp, rr->sent, &src);
	if (r < 0) {
		urnic_iw_fail_rreq(e, qp, rr, URNIC_IW_TERM_RDMAP_LOCAL_CATASTROPHIC,
				   URNIC_CTR_iw_refused_local);
		return -1;
	}
	if (r == 0)
		return 0;
	rr->sent += n;
	urnic_count(e, URNIC_CTR_read_resp_sent);
	return 1;
}

bool urnic_iw_rresp_progress(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_iw_qp *iw = qp->iw;
	bool did = false;

	while (iw->irq_count && qp->state == URNIC_QPS_RTS && !iw->term_sent) {
		struct urnic_iw_rresp *rr = &iw->irq[iw->irq_head];
		bool last = false;
		int r;

		while ((r = rresp_fpdu(e, qp, rr, &last)) == 1 && !last)
			did = true;
		if (r <= 0) {
			iw->rresp_mid = r == 0 && rr->sent != 0;
			return did || r < 0;
		}
		did = true;
		iw->rresp_mid = false;
		iw->irq_head = iw_slot(iw->irq_head + 1, URNIC_MAX_RD_ATOMIC);
		iw->irq_count--;
		qp->resp.replying = iw->irq_count;
	}
	return did;
}

/* ---- requester ---- */

static struct urnic_send_wqe *oldest_read(struct urnic_qp *qp)
{
	return rc_swqe(qp, qp->iw->orq[qp->iw->orq_head]);
}

bool urnic_iw_rx_rresp_head(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_iw_qp *iw = qp->iw;
	const struct urnic_ddp_hdr *h = &iw->rx_stream.hdr;
	uint32_t len = (uint32_t)iw->rx_stream.payload_len;
	struct urnic_frag f[URNIC_MAX_SGE];
	const struct urnic_send_wqe *w;

	if (iw->rx.tag_mid && h->opcode != iw->rx.tag_op) {
		urnic_iw_fail(e, qp, URNIC_IW_TERM_RDMAP_OPCODE, URNIC_CTR_iw_refused_intersect, 0);
		return false;
	}
	if (!iw->orq_count) { /* siw_proc_rresp: "ORQ empty" */
		urnic_iw_fail(e, qp, URNIC_IW_TERM_DDP_LOCAL_CATASTROPHIC,
			      URNIC_CTR_iw_refused_rresp, 0);
		return false;
	}
	w = oldest_read(qp);
	if (h->stag != sink_stag(w)) {
		urnic_iw_fail(e, qp, URNIC_IW_TERM_DDP_T_INVALID_STAG, URNIC_CTR_iw_refused_rresp,
			      URNIC_WC_GENERAL_ERR);
		return false;
	}
	/* siw: "base or bounds" when the STag is right and offset or length are not. */
	if (h->to != sink_to(w) + iw->rresp_got || len > w->length - iw->rresp_got ||
	    (h->last && iw->rresp_got + len != w->length)) {
		urnic_iw_fail(e, qp, URNIC_IW_TERM_DDP_T_BASE_BOUNDS, URNIC_CTR_iw_refused_rresp,
			      URNIC_WC_GENERAL_ERR);
		return false;
	}
	if (len && urnic_sge_gather(&e->mrs, qp->pd, w->sge, w->num_sge, iw->rresp_got, len,
				    URNIC_ACCESS_LOCAL_WRITE, f, URNIC_MAX_SGE, NULL, 0) < 0) {
		urnic_iw_fail(e, qp, URNIC_IW_TERM_DDP_T_INVALID_STAG, URNIC_CTR_iw_refused_local,
			      URNIC_WC_LOC_PROT_ERR);
		return false;
	}
	iw->rx.tag_mid = !h->last;
	iw->rx.tag_op = h->opcode;
	iw->rx.seg = URNIC_IW_SEG_RRESP;
	return true;
}

bool urnic_iw_rx_rresp_piece(struct urnic_engine *e, struct urnic_qp *qp, const uint8_t *p,
			     size_t n, size_t off)
{
	struct urnic_iw_qp *iw = qp->iw;
	const struct urnic_send_wqe *w = oldest_read(qp);

	(void)off;
	if (urnic_sge_scatter(&e->mrs, qp->pd, w->sge, w->num_sge, iw->rresp_got, p, (uint32_t)n)) {
		urnic_iw_fail(e, qp, URNIC_IW_TERM_DDP_LOCAL_CATASTROPHIC,
			      URNIC_CTR_iw_refused_local, URNIC_WC_LOC_PROT_ERR);
		return false;
	}
	iw->rresp_got += (uint32_t)n;
	return true;
}

/* The last Read Response completes the READ (in post order) and frees its ORD slot. */
void urnic_iw_rx_rresp_end(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_iw_qp *iw = qp->iw;

	if (!iw->rx_stream.hdr.last)
		return;
	oldest_read(qp)->done = true;
	iw->orq_head = iw_slot(iw->orq_head + 1, URNIC_MAX_RD_ATOMIC);
	iw->orq_count--;
	iw->rresp_got = 0;
	urnic_iw_complete_sq(e, qp);
}
