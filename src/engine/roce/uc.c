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

#include "engine/roce/cc.h"
#include "engine/roce/hold.h"
#include "engine/roce/rc.h"
#include "engine/roce/roce.h"
#include "wire/psn.h"

static bool uc_send_packet(struct urnic_engine *e, struct urnic_qp *qp,
			   const struct urnic_send_wqe *w, int *err)
{
	return urnic_roce_send_data_packet(e, qp, w, err);
}

static bool uc_progress(struct urnic_engine *e, struct urnic_qp *qp)
{
	if (qp->state != URNIC_QPS_RTS)
		return false;
	return urnic_roce_unreliable_send(e, qp, uc_send_packet, urnic_roce_hold_uc_comp);
}

static void uc_release(struct urnic_engine *e, struct urnic_qp *qp)
{
	if (!qp->comp.uc_hold_ns)
		return;
	qp->comp.uc_hold_ns = 0;
	urnic_roce_complete_sent(e, qp);
}

/* The peer's request: what held completions wait for, or a sign that it answers. */
static void peer_answered(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_comp *c = &qp->comp;

	if (c->uc_hold_ns) {
		c->uc_hold_misses = 0;
		uc_release(e, qp);
	} else if (!c->uc_interactive && c->uc_alone_ns &&
		   e->now_ns - c->uc_alone_ns <= ROCE_UC_ANSWER_WINDOW_NS) {
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

static void uc_rx(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
		  const struct urnic_rx_meta *m)
{
	struct urnic_resp *r = &qp->resp;
	uint32_t flags = urnic_opcode_info(pkt->bth.opcode)->flags;
	bool first = flags & URNIC_OPF_FIRST;

	(void)m;
	e->hold.rx_requests++;
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
	if (!urnic_roce_op_sequence_ok(r, flags)) {
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
	    !urnic_roce_take_rwqe(e, qp)) {
		drop_message(e, qp, URNIC_CTR_drop_no_rwqe);
		return;
	}
	/* 5. Lengths (IBTA 9.7.5.1.6), 6. R_Key, bounds, rights of a WRITE (9.7.5.1.7). */
	if (!urnic_roce_payload_len_ok(flags, pkt->payload_bytes, qp->attr.path_mtu)) {
		drop_message(e, qp, URNIC_CTR_drop_uc_invalid);
		return;
	}
	if (flags & URNIC_OPF_WRITE) {
		struct urnic_mr_at at;

		if (urnic_roce_write_check(e, qp, pkt, flags, &at) != ROCE_WRITE_OK) {
			drop_message(e, qp, URNIC_CTR_drop_uc_invalid);
			return;
		}
		/* On-demand memory not mapped writable: the rest of the message is
		 * dropped as for a bad R_Key (counted as odp_fault_remote). */
		if (urnic_roce_recv_write(e, qp, pkt, flags, &at)) {
			drop_message(e, qp, URNIC_CTR_drop_uc_invalid);
			return;
		}
	} else {
		int ret;

		if (first)
			r->rwqe_off = 0; /* a reused WQE is filled from its start */
		ret = urnic_roce_recv_send(e, qp, pkt, flags);
		if (ret == -EMSGSIZE) {
			urnic_roce_recv_too_long(e, qp, pkt);
			abandon(qp);
			r->uc_dropping = true;
		} else if (ret) {
			/* A receive SGE that does not resolve: a local protection error
			 * (IBTA 10.8.3.1), the WQE completes with it, the QP goes to error. */
			urnic_roce_complete_rwqe(e, qp, pkt, URNIC_WC_RECV, r->rwqe_off,
						 URNIC_WC_LOC_PROT_ERR);
			urnic_qp_to_error(e, qp);
		}
	}
}

/* A request near the PSN the responder expects (IBTA 9.8: what UC takes). */
static bool uc_from_peer(const struct urnic_qp *qp, const struct urnic_pkt *pkt)
{
	return roce_request_near(qp, pkt->bth.psn);
}

/* Held completions: the requester's progress releases them once the hold ends. */
static void uc_timers(struct urnic_engine *e, struct urnic_qp *qp, uint64_t *next, uint64_t *hold)
{
	urnic_roce_cc_timers(e, qp, next);
	if (qp->comp.uc_hold_ns)
		urnic_engine_note_hold(e, qp->comp.uc_hold_ns, hold);
}

/* Send completions held for the answer are reported before the QP changes state or
 * goes away. */
static void uc_release_held(struct urnic_engine *e, struct urnic_qp *qp, bool parting)
{
	(void)parting;
	uc_release(e, qp);
}

/* Sends held for the answer left: they complete successfully, before the flush (a CQ
 * overrun while they do ends here again with nothing held). */
static void uc_enter_error(struct urnic_engine *e, struct urnic_qp *qp, bool fatal)
{
	(void)fatal;
	uc_release(e, qp);
}

const struct urnic_qp_ops urnic_roce_uc_ops = {
	.name = "UC",
	.opcode_flag = URNIC_OPF_UC,
	.opcode_base = URNIC_OP_UC_SEND_FIRST,
	.connected = true,
	.rx = uc_rx,
	.from_peer = uc_from_peer,
	.progress = uc_progress,
	.timers = uc_timers,
	.flush = urnic_rc_op_flush,
	.release_held = uc_release_held,
	.enter_error = uc_enter_error,
};
