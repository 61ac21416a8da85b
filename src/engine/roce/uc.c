/* SPDX-License-Identifier: MIT */
/*
 * uc.c - Unreliable Connection: SEND and RDMA WRITE (with immediate) without ACKs.
 *
 * IBTA 9.8 (unreliable service) as rxe implements it. The requester segments like RC
 * with the UC opcodes (0x20..0x2b), never sets AckReq, and completes a WQE once its
 * last packet is sent. The responder validates like RC's, in the same order, but never
 * answers: a PSN other than the expected one means packets were lost, so the message
 * in progress is dropped and everything up to the next FIRST or ONLY with it, whatever
 * that packet's PSN (rxe check_psn: "UC: drop until next FIRST/ONLY"); the receive WQE
 * the broken message was filling is reused for the next one. No receive WQE (no RNR on
 * UC), an operation the QP does not grant, a bad length or R_Key, a message longer than
 * the receive buffer: the message is dropped silently, counted (rxe's classes D and E;
 * with an SRQ a too-long message completes its WQE with REM_INV_REQ_ERR, as in rxe).
 * Unlike rxe, a FIRST/ONLY that arrives while a message is in progress starts a new
 * message (rxe drops it too, class D1, and so loses the message after a lost LAST).
 * Out of scope: READ, atomics (not UC operations).
 */
#include <errno.h>

#include "engine/roce/rc.h"
#include "wire/psn.h"

static bool uc_send_packet(struct urnic_engine *e, struct urnic_qp *qp,
			   const struct urnic_send_wqe *w, int *err)
{
	return roce_send_data_packet(e, qp, w, err);
}

bool urnic_uc_requester_progress(struct urnic_engine *e, struct urnic_qp *qp)
{
	return roce_unreliable_send(e, qp, uc_send_packet);
}

/*
 * Holding send completions for the peer's answer. UC has no ACK: a SEND or WRITE is
 * complete once its last packet has left (IBTA 9.8). In a ping-pong (ib_write_lat -c
 * UC, a request/response protocol) the application then has its completion at once
 * and waits for the answer; when it waits on memory (for the peer's RDMA WRITE), no
 * verbs call lets urnic take the answer in, and only the engine thread, woken on the
 * other CPU, can: 62-88 us per one-way trip here, against 7 us for RC, whose
 * responder holds its ACK and sends it with the answer (responder.c, rc_ack_held).
 * So a UC requester holds the completion while the application polls, and the poll
 * that takes the answer in reports both. When a completion is reported is the
 * device's to choose, within the order of the queue (a slow NIC reports late too),
 * and the hold is short: UC_HOLD_FACTOR times engine.ack_hold_max_ns
 * (URNIC_ACK_HOLD_US, 100 us; 0 turns both holds off). It spans a round trip, 10-20
 * us here (at 20 us, half the holds expired; 100 us was 5 x the ACK hold of 20 us
 * until session 11 made that 100 us too).
 *
 * A QP holds once the peer's request came within UC_ANSWER_WINDOW_NS of completions
 * released without an answer (in the slow path above the answer takes 30-80 us, more
 * when the scheduler gives a spinning thread a whole slice: with a 250 us window some
 * runs held only a third of their rounds), and stops after ROCE_HOLD_MISSES holds in a
 * row expire, so a stream one way is held at most that often. Nothing is held while
 * no application polls or the send CQ is armed (an event-driven application answers
 * after a wake-up), nor unless the send queue is a ping-pong's: one signaled WQE out,
 * nothing behind it (a stream's completions, held until the peer's next request, would
 * hold back its next posts).
 * Released: by the peer's next request on the QP, before it is executed (the send
 * completion comes first, as it happened first); on expiry; when the application
 * stops polling or posts again; before the QP changes state or goes away (engine.c,
 * release_held).
 */
enum { UC_ANSWER_WINDOW_NS = 2000000, UC_HOLD_FACTOR = 1 };

/* A ping-pong's send queue: one WQE sent and not completed, nothing behind it, and
 * the application asked for its completion. A stream has more in the queue (held, its
 * completions would hold back the application's next posts). */
static bool one_signaled_wqe(const struct urnic_qp *qp)
{
	const struct urnic_send_wqe *w = urnic_wq_slot(&qp->sq, qp->comp.idx);

	return qp->req.idx - qp->comp.idx == 1 &&
	       atomic_load_explicit(&qp->sq.prod, memory_order_acquire) == qp->req.idx &&
	       (qp->sq_sig_all || (w->flags & URNIC_SEND_SIGNALED));
}

bool urnic_uc_comp_held(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_comp *c = &qp->comp;

	if (!c->uc_interactive || !e->app_polling || !e->ack_hold_max_ns ||
	    roce_cq_armed(qp->send_cq) || !one_signaled_wqe(qp)) {
		c->uc_hold_ns = 0;
		c->uc_alone_ns = e->now_ns;
		return false;
	}
	if (c->uc_hold_ns) {
		if (e->now_ns < c->uc_hold_ns)
			return true;
		if (++c->uc_hold_misses == ROCE_HOLD_MISSES) {
			c->uc_interactive = false;
			c->uc_hold_misses = 0;
		}
		urnic_count(e, URNIC_CTR_comp_hold_expired);
		e->answers_due++; /* the answer is still to come */
		c->uc_hold_ns = 0;
		c->uc_alone_ns = e->now_ns;
		return false;
	}
	c->uc_hold_ns = e->now_ns + (uint64_t)e->ack_hold_max_ns * UC_HOLD_FACTOR;
	urnic_count(e, URNIC_CTR_comp_held);
	return true;
}

void urnic_uc_release_held(struct urnic_engine *e, struct urnic_qp *qp)
{
	if (!qp->comp.uc_hold_ns)
		return;
	qp->comp.uc_hold_ns = 0;
	roce_complete_sent(e, qp);
}

/* The peer's request: what held completions wait for, or a sign that it answers. */
static void peer_answered(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_comp *c = &qp->comp;

	if (c->uc_hold_ns) {
		c->uc_hold_misses = 0;
		urnic_uc_release_held(e, qp);
	} else if (!c->uc_interactive && c->uc_alone_ns &&
		   e->now_ns - c->uc_alone_ns <= UC_ANSWER_WINDOW_NS) {
		c->uc_interactive = true;
	}
}

/* Forgets the message in progress; a held receive WQE stays for the next message. */
static void abandon(struct urnic_qp *qp)
{
	qp->resp.in_send = false;
	qp->resp.in_write = false;
	qp->resp.rwqe_off = 0;
}

/* Drops this packet and the rest of its message (until the next FIRST/ONLY). */
static void drop_message(struct urnic_engine *e, struct urnic_qp *qp, enum urnic_counter why)
{
	abandon(qp);
	qp->resp.uc_dropping = true;
	urnic_count(e, why);
}

void urnic_uc_responder_rx(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt)
{
	struct urnic_resp *r = &qp->resp;
	uint32_t flags = urnic_opcode_info(pkt->bth.opcode)->flags;
	bool first = flags & URNIC_OPF_FIRST;

	peer_answered(e, qp);
	/* 1. PSN (IBTA 9.8: no retransmission on UC, so a gap is loss): resynchronise on
	 * a FIRST/ONLY, drop anything else. */
	if (pkt->bth.psn != r->epsn || r->uc_dropping) {
		if (!first) {
			drop_message(e, qp, URNIC_CTR_drop_uc_seq);
			return;
		}
		if (r->in_send || r->in_write)
			urnic_count(e, URNIC_CTR_drop_uc_seq); /* the broken message's end */
		abandon(qp);
		r->uc_dropping = false;
	}
	r->epsn = urnic_psn_add(pkt->bth.psn, 1);

	/* 2. Opcode sequence (IBTA 9.7.5.1.4 as UC applies it): a FIRST/ONLY inside a
	 * message ends that message unfinished; a MIDDLE/LAST outside one is dropped. */
	if (!roce_op_sequence_ok(r, flags)) {
		if (!first) {
			drop_message(e, qp, URNIC_CTR_drop_uc_seq);
			return;
		}
		urnic_count(e, URNIC_CTR_drop_uc_seq);
		abandon(qp);
	}
	/* 3. The QP must grant RDMA WRITE (its access flags; rxe check_op_valid). */
	if ((flags & URNIC_OPF_WRITE) && !(qp->attr.access & URNIC_ACCESS_REMOTE_WRITE)) {
		drop_message(e, qp, URNIC_CTR_drop_uc_invalid);
		return;
	}
	/* 4. A receive WQE for SENDs and WRITE with immediate: none is a silent drop. */
	if (roce_needs_rwqe(flags) && (flags & (URNIC_OPF_FIRST | URNIC_OPF_LAST)) &&
	    !roce_take_rwqe(e, qp)) {
		drop_message(e, qp, URNIC_CTR_drop_no_rwqe);
		return;
	}
	/* 5. Lengths (IBTA 9.7.5.1.6), 6. R_Key, bounds, rights of a WRITE (9.7.5.1.7). */
	if (!roce_payload_len_ok(flags, pkt->payload_bytes, qp->attr.path_mtu)) {
		drop_message(e, qp, URNIC_CTR_drop_uc_invalid);
		return;
	}
	if (flags & URNIC_OPF_WRITE) {
		uint8_t *host;

		if (roce_write_check(e, qp, pkt, flags, &host) != ROCE_WRITE_OK) {
			drop_message(e, qp, URNIC_CTR_drop_uc_invalid);
			return;
		}
		roce_recv_write(e, qp, pkt, flags, host);
	} else {
		int ret;

		if (first)
			r->rwqe_off = 0; /* a reused WQE is filled from its start */
		ret = roce_recv_send(e, qp, pkt, flags);
		if (ret == -EMSGSIZE) {
			roce_recv_too_long(e, qp, pkt);
			abandon(qp);
			r->uc_dropping = true;
		} else if (ret) {
			/* A receive SGE that does not resolve: a local protection error
			 * (IBTA 10.8.3.1), the WQE completes with it, the QP goes to error. */
			roce_complete_rwqe(e, qp, pkt, URNIC_WC_RECV, r->rwqe_off,
					   URNIC_WC_LOC_PROT_ERR);
			urnic_qp_to_error(e, qp);
		}
	}
}
