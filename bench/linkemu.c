/* SPDX-License-Identifier: MIT */
/*
 * linkemu.c - congested links between two network namespaces, in user space: a TUN
 * device in each, and this process between them. What namespace A sends through its TUN
 * goes over one of --links parallel links (ECMP: a hash of the IPv4 5-tuple, addresses,
 * protocol and the UDP or TCP ports, picks it, as a router's multipath hash does), each
 * a FIFO served at its rate, behind the bytes already queued; a packet that finds more
 * than --limit bytes ahead of it is dropped (tail drop), and an ECN-capable IPv4 one
 * that finds q bytes is marked Congestion Experienced as a RED switch marks (RFC 3168
 * §5, the DCQCN paper's switch): never below --kmin, with probability rising to --pmax
 * at --kmax, always above. A link may also lose packets at random, add a propagation
 * delay, or go down at a given time. What B sends back passes at once. This machine's
 * kernel has no qdisc that marks (red, fq_codel, pie) nor netem: this stands in for them.
 *
 * Usage: urnic-linkemu --ns-a NAME --ns-b NAME [--dev NAME] --rate [L:]BPS [--links N]
 *                [--limit BYTES] [--kmin BYTES] [--kmax BYTES] [--pmax PERCENT]
 *                [--loss [L:]PPM] [--delay [L:]US] [--down L:MS] [--seed N]
 *   Creates TUN device --dev (default "lemu") in /run/netns/NAME of each side, prints
 *   "ready" once both exist, runs until SIGINT or SIGTERM, then prints its figures: a
 *   line per link when there are several ("link L packets ..."), then the sum: packets,
 *   bytes, marked, dropped (tail), lost (at random or down), the largest and the mean
 *   queue an arrival found. "L:" before a value sets it for link L (from 0) alone; a bare
 *   value, for every link. --down L:MS takes link L down MS milliseconds after "ready".
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

enum { MAX_PKT = 65536, QUEUE_SLOTS = 16384, MAX_LINKS = 8 };

struct pkt {
	uint64_t depart_ns;
	uint32_t len;
	uint8_t *buf;
};

struct link {
	uint64_t rate_bps, limit, kmin, kmax;
	double pmax;
	uint32_t loss_ppm;
	uint64_t delay_ns;
	uint64_t down_after_ns; /* from "ready"; 0: never */
	struct pkt q[QUEUE_SLOTS];
	uint32_t head, n;
	uint64_t last_serial_ns;
	/* Figures. */
	uint64_t packets, bytes, marked, dropped, lost, max_queue, queue_sum;
};

static struct link links[MAX_LINKS];
static unsigned nlinks = 1;
static uint64_t ready_ns;

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

/* The link an IPv4 packet's 5-tuple hashes to (FNV-1a); link 0 for anything else. */
static struct link *pick(const uint8_t *p, uint32_t len)
{
	uint32_t h = 2166136261u, ihl, n = 0;
	uint8_t key[13];

	if (nlinks == 1 || len < 20 || (p[0] >> 4) != 4)
		return &links[0];
	ihl = (p[0] & 0x0fu) * 4;
	memcpy(key, p + 12, 8); /* source, destination */
	key[8] = p[9];
	n = 9;
	if ((p[9] == 17 || p[9] == 6) && len >= ihl + 4) {
		memcpy(key + 9, p + ihl, 4); /* ports */
		n = 13;
	}
	for (uint32_t i = 0; i < n; i++)
		h = (h ^ key[i]) * 16777619u;
	return &links[h % nlinks];
}

/* The bytes an arrival finds ahead of it: those not yet serialized (a FIFO at a
 * constant rate), not those still in flight over the link's delay. */
static uint64_t backlog(const struct link *l, uint64_t now)
{
	if (l->last_serial_ns <= now)
		return 0;
	return (l->last_serial_ns - now) * l->rate_bps / 8u / 1000000000u;
}

static void enqueue(struct link *l, uint8_t *buf, uint32_t len, uint64_t now)
{
	uint64_t q = backlog(l, now), start;
	struct pkt *p;

	l->packets++;
	l->queue_sum += q;
	if (q > l->max_queue)
		l->max_queue = q;
	if ((l->down_after_ns && now - ready_ns >= l->down_after_ns) ||
	    (l->loss_ppm && uniform() * 1e6 < l->loss_ppm)) {
		l->lost++;
		free(buf);
		return;
	}
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
	/* Serialized after what is ahead, then in flight for the link's delay. */
	start = l->last_serial_ns > now ? l->last_serial_ns : now;
	l->last_serial_ns = start + (uint64_t)len * 8u * 1000000000u / l->rate_bps;
	p = &l->q[(l->head + l->n++) % QUEUE_SLOTS];
	*p = (struct pkt){ l->last_serial_ns + l->delay_ns, len, buf };
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

/* "[L:]VALUE": the link named (or -1: every link) and the value. */
static int arg_link(const char *name, const char *v, uint64_t *value)
{
	const char *colon = strchr(v, ':');
	uint64_t l;
	char num[32];

	if (!colon) {
		*value = arg_u64(name, v);
		return -1;
	}
	if ((size_t)(colon - v) >= sizeof(num)) {
		fprintf(stderr, "linkemu: %s '%s' is not [LINK:]VALUE\n", name, v);
		exit(2);
	}
	memcpy(num, v, (size_t)(colon - v));
	num[colon - v] = 0;
	l = arg_u64(name, num);
	if (l >= MAX_LINKS) {
		fprintf(stderr, "linkemu: %s '%s': links are 0 to %d\n", name, v, MAX_LINKS - 1);
		exit(2);
	}
	*value = arg_u64(name, colon + 1);
	return (int)l;
}

enum which { RATE, LOSS, DELAY, DOWN };

/* Sets a per-link field of link l (-1: all of them). */
static void set_links(int l, enum which w, uint64_t v)
{
	for (unsigned i = 0; i < MAX_LINKS; i++) {
		if (l >= 0 && (unsigned)l != i)
			continue;
		if (w == RATE)
			links[i].rate_bps = v;
		else if (w == LOSS)
			links[i].loss_ppm = (uint32_t)v;
		else if (w == DELAY)
			links[i].delay_ns = v * 1000u;
		else
			links[i].down_after_ns = v * 1000000u;
	}
}

static void print_figures(const char *label, const struct link *l)
{
	printf("%spackets %llu bytes %llu marked %llu dropped %llu max_queue %llu mean_queue "
	       "%llu lost %llu\n",
	       label, (unsigned long long)l->packets, (unsigned long long)l->bytes,
	       (unsigned long long)l->marked, (unsigned long long)l->dropped,
	       (unsigned long long)l->max_queue,
	       (unsigned long long)(l->packets ? l->queue_sum / l->packets : 0),
	       (unsigned long long)l->lost);
}

int main(int argc, char **argv)
{
	uint64_t limit = 1 << 20, kmin = 5000, kmax = 200000, pmax = 1, v;
	const char *ns_a = NULL, *ns_b = NULL, *dev = "lemu";
	uint8_t back[MAX_PKT];
	struct link sum = { 0 };
	int fa, fb, l;

	for (int i = 1; i < argc; i += 2) {
		const char *k = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!val) {
			fprintf(stderr, "linkemu: option '%s' needs a value\n", k);
			return 2;
		}
		if (!strcmp(k, "--ns-a")) {
			ns_a = val;
		} else if (!strcmp(k, "--ns-b")) {
			ns_b = val;
		} else if (!strcmp(k, "--dev")) {
			dev = val;
		} else if (!strcmp(k, "--links")) {
			v = arg_u64(k, val);
			if (v < 1 || v > MAX_LINKS) {
				fprintf(stderr, "linkemu: --links '%s': 1 to %d\n", val, MAX_LINKS);
				return 2;
			}
			nlinks = (unsigned)v;
		} else if (!strcmp(k, "--rate")) {
			l = arg_link(k, val, &v);
			set_links(l, RATE, v);
		} else if (!strcmp(k, "--loss")) {
			l = arg_link(k, val, &v);
			if (v > 1000000) {
				fprintf(stderr, "linkemu: --loss '%s': at most 1000000 ppm\n", val);
				return 2;
			}
			set_links(l, LOSS, v);
		} else if (!strcmp(k, "--delay")) {
			l = arg_link(k, val, &v);
			set_links(l, DELAY, v);
		} else if (!strcmp(k, "--down")) {
			l = arg_link(k, val, &v);
			if (l < 0 || v == 0) {
				fprintf(stderr, "linkemu: --down '%s' is not LINK:MS, MS over 0\n",
					val);
				return 2;
			}
			set_links(l, DOWN, v);
		} else if (!strcmp(k, "--limit")) {
			limit = arg_u64(k, val);
		} else if (!strcmp(k, "--kmin")) {
			kmin = arg_u64(k, val);
		} else if (!strcmp(k, "--kmax")) {
			kmax = arg_u64(k, val);
		} else if (!strcmp(k, "--pmax")) {
			pmax = arg_u64(k, val);
		} else if (!strcmp(k, "--seed")) {
			rng = arg_u64(k, val) | 1;
		} else {
			fprintf(stderr, "linkemu: unknown option '%s'\n", k);
			return 2;
		}
	}
	for (unsigned i = 0; i < nlinks; i++) {
		if (!links[i].rate_bps) {
			fprintf(stderr, "linkemu: link %u has no --rate\n", i);
			return 2;
		}
		links[i].limit = limit;
		links[i].kmin = kmin;
		links[i].kmax = kmax;
		links[i].pmax = (double)pmax / 100.0;
	}
	if (!ns_a || !ns_b || kmax <= kmin) {
		fprintf(stderr, "usage: urnic-linkemu --ns-a NAME --ns-b NAME --rate [L:]BPS "
				"[--links N] [--limit B] [--kmin B] [--kmax B] [--pmax PERCENT] "
				"[--loss [L:]PPM] [--delay [L:]US] [--down L:MS] [--dev NAME] "
				"[--seed N]\n");
		return 2;
	}
	fa = tun_in(ns_a, dev);
	fb = tun_in(ns_b, dev);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	prctl(PR_SET_TIMERSLACK, 1ul);
	ready_ns = now_ns();
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		struct pollfd pfd[2] = { { fa, POLLIN, 0 }, { fb, POLLIN, 0 } };
		uint64_t t = now_ns(), next = 0;
		struct timespec to = { 0, 50000000 }; /* 50 ms: a look at stop */

		for (unsigned i = 0; i < nlinks; i++) {
			uint64_t d = depart(&links[i], fb, t);

			if (d && (!next || d < next))
				next = d;
		}
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
			enqueue(pick(buf, (uint32_t)n), buf, (uint32_t)n, t);
		}
		for (int k = 0; k < 64 && (pfd[1].revents & POLLIN); k++) {
			ssize_t n = read(fb, back, sizeof(back));

			if (n <= 0)
				break;
			if (write(fa, back, (size_t)n) < 0 && errno != EAGAIN && errno != EIO)
				die("write");
		}
	}
	for (unsigned i = 0; i < nlinks; i++) {
		const struct link *k = &links[i];
		char label[32];

		sum.packets += k->packets;
		sum.bytes += k->bytes;
		sum.marked += k->marked;
		sum.dropped += k->dropped;
		sum.lost += k->lost;
		sum.queue_sum += k->queue_sum;
		if (k->max_queue > sum.max_queue)
			sum.max_queue = k->max_queue;
		if (nlinks > 1) {
			snprintf(label, sizeof(label), "link %u ", i);
			print_figures(label, k);
		}
	}
	print_figures("", &sum);
	return 0;
}
