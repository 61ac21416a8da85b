// SPDX-License-Identifier: MIT
/*
 * conn.c - what every message file does to a connection: change its state through the
 * transition table (state.def), arm and disarm its one timer, enter TimeWait or go back
 * to IDLE, send a MAD and keep it for a retransmission or a duplicate, and tell the
 * application. As Linux's cm.c keeps one outstanding MAD per cm_id (cm_id_priv->msg),
 * a connection waits for one answer at a time.
 */
#include <errno.h>
#include <string.h>

#include "engine/cm/core.h"

void urnic_cm_set_state(struct urnic_cm *cm, struct cm_conn *c, enum urnic_cm_state next)
{
	if (!urnic_cm_transition_ok(c->state, next))
		cm_count(cm, URNIC_CM_C_internal_bad_transition);
	c->state = next;
	/* A connection holds its listener's backlog slot while its REQ or SIDR_REQ waits
	 * for the application's answer (listener.c). */
	if (next != URNIC_CM_REQ_RCVD && next != URNIC_CM_MRA_REQ_SENT &&
	    next != URNIC_CM_SIDR_REQ_RCVD)
		urnic_cm_backlog_put(cm, c);
}

void urnic_cm_arm(struct urnic_cm *cm, struct cm_conn *c, uint64_t at_ns)
{
	if (!at_ns)
		at_ns = 1;
	c->deadline_ns = at_ns;
	if (!cm->next_deadline || at_ns < cm->next_deadline)
		cm->next_deadline = at_ns;
}

void urnic_cm_disarm(struct cm_conn *c)
{
	c->deadline_ns = 0;
}

void urnic_cm_send_awaiting(struct urnic_cm *cm, struct cm_conn *c, const struct urnic_cm_mad *m,
			    enum urnic_cm_state next, uint64_t now_ns)
{
	urnic_cm_send(cm, c, m);
	urnic_cm_set_state(cm, c, next);
	/* ib_post_send_mad with retries = max_cm_retries: 1 + max_cm_retries sends,
	 * timeout_ms apart, then the send fails (IBTA 12.6: Max CM Retries). */
	c->retries_left = c->max_retries;
	urnic_cm_arm(cm, c, now_ns + c->timeout_ns);
}

void urnic_cm_enter_timewait(struct urnic_cm *cm, struct cm_conn *c, uint64_t now_ns)
{
	/* IBTA 12.9.8.3: the QP and comm ID rest for TimeWait before reuse; cm.c waits
	 * cm_convert_to_ms(av.timeout). The connection leaves the stale-QPN index (cm.c
	 * cm_cleanup_timewait) but keeps its remote comm ID, so a late duplicate REQ is
	 * answered as stale (cm_dup_req_handler) rather than taken for a new one. */
	urnic_cm_set_state(cm, c, URNIC_CM_TIMEWAIT);
	urnic_cm_unindex_qpn(cm, c);
	urnic_cm_arm(cm, c, now_ns + urnic_cm_time_ns(c->av_timeout));
}

void urnic_cm_reset_to_idle(struct urnic_cm *cm, struct cm_conn *c)
{
	/* cm.c cm_reset_to_idle: no TimeWait, the peer's IDs are forgotten. */
	urnic_cm_set_state(cm, c, URNIC_CM_IDLE);
	urnic_cm_disarm(c);
	urnic_cm_unindex_rid(cm, c);
	urnic_cm_unindex_qpn(cm, c);
}

uint64_t urnic_cm_form_tid(const struct urnic_cm *cm, const struct cm_conn *c)
{
	/* cm.c cm_form_tid: hi_tid << 32 | the local ID as it lies in memory, big-endian;
	 * read as a number on a little-endian host that is the ID byte-swapped (the rping
	 * capture: comm ID 0x4c45e2e2, TID 0x00000002e2e2454c). */
	return (uint64_t)cm->cfg.hi_tid << 32 | __builtin_bswap32(c->local_id);
}

void urnic_cm_send(struct urnic_cm *cm, struct cm_conn *c, const struct urnic_cm_mad *m)
{
	if (urnic_cm_encode(m, c->sent, sizeof(c->sent)) != URNIC_MAD_BYTES) {
		cm_count(cm, URNIC_CM_C_internal_encode);
		return;
	}
	c->sent_valid = true;
	c->sent_attr = m->hdr.attr_id;
	urnic_cm_out_push_raw(cm, c->sent, &c->peer, c->local_id);
}

void urnic_cm_tell(struct urnic_cm *cm, struct cm_conn *c, enum urnic_cm_event_type t,
		   int32_t status, const struct urnic_cm_mad *m)
{
	struct urnic_cm_event *ev;

	/* A connection the application destroyed tells nobody. */
	if (!c->app_owned)
		return;
	ev = urnic_cm_event_push(cm, t, c);
	if (!ev)
		return;
	ev->status = status;
	ev->listener = c->listener;
	if (m)
		ev->mad = *m;
}

struct cm_conn *urnic_cm_handle(struct urnic_cm *cm, uint32_t conn)
{
	struct cm_conn *c = urnic_cm_conn_find(cm, conn);

	return c && c->app_owned ? c : NULL;
}

int urnic_cm_copy_pdata(uint8_t *dst, size_t cap, const void *src, uint8_t n)
{
	if (n > cap || (n && !src))
		return -EINVAL;
	if (n)
		memcpy(dst, src, n);
	return 0;
}
