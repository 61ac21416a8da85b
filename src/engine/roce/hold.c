/* SPDX-License-Identifier: MIT */
/*
 * hold.c - the answer hold: when an RC responder holds its ACK, and a UC requester its
 * send completions, for the application's answer, so that they leave with it (IBTA
 * 9.7.5.1.1 lets a responder coalesce ACKs; when a completion is reported is the
 * device's to choose within the queue's order). The decisions only: the protocol parts
 * call them (responder.c, uc.c) and release what is held; the core's timers wake the
 * pass when a hold ends (urnic_engine_note_hold); the driver sets the knobs and says
 * whether an application polls (struct urnic_hold_policy).
 */
#include "engine/roce/hold.h"

/*
 * Holding an ACK for the application's answer. IBTA 9.7.5.1.1 lets the responder
 * coalesce acknowledgements: an ACK covers every earlier PSN, and nothing says when it
 * must leave except that it must come before the requester's timeout (9.7.6.1.3). When
 * the application answers each message it receives with a request of its own on the
 * same QP (ping-pong: ib_write_lat, ib_send_lat, ibv_rc_pingpong, RPC), an ACK sent at
 * once is a packet of its own and, worse, ends the peer's poll for its completion just
 * before the answer arrives; the answer must then be taken in by the peer's engine
 * thread, woken on the other CPU (docs/performance.md, "ACK hold"). Held, the ACK leaves
 * in the same batch right behind the answer, and the peer's poll takes in both.
 *
 * A QP becomes interactive when its requester sends within the hold time of an ACK
 * that left alone (it could have been carried), and stops being so when
 * ROCE_HOLD_MISSES holds in a row expire (the application does not answer in time:
 * one-way traffic is then not held again until it answers). Never held: NAKs; an ACK
 * waiting behind READ responses; an ACK of a QP whose requester cannot send now (not in
 * RTS, or work queued that the window, an RNR wait or a fence holds back), so that two
 * QPs never hold for each other; and an ACK of a QP whose CQ is armed, or while no
 * application polls (hold.app_polling, from the driver): an application that waits
 * for events answers only after a wake-up, and its completions must keep their order
 * (perftest -e takes one completion per event; a send and a receive completion arriving
 * together overflowed its CQ). An ACK that is not held leaves before the requests of the
 * same pass, as rxe sends it on receipt (rc.c, rc_progress). A held ACK
 * leaves at once when its QP changes state or is destroyed (rc.c, rc_release_held),
 * so an application that exits after its last receive leaves nothing unacknowledged.
 * The hold time is hold.max_ns (URNIC_ACK_HOLD_US); the ACK may leave up to
 * hold.slack_ns later, and a QP holds only if both together stay under a
 * quarter of its own retransmission timeout (timeout attribute, IBTA 9.7.6.1.3), which
 * the peer's usually equals.
 */

/* A hold whose application still waits for its own request's ACK is extended once by
 * this many hold times (urnic_roce_hold_ack). */
enum { ACK_HOLD_EXTEND = 4 };

/* The hold time, or 0 if `times` of it and the slack do not fit under a quarter of the
 * QP's timeout. */
uint64_t urnic_roce_hold_time(const struct urnic_engine *e, const struct urnic_qp *qp,
			      uint64_t times)
{
	uint64_t rto = urnic_qp_rto_ns(qp->attr.timeout);
	uint64_t hold = e->hold.max_ns;

	if (rto && (hold * times + e->hold.slack_ns) * 4 > rto)
		return 0;
	return hold;
}

static bool requester_blocked(const struct urnic_qp *qp)
{
	return qp->req.idx != atomic_load_explicit(&qp->sq.prod, memory_order_acquire) ||
	       qp->req.rnr_deadline_ns || qp->req.need_retry;
}

bool urnic_roce_hold_ack(struct urnic_engine *e, struct urnic_qp *qp, bool answered)
{
	struct urnic_resp *r = &qp->resp;
	uint64_t hold;

	if (answered || !r->ack_interactive || r->ack_syndrome != URNIC_AETH_ACK_UNLIMITED ||
	    qp->state != URNIC_QPS_RTS || !e->hold.app_polling || roce_cq_armed(qp->send_cq) ||
	    roce_cq_armed(qp->recv_cq))
		return false;
	if (r->ack_hold_ns) {
		if (e->now_ns < r->ack_hold_ns)
			return true;
		/* The application cannot have answered yet: its own request still waits
		 * for the peer's ACK, which the peer sends behind the rest of its message
		 * when that message takes more than one datagram (ib_write_lat -s 8192: the
		 * hold begins with the first, the application's completion comes with the
		 * second). Sent alone now, the ACK would end the peer's poll before the
		 * answer it waits for. Held once more, ACK_HOLD_EXTEND times as long. */
		if (!r->ack_hold_extended && qp->comp.idx != qp->req.idx &&
		    urnic_roce_hold_time(e, qp, 1 + ACK_HOLD_EXTEND)) {
			r->ack_hold_extended = true;
			r->ack_hold_ns += (uint64_t)e->hold.max_ns * ACK_HOLD_EXTEND;
			return true;
		}
		if (++r->ack_hold_misses == ROCE_HOLD_MISSES) {
			r->ack_interactive = false;
			r->ack_hold_misses = 0;
		}
		urnic_count(e, URNIC_CTR_ack_hold_expired);
		return false;
	}
	hold = urnic_roce_hold_time(e, qp, 1);
	if (!hold || requester_blocked(qp))
		return false;
	r->ack_hold_ns = e->now_ns + hold;
	r->ack_hold_extended = false;
	urnic_count(e, URNIC_CTR_ack_held);
	return true;
}

void urnic_roce_hold_answered(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_resp *r = &qp->resp;

	if (!r->ack_interactive && r->ack_alone_ns &&
	    e->now_ns - r->ack_alone_ns <= urnic_roce_hold_time(e, qp, 1))
		r->ack_interactive = true;
	r->ack_alone_ns = 0;
}

/*
 * Holding send completions for the peer's answer. UC has no ACK: a SEND or WRITE is
 * complete once its last packet has left (IBTA 9.8). In a ping-pong (ib_write_lat -c
 * UC, a request/response protocol) the application then has its completion at once
 * and waits for the answer; when it waits on memory (for the peer's RDMA WRITE), no
 * verbs call lets urnic take the answer in, and only the engine thread, woken on the
 * other CPU, can: 62-88 us per one-way trip here, against 7 us for RC, whose
 * responder holds its ACK and sends it with the answer (urnic_roce_hold_ack).
 * So a UC requester holds the completion while the application polls, and the poll
 * that takes the answer in reports both. When a completion is reported is the
 * device's to choose, within the order of the queue (a slow NIC reports late too),
 * and the hold is short: UC_HOLD_FACTOR times hold.max_ns
 * (URNIC_ACK_HOLD_US, 100 us; 0 turns both holds off). It spans a round trip, 10-20
 * us on a 2-vCPU VM (a 20 us hold expired half the time).
 *
 * A QP holds once the peer's request came within ROCE_UC_ANSWER_WINDOW_NS of completions
 * released without an answer (in the slow path above the answer takes 30-80 us, more
 * when the scheduler gives a spinning thread a whole slice: with a 250 us window some
 * runs held only a third of their rounds), and stops after ROCE_HOLD_MISSES holds in a
 * row expire, so a stream one way is held at most that often. Nothing is held while
 * no application polls or the send CQ is armed (an event-driven application answers
 * after a wake-up), nor unless the send queue is a ping-pong's: one signaled WQE out,
 * nothing behind it (a stream's completions, held until the peer's next request, would
 * hold back its next posts).
 * Released: by the peer's next request on the QP, before it is executed (the send
 * completion comes first, as it happened first); on expiry; when the application
 * stops polling or posts again; before the QP changes state or goes away (uc.c, uc_release_held).
 */
enum { UC_HOLD_FACTOR = 1 };

/* A ping-pong's send queue: one WQE sent and not completed, nothing behind it, and
 * the application asked for its completion. A stream has more in the queue (held, its
 * completions would hold back the application's next posts). */
static bool one_signaled_wqe(const struct urnic_qp *qp)
{
	const struct urnic_send_wqe *w = urnic_wq_slot(&qp->sq, qp->comp.idx);

	return qp->req.idx - qp->comp.idx == 1 &&
	       atomic_load_explicit(&qp->sq.prod, memory_order_acquire) == qp->req.idx &&
	       (qp->sq_sig_all || (w->flags & URNIC_SEND_SIGNALED));
}

bool urnic_roce_hold_uc_comp(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_comp *c = &qp->comp;

	if (!c->uc_interactive || !e->hold.app_polling || !e->hold.max_ns ||
	    roce_cq_armed(qp->send_cq) || !one_signaled_wqe(qp)) {
		c->uc_hold_ns = 0;
		c->uc_alone_ns = e->now_ns;
		return false;
	}
	if (c->uc_hold_ns) {
		if (e->now_ns < c->uc_hold_ns)
			return true;
		if (++c->uc_hold_misses == ROCE_HOLD_MISSES) {
			c->uc_interactive = false;
			c->uc_hold_misses = 0;
		}
		urnic_count(e, URNIC_CTR_comp_hold_expired);
		e->hold.answers_due++; /* the answer is still to come */
		c->uc_hold_ns = 0;
		c->uc_alone_ns = e->now_ns;
		return false;
	}
	c->uc_hold_ns = e->now_ns + (uint64_t)e->hold.max_ns * UC_HOLD_FACTOR;
	urnic_count(e, URNIC_CTR_comp_held);
	return true;
}
