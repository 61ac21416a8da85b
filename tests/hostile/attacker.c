/* SPDX-License-Identifier: MIT */
/*
 * attacker.c - a hostile RoCEv2 peer: crafts packets by hand on a plain UDP socket and
 * checks what a running urnic device (hostile_target, its child) answers.
 *
 * Packets are built with src/wire (urnic_pkt_encode_hdr, urnic_icrc_flow with IP ID 0 and
 * our real source port: Linux sends ID 0 from an unconnected socket with
 * IP_PMTUDISC_DO, which we set). urnic answers to our address's UDP port 4791, so that
 * is the port we bind. Each scenario asserts, per IBTA 9.7.5.1 and rxe's responder
 * (rxe-siw-perftest.md §1.4, §2.8, §2.11): the reply (ACK/NAK syndrome, PSN, MSN) or
 * silence; that the named device counter moved (read from the target's
 * /dev/shm/urnic.<pid>.<dev>); that memory outside what was granted is unchanged (guard
 * and region checksums against a shadow copy of every region); and that the target is
 * alive and serving afterwards (a READ on a QP that was not attacked, or on the same QP
 * when the attack must leave it working). A failed check is reported and the scenario
 * goes on, so one run lists every deviation; the exit status is 1 if any failed.
 *
 * Usage: hostile_attacker --target PATH --target-addr IP --addr IP --spoof-addr IP SCENARIO
 *        hostile_attacker --list
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "counters_file.h"
#include "hostile.h"
#include "wire/byteorder.h"
#include "wire/pkt.h"
#include "wire/psn.h"

enum {
	MTU = 1024,
	REPLY_MS = 2000, /* how long an expected reply may take */
	SILENCE_MS = 30, /* after the target has processed a packet, its reply is already out */
	MAX_ANS = 70000, /* answer lines kept from one command */
	PKT_MAX = 9000,
};

/* ---- state ---- */

struct mrinfo {
	uint64_t addr;
	uint64_t len;
	uint32_t rkey;
};

struct qpinfo {
	uint32_t qpn;  /* the target's */
	uint32_t dest; /* ours, as the target knows it */
	uint32_t rq_psn, sq_psn;
	uint32_t epsn; /* the next PSN the target's responder expects from us */
	uint32_t msn;  /* the target's responder MSN as we count it */
	uint32_t rq_off[HOSTILE_MAX_RECV * 64]; /* posted receive slots, FIFO */
	uint32_t rq_head, rq_tail;
};

struct topts {
	int qps, recv, max_dest_rd_atomic, min_rnr_timer, timeout, retry, rnr_retry;
};

struct reply {
	struct urnic_pkt pkt;
	uint8_t buf[65536];
	size_t len;
	uint16_t sport;
	bool icrc_ok;
	bool decoded;
};

static struct {
	const char *target_path, *scenario;
	char addr_s[64], taddr_s[64], spoof_s[64];
	uint8_t addr[4], taddr[4], spoof[4];
	int fd, spoof_fd;
	/* the target */
	pid_t pid;
	int to_fd, from_fd;
	char lbuf[1 << 17];
	size_t lhave;
	char *ans[MAX_ANS];
	int nans;
	char dev[64];
	char ctr_path[256];
	struct mrinfo mr[HR_COUNT];
	struct qpinfo qp[HOSTILE_MAX_QPS];
	int nqps;
	struct topts o;
	uint8_t *shadow[HR_COUNT];
	uint64_t base_lo[HR_COUNT], base_hi[HR_COUNT];
	uint64_t rx_sent; /* datagrams we sent to the target */
	unsigned probes;
	int failures;
	struct reply r; /* the last reply received */
} A;

/* ---- reporting ---- */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("%s: ", A.scenario);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
}

static void fail_at(int line, const char *expr, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail_at(int line, const char *expr, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("%s: FAIL (attacker.c:%d: %s): ", A.scenario, line, expr);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
	A.failures++;
}

static void stop_target(void);

/* A failed EXPECT is counted and the scenario goes on; a failed REQUIRE ends it. */
#define EXPECT(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond))                                                                       \
			fail_at(__LINE__, #cond, __VA_ARGS__);                                     \
	} while (0)
#define REQUIRE(cond, ...)                                                                         \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fail_at(__LINE__, #cond, __VA_ARGS__);                                     \
			stop_target();                                                             \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* ---- the target process and its command pipe ---- */

/* One line from the target's stdout into line (without the newline); false on EOF or
 * after timeout_ms. */
static bool tline(char *line, size_t cap, int timeout_ms)
{
	uint64_t end = now_ms() + (uint64_t)timeout_ms;

	for (;;) {
		char *nl = memchr(A.lbuf, '\n', A.lhave);
		struct pollfd p = { .fd = A.from_fd, .events = POLLIN };
		uint64_t t = now_ms();
		ssize_t n;

		if (nl) {
			size_t used = (size_t)(nl - A.lbuf) + 1;
			size_t n_copy = used - 1 < cap - 1 ? used - 1 : cap - 1;

			memcpy(line, A.lbuf, n_copy);
			line[n_copy] = 0;
			memmove(A.lbuf, A.lbuf + used, A.lhave - used);
			A.lhave -= used;
			return true;
		}
		if (t >= end || A.lhave == sizeof(A.lbuf))
			return false;
		if (poll(&p, 1, (int)(end - t)) <= 0)
			continue;
		n = read(A.from_fd, A.lbuf + A.lhave, sizeof(A.lbuf) - A.lhave);
		if (n <= 0)
			return false;
		A.lhave += (size_t)n;
	}
}

static void free_ans(void)
{
	for (int i = 0; i < A.nans; i++)
		free(A.ans[i]);
	A.nans = 0;
}

static void track_recv_line(const char *line)
{
	int qi;
	unsigned long long id;
	unsigned off, len;

	if (sscanf(line, "recv %d %llx %u %u", &qi, &id, &off, &len) == 4 && qi >= 0 &&
	    qi < HOSTILE_MAX_QPS) {
		struct qpinfo *q = &A.qp[qi];

		q->rq_off[q->rq_tail++ % (sizeof(q->rq_off) / sizeof(q->rq_off[0]))] = off;
	}
}

/* Sends a command and collects its answer lines (up to "end") in A.ans. */
static void tcmd(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void tcmd(const char *fmt, ...)
{
	char cmd[256], line[1 << 16];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd) - 1, fmt, ap);
	va_end(ap);
	cmd[n++] = '\n';
	free_ans();
	REQUIRE(write(A.to_fd, cmd, (size_t)n) == n, "cannot write to the target: %s",
		strerror(errno));
	for (;;) {
		REQUIRE(tline(line, sizeof(line), 10000), "the target did not answer '%.*s'", n - 1,
			cmd);
		if (strcmp(line, "end") == 0)
			return;
		if (strncmp(line, "error", 5) == 0)
			fail_at(__LINE__, "target", "the target answered '%s' to '%.*s'", line,
				n - 1, cmd);
		track_recv_line(line);
		if (A.nans < MAX_ANS)
			A.ans[A.nans++] = strdup(line);
	}
}

static void parse_startup(void)
{
	char line[512];
	int got_ready = 0;

	while (!got_ready) {
		char name[32];
		unsigned long long addr, len;
		unsigned rkey, qpn, dest, rq, sq;
		int i, pid;

		REQUIRE(tline(line, sizeof(line), 15000), "the target did not become ready");
		if (strcmp(line, "ready") == 0) {
			got_ready = 1;
		} else if (sscanf(line, "target pid %d dev %63s", &pid, A.dev) == 2) {
			snprintf(A.ctr_path, sizeof(A.ctr_path), "/dev/shm/urnic.%d.%s", pid,
				 A.dev);
		} else if (sscanf(line, "mr %31s addr %llx len %llu rkey %x", name, &addr, &len,
				  &rkey) == 4) {
			for (int r = 0; r < HR_COUNT; r++)
				if (strcmp(name, hostile_region_names[r]) == 0)
					A.mr[r] = (struct mrinfo){ addr, len, rkey };
		} else if (sscanf(line, "qp %d qpn %x dest %x rq_psn %x sq_psn %x", &i, &qpn, &dest,
				  &rq, &sq) == 5 &&
			   i >= 0 && i < HOSTILE_MAX_QPS) {
			A.qp[i].qpn = qpn;
			A.qp[i].dest = dest;
			A.qp[i].rq_psn = A.qp[i].epsn = rq;
			A.qp[i].sq_psn = sq;
			if (i + 1 > A.nqps)
				A.nqps = i + 1;
		} else {
			track_recv_line(line);
		}
	}
}

static void start_target(const struct topts *o)
{
	int to[2], from[2];
	char a[9][32];
	char *argv[32];
	int n = 0;

	A.o = *o;
	REQUIRE(pipe(to) == 0 && pipe(from) == 0, "pipe: %s", strerror(errno));
	snprintf(a[0], sizeof(a[0]), "%d", o->qps);
	snprintf(a[1], sizeof(a[1]), "%d", o->recv);
	snprintf(a[2], sizeof(a[2]), "%d", o->max_dest_rd_atomic);
	snprintf(a[3], sizeof(a[3]), "%d", o->min_rnr_timer);
	snprintf(a[4], sizeof(a[4]), "%d", o->timeout);
	snprintf(a[5], sizeof(a[5]), "%d", o->retry);
	snprintf(a[6], sizeof(a[6]), "%d", o->rnr_retry);
	argv[n++] = (char *)A.target_path;
	argv[n++] = "--peer";
	argv[n++] = A.addr_s;
	argv[n++] = "--qps";
	argv[n++] = a[0];
	argv[n++] = "--recv";
	argv[n++] = a[1];
	argv[n++] = "--max-dest-rd-atomic";
	argv[n++] = a[2];
	argv[n++] = "--min-rnr-timer";
	argv[n++] = a[3];
	argv[n++] = "--timeout";
	argv[n++] = a[4];
	argv[n++] = "--retry";
	argv[n++] = a[5];
	argv[n++] = "--rnr-retry";
	argv[n++] = a[6];
	argv[n] = NULL;

	A.pid = fork();
	REQUIRE(A.pid >= 0, "fork: %s", strerror(errno));
	if (A.pid == 0) {
		/* The target never outlives us, even if we are killed. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[0]);
		close(to[1]);
		close(from[0]);
		close(from[1]);
		setenv("URNIC_ADDR", A.taddr_s, 1);
		setenv("URNIC_PRINT_COUNTERS", "1", 1);
		execv(A.target_path, argv);
		perror(A.target_path);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	A.to_fd = to[1];
	A.from_fd = from[0];
	parse_startup();
	REQUIRE(A.nqps == o->qps && A.ctr_path[0], "the target's start-up output is incomplete");

	for (int r = 0; r < HR_COUNT; r++) {
		A.shadow[r] = malloc(A.mr[r].len);
		REQUIRE(A.shadow[r] != NULL, "malloc");
		for (uint64_t i = 0; i < A.mr[r].len; i++)
			A.shadow[r][i] = hostile_pattern((unsigned)r, 0, i);
	}
	/* The baseline: every guard as the target wrote it, every body as we expect it. */
	tcmd("sums");
	REQUIRE(A.nans == HR_COUNT, "sums: %d lines", A.nans);
	for (int r = 0; r < HR_COUNT; r++) {
		char name[32];
		unsigned long long lo, body, hi;

		REQUIRE(sscanf(A.ans[r], "sum %31s %llx %llx %llx", name, &lo, &body, &hi) == 4,
			"bad sums line '%s'", A.ans[r]);
		A.base_lo[r] = lo;
		A.base_hi[r] = hi;
		REQUIRE(body == hostile_fnv(A.shadow[r], A.mr[r].len),
			"region %s does not hold the agreed pattern", hostile_region_names[r]);
	}
	say("target %d up: %d QPs, %d receives each, max_dest_rd_atomic %d", (int)A.pid, o->qps,
	    o->recv, o->max_dest_rd_atomic);
}

static bool target_alive(void)
{
	int st;

	return A.pid > 0 && waitpid(A.pid, &st, WNOHANG) == 0;
}

/* stop: the final dump is copied to our output; the target must exit 0. */
static void stop_target(void)
{
	char line[4096];
	int st = 0;
	uint64_t end;
	pid_t w = 0;

	if (A.pid <= 0)
		return;
	if (write(A.to_fd, "stop\n", 5) == 5) {
		while (tline(line, sizeof(line), 5000)) {
			printf("  target| %s\n", line);
			if (strcmp(line, "bye") == 0)
				break;
		}
	}
	close(A.to_fd);
	end = now_ms() + 5000;
	while ((w = waitpid(A.pid, &st, WNOHANG)) == 0 && now_ms() < end)
		sleep_ms(10);
	if (w == 0) {
		fail_at(__LINE__, "exit", "the target did not exit after stop; killing it");
		kill(A.pid, SIGKILL);
		waitpid(A.pid, &st, 0);
	} else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fail_at(__LINE__, "exit", "the target ended with %s %d",
			WIFEXITED(st) ? "status" : "signal",
			WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	}
	close(A.from_fd);
	unlink(A.ctr_path); /* left behind only if it died */
	A.pid = 0;
}

/* ---- counters ---- */

static int ctr_index(const char *name)
{
	for (int i = 0; i < URNIC_CTRFILE_COUNT; i++)
		if (strcmp(urnic_ctrfile_names[i], name) == 0)
			return i;
	fprintf(stderr, "no counter %s\n", name);
	abort();
}

static void ctr_read(struct urnic_ctrfile *f)
{
	int ret = urnic_ctrfile_read(A.ctr_path, A.pid, f);

	REQUIRE(ret == 0, "cannot read %s: %s", A.ctr_path, strerror(-ret));
}

static uint64_t ctr(const char *name)
{
	struct urnic_ctrfile f;
	int i = ctr_index(name);

	ctr_read(&f);
	return (uint32_t)i < f.ncounters ? f.values[i] : 0;
}

static uint64_t snap_of(const struct urnic_ctrfile *s, const char *name)
{
	int i = ctr_index(name);

	return (uint32_t)i < s->ncounters ? s->values[i] : 0;
}

/* Waits until the target has taken in every datagram we sent: the engine copies its
 * counters out after the pass that handled them, replies already sent. */
static void settle(void)
{
	uint64_t end = now_ms() + 5000, got = 0;

	while (now_ms() < end) {
		got = ctr("rx_packets");
		if (got >= A.rx_sent)
			return;
		sleep_ms(1);
	}
	REQUIRE(got >= A.rx_sent, "the target took in %llu of the %llu datagrams sent",
		(unsigned long long)got, (unsigned long long)A.rx_sent);
}

/* Waits (up to 3 s) for counter name to reach want; returns its value. For datagrams
 * the engine may not count in rx_packets (a QPN steered to another process on the
 * address is dropped before the engine sees it). */
static uint64_t wait_ctr(const char *name, uint64_t want)
{
	uint64_t end = now_ms() + 3000, v = 0;

	while (now_ms() < end) {
		v = ctr(name);
		if (v >= want)
			break;
		sleep_ms(1);
	}
	return v;
}

/* A snapshot of the counters once everything sent so far has been handled: the reply
 * to the last request may arrive before the pass that sent it copies its counters out. */
static void snap(struct urnic_ctrfile *s)
{
	settle();
	ctr_read(s);
}

#define EXPECT_CTR(snap, name, delta)                                                              \
	do {                                                                                       \
		uint64_t d_ = ctr(name) - snap_of(&(snap), name);                                  \
		EXPECT(d_ == (uint64_t)(delta), "counter %s moved by %llu, expected %llu", name,   \
		       (unsigned long long)d_, (unsigned long long)(delta));                       \
	} while (0)

/* ---- packets ---- */

static struct urnic_pkt hdr(int qi, uint8_t opcode, uint32_t psn)
{
	struct urnic_pkt h;

	memset(&h, 0, sizeof(h));
	h.bth.opcode = opcode;
	h.bth.pkey = URNIC_DEFAULT_PKEY;
	h.bth.dqpn = A.qp[qi].qpn;
	h.bth.psn = psn & URNIC_PSN_MASK;
	h.bth.ackreq = true;
	return h;
}

enum xflag {
	X_BAD_ICRC = 1 << 0,	 /* one bit of the ICRC flipped */
	X_SPOOF = 1 << 1,	 /* from the spoofed source address */
	X_OTHER_SPORT = 1 << 2,	 /* ICRC computed for another UDP source port */
	X_FLIP_PAYLOAD = 1 << 3, /* a payload byte flipped after the ICRC was computed */
	X_IPV4_ID = 1 << 4,	 /* ICRC for IPv4 ID 0x2bcd, as rxe counts it (sent with 0) */
};

static void send_raw(const uint8_t *buf, size_t len, bool spoof)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(URNIC_ROCE_UDP_PORT) };
	ssize_t n;

	memcpy(&to.sin_addr, A.taddr, 4);
	for (;;) {
		n = sendto(spoof ? A.spoof_fd : A.fd, buf, len, 0, (struct sockaddr *)&to,
			   sizeof(to));
		if (n >= 0 || (errno != EAGAIN && errno != ENOBUFS && errno != EINTR))
			break;
		sleep_ms(1);
	}
	REQUIRE(n == (ssize_t)len, "sendto: %s", strerror(errno));
	A.rx_sent++;
}

/* Encodes h + payload + pad + ICRC into out; returns the length. */
static size_t build(const struct urnic_pkt *h0, const void *payload, uint32_t len, unsigned flags,
		    uint8_t *out, size_t cap)
{
	struct urnic_pkt h = *h0;
	struct urnic_icrc_flow flow;
	struct urnic_frag frag;
	uint32_t pad = (4 - (len & 3)) & 3;
	ssize_t n;
	size_t total;

	h.bth.pad = (uint8_t)pad;
	n = urnic_pkt_encode_hdr(&h, out, cap);
	REQUIRE(n > 0 && (size_t)n + len + pad + 4 <= cap, "cannot encode opcode 0x%02x",
		h.bth.opcode);
	if (len)
		memcpy(out + n, payload, len);
	memset(out + n + len, 0, pad);
	total = (size_t)n + len + pad;
	memset(&flow, 0, sizeof(flow));
	memcpy(flow.src, (flags & X_SPOOF) ? A.spoof : A.addr, 4);
	memcpy(flow.dst, A.taddr, 4);
	flow.ip_id = (flags & X_IPV4_ID) ? 0x2bcd : 0;
	flow.sport = (flags & X_OTHER_SPORT) ? 1234 : URNIC_ROCE_UDP_PORT;
	flow.dport = URNIC_ROCE_UDP_PORT;
	frag = (struct urnic_frag){ out, total };
	urnic_put_le32(out + total, urnic_icrc_flow(&flow, &frag, 1, total));
	if (flags & X_BAD_ICRC)
		out[total + 1] ^= 0x10;
	if ((flags & X_FLIP_PAYLOAD) && len)
		out[n] ^= 0x01;
	return total + 4;
}

static void xmit(const struct urnic_pkt *h, const void *payload, uint32_t len, unsigned flags)
{
	static uint8_t buf[PKT_MAX + 128];

	send_raw(buf, build(h, payload, len, flags, buf, sizeof(buf)), flags & X_SPOOF);
}

/* The next datagram from the target into A.r, within timeout_ms. */
static bool get_reply(int timeout_ms)
{
	struct reply *r = &A.r;
	uint64_t end = now_ms() + (uint64_t)timeout_ms;

	for (;;) {
		struct pollfd p = { .fd = A.fd, .events = POLLIN };
		struct sockaddr_in from;
		socklen_t flen = sizeof(from);
		uint64_t t = now_ms();
		ssize_t n;

		if (t >= end && timeout_ms > 0)
			return false;
		if (poll(&p, 1, timeout_ms > 0 ? (int)(end - t) : 0) <= 0)
			return false;
		n = recvfrom(A.fd, r->buf, sizeof(r->buf), MSG_DONTWAIT, (struct sockaddr *)&from,
			     &flen);
		if (n < 0)
			continue;
		if (memcmp(&from.sin_addr, A.taddr, 4) != 0)
			continue; /* not from the target: nothing else should be here */
		r->len = (size_t)n;
		r->sport = ntohs(from.sin_port);
		r->decoded = urnic_pkt_decode(&r->pkt, r->buf, r->len) > 0;
		r->icrc_ok = false;
		if (r->decoded) {
			struct urnic_icrc_flow flow;
			struct urnic_frag frag = { r->buf, r->len - 4 };

			memset(&flow, 0, sizeof(flow));
			memcpy(flow.src, A.taddr, 4);
			memcpy(flow.dst, A.addr, 4);
			flow.sport = r->sport;
			flow.dport = URNIC_ROCE_UDP_PORT;
			uint32_t icrc0 = urnic_icrc_flow(&flow, &frag, 1, frag.len);
			uint32_t rx = urnic_get_le32(r->buf + r->len - 4);
			uint16_t id;

			/* A burst the target sent with UDP GSO reaches this non-GRO socket
			 * cut up by the kernel, segment k with IPv4 ID k (inet_gso_segment),
			 * which a UDP socket does not show: take the ICRC of ID 0, or of
			 * the segment ID it proves to be (at most 64 segments a send). */
			r->icrc_ok = icrc0 == rx ||
				     (urnic_icrc_ipv4_id(icrc0, rx, frag.len, &id) == 0 && id < 64);
		}
		return true;
	}
}

static const char *opname(uint8_t op)
{
	const char *n = urnic_opcode_info(op)->name;

	return n ? n : "?";
}

static void describe(char *s, size_t cap)
{
	const struct urnic_pkt *p = &A.r.pkt;

	if (!A.r.decoded) {
		snprintf(s, cap, "an undecodable %zu-byte datagram", A.r.len);
		return;
	}
	snprintf(s, cap, "%s qp 0x%06x psn 0x%06x aeth %02x msn %u len %u", opname(p->bth.opcode),
		 p->bth.dqpn, p->bth.psn, p->aeth.syndrome, p->aeth.msn, p->payload_bytes);
}

/* The next reply must be `opcode` for QP qi with psn; syndrome < 0: any ACK (credits);
 * msn < 0: not checked. Returns false (after reporting) if it is not. */
static bool expect_reply(int qi, uint8_t opcode, uint32_t psn, int syndrome, int64_t msn,
			 const char *what)
{
	const struct urnic_pkt *p = &A.r.pkt;
	char got[160];

	if (!get_reply(REPLY_MS)) {
		fail_at(__LINE__, "reply", "%s: no reply; expected %s psn 0x%06x", what,
			opname(opcode), psn);
		return false;
	}
	describe(got, sizeof(got));
	if (!A.r.decoded || !A.r.icrc_ok || p->bth.opcode != opcode || p->bth.psn != psn ||
	    p->bth.dqpn != A.qp[qi].dest || p->bth.pkey != URNIC_DEFAULT_PKEY ||
	    (syndrome >= 0 && p->aeth.syndrome != syndrome) ||
	    (syndrome < 0 && (urnic_opcode_info(opcode)->flags & URNIC_OPF_AETH) &&
	     (p->aeth.syndrome & URNIC_AETH_TYPE_MASK) != URNIC_AETH_ACK) ||
	    (msn >= 0 && p->aeth.msn != (uint32_t)msn)) {
		fail_at(__LINE__, "reply",
			"%s: got %s%s; expected %s qp 0x%06x psn 0x%06x aeth %s%02x msn %lld", what,
			got, A.r.icrc_ok ? "" : " (bad ICRC)", opname(opcode), A.qp[qi].dest, psn,
			syndrome < 0 ? "ACK " : "",
			syndrome < 0 ? URNIC_AETH_ACK_UNLIMITED : syndrome, (long long)msn);
		return false;
	}
	return true;
}

static void expect_silence(const char *what)
{
	char got[160];

	settle();
	if (get_reply(SILENCE_MS)) {
		describe(got, sizeof(got));
		fail_at(__LINE__, "silence", "%s: the target answered %s; expected silence", what,
			got);
		while (get_reply(SILENCE_MS))
			;
	}
}

static void expect_nak(int qi, uint32_t psn, uint8_t syndrome, const char *what)
{
	expect_reply(qi, URNIC_OP_RC_ACKNOWLEDGE, psn, syndrome, A.qp[qi].msn, what);
}

static void expect_qp_state(int qi, const char *state)
{
	char want[64];

	tcmd("qp %d", qi);
	snprintf(want, sizeof(want), "qp %d %s", qi, state);
	EXPECT(A.nans == 1 && strcmp(A.ans[0], want) == 0, "QP %d: target says '%s', expected %s",
	       qi, A.nans ? A.ans[0] : "", state);
}

/* ---- requests that must work ---- */

static void fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

/* The READ responses for len bytes of region ro from off, PSNs from psn, carrying msn
 * (IBTA 9.7.5.1.3: FIRST/MIDDLE/LAST or ONLY, AETH on all but MIDDLE); mid: a replay
 * that starts inside the original READ, so it has no FIRST. */
static void expect_read_responses(int qi, uint32_t psn, uint64_t off, uint32_t len, uint32_t msn,
				  bool mid, const char *what)
{
	uint32_t npsn = len ? (len + MTU - 1) / MTU : 1;

	for (uint32_t k = 0; k < npsn; k++) {
		uint32_t n = len - k * MTU < MTU ? len - k * MTU : MTU;
		bool first = k == 0 && !mid, last = k == npsn - 1;
		uint8_t op = first ? (last ? URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY
					   : URNIC_OP_RC_RDMA_READ_RESPONSE_FIRST)
				   : (last ? URNIC_OP_RC_RDMA_READ_RESPONSE_LAST
					   : URNIC_OP_RC_RDMA_READ_RESPONSE_MIDDLE);
		bool aeth = urnic_opcode_info(op)->flags & URNIC_OPF_AETH;

		if (!expect_reply(qi, op, urnic_psn_add(psn, k), -1, aeth ? (int64_t)msn : -1,
				  what))
			break;
		EXPECT(A.r.pkt.payload_bytes == n &&
			   memcmp(A.r.pkt.payload, A.shadow[HR_RO] + off + k * MTU, n) == 0,
		       "%s: response %u does not carry the region's bytes", what, k);
	}
}

static void send_read(int qi, uint32_t psn, uint64_t va, uint32_t rkey, uint32_t len)
{
	struct urnic_pkt h = hdr(qi, URNIC_OP_RC_RDMA_READ_REQUEST, psn);

	h.reth = (struct urnic_reth){ va, rkey, len };
	xmit(&h, NULL, 0, 0);
}

/* A READ of len bytes from region ro at off: the responses must carry its bytes. */
static void good_read(int qi, uint64_t off, uint32_t len, const char *what)
{
	struct qpinfo *q = &A.qp[qi];
	uint32_t npsn = len ? (len + MTU - 1) / MTU : 1;

	send_read(qi, q->epsn, A.mr[HR_RO].addr + off, A.mr[HR_RO].rkey, len);
	q->msn++;
	expect_read_responses(qi, q->epsn, off, len, q->msn, false, what);
	q->epsn = urnic_psn_add(q->epsn, npsn);
}

/* The liveness probe: a small READ on QP qi. */
static void probe(int qi)
{
	char what[64];

	snprintf(what, sizeof(what), "probe READ on QP %d", qi);
	good_read(qi, 128 + (A.probes++ * 64) % 4096, 64, what);
}

/* A WRITE_ONLY of len bytes at region rw + off, sent with xmit flags, that must be
 * ACKed and land. */
static void good_write_x(int qi, uint64_t off, uint32_t len, uint32_t seed, unsigned flags,
			 const char *what)
{
	struct qpinfo *q = &A.qp[qi];
	struct urnic_pkt h = hdr(qi, URNIC_OP_RC_RDMA_WRITE_ONLY, q->epsn);
	uint8_t data[MTU];

	fill(data, len, seed);
	h.reth = (struct urnic_reth){ A.mr[HR_RW].addr + off, A.mr[HR_RW].rkey, len };
	xmit(&h, data, len, flags);
	q->msn++;
	if (expect_reply(qi, URNIC_OP_RC_ACKNOWLEDGE, q->epsn, -1, q->msn, what))
		memcpy(A.shadow[HR_RW] + off, data, len);
	q->epsn = urnic_psn_add(q->epsn, 1);
}

static void good_write(int qi, uint64_t off, uint32_t len, uint32_t seed, const char *what)
{
	good_write_x(qi, off, len, seed, 0, what);
}

/* A SEND_ONLY that must be ACKed and land in the QP's next receive buffer. */
static void good_send(int qi, uint32_t len, uint32_t seed, const char *what)
{
	struct qpinfo *q = &A.qp[qi];
	struct urnic_pkt h = hdr(qi, URNIC_OP_RC_SEND_ONLY, q->epsn);
	uint8_t data[MTU];

	fill(data, len, seed);
	xmit(&h, data, len, 0);
	q->msn++;
	if (expect_reply(qi, URNIC_OP_RC_ACKNOWLEDGE, q->epsn, -1, q->msn, what)) {
		uint32_t slot =
		    q->rq_off[q->rq_head++ % (sizeof(q->rq_off) / sizeof(q->rq_off[0]))];

		memcpy(A.shadow[HR_RECV] + slot, data, len);
	}
	q->epsn = urnic_psn_add(q->epsn, 1);
}

/* ---- memory ---- */

static void report_body_diff(int r)
{
	uint64_t len = A.mr[r].len, first = len, last = 0;

	for (uint64_t off = 0; off < len; off += 4096) {
		uint64_t n = len - off < 4096 ? len - off : 4096;
		const char *hex;

		tcmd("read %s %llu %llu", hostile_region_names[r], (unsigned long long)off,
		     (unsigned long long)n);
		if (A.nans != 1 || strncmp(A.ans[0], "data ", 5) != 0)
			return;
		hex = A.ans[0] + 5;
		for (uint64_t i = 0; i < n; i++) {
			unsigned v;

			if (sscanf(hex + 2 * i, "%2x", &v) != 1)
				return;
			if (v != A.shadow[r][off + i]) {
				if (first == len)
					first = off + i;
				last = off + i;
			}
		}
	}
	if (first < len)
		say("  region %s differs from what was granted at bytes %llu..%llu",
		    hostile_region_names[r], (unsigned long long)first, (unsigned long long)last);
}

/* Every guard as at start, every region exactly as the granted operations left it. */
static void check_memory(void)
{
	tcmd("sums");
	REQUIRE(A.nans == HR_COUNT, "sums: %d lines", A.nans);
	for (int r = 0; r < HR_COUNT; r++) {
		char name[32];
		unsigned long long lo, body, hi;

		REQUIRE(sscanf(A.ans[r], "sum %31s %llx %llx %llx", name, &lo, &body, &hi) == 4,
			"bad sums line '%s'", A.ans[r]);
		EXPECT(lo == A.base_lo[r], "the guard bytes below region %s changed",
		       hostile_region_names[r]);
		EXPECT(hi == A.base_hi[r], "the guard bytes above region %s changed",
		       hostile_region_names[r]);
		if (body != hostile_fnv(A.shadow[r], A.mr[r].len)) {
			fail_at(__LINE__, "memory",
				"region %s is not what the granted operations left",
				hostile_region_names[r]);
			report_body_diff(r);
		}
	}
}

struct wcx {
	int qp;
	unsigned long long wr_id;
	int status, opcode;
	unsigned byte_len;
	int flags;
};

/* The completions the target polled since the last call, into w (at most n). */
static int target_wcs(struct wcx *w, int n)
{
	int got = 0;

	tcmd("wc");
	for (int i = 0; i < A.nans && got < n; i++)
		if (sscanf(A.ans[i], "wc %d %llx %d %d %u %d", &w[got].qp, &w[got].wr_id,
			   &w[got].status, &w[got].opcode, &w[got].byte_len, &w[got].flags) == 6)
			got++;
	return got;
}

/* Ends a scenario: memory, liveness, the target's own exit. Returns the exit status. */
static int finish(void)
{
	EXPECT(target_alive(), "the target died");
	check_memory();
	stop_target();
	for (int r = 0; r < HR_COUNT; r++)
		free(A.shadow[r]);
	free_ans();
	if (A.failures)
		say("FAILED: %d check(s)", A.failures);
	else
		say("ok");
	return A.failures ? 1 : 0;
}

static struct topts topts_default(int qps)
{
	return (struct topts){ .qps = qps,
			       .recv = 4,
			       .max_dest_rd_atomic = 4,
			       .min_rnr_timer = 1,
			       .timeout = 18,
			       .retry = 7,
			       .rnr_retry = 7 };
}

/* ---- scenarios ---- */

/* A WRITE_ONLY of 32 bytes to rw + off: the request every silent-drop scenario mangles. */
static struct urnic_pkt write32(int qi, uint64_t off, uint8_t *data)
{
	struct urnic_pkt h = hdr(qi, URNIC_OP_RC_RDMA_WRITE_ONLY, A.qp[qi].epsn);

	fill(data, 32, 0xbad);
	h.reth = (struct urnic_reth){ A.mr[HR_RW].addr + off, A.mr[HR_RW].rkey, 32 };
	return h;
}

static uint64_t shadow_u64(int r, uint64_t off)
{
	uint64_t v;

	memcpy(&v, A.shadow[r] + off, 8);
	return v;
}

static long target_rss_kb(void)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)A.pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		sscanf(line, "VmRSS: %ld", &kb);
	fclose(f);
	return kb;
}

/* Bad ICRC (Annex A17.3.3; rxe_icrc.c): dropped silently and counted, memory and PSN
 * untouched; the same QP then serves a READ at the very PSN the bad packets carried. */
static void sc_bad_icrc(void)
{
	struct topts o = topts_default(2);
	struct urnic_ctrfile s;
	uint8_t data[32];
	struct urnic_pkt h;

	start_target(&o);
	snap(&s);
	h = write32(0, 64, data);
	xmit(&h, data, 32, X_BAD_ICRC);
	xmit(&h, data, 32, X_FLIP_PAYLOAD);
	xmit(&h, data, 32, X_OTHER_SPORT);
	expect_silence("WRITEs with a bad ICRC");
	EXPECT_CTR(s, "drop_bad_icrc", 3);
	EXPECT_CTR(s, "tx_packets", 0);
	probe(0);
	probe(1);
}

/* An ICRC computed for a non-zero IPv4 ID (rxe counts the ID; a UDP socket does not
 * show it): the ID is recovered from the ICRC and the WRITE lands, counted; the same
 * packet with a payload byte flipped is still a bad ICRC. */
static void sc_icrc_ipv4_id(void)
{
	struct topts o = topts_default(1);
	struct urnic_ctrfile s;
	uint8_t data[32];
	struct urnic_pkt h;

	start_target(&o);
	snap(&s);
	h = write32(0, 256, data);
	xmit(&h, data, 32, X_IPV4_ID | X_FLIP_PAYLOAD);
	expect_silence("WRITE with a corrupt payload and an ICRC for IP ID 0x2bcd");
	EXPECT_CTR(s, "drop_bad_icrc", 1);
	EXPECT_CTR(s, "rx_icrc_ipv4_id", 0);
	good_write_x(0, 256, 32, 0xbad, X_IPV4_ID, "WRITE with an ICRC for IP ID 0x2bcd");
	settle();
	EXPECT_CTR(s, "rx_icrc_ipv4_id", 1);
	EXPECT_CTR(s, "drop_bad_icrc", 1);
	probe(0);
}

/* Unknown destination QP (IBTA 9.6.1.2; rxe_recv.c): a QPN of another generation on a
 * live slot, a free slot, QP0/QP1 and 0xffffff are dropped silently. */
static void sc_unknown_qp(void)
{
	struct topts o = topts_default(2);
	struct urnic_ctrfile s;
	uint8_t data[32];
	struct urnic_pkt h;
	uint32_t qpn, bad[5];

	start_target(&o);
	qpn = A.qp[0].qpn;
	bad[0] = qpn ^ (1u << 12);
	bad[1] = (qpn & ~0xfffu) | 0xfff;
	bad[2] = 0xffffff;
	bad[3] = 1;
	bad[4] = 0;
	snap(&s);
	h = write32(0, 64, data);
	for (int i = 0; i < 5; i++) {
		h.bth.dqpn = bad[i];
		xmit(&h, data, 32, 0);
	}
	/* Some of these QPNs name another process's slot on the address (share.h): the
	 * transport drops those before the engine counts them in rx_packets. */
	A.rx_sent -= 5;
	wait_ctr("drop_unknown_qp", snap_of(&s, "drop_unknown_qp") + 5);
	expect_silence("WRITEs to QPs that do not exist");
	EXPECT_CTR(s, "drop_unknown_qp", 5);
	EXPECT_CTR(s, "tx_packets", 0);
	probe(0);
	probe(1);
}

/* Wrong P_Key (IBTA 10.9.3: the low 15 bits must match ours, 0x7fff): dropped silently.
 * A limited member of the default partition (0x7fff) matches our full membership. */
static void sc_bad_pkey(void)
{
	static const uint16_t bad[] = { 0x0000, 0x8001, 0x7ffe, 0xfffe };
	struct topts o = topts_default(2);
	struct urnic_ctrfile s;
	uint8_t data[32];
	struct urnic_pkt h;

	start_target(&o);
	snap(&s);
	h = write32(0, 64, data);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		h.bth.pkey = bad[i];
		xmit(&h, data, 32, 0);
	}
	expect_silence("WRITEs with a foreign P_Key");
	EXPECT_CTR(s, "drop_bad_pkey", 4);
	EXPECT_CTR(s, "tx_packets", 0);
	probe(0);
	h = write32(0, 64, data);
	h.bth.pkey = 0x7fff;
	xmit(&h, data, 32, 0);
	A.qp[0].msn++;
	if (expect_reply(0, URNIC_OP_RC_ACKNOWLEDGE, A.qp[0].epsn, -1, A.qp[0].msn,
			 "WRITE as a limited member of the default partition"))
		memcpy(A.shadow[HR_RW] + 64, data, 32);
	A.qp[0].epsn = urnic_psn_add(A.qp[0].epsn, 1);
	probe(1);
}

/* A source address that is not the QP's peer (rxe check_addr) and opcodes of other
 * transports (UC, UD) sent to an RC QP (IBTA 9.6.1.2.x): dropped silently. */
static void sc_foreign_source_and_transport(void)
{
	struct topts o = topts_default(2);
	struct urnic_ctrfile s;
	uint8_t data[32];
	struct urnic_pkt h;

	start_target(&o);
	snap(&s);
	h = write32(0, 64, data);
	xmit(&h, data, 32, X_SPOOF);
	h = hdr(0, URNIC_OP_UC_SEND_ONLY, A.qp[0].epsn);
	xmit(&h, data, 16, 0);
	h = hdr(0, URNIC_OP_UC_RDMA_WRITE_ONLY, A.qp[0].epsn);
	h.reth = (struct urnic_reth){ A.mr[HR_RW].addr, A.mr[HR_RW].rkey, 16 };
	xmit(&h, data, 16, 0);
	h = hdr(0, URNIC_OP_UD_SEND_ONLY, A.qp[0].epsn);
	h.deth = (struct urnic_deth){ 0x11111111, A.qp[0].dest };
	xmit(&h, data, 16, 0);
	expect_silence("a spoofed source and UC/UD opcodes");
	EXPECT_CTR(s, "drop_addr_mismatch", 1);
	EXPECT_CTR(s, "drop_opcode_qp_type", 3);
	EXPECT_CTR(s, "tx_packets", 0);
	probe(0);
	probe(1);
}

static void refix_icrc(uint8_t *buf, size_t len)
{
	struct urnic_icrc_flow flow;
	struct urnic_frag frag = { buf, len - 4 };

	memset(&flow, 0, sizeof(flow));
	memcpy(flow.src, A.addr, 4);
	memcpy(flow.dst, A.taddr, 4);
	flow.sport = URNIC_ROCE_UDP_PORT;
	flow.dport = URNIC_ROCE_UDP_PORT;
	urnic_put_le32(buf + len - 4, urnic_icrc_flow(&flow, &frag, 1, frag.len));
}

/* Truncated and malformed headers (IBTA 9.6.1; house style: every prefix fails cleanly):
 * every prefix of a WRITE_ONLY, and well-checksummed packets whose headers lie (pad
 * beyond the packet, unknown opcodes, TVer 1, reserved bits). Silently dropped. */
static void sc_truncated_headers(void)
{
	static const uint8_t unknown_ops[] = { 0x15, 0x1e, 0x1f, 0x3f, 0x44, 0x81, 0xa4, 0xff };
	struct topts o = topts_default(2);
	struct urnic_ctrfile s;
	uint8_t data[32], full[128], buf[128];
	struct urnic_pkt h;
	size_t len, lying = 0;

	start_target(&o);
	snap(&s);
	h = write32(0, 64, data);
	len = build(&h, data, 32, 0, full, sizeof(full));
	REQUIRE(len == 12 + 16 + 32 + 4, "WRITE_ONLY of 32 bytes is %zu bytes", len);
	/* An empty datagram, then one byte: both are malformed headers. */
	send_raw(full, 0, false);
	send_raw(full, 1, false);
	A.rx_sent--; /* let settle() wait for the 1-byte one only: the check is below */
	settle();
	EXPECT_CTR(s, "drop_bad_header", 2);
	EXPECT_CTR(s, "rx_packets", 2);
	snap(&s);
	/* Shorter than BTH + RETH + ICRC: the header cannot be read. */
	for (size_t n = 2; n < 32; n++)
		send_raw(full, n, false);
	/* Long enough to decode, but the last four bytes are no ICRC of it. */
	for (size_t n = 32; n < len; n++)
		send_raw(full, n, false);
	/* A correct ICRC over headers that lie. */
	h = write32(0, 64, data);
	len = build(&h, NULL, 0, 0, buf, sizeof(buf)); /* 0 bytes of payload ... */
	buf[1] |= 0x30;				       /* ... and a PadCnt of 3 */
	refix_icrc(buf, len);
	send_raw(buf, len, false);
	lying++;
	for (unsigned i = 0; i < sizeof(unknown_ops); i++) {
		len = build(&h, data, 32, 0, buf, sizeof(buf));
		buf[0] = unknown_ops[i];
		refix_icrc(buf, len);
		send_raw(buf, len, false);
		lying++;
	}
	len = build(&h, data, 32, 0, buf, sizeof(buf));
	buf[1] |= 0x01; /* TVer 1 */
	refix_icrc(buf, len);
	send_raw(buf, len, false);
	lying++;
	len = build(&h, data, 32, 0, buf, sizeof(buf));
	buf[4] |= 0x01; /* Resv6 (IBTA 9.2: reserved, sent as 0) */
	refix_icrc(buf, len);
	send_raw(buf, len, false);
	lying++;
	len = build(&h, data, 32, 0, buf, sizeof(buf));
	buf[8] |= 0x01; /* Resv7 */
	refix_icrc(buf, len);
	send_raw(buf, len, false);
	lying++;
	expect_silence("truncated and malformed headers");
	EXPECT_CTR(s, "drop_bad_header", 30 + lying);
	EXPECT_CTR(s, "drop_bad_icrc", 64 - 32);
	EXPECT_CTR(s, "tx_packets", 0);
	probe(0);
	probe(1);
}

/* Opcode sequence errors (IBTA 9.7.5.1.4, class C): a MIDDLE or LAST without FIRST, a
 * new message inside a SEND: NAK invalid request (0x61) naming the packet's PSN, the QP
 * goes to error and drops what follows; nothing else is touched. */
static void sc_op_sequence(void)
{
	struct topts o = topts_default(6);
	struct urnic_ctrfile s;
	uint8_t data[MTU];
	struct urnic_pkt h;
	struct wcx w[64];
	int n, per_qp[6] = { 0 };

	start_target(&o);
	fill(data, MTU, 7);
	snap(&s);

	h = hdr(0, URNIC_OP_RC_SEND_MIDDLE, A.qp[0].epsn);
	xmit(&h, data, MTU, 0);
	expect_nak(0, A.qp[0].epsn, 0x61, "SEND_MIDDLE without SEND_FIRST");
	h = hdr(1, URNIC_OP_RC_SEND_LAST, A.qp[1].epsn);
	xmit(&h, data, 16, 0);
	expect_nak(1, A.qp[1].epsn, 0x61, "SEND_LAST without SEND_FIRST");
	h = hdr(2, URNIC_OP_RC_RDMA_WRITE_MIDDLE, A.qp[2].epsn);
	xmit(&h, data, MTU, 0);
	expect_nak(2, A.qp[2].epsn, 0x61, "RDMA_WRITE_MIDDLE without RDMA_WRITE_FIRST");
	h = hdr(3, URNIC_OP_RC_RDMA_WRITE_LAST, A.qp[3].epsn);
	xmit(&h, data, 16, 0);
	expect_nak(3, A.qp[3].epsn, 0x61, "RDMA_WRITE_LAST without RDMA_WRITE_FIRST");

	/* A SEND_FIRST is fine (its bytes land in the first receive buffer) ... */
	h = hdr(4, URNIC_OP_RC_SEND_FIRST, A.qp[4].epsn);
	h.bth.ackreq = false;
	xmit(&h, data, MTU, 0);
	expect_silence("SEND_FIRST without AckReq");
	memcpy(A.shadow[HR_RECV] + A.qp[4].rq_off[0], data, MTU);
	/* ... but a WRITE before its LAST is not. */
	h = hdr(4, URNIC_OP_RC_RDMA_WRITE_ONLY, urnic_psn_add(A.qp[4].epsn, 1));
	h.reth = (struct urnic_reth){ A.mr[HR_RW].addr, A.mr[HR_RW].rkey, 16 };
	xmit(&h, data, 16, 0);
	expect_nak(4, urnic_psn_add(A.qp[4].epsn, 1), 0x61, "RDMA_WRITE_ONLY inside a SEND");
	settle();
	EXPECT_CTR(s, "nak_inv_req_sent", 5);
	for (int i = 0; i < 5; i++)
		expect_qp_state(i, "ERR");

	/* A QP in error drops even a valid request (IBTA 10.3.1 table 90). */
	snap(&s);
	h = write32(0, 64, data);
	xmit(&h, data, 32, 0);
	expect_silence("a valid WRITE to a QP in error");
	EXPECT_CTR(s, "drop_qp_error", 1);

	/* Every receive of the failed QPs completes once, none successfully. */
	n = target_wcs(w, 64);
	for (int k = 0; k < n; k++) {
		EXPECT(w[k].qp >= 0 && w[k].qp < 5, "a completion on QP %d", w[k].qp);
		EXPECT(w[k].status != 0, "QP %d receive 0x%llx completed successfully", w[k].qp,
		       w[k].wr_id);
		if (w[k].qp >= 0 && w[k].qp < 6)
			per_qp[w[k].qp]++;
	}
	for (int i = 0; i < 5; i++)
		EXPECT(per_qp[i] == o.recv, "QP %d: %d receive completions, expected %d", i,
		       per_qp[i], o.recv);
	probe(5);
}

/* PSN checks (IBTA 9.7.5.1.1/9.7.5.1.2): a request ahead of the expected PSN draws ONE
 * NAK sequence error (0x60) naming the expected PSN, then silence until the expected
 * PSN comes; duplicates (behind) are re-ACKed with the last acknowledged PSN and never
 * executed again (C9-105); a duplicate READ/atomic without a resource is dropped. */
static void sc_psn_window(void)
{
	struct topts o = topts_default(2);
	struct qpinfo *q;
	struct urnic_ctrfile s;
	uint8_t data[MTU];
	struct urnic_pkt h;
	uint32_t e, w1;

	start_target(&o);
	q = &A.qp[0];
	e = q->epsn;
	fill(data, MTU, 3);
	snap(&s);
	h = write32(0, 0, data);
	h.bth.psn = urnic_psn_add(e, 0x400000);
	xmit(&h, data, 32, 0);
	expect_nak(0, e, 0x60, "a WRITE 2^22 PSNs ahead");
	settle();
	EXPECT_CTR(s, "nak_seq_sent", 1);

	snap(&s);
	h.bth.psn = urnic_psn_add(e, 1);
	xmit(&h, data, 32, 0);
	h.bth.psn = urnic_psn_add(e, 2);
	xmit(&h, data, 32, 0);
	h.bth.psn = urnic_psn_add(e, 0x7fffff); /* the farthest PSN still "ahead" */
	xmit(&h, data, 32, 0);
	send_read(0, urnic_psn_add(e, 5), A.mr[HR_RO].addr, A.mr[HR_RO].rkey, 64);
	h = hdr(0, URNIC_OP_RC_SEND_ONLY, urnic_psn_add(e, 3));
	xmit(&h, data, 16, 0);
	h = hdr(0, URNIC_OP_RC_FETCH_ADD, urnic_psn_add(e, 7));
	h.atmeth = (struct urnic_atmeth){ A.mr[HR_ATOMIC].addr, A.mr[HR_ATOMIC].rkey, 1, 0 };
	xmit(&h, NULL, 0, 0);
	h = hdr(0, URNIC_OP_RC_RDMA_WRITE_FIRST, urnic_psn_add(e, 9));
	h.reth = (struct urnic_reth){ A.mr[HR_RW].addr, A.mr[HR_RW].rkey, 2 * MTU };
	xmit(&h, data, MTU, 0);
	h = hdr(0, URNIC_OP_RC_SEND_MIDDLE, urnic_psn_add(e, 0x100));
	xmit(&h, data, MTU, 0);
	expect_silence("requests ahead after the NAK");
	EXPECT_CTR(s, "drop_psn_after_nak", 8);
	EXPECT_CTR(s, "nak_seq_sent", 0);
	EXPECT_CTR(s, "tx_packets", 0);

	/* The expected PSN is served and re-arms the NAK. */
	w1 = q->epsn;
	good_write(0, 256, 16, 1, "the WRITE at the expected PSN");
	snap(&s);
	h = write32(0, 0, data);
	h.bth.psn = urnic_psn_add(q->epsn, 3);
	xmit(&h, data, 32, 0);
	expect_nak(0, q->epsn, 0x60, "a WRITE 3 PSNs ahead, after the gap closed");
	settle();
	EXPECT_CTR(s, "nak_seq_sent", 1);
	good_write(0, 512, 16, 2, "the WRITE at the expected PSN");

	/* Duplicates: re-ACKed with the last acknowledged PSN, never executed again. */
	snap(&s);
	h = write32(0, 1024, data);
	h.bth.psn = urnic_psn_add(q->epsn, 0x1000000 - 0x400000);
	xmit(&h, data, 32, 0);
	expect_reply(0, URNIC_OP_RC_ACKNOWLEDGE, urnic_psn_add(q->epsn, URNIC_PSN_MASK), -1, q->msn,
		     "a duplicate WRITE 2^22 PSNs behind");
	h = write32(0, 256, data);
	h.bth.psn = w1;
	h.reth.len = 16;
	xmit(&h, data + 100, 16, 0);
	expect_reply(0, URNIC_OP_RC_ACKNOWLEDGE, urnic_psn_add(q->epsn, URNIC_PSN_MASK), -1, q->msn,
		     "a duplicate of the first WRITE with other bytes");
	h = hdr(0, URNIC_OP_RC_SEND_ONLY, urnic_psn_add(q->epsn, URNIC_PSN_MASK));
	xmit(&h, data, 16, 0);
	expect_reply(0, URNIC_OP_RC_ACKNOWLEDGE, urnic_psn_add(q->epsn, URNIC_PSN_MASK), -1, q->msn,
		     "a duplicate SEND");
	h = hdr(0, URNIC_OP_RC_FETCH_ADD, w1);
	h.atmeth = (struct urnic_atmeth){ A.mr[HR_ATOMIC].addr, A.mr[HR_ATOMIC].rkey, 1, 0 };
	xmit(&h, NULL, 0, 0);
	expect_silence("a duplicate FETCH_ADD at the PSN of a WRITE");
	EXPECT_CTR(s, "dup_request", 4);
	EXPECT_CTR(s, "drop_dup_no_resource", 1);
	EXPECT_CTR(s, "atomic_executed", 0);
	EXPECT_CTR(s, "rnr_nak_sent", 0);
	probe(0);
	probe(1);
	{
		struct wcx w[8];
		int n = target_wcs(w, 8);

		EXPECT(n == 0, "%d receive completions after duplicates; expected none", n);
	}
}

struct acase {
	const char *what;
	uint8_t op;
	uint64_t va;
	uint32_t rkey;
	uint32_t len; /* RETH length */
	uint32_t payload;
};

/* R_Key, bounds and rights (IBTA 9.7.5.1.7, class C; rxe-siw-perftest.md §1.4): NAK remote
 * access error (0x62) with the request's PSN, the QP in error, and not one byte of any
 * region or guard changed, not even the in-range part of a WRITE_FIRST. One QP per
 * case; the last QP checks the target still serves. */
static void sc_remote_access(void)
{
	const struct mrinfo *rw, *ro, *at, *no, *rc;
	struct acase c[20];
	struct urnic_ctrfile s;
	struct topts o;
	uint8_t data[MTU];
	int n = 0;

	/* The region addresses are the target's: start it first, with enough QPs. */
	o = topts_default(18);
	o.recv = 0;
	start_target(&o);
	rw = &A.mr[HR_RW];
	ro = &A.mr[HR_RO];
	at = &A.mr[HR_ATOMIC];
	no = &A.mr[HR_NONE];
	rc = &A.mr[HR_RECV];
	c[n++] = (struct acase){ "WRITE with forged R_Key bits",
				 URNIC_OP_RC_RDMA_WRITE_ONLY,
				 rw->addr,
				 rw->rkey ^ 0x5a,
				 16,
				 16 };
	c[n++] = (struct acase){ "WRITE with the R_Key of no region",
				 URNIC_OP_RC_RDMA_WRITE_ONLY,
				 rw->addr,
				 0x00fffe00u | (rw->rkey & 0xff),
				 16,
				 16 };
	c[n++] = (struct acase){ "WRITE just below the region",
				 URNIC_OP_RC_RDMA_WRITE_ONLY,
				 rw->addr - 16,
				 rw->rkey,
				 16,
				 16 };
	c[n++] = (struct acase){ "WRITE just past the end",
				 URNIC_OP_RC_RDMA_WRITE_ONLY,
				 rw->addr + rw->len,
				 rw->rkey,
				 16,
				 16 };
	c[n++] = (struct acase){ "WRITE straddling the end",
				 URNIC_OP_RC_RDMA_WRITE_ONLY,
				 rw->addr + rw->len - 8,
				 rw->rkey,
				 16,
				 16 };
	c[n++] = (struct acase){ "WRITE_FIRST whose RETH length runs past the end",
				 URNIC_OP_RC_RDMA_WRITE_FIRST,
				 rw->addr + rw->len - MTU,
				 rw->rkey,
				 2 * MTU,
				 MTU };
	c[n++] = (struct acase){ "WRITE at an address that wraps 2^64",
				 URNIC_OP_RC_RDMA_WRITE_ONLY,
				 UINT64_MAX - 7,
				 rw->rkey,
				 16,
				 16 };
	c[n++] = (struct acase){ "WRITE to the read-only region",
				 URNIC_OP_RC_RDMA_WRITE_ONLY,
				 ro->addr,
				 ro->rkey,
				 16,
				 16 };
	c[n++] = (struct acase){ "WRITE to the region without remote rights",
				 URNIC_OP_RC_RDMA_WRITE_ONLY,
				 no->addr,
				 no->rkey,
				 16,
				 16 };
	c[n++] = (struct acase){ "WRITE to the receive buffers",
				 URNIC_OP_RC_RDMA_WRITE_ONLY,
				 rc->addr,
				 rc->rkey,
				 16,
				 16 };
	c[n++] = (struct acase){ "READ from the write-only region",
				 URNIC_OP_RC_RDMA_READ_REQUEST,
				 rw->addr,
				 rw->rkey,
				 64,
				 0 };
	c[n++] = (struct acase){ "READ running past the end of the read-only region",
				 URNIC_OP_RC_RDMA_READ_REQUEST,
				 ro->addr + 4096,
				 ro->rkey,
				 8192,
				 0 };
	c[n++] = (struct acase){ "READ from the region without remote rights",
				 URNIC_OP_RC_RDMA_READ_REQUEST,
				 no->addr,
				 no->rkey,
				 64,
				 0 };
	c[n++] = (struct acase){
		"READ with R_Key 0", URNIC_OP_RC_RDMA_READ_REQUEST, ro->addr, 0, 64, 0
	};
	c[n++] = (struct acase){ "FETCH_ADD on the write-only region",
				 URNIC_OP_RC_FETCH_ADD,
				 rw->addr,
				 rw->rkey,
				 0,
				 0 };
	c[n++] = (struct acase){ "CMP_SWAP with a forged R_Key",
				 URNIC_OP_RC_COMPARE_SWAP,
				 at->addr,
				 at->rkey ^ 1,
				 0,
				 0 };
	c[n++] = (struct acase){ "FETCH_ADD just past the end of the atomic region",
				 URNIC_OP_RC_FETCH_ADD,
				 at->addr + at->len,
				 at->rkey,
				 0,
				 0 };
	REQUIRE(n + 1 == o.qps, "%d cases need %d QPs", n, n + 1);

	fill(data, MTU, 9);
	snap(&s);
	for (int i = 0; i < n; i++) {
		struct urnic_pkt h = hdr(i, c[i].op, A.qp[i].epsn);
		uint32_t flags = urnic_opcode_info(c[i].op)->flags;

		if (flags & URNIC_OPF_ATOMIC)
			h.atmeth = (struct urnic_atmeth){ c[i].va, c[i].rkey, 0x1111, 0 };
		else
			h.reth = (struct urnic_reth){ c[i].va, c[i].rkey, c[i].len };
		xmit(&h, data, c[i].payload, 0);
		expect_nak(i, A.qp[i].epsn, 0x62, c[i].what);
	}
	settle();
	EXPECT_CTR(s, "nak_rem_access_sent", n);
	EXPECT_CTR(s, "nak_inv_req_sent", 0);
	EXPECT_CTR(s, "atomic_executed", 0);
	EXPECT_CTR(s, "read_resp_sent", 0);
	for (int i = 0; i < n; i++)
		expect_qp_state(i, "ERR");
	probe(n);
}

/* Atomics (IBTA 9.4.5): a target not 8-byte aligned is an invalid request (0x61) and
 * nothing executes; an aligned one executes once, and its duplicate returns the saved
 * original value without executing again (9.7.5.1.2). An aligned IOVA whose memory is
 * not 8-byte aligned (ibv_reg_mr_iova) is misaligned too: rxe checks the address it
 * would operate on (rxe_mr.c, rxe_mr_do_atomic_op) and NAKs 0x61; an 8-byte atomic on
 * an unaligned address is undefined in C, a split lock on x86, a fault elsewhere. */
static void sc_misaligned_atomic(void)
{
	struct topts o = topts_default(5);
	const struct mrinfo *at;
	struct urnic_ctrfile s;
	struct urnic_pkt h;
	struct qpinfo *q;
	uint64_t old;
	uint32_t psn;

	start_target(&o);
	at = &A.mr[HR_ATOMIC];
	snap(&s);
	h = hdr(0, URNIC_OP_RC_FETCH_ADD, A.qp[0].epsn);
	h.atmeth = (struct urnic_atmeth){ at->addr + 4, at->rkey, 1, 0 };
	xmit(&h, NULL, 0, 0);
	expect_nak(0, A.qp[0].epsn, 0x61, "FETCH_ADD at +4");
	h = hdr(1, URNIC_OP_RC_COMPARE_SWAP, A.qp[1].epsn);
	h.atmeth = (struct urnic_atmeth){ at->addr + 1, at->rkey, 0x42, shadow_u64(HR_ATOMIC, 0) };
	xmit(&h, NULL, 0, 0);
	expect_nak(1, A.qp[1].epsn, 0x61, "CMP_SWAP at +1");
	settle();
	EXPECT_CTR(s, "nak_inv_req_sent", 2);
	EXPECT_CTR(s, "atomic_executed", 0);
	expect_qp_state(0, "ERR");
	expect_qp_state(1, "ERR");

	/* Aligned: executed once, replayed once. */
	q = &A.qp[2];
	psn = q->epsn;
	old = shadow_u64(HR_ATOMIC, 8);
	h = hdr(2, URNIC_OP_RC_FETCH_ADD, psn);
	h.atmeth = (struct urnic_atmeth){ at->addr + 8, at->rkey, 5, 0 };
	xmit(&h, NULL, 0, 0);
	q->msn++;
	if (expect_reply(2, URNIC_OP_RC_ATOMIC_ACKNOWLEDGE, psn, -1, q->msn, "FETCH_ADD at +8")) {
		uint64_t now = old + 5;

		EXPECT(A.r.pkt.atmack_orig == old, "FETCH_ADD returned %llx, the value was %llx",
		       (unsigned long long)A.r.pkt.atmack_orig, (unsigned long long)old);
		memcpy(A.shadow[HR_ATOMIC] + 8, &now, 8);
	}
	q->epsn = urnic_psn_add(q->epsn, 1);
	xmit(&h, NULL, 0, 0);
	if (expect_reply(2, URNIC_OP_RC_ATOMIC_ACKNOWLEDGE, psn, -1, q->msn,
			 "the duplicate FETCH_ADD"))
		EXPECT(A.r.pkt.atmack_orig == old,
		       "the duplicate returned %llx, not the saved %llx",
		       (unsigned long long)A.r.pkt.atmack_orig, (unsigned long long)old);
	settle();
	EXPECT_CTR(s, "atomic_executed", 1);

	/* Aligned IOVA, unaligned memory. */
	snap(&s);
	h = hdr(3, URNIC_OP_RC_FETCH_ADD, A.qp[3].epsn);
	h.atmeth =
	    (struct urnic_atmeth){ A.mr[HR_ATOMIC_ODD].addr + 8, A.mr[HR_ATOMIC_ODD].rkey, 1, 0 };
	xmit(&h, NULL, 0, 0);
	expect_nak(3, A.qp[3].epsn, 0x61, "FETCH_ADD at an aligned IOVA over unaligned memory");
	settle();
	EXPECT_CTR(s, "atomic_executed", 0);
	probe(4);
}

/* Duplicate READs (IBTA 9.7.5.1.2; rxe-siw-perftest.md §2.11): one whose range lies in
 * the original READ is replayed from its PSN; one that grew, starts before, names
 * another R_Key, or has no READ at its PSN is dropped silently (class D). */
static void sc_duplicate_read(void)
{
	struct topts o = topts_default(2);
	const struct mrinfo *ro;
	struct urnic_ctrfile s;
	struct qpinfo *q;
	uint32_t p, msn, wpsn;

	start_target(&o);
	ro = &A.mr[HR_RO];
	q = &A.qp[0];
	p = q->epsn;
	good_read(0, 1024, 2 * MTU, "READ of 2 KiB");
	msn = q->msn;
	wpsn = q->epsn;
	good_write(0, 0, 16, 5, "a WRITE after the READ");

	snap(&s);
	send_read(0, p, ro->addr + 1024, ro->rkey, 4 * MTU);
	send_read(0, p, ro->addr, ro->rkey, 2 * MTU);
	send_read(0, p, ro->addr + 1024, A.mr[HR_RW].rkey, 2 * MTU);
	send_read(0, wpsn, ro->addr + 1024, ro->rkey, 2 * MTU);
	expect_silence("duplicate READs that grew, start before, name another R_Key, or "
		       "have no READ at their PSN");
	EXPECT_CTR(s, "drop_dup_no_resource", 4);
	EXPECT_CTR(s, "dup_request", 4);
	EXPECT_CTR(s, "tx_packets", 0);

	send_read(0, p, ro->addr + 1024, ro->rkey, 2 * MTU);
	expect_read_responses(0, p, 1024, 2 * MTU, msn, false, "the same READ again");
	send_read(0, urnic_psn_add(p, 1), ro->addr + 1024 + MTU, ro->rkey, MTU);
	expect_read_responses(0, urnic_psn_add(p, 1), 1024 + MTU, MTU, msn, true,
			      "its second half from its second PSN");
	settle();
	EXPECT_CTR(s, "dup_request", 6);
	probe(0);
	probe(1);
}

/* Length errors (IBTA 9.7.5.1.6, class C): payload over the path MTU, a FIRST that is
 * not a full MTU, a RETH length over 2^31, a WRITE_ONLY whose payload is not its RETH
 * length, a WRITE_LAST carrying more than its RETH granted: NAK invalid request (0x61)
 * and not one byte placed beyond what was granted. */
static void sc_length_errors(void)
{
	struct topts o = topts_default(8);
	const struct mrinfo *rw;
	struct urnic_ctrfile s;
	static uint8_t data[8192];
	struct urnic_pkt h;
	struct wcx w[64];
	int n;

	start_target(&o);
	rw = &A.mr[HR_RW];
	fill(data, sizeof(data), 11);
	snap(&s);

	h = hdr(0, URNIC_OP_RC_SEND_ONLY, A.qp[0].epsn);
	xmit(&h, data, MTU + 1, 0);
	expect_nak(0, A.qp[0].epsn, 0x61, "SEND_ONLY of MTU + 1 bytes");
	h = hdr(1, URNIC_OP_RC_RDMA_WRITE_ONLY, A.qp[1].epsn);
	h.reth = (struct urnic_reth){ rw->addr, rw->rkey, MTU + 4 };
	xmit(&h, data, MTU + 4, 0);
	expect_nak(1, A.qp[1].epsn, 0x61, "RDMA_WRITE_ONLY of MTU + 4 bytes");
	h = hdr(2, URNIC_OP_RC_SEND_FIRST, A.qp[2].epsn);
	xmit(&h, data, 1000, 0);
	expect_nak(2, A.qp[2].epsn, 0x61, "SEND_FIRST of less than the MTU");
	h = hdr(3, URNIC_OP_RC_SEND_ONLY, A.qp[3].epsn);
	xmit(&h, data, 8000, 0);
	expect_nak(3, A.qp[3].epsn, 0x61, "SEND_ONLY of 8000 bytes");
	h = hdr(4, URNIC_OP_RC_RDMA_WRITE_FIRST, A.qp[4].epsn);
	h.reth = (struct urnic_reth){ rw->addr, rw->rkey, 0xffff0000u };
	xmit(&h, data, MTU, 0);
	expect_nak(4, A.qp[4].epsn, 0x61, "RDMA_WRITE_FIRST with a RETH length over 2^31");
	h = hdr(5, URNIC_OP_RC_RDMA_WRITE_ONLY, A.qp[5].epsn);
	h.reth = (struct urnic_reth){ rw->addr + rw->len - 8, rw->rkey, 8 };
	xmit(&h, data, 16, 0);
	expect_nak(5, A.qp[5].epsn, 0x61, "RDMA_WRITE_ONLY of 16 bytes with a RETH length of 8");

	/* The first MTU of a 1124-byte WRITE at the very end of the region lands ... */
	h = hdr(6, URNIC_OP_RC_RDMA_WRITE_FIRST, A.qp[6].epsn);
	h.bth.ackreq = false;
	h.reth = (struct urnic_reth){ rw->addr + rw->len - (MTU + 100), rw->rkey, MTU + 100 };
	xmit(&h, data, MTU, 0);
	expect_silence("RDMA_WRITE_FIRST without AckReq");
	memcpy(A.shadow[HR_RW] + rw->len - (MTU + 100), data, MTU);
	/* ... its LAST with a full MTU instead of the 100 bytes left does not. */
	h = hdr(6, URNIC_OP_RC_RDMA_WRITE_LAST, urnic_psn_add(A.qp[6].epsn, 1));
	xmit(&h, data + MTU, MTU, 0);
	expect_nak(6, urnic_psn_add(A.qp[6].epsn, 1), 0x61,
		   "RDMA_WRITE_LAST carrying 924 bytes more than the RETH granted");
	settle();
	EXPECT_CTR(s, "nak_inv_req_sent", 7);
	for (int i = 0; i < 7; i++)
		expect_qp_state(i, "ERR");
	n = target_wcs(w, 64);
	for (int k = 0; k < n; k++)
		EXPECT(w[k].status != 0, "QP %d receive 0x%llx completed successfully", w[k].qp,
		       w[k].wr_id);

	/* Zero-length READ and WRITE check no R_Key (C9-88) and touch nothing. */
	h = hdr(7, URNIC_OP_RC_RDMA_READ_REQUEST, A.qp[7].epsn);
	h.reth = (struct urnic_reth){ 0xdeadbeef000ull, 0x7777, 0 };
	xmit(&h, NULL, 0, 0);
	A.qp[7].msn++;
	if (expect_reply(7, URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY, A.qp[7].epsn, -1, A.qp[7].msn,
			 "a zero-length READ with a made-up R_Key"))
		EXPECT(A.r.pkt.payload_bytes == 0, "the zero-length READ returned %u bytes",
		       A.r.pkt.payload_bytes);
	A.qp[7].epsn = urnic_psn_add(A.qp[7].epsn, 1);
	h = hdr(7, URNIC_OP_RC_RDMA_WRITE_ONLY, A.qp[7].epsn);
	h.reth = (struct urnic_reth){ 0xdeadbeef000ull, 0x7777, 0 };
	xmit(&h, NULL, 0, 0);
	A.qp[7].msn++;
	expect_reply(7, URNIC_OP_RC_ACKNOWLEDGE, A.qp[7].epsn, -1, A.qp[7].msn,
		     "a zero-length WRITE with a made-up R_Key");
	A.qp[7].epsn = urnic_psn_add(A.qp[7].epsn, 1);
	probe(7);
}

/* Sends n SEND_ONLY at the same PSN to a QP without receive WQEs; each must draw an RNR
 * NAK (IBTA 9.7.5.1.5: syndrome 0x20 | our min_rnr_timer, the packet's PSN). Returns
 * how many correct RNR NAKs came back. */
static uint32_t rnr_burst(int qi, uint32_t n)
{
	struct qpinfo *q = &A.qp[qi];
	struct urnic_pkt h = hdr(qi, URNIC_OP_RC_SEND_ONLY, q->epsn);
	uint8_t data[64], syn = (uint8_t)(URNIC_AETH_RNR_NAK | A.o.min_rnr_timer);
	uint32_t good = 0, bad = 0;
	char got[160];

	fill(data, 64, 1);
	for (uint32_t sent = 0; sent < n;) {
		uint32_t k, burst = n - sent < 32 ? n - sent : 32;

		for (k = 0; k < burst; k++)
			xmit(&h, data, 64, 0);
		sent += burst;
		for (k = 0; k < burst && get_reply(REPLY_MS); k++) {
			const struct urnic_pkt *p = &A.r.pkt;

			if (A.r.decoded && A.r.icrc_ok &&
			    p->bth.opcode == URNIC_OP_RC_ACKNOWLEDGE && p->bth.psn == q->epsn &&
			    p->aeth.syndrome == syn && p->aeth.msn == q->msn &&
			    p->bth.dqpn == q->dest) {
				good++;
			} else if (bad++ == 0) {
				describe(got, sizeof(got));
				fail_at(__LINE__, "rnr",
					"got %s; expected an RNR NAK %02x psn 0x%06x", got, syn,
					q->epsn);
			}
		}
	}
	return good;
}

/* A flood of new requests (IBTA 9.7.5.1.5): 10,000 SENDs to a QP with no receive posted
 * draw 10,000 RNR NAKs; SENDs ahead of the RNR NAK'd PSN are dropped silently; after a
 * WRITE at the expected PSN, 10,000 SENDs ahead draw one NAK sequence error and
 * silence; the target allocates nothing for them (its RSS grows by at most 1 MiB). */
static void sc_rnr_flood(void)
{
	struct topts o = topts_default(2);
	struct urnic_ctrfile s;
	uint8_t data[64];
	struct urnic_pkt h;
	struct wcx w[8];
	long rss0, rss1;
	uint32_t good, extra = 0;
	int n;

	o.recv = 0;
	start_target(&o);
	snap(&s);
	good = rnr_burst(0, 1000); /* warm-up: every buffer the path touches is touched */
	EXPECT(good == 1000, "%u of 1000 RNR NAKs", good);
	rss0 = target_rss_kb();
	good = rnr_burst(0, 10000);
	EXPECT(good == 10000, "%u of 10000 RNR NAKs", good);
	settle();
	EXPECT_CTR(s, "rnr_nak_sent", 11000);

	/* Ahead of the expected PSN right after an RNR NAK: silence. The RNR NAK already
	 * named the PSN the requester resumes from; a sequence NAK would cost it a retry. */
	snap(&s);
	fill(data, 64, 2);
	for (uint32_t k = 1; k <= 5000; k++) {
		h = hdr(0, URNIC_OP_RC_SEND_ONLY, urnic_psn_add(A.qp[0].epsn, k));
		xmit(&h, data, 64, 0);
		if (k % 256 == 0)
			settle();
	}
	while (get_reply(SILENCE_MS))
		extra++;
	EXPECT(extra == 0, "%u replies to SENDs ahead of an RNR NAK'd PSN", extra);
	settle();
	EXPECT_CTR(s, "nak_seq_sent", 0);
	EXPECT_CTR(s, "drop_psn_after_nak", 5000);

	/* A WRITE at the expected PSN needs no receive; then SENDs ahead (across the 24-bit
	 * wrap): one sequence NAK, then nothing (IBTA 9.7.5.1.2). */
	good_write(0, 0, 64, 5, "WRITE at the expected PSN after the RNR NAKs");
	snap(&s);
	for (uint32_t k = 1; k <= 10000; k++) {
		h = hdr(0, URNIC_OP_RC_SEND_ONLY, urnic_psn_add(A.qp[0].epsn, k));
		xmit(&h, data, 64, 0);
		if (k % 256 == 0)
			settle();
	}
	expect_nak(0, A.qp[0].epsn, 0x60, "the first SEND ahead");
	while (get_reply(SILENCE_MS))
		extra++;
	EXPECT(extra == 0, "%u more replies to SENDs ahead of the expected PSN", extra);
	settle();
	EXPECT_CTR(s, "nak_seq_sent", 1);
	EXPECT_CTR(s, "drop_psn_after_nak", 9999);
	rss1 = target_rss_kb();
	say("target RSS %ld kB before the flood, %ld kB after", rss0, rss1);
	EXPECT(rss0 > 0 && rss1 - rss0 <= 1024, "the target's RSS grew by %ld kB", rss1 - rss0);

	/* A receive posted now is used by the next SEND at the expected PSN. */
	tcmd("post 0 1");
	good_send(0, 64, 3, "SEND after a receive was posted");
	n = target_wcs(w, 8);
	EXPECT(n == 1 && w[0].qp == 0 && w[0].status == 0 && w[0].opcode == 128 &&
		   w[0].byte_len == 64,
	       "expected one successful 64-byte receive, got %d completion(s), first status %d", n,
	       n ? w[0].status : -1);
	probe(1);
}

/* READ requests back to back: each answered correctly, in PSN order, with the bytes of
 * the region; the last READ always is; nothing grows. */
struct flood {
	uint32_t nreq, len, npsn, e, msn0, got;
	int32_t last; /* the last response's PSN, relative to e */
	bool last_answered;
	const char *what;
};

/* Checks the response in A.r: for one of the READs, in PSN order, with its bytes. */
static void flood_response(struct flood *f)
{
	const struct mrinfo *ro = &A.mr[HR_RO];
	const struct urnic_pkt *p = &A.r.pkt;
	int32_t d = urnic_psn_diff(p->bth.psn, f->e);
	uint32_t rk = d >= 0 ? (uint32_t)d / f->npsn : 0, j = d >= 0 ? (uint32_t)d % f->npsn : 0;
	uint64_t roff = (rk * 64u) % (ro->len - f->len) + (uint64_t)j * MTU;
	uint32_t n = f->len - j * MTU < MTU ? f->len - j * MTU : MTU;
	bool aeth = urnic_opcode_info(p->bth.opcode)->flags & URNIC_OPF_AETH;
	char desc[160];

	f->got++;
	describe(desc, sizeof(desc));
	if (!A.r.decoded || !A.r.icrc_ok || d < 0 || d >= (int32_t)(f->nreq * f->npsn) ||
	    d <= f->last || !(urnic_opcode_info(p->bth.opcode)->flags & URNIC_OPF_READ) ||
	    p->payload_bytes != n || memcmp(p->payload, A.shadow[HR_RO] + roff, n) != 0 ||
	    (aeth && p->aeth.msn != f->msn0 + rk + 1)) {
		fail_at(__LINE__, "read flood", "%s: bad or out-of-order response %s", f->what,
			desc);
		return;
	}
	f->last = d;
	if (rk == f->nreq - 1 && (p->bth.opcode == URNIC_OP_RC_RDMA_READ_RESPONSE_LAST ||
				  p->bth.opcode == URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY))
		f->last_answered = true;
}

/* nreq READs of len bytes sent back to back on QP qi; *rss: the target's RSS
 * afterwards. */
static void read_flood(int qi, uint32_t nreq, uint32_t len, long *rss)
{
	struct qpinfo *q = &A.qp[qi];
	const struct mrinfo *ro = &A.mr[HR_RO];
	struct flood f = { nreq, len, (len + MTU - 1) / MTU, q->epsn, q->msn, 0, -1, false, NULL };
	struct urnic_ctrfile s;
	char what[64];
	uint64_t end;

	snap(&s);
	snprintf(what, sizeof(what), "%u READs of %u bytes", nreq, len);
	f.what = what;
	for (uint32_t k = 0; k < nreq; k++) {
		uint64_t off = (k * 64u) % (ro->len - len);

		send_read(qi, urnic_psn_add(f.e, k * f.npsn), ro->addr + off, ro->rkey, len);
		/* Drain what has come back so far (the socket buffer may be small). */
		if (k % 16 == 15)
			while (get_reply(-1))
				flood_response(&f);
	}
	/* The rest: until the target has sent no more than we have. */
	settle();
	end = now_ms() + 3000;
	while (now_ms() < end) {
		if (get_reply(100)) {
			flood_response(&f);
			continue;
		}
		if (ctr("read_resp_sent") - snap_of(&s, "read_resp_sent") <= f.got)
			break;
	}
	EXPECT(f.last_answered, "%s: the last READ was not answered in full", what);
	EXPECT_CTR(s, "read_resp_sent", f.got);
	say("%s: %u response packets for %u requests", what, f.got, nreq);
	q->epsn = urnic_psn_add(f.e, nreq * f.npsn);
	q->msn += nreq;
	*rss = target_rss_kb();
}

/* True once every thread of the target is stopped: kill(SIGSTOP) returns before the
 * signal has stopped them, and a thread still running could take a packet meant for
 * the stopped batch. */
static bool target_stopped(void)
{
	char path[64], stat[512];
	struct dirent *de;
	bool all = true;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)A.pid);
	d = opendir(path);
	if (!d)
		return false;
	while (all && (de = readdir(d)) != NULL) {
		char *st;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/stat", (int)A.pid, de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue; /* a thread that just ended */
		st = fgets(stat, sizeof(stat), f) ? strrchr(stat, ')') : NULL;
		fclose(f);
		all = st && st[1] == ' ' && (st[2] == 'T' || st[2] == 't');
	}
	closedir(d);
	return all;
}

/* More READs than max_dest_rd_atomic at once (IBTA 9.7.5.1.3: the requester must not
 * exceed the responder's resources): the target is stopped while 64 READs queue up, so
 * it takes them in one batch. The fifth gets NAK Invalid Request and the QP goes to error,
 * which cancels the responses not yet sent to the 4 it had resources for (what of them
 * leaves is right and in order); nothing more is answered. */
static void read_flood_refused(int qi, uint32_t nreq)
{
	struct qpinfo *q = &A.qp[qi];
	const struct mrinfo *ro = &A.mr[HR_RO];
	struct flood f = { 4, MTU, 1, q->epsn, q->msn, 0, -1, false, "READs within the grant" };
	struct urnic_ctrfile s;
	uint32_t naks = 0, others = 0;

	snap(&s);
	REQUIRE(kill(A.pid, SIGSTOP) == 0, "SIGSTOP: %s", strerror(errno));
	for (int i = 0; i < 2000 && !target_stopped(); i++)
		sleep_ms(1);
	REQUIRE(target_stopped(), "the target did not stop within 2 s");
	for (uint32_t k = 0; k < nreq; k++)
		send_read(qi, urnic_psn_add(f.e, k), ro->addr + (k * 64u) % (ro->len - MTU),
			  ro->rkey, MTU);
	REQUIRE(kill(A.pid, SIGCONT) == 0, "SIGCONT: %s", strerror(errno));
	settle();
	while (get_reply(300)) {
		const struct urnic_pkt *p = &A.r.pkt;

		if (A.r.decoded && p->bth.opcode == URNIC_OP_RC_ACKNOWLEDGE) {
			EXPECT(A.r.icrc_ok && p->bth.psn == urnic_psn_add(f.e, 4) &&
				       p->aeth.syndrome == (URNIC_AETH_NAK | URNIC_NAK_INVALID_REQ),
			       "flood: expected NAK invalid request psn 0x%06x, got psn 0x%06x "
			       "syndrome 0x%02x",
			       urnic_psn_add(f.e, 4), p->bth.psn, p->aeth.syndrome);
			naks++;
		} else if (A.r.decoded && (urnic_opcode_info(p->bth.opcode)->flags & URNIC_OPF_READ)) {
			flood_response(&f);
		} else {
			others++;
		}
	}
	say("%u READs at once: %u answered, %u NAK, %u other packets", nreq, f.got, naks, others);
	EXPECT(f.got <= 4, "%u response packets for the 4 granted READs", f.got);
	EXPECT(naks == 1 && others == 0, "expected one NAK and nothing else, got %u and %u", naks,
	       others);
	EXPECT_CTR(s, "refused_rd_atomic", 1);
	EXPECT_CTR(s, "nak_inv_req_sent", 1);
	expect_qp_state(qi, "ERR");
}

static void sc_read_flood(void)
{
	struct topts o = topts_default(2);
	long rss0, rss1, rss2;

	start_target(&o);
	/* READs back to back, as many as the target grants (max_dest_rd_atomic 4). */
	read_flood(0, 4, 512, &rss0); /* warm-up */
	read_flood(0, 4, MTU, &rss1);
	read_flood(0, 4, 4 * MTU, &rss1);
	read_flood_refused(0, 64);
	rss2 = target_rss_kb();
	say("target RSS %ld kB after the warm-up, %ld kB after the floods", rss0, rss2);
	EXPECT(rss0 > 0 && rss2 - rss0 <= 1024, "the target's RSS grew by %ld kB", rss2 - rss0);
	(void)rss1;
	probe(1);
}

/* The next request from the target on QP qi must be `opcode` with psn; retransmissions
 * of earlier PSNs are skipped. */
static bool expect_request(int qi, uint8_t opcode, uint32_t psn, const char *what)
{
	char got[160];

	for (;;) {
		const struct urnic_pkt *p = &A.r.pkt;

		if (!get_reply(REPLY_MS)) {
			fail_at(__LINE__, "request", "%s: nothing from the target", what);
			return false;
		}
		if (A.r.decoded && urnic_psn_before(p->bth.psn, psn) &&
		    (urnic_opcode_info(p->bth.opcode)->flags & URNIC_OPF_REQ))
			continue;
		describe(got, sizeof(got));
		if (!A.r.decoded || !A.r.icrc_ok || p->bth.opcode != opcode || p->bth.psn != psn ||
		    p->bth.dqpn != A.qp[qi].dest || !p->bth.ackreq) {
			fail_at(__LINE__, "request", "%s: got %s; expected %s psn 0x%06x", what,
				got, opname(opcode), psn);
			return false;
		}
		return true;
	}
}

static struct urnic_pkt response(int qi, uint8_t opcode, uint32_t psn, uint8_t syndrome,
				 uint32_t msn)
{
	struct urnic_pkt h = hdr(qi, opcode, psn);

	h.bth.ackreq = false;
	h.aeth = (struct urnic_aeth){ syndrome, msn };
	return h;
}

/* Waits (up to 2 s) for the target to poll n completions into w. */
static int wait_wcs(struct wcx *w, int n)
{
	uint64_t end = now_ms() + 2000;
	int got = 0;

	while (got < n && now_ms() < end) {
		got += target_wcs(w + got, n - got);
		if (got < n)
			sleep_ms(5);
	}
	return got;
}

/* The completer (IBTA 9.7.5.2): responses to nothing the target asked for - ACKs outside
 * its outstanding PSNs, READ responses and atomic ACKs to a SEND, a reserved AETH
 * syndrome - are dropped and write nothing; the real ACK then completes the SEND once.
 * With nothing outstanding, NAKs naming the last acknowledged PSN are ignored, as rxe's
 * completer ignores responses when no WQE is outstanding: the QP stays in RTS and its
 * next SEND works. */
static void sc_completer(void)
{
	struct topts o = topts_default(2);
	struct urnic_ctrfile s;
	struct qpinfo *q;
	uint8_t junk[MTU];
	struct urnic_pkt h;
	struct wcx w[8];
	int n;

	start_target(&o);
	q = &A.qp[0];
	fill(junk, MTU, 0x77);
	tcmd("send 0 100 %d", 0x5e0d);
	if (expect_request(0, URNIC_OP_RC_SEND_ONLY, q->sq_psn, "the target's SEND"))
		EXPECT(A.r.pkt.payload_bytes == 100 &&
			   memcmp(A.r.pkt.payload, A.shadow[HR_NONE], 100) == 0,
		       "the target's SEND does not carry its buffer");
	snap(&s);
	h = response(0, URNIC_OP_RC_ACKNOWLEDGE, urnic_psn_add(q->sq_psn, 1000), 0x1f, 1);
	xmit(&h, NULL, 0, 0);
	h = response(0, URNIC_OP_RC_ACKNOWLEDGE, urnic_psn_add(q->sq_psn, 0x1000000 - 5), 0x1f, 1);
	xmit(&h, NULL, 0, 0);
	h = response(0, URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY, q->sq_psn, 0x1f, 1);
	xmit(&h, junk, 8, 0);
	h = response(0, URNIC_OP_RC_ATOMIC_ACKNOWLEDGE, q->sq_psn, 0x1f, 1);
	h.atmack_orig = 0xdeadbeefull;
	xmit(&h, NULL, 0, 0);
	h = response(0, URNIC_OP_RC_RDMA_READ_RESPONSE_MIDDLE, q->sq_psn, 0, 0);
	xmit(&h, junk, MTU, 0);
	h = response(0, URNIC_OP_RC_ACKNOWLEDGE, q->sq_psn, 0x40, 1); /* reserved type */
	xmit(&h, NULL, 0, 0);
	expect_silence("responses to nothing the target asked for");
	EXPECT_CTR(s, "drop_stale_response", 5);
	EXPECT_CTR(s, "drop_bad_header", 1);
	n = target_wcs(w, 8);
	EXPECT(n == 0, "%d completions before the real ACK", n);
	expect_qp_state(0, "RTS");

	h = response(0, URNIC_OP_RC_ACKNOWLEDGE, q->sq_psn, 0x1f, 1);
	xmit(&h, NULL, 0, 0);
	n = wait_wcs(w, 1);
	EXPECT(n == 1 && w[0].wr_id == 0x5e0d && w[0].status == 0 && w[0].opcode == 0,
	       "the SEND did not complete successfully once (%d completions, status %d)", n,
	       n ? w[0].status : -1);

	/* Nothing outstanding now: NAKs naming the last acknowledged PSN. */
	snap(&s);
	for (int k = 0; k < 10; k++) {
		h = response(0, URNIC_OP_RC_ACKNOWLEDGE, q->sq_psn, 0x60, 1);
		xmit(&h, NULL, 0, 0);
		settle();
	}
	expect_silence("NAKs with nothing outstanding");
	expect_qp_state(0, "RTS");
	n = target_wcs(w, 8);
	EXPECT(n == 0, "%d completions after NAKs with nothing outstanding (first status %d)", n,
	       n ? w[0].status : -1);

	tcmd("send 0 64 %d", 0x5e0e);
	if (expect_request(0, URNIC_OP_RC_SEND_ONLY, urnic_psn_add(q->sq_psn, 1),
			   "the target's next SEND")) {
		h = response(0, URNIC_OP_RC_ACKNOWLEDGE, urnic_psn_add(q->sq_psn, 1), 0x1f, 2);
		xmit(&h, NULL, 0, 0);
	}
	n = wait_wcs(w, 1);
	EXPECT(n == 1 && w[0].wr_id == 0x5e0e && w[0].status == 0,
	       "the next SEND did not complete successfully (%d completions, status %d)", n,
	       n ? w[0].status : -1);
	probe(1);
}

/* FLUSH and ATOMIC_WRITE (IBTA 1.5, Annex A19). The target's QPs were not given the
 * flush rights (rxe: IB_ACCESS_FLUSH_*), so a FLUSH is an invalid request (0x61, class
 * C), whatever its R_Key. An ATOMIC_WRITE is either not supported (0x61) or performed
 * (an ACK, and its 8 bytes in memory); an ACK for bytes that never land is wrong. */
static void sc_unsupported_opcodes(void)
{
	struct topts o = topts_default(4);
	const struct mrinfo *rw;
	struct urnic_pkt h;
	uint8_t data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	char got[160];

	start_target(&o);
	rw = &A.mr[HR_RW];
	h = hdr(0, URNIC_OP_RC_ATOMIC_WRITE, A.qp[0].epsn);
	h.reth = (struct urnic_reth){ rw->addr + 64, rw->rkey, 8 };
	xmit(&h, data, 8, 0);
	if (!get_reply(REPLY_MS)) {
		fail_at(__LINE__, "reply", "ATOMIC_WRITE: no reply");
	} else if (A.r.pkt.bth.opcode == URNIC_OP_RC_ACKNOWLEDGE &&
		   A.r.pkt.aeth.syndrome == (URNIC_AETH_NAK | URNIC_NAK_INVALID_REQ)) {
		expect_qp_state(0, "ERR"); /* not supported */
	} else {
		describe(got, sizeof(got));
		tcmd("read rw 64 8");
		if (A.nans == 1 && strcmp(A.ans[0], "data 0102030405060708") == 0)
			memcpy(A.shadow[HR_RW] + 64, data, 8); /* supported and performed */
		else
			fail_at(__LINE__, "ATOMIC_WRITE",
				"answered with %s, but its 8 bytes did not land (%s); expected NAK "
				"invalid request (0x61) if not supported",
				got, A.nans ? A.ans[0] : "");
	}
	h = hdr(1, URNIC_OP_RC_FLUSH, A.qp[1].epsn);
	h.feth = 1; /* global visibility */
	h.reth = (struct urnic_reth){ rw->addr, rw->rkey ^ 0x5a, 64 };
	xmit(&h, NULL, 0, 0);
	expect_nak(1, A.qp[1].epsn, 0x61, "FLUSH with a forged R_Key");
	h = hdr(2, URNIC_OP_RC_FLUSH, A.qp[2].epsn);
	h.feth = 1;
	h.reth = (struct urnic_reth){ rw->addr, rw->rkey, 64 };
	xmit(&h, NULL, 0, 0);
	expect_nak(2, A.qp[2].epsn, 0x61, "FLUSH on a QP without flush rights");
	settle();
	expect_qp_state(1, "ERR");
	expect_qp_state(2, "ERR");
	probe(3);
}

static const struct scenario {
	const char *name;
	void (*run)(void);
} scenarios[] = {
	{ "bad_icrc", sc_bad_icrc },
	{ "icrc_ipv4_id", sc_icrc_ipv4_id },
	{ "unknown_qp", sc_unknown_qp },
	{ "bad_pkey", sc_bad_pkey },
	{ "foreign_source_and_transport", sc_foreign_source_and_transport },
	{ "truncated_headers", sc_truncated_headers },
	{ "op_sequence", sc_op_sequence },
	{ "psn_window", sc_psn_window },
	{ "remote_access", sc_remote_access },
	{ "misaligned_atomic", sc_misaligned_atomic },
	{ "duplicate_read", sc_duplicate_read },
	{ "length_errors", sc_length_errors },
	{ "rnr_flood", sc_rnr_flood },
	{ "read_flood", sc_read_flood },
	{ "completer", sc_completer },
	{ "unsupported_opcodes", sc_unsupported_opcodes },
};

/* Our UDP socket on ip:4791 (urnic answers there), DF set so Linux sends IP ID 0. */
static int open_socket(const uint8_t *ip, const char *ip_s)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(URNIC_ROCE_UDP_PORT) };
	int pmtu = IP_PMTUDISC_DO, big = 8 << 20;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	REQUIRE(fd >= 0, "socket: %s", strerror(errno));
	REQUIRE(setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)) == 0,
		"IP_MTU_DISCOVER: %s", strerror(errno));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	memcpy(&sin.sin_addr, ip, 4);
	REQUIRE(bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0, "bind %s:4791: %s", ip_s,
		strerror(errno));
	return fd;
}

static void parse_addr(const char *s, char *out, size_t cap, uint8_t *ip)
{
	REQUIRE(s && inet_pton(AF_INET, s, ip) == 1, "not an IPv4 address: '%s'", s ? s : "");
	snprintf(out, cap, "%s", s);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "target", required_argument, NULL, 't' },
		{ "target-addr", required_argument, NULL, 'T' },
		{ "addr", required_argument, NULL, 'a' },
		{ "spoof-addr", required_argument, NULL, 's' },
		{ "list", no_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	const char *taddr = NULL, *addr = NULL, *spoof = NULL;
	const struct scenario *sc = NULL;
	int c;

	A.scenario = "hostile";
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			A.target_path = optarg;
			break;
		case 'T':
			taddr = optarg;
			break;
		case 'a':
			addr = optarg;
			break;
		case 's':
			spoof = optarg;
			break;
		case 'l':
			for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
				printf("%s\n", scenarios[i].name);
			return 0;
		default:
			return 2;
		}
	}
	for (size_t i = 0; optind < argc && i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (strcmp(argv[optind], scenarios[i].name) == 0)
			sc = &scenarios[i];
	if (!sc || !A.target_path) {
		fprintf(stderr,
			"usage: %s --target PATH --target-addr IP --addr IP --spoof-addr IP "
			"SCENARIO (--list shows them)\n",
			argv[0]);
		return 2;
	}
	A.scenario = sc->name;
	parse_addr(taddr, A.taddr_s, sizeof(A.taddr_s), A.taddr);
	parse_addr(addr, A.addr_s, sizeof(A.addr_s), A.addr);
	parse_addr(spoof, A.spoof_s, sizeof(A.spoof_s), A.spoof);
	A.fd = open_socket(A.addr, A.addr_s);
	A.spoof_fd = open_socket(A.spoof, A.spoof_s);
	sc->run();
	return finish();
}
