// SPDX-License-Identifier: MIT
/*
 * reject.c - Connection Reject (IBTA 12.6.7): the application's REJ of a REQ or REP,
 * and a REJ received for one of ours, as Linux's cm.c handles them (ib_send_cm_rej,
 * cm_rej_handler). Before our REP a reject forgets the connection (IDLE); after it, the
 * QP rests in TimeWait. A REJ 'stale connection' always leads to TimeWait (12.9.8.3).
 */
#include <errno.h>

#include "engine/cm/core.h"
#include "wire/byteorder.h"

void urnic_cm_send_rej(struct urnic_cm *cm, struct cm_conn *c, uint16_t reason, const void *ari,
		       uint8_t ari_len, const void *pdata, uint8_t pdata_len)
{
	struct urnic_cm_rej *rej;
	struct urnic_cm_mad m;

	urnic_cm_mad_init(&m, URNIC_CM_ATTR_REJ, c->tid);
	rej = &m.msg.rej;
	rej->remote_comm_id = c->remote_id;
	rej->local_comm_id = c->local_id;
	/* cm_format_rej: the message rejected follows the state; in REQ_RCVD cm.c
	 * names no local comm ID. */
	switch (c->state) {
	case URNIC_CM_REQ_RCVD:
		rej->local_comm_id = 0;
		rej->message_rejected = URNIC_CM_MSG_CODE_REQ;
		break;
	case URNIC_CM_MRA_REQ_SENT:
		rej->message_rejected = URNIC_CM_MSG_CODE_REQ;
		break;
	case URNIC_CM_REP_RCVD:
	case URNIC_CM_MRA_REP_SENT:
		rej->message_rejected = URNIC_CM_MSG_CODE_REP;
		break;
	default:
		rej->message_rejected = URNIC_CM_MSG_CODE_OTHER;
		break;
	}
	rej->reason = reason;
	if (ari && ari_len && ari_len <= sizeof(rej->ari)) {
		rej->ari_length = ari_len;
		memcpy(rej->ari, ari, ari_len);
	}
	if (pdata && pdata_len <= sizeof(rej->private_data))
		memcpy(rej->private_data, pdata, pdata_len);
	urnic_cm_out_push(cm, &m, &c->peer, c->local_id);
}

int urnic_cm_reject(struct urnic_cm *cm, uint32_t conn, uint16_t reason, const void *private_data,
		    uint8_t private_data_len, uint64_t now_ns)
{
	struct cm_conn *c = urnic_cm_handle(cm, conn);
	bool timewait;

	if (!c)
		return -ENOENT;
	if (private_data_len > sizeof(((struct urnic_cm_rej *)0)->private_data) ||
	    (private_data_len && !private_data))
		return -EINVAL;
	switch (c->state) {
	case URNIC_CM_REQ_SENT:
	case URNIC_CM_MRA_REQ_RCVD:
	case URNIC_CM_REQ_RCVD:
	case URNIC_CM_MRA_REQ_SENT:
	case URNIC_CM_REP_RCVD:
	case URNIC_CM_MRA_REP_SENT:
		timewait = false;
		break;
	case URNIC_CM_REP_SENT:
	case URNIC_CM_MRA_REP_RCVD:
		timewait = true;
		break;
	default:
		return -EINVAL;
	}
	if (!cm_room(cm, 1, 0))
		return -EAGAIN;
	urnic_cm_send_rej(cm, c, reason, NULL, 0, private_data, private_data_len);
	if (timewait)
		urnic_cm_enter_timewait(cm, c, now_ns);
	else
		urnic_cm_reset_to_idle(cm, c);
	return 0;
}

/* cm_acquire_rejected_id: a REJ 'timeout' names the abandoning CA by GUID in its ARI (its
 * REQ had not been answered, so it may not know our comm ID); a REJ of a REQ names only
 * our ID; any other names both. */
static struct cm_conn *rejected(struct urnic_cm *cm, const struct urnic_cm_rej *rej)
{
	struct cm_conn *c;

	if (rej->reason == URNIC_CM_REJ_TIMEOUT) {
		if (rej->ari_length < 8)
			return NULL;
		return urnic_cm_find_remote_id(cm, rej->local_comm_id, urnic_get_be64(rej->ari),
					       false);
	}
	c = urnic_cm_conn_find(cm, rej->remote_comm_id);
	if (!c || c->sidr)
		return NULL;
	if (rej->message_rejected == URNIC_CM_MSG_CODE_REQ)
		return !c->passive && !c->remote_id ? c : NULL;
	return c->remote_id && c->remote_id == rej->local_comm_id ? c : NULL;
}

int urnic_cm_rx_rej(struct urnic_cm *cm, const struct urnic_cm_mad *m,
		    const struct urnic_cm_addr *from, uint64_t now_ns)
{
	const struct urnic_cm_rej *rej = &m->msg.rej;
	struct cm_conn *c = rejected(cm, rej);

	if (!c) {
		cm_count(cm, URNIC_CM_C_drop_unknown_conn);
		return -EPROTO;
	}
	if (!cm_from_peer(cm, c, from))
		return -EPROTO;
	switch (c->state) {
	case URNIC_CM_REQ_SENT:
	case URNIC_CM_MRA_REQ_RCVD:
	case URNIC_CM_REP_SENT:
	case URNIC_CM_MRA_REP_RCVD:
	case URNIC_CM_REQ_RCVD:
	case URNIC_CM_MRA_REQ_SENT:
		if (rej->reason == URNIC_CM_REJ_STALE_CONN)
			urnic_cm_enter_timewait(cm, c, now_ns);
		else
			urnic_cm_reset_to_idle(cm, c);
		break;
	case URNIC_CM_DREQ_SENT:
	case URNIC_CM_REP_RCVD:
	case URNIC_CM_MRA_REP_SENT:
	case URNIC_CM_ESTABLISHED:
		urnic_cm_enter_timewait(cm, c, now_ns);
		break;
	default:
		cm_count(cm, URNIC_CM_C_drop_state);
		return -EPROTO;
	}
	cm_count(cm, URNIC_CM_C_rej_received);
	urnic_cm_tell(cm, c, URNIC_CM_EVENT_REJECTED, rej->reason, m);
	return 0;
}
