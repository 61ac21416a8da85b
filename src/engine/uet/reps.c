/* SPDX-License-Identifier: MIT */
/*
 * reps.c - recycled entropy packet spraying (reps.h): a ring of the values ACKs returned,
 * each valid for one use, read round-robin; random values when it is empty; reuse
 * without using up while frozen. Context: the engine thread that owns the context.
 */
#include <string.h>

#include "engine/uet/reps.h"

void urnic_reps_init(struct urnic_reps *r, uint32_t explore_first)
{
	memset(r, 0, sizeof(*r));
	r->explore_left = explore_first;
}

static bool frozen(const struct urnic_reps *r, uint64_t now)
{
	return now < r->frozen_until_ns;
}

/* The first slot at or after r->next whose bit is set in mask; URNIC_REPS_SLOTS if none. */
static uint32_t find(const struct urnic_reps *r, uint64_t mask)
{
	uint64_t rot;

	if (!mask)
		return URNIC_REPS_SLOTS;
	rot = r->next ? mask >> r->next | mask << (URNIC_REPS_SLOTS - r->next) : mask;
	return (r->next + (uint32_t)__builtin_ctzll(rot)) % URNIC_REPS_SLOTS;
}

uint16_t urnic_reps_next(struct urnic_reps *r, uint64_t rnd, uint64_t now)
{
	bool cold = frozen(r, now);
	uint32_t i;

	if (r->explore_left && !cold) {
		r->explore_left--;
		r->st.explored++;
		return (uint16_t)rnd;
	}
	i = find(r, r->valid);
	if (i == URNIC_REPS_SLOTS && cold)
		i = find(r, r->filled); /* frozen: a known good value, used or not */
	if (i == URNIC_REPS_SLOTS) {
		r->st.explored++;
		return (uint16_t)rnd;
	}
	r->next = (i + 1) % URNIC_REPS_SLOTS;
	if (cold) {
		r->st.frozen++;
	} else {
		r->valid &= ~(1ull << i);
		r->st.recycled++;
	}
	return r->ev[i];
}

void urnic_reps_delivered(struct urnic_reps *r, uint16_t ev, bool marked)
{
	if (marked) {
		r->st.marked++;
		return;
	}
	r->ev[r->head] = ev;
	r->valid |= 1ull << r->head;
	r->filled |= 1ull << r->head;
	r->head = (r->head + 1) % URNIC_REPS_SLOTS;
	r->st.returned++;
}

void urnic_reps_failure(struct urnic_reps *r, uint64_t now, uint64_t freeze_ns)
{
	r->frozen_until_ns = now + freeze_ns;
	r->st.freezes++;
}
