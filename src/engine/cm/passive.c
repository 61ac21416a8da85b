// SPDX-License-Identifier: MIT
/*
 * passive.c - the passive side of a connection: a REQ for a listener (IBTA 12.6.5, 12.9),
 * the application's REP (accept, 12.6.8), and the RTU that establishes it (12.6.9).
 *
 * A REQ is matched as cm.c's cm_match_req does, in its order: a duplicate of a REQ a
 * connection already holds (same comm ID from the same CA GUID), a stale one (a live
 * connection already talks to that QP of that CA, IBTA 12.9.8.3: REJ 'stale connection'
 * and a DREQ for the old one), no listener (REJ 'invalid service ID'), then the backlog and
 * the table, whose overflow drops the REQ without a word as Linux does.
 */
#include <errno.h>

#include "engine/cm/core.h"

/* A REQ this CM has seen: answer what its state owes the peer (cm_dup_req_handler). */
static int dup_req(struct urnic_cm *cm, struct cm_conn *c, const struct urnic_cm_addr *from)
{
	cm_count(cm, URNIC_CM_C_dup_req);
	if (!cm_from_peer(cm, c, from))
		return -EPROTO;
	switch (c->state) {
	case URNIC_CM_MRA_REQ_SENT:
		/* rdma_cm's prepared MRA: the application has not answered yet. */
		urnic_cm_send_mra(cm, c, c->service_timeout);
		return 0;
	case URNIC_CM_REP_SENT:
	case URNIC_CM_MRA_REP_RCVD:
		/* IBTA 12.9: the REP was lost; send it again at once rather than wait
		 * for its own timer. */
		if (!c->sent_valid)
			return -EPROTO;
		urnic_cm_out_push_raw(cm, c->sent, &c->peer, c->local_id);
		return 0;
	case URNIC_CM_TIMEWAIT:
		urnic_cm_send_rej(cm, c, URNIC_CM_REJ_STALE_CONN, NULL, 0, NULL, 0);
		cm_count(cm, URNIC_CM_C_rej_stale);
		return 0;
	default:
		/* REQ_RCVD: the application has it; ESTABLISHED: the RTU came. */
		return -EPROTO;
	}
}

/* IBTA 12.9.8.3: a REQ from a QP that a live connection of ours already talks to. The
 * REQ's sender gets a REJ; the old connection, if established, a DREQ (cm_match_req). */
static int stale_req(struct urnic_cm *cm, struct cm_conn *old, const struct urnic_cm_mad *m,
		     const struct urnic_cm_addr *from, uint64_t now_ns)
{
	urnic_cm_issue_rej(cm, m, from, URNIC_CM_REJ_STALE_CONN, URNIC_CM_MSG_CODE_REQ);
	cm_count(cm, URNIC_CM_C_rej_stale);
	if (old->state == URNIC_CM_ESTABLISHED)
		urnic_cm_send_dreq(cm, old, NULL, 0, now_ns);
	return 0;
}

/* The connection a REQ makes: what cm_req_handler keeps of it. */
static void take_req(struct urnic_cm *cm, struct cm_conn *c, const struct urnic_cm_mad *m,
		     const struct urnic_cm_addr *from)
{
	const struct urnic_cm_req *req = &m->msg.req;
	uint8_t ack = req->primary.local_ack_timeout;

	c->app_owned = true;
	c->passive = true;
	c->transport = req->transport_type;
	c->remote_id = req->local_comm_id;
	c->remote_guid = req->local_ca_guid;
	c->remote_qpn = req->local_qpn;
	c->service_id = req->service_id;
	c->tid = m->hdr.tid;
	c->peer = *from;
	/* The REP waits as long as the active side says it takes to answer. */
	c->timeout_ns = urnic_cm_time_ns(req->local_cm_response_timeout);
	c->max_retries = req->max_cm_retries;
	c->sq_psn = req->starting_psn;
	c->initiator_depth = req->responder_resources;
	c->responder_resources = req->initiator_depth;
	c->path_mtu = req->path_mtu;
	c->pkey = req->pkey;
	c->retry_count = req->retry_count;
	c->rnr_retry_count = req->rnr_retry_count;
	/* cm.c: the path's life time is the REQ's ACK timeout less one, av.timeout that
	 * plus one. */
	c->av_timeout = ack ? ack : 1;
}

static bool transport_ok(const struct urnic_cm_req *req)
{
	return req->transport_type == URNIC_CM_TRANSPORT_RC ||
	       req->transport_type == URNIC_CM_TRANSPORT_UC ||
	       (req->transport_type == URNIC_CM_TRANSPORT_EXT &&
		req->ext_transport_type == URNIC_CM_EXT_TRANSPORT_XRC);
}

int urnic_cm_rx_req(struct urnic_cm *cm, const struct urnic_cm_mad *m,
		    const struct urnic_cm_addr *from, uint64_t now_ns)
{
	const struct urnic_cm_req *req = &m->msg.req;
	struct cm_listener *l;
	struct cm_conn *c;

	if (!req->local_comm_id) {
		cm_count(cm, URNIC_CM_C_drop_zero_comm_id);
		return -EPROTO;
	}
	c = urnic_cm_find_remote_id(cm, req->local_comm_id, req->local_ca_guid, false);
	if (c)
		return dup_req(cm, c, from);
	c = urnic_cm_find_remote_qpn(cm, req->local_qpn, req->local_ca_guid);
	if (c)
		return stale_req(cm, c, m, from, now_ns);
	l = urnic_cm_listener_find(cm, req->service_id);
	if (!l && urnic_cm_park(cm, m, from, now_ns))
		return 0;
	if (!l) {
		urnic_cm_issue_rej(cm, m, from, URNIC_CM_REJ_INVALID_SERVICE_ID,
				   URNIC_CM_MSG_CODE_REQ);
		cm_count(cm, URNIC_CM_C_rej_invalid_service);
		return 0;
	}
	if (!transport_ok(req)) {
		urnic_cm_issue_rej(cm, m, from, URNIC_CM_REJ_INVALID_TRANSPORT_TYPE,
				   URNIC_CM_MSG_CODE_REQ);
		cm_count(cm, URNIC_CM_C_rej_transport);
		return 0;
	}
	if (l->pending >= l->backlog) {
		cm_count(cm, URNIC_CM_C_req_backlog_full);
		return -EPROTO;
	}
	c = urnic_cm_conn_alloc(cm);
	if (!c) {
		cm_count(cm, URNIC_CM_C_conn_table_full);
		return -EPROTO;
	}
	take_req(cm, c, m, from);
	c->user = l->user;
	urnic_cm_backlog_take(cm, l, c);
	urnic_cm_index_rid(cm, c);
	urnic_cm_index_qpn(cm, c);
	urnic_cm_set_state(cm, c, URNIC_CM_REQ_RCVD);
	urnic_cm_tell(cm, c, URNIC_CM_EVENT_CONNECT_REQUEST, 0, m);
	if (cm->cfg.prepare_mra) {
		/* cma.c ib_prepare_cm_mra: no MRA now, one for each duplicate. */
		c->service_timeout = URNIC_CM_MRA_SETTING;
		urnic_cm_set_state(cm, c, URNIC_CM_MRA_REQ_SENT);
	}
	return 0;
}

static bool accept_param_ok(const struct urnic_cm_accept_param *p)
{
	return p && p->qpn <= 0xffffff && p->starting_psn <= 0xffffff && p->rnr_retry_count <= 7 &&
	       p->failover_accepted <= 3 && p->flow_control <= 1 && p->srq <= 1;
}

int urnic_cm_accept(struct urnic_cm *cm, uint32_t conn, const struct urnic_cm_accept_param *p,
		    uint64_t now_ns)
{
	struct cm_conn *c = urnic_cm_handle(cm, conn);
	struct urnic_cm_rep *rep;
	struct urnic_cm_mad m;

	if (!c)
		return -ENOENT;
	if (c->sidr || (c->state != URNIC_CM_REQ_RCVD && c->state != URNIC_CM_MRA_REQ_SENT) ||
	    !accept_param_ok(p))
		return -EINVAL;
	urnic_cm_mad_init(&m, URNIC_CM_ATTR_REP, c->tid);
	rep = &m.msg.rep;
	if (urnic_cm_copy_pdata(rep->private_data, sizeof(rep->private_data), p->private_data,
				p->private_data_len))
		return -EINVAL;
	rep->local_comm_id = c->local_id;
	rep->remote_comm_id = c->remote_id;
	rep->local_qpn = p->qpn;
	rep->starting_psn = p->starting_psn;
	rep->responder_resources = p->responder_resources;
	rep->initiator_depth = p->initiator_depth;
	rep->target_ack_delay = cm->cfg.ack_delay & 31;
	rep->failover_accepted = p->failover_accepted;
	rep->end_to_end_flow_control = p->flow_control;
	rep->rnr_retry_count = p->rnr_retry_count;
	rep->srq = p->srq;
	rep->local_ca_guid = cm->cfg.ca_guid;
	if (urnic_cm_check(&m) != URNIC_CM_R_OK)
		return -EINVAL;
	if (!cm_room(cm, 1, 0))
		return -EAGAIN;
	c->local_qpn = p->qpn;
	c->rq_psn = p->starting_psn;
	c->responder_resources = p->responder_resources;
	c->initiator_depth = p->initiator_depth;
	urnic_cm_send_awaiting(cm, c, &m, URNIC_CM_REP_SENT, now_ns);
	return 0;
}

int urnic_cm_rx_rtu(struct urnic_cm *cm, const struct urnic_cm_mad *m,
		    const struct urnic_cm_addr *from, uint64_t now_ns)
{
	const struct urnic_cm_rtu *rtu = &m->msg.rtu;
	struct cm_conn *c = urnic_cm_conn_find(cm, rtu->remote_comm_id);

	if (!c || !c->remote_id || c->remote_id != rtu->local_comm_id) {
		cm_count(cm, URNIC_CM_C_drop_unknown_conn);
		return -EPROTO;
	}
	if (!cm_from_peer(cm, c, from))
		return -EPROTO;
	if (c->state != URNIC_CM_REP_SENT && c->state != URNIC_CM_MRA_REP_RCVD) {
		cm_count(cm, URNIC_CM_C_dup_rtu);
		return -EPROTO;
	}
	urnic_cm_disarm(c);
	urnic_cm_set_state(cm, c, URNIC_CM_ESTABLISHED);
	urnic_cm_tell(cm, c, URNIC_CM_EVENT_ESTABLISHED, 0, m);
	return 0;
}

/* A REQ for a service ID nobody listens on waits up to URNIC_CM_PARK_NS for a listener
 * before it is rejected (IBTA 12.6.5: REJ 'invalid service ID'). Programs that
 * synchronize out of band and then connect at once (perftest -R: the client's REQ
 * follows the handshake while the server is between its handshake and rdma_listen)
 * need the passive side to be as slow to refuse as Linux's rdma_cm, whose REQ goes
 * through two resolution work items first. A REJ that comes a little later is one a
 * slower CM would send; the slots are few, so a flood is rejected at once. */
bool urnic_cm_park(struct urnic_cm *cm, const struct urnic_cm_mad *m,
		   const struct urnic_cm_addr *from, uint64_t now_ns)
{
	for (uint32_t i = 0; i < URNIC_CM_PARK_SLOTS; i++) {
		struct cm_parked *p = &cm->parked[i];

		if (p->used)
			continue;
		*p = (struct cm_parked){
			.used = true, .until = now_ns + URNIC_CM_PARK_NS, .from = *from, .mad = *m
		};
		if (!cm->next_deadline || p->until < cm->next_deadline)
			cm->next_deadline = p->until;
		cm_count(cm, URNIC_CM_C_req_parked);
		return true;
	}
	return false;
}

void urnic_cm_park_tick(struct urnic_cm *cm, uint64_t now_ns, uint64_t *next)
{
	for (uint32_t i = 0; i < URNIC_CM_PARK_SLOTS; i++) {
		struct cm_parked *p = &cm->parked[i];
		bool heard = p->used && urnic_cm_listener_find(cm, p->mad.msg.req.service_id);

		if (!p->used)
			continue;
		if (!heard && p->until > now_ns) {
			if (!*next || p->until < *next)
				*next = p->until;
			continue;
		}
		if (!cm_room(cm, 1, 1)) {
			*next = now_ns ? now_ns : 1;
			continue;
		}
		p->used = false;
		if (heard) {
			cm_count(cm, URNIC_CM_C_req_unparked);
			urnic_cm_rx_req(cm, &p->mad, &p->from, now_ns);
			continue;
		}
		urnic_cm_issue_rej(cm, &p->mad, &p->from, URNIC_CM_REJ_INVALID_SERVICE_ID,
				   URNIC_CM_MSG_CODE_REQ);
		cm_count(cm, URNIC_CM_C_rej_invalid_service);
	}
}

bool urnic_cm_unpark(struct urnic_cm *cm, uint32_t remote_comm_id, uint64_t remote_ca_guid)
{
	for (uint32_t i = 0; i < URNIC_CM_PARK_SLOTS; i++) {
		struct cm_parked *p = &cm->parked[i];

		if (p->used && p->mad.msg.req.local_comm_id == remote_comm_id &&
		    p->mad.msg.req.local_ca_guid == remote_ca_guid) {
			p->used = false;
			cm_count(cm, URNIC_CM_C_req_handed_on);
			return true;
		}
	}
	return false;
}
