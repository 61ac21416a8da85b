/* SPDX-License-Identifier: MIT */
/*
 * rc.h - helpers shared by the RC requester, completer and responder.
 *
 * ACK/NAK emission, the responder's resources and RC failure; what RC shares with UC
 * and UD (packet emission, segmentation, receive placement, completion in post order)
 * is in msg.h.
 */
#ifndef URNIC_ENGINE_ROCE_RC_H
#define URNIC_ENGINE_ROCE_RC_H

#include "engine/core.h"
#include "engine/roce/msg.h"

/* The RC type's ops entries (rc.c), which the XRC types share (xrc.c): XRC is RC on
 * the wire, with its own opcodes and an SRQ named per request. */
void urnic_rc_op_rx(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
		    const struct urnic_rx_meta *m);
bool urnic_rc_op_from_peer(const struct urnic_qp *qp, const struct urnic_pkt *pkt);
bool urnic_rc_op_progress(struct urnic_engine *e, struct urnic_qp *qp);
void urnic_rc_op_timers(struct urnic_engine *e, struct urnic_qp *qp, uint64_t *next,
			uint64_t *hold);
/* Flushes both work queues of a QP in error: every type's ops share it (uc.c, ud.c). */
void urnic_rc_op_flush(struct urnic_engine *e, struct urnic_qp *qp);
void urnic_rc_op_release_held(struct urnic_engine *e, struct urnic_qp *qp, bool parting);
void urnic_rc_op_enter_error(struct urnic_engine *e, struct urnic_qp *qp, bool fatal);

/* The RC protocol parts, for the RC ops (rc.c). */
void urnic_rc_responder_rx(struct urnic_engine *e, struct urnic_qp *qp,
			   const struct urnic_pkt *pkt);
void urnic_rc_completer_rx(struct urnic_engine *e, struct urnic_qp *qp,
			   const struct urnic_pkt *pkt);
bool urnic_rc_requester_progress(struct urnic_engine *e, struct urnic_qp *qp);
/* answered: the requester of the same QP sent in this pass (a held ACK goes behind). */
bool urnic_rc_responder_progress(struct urnic_engine *e, struct urnic_qp *qp, bool answered);
void urnic_rc_completer_timers(struct urnic_engine *e, struct urnic_qp *qp, uint64_t *next);
/* Completes the send queue's posted work with FLUSH_ERR (any QP type in error). */
void urnic_rc_flush(struct urnic_engine *e, struct urnic_qp *qp);

static inline struct urnic_send_wqe *rc_swqe(struct urnic_qp *qp, uint32_t idx)
{
	return urnic_wq_slot(&qp->sq, idx);
}

/* Requests that take a responder resource and are answered by a response of their own
 * (READ response, atomic ACK; for ATOMIC_WRITE and FLUSH a zero-length READ response,
 * IBTA A19.4): they count against max_rd_atomic, and an ACK beyond one whose response
 * has not come means the response was lost. */
static inline bool rc_wqe_is_read_atomic(const struct urnic_send_wqe *w)
{
	return w->opcode == URNIC_WR_RDMA_READ || w->opcode == URNIC_WR_ATOMIC_CMP_AND_SWP ||
	       w->opcode == URNIC_WR_ATOMIC_FETCH_AND_ADD || w->opcode == URNIC_WR_ATOMIC_WRITE ||
	       w->opcode == URNIC_WR_FLUSH;
}

/* ATOMIC_WRITE and FLUSH: acknowledged by a READ response ONLY without payload. */
static inline bool rc_wqe_zero_read_response(const struct urnic_send_wqe *w)
{
	return w->opcode == URNIC_WR_ATOMIC_WRITE || w->opcode == URNIC_WR_FLUSH;
}

/* The PSN after the last request sent; while a retry resends, after the last sent
 * before it (urnic_req.retry_end). */
static inline uint32_t rc_sent_end(const struct urnic_qp *qp)
{
	return qp->req.retrying && urnic_psn_after(qp->req.retry_end, qp->req.psn)
		       ? qp->req.retry_end
		       : qp->req.psn;
}

/* Packets a WQE occupies in PSN space (IBTA 9.7.1: a READ reserves one PSN per
 * response packet; everything else one per request packet; at least one). */
static inline uint32_t rc_wqe_npsn(const struct urnic_send_wqe *w, uint32_t mtu)
{
	if (w->opcode == URNIC_WR_ATOMIC_CMP_AND_SWP || w->opcode == URNIC_WR_ATOMIC_FETCH_AND_ADD)
		return 1;
	return w->length ? (w->length + mtu - 1) / mtu : 1;
}

/* ACK or NAK with the responder's MSN (IBTA 9.7.5.1.1, 9.7.5.2.5). Flushes a pending
 * coalesced ACK first so the peer sees responses in PSN order. */
void urnic_rc_send_ack(struct urnic_engine *e, struct urnic_qp *qp, uint32_t psn, uint8_t syndrome);
void urnic_rc_flush_pending_ack(struct urnic_engine *e, struct urnic_qp *qp);
/* The last ACK once more, as the QP (RC, RTR or later, not in error) goes away within a
 * timeout of sending it. */
void urnic_rc_parting_ack(struct urnic_engine *e, struct urnic_qp *qp);

/* The responder's receive path (responder.c) hands its checked requests to the responder
 * resources and answers (resources.c); the calls go that way only. */
/* Queues a coalesced ACK for psn (IBTA 9.7.5.1.1), unless a pending NAK covers it. */
void urnic_rc_queue_ack(struct urnic_qp *qp, uint32_t psn);
/* NAK for a class C error (IBTA 9.9.3.1): the QP goes to error. */
void urnic_rc_nak_class_c(struct urnic_engine *e, struct urnic_qp *qp, uint32_t psn,
			  enum urnic_nak_code code);
/* True (NAK sent, QP in error) when a new READ/atomic/A19 request finds the resource it
 * would reuse still owing its first response (IBTA 9.7.5.1.3). */
bool urnic_rc_res_exhausted(struct urnic_engine *e, struct urnic_qp *qp, uint32_t psn);
/* A request behind the expected PSN (IBTA 9.7.5.1.2): re-ACKed or answered again. */
void urnic_rc_answer_duplicate(struct urnic_engine *e, struct urnic_qp *qp,
			       const struct urnic_pkt *pkt, uint32_t flags);
/* Execute a checked request and owe or send its response; gen is the R_Key's grant.
 * direct (wire/addr.h): PLACED, a READ whose data is in the requester's memory already,
 * answered at once by one response that says so (with SPLIT: but for the tail the
 * requester was offered); SPLIT alone: answered in packets, the tail offered all the
 * same. An offer holds the region (rkey, pull_gen) until urnic_rc_pulled. */
void urnic_rc_execute_read(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
			   uint32_t gen, uint32_t direct, uint32_t pull_gen);
/* Sends the responses older requests still owe, up to a pass's budget; true when
 * none is owed any more (a new response would be next in PSN order). */
bool urnic_rc_reply_owed(struct urnic_engine *e, struct urnic_qp *qp);
/* The requester is done with the offer of the READ at psn (URNIC_DIRECT_PULLED). */
void urnic_rc_pulled(struct urnic_engine *e, struct urnic_qp *qp, uint32_t psn);
/* Lets go of the regions this QP's offers hold (it goes away). */
void urnic_rc_release_pulls(struct urnic_engine *e, struct urnic_qp *qp);
void urnic_rc_execute_atomic(struct urnic_engine *e, struct urnic_qp *qp,
			     const struct urnic_pkt *pkt, uint8_t *host);
void urnic_rc_execute_a19(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
			  uint8_t *host);

/* Puts the QP in error after completing the WQE at comp.idx with status. */
void urnic_rc_fail(struct urnic_engine *e, struct urnic_qp *qp, uint8_t status);

/* Arms (or re-arms) the retransmission timer. */
void urnic_rc_arm_rto(struct urnic_engine *e, struct urnic_qp *qp);

/* Completes the local operations (BIND_MW, LOCAL_INV) at the head of the send queue:
 * they are done when the requester reaches them and complete in post order once
 * everything before them has (IBTA 10.8.3: completions in order). */
void urnic_rc_complete_local_ops(struct urnic_engine *e, struct urnic_qp *qp);

#endif
