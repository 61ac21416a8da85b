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
 * With -z the sender uses MSG_ZEROCOPY (SO_ZEROCOPY, msg_zerocopy.rst): it cycles through
 * ZC_BUFS buffers, reuses one only once the kernel's completion for it came on the error
 * queue, and prints how many sends the kernel reported as copied after all
 * (SO_EE_CODE_ZEROCOPY_COPIED: what loopback does, the receiver being local):
 *
 *   rx_gbps 20.10 zc_sends 81234 zc_copied 81234
 *
 * usage: tcp_ceiling [-a src_addr] [-b dst_addr] [-p port] [-s write_bytes] [-t seconds] [-z]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <poll.h>
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
static bool zerocopy;
static atomic_bool stop;
/* MSG_ZEROCOPY: buffers in flight, and what the error queue reported. */
enum { ZC_BUFS = 8 };
static unsigned long long zc_sends, zc_done, zc_copied;

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

/* Reads the error queue's zerocopy completions (each a range of send numbers); wait:
 * block until one came. */
static void zc_reap(int fd, bool wait)
{
	char ctl[128];

	for (;;) {
		struct msghdr m = { .msg_control = ctl, .msg_controllen = sizeof(ctl) };
		struct cmsghdr *cm;

		if (recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
			struct pollfd p = { .fd = fd, .events = 0 };

			if (errno != EAGAIN || !wait || atomic_load(&stop))
				return;
			poll(&p, 1, 100); /* POLLERR: a completion is queued */
			continue;
		}
		for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
			struct sock_extended_err *ee = (struct sock_extended_err *)CMSG_DATA(cm);

			if (ee->ee_errno != 0 || ee->ee_origin != SO_EE_ORIGIN_ZEROCOPY)
				continue;
			zc_done += (unsigned long long)(ee->ee_data - ee->ee_info) + 1;
			if (ee->ee_code & SO_EE_CODE_ZEROCOPY_COPIED)
				zc_copied += (unsigned long long)(ee->ee_data - ee->ee_info) + 1;
		}
		wait = false;
	}
}

static void *zc_sender(int fd)
{
	char *buf = calloc(ZC_BUFS, wbytes);
	int one = 1;

	if (!buf || setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)))
		die("SO_ZEROCOPY");
	while (!atomic_load(&stop)) {
		ssize_t r;

		/* A buffer is reused only once its send completed. */
		while (zc_sends - zc_done >= ZC_BUFS && !atomic_load(&stop))
			zc_reap(fd, true);
		r = send(fd, buf + (zc_sends % ZC_BUFS) * wbytes, wbytes, MSG_ZEROCOPY);
		if (r < 0 && errno != EINTR && errno != ENOBUFS)
			break;
		if (r >= 0)
			zc_sends++; /* each successful call is one completion number */
		zc_reap(fd, false);
	}
	shutdown(fd, SHUT_WR);
	free(buf);
	return NULL;
}

static void *sender(void *arg)
{
	int fd = *(int *)arg;
	char *buf;

	if (zerocopy)
		return zc_sender(fd);
	buf = calloc(1, wbytes);
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

	while ((c = getopt(argc, argv, "a:b:p:s:t:z")) != -1) {
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
		case 'z':
			zerocopy = true;
			break;
		default:
			fprintf(stderr, "usage: tcp_ceiling [-a src] [-b dst] [-p port] [-s bytes] "
					"[-t seconds] [-z]\n");
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
	printf("rx_gbps %.2f", (double)bytes * 8 / el / 1e9);
	if (zerocopy)
		printf(" zc_sends %llu zc_copied %llu", zc_sends, zc_copied);
	printf("\n");
	free(buf);
	close(cfd);
	close(lfd);
	return 0;
}
