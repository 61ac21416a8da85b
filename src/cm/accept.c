/* SPDX-License-Identifier: MIT */
/*
 * accept.c - the passive side's answers and the end of a connection: rdma_accept (REP,
 * or SIDR_REP for UD), rdma_reject, rdma_establish, rdma_notify, rdma_disconnect, with
 * the QP moved as librdmacm moves it (ucma_modify_qp_rtr/rts before the REP, ERR before
 * the DREQ); and the id options and ECE calls.
 */
#include <errno.h>
#include <string.h>

#include "cm/iw_cm.h"

#define EXPORT __attribute__((visibility("default")))

/* Runs fn on the id's connection inside begin/end. */
#define WITH_CM(id, expr)                                                                          \
	({                                                                                         \
		uint64_t now;                                                                      \
		struct urnic_cm *cm = urnic_dev_cm_begin((id)->dev->d, &now);                      \
		int rc_ = -ENODEV;                                                                 \
		if (cm) {                                                                          \
			(void)now;                                                                 \
			rc_ = (expr);                                                              \
			urnic_dev_cm_end((id)->dev->d);                                            \
		}                                                                                  \
		rc_;                                                                               \
	})

static int accept_ud(struct urnic_rdma_id *id, struct rdma_conn_param *p)
{
	struct urnic_cm_sidr_reply_param rp;

	memset(&rp, 0, sizeof(rp));
	rp.status = URNIC_CM_SIDR_SUCCESS;
	rp.qpn = id->id.qp ? id->id.qp->qp_num : (p ? p->qp_num : 0);
	rp.qkey = id->qkey;
	if (p && p->private_data_len) {
		if (p->private_data_len > 136)
			return -EINVAL;
		rp.private_data = p->private_data;
		rp.private_data_len = p->private_data_len;
	}
	return WITH_CM(id, urnic_cm_sidr_reply(cm, id->conn, &rp, now));
}

static int accept_rc(struct urnic_rdma_id *id, struct rdma_conn_param *p)
{
	struct urnic_cm_accept_param ap;
	int rc;

	if (!p || p->initiator_depth == RDMA_MAX_INIT_DEPTH)
		; /* keep the REQ's */
	else
		id->init_depth = p->initiator_depth;
	if (p && p->responder_resources != RDMA_MAX_RESP_RES)
		id->resp_res = p->responder_resources;
	rc = urnic_rdma_rtr_rts(id, id->resp_res, id->init_depth);
	if (rc) {
		urnic_rdma_qp_to_err(id);
		return rc;
	}
	memset(&ap, 0, sizeof(ap));
	ap.qpn = id->id.qp ? id->id.qp->qp_num : (p ? p->qp_num : 0);
	ap.starting_psn = id->seq_num;
	ap.responder_resources = id->resp_res;
	ap.initiator_depth = id->init_depth;
	ap.rnr_retry_count = p ? (p->rnr_retry_count > 7 ? 7 : p->rnr_retry_count) : 7;
	ap.flow_control = p ? p->flow_control : 0;
	ap.srq = id->id.srq ? 1 : (p && !id->id.qp ? p->srq : 0);
	if (p && p->private_data_len) {
		ap.private_data = p->private_data;
		ap.private_data_len = p->private_data_len;
	}
	rc = WITH_CM(id, urnic_cm_accept(cm, id->conn, &ap, now));
	if (rc)
		urnic_rdma_qp_to_err(id);
	return rc;
}

EXPORT int rdma_accept(struct rdma_cm_id *cid, struct rdma_conn_param *conn_param)
{
	struct urnic_rdma_id *id;
	int rc;

	if (!cid) {
		errno = EINVAL;
		return -1;
	}
	id = urnic_rdma_id_of(cid);
	if (id->iw) {
		rc = urnic_rdma_iw_accept(id, conn_param);
		return rc ? urnic_rdma_ret(rc)
			  : urnic_rdma_wait_event(id, RDMA_CM_EVENT_ESTABLISHED);
	}
	if (!id->has_conn || !id->listen_id || id->state != URNIC_RDMA_CONNECT) {
		errno = EINVAL;
		return -1;
	}
	if (conn_param && conn_param->private_data_len > 196) {
		errno = EINVAL;
		return -1;
	}
	rc = cid->qp_type == IBV_QPT_UD ? accept_ud(id, conn_param) : accept_rc(id, conn_param);
	if (rc)
		return urnic_rdma_ret(rc);
	if (cid->qp_type == IBV_QPT_UD)
		return 0;
	return urnic_rdma_wait_event(id, RDMA_CM_EVENT_ESTABLISHED);
}

/* IBTA 12.6, table 109: what rdma_reject_ece sends (the kernel's ucma_reject takes it
 * and the consumer-defined reason only). */
enum { REJ_VENDOR_OPTION_NOT_SUPPORTED = 35 };

static int reject(struct urnic_rdma_id *id, const void *pdata, uint8_t len, uint16_t reason)
{
	if (id->iw)
		return urnic_rdma_iw_reject(id, pdata, len);
	if (!id->has_conn || !id->dev)
		return -EINVAL;
	if (id->id.qp_type == IBV_QPT_UD) {
		struct urnic_cm_sidr_reply_param rp;

		memset(&rp, 0, sizeof(rp));
		rp.status = URNIC_CM_SIDR_REJECT;
		rp.private_data = pdata;
		rp.private_data_len = len;
		return WITH_CM(id, urnic_cm_sidr_reply(cm, id->conn, &rp, now));
	}
	return WITH_CM(id, urnic_cm_reject(cm, id->conn, reason, pdata, len, now));
}

EXPORT int rdma_reject(struct rdma_cm_id *cid, const void *private_data, uint8_t len)
{
	/* IBTA's REJ holds 148 bytes; an MPA Reply takes any uint8_t length. */
	if (!cid || (len > 148 && !urnic_rdma_id_of(cid)->iw)) {
		errno = EINVAL;
		return -1;
	}
	return urnic_rdma_ret(
		reject(urnic_rdma_id_of(cid), private_data, len, URNIC_CM_REJ_CONSUMER_DEFINED));
}

EXPORT int rdma_reject_ece(struct rdma_cm_id *cid, const void *private_data, uint8_t len)
{
	if (!cid || len > 148) {
		errno = EINVAL;
		return -1;
	}
	return urnic_rdma_ret(
		reject(urnic_rdma_id_of(cid), private_data, len, REJ_VENDOR_OPTION_NOT_SUPPORTED));
}

EXPORT int rdma_establish(struct rdma_cm_id *cid)
{
	struct urnic_rdma_id *id;
	int rc;

	if (!cid) {
		errno = EINVAL;
		return -1;
	}
	id = urnic_rdma_id_of(cid);
	if (!id->has_conn || !id->dev) {
		errno = EINVAL;
		return -1;
	}
	id->swallow_established = true;
	rc = WITH_CM(id, urnic_cm_establish(cm, id->conn, NULL, 0, now));
	if (rc) {
		id->swallow_established = false;
		return urnic_rdma_ret(rc);
	}
	id->state = URNIC_RDMA_CONNECTED;
	return 0;
}

/* ib_cm_notify(IB_EVENT_COMM_EST): traffic before the RTU establishes the passive side;
 * an established id takes it as done. */
EXPORT int rdma_notify(struct rdma_cm_id *cid, enum ibv_event_type event)
{
	struct urnic_rdma_id *id;
	int rc;

	if (!cid) {
		errno = EINVAL;
		return -1;
	}
	id = urnic_rdma_id_of(cid);
	if (!id->has_conn || !id->dev || event != IBV_EVENT_COMM_EST)
		return 0;
	rc = WITH_CM(id, urnic_cm_establish(cm, id->conn, NULL, 0, now));
	return rc == -EISCONN ? 0 : urnic_rdma_ret(rc);
}

EXPORT int rdma_disconnect(struct rdma_cm_id *cid)
{
	struct urnic_rdma_id *id;
	int rc;

	if (!cid) {
		errno = EINVAL;
		return -1;
	}
	id = urnic_rdma_id_of(cid);
	if (id->iw)
		return urnic_rdma_ret(urnic_rdma_iw_disconnect(id));
	if (!id->has_conn || !id->dev || cid->qp_type == IBV_QPT_UD) {
		errno = EINVAL;
		return -1;
	}
	rc = urnic_rdma_qp_to_err(id);
	if (rc)
		return urnic_rdma_ret(rc);
	/* cma.c rdma_disconnect: a DREQ, else a DREP, and no error for a connection that
	 * is already going (the peer's DREQ answered, TimeWait). */
	rc = WITH_CM(id, urnic_cm_disconnect(cm, id->conn, NULL, 0, now));
	id->state = URNIC_RDMA_DISCONNECT;
	return rc == -ENODEV ? urnic_rdma_ret(rc) : 0;
}

EXPORT int rdma_set_option(struct rdma_cm_id *cid, int level, int optname, void *optval,
			   size_t optlen)
{
	struct urnic_rdma_id *id;

	if (!cid || !optval) {
		errno = EINVAL;
		return -1;
	}
	id = urnic_rdma_id_of(cid);
	if (level == RDMA_OPTION_ID && optname == RDMA_OPTION_ID_TOS && optlen == 1) {
		id->tos = *(uint8_t *)optval;
		id->tos_set = true;
	} else if (level == RDMA_OPTION_ID && optname == RDMA_OPTION_ID_REUSEADDR &&
		   optlen == sizeof(int)) {
		if (id->state != URNIC_RDMA_IDLE)
			return urnic_rdma_ret(-EINVAL);
		id->reuseaddr = *(int *)optval != 0;
	} else if (level == RDMA_OPTION_ID && optname == RDMA_OPTION_ID_AFONLY &&
		   optlen == sizeof(int)) {
		if (id->state != URNIC_RDMA_IDLE)
			return urnic_rdma_ret(-EINVAL);
		id->afonly = *(int *)optval != 0;
	} else if (level == RDMA_OPTION_ID && optname == RDMA_OPTION_ID_ACK_TIMEOUT &&
		   optlen == 1) {
		id->ack_timeout = *(uint8_t *)optval;
		id->ack_timeout_set = true;
	} else if (level == RDMA_OPTION_IB && optname == RDMA_OPTION_IB_PATH &&
		   optlen % sizeof(struct ibv_path_data) == 0 && optlen) {
		/* The route is this device's whatever the record says (RoCEv2: no SA). */
		if (id->state != URNIC_RDMA_ADDR_RESOLVED)
			return urnic_rdma_ret(-EINVAL);
		return rdma_resolve_route(cid, 0);
	} else {
		return urnic_rdma_ret(-EINVAL);
	}
	return 0;
}

/* ECE (rdma_set_local_ece(3)): stored for ids without a QP, as librdmacm takes it. */
EXPORT int rdma_set_local_ece(struct rdma_cm_id *cid, struct ibv_ece *ece)
{
	if (!cid || !ece || cid->qp) {
		errno = EINVAL;
		return -1;
	}
	urnic_rdma_id_of(cid)->ece_vendor = ece->vendor_id;
	urnic_rdma_id_of(cid)->ece_options = ece->options;
	return 0;
}

/* What the peer sent: none over RoCEv2 here (as rxe), so zeros. */
EXPORT int rdma_get_remote_ece(struct rdma_cm_id *cid, struct ibv_ece *ece)
{
	if (!cid || !ece || cid->qp) {
		errno = EINVAL;
		return -1;
	}
	memset(ece, 0, sizeof(*ece));
	return 0;
}
