/* SPDX-License-Identifier: MIT */
/*
 * responder.c - the RC responder's receive path: checks an inbound request and executes
 * it (IBTA 9.7.5.1, in rxe_resp.c's order, validate then mutate). R_Keys name regions or
 * memory windows (mem/mw.h); a SEND with Invalidate revokes a window. ACKs, NAKs, the
 * responder resources, duplicates and READ/atomic responses are resources.c's; the
 * parting ACK (a QP going away) is here.
 */
#include <errno.h>

#include "engine/roce/rc.h"
#include "engine/roce/tm.h"
#include "mem/odp.h"
#include "wire/psn.h"

/*
 * The parting ACK. RC has no closing handshake: an application that exits after its
 * last message (ibv_rc_pingpong, any request-response program) destroys its QP as soon
 * as its own work completes, and if the ACK it sent for the peer's last request was
 * lost, the peer's retries find nobody and its last send fails with "transport retry
 * counter exceeded" although the message was delivered and completed here. On a lossy
 * path that ends a run with probability p, the loss rate. So a QP that goes away while
 * the peer may still be waiting for its last ACK sends that ACK once more: the same PSN
 * and MSN, which a requester that already has it takes as a duplicate (IBTA 9.7.5.1.1:
 * an ACK covers all earlier PSNs; rxe and urnic's completer accept the PSN just before
 * the oldest outstanding one and ignore it), and the failure needs both copies lost.
 * Only when that ACK covers everything executed (no READ or atomic answered by a
 * response after it, nothing owed), and only within the QP's timeout (IBTA 9.7.6.1.3)
 * of sending it: after that the peer has either had it or retried, and a retry
 * would have been answered. timeout 0 (no retries) waits forever: always sent.
 * Called by engine.c's release_held for an RC QP in RTR or later, not in error.
 */
void urnic_rc_parting_ack(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_resp *r = &qp->resp;
	uint64_t rto = urnic_qp_rto_ns(qp->attr.timeout);

	if (!r->acked_ns || r->ack_pending || r->replying ||
	    r->acked_psn != urnic_psn_add(r->epsn, URNIC_PSN_MASK) ||
	    (rto && e->now_ns - r->acked_ns >= rto))
		return;
	urnic_rc_send_ack(e, qp, r->acked_psn, URNIC_AETH_ACK_UNLIMITED);
	urnic_count(e, URNIC_CTR_ack_parting);
}

/* A sequence or RNR NAK for the expected PSN: at once, unless READ responses or atomic
 * ACKs for earlier PSNs are still owed, which it must not overtake (IBTA 9.7.5.1.1). */
static void queue_nak(struct urnic_engine *e, struct urnic_qp *qp, uint32_t psn, uint8_t syndrome)
{
	struct urnic_resp *r = &qp->resp;

	if (!r->replying) {
		urnic_rc_send_ack(e, qp, psn, syndrome);
		return;
	}
	r->ack_pending = true;
	r->ack_psn = psn;
	r->ack_syndrome = syndrome;
}

/* Rights a FLUSH needs: its placement type's (rxe check_rkey / check_qp_attr_access). */
static uint32_t flush_rights(uint32_t feth)
{
	uint32_t need = 0;

	if (feth & URNIC_FLUSH_GLOBAL)
		need |= URNIC_ACCESS_FLUSH_GLOBAL;
	if (feth & URNIC_FLUSH_PERSISTENT)
		need |= URNIC_ACCESS_FLUSH_PERSISTENT;
	return need;
}

/* An atomic's target in an on-demand region must be mapped writable before the atomic
 * touches it (mem/odp.h): if not, NAK remote access error (IBTA 9.7.5.2.4), as for an
 * R_Key that does not grant it. True when the atomic may go on. */
static bool odp_atomic_ok(struct urnic_engine *e, struct urnic_qp *qp, uint32_t psn,
			  const struct urnic_mr_at *at)
{
	if (!at->odp || urnic_odp_atomic_ready(e->mrs.odp, at->host) == 0)
		return true;
	urnic_count(e, URNIC_CTR_odp_fault_remote);
	urnic_rc_nak_class_c(e, qp, psn, URNIC_NAK_REM_ACCESS_ERR);
	return false;
}

/* The 8 bytes an atomic or ATOMIC_WRITE names at va: granted by rkey, else NAK remote
 * access error; aligned in the address space and in memory too, else invalid request (a
 * region registered at an IOVA whose offset differs from its address's would make an
 * aligned VA an unaligned, split-lock access here; rxe NAKs it the same way); mapped if
 * on demand. True when the request may go on, *at naming the target. */
static bool atomic_target(struct urnic_engine *e, struct urnic_qp *qp, uint32_t psn, uint32_t rkey,
			  uint64_t va, uint32_t access, struct urnic_mr_at *at)
{
	if (urnic_mr_resolve_remote(&e->mrs, qp->pd, qp->qpn, rkey, va, 8, access, at) !=
	    URNIC_MR_OK) {
		urnic_rc_nak_class_c(e, qp, psn, URNIC_NAK_REM_ACCESS_ERR);
		return false;
	}
	if ((va & 7) || ((uintptr_t)at->host & 7)) {
		urnic_rc_nak_class_c(e, qp, psn, URNIC_NAK_INVALID_REQ);
		return false;
	}
	return odp_atomic_ok(e, qp, psn, at);
}

/*
 * ATOMIC_WRITE and FLUSH (IBTA 1.5, Annex A19, as rxe 6.2+): ATOMIC_WRITE stores
 * its 8 bytes at an aligned address in one store; FLUSH makes earlier writes visible
 * (placement type global; persistence is not offered, see docs/differences-from-rxe.md);
 * each takes a responder resource and is answered by a READ response ONLY without
 * payload; a duplicate is answered again without executing (oA19-14, oA19-15).
 *
 * Checks of ATOMIC_WRITE and FLUSH after the common ones; executes and answers.
 */
static void a19_request(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
			uint32_t flags)
{
	uint32_t psn = pkt->bth.psn;
	struct urnic_mr_at at = { 0 };

	if (flags & URNIC_OPF_FLUSH) {
		uint32_t need = flush_rights(pkt->feth);
		uint32_t level = pkt->feth >> ROCE_FETH_SEL_SHIFT & ROCE_FETH_SEL_MASK;

		/* A19.4.1: a placement type, a defined selectivity level, reserved bits
		 * zero, no payload; C9-94: a RETH length fits 2^31. */
		if (!need || (pkt->feth & ROCE_FETH_RESERVED) ||
		    (pkt->feth & ROCE_FETH_PLT_MASK & ~(uint32_t)URNIC_FLUSH_TYPE_MASK) ||
		    level > URNIC_FLUSH_LEVEL_MR || pkt->payload_bytes ||
		    pkt->reth.len > (1u << 31)) {
			urnic_rc_nak_class_c(e, qp, psn, URNIC_NAK_INVALID_REQ);
			return;
		}
		/* The R_Key must grant the placement type; a region-wide flush names no
		 * range to check (rxe skips it for IB_FLUSH_MR). */
		if (level == URNIC_FLUSH_LEVEL_MR
			    ? !urnic_mr_remote_region(&e->mrs, qp->pd, qp->qpn, pkt->reth.rkey,
						      need)
			    : urnic_mr_resolve_remote(&e->mrs, qp->pd, qp->qpn, pkt->reth.rkey,
						      pkt->reth.va, pkt->reth.len, need,
						      &at) != URNIC_MR_OK) {
			urnic_rc_nak_class_c(e, qp, psn, URNIC_NAK_REM_ACCESS_ERR);
			return;
		}
	} else {
		/* A19.4.2: exactly 8 bytes, the RETH saying so. */
		if (pkt->reth.len != 8 || pkt->payload_bytes != 8) {
			urnic_rc_nak_class_c(e, qp, psn, URNIC_NAK_INVALID_REQ);
			return;
		}
		/* oA19-28 / rxe RESPST_ERR_MISALIGNED_ATOMIC: as an atomic's target. */
		if (!atomic_target(e, qp, psn, pkt->reth.rkey, pkt->reth.va,
				   URNIC_ACCESS_REMOTE_WRITE, &at))
			return;
	}
	if (urnic_rc_res_exhausted(e, qp, psn))
		return;
	qp->resp.epsn = urnic_psn_add(psn, 1);
	urnic_rc_execute_a19(e, qp, pkt, at.host);
}

/*
 * IBTA 9.7.5.1 (responder behaviour), in rxe_resp.c's order, validate then mutate:
 * PSN (9.7.5.1.1: ahead -> one NAK sequence error, then silence until the expected PSN;
 * behind -> duplicate, 9.7.5.1.2) -> opcode sequence (9.7.5.1.4) -> the QP grants the
 * operation (its remote access flags, rxe check_op_valid) -> resources (receive WQE, else RNR NAK
 * 9.7.5.1.5; responder resources for READ/atomic) -> lengths (9.7.5.1.6: FIRST/MIDDLE
 * carry exactly the path MTU, LAST/ONLY at most) -> R_Key, bounds and rights
 * (9.7.5.1.7; failure = NAK remote access error) -> execute -> acknowledge. Class C
 * errors (invalid request, remote access) NAK and move the QP to error (9.9.3.1).
 *
 * Checks 1 to 5; true when the request may go on to its operation's own checks.
 */
/* The receive WQE a SEND or WRITE with immediate needs; a SEND on a tag-matching SRQ
 * takes a tagged buffer or a plain WQE as its TMH says (tm.c). */
static bool take_rwqe(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
		      uint32_t flags)
{
	if (urnic_roce_tm_qp(qp) && (flags & URNIC_OPF_SEND))
		return urnic_roce_tm_take(e, qp, pkt);
	return urnic_roce_take_rwqe(e, qp);
}

static bool check_request(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
			  uint32_t flags)
{
	struct urnic_resp *r = &qp->resp;
	uint32_t psn = pkt->bth.psn;
	uint32_t mtu = qp->attr.path_mtu;
	int32_t d = urnic_psn_diff(psn, r->epsn);

	/* 1. PSN (IBTA 9.7.5.1.1 / 9.7.5.1.2). */
	if (d > 0) {
		if (!r->sent_psn_nak) {
			r->sent_psn_nak = true;
			queue_nak(e, qp, r->epsn, URNIC_AETH_NAK | URNIC_NAK_PSN_SEQ_ERR);
			urnic_count(e, URNIC_CTR_nak_seq_sent);
		} else {
			urnic_count(e, URNIC_CTR_drop_psn_after_nak);
		}
		return false;
	}
	if (d < 0) {
		urnic_rc_answer_duplicate(e, qp, pkt, flags);
		return false;
	}
	r->sent_psn_nak = false;

	/* 2. Opcode sequence (IBTA 9.7.5.1.4): a missing FIRST or LAST is invalid. */
	if (!urnic_roce_op_sequence_ok(r, flags)) {
		urnic_rc_nak_class_c(e, qp, psn, URNIC_NAK_INVALID_REQ);
		return false;
	}
	/* 3. The QP must grant the operation (its access flags; rxe check_op_valid and
	 * check_qp_attr_access: ATOMIC_WRITE needs remote write, FLUSH its placement
	 * type's flush right). */
	if (((flags & (URNIC_OPF_WRITE | URNIC_OPF_ATOMIC_WRITE)) &&
	     !(qp->attr.access & URNIC_ACCESS_REMOTE_WRITE)) ||
	    ((flags & URNIC_OPF_READ) && !(qp->attr.access & URNIC_ACCESS_REMOTE_READ)) ||
	    ((flags & URNIC_OPF_ATOMIC) && !(qp->attr.access & URNIC_ACCESS_REMOTE_ATOMIC)) ||
	    ((flags & URNIC_OPF_FLUSH) &&
	     (qp->attr.access & flush_rights(pkt->feth)) != flush_rights(pkt->feth))) {
		urnic_rc_nak_class_c(e, qp, psn, URNIC_NAK_INVALID_REQ);
		return false;
	}
	/* 4. Resources: READ/atomic/ATOMIC_WRITE/FLUSH need responder resources; receives
	 * need a WQE (from the RQ or the SRQ: an empty SRQ is RNR too, IBTA 10.2.9). */
	if ((flags &
	     (URNIC_OPF_READ | URNIC_OPF_ATOMIC | URNIC_OPF_ATOMIC_WRITE | URNIC_OPF_FLUSH)) &&
	    qp->attr.max_dest_rd_atomic == 0) {
		urnic_rc_nak_class_c(e, qp, psn, URNIC_NAK_INVALID_REQ);
		return false;
	}
	if (roce_needs_rwqe(flags) && (flags & (URNIC_OPF_FIRST | URNIC_OPF_LAST)) &&
	    !take_rwqe(e, qp, pkt, flags)) {
		/* IBTA 9.7.5.1.5: RNR NAK with our minimum RNR timer. The requester will
		 * resend from this PSN when the timer expires; the packets already behind
		 * this one are dropped silently like those after a sequence NAK, rather
		 * than drawing a sequence NAK that would cost the requester a retry. */
		queue_nak(e, qp, psn, (uint8_t)(URNIC_AETH_RNR_NAK | qp->attr.min_rnr_timer));
		urnic_count(e, URNIC_CTR_rnr_nak_sent);
		r->sent_psn_nak = true;
		return false;
	}
	/* 5. Lengths (IBTA 9.7.5.1.6). */
	if (!urnic_roce_payload_len_ok(flags, pkt->payload_bytes, mtu)) {
		urnic_rc_nak_class_c(e, qp, psn, URNIC_NAK_INVALID_REQ);
		return false;
	}
	return true;
}

/* Checks and places a WRITE packet; true when it is to be acknowledged. */
static bool rx_write(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
		     uint32_t flags)
{
	struct urnic_resp *r = &qp->resp;
	uint32_t psn = pkt->bth.psn;
	struct urnic_mr_at at;

	/* 6. R_Key, bounds, rights for the whole WRITE (IBTA 9.7.5.1.7). */
	switch (urnic_roce_write_check(e, qp, pkt, flags, &at)) {
	case ROCE_WRITE_OK:
		break;
	case ROCE_WRITE_BAD_LENGTH:
		urnic_rc_nak_class_c(e, qp, psn, URNIC_NAK_INVALID_REQ);
		return false;
	case ROCE_WRITE_BAD_ACCESS:
		urnic_rc_nak_class_c(e, qp, psn, URNIC_NAK_REM_ACCESS_ERR);
		return false;
	}
	if (urnic_roce_recv_write(e, qp, pkt, flags, &at)) {
		urnic_rc_nak_class_c(e, qp, psn, URNIC_NAK_REM_ACCESS_ERR);
		return false;
	}
	if (flags & URNIC_OPF_LAST)
		r->msn++;
	return true;
}

/* Places a SEND packet in the receive WQE; true when it is to be acknowledged. */
static bool rx_send(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
		    uint32_t flags)
{
	struct urnic_resp *r = &qp->resp;
	uint32_t psn = pkt->bth.psn;
	int ret = urnic_roce_recv_send(e, qp, pkt, flags);

	if (ret == -EKEYREJECTED) {
		/* Class J (rxe RESPST_ERR_INVALIDATE_RKEY): the data arrived and is
		 * acknowledged; the receive completed in error and the QP goes to
		 * error. */
		urnic_rc_send_ack(e, qp, psn, URNIC_AETH_ACK_UNLIMITED);
		urnic_qp_to_error(e, qp);
		return false;
	}
	if (ret) {
		/* Local length or protection error at the responder: the WQE completes
		 * in error and the requester gets NAK invalid request (rxe: class C). */
		urnic_roce_complete_rwqe(
			e, qp, pkt, URNIC_WC_RECV, r->rwqe_off + pkt->payload_bytes,
			ret == -EMSGSIZE ? URNIC_WC_LOC_LEN_ERR : URNIC_WC_LOC_PROT_ERR);
		urnic_rc_nak_class_c(e, qp, psn,
				     ret == -EMSGSIZE ? URNIC_NAK_INVALID_REQ
						      : URNIC_NAK_REM_OP_ERR);
		return false;
	}
	if (flags & URNIC_OPF_LAST)
		r->msn++;
	if (qp->state == URNIC_QPS_ERR)
		return false;
	return true;
}

/* The first head bytes of note d's segments. */
static void note_head(struct urnic_direct_note *h, const struct urnic_direct_note *d, uint32_t head)
{
	uint64_t left = head;

	*h = *d;
	h->nseg = 0;
	for (uint32_t i = 0; i < d->nseg && left; i++) {
		h->seg[i].len = d->seg[i].len < left ? d->seg[i].len : left;
		left -= h->seg[i].len;
		h->nseg++;
	}
}

/*
 * A long READ's tail offered to its requester's process, which copies it on its CPU
 * while we copy the head on ours: the READ's first response, at its first PSN, without
 * payload, flagged URNIC_DIRECT_PULL and naming the tail in our memory, sent at once.
 * Only for an RC requester that takes offers, once the responses older requests owe
 * have left (the offer must be next in PSN order, after the ACK pending; a short READ
 * before a long one, as UCX's rendezvous sends them, is answered now), and only for a
 * region's key: the
 * region is held (deregistration waits) until the requester says it is done (PULLED).
 * Returns the head's length, or the READ's when nothing was offered.
 */
static uint32_t offer_tail(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
			   const struct urnic_mr_at *at, uint32_t *pull_gen)
{
	uint32_t len = pkt->reth.len, head = (len / 2) & ~4095u;
	struct urnic_pkt h = { 0 };
	struct urnic_txpkt *p;

	if (qp->type != URNIC_QPT_RC || len < URNIC_DIRECT_SPLIT_BYTES ||
	    !(e->rx_direct->flags & URNIC_DIRECT_CAN_PULL) || !urnic_rc_reply_owed(e, qp) ||
	    !urnic_mr_pull_hold(&e->mrs, pkt->reth.rkey, pull_gen))
		return len;
	urnic_rc_flush_pending_ack(e, qp);
	h.bth.opcode = URNIC_OP_RC_RDMA_READ_RESPONSE_FIRST;
	h.bth.psn = pkt->bth.psn;
	h.aeth.syndrome = URNIC_AETH_ACK_UNLIMITED;
	h.aeth.msn = (qp->resp.msn + 1) & URNIC_PSN_MASK; /* C9-148: with the READ */
	p = urnic_roce_emit(e, qp, &h, 0);
	p->direct_flags = URNIC_DIRECT_PULL;
	p->direct_nseg = 1;
	p->direct_seg[0] =
		(struct urnic_direct_seg){ (uint64_t)(uintptr_t)at->host + head, len - head };
	urnic_tx_commit(e, p);
	e->hooks.flush(e);
	urnic_count(e, URNIC_CTR_read_direct_split);
	return head;
}

/*
 * Direct placement (wire/addr.h): a READ from a process on this host that named where
 * its data goes, written there now, while the key checked a moment ago still holds (the
 * engine runs nothing else in between): one copy instead of response packets, which
 * the lane would carry with two; a long one's tail is offered to the requester to copy
 * meanwhile. Not for on-demand memory, whose bytes move only through the table's odp
 * calls. Returns the flags of the READ's one response (0: answered in packets; SPLIT
 * alone: answered in packets, but the tail was offered, and its region is held).
 */
static uint32_t read_direct(struct urnic_engine *e, struct urnic_qp *qp,
			    const struct urnic_pkt *pkt, const struct urnic_mr_at *at,
			    uint32_t *pull_gen)
{
	const struct urnic_direct_note *d = e->rx_direct;
	struct urnic_direct_note h;
	uint32_t len = pkt->reth.len, head;

	if (!d || !d->nseg || !e->hooks.direct_write || len < URNIC_DIRECT_MIN_BYTES || at->odp)
		return 0;
	head = offer_tail(e, qp, pkt, at, pull_gen);
	note_head(&h, d, head);
	/* What this pass has to send leaves before the copy (an offer did already). */
	if (head == len && e->tx.n)
		e->hooks.flush(e);
	if (e->hooks.direct_write(e, qp, &h, at->host, head)) {
		/* Answered in packets; the requester may be copying the tail of the offer,
		 * and still says when it is done. */
		return head == len ? 0 : URNIC_DIRECT_SPLIT;
	}
	urnic_count(e, URNIC_CTR_read_direct);
	urnic_count_n(e, URNIC_CTR_direct_bytes, head);
	return head == len ? URNIC_DIRECT_PLACED : URNIC_DIRECT_PLACED | URNIC_DIRECT_SPLIT;
}

/* A WRITE whose data is in its requester's memory (wire/addr.h): its note says so, and
 * it has the shape: WRITE ONLY, no payload, a length of at least URNIC_DIRECT_MIN_BYTES.
 * Of another shape it is an ordinary packet, and the length checks refuse it. */
static bool is_write_direct(const struct urnic_engine *e, const struct urnic_pkt *pkt)
{
	const struct urnic_direct_note *d = e->rx_direct;

	return d && (d->flags & URNIC_DIRECT_WRITE) && d->nseg && e->hooks.direct_read &&
	       pkt->bth.opcode == URNIC_OP_RC_RDMA_WRITE_ONLY && !pkt->payload_bytes &&
	       pkt->reth.len >= URNIC_DIRECT_MIN_BYTES && pkt->reth.len <= e->cfg.max_msg_bytes;
}

/*
 * Executes a direct WRITE: the R_Key, bounds and rights for the whole length, as for
 * any WRITE (IBTA 9.7.5.1.7), then one copy from the requester's memory, and the PSNs
 * its packets would have taken, acknowledged by the last. If the copy fails (the
 * kernel refused, on-demand memory here), a sequence NAK at its PSN has the requester
 * send it again, in packets.
 */
static void rx_write_direct(struct urnic_engine *e, struct urnic_qp *qp,
			    const struct urnic_pkt *pkt)
{
	struct urnic_resp *r = &qp->resp;
	uint32_t psn = pkt->bth.psn, len = pkt->reth.len;
	uint32_t npsn = (len + qp->attr.path_mtu - 1) / qp->attr.path_mtu;
	struct urnic_direct_seg to;
	struct urnic_mr_at at;

	if (urnic_mr_resolve_remote(&e->mrs, qp->pd, qp->qpn, pkt->reth.rkey, pkt->reth.va, len,
				    URNIC_ACCESS_REMOTE_WRITE, &at) != URNIC_MR_OK) {
		urnic_rc_nak_class_c(e, qp, psn, URNIC_NAK_REM_ACCESS_ERR);
		return;
	}
	to = (struct urnic_direct_seg){ (uint64_t)(uintptr_t)at.host, len };
	/* What this pass has to send leaves before the copy. */
	if (!at.odp && e->tx.n)
		e->hooks.flush(e);
	if (at.odp || e->hooks.direct_read(e, qp, e->rx_direct, &to, 1, false)) {
		r->sent_psn_nak = true;
		queue_nak(e, qp, psn, URNIC_AETH_NAK | URNIC_NAK_PSN_SEQ_ERR);
		urnic_count(e, URNIC_CTR_nak_seq_sent);
		return;
	}
	urnic_count(e, URNIC_CTR_write_direct_placed);
	urnic_count_n(e, URNIC_CTR_direct_bytes, len);
	r->msn++;
	r->epsn = urnic_psn_add(psn, npsn);
	urnic_rc_queue_ack(qp, urnic_psn_add(psn, npsn - 1));
}

/* Checks a READ request and executes it: its responses are owed from now on. */
static void rx_read(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt)
{
	uint32_t psn = pkt->bth.psn, direct, pull_gen = 0;
	struct urnic_mr_at at = { 0 };
	enum urnic_mr_check chk;

	/* C9-94: no longer than the port's largest message (max_msg_sz, 2^31 by
	 * default): the most response bytes one READ request may draw. */
	if (pkt->reth.len > e->cfg.max_msg_bytes) {
		urnic_count(e, URNIC_CTR_refused_read_len);
		urnic_rc_nak_class_c(e, qp, psn, URNIC_NAK_INVALID_REQ);
		return;
	}
	/* C9-88: a zero-length READ checks no R_Key. */
	if (pkt->reth.len) {
		chk = urnic_mr_resolve_remote(&e->mrs, qp->pd, qp->qpn, pkt->reth.rkey,
					      pkt->reth.va, pkt->reth.len, URNIC_ACCESS_REMOTE_READ,
					      &at);
		if (chk != URNIC_MR_OK) {
			urnic_rc_nak_class_c(e, qp, psn, URNIC_NAK_REM_ACCESS_ERR);
			return;
		}
	}
	if (urnic_rc_res_exhausted(e, qp, psn))
		return;
	direct = read_direct(e, qp, pkt, &at, &pull_gen);
	urnic_rc_execute_read(e, qp, pkt, at.gen, direct, pull_gen);
}

/* Checks a CMP_AND_SWP or FETCH_AND_ADD request, executes and answers it. */
static void rx_atomic(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt)
{
	uint32_t psn = pkt->bth.psn;
	struct urnic_mr_at at;

	/* IBTA 9.4.5: the target must be 8-byte aligned, else invalid request. */
	if (pkt->atmeth.va & 7) {
		urnic_rc_nak_class_c(e, qp, psn, URNIC_NAK_INVALID_REQ);
		return;
	}
	if (!atomic_target(e, qp, psn, pkt->atmeth.rkey, pkt->atmeth.va, URNIC_ACCESS_REMOTE_ATOMIC,
			   &at))
		return;
	if (urnic_rc_res_exhausted(e, qp, psn))
		return;
	qp->resp.epsn = urnic_psn_add(psn, 1);
	urnic_rc_execute_atomic(e, qp, pkt, at.host);
}

void urnic_rc_responder_rx(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt)
{
	uint32_t flags = urnic_opcode_info(pkt->bth.opcode)->flags;
	uint32_t psn = pkt->bth.psn;

	if (!check_request(e, qp, pkt, flags))
		return;
	if (is_write_direct(e, pkt)) {
		rx_write_direct(e, qp, pkt);
		return;
	}
	if (flags & URNIC_OPF_WRITE) {
		if (!rx_write(e, qp, pkt, flags))
			return;
	} else if (flags & URNIC_OPF_SEND) {
		if (!rx_send(e, qp, pkt, flags))
			return;
	} else if (flags & URNIC_OPF_READ) {
		rx_read(e, qp, pkt);
		return;
	} else if (flags & URNIC_OPF_ATOMIC) {
		rx_atomic(e, qp, pkt);
		return;
	} else if (flags & (URNIC_OPF_ATOMIC_WRITE | URNIC_OPF_FLUSH)) {
		a19_request(e, qp, pkt, flags);
		return;
	}
	qp->resp.epsn = urnic_psn_add(psn, 1);
	if (pkt->bth.ackreq)
		urnic_rc_queue_ack(qp, psn);
}
