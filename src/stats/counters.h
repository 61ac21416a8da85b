/* SPDX-License-Identifier: MIT */
/*
 * counters.h - the names of a device's counters (counters.def) and the per-QP share of
 * them. Every layer that counts (the engine's receive checks, the transports' drops)
 * indexes the same array, so this sits below all of them; the array itself belongs to
 * the engine (struct urnic_engine_stats) and is handed down as an argument.
 */
#ifndef URNIC_STATS_COUNTERS_H
#define URNIC_STATS_COUNTERS_H

#include <stdint.h>

enum urnic_counter {
#define URNIC_COUNTER(name, desc) URNIC_CTR_##name,
#include "stats/counters.def"
#undef URNIC_COUNTER
	URNIC_CTR_COUNT
};

extern const char *const urnic_counter_names[URNIC_CTR_COUNT];
extern const char *const urnic_counter_descs[URNIC_CTR_COUNT];

/* One QP's share of the device counters: what happened to the packets addressed to it
 * and during its passes. Slots are indexed like the QP table (the QPN's index bits);
 * the device may move the table into shared memory so that `urnic counters --qp` reads
 * it live (src/dev/counters_shm.h). qpn 0: slot unused. */
struct urnic_qp_counters {
	uint32_t qpn;
	uint8_t type;  /* enum urnic_qp_type */
	uint8_t state; /* enum urnic_qp_state, as last changed */
	uint16_t reserved;
	uint64_t c[URNIC_CTR_COUNT];
};

#endif
