/* SPDX-License-Identifier: MIT */
/*
 * srq.c - allocation of a shared receive queue's ring. See srq.h.
 */
#include "queue/srq.h"

#include <string.h>

int urnic_srq_init_mem(struct urnic_srq *srq, uint32_t max_wr, uint32_t max_sge,
		       const struct urnic_ring_mem *mem)
{
	int ret;

	memset(srq, 0, sizeof(*srq));
	ret = urnic_wq_init_mem(&srq->rq, max_wr, sizeof(struct urnic_recv_wqe), mem,
				URNIC_RING_SRQ);
	if (ret)
		return ret;
	srq->rq.max_sge = max_sge;
	return 0;
}

int urnic_srq_init(struct urnic_srq *srq, uint32_t max_wr, uint32_t max_sge)
{
	return urnic_srq_init_mem(srq, max_wr, max_sge, NULL);
}

void urnic_srq_fini(struct urnic_srq *srq)
{
	urnic_wq_fini(&srq->rq);
}
