/* SPDX-License-Identifier: MIT */
/*
 * uet_int.h - the state of an RC QP carried by the UET transport (uet_rc.h), shared by
 * its requester (uet_tx.c), its target side (uet_rx.c) and its ops (uet_rc.c).
 *
 * urnic's mapping of RC onto UE 1.0 (PDS RUD, SES standard requests):
 *   - one packet delivery context per connected QP pair, both ways; its PDC IDs are the
 *     two QPs' numbers' low 16 bits (generation and slot), set at RTR from the QP
 *     numbers the application exchanged, so no SYN handshake is needed (as RC's
 *     connection is made by the application or the CM, not by the transport);
 *   - every work request is one SES message: msg_id counts the QP's messages; WRITE and
 *     READ carry the R_Key in mem_key and the remote address (plus the packet's offset)
 *     in buffer_offset; SEND carries its offset in the message in buffer_offset;
 *     request_length is the message's length on every packet;
 *   - the messages that consume a receive WQE (SEND, WRITE with immediate) carry in the
 *     initiator field their receive sequence number (RSN), the count of such messages
 *     before them: the target gives the n-th the n-th receive WQE, whatever order their
 *     packets arrive in (RC's order of receives, IBTA 9.7.5.1.4, without ordered
 *     delivery); the immediate is the header data (HD) of each of their packets;
 *   - a READ is one request packet; the target answers with RSP_DATA requests of its own
 *     (msg_id: the READ's, msg_offset, mod_len: its length), run once every packet
 *     before the READ has arrived, so that it reads what earlier WRITEs wrote (IBTA
 *     9.5 ordering); a receive completes once every packet up to its message's last has
 *     arrived, so that WRITEs before it are in memory when the application sees it;
 *   - a refusal by the RC checks answers with an ACK_CC followed by an SES response
 *     (msg_id, return code) and the target QP enters error, as an RC responder after a
 *     NAK; a SEND that finds no receive WQE is NACKed NO_SES_MSG_AVAIL with the
 *     responder's min_rnr_timer in the payload (the RNR NAK).
 */
#ifndef URNIC_ENGINE_UET_UET_INT_H
#define URNIC_ENGINE_UET_UET_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "cc/nscc.h"
#include "engine/core.h"
#include "engine/uet/pds.h"
#include "engine/uet/reps.h"
#include "engine/uet/uet_rc.h"
#include "wire/uet.h"

enum {
	/* Receive messages (RSNs) a target tracks at once beyond the oldest incomplete
	 * one; a SEND further ahead is refused as if no WQE were posted for it. */
	URNIC_UET_MSG_SLOTS = 64,
	/* UDP payload bytes before the data: RUD request and SES standard header. */
	URNIC_UET_REQ_HDR = 12 + 44,
	URNIC_UET_RSP_HDR = 12 + 20,
	URNIC_UET_ACK_BYTES = 32 + 12,
	/* New packets sent in a row on one entropy value: one GSO send's worth (64 KiB
	 * at path MTU 4096), the granule of spraying. */
	URNIC_UET_BURST_PKTS = 16,
	/* What a pass sends per QP at most, so that one QP does not starve the others. */
	URNIC_UET_BUDGET_PKTS = 64,
};

/* What each PSN this side sent carried, to build it again if it is lost. */
enum urnic_uet_rec_kind {
	URNIC_UET_REC_REQ = 1, /* a request packet of the SQ WQE at ref */
	URNIC_UET_REC_RSP = 2, /* a READ response packet of the job at ref */
};

struct urnic_uet_rec {
	uint32_t ref;
	uint32_t off; /* byte offset in its message */
	uint16_t len; /* payload bytes */
	uint8_t kind;
	uint8_t ses_flags;
};

/* The requester's view of each SQ slot. */
struct urnic_uet_wqe {
	uint16_t msg_id;
	uint8_t status;	   /* a remote error for it (URNIC_WC_*), else SUCCESS */
	bool rsp_done;	   /* READ: every response byte arrived */
	uint32_t rsn;	   /* its receive sequence number, if it consumes a receive */
	uint32_t read_got; /* READ: response bytes placed */
};

/* A receive message at the target, by its RSN. */
struct urnic_uet_rmsg {
	bool used;
	bool eom;     /* its last packet arrived */
	bool imm;     /* carries an immediate */
	bool write;   /* a WRITE with immediate (the data went to memory, not the WQE) */
	bool invalid; /* a WRITE with immediate's completion carries no data */
	uint32_t len;
	uint32_t got;
	uint32_t last_psn;
	uint32_t imm_be;
};

/* A READ the target answers. */
struct urnic_uet_job {
	bool used;
	uint16_t msg_id;
	uint32_t req_psn; /* runs once every PSN before it has arrived */
	uint64_t va;
	uint32_t rkey;
	uint32_t len;
	uint32_t sent;
	uint32_t last_psn; /* of its last response packet, once all are sent */
	bool all_sent;
};

struct urnic_uet_qp {
	uint16_t lpdc, rpdc;
	uint16_t ack_ev; /* the entropy value of this side's ACKs and NACKs */
	bool cc_on;
	/* UE 1.0 PDS's 0-RTT establishment: each direction's packets carry SYN and their
	 * offset from its start PSN until the first ACK comes back, and the receiver takes
	 * the start from the first it sees. Only the requester's `sq_psn` is known to both
	 * sides at RTR; a responder that stays in RTR (perftest's READ server) answers in a
	 * PSN space its peer could not otherwise know. */
	bool tx_synced;
	uint32_t tx_start;
	bool rx_synced;
	uint32_t rx_start;
	uint16_t burst_ev;   /* the entropy value of the burst being sent */
	uint32_t burst_left; /* its packets still to send */
	struct urnic_pds_tx tx;
	struct urnic_pds_rx rx;
	struct urnic_reps reps;
	struct urnic_nscc cc;
	struct urnic_uet_rec rec[URNIC_PDS_WINDOW];
	/* Requester. */
	uint16_t next_msg_id;
	uint32_t next_rsn;
	uint32_t rnr_left; /* RNR NACKs still allowed (7: for ever, IBTA 9.7.5.2.8) */
	uint32_t sq_mask;
	struct urnic_uet_wqe *wqe; /* sq.depth slots */
	/* Target: receives in RSN order; rq.cons is the WQE of rsn_next. */
	uint32_t rsn_next;
	struct urnic_uet_rmsg msg[URNIC_UET_MSG_SLOTS];
	struct urnic_uet_job *jobs; /* res_count slots, FIFO from job_head */
	uint32_t njobs, job_head, job_count;
	/* Answers owed: an ACK (the receive window's), a refusal (an SES response). */
	bool ack_pending;
	bool rsp_pending;
	uint8_t rsp_code;
	uint16_t rsp_msg_id;
};

/* The requester's view of SQ slot idx. */
static inline struct urnic_uet_wqe *urnic_uet_wqe_at(struct urnic_qp *qp, uint32_t idx)
{
	return &qp->uet->wqe[idx & qp->uet->sq_mask];
}

/* uet_out.c */
/* A packet to the peer from entropy value ev, ECN-capable (NSCC reads the marks). */
struct urnic_txpkt *urnic_uet_begin(struct urnic_engine *e, struct urnic_qp *qp, uint16_t ev);
/* Encodes the PDS header and the SES header (if any) into p's header bytes. */
bool urnic_uet_put_headers(struct urnic_engine *e, struct urnic_txpkt *p,
			   const struct urnic_uet_pds *h, const struct urnic_uet_ses *s);
/* An ACK_CC (with the refusal owed, if any) to the peer now. */
void urnic_uet_send_ack(struct urnic_engine *e, struct urnic_qp *qp);
/* A NACK for psn with code and payload. */
void urnic_uet_send_nack(struct urnic_engine *e, struct urnic_qp *qp, uint32_t psn, uint8_t code,
			 uint32_t payload);
/* A packet of PDS header h alone (NACK, CTRL, an ACK built by the caller). */
void urnic_uet_send_ctrl(struct urnic_engine *e, struct urnic_qp *qp,
			 const struct urnic_uet_pds *h);
/* The CTRL PROBE the delivery context asks for. */
void urnic_uet_send_probe(struct urnic_engine *e, struct urnic_qp *qp);
/* The QP's window, RTT and bytes in flight into its per-QP counters (their state). */
void urnic_uet_publish_state(struct urnic_engine *e, const struct urnic_qp *qp);

/* uet_tx.c */
bool urnic_uet_progress(struct urnic_engine *e, struct urnic_qp *qp);
/* Completes the SQ's WQEs that are done, in post order. */
void urnic_uet_complete_sq(struct urnic_engine *e, struct urnic_qp *qp);

/* uet_ack.c */
/* The requester's side of a received ACK_CC or NACK. */
void urnic_uet_rx_ack(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_uet_pkt *pkt);
void urnic_uet_rx_nack(struct urnic_engine *e, struct urnic_qp *qp,
		       const struct urnic_uet_pds *nack);

/* uet_rx.c */
/* A request (RUD_REQ with an SES request or RSP_DATA) for the QP. */
void urnic_uet_rx_request(struct urnic_engine *e, struct urnic_qp *qp,
			  const struct urnic_uet_pkt *pkt, bool ce);
/* Completes the receive messages that are whole and in order, and starts the READs whose
 * turn came, as the receive window moves. */
void urnic_uet_target_advance(struct urnic_engine *e, struct urnic_qp *qp);

/* Whether the QP's delivery context has nothing to send or time (pass.c's quiet QP). */
static inline bool urnic_uet_quiet(const struct urnic_qp *qp)
{
	const struct urnic_uet_qp *u = qp->uet;

	return u->tx.una == u->tx.nxt && !u->ack_pending && !u->rsp_pending && !u->job_count;
}

/* The QP a SYN request from src names by its SPDCID (no DPDCID: UE 1.0 PDS finds the
 * PDC by {source, destination, SPDCID}). */
struct urnic_qp *urnic_uet_syn_qp(struct urnic_engine *e, const uint8_t *src, uint16_t spdcid);

/* The entropy value for random or recycled bits v: a UDP source port of the device's range. */
static inline uint16_t urnic_uet_ev_port(uint64_t v)
{
	return (uint16_t)(URNIC_UET_EV_BASE + v % URNIC_UET_EVS);
}

#endif
