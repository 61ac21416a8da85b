/* SPDX-License-Identifier: MIT */
/*
 * tm.c - tag list operations on a tag-matching SRQ (ibv_post_srq_ops(3)): ADD posts a
 * tagged buffer, DEL removes one, SYNC only reports the application's count of the
 * unexpected messages it handled (IBV_OPS_TM_SYNC, which ADD and DEL may carry too).
 * They run at once under the device lock, serialized with the messages the engine
 * matches, so none is ever outstanding; their completions go to the SRQ's CQ. The
 * receive side (matching, unexpected messages, rendezvous) is roce/tm.c.
 */
#include <errno.h>

#include "engine/engine.h"

static bool op_valid(const struct urnic_tm_list *l, const struct urnic_tm_op *op)
{
	switch (op->opcode) {
	case URNIC_TM_OP_ADD:
		/* tm_caps.max_sge is 1, as mlx5's: one buffer per tag. */
		return op->wqe.num_sge <= 1;
	case URNIC_TM_OP_DEL:
		return op->handle < l->max_tags;
	case URNIC_TM_OP_SYNC:
		return true;
	default:
		return false;
	}
}

int urnic_engine_tm_op(struct urnic_engine *e, struct urnic_srq *srq, struct urnic_tm_op *op)
{
	struct urnic_tm_list *l = srq->tm;
	static const uint16_t wc_opcode[] = {
		[URNIC_TM_OP_ADD] = URNIC_WC_TM_ADD,
		[URNIC_TM_OP_DEL] = URNIC_WC_TM_DEL,
		[URNIC_TM_OP_SYNC] = URNIC_WC_TM_SYNC,
	};
	struct urnic_cqe cqe = { .wr_id = op->wr_id, .status = URNIC_WC_SUCCESS };
	bool in_phase = true;
	int ret = 0;

	if (!op_valid(l, op))
		return -EINVAL;
	if (op->opcode == URNIC_TM_OP_ADD && l->posted == l->max_tags)
		return -ENOMEM;
	/* Validate-then-mutate: the completion must fit before anything changes (a DEL
	 * reports its failure even unsignaled: the application must learn that the tag
	 * went to a message). */
	if (!urnic_cq_has_room(srq->cq))
		return -ENOMEM;
	if (op->flags & URNIC_TM_OP_SYNC_CNT)
		urnic_tm_list_sync(l, op->unexpected_cnt);
	switch (op->opcode) {
	case URNIC_TM_OP_ADD:
		ret = urnic_tm_list_add(l, op->tag, op->mask, &op->wqe, &in_phase);
		op->handle = (uint32_t)ret;
		ret = 0;
		break;
	case URNIC_TM_OP_DEL:
		ret = urnic_tm_list_del(l, op->handle);
		break;
	default:
		break;
	}
	cqe.opcode = wc_opcode[op->opcode];
	/* ibv_post_srq_ops(3): IBV_WC_TM_SYNC_REQ tells that the tag was posted while the
	 * device had delivered unexpected messages the application had not reported. */
	if (!in_phase)
		cqe.wc_flags = URNIC_WC_TM_SYNC_REQ;
	if (ret) /* -ENOENT: consumed by a message meanwhile (ibv_post_srq_ops(3)) */
		cqe.status = URNIC_WC_TM_ERR;
	if (ret || (op->flags & URNIC_TM_OP_SIGNALED))
		urnic_cq_push(srq->cq, &cqe, false);
	(void)e;
	return 0;
}

void urnic_engine_tm_drop_sq(struct urnic_qp *qp)
{
	uint32_t prod = atomic_load_explicit(&qp->sq.prod, memory_order_acquire);
	uint32_t cons = atomic_load_explicit(&qp->sq.cons, memory_order_relaxed);

	if (!qp->srq || !qp->srq->tm || qp->sq.depth == 0)
		return;
	for (; cons != prod; cons++) {
		struct urnic_send_wqe *w = urnic_wq_slot(&qp->sq, cons);

		if (w->role == URNIC_SWQE_TM_READ)
			urnic_tm_list_release(qp->srq->tm, w->tm_handle);
		w->role = URNIC_SWQE_APP;
	}
}
