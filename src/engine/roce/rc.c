/* SPDX-License-Identifier: MIT */
/*
 * rc.c - the Reliable Connected QP type (IBTA 9.7) behind the core's ops: requests go
 * to the responder, responses and ACKs to the completer; a pass runs the responder's
 * replies and the requester's new work in the order that lets a held ACK ride behind
 * the application's answer (hold.c). The XRC types (xrc.c) are RC on the wire and share
 * these entries.
 */
#include "engine/roce/cc.h"
#include "engine/roce/rc.h"

#include "engine/roce/hold.h"

#include "engine/roce/roce.h"
#include "wire/psn.h"

void urnic_rc_op_rx(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
		    const struct urnic_rx_meta *m)
{
	(void)m;
	/* The requester's word that it is done with an offer (wire/addr.h): a lane's only. */
	if (e->rx_direct && (e->rx_direct->flags & URNIC_DIRECT_PULLED)) {
		urnic_rc_pulled(e, qp, pkt->bth.psn);
		return;
	}
	if (urnic_opcode_info(pkt->bth.opcode)->flags & URNIC_OPF_REQ) {
		e->hold.rx_requests++;
		qp->resp.heard_since_send = true;
		urnic_rc_responder_rx(e, qp, pkt);
		return;
	}
	/* An ACK of a ping-pong before the peer's answer to what we sent: the answer may
	 * come in a later datagram (a message of several packets) or, if the peer's hold
	 * expired, much later. */
	if (pkt->bth.opcode == URNIC_OP_RC_ACKNOWLEDGE && qp->resp.ack_interactive &&
	    !qp->resp.heard_since_send)
		e->hold.answers_due++;
	urnic_rc_completer_rx(e, qp, pkt);
}

/* A request near the PSN the responder expects (IBTA 9.7.5.1.1), or a response to a PSN
 * outstanding (the completer's window, 9.7.5.2). */
bool urnic_rc_op_from_peer(const struct urnic_qp *qp, const struct urnic_pkt *pkt)
{
	if (!(urnic_opcode_info(pkt->bth.opcode)->flags & URNIC_OPF_REQ))
		return urnic_psn_diff(pkt->bth.psn, qp->comp.psn) >= -1 &&
		       urnic_psn_diff(pkt->bth.psn, qp->req.psn) < 0;
	return roce_request_near(qp, pkt->bth.psn);
}

bool urnic_rc_op_progress(struct urnic_engine *e, struct urnic_qp *qp)
{
	/* An ACK that is not held leaves before new requests, as rxe sends it on receipt:
	 * an application waiting for events counts on its send completion coming before
	 * the peer's answer (perftest -e re-arms only the CQ it was woken for). An ACK held
	 * for the application's answer leaves right behind it, in the same GSO send, so
	 * that the peer's poll takes in both (hold.c). */
	bool held = qp->resp.ack_pending && qp->resp.ack_hold_ns;
	uint32_t psn = qp->req.psn;
	bool answered = false, did = false;

	if (!held && qp->state >= URNIC_QPS_RTR)
		did |= urnic_rc_responder_progress(e, qp, false);
	if (qp->state == URNIC_QPS_RTS) {
		did |= urnic_rc_requester_progress(e, qp);
		answered = qp->req.psn != psn;
		if (answered) {
			qp->resp.heard_since_send = false;
			urnic_roce_hold_answered(e, qp);
		}
	}
	if (held && qp->state >= URNIC_QPS_RTR)
		did |= urnic_rc_responder_progress(e, qp, answered);
	return did;
}

void urnic_rc_op_timers(struct urnic_engine *e, struct urnic_qp *qp, uint64_t *next, uint64_t *hold)
{
	urnic_rc_completer_timers(e, qp, next);
	urnic_roce_cc_timers(e, qp, next);
	if (qp->resp.ack_pending && qp->resp.ack_hold_ns)
		urnic_engine_note_hold(e, qp->resp.ack_hold_ns, hold); /* progress sends it */
}

void urnic_rc_op_flush(struct urnic_engine *e, struct urnic_qp *qp)
{
	urnic_rc_flush(e, qp);
	urnic_roce_flush_rq(e, qp);
}

/* An ACK held for the application's answer leaves now, and the tx batch with it.
 * parting: the QP goes away, and its last ACK is sent again if the peer may still wait
 * for it (responder.c, urnic_rc_parting_ack). */
void urnic_rc_op_release_held(struct urnic_engine *e, struct urnic_qp *qp, bool parting)
{
	if (parting)
		urnic_rc_release_pulls(e, qp);
	if (qp->state < URNIC_QPS_RTR || qp->state == URNIC_QPS_ERR ||
	    (!parting && !qp->resp.ack_pending))
		return;
	urnic_rc_flush_pending_ack(e, qp);
	if (parting)
		urnic_rc_parting_ack(e, qp);
	if (e->tx.n)
		e->hooks.flush(e);
}

/* The ACK already owed for requests this QP executed still goes out (rxe sends each
 * ACK as it executes the request; only coalescing held it back), or the peer would
 * fail work its receiver has completed. */
void urnic_rc_op_enter_error(struct urnic_engine *e, struct urnic_qp *qp, bool fatal)
{
	if (fatal && qp->state >= URNIC_QPS_RTR)
		urnic_rc_flush_pending_ack(e, qp);
}

const struct urnic_qp_ops urnic_roce_rc_ops = {
	.name = "RC",
	.opcode_flag = URNIC_OPF_RC,
	.opcode_base = URNIC_OP_RC_SEND_FIRST,
	.connected = true,
	.rx = urnic_rc_op_rx,
	.from_peer = urnic_rc_op_from_peer,
	.progress = urnic_rc_op_progress,
	.timers = urnic_rc_op_timers,
	.flush = urnic_rc_op_flush,
	.release_held = urnic_rc_op_release_held,
	.enter_error = urnic_rc_op_enter_error,
};
