/* SPDX-License-Identifier: MIT */
/*
 * msg.h - the pieces of a message that the RC, UC and UD protocol parts share.
 *
 * Send side: which work requests a transport carries (IBTA 9.8: UC has SEND and RDMA
 * WRITE only, UD SEND only), the local checks of a WQE (10.8.3.1), the opcode of each
 * packet of a SEND or WRITE (9.7.4.1.1 segmentation into FIRST/MIDDLE/LAST or ONLY; the
 * UC opcodes are the RC ones plus 0x20), payload gather, header emission, completion of
 * send WQEs in post order, and the send loop of the unreliable services, which complete
 * a WQE when its last packet has left (9.8 and rxe: no ACKs).
 * Receive side: taking a receive WQE from the QP's RQ or its SRQ, placing a SEND's data,
 * the opcode sequence (9.7.5.1.4), the length and R_Key checks of an RDMA WRITE
 * (9.7.5.1.6-7), placing WRITE data, completing receive WQEs.
 * What a failed check means is the caller's: a NAK on RC, a silent drop on UC/UD.
 * Context: the engine, under the device lock.
 */
#ifndef URNIC_ENGINE_ROCE_MSG_H
#define URNIC_ENGINE_ROCE_MSG_H

#include "engine/core.h"
#include "wire/psn.h"

/* ---- send ---- */

/* Whether a QP of type t carries work requests of this opcode. */
bool urnic_roce_wr_allowed(enum urnic_qp_type t, uint32_t wr_opcode);

/* Local checks when a WQE is first picked up: opcode for the transport, atomic
 * alignment, length, L_Keys. Returns a completion status (URNIC_WC_SUCCESS: fine). */
uint8_t urnic_roce_validate_swqe(struct urnic_engine *e, struct urnic_qp *qp,
				 const struct urnic_send_wqe *w);

/* The work completion opcode of a send WQE's opcode. */
uint8_t urnic_roce_wc_opcode(uint32_t wr_opcode);

/* FETH (IBTA A19.4.1, rxe_hdr.h): placement type in bits 3..0, selectivity level in
 * bits 5..4, the rest reserved. */
enum {
	ROCE_FETH_PLT_MASK = 0xf,
	ROCE_FETH_SEL_SHIFT = 4,
	ROCE_FETH_SEL_MASK = 0x3,
	ROCE_FETH_RESERVED = ~0x3fu,
};

static inline uint32_t roce_feth(uint8_t type, uint8_t level)
{
	return (uint32_t)(type & ROCE_FETH_PLT_MASK) | (uint32_t)(level & ROCE_FETH_SEL_MASK)
							       << ROCE_FETH_SEL_SHIFT;
}

/* Work requests that send nothing: memory window binds and local invalidation. */
static inline bool roce_is_local_op(uint32_t wr_opcode)
{
	return wr_opcode == URNIC_WR_BIND_MW || wr_opcode == URNIC_WR_LOCAL_INV;
}

/* Executes a local operation when the requester reaches it (rxe_do_local_ops): binds a
 * window (mw.h) or invalidates one. Returns the completion status: success,
 * IBV_WC_MW_BIND_ERR for a failed bind, IBV_WC_LOC_QP_OP_ERR for a failed invalidation
 * (as rxe). */
uint8_t urnic_roce_local_op(struct urnic_engine *e, struct urnic_qp *qp,
			    const struct urnic_send_wqe *w);

/* Encodes h's headers (P_Key, pad and, for the connected emitters, the peer's QPN
 * filled in) into a new tx packet and returns it; payload and commit are the
 * caller's. urnic_roce_emit sends to the connected peer, urnic_roce_emit_to anywhere (UD). */
struct urnic_txpkt *urnic_roce_emit(struct urnic_engine *e, struct urnic_qp *qp,
				    struct urnic_pkt *h, uint32_t payload_bytes);
struct urnic_txpkt *urnic_roce_emit_to(struct urnic_engine *e, struct urnic_qp *qp,
				       struct urnic_pkt *h, uint32_t payload_bytes,
				       const struct urnic_peer *dst, uint32_t dqpn);

/* Points p's fragments at bytes [off, off+len) of the WQE's data (SGEs or inline); bytes
 * in on-demand regions are read into e->odp_bounce first. Returns 0 or -EFAULT (an SGE
 * does not resolve, or its on-demand memory cannot be read: counted). */
int urnic_roce_gather(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_send_wqe *w,
		      uint32_t off, uint32_t len, struct urnic_txpkt *p);

/* Sends the next packet of a SEND or RDMA WRITE on a connected QP (RC or UC) at
 * req.psn / req.off_bytes and advances them. Returns true when the WQE is fully sent;
 * on a local protection error sets *err and sends nothing. */
bool urnic_roce_send_data_packet(struct urnic_engine *e, struct urnic_qp *qp,
				 const struct urnic_send_wqe *w, int *err);

/* Completes the WQE at comp.idx with status (if signaled or failed) and frees it. */
void urnic_roce_complete_swqe(struct urnic_engine *e, struct urnic_qp *qp, uint8_t status);

/* A local error on the WQE being sent: it completes with status once those before it
 * are done, the QP goes to error (IBTA 10.8.3.1). */
void urnic_roce_fail_swqe(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_send_wqe *w,
			  uint8_t status);

/* Flushes the tx batch, then completes the sent WQEs (comp.idx up to req.idx) in
 * order: what UC and UD send is complete once it has left. */
void urnic_roce_complete_sent(struct urnic_engine *e, struct urnic_qp *qp);

/* Holding for the application's answer (responder.c: an RC ACK; uc.c: a UC send
 * completion) stops after this many holds in a row expired unanswered. */
enum { ROCE_HOLD_MISSES = 4 };

/* An application that waits for completion events answers only after a wake-up. */
static inline bool roce_cq_armed(const struct urnic_cq *cq)
{
	return cq && atomic_load_explicit(&cq->arm, memory_order_relaxed) != URNIC_CQ_DISARMED;
}

/* One packet (or, for a UD message too long for the port, none) for the WQE at
 * req.idx; true when the WQE is done. */
typedef bool (*roce_send_fn)(struct urnic_engine *e, struct urnic_qp *qp,
			     const struct urnic_send_wqe *w, int *err);

/* The send loop of UC and UD: validate, send, and complete each WQE when its last
 * packet has left (nothing acknowledges it): the loop flushes the tx batch before it
 * completes what it sent. Returns true if it did anything. */
/* Whether the WQEs just sent wait to complete (held for the peer's answer, UC). */
typedef bool (*roce_hold_fn)(struct urnic_engine *e, struct urnic_qp *qp);
bool urnic_roce_unreliable_send(struct urnic_engine *e, struct urnic_qp *qp, roce_send_fn send,
				roce_hold_fn hold);

/* UD: the GRH area at the start of every receive buffer (IBTA 11.4.1.2, Post Receive
 * Request: the first 40 bytes receive the GRH, here the IP header standing for it). */
enum { URNIC_UD_GRH_BYTES = 40 };

/* ---- receive ---- */

/* SENDs and the last packet of a WRITE with immediate consume a receive WQE. */
static inline bool roce_needs_rwqe(uint32_t flags)
{
	return (flags & URNIC_OPF_SEND) || ((flags & URNIC_OPF_WRITE) && (flags & URNIC_OPF_IMMDT));
}

/* IBTA 9.7.5.1.4: inside a message only its MIDDLE/LAST may come, else only a FIRST. */
bool urnic_roce_op_sequence_ok(const struct urnic_resp *r, uint32_t flags);

/* IBTA 9.7.5.1.6 / 9.8: FIRST and MIDDLE carry exactly the path MTU, LAST and ONLY at
 * most that. */
bool urnic_roce_payload_len_ok(uint32_t flags, uint32_t payload_bytes, uint32_t mtu);

/* Makes sure a receive WQE is held for the message: the RQ's oldest, or one taken out
 * of the SRQ (which may raise the SRQ limit event). False when there is none. */
bool urnic_roce_take_rwqe(struct urnic_engine *e, struct urnic_qp *qp);

/* The held receive WQE. */
const struct urnic_recv_wqe *urnic_roce_rwqe(const struct urnic_qp *qp);

/* Copies len bytes to the held WQE at resp.rwqe_off and advances it. Returns 0,
 * -EMSGSIZE (the buffer is too short: nothing written) or -EFAULT (an SGE does not
 * resolve with local write, or its on-demand memory is not mapped writable: counted). */
int urnic_roce_place(struct urnic_engine *e, struct urnic_qp *qp, const uint8_t *data,
		     uint32_t len);

/* Completes the held WQE: immediate / invalidate from pkt's headers; for UD the
 * source QP from the DETH and the GRH flag. */
void urnic_roce_complete_rwqe(struct urnic_engine *e, struct urnic_qp *qp,
			      const struct urnic_pkt *pkt, uint8_t opcode, uint32_t byte_len,
			      uint8_t status);

/* In error: the WQE a QP took out of its SRQ completes with FLUSH_ERR. */
void urnic_roce_flush_held_rwqe(struct urnic_engine *e, struct urnic_qp *qp);
/* The QP is in error: its posted receive WQEs (or the one it took from its SRQ)
 * complete with FLUSH_ERR (IBTA 10.3.1, 10.2.9). */
void urnic_roce_flush_rq(struct urnic_engine *e, struct urnic_qp *qp);

enum {
	/* Requests within this many PSNs of the expected one count as the peer's for the
	 * IPv4 ID table (ip_id.h): what rxe (128) or urnic (256, qp.h) may have
	 * outstanding, so that the packets a loss makes the responder discard before
	 * go-back-N still move a counting source's last ID with it (each of them took an
	 * ID). A blind forger names such a PSN once in 2^15 tries, besides the QPN, the
	 * peer's address and an ID the source could send. */
	ROCE_PEER_PSN_NEAR = 256,
};

/* A request PSN near the one the responder expects (IBTA 9.7.5.1.1, 9.8). */
static inline bool roce_request_near(const struct urnic_qp *qp, uint32_t psn)
{
	int32_t d = urnic_psn_diff(psn, qp->resp.epsn);

	return d >= -ROCE_PEER_PSN_NEAR && d <= ROCE_PEER_PSN_NEAR;
}

/* A SEND packet into the held WQE; completes it on the LAST packet. Returns 0, or
 * -EMSGSIZE (the message is longer than the buffer) or -EFAULT (an SGE does not
 * resolve) with the message ended and the WQE not completed: the caller decides. A SEND
 * with Invalidate invalidates the IETH's R_Key before the WQE completes; if it cannot
 * (IBTA 9.9.3.1 class J, rxe RESPST_ERR_INVALIDATE_RKEY) the WQE completes with
 * REM_INV_REQ_ERR and the answer is -EKEYREJECTED: the QP must go to error. */
int urnic_roce_recv_send(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
			 uint32_t flags);

/* UC/UD: a message longer than the receive buffer is dropped (counted), as rxe treats
 * it: without an SRQ the WQE stays for the next message (class D), with one the WQE
 * taken out of the SRQ completes with REM_INV_REQ_ERR (class E); the QP goes on. */
void urnic_roce_recv_too_long(struct urnic_engine *e, struct urnic_qp *qp,
			      const struct urnic_pkt *pkt);

enum urnic_roce_write_check {
	ROCE_WRITE_OK,
	ROCE_WRITE_BAD_LENGTH, /* RETH length or packet length inconsistent */
	ROCE_WRITE_BAD_ACCESS, /* R_Key, bounds or rights (IBTA 9.7.5.1.7) */
};

/* Checks an RDMA WRITE packet and resolves where its data goes (*at, for
 * urnic_roce_recv_write). The FIRST/ONLY packet checks the R_Key for the whole message (IBTA
 * 9.7.5.1.7); every packet resolves it again for its own bytes, and a MIDDLE/LAST is
 * refused when the key no longer names the grant the FIRST resolved (deregistered,
 * reregistered, window unbound or invalidated): once ibv_dereg_mr returns, no packet
 * writes to the memory. Nothing is written here. */
enum urnic_roce_write_check urnic_roce_write_check(struct urnic_engine *e, struct urnic_qp *qp,
						   const struct urnic_pkt *pkt, uint32_t flags,
						   struct urnic_mr_at *at);

/* Places a WRITE packet checked by urnic_roce_write_check at *at; on the LAST packet of a
 * WRITE with immediate completes the held receive WQE. Returns 0, or -EFAULT when its
 * on-demand memory is not mapped writable (counted; the message goes no further: RC
 * answers NAK remote access error, IBTA 9.7.5.2.4, UC drops the rest). */
int urnic_roce_recv_write(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
			  uint32_t flags, const struct urnic_mr_at *at);

#endif
