/* SPDX-License-Identifier: MIT */
/*
 * iw_wqe.c - completions of an iWARP QP's work requests: send WQEs in post order once
 * done (a Send or Write when the socket took its last byte, RFC 5040 5.1; a Read when its
 * last Read Response came; a local operation when reached), receive WQEs when their
 * Send's last segment came or the message failed.
 */
#include "engine/iwarp/iw.h"
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

void urnic_iw_complete_sq(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_iw_qp *iw = qp->iw;

	while (qp->state == URNIC_QPS_RTS && qp->comp.idx != qp->req.idx) {
		struct urnic_send_wqe *w = rc_swqe(qp, qp->comp.idx);

		if (w->opcode == URNIC_WR_RDMA_READ
			    ? !w->done
			    : iw->out.sent < iw->wqe_end[qp->comp.idx & iw->wqe_mask])
			break;
		urnic_roce_complete_swqe(e, qp, URNIC_WC_SUCCESS);
	}
}
