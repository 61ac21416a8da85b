/* SPDX-License-Identifier: MIT */
/*
 * linkemu.c - a congested link between two network namespaces, in user space: a TUN
 * device in each, and this process between them. What namespace A sends through its TUN
 * waits in one FIFO served at --rate, behind the bytes already queued; a packet that
 * finds more than --limit bytes ahead of it is dropped (tail drop), and an ECN-capable
 * IPv4 one that finds q bytes is marked Congestion Experienced as a RED switch marks
 * (RFC 3168 §5, the DCQCN paper's switch): never below --kmin, with probability rising
 * to --pmax at --kmax, always above. What B sends back passes at once. This machine's
 * kernel has no qdisc that marks (red, fq_codel, pie) nor netem: this stands in for them.
 *
 * Usage: urnic-linkemu --ns-a NAME --ns-b NAME [--dev NAME] --rate BPS [--limit BYTES]
 *                [--kmin BYTES] [--kmax BYTES] [--pmax PERCENT] [--seed N]
 *   Creates TUN device --dev (default "lemu") in /run/netns/NAME of each side, prints
 *   "ready" once both exist, runs until SIGINT or SIGTERM, then prints its figures:
 *   packets, bytes, marked, dropped, the largest and the mean queue an arrival found.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

enum { MAX_PKT = 65536, QUEUE_SLOTS = 16384 };

struct pkt {
	uint64_t depart_ns;
	uint32_t len;
	uint8_t *buf;
};

struct link {
	uint64_t rate_bps, limit, kmin, kmax;
	double pmax;
	struct pkt q[QUEUE_SLOTS];
	uint32_t head, n;
	uint64_t queued_bytes, last_depart_ns;
	/* Figures. */
	uint64_t packets, bytes, marked, dropped, max_queue, queue_sum;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "linkemu: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* A TUN device named dev in namespace ns (/run/netns/ns), its fd non-blocking. */
static int tun_in(const char *ns, const char *dev)
{
	char path[256];
	int self, nsfd, fd;
	struct ifreq ifr = { 0 };

	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (self < 0 || nsfd < 0)
		die(path);
	if (setns(nsfd, CLONE_NEWNET))
		die("setns");
	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		die("/dev/net/tun");
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", dev);
	if (ioctl(fd, TUNSETIFF, &ifr))
		die("TUNSETIFF");
	if (setns(self, CLONE_NEWNET))
		die("setns back");
	close(self);
	close(nsfd);
	return fd;
}

static uint64_t rng = 88172645463325252ull;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / (double)(1ull << 53);
}

/* RFC 3168 §5: CE in the IPv4 header's ECN field, the header checksum fixed (RFC 1624:
 * the TOS byte is the low byte of the header's second 16-bit word). Not ECN-capable,
 * or not IPv4: false. */
static bool mark_ce(uint8_t *p, uint32_t len)
{
	uint32_t sum;
	uint16_t old, new;

	if (len < 20 || (p[0] >> 4) != 4 || !(p[1] & 0x03))
		return false;
	old = (uint16_t)(p[0] << 8 | p[1]);
	p[1] |= 0x03;
	new = (uint16_t)(p[0] << 8 | p[1]);
	sum = (uint32_t)(~(p[10] << 8 | p[11]) & 0xffff) + (~old & 0xffff) + new;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	p[10] = (uint8_t)(~sum >> 8);
	p[11] = (uint8_t)~sum;
	return true;
}

static void enqueue(struct link *l, uint8_t *buf, uint32_t len, uint64_t now)
{
	uint64_t q = l->queued_bytes, start;
	struct pkt *p;

	l->packets++;
	l->queue_sum += q;
	if (q > l->max_queue)
		l->max_queue = q;
	if (q + len > l->limit || l->n == QUEUE_SLOTS) {
		l->dropped++;
		free(buf);
		return;
	}
	if (q >= l->kmin) {
		double pr = q >= l->kmax
				    ? 1.0
				    : l->pmax * (double)(q - l->kmin) / (double)(l->kmax - l->kmin);

		if (uniform() < pr && mark_ce(buf, len))
			l->marked++;
	}
	start = l->last_depart_ns > now ? l->last_depart_ns : now;
	l->last_depart_ns = start + (uint64_t)len * 8u * 1000000000u / l->rate_bps;
	p = &l->q[(l->head + l->n++) % QUEUE_SLOTS];
	*p = (struct pkt){ l->last_depart_ns, len, buf };
	l->queued_bytes += len;
	l->bytes += len;
}

/* Writes what is due by now to fd; returns the next departure (0: none). */
static uint64_t depart(struct link *l, int fd, uint64_t now)
{
	while (l->n) {
		struct pkt *p = &l->q[l->head];

		if (p->depart_ns > now)
			return p->depart_ns;
		if (write(fd, p->buf, p->len) < 0 && errno != EAGAIN && errno != EIO)
			die("write");
		l->queued_bytes -= p->len;
		free(p->buf);
		l->head = (l->head + 1) % QUEUE_SLOTS;
		l->n--;
	}
	return 0;
}

static uint64_t arg_u64(const char *name, const char *v)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno || end == v || *end) {
		fprintf(stderr, "linkemu: %s '%s' is not a number\n", name, v);
		exit(2);
	}
	return x;
}

int main(int argc, char **argv)
{
	static struct link l = { .limit = 1 << 20, .kmin = 5000, .kmax = 200000, .pmax = 0.01 };
	const char *ns_a = NULL, *ns_b = NULL, *dev = "lemu";
	uint8_t back[MAX_PKT];
	int fa, fb;

	for (int i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];

		if (!strcmp(k, "--ns-a"))
			ns_a = v;
		else if (!strcmp(k, "--ns-b"))
			ns_b = v;
		else if (!strcmp(k, "--dev"))
			dev = v;
		else if (!strcmp(k, "--rate"))
			l.rate_bps = arg_u64(k, v);
		else if (!strcmp(k, "--limit"))
			l.limit = arg_u64(k, v);
		else if (!strcmp(k, "--kmin"))
			l.kmin = arg_u64(k, v);
		else if (!strcmp(k, "--kmax"))
			l.kmax = arg_u64(k, v);
		else if (!strcmp(k, "--pmax"))
			l.pmax = (double)arg_u64(k, v) / 100.0;
		else if (!strcmp(k, "--seed"))
			rng = arg_u64(k, v) | 1;
		else {
			fprintf(stderr, "linkemu: unknown option '%s'\n", k);
			return 2;
		}
	}
	if (!ns_a || !ns_b || !l.rate_bps || l.kmax <= l.kmin) {
		fprintf(stderr,
			"usage: urnic-linkemu --ns-a NAME --ns-b NAME --rate BPS [--limit B] "
			"[--kmin B] [--kmax B] [--pmax PERCENT] [--dev NAME] [--seed N]\n");
		return 2;
	}
	fa = tun_in(ns_a, dev);
	fb = tun_in(ns_b, dev);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	prctl(PR_SET_TIMERSLACK, 1ul);
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		struct pollfd pfd[2] = { { fa, POLLIN, 0 }, { fb, POLLIN, 0 } };
		uint64_t t = now_ns(), next = depart(&l, fb, t);
		struct timespec to = { 0, 50000000 }; /* 50 ms: a look at stop */

		if (next)
			to = (struct timespec){ (time_t)((next - t) / 1000000000u),
						(long)((next - t) % 1000000000u) };
		if (ppoll(pfd, 2, &to, NULL) < 0 && errno != EINTR)
			die("ppoll");
		t = now_ns();
		for (int k = 0; k < 64 && (pfd[0].revents & POLLIN); k++) {
			uint8_t *buf = malloc(MAX_PKT);
			ssize_t n;

			if (!buf)
				die("malloc");
			n = read(fa, buf, MAX_PKT);
			if (n <= 0) {
				free(buf);
				break;
			}
			enqueue(&l, buf, (uint32_t)n, t);
		}
		for (int k = 0; k < 64 && (pfd[1].revents & POLLIN); k++) {
			ssize_t n = read(fb, back, sizeof(back));

			if (n <= 0)
				break;
			if (write(fa, back, (size_t)n) < 0 && errno != EAGAIN && errno != EIO)
				die("write");
		}
	}
	printf("packets %llu bytes %llu marked %llu dropped %llu max_queue %llu mean_queue %llu\n",
	       (unsigned long long)l.packets, (unsigned long long)l.bytes,
	       (unsigned long long)l.marked, (unsigned long long)l.dropped,
	       (unsigned long long)l.max_queue,
	       (unsigned long long)(l.packets ? l.queue_sum / l.packets : 0));
	return 0;
}
