/* SPDX-License-Identifier: MIT */
/*
 * pattern.c - message patterns and atomic sequences. See pattern.h.
 *
 * A message is a Weyl sequence of 64-bit words (start + k * odd constant) from a start
 * that splitmix64 derives from the seed: one add per word, so filling and checking
 * cost far less than the transfer, and every word of every message differs.
 */
#include "pattern.h"

#include <string.h>

static const uint64_t weyl = 0x9e3779b97f4a7c15ull;

static uint64_t splitmix64(uint64_t x)
{
	x += weyl;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

uint64_t demo_pattern_seed(uint32_t run, uint64_t index)
{
	return ((uint64_t)run << 48) + index;
}

uint64_t demo_pattern_word(uint64_t seed)
{
	return splitmix64(seed);
}

void demo_pattern_fill(void *buf, size_t len, uint64_t seed)
{
	uint8_t *p = buf;
	uint64_t w = splitmix64(seed);
	size_t off;

	for (off = 0; off + 8 <= len; off += 8, w += weyl)
		memcpy(p + off, &w, 8);
	if (off < len)
		memcpy(p + off, &w, len - off);
}

size_t demo_pattern_check(const void *buf, size_t len, uint64_t seed)
{
	const uint8_t *p = buf;
	uint64_t w = splitmix64(seed);
	size_t off;

	for (off = 0; off + 8 <= len; off += 8, w += weyl) {
		uint64_t got;

		memcpy(&got, p + off, 8);
		if (got != w)
			break;
	}
	/* The word that differs (or the tail): find its first wrong byte. */
	for (size_t i = 0; off + i < len && i < 8; i++)
		if (p[off + i] != (uint8_t)(w >> (8 * i)))
			return off + i;
	return len;
}

enum {
	FADD_START = 0xfffffff0u,
	CAS_MISS_EVERY = 8,
};

uint64_t demo_atomic_start(bool cas, uint32_t run)
{
	return cas ? splitmix64(demo_pattern_seed(run, 0xffffffffull)) : FADD_START;
}

uint64_t demo_atomic_step(bool cas, uint32_t run, uint64_t i, uint64_t current,
			  uint64_t *compare_add, uint64_t *swap)
{
	if (!cas) {
		*compare_add = 2 * i + 1;
		*swap = 0;
		return current + *compare_add;
	}
	*swap = splitmix64(demo_pattern_seed(run, i));
	if (i % CAS_MISS_EVERY == CAS_MISS_EVERY - 1) {
		*compare_add = ~current;
		return current;
	}
	*compare_add = current;
	return *swap;
}
