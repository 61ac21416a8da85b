// SPDX-License-Identifier: MIT
/*
 * active.c - the active side of a connection: the REQ (IBTA 12.6.5), the REP that
 * answers it (12.6.8) and the RTU that establishes it (12.6.9, establish()), plus the
 * passive side's establishment without an RTU (traffic came first: IB_EVENT_COMM_EST).
 *
 * The REQ is cm.c's cm_format_req for a RoCEv2 path (hop limit over 1: permissive LIDs,
 * not subnet local), its wait cm.c's: twice the packet life time plus the peer's
 * response timeout, Max CM Retries times again. A REP is matched by the comm ID it
 * names while the REQ waits for it; afterwards a REP is a duplicate (the RTU was lost:
 * it is sent again) or unknown. A REP from a QP a live connection already talks to is
 * stale (IBTA 12.9.8.3).
 */
#include <errno.h>

#include "engine/cm/core.h"

static bool connect_param_ok(const struct urnic_cm_connect_param *p)
{
	return (p->transport == URNIC_CM_TRANSPORT_RC || p->transport == URNIC_CM_TRANSPORT_UC) &&
	       p->path_mtu >= 1 && p->path_mtu <= 5 && p->qpn <= 0xffffff &&
	       p->starting_psn <= 0xffffff && p->remote_cm_response_timeout <= 31 &&
	       p->local_cm_response_timeout <= 31 && p->packet_life_time <= 31 &&
	       p->max_cm_retries <= 15 && p->retry_count <= 7 && p->rnr_retry_count <= 7 &&
	       p->srq <= 1 && p->flow_control <= 1 && p->flow_label <= 0xfffff && p->sl <= 15 &&
	       p->packet_rate <= 63;
}

static int format_req(const struct urnic_cm *cm, struct urnic_cm_mad *m,
		      const struct urnic_cm_connect_param *p)
{
	struct urnic_cm_req *req = &m->msg.req;
	bool routed = p->hop_limit > 1;

	urnic_cm_mad_init(m, URNIC_CM_ATTR_REQ, 0);
	if (urnic_cm_copy_pdata(req->private_data, sizeof(req->private_data), p->private_data,
				p->private_data_len))
		return -EINVAL;
	req->service_id = p->service_id;
	req->local_ca_guid = cm->cfg.ca_guid;
	req->local_qpn = p->qpn;
	req->responder_resources = p->responder_resources;
	req->initiator_depth = p->initiator_depth;
	req->remote_cm_response_timeout = p->remote_cm_response_timeout;
	req->transport_type = p->transport;
	req->end_to_end_flow_control = p->flow_control;
	req->starting_psn = p->starting_psn;
	req->local_cm_response_timeout = p->local_cm_response_timeout;
	req->retry_count = p->retry_count;
	req->pkey = p->pkey;
	req->path_mtu = p->path_mtu;
	req->rnr_retry_count = p->rnr_retry_count;
	req->max_cm_retries = p->max_cm_retries;
	req->srq = p->srq;
	/* cm_format_req: a routed path (RoCEv2) has no LIDs to give: permissive ones. */
	req->primary.local_lid = routed ? 0xffff : 0;
	req->primary.remote_lid = routed ? 0xffff : 0;
	memcpy(req->primary.local_gid, p->local_gid, 16);
	memcpy(req->primary.remote_gid, p->peer.gid, 16);
	req->primary.flow_label = p->flow_label;
	req->primary.packet_rate = p->packet_rate;
	req->primary.traffic_class = p->traffic_class;
	req->primary.hop_limit = p->hop_limit;
	req->primary.sl = p->sl;
	req->primary.subnet_local = !routed;
	req->primary.local_ack_timeout =
		urnic_cm_ack_timeout(cm->cfg.ack_delay, p->packet_life_time);
	return urnic_cm_check(m) == URNIC_CM_R_OK ? 0 : -EINVAL;
}

static void take_connect(struct urnic_cm *cm, struct cm_conn *c,
			 const struct urnic_cm_connect_param *p)
{
	c->app_owned = true;
	c->user = p->user;
	c->transport = p->transport;
	c->service_id = p->service_id;
	c->peer = p->peer;
	c->local_qpn = p->qpn;
	c->rq_psn = p->starting_psn;
	c->pkey = p->pkey;
	c->path_mtu = p->path_mtu;
	c->responder_resources = p->responder_resources;
	c->initiator_depth = p->initiator_depth;
	c->retry_count = p->retry_count;
	c->rnr_retry_count = p->rnr_retry_count;
	c->max_retries = p->max_cm_retries;
	/* ib_send_cm_req: timeout_ms = 2 * packet life time + the peer's response
	 * timeout; cm_init_av_by_path: av.timeout = packet life time + 1. */
	c->timeout_ns = 2 * urnic_cm_time_ns(p->packet_life_time) +
			urnic_cm_time_ns(p->remote_cm_response_timeout);
	c->av_timeout = p->packet_life_time < 31 ? p->packet_life_time + 1 : 31;
	c->tid = urnic_cm_form_tid(cm, c);
}

int urnic_cm_connect(struct urnic_cm *cm, const struct urnic_cm_connect_param *p, uint64_t now_ns,
		     uint32_t *conn)
{
	struct urnic_cm_mad m;
	struct cm_conn *c;

	if (!p || !conn || !connect_param_ok(p) || format_req(cm, &m, p))
		return -EINVAL;
	if (!cm_room(cm, 1, 0))
		return -EAGAIN;
	c = urnic_cm_conn_alloc(cm);
	if (!c) {
		cm_count(cm, URNIC_CM_C_conn_table_full);
		return -ENOMEM;
	}
	take_connect(cm, c, p);
	m.hdr.tid = c->tid;
	m.msg.req.local_comm_id = c->local_id;
	urnic_cm_send_awaiting(cm, c, &m, URNIC_CM_REQ_SENT, now_ns);
	*conn = c->local_id;
	return 0;
}

/* A REP for a connection past REQ_SENT (cm_dup_rep_handler): the RTU or the MRA again. */
static int dup_rep(struct urnic_cm *cm, struct cm_conn *c)
{
	cm_count(cm, URNIC_CM_C_dup_rep);
	if (c->state == URNIC_CM_ESTABLISHED && c->sent_valid) {
		urnic_cm_out_push_raw(cm, c->sent, &c->peer, c->local_id);
		return 0;
	}
	if (c->state == URNIC_CM_MRA_REP_SENT) {
		urnic_cm_send_mra(cm, c, c->service_timeout);
		return 0;
	}
	return -EPROTO;
}

/* cm_rep_handler: remember the passive side, report the REP. */
static void take_rep(struct urnic_cm *cm, struct cm_conn *c, const struct urnic_cm_mad *m)
{
	const struct urnic_cm_rep *rep = &m->msg.rep;

	c->remote_id = rep->local_comm_id;
	c->remote_guid = rep->local_ca_guid;
	c->remote_qpn = rep->local_qpn;
	c->initiator_depth = rep->responder_resources;
	c->responder_resources = rep->initiator_depth;
	c->sq_psn = rep->starting_psn;
	c->rnr_retry_count = rep->rnr_retry_count;
	c->av_timeout = urnic_cm_ack_timeout(rep->target_ack_delay, c->av_timeout - 1);
	urnic_cm_index_rid(cm, c);
	urnic_cm_index_qpn(cm, c);
	urnic_cm_disarm(c);
	urnic_cm_set_state(cm, c, URNIC_CM_REP_RCVD);
	urnic_cm_tell(cm, c, URNIC_CM_EVENT_CONNECT_RESPONSE, 0, m);
	if (cm->cfg.prepare_mra) {
		c->service_timeout = URNIC_CM_MRA_SETTING;
		urnic_cm_set_state(cm, c, URNIC_CM_MRA_REP_SENT);
	}
}

int urnic_cm_rx_rep(struct urnic_cm *cm, const struct urnic_cm_mad *m,
		    const struct urnic_cm_addr *from, uint64_t now_ns)
{
	const struct urnic_cm_rep *rep = &m->msg.rep;
	struct cm_conn *c = urnic_cm_conn_find(cm, rep->remote_comm_id), *old;

	if (!rep->local_comm_id) {
		cm_count(cm, URNIC_CM_C_drop_zero_comm_id);
		return -EPROTO;
	}
	if (!c || c->passive || c->sidr || (c->remote_id && c->remote_id != rep->local_comm_id)) {
		cm_count(cm, URNIC_CM_C_drop_unknown_conn);
		return -EPROTO;
	}
	if (!cm_from_peer(cm, c, from))
		return -EPROTO;
	if (c->remote_id)
		return dup_rep(cm, c);
	if (c->state != URNIC_CM_REQ_SENT && c->state != URNIC_CM_MRA_REQ_RCVD) {
		cm_count(cm, URNIC_CM_C_drop_state);
		return -EPROTO;
	}
	if (urnic_cm_find_remote_id(cm, rep->local_comm_id, rep->local_ca_guid, false)) {
		cm_count(cm, URNIC_CM_C_drop_rep_dup_remote);
		return -EPROTO;
	}
	old = urnic_cm_find_remote_qpn(cm, rep->local_qpn, rep->local_ca_guid);
	if (old) {
		/* IBTA 12.9.8.3, cm_rep_handler: REJ the REP, DREQ the old connection. */
		urnic_cm_issue_rej(cm, m, from, URNIC_CM_REJ_STALE_CONN, URNIC_CM_MSG_CODE_REP);
		cm_count(cm, URNIC_CM_C_rej_stale);
		if (old->state == URNIC_CM_ESTABLISHED)
			urnic_cm_send_dreq(cm, old, NULL, 0, now_ns);
		return 0;
	}
	take_rep(cm, c, m);
	return 0;
}

static int send_rtu(struct urnic_cm *cm, struct cm_conn *c, const void *pdata, uint8_t len)
{
	struct urnic_cm_mad m;

	urnic_cm_mad_init(&m, URNIC_CM_ATTR_RTU, c->tid);
	if (urnic_cm_copy_pdata(m.msg.rtu.private_data, sizeof(m.msg.rtu.private_data), pdata, len))
		return -EINVAL;
	if (!cm_room(cm, 1, 1))
		return -EAGAIN;
	m.msg.rtu.local_comm_id = c->local_id;
	m.msg.rtu.remote_comm_id = c->remote_id;
	/* Kept in c->sent: a duplicate REP gets this RTU again. */
	urnic_cm_send(cm, c, &m);
	return 0;
}

int urnic_cm_establish(struct urnic_cm *cm, uint32_t conn, const void *private_data,
		       uint8_t private_data_len, uint64_t now_ns)
{
	struct cm_conn *c = urnic_cm_handle(cm, conn);
	int ret;

	if (!c)
		return -ENOENT;
	switch (c->state) {
	case URNIC_CM_REP_RCVD:
	case URNIC_CM_MRA_REP_SENT:
		ret = send_rtu(cm, c, private_data, private_data_len);
		if (ret)
			return ret;
		break;
	case URNIC_CM_REP_SENT:
	case URNIC_CM_MRA_REP_RCVD:
		/* cm_establish: the RTU may still come; it will be a duplicate. */
		if (!cm_room(cm, 0, 1))
			return -EAGAIN;
		urnic_cm_disarm(c);
		break;
	case URNIC_CM_ESTABLISHED:
		return -EISCONN;
	default:
		return -EINVAL;
	}
	urnic_cm_set_state(cm, c, URNIC_CM_ESTABLISHED);
	urnic_cm_tell(cm, c, URNIC_CM_EVENT_ESTABLISHED, 0, NULL);
	return 0;
}
