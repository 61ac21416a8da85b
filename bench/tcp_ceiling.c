/* SPDX-License-Identifier: MIT */
/*
 * tcp_ceiling.c - the plain TCP stream ceiling between two addresses of this machine, the
 * yardstick of iWARP's bandwidth: one sender thread writes -s bytes at a time from a
 * buffer (256 KiB by default: 64 KiB writes carried half as much on loopback, 1 MiB no
 * more), the main thread reads them into another, over one connection, for -t seconds.
 * Prints the payload bytes received per second:
 *
 *   rx_gbps 31.20
 *
 * usage: tcp_ceiling [-a src_addr] [-b dst_addr] [-p port] [-s write_bytes] [-t seconds]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char *src_addr = "127.0.4.3";
static const char *dst_addr = "127.0.4.2";
static unsigned port = 18790;
static size_t wbytes = 262144;
static double secs = 2.0;
static atomic_bool stop;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static struct sockaddr_in sa(const char *addr, unsigned p)
{
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons((uint16_t)p) };

	if (inet_pton(AF_INET, addr, &s.sin_addr) != 1) {
		fprintf(stderr, "tcp_ceiling: bad address '%s'\n", addr);
		exit(2);
	}
	return s;
}

static void *sender(void *arg)
{
	int fd = *(int *)arg;
	char *buf = calloc(1, wbytes);

	if (!buf)
		die("calloc");
	while (!atomic_load(&stop)) {
		if (write(fd, buf, wbytes) < 0 && errno != EINTR)
			break;
	}
	shutdown(fd, SHUT_WR);
	free(buf);
	return NULL;
}

static unsigned long parse(const char *opt, const char *v, unsigned long max)
{
	char *end;
	unsigned long n = strtoul(v, &end, 10);

	if (*v == '\0' || *end != '\0' || n == 0 || n > max) {
		fprintf(stderr, "tcp_ceiling: -%s '%s': not a number in 1..%lu\n", opt, v, max);
		exit(2);
	}
	return n;
}

int main(int argc, char **argv)
{
	int c, one = 1;

	while ((c = getopt(argc, argv, "a:b:p:s:t:")) != -1) {
		switch (c) {
		case 'a':
			src_addr = optarg;
			break;
		case 'b':
			dst_addr = optarg;
			break;
		case 'p':
			port = (unsigned)parse("p", optarg, 65535);
			break;
		case 's':
			wbytes = parse("s", optarg, 1ul << 26);
			break;
		case 't':
			secs = (double)parse("t", optarg, 3600);
			break;
		default:
			fprintf(stderr, "usage: tcp_ceiling [-a src] [-b dst] [-p port] [-s bytes] "
					"[-t seconds]\n");
			return 2;
		}
	}
	struct sockaddr_in dst = sa(dst_addr, port), src = sa(src_addr, 0);
	int lfd = socket(AF_INET, SOCK_STREAM, 0);

	if (lfd < 0)
		die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&dst, sizeof(dst)) || listen(lfd, 1))
		die("bind/listen");
	int cfd = socket(AF_INET, SOCK_STREAM, 0);

	if (cfd < 0 || bind(cfd, (struct sockaddr *)&src, sizeof(src)) ||
	    connect(cfd, (struct sockaddr *)&dst, sizeof(dst)))
		die("connect");
	int rfd = accept(lfd, NULL, NULL);

	if (rfd < 0)
		die("accept");
	/* As an iWARP connection is set up: no Nagle delay on either side. */
	setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(rfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	pthread_t t;

	if (pthread_create(&t, NULL, sender, &cfd))
		die("pthread_create");
	char *buf = malloc(1u << 20);
	unsigned long long bytes = 0;
	double t0 = now_s(), end = t0 + secs;

	if (!buf)
		die("malloc");
	for (;;) {
		ssize_t n = read(rfd, buf, 1u << 20);

		if (n <= 0)
			break;
		bytes += (unsigned long long)n;
		if (now_s() >= end)
			break;
	}
	double el = now_s() - t0;

	atomic_store(&stop, true);
	close(rfd);
	pthread_join(t, NULL);
	printf("rx_gbps %.2f\n", (double)bytes * 8 / el / 1e9);
	free(buf);
	close(cfd);
	close(lfd);
	return 0;
}
