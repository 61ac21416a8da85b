/* SPDX-License-Identifier: MIT */
/*
 * fpdu_rx.c - the FPDU receive stream (fpdu_rx.h): length, headers, payload and trailer
 * gathered part by part with a running CRC32c, each part checked before the next is
 * read, so a bad length or header is refused before its payload is handed up.
 */
#include <string.h>

#include "engine/iwarp/fpdu_rx.h"
#include "wire/byteorder.h"

enum { DDP_T = 0x80, RDMAP_OPCODE = 0x0f };

void urnic_fpdu_rx_init(struct urnic_fpdu_rx *rx, unsigned flags)
{
	memset(rx, 0, sizeof(*rx));
	rx->flags = flags;
	rx->crc_reg = URNIC_FPDU_CRC_SEED;
}

static enum urnic_fpdu_rx_event rx_fail(struct urnic_fpdu_rx *rx, enum urnic_iw_reason r)
{
	rx->state = URNIC_FPDU_RX_DEAD;
	rx->reason = r;
	rx->errors[r]++;
	return URNIC_FPDU_RX_ERROR;
}

/* Copies up to want - have bytes of buf into dst + have; true once have == want. */
static bool gather(struct urnic_fpdu_rx *rx, uint8_t *dst, size_t want, const uint8_t *buf,
		   size_t len, size_t *used)
{
	size_t n = want - rx->have < len - *used ? want - rx->have : len - *used;

	memcpy(dst + rx->have, buf + *used, n);
	rx->crc_reg = urnic_fpdu_crc_step(rx->crc_reg, buf + *used, n);
	rx->have += n;
	*used += n;
	return rx->have == want;
}

/* How many header bytes to gather: the tagged header, then the untagged one once the T
 * bit says so, then a Read Request's once the opcode does; never past the ULPDU. */
static size_t hdr_want(const struct urnic_fpdu_rx *rx)
{
	size_t want = URNIC_DDP_TAGGED_BYTES;

	if (rx->have >= 1 && !(rx->hdr_buf[0] & DDP_T)) {
		want = URNIC_DDP_UNTAGGED_BYTES;
		if (rx->have >= 2 && (rx->hdr_buf[1] & RDMAP_OPCODE) == URNIC_RDMAP_READ_REQ)
			want += URNIC_RDMAP_READ_REQ_BYTES;
	}
	return want < rx->ulpdu_len ? want : rx->ulpdu_len;
}

static enum urnic_fpdu_rx_event on_len(struct urnic_fpdu_rx *rx)
{
	rx->ulpdu_len = urnic_get_be16(rx->len_buf);
	if (rx->ulpdu_len < URNIC_FPDU_ULPDU_MIN)
		return rx_fail(rx, URNIC_IW_R_FPDU_SHORT_ULPDU);
	rx->tail_bytes = urnic_fpdu_bytes(rx->ulpdu_len) - URNIC_FPDU_LEN_BYTES - rx->ulpdu_len;
	rx->state = URNIC_FPDU_RX_HDR;
	rx->have = 0;
	return URNIC_FPDU_RX_NONE;
}

static enum urnic_fpdu_rx_event on_hdr(struct urnic_fpdu_rx *rx)
{
	struct urnic_ddp_hdr h;
	size_t hb = 0;
	enum urnic_iw_reason r = urnic_ddp_decode(&h, &hb, rx->hdr_buf, rx->have);

	if (r != URNIC_IW_R_OK)
		return rx_fail(rx, r);
	/* RFC 5040 4.4: a Read Request's ULPDU is its headers, nothing more. */
	if (h.opcode == URNIC_RDMAP_READ_REQ && rx->ulpdu_len != hb)
		return rx_fail(rx, URNIC_IW_R_RDMAP_READ_REQ_LENGTH);
	rx->hdr = h;
	rx->hdr_bytes = hb;
	rx->payload_len = rx->ulpdu_len - hb;
	rx->off = 0;
	rx->data_len = 0;
	rx->have = 0;
	rx->state = rx->payload_len ? URNIC_FPDU_RX_DATA : URNIC_FPDU_RX_TRAIL;
	return URNIC_FPDU_RX_HEAD;
}

static enum urnic_fpdu_rx_event on_trail(struct urnic_fpdu_rx *rx)
{
	size_t pad = rx->tail_bytes - URNIC_FPDU_CRC_BYTES;

	if ((rx->flags & URNIC_FPDU_CRC) && urnic_get_le32(rx->tail + pad) != ~rx->crc_reg)
		return rx_fail(rx, URNIC_IW_R_FPDU_CRC);
	rx->fpdus++;
	rx->state = URNIC_FPDU_RX_LEN;
	rx->have = 0;
	rx->crc_reg = URNIC_FPDU_CRC_SEED;
	return URNIC_FPDU_RX_END;
}

/* Pad and CRC: the pad is covered by the CRC, the CRC field is not. */
static bool gather_tail(struct urnic_fpdu_rx *rx, const uint8_t *buf, size_t len, size_t *used)
{
	size_t pad = rx->tail_bytes - URNIC_FPDU_CRC_BYTES;
	size_t n =
		rx->tail_bytes - rx->have < len - *used ? rx->tail_bytes - rx->have : len - *used;

	if (rx->have < pad)
		rx->crc_reg = urnic_fpdu_crc_step(rx->crc_reg, buf + *used,
						  n < pad - rx->have ? n : pad - rx->have);
	memcpy(rx->tail + rx->have, buf + *used, n);
	rx->have += n;
	*used += n;
	return rx->have == rx->tail_bytes;
}

/* One piece of payload: as much of it as buf holds, pointed at, not copied. */
static enum urnic_fpdu_rx_event piece(struct urnic_fpdu_rx *rx, const uint8_t *buf, size_t len,
				      size_t *used)
{
	size_t n =
		rx->payload_len - rx->off < len - *used ? rx->payload_len - rx->off : len - *used;

	rx->crc_reg = urnic_fpdu_crc_step(rx->crc_reg, buf + *used, n);
	rx->data = buf + *used;
	rx->data_len = n;
	*used += n;
	if (rx->off + n == rx->payload_len)
		rx->state = URNIC_FPDU_RX_TRAIL;
	return URNIC_FPDU_RX_PIECE;
}

enum urnic_fpdu_rx_event urnic_fpdu_rx_next(struct urnic_fpdu_rx *rx, const uint8_t *buf,
					    size_t len, size_t *used)
{
	*used = 0;
	if (rx->flags & URNIC_FPDU_MARKERS)
		return rx_fail(rx, URNIC_IW_R_FPDU_MARKERS);
	if (rx->state == URNIC_FPDU_RX_DATA && rx->data_len) {
		rx->off += rx->data_len; /* the piece handed up last time */
		rx->data_len = 0;
	}
	while (rx->state != URNIC_FPDU_RX_DEAD) {
		if (*used == len)
			return URNIC_FPDU_RX_NONE;
		switch (rx->state) {
		case URNIC_FPDU_RX_LEN:
			if (gather(rx, rx->len_buf, URNIC_FPDU_LEN_BYTES, buf, len, used) &&
			    on_len(rx) == URNIC_FPDU_RX_ERROR)
				return URNIC_FPDU_RX_ERROR;
			break;
		case URNIC_FPDU_RX_HDR:
			if (gather(rx, rx->hdr_buf, hdr_want(rx), buf, len, used) &&
			    rx->have == hdr_want(rx))
				return on_hdr(rx);
			break;
		case URNIC_FPDU_RX_DATA:
			return piece(rx, buf, len, used);
		default:
			if (gather_tail(rx, buf, len, used))
				return on_trail(rx);
			break;
		}
	}
	return URNIC_FPDU_RX_ERROR;
}

/* RFC 5044 8 for framing and CRC, RFC 5041 7 for DDP headers, RFC 5040 7 for RDMAP. Rules
 * without a code of their own (reserved bits, truncated headers, a Read Request's length)
 * make the stream unusable: RDMAP's catastrophic error localized to the stream. */
enum urnic_iw_term urnic_fpdu_rx_term(const struct urnic_fpdu_rx *rx)
{
	bool tagged = (rx->hdr_buf[0] & DDP_T) != 0;

	switch (rx->reason) {
	case URNIC_IW_R_FPDU_CRC:
		return URNIC_IW_TERM_MPA_CRC;
	case URNIC_IW_R_FPDU_MARKERS:
		return URNIC_IW_TERM_MPA_MARKER;
	case URNIC_IW_R_DDP_VERSION:
		return tagged ? URNIC_IW_TERM_DDP_T_VERSION : URNIC_IW_TERM_DDP_U_VERSION;
	case URNIC_IW_R_RDMAP_QN:
		return URNIC_IW_TERM_DDP_U_INVALID_QN;
	case URNIC_IW_R_RDMAP_VERSION:
		return URNIC_IW_TERM_RDMAP_VERSION;
	case URNIC_IW_R_RDMAP_OPCODE:
	case URNIC_IW_R_RDMAP_MODEL:
		return URNIC_IW_TERM_RDMAP_OPCODE;
	default:
		return URNIC_IW_TERM_RDMAP_CATASTROPHIC_STREAM;
	}
}
