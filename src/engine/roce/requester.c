/* SPDX-License-Identifier: MIT */
/*
 * requester.c - the RC requester: turns send WQEs into request packets.
 *
 * IBTA 9.7.4 (requester behaviour): segmentation at the path MTU into FIRST/MIDDLE/
 * LAST or ONLY (9.7.4.1.1), AckReq on the last packet of a message and every
 * URNIC_ACKREQ_EVERY packets inside long ones (as rxe), a window of
 * URNIC_MAX_UNACKED_PSNS outstanding PSNs, max_rd_atomic outstanding READ/atomic
 * requests (max_rd_atomic), the fence (10.8.3.3), and go-back-N from the oldest unacknowledged
 * PSN when the completer asks for a retry (9.7.4.1.5). A READ retried after part of its
 * data arrived asks only for the rest, as rxe does. ATOMIC_WRITE and FLUSH (IBTA 1.5,
 * Annex A19) are single-packet requests that take a responder resource like a READ.
 * Local operations (BIND_MW, LOCAL_INV) are executed when the requester reaches them,
 * once, and complete in post order (rxe_do_local_ops). Segmentation, the local checks and
 * packet building are shared with UC (msg.h).
 */
#include "engine/roce/cc.h"
#include "engine/roce/rc.h"
#include "mem/sge.h"
#include "wire/psn.h"

enum { REQ_BUDGET_PKTS = 128 };

/* Direct placement (wire/addr.h): the whole READ's destination, as this process sees it,
 * beside the request, for a responder's process on this host to write it there. Only
 * for the first request of a READ (a retry asks for the rest in packets), and only where
 * every SGE resolves writable now (the completer checks them again as it completes). */
static void ask_direct(struct urnic_engine *e, const struct urnic_qp *qp,
		       const struct urnic_send_wqe *w, struct urnic_txpkt *p)
{
	int n = urnic_sge_host_segs(&e->mrs, qp->pd, w->sge, w->num_sge, 0, w->length,
				    URNIC_ACCESS_LOCAL_WRITE, p->direct_seg);

	if (n <= 0)
		return;
	p->direct_nseg = (uint8_t)n;
	/* An RC requester takes an offer to pull a long READ's tail (completer.c). */
	if (e->hooks.direct_read && qp->type == URNIC_QPT_RC)
		p->direct_flags = URNIC_DIRECT_CAN_PULL;
}

/* Whether what the requester sends next of w asks for direct placement (wire/addr.h): a
 * READ's first request, or a WRITE not tried so (send_write_direct; direct_tried is the
 * last use's until the WQE starts), to a peer whose lane takes notes now. Decided once
 * per turn of the requester's loop, for the window and the send alike. */
static bool goes_direct(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_send_wqe *w)
{
	bool read = w->opcode == URNIC_WR_RDMA_READ;
	bool write = w->opcode == URNIC_WR_RDMA_WRITE && qp->type == URNIC_QPT_RC &&
		     (!w->started || !w->direct_tried) && !(w->flags & URNIC_SEND_INLINE);

	return (read || write) && !qp->req.off_bytes && w->length >= URNIC_DIRECT_MIN_BYTES &&
	       e->hooks.direct_ready && e->hooks.direct_ready(e, qp);
}

/* A READ or WRITE that left asking for direct placement: its PSNs leave the window of
 * packets in flight until it completes (urnic_roce_complete_swqe) or is sent again. */
static void sent_direct(struct urnic_qp *qp, struct urnic_send_wqe *w)
{
	if (w->sent_direct)
		return;
	w->sent_direct = true;
	qp->req.direct_psns += rc_wqe_npsn(w, qp->attr.path_mtu);
}

/* Whether the window has room for the next send: PSNs outstanding, less those of direct
 * operations for one that is not direct, against URNIC_MAX_UNACKED_PSNS; all of them for
 * a direct one, against the PSNs of URNIC_MAX_UNACKED_DIRECT_BYTES. */
static bool window_full(const struct urnic_qp *qp, bool direct)
{
	uint32_t out = (uint32_t)urnic_psn_diff(qp->req.psn, qp->comp.psn);

	if (direct)
		return out >= URNIC_MAX_UNACKED_DIRECT_BYTES / qp->attr.path_mtu;
	return out - (qp->req.direct_psns < out ? qp->req.direct_psns : out) >=
	       URNIC_MAX_UNACKED_PSNS;
}

/*
 * Direct placement of a WRITE (wire/addr.h): to a process on this host whose lane
 * carries notes, a WRITE of at least URNIC_DIRECT_MIN_BYTES leaves as one WRITE ONLY
 * without payload, its RETH naming the whole length, beside the segments of our memory
 * that hold the data, which the responder's process copies (one copy instead of two
 * through the lane). It takes the PSNs its packets would have, so the ACK of its last
 * completes it as ever. Once: a retry sends packets. Not for inline data (it lives in
 * the WQE, which the application may reuse) nor on-demand memory. For a WQE that
 * goes_direct.
 */
static bool send_write_direct(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_send_wqe *w)
{
	struct urnic_req *r = &qp->req;
	struct urnic_pkt h = { 0 };
	struct urnic_txpkt *p;
	int n;

	h.bth.opcode = URNIC_OP_RC_RDMA_WRITE_ONLY;
	h.bth.psn = r->psn;
	h.bth.ackreq = true;
	h.reth = (struct urnic_reth){ w->remote_addr, w->rkey, w->length };
	p = urnic_roce_emit(e, qp, &h, 0);
	n = urnic_sge_host_segs(&e->mrs, qp->pd, w->sge, w->num_sge, 0, w->length, 0,
				p->direct_seg);
	if (n <= 0)
		return false; /* not committed: the slot is the packets' */
	p->direct_nseg = (uint8_t)n;
	p->direct_flags = URNIC_DIRECT_WRITE;
	urnic_tx_commit(e, p);
	w->direct_tried = true;
	sent_direct(qp, w);
	r->psn = urnic_psn_add(r->psn, rc_wqe_npsn(w, qp->attr.path_mtu));
	r->off_bytes = w->length;
	r->noack_pkts = 0;
	urnic_count(e, URNIC_CTR_write_direct);
	return true;
}

static void send_read_request(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_send_wqe *w,
			      bool direct)
{
	struct urnic_req *r = &qp->req;
	uint32_t off = r->off_bytes;
	uint32_t rest = w->length - off;
	struct urnic_pkt h = { 0 };
	struct urnic_txpkt *p;
	uint32_t npsn;

	h.bth.opcode = URNIC_OP_RC_RDMA_READ_REQUEST;
	h.bth.psn = r->psn;
	h.xrc_srqn = w->xrc_srqn; /* XRC (IBTA A14): the SRQ whose PD serves the READ */
	h.bth.ackreq = true;
	h.reth = (struct urnic_reth){ w->remote_addr + off, w->rkey, rest };
	p = urnic_roce_emit(e, qp, &h, 0);
	if (direct) {
		ask_direct(e, qp, w, p);
		if (p->direct_nseg)
			sent_direct(qp, w);
	}
	urnic_tx_commit(e, p);
	npsn = rest ? (rest + qp->attr.path_mtu - 1) / qp->attr.path_mtu : 1;
	r->psn = urnic_psn_add(r->psn, npsn);
	r->noack_pkts = 0;
}

static void send_atomic(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_send_wqe *w)
{
	struct urnic_pkt h = { 0 };

	h.bth.opcode = w->opcode == URNIC_WR_ATOMIC_CMP_AND_SWP ? URNIC_OP_RC_COMPARE_SWAP
								: URNIC_OP_RC_FETCH_ADD;
	h.bth.psn = qp->req.psn;
	h.bth.ackreq = true;
	h.xrc_srqn = w->xrc_srqn;
	/* IBTA 9.3.3.3: for FETCH_ADD the add value travels in the Swap/Add field. */
	h.atmeth.va = w->remote_addr;
	h.atmeth.rkey = w->rkey;
	h.atmeth.swap_add = w->opcode == URNIC_WR_ATOMIC_CMP_AND_SWP ? w->swap : w->compare_add;
	h.atmeth.compare = w->opcode == URNIC_WR_ATOMIC_CMP_AND_SWP ? w->compare_add : 0;
	urnic_tx_commit(e, urnic_roce_emit(e, qp, &h, 0));
	qp->req.psn = urnic_psn_add(qp->req.psn, 1);
	qp->req.noack_pkts = 0;
}

/* ATOMIC_WRITE (A19.4.2: RETH, 8 bytes of payload) or FLUSH (A19.4.1: FETH, RETH with the
 * range, no payload). On a local protection error sets *err and sends nothing. */
static void send_a19(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_send_wqe *w,
		     int *err)
{
	struct urnic_pkt h = { 0 };
	struct urnic_txpkt *p;
	bool flush = w->opcode == URNIC_WR_FLUSH;
	uint32_t n = flush ? 0 : w->length;

	h.bth.opcode = flush ? URNIC_OP_RC_FLUSH : URNIC_OP_RC_ATOMIC_WRITE;
	h.bth.psn = qp->req.psn;
	h.bth.ackreq = true;
	h.reth = (struct urnic_reth){ w->remote_addr, w->rkey,
				      flush ? (uint32_t)w->remote_len : w->length };
	if (flush)
		h.feth = roce_feth(w->flush_type, w->flush_level);
	p = urnic_roce_emit(e, qp, &h, n);
	if (urnic_roce_gather(e, qp, w, 0, n, p) < 0) {
		*err = URNIC_WC_LOC_PROT_ERR;
		return; /* not committed: the slot is reused by the next packet */
	}
	urnic_tx_commit(e, p);
	qp->req.psn = urnic_psn_add(qp->req.psn, 1);
	qp->req.noack_pkts = 0;
}

/* The requester to where the completer is: the WQE at comp.idx, from comp.psn, as far
 * into it as the completer has come. */
static void move_to_completer(struct urnic_qp *qp)
{
	struct urnic_req *r = &qp->req;
	uint32_t prod = atomic_load_explicit(&qp->sq.prod, memory_order_acquire);

	r->idx = qp->comp.idx;
	r->psn = qp->comp.psn;
	r->off_bytes = 0;
	r->rd_atomic = 0;
	r->noack_pkts = 0;
	if (r->idx != prod) {
		struct urnic_send_wqe *w = rc_swqe(qp, r->idx);

		if (w->started) {
			if (w->opcode == URNIC_WR_RDMA_READ)
				r->off_bytes = qp->comp.read_off_bytes;
			else if (!rc_wqe_is_read_atomic(w))
				r->off_bytes = (uint32_t)urnic_psn_diff(r->psn, w->first_psn) *
					       qp->attr.path_mtu;
		}
	}
}

/* Go-back-N: restart from the oldest unacknowledged PSN (IBTA 9.7.4.1.5). */
static void rewind_to_completer(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_req *r = &qp->req;
	uint32_t prod = atomic_load_explicit(&qp->sq.prod, memory_order_acquire);

	r->need_retry = false;
	if (!r->retrying || urnic_psn_after(r->psn, r->retry_end))
		r->retry_end = r->psn;
	r->retrying = true;
	/* What is sent again is sent anew, direct or not. */
	for (uint32_t i = qp->comp.idx; i != r->idx + 1 && i != prod; i++)
		rc_swqe(qp, i)->sent_direct = false;
	r->direct_psns = 0;
	urnic_count_n(e, URNIC_CTR_retransmit_pkts, (uint32_t)urnic_psn_diff(r->psn, qp->comp.psn));
	move_to_completer(qp);
}

bool urnic_rc_requester_progress(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_req *r = &qp->req;
	uint32_t budget = REQ_BUDGET_PKTS;
	bool did = false;

	if (r->rnr_deadline_ns)
		return false; /* waiting out an RNR NAK (IBTA 9.7.5.2.8) */
	if (r->retrying) {
		/* ACKs of duplicates completed what the retry had yet to send again. */
		if (urnic_psn_before(r->psn, qp->comp.psn))
			move_to_completer(qp);
		if (!urnic_psn_before(r->psn, r->retry_end))
			r->retrying = false;
	}
	if (r->need_retry) {
		rewind_to_completer(e, qp);
		did = true;
	}
	while (budget-- && qp->state == URNIC_QPS_RTS) {
		uint32_t prod = atomic_load_explicit(&qp->sq.prod, memory_order_acquire);
		struct urnic_send_wqe *w;
		int err = URNIC_WC_SUCCESS;
		bool done, direct;

		if (r->idx == prod)
			break;
		w = rc_swqe(qp, r->idx);
		direct = goes_direct(e, qp, w);
		/* The window, then DCQCN's rate (cc.h). */
		if (window_full(qp, direct) || !urnic_roce_cc_may_send(e, qp, w))
			break;
		if (roce_is_local_op(w->opcode)) {
			/* Executed once: a go-back-N walks past it (rxe_do_local_ops). */
			if (!w->started) {
				if ((w->flags & URNIC_SEND_FENCE) && r->rd_atomic)
					break;
				w->started = true;
				w->first_psn = w->last_psn = r->psn;
				err = urnic_roce_validate_swqe(e, qp, w);
				if (err == URNIC_WC_SUCCESS)
					err = urnic_roce_local_op(e, qp, w);
				if (err != URNIC_WC_SUCCESS) {
					urnic_roce_fail_swqe(e, qp, w, (uint8_t)err);
					return true;
				}
				w->done = true;
				w->status = URNIC_WC_SUCCESS;
			}
			r->idx++;
			r->off_bytes = 0;
			urnic_rc_complete_local_ops(e, qp);
			did = true;
			continue;
		}
		if (!w->started) {
			/* IBTA 10.8.3.3: a fenced WR waits for outstanding READ/atomics. */
			if ((w->flags & URNIC_SEND_FENCE) && r->rd_atomic)
				break;
			err = urnic_roce_validate_swqe(e, qp, w);
			if (err == URNIC_WC_SUCCESS) {
				w->first_psn = r->psn;
				w->last_psn = urnic_psn_add(r->psn,
							    rc_wqe_npsn(w, qp->attr.path_mtu) - 1);
				w->started = true;
				w->direct_tried = false;
				w->sent_direct = false;
				w->done = false;
				w->status = URNIC_WC_SUCCESS;
			}
		}
		if (err == URNIC_WC_SUCCESS && rc_wqe_is_read_atomic(w)) {
			if (r->rd_atomic >= (qp->attr.max_rd_atomic ? qp->attr.max_rd_atomic : 1))
				break;
			if (w->opcode == URNIC_WR_RDMA_READ)
				send_read_request(e, qp, w, direct);
			else if (rc_wqe_zero_read_response(w))
				send_a19(e, qp, w, &err);
			else
				send_atomic(e, qp, w);
			if (err == URNIC_WC_SUCCESS)
				r->rd_atomic++;
			done = true;
		} else if (err == URNIC_WC_SUCCESS) {
			done = (direct && send_write_direct(e, qp, w)) ||
			       urnic_roce_send_data_packet(e, qp, w, &err);
		}
		if (err != URNIC_WC_SUCCESS) {
			/* A local error completes this WQE in error once the ones before it
			 * are done; the QP goes to error (IBTA 10.8.3.1). */
			urnic_roce_fail_swqe(e, qp, w, (uint8_t)err);
			return true;
		}
		did = true;
		if (!r->rto_deadline_ns)
			urnic_rc_arm_rto(e, qp);
		if (done) {
			r->idx++;
			r->off_bytes = 0;
		}
	}
	return did;
}
