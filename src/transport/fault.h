/* SPDX-License-Identifier: MIT */
/*
 * fault.h - a faulty wire inside the transport: drops, reorders, duplicates, delays and
 * corrupts received packets, as a bad network would, between real processes.
 *
 * Enabled by URNIC_FAULT or a `fault` line in the config file (README "Configuration"),
 * e.g. "drop=1%,reorder=5%,dup=1%,delay=2ms,corrupt=0.5%,seed=7". It sits on the
 * receive path, after the datagram was cut into packets and steered to this process,
 * before the engine: a corrupted byte is flipped after the sender computed the ICRC,
 * so the engine must fail the ICRC (or the header check) and drop the packet. It sees
 * bytes only, nothing of RoCE. Every decision comes from a seeded xorshift generator,
 * drawn in packet order: a seed reproduces the same decisions for the same packets.
 * Held packets (delayed, reordered, duplicate copies) live in fixed pools allocated
 * once; nothing is allocated per packet. When a pool is full the packet passes
 * unharmed and fault_overflow counts it.
 * Out of scope: the send path (a fault on one side's receive is a fault on the wire).
 * Context: the device's engine thread, under the device lock. No system calls: time
 * comes in as now_ns.
 */
#ifndef URNIC_TRANSPORT_FAULT_H
#define URNIC_TRANSPORT_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#include <stddef.h>

#include "stats/counters.h"

enum {
	URNIC_FAULT_PPM = 1000000,	/* probabilities are in parts per million */
	URNIC_FAULT_PKT_MAX = 4608,	/* largest packet held: 4096 B MTU + headers */
	URNIC_FAULT_REORDER_SLOTS = 64, /* packets held back behind later ones */
	URNIC_FAULT_DELAY_SLOTS = 1024, /* default delay line length */
};

struct urnic_fault_conf {
	uint32_t drop_ppm;
	uint32_t corrupt_ppm;
	uint32_t dup_ppm;
	uint32_t reorder_ppm;
	uint32_t delay_ppm;	 /* share of packets delayed (default: all, when delay_ns) */
	uint64_t delay_ns;	 /* how long a delayed packet is held */
	uint32_t reorder_depth;	 /* a held-back packet lets 1..depth later ones pass */
	uint64_t reorder_max_ns; /* ... or this long, whichever comes first */
	uint32_t delay_slots;
	uint64_t seed;
	bool seeded;
};

/* A held packet; buf points into the pool's storage. */
struct urnic_fault_held {
	uint64_t due_ns;
	uint32_t after_pkts; /* reorder: released after this many later packets */
	uint32_t len;
	uint16_t sport;
	uint8_t src[16];
	uint8_t *buf;
};

/* Hands one packet on (to the engine). The buffer is only valid during the call. */
typedef void (*urnic_fault_deliver_fn)(void *ctx, const uint8_t *src, uint16_t sport,
				       const uint8_t *buf, uint32_t len);

struct urnic_fault {
	struct urnic_fault_conf conf;
	uint64_t rng;
	uint64_t *counters; /* the engine's (URNIC_CTR_fault_*) */
	/* The delay line: a FIFO ring (every delayed packet waits the same delay_ns, so
	 * the release order is the arrival order). */
	struct urnic_fault_held *delay;
	uint32_t delay_head, delay_count;
	/* Reordered packets and duplicate copies: a small unordered set. */
	struct urnic_fault_held reorder[URNIC_FAULT_REORDER_SLOTS];
	uint32_t nreorder;
	uint8_t *storage;
};

/* Parses "key=value,..." (keys: drop corrupt dup reorder delay_p as a percentage
 * "1%", "0.5%" or a fraction "0.01"; delay and reorder_max as "2ms", "500us", "1s";
 * reorder_depth, delay_slots and seed as integers) into c, which it first resets to
 * the defaults. Returns 0 or -EINVAL (c is then unspecified). */
int urnic_fault_parse(struct urnic_fault_conf *c, const char *spec);

/* True when the configuration does anything. */
bool urnic_fault_active(const struct urnic_fault_conf *c);

/* Formats c as the spec it is equivalent to (for logs). */
void urnic_fault_format(const struct urnic_fault_conf *c, char *out, size_t size);

/* Allocates the pools. seed is used when c has none. Returns 0 or -ENOMEM. */
int urnic_fault_init(struct urnic_fault *f, const struct urnic_fault_conf *c, uint64_t seed,
		     uint64_t *counters);
/* Discards the held packets and frees the pools. */
void urnic_fault_fini(struct urnic_fault *f);

/* One received packet: dropped, corrupted in place (buf is the caller's and writable),
 * duplicated, held back, delayed or passed to deliver now. */
void urnic_fault_rx(struct urnic_fault *f, uint64_t now_ns, const uint8_t *src, uint16_t sport,
		    uint8_t *buf, uint32_t len, urnic_fault_deliver_fn deliver, void *ctx);

/* Delivers the held packets that are due at now_ns. Returns how many. */
uint32_t urnic_fault_release(struct urnic_fault *f, uint64_t now_ns, urnic_fault_deliver_fn deliver,
			     void *ctx);

/* When the next held packet is due (0: none held). */
uint64_t urnic_fault_deadline(const struct urnic_fault *f);

#endif
