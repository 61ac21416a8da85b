/* SPDX-License-Identifier: MIT */
/*
 * pattern.h - what the demo's data should be: a per-message byte pattern that the
 * receiving side regenerates and compares byte for byte, and the sequences of values
 * the atomic runs produce. Both hosts compute the same expectations from the same
 * seeds, so neither has to trust the other's report.
 */
#ifndef URNIC_DEMO_PATTERN_H
#define URNIC_DEMO_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The seed of message `index` of run `run` (an operation and phase, see demo.h).
 * Distinct for every (run, index), so a stale or misplaced message never passes. */
uint64_t demo_pattern_seed(uint32_t run, uint64_t index);

void demo_pattern_fill(void *buf, size_t len, uint64_t seed);

/* Returns len if buf holds the pattern of `seed`, else the offset of the first wrong
 * byte. */
size_t demo_pattern_check(const void *buf, size_t len, uint64_t seed);

/* The first 8 bytes of the pattern of `seed`, as demo_pattern_fill() stores them. */
uint64_t demo_pattern_word(uint64_t seed);

/* The atomic runs. FETCH_ADD: the target starts just below 2^32, so the sum carries
 * into the upper half, and op i adds 2i + 1. CMP_SWAP: a chain of values; op i compares
 * with the current value and swaps in a new one, except every 8th op, which compares
 * with a wrong value on purpose and must leave the target alone. Either op returns
 * the target's value before it. */
uint64_t demo_atomic_start(bool cas, uint32_t run);

/* Op i's operands for a target that holds `current`. Returns the target's value after
 * the op. */
uint64_t demo_atomic_step(bool cas, uint32_t run, uint64_t i, uint64_t current,
			  uint64_t *compare_add, uint64_t *swap);

#endif
