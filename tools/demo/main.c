/* SPDX-License-Identifier: MIT */
/*
 * main.c - urnic-demo: options, the two host processes, and the report.
 *
 * The parent makes no verbs call: it forks the server and the client (each sets
 * URNIC_ADDR before its first verbs call, so each sees one device on its own
 * address), prints the rows the client sends as the runs finish, then both hosts'
 * device counters and the verdict. Exit 0 only if every check passed.
 */
#include "demo.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

enum {
	PARENT_TIMEOUT_MS = 60000, /* no row for this long: both hosts are stopped */
};

static const char *const role_names[] = { [DEMO_SERVER] = "server", [DEMO_CLIENT] = "client" };

static const char usage[] =
	"usage: urnic-demo [-s size] [-n iters] [-m mtu] [-a server_ip,client_ip] [-q] [-h]\n"
	"\n"
	"Starts two hosts as two processes, connects them with a RoCEv2 RC queue pair over\n"
	"urnic, and runs SEND, RDMA WRITE, RDMA READ, ATOMIC FETCH_ADD and ATOMIC CMP_SWAP\n"
	"for bandwidth and latency, checking every byte that arrives.\n"
	"\n"
	"  -s size   message size of the bandwidth runs: bytes, or with K or M (default 64K)\n"
	"  -n iters  work requests per bandwidth run (default 2000, atomics 20000)\n"
	"  -m mtu    path MTU: 256, 512, 1024, 2048 or 4096 (default 4096)\n"
	"  -a s,c    the server's and the client's address (default 127.0.0.2,127.0.0.3)\n"
	"  -q        quick: 200 messages, 500 atomics, 100 latency samples (the test suite's)\n"
	"  -h        this text\n"
	"\n"
	"Exit status: 0 every check passed; 1 a check, a verbs call or the setup failed;\n"
	"2 bad usage.\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "urnic-demo: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(urnic-demo -h for help)\n");
	return DEMO_EXIT_USAGE;
}

static int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -EINVAL;
	if (strcmp(end, "K") == 0 || strcmp(end, "k") == 0 || strcmp(end, "KiB") == 0)
		v *= 1024;
	else if (strcmp(end, "M") == 0 || strcmp(end, "m") == 0 || strcmp(end, "MiB") == 0)
		v *= 1024 * 1024;
	else if (*end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = (uint32_t)v;
	return 0;
}

static int parse_mtu(const char *s, enum ibv_mtu *mtu)
{
	static const struct {
		uint32_t bytes;
		enum ibv_mtu mtu;
	} mtus[] = {
		{ 256, IBV_MTU_256 },	{ 512, IBV_MTU_512 },	{ 1024, IBV_MTU_1024 },
		{ 2048, IBV_MTU_2048 }, { 4096, IBV_MTU_4096 },
	};
	uint32_t bytes;

	if (parse_u32(s, 256, 4096, &bytes))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(mtus) / sizeof(mtus[0]); i++)
		if (mtus[i].bytes == bytes) {
			*mtu = mtus[i].mtu;
			return 0;
		}
	return -EINVAL;
}

static int family_of(const char *ip)
{
	uint8_t a[16];

	if (inet_pton(AF_INET, ip, a) == 1)
		return AF_INET;
	if (inet_pton(AF_INET6, ip, a) == 1)
		return AF_INET6;
	return -1;
}

static int parse_addrs(const char *s, struct demo_opts *o)
{
	const char *comma = strchr(s, ',');
	size_t n;

	if (!comma)
		return -EINVAL;
	n = (size_t)(comma - s);
	if (n == 0 || n >= sizeof(o->server_ip) || strlen(comma + 1) >= sizeof(o->client_ip))
		return -EINVAL;
	memcpy(o->server_ip, s, n);
	o->server_ip[n] = 0;
	strcpy(o->client_ip, comma + 1);
	if (family_of(o->server_ip) < 0 || family_of(o->server_ip) != family_of(o->client_ip) ||
	    strcmp(o->server_ip, o->client_ip) == 0)
		return -EINVAL;
	return 0;
}

/* Returns -1 to go on, else the exit status. */
static int parse_opts(int argc, char **argv, struct demo_opts *o)
{
	bool quick = false, have_iters = false;
	uint32_t iters = 0;
	int c;

	*o = (struct demo_opts){ .size = 64 * 1024, .mtu = IBV_MTU_4096 };
	strcpy(o->server_ip, "127.0.0.2");
	strcpy(o->client_ip, "127.0.0.3");
	opterr = 0;
	while ((c = getopt(argc, argv, ":s:n:m:a:qh")) != -1) {
		switch (c) {
		case 's':
			if (parse_u32(optarg, 1, DEMO_MAX_SIZE, &o->size))
				return usage_error(
					"-s %s: a size from 1 byte to 8M, e.g. 65536 or 64K",
					optarg);
			break;
		case 'n':
			if (parse_u32(optarg, 1, 10000000, &iters))
				return usage_error("-n %s: a count from 1 to 10000000", optarg);
			have_iters = true;
			break;
		case 'm':
			if (parse_mtu(optarg, &o->mtu))
				return usage_error("-m %s: the MTU is 256, 512, 1024, 2048 or 4096",
						   optarg);
			break;
		case 'a':
			if (parse_addrs(optarg, o))
				return usage_error("-a %s: two different addresses of one family, "
						   "e.g. -a 127.0.0.12,127.0.0.13",
						   optarg);
			break;
		case 'q':
			quick = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return DEMO_EXIT_OK;
		case ':':
			return usage_error("-%c needs a value", optopt);
		default:
			return usage_error("unknown option -%c", optopt);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	o->iters = quick ? 200 : 2000;
	o->atomic_iters = quick ? 500 : 20000;
	o->lat_iters = quick ? 100 : 1000;
	if (have_iters)
		o->iters = o->atomic_iters = iters;
	return -1;
}

/* ---- the hosts ---- */

static int host_main(enum demo_role role, const struct demo_opts *o, int ctl, int report)
{
	struct demo_host h = {
		.role = role,
		.ip = role == DEMO_SERVER ? o->server_ip : o->client_ip,
		.o = o,
		.ctl = ctl,
		.report = report,
	};
	int ret;

	/* Before any verbs call: the library builds its device list once, from this. */
	setenv("URNIC_ADDR", h.ip, 1);
	ret = demo_host_open(&h);
	if (!ret)
		ret = demo_host_connect(&h);
	if (!ret)
		ret = role == DEMO_SERVER ? demo_server_main(&h) : demo_client_main(&h);
	if (h.ctx)
		demo_report_counters(&h);
	if (h.err[0] && !h.err_told)
		fprintf(stderr, "urnic-demo: %s %s: %s\n", role_names[role], h.ip, h.err);
	demo_host_close(&h);
	if (ret == -EPIPE)
		return DEMO_EXIT_NO_PEER;
	return ret ? DEMO_EXIT_FAIL : DEMO_EXIT_OK;
}

static pid_t spawn(enum demo_role role, const struct demo_opts *o, int ctl, int report)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(host_main(role, o, ctl, report));
	return pid;
}

/* ---- the report ---- */

static const char *size_str(uint32_t bytes, char *buf, size_t len)
{
	if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
		snprintf(buf, len, "%u MiB", bytes >> 20);
	else if (bytes >= 1024 && bytes % 1024 == 0)
		snprintf(buf, len, "%u KiB", bytes >> 10);
	else
		snprintf(buf, len, "%u B", bytes);
	return buf;
}

static void print_header(const struct demo_opts *o)
{
	bool loopback =
		strncmp(o->server_ip, "127.", 4) == 0 && strncmp(o->client_ip, "127.", 4) == 0;

	printf("urnic demo: two hosts%s, %s (server) <-> %s (client), RoCEv2 RC, MTU %d\n",
	       loopback ? " on loopback" : "", o->server_ip, o->client_ip, 128 << o->mtu);
	printf("bandwidth: %d work requests in flight; latency: %d-byte messages one at a time,\n"
	       "median of %u; RTT/2 = half a ping-pong (as perftest's send_lat, write_lat),\n"
	       "RTT = the whole round trip of one work request\n\n",
	       DEMO_WINDOW, DEMO_LAT_BYTES, o->lat_iters);
	printf("%-18s %7s %7s %12s   %-14s %s\n", "operation", "size", "iters", "bandwidth",
	       "latency (us)", "data");
}

static void print_row(const struct demo_row *r)
{
	char size[32], bw[32], lat[32], data[64];
	bool atomic = demo_op_atomic((enum demo_op)r->op);
	bool half = r->op == DEMO_SEND || r->op == DEMO_WRITE;

	if (r->op >= DEMO_NOPS)
		return;
	if (!r->ok) {
		printf("%-18s %7s %7u %12s   %-14s FAILED\n    %s\n", demo_op_names[r->op],
		       size_str(r->size, size, sizeof(size)), r->iters, "-", "-", r->text);
		return;
	}
	if (atomic)
		snprintf(bw, sizeof(bw), "%.2f Mop/s", r->ops_per_s / 1e6);
	else if (r->bw_bits_per_s >= 1e8)
		snprintf(bw, sizeof(bw), "%.2f Gb/s", r->bw_bits_per_s / 1e9);
	else
		snprintf(bw, sizeof(bw), "%.2f Mb/s", r->bw_bits_per_s / 1e6);
	snprintf(lat, sizeof(lat), "%.1f (%s)", r->lat_us, half ? "RTT/2" : "RTT");
	if (atomic)
		snprintf(data, sizeof(data), "intact (%llu results, final value)",
			 (unsigned long long)r->checked_results);
	else if (r->checked_bytes >= 1000000)
		snprintf(data, sizeof(data), "intact (%.0f MB checked)",
			 (double)r->checked_bytes / 1e6);
	else
		snprintf(data, sizeof(data), "intact (%.1f KB checked)",
			 (double)r->checked_bytes / 1e3);
	printf("%-18s %7s %7u %12s   %-14s %s\n", demo_op_names[r->op],
	       size_str(r->size, size, sizeof(size)), r->iters, bw, lat, data);
}

static const enum urnic_ctrfile_counter summary[] = {
	URNIC_CTRFILE_tx_packets,    URNIC_CTRFILE_rx_packets,	 URNIC_CTRFILE_retransmit_pkts,
	URNIC_CTRFILE_retry_timeout, URNIC_CTRFILE_nak_seq_sent, URNIC_CTRFILE_rnr_nak_sent,
	URNIC_CTRFILE_dup_request,
};

static void print_counter(const char *name, const uint64_t v[2], const bool have[2],
			  const char *desc)
{
	char s[2][24];

	for (int i = 0; i < 2; i++)
		snprintf(s[i], sizeof(s[i]), have[i] ? "%llu" : "-", (unsigned long long)v[i]);
	printf("  %-20s %12s %12s   %s\n", name, s[0], s[1], desc);
}

static void print_counters(const struct demo_record ctr[2], const bool got[2])
{
	bool have[2];
	uint64_t v[2];

	printf("\ndevice counters        %12s %12s\n", role_names[DEMO_SERVER],
	       role_names[DEMO_CLIENT]);
	for (int i = 0; i < 2; i++) {
		have[i] = got[i] && ctr[i].err == 0;
		if (got[i] && ctr[i].err)
			printf("  (%s: no counters file: %s)\n", role_names[i],
			       strerror(-ctr[i].err));
		else if (!got[i])
			printf("  (%s: no counters: it did not open its device)\n", role_names[i]);
	}
	for (size_t k = 0; k < sizeof(summary) / sizeof(summary[0]); k++) {
		for (int i = 0; i < 2; i++)
			v[i] = have[i] ? ctr[i].ctr.values[summary[k]] : 0;
		print_counter(urnic_ctrfile_names[summary[k]], v, have,
			      urnic_ctrfile_descs[summary[k]]);
	}
	for (int i = 0; i < 2; i++)
		v[i] = have[i] ? urnic_ctrfile_drops(&ctr[i].ctr) : 0;
	print_counter("drops", v, have, "packets dropped, all causes (drop_* counters)");
	/* Each cause that dropped something, by name. */
	for (int k = 0; k < URNIC_CTRFILE_COUNT; k++) {
		if (strncmp(urnic_ctrfile_names[k], "drop_", 5) != 0)
			continue;
		for (int i = 0; i < 2; i++)
			v[i] = have[i] ? ctr[i].ctr.values[k] : 0;
		if (v[0] || v[1])
			print_counter(urnic_ctrfile_names[k], v, have, urnic_ctrfile_descs[k]);
	}
	printf("(every counter: URNIC_PRINT_COUNTERS=1 urnic-demo, or `urnic counters` while it "
	       "runs)\n");
}

static int read_record(int fd, struct demo_record *rec)
{
	size_t got = 0;

	while (got < sizeof(*rec)) {
		ssize_t n = read(fd, (char *)rec + got, sizeof(*rec) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : got ? -EBADMSG : 0;
		got += (size_t)n;
	}
	return 1;
}

/* Explains how a host ended. Returns true if it ended well. */
static bool host_ok(enum demo_role role, pid_t pid, int status)
{
	if (WIFSIGNALED(status)) {
		printf("FAILED: the %s (pid %d) was killed by signal %d (%s)\n", role_names[role],
		       (int)pid, WTERMSIG(status), strsignal(WTERMSIG(status)));
		return false;
	}
	switch (WEXITSTATUS(status)) {
	case DEMO_EXIT_OK:
		return true;
	case DEMO_EXIT_NO_PEER:
		return false; /* the other host said why */
	default:
		printf("FAILED: the %s stopped (its message is above)\n", role_names[role]);
		return false;
	}
}

int main(int argc, char **argv)
{
	struct demo_record rec, ctr[2];
	bool got_ctr[2] = { false, false }, ok = true;
	struct demo_opts o;
	int ctl[2], report[2], status[2], rows = 0, rows_ok = 0, ret;
	pid_t pid[2];

	ret = parse_opts(argc, argv, &o);
	if (ret >= 0)
		return ret;
	print_header(&o);
	fflush(stdout);
	if (pipe2(report, O_CLOEXEC) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl)) {
		perror("urnic-demo: pipe/socketpair");
		return DEMO_EXIT_FAIL;
	}
	pid[DEMO_SERVER] = spawn(DEMO_SERVER, &o, ctl[0], report[1]);
	pid[DEMO_CLIENT] = spawn(DEMO_CLIENT, &o, ctl[1], report[1]);
	close(ctl[0]);
	close(ctl[1]);
	close(report[1]);
	if (pid[DEMO_SERVER] < 0 || pid[DEMO_CLIENT] < 0) {
		perror("urnic-demo: fork");
		return DEMO_EXIT_FAIL;
	}
	for (;;) {
		struct pollfd pfd = { .fd = report[0], .events = POLLIN };

		if (poll(&pfd, 1, PARENT_TIMEOUT_MS) == 0) {
			printf("FAILED: no progress for %d s; stopping both hosts\n",
			       PARENT_TIMEOUT_MS / 1000);
			kill(pid[DEMO_SERVER], SIGKILL);
			kill(pid[DEMO_CLIENT], SIGKILL);
			ok = false;
			break;
		}
		if (read_record(report[0], &rec) <= 0)
			break; /* both hosts have exited */
		if (rec.type == DEMO_REC_ROW) {
			print_row(&rec.row);
			fflush(stdout);
			rows++;
			rows_ok += rec.row.ok != 0;
		} else if (rec.type == DEMO_REC_COUNTERS && rec.role <= DEMO_CLIENT) {
			ctr[rec.role] = rec;
			got_ctr[rec.role] = true;
		}
	}
	close(report[0]);
	for (int i = 0; i < 2; i++)
		while (waitpid(pid[i], &status[i], 0) < 0 && errno == EINTR)
			;
	printf("\n");
	for (int i = 0; i < 2; i++)
		ok &= host_ok((enum demo_role)i, pid[i], status[i]);
	if (ok && rows_ok == DEMO_NOPS)
		printf("all data arrived intact\n");
	else if (rows > rows_ok)
		printf("FAILED: %d of %d operations did not pass (see the table)\n", rows - rows_ok,
		       DEMO_NOPS);
	else if (ok)
		printf("FAILED: only %d of %d operations ran\n", rows, DEMO_NOPS);
	if (got_ctr[0] || got_ctr[1])
		print_counters(ctr, got_ctr);
	return ok && rows_ok == DEMO_NOPS ? DEMO_EXIT_OK : DEMO_EXIT_FAIL;
}
