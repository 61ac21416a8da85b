/* SPDX-License-Identifier: MIT */
/*
 * tm_recv.c - where a message on a tag-matching SRQ's QP puts its data and its
 * completion, once tm.c has classified it: a matched message skips its TMH (all of a
 * rendezvous request: its data comes by READ); every completion goes to the SRQ's CQ,
 * a matched one with IBV_WC_TM_MATCH and the TMH's tag and app_ctx
 * (ibv_wc_read_tm_info). Leaf functions for recv.c, which calls nothing back.
 */
#include "engine/roce/tm.h"
#include "wire/tmh.h"

uint32_t urnic_roce_tm_skip(const struct urnic_qp *qp, const struct urnic_pkt *pkt, uint32_t flags)
{
	switch (qp->resp.tm.kind) {
	case URNIC_TM_MSG_EAGER:
		return (flags & URNIC_OPF_FIRST) ? URNIC_TMH_BYTES : 0;
	case URNIC_TM_MSG_RNDV:
		return pkt->payload_bytes;
	default:
		return 0;
	}
}

struct urnic_cq *urnic_roce_tm_cqe(struct urnic_qp *qp, struct urnic_cqe *cqe)
{
	struct urnic_tm_msg *m = &qp->resp.tm;

	switch (m->kind) {
	case URNIC_TM_MSG_NO_TAG:
		cqe->opcode = URNIC_WC_TM_NO_TAG;
		break;
	case URNIC_TM_MSG_UNEXPECTED:
		cqe->opcode = URNIC_WC_TM_RECV;
		break;
	case URNIC_TM_MSG_EAGER:
		cqe->opcode = URNIC_WC_TM_RECV;
		cqe->wc_flags |= URNIC_WC_TM_MATCH | URNIC_WC_TM_DATA_VALID;
		cqe->tm_tag = m->tag;
		cqe->tm_priv = m->app_ctx;
		break;
	default:
		/* Not a SEND (a WRITE with immediate takes a plain WQE): as on any SRQ. */
		break;
	}
	if (cqe->status != URNIC_WC_SUCCESS)
		cqe->wc_flags &= (uint8_t)~URNIC_WC_TM_DATA_VALID;
	m->kind = URNIC_TM_MSG_NONE;
	return qp->srq->cq;
}
