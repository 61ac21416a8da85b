/* SPDX-License-Identifier: MIT */
/*
 * test_crc_copy.c - every implementation of urnic_crc32_copy() (crc_copy.h) the CPU runs,
 * and the CRC-only function urnic_crc32() uses beside it, returns what ISA-L's
 * crc32_gzip_refl() returns, the copy leaving dst equal to src and writing not one byte
 * around it: at every length to 2100 (each fold constant and each tail path of the 128-,
 * 256- and 512-bit loops), at random lengths to 70000, at every pair of src/dst
 * misalignments mod 64, from random initial CRCs, and when a buffer is fed in pieces (the
 * CRC chains, as ISA-L's does). Differential against ISA-L, which is itself checked
 * against the CRC-32 check value; the golden packets' ICRCs through every implementation
 * are in test_golden.c.
 */
#include <stdio.h>
#include <string.h>

#include <isa-l/crc.h>

#include "check.h"
#include "wire/crc_copy.h"

#define MAX_BYTES 70000
#define GUARD 128 /* bytes either side of dst that must keep their pattern */
#define SLACK 64  /* room for the misalignments */
#define BUF_BYTES (GUARD + SLACK + MAX_BYTES + GUARD)

static uint8_t src_buf[BUF_BYTES], dst_buf[BUF_BYTES], pattern[BUF_BYTES];
static uint64_t rng_state = 0x9e3779b97f4a7c15u;

/* xorshift64: deterministic, so a failure repeats. */
static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static size_t rnd_below(size_t n)
{
	return (size_t)(rnd() % n);
}

static void fill_random(uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)rnd();
}

/* The implementation under test, its CRC-only twin, and its name for the messages. */
struct impl {
	urnic_crc32_copy_fn *fn;
	urnic_crc32_fn *crc;
	const char *name;
};

/*
 * One call of im over len bytes at src_buf + GUARD + src_off into dst_buf + GUARD +
 * dst_off (a pattern everywhere before the call), checked against ISA-L and memcmp, with
 * dst_buf outside the copy still equal to the pattern; and one of its CRC-only twin.
 */
static void check_one(const struct impl *im, size_t len, size_t src_off, size_t dst_off,
		      uint32_t crc)
{
	const uint8_t *src = src_buf + GUARD + src_off;
	uint32_t want = crc32_gzip_refl(crc, src, len), got, got_crc;
	size_t at = GUARD + dst_off;

	memcpy(dst_buf, pattern, sizeof(dst_buf));
	got = im->fn(crc, dst_buf + at, src, len);
	got_crc = im->crc(crc, src, len);
	if (got != want || got_crc != want) {
		fprintf(stderr,
			"%s: len %zu src+%zu dst+%zu crc 0x%08x: copy 0x%08x, CRC-only 0x%08x, "
			"ISA-L 0x%08x\n",
			im->name, len, src_off, dst_off, crc, got, got_crc, want);
		CHECK(0);
	}
	CHECK(memcmp(dst_buf + at, src, len) == 0);
	CHECK(memcmp(dst_buf, pattern, at) == 0);
	CHECK(memcmp(dst_buf + at + len, pattern + at + len, sizeof(dst_buf) - at - len) == 0);
}

static void for_each_impl(void (*test)(const struct impl *))
{
	for (int i = 0; i < URNIC_CRC_COPY_IMPLS; i++) {
		struct impl im = {
			.fn = urnic_crc32_copy_get((enum urnic_crc_copy_impl)i),
			.crc = urnic_crc32_get((enum urnic_crc_copy_impl)i),
			.name = urnic_crc32_copy_name((enum urnic_crc_copy_impl)i),
		};

		CHECK((im.fn == NULL) == (im.crc == NULL));
		if (!im.fn) {
			printf("# %s: not supported by this CPU, skipped\n", im.name);
			continue;
		}
		test(&im);
	}
}

static void reference_gives_the_crc32_check_value(void)
{
	/* The CRC-32/ISO-HDLC check value: CRC of "123456789" from 0. */
	CHECK_EQ(crc32_gzip_refl(0, (const unsigned char *)"123456789", 9), 0xcbf43926u);
	CHECK_EQ(urnic_crc32_copy(0, dst_buf, "123456789", 9), 0xcbf43926u);
	CHECK(memcmp(dst_buf, "123456789", 9) == 0);
	CHECK_EQ(urnic_crc32(0, "123456789", 9), 0xcbf43926u);
}

/* Past 2048 + 32: more than one turn of every wide loop, and every tail after each. */
static void every_length(const struct impl *im)
{
	for (size_t len = 0; len <= 2100; len++)
		check_one(im, len, len % 64, (len * 7 + 3) % 64, (uint32_t)rnd());
}

static void every_length_to_2100_matches_isal(void)
{
	for_each_impl(every_length);
}

static void random_lengths(const struct impl *im)
{
	for (int i = 0; i < 1500; i++) {
		size_t len = rnd_below(MAX_BYTES + 1);

		check_one(im, len, rnd_below(SLACK), rnd_below(SLACK), (uint32_t)rnd());
	}
	check_one(im, MAX_BYTES, SLACK - 1, SLACK - 1, 0);
}

static void random_lengths_to_70000_match_isal(void)
{
	for_each_impl(random_lengths);
}

static void every_misalignment(const struct impl *im)
{
	/* 1000 = 3 * 256 + 3 * 64 + 2 * 16 + 8 = 7 * 128 + 3 * 32 + 8: every loop and the
	 * tail run; 1264 = 9 * 128 + 3 * 32 + 16: the 256-bit code's 16-byte block too. */
	for (size_t s = 0; s < SLACK; s++)
		for (size_t d = 0; d < SLACK; d++) {
			check_one(im, 1000, s, d, (uint32_t)rnd());
			check_one(im, 1264, s, d, (uint32_t)rnd());
		}
}

static void every_src_dst_misalignment_matches_isal(void)
{
	for_each_impl(every_misalignment);
}

static void chained(const struct impl *im)
{
	static uint8_t whole[8192];

	for (int i = 0; i < 300; i++) {
		size_t len = rnd_below(sizeof(whole) + 1), done = 0;
		uint32_t seed = (uint32_t)rnd(), crc = seed, crc_only = seed;
		const uint8_t *src = src_buf + GUARD + rnd_below(SLACK);

		memset(whole, 0x5a, sizeof(whole));
		while (done < len) {
			/* Pieces of any size, empty ones included, many short of a vector loop. */
			size_t piece = rnd_below(rnd() & 1 ? 600 : len - done + 1);

			if (piece > len - done)
				piece = len - done;
			crc = im->fn(crc, whole + done, src + done, piece);
			crc_only = im->crc(crc_only, src + done, piece);
			done += piece;
		}
		CHECK_EQ(crc, crc32_gzip_refl(seed, src, len));
		CHECK_EQ(crc_only, crc);
		CHECK(memcmp(whole, src, len) == 0);
	}
}

static void chained_calls_give_the_crc_of_the_whole(void)
{
	for_each_impl(chained);
}

/* The dispatch takes the last implementation the CPU runs, for both functions. */
static void dispatched_calls_match_isal(void)
{
	int best = URNIC_CRC_COPY_IMPLS - 1;

	while (!urnic_crc32_copy_get((enum urnic_crc_copy_impl)best))
		best--;
	printf("# urnic_crc32_copy and urnic_crc32 use %s\n",
	       urnic_crc32_copy_name((enum urnic_crc_copy_impl)best));
	CHECK_EQ(urnic_crc32_copy_chosen(), best);
	CHECK(urnic_crc32_copy_get(URNIC_CRC_COPY_PORTABLE) != NULL);
	CHECK(urnic_crc32_copy_get(URNIC_CRC_COPY_IMPLS) == NULL);
	CHECK(urnic_crc32_get(URNIC_CRC_COPY_IMPLS) == NULL);
	CHECK(!strcmp(urnic_crc32_copy_name(URNIC_CRC_COPY_IMPLS), "?"));
	for (size_t len = 0; len < 5000; len += 61) {
		const uint8_t *src = src_buf + GUARD + len % 13;

		memset(dst_buf, 0, sizeof(dst_buf));
		CHECK_EQ(urnic_crc32_copy(~(uint32_t)len, dst_buf + 5, src, len),
			 crc32_gzip_refl(~(uint32_t)len, src, len));
		CHECK(memcmp(dst_buf + 5, src, len) == 0);
		CHECK_EQ(urnic_crc32(~(uint32_t)len, src, len),
			 crc32_gzip_refl(~(uint32_t)len, src, len));
	}
}

/* Only the 256-bit code has a CRC-only function of its own; the CPUs that have AVX-512
 * VPCLMULQDQ have AVX2 and run it too. */
static void crc_only_is_isal_but_for_vpclmul256(void)
{
	urnic_crc32_fn *isal = urnic_crc32_get(URNIC_CRC_COPY_PORTABLE);

	for (int i = 0; i < URNIC_CRC_COPY_IMPLS; i++) {
		urnic_crc32_fn *fn = urnic_crc32_get((enum urnic_crc_copy_impl)i);

		if (fn)
			CHECK((fn != isal) == (i == URNIC_CRC_COPY_VPCLMUL256));
	}
	if (urnic_crc32_get(URNIC_CRC_COPY_VPCLMUL))
		CHECK(urnic_crc32_get(URNIC_CRC_COPY_VPCLMUL256) != NULL);
}

int main(void)
{
	fill_random(src_buf, sizeof(src_buf));
	fill_random(pattern, sizeof(pattern));
	RUN(reference_gives_the_crc32_check_value);
	RUN(every_length_to_2100_matches_isal);
	RUN(random_lengths_to_70000_match_isal);
	RUN(every_src_dst_misalignment_matches_isal);
	RUN(chained_calls_give_the_crc_of_the_whole);
	RUN(dispatched_calls_match_isal);
	RUN(crc_only_is_isal_but_for_vpclmul256);
	return 0;
}
