/* SPDX-License-Identifier: MIT */
/*
 * tm.c - tag matching for the verbs: ibv_create_srq_ex(3) with IBV_SRQT_TM and
 * ibv_post_srq_ops(3) (rdma-core Documentation/tag_matching.md). The engine does the
 * matching (engine/roce/tm.c); here the checks and conversions.
 *
 * A tag-matching SRQ needs its CQ (IBV_SRQ_INIT_ATTR_CQ, where every completion of its
 * QPs' messages and of its list operations goes) and tm_cap.max_num_tags between 1 and
 * tm_caps.max_num_tags, max_ops at most tm_caps.max_ops: else EINVAL, as mlx5. Operations
 * run at once (none is ever outstanding); the first bad one stops the list with *bad_wr
 * set and its errno: EINVAL (opcode, handle, more than max_sge SGEs), ENOMEM (the tag
 * list or the CQ is full).
 */
#include <errno.h>
#include <string.h>

#include "verbs/verbs.h"

_Static_assert((int)IBV_WR_TAG_ADD == (int)URNIC_TM_OP_ADD &&
		       (int)IBV_WR_TAG_DEL == (int)URNIC_TM_OP_DEL &&
		       (int)IBV_WR_TAG_SYNC == (int)URNIC_TM_OP_SYNC,
	       "tag list opcodes");
_Static_assert((int)IBV_OPS_SIGNALED == (int)URNIC_TM_OP_SIGNALED &&
		       (int)IBV_OPS_TM_SYNC == (int)URNIC_TM_OP_SYNC_CNT,
	       "tag list operation flags");

int urnic_tm_srq_attach(struct urnic_vsrq *v, const struct ibv_srq_init_attr_ex *ex)
{
	const uint32_t need = IBV_SRQ_INIT_ATTR_TM | IBV_SRQ_INIT_ATTR_CQ;
	struct urnic_vcq *vcq;
	int ret;

	if ((ex->comp_mask & need) != need || !ex->cq || urnic_ctx_dev(ex->cq->context) != v->dev ||
	    ex->tm_cap.max_num_tags == 0 || ex->tm_cap.max_num_tags > URNIC_TM_MAX_TAGS ||
	    ex->tm_cap.max_ops > URNIC_TM_MAX_OPS)
		return EINVAL;
	vcq = to_vcq(ex->cq);
	ret = urnic_dev_srq_tm_init(&v->srq, ex->tm_cap.max_num_tags, ex->tm_cap.max_ops, &vcq->cq);
	if (ret)
		return -ret;
	vcq->users++;
	v->tmcq = vcq;
	return 0;
}

void urnic_tm_srq_detach(struct urnic_vsrq *v)
{
	urnic_dev_srq_tm_fini(&v->srq);
	v->tmcq->users--;
	v->tmcq = NULL;
}

/* An ibv_ops_wr as the engine takes it: 0 or EINVAL. */
static int convert(const struct ibv_ops_wr *wr, struct urnic_tm_op *op)
{
	memset(op, 0, offsetof(struct urnic_tm_op, wqe));
	op->wr_id = wr->wr_id;
	op->opcode = (uint32_t)wr->opcode;
	op->flags = (uint32_t)wr->flags;
	op->unexpected_cnt = wr->tm.unexpected_cnt;
	op->handle = wr->tm.handle;
	if (wr->opcode != IBV_WR_TAG_ADD)
		return 0;
	if (wr->tm.add.num_sge < 0 || wr->tm.add.num_sge > URNIC_TM_MAX_SGE ||
	    (wr->tm.add.num_sge && !wr->tm.add.sg_list))
		return EINVAL;
	op->tag = wr->tm.add.tag;
	op->mask = wr->tm.add.mask;
	op->wqe.wr_id = wr->tm.add.recv_wr_id;
	op->wqe.num_sge = (uint32_t)wr->tm.add.num_sge;
	op->wqe.length = 0;
	for (int i = 0; i < wr->tm.add.num_sge; i++) {
		const struct ibv_sge *s = &wr->tm.add.sg_list[i];

		op->wqe.sge[i] = (struct urnic_sge){ s->addr, s->length, s->lkey };
		op->wqe.length += s->length;
	}
	return 0;
}

int urnic_post_srq_ops(struct ibv_srq *ibsrq, struct ibv_ops_wr *wr, struct ibv_ops_wr **bad_wr)
{
	struct urnic_vsrq *v = to_vsrq(ibsrq);
	struct urnic_tm_op op;
	int ret = 0;

	if (!v->srq.tm) {
		*bad_wr = wr;
		return EINVAL; /* not a tag-matching SRQ (mlx5: EINVAL) */
	}
	for (; wr; wr = wr->next) {
		ret = convert(wr, &op);
		if (!ret)
			ret = -urnic_dev_srq_tm_op(v->dev, &v->srq, &op);
		if (ret)
			break;
		if (wr->opcode == IBV_WR_TAG_ADD)
			wr->tm.handle = op.handle;
	}
	if (ret)
		*bad_wr = wr;
	return ret;
}
