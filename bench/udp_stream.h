/* SPDX-License-Identifier: MIT */
/*
 * udp_stream.h - what the two streaming references (udp_ceiling.c, roce_shape.c) share,
 * so that they measure the same way: the clock, a receiving socket with UDP_GRO bound
 * to the address (8 MiB buffer, a 100 ms timeout so that the receiving thread sees the
 * end of the run), and a sending socket with an 8 MiB buffer. Header-only: bench/run.sh
 * compiles each helper on its own.
 */
#ifndef URNIC_BENCH_UDP_STREAM_H
#define URNIC_BENCH_UDP_STREAM_H

#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

enum { STREAM_BUF_BYTES = 8 << 20 };

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The receiving socket at `at`, or -1 (perror, prefixed with `who`). */
static inline int stream_rx_socket(const struct sockaddr_in *at, const char *who)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0), one = 1, bufsz = STREAM_BUF_BYTES;
	struct timeval tv = { 0, 100000 };
	char what[64];

	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bufsz, sizeof(bufsz)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof(bufsz));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (setsockopt(fd, IPPROTO_UDP, UDP_GRO, &one, sizeof(one)) < 0) {
		snprintf(what, sizeof(what), "%s: UDP_GRO", who);
		perror(what);
	}
	if (bind(fd, (const struct sockaddr *)at, sizeof(*at)) < 0) {
		snprintf(what, sizeof(what), "%s: bind", who);
		perror(what);
		return -1;
	}
	return fd;
}

/* A sending socket, or -1. */
static inline int stream_tx_socket(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0), bufsz = STREAM_BUF_BYTES;

	if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bufsz, sizeof(bufsz)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof(bufsz));
	return fd;
}

#endif
