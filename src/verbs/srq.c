/* SPDX-License-Identifier: MIT */
/*
 * srq.c - shared receive queues: ibv_create_srq(_ex), ibv_modify_srq, ibv_query_srq,
 * ibv_destroy_srq and ibv_post_srq_recv.
 *
 * ibv_create_srq(3), ibv_modify_srq(3): max_wr (at least 1) and max_sge within the
 * device's limits (else EINVAL, as rxe_srq_chk_init), max_sge 0 granted as 1 (rxe's
 * RXE_MIN_SRQ_SGE), the granted values written back; srq_limit is "irrelevant for
 * ibv_create_srq" (the man page): the SRQ starts unarmed; IBV_SRQ_LIMIT arms the limit event
 * (IBTA 10.2.9; the engine fires IBV_EVENT_SRQ_LIMIT_REACHED once and disarms it),
 * a limit above max_wr is EINVAL; resizing (IBV_SRQ_MAX_WR) is not offered
 * (IBV_DEVICE_SRQ_RESIZE is not advertised) and answers EINVAL, as for devices
 * without it. Destroying an SRQ that QPs still use is EBUSY. An XRC SRQ (IBTA Annex A14)
 * also names its domain and CQ: xrc.c; a tag-matching SRQ its CQ and tag list size:
 * tm.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/verbs.h"

static struct urnic_vsrq *create_srq(struct ibv_pd *pd, struct ibv_srq_attr *attr,
				     void *srq_context)
{
	struct urnic_dev *d = urnic_ctx_dev(pd->context);
	struct urnic_vsrq *v;
	int ret;

	/* A UET QP's receives are its own RQ's (uet.c): the device has no SRQs. */
	if (urnic_uet_dev(d)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->max_wr == 0 || attr->max_wr > d->lim.max_srq_wr ||
	    attr->max_sge > URNIC_MAX_SGE) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->max_sge == 0)
		attr->max_sge = 1;
	/* The device's max_srq (dev/limits.def): ENOMEM, "not enough resources". */
	if (urnic_dev_res_get(d, URNIC_RES_SRQ)) {
		errno = ENOMEM;
		return NULL;
	}
	v = calloc(1, sizeof(*v));
	if (!v) {
		urnic_dev_res_put(d, URNIC_RES_SRQ);
		errno = ENOMEM;
		return NULL;
	}
	v->parent = urnic_pd_is_parent(pd) ? pd : NULL;
	/* Its ring from a parent domain's allocator (pd_ext.c) or calloc. */
	ret = urnic_dev_srq_create(&v->srq, attr->max_wr, attr->max_sge, urnic_parent_hold(pd));
	if (ret) {
		urnic_parent_release(pd);
		free(v);
		urnic_dev_res_put(d, URNIC_RES_SRQ);
		errno = -ret;
		return NULL;
	}
	v->srq.pd = &to_vpd(pd)->pd;
	v->srq.limit = 0; /* unarmed until ibv_modify_srq(IBV_SRQ_LIMIT) */
	v->srq.owner = &v->ibsrq;
	v->vpd = to_vpd(pd);
	v->vpd->users++;
	v->dev = d;
	v->ibsrq.context = pd->context;
	v->ibsrq.srq_context = srq_context;
	v->ibsrq.pd = pd;
	v->ibsrq.handle = 0;
	pthread_mutex_init(&v->ibsrq.mutex, NULL);
	pthread_cond_init(&v->ibsrq.cond, NULL);
	return v;
}

URNIC_EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *init)
{
	struct urnic_vsrq *v = create_srq(pd, &init->attr, init->srq_context);

	return v ? &v->ibsrq : NULL;
}

/* verbs_context.create_srq_ex: the inline ibv_create_srq_ex comes here for anything
 * beyond a basic SRQ; IBV_SRQT_BASIC, IBV_SRQT_XRC and IBV_SRQT_TM are offered. */
struct ibv_srq *urnic_create_srq_ex(struct ibv_context *context, struct ibv_srq_init_attr_ex *ex)
{
	const uint32_t known = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			       IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM;
	bool xrc = (ex->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && ex->srq_type == IBV_SRQT_XRC;
	bool tm = (ex->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && ex->srq_type == IBV_SRQT_TM;
	struct urnic_vsrq *v;
	int ret;

	if (ex->comp_mask & ~known) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((ex->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && ex->srq_type != IBV_SRQT_BASIC && !xrc &&
	    !tm) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(ex->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !ex->pd || ex->pd->context != context) {
		errno = EINVAL;
		return NULL;
	}
	v = create_srq(ex->pd, &ex->attr, ex->srq_context);
	if (v && (xrc || tm)) {
		ret = xrc ? urnic_xrc_srq_attach(v, ex) : urnic_tm_srq_attach(v, ex);
		if (ret) {
			ibv_destroy_srq(&v->ibsrq);
			errno = ret;
			return NULL;
		}
	}
	return v ? &v->ibsrq : NULL;
}

URNIC_EXPORT int ibv_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int mask)
{
	struct urnic_vsrq *v = to_vsrq(ibsrq);

	if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		return EINVAL;
	if (mask & IBV_SRQ_MAX_WR)
		return EINVAL; /* no resizing (IBV_DEVICE_SRQ_RESIZE is not advertised) */
	if ((mask & IBV_SRQ_LIMIT) && attr->srq_limit > v->srq.rq.max_wr)
		return EINVAL;
	if (mask & IBV_SRQ_LIMIT)
		urnic_dev_srq_set_limit(v->dev, &v->srq, attr->srq_limit);
	return 0;
}

URNIC_EXPORT int ibv_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct urnic_vsrq *v = to_vsrq(ibsrq);

	memset(attr, 0, sizeof(*attr));
	attr->max_wr = v->srq.rq.max_wr;
	attr->max_sge = v->srq.rq.max_sge;
	attr->srq_limit = urnic_dev_srq_get_limit(v->dev, &v->srq); /* 0 once the event fired */
	return 0;
}

URNIC_EXPORT int ibv_destroy_srq(struct ibv_srq *ibsrq)
{
	struct urnic_vsrq *v = to_vsrq(ibsrq);

	if (v->users)
		return EBUSY;
	if (v->xdom)
		urnic_xrc_srq_detach(v);
	if (v->tmcq)
		urnic_tm_srq_detach(v);
	v->vpd->users--;
	urnic_dev_srq_destroy(&v->srq); /* no event is raised for it after this */
	urnic_async_wait_acked(&ibsrq->mutex, &ibsrq->cond, &ibsrq->events_completed,
			       urnic_async_forget(ibsrq->context, ibsrq));
	urnic_parent_release(v->parent);
	pthread_cond_destroy(&ibsrq->cond);
	pthread_mutex_destroy(&ibsrq->mutex);
	urnic_dev_res_put(v->dev, URNIC_RES_SRQ);
	free(v);
	return 0;
}

int urnic_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	return urnic_post_recv_ring(&to_vsrq(ibsrq)->srq.rq, wr, bad_wr);
}
