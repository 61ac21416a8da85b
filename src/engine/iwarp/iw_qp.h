/* SPDX-License-Identifier: MIT */
/*
 * iw_qp.h - iWARP RC queue pairs in the engine: RDMAP (RFC 5040) over DDP (RFC 5041)
 * over MPA FPDUs (RFC 5044 4), sans-I/O, on one TCP connection per QP that the driver
 * owns.
 *
 * The driver (src/dev, a test's pipe) connects a QP once MPA setup is done
 * (mpa_conn.h), feeds it the bytes TCP delivered, in any split, writes what
 * urnic_iw_tx_peek offers and reports what the socket took. The engine places data
 * (untagged: the next receive WQE by QN, MSN and MO; tagged: the STag's region,
 * checked per segment), answers Read Requests within IRD, completes work requests
 * and, on a peer's error, queues the Terminate RFC 5040 7 prescribes and asks the
 * driver to close after it. TCP carries reliability: there is no PSN, ACK or
 * retransmission here. Context: the device lock, as every engine entry point.
 */
#ifndef URNIC_ENGINE_IWARP_IW_QP_H
#define URNIC_ENGINE_IWARP_IW_QP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "engine/core.h"

/* The longest an MPA Responder holds its FPDUs for an Initiator that agreed no RTR, by
 * default (the engine's cfg.iw_await_first_ns, URNIC_IW_HOLD_US). Such an Initiator may
 * never speak first (siw's default, peer_to_peer off), and a server application that
 * does (ucmatose) would wait with its client for ever. siw's own Responder does not hold
 * at all: its ESTABLISHED upcall follows the Reply, and its application's first Send
 * left 6-15 ms after the Reply in siw-to-siw ucmatose under TCG. What siw's Initiator
 * cannot take is an FPDU already behind the Reply when it reads it (siw_recv_mpa_rr:
 * -EPROTO, a reset), which it did 0.2 ms after the Reply's arrival there; urnic's
 * Responder sent 0.2 ms after its Reply without the hold. 10 ms after the hand-over
 * leaves that read behind (a VM under TCG took the Reply in 0.2-11 ms, once 51 ms on a
 * loaded host: URNIC_IW_HOLD_US is for such peers), and bounds what a server that
 * speaks first pays. */
#define URNIC_IW_AWAIT_FIRST_NS (10ull * 1000 * 1000)

/* What MPA setup settled for the connection (mpa_conn.h, struct urnic_mpa_params). */
struct urnic_iw_conn_params {
	bool crc;     /* FPDUs carry and check CRC32c (URNIC_FPDU_CRC) */
	uint32_t mss; /* the TCP MSS: the largest FPDU (fpdu_tx.h, urnic_fpdu_tx_mulpdu) */
	uint16_t ird; /* Read Requests this side answers at once (responder resources) */
	uint16_t ord; /* Read Requests this side may have outstanding */
	/* The MPA Responder, connected once its Reply went: it frames no FPDU (Send, Write,
	 * Read Request, Read Response) until the Initiator's first (in peer-to-peer mode the
	 * RTR, rtr_in) has arrived whole (RFC 5044 7.1.2); what the application posts
	 * meanwhile waits in the send queue and goes once that FPDU is in. Nothing is
	 * refused; a Terminate for an error is not held. Without an RTR the hold ends
	 * the engine's cfg.iw_await_first_ns after the connection at the latest. */
	bool await_first;
	/* RFC 6581 3's RTR (enum urnic_mpa_rtr, mpa_conn.h) of a peer-to-peer connection.
	 * rtr_in, the Responder's: its first FPDU must be that message (await_first is set
	 * too); the QP takes it, answers a Read with a zero-length Read Response, and counts
	 * it on its untagged queue (the next Read Request or Send has MSN 2, as siw's).
	 * rtr_out, the Initiator's: MPA setup sent it; its untagged queue goes on from MSN 2
	 * and a Read's zero-length Read Response is taken. */
	uint8_t rtr_in, rtr_out;
};

/* The QP (RC, in INIT or RTR, on an iWARP engine) is connected: it enters RTS with
 * its iWARP state allocated. 0, -EINVAL (QP type, state, params), -ENOMEM. */
int urnic_iw_qp_connect(struct urnic_engine *e, struct urnic_qp *qp,
			const struct urnic_iw_conn_params *p, uint64_t now_ns);

/* Bytes TCP delivered, after the MPA frames. Returns how many were taken: all of them,
 * unless the stream failed (a Terminate is then queued, the QP is in error and the rest
 * is of no use). */
size_t urnic_iw_rx(struct urnic_engine *e, struct urnic_qp *qp, const uint8_t *buf, size_t len,
		   uint64_t now_ns);

/* The bytes queued to send, in order, as at most max iovecs (0: nothing). They stay
 * valid until urnic_iw_tx_done or the next engine entry point for this QP. */
unsigned urnic_iw_tx_peek(const struct urnic_qp *qp, struct iovec *iov, unsigned max);

/* The socket took n bytes of what tx_peek offered: send work requests whose last byte
 * went are completed (RFC 5040 5.1: a Send or Write completes locally once the LLP has
 * its data). */
void urnic_iw_tx_done(struct urnic_engine *e, struct urnic_qp *qp, size_t n);

/* Whether the QP has bytes to send, and whether the driver should close the connection
 * once they have gone (a Terminate was queued, or the QP left RTS). */
bool urnic_iw_tx_pending(const struct urnic_qp *qp);
bool urnic_iw_close_due(const struct urnic_qp *qp);

/* The connection ended under the QP (peer FIN or reset, a write error): err 0 for an
 * orderly close. An RTS QP enters error and its work is flushed (RFC 5040 6.2's LLP
 * close). */
void urnic_iw_llp_closed(struct urnic_engine *e, struct urnic_qp *qp, int err, uint64_t now_ns);

/* The engine's iWARP QPs that have bytes to send or a close due, one per call: cursor
 * starts at 0 and is advanced past the QP returned; NULL at the end. A bit per QP slot
 * (struct urnic_qp_table iw_tx), set when bytes are queued or the QP leaves RTS, so a
 * scan costs what those QPs cost. */
struct urnic_qp *urnic_iw_tx_ready(struct urnic_engine *e, uint32_t *cursor);

/* For the engine core (engine.c): the ops of an iWARP engine's RC QPs, and the QP's
 * iWARP state let go (RESET, removal; the driver has closed or will close the socket). */
extern const struct urnic_qp_ops urnic_iw_rc_ops;
void urnic_iw_qp_free(struct urnic_qp *qp);

#endif
