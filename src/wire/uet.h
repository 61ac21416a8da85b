/* SPDX-License-Identifier: MIT */
/*
 * uet.h - the Ultra Ethernet transport's headers (UE 1.0): the PDS header of every
 * packet type urnic speaks (uet_type.def: RUD/ROD requests with and without CC state,
 * RUDI, UUD, ACK, ACK_CC, NACK, CTRL) and the SES request and response headers after it,
 * on UDP port 4793 with the entropy value in the UDP source port.
 *
 * Decoders validate, then fill: every reserved bit must be zero, every code known, so
 * that encode(decode(bytes)) == bytes; a refusal is a named reason (uet_reason.def).
 * Encoders refuse (-EINVAL) what the decoder would. Out of scope: the TSS security
 * header, ACK_CCX and NACK_CCX (refused as unsupported), the SES extension headers
 * (rendezvous, atomic, sync: the payload's first bytes, for the semantic layer), and the
 * native-IP encapsulation with its entropy header.
 */
#ifndef URNIC_WIRE_UET_H
#define URNIC_WIRE_UET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum {
	URNIC_UET_UDP_PORT = 4793,
	URNIC_UET_PROLOGUE_BYTES = 2,
	URNIC_UET_PDS_MAX_BYTES = 32, /* ACK_CC */
	URNIC_UET_ACK_EPSN_BYTES = 16,
	URNIC_UET_SES_MAX_BYTES = 44, /* REQ_STD */
	URNIC_UET_SES_VERSION = 0,
	URNIC_UET_PSN_OFFSET_MAX = 0x0fff, /* a SYN's 12-bit offset from the start PSN */
	URNIC_UET_LEN14_MAX = 0x3fff,	   /* SES 14-bit lengths */
};

enum urnic_uet_type {
#define URNIC_UET_TYPE(name, code, bytes, flags, nexts) URNIC_UET_##name = (code),
#include "wire/uet_type.def"
#undef URNIC_UET_TYPE
};

/* The header after the PDS header (the prologue's next header field). */
enum urnic_uet_next {
	URNIC_UET_NEXT_NONE = 0,
	URNIC_UET_NEXT_REQ_SMALL = 1,	   /* 20 bytes: optimised non-matching */
	URNIC_UET_NEXT_REQ_MEDIUM = 2,	   /* 32 bytes */
	URNIC_UET_NEXT_REQ_STD = 3,	   /* 44 bytes */
	URNIC_UET_NEXT_RSP = 4,		   /* 12 bytes */
	URNIC_UET_NEXT_RSP_DATA = 5,	   /* 20 bytes */
	URNIC_UET_NEXT_RSP_DATA_SMALL = 6, /* 12 bytes */
	URNIC_UET_NEXT_COUNT
};

/* A CTRL packet's type, in the next header slot. */
enum urnic_uet_ctrl {
	URNIC_UET_CTRL_NOP = 0,
	URNIC_UET_CTRL_ACK_REQ = 1,
	URNIC_UET_CTRL_CLEAR = 2,
	URNIC_UET_CTRL_CLEAR_REQ = 3,
	URNIC_UET_CTRL_CLOSE = 4,
	URNIC_UET_CTRL_CLOSE_REQ = 5,
	URNIC_UET_CTRL_PROBE = 6,
	URNIC_UET_CTRL_CREDIT = 7,
	URNIC_UET_CTRL_CREDIT_REQ = 8,
	URNIC_UET_CTRL_NEGOTIATION = 9,
	URNIC_UET_CTRL_COUNT
};

/* Prologue flags; their meaning depends on the type (uet_type.def says which a type has). */
enum {
	/* RUD/ROD requests and CTRL */
	URNIC_UET_F_RETX = 0x10,
	URNIC_UET_F_AR = 0x08,
	URNIC_UET_F_SYN = 0x04,
	URNIC_UET_F_ISROD = 0x20, /* CTRL */
	/* ACK and ACK_CC; M and RETX also NACK and RUDI */
	URNIC_UET_F_EPSN = 0x40, /* ACK only: a 32-bit payload word follows */
	URNIC_UET_F_M = 0x20,	 /* the packet acknowledged was ECN-marked */
	URNIC_UET_F_P = 0x08,	 /* the ACK answers a probe: probe_opaque, not an offset */
	URNIC_UET_F_REQ_CLEAR = 0x02,
	URNIC_UET_F_REQ_CLOSE = 0x04,
	/* NACK */
	URNIC_UET_F_NT = 0x08, /* a RUDI NACK: nack_psn is a packet ID, no PDCs */
};

/* ACK_CC's congestion control type. */
enum urnic_uet_cc_type {
	URNIC_UET_CC_NSCC = 0,
	URNIC_UET_CC_CREDIT = 1,
};

/* NACK codes (UE 1.0 PDS, NACK codes table); 0, 0x0c and 0x1b-0xfc are reserved. */
enum urnic_uet_nack_code {
	URNIC_UET_NACK_TRIMMED = 0x01,
	URNIC_UET_NACK_TRIMMED_LAST_HOP = 0x02,
	URNIC_UET_NACK_TRIMMED_ACK = 0x03,
	URNIC_UET_NACK_NO_PDC_AVAIL = 0x04,
	URNIC_UET_NACK_NO_CCC_AVAIL = 0x05,
	URNIC_UET_NACK_NO_BITMAP = 0x06,
	URNIC_UET_NACK_NO_PKT_BUF = 0x07,
	URNIC_UET_NACK_NO_GTD_DEL_AVAIL = 0x08,
	URNIC_UET_NACK_NO_SES_MSG_AVAIL = 0x09,
	URNIC_UET_NACK_NO_RESOURCE = 0x0a,
	URNIC_UET_NACK_PSN_OOR_WINDOW = 0x0b,
	URNIC_UET_NACK_ROD_OOO = 0x0d,
	URNIC_UET_NACK_INV_DPDCID = 0x0e,
	URNIC_UET_NACK_PDC_HDR_MISMATCH = 0x0f,
	URNIC_UET_NACK_CLOSING = 0x10,
	URNIC_UET_NACK_CLOSING_IN_ERR = 0x11,
	URNIC_UET_NACK_PKT_NOT_RCVD = 0x12,
	URNIC_UET_NACK_GTD_RESP_UNAVAIL = 0x13,
	URNIC_UET_NACK_ACK_WITH_DATA = 0x14,
	URNIC_UET_NACK_INVALID_SYN = 0x15,
	URNIC_UET_NACK_PDC_MODE_MISMATCH = 0x16,
	URNIC_UET_NACK_NEW_START_PSN = 0x17,
	URNIC_UET_NACK_RCVD_SES_PROCG = 0x18,
	URNIC_UET_NACK_UNEXP_EVENT = 0x19,
	URNIC_UET_NACK_RCVR_INFER_LOSS = 0x1a,
	URNIC_UET_NACK_EXP_NORMAL = 0xfd,
	URNIC_UET_NACK_EXP_ERR = 0xfe,
	URNIC_UET_NACK_EXP_FATAL = 0xff,
};

/* SES request opcodes (0x12-0x3f reserved) and flags. */
enum urnic_uet_ses_opcode {
	URNIC_UET_SES_NO_OP = 0x00,
	URNIC_UET_SES_WRITE = 0x01,
	URNIC_UET_SES_READ = 0x02,
	URNIC_UET_SES_ATOMIC = 0x03,
	URNIC_UET_SES_FETCH_ATOMIC = 0x04,
	URNIC_UET_SES_SEND = 0x05,
	URNIC_UET_SES_RNDV_SEND = 0x06,
	URNIC_UET_SES_DGRAM_SEND = 0x07,
	URNIC_UET_SES_DEFER_SEND = 0x08,
	URNIC_UET_SES_TAGGED_SEND = 0x09,
	URNIC_UET_SES_RNDV_TSEND = 0x0a,
	URNIC_UET_SES_DEFER_TSEND = 0x0b,
	URNIC_UET_SES_DEFER_RTR = 0x0c,
	URNIC_UET_SES_TSEND_ATOMIC = 0x0d,
	URNIC_UET_SES_TSEND_FETCH_ATOMIC = 0x0e,
	URNIC_UET_SES_MSG_ERR = 0x0f,
	URNIC_UET_SES_SYNC_WRITE = 0x10,
	URNIC_UET_SES_SYNC_ATOMIC = 0x11,
	URNIC_UET_SES_OPCODE_MAX = URNIC_UET_SES_SYNC_ATOMIC,
};

enum {
	URNIC_UET_SES_F_SOM = 0x01,
	URNIC_UET_SES_F_EOM = 0x02,
	URNIC_UET_SES_F_HD = 0x04,  /* header data present */
	URNIC_UET_SES_F_REL = 0x08, /* relative addressing */
	URNIC_UET_SES_F_IE = 0x10,  /* initiator error */
	URNIC_UET_SES_F_DC = 0x20,  /* delivery complete */
};

/* SES response opcodes (4-63 reserved), lists (2-3 reserved), and the last return code
 * defined (RC_DROPPED; 0x25-0x3f reserved). */
enum urnic_uet_rsp_opcode {
	URNIC_UET_RSP_DEFAULT = 0,
	URNIC_UET_RSP_RESPONSE = 1,
	URNIC_UET_RSP_WITH_DATA = 2,
	URNIC_UET_RSP_NONE = 3,
};

enum {
	URNIC_UET_LIST_EXPECTED = 0,
	URNIC_UET_LIST_OVERFLOW = 1,
	URNIC_UET_RC_NULL = 0x00,
	URNIC_UET_RC_OK = 0x01,
	URNIC_UET_RC_UNSUPPORTED_OP = 0x06,
	URNIC_UET_RC_HOST_UNSUCCESS_CMPL = 0x0e,
	URNIC_UET_RC_PERM_VIOLATION = 0x17,
	URNIC_UET_RC_BAD_MKEY = 0x1c,
	URNIC_UET_RC_BAD_ADDR = 0x1d,
	URNIC_UET_RC_TOO_LONG = 0x22,
	URNIC_UET_RC_MAX = 0x24,
};

enum urnic_uet_reason {
#define URNIC_UET_R(name, text) URNIC_UET_R_##name,
#include "wire/uet_reason.def"
#undef URNIC_UET_R
	URNIC_UET_R_COUNT
};

/* A PDS header, host order. Which fields mean anything depends on type (and flags). */
struct urnic_uet_pds {
	uint8_t type;  /* enum urnic_uet_type */
	uint8_t next;  /* enum urnic_uet_next; CTRL: enum urnic_uet_ctrl */
	uint8_t flags; /* URNIC_UET_F_*, as the type defines them */
	/* requests and CTRL */
	int16_t clear_psn_offset; /* requests */
	uint32_t psn;
	uint16_t spdcid;     /* all but RUDI and UUD */
	uint16_t dpdcid;     /* not with SYN */
	bool use_rsv_pdc;    /* SYN */
	uint16_t psn_offset; /* SYN: offset of psn from the PDC's start PSN */
	uint8_t ccc_id;	     /* *_CC_REQ */
	uint32_t credit_target;
	/* ACK, ACK_CC */
	int16_t ack_psn_offset; /* the PSN that caused the ACK, from cack_psn; not with P */
	uint16_t probe_opaque;	/* ACK with P, CTRL PROBE */
	uint32_t cack_psn;
	uint8_t cc_type; /* ACK_CC: enum urnic_uet_cc_type */
	uint8_t mpr;	 /* ACK_CC: the PSN range beyond cack_psn the receiver takes */
	int16_t sack_psn_offset;
	uint64_t sack_bitmap; /* bit i: PSN cack_psn + sack_psn_offset + i received */
	uint64_t ack_cc_state;
	/* NACK */
	uint8_t nack_code; /* enum urnic_uet_nack_code */
	uint8_t vendor_code;
	uint32_t nack_psn; /* with NT: the RUDI packet ID */
	/* NACK, CTRL, ACK with EPSN */
	uint32_t payload;
	/* RUDI */
	uint32_t pkt_id;
};

/* An SES header, host order; which one is next (enum urnic_uet_next, not NONE). */
struct urnic_uet_ses {
	uint8_t next;
	/* requests */
	uint8_t opcode; /* enum urnic_uet_ses_opcode */
	uint8_t flags;	/* URNIC_UET_SES_F_* */
	uint16_t pid_on_fep;
	uint16_t resource_index;
	uint64_t buffer_offset;	 /* REQ_SMALL, REQ_STD */
	uint32_t initiator;	 /* REQ_MEDIUM, REQ_STD */
	uint64_t mem_key;	 /* or match bits */
	uint64_t header_data;	 /* REQ_MEDIUM (there also the buffer offset), REQ_STD */
	uint32_t request_length; /* REQ_STD */
	/* responses */
	uint8_t list;	       /* URNIC_UET_LIST_* */
	uint8_t rsp_opcode;    /* enum urnic_uet_rsp_opcode */
	uint8_t return_code;   /* URNIC_UET_RC_* */
	uint16_t read_msg_id;  /* RSP_DATA */
	uint32_t mod_len;      /* RSP, RSP_DATA: modified length */
	uint32_t msg_offset;   /* RSP_DATA */
	uint32_t orig_req_psn; /* RSP_DATA_SMALL */
	/* both */
	uint16_t msg_id;   /* REQ_STD, RSP, RSP_DATA */
	uint16_t length14; /* REQ_SMALL, REQ_MEDIUM: request length; RSP_DATA(_SMALL): payload */
	uint8_t ri_generation;
	uint32_t job_id; /* 24 bits */
};

/* A whole UET datagram (the UDP payload): its headers and where its payload lies. */
struct urnic_uet_pkt {
	struct urnic_uet_pds pds;
	struct urnic_uet_ses ses; /* when pds.type is not CTRL and pds.next is not NONE */
	const uint8_t *payload;
	size_t payload_bytes;
};

/* The PDS header's length for a type (with EPSN for an ACK), or 0: unknown or unsupported. */
size_t urnic_uet_pds_bytes(uint8_t type, uint8_t flags);
/* The SES header's length for a next header value, or 0 (NONE, reserved). */
size_t urnic_uet_ses_bytes(uint8_t next);

/* Validates the PDS header at p and then fills *h and *hdr_bytes. */
enum urnic_uet_reason urnic_uet_pds_decode(struct urnic_uet_pds *h, size_t *hdr_bytes,
					   const uint8_t *p, size_t len);
/* Header bytes written, or -EINVAL (a header the decoder would refuse), -ENOBUFS. */
ssize_t urnic_uet_pds_encode(const struct urnic_uet_pds *h, uint8_t *buf, size_t cap);

/* Validates the SES header named next (a request or response header) and fills *s. */
enum urnic_uet_reason urnic_uet_ses_decode(struct urnic_uet_ses *s, size_t *hdr_bytes, uint8_t next,
					   const uint8_t *p, size_t len);
ssize_t urnic_uet_ses_encode(const struct urnic_uet_ses *s, uint8_t *buf, size_t cap);

/* The PDS header, the SES header it names and the payload's place; *pkt is written only
 * when the whole datagram is accepted. */
enum urnic_uet_reason urnic_uet_decode(struct urnic_uet_pkt *pkt, const uint8_t *p, size_t len);

const char *urnic_uet_reason_name(enum urnic_uet_reason r);
/* "RUD_REQ", ...; "?" for a code the table does not name. */
const char *urnic_uet_type_name(uint8_t type);

#endif
