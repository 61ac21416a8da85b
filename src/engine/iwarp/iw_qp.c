/* SPDX-License-Identifier: MIT */
/*
 * iw_qp.c - an iWARP RC QP's life on its TCP connection (iw_qp.h): connect, what the
 * driver writes (the output ring is iw_out.c's) and when it closes, the connection's end
 * (RFC 5040 6.2), the flush (IBTA 10.3.1) and the ops the engine core calls.
 * Out of scope: markers (refused at MPA setup), SQD.
 */
#include <errno.h>
#include <stdlib.h>

#include "engine/iwarp/iw.h"
#include "engine/iwarp/mpa_conn.h"
#include "engine/roce/rc.h"
#include "engine/slots.h"

static void set_rts(struct urnic_engine *e, struct urnic_qp *qp)
{
	qp->state = URNIC_QPS_RTS;
	slot_note_state(e, qp);
	urnic_engine_qp_wake(e, qp);
}

int urnic_iw_qp_connect(struct urnic_engine *e, struct urnic_qp *qp,
			const struct urnic_iw_conn_params *p, uint64_t now_ns)
{
	size_t mulpdu = urnic_fpdu_tx_mulpdu(p->mss);
	struct urnic_iw_qp *iw;

	e->now_ns = now_ns;
	if (qp->ops != &urnic_iw_rc_ops || qp->iw || !mulpdu ||
	    (qp->state != URNIC_QPS_INIT && qp->state != URNIC_QPS_RTR) ||
	    p->ird > URNIC_MAX_RD_ATOMIC || p->ord > URNIC_MAX_RD_ATOMIC ||
	    p->rtr_in > URNIC_MPA_RTR_SEND || p->rtr_out > URNIC_MPA_RTR_SEND ||
	    (p->rtr_in && (p->rtr_out || !p->await_first)))
		return -EINVAL;
	iw = calloc(1, sizeof(*iw));
	if (!iw)
		return -ENOMEM;
	iw->out.cap = URNIC_IW_OUT_BYTES;
	iw->out.buf = malloc(iw->out.cap);
	iw->wqe_end = calloc(qp->sq.depth ? qp->sq.depth : 1, sizeof(*iw->wqe_end));
	if (!iw->out.buf || !iw->wqe_end) {
		free(iw->out.buf);
		free(iw->wqe_end);
		free(iw);
		return -ENOMEM;
	}
	iw->wqe_mask = qp->sq.depth ? qp->sq.depth - 1 : 0;
	iw->mulpdu = mulpdu;
	iw->flags = p->crc ? URNIC_FPDU_CRC : 0;
	iw->ird = p->ird;
	iw->ord = p->ord;
	iw->await_first = p->await_first;
	if (iw->await_first)
		urnic_count(e, URNIC_CTR_iw_await_first);
	/* An Initiator that agreed an RTR sends it with its first bytes; one that did not
	 * may wait for this side to speak (iw_await_first_ns). */
	iw->await_bounded = iw->await_first && !p->rtr_in;
	iw->await_since_ns = now_ns;
	urnic_fpdu_rx_init(&iw->rx_stream, iw->flags);
	iw->rtr_in = p->rtr_in;
	qp->comp.uc_interactive = false; /* learned anew on each connection (iw_wqe.c) */
	qp->comp.uc_hold_misses = 0;
	qp->comp.uc_hold_ns = qp->comp.uc_alone_ns = 0;
	for (int q = 0; q < 3; q++)
		iw->tx_msn[q] = iw->rx.msn[q] = URNIC_IW_MSN_FIRST;
	/* RFC 5041 5.1: the RTR took its untagged queue's first MSN. */
	if (p->rtr_out == URNIC_MPA_RTR_READ)
		iw->tx_msn[URNIC_DDP_QN_READ_REQ]++;
	else if (p->rtr_out == URNIC_MPA_RTR_SEND)
		iw->tx_msn[URNIC_DDP_QN_SEND]++;
	iw->rtr_rresp_due = p->rtr_out == URNIC_MPA_RTR_READ;
	qp->iw = iw;
	set_rts(e, qp);
	return 0;
}

void urnic_iw_qp_free(struct urnic_qp *qp)
{
	if (!qp->iw)
		return;
	free(qp->iw->out.buf);
	free(qp->iw->wqe_end);
	free(qp->iw);
	qp->iw = NULL;
}

unsigned urnic_iw_tx_peek(const struct urnic_qp *qp, struct iovec *iov, unsigned max)
{
	const struct urnic_iw_out *o;
	unsigned n = 0;

	if (!qp->iw || !max)
		return 0;
	o = &qp->iw->out;
	if (o->wrapped) {
		if (o->wrap > o->rd)
			iov[n++] = (struct iovec){ o->buf + o->rd, o->wrap - o->rd };
		if (o->wr && n < max)
			iov[n++] = (struct iovec){ o->buf, o->wr };
	} else if (o->wr > o->rd) {
		iov[n++] = (struct iovec){ o->buf + o->rd, o->wr - o->rd };
	}
	return n;
}

void urnic_iw_tx_done(struct urnic_engine *e, struct urnic_qp *qp, size_t n)
{
	struct urnic_iw_qp *iw = qp->iw;

	if (!iw || !n)
		return;
	urnic_engine_serve(e, qp);
	urnic_iw_out_consume(&iw->out, n);
	/* RFC 5040 5.1: a Send or Write completes once the LLP has taken its last byte. */
	if (qp->state == URNIC_QPS_RTS)
		urnic_iw_complete_sq(e, qp);
	urnic_engine_qp_wake(e, qp); /* room in the ring: progress frames more */
	urnic_engine_serve(e, NULL);
}

bool urnic_iw_tx_pending(const struct urnic_qp *qp)
{
	return qp->iw && urnic_iw_out_pending(&qp->iw->out) != 0;
}

bool urnic_iw_close_due(const struct urnic_qp *qp)
{
	const struct urnic_iw_qp *iw = qp->iw;

	return iw && !iw->llp_gone && (iw->term_sent || qp->state != URNIC_QPS_RTS);
}

struct urnic_qp *urnic_iw_tx_ready(struct urnic_engine *e, uint32_t *cursor)
{
	struct urnic_qp_table *t = &e->qpt;

	for (uint32_t w = *cursor / 64, words = slot_words(t); w < words; w++) {
		uint64_t bits = t->iw_tx[w];

		if (w == *cursor / 64)
			bits &= ~0ull << (*cursor % 64);
		for (; bits; bits &= bits - 1) {
			uint32_t i = slot_of(w, bits);
			struct urnic_qp *qp = t->qps[i];

			if (!qp || (!urnic_iw_tx_pending(qp) && !urnic_iw_close_due(qp))) {
				slot_clear(t->iw_tx, i);
				continue;
			}
			*cursor = i + 1;
			return qp;
		}
	}
	*cursor = URNIC_MAX_QP;
	return NULL;
}

void urnic_iw_llp_closed(struct urnic_engine *e, struct urnic_qp *qp, int err, uint64_t now_ns)
{
	struct urnic_iw_qp *iw = qp->iw;

	(void)err; /* orderly or not, RFC 5040 6.2: the stream is gone, the QP in error */
	if (!iw)
		return;
	e->now_ns = now_ns;
	urnic_engine_serve(e, qp);
	iw->llp_gone = true;
	iw->dead = true;
	iw->out.rd = iw->out.wr = 0; /* nothing more reaches the peer */
	iw->out.wrapped = false;
	if (qp->state != URNIC_QPS_ERR && qp->state != URNIC_QPS_RESET)
		urnic_qp_to_error(e, qp);
	urnic_engine_serve(e, NULL);
}

/* ---- the ops ---- */

static void iw_op_rx(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
		     const struct urnic_rx_meta *m)
{
	/* Not reached: opcode_flag 0 lets no RoCE packet through to an iWARP QP. */
	(void)qp;
	(void)pkt;
	(void)m;
	urnic_count(e, URNIC_CTR_drop_opcode_qp_type);
}

static bool iw_op_from_peer(const struct urnic_qp *qp, const struct urnic_pkt *pkt)
{
	(void)qp;
	(void)pkt;
	return false;
}

/* The hold of an Initiator that agreed no RTR ends at its bound (iw_qp.h,
 * URNIC_IW_AWAIT_FIRST_NS): siw's Initiator, which never speaks first by itself, has read
 * the Reply by then. */
static uint64_t await_until(const struct urnic_engine *e, const struct urnic_iw_qp *iw)
{
	if (!iw->await_first || !iw->await_bounded || !e->cfg.iw_await_first_ns)
		return 0;
	return iw->await_since_ns + e->cfg.iw_await_first_ns;
}

static bool await_expired(struct urnic_engine *e, struct urnic_iw_qp *iw)
{
	uint64_t until = await_until(e, iw);

	if (!until || e->now_ns < until)
		return false;
	iw->await_first = false;
	urnic_count(e, URNIC_CTR_iw_await_first_expired);
	return true;
}

static bool iw_op_progress(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_iw_qp *iw = qp->iw;
	bool did = false;

	if (!iw || qp->state != URNIC_QPS_RTS || iw->term_sent)
		return false;
	/* RFC 5044 7.1.2: the Responder sends nothing before the Initiator's first FPDU;
	 * urnic_iw_rx wakes the QP when it has come, the timer at the hold's bound. */
	if (iw->await_first && !await_expired(e, iw))
		return false;
	/* A message's segments are not cut into by another message of the same buffer
	 * model (siw refuses that "intersection"): Read Responses go between SQ messages. */
	if (!qp->req.off_bytes)
		did |= urnic_iw_rresp_progress(e, qp);
	if (!iw->rresp_mid)
		did |= urnic_iw_sq_progress(e, qp);
	if (!qp->req.off_bytes && qp->state == URNIC_QPS_RTS)
		did |= urnic_iw_rresp_progress(e, qp);
	return did;
}

static void iw_op_timers(struct urnic_engine *e, struct urnic_qp *qp, uint64_t *next,
			 uint64_t *hold)
{
	uint64_t until = qp->iw ? await_until(e, qp->iw) : 0;

	/* TCP retransmits: RDMAP keeps no timer; only the Responder's bounded hold (a
	 * protocol deadline: held work goes then) and a completion held for the answer. */
	if (until && e->now_ns >= until)
		e->timers.fired = true;
	else if (until && (!*next || until < *next))
		*next = until;
	if (qp->comp.uc_hold_ns)
		urnic_engine_note_hold(e, qp->comp.uc_hold_ns, hold);
}

/* IBTA 10.3.1 and siw_sq_flush/siw_rq_flush: every WQE not completed, READs whose
 * responses are still due among them, completes with FLUSH_ERR; one that failed keeps
 * its own status. */
static void iw_op_flush(struct urnic_engine *e, struct urnic_qp *qp)
{
	urnic_rc_op_flush(e, qp);
	if (qp->iw) {
		qp->iw->orq_count = 0;
		qp->iw->rresp_got = 0;
	}
}

/* A Send or Write held for the answer (iw_wqe.c) completes before the QP changes state
 * or goes away: its bytes went. */
static void iw_op_release_held(struct urnic_engine *e, struct urnic_qp *qp, bool parting)
{
	(void)parting;
	if (qp->iw)
		urnic_iw_release_held(e, qp);
}

/* The QP leaves RTS: no more bytes are taken or framed, no Read Request answered; what is
 * queued (a Terminate last) still goes, and then the driver closes the connection. */
static void iw_op_enter_error(struct urnic_engine *e, struct urnic_qp *qp, bool fatal)
{
	struct urnic_iw_qp *iw = qp->iw;

	(void)fatal;
	if (!iw)
		return;
	urnic_iw_release_held(e, qp); /* successful, before the flush */
	iw->dead = true;
	iw->irq_count = 0;
	iw->rresp_mid = false;
	slot_set(e->qpt.iw_tx, slot_index(qp->qpn));
}

const struct urnic_qp_ops urnic_iw_rc_ops = {
	.name = "iWARP RC",
	.opcode_flag = 0, /* no RoCE opcode is an iWARP QP's */
	.opcode_base = URNIC_OP_RC_SEND_FIRST,
	.connected = true,
	.rx = iw_op_rx,
	.from_peer = iw_op_from_peer,
	.progress = iw_op_progress,
	.timers = iw_op_timers,
	.flush = iw_op_flush,
	.release_held = iw_op_release_held,
	.enter_error = iw_op_enter_error,
};
