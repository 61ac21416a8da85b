/* SPDX-License-Identifier: MIT */
/*
 * xrc.c - the XRC QP types (IBTA Annex A14) behind the core's ops. An XRC send QP is an
 * RC requester whose every request names an SRQ at the target (XRCETH); an XRC receive
 * QP is an RC responder with no queue, PD or CQ of its own: a request takes the receive
 * WQEs, PD and CQ of the XRC SRQ it names, which must belong to the receive QP's XRC
 * domain. On the wire XRC is RC under transport 0b101, so both types run RC's parts
 * (rc.c) on the packet with its opcode in the RC range, and msg.c's emitter puts what
 * they send back under XRC's. Out of scope: a domain's SRQs in another process.
 */
#include "engine/roce/rc.h"
#include "engine/roce/roce.h"

/* The packet as RC's parts read it: the same headers under the RC opcode. */
static void as_rc(struct urnic_pkt *rc, const struct urnic_pkt *pkt)
{
	*rc = *pkt;
	rc->bth.opcode = (uint8_t)(pkt->bth.opcode & URNIC_OPCODE_OP_MASK);
}

static bool is_request(const struct urnic_pkt *pkt)
{
	return urnic_opcode_info(pkt->bth.opcode)->flags & URNIC_OPF_REQ;
}

/* A send QP takes the responses to its requests and nothing else: it has no responder
 * (IBTA A14: requests go to receive QPs). */
static void xrc_send_rx(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
			const struct urnic_rx_meta *m)
{
	struct urnic_pkt rc;

	if (is_request(pkt)) {
		urnic_count(e, URNIC_CTR_drop_xrc_request_to_send_qp);
		return;
	}
	as_rc(&rc, pkt);
	urnic_rc_op_rx(e, qp, &rc, m);
}

static bool xrc_send_from_peer(const struct urnic_qp *qp, const struct urnic_pkt *pkt)
{
	return !is_request(pkt) && urnic_rc_op_from_peer(qp, pkt);
}

/*
 * The request at the expected PSN takes the SRQ its XRCETH names, with that SRQ's PD
 * (every R_Key and receive SGE is checked against it) and CQ: IBTA A14 gives an XRC
 * receive QP no PD of its own, and the kernel's XRC target QPs have none. The SRQ must
 * be an XRC SRQ of the receive QP's domain, and a message under way keeps the SRQ its
 * first packet named (its WQE, its R_Key's PD). Anything else is an invalid request:
 * NAK, and the receive QP goes to error (IBTA 9.7.5.1, 9.9.3.1 class C), as for the
 * other requests a responder cannot execute. Checked after the PSN, before the opcode
 * sequence and everything that uses the SRQ. Returns false when refused.
 */
static bool take_srq(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt)
{
	struct urnic_srq *srq = urnic_engine_srq_find(e, pkt->xrc_srqn);
	const struct urnic_resp *r = &qp->resp;

	if (!srq || !srq->xrcd || srq->xrcd != qp->xrcd ||
	    (srq != qp->srq && (r->in_send || r->in_write || r->have_rwqe))) {
		urnic_count(e, URNIC_CTR_refused_xrc_srq);
		urnic_rc_nak_class_c(e, qp, pkt->bth.psn, URNIC_NAK_INVALID_REQ);
		return false;
	}
	qp->srq = srq;
	qp->pd = srq->pd;
	qp->recv_cq = srq->cq;
	return true;
}

/* A receive QP takes requests only. A duplicate is answered from what the QP kept (a
 * READ from its resource, with the PD it was executed under) and a request ahead draws
 * a sequence NAK, neither using an SRQ: only the expected PSN takes one. */
static void xrc_recv_rx(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
			const struct urnic_rx_meta *m)
{
	struct urnic_pkt rc;

	if (!is_request(pkt)) {
		urnic_count(e, URNIC_CTR_drop_xrc_response_to_recv_qp);
		return;
	}
	if (pkt->bth.psn == qp->resp.epsn && !take_srq(e, qp, pkt))
		return;
	as_rc(&rc, pkt);
	urnic_rc_op_rx(e, qp, &rc, m);
}

static bool xrc_recv_from_peer(const struct urnic_qp *qp, const struct urnic_pkt *pkt)
{
	return is_request(pkt) && urnic_rc_op_from_peer(qp, pkt);
}

/* The rest is RC's: a send QP's responder and a receive QP's requester find nothing to
 * do (no request reaches the one, nothing is posted to the other). */
const struct urnic_qp_ops urnic_roce_xrc_send_ops = {
	.name = "XRC send",
	.opcode_flag = URNIC_OPF_XRC,
	.opcode_base = URNIC_OP_XRC_SEND_FIRST,
	.connected = true,
	.rx = xrc_send_rx,
	.from_peer = xrc_send_from_peer,
	.progress = urnic_rc_op_progress,
	.timers = urnic_rc_op_timers,
	.flush = urnic_rc_op_flush,
	.release_held = urnic_rc_op_release_held,
	.enter_error = urnic_rc_op_enter_error,
};

const struct urnic_qp_ops urnic_roce_xrc_recv_ops = {
	.name = "XRC receive",
	.opcode_flag = URNIC_OPF_XRC,
	.opcode_base = URNIC_OP_XRC_SEND_FIRST,
	.connected = true,
	.rx = xrc_recv_rx,
	.from_peer = xrc_recv_from_peer,
	.progress = urnic_rc_op_progress,
	.timers = urnic_rc_op_timers,
	.flush = urnic_rc_op_flush,
	.release_held = urnic_rc_op_release_held,
	.enter_error = urnic_rc_op_enter_error,
};
