/* SPDX-License-Identifier: MIT */
/*
 * fpdu.h - MPA framing of DDP segments into FPDUs on the TCP stream (RFC 5044 4).
 *
 * An FPDU is a 16-bit ULPDU length, the ULPDU (one DDP segment), zero pad to a 4-byte
 * boundary and a 4-byte CRC32c over all of that. With CRC negotiated off (siw's default)
 * the CRC field is still sent, as zero. Markers (RFC 5044 5) are not supported: siw
 * refuses them, and so does the codec. No I/O: the caller finds FPDUs in its stream.
 */
#ifndef URNIC_WIRE_FPDU_H
#define URNIC_WIRE_FPDU_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "wire/iwarp.h"

enum {
	URNIC_FPDU_LEN_BYTES = 2,
	URNIC_FPDU_CRC_BYTES = 4,
	URNIC_FPDU_ULPDU_MIN = 14, /* the tagged DDP header, the smaller of the two */
	URNIC_FPDU_ULPDU_MAX = 0xffff,
};

/* What the connection negotiated in its MPA Request/Reply (flags for the codec). */
enum urnic_fpdu_flag {
	URNIC_FPDU_CRC = 1 << 0,     /* C set by either side: CRCs sent and checked */
	URNIC_FPDU_MARKERS = 1 << 1, /* M: refused */
};

/* One FPDU; ulpdu points into the decoded buffer. */
struct urnic_fpdu {
	const uint8_t *ulpdu;
	uint16_t ulpdu_len;
	uint8_t pad;  /* 0..3 */
	uint32_t crc; /* the CRC field as a number (CRC32c value; zero without CRC) */
	size_t bytes; /* the whole FPDU: length field, ULPDU, pad, CRC */
};

/* The FPDU size for a ULPDU of ulpdu_len bytes. */
static inline size_t urnic_fpdu_bytes(size_t ulpdu_len)
{
	return ((URNIC_FPDU_LEN_BYTES + ulpdu_len + 3) & ~(size_t)3) + URNIC_FPDU_CRC_BYTES;
}

/* CRC32c (the iSCSI polynomial, RFC 3385) of n bytes: what the CRC field holds, sent
 * least significant byte first as siw does. */
uint32_t urnic_fpdu_crc(const uint8_t *p, size_t n);
/* The same CRC over pieces: reg starts at URNIC_FPDU_CRC_SEED, each piece is stepped in,
 * and the CRC is ~reg (a receiver that does not hold the whole FPDU). */
#define URNIC_FPDU_CRC_SEED 0xffffffffu
uint32_t urnic_fpdu_crc_step(uint32_t reg, const uint8_t *p, size_t n);

/* Validates the FPDU at the start of buf (more may follow) and then fills *f; the CRC is
 * checked only with URNIC_FPDU_CRC. FPDU_TRUNCATED also means "read more bytes". */
enum urnic_iw_reason urnic_fpdu_decode(struct urnic_fpdu *f, const uint8_t *buf, size_t len,
				       unsigned flags);
/* Writes the FPDU around ulpdu (which may already sit at buf + 2): bytes written, or
 * -EMSGSIZE (ULPDU over 65535 bytes), -EOPNOTSUPP (markers), -ENOBUFS (cap). */
ssize_t urnic_fpdu_encode(uint8_t *buf, size_t cap, const uint8_t *ulpdu, size_t ulpdu_len,
			  unsigned flags);

#endif
