/* SPDX-License-Identifier: MIT */
/*
 * reps.h - which entropy value (the UDP source port, so the ECMP path) each packet of a
 * UET context takes: recycled entropy packet spraying (REPS: Bonato et al., "REPS:
 * Recycled Entropy Packet Spraying for Adaptive Load Balancing and Failure Mitigation",
 * 2024), sans I/O.
 *
 * The entropy values of packets that arrived unmarked come back with their ACK and are
 * used again, each once; a new packet takes a recycled value when there is one and a
 * random one (exploration) otherwise. Paths that drop or mark return fewer of their
 * values, so they carry less; a dead path returns none and, once the first window has
 * been explored, takes only what exploration sends it. After a failure (a timeout, or a
 * loss when the caller says so) the context freezes for a while: it explores no more and
 * reuses its cached values without using them up, so a failed path is not tried again
 * at random.
 *
 * Out of scope: detecting failures (pds.h's timers do), congestion control.
 */
#ifndef URNIC_ENGINE_UET_REPS_H
#define URNIC_ENGINE_UET_REPS_H

#include <stdbool.h>
#include <stdint.h>

enum {
	/* Recycled values kept: at least the packets one ACK reports (pds.h: 16 by
	 * default, more when ACKs are lost), so that a steady stream explores little. */
	URNIC_REPS_SLOTS = 64,
};

struct urnic_reps_stats {
	uint64_t recycled; /* sends on a value an ACK returned */
	uint64_t explored; /* sends on a random value */
	uint64_t frozen;   /* sends on a cached value while frozen */
	uint64_t returned; /* values ACKs returned unmarked */
	uint64_t marked;   /* values ACKs returned ECN-marked: not reused */
	uint64_t freezes;
};

struct urnic_reps {
	uint16_t ev[URNIC_REPS_SLOTS];
	uint64_t valid;	 /* slot i holds a value returned and not used since */
	uint64_t filled; /* slot i holds a value returned once */
	uint32_t head;	 /* the next slot written */
	uint32_t next;	 /* where the next read looks first */
	uint32_t explore_left;
	uint64_t frozen_until_ns;
	struct urnic_reps_stats st;
};

/* explore_first: packets sent on random values before any recycling (a window's worth,
 * so that the first ACKs find paths to return). */
void urnic_reps_init(struct urnic_reps *r, uint32_t explore_first);
/* The entropy value for the next packet (new or resent); rnd is a random 64-bit value. */
uint16_t urnic_reps_next(struct urnic_reps *r, uint64_t rnd, uint64_t now);
/* An ACK reported the packet sent on ev as arrived; marked: the ACK carried M. */
void urnic_reps_delivered(struct urnic_reps *r, uint16_t ev, bool marked);
/* A path failed: freeze until now + freeze_ns. */
void urnic_reps_failure(struct urnic_reps *r, uint64_t now, uint64_t freeze_ns);

#endif
