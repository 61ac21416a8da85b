/* SPDX-License-Identifier: MIT */
/*
 * mpa_conn.h - iWARP MPA connection setup (RFC 5044 7.1, RFC 6581 3), sans-I/O: the bytes
 * TCP delivered go in (any split), the bytes to send and events come out, time is passed.
 *
 * The initiator sends a revision 2 Request with the IRD/ORD word; the responder hands it
 * up (REQUEST), the application accepts or rejects; the initiator checks the Reply; in
 * peer-to-peer mode the initiator then sends the zero-length RTR FPDU the Reply chose and
 * the responder waits for it. CRC, IRD/ORD and RTR follow siw's siw_cm.c.
 */
#ifndef URNIC_ENGINE_IWARP_MPA_CONN_H
#define URNIC_ENGINE_IWARP_MPA_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/iwarp.h"
#include "wire/mpa.h"

enum urnic_mpa_conn_reason {
#define URNIC_MPA_CONN_REASON(name, text) URNIC_MPA_CONN_R_##name,
#include "engine/iwarp/mpa_conn_reason.def"
#undef URNIC_MPA_CONN_REASON
	URNIC_MPA_CONN_R_COUNT
};

enum urnic_mpa_conn_state {
	URNIC_MPA_CONN_WAIT_REP,  /* initiator: Request queued, Reply awaited */
	URNIC_MPA_CONN_WAIT_REQ,  /* responder: Request awaited */
	URNIC_MPA_CONN_REQ_RCVD,  /* responder: the application decides */
	URNIC_MPA_CONN_WAIT_RTR,  /* responder, peer-to-peer: Reply sent, RTR awaited */
	URNIC_MPA_CONN_CONNECTED, /* FPDUs flow (fpdu_rx.h, fpdu_tx.h) */
	URNIC_MPA_CONN_REJECTED,  /* a Reply with R: sent (responder) or received */
	URNIC_MPA_CONN_FAILED,	  /* reason says why; close TCP after sending the output */
};

enum urnic_mpa_conn_event {
	URNIC_MPA_EV_NONE,
	URNIC_MPA_EV_REQUEST,	/* responder: peer's Request in peer; accept or reject */
	URNIC_MPA_EV_CONNECTED, /* params hold the negotiated connection */
	URNIC_MPA_EV_REJECTED,	/* initiator: peer_pd holds the reject's private data */
	URNIC_MPA_EV_ERROR,	/* reason (and wire_reason for FRAME) */
};

/* RFC 6581 3's ready-to-receive messages. */
enum urnic_mpa_rtr {
	URNIC_MPA_RTR_NONE,
	URNIC_MPA_RTR_WRITE, /* zero-length RDMA Write (siw's preference) */
	URNIC_MPA_RTR_READ,  /* zero-length RDMA Read Request, answered by a Read Response */
	URNIC_MPA_RTR_SEND,  /* zero-length Send (siw never offers it) */
};

struct urnic_mpa_cfg {
	bool crc_required; /* siw's mpa_crc_required: ask for CRC */
	bool crc_strict;   /* siw's mpa_crc_strict: refuse a peer that differs */
	bool p2p;	   /* initiator: ask for peer-to-peer mode (siw's peer_to_peer) */
	bool rtr_write, rtr_read, rtr_send; /* initiator: the RTRs it offers with p2p */
	uint16_t ird, ord;		    /* initiator's; the responder's come with accept */
	uint16_t ird_max;    /* initiator: the device's IRD limit (siw's attrs.max_ird); 0: ird */
	const uint8_t *pd;   /* initiator's private data (copied) */
	uint16_t pd_len;     /* at most URNIC_MPA_PD_MAX - 4 */
	uint64_t timeout_ns; /* for each frame awaited from the peer */
};

/* What setup settled: IRD/ORD are this side's, peer_* the other side's. */
struct urnic_mpa_params {
	bool crc; /* FPDUs carry and check CRC (URNIC_FPDU_CRC) */
	bool enhanced;
	bool p2p;
	uint8_t rtr; /* enum urnic_mpa_rtr */
	uint16_t ird, ord, peer_ird, peer_ord;
};

enum {
	URNIC_MPA_RR_MAX = URNIC_MPA_HDR_BYTES + URNIC_MPA_PD_MAX,
	URNIC_MPA_ULP_PD_MAX = URNIC_MPA_PD_MAX - URNIC_MPA_V2_BYTES,
	URNIC_MPA_RTR_FPDU_MAX = 52, /* a Read Request: 2 + 18 + 28, CRC */
	URNIC_MPA_OUT_MAX = URNIC_MPA_RR_MAX + URNIC_MPA_RTR_FPDU_MAX,
};

struct urnic_mpa_conn {
	uint8_t state; /* enum urnic_mpa_conn_state */
	bool initiator;
	struct urnic_mpa_cfg cfg;
	struct urnic_mpa_params params;
	enum urnic_mpa_conn_reason reason;
	enum urnic_iw_reason wire_reason;
	uint64_t deadline_ns;
	/* the peer's frame, then its RTR FPDU, as they arrive */
	uint8_t in[URNIC_MPA_RR_MAX];
	size_t in_len;
	uint8_t rtr_in[URNIC_MPA_RTR_FPDU_MAX];
	size_t rtr_len;
	struct urnic_mpa_rr peer; /* valid from REQUEST / Reply; pd points into in */
	const uint8_t *peer_pd;
	uint16_t peer_pd_len;
	uint8_t pd[URNIC_MPA_ULP_PD_MAX]; /* cfg.pd's copy */
	uint8_t out[URNIC_MPA_OUT_MAX];	  /* bytes to send */
	size_t out_len;
	uint32_t refusals[URNIC_MPA_CONN_R_COUNT];
};

/* 0, or -EINVAL (IRD/ORD over 14 bits, RTR offered without p2p), -EMSGSIZE (private
 * data); the initiator's Request is then queued. */
int urnic_mpa_conn_init(struct urnic_mpa_conn *c, const struct urnic_mpa_cfg *cfg, bool initiator,
			uint64_t now_ns);
/* Feeds bytes from TCP; *used of them belong to setup, the rest (after CONNECTED) are
 * FPDUs for fpdu_rx. Returns the event the bytes caused (NONE: need more). */
enum urnic_mpa_conn_event urnic_mpa_conn_input(struct urnic_mpa_conn *c, const uint8_t *buf,
					       size_t len, size_t *used, uint64_t now_ns);
/* ERROR (TIMEOUT) once now passes the deadline while a peer frame is awaited. */
enum urnic_mpa_conn_event urnic_mpa_conn_tick(struct urnic_mpa_conn *c, uint64_t now_ns);
/* TCP closed (FIN or reset) during setup: ERROR (CLOSED), or NONE when already done. */
enum urnic_mpa_conn_event urnic_mpa_conn_closed(struct urnic_mpa_conn *c);
/* Responder in REQ_RCVD: the Reply with this side's IRD/ORD and private data is queued.
 * 0, -EALREADY (state), -EINVAL (ORD above the peer's IRD, 14 bits), -EMSGSIZE. The event
 * (CONNECTED, or NONE while the RTR is awaited) is *ev. */
int urnic_mpa_conn_accept(struct urnic_mpa_conn *c, uint16_t ird, uint16_t ord, const uint8_t *pd,
			  uint16_t pd_len, enum urnic_mpa_conn_event *ev, uint64_t now_ns);
/* Responder in REQ_RCVD: the Reply with R set is queued. 0, -EALREADY, -EMSGSIZE. */
int urnic_mpa_conn_reject(struct urnic_mpa_conn *c, const uint8_t *pd, uint16_t pd_len);
/* Moves up to cap queued bytes to buf; returns how many. */
size_t urnic_mpa_conn_output(struct urnic_mpa_conn *c, uint8_t *buf, size_t cap);

const char *urnic_mpa_conn_reason_name(enum urnic_mpa_conn_reason r);

#endif
