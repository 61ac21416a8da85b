/* SPDX-License-Identifier: MIT */
/*
 * event.c - a queued CM event as the application receives it (rdma_get_cm_event(3)):
 * the kernel's cma_ib_handler / cma_ib_req_handler / cma_sidr_rep_handler mapping, and
 * librdmacm's own work on the way (ucma_process_conn_req, ucma_process_conn_resp: a REP
 * for an id with a QP moves the QP to RTS, sends the RTU and reports ESTABLISHED).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "cm/iw_cm.h"

static void set_sa(struct sockaddr_storage *ss, int ipv, const uint8_t a[16], uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (ipv == 6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		memcpy(&s6->sin6_addr, a, 16);
		s6->sin6_port = htons(port);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		memcpy(&s4->sin_addr, a + 12, 4);
		s4->sin_port = htons(port);
	}
}

static void copy_pdata(struct urnic_rdma_event *e, const uint8_t *src, size_t len)
{
	if (len > URNIC_RDMA_PDATA_MAX)
		len = URNIC_RDMA_PDATA_MAX;
	memcpy(e->pdata, src, len);
	e->ev.param.conn.private_data = e->pdata;
	e->ev.param.conn.private_data_len = (uint8_t)len;
}

/* A passive id for a REQ or SIDR_REQ: its addresses from the cma header, its device's
 * route (cma_ib_new_conn_id, cma_ib_new_udp_id). -EPROTO when the header is bad. */
static int new_conn(struct urnic_rdma_item *it, struct urnic_rdma_event *e)
{
	struct urnic_rdma_id *id = it->id, *l = id->listen_id;
	const struct urnic_cm_mad *m = &it->ev.mad;
	bool ud = m->hdr.attr_id == URNIC_CM_ATTR_SIDR_REQ;
	const uint8_t *pd = ud ? m->msg.sidr_req.private_data : m->msg.req.private_data;
	size_t len = ud ? sizeof(m->msg.sidr_req.private_data) : sizeof(m->msg.req.private_data);
	struct urnic_cma_hdr h;
	struct rdma_route *r = &id->id.route;

	if (urnic_cma_hdr_decode(&h, pd, len, NULL) < 0 || !it->dev)
		return -EPROTO;
	id->dev = it->dev;
	id->id.verbs = it->dev->ctx;
	id->id.pd = it->dev->pd;
	set_sa(&r->addr.src_storage, h.ip_version, h.dst_addr, l->port);
	set_sa(&r->addr.dst_storage, h.ip_version, h.src_addr, h.src_port);
	memcpy(&r->addr.addr.ibaddr.sgid, it->dev->d->gid[1], 16);
	memcpy(&r->addr.addr.ibaddr.dgid, it->ev.peer.gid, 16);
	r->addr.addr.ibaddr.pkey = 0xffff;
	id->path.sgid = r->addr.addr.ibaddr.sgid;
	id->path.dgid = r->addr.addr.ibaddr.dgid;
	id->path.pkey = htons(0xffff);
	id->path.mtu = ud ? (uint8_t)it->dev->d->active_mtu : m->msg.req.path_mtu;
	id->path.hop_limit = 64;
	id->path.numb_path = 1;
	id->path.reversible = 1;
	r->path_rec = &id->path;
	r->num_paths = 1;
	id->tos = l->tos;
	e->ev.listen_id = &l->id;
	e->ev.event = RDMA_CM_EVENT_CONNECT_REQUEST;
	copy_pdata(e, pd + URNIC_CMA_HDR_BYTES, len - URNIC_CMA_HDR_BYTES);
	if (ud)
		return 0;
	/* cm.c cm_format_req_event: our responder resources are its initiator depth. */
	id->resp_res = m->msg.req.initiator_depth;
	id->init_depth = m->msg.req.responder_resources;
	e->ev.param.conn.responder_resources = id->resp_res;
	e->ev.param.conn.initiator_depth = id->init_depth;
	e->ev.param.conn.flow_control = m->msg.req.end_to_end_flow_control;
	e->ev.param.conn.retry_count = m->msg.req.retry_count;
	e->ev.param.conn.rnr_retry_count = m->msg.req.rnr_retry_count;
	e->ev.param.conn.srq = m->msg.req.srq;
	e->ev.param.conn.qp_num = m->msg.req.local_qpn;
	return 0;
}

/* The REP: with a QP, RTR, RTS and the RTU here, reported as ESTABLISHED. */
static int conn_resp(struct urnic_rdma_item *it, struct urnic_rdma_event *e)
{
	struct urnic_rdma_id *id = it->id;
	const struct urnic_cm_rep *rep = &it->ev.mad.msg.rep;
	int rc;

	copy_pdata(e, rep->private_data, sizeof(rep->private_data));
	/* cm.c cm_format_rep_event: the peer's initiator depth is our responder resources. */
	e->ev.param.conn.responder_resources = rep->initiator_depth;
	e->ev.param.conn.initiator_depth = rep->responder_resources;
	e->ev.param.conn.flow_control = rep->end_to_end_flow_control;
	e->ev.param.conn.rnr_retry_count = rep->rnr_retry_count;
	e->ev.param.conn.srq = rep->srq;
	e->ev.param.conn.qp_num = rep->local_qpn;
	if (!id->id.qp) {
		e->ev.event = RDMA_CM_EVENT_CONNECT_RESPONSE;
		return 0;
	}
	rc = urnic_rdma_rtr_rts(id, id->conn_resp_res, id->conn_init_depth);
	if (!rc)
		rc = rdma_establish(&id->id) ? -errno : 0;
	if (rc) {
		urnic_rdma_qp_to_err(id);
		rdma_reject(&id->id, NULL, 0);
		e->ev.event = RDMA_CM_EVENT_CONNECT_ERROR;
		e->ev.status = rc;
		return 0;
	}
	e->ev.event = RDMA_CM_EVENT_ESTABLISHED;
	return 0;
}

/* A SIDR_REP: the peer's QP, Q_Key and address handle attributes (cma_sidr_rep_handler). */
static void sidr_rep(struct urnic_rdma_item *it, struct urnic_rdma_event *e)
{
	const struct urnic_cm_sidr_rep *r = &it->ev.mad.msg.sidr_rep;
	struct ibv_ah_attr *ah = &e->ev.param.ud.ah_attr;

	memcpy(e->pdata, r->private_data, sizeof(r->private_data));
	e->ev.param.ud.private_data = e->pdata;
	e->ev.param.ud.private_data_len = sizeof(r->private_data);
	if (it->ev.type != URNIC_CM_EVENT_ESTABLISHED) {
		e->ev.event = RDMA_CM_EVENT_UNREACHABLE;
		e->ev.status = it->ev.status;
		return;
	}
	e->ev.event = RDMA_CM_EVENT_ESTABLISHED;
	e->ev.param.ud.qp_num = r->qpn;
	e->ev.param.ud.qkey = r->qkey;
	ah->is_global = 1;
	memcpy(&ah->grh.dgid, it->ev.peer.gid, 16);
	ah->grh.sgid_index = 1;
	ah->grh.hop_limit = 64;
	ah->grh.traffic_class = it->id->tos;
	ah->port_num = 1;
}

/* A device CM event; 1: nothing for the application. */
static int from_cm(struct urnic_rdma_item *it, struct urnic_rdma_event *e)
{
	struct urnic_rdma_id *id = it->id;
	const struct urnic_cm_mad *m = &it->ev.mad;

	e->ev.status = 0;
	switch (it->ev.type) {
	case URNIC_CM_EVENT_CONNECT_REQUEST:
		if (new_conn(it, e)) {
			rdma_reject(&id->id, NULL, 0);
			rdma_destroy_id(&id->id);
			return 1;
		}
		return 0;
	case URNIC_CM_EVENT_CONNECT_RESPONSE:
		return conn_resp(it, e);
	case URNIC_CM_EVENT_ESTABLISHED:
		if (m->hdr.attr_id == URNIC_CM_ATTR_SIDR_REP) {
			sidr_rep(it, e);
			return 0;
		}
		if (id->swallow_established) {
			id->swallow_established = false;
			return 1;
		}
		id->state = URNIC_RDMA_CONNECTED;
		e->ev.event = RDMA_CM_EVENT_ESTABLISHED;
		if (m->hdr.attr_id == URNIC_CM_ATTR_RTU)
			copy_pdata(e, m->msg.rtu.private_data, sizeof(m->msg.rtu.private_data));
		return 0;
	case URNIC_CM_EVENT_REJECTED:
		e->ev.event = RDMA_CM_EVENT_REJECTED;
		e->ev.status = it->ev.status;
		copy_pdata(e, m->msg.rej.private_data, sizeof(m->msg.rej.private_data));
		return 0;
	case URNIC_CM_EVENT_UNREACHABLE:
		if (m->hdr.attr_id == URNIC_CM_ATTR_SIDR_REP) {
			sidr_rep(it, e);
			return 0;
		}
		e->ev.event = RDMA_CM_EVENT_UNREACHABLE;
		e->ev.status = it->ev.status;
		return 0;
	case URNIC_CM_EVENT_DISCONNECTED:
		if (id->disconnected)
			return 1;
		id->disconnected = true;
		e->ev.event = RDMA_CM_EVENT_DISCONNECTED;
		if (m->hdr.attr_id == URNIC_CM_ATTR_DREQ)
			copy_pdata(e, m->msg.dreq.private_data, sizeof(m->msg.dreq.private_data));
		return 0;
	case URNIC_CM_EVENT_TIMEWAIT_EXIT:
		e->ev.event = RDMA_CM_EVENT_TIMEWAIT_EXIT;
		return 0;
	default:
		return 1;
	}
}

int urnic_rdma_translate(struct urnic_rdma_item *it, struct urnic_rdma_event *e)
{
	e->ev.id = &it->id->id;
	if (it->mc) {
		urnic_rdma_mc_event(it, e);
		return 0;
	}
	if (it->iw.set)
		return urnic_rdma_iw_translate(it, e);
	if (it->local) {
		e->ev.event = it->type;
		e->ev.status = it->status;
		return 0;
	}
	return from_cm(it, e);
}
