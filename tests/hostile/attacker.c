/* SPDX-License-Identifier: MIT */
/*
 * attacker.c - a hostile RoCEv2 peer: crafts packets by hand on a plain UDP socket and
 * checks what a running urnic device (hostile_target, its child) answers. This file is
 * the harness (the target, packets, replies, counters, memory checks, main and the
 * scenario table); the scenarios are in validation.c (forged packets), requests.c
 * (requests refused), sequence.c (PSN and opcode sequence, duplicates, the completer)
 * and flood.c (RNR and READ floods), declared in attacker.h.
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

#include "attacker.h"
#include "counters_file.h"
#include "hostile.h"
#include "wire/byteorder.h"
#include "wire/pkt.h"
#include "wire/psn.h"

struct attacker A;

/* ---- reporting ---- */

void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("%s: ", A.scenario);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
}

void fail_in(const char *file, int line, const char *expr, const char *fmt, ...)
{
	const char *base = strrchr(file, '/');
	va_list ap;

	va_start(ap, fmt);
	printf("%s: FAIL (%s:%d: %s): ", A.scenario, base ? base + 1 : file, line, expr);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
	A.failures++;
}

uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

long target_rss_kb(void)
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

void send_all(struct mmsghdr *msg, uint32_t n)
{
	uint32_t done = 0;

	while (done < n) {
		int sent = sendmmsg(A.fd, msg + done, n - done, 0);

		if (sent < 0) {
			REQUIRE(errno == EAGAIN || errno == ENOBUFS || errno == EINTR,
				"sendmmsg: %s", strerror(errno));
			sleep_ms(1);
			continue;
		}
		done += (uint32_t)sent;
	}
}

void keep_up(uint64_t left)
{
	uint64_t end = now_ms() + 5000;

	while (ctr("rx_packets") + left < A.rx_sent && now_ms() < end)
		sleep_ms(1);
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
void tcmd(const char *fmt, ...)
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

bool parse_qp_line(const char *line)
{
	unsigned qpn, dest, rq, sq;
	int i;

	if (sscanf(line, "qp %d qpn %x dest %x rq_psn %x sq_psn %x", &i, &qpn, &dest, &rq, &sq) !=
		    5 ||
	    i < 0 || i >= HOSTILE_MAX_QPS)
		return false;
	/* A QP created later on a destroyed one's index starts afresh. */
	memset(&A.qp[i], 0, sizeof(A.qp[i]));
	A.qp[i].qpn = qpn;
	A.qp[i].dest = dest;
	A.qp[i].rq_psn = A.qp[i].epsn = rq;
	A.qp[i].sq_psn = sq;
	if (i + 1 > A.nqps)
		A.nqps = i + 1;
	return true;
}

static void parse_startup(void)
{
	char line[512];
	int got_ready = 0;

	while (!got_ready) {
		char name[32];
		unsigned long long addr, len;
		unsigned rkey;
		int pid;

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
		} else if (parse_qp_line(line)) {
			continue;
		} else {
			track_recv_line(line);
		}
	}
}

void start_target(const struct topts *o)
{
	int to[2], from[2];
	char a[12][32];
	char *argv[32];
	int n = 0;

	A.nregions = HR_COUNT;
	for (int r = 0; r < HR_COUNT; r++)
		snprintf(A.rname[r], sizeof(A.rname[r]), "%s", hostile_region_names[r]);

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
	if (o->uc) {
		snprintf(a[7], sizeof(a[7]), "%d", o->uc);
		argv[n++] = "--uc";
		argv[n++] = a[7];
	}
	if (o->ud) {
		snprintf(a[8], sizeof(a[8]), "%d", o->ud);
		argv[n++] = "--ud";
		argv[n++] = a[8];
	}
	if (o->srq) {
		snprintf(a[9], sizeof(a[9]), "%d", o->srq);
		argv[n++] = "--srq";
		argv[n++] = a[9];
	}
	if (o->recv_bytes) {
		snprintf(a[10], sizeof(a[10]), "%d", o->recv_bytes);
		argv[n++] = "--recv-bytes";
		argv[n++] = a[10];
	}
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
		if (o->env)
			putenv((char *)o->env);
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
void stop_target(void)
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
	/* A device without the counter (an older library built with these tests): its
	 * checks fail and read 0, the scenario goes on. */
	fail_at(__LINE__, "counter", "the device has no counter %s", name);
	return -1;
}

static void ctr_read(struct urnic_ctrfile *f)
{
	int ret = urnic_ctrfile_read(A.ctr_path, A.pid, f);

	REQUIRE(ret == 0, "cannot read %s: %s", A.ctr_path, strerror(-ret));
}

uint64_t ctr(const char *name)
{
	struct urnic_ctrfile f;
	int i = ctr_index(name);

	ctr_read(&f);
	return i >= 0 && (uint32_t)i < f.ncounters ? f.values[i] : 0;
}

uint64_t snap_of(const struct urnic_ctrfile *s, const char *name)
{
	int i = ctr_index(name);

	return i >= 0 && (uint32_t)i < s->ncounters ? s->values[i] : 0;
}

/* Waits until the target has taken in every datagram we sent: the engine copies its
 * counters out after the pass that handled them, replies already sent. */
void settle(void)
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
uint64_t wait_ctr(const char *name, uint64_t want)
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
void snap(struct urnic_ctrfile *s)
{
	settle();
	ctr_read(s);
}

/* ---- packets ---- */

struct urnic_pkt hdr(int qi, uint8_t opcode, uint32_t psn)
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

void send_raw(const uint8_t *buf, size_t len, bool spoof)
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
size_t build(const struct urnic_pkt *h0, const void *payload, uint32_t len, unsigned flags,
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
	flow.ip_id = (flags & X_IPV4_ID) ? A.ip_id : 0;
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

void xmit(const struct urnic_pkt *h, const void *payload, uint32_t len, unsigned flags)
{
	static uint8_t buf[PKT_MAX + 128];

	send_raw(buf, build(h, payload, len, flags, buf, sizeof(buf)), flags & X_SPOOF);
}

/* The next datagram from the target into A.r, within timeout_ms. */
bool get_reply(int timeout_ms)
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

const char *opname(uint8_t op)
{
	const char *n = urnic_opcode_info(op)->name;

	return n ? n : "?";
}

void describe(char *s, size_t cap)
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
bool expect_reply(int qi, uint8_t opcode, uint32_t psn, int syndrome, int64_t msn, const char *what)
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

void expect_silence(const char *what)
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

/* What packets the target must drop without a word leave: silence on our socket, and not
 * one packet sent since snapshot s, as a reply sent to another address (the spoofed one)
 * never reaches our socket. */
void expect_silent_drop(const struct urnic_ctrfile *s, const char *what)
{
	expect_silence(what);
	EXPECT_CTR(*s, "tx_packets", 0);
}

void expect_nak(int qi, uint32_t psn, uint8_t syndrome, const char *what)
{
	expect_reply(qi, URNIC_OP_RC_ACKNOWLEDGE, psn, syndrome, A.qp[qi].msn, what);
}

void expect_qp_state(int qi, const char *state)
{
	char want[64];

	tcmd("qp %d", qi);
	snprintf(want, sizeof(want), "qp %d %s", qi, state);
	EXPECT(A.nans == 1 && strcmp(A.ans[0], want) == 0, "QP %d: target says '%s', expected %s",
	       qi, A.nans ? A.ans[0] : "", state);
}

/* ---- requests that must work ---- */

void fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

/* The READ responses for len bytes of region ro from off, PSNs from psn, carrying msn
 * (IBTA 9.7.5.1.3: FIRST/MIDDLE/LAST or ONLY, AETH on all but MIDDLE); mid: a replay
 * that starts inside the original READ, so it has no FIRST. */
void expect_read_responses(int qi, uint32_t psn, uint64_t off, uint32_t len, uint32_t msn, bool mid,
			   const char *what)
{
	expect_read_responses_in(HR_RO, qi, psn, off, len, msn, mid, what);
}

void expect_read_responses_in(int r, int qi, uint32_t psn, uint64_t off, uint32_t len, uint32_t msn,
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
			       memcmp(A.r.pkt.payload, A.shadow[r] + off + k * MTU, n) == 0,
		       "%s: response %u does not carry the region's bytes", what, k);
	}
}

void send_read(int qi, uint32_t psn, uint64_t va, uint32_t rkey, uint32_t len)
{
	struct urnic_pkt h = hdr(qi, URNIC_OP_RC_RDMA_READ_REQUEST, psn);

	h.reth = (struct urnic_reth){ va, rkey, len };
	xmit(&h, NULL, 0, 0);
}

/* A READ of len bytes from region ro at off: the responses must carry its bytes. */
void good_read(int qi, uint64_t off, uint32_t len, const char *what)
{
	struct qpinfo *q = &A.qp[qi];
	uint32_t npsn = len ? (len + MTU - 1) / MTU : 1;

	send_read(qi, q->epsn, A.mr[HR_RO].addr + off, A.mr[HR_RO].rkey, len);
	q->msn++;
	expect_read_responses(qi, q->epsn, off, len, q->msn, false, what);
	q->epsn = urnic_psn_add(q->epsn, npsn);
}

/* The liveness probe: a small READ on QP qi. */
void probe(int qi)
{
	char what[64];

	snprintf(what, sizeof(what), "probe READ on QP %d", qi);
	good_read(qi, 128 + (A.probes++ * 64) % 4096, 64, what);
}

/* A WRITE_ONLY of len bytes at region rw + off, sent with xmit flags, that must be
 * ACKed and land. */
void good_write_x(int qi, uint64_t off, uint32_t len, uint32_t seed, unsigned flags,
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

void good_write(int qi, uint64_t off, uint32_t len, uint32_t seed, const char *what)
{
	good_write_x(qi, off, len, seed, 0, what);
}

/* A SEND_ONLY that must be ACKed and land in the QP's next receive buffer. */
void good_send(int qi, uint32_t len, uint32_t seed, const char *what)
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

void good_uc_write(int qi, int r, uint64_t off, uint32_t len, uint32_t seed, uint32_t psn,
		   const char *what)
{
	struct urnic_pkt h = hdr(qi, URNIC_OP_UC_RDMA_WRITE_ONLY, psn);
	uint8_t data[MTU];
	char want[2 * MTU + 8];

	fill(data, len, seed);
	h.bth.ackreq = false;
	h.reth = (struct urnic_reth){ A.mr[r].addr + off, A.mr[r].rkey, len };
	xmit(&h, data, len, 0);
	expect_silence(what);
	A.qp[qi].epsn = urnic_psn_add(psn, 1);
	tcmd("read %s %llu %u", A.rname[r], (unsigned long long)off, len);
	memcpy(want, "data ", 5);
	for (uint32_t i = 0; i < len; i++)
		snprintf(want + 5 + 2 * i, 3, "%02x", data[i]);
	if (A.nans == 1 && strcmp(A.ans[0], want) == 0)
		memcpy(A.shadow[r] + off, data, len);
	else
		fail_at(__LINE__, "memory", "%s: its %u bytes did not land", what, len);
}

/* ---- memory ---- */

static void report_body_diff(int r)
{
	uint64_t len = A.mr[r].len, first = len, last = 0;

	for (uint64_t off = 0; off < len; off += 4096) {
		uint64_t n = len - off < 4096 ? len - off : 4096;
		const char *hex;

		tcmd("read %s %llu %llu", A.rname[r], (unsigned long long)off,
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
		say("  region %s differs from what was granted at bytes %llu..%llu", A.rname[r],
		    (unsigned long long)first, (unsigned long long)last);
}

/* Every guard as at start, every region exactly as the granted operations left it. */
static void check_memory(void)
{
	unsigned long long lo[HOSTILE_MAX_REGIONS], body[HOSTILE_MAX_REGIONS],
		hi[HOSTILE_MAX_REGIONS];

	tcmd("sums");
	REQUIRE(A.nans == A.nregions, "sums: %d lines", A.nans);
	/* All lines first: report_body_diff's commands replace A.ans. */
	for (int r = 0; r < A.nregions; r++) {
		char name[32];

		REQUIRE(sscanf(A.ans[r], "sum %31s %llx %llx %llx", name, &lo[r], &body[r],
			       &hi[r]) == 4,
			"bad sums line '%s'", A.ans[r]);
	}
	for (int r = 0; r < A.nregions; r++) {
		EXPECT(lo[r] == A.base_lo[r], "the guard bytes below region %s changed",
		       A.rname[r]);
		EXPECT(hi[r] == A.base_hi[r], "the guard bytes above region %s changed",
		       A.rname[r]);
		if (body[r] != hostile_fnv(A.shadow[r], A.mr[r].len)) {
			fail_at(__LINE__, "memory",
				"region %s is not what the granted operations left", A.rname[r]);
			report_body_diff(r);
		}
	}
}

/* The completions the target polled since the last call, into w (at most n). */
int target_wcs(struct wcx *w, int n)
{
	int got = 0;

	tcmd("wc");
	for (int i = 0; i < A.nans && got < n; i++)
		if (sscanf(A.ans[i], "wc %d %llx %d %d %u %d", &w[got].qp, &w[got].wr_id,
			   &w[got].status, &w[got].opcode, &w[got].byte_len, &w[got].flags) == 6)
			got++;
	return got;
}

int add_region(const char *name, uint64_t len, const char *flags)
{
	int r = A.nregions;
	unsigned long long addr, got_len, lo, body, hi;
	unsigned rkey = 0;
	char nm[32];

	REQUIRE(r < HOSTILE_MAX_REGIONS, "too many regions");
	tcmd("reg %s %llu %s", name, (unsigned long long)len, flags);
	REQUIRE(A.nans == 1 &&
			sscanf(A.ans[0], "mr %31s addr %llx len %llu rkey %x", nm, &addr, &got_len,
			       &rkey) >= 3 &&
			got_len == len,
		"reg %s: '%s'", name, A.nans ? A.ans[0] : "");
	A.mr[r] = (struct mrinfo){ addr, len, rkey };
	snprintf(A.rname[r], sizeof(A.rname[r]), "%s", name);
	A.shadow[r] = malloc(len);
	REQUIRE(A.shadow[r] != NULL, "malloc");
	for (uint64_t i = 0; i < len; i++)
		A.shadow[r][i] = hostile_pattern((unsigned)r, 0, i);
	A.nregions++;
	tcmd("sums");
	REQUIRE(A.nans == A.nregions &&
			sscanf(A.ans[r], "sum %31s %llx %llx %llx", nm, &lo, &body, &hi) == 4,
		"sums after reg %s", name);
	A.base_lo[r] = lo;
	A.base_hi[r] = hi;
	REQUIRE(body == hostile_fnv(A.shadow[r], len), "region %s does not hold the agreed pattern",
		name);
	return r;
}

/* Ends a scenario: memory, liveness, the target's own exit. Returns the exit status. */
static int finish(void)
{
	EXPECT(target_alive(), "the target died");
	check_memory();
	stop_target();
	for (int r = 0; r < A.nregions; r++)
		free(A.shadow[r]);
	free_ans();
	if (A.failures)
		say("FAILED: %d check(s)", A.failures);
	else
		say("ok");
	return A.failures ? 1 : 0;
}

struct topts topts_default(int qps)
{
	return (struct topts){ .qps = qps,
			       .recv = 4,
			       .max_dest_rd_atomic = 4,
			       .min_rnr_timer = 1,
			       .timeout = 18,
			       .retry = 7,
			       .rnr_retry = 7 };
}

/* ---- for the scenarios ---- */

/* A WRITE_ONLY of 32 bytes to rw + off: the request every silent-drop scenario mangles. */
struct urnic_pkt write32(int qi, uint64_t off, uint8_t *data)
{
	struct urnic_pkt h = hdr(qi, URNIC_OP_RC_RDMA_WRITE_ONLY, A.qp[qi].epsn);

	fill(data, 32, 0xbad);
	h.reth = (struct urnic_reth){ A.mr[HR_RW].addr + off, A.mr[HR_RW].rkey, 32 };
	return h;
}

/* ---- the scenarios (attacker.h), in the order of CMakeLists.txt ---- */

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
	{ "ring_frames", sc_ring_frames },
	{ "write_after_dereg", sc_write_after_dereg },
	{ "uc_write_after_dereg", sc_uc_write_after_dereg },
	{ "window_after_qp_destroy", sc_window_after_qp_destroy },
	{ "uc_key_guess", sc_uc_key_guess },
	{ "uc_injection", sc_uc_injection },
	{ "read_amplification", sc_read_amplification },
	{ "ip_id_poison", sc_ip_id_poison },
	{ "ud_qkey", sc_ud_qkey },
	{ "ud_flood", sc_ud_flood },
	{ "srq", sc_srq },
	{ "mcast", sc_mcast },
	{ "mcast_unicast_qpn", sc_mcast_unicast_qpn },
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
	A.ip_id = 0x2bcd;
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
