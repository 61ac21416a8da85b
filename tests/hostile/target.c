/* SPDX-License-Identifier: MIT */
/*
 * target.c - the victim of the hostile-peer tests: a small verbs application on urnic0.
 *
 * It registers six regions (hostile.h: remote write, remote read only, remote atomic,
 * no remote right, receive buffers, remote atomic at an IOVA whose memory is not 8-byte
 * aligned), each filled with a known pattern and fenced by guard bytes inside PROT_NONE
 * guard pages; creates --qps QPs (RC, the last --ud of them UD with the Q_Key
 * hostile_qkey(i), the --uc before those UC) whose peer is --peer
 * with QPN --peer-qpn + i (default HOSTILE_PEER_QPN + i), posts --recv receive WQEs of
 * --recv-bytes on each (the first --srq QPs share one SRQ instead), moves
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
 *   wc                   wc QP WR_ID STATUS OPCODE BYTE_LEN WC_FLAGS SRC_QP, every
 *                        completion polled since the last `wc`
 *   counters             ctr NAME VALUE (the nonzero device counters)
 *   rss                  rss VMRSS_KB VMHWM_KB
 *   reg NAME LEN FLAGS   a new guarded region (hostile.h: index HR_COUNT + n), FLAGS of
 *                        w (remote write), r (remote read), b (window binds), k (tell
 *                        the key): mr NAME addr 0xADDR len BYTES [rkey 0xKEY]
 *   dereg NAME           ibv_dereg_mr; the memory stays mapped, `sums`/`read` see it
 *   rereg NAME           ibv_rereg_mr(IBV_REREG_MR_CHANGE_ACCESS) with the same access:
 *                        rkey 0xKEY
 *   mw_bind I NAME OFF LEN  a type 2 window on region NAME's [OFF, OFF+LEN), remote
 *                        write, bound through QP I: mw rkey 0xKEY addr 0xADDR len BYTES
 *   destroy I            ibv_destroy_qp of QP I: destroyed I qpn 0xQPN
 *   create N             N new RC QPs to the peer, in the first free indexes, in RTS:
 *                        qp lines as at start-up
 *   srq_post N BYTES     N receive WQEs of BYTES on the SRQ (slots of region recv, round
 *                        robin over the first --srq QPs' slots): srq_recv WR_ID OFFSET BYTES
 *   srq_limit L          ibv_modify_srq(IBV_SRQ_LIMIT): arms the limit event at L
 *   events               event TYPE qp I (NAME) | event TYPE srq (NAME), every
 *                        asynchronous event since the last `events` (TYPE: ibv_event_type)
 *   qkey I K             ibv_modify_qp(IBV_QP_QKEY) of UD QP I (K in hex): qkey I 0xK
 *   attach I GROUP       ibv_attach_mcast of QP I to the IPv4 group GROUP (::ffff:GROUP)
 *   detach I GROUP       ibv_detach_mcast
 *   stop                 the final dump (sums, qp states, counters), "bye", exit 0
 * Usage: hostile_target --peer ADDR [--peer-qpn N] [--qps N] [--uc N] [--ud N] [--srq N]
 *   [--recv N] [--recv-bytes N] [--psn BASE] [--max-dest-rd-atomic N] [--min-rnr-timer N]
 *   [--timeout N] [--retry N] [--rnr-retry N]; the device's own address comes from
 *   URNIC_ADDR.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
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
	uint64_t iova;	   /* how peers name body */
	struct ibv_mr *mr; /* NULL once deregistered (`dereg`): the memory stays */
	int access;
	char name[32];
};

struct opts {
	const char *peer;
	uint32_t peer_qpn;
	int qps;
	int uc;	 /* the uc QPs before the UD ones are UC */
	int ud;	 /* the last ud of the qps QPs are UD */
	int srq; /* the first srq QPs take their receives from one SRQ */
	int recv;
	int recv_bytes; /* the length of each receive WQE posted to a QP */
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
	uint32_t byte_len, src_qp;
};

static struct {
	struct opts o;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp[HOSTILE_MAX_QPS]; /* NULL: destroyed (`destroy`) */
	struct ibv_srq *srq;		    /* shared by the first o.srq QPs, or NULL */
	uint32_t srq_posted;
	int nqp;			  /* QP indexes in use, destroyed ones included */
	uint32_t posted[HOSTILE_MAX_QPS]; /* receive WQEs posted so far, per QP */
	struct region reg[HOSTILE_MAX_REGIONS];
	int nreg;
	struct ibv_mw *mw[16];
	int nmw;
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
static void region_new(int r, const char *name, size_t len, int access, size_t shift, uint64_t iova)
{
	struct region *g = &T.reg[r];
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t mid = (2 * HOSTILE_GUARD_BYTES + shift + len + page - 1) / page * page;

	g->map_bytes = mid + 2 * page;
	g->map = mmap(NULL, g->map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		      0);
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
	g->access = access;
	snprintf(g->name, sizeof(g->name), "%s", name);
	if (r + 1 > T.nreg)
		T.nreg = r + 1;
	g->mr = iova ? ibv_reg_mr_iova(T.pd, g->body, len, iova, access)
		     : ibv_reg_mr(T.pd, g->body, len, access);
	if (!g->mr)
		die("ibv_reg_mr");
}

static void region_free(struct region *g)
{
	if (g->mr)
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

/* A UD QP to RTS: its Q_Key, which every datagram it accepts must carry (IBTA 10.2.4);
 * no peer, no receive PSN (IBTA 10.3.1 table 91). */
static void connect_ud(int i)
{
	struct ibv_qp_attr a;
	struct ibv_qp *qp = T.qp[i];

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = hostile_qkey((unsigned)i);
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		die("modify UD to INIT");
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		die("modify UD to RTR");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn(i);
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("modify UD to RTS");
}

/* To RTS with the peer. A UC QP takes the attributes IBTA 10.3.1 table 91 lists for UC
 * (no READ/atomic resources, no RNR or retry timers) and grants RDMA WRITE only. */
static void connect_qp(int i)
{
	struct ibv_qp_attr a;
	struct ibv_qp *qp = T.qp[i];
	bool uc = qp->qp_type == IBV_QPT_UC;
	struct in_addr peer;

	if (qp->qp_type == IBV_QPT_UD) {
		connect_ud(i);
		return;
	}
	if (inet_pton(AF_INET, T.o.peer, &peer) != 1) {
		fprintf(stderr, "hostile_target: --peer %s is not an IPv4 address\n", T.o.peer);
		exit(2);
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	if (!uc)
		a.qp_access_flags |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
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
				  IBV_QP_RQ_PSN |
				  (uc ? 0 : IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)))
		die("modify to RTR");

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn(i);
	a.timeout = (uint8_t)T.o.timeout;
	a.retry_cnt = (uint8_t)T.o.retry;
	a.rnr_retry = (uint8_t)T.o.rnr_retry;
	a.max_rd_atomic = 4;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_SQ_PSN |
				  (uc ? 0
				      : IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
						   IBV_QP_MAX_QP_RD_ATOMIC)))
		die("modify to RTS");
}

/* QP i of type t, created (not yet connected); false if ibv_create_qp refused. */
static bool create_qp(int i, enum ibv_qp_type t)
{
	struct ibv_qp_init_attr init = {
		.send_cq = T.scq,
		.recv_cq = T.rcq,
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = HOSTILE_MAX_RECV,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = t,
		.srq = i < T.o.srq ? T.srq : NULL,
	};

	T.qp[i] = ibv_create_qp(T.pd, &init);
	if (i + 1 > T.nqp)
		T.nqp = i + 1;
	return T.qp[i] != NULL;
}

static void print_qp_line(int i)
{
	printf("qp %d qpn 0x%x dest 0x%x rq_psn 0x%x sq_psn 0x%x\n", i, T.qp[i]->qp_num,
	       (T.o.peer_qpn + (uint32_t)i) & 0xffffff, rq_psn(i), sq_psn(i));
}

/* n more receive WQEs on QP i, each a slot of region recv (slots reused round robin). */
static void post_recv(int i, int n)
{
	struct region *g = &T.reg[HR_RECV];

	for (int k = 0; k < n; k++) {
		uint32_t seq = T.posted[i]++;
		size_t off =
			((size_t)i * HOSTILE_MAX_RECV + seq % HOSTILE_MAX_RECV) * HOSTILE_RECV_SLOT;
		struct ibv_sge sge = { (uintptr_t)(g->body + off), (uint32_t)T.o.recv_bytes,
				       g->mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)i << 32 | seq,
					  .sg_list = &sge,
					  .num_sge = 1 };
		struct ibv_recv_wr *bad;

		if (ibv_post_recv(T.qp[i], &wr, &bad)) {
			printf("error post_recv %d\n", i);
			return;
		}
		printf("recv %d 0x%llx %zu %d\n", i, (unsigned long long)wr.wr_id, off,
		       T.o.recv_bytes);
	}
}

/* `srq_post N BYTES`: n WQEs of len bytes on the SRQ, in the slots of region recv that
 * the QPs on the SRQ do not use themselves (round robin); wr_id 0x5e00000 + n. */
static void srq_post(int n, size_t len)
{
	struct region *g = &T.reg[HR_RECV];
	uint32_t slots = (uint32_t)T.o.srq * HOSTILE_MAX_RECV;

	if (!T.srq || len > HOSTILE_RECV_SLOT) {
		printf("error srq_post\n");
		return;
	}
	for (int k = 0; k < n; k++) {
		uint32_t seq = T.srq_posted++;
		size_t off = (size_t)(seq % slots) * HOSTILE_RECV_SLOT;
		struct ibv_sge sge = { (uintptr_t)(g->body + off), (uint32_t)len, g->mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 0x5e00000ull + seq,
					  .sg_list = &sge,
					  .num_sge = 1 };
		struct ibv_recv_wr *bad;

		if (ibv_post_srq_recv(T.srq, &wr, &bad)) {
			printf("error ibv_post_srq_recv\n");
			return;
		}
		printf("srq_recv 0x%llx %zu %zu\n", (unsigned long long)wr.wr_id, off, len);
	}
}

static int qp_index(uint32_t qpn)
{
	for (int i = 0; i < T.nqp; i++)
		if (T.qp[i] && T.qp[i]->qp_num == qpn)
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
			w->src_qp = wc[k].src_qp;
		}
	}
}

static void print_sums(void)
{
	for (int r = 0; r < T.nreg; r++) {
		struct region *g = &T.reg[r];

		printf("sum %s %016llx %016llx %016llx\n", g->name,
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

	if (i < 0 || i >= T.nqp || !T.qp[i] || ibv_query_qp(T.qp[i], &a, IBV_QP_STATE, &init)) {
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

static struct region *region_named(const char *name)
{
	for (int r = 0; r < T.nreg; r++)
		if (strcmp(name, T.reg[r].name) == 0)
			return &T.reg[r];
	return NULL;
}

static void cmd_read(const char *name, size_t off, size_t len)
{
	struct region *g = region_named(name);

	if (!g || off > g->len || len > g->len - off) {
		printf("error read %s %zu %zu\n", name, off, len);
		return;
	}
	printf("data ");
	for (size_t i = 0; i < len; i++)
		printf("%02x", g->body[off + i]);
	printf("\n");
}

/* `reg NAME LEN FLAGS`: a region registered while the peer is connected. Without k the
 * peer learns where it is, not its key (IBTA 10.6: the R_Key alone grants access). */
static void cmd_reg(const char *name, size_t len, const char *flags)
{
	int access = 0;

	if (T.nreg == HOSTILE_MAX_REGIONS || region_named(name) || !len) {
		printf("error reg %s\n", name);
		return;
	}
	if (strchr(flags, 'w'))
		access |= IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	if (strchr(flags, 'r'))
		access |= IBV_ACCESS_REMOTE_READ;
	if (strchr(flags, 'b'))
		access |= IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND;
	region_new(T.nreg, name, len, access, 0, 0);
	printf("mr %s addr 0x%llx len %zu", name, (unsigned long long)T.reg[T.nreg - 1].iova, len);
	if (strchr(flags, 'k'))
		printf(" rkey 0x%x", T.reg[T.nreg - 1].mr->rkey);
	printf("\n");
}

/* `dereg NAME` / `rereg NAME`: the grant ends or changes while the peer may be in the
 * middle of a message that resolved it (IBTA 10.6.7: takes effect at once). */
static void cmd_dereg(const char *name, bool rereg)
{
	struct region *g = region_named(name);
	int ret;

	if (!g || !g->mr) {
		printf("error %s %s: no such registered region\n", rereg ? "rereg" : "dereg", name);
		return;
	}
	if (rereg) {
		ret = ibv_rereg_mr(g->mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, g->access);
		if (ret)
			printf("error rereg %s: %d %s\n", name, ret, strerror(errno));
		else
			printf("rkey 0x%x\n", g->mr->rkey);
		return;
	}
	ret = ibv_dereg_mr(g->mr);
	if (ret)
		printf("error dereg %s: %s\n", name, strerror(ret));
	else
		g->mr = NULL;
}

/* `mw_bind I NAME OFF LEN`: a type 2 window bound by a BIND_MW work request on QP I
 * (ibv_alloc_mw(3), ibv_post_send(3); type 2 takes no ibv_bind_mw), waited for. */
static void cmd_mw_bind(int i, const char *name, size_t off, size_t len)
{
	struct region *g = region_named(name);
	struct ibv_mw *mw;
	struct ibv_send_wr wr, *bad;
	uint64_t wr_id = 0x3b00 + (uint64_t)T.nmw;
	int ret;

	if (i < 0 || i >= T.nqp || !T.qp[i] || !g || !g->mr || off > g->len || len > g->len - off ||
	    T.nmw == (int)(sizeof(T.mw) / sizeof(T.mw[0]))) {
		printf("error mw_bind\n");
		return;
	}
	mw = ibv_alloc_mw(T.pd, IBV_MW_TYPE_2);
	if (!mw) {
		printf("error ibv_alloc_mw: %s\n", strerror(errno));
		return;
	}
	T.mw[T.nmw++] = mw;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info.mr = g->mr;
	wr.bind_mw.bind_info.addr = g->iova + off;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	ret = ibv_post_send(T.qp[i], &wr, &bad);
	if (ret) {
		printf("error bind_mw: %s\n", strerror(ret));
		return;
	}
	for (int tries = 0; tries < 2000; tries++) {
		drain_cq(T.scq);
		for (unsigned k = 0; k < T.nwc; k++) {
			if (T.wcs[k].wr_id != wr_id)
				continue;
			if (T.wcs[k].status != IBV_WC_SUCCESS) {
				printf("error bind_mw completed with status %d\n", T.wcs[k].status);
				return;
			}
			mw->rkey = wr.bind_mw.rkey; /* the application keeps it (type 2) */
			printf("mw rkey 0x%x addr 0x%llx len %zu\n", mw->rkey,
			       (unsigned long long)(g->iova + off), len);
			return;
		}
		usleep(1000);
	}
	printf("error bind_mw did not complete\n");
}

static void cmd_destroy(int i)
{
	uint32_t qpn;
	int ret;

	if (i < 0 || i >= T.nqp || !T.qp[i]) {
		printf("error destroy %d\n", i);
		return;
	}
	drain_cq(T.scq);
	drain_cq(T.rcq);
	qpn = T.qp[i]->qp_num;
	ret = ibv_destroy_qp(T.qp[i]);
	if (ret) {
		printf("error destroy %d: %s\n", i, strerror(ret));
		return;
	}
	T.qp[i] = NULL;
	printf("destroyed %d qpn 0x%x\n", i, qpn);
}

/* `create N`: new RC QPs to the peer, in the first free indexes, as at start-up. */
static void cmd_create(int n)
{
	for (int k = 0; k < n; k++) {
		int i = 0;

		while (i < HOSTILE_MAX_QPS && T.qp[i])
			i++;
		if (i == HOSTILE_MAX_QPS || !create_qp(i, IBV_QPT_RC)) {
			printf("error create\n");
			return;
		}
		connect_qp(i);
		print_qp_line(i);
	}
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

	if (i < 0 || i >= T.nqp || !T.qp[i] || len > g->len || ibv_post_send(T.qp[i], &wr, &bad))
		printf("error send %d %u\n", i, len);
}

/* `events`: the asynchronous events raised since the last call (the async fd is
 * non-blocking), each acknowledged (ibv_get_async_event(3)). */
static void print_events(void)
{
	struct ibv_async_event ev;

	while (ibv_get_async_event(T.ctx, &ev) == 0) {
		const char *name = ibv_event_type_str(ev.event_type);
		int i = -1;

		switch (ev.event_type) {
		case IBV_EVENT_SRQ_LIMIT_REACHED:
		case IBV_EVENT_SRQ_ERR:
			printf("event %d srq%s (%s)\n", ev.event_type,
			       ev.element.srq == T.srq ? "" : " ?", name);
			break;
		case IBV_EVENT_PORT_ACTIVE:
		case IBV_EVENT_PORT_ERR:
		case IBV_EVENT_CQ_ERR:
			printf("event %d (%s)\n", ev.event_type, name);
			break;
		default:
			for (int k = 0; k < T.nqp; k++)
				if (T.qp[k] && T.qp[k] == ev.element.qp)
					i = k;
			printf("event %d qp %d (%s)\n", ev.event_type, i, name);
			break;
		}
		ibv_ack_async_event(&ev);
	}
}

/* `qkey I K`: a UD QP's Q_Key changed in RTS (IBTA 10.3.1 table 91: RTS to RTS may
 * change it), e.g. to the Q_Key of a multicast group its members share. */
static void cmd_qkey(int i, uint32_t qkey)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS, .qkey = qkey };
	int ret;

	if (i < 0 || i >= T.nqp || !T.qp[i] || T.qp[i]->qp_type != IBV_QPT_UD) {
		printf("error qkey %d\n", i);
		return;
	}
	ret = ibv_modify_qp(T.qp[i], &a, IBV_QP_QKEY);
	if (ret)
		printf("error qkey %d: %s\n", i, strerror(ret));
	else
		printf("qkey %d 0x%x\n", i, qkey);
}

/* `attach I GROUP` / `detach I GROUP`: QP I joins or leaves the IPv4 multicast group,
 * named by its RoCEv2 GID ::ffff:GROUP (IBTA A17.4). */
static void cmd_mcast(int i, const char *group, bool attach)
{
	union ibv_gid gid;
	struct in_addr a;
	int ret;

	if (i < 0 || i >= T.nqp || !T.qp[i] || inet_pton(AF_INET, group, &a) != 1) {
		printf("error %s %d %s\n", attach ? "attach" : "detach", i, group);
		return;
	}
	memset(&gid, 0, sizeof(gid));
	gid.raw[10] = 0xff;
	gid.raw[11] = 0xff;
	memcpy(gid.raw + 12, &a, 4);
	ret = attach ? ibv_attach_mcast(T.qp[i], &gid, 0) : ibv_detach_mcast(T.qp[i], &gid, 0);
	if (ret)
		printf("error %s %d %s: %s\n", attach ? "attach" : "detach", i, group,
		       strerror(ret));
	else
		printf("%s %d %s\n", attach ? "attached" : "detached", i, group);
}

static void final_dump(void)
{
	drain_cq(T.rcq);
	drain_cq(T.scq);
	printf("final\n");
	print_sums();
	for (int i = 0; i < T.nqp; i++)
		if (T.qp[i])
			print_qp(i);
	print_counters();
	printf("bye\n");
	fflush(stdout);
}

/* One command line. Returns false on `stop`. */
static bool command(char *line)
{
	char name[32], flags[16], group[64];
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
	} else if (sscanf(line, "post %d %d", &i, &n) == 2 && i >= 0 && i < T.o.qps && T.qp[i]) {
		post_recv(i, n);
	} else if (sscanf(line, "send %d %llu %llu", &i, &a, &c) == 3) {
		cmd_send(i, (uint32_t)a, c);
	} else if (strcmp(line, "wc") == 0) {
		drain_cq(T.rcq);
		drain_cq(T.scq);
		for (unsigned k = 0; k < T.nwc; k++) {
			const struct wc_rec *w = &T.wcs[k];

			printf("wc %d 0x%llx %d %d %u %d 0x%x\n", w->qp,
			       (unsigned long long)w->wr_id, w->status, w->opcode, w->byte_len,
			       w->wc_flags, w->src_qp);
		}
		if (T.wc_lost)
			printf("error %u completions not kept\n", T.wc_lost);
		T.nwc = 0;
		T.wc_lost = 0;
	} else if (strcmp(line, "counters") == 0) {
		print_counters();
	} else if (strcmp(line, "rss") == 0) {
		print_rss();
	} else if (sscanf(line, "reg %31s %llu %15s", name, &a, flags) == 3) {
		cmd_reg(name, (size_t)a, flags);
	} else if (sscanf(line, "dereg %31s", name) == 1) {
		cmd_dereg(name, false);
	} else if (sscanf(line, "rereg %31s", name) == 1) {
		cmd_dereg(name, true);
	} else if (sscanf(line, "mw_bind %d %31s %llu %llu", &i, name, &a, &b) == 4) {
		cmd_mw_bind(i, name, (size_t)a, (size_t)b);
	} else if (sscanf(line, "destroy %d", &i) == 1) {
		cmd_destroy(i);
	} else if (sscanf(line, "create %d", &n) == 1) {
		cmd_create(n);
	} else if (sscanf(line, "srq_post %d %llu", &n, &a) == 2) {
		srq_post(n, (size_t)a);
	} else if (sscanf(line, "srq_limit %llu", &a) == 1) {
		struct ibv_srq_attr sa = { .srq_limit = (uint32_t)a };
		int ret = T.srq ? ibv_modify_srq(T.srq, &sa, IBV_SRQ_LIMIT) : EINVAL;

		if (ret)
			printf("error srq_limit: %s\n", strerror(ret));
	} else if (sscanf(line, "qkey %d %llx", &i, &a) == 2) {
		cmd_qkey(i, (uint32_t)a);
	} else if (strcmp(line, "events") == 0) {
		print_events();
	} else if (sscanf(line, "attach %d %63s", &i, group) == 2) {
		cmd_mcast(i, group, true);
	} else if (sscanf(line, "detach %d %63s", &i, group) == 2) {
		cmd_mcast(i, group, false);
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
		{ "uc", required_argument, NULL, 'u' },
		{ "ud", required_argument, NULL, 'U' },
		{ "srq", required_argument, NULL, 'S' },
		{ "recv-bytes", required_argument, NULL, 'B' },
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
			     .recv_bytes = HOSTILE_RECV_SLOT,
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
		case 'u':
			T.o.uc = arg_int(optarg, 0, HOSTILE_MAX_QPS, "--uc");
			break;
		case 'U':
			T.o.ud = arg_int(optarg, 0, HOSTILE_MAX_QPS, "--ud");
			break;
		case 'S':
			T.o.srq = arg_int(optarg, 0, HOSTILE_MAX_QPS, "--srq");
			break;
		case 'B':
			T.o.recv_bytes = arg_int(optarg, 0, HOSTILE_RECV_SLOT, "--recv-bytes");
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
	if (T.o.uc + T.o.ud > T.o.qps || T.o.srq > T.o.qps) {
		fprintf(stderr,
			"hostile_target: --uc %d, --ud %d or --srq %d is more than --qps %d\n",
			T.o.uc, T.o.ud, T.o.srq, T.o.qps);
		exit(2);
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
	/* `events` reads what is there and returns. */
	if (fcntl(T.ctx->async_fd, F_SETFL, fcntl(T.ctx->async_fd, F_GETFL) | O_NONBLOCK))
		die("fcntl async_fd");
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
	region_new(HR_RW, hostile_region_names[HR_RW], HOSTILE_RW_BYTES,
		   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 0, 0);
	region_new(HR_RO, hostile_region_names[HR_RO], HOSTILE_RO_BYTES, IBV_ACCESS_REMOTE_READ, 0,
		   0);
	region_new(HR_ATOMIC, hostile_region_names[HR_ATOMIC], HOSTILE_ATOMIC_BYTES,
		   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC, 0, 0);
	region_new(HR_NONE, hostile_region_names[HR_NONE], HOSTILE_NONE_BYTES,
		   IBV_ACCESS_LOCAL_WRITE, 0, 0);
	region_new(HR_RECV, hostile_region_names[HR_RECV],
		   (size_t)T.o.qps * HOSTILE_MAX_RECV * HOSTILE_RECV_SLOT, IBV_ACCESS_LOCAL_WRITE,
		   0, 0);
	region_new(HR_ATOMIC_ODD, hostile_region_names[HR_ATOMIC_ODD], HOSTILE_ATOMIC_BYTES,
		   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC, HOSTILE_ODD_SHIFT,
		   HOSTILE_ODD_IOVA);
	if (T.o.srq) {
		struct ibv_srq_init_attr si = { .attr = { .max_wr = HOSTILE_SRQ_WR,
							  .max_sge = 1 } };

		T.srq = ibv_create_srq(T.pd, &si);
		if (!T.srq)
			die("ibv_create_srq");
	}
	for (int i = 0; i < T.o.qps; i++) {
		enum ibv_qp_type t = i >= T.o.qps - T.o.ud	      ? IBV_QPT_UD
				     : i >= T.o.qps - T.o.ud - T.o.uc ? IBV_QPT_UC
								      : IBV_QPT_RC;

		if (!create_qp(i, t))
			die("ibv_create_qp");
		connect_qp(i);
	}

	printf("target pid %d dev %s addr %s mtu 1024\n", (int)getpid(), T.dev,
	       getenv("URNIC_ADDR") ? getenv("URNIC_ADDR") : "?");
	for (int r = 0; r < HR_COUNT; r++)
		printf("mr %s addr 0x%llx len %zu rkey 0x%x\n", hostile_region_names[r],
		       (unsigned long long)T.reg[r].iova, T.reg[r].len, T.reg[r].mr->rkey);
	for (int i = 0; i < T.o.qps; i++)
		print_qp_line(i);
	for (int i = T.o.srq; i < T.o.qps; i++)
		post_recv(i, T.o.recv);
	printf("ready\n");
	fflush(stdout);

	serve();
	final_dump();

	for (int k = 0; k < T.nmw; k++)
		ibv_dealloc_mw(T.mw[k]);
	for (int i = 0; i < T.nqp; i++)
		if (T.qp[i])
			ibv_destroy_qp(T.qp[i]);
	if (T.srq)
		ibv_destroy_srq(T.srq);
	for (int r = 0; r < T.nreg; r++)
		region_free(&T.reg[r]);
	ibv_destroy_cq(T.scq);
	ibv_destroy_cq(T.rcq);
	ibv_dealloc_pd(T.pd);
	ibv_close_device(T.ctx);
	return 0;
}
