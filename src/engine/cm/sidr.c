// SPDX-License-Identifier: MIT
/*
 * sidr.c - Service ID Resolution (IBTA 12.11): a UD client asks which QP and Q_Key serve
 * a service ID (rdma_cm's UDP and IPoIB port spaces, rdma_resolve_route then
 * rdma_connect on a UD ID), as Linux's cm.c does it (ib_send_cm_sidr_req,
 * cm_sidr_req_handler, ib_send_cm_sidr_rep, cm_sidr_rep_handler).
 *
 * The request waits for its SIDR_REP with the caller's timeout and retries. A request is
 * a connection until the application answers it; a duplicate meanwhile is dropped, and
 * one after the answer is a new request (the answer may have been lost). No listener:
 * SIDR_REP 'unsupported'; a full backlog: 'rejected'. rdma_cm reports a SIDR_REP of
 * status 0 as ESTABLISHED and any other, or no answer, as UNREACHABLE.
 */
#include <errno.h>

#include "engine/cm/core.h"

int urnic_cm_sidr_request(struct urnic_cm *cm, const struct urnic_cm_sidr_param *p, uint64_t now_ns,
			  uint32_t *conn)
{
	struct urnic_cm_sidr_req *req;
	struct urnic_cm_mad m;
	struct cm_conn *c;

	if (!p || !conn || !p->timeout_ms || p->max_cm_retries > 15)
		return -EINVAL;
	urnic_cm_mad_init(&m, URNIC_CM_ATTR_SIDR_REQ, 0);
	req = &m.msg.sidr_req;
	if (urnic_cm_copy_pdata(req->private_data, sizeof(req->private_data), p->private_data,
				p->private_data_len))
		return -EINVAL;
	if (!cm_room(cm, 1, 0))
		return -EAGAIN;
	c = urnic_cm_conn_alloc(cm);
	if (!c) {
		cm_count(cm, URNIC_CM_C_conn_table_full);
		return -ENOMEM;
	}
	c->app_owned = true;
	c->sidr = true;
	c->user = p->user;
	c->service_id = p->service_id;
	c->peer = p->peer;
	c->pkey = p->pkey;
	c->timeout_ns = (uint64_t)p->timeout_ms * 1000000ull;
	c->max_retries = p->max_cm_retries;
	c->tid = urnic_cm_form_tid(cm, c);
	m.hdr.tid = c->tid;
	req->request_id = c->local_id;
	req->pkey = p->pkey;
	req->service_id = p->service_id;
	urnic_cm_send_awaiting(cm, c, &m, URNIC_CM_SIDR_REQ_SENT, now_ns);
	*conn = c->local_id;
	return 0;
}

int urnic_cm_rx_sidr_rep(struct urnic_cm *cm, const struct urnic_cm_mad *m,
			 const struct urnic_cm_addr *from, uint64_t now_ns)
{
	const struct urnic_cm_sidr_rep *rep = &m->msg.sidr_rep;
	struct cm_conn *c = urnic_cm_conn_find(cm, rep->request_id);

	if (!c || !c->sidr || c->passive) {
		cm_count(cm, URNIC_CM_C_drop_unknown_conn);
		return -EPROTO;
	}
	if (!cm_from_peer(cm, c, from))
		return -EPROTO;
	if (c->state != URNIC_CM_SIDR_REQ_SENT) {
		cm_count(cm, URNIC_CM_C_drop_state);
		return -EPROTO;
	}
	urnic_cm_reset_to_idle(cm, c);
	if (rep->status == URNIC_CM_SIDR_SUCCESS) {
		c->remote_qpn = rep->qpn;
		urnic_cm_tell(cm, c, URNIC_CM_EVENT_ESTABLISHED, 0, m);
	} else {
		urnic_cm_tell(cm, c, URNIC_CM_EVENT_UNREACHABLE, rep->status, m);
	}
	return 0;
}

int urnic_cm_rx_sidr_req(struct urnic_cm *cm, const struct urnic_cm_mad *m,
			 const struct urnic_cm_addr *from, uint64_t now_ns)
{
	const struct urnic_cm_sidr_req *req = &m->msg.sidr_req;
	uint64_t key = urnic_cm_gid_key(from->gid);
	struct cm_listener *l;
	struct cm_conn *c;

	if (!req->request_id) {
		cm_count(cm, URNIC_CM_C_drop_zero_comm_id);
		return -EPROTO;
	}
	if (urnic_cm_find_remote_id(cm, req->request_id, key, true)) {
		cm_count(cm, URNIC_CM_C_dup_sidr_req);
		return -EPROTO;
	}
	l = urnic_cm_listener_find(cm, req->service_id);
	if (!l || l->pending >= l->backlog) {
		urnic_cm_issue_sidr_rep(cm, m, from,
					l ? URNIC_CM_SIDR_REJECT : URNIC_CM_SIDR_UNSUPPORTED);
		cm_count(cm, l ? URNIC_CM_C_sidr_backlog_full : URNIC_CM_C_sidr_unsupported);
		return 0;
	}
	c = urnic_cm_conn_alloc(cm);
	if (!c) {
		cm_count(cm, URNIC_CM_C_conn_table_full);
		return -EPROTO;
	}
	c->app_owned = true;
	c->passive = true;
	c->sidr = true;
	c->user = l->user;
	c->remote_id = req->request_id;
	c->remote_guid = key;
	c->service_id = req->service_id;
	c->pkey = req->pkey;
	c->tid = m->hdr.tid;
	c->peer = *from;
	urnic_cm_backlog_take(cm, l, c);
	urnic_cm_index_rid(cm, c);
	urnic_cm_set_state(cm, c, URNIC_CM_SIDR_REQ_RCVD);
	urnic_cm_tell(cm, c, URNIC_CM_EVENT_CONNECT_REQUEST, 0, m);
	return 0;
}

void urnic_cm_send_sidr_rep(struct urnic_cm *cm, struct cm_conn *c,
			    const struct urnic_cm_sidr_reply_param *p)
{
	struct urnic_cm_sidr_rep *rep;
	struct urnic_cm_mad m;

	urnic_cm_mad_init(&m, URNIC_CM_ATTR_SIDR_REP, c->tid);
	rep = &m.msg.sidr_rep;
	rep->request_id = c->remote_id;
	rep->status = p->status;
	rep->qpn = p->qpn;
	rep->service_id = c->service_id;
	rep->qkey = p->qkey;
	if (p->info && p->info_len <= sizeof(rep->add_info)) {
		rep->add_info_length = p->info_len;
		memcpy(rep->add_info, p->info, p->info_len);
	}
	if (p->private_data && p->private_data_len <= sizeof(rep->private_data))
		memcpy(rep->private_data, p->private_data, p->private_data_len);
	urnic_cm_out_push(cm, &m, &c->peer, c->local_id);
}

int urnic_cm_sidr_reply(struct urnic_cm *cm, uint32_t conn,
			const struct urnic_cm_sidr_reply_param *p, uint64_t now_ns)
{
	struct cm_conn *c = urnic_cm_handle(cm, conn);

	if (!c)
		return -ENOENT;
	if (!p || c->state != URNIC_CM_SIDR_REQ_RCVD || p->qpn > 0xffffff ||
	    p->info_len > URNIC_CM_SIDR_INFO_BYTES || (p->info_len && !p->info) ||
	    p->private_data_len > sizeof(((struct urnic_cm_sidr_rep *)0)->private_data) ||
	    (p->private_data_len && !p->private_data))
		return -EINVAL;
	if (!cm_room(cm, 1, 0))
		return -EAGAIN;
	urnic_cm_send_sidr_rep(cm, c, p);
	/* ib_send_cm_sidr_rep: the request is answered and forgotten. */
	urnic_cm_reset_to_idle(cm, c);
	return 0;
}
