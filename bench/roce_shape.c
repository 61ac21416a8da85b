/* SPDX-License-Identifier: MIT */
/*
 * roce_shape.c - udp_ceiling's stream in the shape of 64 KiB RDMA WRITEs, with the work
 * every RoCEv2 stack on UDP sockets must do per byte and nothing else: no ACKs, PSNs or
 * completions. Measured the way udp_ceiling measures (one sending thread, one receiving
 * thread blocking in recvmmsg), its ratio to udp_ceiling is what the wire's shape and
 * the ICRC cost on this machine before any protocol (docs/performance.md, "The wire's shape").
 *
 * Per message, as the wire requires and urnic sends it: 16 packets of a 4096-byte path
 * MTU, the FIRST with BTH + RETH (28 bytes of headers), the others with BTH (12), each
 * with a 4-byte ICRC computed over the packet (ISA-L crc32, as urnic); laid out back to
 * back in one buffer per send and sent as the UDP GSO runs UDP_SEGMENT allows: the
 * FIRST is 16 bytes longer than the rest, and only a run's last segment may differ, so
 * a message is two datagrams (the FIRST and one MIDDLE, then 14); -m messages per
 * sendmmsg. The receiver takes GRO super-packets with a blocking recvmmsg (as
 * udp_ceiling), checks each packet's CRC and copies its payload to a destination
 * buffer (placement).
 *
 *   rx_gbps 35.70     (payload bytes received per second)
 *
 * With -n the CRC is skipped on both sides, with -1 a message is one run of 15
 * MIDDLE-sized packets (60 KiB in one send, as udp_ceiling), to tell the costs apart.
 *
 * usage: roce_shape [-a addr] [-p port] [-m msgs_per_send] [-t seconds] [-n] [-1]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <isa-l/crc.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "udp_stream.h"

enum {
	MTU = 4096,
	PKTS = 16,	/* a 64 KiB message */
	FIRST_HDR = 28, /* BTH + RETH */
	HDR = 12,	/* BTH */
	ICRC = 4,
	MAX_MSGS = 8, /* -m */
	RX_BATCH = 64,
	RX_BUF = 65536,
	PKT_MAX = FIRST_HDR + MTU + ICRC,
};

static atomic_bool stop;
static atomic_ullong rx_bytes, rx_bad;
static bool no_crc, one_run;

/* Checks and places one packet of len bytes; returns its payload bytes. */
static unsigned place(const unsigned char *p, unsigned len, unsigned char *dst)
{
	unsigned hdr = len == FIRST_HDR + MTU + ICRC ? FIRST_HDR : HDR;
	unsigned n = len - hdr - ICRC;
	uint32_t crc;

	if (!no_crc) {
		memcpy(&crc, p + len - ICRC, ICRC);
		if (crc32_gzip_refl(0, p, len - ICRC) != crc)
			atomic_fetch_add_explicit(&rx_bad, 1, memory_order_relaxed);
	}
	memcpy(dst, p + hdr, n);
	return n;
}

static void *receiver(void *arg)
{
	int fd = *(int *)arg;
	static unsigned char bufs[RX_BATCH][RX_BUF], dst[PKTS * MTU];
	static char ctrl[RX_BATCH][64];
	struct mmsghdr msgs[RX_BATCH];
	struct iovec iov[RX_BATCH];

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		unsigned long long b = 0;
		int n;

		memset(msgs, 0, sizeof(msgs));
		for (int i = 0; i < RX_BATCH; i++) {
			iov[i] = (struct iovec){ bufs[i], RX_BUF };
			msgs[i].msg_hdr.msg_iov = &iov[i];
			msgs[i].msg_hdr.msg_iovlen = 1;
			msgs[i].msg_hdr.msg_control = ctrl[i];
			msgs[i].msg_hdr.msg_controllen = sizeof(ctrl[i]);
		}
		n = recvmmsg(fd, msgs, RX_BATCH, MSG_WAITFORONE, NULL);
		for (int i = 0; i < n; i++) {
			unsigned len = msgs[i].msg_len, seg = len;
			struct cmsghdr *c;

			for (c = CMSG_FIRSTHDR(&msgs[i].msg_hdr); c;
			     c = CMSG_NXTHDR(&msgs[i].msg_hdr, c)) {
				if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == UDP_GRO) {
					int g;

					memcpy(&g, CMSG_DATA(c), sizeof(g));
					seg = (unsigned)g;
				}
			}
			for (unsigned off = 0, k = 0; off < len; off += seg, k++) {
				unsigned plen = len - off < seg ? len - off : seg;

				b += place(bufs[i] + off, plen, dst + (k % PKTS) * MTU);
			}
		}
		atomic_fetch_add_explicit(&rx_bytes, b, memory_order_relaxed);
	}
	return NULL;
}

/* Lays message m's packets out at out, ICRC included; returns the bytes. */
static unsigned build(unsigned char *out, const unsigned char *src, unsigned m)
{
	unsigned char *p = out;

	for (unsigned k = one_run ? 1 : 0; k < PKTS; k++) {
		unsigned hdr = k ? HDR : FIRST_HDR;
		uint32_t crc;

		memset(p, 0, hdr);
		p[0] = (unsigned char)(k == 0 ? 6 : k == PKTS - 1 ? 8 : 7); /* WRITE F/L/M */
		p[11] = (unsigned char)(m * PKTS + k);			    /* a PSN */
		memcpy(p + hdr, src + k * MTU, MTU);
		crc = no_crc ? 0 : crc32_gzip_refl(0, p, hdr + MTU);
		memcpy(p + hdr + MTU, &crc, ICRC);
		p += hdr + MTU + ICRC;
	}
	return (unsigned)(p - out);
}

static struct sockaddr_in dst;
static int per_send = 3;

static void *sender(void *arg)
{
	int fd = *(int *)arg;
	static unsigned char src[PKTS * MTU], flat[MAX_MSGS][PKTS * PKT_MAX];
	static char ctrl[2 * MAX_MSGS][CMSG_SPACE(sizeof(uint16_t))];
	struct mmsghdr msgs[2 * MAX_MSGS];
	struct iovec iov[2 * MAX_MSGS];
	unsigned seq = 0;

	memset(src, 0xa5, sizeof(src));
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		unsigned n = 0;

		memset(msgs, 0, sizeof(msgs));
		for (int m = 0; m < per_send; m++) {
			unsigned bytes = build(flat[m], src, seq++);
			/* FIRST (4128 bytes) and MIDDLE (4112) differ: two runs, as urnic sends
			 * them. */
			unsigned lead = one_run ? 0 : 2 * (HDR + MTU + ICRC) + FIRST_HDR - HDR;
			unsigned part[2] = { lead, bytes - lead };
			uint16_t seg[2] = { FIRST_HDR + MTU + ICRC, HDR + MTU + ICRC };

			for (int r = 0; r < 2; r++) {
				struct msghdr *h = &msgs[n].msg_hdr;
				struct cmsghdr *c;

				if (!part[r])
					continue;
				iov[n] = (struct iovec){ flat[m] + (r ? lead : 0), part[r] };
				h->msg_name = &dst;
				h->msg_namelen = sizeof(dst);
				h->msg_iov = &iov[n];
				h->msg_iovlen = 1;
				h->msg_control = ctrl[n];
				h->msg_controllen = sizeof(ctrl[n]);
				c = CMSG_FIRSTHDR(h);
				c->cmsg_level = IPPROTO_UDP;
				c->cmsg_type = UDP_SEGMENT;
				c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
				memcpy(CMSG_DATA(c), &seg[r], sizeof(uint16_t));
				n++;
			}
		}
		if (sendmmsg(fd, msgs, n, 0) < 0)
			sched_yield(); /* send buffer full */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *addr = "127.0.3.12";
	int port = 47920, opt;
	double secs = 1.0, warm = 0.2, t0, t1;
	unsigned long long r0, r1;
	pthread_t rt, st;
	int rfd, sfd;

	while ((opt = getopt(argc, argv, "a:p:m:t:n1")) != -1) {
		switch (opt) {
		case 'a':
			addr = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 'm':
			per_send = atoi(optarg);
			break;
		case 't':
			secs = atof(optarg);
			break;
		case 'n':
			no_crc = true;
			break;
		case '1':
			one_run = true;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-a addr] [-p port] [-m msgs_per_send] "
				"[-t seconds] [-n] [-1]\n",
				argv[0]);
			return 2;
		}
	}
	if (per_send < 1 || per_send > MAX_MSGS || secs <= 0) {
		fprintf(stderr, "roce_shape: -m is 1 to %d, -t positive\n", MAX_MSGS);
		return 2;
	}
	memset(&dst, 0, sizeof(dst));
	dst.sin_family = AF_INET;
	dst.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, addr, &dst.sin_addr) != 1) {
		fprintf(stderr, "roce_shape: bad address %s\n", addr);
		return 2;
	}
	rfd = stream_rx_socket(&dst, "roce_shape");
	if (rfd < 0)
		return 1;
	sfd = stream_tx_socket();

	pthread_create(&rt, NULL, receiver, &rfd);
	pthread_create(&st, NULL, sender, &sfd);
	usleep((useconds_t)(warm * 1e6));
	t0 = now_s();
	r0 = atomic_load(&rx_bytes);
	usleep((useconds_t)(secs * 1e6));
	t1 = now_s();
	r1 = atomic_load(&rx_bytes);
	atomic_store(&stop, true);
	pthread_join(st, NULL);
	pthread_join(rt, NULL);
	printf("rx_gbps %.2f\n", (double)(r1 - r0) * 8 / (t1 - t0) / 1e9);
	if (atomic_load(&rx_bad)) {
		fprintf(stderr, "roce_shape: %llu packets with a bad CRC\n",
			(unsigned long long)atomic_load(&rx_bad));
		return 1;
	}
	return 0;
}
