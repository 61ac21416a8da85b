/* SPDX-License-Identifier: MIT */
/*
 * iw.h - the per-QP state of an iWARP RC QP and what its files share: iw_qp.c (connect,
 * close, flush, the ops table), iw_out.c (the output ring), iw_wqe.c (completions), iw_tx.c (the
 * send queue), iw_rx.c (Sends and Writes received), iw_read.c (Read Requests answered, Read
 * Responses placed) and iw_term.c (Terminates sent and received). RFC 5040 (RDMAP), RFC 5041 (DDP),
 * RFC 5044 (MPA FPDUs). Context: the device lock, as every engine entry point.
 */
#ifndef URNIC_ENGINE_IWARP_IW_H
#define URNIC_ENGINE_IWARP_IW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/iwarp/fpdu_rx.h"
#include "engine/iwarp/fpdu_tx.h"
#include "engine/iwarp/iw_qp.h"

enum {
	/* The output ring: a 64 KiB message and a batch of smaller ones fit, so one sendmsg
	 * carries many FPDUs. */
	URNIC_IW_OUT_BYTES = 512 * 1024,
	/* Kept free for the Terminate (RFC 5040 4.8: at most 4 + 2 + 46 bytes of body). */
	URNIC_IW_TERM_SLACK = 128,
	URNIC_IW_TERM_BODY_MAX = URNIC_RDMAP_TERM_HDR_BYTES + 2 + URNIC_FPDU_RX_HDR_MAX,
	/* Payload copied per step from the send WQE (bounded by e->odp_bounce for on-demand
	 * regions). */
	URNIC_IW_COPY_CHUNK = 4096,
	URNIC_IW_MSN_FIRST = 1, /* RFC 5041 5.1: the first MSN of each queue is 1 */
};

/*
 * Bytes queued for the connection, a ring in which an FPDU never wraps (a bip buffer):
 * data is [rd, wr) or, wrapped, [rd, wrap) then [0, wr). queued and sent count every
 * byte ever appended and taken, so a send WQE completes when sent reaches its end.
 */
struct urnic_iw_out {
	uint8_t *buf;
	size_t cap;
	size_t rd, wr, wrap;
	bool wrapped;
	uint64_t queued;
	uint64_t sent;
};

/* A Read Request taken in (RFC 5040 4.4, 5.2.1), answered in order within IRD. The
 * request's header is kept for the Terminate if its source fails while answering. */
struct urnic_iw_rresp {
	uint32_t sink_stag;
	uint64_t sink_to;
	uint32_t src_stag;
	uint64_t src_to;
	uint32_t len;
	uint32_t sent;
	uint32_t gen; /* the source STag's grant when the request was checked */
	uint8_t hdr[URNIC_FPDU_RX_HDR_MAX];
};

/* What the FPDU being received is, once its header passed the checks. */
enum urnic_iw_seg {
	URNIC_IW_SEG_NONE,
	URNIC_IW_SEG_SEND,
	URNIC_IW_SEG_WRITE,
	URNIC_IW_SEG_RREQ,
	URNIC_IW_SEG_RRESP,
	URNIC_IW_SEG_TERM,
	URNIC_IW_SEG_RTR, /* RFC 6581 3: the peer-to-peer Initiator's RTR (iw_rtr.c) */
};

struct urnic_iw_rx {
	uint8_t seg; /* enum urnic_iw_seg */
	/* The untagged message (Send) and the tagged one (Write, Read Response) in progress:
	 * their opcode, so that no other message cuts in (siw: "packet intersection"). */
	bool send_mid;
	uint8_t send_op;
	bool tag_mid;
	uint8_t tag_op;
	uint32_t tag_stag;
	uint64_t tag_to;   /* the next segment's TO */
	uint32_t tag_gen;  /* Write: the STag's grant its segments were checked against */
	bool tag_gen_set;  /* tag_gen holds the message's grant (a segment had bytes) */
	uint64_t seg_to;   /* the current tagged segment's TO */
	uint32_t rreq_gen; /* the Read Request being received: its source STag's grant */
	uint32_t msn[3];   /* the MSN expected next on each untagged queue (RFC 5041 5.1) */
	uint8_t term[URNIC_IW_TERM_BODY_MAX];
	size_t term_len;
};

struct urnic_iw_qp {
	struct urnic_fpdu_rx rx_stream;
	struct urnic_iw_rx rx;
	struct urnic_iw_out out;
	size_t mulpdu;
	unsigned flags; /* URNIC_FPDU_CRC */
	uint16_t ird, ord;
	uint32_t tx_msn[3]; /* the next MSN sent on each untagged queue */
	/* Send side: the queued byte count at which each SQ slot's last FPDU ends. */
	uint64_t *wqe_end;
	uint32_t wqe_mask;
	/* Requester: READs sent and not yet answered in full (SQ slots, oldest first). */
	uint32_t orq[URNIC_MAX_RD_ATOMIC];
	uint32_t orq_head, orq_count;
	uint32_t rresp_got; /* bytes of the oldest READ's response placed */
	/* Responder: Read Requests to answer, oldest first; rresp_mid: the oldest is partly
	 * framed (no other tagged message may cut in). */
	struct urnic_iw_rresp irq[URNIC_MAX_RD_ATOMIC];
	uint32_t irq_head, irq_count;
	bool rresp_mid;
	bool dead;	    /* the stream failed or a Terminate came: nothing more is taken */
	bool term_sent;	    /* a Terminate is queued: no more FPDUs after it */
	bool llp_gone;	    /* the driver reported the connection closed */
	bool await_first;   /* MPA Responder: no FPDU before the Initiator's first (iw_qp.h) */
	uint8_t rtr_in;	    /* enum urnic_mpa_rtr: the RTR the first FPDU must be (iw_rtr.c) */
	bool rtr_rresp_due; /* Initiator: the Read Response to its Read RTR is still due */
	/* Without an RTR, await_first's hold is bounded: it ends the engine's
	 * iw_await_first_ns after await_since_ns (the connection) at the latest. */
	bool await_bounded;
	uint64_t await_since_ns;
};

static inline uint32_t iw_slot(uint32_t idx, uint32_t count)
{
	return idx % count;
}

/* ---- iw_out.c: the output ring ---- */

/* Room for an FPDU of bytes (plus slack unless it is the Terminate): where to write it,
 * or NULL. iw_out_commit appends what was written there and marks the QP for the driver. */
uint8_t *urnic_iw_out_reserve(struct urnic_iw_out *o, size_t bytes, bool term);
void urnic_iw_out_commit(struct urnic_engine *e, struct urnic_qp *qp, size_t bytes);
/* Bytes queued and not yet taken; the socket took n of them. */
size_t urnic_iw_out_pending(const struct urnic_iw_out *o);
void urnic_iw_out_consume(struct urnic_iw_out *o, size_t n);

/* Frames one segment: header h, payload bytes filled by fill (NULL: none) into the ring.
 * Returns the FPDU's bytes, 0 when the ring has no room, or -EFAULT when fill failed. */
typedef int (*urnic_iw_fill_fn)(struct urnic_engine *e, struct urnic_qp *qp, uint8_t *dst,
				uint32_t off, uint32_t len, const void *arg);
ssize_t urnic_iw_frame(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_ddp_hdr *h,
		       uint32_t payload, urnic_iw_fill_fn fill, uint32_t off, const void *arg);

/* ---- iw_tx.c ---- */

bool urnic_iw_sq_progress(struct urnic_engine *e, struct urnic_qp *qp);

/* ---- iw_wqe.c ---- */

/* Completes the send WQEs at the head of the SQ that are done, in post order; a
 * ping-pong's last RDMA Write may be held for the peer's answer instead. */
void urnic_iw_complete_sq(struct urnic_engine *e, struct urnic_qp *qp);
/* What is held completes now: the QP changes state, goes away or the LLP closed. */
void urnic_iw_release_held(struct urnic_engine *e, struct urnic_qp *qp);
/* The peer's request (Send, Write, Read Request) came whole: what was held for it
 * completes, before the request's own completion; or the QP learns that its peer
 * answers. */
void urnic_iw_hold_answered(struct urnic_engine *e, struct urnic_qp *qp);
/* Completes the receive WQE being filled: cqe's status and flags, its bytes so far. */
void urnic_iw_push_rwqe(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_cqe *cqe,
			bool solicited);
/* Completes the receive WQE being filled with status (a failed message). */
void urnic_iw_fail_rwqe(struct urnic_engine *e, struct urnic_qp *qp, uint8_t status);

/* ---- iw_rx.c: Sends and Writes ---- */

/* The header of a Send or Write segment (rx_stream.hdr): checked, and the segment
 * set up, or a Terminate queued (false). */
bool urnic_iw_rx_send_head(struct urnic_engine *e, struct urnic_qp *qp);
bool urnic_iw_rx_write_head(struct urnic_engine *e, struct urnic_qp *qp);
/* A piece of the current segment's payload placed; false: a Terminate was queued. */
bool urnic_iw_rx_piece(struct urnic_engine *e, struct urnic_qp *qp, const uint8_t *p, size_t n,
		       size_t off);
/* The segment ended (CRC checked). */
void urnic_iw_rx_end(struct urnic_engine *e, struct urnic_qp *qp);

/* ---- iw_read.c ---- */

bool urnic_iw_rx_rreq_head(struct urnic_engine *e, struct urnic_qp *qp);
void urnic_iw_rx_rreq_end(struct urnic_engine *e, struct urnic_qp *qp);
bool urnic_iw_rx_rresp_head(struct urnic_engine *e, struct urnic_qp *qp);
bool urnic_iw_rx_rresp_piece(struct urnic_engine *e, struct urnic_qp *qp, const uint8_t *p,
			     size_t n, size_t off);
void urnic_iw_rx_rresp_end(struct urnic_engine *e, struct urnic_qp *qp);
/* Frames Read Responses while the ring has room; true if it framed any. */
bool urnic_iw_rresp_progress(struct urnic_engine *e, struct urnic_qp *qp);
/* Frames a READ's Read Request (RFC 5040 4.4); 0, or -ENOBUFS (no room). */
int urnic_iw_send_rreq(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_send_wqe *w);

/* ---- iw_rtr.c: RFC 6581's RTR ---- */

/* The first FPDU's header, rtr_in set: the RTR agreed, or a Terminate queued (false). */
bool urnic_iw_rtr_head(struct urnic_engine *e, struct urnic_qp *qp);
/* The RTR is whole: a Read is answered, its queue's MSN counted; the RTR is done. */
void urnic_iw_rtr_end(struct urnic_engine *e, struct urnic_qp *qp);
/* Whether the segment whose header is in is the answer to this side's Read RTR. */
bool urnic_iw_rtr_rresp(const struct urnic_qp *qp);

/* ---- iw_term.c ---- */

/* The stream failed on the segment being received (hdr: its header was decoded): queues
 * the Terminate for t, counts c, completes the WQE in progress with status (0: none),
 * and the QP enters error, raising IBV_EVENT_QP_FATAL; urnic_iw_fail_event raises ev,
 * the event siw raises for that error. */
void urnic_iw_fail(struct urnic_engine *e, struct urnic_qp *qp, enum urnic_iw_term t,
		   enum urnic_counter c, uint8_t status);
void urnic_iw_fail_event(struct urnic_engine *e, struct urnic_qp *qp, enum urnic_iw_term t,
			 enum urnic_counter c, uint8_t status, enum urnic_qp_event ev);
/* The same for a Read Request found failing while it is answered (siw: in_tx): the
 * request's own header is copied, and IBV_EVENT_QP_REQ_ERR raised. */
void urnic_iw_fail_rreq(struct urnic_engine *e, struct urnic_qp *qp,
			const struct urnic_iw_rresp *rr, enum urnic_iw_term t,
			enum urnic_counter c);
/* A Terminate received in full: the QP enters error, its work is flushed, no event is
 * raised (siw_proc_terminate). */
void urnic_iw_rx_term_end(struct urnic_engine *e, struct urnic_qp *qp);

#endif
