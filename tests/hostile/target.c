/* SPDX-License-Identifier: MIT */
/*
 * target.c - the victim of the hostile-peer tests: a small verbs application on urnic0.
 *
 * It registers six regions (hostile.h: remote write, remote read only, remote atomic,
 * no remote right, receive buffers, remote atomic at an IOVA whose memory is not 8-byte
 * aligned), each filled with a known pattern and fenced by guard bytes inside PROT_NONE
 * guard pages; creates --qps RC QPs whose peer is --peer
 * with QPN --peer-qpn + i (default HOSTILE_PEER_QPN + i), posts --recv receive WQEs on each, moves
 * them to RTS, prints what a peer needs to know and then serves: it drains its CQs and answers
 * commands on stdin until `stop`, end of input or SIGTERM, and finally dumps the
 * checksums of every guard and region, the QP states and the device counters (read
 * from its own /dev/shm/urnic.<pid>.<dev>).
 *
 * Start-up output, one record per line, then "ready":
 *   target pid PID dev NAME addr ADDR mtu BYTES
 *   mr NAME addr 0xIOVA len BYTES rkey 0xKEY
 *   qp I qpn 0xQPN dest 0xQPN rq_psn 0xPSN sq_psn 0xPSN
 *   recv QP WR_ID OFFSET BYTES            (a posted receive: OFFSET into region recv)
 * Commands (one per line; every answer ends with a line "end"):
 *   sums                 sum NAME LO BODY HI (FNV-1a 64 of each part, hex)
 *   read NAME OFF LEN    data HEX (bytes of a region's body)
 *   qp I                 qp I STATE
 *   post I N             N more receive WQEs on QP I (recv lines as above)
 *   send I LEN WR_ID     a signaled SEND of LEN bytes from region none on QP I
 *   wc                   wc QP WR_ID STATUS OPCODE BYTE_LEN WC_FLAGS, every completion
 *                        polled since the last `wc`
 *   counters             ctr NAME VALUE (the nonzero device counters)
 *   rss                  rss VMRSS_KB VMHWM_KB
 *   stop                 the final dump (sums, qp states, counters), "bye", exit 0
 * Usage: hostile_target --peer ADDR [--peer-qpn N] [--qps N] [--recv N] [--psn BASE]
 *   [--max-dest-rd-atomic N] [--min-rnr-timer N] [--timeout N] [--retry N]
 *   [--rnr-retry N]; the device's own address comes from URNIC_ADDR.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "counters_file.h"
#include "hostile.h"

struct region {
	uint8_t *map; /* guard page | lo guard | body | hi guard | guard page */
	size_t map_bytes;
	uint8_t *lo, *body, *hi;
	size_t lo_bytes, len, hi_bytes;
	uint64_t iova; /* how peers name body */
	struct ibv_mr *mr;
};

struct opts {
	const char *peer;
	uint32_t peer_qpn;
	int qps;
	int recv;
	uint32_t psn_base;
	int max_dest_rd_atomic;
	int min_rnr_timer;
	int timeout;
	int retry;
	int rnr_retry;
};

struct wc_rec {
	int qp;
	uint64_t wr_id;
	int status, opcode, wc_flags;
	uint32_t byte_len;
};

static struct {
	struct opts o;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp[HOSTILE_MAX_QPS];
	uint32_t posted[HOSTILE_MAX_QPS]; /* receive WQEs posted so far, per QP */
	struct region reg[HR_COUNT];
	char dev[64];
	struct wc_rec wcs[4096];
	unsigned nwc, wc_lost;
} T;

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	(void)sig;
	stop_signal = 1;
}

static void die(const char *what)
{
	fprintf(stderr, "hostile_target: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* shift: extra guard bytes below the body (its address is then 8n + shift); iova: the
 * address peers name it by, 0 for the process address (ibv_reg_mr). */
static void region_new(int r, size_t len, int access, size_t shift, uint64_t iova)
{
	struct region *g = &T.reg[r];
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t mid = (2 * HOSTILE_GUARD_BYTES + shift + len + page - 1) / page * page;

	g->map_bytes = mid + 2 * page;
	g->map =
	    mmap(NULL, g->map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g->map == MAP_FAILED)
		die("mmap");
	/* Any access beyond the guard bytes faults: the crash is the report. */
	if (mprotect(g->map, page, PROT_NONE) || mprotect(g->map + page + mid, page, PROT_NONE))
		die("mprotect");
	g->lo = g->map + page;
	g->lo_bytes = HOSTILE_GUARD_BYTES + shift;
	g->body = g->lo + g->lo_bytes;
	g->len = len;
	g->hi = g->body + len;
	g->hi_bytes = mid - g->lo_bytes - len;
	for (size_t i = 0; i < g->lo_bytes; i++)
		g->lo[i] = hostile_pattern((unsigned)r, 1, i);
	for (size_t i = 0; i < len; i++)
		g->body[i] = hostile_pattern((unsigned)r, 0, i);
	for (size_t i = 0; i < g->hi_bytes; i++)
		g->hi[i] = hostile_pattern((unsigned)r, 1, g->lo_bytes + i);
	g->iova = iova ? iova : (uintptr_t)g->body;
	g->mr = iova ? ibv_reg_mr_iova(T.pd, g->body, len, iova, access)
		     : ibv_reg_mr(T.pd, g->body, len, access);
	if (!g->mr)
		die("ibv_reg_mr");
}

static void region_free(struct region *g)
{
	ibv_dereg_mr(g->mr);
	munmap(g->map, g->map_bytes);
}

static uint32_t rq_psn(int i)
{
	return (T.o.psn_base + (uint32_t)i * 0x100000u) & 0xffffff;
}

static uint32_t sq_psn(int i)
{
	return rq_psn(i) ^ 0x800000;
}

static void connect_qp(int i)
{
	struct ibv_qp_attr a;
	struct ibv_qp *qp = T.qp[i];
	struct in_addr peer;

	if (inet_pton(AF_INET, T.o.peer, &peer) != 1) {
		fprintf(stderr, "hostile_target: --peer %s is not an IPv4 address\n", T.o.peer);
		exit(2);
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("modify to INIT");

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = (T.o.peer_qpn + (uint32_t)i) & 0xffffff;
	a.rq_psn = rq_psn(i);
	a.max_dest_rd_atomic = (uint8_t)T.o.max_dest_rd_atomic;
	a.min_rnr_timer = (uint8_t)T.o.min_rnr_timer;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.sgid_index = 1; /* the RoCEv2 GID of our IPv4 address */
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.dgid.raw[10] = 0xff;
	a.ah_attr.grh.dgid.raw[11] = 0xff;
	memcpy(a.ah_attr.grh.dgid.raw + 12, &peer, 4);
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			      IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("modify to RTR");

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn(i);
	a.timeout = (uint8_t)T.o.timeout;
	a.retry_cnt = (uint8_t)T.o.retry;
	a.rnr_retry = (uint8_t)T.o.rnr_retry;
	a.max_rd_atomic = 4;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			      IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify to RTS");
}

/* n more receive WQEs on QP i, each a slot of region recv (slots reused round robin). */
static void post_recv(int i, int n)
{
	struct region *g = &T.reg[HR_RECV];

	for (int k = 0; k < n; k++) {
		uint32_t seq = T.posted[i]++;
		size_t off =
		    ((size_t)i * HOSTILE_MAX_RECV + seq % HOSTILE_MAX_RECV) * HOSTILE_RECV_SLOT;
		struct ibv_sge sge = { (uintptr_t)(g->body + off), HOSTILE_RECV_SLOT, g->mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)i << 32 | seq,
					  .sg_list = &sge,
					  .num_sge = 1 };
		struct ibv_recv_wr *bad;

		if (ibv_post_recv(T.qp[i], &wr, &bad)) {
			printf("error post_recv %d\n", i);
			return;
		}
		printf("recv %d 0x%llx %zu %d\n", i, (unsigned long long)wr.wr_id, off,
		       HOSTILE_RECV_SLOT);
	}
}

static int qp_index(uint32_t qpn)
{
	for (int i = 0; i < T.o.qps; i++)
		if (T.qp[i]->qp_num == qpn)
			return i;
	return -1;
}

static void drain_cq(struct ibv_cq *cq)
{
	struct ibv_wc wc[32];
	int n;

	while ((n = ibv_poll_cq(cq, 32, wc)) > 0) {
		for (int k = 0; k < n; k++) {
			struct wc_rec *w;

			if (T.nwc == sizeof(T.wcs) / sizeof(T.wcs[0])) {
				T.wc_lost++;
				continue;
			}
			w = &T.wcs[T.nwc++];
			w->qp = qp_index(wc[k].qp_num);
			w->wr_id = wc[k].wr_id;
			w->status = wc[k].status;
			w->opcode = wc[k].opcode;
			w->byte_len = wc[k].byte_len;
			w->wc_flags = (int)wc[k].wc_flags;
		}
	}
}

static void print_sums(void)
{
	for (int r = 0; r < HR_COUNT; r++) {
		struct region *g = &T.reg[r];

		printf("sum %s %016llx %016llx %016llx\n", hostile_region_names[r],
		       (unsigned long long)hostile_fnv(g->lo, g->lo_bytes),
		       (unsigned long long)hostile_fnv(g->body, g->len),
		       (unsigned long long)hostile_fnv(g->hi, g->hi_bytes));
	}
}

static const char *state_name(enum ibv_qp_state s)
{
	static const char *const names[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

static void print_qp(int i)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr init;

	if (i < 0 || i >= T.o.qps || ibv_query_qp(T.qp[i], &a, IBV_QP_STATE, &init)) {
		printf("error qp %d\n", i);
		return;
	}
	printf("qp %d %s\n", i, state_name(a.qp_state));
}

static void print_counters(void)
{
	struct urnic_ctrfile f;
	char path[256];
	int ret;

	ret = urnic_ctrfile_path(path, sizeof(path), getpid(), T.dev);
	if (!ret)
		ret = urnic_ctrfile_read(path, getpid(), &f);
	if (ret) {
		printf("error counters %s: %s\n", path, strerror(-ret));
		return;
	}
	for (uint32_t i = 0; i < f.ncounters && i < URNIC_CTRFILE_COUNT; i++)
		if (f.values[i])
			printf("ctr %s %llu\n", urnic_ctrfile_names[i],
			       (unsigned long long)f.values[i]);
}

static void print_rss(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	long rss = -1, hwm = -1;

	if (!f) {
		printf("error rss\n");
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "VmRSS: %ld", &rss);
		sscanf(line, "VmHWM: %ld", &hwm);
	}
	fclose(f);
	printf("rss %ld %ld\n", rss, hwm);
}

static void cmd_read(const char *name, size_t off, size_t len)
{
	for (int r = 0; r < HR_COUNT; r++) {
		struct region *g = &T.reg[r];

		if (strcmp(name, hostile_region_names[r]) != 0)
			continue;
		if (off > g->len || len > g->len - off)
			break;
		printf("data ");
		for (size_t i = 0; i < len; i++)
			printf("%02x", g->body[off + i]);
		printf("\n");
		return;
	}
	printf("error read %s %zu %zu\n", name, off, len);
}

static void cmd_send(int i, uint32_t len, uint64_t wr_id)
{
	struct region *g = &T.reg[HR_NONE];
	struct ibv_sge sge = { (uintptr_t)g->body, len, g->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	if (i < 0 || i >= T.o.qps || len > g->len || ibv_post_send(T.qp[i], &wr, &bad))
		printf("error send %d %u\n", i, len);
}

static void final_dump(void)
{
	drain_cq(T.rcq);
	drain_cq(T.scq);
	printf("final\n");
	print_sums();
	for (int i = 0; i < T.o.qps; i++)
		print_qp(i);
	print_counters();
	printf("bye\n");
	fflush(stdout);
}

/* One command line. Returns false on `stop`. */
static bool command(char *line)
{
	char name[32];
	unsigned long long a, b, c;
	int i, n;

	if (strcmp(line, "stop") == 0)
		return false;
	if (strcmp(line, "sums") == 0) {
		print_sums();
	} else if (sscanf(line, "read %31s %llu %llu", name, &a, &b) == 3) {
		cmd_read(name, (size_t)a, (size_t)b);
	} else if (sscanf(line, "qp %d", &i) == 1) {
		print_qp(i);
	} else if (sscanf(line, "post %d %d", &i, &n) == 2 && i >= 0 && i < T.o.qps) {
		post_recv(i, n);
	} else if (sscanf(line, "send %d %llu %llu", &i, &a, &c) == 3) {
		cmd_send(i, (uint32_t)a, c);
	} else if (strcmp(line, "wc") == 0) {
		drain_cq(T.rcq);
		drain_cq(T.scq);
		for (unsigned k = 0; k < T.nwc; k++) {
			const struct wc_rec *w = &T.wcs[k];

			printf("wc %d 0x%llx %d %d %u %d\n", w->qp, (unsigned long long)w->wr_id,
			       w->status, w->opcode, w->byte_len, w->wc_flags);
		}
		if (T.wc_lost)
			printf("error %u completions not kept\n", T.wc_lost);
		T.nwc = 0;
		T.wc_lost = 0;
	} else if (strcmp(line, "counters") == 0) {
		print_counters();
	} else if (strcmp(line, "rss") == 0) {
		print_rss();
	} else {
		printf("error unknown command '%s'\n", line);
	}
	printf("end\n");
	fflush(stdout);
	return true;
}

/* Drains the CQs and runs commands until stop, EOF or a signal. */
static void serve(void)
{
	char buf[4096];
	size_t have = 0;

	for (;;) {
		struct pollfd p = { .fd = 0, .events = POLLIN };
		char *nl;
		ssize_t n;

		drain_cq(T.rcq);
		drain_cq(T.scq);
		if (stop_signal)
			return;
		if (poll(&p, 1, 2) <= 0)
			continue;
		n = read(0, buf + have, sizeof(buf) - 1 - have);
		if (n <= 0)
			return; /* the attacker is gone */
		have += (size_t)n;
		while ((nl = memchr(buf, '\n', have))) {
			size_t used = (size_t)(nl - buf) + 1;

			*nl = 0;
			if (!command(buf))
				return;
			memmove(buf, buf + used, have - used);
			have -= used;
		}
		if (have == sizeof(buf) - 1)
			have = 0; /* an endless line: drop it */
	}
}

static int arg_int(const char *s, int lo, int hi, const char *what)
{
	char *end;
	long v = strtol(s, &end, 0);

	if (*end || v < lo || v > hi) {
		fprintf(stderr, "hostile_target: bad %s '%s'\n", what, s);
		exit(2);
	}
	return (int)v;
}

static void parse(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "peer", required_argument, NULL, 'p' },
		{ "peer-qpn", required_argument, NULL, 'Q' },
		{ "qps", required_argument, NULL, 'q' },
		{ "recv", required_argument, NULL, 'r' },
		{ "psn", required_argument, NULL, 'P' },
		{ "max-dest-rd-atomic", required_argument, NULL, 'd' },
		{ "min-rnr-timer", required_argument, NULL, 'm' },
		{ "timeout", required_argument, NULL, 't' },
		{ "retry", required_argument, NULL, 'R' },
		{ "rnr-retry", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	T.o = (struct opts){ .peer_qpn = HOSTILE_PEER_QPN,
			     .qps = 2,
			     .recv = 4,
			     .psn_base = 0xfffff0,
			     .max_dest_rd_atomic = 4,
			     .min_rnr_timer = 1,
			     .timeout = 18,
			     .retry = 7,
			     .rnr_retry = 7 };
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			T.o.peer = optarg;
			break;
		case 'Q':
			T.o.peer_qpn = (uint32_t)arg_int(optarg, 0, 0xffffff, "--peer-qpn");
			break;
		case 'q':
			T.o.qps = arg_int(optarg, 1, HOSTILE_MAX_QPS, "--qps");
			break;
		case 'r':
			T.o.recv = arg_int(optarg, 0, HOSTILE_MAX_RECV, "--recv");
			break;
		case 'P':
			T.o.psn_base = (uint32_t)arg_int(optarg, 0, 0xffffff, "--psn");
			break;
		case 'd':
			T.o.max_dest_rd_atomic = arg_int(optarg, 0, 128, "--max-dest-rd-atomic");
			break;
		case 'm':
			T.o.min_rnr_timer = arg_int(optarg, 0, 31, "--min-rnr-timer");
			break;
		case 't':
			T.o.timeout = arg_int(optarg, 0, 31, "--timeout");
			break;
		case 'R':
			T.o.retry = arg_int(optarg, 0, 7, "--retry");
			break;
		case 'n':
			T.o.rnr_retry = arg_int(optarg, 0, 7, "--rnr-retry");
			break;
		default:
			exit(2);
		}
	}
	if (!T.o.peer) {
		fprintf(stderr, "usage: hostile_target --peer ADDR [--qps N] [--recv N] ...\n");
		exit(2);
	}
}

static void open_device(void)
{
	struct ibv_device **list;
	int n;

	list = ibv_get_device_list(&n);
	if (!list || n < 1)
		die("no verbs device (URNIC_ADDR?)");
	snprintf(T.dev, sizeof(T.dev), "%s", ibv_get_device_name(list[0]));
	T.ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (!T.ctx)
		die("ibv_open_device");
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	int cqe;

	parse(argc, argv);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	open_device();
	T.pd = ibv_alloc_pd(T.ctx);
	if (!T.pd)
		die("ibv_alloc_pd");
	cqe = T.o.qps * HOSTILE_MAX_RECV * 2 + 1024;
	T.scq = ibv_create_cq(T.ctx, cqe, NULL, NULL, 0);
	T.rcq = ibv_create_cq(T.ctx, cqe, NULL, NULL, 0);
	if (!T.scq || !T.rcq)
		die("ibv_create_cq");
	region_new(HR_RW, HOSTILE_RW_BYTES, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 0, 0);
	region_new(HR_RO, HOSTILE_RO_BYTES, IBV_ACCESS_REMOTE_READ, 0, 0);
	region_new(HR_ATOMIC, HOSTILE_ATOMIC_BYTES,
		   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC, 0, 0);
	region_new(HR_NONE, HOSTILE_NONE_BYTES, IBV_ACCESS_LOCAL_WRITE, 0, 0);
	region_new(HR_RECV, (size_t)T.o.qps * HOSTILE_MAX_RECV * HOSTILE_RECV_SLOT,
		   IBV_ACCESS_LOCAL_WRITE, 0, 0);
	region_new(HR_ATOMIC_ODD, HOSTILE_ATOMIC_BYTES,
		   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC, HOSTILE_ODD_SHIFT,
		   HOSTILE_ODD_IOVA);
	for (int i = 0; i < T.o.qps; i++) {
		struct ibv_qp_init_attr init = {
			.send_cq = T.scq,
			.recv_cq = T.rcq,
			.cap = { .max_send_wr = 16,
				 .max_recv_wr = HOSTILE_MAX_RECV,
				 .max_send_sge = 1,
				 .max_recv_sge = 1 },
			.qp_type = IBV_QPT_RC,
		};

		T.qp[i] = ibv_create_qp(T.pd, &init);
		if (!T.qp[i])
			die("ibv_create_qp");
		connect_qp(i);
	}

	printf("target pid %d dev %s addr %s mtu 1024\n", (int)getpid(), T.dev,
	       getenv("URNIC_ADDR") ? getenv("URNIC_ADDR") : "?");
	for (int r = 0; r < HR_COUNT; r++)
		printf("mr %s addr 0x%llx len %zu rkey 0x%x\n", hostile_region_names[r],
		       (unsigned long long)T.reg[r].iova, T.reg[r].len, T.reg[r].mr->rkey);
	for (int i = 0; i < T.o.qps; i++)
		printf("qp %d qpn 0x%x dest 0x%x rq_psn 0x%x sq_psn 0x%x\n", i, T.qp[i]->qp_num,
		       (T.o.peer_qpn + (uint32_t)i) & 0xffffff, rq_psn(i), sq_psn(i));
	for (int i = 0; i < T.o.qps; i++)
		post_recv(i, T.o.recv);
	printf("ready\n");
	fflush(stdout);

	serve();
	final_dump();

	for (int i = 0; i < T.o.qps; i++)
		ibv_destroy_qp(T.qp[i]);
	for (int r = 0; r < HR_COUNT; r++)
		region_free(&T.reg[r]);
	ibv_destroy_cq(T.scq);
	ibv_destroy_cq(T.rcq);
	ibv_dealloc_pd(T.pd);
	ibv_close_device(T.ctx);
	return 0;
}
