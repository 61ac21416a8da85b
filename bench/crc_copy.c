/* SPDX-License-Identifier: MIT */
/*
 * crc_copy.c - what the ICRC send path pays per payload, hot in cache: a memcpy alone,
 * ISA-L's crc32_gzip_refl alone, the two one after the other (what the sender did), and
 * urnic_crc32_copy() (src/wire/crc_copy.h), as dispatched and in each implementation the
 * CPU runs; then the receive path's CRC alone: urnic_crc32() as dispatched, its 256-bit
 * code, and ISA-L's 128-bit AVX code crc32_gzip_refl_by8_02 (what ISA-L 2.30 runs on a CPU
 * with VPCLMULQDQ but no AVX-512; looked up with dlsym, left out if the library lacks it).
 * Per call, the median of the runs and the fastest run's rate:
 *
 *   bytes   what                           ns/call     GB/s best_GB/s
 *   4096    memcpy                            46.0     89.0      93.1
 *
 * The ways run in that order, so the SSE-encoded [pclmul] runs after ISA-L's AVX-512 code
 * has left the upper vector halves dirty, as it would on the send path (crc_copy.c).
 *
 * usage: urnic-bench-crc-copy [-n runs] [SIZE...]   (default sizes 4096 65536)
 *        urnic-bench-crc-copy -c   prints the path urnic chooses on this CPU (bench/run.sh)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dlfcn.h>
#include <isa-l/crc.h>

#include "wire/crc_copy.h"

#define BYTES_PER_RUN (256u << 20) /* each timed run moves this much: tens of ms */
#define SEED 0x12345678u
#define MAX_RUNS 99

/* One way of copying and checksumming; returns the CRC, or 0 for memcpy alone. */
struct way {
	char name[40];
	uint32_t (*fn)(const struct way *w, void *dst, const void *src, size_t len);
	urnic_crc32_copy_fn *impl;
	urnic_crc32_fn *crc;
};

#define MAX_WAYS (6 + 2 * URNIC_CRC_COPY_IMPLS)

/* Through volatile pointers, so nothing is hoisted out of the timing loop. */
static void *(*volatile copy)(void *, const void *, size_t) = memcpy;
static uint32_t (*volatile crc32)(uint32_t, const unsigned char *, uint64_t) = crc32_gzip_refl;
static urnic_crc32_copy_fn *volatile crc_copy = urnic_crc32_copy;
static urnic_crc32_fn *volatile crc_only = urnic_crc32;

static uint32_t do_memcpy(const struct way *w, void *dst, const void *src, size_t len)
{
	copy(dst, src, len);
	return 0;
}

static uint32_t do_crc(const struct way *w, void *dst, const void *src, size_t len)
{
	return crc32(SEED, src, len);
}

static uint32_t do_memcpy_crc(const struct way *w, void *dst, const void *src, size_t len)
{
	copy(dst, src, len);
	return crc32(SEED, src, len);
}

static uint32_t do_crc_copy(const struct way *w, void *dst, const void *src, size_t len)
{
	return crc_copy(SEED, dst, src, len);
}

/* One implementation, called through the pointer urnic_crc32_copy_get() gave. */
static uint32_t do_crc_copy_impl(const struct way *w, void *dst, const void *src, size_t len)
{
	return w->impl(SEED, dst, src, len);
}

static uint32_t do_crc_only(const struct way *w, void *dst, const void *src, size_t len)
{
	return crc_only(SEED, src, len);
}

/* A CRC-only function: urnic_crc32_get()'s, or ISA-L's by8_02 through the same type. */
static uint32_t do_crc_only_impl(const struct way *w, void *dst, const void *src, size_t len)
{
	return w->crc(SEED, src, len);
}

static uint32_t (*by8_02)(uint32_t, const unsigned char *, uint64_t);

static uint32_t crc_by8_02(uint32_t crc, const void *buf, size_t len)
{
	return by8_02(crc, buf, len);
}

/* After the fixed four: each copy implementation, urnic_crc32() and its implementations
 * of its own (those that are not ISA-L's), and ISA-L's by8_02. Returns how many ways. */
static size_t add_ways(struct way *ways, size_t nways)
{
	urnic_crc32_fn *isal = urnic_crc32_get(URNIC_CRC_COPY_PORTABLE);

	for (int i = 0; i < URNIC_CRC_COPY_IMPLS; i++) {
		urnic_crc32_copy_fn *fn = urnic_crc32_copy_get((enum urnic_crc_copy_impl)i);

		if (!fn)
			continue;
		snprintf(ways[nways].name, sizeof(ways[nways].name), "urnic_crc32_copy[%s]",
			 urnic_crc32_copy_name((enum urnic_crc_copy_impl)i));
		ways[nways].fn = do_crc_copy_impl;
		ways[nways].impl = fn;
		nways++;
	}
	ways[nways++] = (struct way){ "urnic_crc32", do_crc_only, NULL, NULL };
	for (int i = 0; i < URNIC_CRC_COPY_IMPLS; i++) {
		urnic_crc32_fn *fn = urnic_crc32_get((enum urnic_crc_copy_impl)i);

		if (!fn || fn == isal)
			continue;
		snprintf(ways[nways].name, sizeof(ways[nways].name), "urnic_crc32[%s]",
			 urnic_crc32_copy_name((enum urnic_crc_copy_impl)i));
		ways[nways].fn = do_crc_only_impl;
		ways[nways].crc = fn;
		nways++;
	}
	*(void **)&by8_02 = dlsym(RTLD_DEFAULT, "crc32_gzip_refl_by8_02");
	if (by8_02)
		ways[nways++] = (struct way){ "crc32_gzip_refl_by8_02", do_crc_only_impl, NULL,
					      crc_by8_02 };
	return nways;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Median ns per call over runs runs, the fastest run's in *best_ns; the XOR of the CRCs
 * goes to *sink. */
static double time_way(const struct way *w, void *dst, const void *src, size_t len, int runs,
		       double *best_ns, uint32_t *sink)
{
	size_t calls = BYTES_PER_RUN / len ? BYTES_PER_RUN / len : 1;
	double ns[MAX_RUNS];
	uint32_t x = 0;

	for (size_t i = 0; i < calls / 8 + 1; i++) /* warm caches, TLB and clocks */
		x ^= w->fn(w, dst, src, len);
	for (int r = 0; r < runs; r++) {
		double t0 = now_ns();

		for (size_t i = 0; i < calls; i++)
			x ^= w->fn(w, dst, src, len);
		ns[r] = (now_ns() - t0) / (double)calls;
	}
	*sink ^= x;
	qsort(ns, (size_t)runs, sizeof(ns[0]), cmp_double);
	*best_ns = ns[0];
	return ns[runs / 2];
}

int main(int argc, char **argv)
{
	static const size_t default_sizes[] = { 4096, 65536 };
	struct way ways[MAX_WAYS] = {
		{ "memcpy", do_memcpy, NULL, NULL },
		{ "crc32_gzip_refl", do_crc, NULL, NULL },
		{ "memcpy+crc32_gzip_refl", do_memcpy_crc, NULL, NULL },
		{ "urnic_crc32_copy", do_crc_copy, NULL, NULL },
	};
	size_t nways, sizes[16], nsizes = 0;
	int runs = 9, opt;
	uint32_t sink = 0;

	while ((opt = getopt(argc, argv, "cn:")) != -1) {
		switch (opt) {
		case 'c':
			printf("%s\n", urnic_crc32_copy_name(urnic_crc32_copy_chosen()));
			return 0;
		case 'n':
			runs = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-c] [-n runs] [SIZE...]\n", argv[0]);
			return 2;
		}
	}
	for (; optind < argc && nsizes < 16; optind++)
		sizes[nsizes++] = (size_t)strtoul(argv[optind], NULL, 0);
	if (!nsizes) {
		memcpy(sizes, default_sizes, sizeof(default_sizes));
		nsizes = 2;
	}
	if (runs < 1 || runs > MAX_RUNS)
		return 2;
	nways = add_ways(ways, 4);

	printf("# urnic_crc32_copy and urnic_crc32 use %s\n",
	       urnic_crc32_copy_name(urnic_crc32_copy_chosen()));
	printf("%-7s %-28s %9s %8s %9s\n", "bytes", "what", "ns/call", "GB/s", "best_GB/s");
	for (size_t s = 0; s < nsizes; s++) {
		size_t len = sizes[s];
		uint8_t *src = aligned_alloc(64, len + 64), *dst = aligned_alloc(64, len + 64);

		if (!len || !src || !dst)
			return 1;
		for (size_t i = 0; i < len; i++)
			src[i] = (uint8_t)(i * 131 + 7);
		memset(dst, 0, len);
		for (size_t w = 1; w < nways; w++) /* all but memcpy give ISA-L's CRC */
			if (ways[w].fn(&ways[w], dst, src, len) != crc32_gzip_refl(SEED, src, len))
				return 1;
		for (size_t w = 0; w < nways; w++) {
			double best, ns = time_way(&ways[w], dst, src, len, runs, &best, &sink);

			printf("%-7zu %-28s %9.1f %8.1f %9.1f\n", len, ways[w].name, ns,
			       (double)len / ns, (double)len / best);
		}
		if (memcmp(dst, src, len) != 0)
			return 1;
		free(src);
		free(dst);
	}
	/* Keeps the CRCs live. */
	fprintf(stderr, "# sink %08x\n", sink);
	return 0;
}
