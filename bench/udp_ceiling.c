/* SPDX-License-Identifier: MIT */
/*
 * udp_ceiling.c - the raw UDP throughput ceiling of this machine's loopback, the way
 * urnic moves a long message: one sender thread hands the kernel 60 KiB at a time cut
 * into 4 KiB segments (UDP_SEGMENT, GSO), one receiver thread takes coalesced
 * super-packets (UDP_GRO) with recvmmsg. Prints the payload bytes received (and sent)
 * per second:
 *
 *   rx_gbps 21.93
 *   tx_gbps 30.12
 *
 * With -m it reports datagrams per second instead (the ceiling for a message rate):
 * -s defaults to 40 bytes (an 8-byte RDMA WRITE: BTH, RETH, payload, ICRC) and -g to 64
 * of them per GSO send, as urnic batches equal-sized packets to one peer; -g equal to
 * -s sends each datagram on its own, 64 per sendmmsg:
 *
 *   rx_mpps 2.91
 *   tx_mpps 3.20
 *
 * usage: udp_ceiling [-m] [-a addr] [-p port] [-s segment] [-g gso_bytes] [-t seconds]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "udp_stream.h"

#define RX_BATCH 64
#define TX_BATCH 64
#define RX_BUF 65536

static atomic_bool stop;
static atomic_ullong rx_bytes, tx_bytes;
static bool msg_mode;
static struct sockaddr_in dst;
static int seg = 4096, gso = 61440;

static void *receiver(void *arg)
{
	int fd = *(int *)arg;
	static char bufs[RX_BATCH][RX_BUF];
	struct mmsghdr msgs[RX_BATCH];
	struct iovec iov[RX_BATCH];

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		int n;

		memset(msgs, 0, sizeof(msgs));
		for (int i = 0; i < RX_BATCH; i++) {
			iov[i] = (struct iovec){ bufs[i], RX_BUF };
			msgs[i].msg_hdr.msg_iov = &iov[i];
			msgs[i].msg_hdr.msg_iovlen = 1;
		}
		/* Blocks for the first datagram (SO_RCVTIMEO bounds it), then takes what is
		 * queued. */
		n = recvmmsg(fd, msgs, RX_BATCH, MSG_WAITFORONE, NULL);
		if (n <= 0)
			continue;
		unsigned long long b = 0;

		for (int i = 0; i < n; i++)
			b += msgs[i].msg_len;
		atomic_fetch_add_explicit(&rx_bytes, b, memory_order_relaxed);
	}
	return NULL;
}

static void *sender(void *arg)
{
	int fd = *(int *)arg;
	char *buf = calloc(1, (size_t)gso);

	if (!buf)
		return NULL;
	memset(buf, 0xa5, (size_t)gso);
	while (gso == seg && !atomic_load_explicit(&stop, memory_order_relaxed)) {
		struct mmsghdr msgs[TX_BATCH];
		struct iovec iov = { buf, (size_t)seg };
		int r;

		memset(msgs, 0, sizeof(msgs));
		for (int i = 0; i < TX_BATCH; i++) {
			msgs[i].msg_hdr.msg_iov = &iov;
			msgs[i].msg_hdr.msg_iovlen = 1;
		}
		r = sendmmsg(fd, msgs, TX_BATCH, 0);
		if (r > 0)
			atomic_fetch_add_explicit(&tx_bytes, (unsigned long long)r * (unsigned)seg,
						  memory_order_relaxed);
		else if (errno == ENOBUFS || errno == EAGAIN)
			sched_yield();
	}
	while (gso != seg && !atomic_load_explicit(&stop, memory_order_relaxed)) {
		ssize_t r = send(fd, buf, (size_t)gso, 0);

		if (r > 0)
			atomic_fetch_add_explicit(&tx_bytes, (unsigned long long)r,
						  memory_order_relaxed);
		else if (errno == ENOBUFS || errno == EAGAIN)
			sched_yield();
	}
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *addr = "127.0.3.10";
	int port = 47910, opt;
	bool seg_set = false, gso_set = false;
	double secs = 1.0, warm = 0.2, t0, t1;
	unsigned long long r0, r1, s0, s1;
	pthread_t rt, st;
	int rfd, sfd;

	while ((opt = getopt(argc, argv, "ma:p:s:g:t:")) != -1) {
		switch (opt) {
		case 'm':
			msg_mode = true;
			break;
		case 'a':
			addr = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 's':
			seg = atoi(optarg);
			seg_set = true;
			break;
		case 'g':
			gso = atoi(optarg);
			gso_set = true;
			break;
		case 't':
			secs = atof(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: %s [-m] [-a addr] [-p port] [-s segment] [-g gso_bytes] "
				"[-t seconds]\n",
				argv[0]);
			return 2;
		}
	}
	memset(&dst, 0, sizeof(dst));
	dst.sin_family = AF_INET;
	dst.sin_port = htons((uint16_t)port);
	if (msg_mode && !seg_set)
		seg = 40;
	if (msg_mode && !gso_set)
		gso = 64 * seg;
	if (seg < 1 || seg > 65000 || gso < seg || gso > 65000) {
		fprintf(stderr, "udp_ceiling: bad -s/-g\n");
		return 2;
	}
	if (inet_pton(AF_INET, addr, &dst.sin_addr) != 1) {
		fprintf(stderr, "udp_ceiling: bad address %s\n", addr);
		return 2;
	}

	rfd = stream_rx_socket(&dst, "udp_ceiling");
	if (rfd < 0)
		return 1;
	sfd = stream_tx_socket();
	if (gso != seg && setsockopt(sfd, IPPROTO_UDP, UDP_SEGMENT, &seg, sizeof(seg)) < 0)
		perror("udp_ceiling: UDP_SEGMENT");
	if (connect(sfd, (struct sockaddr *)&dst, sizeof(dst)) < 0) {
		perror("udp_ceiling: connect");
		return 1;
	}

	pthread_create(&rt, NULL, receiver, &rfd);
	pthread_create(&st, NULL, sender, &sfd);
	usleep((useconds_t)(warm * 1e6));
	t0 = now_s();
	r0 = atomic_load(&rx_bytes);
	s0 = atomic_load(&tx_bytes);
	usleep((useconds_t)(secs * 1e6));
	t1 = now_s();
	r1 = atomic_load(&rx_bytes);
	s1 = atomic_load(&tx_bytes);
	atomic_store(&stop, true);
	pthread_join(st, NULL);
	pthread_join(rt, NULL);
	if (msg_mode) {
		/* With GRO a message holds several datagrams of seg bytes each. */
		printf("rx_mpps %.3f\n", (double)(r1 - r0) / seg / (t1 - t0) / 1e6);
		printf("tx_mpps %.3f\n", (double)(s1 - s0) / seg / (t1 - t0) / 1e6);
		return 0;
	}
	printf("rx_gbps %.2f\n", (double)(r1 - r0) * 8 / (t1 - t0) / 1e9);
	printf("tx_gbps %.2f\n", (double)(s1 - s0) * 8 / (t1 - t0) / 1e9);
	return 0;
}
