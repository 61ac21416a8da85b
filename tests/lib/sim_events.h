/* SPDX-License-Identifier: MIT */
/*
 * sim_events.h - a time-ordered event queue for the tests' discrete-event simulations
 * (tests/engine/test_pds.c, tests/cc/test_nscc.c): a binary heap of fixed-size events
 * in storage the caller gives, each event starting with struct sim_key. Events due at
 * the same time come out in the order they went in, so a run is the same every time.
 */
#ifndef URNIC_TESTS_SIM_EVENTS_H
#define URNIC_TESTS_SIM_EVENTS_H

#include <stdint.h>
#include <string.h>

#include "check.h"

enum { SIM_EVENT_MAX_BYTES = 256 };

/* The first member of every event. */
struct sim_key {
	uint64_t at;  /* when it happens (ns) */
	uint64_t seq; /* set by push: ties broken by it */
};

struct sim_events {
	unsigned char *buf;
	size_t size; /* of one event */
	unsigned n, cap;
	uint64_t seq;
};

static inline void sim_events_init(struct sim_events *q, void *buf, size_t size, unsigned cap)
{
	CHECK(size >= sizeof(struct sim_key) && size <= SIM_EVENT_MAX_BYTES);
	*q = (struct sim_events){ .buf = buf, .size = size, .cap = cap };
}

static inline struct sim_key *sim_events_at(const struct sim_events *q, unsigned i)
{
	return (struct sim_key *)(void *)(q->buf + (size_t)i * q->size);
}

static inline int sim_events_earlier(const struct sim_events *q, unsigned a, unsigned b)
{
	const struct sim_key *x = sim_events_at(q, a), *y = sim_events_at(q, b);

	return x->at < y->at || (x->at == y->at && x->seq < y->seq);
}

static inline void sim_events_swap(struct sim_events *q, unsigned a, unsigned b)
{
	unsigned char t[SIM_EVENT_MAX_BYTES];

	memcpy(t, sim_events_at(q, a), q->size);
	memcpy(sim_events_at(q, a), sim_events_at(q, b), q->size);
	memcpy(sim_events_at(q, b), t, q->size);
}

/* A copy of ev goes in; its key's seq is set. */
static inline void sim_events_push(struct sim_events *q, const void *ev)
{
	unsigned i = q->n++;

	CHECK(q->n <= q->cap);
	memcpy(sim_events_at(q, i), ev, q->size);
	sim_events_at(q, i)->seq = q->seq++;
	while (i && sim_events_earlier(q, i, (i - 1) / 2)) {
		sim_events_swap(q, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

/* The earliest event, or NULL when there is none; valid until the next push or pop. */
static inline const struct sim_key *sim_events_peek(const struct sim_events *q)
{
	return q->n ? sim_events_at(q, 0) : NULL;
}

/* Takes the earliest event out into out (q not empty). */
static inline void sim_events_pop(struct sim_events *q, void *out)
{
	unsigned i = 0;

	CHECK(q->n > 0);
	memcpy(out, sim_events_at(q, 0), q->size);
	if (--q->n)
		memcpy(sim_events_at(q, 0), sim_events_at(q, q->n), q->size);
	for (;;) {
		unsigned l = 2 * i + 1, r = l + 1, m = i;

		if (l < q->n && sim_events_earlier(q, l, m))
			m = l;
		if (r < q->n && sim_events_earlier(q, r, m))
			m = r;
		if (m == i)
			return;
		sim_events_swap(q, i, m);
		i = m;
	}
}

#endif
