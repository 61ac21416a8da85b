/* SPDX-License-Identifier: MIT */
/*
 * slots.h - sets of QP table slots, a bit per slot (struct urnic_qp_table), for the
 * engine core's files only. The scans go through the words that hold slots in use, a
 * word at a time, lowest slot first (the table's order), each word as it was when its
 * turn came: a bit set behind the scan (a QP woken while another is served) is seen by
 * the next pass. Slots 0 and 1 are QP0/QP1, never in the table.
 */
#ifndef URNIC_ENGINE_SLOTS_H
#define URNIC_ENGINE_SLOTS_H

#include "engine/core.h"

static inline void slot_set(uint64_t *bits, uint32_t i)
{
	bits[i / 64] |= 1ull << (i % 64);
}

static inline void slot_clear(uint64_t *bits, uint32_t i)
{
	bits[i / 64] &= ~(1ull << (i % 64));
}

static inline bool slot_test(const uint64_t *bits, uint32_t i)
{
	return bits[i / 64] >> (i % 64) & 1;
}

static inline uint32_t slot_index(uint32_t qpn)
{
	return qpn & (URNIC_MAX_QP - 1);
}

/* Words of a bit per slot that hold the table's slots in use. */
static inline uint32_t slot_words(const struct urnic_qp_table *t)
{
	return (t->end + 63) / 64;
}

/* The slot of the lowest bit of a non-zero word w. */
static inline uint32_t slot_of(uint32_t w, uint64_t bits)
{
	return w * 64 + (uint32_t)__builtin_ctzll(bits);
}

/* Records the QP's state in its counters slot, for `urnic counters --qp`. */
static inline void slot_note_state(struct urnic_engine *e, const struct urnic_qp *qp)
{
	if (e->stats.qp)
		e->stats.qp[slot_index(qp->qpn)].state = (uint8_t)qp->state;
}

/* Moves the QP to error and flushes its work (error.c); fatal: it fell into error by
 * itself (IBV_EVENT_QP_FATAL), not by ibv_modify_qp. */
void urnic_engine_enter_error(struct urnic_engine *e, struct urnic_qp *qp, bool fatal);

#endif
