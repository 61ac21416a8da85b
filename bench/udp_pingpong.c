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
 * socket, to tell the transport's own cost from the RoCE processing. -R (root) receives
 * from a packet ring instead (AF_PACKET TPACKET_V2 on lo, filtered to the side's own
 * address and port; the socket drops everything), spinning on the next frame's status
 * word: the receive without a system call that urnic's URNIC_RING=1 uses
 * (src/transport/ring.h), for reference. -U MODE receives through io_uring instead: one
 * multishot recv armed on the socket with a ring of provided buffers, each side spinning
 * on its completion queue (a memory read while nothing came). How the kernel runs the
 * receive when a datagram arrives is the mode: 0, the ring's defaults (the receive is
 * task work for the spinning process, which an interrupt makes it run); 1, cooperative
 * (IORING_SETUP_COOP_TASKRUN | TASKRUN_FLAG: the kernel only raises a flag in the ring,
 * and the process enters the kernel once to run the receive: a system call per
 * datagram that arrived, none while nothing did). Whether io_uring would pay off for
 * urnic's receive (docs/performance.md, "Tried and not kept").
 *
 * usage: udp_pingpong [-a addr_a] [-b addr_b] [-p port] [-s size] [-n iters] [-c A,B] [-P] [-G]
 * [-R] [-U 0|1]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <liburing.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/mman.h>
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

static int ring_flag;	    /* -R: receive from a packet ring */
static int uring_mode = -1; /* -U: receive through io_uring (-1: not) */

enum { UR_BUFS = 64, UR_BUF = 2048, UR_BGID = 1 };

static struct io_uring uring;
static struct io_uring_buf_ring *ur_bufring;
static char *ur_bufs;

/* Arms one multishot recv on fd, its buffers from group UR_BGID. */
static int uring_arm(int fd)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&uring);

	if (!sqe)
		return -1;
	io_uring_prep_recv_multishot(sqe, fd, NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = UR_BGID;
	return io_uring_submit(&uring) == 1 ? 0 : -1;
}

static int uring_open(int fd)
{
	unsigned int flags =
		uring_mode == 1 ? IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG : 0;
	struct io_uring_buf_reg reg = { .ring_entries = UR_BUFS, .bgid = UR_BGID };
	void *m;

	if (io_uring_queue_init(64, &uring, flags) < 0)
		return -1;
	m = mmap(NULL, UR_BUFS * sizeof(struct io_uring_buf), PROT_READ | PROT_WRITE,
		 MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
	ur_bufs = malloc((size_t)UR_BUFS * UR_BUF);
	if (m == MAP_FAILED || !ur_bufs)
		return -1;
	ur_bufring = m;
	reg.ring_addr = (unsigned long)(uintptr_t)m;
	if (io_uring_register_buf_ring(&uring, &reg, 0) < 0)
		return -1;
	io_uring_buf_ring_init(ur_bufring);
	for (int i = 0; i < UR_BUFS; i++)
		io_uring_buf_ring_add(ur_bufring, ur_bufs + (size_t)i * UR_BUF, UR_BUF,
				      (unsigned short)i, io_uring_buf_ring_mask(UR_BUFS), i);
	io_uring_buf_ring_advance(ur_bufring, UR_BUFS);
	return uring_arm(fd);
}

/* The next datagram's length, spinning on the completion queue for at most 2 s. */
static ssize_t uring_recv(int fd)
{
	struct io_uring_cqe *cqe = NULL;
	struct timespec t0, t;
	unsigned int bid, cflags;
	int res;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned int spins = 0;; spins++) {
		/* Cooperative: the receive waits in the kernel until asked for. */
		if (uring_mode == 1 && (IO_URING_READ_ONCE(*uring.sq.kflags) & IORING_SQ_TASKRUN))
			io_uring_get_events(&uring);
		if (__io_uring_peek_cqe(&uring, &cqe, NULL) == 0 && cqe)
			break;
		if ((spins & 0xfffff) == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec > 2)
				return -1;
		}
	}
	res = cqe->res;
	cflags = cqe->flags;
	io_uring_cqe_seen(&uring, cqe);
	if (res >= 0 && (cflags & IORING_CQE_F_BUFFER)) {
		bid = cflags >> IORING_CQE_BUFFER_SHIFT;
		io_uring_buf_ring_add(ur_bufring, ur_bufs + (size_t)bid * UR_BUF, UR_BUF,
				      (unsigned short)bid, io_uring_buf_ring_mask(UR_BUFS), 0);
		io_uring_buf_ring_advance(ur_bufring, 1);
	}
	if (!(cflags & IORING_CQE_F_MORE) && uring_arm(fd) < 0)
		return -1;
	return res < 0 ? uring_recv(fd) : res; /* a multishot that ended: re-armed */
}

enum { RING_FRAME = 4096, RING_FRAMES = 64 };

static int ring_fd = -1;
static uint8_t *ring_map;
static unsigned int ring_head;

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

/* The ring for datagrams to sa (IPv4 UDP, its address and port), and a socket filter
 * that makes fd drop them all. */
static int ring_open(int fd, const struct sockaddr_in *sa)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x0800, 0, 7),
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 23),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 17, 0, 5),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 30),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ntohl(sa->sin_addr.s_addr), 0, 3),
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 36),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ntohs(sa->sin_port), 0, 1),
		BPF_STMT(BPF_RET | BPF_K, RING_FRAME),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_filter none[] = { BPF_STMT(BPF_RET | BPF_K, 0) };
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f }, drop = { 1, none };
	struct tpacket_req req = { RING_FRAME, RING_FRAMES, RING_FRAME, RING_FRAMES };
	struct sockaddr_ll ll = { .sll_family = AF_PACKET,
				  .sll_protocol = htons(ETH_P_IP),
				  .sll_ifindex = (int)if_nametoindex("lo") };
	int v2 = TPACKET_V2, one = 1;

	ring_fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (ring_fd < 0 || setsockopt(ring_fd, SOL_PACKET, PACKET_VERSION, &v2, sizeof(v2)) < 0 ||
	    setsockopt(ring_fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) < 0 ||
	    setsockopt(ring_fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) < 0 ||
	    setsockopt(ring_fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) < 0)
		return -1;
	ring_map = mmap(NULL, (size_t)RING_FRAME * RING_FRAMES, PROT_READ | PROT_WRITE, MAP_SHARED,
			ring_fd, 0);
	if (ring_map == MAP_FAILED || bind(ring_fd, (struct sockaddr *)&ll, sizeof(ll)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &drop, sizeof(drop)) < 0)
		return -1;
	return 0;
}

/* The next frame's UDP payload length, spinning on its status for at most 2 s. */
static ssize_t ring_recv(void)
{
	struct tpacket2_hdr *h =
		(struct tpacket2_hdr *)(void *)(ring_map + (size_t)ring_head * RING_FRAME);
	struct timespec t0, t;
	ssize_t len;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned int spins = 0;
	     !(__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER); spins++) {
		if ((spins & 0xfffff) == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec > 2)
				return -1;
		}
	}
	len = (ssize_t)h->tp_len - 14 - 20 - 8;
	__atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
	ring_head = (ring_head + 1) % RING_FRAMES;
	return len;
}

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
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctrl,
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

	if (ring_flag)
		return ring_recv();
	if (uring_mode >= 0)
		return uring_recv(fd);
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

	while ((opt = getopt(argc, argv, "a:b:p:s:n:c:PGRU:")) != -1) {
		switch (opt) {
		case 'a':
			a = optarg;
			break;
		case 'b':
			b = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 's':
			size = atoi(optarg);
			break;
		case 'n':
			iters = atoi(optarg);
			break;
		case 'P':
			poll_flag = 1;
			break;
		case 'G':
			gso_pair = 1;
			break;
		case 'R':
			ring_flag = 1;
			break;
		case 'U':
			uring_mode = atoi(optarg);
			break;
		case 'c':
			if (sscanf(optarg, "%d,%d", &cpu_a, &cpu_b) != 2)
				return 2;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-a addr] [-b addr] [-p port] [-s size] [-n iters] [-c "
				"cpu,cpu] [-P] [-G] [-R] [-U 0|1]\n",
				argv[0]);
			return 2;
		}
	}
	if (size < 1 || size > (int)sizeof(buf) || iters < 1)
		return 2;
	if ((ring_flag || uring_mode >= 0) && gso_pair) {
		fprintf(stderr, "udp_pingpong: -R and -U take single datagrams: not with -G\n");
		return 2;
	}
	if (uring_mode > 1 || (uring_mode >= 0 && (ring_flag || size > UR_BUF))) {
		fprintf(stderr, "udp_pingpong: -U is 0 or 1, not with -R, for sizes up to %d\n",
			UR_BUF);
		return 2;
	}
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
		if (ring_flag && ring_open(fb, &sb) < 0)
			_exit(3);
		if (uring_mode >= 0 && uring_open(fb) < 0)
			_exit(3);
		for (int i = 0; i < warm + iters; i++) {
			if (recv_one(fb, buf, sizeof(buf)) < 0 ||
			    send_one(fb, buf, (size_t)size) < 0)
				_exit(1);
		}
		_exit(0);
	}
	pin(cpu_a);
	close(fb);
	if (ring_flag && ring_open(fa, &sa) < 0) {
		perror("udp_pingpong: packet ring");
		kill(child, SIGKILL);
		return 1;
	}
	if (uring_mode >= 0 && uring_open(fa) < 0) {
		perror("udp_pingpong: io_uring");
		kill(child, SIGKILL);
		return 1;
	}
	if (ring_flag || uring_mode >= 0)
		usleep(100000); /* the echo side's ring is bound, its receive armed */
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
