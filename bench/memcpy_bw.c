/* SPDX-License-Identifier: MIT */
/*
 * memcpy_bw.c - one thread's memcpy bandwidth between two 64 MiB buffers (out of
 * cache: the cost of one copy of a long message). Prints the median of the copies:
 *
 *   memcpy_GBps 13.9
 *
 * usage: memcpy_bw [-m MiB] [-n copies]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Through a volatile pointer, so the copies are not optimised away. */
static void *(*volatile copy)(void *, const void *, size_t) = memcpy;

int main(int argc, char **argv)
{
	size_t mib = 64, bytes;
	int n = 9, opt;
	double *gbps;
	char *src, *dst;

	while ((opt = getopt(argc, argv, "m:n:")) != -1) {
		switch (opt) {
		case 'm':
			mib = (size_t)atoi(optarg);
			break;
		case 'n':
			n = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-m MiB] [-n copies]\n", argv[0]);
			return 2;
		}
	}
	if (n < 1 || mib < 1)
		return 2;
	bytes = mib << 20;
	src = malloc(bytes);
	dst = malloc(bytes);
	gbps = calloc((size_t)n, sizeof(*gbps));
	if (!src || !dst || !gbps)
		return 1;
	memset(src, 1, bytes); /* fault the pages in before timing */
	memset(dst, 2, bytes);
	for (int i = 0; i < n; i++) {
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		copy(dst, src, bytes);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		gbps[i] = (double)bytes / ((double)(t1.tv_sec - t0.tv_sec) * 1e9 +
					   (double)(t1.tv_nsec - t0.tv_nsec));
	}
	qsort(gbps, (size_t)n, sizeof(*gbps), cmp_double);
	printf("memcpy_GBps %.2f\n", gbps[n / 2]);
	return dst[bytes - 1] == 1 ? 0 : 1;
}
