/* SPDX-License-Identifier: MIT */
/*
 * spin.h - how long the engine thread polls on after its last work (pipeline.c):
 * URNIC_SPIN_US, grown to cover the gaps of a request/response peer.
 *
 * After light traffic the engine thread polls for a window before it sleeps, so that a
 * request/response peer (the READ responder of ib_read_lat, an event-driven
 * ibv_rc_pingpong) finds it awake instead of paying a wake-up on the other vCPU (~30 us
 * here). With a fixed window a gap a little longer than it was a trap: the request found
 * the thread asleep, the wake-up made the round trip longer, and the next gap longer
 * still, for the rest of the run (ib_read_lat -e: 17-19 us, or 36-79 us in some runs;
 * with a 10 us window always ~57). Woken by a packet after a short sleep, the thread
 * polls that much longer the next time, up to URNIC_SPIN_MAX_NS; any other wake-up, or
 * a sleep of URNIC_SPIN_MAX_NS or more, brings the window back to the configured one.
 */
#ifndef URNIC_DEV_SPIN_H
#define URNIC_DEV_SPIN_H

#include <stdint.h>

enum { URNIC_SPIN_MAX_NS = 250000 };

enum urnic_spin_wake {
	URNIC_WOKE_PACKET,   /* a packet, after light traffic */
	URNIC_WOKE_DOORBELL, /* an application's kick: says nothing about the traffic */
	URNIC_WOKE_OTHER,    /* a timer, a forwarded batch, heavy traffic before */
};

/* The next window after a sleep of slept ns that ended with how; spin is the current
 * window, base the configured one (0: never poll on). */
static inline uint64_t urnic_spin_next(uint64_t spin, uint64_t base, uint64_t slept,
				       enum urnic_spin_wake how)
{
	uint64_t grown = spin + slept + slept / 2;

	if (!base || how == URNIC_WOKE_OTHER ||
	    (how == URNIC_WOKE_PACKET && slept >= URNIC_SPIN_MAX_NS))
		return base;
	if (how == URNIC_WOKE_DOORBELL)
		return spin;
	return grown < URNIC_SPIN_MAX_NS ? grown : URNIC_SPIN_MAX_NS;
}

#endif
