/* SPDX-License-Identifier: MIT */
/*
 * fpdu_rx.h - cuts the TCP byte stream of a connected iWARP connection into FPDUs (RFC
 * 5044 4), in any split, and hands each up as its decoded DDP/RDMAP headers and then its
 * payload in pieces that point into the caller's buffers.
 *
 * Only the length field, the headers (at most 46 bytes) and pad and CRC (7) are copied;
 * the payload is never reassembled, so the state is bounded. With CRC the check comes at
 * the END event, after the pieces: a ULP places them and undoes nothing, but completes
 * the message only on END, and a CRC error terminates the connection (as siw does).
 */
#ifndef URNIC_ENGINE_IWARP_FPDU_RX_H
#define URNIC_ENGINE_IWARP_FPDU_RX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/ddp.h"
#include "wire/fpdu.h"
#include "wire/iwarp.h"

enum urnic_fpdu_rx_state {
	URNIC_FPDU_RX_LEN,   /* the 2-byte ULPDU length */
	URNIC_FPDU_RX_HDR,   /* DDP/RDMAP headers */
	URNIC_FPDU_RX_DATA,  /* payload */
	URNIC_FPDU_RX_TRAIL, /* pad and CRC */
	URNIC_FPDU_RX_DEAD,  /* after an error: the connection terminates */
};

enum urnic_fpdu_rx_event {
	URNIC_FPDU_RX_NONE,  /* every byte taken; feed more */
	URNIC_FPDU_RX_HEAD,  /* hdr and payload_len of a new FPDU */
	URNIC_FPDU_RX_PIECE, /* data/data_len at payload offset off */
	URNIC_FPDU_RX_END,   /* the FPDU ended, its CRC (if negotiated) checked */
	URNIC_FPDU_RX_ERROR, /* reason; urnic_fpdu_rx_term() says which Terminate */
};

enum {
	URNIC_FPDU_RX_HDR_MAX = URNIC_DDP_UNTAGGED_BYTES + URNIC_RDMAP_READ_REQ_BYTES,
	URNIC_FPDU_RX_TAIL_MAX = 3 + URNIC_FPDU_CRC_BYTES,
};

struct urnic_fpdu_rx {
	uint8_t state;	/* enum urnic_fpdu_rx_state */
	unsigned flags; /* URNIC_FPDU_CRC */
	uint32_t crc_reg;
	uint8_t len_buf[URNIC_FPDU_LEN_BYTES];
	uint8_t hdr_buf[URNIC_FPDU_RX_HDR_MAX];
	uint8_t tail[URNIC_FPDU_RX_TAIL_MAX];
	size_t have; /* bytes of the current part gathered */
	uint16_t ulpdu_len;
	size_t hdr_bytes;
	size_t tail_bytes;
	/* what the events point at */
	struct urnic_ddp_hdr hdr;
	size_t payload_len;
	size_t off;
	const uint8_t *data;
	size_t data_len;
	enum urnic_iw_reason reason;
	uint64_t fpdus;
	uint32_t errors[URNIC_IW_R_COUNT];
};

void urnic_fpdu_rx_init(struct urnic_fpdu_rx *rx, unsigned flags);
/* Takes bytes from buf (*used of len) up to the next event, which it returns. */
enum urnic_fpdu_rx_event urnic_fpdu_rx_next(struct urnic_fpdu_rx *rx, const uint8_t *buf,
					    size_t len, size_t *used);
/* The Terminate RFC 5040 7, RFC 5041 7 or RFC 5044 8 prescribe for rx->reason. */
enum urnic_iw_term urnic_fpdu_rx_term(const struct urnic_fpdu_rx *rx);

#endif
