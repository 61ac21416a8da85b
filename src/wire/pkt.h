/* SPDX-License-Identifier: MIT */
/*
 * pkt.h - RoCEv2 transport packets: the opcode table, header codecs and the ICRC.
 *
 * A RoCEv2 packet is the UDP payload BTH | extension headers | payload | pad | ICRC
 * (IBTA Vol.1 ch. 9.2-9.5, Annex A17). The opcode table (opcode.def) says which
 * extension headers each BTH opcode carries, as rxe's rxe_opcode[] does; the codecs
 * read and write them into host-order structs. Nothing here allocates, keeps state or
 * calls the kernel. XRC requests carry an XRCETH (IBTA Annex A14). Out of scope: RD (RDETH
 * is decoded but never produced).
 */
#ifndef URNIC_WIRE_PKT_H
#define URNIC_WIRE_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Header and payload sizes, IBTA 9.2-9.3 and rxe_hdr.h. */
enum {
	URNIC_BTH_BYTES = 12,
	URNIC_BTH_DQPN_OFFSET = 5, /* BTH bytes 5..7: the destination QP (IBTA 9.2) */
	URNIC_RDETH_BYTES = 4,
	URNIC_DETH_BYTES = 8,
	URNIC_RETH_BYTES = 16,
	URNIC_ATMETH_BYTES = 28,
	URNIC_AETH_BYTES = 4,
	URNIC_ATMACK_BYTES = 8,
	URNIC_IMMDT_BYTES = 4,
	URNIC_IETH_BYTES = 4,
	URNIC_FETH_BYTES = 4,
	URNIC_CNP_RESV_BYTES = 16, /* IBTA A17.9.3: after a CNP's BTH, sent as zeros */
	URNIC_XRCETH_BYTES = 4,
	URNIC_ICRC_BYTES = 4,
	URNIC_ROCE_UDP_PORT = 4791,
	URNIC_BTH_TVER = 0,
	URNIC_DEFAULT_PKEY = 0xffff,
};

/* Opcode flags: which headers follow the BTH, and what the opcode means. */
enum urnic_op_flag {
	URNIC_OPF_RDETH = 1u << 0,
	URNIC_OPF_DETH = 1u << 1,
	URNIC_OPF_RETH = 1u << 2,
	URNIC_OPF_ATMETH = 1u << 3,
	URNIC_OPF_AETH = 1u << 4,
	URNIC_OPF_ATMACK = 1u << 5,
	URNIC_OPF_IMMDT = 1u << 6,
	URNIC_OPF_IETH = 1u << 7,
	URNIC_OPF_FETH = 1u << 8,
	URNIC_OPF_PAYLOAD = 1u << 9, /* may carry payload */
	URNIC_OPF_REQ = 1u << 10,    /* request (to the responder) */
	URNIC_OPF_RESP = 1u << 11,   /* response (to the requester's completer) */
	URNIC_OPF_SEND = 1u << 12,
	URNIC_OPF_WRITE = 1u << 13,
	URNIC_OPF_READ = 1u << 14, /* READ request or READ response */
	URNIC_OPF_ATOMIC = 1u << 15,
	URNIC_OPF_ACK = 1u << 16, /* ACKNOWLEDGE or ATOMIC_ACKNOWLEDGE */
	URNIC_OPF_FIRST = 1u << 17,
	URNIC_OPF_MIDDLE = 1u << 18,
	URNIC_OPF_LAST = 1u << 19,
	URNIC_OPF_ONLY = URNIC_OPF_FIRST | URNIC_OPF_LAST,
	URNIC_OPF_RC = 1u << 20,
	URNIC_OPF_UC = 1u << 21,
	URNIC_OPF_UD = 1u << 22,
	URNIC_OPF_FLUSH = 1u << 23,
	URNIC_OPF_ATOMIC_WRITE = 1u << 24,
	URNIC_OPF_XRC = 1u << 25,
	URNIC_OPF_XRCETH = 1u << 26,
	/* The CNP (IBTA A17.9.3, base 0x80): the transport of congestion notification, its
	 * own; 16 reserved bytes after the BTH. */
	URNIC_OPF_CNP = 1u << 27,
};

/* IBTA 9.2.1: the BTH OpCode is a transport (bits 7-5) and an operation (bits 4-0); XRC
 * and UC reuse the RC operations under their own transport. */
enum {
	URNIC_OPCODE_TRANSPORT_MASK = 0xe0,
	URNIC_OPCODE_OP_MASK = 0x1f,
};

/* BTH opcodes by name: URNIC_OP_RC_SEND_FIRST = 0x00, ... (generated from opcode.def). */
enum urnic_opcode {
#define URNIC_OPCODE(name, value, flags) URNIC_OP_##name = (value),
#include "opcode.def"
#undef URNIC_OPCODE
};

struct urnic_opcode_info {
	const char *name;  /* NULL for opcodes urnic does not know: such packets are dropped */
	uint32_t flags;	   /* enum urnic_op_flag */
	uint8_t hdr_bytes; /* BTH + every extension header */
};

/* Indexed by the BTH opcode byte; unknown opcodes have name == NULL. */
extern const struct urnic_opcode_info urnic_opcode_table[256];

static inline const struct urnic_opcode_info *urnic_opcode_info(uint8_t opcode)
{
	return &urnic_opcode_table[opcode];
}

/* Host-order view of every header a packet can carry. */
struct urnic_bth {
	uint8_t opcode;
	bool se;     /* solicited event */
	bool mig;    /* MigReq: sent 0, ignored on receive (IBTA 9.2: APM only; rxe) */
	uint8_t pad; /* 0..3 pad bytes before the ICRC */
	uint8_t tver;
	uint16_t pkey;
	bool fecn;
	bool becn;
	uint32_t dqpn; /* 24 bits */
	bool ackreq;
	uint32_t psn; /* 24 bits */
};

struct urnic_reth {
	uint64_t va;
	uint32_t rkey;
	uint32_t len;
};

struct urnic_atmeth {
	uint64_t va;
	uint32_t rkey;
	uint64_t swap_add;
	uint64_t compare;
};

struct urnic_aeth {
	uint8_t syndrome;
	uint32_t msn; /* 24 bits */
};

struct urnic_deth {
	uint32_t qkey;
	uint32_t sqpn; /* 24 bits */
};

/* One decoded packet. payload points into the buffer that was decoded. */
struct urnic_pkt {
	struct urnic_bth bth;
	uint32_t rdeth_eecnxt;
	struct urnic_deth deth;
	struct urnic_reth reth;
	struct urnic_atmeth atmeth;
	struct urnic_aeth aeth;
	uint64_t atmack_orig; /* AtomicAckETH: original remote data */
	uint32_t imm_be;      /* ImmDt, kept in network order as ibv_wc.imm_data is */
	uint32_t ieth_rkey;
	uint32_t feth;
	uint32_t xrc_srqn; /* XRCETH: the XRC SRQ at the target, 24 bits */
	const uint8_t *payload;
	uint32_t payload_bytes; /* excluding pad and ICRC */
	uint32_t bytes;		/* the whole packet, BTH to ICRC (the UDP payload) */
};

/* Per-header codecs: decode returns the header size or -EBADMSG (too short, reserved
 * bits set, TVer != 0); encode returns the header size or -ENOBUFS. */
ssize_t urnic_bth_decode(struct urnic_bth *bth, const uint8_t *buf, size_t len);
ssize_t urnic_bth_encode(const struct urnic_bth *bth, uint8_t *buf, size_t cap);
ssize_t urnic_reth_decode(struct urnic_reth *reth, const uint8_t *buf, size_t len);
ssize_t urnic_reth_encode(const struct urnic_reth *reth, uint8_t *buf, size_t cap);
ssize_t urnic_atmeth_decode(struct urnic_atmeth *a, const uint8_t *buf, size_t len);
ssize_t urnic_atmeth_encode(const struct urnic_atmeth *a, uint8_t *buf, size_t cap);
ssize_t urnic_aeth_decode(struct urnic_aeth *aeth, const uint8_t *buf, size_t len);
ssize_t urnic_aeth_encode(const struct urnic_aeth *aeth, uint8_t *buf, size_t cap);
ssize_t urnic_deth_decode(struct urnic_deth *deth, const uint8_t *buf, size_t len);
ssize_t urnic_deth_encode(const struct urnic_deth *deth, uint8_t *buf, size_t cap);
ssize_t urnic_xrceth_decode(uint32_t *srqn, const uint8_t *buf, size_t len);
ssize_t urnic_xrceth_encode(uint32_t srqn, uint8_t *buf, size_t cap);

/*
 * Decode a whole RoCEv2 UDP payload (BTH .. ICRC). Checks: length covers BTH, the
 * opcode's headers, pad and ICRC; opcode known; TVer 0; reserved bits zero. Does NOT
 * check the ICRC (see urnic_icrc_*). Returns the number of header bytes (BTH + ext)
 * or -EBADMSG.
 */
ssize_t urnic_pkt_decode(struct urnic_pkt *pkt, const uint8_t *buf, size_t len);

/*
 * Encode BTH + the extension headers that pkt->bth.opcode carries (per the table).
 * The caller appends payload, pad and ICRC. Returns header bytes or -ENOBUFS/-EINVAL
 * (unknown opcode).
 */
ssize_t urnic_pkt_encode_hdr(const struct urnic_pkt *pkt, uint8_t *buf, size_t cap);

/* AETH syndromes, IBTA 9.7.5.2.5 table 44 (syndrome.def). */
enum urnic_aeth_type {
	URNIC_AETH_ACK = 0x00,
	URNIC_AETH_RNR_NAK = 0x20,
	URNIC_AETH_NAK = 0x60,
	URNIC_AETH_TYPE_MASK = 0x60,
};

enum urnic_nak_code {
	URNIC_NAK_PSN_SEQ_ERR = 0,
	URNIC_NAK_INVALID_REQ = 1,
	URNIC_NAK_REM_ACCESS_ERR = 2,
	URNIC_NAK_REM_OP_ERR = 3,
	URNIC_NAK_INVALID_RD_REQ = 4,
};

#define URNIC_AETH_ACK_UNLIMITED 0x1f /* credit field "invalid": rxe sends it on every ACK */

/* IBTA 9.7.5.2.8 table 45: RNR NAK timer code (0..31) to microseconds. */
uint32_t urnic_rnr_timer_us(uint8_t code);

/*
 * ICRC (IBTA Annex A17.3.3, as rxe_icrc.c): CRC-32 over 8 bytes of 0xff, the IP header
 * with TOS/TTL/checksum (IPv4) or class/flow/hop limit (IPv6) masked to ones, the UDP
 * header with its checksum masked, the BTH with byte 4 masked, and the rest of the UDP
 * payload before the ICRC. Stored little-endian in the last four bytes.
 */

/* Over real header bytes (e.g. from a capture): ip is an IPv4 (no options) or IPv6
 * header, udp the 8-byte UDP header, payload the UDP payload without its ICRC. */
uint32_t urnic_icrc_raw(const uint8_t *ip, size_t ip_bytes, const uint8_t *udp,
			const uint8_t *payload, size_t payload_bytes);

/* The addressing a socket-based sender or receiver knows. For IPv4, the header is
 * rebuilt as Linux emits it from an unconnected UDP socket with IP_PMTUDISC_DO:
 * DF set, ID 0 (ip_select_ident_segs), protocol 17, no options. */
struct urnic_icrc_flow {
	bool ipv6;
	uint8_t src[16]; /* IPv4 in the first four bytes */
	uint8_t dst[16];
	uint16_t ip_id;
	uint16_t sport;
	uint16_t dport;
};

/* ICRC over a payload given as a list of fragments (headers, then payload pieces from
 * scatter/gather entries, then pad), total_bytes = sum of frag lengths. The value is
 * ISA-L's running CRC (crc32_gzip_refl): given only the first fragments of a packet of
 * total_bytes (at least the BTH), crc32_gzip_refl, urnic_crc32 or urnic_crc32_copy continue
 * it over the rest, and the last value is the ICRC. */
struct urnic_frag {
	const void *base;
	size_t len;
};
uint32_t urnic_icrc_flow(const struct urnic_icrc_flow *flow, const struct urnic_frag *frags,
			 size_t nfrags, size_t total_bytes);

/*
 * The IPv4 ID a sender used, found from the ICRC (a UDP socket cannot see it; Linux rxe
 * counts it). icrc_id0: the ICRC computed with ip_id 0 (urnic_icrc_flow); icrc_rx: the
 * one received; covered_udp_payload: the UDP payload bytes before the ICRC. Returns 0 and
 * sets *ip_id when exactly one ID explains the difference (0 included), -EBADMSG when
 * none does (the packet is corrupt), -EMSGSIZE for an impossible length. Assumes a
 * 20-byte header with DF set, as urnic_icrc_flow rebuilds it.
 */
int urnic_icrc_ipv4_id(uint32_t icrc_id0, uint32_t icrc_rx, size_t covered_udp_payload,
		       uint16_t *ip_id);
/* a(x) * b(x) mod the CRC-32 polynomial, reflected as zlib does (bit 31 = x^0). */
uint32_t urnic_crc32_mulmod(uint32_t a, uint32_t b);

#endif
