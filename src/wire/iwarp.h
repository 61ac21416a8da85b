/* SPDX-License-Identifier: MIT */
/*
 * iwarp.h - what the iWARP codecs share: the refusal reasons (iwarp_reason.def) and the
 * Terminate error codes (iwarp_term.def).
 *
 * iWARP is RDMAP (RFC 5040) over DDP (RFC 5041) over MPA (RFC 5044, RFC 6581) over TCP,
 * as Linux's siw speaks it. The codecs are mpa.h (connection setup frames), fpdu.h
 * (framing and CRC) and ddp.h (DDP and RDMAP headers, Terminate); none does I/O.
 */
#ifndef URNIC_WIRE_IWARP_H
#define URNIC_WIRE_IWARP_H

#include <stdint.h>

/* Why a codec refused its input: URNIC_IW_R_OK, URNIC_IW_R_MPA_TRUNCATED, ... */
enum urnic_iw_reason {
#define URNIC_IW_REASON(name, text) URNIC_IW_R_##name,
#include "wire/iwarp_reason.def"
#undef URNIC_IW_REASON
	URNIC_IW_R_COUNT
};

/* Terminate errors (iwarp_term.def): URNIC_IW_TERM_RDMAP_INVALID_STAG, ... */
enum urnic_iw_term {
#define URNIC_IW_TERM(name, layer, etype, code, text) URNIC_IW_TERM_##name,
#include "wire/iwarp_term.def"
#undef URNIC_IW_TERM
	URNIC_IW_TERM_COUNT
};

/* The Terminate layers (RFC 5040 4.8). */
enum urnic_iw_layer {
	URNIC_IW_LAYER_RDMAP = 0,
	URNIC_IW_LAYER_DDP = 1,
	URNIC_IW_LAYER_LLP = 2,
};

/* A Terminate's (layer, etype, code) triple. */
struct urnic_iw_term_code {
	uint8_t layer;
	uint8_t etype;
	uint8_t code;
};

const char *urnic_iw_reason_name(enum urnic_iw_reason r);
/* The triple of a named error; the name of a triple (NULL: no such error). */
struct urnic_iw_term_code urnic_iw_term_code(enum urnic_iw_term t);
const char *urnic_iw_term_name(uint8_t layer, uint8_t etype, uint8_t code);

#endif
