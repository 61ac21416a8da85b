/* SPDX-License-Identifier: MIT */
/*
 * mutator.c - a libFuzzer custom mutator that knows the record format of harness.h.
 *
 * libFuzzer's byte mutations rarely put a whole record between two others: a seed's
 * WRITE FIRST, MIDDLE, LAST would need an action record inserted exactly at a record
 * boundary to become FIRST, deregister, MIDDLE, LAST. So a quarter of the mutations
 * work on records instead: an action inserted at a boundary (arguments small, so they
 * name existing regions and slots), an action's code or an argument changed, a record
 * duplicated, deleted or swapped with the next; the rest are libFuzzer's own. Only the
 * libFuzzer binaries link this file: the replay driver runs inputs as they are.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

enum { MAX_BOUNDS = FUZZ_MAX_RECORDS + 1, ACTION_MAX = 8 };

static uint32_t rng_next(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

/* The offsets where records start, and the end of the last whole one. */
static size_t bounds(const uint8_t *data, size_t size, size_t *at)
{
	size_t n = 0, off = 0;

	while (n < MAX_BOUNDS - 1 && size - off >= FUZZ_REC_HDR) {
		size_t len = (size_t)data[off + 1] << 8 | data[off + 2];

		if (len > size - off - FUZZ_REC_HDR)
			break;
		at[n++] = off;
		off += FUZZ_REC_HDR + len;
	}
	at[n] = off;
	return n;
}

/* Opens len bytes at off (room checked by the caller). */
static void open_gap(uint8_t *data, size_t size, size_t off, size_t len)
{
	memmove(data + off + len, data + off, size - off);
}

static size_t insert_action(uint8_t *data, size_t size, size_t max_size, size_t off, uint32_t *s)
{
	size_t nargs = 1 + rng_next(s) % (ACTION_MAX - 1);
	size_t len = FUZZ_REC_HDR + 1 + nargs;

	if (size + len > max_size)
		return 0;
	open_gap(data, size, off, len);
	data[off] =
		(uint8_t)(FUZZ_CTL_ACTION |
			  (rng_next(s) & (FUZZ_CTL_ACT_OTHER | FUZZ_CTL_NO_PASS | FUZZ_CTL_POST)));
	data[off + 1] = 0;
	data[off + 2] = (uint8_t)(1 + nargs);
	data[off + 3] = (uint8_t)(rng_next(s) % FA_COUNT);
	for (size_t i = 0; i < nargs; i++)
		data[off + 4 + i] = (uint8_t)(rng_next(s) % 3 ? rng_next(s) % 16 : rng_next(s));
	return size + len;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	static size_t at[MAX_BOUNDS];
	uint32_t s = seed;
	size_t n, k, len, whole;

	if (rng_next(&s) % 4 != 0)
		return LLVMFuzzerMutate(data, size, max_size);
	n = bounds(data, size, at);
	whole = at[n];
	k = n ? rng_next(&s) % n : 0;
	switch (rng_next(&s) % 5) {
	case 0: /* an action before record k (or at the end) */
		len = insert_action(data, size, max_size, n ? at[rng_next(&s) % (n + 1)] : whole,
				    &s);
		return len ? len : LLVMFuzzerMutate(data, size, max_size);
	case 1: /* record k again, right after itself */
		if (!n)
			break;
		len = at[k + 1] - at[k];
		if (size + len > max_size)
			break;
		open_gap(data, size, at[k + 1], len);
		memcpy(data + at[k + 1], data + at[k], len);
		return size + len;
	case 2: /* record k gone */
		if (!n)
			break;
		len = at[k + 1] - at[k];
		memmove(data + at[k], data + at[k + 1], size - at[k + 1]);
		return size - len;
	case 3: /* an action record's action or one of its arguments changed */
		for (size_t i = 0; i < n; i++) {
			size_t r = at[(k + i) % n], alen = at[(k + i) % n + 1] - r - FUZZ_REC_HDR;
			uint8_t *b;
			size_t j;

			if ((data[r] & FUZZ_CTL_QP_MASK) != FUZZ_CTL_ACTION || !alen)
				continue;
			j = rng_next(&s) % (alen < ACTION_MAX ? alen : ACTION_MAX);
			b = data + r + FUZZ_REC_HDR + j;
			/* Arguments: a small value (a region, a slot), one step from the old
			 * (a count such as FA_CREATE's churn), or any. */
			switch (j == 0 ? 3 : rng_next(&s) % 3) {
			case 0:
				*b = (uint8_t)(rng_next(&s) % 16);
				break;
			case 1:
				*b = (uint8_t)(*b + (rng_next(&s) & 1 ? 1 : -1));
				break;
			case 2:
				*b = (uint8_t)rng_next(&s);
				break;
			default:
				*b = (uint8_t)(rng_next(&s) % FA_COUNT);
				break;
			}
			return size;
		}
		break;
	default: /* records k and k + 1 swapped */
		if (k + 1 >= n)
			break;
		{
			static uint8_t tmp[FUZZ_REC_HDR + 0xffff];
			size_t a = at[k + 1] - at[k], b = at[k + 2] - at[k + 1];

			memcpy(tmp, data + at[k], a);
			memmove(data + at[k], data + at[k + 1], b);
			memcpy(data + at[k] + b, tmp, a);
			return size;
		}
	}
	return LLVMFuzzerMutate(data, size, max_size);
}
