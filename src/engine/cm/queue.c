// SPDX-License-Identifier: MIT
/*
 * queue.c - the CM's two bounded queues: MADs for the caller to send and events for the
 * application, both drained by the caller after each call into the CM.
 *
 * Every entry point checks there is room for what it may queue before it changes
 * anything (cm_room), so a push never fails for want of space; a MAD that cannot be
 * answered for want of room is dropped whole and the peer's retransmission brings it back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cm/core.h"

static const char *const event_names[] = {
#define URNIC_CM_EVENT(name, text) #name,
#include "engine/cm/event.def"
#undef URNIC_CM_EVENT
};
_Static_assert(sizeof(event_names) / sizeof(event_names[0]) == URNIC_CM_EVENT_COUNT,
	       "event.def and enum urnic_cm_event_type disagree");

const char *urnic_cm_event_name(enum urnic_cm_event_type t)
{
	return (unsigned)t < URNIC_CM_EVENT_COUNT ? event_names[t] : "?";
}

int urnic_cm_queue_init(struct urnic_cm *cm)
{
	cm->out.cap = cm->cfg.out_slots;
	cm->out.slots = calloc(cm->out.cap, sizeof(*cm->out.slots));
	cm->events.cap = cm->cfg.event_slots;
	cm->events.slots = calloc(cm->events.cap, sizeof(*cm->events.slots));
	if (!cm->out.slots || !cm->events.slots) {
		urnic_cm_queue_fini(cm);
		return -ENOMEM;
	}
	return 0;
}

void urnic_cm_queue_fini(struct urnic_cm *cm)
{
	free(cm->out.slots);
	free(cm->events.slots);
	cm->out.slots = NULL;
	cm->events.slots = NULL;
}

static struct urnic_cm_out *out_tail(struct urnic_cm *cm, const struct urnic_cm_addr *dst,
				     uint32_t conn)
{
	struct urnic_cm_out *o = &cm->out.slots[(cm->out.head + cm->out.count) % cm->out.cap];

	o->dst = *dst;
	o->dst_qpn = URNIC_GSI_QPN;
	o->conn = conn;
	return o;
}

int urnic_cm_out_push(struct urnic_cm *cm, const struct urnic_cm_mad *m,
		      const struct urnic_cm_addr *dst, uint32_t conn)
{
	struct urnic_cm_out *o;

	if (cm->out.count == cm->out.cap)
		return -ENOBUFS;
	o = out_tail(cm, dst, conn);
	if (urnic_cm_encode(m, o->mad, sizeof(o->mad)) != URNIC_MAD_BYTES)
		return -EINVAL;
	cm->out.count++;
	cm_count(cm, URNIC_CM_C_tx_mads);
	return 0;
}

void urnic_cm_out_push_raw(struct urnic_cm *cm, const uint8_t *mad, const struct urnic_cm_addr *dst,
			   uint32_t conn)
{
	struct urnic_cm_out *o;

	if (cm->out.count == cm->out.cap)
		return;
	o = out_tail(cm, dst, conn);
	memcpy(o->mad, mad, URNIC_MAD_BYTES);
	cm->out.count++;
	cm_count(cm, URNIC_CM_C_tx_mads);
}

bool urnic_cm_out_pop(struct urnic_cm *cm, struct urnic_cm_out *out)
{
	if (!cm->out.count)
		return false;
	*out = cm->out.slots[cm->out.head];
	cm->out.head = (cm->out.head + 1) % cm->out.cap;
	cm->out.count--;
	return true;
}

struct urnic_cm_event *urnic_cm_event_push(struct urnic_cm *cm, enum urnic_cm_event_type t,
					   const struct cm_conn *c)
{
	struct urnic_cm_event *ev;

	if (cm->events.count == cm->events.cap)
		return NULL;
	ev = &cm->events.slots[(cm->events.head + cm->events.count) % cm->events.cap];
	memset(ev, 0, sizeof(*ev));
	ev->type = t;
	if (c) {
		ev->conn = c->local_id;
		ev->user = c->user;
		ev->peer = c->peer;
	}
	cm->events.count++;
	return ev;
}

bool urnic_cm_event_pop(struct urnic_cm *cm, struct urnic_cm_event *ev)
{
	if (!cm->events.count)
		return false;
	*ev = cm->events.slots[cm->events.head];
	cm->events.head = (cm->events.head + 1) % cm->events.cap;
	cm->events.count--;
	return true;
}
