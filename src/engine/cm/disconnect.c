// SPDX-License-Identifier: MIT
/*
 * disconnect.c - releasing a connection (IBTA 12.6.10, 12.6.11, 12.9): DREQ, DREP and
 * the TimeWait that follows, as Linux's cm.c does it (ib_send_cm_dreq, ib_send_cm_drep,
 * cm_dreq_handler, cm_drep_handler).
 *
 * Either side may send the DREQ; it is retransmitted until a DREP comes or the retries run
 * out, and both lead to TimeWait. A DREQ received is reported (DISCONNECTED) and answered
 * by the application's disconnect() or destroy(). A DREQ that arrives again in TimeWait
 * gets the DREP again (ours was lost), and so does one after it while the application
 * still holds the connection; one for no connection gets a DREP all the same.
 */
#include <errno.h>

#include "engine/cm/core.h"

void urnic_cm_send_dreq(struct urnic_cm *cm, struct cm_conn *c, const void *pdata,
			uint8_t pdata_len, uint64_t now_ns)
{
	struct urnic_cm_mad m;

	/* cm_format_dreq: a new transaction of ours. */
	urnic_cm_mad_init(&m, URNIC_CM_ATTR_DREQ, urnic_cm_form_tid(cm, c));
	m.msg.dreq.local_comm_id = c->local_id;
	m.msg.dreq.remote_comm_id = c->remote_id;
	m.msg.dreq.remote_qpn_eecn = c->remote_qpn;
	if (pdata && pdata_len <= sizeof(m.msg.dreq.private_data))
		memcpy(m.msg.dreq.private_data, pdata, pdata_len);
	urnic_cm_send_awaiting(cm, c, &m, URNIC_CM_DREQ_SENT, now_ns);
}

void urnic_cm_send_drep(struct urnic_cm *cm, struct cm_conn *c, const void *pdata,
			uint8_t pdata_len, uint64_t now_ns)
{
	struct urnic_cm_mad m;

	urnic_cm_mad_init(&m, URNIC_CM_ATTR_DREP, c->tid);
	m.msg.drep.local_comm_id = c->local_id;
	m.msg.drep.remote_comm_id = c->remote_id;
	if (pdata && pdata_len <= sizeof(m.msg.drep.private_data))
		memcpy(m.msg.drep.private_data, pdata, pdata_len);
	/* Kept in c->sent: a DREQ again in TimeWait gets this DREP again. */
	urnic_cm_send(cm, c, &m);
	urnic_cm_enter_timewait(cm, c, now_ns);
}

int urnic_cm_disconnect(struct urnic_cm *cm, uint32_t conn, const void *private_data,
			uint8_t private_data_len, uint64_t now_ns)
{
	struct cm_conn *c = urnic_cm_handle(cm, conn);

	if (!c)
		return -ENOENT;
	if (c->state != URNIC_CM_ESTABLISHED && c->state != URNIC_CM_DREQ_RCVD)
		return -EINVAL;
	/* DREQ: 220 bytes of private data; DREP: 224. */
	if ((private_data_len && !private_data) ||
	    private_data_len > (c->state == URNIC_CM_ESTABLISHED ? 220 : 224))
		return -EINVAL;
	if (!cm_room(cm, 1, 0))
		return -EAGAIN;
	if (c->state == URNIC_CM_ESTABLISHED)
		urnic_cm_send_dreq(cm, c, private_data, private_data_len, now_ns);
	else
		urnic_cm_send_drep(cm, c, private_data, private_data_len, now_ns);
	return 0;
}

static void tell_disconnected(struct urnic_cm *cm, struct cm_conn *c, int32_t status,
			      const struct urnic_cm_mad *m)
{
	/* cma.c reports one DISCONNECTED per connection, whichever message came first. */
	if (c->disconnect_told)
		return;
	c->disconnect_told = true;
	urnic_cm_tell(cm, c, URNIC_CM_EVENT_DISCONNECTED, status, m);
}

/* A DREQ in TimeWait: our DREP was lost. The one we sent, or one like it. */
static void drep_again(struct urnic_cm *cm, struct cm_conn *c, const struct urnic_cm_mad *dreq)
{
	struct urnic_cm_mad m;

	if (c->sent_valid && c->sent_attr == URNIC_CM_ATTR_DREP) {
		urnic_cm_out_push_raw(cm, c->sent, &c->peer, c->local_id);
		return;
	}
	urnic_cm_mad_init(&m, URNIC_CM_ATTR_DREP, dreq->hdr.tid);
	m.msg.drep.local_comm_id = c->local_id;
	m.msg.drep.remote_comm_id = c->remote_id;
	urnic_cm_out_push(cm, &m, &c->peer, c->local_id);
}

int urnic_cm_rx_dreq(struct urnic_cm *cm, const struct urnic_cm_mad *m,
		     const struct urnic_cm_addr *from, uint64_t now_ns)
{
	const struct urnic_cm_dreq *dreq = &m->msg.dreq;
	struct cm_conn *c = urnic_cm_conn_find(cm, dreq->remote_comm_id);

	if (!c || !c->remote_id || c->remote_id != dreq->local_comm_id || c->sidr) {
		/* cm_issue_drep: the peer may have missed our DREP and we forgot it. */
		urnic_cm_issue_drep(cm, m, from);
		cm_count(cm, URNIC_CM_C_drep_unknown);
		return 0;
	}
	if (!cm_from_peer(cm, c, from))
		return -EPROTO;
	if (dreq->remote_qpn_eecn != c->local_qpn) {
		cm_count(cm, URNIC_CM_C_drop_dreq_qpn);
		return -EPROTO;
	}
	switch (c->state) {
	case URNIC_CM_REP_SENT:
	case URNIC_CM_MRA_REP_RCVD:
	case URNIC_CM_DREQ_SENT:
	case URNIC_CM_ESTABLISHED:
		break;
	case URNIC_CM_TIMEWAIT:
	case URNIC_CM_IDLE:
		/* Our DREP was lost; in IDLE TimeWait is over but the handle is still held. */
		cm_count(cm, URNIC_CM_C_dup_dreq);
		drep_again(cm, c, m);
		return 0;
	case URNIC_CM_DREQ_RCVD:
		cm_count(cm, URNIC_CM_C_dup_dreq);
		return -EPROTO;
	default:
		cm_count(cm, URNIC_CM_C_drop_state);
		return -EPROTO;
	}
	urnic_cm_disarm(c);
	c->tid = m->hdr.tid;
	urnic_cm_set_state(cm, c, URNIC_CM_DREQ_RCVD);
	tell_disconnected(cm, c, 0, m);
	return 0;
}

int urnic_cm_rx_drep(struct urnic_cm *cm, const struct urnic_cm_mad *m,
		     const struct urnic_cm_addr *from, uint64_t now_ns)
{
	const struct urnic_cm_drep *drep = &m->msg.drep;
	struct cm_conn *c = urnic_cm_conn_find(cm, drep->remote_comm_id);

	if (!c || !c->remote_id || c->remote_id != drep->local_comm_id || c->sidr) {
		cm_count(cm, URNIC_CM_C_drop_unknown_conn);
		return -EPROTO;
	}
	if (!cm_from_peer(cm, c, from))
		return -EPROTO;
	if (c->state == URNIC_CM_TIMEWAIT) {
		/* Crossed DREQs (both sides disconnect, as rping does): our DREP to the peer's
		 * DREQ put us in TimeWait before its DREP to ours came. cm.c ignores it too. */
		cm_count(cm, URNIC_CM_C_drep_in_timewait);
		return 0;
	}
	if (c->state != URNIC_CM_DREQ_SENT && c->state != URNIC_CM_DREQ_RCVD) {
		cm_count(cm, URNIC_CM_C_drop_state);
		return -EPROTO;
	}
	urnic_cm_enter_timewait(cm, c, now_ns);
	tell_disconnected(cm, c, 0, m);
	return 0;
}

/* DREQ retries ran out (tick.c): TimeWait all the same, reported as a timeout. */
void urnic_cm_dreq_timeout(struct urnic_cm *cm, struct cm_conn *c, uint64_t now_ns)
{
	cm_count(cm, URNIC_CM_C_dreq_timeout);
	urnic_cm_enter_timewait(cm, c, now_ns);
	tell_disconnected(cm, c, -ETIMEDOUT, NULL);
}
