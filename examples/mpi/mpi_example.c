/* SPDX-License-Identifier: MIT */
/*
 * mpi_example.c - an MPI program that checks every byte it moves: ping-pong latency
 * (the median one-way time of many round trips), bandwidth (windows of non-blocking
 * sends, as the OSU benchmarks measure it) between ranks 0 and 1, and allreduce of
 * known vectors over every rank. Rank 0 prints the figures; the exit status is 1 if any
 * byte or sum was wrong. Built against both MPICH and Open MPI (CMakeLists.txt here);
 * README "MPI and UCX" runs it over urnic.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { TAG_PING = 1, TAG_PONG, TAG_READY, TAG_DATA, TAG_ACK };

struct opts {
	long pp_iters;	/* ping-pong round trips measured */
	long pp_bytes;	/* ping-pong message size */
	long bw_bytes;	/* bandwidth message size */
	long bw_window; /* sends in flight per window */
	long bw_rounds; /* windows measured */
	long ar_max;	/* largest allreduce, in int64 elements */
};

static int rank, nranks;
static long mismatches; /* this rank's wrong bytes and sums */
static int spoil;	/* -X: flip a bit of what arrives before checking it */

/* Byte k of message m sent by rank r: differs from byte to byte, message to message
 * and sender to sender, so a stale, shifted or misdelivered buffer shows. */
static uint8_t pattern(long m, size_t k, int r)
{
	uint32_t x = (uint32_t)m * 2654435761u ^ (uint32_t)k * 40503u ^ (uint32_t)r << 24;

	x ^= x >> 13;
	x *= 0x5bd1e995u;
	return (uint8_t)(x ^ x >> 15);
}

static void fill(uint8_t *buf, size_t len, long m, int r)
{
	for (size_t k = 0; k < len; k++)
		buf[k] = pattern(m, k, r);
}

/* Counts and reports (the first few) bytes that differ from message m of rank r. */
static void check(const char *what, uint8_t *buf, size_t len, long m, int r)
{
	long bad = 0;

	if (spoil)
		buf[len / 2] ^= 1;
	for (size_t k = 0; k < len; k++) {
		uint8_t want = pattern(m, k, r);

		if (buf[k] == want)
			continue;
		if (mismatches + bad < 10)
			fprintf(stderr, "rank %d: %s message %ld byte %zu: 0x%02x, not 0x%02x\n",
				rank, what, m, k, buf[k], want);
		bad++;
	}
	mismatches += bad;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void *xmalloc(size_t len)
{
	void *p = malloc(len ? len : 1);

	if (!p) {
		fprintf(stderr, "rank %d: out of memory (%zu bytes)\n", rank, len);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	return p;
}

/* Rank 0 sends message 2i, rank 1 checks it and answers 2i+1, rank 0 checks that. The
 * first tenth of the round trips (at most 1000) warm up and are not counted. */
static void pingpong(const struct opts *o)
{
	long warm = o->pp_iters / 10 < 1000 ? o->pp_iters / 10 : 1000;
	size_t len = (size_t)o->pp_bytes;
	uint8_t *tx = xmalloc(len), *rx = xmalloc(len);
	double *rtt = xmalloc(sizeof(double) * (size_t)o->pp_iters);
	int peer = 1 - rank;

	for (long i = -warm; i < o->pp_iters; i++) {
		long m = 2 * (i + warm);
		double t0;

		if (rank == 0) {
			fill(tx, len, m, 0);
			t0 = MPI_Wtime();
			MPI_Send(tx, (int)len, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD);
			MPI_Recv(rx, (int)len, MPI_BYTE, peer, TAG_PONG, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			if (i >= 0)
				rtt[i] = MPI_Wtime() - t0;
			check("ping-pong", rx, len, m + 1, 1);
		} else {
			MPI_Recv(rx, (int)len, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			check("ping-pong", rx, len, m, 0);
			fill(tx, len, m + 1, 1);
			MPI_Send(tx, (int)len, MPI_BYTE, peer, TAG_PONG, MPI_COMM_WORLD);
		}
	}
	if (rank == 0) {
		qsort(rtt, (size_t)o->pp_iters, sizeof(double), by_value);
		printf("pingpong %ld B: %.2f us one way (median of %ld round trips; min %.2f us)\n",
		       o->pp_bytes, rtt[o->pp_iters / 2] / 2 * 1e6, o->pp_iters, rtt[0] / 2 * 1e6);
	}
	free(tx);
	free(rx);
	free(rtt);
}

/* Each window: rank 1 posts its receives and says so, rank 0 starts the clock, sends the
 * window and stops the clock at rank 1's acknowledgement; rank 1 then checks every byte,
 * outside the measured time. One window warms up. */
static void bandwidth(const struct opts *o)
{
	size_t len = (size_t)o->bw_bytes, w = (size_t)o->bw_window;
	uint8_t *buf = xmalloc(len * w);
	MPI_Request *req = xmalloc(sizeof(MPI_Request) * w);
	/* Statuses rather than MPI_STATUSES_IGNORE, which gcc 12 takes for a short array
	 * in MPICH's prototype (-Wstringop-overflow). */
	MPI_Status *st = xmalloc(sizeof(MPI_Status) * w);
	int peer = 1 - rank, ack = 0;
	double busy = 0;

	for (long round = -1; round < o->bw_rounds; round++) {
		long m0 = (round + 1) * (long)w;

		if (rank == 0) {
			for (size_t j = 0; j < w; j++)
				fill(buf + j * len, len, m0 + (long)j, 0);
			MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_READY, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			double t0 = MPI_Wtime();
			for (size_t j = 0; j < w; j++)
				MPI_Isend(buf + j * len, (int)len, MPI_BYTE, peer, TAG_DATA,
					  MPI_COMM_WORLD, &req[j]);
			MPI_Waitall((int)w, req, st);
			MPI_Recv(&ack, 1, MPI_INT, peer, TAG_ACK, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			if (round >= 0)
				busy += MPI_Wtime() - t0;
		} else {
			memset(buf, 0, len * w);
			for (size_t j = 0; j < w; j++)
				MPI_Irecv(buf + j * len, (int)len, MPI_BYTE, peer, TAG_DATA,
					  MPI_COMM_WORLD, &req[j]);
			MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_READY, MPI_COMM_WORLD);
			MPI_Waitall((int)w, req, st);
			MPI_Send(&ack, 1, MPI_INT, peer, TAG_ACK, MPI_COMM_WORLD);
			for (size_t j = 0; j < w; j++)
				check("bandwidth", buf + j * len, len, m0 + (long)j, 0);
		}
	}
	if (rank == 0)
		printf("bandwidth %ld B: %.1f MB/s (%ld windows of %ld sends)\n", o->bw_bytes,
		       (double)len * (double)w * (double)o->bw_rounds / busy / 1e6, o->bw_rounds,
		       o->bw_window);
	free(buf);
	free(req);
	free(st);
}

/* Rank r contributes v[i] = (r + 1) * 1000003 + i * (r + 7); the sum over n ranks is
 * 1000003 * n(n+1)/2 + i * (n(n-1)/2 + 7n), checked in every element on every rank.
 * Sizes 1, 16, 256, ... up to the largest; 10 timed calls of each after one to warm up. */
static void allreduce(const struct opts *o)
{
	size_t max = (size_t)o->ar_max, count = 1;
	int64_t *in = xmalloc(sizeof(int64_t) * max), *out = xmalloc(sizeof(int64_t) * max);
	int64_t n = nranks;
	double busy = 0;
	int sizes = 0;

	for (size_t i = 0; i < max; i++)
		in[i] = (int64_t)(rank + 1) * 1000003 + (int64_t)i * (rank + 7);
	for (;;) {
		busy = 0;
		for (int rep = 0; rep <= 10; rep++) {
			double t0;

			memset(out, 0xa5, sizeof(int64_t) * count);
			t0 = MPI_Wtime();
			MPI_Allreduce(in, out, (int)count, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
			if (rep > 0)
				busy += MPI_Wtime() - t0;
			if (spoil)
				out[count / 2] ^= 1;
			for (size_t i = 0; i < count; i++) {
				int64_t want = 1000003 * n * (n + 1) / 2 +
					       (int64_t)i * (n * (n - 1) / 2 + 7 * n);

				if (out[i] == want)
					continue;
				if (mismatches < 10)
					fprintf(stderr,
						"rank %d: allreduce of %zu, element %zu: "
						"%lld, not %lld\n",
						rank, count, i, (long long)out[i], (long long)want);
				mismatches++;
			}
		}
		sizes++;
		if (count == max)
			break;
		count = count * 16 < max ? count * 16 : max;
	}
	if (rank == 0)
		printf("allreduce: %d sizes to %zu int64 over %d ranks, %.1f us at the largest\n",
		       sizes, max, nranks, busy / 10 * 1e6);
	free(in);
	free(out);
}

static int usage(void)
{
	if (rank == 0)
		fprintf(stderr,
			"usage: mpi_example [-n round trips] [-s ping-pong bytes] [-b bandwidth "
			"bytes]\n"
			"                   [-w window] [-r windows] [-a allreduce int64s] [-X]\n"
			"defaults: -n 10000 -s 8 -b 1048576 -w 16 -r 20 -a 262144; 2 or more "
			"ranks\n"
			"-X: flip a bit of the data before checking it (the run must fail)\n");
	MPI_Finalize();
	return 2;
}

int main(int argc, char **argv)
{
	struct opts o = { 10000, 8, 1048576, 16, 20, 262144 };
	char version[MPI_MAX_LIBRARY_VERSION_STRING];
	long total = 0;
	int c, len;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	while ((c = getopt(argc, argv, "n:s:b:w:r:a:X")) != -1) {
		long *v;
		char *end;

		switch (c) {
		case 'n':
			v = &o.pp_iters;
			break;
		case 's':
			v = &o.pp_bytes;
			break;
		case 'b':
			v = &o.bw_bytes;
			break;
		case 'w':
			v = &o.bw_window;
			break;
		case 'r':
			v = &o.bw_rounds;
			break;
		case 'a':
			v = &o.ar_max;
			break;
		case 'X':
			spoil = 1;
			continue;
		default:
			return usage();
		}
		*v = strtol(optarg, &end, 0);
		if (*end || *v < 1 || *v > 1L << 30)
			return usage();
	}
	if (optind != argc || nranks < 2)
		return usage();

	MPI_Get_library_version(version, &len);
	version[strcspn(version, "\n")] = '\0';
	if (rank == 0)
		printf("mpi_example: %d ranks, %s\n", nranks, version);
	if (rank < 2) {
		pingpong(&o);
		bandwidth(&o);
	}
	allreduce(&o);

	MPI_Reduce(&mismatches, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		if (total)
			printf("FAILED: %ld bytes or sums wrong\n", total);
		else
			printf("all data checked: ok\n");
	}
	MPI_Bcast(&total, 1, MPI_LONG, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	return total ? 1 : 0;
}
