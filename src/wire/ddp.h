/* SPDX-License-Identifier: MIT */
/*
 * ddp.h - DDP segment headers (RFC 5041 4) with the RDMAP header inside them (RFC 5040
 * 4), the RDMA Read Request header and the Terminate message (RFC 5040 4.4, 4.8).
 *
 * Every ULPDU an FPDU carries (fpdu.h) starts with a DDP control byte (T, L, version 1)
 * and the RDMAP control byte (version 1, opcode: rdmap_opcode.def). Tagged segments
 * (RDMA Write, Read Response) then carry STag and tagged offset; untagged ones a 32-bit
 * field for the ULP (the Invalidate STag of Send with Invalidate), QN, MSN and MO.
 */
#ifndef URNIC_WIRE_DDP_H
#define URNIC_WIRE_DDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "wire/iwarp.h"

enum {
	URNIC_DDP_TAGGED_BYTES = 14,   /* control, RDMAP control, STag, TO */
	URNIC_DDP_UNTAGGED_BYTES = 18, /* control, RDMAP control, ULP field, QN, MSN, MO */
	URNIC_RDMAP_READ_REQ_BYTES = 28,
	URNIC_RDMAP_TERM_HDR_BYTES = 4,
	URNIC_DDP_VERSION = 1,
	URNIC_RDMAP_VERSION = 1,
};

/* RFC 5040 4.3 opcodes (rdmap_opcode.def): URNIC_RDMAP_WRITE = 0, ... */
enum urnic_rdmap_opcode {
#define URNIC_RDMAP_OP(name, code, tagged, qn) URNIC_RDMAP_##name = (code),
#include "wire/rdmap_opcode.def"
#undef URNIC_RDMAP_OP
};

/* RFC 5040 5.1: the untagged queues. */
enum urnic_ddp_qn {
	URNIC_DDP_QN_SEND = 0,
	URNIC_DDP_QN_READ_REQ = 1,
	URNIC_DDP_QN_TERMINATE = 2,
};

/* RFC 5040 4.4: what an RDMA Read Request asks for. */
struct urnic_rdmap_read_req {
	uint32_t sink_stag;
	uint64_t sink_to;
	uint32_t size; /* RDMA Read Message Size */
	uint32_t src_stag;
	uint64_t src_to;
};

/* One segment's DDP and RDMAP headers, host order. */
struct urnic_ddp_hdr {
	bool tagged;	/* T */
	bool last;	/* L */
	uint8_t opcode; /* enum urnic_rdmap_opcode */
	/* tagged */
	uint32_t stag;
	uint64_t to;
	/* untagged */
	uint32_t inv_stag; /* Send with Invalidate; zero otherwise */
	uint32_t qn;
	uint32_t msn;
	uint32_t mo;
	struct urnic_rdmap_read_req rreq; /* opcode READ_REQ only */
};

/* RFC 5040 4.8: a Terminate's header and the headers it copies from the segment that
 * failed. With D, the 16-bit DDP Segment Length precedes the copied headers (as siw and
 * Wireshark lay it out); copied points into the decoded buffer: the DDP header followed,
 * for a Read Request with R set, by its 28-byte RDMAP header. */
struct urnic_rdmap_term {
	uint8_t layer; /* enum urnic_iw_layer */
	uint8_t etype;
	uint8_t code;
	bool m;		  /* DDP Segment Length valid (needs D) */
	bool d;		  /* DDP header included */
	bool r;		  /* RDMAP header included (needs D) */
	uint16_t seg_len; /* D: the failed segment's length, meaningful with M */
	const uint8_t *copied;
	uint16_t copied_bytes;
};

/* Validates the headers at the start of the ULPDU and then fills *h and *hdr_bytes (the
 * DDP header, plus the Read Request header); the payload follows. */
enum urnic_iw_reason urnic_ddp_decode(struct urnic_ddp_hdr *h, size_t *hdr_bytes,
				      const uint8_t *ulpdu, size_t len);
/* Header bytes written, or -EINVAL (opcode, buffer model, QN, ULP field), -ENOBUFS. */
ssize_t urnic_ddp_encode(const struct urnic_ddp_hdr *h, uint8_t *buf, size_t cap);

/* The Terminate body: the bytes after the 18-byte untagged DDP header (QN 2). */
enum urnic_iw_reason urnic_rdmap_term_decode(struct urnic_rdmap_term *t, const uint8_t *p,
					     size_t len);
/* Bytes written, or -EINVAL (layer, flags, copied headers that do not match them),
 * -ENOBUFS. */
ssize_t urnic_rdmap_term_encode(const struct urnic_rdmap_term *t, uint8_t *buf, size_t cap);

#endif
