/* SPDX-License-Identifier: MIT */
/*
 * pktgen.h - test helpers: a seeded PRNG, random packets for any opcode, packet
 * comparison. Used by the truncation, round-trip, reserved-bit and fuzz-replay tests.
 *
 * The PRNG is splitmix64 with an explicit state, so every run draws the same values
 * (house style 1: tests get randomness as an argument, never from rand()).
 */
#ifndef URNIC_TESTS_WIRE_PKTGEN_H
#define URNIC_TESTS_WIRE_PKTGEN_H

#include <stddef.h>
#include <stdint.h>

#include "wire/pkt.h"

struct wire_rng {
	uint64_t state;
};

uint64_t wire_rng_u64(struct wire_rng *r);
uint32_t wire_rng_u32(struct wire_rng *r);
/* Uniform enough in [0, n) for tests; n > 0. */
uint32_t wire_rng_below(struct wire_rng *r, uint32_t n);

/* Every field that opcode carries gets a random in-range value; the rest are zero,
 * as urnic_pkt_decode leaves them. TVer is 0. payload/payload_bytes are left zero. */
void wire_pkt_random(struct urnic_pkt *pkt, uint8_t opcode, struct wire_rng *r);

/*
 * A whole UDP payload: urnic_pkt_encode_hdr(pkt), payload_bytes bytes of payload
 * (copied from payload, or a counting pattern when payload is NULL), pkt->bth.pad zero
 * bytes and the ICRC for a fixed IPv4 flow (wire_test_flow). Returns the length, or 0
 * if cap is too small or the opcode is unknown.
 */
size_t wire_pkt_build(const struct urnic_pkt *pkt, const uint8_t *payload, size_t payload_bytes,
		      uint8_t *buf, size_t cap);

/* 10.50.0.12:49152 -> 10.50.0.11:4791, IP ID 0: the golden captures' addresses. */
extern const struct urnic_icrc_flow wire_test_flow;

/* NULL when a and b decode to the same fields (payload pointers are not compared,
 * payload_bytes is), else the name of the first field that differs. */
const char *wire_pkt_diff(const struct urnic_pkt *a, const struct urnic_pkt *b);

#endif
