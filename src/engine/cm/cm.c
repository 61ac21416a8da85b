// SPDX-License-Identifier: MIT
/*
 * cm.c - the CM object of one device: made from a config, freed whole, and the actions on
 * a connection as a whole (destroy, query, the application's context).
 *
 * destroy is Linux's cm_destroy_id: what the state owes the peer goes out (a REJ before
 * the connection is established, 'timeout' with our CA GUID for our own unanswered REQ;
 * a DREQ, once, when established; the DREP when a DREQ came; a SIDR_REP 'rejected'), and
 * a connection that owes TimeWait stays in the table, without a handle, until it is over
 * (IBTA 12.9.8.3), so neither its comm ID nor its QP is mistaken for a new one.
 */
#include <errno.h>
#include <stdlib.h>

#include "engine/cm/core.h"
#include "wire/byteorder.h"

void urnic_cm_config_init(struct urnic_cm_config *cfg)
{
	*cfg = (struct urnic_cm_config){
		.max_conns = 1024,
		.max_listeners = 64,
		.out_slots = 256,
		.event_slots = 256,
		.hi_tid = 1,
		.prepare_mra = true,
	};
}

int urnic_cm_new(struct urnic_cm **cmp, const struct urnic_cm_config *cfg)
{
	struct urnic_cm *cm;

	if (!cmp || !cfg || !cfg->max_conns || cfg->max_conns > URNIC_CM_MAX_CONNS ||
	    !cfg->max_listeners || cfg->out_slots < 4 || cfg->event_slots < 4 ||
	    cfg->ack_delay > 31)
		return -EINVAL;
	cm = calloc(1, sizeof(*cm));
	if (!cm)
		return -ENOMEM;
	cm->cfg = *cfg;
	/* xorshift needs a state other than 0. */
	cm->rng = cfg->seed ? cfg->seed : 0x9e3779b97f4a7c15ull;
	cm->listeners = calloc(cfg->max_listeners, sizeof(*cm->listeners));
	if (!cm->listeners || urnic_cm_table_init(cm) || urnic_cm_queue_init(cm)) {
		urnic_cm_free(cm);
		return -ENOMEM;
	}
	*cmp = cm;
	return 0;
}

void urnic_cm_free(struct urnic_cm *cm)
{
	if (!cm)
		return;
	urnic_cm_table_fini(cm);
	urnic_cm_queue_fini(cm);
	free(cm->listeners);
	free(cm);
}

/* What cm_destroy_id sends in each state; true when the connection owes TimeWait. */
static bool part(struct urnic_cm *cm, struct cm_conn *c, uint64_t now_ns)
{
	static const struct urnic_cm_sidr_reply_param sidr_reject = {
		.status = URNIC_CM_SIDR_REJECT,
	};
	uint8_t guid[8];

	switch (c->state) {
	case URNIC_CM_SIDR_REQ_RCVD:
		urnic_cm_send_sidr_rep(cm, c, &sidr_reject);
		break;
	case URNIC_CM_REQ_SENT:
	case URNIC_CM_MRA_REQ_RCVD:
		urnic_put_be64(guid, cm->cfg.ca_guid);
		urnic_cm_send_rej(cm, c, URNIC_CM_REJ_TIMEOUT, guid, sizeof(guid), NULL, 0);
		break;
	case URNIC_CM_REQ_RCVD:
	case URNIC_CM_MRA_REQ_SENT:
	case URNIC_CM_REP_RCVD:
	case URNIC_CM_MRA_REP_SENT:
		urnic_cm_send_rej(cm, c, URNIC_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0);
		break;
	case URNIC_CM_REP_SENT:
	case URNIC_CM_MRA_REP_RCVD:
		urnic_cm_send_rej(cm, c, URNIC_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0);
		urnic_cm_enter_timewait(cm, c, now_ns);
		return true;
	case URNIC_CM_ESTABLISHED:
		/* cm_destroy_id: one DREQ, then TimeWait without waiting for the DREP. */
		urnic_cm_send_dreq(cm, c, NULL, 0, now_ns);
		urnic_cm_enter_timewait(cm, c, now_ns);
		return true;
	case URNIC_CM_DREQ_SENT:
		urnic_cm_enter_timewait(cm, c, now_ns);
		return true;
	case URNIC_CM_DREQ_RCVD:
		urnic_cm_send_drep(cm, c, NULL, 0, now_ns);
		return true;
	case URNIC_CM_TIMEWAIT:
		return true;
	default:
		break;
	}
	if (c->state != URNIC_CM_IDLE)
		urnic_cm_reset_to_idle(cm, c);
	return false;
}

int urnic_cm_destroy(struct urnic_cm *cm, uint32_t conn, uint64_t now_ns)
{
	struct cm_conn *c = urnic_cm_handle(cm, conn);

	if (!c)
		return -ENOENT;
	if (!cm_room(cm, 1, 0))
		return -EAGAIN;
	if (part(cm, c, now_ns)) {
		c->app_owned = false;
		return 0;
	}
	urnic_cm_conn_release(cm, c);
	return 0;
}

/* A connection whose last word was a DREP, once more: the process goes, and with it
 * the TimeWait that would answer a DREQ repeated because that DREP was lost (IBTA
 * 12.9: TimeWait answers a DREQ with the DREP again; the kernel's CM outlives the
 * process, this one does not). A duplicate DREP is harmless to a peer in TimeWait. */
static void drep_parting(struct urnic_cm *cm, struct cm_conn *c)
{
	if (c->state != URNIC_CM_TIMEWAIT || !c->sent_valid || c->sent_attr != URNIC_CM_ATTR_DREP ||
	    !cm_room(cm, 1, 0))
		return;
	urnic_cm_out_push_raw(cm, c->sent, &c->peer, c->local_id);
	cm_count(cm, URNIC_CM_C_drep_parting);
}

uint32_t urnic_cm_destroy_all(struct urnic_cm *cm, uint64_t now_ns)
{
	uint32_t left = 0;

	for (uint32_t i = 0; i < cm->cfg.max_conns; i++) {
		struct cm_conn *c = &cm->conns[i];

		if (!c->in_use || !c->app_owned)
			continue;
		if (!cm_room(cm, 1, 0)) {
			left++;
			continue;
		}
		if (part(cm, c, now_ns))
			c->app_owned = false;
		else
			urnic_cm_conn_release(cm, c);
	}
	for (uint32_t i = 0; i < cm->cfg.max_conns; i++)
		if (cm->conns[i].in_use)
			drep_parting(cm, &cm->conns[i]);
	return left;
}

int urnic_cm_set_user(struct urnic_cm *cm, uint32_t conn, uint64_t user)
{
	struct cm_conn *c = urnic_cm_handle(cm, conn);

	if (!c)
		return -ENOENT;
	c->user = user;
	return 0;
}

int urnic_cm_query(const struct urnic_cm *cm, uint32_t conn, struct urnic_cm_conn_info *info)
{
	const struct cm_conn *c = urnic_cm_conn_find(cm, conn);

	if (!c || !c->app_owned || !info)
		return -ENOENT;
	*info = (struct urnic_cm_conn_info){
		.state = c->state,
		.passive = c->passive,
		.local_id = c->local_id,
		.remote_id = c->remote_id,
		.service_id = c->service_id,
		.remote_guid = c->sidr ? 0 : c->remote_guid,
		.user = c->user,
		.peer = c->peer,
		.local_qpn = c->local_qpn,
		.remote_qpn = c->remote_qpn,
		.sq_psn = c->sq_psn,
		.rq_psn = c->rq_psn,
		.path_mtu = c->path_mtu,
		.responder_resources = c->responder_resources,
		.initiator_depth = c->initiator_depth,
		.retry_count = c->retry_count,
		.rnr_retry_count = c->rnr_retry_count,
		.ack_timeout = c->av_timeout,
		.pkey = c->pkey,
		.deadline_ns = c->deadline_ns,
	};
	return 0;
}

uint32_t urnic_cm_conns_in_use(const struct urnic_cm *cm)
{
	return cm->in_use;
}
