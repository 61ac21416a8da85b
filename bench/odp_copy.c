/* SPDX-License-Identifier: MIT */
/*
 * odp_copy.c - what a copy to or from an on-demand region costs (src/dev/odp.c): one
 * process_vm_readv or process_vm_writev on the process itself per packet, against the
 * memcpy an ordinary region gets. Buffers hot in cache, pages present, one thread; for
 * each size, the median of 5 runs of about 50 ms:
 *
 *   bytes  memcpy_MBps  vm_readv_MBps  vm_writev_MBps  vm_call_ns
 *
 * vm_call_ns: one process_vm_readv's time at that size. usage: odp_copy
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

enum { RUNS = 5, RUN_NS = 50000000 };

static uint8_t src[65536], dst[65536];
static pid_t self;

static void *(*volatile copy)(void *, const void *, size_t) = memcpy;

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void by_memcpy(size_t len)
{
	copy(dst, src, len);
}

static void by_readv(size_t len)
{
	struct iovec l = { dst, len }, r = { src, len };

	if (process_vm_readv(self, &l, 1, &r, 1, 0) != (ssize_t)len)
		exit(1);
}

static void by_writev(size_t len)
{
	struct iovec l = { src, len }, r = { dst, len };

	if (process_vm_writev(self, &l, 1, &r, 1, 0) != (ssize_t)len)
		exit(1);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Copies of len bytes per second, median of RUNS runs. */
static double rate(void (*fn)(size_t), size_t len)
{
	double r[RUNS];

	for (int k = 0; k < RUNS; k++) {
		uint64_t t0 = now_ns(), t, n = 0;

		do {
			for (int i = 0; i < 64; i++)
				fn(len);
			n += 64;
			t = now_ns() - t0;
		} while (t < RUN_NS);
		r[k] = (double)n * 1e9 / (double)t;
	}
	qsort(r, RUNS, sizeof(r[0]), cmp_double);
	return r[RUNS / 2];
}

int main(void)
{
	static const size_t sizes[] = { 64, 256, 1024, 4096, 65536 };

	self = getpid();
	memset(src, 1, sizeof(src));
	memset(dst, 2, sizeof(dst));
	printf("bytes  memcpy_MBps  vm_readv_MBps  vm_writev_MBps  vm_call_ns\n");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t len = sizes[i];
		double m = rate(by_memcpy, len), rd = rate(by_readv, len),
		       wr = rate(by_writev, len);

		printf("%5zu  %11.0f  %13.0f  %14.0f  %10.0f\n", len, m * (double)len / 1e6,
		       rd * (double)len / 1e6, wr * (double)len / 1e6, 1e9 / rd);
	}
	return 0;
}
