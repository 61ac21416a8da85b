// SPDX-License-Identifier: MIT
/*
 * tick.c - the CM's timers, fired by the caller's clock: the retransmission of the one
 * MAD a connection waits an answer for (REQ, REP, DREQ, SIDR_REQ: Max CM Retries times,
 * IBTA 12.6), what happens when the retries run out (cm.c cm_process_send_error:
 * IB_CM_REQ_ERROR and IB_CM_REP_ERROR, which rdma_cm reports as UNREACHABLE; DREQ_ERROR,
 * TimeWait all the same), and the end of TimeWait (IBTA 12.9.8.3).
 *
 * One pass looks at every connection (the table is bounded) and leaves the earliest
 * deadline for next_deadline. A timer whose consequences find no room in the queues
 * waits for the next pass.
 */
#include <errno.h>

#include "engine/cm/core.h"

static void give_up(struct urnic_cm *cm, struct cm_conn *c, uint64_t now_ns)
{
	if (c->state == URNIC_CM_DREQ_SENT) {
		urnic_cm_dreq_timeout(cm, c, now_ns);
		return;
	}
	urnic_cm_reset_to_idle(cm, c);
	cm_count(cm, URNIC_CM_C_unreachable);
	urnic_cm_tell(cm, c, URNIC_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL);
}

static void timewait_over(struct urnic_cm *cm, struct cm_conn *c)
{
	cm_count(cm, URNIC_CM_C_timewait_exits);
	urnic_cm_disarm(c);
	urnic_cm_set_state(cm, c, URNIC_CM_IDLE);
	urnic_cm_unindex_rid(cm, c);
	if (!c->app_owned) {
		urnic_cm_conn_release(cm, c);
		return;
	}
	urnic_cm_tell(cm, c, URNIC_CM_EVENT_TIMEWAIT_EXIT, 0, NULL);
}

static void expire(struct urnic_cm *cm, struct cm_conn *c, uint64_t now_ns)
{
	switch (c->state) {
	case URNIC_CM_REQ_SENT:
	case URNIC_CM_MRA_REQ_RCVD:
	case URNIC_CM_REP_SENT:
	case URNIC_CM_MRA_REP_RCVD:
	case URNIC_CM_DREQ_SENT:
	case URNIC_CM_SIDR_REQ_SENT:
		if (!c->retries_left || !c->sent_valid) {
			give_up(cm, c, now_ns);
			return;
		}
		c->retries_left--;
		cm_count(cm, URNIC_CM_C_tx_retries);
		urnic_cm_out_push_raw(cm, c->sent, &c->peer, c->local_id);
		urnic_cm_arm(cm, c, now_ns + c->timeout_ns);
		return;
	case URNIC_CM_TIMEWAIT:
		timewait_over(cm, c);
		return;
	default:
		urnic_cm_disarm(c);
		return;
	}
}

void urnic_cm_tick(struct urnic_cm *cm, uint64_t now_ns)
{
	uint64_t next = 0;

	for (uint32_t i = 0; i < cm->cfg.max_conns; i++) {
		struct cm_conn *c = &cm->conns[i];

		if (!c->in_use || !c->deadline_ns)
			continue;
		if (c->deadline_ns <= now_ns) {
			if (cm_room(cm, 1, 1))
				expire(cm, c, now_ns);
			else
				next = now_ns ? now_ns : 1;
		}
		if (c->in_use && c->deadline_ns && (!next || c->deadline_ns < next))
			next = c->deadline_ns;
	}
	urnic_cm_park_tick(cm, now_ns, &next);
	cm->next_deadline = next;
}

uint64_t urnic_cm_next_deadline(const struct urnic_cm *cm)
{
	return cm->next_deadline;
}
