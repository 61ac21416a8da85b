/* SPDX-License-Identifier: MIT */
/*
 * udp_pingpong.c - raw UDP ping-pong latency on loopback: two processes, blocking
 * recv, one small datagram in flight. Prints half the round trip (the figure
 * ib_write_lat reports), median and mean, in microseconds:
 *
 *   rtt2_median_us 7.61
 *   rtt2_mean_us 8.02
 *
 * -c A,B pins the two processes to CPUs A and B. On a VM the placement matters: a
 * wakeup on the same CPU is a context switch, one on another (idle, halted) vCPU also
 * costs the hypervisor's wakeup of that vCPU. -P polls instead of blocking: each side
 * spins on a non-blocking recv (MSG_DONTWAIT), as a polling RDMA stack (or UCX) does;
 * on two CPUs nothing then sleeps or is woken. -G gives each message the shape of an
 * RC one-way trip over urnic (a request and the held ACK of the previous one): a GSO
 * send of two size-byte segments (UDP_SEGMENT), received with recvmmsg on a UDP_GRO
 * socket, to tell the transport's own cost from the RoCE processing.
 *
 * usage: udp_pingpong [-a addr_a] [-b addr_b] [-p port] [-s size] [-n iters] [-c A,B] [-P] [-G]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		perror("udp_pingpong: sched_setaffinity");
}

static int poll_flag; /* MSG_DONTWAIT with -P */
static int gso_pair;  /* -G: two segments per message, GSO out, GRO + recvmmsg in */

/* recv, or with -G one recvmmsg of up to 8 (what arrives is one GRO datagram). */
static ssize_t recv_call(int fd, char *buf, size_t len, int flags)
{
	struct iovec iov[8];
	struct mmsghdr m[8];
	char ctrl[8][64];
	int n;

	if (!gso_pair)
		return recv(fd, buf, len, flags);
	memset(m, 0, sizeof(m));
	for (int i = 0; i < 8; i++) {
		iov[i] = (struct iovec){ buf, len };
		m[i].msg_hdr.msg_iov = &iov[i];
		m[i].msg_hdr.msg_iovlen = 1;
		m[i].msg_hdr.msg_control = ctrl[i];
		m[i].msg_hdr.msg_controllen = sizeof(ctrl[i]);
	}
	n = recvmmsg(fd, m, 8, flags, NULL);
	return n > 0 ? (ssize_t)m[0].msg_len : -1;
}

/* send, or with -G one GSO send of two size-byte segments. */
static ssize_t send_one(int fd, const char *buf, size_t size)
{
	char ctrl[CMSG_SPACE(sizeof(uint16_t))];
	struct iovec iov = { (void *)buf, 2 * size };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctrl,
			    .msg_controllen = sizeof(ctrl) };
	struct cmsghdr *c;
	uint16_t seg = (uint16_t)size;

	if (!gso_pair)
		return send(fd, buf, size, 0);
	memset(ctrl, 0, sizeof(ctrl));
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = IPPROTO_UDP;
	c->cmsg_type = UDP_SEGMENT;
	c->cmsg_len = CMSG_LEN(sizeof(seg));
	memcpy(CMSG_DATA(c), &seg, sizeof(seg));
	return sendmsg(fd, &m, 0);
}

/* recv, spinning on EAGAIN when polling, for at most 2 s (a lost packet ends the run). */
static ssize_t recv_one(int fd, char *buf, size_t len)
{
	struct timespec t0, t;
	ssize_t n;

	if (!poll_flag)
		return recv_call(fd, buf, len, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned spins = 0;; spins++) {
		n = recv_call(fd, buf, len, MSG_DONTWAIT);
		if (n >= 0 || errno != EAGAIN)
			return n;
		if ((spins & 1023) == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec > 2)
				return -1;
		}
	}
}

static int sock_at(const char *addr, int port, struct sockaddr_in *sa)
{
	struct timeval tv = { 2, 0 };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, addr, &sa->sin_addr) != 1 || fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)); /* a lost packet ends the run */
	if (bind(fd, (struct sockaddr *)sa, sizeof(*sa)) < 0) {
		perror("udp_pingpong: bind");
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	const char *a = "127.0.3.10", *b = "127.0.3.11";
	int port = 47920, size = 8, iters = 20000, warm = 1000, opt, cpu_a = -1, cpu_b = -1;
	struct sockaddr_in sa, sb;
	char buf[65536];
	double *rtt, sum = 0;
	int fa, fb, status;
	pid_t child;

	while ((opt = getopt(argc, argv, "a:b:p:s:n:c:PG")) != -1) {
		switch (opt) {
		case 'a': a = optarg; break;
		case 'b': b = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 's': size = atoi(optarg); break;
		case 'n': iters = atoi(optarg); break;
		case 'P': poll_flag = 1; break;
		case 'G': gso_pair = 1; break;
		case 'c':
			if (sscanf(optarg, "%d,%d", &cpu_a, &cpu_b) != 2)
				return 2;
			break;
		default:
			fprintf(stderr, "usage: %s [-a addr] [-b addr] [-p port] [-s size] [-n iters] [-c cpu,cpu] [-P] [-G]\n",
				argv[0]);
			return 2;
		}
	}
	if (size < 1 || size > (int)sizeof(buf) || iters < 1)
		return 2;
	fa = sock_at(a, port, &sa);
	fb = sock_at(b, port, &sb);
	if (fa < 0 || fb < 0)
		return 1;
	if (gso_pair) {
		int one = 1;

		if (2 * size > (int)sizeof(buf) ||
		    setsockopt(fa, IPPROTO_UDP, UDP_GRO, &one, sizeof(one)) < 0 ||
		    setsockopt(fb, IPPROTO_UDP, UDP_GRO, &one, sizeof(one)) < 0) {
			perror("udp_pingpong: UDP_GRO");
			return 1;
		}
	}
	if (connect(fa, (struct sockaddr *)&sb, sizeof(sb)) < 0 ||
	    connect(fb, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("udp_pingpong: connect");
		return 1;
	}
	memset(buf, 0x5a, sizeof(buf));
	child = fork();
	if (child == 0) { /* the echo side */
		pin(cpu_b);
		close(fa);
		for (int i = 0; i < warm + iters; i++) {
			if (recv_one(fb, buf, sizeof(buf)) < 0 || send_one(fb, buf, (size_t)size) < 0)
				_exit(1);
		}
		_exit(0);
	}
	pin(cpu_a);
	close(fb);
	rtt = calloc((size_t)iters, sizeof(*rtt));
	for (int i = 0; i < warm + iters; i++) {
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (send_one(fa, buf, (size_t)size) < 0 || recv_one(fa, buf, sizeof(buf)) < 0) {
			perror("udp_pingpong");
			kill(child, SIGKILL);
			return 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (i >= warm) {
			rtt[i - warm] = (double)(t1.tv_sec - t0.tv_sec) * 1e6 +
					(double)(t1.tv_nsec - t0.tv_nsec) / 1e3;
			sum += rtt[i - warm];
		}
	}
	waitpid(child, &status, 0);
	qsort(rtt, (size_t)iters, sizeof(*rtt), cmp_double);
	printf("rtt2_median_us %.2f\n", rtt[iters / 2] / 2);
	printf("rtt2_mean_us %.2f\n", sum / iters / 2);
	free(rtt);
	return 0;
}
