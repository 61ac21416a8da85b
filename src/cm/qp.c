/* SPDX-License-Identifier: MIT */
/*
 * qp.c - the QP (and SRQ) an id owns, through the public verbs API: created in INIT as
 * librdmacm's ucma_init_conn_qp / ucma_init_ud_qp leave it, the attributes of each state
 * as the kernel's rdma_init_qp_attr gives them (ib_cm_init_qp_attr for a connection, the
 * port's defaults and the UDP Q_Key otherwise), and ERR before a disconnect.
 */
#include <errno.h>
#include <string.h>

#include "cm/iw_cm.h"

#define EXPORT __attribute__((visibility("default")))

/* INIT: pkey index 0, port 1; UD: the Q_Key; RC: remote write, and read and atomics
 * when the connection grants responder resources (cm.c cm_init_qp_init_attr). */
static int init_attr(struct urnic_rdma_id *id, struct ibv_qp_attr *a, int *mask)
{
	struct urnic_cm_conn_info info;

	a->pkey_index = 0;
	a->port_num = id->id.port_num ? id->id.port_num : 1;
	*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (id->id.qp_type == IBV_QPT_UD) {
		a->qkey = id->qkey;
		*mask |= IBV_QP_QKEY;
		return 0;
	}
	a->qp_access_flags = 0;
	*mask |= IBV_QP_ACCESS_FLAGS;
	/* iwcm.c iwcm_init_qp_init_attr: an iWARP QP takes remote writes and reads. */
	if (urnic_rdma_dev_iwarp(id->dev)) {
		a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
		return 0;
	}
	if (id->has_conn && !urnic_rdma_query(id, &info)) {
		a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		if (info.responder_resources)
			a->qp_access_flags |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	}
	return 0;
}

/* RTR and RTS of a connection (cm.c cm_init_qp_rtr_attr, cm_init_qp_rts_attr). */
static int conn_attr(struct urnic_rdma_id *id, struct ibv_qp_attr *a, int *mask)
{
	struct urnic_cm_conn_info info;
	int rc = urnic_rdma_query(id, &info);

	if (rc)
		return rc;
	if (a->qp_state == IBV_QPS_RTR) {
		a->ah_attr.is_global = 1;
		memcpy(&a->ah_attr.grh.dgid, info.peer.gid, 16);
		a->ah_attr.grh.sgid_index = 1;
		a->ah_attr.grh.hop_limit = id->path.hop_limit ? id->path.hop_limit : 64;
		a->ah_attr.grh.traffic_class = id->tos;
		a->ah_attr.port_num = id->id.port_num ? id->id.port_num : 1;
		a->path_mtu = (enum ibv_mtu)info.path_mtu;
		a->dest_qp_num = info.remote_qpn;
		a->rq_psn = id->seq_num; /* cma.c: the id's PSN, sent in the REQ or REP */
		a->max_dest_rd_atomic = info.responder_resources;
		a->min_rnr_timer = 0;
		*mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		return 0;
	}
	a->sq_psn = info.sq_psn;
	a->timeout = id->ack_timeout_set ? id->ack_timeout : info.ack_timeout;
	a->retry_cnt = info.retry_count;
	a->rnr_retry = info.rnr_retry_count;
	a->max_rd_atomic = info.initiator_depth;
	*mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	return 0;
}

EXPORT int rdma_init_qp_attr(struct rdma_cm_id *cid, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	struct urnic_rdma_id *id;
	int rc = -EINVAL;

	if (!cid || !qp_attr || !qp_attr_mask) {
		errno = EINVAL;
		return -1;
	}
	id = urnic_rdma_id_of(cid);
	if (!id->dev)
		return urnic_rdma_ret(-EINVAL);
	switch (qp_attr->qp_state) {
	case IBV_QPS_INIT:
		rc = init_attr(id, qp_attr, qp_attr_mask);
		break;
	case IBV_QPS_RTR:
	case IBV_QPS_RTS:
		if (id->id.qp_type == IBV_QPT_UD) {
			*qp_attr_mask = IBV_QP_STATE;
			if (qp_attr->qp_state == IBV_QPS_RTS) {
				qp_attr->sq_psn = 0;
				*qp_attr_mask |= IBV_QP_SQ_PSN;
			}
			rc = 0;
		} else if (urnic_rdma_dev_iwarp(id->dev)) {
			/* iwcm.c iwcm_init_qp_rts_attr: nothing; the device puts the QP in
			 * RTS at the hand-over. */
			*qp_attr_mask = 0;
			rc = 0;
		} else if (id->has_conn) {
			rc = conn_attr(id, qp_attr, qp_attr_mask);
		}
		break;
	default:
		break;
	}
	return urnic_rdma_ret(rc);
}

static int modify(struct urnic_rdma_id *id, enum ibv_qp_state s)
{
	struct ibv_qp_attr a;
	int mask;

	memset(&a, 0, sizeof(a));
	a.qp_state = s;
	if (rdma_init_qp_attr(&id->id, &a, &mask))
		return -errno;
	return -ibv_modify_qp(id->id.qp, &a, mask);
}

/* RTR then RTS from the connection, with the application's resources unless
 * RDMA_MAX_* (librdmacm ucma_modify_qp_rtr, ucma_modify_qp_rts). */
int urnic_rdma_rtr_rts(struct urnic_rdma_id *id, uint8_t resp_res, uint8_t init_depth)
{
	struct ibv_qp_attr a;
	int mask, rc;

	if (!id->id.qp)
		return 0;
	rc = modify(id, IBV_QPS_INIT);
	if (rc)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (rdma_init_qp_attr(&id->id, &a, &mask))
		return -errno;
	if (resp_res != RDMA_MAX_RESP_RES)
		a.max_dest_rd_atomic = resp_res;
	rc = -ibv_modify_qp(id->id.qp, &a, mask);
	if (rc)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	if (rdma_init_qp_attr(&id->id, &a, &mask))
		return -errno;
	if (init_depth != RDMA_MAX_INIT_DEPTH)
		a.max_rd_atomic = init_depth;
	return -ibv_modify_qp(id->id.qp, &a, mask);
}

int urnic_rdma_qp_to_err(struct urnic_rdma_id *id)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	if (!id->id.qp)
		return 0;
	return -ibv_modify_qp(id->id.qp, &a, IBV_QP_STATE);
}

/* A new QP to INIT; UD on to RTS (ucma_init_ud_qp). */
static int qp_init(struct urnic_rdma_id *id, struct ibv_qp *qp)
{
	int rc;

	id->id.qp = qp;
	rc = modify(id, IBV_QPS_INIT);
	if (!rc && id->id.qp_type == IBV_QPT_UD) {
		rc = modify(id, IBV_QPS_RTR);
		if (!rc)
			rc = modify(id, IBV_QPS_RTS);
	}
	if (rc)
		id->id.qp = NULL;
	return rc;
}

/* A CQ and its completion channel for each direction the caller left without one
 * (librdmacm ucma_create_cqs): rdma_get_send_comp(3) and rdma_get_recv_comp(3) wait on
 * them. */
static int create_cqs(struct rdma_cm_id *cid, uint32_t send_size, uint32_t recv_size)
{
	if (!cid->recv_cq && recv_size) {
		cid->recv_cq_channel = ibv_create_comp_channel(cid->verbs);
		if (!cid->recv_cq_channel)
			return -errno;
		cid->recv_cq =
			ibv_create_cq(cid->verbs, (int)recv_size, cid, cid->recv_cq_channel, 0);
		if (!cid->recv_cq)
			return -errno;
	}
	if (!cid->send_cq && send_size) {
		cid->send_cq_channel = ibv_create_comp_channel(cid->verbs);
		if (!cid->send_cq_channel)
			return -errno;
		cid->send_cq =
			ibv_create_cq(cid->verbs, (int)send_size, cid, cid->send_cq_channel, 0);
		if (!cid->send_cq)
			return -errno;
	}
	return 0;
}

static void destroy_cqs(struct rdma_cm_id *cid)
{
	if (cid->recv_cq)
		ibv_destroy_cq(cid->recv_cq);
	if (cid->recv_cq_channel)
		ibv_destroy_comp_channel(cid->recv_cq_channel);
	if (cid->send_cq && cid->send_cq != cid->recv_cq)
		ibv_destroy_cq(cid->send_cq);
	if (cid->send_cq_channel && cid->send_cq_channel != cid->recv_cq_channel)
		ibv_destroy_comp_channel(cid->send_cq_channel);
	cid->recv_cq = cid->send_cq = NULL;
	cid->recv_cq_channel = cid->send_cq_channel = NULL;
}

EXPORT int rdma_create_qp_ex(struct rdma_cm_id *cid, struct ibv_qp_init_attr_ex *attr)
{
	struct urnic_rdma_id *id;
	struct ibv_qp *qp;
	int rc;

	if (!cid || !attr || cid->qp) {
		errno = EINVAL;
		return -1;
	}
	id = urnic_rdma_id_of(cid);
	if (!id->dev || (attr->pd && attr->pd->context != cid->verbs)) {
		errno = EINVAL;
		return -1;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
		attr->pd = cid->pd ? cid->pd : id->dev->pd;
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
	}
	if (!attr->srq && cid->srq)
		attr->srq = cid->srq;
	rc = create_cqs(cid, attr->send_cq ? 0 : attr->cap.max_send_wr,
			attr->recv_cq || attr->srq ? 0 : attr->cap.max_recv_wr);
	if (rc) {
		destroy_cqs(cid);
		return urnic_rdma_ret(rc);
	}
	if (!attr->send_cq)
		attr->send_cq = cid->send_cq;
	if (!attr->recv_cq)
		attr->recv_cq = cid->recv_cq;
	qp = ibv_create_qp_ex(cid->verbs, attr);
	if (!qp) {
		rc = -errno;
		destroy_cqs(cid);
		return urnic_rdma_ret(rc);
	}
	rc = qp_init(id, qp);
	if (rc) {
		ibv_destroy_qp(qp);
		destroy_cqs(cid);
		return urnic_rdma_ret(rc);
	}
	/* rdma_reg_msgs(3) and the other rdma_verbs.h helpers register on id->pd. */
	if (!cid->pd)
		cid->pd = attr->pd;
	return 0;
}

EXPORT int rdma_create_qp(struct rdma_cm_id *cid, struct ibv_pd *pd,
			  struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex a;
	int rc;

	if (!cid || !qp_init_attr) {
		errno = EINVAL;
		return -1;
	}
	memset(&a, 0, sizeof(a));
	memcpy(&a, qp_init_attr, sizeof(*qp_init_attr));
	a.qp_type = cid->qp_type;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = pd ? pd : cid->pd;
	rc = rdma_create_qp_ex(cid, &a);
	if (rc)
		return rc;
	qp_init_attr->cap = a.cap;
	return 0;
}

EXPORT void rdma_destroy_qp(struct rdma_cm_id *cid)
{
	if (!cid || !cid->qp)
		return;
	urnic_rdma_mc_detach_all(urnic_rdma_id_of(cid));
	ibv_destroy_qp(cid->qp);
	cid->qp = NULL;
	destroy_cqs(cid);
}

EXPORT int rdma_create_srq_ex(struct rdma_cm_id *cid, struct ibv_srq_init_attr_ex *attr)
{
	struct urnic_rdma_id *id;
	struct ibv_srq *srq;

	if (!cid || !attr) {
		errno = EINVAL;
		return -1;
	}
	id = urnic_rdma_id_of(cid);
	if (!id->dev) {
		errno = EINVAL;
		return -1;
	}
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd) {
		attr->pd = cid->pd ? cid->pd : id->dev->pd;
		attr->comp_mask |= IBV_SRQ_INIT_ATTR_PD;
	}
	srq = ibv_create_srq_ex(cid->verbs, attr);
	if (!srq)
		return -1;
	cid->srq = srq;
	return 0;
}

EXPORT int rdma_create_srq(struct rdma_cm_id *cid, struct ibv_pd *pd,
			   struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex a;
	int rc;

	if (!cid || !attr) {
		errno = EINVAL;
		return -1;
	}
	memset(&a, 0, sizeof(a));
	memcpy(&a, attr, sizeof(*attr));
	a.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE;
	a.srq_type = IBV_SRQT_BASIC;
	a.pd = pd ? pd : cid->pd;
	rc = rdma_create_srq_ex(cid, &a);
	if (!rc)
		attr->attr = a.attr;
	return rc;
}

EXPORT void rdma_destroy_srq(struct rdma_cm_id *cid)
{
	if (!cid || !cid->srq)
		return;
	ibv_destroy_srq(cid->srq);
	cid->srq = NULL;
}
