/* SPDX-License-Identifier: MIT */
/*
 * error.c - completions and the error state: a CQ overrun (IBTA 11.4.2.1) and a QP
 * that enters error, by itself or by modify, flushing its work (IBTA 10.3.1). The QP
 * type's own part (an ACK still owed, completions held) runs through its ops first.
 */
#include <stdatomic.h>

#include "engine/slots.h"

bool urnic_complete(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_cq *cq,
		    const struct urnic_cqe *cqe, bool solicited)
{
	if (urnic_cq_push(cq, cqe, solicited))
		return true;
	/* IBTA 11.4.2.1 (CQ overrun): the QP goes to the error state. */
	urnic_count(e, URNIC_CTR_cq_overflow);
	if (qp->state != URNIC_QPS_ERR)
		urnic_qp_to_error(e, qp);
	return false;
}

/* by_itself: not by ibv_modify_qp, so ev is raised (unless NONE). */
static void enter_error(struct urnic_engine *e, struct urnic_qp *qp, bool by_itself,
			enum urnic_qp_event ev)
{
	bool was_error = qp->state == URNIC_QPS_ERR;

	urnic_engine_qp_wake(e, qp);
	qp->ops->enter_error(e, qp, by_itself);
	qp->state = URNIC_QPS_ERR;
	slot_note_state(e, qp);
	qp->req.rto_deadline_ns = 0;
	qp->req.rnr_deadline_ns = 0;
	qp->resp.ack_pending = false;
	qp->resp.ack_hold_ns = 0;
	qp->resp.replying = 0;
	qp->ops->flush(e, qp);
	if (by_itself && ev != URNIC_QP_EV_NONE && e->hooks.qp_error)
		e->hooks.qp_error(e, qp, ev);
	/* IBTA 10.2.9 / 11.6.3: a QP on an SRQ that enters error will take no more of its
	 * WQEs; the application learns it from the Last WQE Reached event. An XRC receive
	 * QP is on no SRQ: it serves any of its domain's, request by request (A14). */
	if (!was_error && qp->srq && qp->type != URNIC_QPT_XRC_RECV && e->hooks.qp_last_wqe)
		e->hooks.qp_last_wqe(e, qp);
}

void urnic_engine_enter_error(struct urnic_engine *e, struct urnic_qp *qp, bool fatal)
{
	enter_error(e, qp, fatal, URNIC_QP_EV_FATAL);
}

void urnic_qp_to_error(struct urnic_engine *e, struct urnic_qp *qp)
{
	enter_error(e, qp, qp->state != URNIC_QPS_ERR, URNIC_QP_EV_FATAL);
}

void urnic_qp_to_error_event(struct urnic_engine *e, struct urnic_qp *qp, enum urnic_qp_event ev)
{
	enter_error(e, qp, qp->state != URNIC_QPS_ERR, ev);
}
