/* SPDX-License-Identifier: MIT */
/*
 * tm.c - tag matching for the verbs: the tag list's life and its operations under the
 * device lock. See tm.h.
 */
#include "dev/tm.h"

#include <errno.h>
#include <stdlib.h>

#include "engine/engine.h"

int urnic_dev_srq_tm_init(struct urnic_srq *srq, uint32_t max_tags, uint32_t max_ops,
			  struct urnic_cq *cq)
{
	struct urnic_tm_list *l = calloc(1, sizeof(*l));
	int ret;

	if (!l)
		return -ENOMEM;
	ret = urnic_tm_list_init(l, max_tags, max_ops);
	if (ret) {
		free(l);
		return ret;
	}
	srq->tm = l;
	srq->cq = cq;
	return 0;
}

void urnic_dev_srq_tm_fini(struct urnic_srq *srq)
{
	if (!srq->tm)
		return;
	urnic_tm_list_fini(srq->tm);
	free(srq->tm);
	srq->tm = NULL;
}

int urnic_dev_srq_tm_op(struct urnic_dev *d, struct urnic_srq *srq, struct urnic_tm_op *op)
{
	int ret;

	pthread_mutex_lock(&d->lock);
	ret = urnic_engine_tm_op(d->eng, srq, op);
	urnic_dev_notify_cqs(d);
	pthread_mutex_unlock(&d->lock);
	return ret;
}
