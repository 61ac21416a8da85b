// SPDX-License-Identifier: MIT
/*
 * listener.c - listeners: a service ID whose REQs and SIDR_REQs become connections
 * (ib_cm_listen, IBTA 12.6.5 / 12.11), and their backlog.
 *
 * The backlog is rdma_listen's: Linux's ucma counts connect requests handed to the
 * application and refuses the next one over the bound (ucma_event_handler returns
 * -ENOMEM, cm.c then destroys the new ID without a REJ, so the active side's REQ
 * retransmission may find room later; a SIDR_REQ gets a SIDR_REP 'rejected'). Here a
 * connection holds its slot from the REQ until the application answers it (accept,
 * reject, sidr_reply, destroy) or it leaves REQ_RCVD / MRA_REQ_SENT by itself. Service
 * IDs match exactly, as rdma_cm listens (no masks).
 */
#include <errno.h>

#include "engine/cm/core.h"

struct cm_listener *urnic_cm_listener_find(struct urnic_cm *cm, uint64_t service_id)
{
	for (uint32_t i = 0; i < cm->cfg.max_listeners; i++)
		if (cm->listeners[i].in_use && cm->listeners[i].service_id == service_id)
			return &cm->listeners[i];
	return NULL;
}

int urnic_cm_listen(struct urnic_cm *cm, uint64_t service_id, uint32_t backlog, uint64_t user,
		    uint32_t *listener)
{
	struct cm_listener *l = NULL;

	if (!backlog || !listener)
		return -EINVAL;
	if (urnic_cm_listener_find(cm, service_id))
		return -EADDRINUSE;
	for (uint32_t i = 0; i < cm->cfg.max_listeners && !l; i++)
		if (!cm->listeners[i].in_use)
			l = &cm->listeners[i];
	if (!l)
		return -ENOSPC;
	*l = (struct cm_listener){
		.in_use = true, .service_id = service_id, .backlog = backlog, .user = user
	};
	*listener = (uint32_t)(l - cm->listeners) + 1;
	/* A REQ parked for it (passive.c) is taken at the next tick, which is due now. */
	for (uint32_t i = 0; i < URNIC_CM_PARK_SLOTS; i++)
		if (cm->parked[i].used && cm->parked[i].mad.msg.req.service_id == service_id)
			cm->next_deadline = 1;
	return 0;
}

int urnic_cm_unlisten(struct urnic_cm *cm, uint32_t listener)
{
	struct cm_listener *l;

	if (!listener || listener > cm->cfg.max_listeners || !cm->listeners[listener - 1].in_use)
		return -ENOENT;
	l = &cm->listeners[listener - 1];
	/* The connections waiting for an answer stay; they no longer count anywhere. */
	for (uint32_t i = 0; i < cm->cfg.max_conns; i++)
		if (cm->conns[i].in_use && cm->conns[i].listener == listener)
			cm->conns[i].listener = 0;
	*l = (struct cm_listener){ 0 };
	return 0;
}

bool urnic_cm_backlog_take(struct urnic_cm *cm, struct cm_listener *l, struct cm_conn *c)
{
	if (l->pending >= l->backlog)
		return false;
	l->pending++;
	c->listener = (uint32_t)(l - cm->listeners) + 1;
	return true;
}

void urnic_cm_backlog_put(struct urnic_cm *cm, struct cm_conn *c)
{
	if (!c->listener)
		return;
	cm->listeners[c->listener - 1].pending--;
	c->listener = 0;
}
