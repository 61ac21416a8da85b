/* SPDX-License-Identifier: MIT */
/*
 * hostile.h - what the hostile-peer target (target.c) and attacker (attacker.c) agree on:
 * the memory regions the target registers, the bytes it fills them with, the checksum
 * it reports, and the sizes of things. The command protocol between them is described
 * at the top of target.c.
 */
#ifndef URNIC_TESTS_HOSTILE_H
#define URNIC_TESTS_HOSTILE_H

#include <stddef.h>
#include <stdint.h>

/* The target's memory regions and the remote rights each one grants (IBTA 10.6.3.2). */
enum hostile_region {
	HR_RW,	   /* remote write (and local write) */
	HR_RO,	   /* remote read only */
	HR_ATOMIC, /* remote atomic (and local write) */
	HR_NONE,   /* no remote right at all; the source of the target's own SENDs */
	HR_RECV,   /* local write only: the receive buffers */
	/* Remote atomic, registered with ibv_reg_mr_iova at an 8-byte aligned IOVA whose
	 * memory is not 8-byte aligned (the iova and the address differ by 4). */
	HR_ATOMIC_ODD,
	HR_COUNT
};

static const char *const hostile_region_names[HR_COUNT] = { "rw",   "ro",   "atomic",
							    "none", "recv", "atomic_odd" };

#define HOSTILE_ODD_IOVA 0x10000ull /* region atomic_odd's IOVA */

/* Regions the target registers later (its `reg` command) follow the HR_COUNT above,
 * filled the same way with hostile_pattern(index, ...). */
enum { HOSTILE_MAX_REGIONS = HR_COUNT + 8 };

enum {
	HOSTILE_GUARD_BYTES = 256, /* checked bytes each side of a region, inside guard pages */
	HOSTILE_RW_BYTES = 8192,
	HOSTILE_RO_BYTES = 8192,
	HOSTILE_ATOMIC_BYTES = 64,
	HOSTILE_NONE_BYTES = 4096,
	HOSTILE_RECV_SLOT = 2048, /* one receive WQE's buffer */
	HOSTILE_MAX_QPS = 32,
	HOSTILE_MAX_RECV = 16,	     /* receive WQEs per QP */
	HOSTILE_PEER_QPN = 0x000abc, /* the attacker's QPN for target QP 0; QP i has +i */
	HOSTILE_ODD_SHIFT = 4,	     /* region atomic_odd: its memory starts 4 bytes past 8n */
	HOSTILE_SRQ_WR = 64,	     /* the SRQ's max_wr (target --srq) */
	HOSTILE_UD_GRH = 40,	     /* the GRH area in front of a UD receive (IBTA 11.4.1.2) */
};

/* The Q_Key of the target's UD QP i (target --ud): each its own, so that a datagram
 * carrying one QP's Q_Key is refused by the others (IBTA 10.2.4). */
static inline uint32_t hostile_qkey(unsigned i)
{
	return 0x11110000u + i;
}

/* Byte `off` of region r's body (kind 0) or of its guard bytes (kind 1): what the target
 * writes at start, so the attacker can predict every byte it reads. */
static inline uint8_t hostile_pattern(unsigned r, unsigned kind, uint64_t off)
{
	uint64_t x = (off + 1) * 0x9e3779b97f4a7c15ull ^ ((uint64_t)(r + 1) << 40) ^
		     ((uint64_t)kind << 56);

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 32;
	return (uint8_t)x;
}

/* FNV-1a 64: the checksum the target reports for guards and bodies. */
static inline uint64_t hostile_fnv(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

#endif
