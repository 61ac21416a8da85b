/* SPDX-License-Identifier: MIT */
/*
 * mpa.h - MPA Request and Reply frames: the first bytes each side of an iWARP TCP
 * connection sends (RFC 5044 7.1), with RFC 6581 3's enhanced setup (revision 2).
 *
 * A frame is the 16-byte key, a flags byte (M, C, R, E), the revision, the 16-bit
 * PD_Length and that many bytes of private data (at most 512). With revision 2 and E set,
 * the private data starts with the IRD/ORD word; the rest is the ULP's (rdma_cm's).
 * Markers are refused, as siw refuses them. No I/O, no state machine.
 */
#ifndef URNIC_WIRE_MPA_H
#define URNIC_WIRE_MPA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "wire/iwarp.h"

enum {
	URNIC_MPA_KEY_BYTES = 16,
	URNIC_MPA_HDR_BYTES = 20,	/* key, flags, revision, PD_Length */
	URNIC_MPA_PD_MAX = 512,		/* RFC 5044 7.1 */
	URNIC_MPA_V2_BYTES = 4,		/* RFC 6581 3: the IRD/ORD word */
	URNIC_MPA_IRD_ORD_MAX = 0x3fff, /* 14 bits each */
};

enum urnic_mpa_kind {
	URNIC_MPA_REQ = 1, /* "MPA ID Req Frame" */
	URNIC_MPA_REP = 2, /* "MPA ID Rep Frame" */
};

/* One MPA Request or Reply, host order; pd points into the decoded buffer. */
struct urnic_mpa_rr {
	uint8_t kind;  /* enum urnic_mpa_kind */
	bool markers;  /* M: never true after a decode (refused) */
	bool crc;      /* C: the sender wants MPA CRCs */
	bool reject;   /* R: the Reply refuses the connection */
	bool enhanced; /* E (0x10; siw: MPA_RR_FLAG_ENHANCED), revision 2: IRD/ORD word follows */
	bool gso_exp;  /* siw's experimental flag (0x08 of the flags byte, MPA_RR_FLAG_GSO_EXP) */
	uint8_t revision; /* 1 or 2 */
	/* The IRD/ORD word (enhanced only). RFC 6581 3 names the flags A-D: A peer-to-peer,
	 * B a zero-length SEND as ready-to-receive (RTR) message, C a zero-length RDMA WRITE,
	 * D a zero-length RDMA READ; siw sends none of them by default. */
	bool p2p;	   /* A: IRD word bit 15 */
	bool rtr_send;	   /* B: IRD word bit 14 */
	bool rtr_write;	   /* C: ORD word bit 15 */
	bool rtr_read;	   /* D: ORD word bit 14 */
	uint16_t ird;	   /* 14 bits */
	uint16_t ord;	   /* 14 bits */
	const uint8_t *pd; /* the ULP's private data (after the IRD/ORD word) */
	uint16_t pd_len;
};

/* Validates the frame at the start of buf (len bytes: more may follow, the FPDUs) and then
 * fills *rr and *consumed (header and private data); on a refusal neither is written. */
enum urnic_iw_reason urnic_mpa_rr_decode(struct urnic_mpa_rr *rr, size_t *consumed,
					 const uint8_t *buf, size_t len);
/* Bytes written, or -EINVAL (kind, revision, IRD/ORD or E on revision 1), -EOPNOTSUPP
 * (markers), -EMSGSIZE (private data over 512 bytes), -ENOBUFS (cap too small). */
ssize_t urnic_mpa_rr_encode(const struct urnic_mpa_rr *rr, uint8_t *buf, size_t cap);

#endif
