/* SPDX-License-Identifier: MIT */
/*
 * wq.c - receive work queues and their indirection tables (ibv_create_wq(3),
 * ibv_modify_wq(3), ibv_create_rwq_ind_table(3)): the receive side of RSS.
 *
 * A WQ (IBV_WQT_RQ) is a receive queue with its own CQ; it is made as a raw packet QP
 * of the same PD and CQ without a send queue, which the device already knows how to
 * fill with steered frames (engine/raw.h): ibv_post_wq_recv posts to that QP's receive
 * queue, and the WQ states map onto the QP's (RESET -> RESET, RDY -> RTR, ERR -> ERR;
 * frames are placed in RTR). The WQ's number is the QP's. An indirection table lists
 * 2^log_ind_tbl_size WQs for an RSS QP. Errors as the man pages give them: EINVAL for a
 * bad attribute, EOPNOTSUPP for create flags, ENOMEM. A WQ listed in a live table may not
 * be destroyed (EBUSY), as the kernel holds it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/verbs.h"

struct urnic_vwq {
	struct ibv_wq ibwq;
	struct ibv_qp *qp; /* the raw packet QP standing for it */
	uint32_t tables;   /* indirection tables that list it */
};

static struct urnic_vwq *to_vwq(struct ibv_wq *wq)
{
	return urnic_container_of(wq, struct urnic_vwq, ibwq);
}

static int wq_post_recv(struct ibv_wq *wq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	return urnic_post_recv(to_vwq(wq)->qp, wr, bad);
}

struct ibv_wq *urnic_create_wq(struct ibv_context *context, struct ibv_wq_init_attr *attr)
{
	struct ibv_qp_init_attr init = { 0 };
	struct urnic_vwq *w;

	if (attr->wq_type != IBV_WQT_RQ || !attr->pd || !attr->cq || attr->pd->context != context ||
	    attr->cq->context != context) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & IBV_WQ_INIT_ATTR_FLAGS) && attr->create_flags) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	init.send_cq = attr->cq;
	init.recv_cq = attr->cq;
	init.qp_type = IBV_QPT_RAW_PACKET;
	init.cap.max_recv_wr = attr->max_wr;
	init.cap.max_recv_sge = attr->max_sge;
	w->qp = ibv_create_qp(attr->pd, &init);
	if (!w->qp) {
		free(w);
		return NULL;
	}
	attr->max_wr = init.cap.max_recv_wr;
	attr->max_sge = init.cap.max_recv_sge;
	w->ibwq.context = context;
	w->ibwq.wq_context = attr->wq_context;
	w->ibwq.pd = attr->pd;
	w->ibwq.cq = attr->cq;
	w->ibwq.wq_num = w->qp->qp_num;
	w->ibwq.handle = w->qp->qp_num;
	w->ibwq.state = IBV_WQS_RESET;
	w->ibwq.wq_type = IBV_WQT_RQ;
	w->ibwq.post_recv = wq_post_recv;
	pthread_mutex_init(&w->ibwq.mutex, NULL);
	pthread_cond_init(&w->ibwq.cond, NULL);
	return &w->ibwq;
}

/* The QP moves that bring it from its state to the WQ state asked for. */
static int move(struct ibv_qp *qp, enum ibv_qp_state to)
{
	struct ibv_qp_attr a = { .qp_state = to, .port_num = 1 };

	if (to == IBV_QPS_RTR && qp->state == IBV_QPS_RESET) {
		int ret = move(qp, IBV_QPS_INIT);

		if (ret)
			return ret;
	}
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | (to == IBV_QPS_INIT ? IBV_QP_PORT : 0));
}

int urnic_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr)
{
	static const enum ibv_qp_state qps[] = {
		[IBV_WQS_RESET] = IBV_QPS_RESET,
		[IBV_WQS_RDY] = IBV_QPS_RTR,
		[IBV_WQS_ERR] = IBV_QPS_ERR,
	};
	struct urnic_vwq *w = to_vwq(wq);
	int ret;

	if (attr->attr_mask & ~(uint32_t)(IBV_WQ_ATTR_STATE | IBV_WQ_ATTR_CURR_STATE))
		return EOPNOTSUPP;
	if ((attr->attr_mask & IBV_WQ_ATTR_CURR_STATE) && attr->curr_wq_state != wq->state)
		return EINVAL;
	if (!(attr->attr_mask & IBV_WQ_ATTR_STATE))
		return 0;
	if ((unsigned)attr->wq_state > IBV_WQS_ERR)
		return EINVAL;
	if (attr->wq_state == wq->state)
		return 0;
	ret = move(w->qp, qps[attr->wq_state]);
	if (!ret)
		wq->state = attr->wq_state;
	return ret;
}

int urnic_destroy_wq(struct ibv_wq *wq)
{
	struct urnic_vwq *w = to_vwq(wq);
	int ret;

	if (w->tables)
		return EBUSY;
	ret = ibv_destroy_qp(w->qp);
	if (ret)
		return ret;
	pthread_cond_destroy(&wq->cond);
	pthread_mutex_destroy(&wq->mutex);
	free(w);
	return 0;
}

struct ibv_rwq_ind_table *urnic_create_rwq_ind_table(struct ibv_context *context,
						     struct ibv_rwq_ind_table_init_attr *attr)
{
	struct urnic_vind *t;
	uint32_t n;

	if (attr->comp_mask || attr->log_ind_tbl_size > URNIC_LOG_IND_TBL_MAX || !attr->ind_tbl) {
		errno = EINVAL;
		return NULL;
	}
	n = 1u << attr->log_ind_tbl_size;
	for (uint32_t i = 0; i < n; i++) {
		if (!attr->ind_tbl[i] || attr->ind_tbl[i]->context != context) {
			errno = EINVAL;
			return NULL;
		}
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	t->n = n;
	for (uint32_t i = 0; i < n; i++) {
		struct urnic_vwq *w = to_vwq(attr->ind_tbl[i]);

		w->tables++;
		t->wq[i] = &w->ibwq;
		t->qpn[i] = w->qp->qp_num;
	}
	t->ibt.context = context;
	t->ibt.ind_tbl_handle = (int)t->qpn[0];
	t->ibt.ind_tbl_num = (int)t->qpn[0];
	return &t->ibt;
}

int urnic_destroy_rwq_ind_table(struct ibv_rwq_ind_table *ibt)
{
	struct urnic_vind *t = to_vind(ibt);

	if (t->users)
		return EBUSY;
	for (uint32_t i = 0; i < t->n; i++)
		to_vwq(t->wq[i])->tables--;
	free(t);
	return 0;
}
