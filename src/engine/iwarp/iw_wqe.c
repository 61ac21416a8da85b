/* SPDX-License-Identifier: MIT */
/*
 * iw_wqe.c - completions of an iWARP QP's work requests: send WQEs in post order once
 * done (a Send or Write when the socket took its last byte, RFC 5040 5.1; a Read when its
 * last Read Response came; a local operation when reached), receive WQEs when their
 * Send's last segment came or the message failed.
 *
 * The completion of a ping-pong's RDMA Write waits for the peer's answer while the
 * application polls, as a UC requester's does (roce/hold.c, urnic_roce_hold_uc_comp,
 * the same rules and fields): TCP has no ACK that the answer could carry back, so the
 * application had its completion at once and waited for the answer on memory
 * (ib_write_lat), where only an engine thread woken on the other CPU took it in: 140-440
 * us a round here, against 4 us for RoCE. When a completion is reported is the device's
 * to choose, within the queue's order (RFC 5040 5.1 asks only that it come after the LLP
 * took the last byte). Sends are not held: their answer is a receive completion, which
 * the application polls for and so takes in itself, and a held Send that nothing
 * answers (the last message of rdma_cm users' exchanges, perftest's) only delays what
 * the application does next.
 */
#include "engine/iwarp/iw.h"
#include "engine/roce/hold.h"
#include "engine/roce/rc.h"

void urnic_iw_push_rwqe(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_cqe *cqe,
			bool solicited)
{
	struct urnic_resp *r = &qp->resp;

	cqe->wr_id = urnic_roce_rwqe(qp)->wr_id;
	cqe->qp_num = qp->qpn;
	cqe->opcode = URNIC_WC_RECV;
	cqe->byte_len = r->rwqe_off;
	r->have_rwqe = false;
	r->rwqe_off = 0;
	if (!qp->srq)
		atomic_store_explicit(&qp->rq.cons,
				      atomic_load_explicit(&qp->rq.cons, memory_order_relaxed) + 1,
				      memory_order_release);
	urnic_complete(e, qp, qp->recv_cq, cqe, solicited);
}

void urnic_iw_fail_rwqe(struct urnic_engine *e, struct urnic_qp *qp, uint8_t status)
{
	struct urnic_cqe cqe = { .status = status };

	if (qp->resp.have_rwqe && qp->recv_cq)
		urnic_iw_push_rwqe(e, qp, &cqe, false);
}

/* The send WQEs at the head of the SQ that are done, in post order; may_hold: a Send or
 * Write whose bytes went may wait for the peer's answer (urnic_iw_hold_answered). */
static void complete_sq(struct urnic_engine *e, struct urnic_qp *qp, bool may_hold)
{
	struct urnic_iw_qp *iw = qp->iw;

	while (qp->state == URNIC_QPS_RTS && qp->comp.idx != qp->req.idx) {
		struct urnic_send_wqe *w = rc_swqe(qp, qp->comp.idx);
		bool read = w->opcode == URNIC_WR_RDMA_READ;

		if (read ? !w->done : iw->out.sent < iw->wqe_end[qp->comp.idx & iw->wqe_mask])
			break;
		if (w->opcode == URNIC_WR_RDMA_WRITE && may_hold && urnic_roce_hold_uc_comp(e, qp))
			break;
		urnic_roce_complete_swqe(e, qp, URNIC_WC_SUCCESS);
	}
}

void urnic_iw_complete_sq(struct urnic_engine *e, struct urnic_qp *qp)
{
	complete_sq(e, qp, true);
}

void urnic_iw_release_held(struct urnic_engine *e, struct urnic_qp *qp)
{
	if (!qp->comp.uc_hold_ns)
		return;
	qp->comp.uc_hold_ns = 0;
	complete_sq(e, qp, false);
}

void urnic_iw_hold_answered(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_comp *c = &qp->comp;

	e->hold.rx_requests++;
	if (c->uc_hold_ns) {
		c->uc_hold_misses = 0;
		urnic_iw_release_held(e, qp);
	} else if (!c->uc_interactive && c->uc_alone_ns &&
		   e->now_ns - c->uc_alone_ns <= ROCE_UC_ANSWER_WINDOW_NS) {
		c->uc_interactive = true;
	}
}
