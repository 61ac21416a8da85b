/* SPDX-License-Identifier: MIT */
/*
 * psn.h - 24-bit packet sequence number arithmetic.
 *
 * IBTA 9.7.1: PSNs are 24 bits and wrap. Two PSNs are compared by the sign of their
 * 24-bit difference (serial number arithmetic, half the space either way), which is how
 * the responder tells a duplicate (behind) from a future packet (ahead), IBTA 9.7.5.1.
 * Every PSN comparison in urnic goes through these helpers.
 */
#ifndef URNIC_WIRE_PSN_H
#define URNIC_WIRE_PSN_H

#include <stdbool.h>
#include <stdint.h>

#define URNIC_PSN_MASK 0xffffffu

static inline uint32_t urnic_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & URNIC_PSN_MASK;
}

/* Signed distance a - b in the 24-bit space: > 0 when a is after b. */
static inline int32_t urnic_psn_diff(uint32_t a, uint32_t b)
{
	uint32_t d = (a - b) & URNIC_PSN_MASK;

	return d & 0x800000u ? (int32_t)d - 0x1000000 : (int32_t)d;
}

static inline bool urnic_psn_before(uint32_t a, uint32_t b)
{
	return urnic_psn_diff(a, b) < 0;
}

static inline bool urnic_psn_after(uint32_t a, uint32_t b)
{
	return urnic_psn_diff(a, b) > 0;
}

#endif
