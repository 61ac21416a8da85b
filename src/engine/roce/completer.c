/* SPDX-License-Identifier: MIT */
/*
 * completer.c - the RC completer: ACKs, NAKs, READ responses and atomic ACKs coming
 * back to the requester; retransmission and RNR timers; completions in post order.
 *
 * IBTA 9.7.5.2 (requester side of responses): an ACK with PSN p acknowledges every
 * request up to p (coalesced ACKs, 9.7.5.1.1); a response naming a PSN beyond an
 * unanswered READ/atomic means its response was lost, so the requester retries
 * (IBTA 9.7.5.2 implicit NAK, rxe COMPST_ERROR_RETRY); READ responses are accepted strictly
 * in PSN order (go-back-N); NAK sequence error and timeouts retry, counted by
 * retry_cnt (9.7.6.1.3: seven means seven retries, unlike rxe's "infinite"); RNR NAK
 * waits the encoded time and retries, counted by rnr_retry (7 = infinite, 9.7.5.2.8);
 * other NAKs complete the WQE in error and move the QP to error (9.7.5.2.5, table 44).
 * ATOMIC_WRITE and FLUSH complete on their zero-length READ response ONLY (IBTA A19.4,
 * rxe_comp.c); local operations complete when everything posted before them has.
 */
#include <errno.h>
#include <string.h>

#include "engine/roce/rc.h"
#include "engine/roce/tm.h"
#include "mem/sge.h"
#include "wire/psn.h"

void urnic_rc_arm_rto(struct urnic_engine *e, struct urnic_qp *qp)
{
	uint64_t rto = urnic_qp_rto_ns(qp->attr.timeout);

	qp->req.rto_deadline_ns = rto ? e->now_ns + rto : 0;
}

void urnic_rc_fail(struct urnic_engine *e, struct urnic_qp *qp, uint8_t status)
{
	struct urnic_send_wqe *w = rc_swqe(qp, qp->comp.idx);

	w->done = true;
	w->status = status;
	urnic_qp_to_error(e, qp);
}

void urnic_rc_flush(struct urnic_engine *e, struct urnic_qp *qp)
{
	uint32_t prod = atomic_load_explicit(&qp->sq.prod, memory_order_acquire);

	if (qp->sq.depth == 0)
		return;
	/* IBTA 10.3.1: in error, outstanding and new WRs complete with FLUSH_ERR; the one
	 * that failed keeps its own status. Errors are always reported (10.8.4). */
	while (qp->comp.idx != prod) {
		struct urnic_send_wqe *w = rc_swqe(qp, qp->comp.idx);
		uint8_t status = w->done && w->status != URNIC_WC_SUCCESS ? w->status
									  : URNIC_WC_WR_FLUSH_ERR;
		struct urnic_cqe cqe = {
			.wr_id = w->wr_id,
			.status = status,
			.opcode = urnic_roce_wc_opcode(w->opcode),
			.qp_num = qp->qpn,
		};

		bool engine_wqe = w->role != URNIC_SWQE_APP;

		if (!engine_wqe && !urnic_cq_has_room(qp->send_cq)) {
			urnic_count(e, URNIC_CTR_cq_overflow);
			break;
		}
		w->started = false;
		w->sent_direct = false;
		w->done = true;
		qp->comp.idx++;
		/* Free the slot before the completion is visible (urnic_roce_complete_swqe). */
		atomic_store_explicit(&qp->sq.cons, qp->comp.idx, memory_order_release);
		if (engine_wqe) /* tag matching's: completes its tag (tm.c) */
			urnic_roce_tm_swqe_done(e, qp, w, status);
		else
			urnic_cq_push(qp->send_cq, &cqe, false);
	}
	qp->req.idx = qp->comp.idx;
	qp->req.off_bytes = 0;
	qp->req.direct_psns = 0;
	qp->req.retrying = false;
	qp->comp.read_off_bytes = 0;
	qp->comp.read_pulled = false;
	atomic_store_explicit(&qp->sq.cons, qp->comp.idx, memory_order_release);
}

/* Progress was made: reset the retry budget (rxe does the same on every completion)
 * and restart or stop the timer. */
static void progressed(struct urnic_engine *e, struct urnic_qp *qp)
{
	qp->req.retry_left = qp->attr.retry_cnt;
	qp->req.rnr_left = qp->attr.rnr_retry;
	qp->req.after_rnr = false;
	qp->comp.read_retry_started = false;
	if (qp->comp.psn == qp->req.psn)
		qp->req.rto_deadline_ns = 0;
	else
		urnic_rc_arm_rto(e, qp);
}

static bool wqe_outstanding(struct urnic_qp *qp, struct urnic_send_wqe **out)
{
	if (qp->comp.idx == qp->req.idx && !(rc_swqe(qp, qp->comp.idx)->started))
		return false;
	if (qp->comp.idx == atomic_load_explicit(&qp->sq.prod, memory_order_acquire))
		return false;
	*out = rc_swqe(qp, qp->comp.idx);
	return (*out)->started;
}

void urnic_rc_complete_local_ops(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_send_wqe *w;

	while (qp->state == URNIC_QPS_RTS && wqe_outstanding(qp, &w) &&
	       roce_is_local_op(w->opcode) && w->done)
		urnic_roce_complete_swqe(e, qp, URNIC_WC_SUCCESS);
}

/* Completes SEND/WRITE WQEs whose last PSN is before psn (inclusive when acked), and the
 * local operations between them. */
static void complete_upto(struct urnic_engine *e, struct urnic_qp *qp, uint32_t psn, bool inclusive)
{
	struct urnic_send_wqe *w;

	while (qp->state == URNIC_QPS_RTS && wqe_outstanding(qp, &w)) {
		int32_t d = urnic_psn_diff(psn, w->last_psn);

		if (roce_is_local_op(w->opcode)) {
			if (!w->done)
				break;
			urnic_roce_complete_swqe(e, qp, URNIC_WC_SUCCESS);
			continue;
		}

		if (d < 0 || (d == 0 && !inclusive))
			break;
		if (rc_wqe_is_read_atomic(w)) {
			/* The response to this READ/atomic was lost: retry from it. */
			qp->req.need_retry = true;
			break;
		}
		qp->comp.psn = urnic_psn_add(w->last_psn, 1);
		urnic_roce_complete_swqe(e, qp, URNIC_WC_SUCCESS);
	}
}

static uint8_t nak_status(uint8_t code, struct urnic_engine *e)
{
	switch (code) {
	case URNIC_NAK_INVALID_REQ:
		urnic_count(e, URNIC_CTR_nak_inv_req_rcvd);
		return URNIC_WC_REM_INV_REQ_ERR;
	case URNIC_NAK_REM_ACCESS_ERR:
		urnic_count(e, URNIC_CTR_nak_rem_access_rcvd);
		return URNIC_WC_REM_ACCESS_ERR;
	default:
		urnic_count(e, URNIC_CTR_nak_rem_op_rcvd);
		return URNIC_WC_REM_OP_ERR;
	}
}

static void on_nak(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt)
{
	uint8_t syn = pkt->aeth.syndrome;
	uint32_t psn = pkt->bth.psn;
	struct urnic_send_wqe *w;

	/* A NAK answers a request: with none outstanding it is a ghost (rxe drops
	 * responses when no WQE waits for one) and must not spend retries or fail the QP. */
	if (!wqe_outstanding(qp, &w)) {
		urnic_count(e, URNIC_CTR_drop_stale_response);
		return;
	}
	/* A NAK acknowledges everything before its PSN (IBTA 9.7.5.1.1), but not the data
	 * of a READ/atomic before it whose response was lost (complete_upto stops there and
	 * asks for a retry): the oldest unacknowledged PSN stays at that READ/atomic, or the
	 * retry would resend it, and everything after it, under later PSNs. */
	complete_upto(e, qp, psn, false);
	if (qp->state != URNIC_QPS_RTS)
		return;
	if (urnic_psn_after(psn, qp->comp.psn) &&
	    !(wqe_outstanding(qp, &w) && rc_wqe_is_read_atomic(w))) {
		qp->comp.psn = psn;
		progressed(e, qp);
	}
	if ((syn & URNIC_AETH_TYPE_MASK) == URNIC_AETH_RNR_NAK) {
		urnic_count(e, URNIC_CTR_rnr_nak_rcvd);
		/* IBTA 9.7.5.2.8: rnr_retry 7 means retry forever. */
		if (qp->attr.rnr_retry != 7) {
			if (qp->req.rnr_left == 0) {
				urnic_count(e, URNIC_CTR_rnr_retry_exceeded);
				urnic_rc_fail(e, qp, URNIC_WC_RNR_RETRY_EXC_ERR);
				return;
			}
			qp->req.rnr_left--;
		}
		qp->req.rnr_deadline_ns = e->now_ns + 1000ull * urnic_rnr_timer_us(syn & 0x1f);
		qp->req.need_retry = true;
		qp->req.after_rnr = true;
		qp->req.rnr_psn = psn;
		qp->req.rto_deadline_ns = 0;
		return;
	}
	switch (syn & 0x1f) {
	case URNIC_NAK_PSN_SEQ_ERR:
		urnic_count(e, URNIC_CTR_nak_seq_rcvd);
		/* A go-back-N from comp.psn is already due (typically an RNR NAK, whose
		 * followers drew this NAK), or the RNR retry from this very PSN has not made
		 * progress yet and the NAK may still be the followers' (rxe sends one after
		 * every RNR NAK; a short RNR timer lets the retry start before it arrives):
		 * not a second retry, so it does not use up retry_cnt. The RNR retry, or the
		 * timer, resends from this PSN anyway. */
		if (qp->req.need_retry || (qp->req.after_rnr && psn == qp->req.rnr_psn))
			return;
		if (qp->req.retry_left == 0) {
			urnic_count(e, URNIC_CTR_retry_exceeded);
			urnic_rc_fail(e, qp, URNIC_WC_RETRY_EXC_ERR);
			return;
		}
		qp->req.retry_left--;
		qp->req.need_retry = true;
		return;
	default:
		if (!wqe_outstanding(qp, &w))
			return;
		urnic_rc_fail(e, qp, nak_status(syn & 0x1f, e));
		return;
	}
}

/* Places a response's bytes in the WQE's SGEs; if they do not resolve, or their
 * on-demand memory is not mapped writable, the WQE fails with a local protection error
 * (IBTA 10.8.3.1). True when placed. */
static bool scatter_ok(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_send_wqe *w,
		       uint32_t off, const uint8_t *data, uint32_t len)
{
	int ret = urnic_sge_scatter(&e->mrs, qp->pd, w->sge, w->num_sge, off, data, len);

	if (ret == 0)
		return true;
	if (ret == -ENXIO)
		urnic_count(e, URNIC_CTR_odp_fault_local);
	urnic_rc_fail(e, qp, URNIC_WC_LOC_PROT_ERR);
	return false;
}

/*
 * A READ's one response from a process on this host that wrote the data into our
 * memory itself (direct placement, wire/addr.h; only a lane carries the word): it must
 * name the READ's last PSN, with nothing of the READ taken yet (only a READ's first
 * request asks for it), and the SGEs must still resolve writable, as they must for
 * response packets. Anything else is dropped as stale, and the timer asks again.
 */
static void on_read_placed(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
			   uint32_t flags, const struct urnic_send_wqe *w)
{
	struct urnic_direct_seg segs[URNIC_MAX_SGE];
	uint32_t npsn = rc_wqe_npsn(w, qp->attr.path_mtu);

	if (w->opcode != URNIC_WR_RDMA_READ || qp->comp.read_off_bytes ||
	    qp->comp.psn != w->first_psn || pkt->bth.psn != urnic_psn_add(w->first_psn, npsn - 1) ||
	    pkt->payload_bytes || !(flags & URNIC_OPF_LAST) ||
	    ((e->rx_direct->flags & URNIC_DIRECT_SPLIT) && !qp->comp.read_pulled)) {
		urnic_count(e, URNIC_CTR_drop_stale_response);
		return;
	}
	if (urnic_sge_host_segs(&e->mrs, qp->pd, w->sge, w->num_sge, 0, w->length,
				URNIC_ACCESS_LOCAL_WRITE, segs) < 0) {
		urnic_rc_fail(e, qp, URNIC_WC_LOC_PROT_ERR);
		return;
	}
	urnic_count(e, URNIC_CTR_read_direct_placed);
	qp->comp.read_off_bytes = w->length;
	qp->comp.psn = urnic_psn_add(pkt->bth.psn, 1);
	urnic_roce_complete_swqe(e, qp, URNIC_WC_SUCCESS);
	urnic_rc_complete_local_ops(e, qp);
	progressed(e, qp);
}

/*
 * An offer to pull a READ's tail from the responder's memory while its process writes
 * the head (wire/addr.h): taken if it is the READ's first response, nothing of the READ
 * taken yet, its one segment no longer than the READ, our SGEs for the tail writable.
 * Whether taken or not, the responder is told we are done with its memory (PULLED),
 * which its region waits for; if the pull failed, the READ's PLACED | SPLIT response is
 * dropped as stale and the timer asks again, in packets.
 */
static void on_read_offer(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
			  uint32_t flags, const struct urnic_send_wqe *w)
{
	const struct urnic_direct_note *d = e->rx_direct;
	struct urnic_direct_seg to[URNIC_MAX_SGE];
	struct urnic_pkt h = { 0 };
	struct urnic_txpkt *p;
	int n;

	if (w->opcode == URNIC_WR_RDMA_READ && !qp->comp.read_off_bytes && !qp->comp.read_pulled &&
	    qp->comp.psn == w->first_psn && pkt->bth.psn == w->first_psn && d->nseg == 1 &&
	    d->seg[0].len && d->seg[0].len < w->length && !pkt->payload_bytes &&
	    (flags & URNIC_OPF_FIRST) && e->hooks.direct_read) {
		uint32_t tail = (uint32_t)d->seg[0].len;

		n = urnic_sge_host_segs(&e->mrs, qp->pd, w->sge, w->num_sge, w->length - tail, tail,
					URNIC_ACCESS_LOCAL_WRITE, to);
		if (n > 0 && !e->hooks.direct_read(e, qp, d, to, (uint32_t)n, true)) {
			qp->comp.read_pulled = true;
			urnic_count(e, URNIC_CTR_read_direct_pulled);
			urnic_count_n(e, URNIC_CTR_direct_bytes, tail);
		}
	} else {
		urnic_count(e, URNIC_CTR_drop_stale_response);
	}
	h.bth.opcode = URNIC_OP_RC_ACKNOWLEDGE;
	h.bth.psn = pkt->bth.psn;
	h.aeth.syndrome = URNIC_AETH_ACK_UNLIMITED;
	p = urnic_roce_emit(e, qp, &h, 0);
	p->direct_flags = URNIC_DIRECT_PULLED;
	urnic_tx_commit(e, p);
	e->hooks.flush(e); /* the responder's region waits for it */
}

static void on_read_response(struct urnic_engine *e, struct urnic_qp *qp,
			     const struct urnic_pkt *pkt, uint32_t flags)
{
	uint32_t mtu = qp->attr.path_mtu;
	struct urnic_send_wqe *w;
	uint32_t off, rest;

	complete_upto(e, qp, pkt->bth.psn, false);
	if (qp->state != URNIC_QPS_RTS || !wqe_outstanding(qp, &w))
		return;
	if (e->rx_direct && (e->rx_direct->flags & URNIC_DIRECT_PLACED)) {
		on_read_placed(e, qp, pkt, flags, w);
		return;
	}
	if (e->rx_direct && (e->rx_direct->flags & URNIC_DIRECT_PULL)) {
		on_read_offer(e, qp, pkt, flags, w);
		return;
	}
	if ((w->opcode != URNIC_WR_RDMA_READ && !rc_wqe_zero_read_response(w)) ||
	    pkt->bth.psn != qp->comp.psn) {
		/* Out of order (a response was lost) or stale: go-back-N retries, once
		 * per gap. The rest of the burst shows the same gap again and would
		 * restart the responder's replay each time: it waits for the retry to
		 * make progress or for the timer (rxe's comp.started_retry). */
		urnic_count(e, URNIC_CTR_drop_stale_response);
		if (urnic_psn_after(pkt->bth.psn, qp->comp.psn) && !qp->comp.read_retry_started) {
			qp->comp.read_retry_started = true;
			qp->req.need_retry = true;
		}
		return;
	}
	if (rc_wqe_zero_read_response(w)) {
		/* IBTA A19.4: the response to ATOMIC_WRITE or FLUSH is one READ response
		 * ONLY without payload (rxe send_read_response_ack()). */
		if ((flags & URNIC_OPF_ONLY) != URNIC_OPF_ONLY || pkt->payload_bytes) {
			urnic_rc_fail(e, qp, URNIC_WC_BAD_RESP_ERR);
			return;
		}
		qp->comp.psn = urnic_psn_add(pkt->bth.psn, 1);
		urnic_roce_complete_swqe(e, qp, URNIC_WC_SUCCESS);
		urnic_rc_complete_local_ops(e, qp);
		progressed(e, qp);
		return;
	}
	off = qp->comp.read_off_bytes;
	rest = w->length - off;
	/* IBTA 9.7.5.2: response opcodes in sequence, full MTU except the last. */
	if (((flags & URNIC_OPF_FIRST) != 0) != (off == 0)) {
		urnic_count(e, URNIC_CTR_drop_stale_response);
		return;
	}
	if ((flags & URNIC_OPF_LAST) ? pkt->payload_bytes != rest
				     : (pkt->payload_bytes != mtu || rest <= mtu)) {
		urnic_rc_fail(e, qp, URNIC_WC_BAD_RESP_ERR);
		return;
	}
	if (pkt->payload_bytes && !scatter_ok(e, qp, w, off, pkt->payload, pkt->payload_bytes))
		return;
	qp->comp.read_off_bytes += pkt->payload_bytes;
	qp->comp.psn = urnic_psn_add(pkt->bth.psn, 1);
	if (flags & URNIC_OPF_LAST) {
		urnic_roce_complete_swqe(e, qp, URNIC_WC_SUCCESS);
		urnic_rc_complete_local_ops(e, qp);
	}
	progressed(e, qp);
}

static void on_atomic_ack(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt)
{
	struct urnic_send_wqe *w;
	uint8_t orig[8];

	complete_upto(e, qp, pkt->bth.psn, false);
	if (qp->state != URNIC_QPS_RTS || !wqe_outstanding(qp, &w))
		return;
	if ((w->opcode != URNIC_WR_ATOMIC_CMP_AND_SWP &&
	     w->opcode != URNIC_WR_ATOMIC_FETCH_AND_ADD) ||
	    pkt->bth.psn != w->first_psn) {
		urnic_count(e, URNIC_CTR_drop_stale_response);
		return;
	}
	/* The original value lands in host byte order, as ibverbs delivers it. */
	memcpy(orig, &pkt->atmack_orig, sizeof(orig));
	if (!scatter_ok(e, qp, w, 0, orig, sizeof(orig)))
		return;
	qp->comp.psn = urnic_psn_add(pkt->bth.psn, 1);
	urnic_roce_complete_swqe(e, qp, URNIC_WC_SUCCESS);
	urnic_rc_complete_local_ops(e, qp);
	progressed(e, qp);
}

void urnic_rc_completer_rx(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt)
{
	uint32_t flags = urnic_opcode_info(pkt->bth.opcode)->flags;
	uint32_t psn = pkt->bth.psn;

	/* Only PSNs in [oldest unacknowledged - 1, next to send) mean anything; while a
	 * retry resends, up to what was sent before it. */
	if (urnic_psn_diff(psn, qp->comp.psn) < -1 || urnic_psn_diff(psn, rc_sent_end(qp)) >= 0) {
		urnic_count(e, URNIC_CTR_drop_stale_response);
		return;
	}
	if (flags & URNIC_OPF_AETH) {
		uint8_t type = pkt->aeth.syndrome & URNIC_AETH_TYPE_MASK;

		if (type == URNIC_AETH_RNR_NAK || type == URNIC_AETH_NAK) {
			on_nak(e, qp, pkt);
			return;
		}
		if (type != URNIC_AETH_ACK) {
			urnic_count(e, URNIC_CTR_drop_bad_header); /* reserved syndrome 0x40 */
			return;
		}
	}
	if (flags & URNIC_OPF_READ) {
		on_read_response(e, qp, pkt, flags);
	} else if (pkt->bth.opcode == URNIC_OP_RC_ATOMIC_ACKNOWLEDGE) {
		urnic_count(e, URNIC_CTR_ack_rcvd);
		on_atomic_ack(e, qp, pkt);
	} else {
		uint32_t before = qp->comp.psn;

		urnic_count(e, URNIC_CTR_ack_rcvd);
		complete_upto(e, qp, psn, true);
		if (urnic_psn_after(urnic_psn_add(psn, 1), qp->comp.psn) &&
		    urnic_psn_before(psn, rc_sent_end(qp))) {
			struct urnic_send_wqe *w;

			/* Part of a multi-packet message acknowledged. */
			if (wqe_outstanding(qp, &w) && !rc_wqe_is_read_atomic(w))
				qp->comp.psn = urnic_psn_add(psn, 1);
		}
		if (qp->comp.psn != before)
			progressed(e, qp);
	}
}

void urnic_rc_completer_timers(struct urnic_engine *e, struct urnic_qp *qp, uint64_t *next)
{
	struct urnic_req *r = &qp->req;

	if (r->rnr_deadline_ns && e->now_ns >= r->rnr_deadline_ns) {
		r->rnr_deadline_ns = 0; /* need_retry is set: the requester resends */
		e->timers.fired = true;
	}
	if (r->rto_deadline_ns && e->now_ns >= r->rto_deadline_ns) {
		if (qp->comp.psn == r->psn) {
			r->rto_deadline_ns = 0;
		} else {
			e->timers.fired = true;
			urnic_count(e, URNIC_CTR_retry_timeout);
			if (r->retry_left == 0) {
				urnic_count(e, URNIC_CTR_retry_exceeded);
				urnic_rc_fail(e, qp, URNIC_WC_RETRY_EXC_ERR);
				return;
			}
			r->retry_left--;
			r->need_retry = true;
			qp->comp.read_retry_started = false;
			urnic_rc_arm_rto(e, qp);
		}
	}
	if (r->rto_deadline_ns && (!*next || r->rto_deadline_ns < *next))
		*next = r->rto_deadline_ns;
	if (r->rnr_deadline_ns && (!*next || r->rnr_deadline_ns < *next))
		*next = r->rnr_deadline_ns;
}
