/* SPDX-License-Identifier: MIT */
/*
 * cm_link.h - two CMs (src/engine/cm) joined by an in-memory channel, for the CM tests.
 *
 *   side 0: CM, GID ::ffff:10.0.0.1, CA GUID 0x...01 --- channel: delay, loss, duplicates,
 *   side 1: CM, GID ::ffff:10.0.0.2, CA GUID 0x...02     reordering, a drop filter ---
 *
 * MADs travel as the 256 bytes urnic_cm_out_pop hands out and arrive through
 * urnic_cm_input_bytes, each after the link's delay plus a random jitter (which reorders
 * them). A fake clock runs the whole: link_run() delivers what is due, ticks each CM at
 * its deadline and jumps the clock to the next thing to happen, so a 70-second CM
 * timeout takes no wall time. Every event is counted and passed to the side's handler,
 * which may call back into its CM. Faults come from a fixed-seed PRNG. A test is one
 * thread.
 */
#ifndef URNIC_TESTS_ENGINE_CM_LINK_H
#define URNIC_TESTS_ENGINE_CM_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include "check.h"
#include "engine/cm/cm.h"

enum {
	LINK_MAX_FLIGHT = 1 << 16,
	LINK_LOG = 64, /* the last events of a side, oldest first */
	LINK_MAX_ESTABLISHED = 4096,
};

struct cm_link;

/* Called for every event of a side, after it is counted and logged. */
typedef void (*link_handler)(struct cm_link *l, int side, const struct urnic_cm_event *ev);
/* true: drop this MAD, sent by side `from` (decoded). */
typedef bool (*link_filter)(struct cm_link *l, int from, const struct urnic_cm_mad *m);

struct link_flight {
	uint64_t at_ns;
	uint64_t seq;
	int to;
	uint8_t mad[URNIC_MAD_BYTES];
};

struct link_side {
	struct urnic_cm *cm;
	struct urnic_cm_addr addr;
	uint64_t guid;
	link_handler handler;
	unsigned events[URNIC_CM_EVENT_COUNT];
	uint64_t at_ns[URNIC_CM_EVENT_COUNT]; /* when the last event of each type came */
	struct urnic_cm_event log[LINK_LOG];
	unsigned nlog;	   /* events seen in all; log[] holds the last LINK_LOG */
	unsigned sent[32]; /* MADs sent, by attribute ID - 0x10 */
	uint32_t established[LINK_MAX_ESTABLISHED]; /* every connection that was */
	unsigned nestablished;
};

struct cm_link {
	struct link_side side[2];
	uint64_t now_ns;
	uint64_t delay_ns;  /* one way */
	uint64_t jitter_ns; /* added at random: reordering */
	unsigned loss_pct, dup_pct;
	link_filter filter;
	void *ctx; /* the test's */
	uint64_t rng;
	uint64_t seq;
	struct link_flight *flight;
	unsigned nflight;
	unsigned dropped, duplicated, delivered;
};

/* Both CMs from cfg (ca_guid, owner and seed set per side), channel without faults,
 * 10 us one way. */
void link_init(struct cm_link *l, const struct urnic_cm_config *cfg, uint64_t seed);
/* Destroys both CMs; they must hold no connection by then. */
void link_fini(struct cm_link *l);
/* The defaults of the tests: small queues grow nothing; see link.c. */
void link_config(struct urnic_cm_config *cfg);

/* Runs the link until nothing is left to happen before until_ns; the clock ends there. */
void link_run(struct cm_link *l, uint64_t until_ns);
/* Moves what the CMs queued onto the channel and hands their events out (after an action
 * a test calls directly). */
void link_pump(struct cm_link *l);

/* A REQ as rdma_cm sends one from side `from` to the other side: RC, rdma_cm's timeouts
 * and retries, service ID of port in the TCP port space. */
void link_connect_param(const struct cm_link *l, int from, uint16_t port, uint32_t qpn,
			uint32_t psn, struct urnic_cm_connect_param *p);
uint64_t link_service(uint16_t port);

/* A handler that answers as a plain rdma_cm program does: accept every connect request
 * (QPN 0x200 + n, PSN from the comm ID), answer SIDR_REQs (QPN 0x300, Q_Key 0x11111111)
 * and forget them, establish on the REP, send the DREP for a DREQ, destroy on
 * TIMEWAIT_EXIT, REJECTED, UNREACHABLE and a SIDR answer. */
void link_auto(struct cm_link *l, int side, const struct urnic_cm_event *ev);

/* Disconnects every connection of the side that is still ESTABLISHED. */
void link_disconnect_all(struct cm_link *l, int side);

/* The side's last event of type t (NULL: none logged). */
const struct urnic_cm_event *link_last(const struct cm_link *l, int side,
				       enum urnic_cm_event_type t);
/* The connection's state, or -1 when the handle is gone. */
int link_state(const struct cm_link *l, int side, uint32_t conn);
/* Checks no state change fell outside the table and no MAD failed to encode. */
void link_check_clean(const struct cm_link *l);

#endif
