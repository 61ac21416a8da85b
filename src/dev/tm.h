/* SPDX-License-Identifier: MIT */
/*
 * tm.h - tag matching for the verbs (ibv_create_srq_ex(3) IBV_SRQT_TM,
 * ibv_post_srq_ops(3)): a tag-matching SRQ's tag list, and its operations run by the
 * engine under the device lock. The structures are queue/tm.h's, plain data that come
 * with this header.
 */
#ifndef URNIC_DEV_TM_H
#define URNIC_DEV_TM_H

#include "dev/device.h"
#include "queue/srq.h"
#include "queue/tm.h"

/* Makes srq (created by urnic_dev_srq_create) a tag-matching SRQ of max_tags tags whose
 * completions go to cq. 0, -EINVAL or -ENOMEM. No lock: no QP uses it yet. */
int urnic_dev_srq_tm_init(struct urnic_srq *srq, uint32_t max_tags, uint32_t max_ops,
			  struct urnic_cq *cq);
/* Frees the tag list, before urnic_dev_srq_destroy. */
void urnic_dev_srq_tm_fini(struct urnic_srq *srq);

/* One list operation (engine.h, urnic_engine_tm_op) under the device lock, the CQ's
 * channel written if it became due. 0, -EINVAL or -ENOMEM. */
int urnic_dev_srq_tm_op(struct urnic_dev *d, struct urnic_srq *srq, struct urnic_tm_op *op);

#endif
