/* SPDX-License-Identifier: MIT */
/*
 * pass.c - one pass of the engine over the QPs that may have work: progress (posted
 * work, replies, flushes in error), then timers, then progress again if a timer left a
 * retry to send. Only the QPs in the active set are visited (slots.h); a QP leaves it
 * when the timers find it quiet.
 */
#include <stdio.h>
#include <stdlib.h>

#include "engine/engine.h"
#include "engine/slots.h"
#include "engine/uet/uet_int.h"

/* Takes the doorbells of posts since the last pass into active and awaiting
 * (urnic_engine_doorbell: the acquire exchange makes the posts' WQEs visible). Inline:
 * every pass runs it twice, and it mostly finds nothing. */
static inline void take_doorbells(struct urnic_qp_table *t)
{
	for (uint32_t w = 0, words = slot_words(t); w < words; w++) {
		uint64_t b;

		if (!atomic_load_explicit(&t->doorbells[w], memory_order_relaxed))
			continue;
		b = atomic_exchange_explicit(&t->doorbells[w], 0, memory_order_acquire);
		t->active[w] |= b;
		t->awaiting[w] |= b;
	}
}

/* Receive WQEs posted to the QP's own queue and not yet taken (none with an SRQ). */
static bool rq_posted(const struct urnic_qp *qp)
{
	return atomic_load_explicit(&qp->rq.prod, memory_order_acquire) !=
	       atomic_load_explicit(&qp->rq.cons, memory_order_relaxed);
}

/* Send WQEs posted and not yet completed. */
static bool sends_outstanding(const struct urnic_qp *qp)
{
	return atomic_load_explicit(&qp->sq.prod, memory_order_acquire) != qp->comp.idx;
}

/* Nothing for a pass to do on this QP until a packet, a modify or a post: every WQE
 * posted has completed (flushed, in error), no ACK, NAK or READ response is owed, no
 * retry is due and no timer or hold is armed, and in error no receive is left to
 * flush. What each progress function looks at, and no more; the audit (audit_idle)
 * checks that they agree. */
static bool qp_quiet(const struct urnic_qp *qp)
{
	uint32_t prod = atomic_load_explicit(&qp->sq.prod, memory_order_acquire);

	if (prod != qp->comp.idx || prod != qp->req.idx)
		return false;
	if (qp->req.need_retry || qp->req.rto_deadline_ns || qp->req.rnr_deadline_ns ||
	    qp->comp.uc_hold_ns)
		return false;
	if (qp->resp.ack_pending || qp->resp.replying || qp->resp.ack_hold_ns)
		return false;
	if (qp->uet && !urnic_uet_quiet(qp))
		return false;
	return qp->state != URNIC_QPS_ERR || qp->srq || !rq_posted(qp);
}

/* One QP's share of a pass: its posted work, its replies, its flushes. */
static bool progress_qp(struct urnic_engine *e, struct urnic_qp *qp)
{
	urnic_engine_serve(e, qp);
	if (qp->state == URNIC_QPS_ERR) {
		/* Work posted to a QP in error completes with FLUSH_ERR (IBTA 10.3.1). */
		if (!sends_outstanding(qp) && !rq_posted(qp))
			return false;
		qp->ops->flush(e, qp);
		return true;
	}
	return qp->ops->progress(e, qp);
}

bool urnic_engine_progress(struct urnic_engine *e, uint64_t now_ns)
{
	struct urnic_qp_table *t = &e->qpt;
	bool did = false;

	e->now_ns = now_ns;
	take_doorbells(t);
	for (uint32_t w = 0, words = slot_words(t); w < words; w++) {
		for (uint64_t bits = t->active[w]; bits; bits &= bits - 1) {
			uint32_t i = slot_of(w, bits);
			struct urnic_qp *qp = t->qps[i];

			if (!qp) {
				slot_clear(t->active, i);
				continue;
			}
			did |= progress_qp(e, qp);
		}
	}
	urnic_engine_serve(e, NULL);
	return did;
}

bool urnic_engine_progress_posted(struct urnic_engine *e, uint64_t now_ns)
{
	for (uint32_t w = 0, words = slot_words(&e->qpt); w < words; w++)
		if (atomic_load_explicit(&e->qpt.doorbells[w], memory_order_relaxed))
			return urnic_engine_progress(e, now_ns);
	return false;
}

/* Does the application wait on this QP for a completion: sends not yet completed, or
 * receive WQEs posted (its own or its SRQ's)? */
static bool qp_awaited(const struct urnic_qp *qp)
{
	if (qp->state < URNIC_QPS_RTR || qp->state == URNIC_QPS_ERR)
		return false;
	if (sends_outstanding(qp))
		return true;
	return qp->srq ? urnic_srq_count(qp->srq) != 0 : rq_posted(qp);
}

bool urnic_engine_app_awaits(struct urnic_engine *e)
{
	struct urnic_qp_table *t = &e->qpt;

	take_doorbells(t);
	/* A QP outside both sets has no send outstanding (it is quiet) and no receive
	 * posted since a pass last found its queue empty (a post rings its doorbell). */
	for (uint32_t w = 0, words = slot_words(t); w < words; w++) {
		for (uint64_t bits = t->active[w] | t->awaiting[w]; bits; bits &= bits - 1) {
			uint32_t i = slot_of(w, bits);
			struct urnic_qp *qp = t->qps[i];

			if (!qp) {
				slot_clear(t->awaiting, i);
				continue;
			}
			if (qp_awaited(qp))
				return true;
			if (!qp->srq && !rq_posted(qp))
				slot_clear(t->awaiting, i);
		}
	}
	return false;
}

void urnic_engine_note_hold(struct urnic_engine *e, uint64_t until, uint64_t *hold)
{
	if (e->now_ns >= until)
		e->timers.fired = true;
	else if (!*hold || until < *hold)
		*hold = until;
}

/* The timers of the active QPs; a QP found quiet leaves the active set here, after
 * the pass's progress has had its turn. */
uint64_t urnic_engine_timers(struct urnic_engine *e, uint64_t now_ns)
{
	struct urnic_qp_table *t = &e->qpt;
	uint64_t next = 0, hold = 0;

	e->now_ns = now_ns;
	for (uint32_t w = 0, words = slot_words(t); w < words; w++) {
		for (uint64_t bits = t->active[w]; bits; bits &= bits - 1) {
			uint32_t i = slot_of(w, bits);
			struct urnic_qp *qp = t->qps[i];

			if (!qp || qp_quiet(qp)) {
				slot_clear(t->active, i);
				continue;
			}
			/* A UET responder's READ responses have timers from RTR on. */
			if (qp->state != URNIC_QPS_RTS && !(qp->uet && qp->state == URNIC_QPS_RTR))
				continue;
			urnic_engine_serve(e, qp);
			qp->ops->timers(e, qp, &next, &hold);
		}
	}
	urnic_engine_serve(e, NULL);
	e->timers.deadline = next;
	e->hold.deadline = hold;
	return !next || (hold && hold < next) ? hold : next;
}

/* The audit (core.h, cfg.audit_idle): every QP outside the active set must be one that
 * a pass would leave alone, and the sets must give urnic_engine_app_awaits the answer
 * a scan of every QP gives. */
static void audit_idle(struct urnic_engine *e)
{
	struct urnic_qp_table *t = &e->qpt;
	bool awaits = urnic_engine_app_awaits(e), any = false;

	for (uint32_t i = 2; i < t->end; i++) {
		struct urnic_qp *qp = t->qps[i];
		uint32_t ntx = e->tx.n;

		if (!qp)
			continue;
		any |= qp_awaited(qp);
		if (slot_test(t->active, i))
			continue;
		if (!qp_quiet(qp) || progress_qp(e, qp) || e->tx.n != ntx) {
			fprintf(stderr,
				"urnic: audit: QP 0x%x (%s) has work outside the active set\n",
				qp->qpn, urnic_qp_state_name(qp->state));
			abort();
		}
	}
	urnic_engine_serve(e, NULL);
	if (any != awaits) {
		fprintf(stderr, "urnic: audit: app_awaits %d, a scan of every QP says %d\n", awaits,
			any);
		abort();
	}
}

bool urnic_engine_pass(struct urnic_engine *e, uint64_t now_ns, uint64_t *deadline)
{
	bool did = urnic_engine_progress(e, now_ns);

	e->timers.fired = false;
	*deadline = urnic_engine_timers(e, now_ns);
	if (e->timers.fired)
		did |= urnic_engine_progress(e, now_ns); /* the retries the timers asked for */
	if (e->cfg.audit_idle)
		audit_idle(e);
	return did;
}
