// SPDX-License-Identifier: MIT
/*
 * mra.c - Message Receipt Acknowledgement (IBTA 12.6.6): "your REQ (or REP) arrived, the
 * answer will take up to the service timeout".
 *
 * Sent by the application (mra()) or, as rdma_cm has cm.c do (ib_prepare_cm_mra), for
 * each duplicate of a REQ or REP the application has not answered yet, with a service
 * timeout of 24 (about 69 s). Received, it extends the current wait of the REQ or REP to
 * the service timeout plus the packet life time (cm_mra_handler); the retries left do not
 * change and later waits are the usual ones (Linux's mad.c since the MRA timeout stopped
 * being kept for every retry). A second MRA for the same message is a duplicate.
 */
#include <errno.h>

#include "engine/cm/core.h"

void urnic_cm_send_mra(struct urnic_cm *cm, struct cm_conn *c, uint8_t service_timeout)
{
	bool rep = c->state == URNIC_CM_REP_RCVD || c->state == URNIC_CM_MRA_REP_SENT;
	struct urnic_cm_mad m;

	urnic_cm_mad_init(&m, URNIC_CM_ATTR_MRA, c->tid);
	m.msg.mra.local_comm_id = c->local_id;
	m.msg.mra.remote_comm_id = c->remote_id;
	m.msg.mra.message_mraed = rep ? URNIC_CM_MSG_CODE_REP : URNIC_CM_MSG_CODE_REQ;
	m.msg.mra.service_timeout = service_timeout & 31;
	urnic_cm_out_push(cm, &m, &c->peer, c->local_id);
}

int urnic_cm_mra(struct urnic_cm *cm, uint32_t conn, uint8_t service_timeout, uint64_t now_ns)
{
	struct cm_conn *c = urnic_cm_handle(cm, conn);

	if (!c)
		return -ENOENT;
	if (service_timeout > 31)
		return -EINVAL;
	switch (c->state) {
	case URNIC_CM_REQ_RCVD:
	case URNIC_CM_MRA_REQ_SENT:
	case URNIC_CM_REP_RCVD:
	case URNIC_CM_MRA_REP_SENT:
		break;
	default:
		return -EINVAL;
	}
	if (!cm_room(cm, 1, 0))
		return -EAGAIN;
	if (c->state == URNIC_CM_REQ_RCVD)
		urnic_cm_set_state(cm, c, URNIC_CM_MRA_REQ_SENT);
	else if (c->state == URNIC_CM_REP_RCVD)
		urnic_cm_set_state(cm, c, URNIC_CM_MRA_REP_SENT);
	c->service_timeout = service_timeout;
	urnic_cm_send_mra(cm, c, service_timeout);
	return 0;
}

/* cm_acquire_mraed_id: an MRA for a REQ names only our comm ID, the REQ's sender not
 * knowing the peer's yet; one for a REP names both. */
static struct cm_conn *mraed(struct urnic_cm *cm, const struct urnic_cm_mra *mra)
{
	struct cm_conn *c = urnic_cm_conn_find(cm, mra->remote_comm_id);

	if (!c || c->sidr)
		return NULL;
	if (mra->message_mraed == URNIC_CM_MSG_CODE_REQ)
		return !c->passive && !c->remote_id ? c : NULL;
	return c->remote_id && c->remote_id == mra->local_comm_id ? c : NULL;
}

int urnic_cm_rx_mra(struct urnic_cm *cm, const struct urnic_cm_mad *m,
		    const struct urnic_cm_addr *from, uint64_t now_ns)
{
	const struct urnic_cm_mra *mra = &m->msg.mra;
	struct cm_conn *c = mraed(cm, mra);
	enum urnic_cm_state next;

	if (!c) {
		cm_count(cm, URNIC_CM_C_drop_unknown_conn);
		return -EPROTO;
	}
	if (!cm_from_peer(cm, c, from))
		return -EPROTO;
	if (c->state == URNIC_CM_REQ_SENT && mra->message_mraed == URNIC_CM_MSG_CODE_REQ) {
		next = URNIC_CM_MRA_REQ_RCVD;
	} else if (c->state == URNIC_CM_REP_SENT && mra->message_mraed == URNIC_CM_MSG_CODE_REP) {
		next = URNIC_CM_MRA_REP_RCVD;
	} else {
		cm_count(cm, c->state == URNIC_CM_MRA_REQ_RCVD || c->state == URNIC_CM_MRA_REP_RCVD
				     ? URNIC_CM_C_dup_mra
				     : URNIC_CM_C_drop_state);
		return -EPROTO;
	}
	urnic_cm_set_state(cm, c, next);
	urnic_cm_arm(cm, c,
		     now_ns + urnic_cm_time_ns(mra->service_timeout) +
			     urnic_cm_time_ns(c->av_timeout));
	return 0;
}
