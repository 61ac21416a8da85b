/* SPDX-License-Identifier: MIT */
/*
 * srq.c - allocation of a shared receive queue's ring. See srq.h.
 */
#include "queue/srq.h"

#include <string.h>

int urnic_srq_init(struct urnic_srq *srq, uint32_t max_wr, uint32_t max_sge)
{
	int ret;

	memset(srq, 0, sizeof(*srq));
	ret = urnic_wq_init(&srq->rq, max_wr, sizeof(struct urnic_recv_wqe));
	if (ret)
		return ret;
	srq->rq.max_sge = max_sge;
	return 0;
}

void urnic_srq_fini(struct urnic_srq *srq)
{
	urnic_wq_fini(&srq->rq);
}
