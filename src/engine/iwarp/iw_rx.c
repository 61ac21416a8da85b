/* SPDX-License-Identifier: MIT */
/*
 * iw_rx.c - an iWARP QP's receive stream: the FPDUs fpdu_rx cuts from what TCP
 * delivered, each header checked before any of its bytes is placed (validate, then
 * mutate), and the untagged Sends (RFC 5040 5.3, RFC 5041 5.3: the next receive WQE, the
 * expected MSN, MO and length within the WQE) and tagged Writes (RFC 5040 5.2, RFC 5041
 * 5.2: the STag's region, rights and bounds, resolved again for every piece placed) it
 * carries. Read Requests and Responses are iw_read.c's, Terminates iw_term.c's. Every
 * refusal is counted and answered by the Terminate siw sends for it.
 */
#include <errno.h>
#include <string.h>

#include "engine/iwarp/iw.h"
#include "engine/roce/msg.h"
#include "mem/mw.h"
#include "mem/odp.h"

static bool is_send(uint8_t op)
{
	return op == URNIC_RDMAP_SEND || op == URNIC_RDMAP_SEND_INV || op == URNIC_RDMAP_SEND_SE ||
	       op == URNIC_RDMAP_SEND_SE_INV;
}

bool urnic_iw_rx_send_head(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_iw_qp *iw = qp->iw;
	const struct urnic_ddp_hdr *h = &iw->rx_stream.hdr;
	size_t len = iw->rx_stream.payload_len;
	const struct urnic_recv_wqe *rw;

	if (iw->rx.send_mid && h->opcode != iw->rx.send_op) {
		urnic_iw_fail(e, qp, URNIC_IW_TERM_RDMAP_OPCODE, URNIC_CTR_iw_refused_intersect,
			      URNIC_WC_GENERAL_ERR);
		return false;
	}
	/* siw_proc_send: the WQE first, then MSN, MO and length (siw_send_check_ntoh); a
	 * WQE taken for a refused segment completes in error (siw_rdmap_complete). */
	if (!urnic_roce_take_rwqe(e, qp)) {
		urnic_iw_fail(e, qp, URNIC_IW_TERM_DDP_U_MSN_NO_BUFFER,
			      URNIC_CTR_iw_refused_no_rwqe, 0);
		return false;
	}
	rw = urnic_roce_rwqe(qp);
	if (h->msn != iw->rx.msn[URNIC_DDP_QN_SEND]) {
		urnic_iw_fail(e, qp, URNIC_IW_TERM_DDP_U_MSN_RANGE, URNIC_CTR_iw_refused_msn,
			      URNIC_WC_GENERAL_ERR);
		return false;
	}
	if (h->mo != qp->resp.rwqe_off) {
		urnic_iw_fail(e, qp, URNIC_IW_TERM_DDP_U_INVALID_MO, URNIC_CTR_iw_refused_mo,
			      URNIC_WC_GENERAL_ERR);
		return false;
	}
	/* RFC 5041 7.2 code 5 (siw sends code 2, no buffer, and LOC_LEN_ERR). */
	if (len > rw->length - qp->resp.rwqe_off) {
		urnic_iw_fail(e, qp, URNIC_IW_TERM_DDP_U_TOO_LONG, URNIC_CTR_iw_refused_too_long,
			      URNIC_WC_LOC_LEN_ERR);
		return false;
	}
	iw->rx.send_mid = !h->last;
	iw->rx.send_op = h->opcode;
	iw->rx.seg = URNIC_IW_SEG_SEND;
	return true;
}

/* The rule a failed STag lookup broke, for a tagged segment (siw_tagged_error), and the
 * event siw_proc_write raises: IBV_EVENT_QP_ACCESS_ERR when the STag names a region that
 * refuses the access (siw_check_mem), none when it names none. */
static void tagged_refused(struct urnic_engine *e, struct urnic_qp *qp, enum urnic_mr_check c)
{
	const enum urnic_qp_event acc = URNIC_QP_EV_ACCESS_ERR;

	switch (c) {
	case URNIC_MR_OUT_OF_RANGE:
		urnic_iw_fail_event(e, qp, URNIC_IW_TERM_DDP_T_BASE_BOUNDS,
				    URNIC_CTR_iw_refused_bounds, 0, acc);
		break;
	case URNIC_MR_BAD_PD:
	case URNIC_MR_BAD_QP:
		urnic_iw_fail_event(e, qp, URNIC_IW_TERM_DDP_T_STAG_NOT_ASSOC,
				    URNIC_CTR_iw_refused_stag, 0, acc);
		break;
	case URNIC_MR_NO_RIGHT:
		/* RFC 5041 has no code for rights: siw sends invalid STag. */
		urnic_iw_fail_event(e, qp, URNIC_IW_TERM_DDP_T_INVALID_STAG,
				    URNIC_CTR_iw_refused_rights, 0, acc);
		break;
	default:
		urnic_iw_fail_event(e, qp, URNIC_IW_TERM_DDP_T_INVALID_STAG,
				    URNIC_CTR_iw_refused_stag, 0, URNIC_QP_EV_NONE);
		break;
	}
}

/* A later segment of a Write: same STag, the TO where the last one ended
 * (siw_write_check_ntoh). */
static bool write_follows(struct urnic_engine *e, struct urnic_qp *qp,
			  const struct urnic_ddp_hdr *h)
{
	struct urnic_iw_rx *rx = &qp->iw->rx;

	if (!rx->tag_mid)
		return true;
	if (h->stag != rx->tag_stag) {
		urnic_iw_fail(e, qp, URNIC_IW_TERM_DDP_T_INVALID_STAG, URNIC_CTR_iw_refused_stag,
			      0);
		return false;
	}
	if (h->to != rx->tag_to) {
		urnic_iw_fail(e, qp, URNIC_IW_TERM_DDP_T_BASE_BOUNDS, URNIC_CTR_iw_refused_bounds,
			      0);
		return false;
	}
	return true;
}

bool urnic_iw_rx_write_head(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_iw_qp *iw = qp->iw;
	const struct urnic_ddp_hdr *h = &iw->rx_stream.hdr;
	uint32_t len = (uint32_t)iw->rx_stream.payload_len;
	struct urnic_mr_at at = { 0 };
	enum urnic_mr_check c;

	if (iw->rx.tag_mid && h->opcode != iw->rx.tag_op) {
		urnic_iw_fail(e, qp, URNIC_IW_TERM_RDMAP_OPCODE, URNIC_CTR_iw_refused_intersect, 0);
		return false;
	}
	if (!write_follows(e, qp, h))
		return false;
	if (h->to + len < h->to) {
		urnic_iw_fail(e, qp, URNIC_IW_TERM_DDP_T_TO_WRAP, URNIC_CTR_iw_refused_bounds, 0);
		return false;
	}
	/* RFC 5040 5.2 / RFC 5041 5.2: the whole segment within the STag's region, with
	 * remote write, before a byte of it is placed; a zero-length segment touches no
	 * memory and checks no STag (siw_proc_write). */
	if (len) {
		c = urnic_mr_resolve_remote(&e->mrs, qp->pd, qp->qpn, h->stag, h->to, len,
					    URNIC_ACCESS_REMOTE_WRITE, &at);
		if (c != URNIC_MR_OK) {
			tagged_refused(e, qp, c);
			return false;
		}
		if (iw->rx.tag_mid && iw->rx.tag_gen_set && at.gen != iw->rx.tag_gen) {
			urnic_iw_fail(e, qp, URNIC_IW_TERM_DDP_T_INVALID_STAG,
				      URNIC_CTR_iw_write_key_revoked, 0);
			return false;
		}
		iw->rx.tag_gen = at.gen;
		iw->rx.tag_gen_set = true;
	}
	iw->rx.seg_to = h->to;
	iw->rx.tag_stag = h->stag;
	iw->rx.tag_to = h->to + len;
	iw->rx.tag_mid = !h->last;
	iw->rx.tag_op = h->opcode;
	iw->rx.tag_gen_set &= !h->last;
	iw->rx.seg = URNIC_IW_SEG_WRITE;
	return true;
}

/* A Write piece: the STag resolved again for exactly these bytes, still under the grant
 * the segment's header was checked against (deregistration takes effect at once). */
static bool write_piece(struct urnic_engine *e, struct urnic_qp *qp, const uint8_t *p, size_t n,
			size_t off)
{
	struct urnic_iw_rx *rx = &qp->iw->rx;
	uint64_t to = rx->seg_to + off;
	struct urnic_mr_at at = { 0 };

	if (urnic_mr_resolve_remote(&e->mrs, qp->pd, qp->qpn, rx->tag_stag, to, n,
				    URNIC_ACCESS_REMOTE_WRITE, &at) != URNIC_MR_OK ||
	    at.gen != rx->tag_gen) {
		urnic_iw_fail(e, qp, URNIC_IW_TERM_DDP_T_INVALID_STAG,
			      URNIC_CTR_iw_write_key_revoked, 0);
		return false;
	}
	if (!at.odp) {
		memcpy(at.host, p, n);
	} else if (urnic_odp_write(e->mrs.odp, at.host, p, n)) {
		urnic_count(e, URNIC_CTR_odp_fault_remote);
		urnic_iw_fail(e, qp, URNIC_IW_TERM_DDP_LOCAL_CATASTROPHIC,
			      URNIC_CTR_iw_refused_local, 0);
		return false;
	}
	return true;
}

bool urnic_iw_rx_piece(struct urnic_engine *e, struct urnic_qp *qp, const uint8_t *p, size_t n,
		       size_t off)
{
	struct urnic_iw_qp *iw = qp->iw;

	switch (iw->rx.seg) {
	case URNIC_IW_SEG_SEND:
		if (urnic_roce_place(e, qp, p, (uint32_t)n)) {
			/* The WQE's SGEs no longer resolve (siw: DDP catastrophic). */
			urnic_iw_fail(e, qp, URNIC_IW_TERM_DDP_LOCAL_CATASTROPHIC,
				      URNIC_CTR_iw_refused_local, URNIC_WC_GENERAL_ERR);
			return false;
		}
		return true;
	case URNIC_IW_SEG_WRITE:
		return write_piece(e, qp, p, n, off);
	case URNIC_IW_SEG_RRESP:
		return urnic_iw_rx_rresp_piece(e, qp, p, n, off);
	case URNIC_IW_SEG_TERM:
		if (off < sizeof(iw->rx.term)) {
			size_t k = sizeof(iw->rx.term) - off < n ? sizeof(iw->rx.term) - off : n;

			memcpy(iw->rx.term + off, p, k);
		}
		iw->rx.term_len = off + n;
		return true;
	default:
		return true;
	}
}

/* RFC 5040 5.3: a Send completes at its last segment; with Invalidate, the STag is
 * invalidated first and the completion names it (IBV_WC_WITH_INV), else the WQE
 * completes with REM_INV_REQ_ERR and a Terminate goes (siw_rdmap_complete). */
static void send_end(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_iw_qp *iw = qp->iw;
	const struct urnic_ddp_hdr *h = &iw->rx_stream.hdr;
	bool inv = h->opcode == URNIC_RDMAP_SEND_INV || h->opcode == URNIC_RDMAP_SEND_SE_INV;
	bool se = h->opcode == URNIC_RDMAP_SEND_SE || h->opcode == URNIC_RDMAP_SEND_SE_INV;
	struct urnic_cqe cqe = { .status = URNIC_WC_SUCCESS };

	if (!h->last)
		return;
	iw->rx.msn[URNIC_DDP_QN_SEND]++;
	iw->rx.send_mid = false;
	if (inv) {
		enum urnic_mr_check c = urnic_mw_invalidate(&e->mrs, qp->pd, qp->qpn, h->inv_stag);

		if (c != URNIC_MR_OK) {
			bool prot = c == URNIC_MR_BAD_PD || c == URNIC_MR_BAD_QP;

			urnic_iw_fail(e, qp,
				      prot ? URNIC_IW_TERM_RDMAP_PROT_CANNOT_INVALIDATE
					   : URNIC_IW_TERM_RDMAP_OP_CANNOT_INVALIDATE,
				      URNIC_CTR_iw_refused_invalidate, URNIC_WC_REM_INV_REQ_ERR);
			return;
		}
		cqe.wc_flags = URNIC_WC_WITH_INV;
		cqe.imm_be = h->inv_stag;
	}
	urnic_iw_push_rwqe(e, qp, &cqe, se);
}

void urnic_iw_rx_end(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_iw_qp *iw = qp->iw;
	uint8_t seg = iw->rx.seg;

	iw->rx.seg = URNIC_IW_SEG_NONE;
	/* The peer's request is whole: a Write completion held for it comes now, before
	 * the request's own completion, and not at its first segment: an application
	 * that then watches the answer's last byte would find the rest still in the
	 * socket, for the engine thread alone to read (ib_write_lat -s 65536). */
	if (iw->rx_stream.hdr.last &&
	    (seg == URNIC_IW_SEG_SEND || seg == URNIC_IW_SEG_WRITE || seg == URNIC_IW_SEG_RREQ))
		urnic_iw_hold_answered(e, qp);
	switch (seg) {
	case URNIC_IW_SEG_SEND:
		send_end(e, qp);
		break;
	case URNIC_IW_SEG_RREQ:
		urnic_iw_rx_rreq_end(e, qp);
		break;
	case URNIC_IW_SEG_RRESP:
		urnic_iw_rx_rresp_end(e, qp);
		break;
	case URNIC_IW_SEG_TERM:
		urnic_iw_rx_term_end(e, qp);
		break;
	default:
		break;
	}
}

static bool on_head(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_iw_qp *iw = qp->iw;
	uint8_t op = iw->rx_stream.hdr.opcode;

	/* RFC 6581 3: the peer-to-peer Initiator's first FPDU is its RTR (or a Terminate,
	 * the LLP's own when setup could not agree), and the answer to a Read RTR is the
	 * first Read Response. */
	if (iw->rtr_in && op != URNIC_RDMAP_TERMINATE)
		return urnic_iw_rtr_head(e, qp);
	if (urnic_iw_rtr_rresp(qp)) {
		iw->rtr_rresp_due = false;
		iw->rx.seg = URNIC_IW_SEG_RTR;
		return true;
	}

	if (is_send(op))
		return urnic_iw_rx_send_head(e, qp);
	switch (op) {
	case URNIC_RDMAP_WRITE:
		return urnic_iw_rx_write_head(e, qp);
	case URNIC_RDMAP_READ_REQ:
		return urnic_iw_rx_rreq_head(e, qp);
	case URNIC_RDMAP_READ_RESP:
		return urnic_iw_rx_rresp_head(e, qp);
	default: /* TERMINATE: the decoder lets no other opcode through */
		iw->rx.seg = URNIC_IW_SEG_TERM;
		iw->rx.term_len = 0;
		return true;
	}
}

/* An FPDU arrived whole and checked. The first one ends an MPA Responder's hold (RFC 5044
 * 7.1.2: it "MUST receive and validate at least one FPDU before sending any"): what its
 * send queue and Read Requests hold is framed by the progress that urnic_iw_rx's wake
 * brings, in the same pass. */
static void rx_end(struct urnic_engine *e, struct urnic_qp *qp)
{
	qp->iw->await_first = false;
	if (qp->iw->rx.seg == URNIC_IW_SEG_RTR) {
		qp->iw->rx.seg = URNIC_IW_SEG_NONE;
		urnic_iw_rtr_end(e, qp);
		return;
	}
	urnic_iw_rx_end(e, qp);
}

size_t urnic_iw_rx(struct urnic_engine *e, struct urnic_qp *qp, const uint8_t *buf, size_t len,
		   uint64_t now_ns)
{
	struct urnic_iw_qp *iw = qp->iw;
	size_t pos = 0;

	e->now_ns = now_ns;
	urnic_engine_serve(e, qp);
	if (!iw || iw->dead || qp->state != URNIC_QPS_RTS) {
		urnic_count_n(e, URNIC_CTR_iw_rx_ignored, len);
		urnic_engine_serve(e, NULL);
		return 0;
	}
	while (pos < len && !iw->dead) {
		size_t used;
		enum urnic_fpdu_rx_event ev =
			urnic_fpdu_rx_next(&iw->rx_stream, buf + pos, len - pos, &used);

		pos += used;
		if (ev == URNIC_FPDU_RX_HEAD)
			on_head(e, qp);
		else if (ev == URNIC_FPDU_RX_PIECE)
			urnic_iw_rx_piece(e, qp, iw->rx_stream.data, iw->rx_stream.data_len,
					  iw->rx_stream.off);
		else if (ev == URNIC_FPDU_RX_END)
			rx_end(e, qp);
		else if (ev == URNIC_FPDU_RX_ERROR)
			urnic_iw_fail(e, qp, urnic_fpdu_rx_term(&iw->rx_stream),
				      URNIC_CTR_iw_refused_framing, URNIC_WC_GENERAL_ERR);
	}
	urnic_engine_qp_wake(e, qp); /* replies, completions, an unblocked fence */
	urnic_engine_serve(e, NULL);
	return pos;
}
