/* SPDX-License-Identifier: MIT */
/*
 * verbs_stress.c - many RC QPs between two processes, every operation, every byte
 * checked: the load the fault suites (stress.sh) run over a faulty wire.
 *
 *   host A: verbs_stress -p PORT            host B: verbs_stress -p PORT A_ADDR
 *   urnic0 on A's URNIC_ADDR   <== N RC QPs, RoCEv2 ==>   urnic0 on B's URNIC_ADDR
 *            \________ TCP PORT: QP numbers, PSNs, GIDs, keys; results ________/
 *
 * The two sides are symmetric: each is requester on all N QPs and responder to the
 * other. Per QP, operation i (SEND with immediate, RDMA WRITE, RDMA READ, FETCH_ADD,
 * CMP_SWAP), its size (0 B .. 64 KiB) and offset are a hash of (seed, side, QP, i),
 * and so is every payload byte: the receiver of a SEND recomputes it from the
 * immediate (its index) and checks length, content and order; a READ is checked
 * against the pattern the responder filled its region with; each atomic's returned
 * value must be the one the operations before it left (they execute in order, once,
 * IBTA 9.5: a replayed atomic returns the saved result). At the end the sides swap,
 * over TCP, the number of SENDs each posted, an FNV-1a hash of the region the other
 * wrote into (compared with the writer's shadow copy) and the final atomic words.
 * Any error completion, mismatch, or a deadline passed (-t) fails the run: exit 1,
 * 2 for a hang. Resources are destroyed in order at the end (ASan checks leaks).
 * Prints the transfer totals and "ok" per side.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

enum {
	MAX_QPS = 64,
	DEPTH = 8,	  /* work requests outstanding per QP */
	NRECV = 32,	  /* receive WQEs per QP */
	SEND_MAX = 16384, /* largest SEND */
	RDMA_MAX = 65536, /* largest WRITE / READ */
	REGION = 131072,  /* the write target and the read source */
	INLINE_MAX = 64,
};

enum op { OP_SEND, OP_WRITE, OP_READ, OP_FADD, OP_CSWAP, OP_COUNT };
static const char *const op_names[OP_COUNT] = { "SEND", "WRITE", "READ", "FETCH_ADD", "CMP_SWAP" };

/* What each side tells the other over TCP, per QP. */
struct qp_info {
	uint32_t qpn;
	uint32_t psn;
	uint64_t write_dst;
	uint64_t read_src;
	uint64_t atom;
	uint32_t rkey;
	uint32_t pad;
};

struct hello {
	uint8_t gid[16];
	uint32_t nqps;
	uint32_t iters;
	uint64_t seed;
	struct qp_info qp[MAX_QPS];
};

/* At the end, per QP: what was posted and what was left in our memory. */
struct result {
	uint64_t sends_posted;
	uint64_t write_hash; /* FNV-1a of our write_dst region */
	uint64_t fadd;
	uint64_t cswap;
};

/* The local memory of one QP, in one registered buffer. */
struct qpc {
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *mem;
	uint8_t *send_src;  /* DEPTH slots of RDMA_MAX: SEND and WRITE sources */
	uint8_t *read_dst;  /* DEPTH slots of RDMA_MAX */
	uint8_t *recv_buf;  /* NRECV slots of SEND_MAX */
	uint8_t *write_dst; /* REGION: the peer writes here */
	uint8_t *read_src;  /* REGION: the peer reads from here */
	uint64_t *atom;	    /* [0] FETCH_ADD word, [1] CMP_SWAP word, [2 + slot] results */
	struct qp_info peer;
	uint8_t *shadow; /* what the peer's write_dst must hold */
	uint32_t posted, done, outstanding;
	uint64_t slot_expect[DEPTH]; /* the atomic result expected in each slot */
	uint64_t fadd_next;	     /* the peer's FETCH_ADD word before our next one */
	uint64_t cswap_next;
	uint32_t sends_posted;
	uint32_t recvd;	  /* SENDs received */
	int64_t last_imm; /* index of the last SEND received */
};

static struct {
	int side; /* 0: server, 1: client */
	uint64_t seed;
	uint32_t nqps, iters;
	uint32_t timeout; /* IBTA local ACK timeout exponent */
	double deadline_s;
	struct timespec t0;
	uint64_t ops[OP_COUNT], bytes[OP_COUNT];
	uint64_t recv_msgs, recv_bytes;
	uint64_t checked_bytes;
} g;

static uint64_t sizes_max = RDMA_MAX;

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		fprintf(stderr, "verbs_stress[%s]: FAIL: ", g.side ? "client" : "server");         \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fputc('\n', stderr);                                                               \
		exit(1);                                                                           \
	} while (0)

#define CHECK(e)                                                                                   \
	do {                                                                                       \
		if (!(e))                                                                          \
			FAIL("%s:%d: %s (errno %d %s)", __FILE__, __LINE__, #e, errno,             \
			     strerror(errno));                                                     \
	} while (0)

static double elapsed(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - g.t0.tv_sec) + (double)(t.tv_nsec - g.t0.tv_nsec) / 1e9;
}

static void check_deadline(const char *what)
{
	if (elapsed() > g.deadline_s) {
		fprintf(stderr, "verbs_stress[%s]: FAIL: hang: still %s after %.0f s\n",
			g.side ? "client" : "server", what, g.deadline_s);
		exit(2);
	}
}

/* ---- the deterministic schedule ---- */

static uint64_t mix(uint64_t x)
{
	/* splitmix64's finalizer */
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t key(int side, uint32_t q, uint32_t i, uint32_t what)
{
	return mix(g.seed ^
		   mix(((uint64_t)side << 60) ^ ((uint64_t)q << 40) ^ ((uint64_t)what << 32) ^ i));
}

struct opdesc {
	enum op op;
	uint32_t len;
	uint32_t off; /* in the peer's region (WRITE, READ) */
	uint64_t arg; /* FETCH_ADD addend */
	bool inl;
};

static struct opdesc describe(int side, uint32_t q, uint32_t i)
{
	uint64_t h = key(side, q, i, 1);
	uint32_t pct = (uint32_t)(h % 100);
	uint64_t r = h >> 8;
	struct opdesc d = { 0 };
	uint32_t max;

	d.op = pct < 30	  ? OP_SEND
	       : pct < 60 ? OP_WRITE
	       : pct < 80 ? OP_READ
	       : pct < 90 ? OP_FADD
			  : OP_CSWAP;
	max = d.op == OP_SEND ? SEND_MAX : (uint32_t)sizes_max;
	switch (r % 8) {
	case 0:
		d.len = (r >> 3) % 64 == 0 ? 0 : 1; /* zero-length messages are legal */
		break;
	case 1:
	case 2:
	case 3:
		d.len = 1 + (uint32_t)((r >> 3) % 512); /* small: one packet */
		break;
	case 4:
		d.len = 4096 * (1 + (uint32_t)((r >> 3) % 4)); /* exact multiples of the MTU */
		break;
	default:
		d.len = 1 + (uint32_t)((r >> 3) % max); /* large: many packets */
		break;
	}
	if (d.len > max)
		d.len = max;
	d.off = (uint32_t)((r >> 24) % (REGION - d.len + 1));
	d.arg = 1 + ((r >> 40) & 0xffff);
	d.inl = d.op == OP_SEND && d.len <= INLINE_MAX && (r >> 60) % 2;
	if (d.op == OP_FADD || d.op == OP_CSWAP)
		d.len = 8;
	return d;
}

/* The payload of message i of side/QP (SEND, WRITE), or of the READ region (i = ~0). */
static void pattern(uint8_t *dst, int side, uint32_t q, uint32_t i, uint32_t from, uint32_t len)
{
	uint64_t base = key(side, q, i, 2);

	for (uint32_t k = 0; k < len; k++) {
		uint32_t o = from + k;

		dst[k] = (uint8_t)(mix(base + o / 8) >> (8 * (o % 8)));
	}
}

static bool pattern_ok(const uint8_t *got, int side, uint32_t q, uint32_t i, uint32_t from,
		       uint32_t len, uint32_t *bad)
{
	uint64_t base = key(side, q, i, 2);

	for (uint32_t k = 0; k < len; k++) {
		uint32_t o = from + k;

		if (got[k] != (uint8_t)(mix(base + o / 8) >> (8 * (o % 8)))) {
			*bad = k;
			return false;
		}
	}
	return true;
}

static uint64_t fadd_init(int side, uint32_t q)
{
	return key(side, q, 0, 3) & 0xffffffff00000000ull;
}

static uint64_t cswap_init(int side, uint32_t q)
{
	return key(side, q, 0, 4);
}

static uint64_t cswap_step(uint64_t v)
{
	return v * 6364136223846793005ull + 1442695040888963407ull;
}

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t k = 0; k < n; k++) {
		h ^= p[k];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* ---- TCP ---- */

static void poll_all(void);
static bool polling; /* QPs are up: keep their CQs drained while waiting for TCP */

/* Sends or receives n bytes. While QPs are up, a wait polls the CQs: the peer may
 * need our receive WQEs reposted to finish what it is waiting on. */
static void xfer(int fd, void *buf, size_t n, bool out)
{
	uint8_t *p = buf;

	while (n) {
		ssize_t k = out ? send(fd, p, n, MSG_NOSIGNAL)
				: recv(fd, p, n, polling ? MSG_DONTWAIT : 0);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN && !out) {
			poll_all();
			check_deadline("waiting for the peer over TCP");
			continue;
		}
		if (k <= 0)
			FAIL("TCP %s: %s", out ? "send" : "recv",
			     k ? strerror(errno) : "peer closed");
		p += k;
		n -= (size_t)k;
	}
}

static int tcp_connect(const char *host, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd, one = 1;

	CHECK(inet_pton(AF_INET, host, &sa.sin_addr) == 1);
	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		CHECK(fd >= 0);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		close(fd);
		check_deadline("connecting to the server");
		usleep(100000);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static int tcp_accept(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_ANY) };
	int lfd, fd, one = 1;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(lfd >= 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	CHECK(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CHECK(listen(lfd, 1) == 0);
	fd = accept(lfd, NULL, NULL);
	CHECK(fd >= 0);
	close(lfd);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* ---- verbs ---- */

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *scq, *rcq;
static struct qpc qps[MAX_QPS];
static union ibv_gid my_gid;
static enum ibv_mtu mtu;

static void post_recv(struct qpc *c, uint32_t slot)
{
	struct ibv_sge sge = { (uintptr_t)(c->recv_buf + (size_t)slot * SEND_MAX), SEND_MAX,
			       c->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	CHECK(ibv_post_recv(c->qp, &wr, &bad) == 0);
}

static void setup_qp(uint32_t q)
{
	struct qpc *c = &qps[q];
	size_t bytes = 2 * (size_t)DEPTH * RDMA_MAX + (size_t)NRECV * SEND_MAX + 2 * REGION +
		       (2 + DEPTH) * 8;
	struct ibv_qp_init_attr ia = {
		.send_cq = scq,
		.recv_cq = rcq,
		.cap = { .max_send_wr = 2 * DEPTH,
			 .max_recv_wr = NRECV,
			 .max_send_sge = 1,
			 .max_recv_sge = 1,
			 .max_inline_data = INLINE_MAX },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
				 .pkey_index = 0,
				 .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ |
						    IBV_ACCESS_REMOTE_ATOMIC };

	CHECK(posix_memalign((void **)&c->mem, 4096, bytes) == 0);
	memset(c->mem, 0, bytes);
	c->send_src = c->mem;
	c->read_dst = c->send_src + (size_t)DEPTH * RDMA_MAX;
	c->recv_buf = c->read_dst + (size_t)DEPTH * RDMA_MAX;
	c->write_dst = c->recv_buf + (size_t)NRECV * SEND_MAX;
	c->read_src = c->write_dst + REGION;
	c->atom = (uint64_t *)(void *)(c->read_src + REGION);
	pattern(c->read_src, g.side, q, ~0u, 0, REGION);
	c->atom[0] = fadd_init(g.side, q);
	c->atom[1] = cswap_init(g.side, q);
	c->mr = ibv_reg_mr(pd, c->mem, bytes,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	CHECK(c->mr);
	c->qp = ibv_create_qp(pd, &ia);
	CHECK(c->qp);
	CHECK(ibv_modify_qp(c->qp, &a,
			    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) ==
	      0);
	for (uint32_t s = 0; s < NRECV; s++)
		post_recv(c, s);
	c->shadow = calloc(1, REGION);
	CHECK(c->shadow);
	c->last_imm = -1;
}

static void connect_qp(uint32_t q, const uint8_t *peer_gid)
{
	struct qpc *c = &qps[q];
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = mtu,
		.dest_qp_num = c->peer.qpn,
		.rq_psn = c->peer.psn,
		.max_dest_rd_atomic = DEPTH,
		.min_rnr_timer = 1,
		.ah_attr = { .is_global = 1,
			     .port_num = 1,
			     .grh = { .sgid_index = 1, .hop_limit = 64 } },
	};

	memcpy(a.ah_attr.grh.dgid.raw, peer_gid, 16);
	CHECK(ibv_modify_qp(c->qp, &a,
			    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER) == 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = (uint8_t)g.timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = (0xffffffu - 40u * q) & 0xffffff; /* near the wrap: 24-bit PSNs wrap */
	a.max_rd_atomic = DEPTH;
	CHECK(ibv_modify_qp(c->qp, &a,
			    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) == 0);
	c->fadd_next = fadd_init(!g.side, q);
	c->cswap_next = cswap_init(!g.side, q);
}

static void post_next(uint32_t q)
{
	struct qpc *c = &qps[q];
	uint32_t i = c->posted, slot = i % DEPTH;
	struct opdesc d = describe(g.side, q, i);
	struct ibv_sge sge = { 0, d.len, c->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = (uint64_t)q << 32 | i,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	uint8_t *src = c->send_src + (size_t)slot * RDMA_MAX;

	switch (d.op) {
	case OP_SEND:
		pattern(src, g.side, q, i, 0, d.len);
		sge.addr = (uintptr_t)src;
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		wr.imm_data = htonl(i);
		if (d.inl)
			wr.send_flags |= IBV_SEND_INLINE;
		c->sends_posted++;
		break;
	case OP_WRITE:
		pattern(src, g.side, q, i, 0, d.len);
		memcpy(c->shadow + d.off, src, d.len); /* RC: WRITEs land in order */
		sge.addr = (uintptr_t)src;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = c->peer.write_dst + d.off;
		wr.wr.rdma.rkey = c->peer.rkey;
		break;
	case OP_READ:
		memset(c->read_dst + (size_t)slot * RDMA_MAX, 0xa5, d.len);
		sge.addr = (uintptr_t)(c->read_dst + (size_t)slot * RDMA_MAX);
		wr.opcode = IBV_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = c->peer.read_src + d.off;
		wr.wr.rdma.rkey = c->peer.rkey;
		break;
	case OP_FADD:
		c->atom[2 + slot] = 0xdeadbeefdeadbeefull;
		sge.addr = (uintptr_t)&c->atom[2 + slot];
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.remote_addr = c->peer.atom;
		wr.wr.atomic.compare_add = d.arg;
		wr.wr.atomic.rkey = c->peer.rkey;
		c->slot_expect[slot] = c->fadd_next;
		c->fadd_next += d.arg;
		break;
	case OP_CSWAP:
		c->atom[2 + slot] = 0xdeadbeefdeadbeefull;
		sge.addr = (uintptr_t)&c->atom[2 + slot];
		wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
		wr.wr.atomic.remote_addr = c->peer.atom + 8;
		wr.wr.atomic.compare_add = c->cswap_next;
		wr.wr.atomic.swap = cswap_step(c->cswap_next);
		wr.wr.atomic.rkey = c->peer.rkey;
		c->slot_expect[slot] = c->cswap_next;
		c->cswap_next = cswap_step(c->cswap_next);
		break;
	default:
		FAIL("bad op");
	}
	if (ibv_post_send(c->qp, &wr, &bad))
		FAIL("ibv_post_send QP %u op %u (%s): %s", q, i, op_names[d.op], strerror(errno));
	c->posted++;
	c->outstanding++;
	g.ops[d.op]++;
	g.bytes[d.op] += d.len;
}

static void send_done(const struct ibv_wc *wc)
{
	uint32_t q = (uint32_t)(wc->wr_id >> 32), i = (uint32_t)wc->wr_id, slot = i % DEPTH;
	struct qpc *c;
	struct opdesc d;
	uint32_t bad;

	if (q >= g.nqps)
		FAIL("completion with wr_id %#" PRIx64, wc->wr_id);
	c = &qps[q];
	d = describe(g.side, q, i);
	if (wc->status != IBV_WC_SUCCESS)
		FAIL("QP %u op %u (%s, %u B): %s", q, i, op_names[d.op], d.len,
		     ibv_wc_status_str(wc->status));
	if (i != c->done)
		FAIL("QP %u: completion of op %u, expected %u (out of order)", q, i, c->done);
	switch (d.op) {
	case OP_READ:
		if (!pattern_ok(c->read_dst + (size_t)slot * RDMA_MAX, !g.side, q, ~0u, d.off,
				d.len, &bad))
			FAIL("QP %u READ %u (%u B at %u): byte %u differs", q, i, d.len, d.off,
			     bad);
		g.checked_bytes += d.len;
		break;
	case OP_FADD:
	case OP_CSWAP:
		if (c->atom[2 + slot] != c->slot_expect[slot])
			FAIL("QP %u %s %u returned %#" PRIx64 ", expected %#" PRIx64, q,
			     op_names[d.op], i, c->atom[2 + slot], c->slot_expect[slot]);
		g.checked_bytes += 8;
		break;
	default:
		break;
	}
	c->done++;
	c->outstanding--;
}

static void recv_done(const struct ibv_wc *wc)
{
	uint32_t slot = (uint32_t)wc->wr_id, q, i, bad;
	struct qpc *c = NULL;
	struct opdesc d;

	if (wc->status != IBV_WC_SUCCESS)
		FAIL("receive on QPN %#x: %s", wc->qp_num, ibv_wc_status_str(wc->status));
	for (q = 0; q < g.nqps; q++)
		if (qps[q].qp->qp_num == wc->qp_num) {
			c = &qps[q];
			break;
		}
	if (!c)
		FAIL("receive completion for unknown QPN %#x", wc->qp_num);
	if (!(wc->wc_flags & IBV_WC_WITH_IMM) || wc->opcode != IBV_WC_RECV)
		FAIL("QP %u: receive without immediate (opcode %d)", q, wc->opcode);
	i = ntohl(wc->imm_data);
	d = describe(!g.side, q, i);
	if (d.op != OP_SEND)
		FAIL("QP %u: received message %u, which is not a SEND", q, i);
	/* RC delivers in order: the next SEND of the peer's schedule and no other. */
	for (int64_t k = c->last_imm + 1; k < i; k++)
		if (describe(!g.side, q, (uint32_t)k).op == OP_SEND)
			FAIL("QP %u: received SEND %u before SEND %" PRId64, q, i, k);
	if ((int64_t)i <= c->last_imm)
		FAIL("QP %u: SEND %u received twice or out of order", q, i);
	if (wc->byte_len != d.len)
		FAIL("QP %u SEND %u: %u bytes, expected %u", q, i, wc->byte_len, d.len);
	if (!pattern_ok(c->recv_buf + (size_t)slot * SEND_MAX, !g.side, q, i, 0, d.len, &bad))
		FAIL("QP %u SEND %u (%u B): byte %u differs", q, i, d.len, bad);
	c->last_imm = i;
	c->recvd++;
	g.recv_msgs++;
	g.recv_bytes += d.len;
	g.checked_bytes += d.len;
	post_recv(c, slot);
}

static void poll_all(void)
{
	struct ibv_wc wc[32];
	int n;

	n = ibv_poll_cq(scq, 32, wc);
	CHECK(n >= 0);
	for (int k = 0; k < n; k++)
		send_done(&wc[k]);
	n = ibv_poll_cq(rcq, 32, wc);
	CHECK(n >= 0);
	for (int k = 0; k < n; k++)
		recv_done(&wc[k]);
}

static void usage(void)
{
	fprintf(stderr, "usage: verbs_stress [-p port] [-q qps] [-n ops per QP] [-s max size]\n"
			"                    [-T ack timeout exponent] [-t deadline s] [-S seed]\n"
			"                    [server address]\n");
	exit(3);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_port_attr port;
	struct hello me = { 0 }, peer;
	struct result mine[MAX_QPS], theirs[MAX_QPS];
	const char *server = NULL;
	int port_no = 18600, fd, opt, n;
	bool busy = true;
	int mismatches = 0;
	double secs;

	g.nqps = 16;
	g.iters = 400;
	g.timeout = 14;
	g.deadline_s = 25;
	g.seed = 1;
	while ((opt = getopt(argc, argv, "p:q:n:s:T:t:S:")) != -1) {
		switch (opt) {
		case 'p':
			port_no = atoi(optarg);
			break;
		case 'q':
			g.nqps = (uint32_t)atoi(optarg);
			break;
		case 'n':
			g.iters = (uint32_t)atoi(optarg);
			break;
		case 's':
			sizes_max = strtoull(optarg, NULL, 0);
			break;
		case 'T':
			g.timeout = (uint32_t)atoi(optarg);
			break;
		case 't':
			g.deadline_s = atof(optarg);
			break;
		case 'S':
			g.seed = strtoull(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	if (optind < argc)
		server = argv[optind];
	if (g.nqps == 0 || g.nqps > MAX_QPS || sizes_max == 0 || sizes_max > RDMA_MAX)
		usage();
	g.side = server ? 1 : 0;
	clock_gettime(CLOCK_MONOTONIC, &g.t0);

	list = ibv_get_device_list(&n);
	CHECK(list && n > 0);
	ctx = ibv_open_device(list[0]);
	CHECK(ctx);
	CHECK(ibv_query_port(ctx, 1, &port) == 0);
	mtu = port.active_mtu;
	CHECK(ibv_query_gid(ctx, 1, 1, &my_gid) == 0);
	pd = ibv_alloc_pd(ctx);
	CHECK(pd);
	scq = ibv_create_cq(ctx, (int)(g.nqps * 2 * DEPTH), NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, (int)(g.nqps * NRECV), NULL, NULL, 0);
	CHECK(scq && rcq);
	for (uint32_t q = 0; q < g.nqps; q++) {
		setup_qp(q);
		me.qp[q] = (struct qp_info){ .qpn = qps[q].qp->qp_num,
					     .psn = (0xffffffu - 40u * q) & 0xffffff,
					     .write_dst = (uintptr_t)qps[q].write_dst,
					     .read_src = (uintptr_t)qps[q].read_src,
					     .atom = (uintptr_t)qps[q].atom,
					     .rkey = qps[q].mr->rkey };
	}
	memcpy(me.gid, my_gid.raw, 16);
	me.nqps = g.nqps;
	me.iters = g.iters;
	me.seed = g.seed;

	fd = server ? tcp_connect(server, port_no) : tcp_accept(port_no);
	xfer(fd, &me, sizeof(me), true);
	xfer(fd, &peer, sizeof(peer), false);
	if (peer.nqps != g.nqps || peer.iters != g.iters || peer.seed != g.seed)
		FAIL("the peer runs another test (QPs %u, ops %u, seed %" PRIu64 ")", peer.nqps,
		     peer.iters, peer.seed);
	for (uint32_t q = 0; q < g.nqps; q++) {
		qps[q].peer = peer.qp[q];
		connect_qp(q, peer.gid);
	}
	polling = true;
	/* Both sides in RTS before anyone sends: an early packet would meet a QP in
	 * INIT and be dropped, costing a retransmission timeout. */
	xfer(fd, &me.nqps, 4, true);
	xfer(fd, &peer.nqps, 4, false);
	printf("verbs_stress[%s]: %u RC QPs, %u operations each, sizes 0..%" PRIu64
	       " B, MTU %d, seed %" PRIu64 "\n",
	       g.side ? "client" : "server", g.nqps, g.iters, sizes_max, 128 << mtu, g.seed);
	fflush(stdout);

	clock_gettime(CLOCK_MONOTONIC, &g.t0);
	while (busy) {
		busy = false;
		for (uint32_t q = 0; q < g.nqps; q++) {
			struct qpc *c = &qps[q];

			while (c->outstanding < DEPTH && c->posted < g.iters)
				post_next(q);
			busy |= c->done < g.iters;
		}
		poll_all();
		check_deadline("waiting for completions");
	}
	secs = elapsed();

	/* Our work is done and acknowledged; now receive every SEND the peer posted. */
	for (uint32_t q = 0; q < g.nqps; q++)
		mine[q].sends_posted = qps[q].sends_posted;
	xfer(fd, mine, sizeof(mine[0]) * g.nqps, true);
	xfer(fd, theirs, sizeof(theirs[0]) * g.nqps, false);
	for (;;) {
		bool all = true;

		for (uint32_t q = 0; q < g.nqps; q++)
			all &= qps[q].recvd == theirs[q].sends_posted;
		if (all)
			break;
		poll_all();
		check_deadline("waiting for the peer's SENDs");
	}
	/* The peer is done writing into us: show what we hold. */
	for (uint32_t q = 0; q < g.nqps; q++) {
		mine[q].write_hash = fnv1a(qps[q].write_dst, REGION);
		mine[q].fadd = qps[q].atom[0];
		mine[q].cswap = qps[q].atom[1];
	}
	xfer(fd, mine, sizeof(mine[0]) * g.nqps, true);
	xfer(fd, theirs, sizeof(theirs[0]) * g.nqps, false);
	for (uint32_t q = 0; q < g.nqps; q++) {
		struct qpc *c = &qps[q];

		if (theirs[q].write_hash != fnv1a(c->shadow, REGION)) {
			fprintf(stderr,
				"verbs_stress: QP %u: the peer's write region differs "
				"from what we wrote\n",
				q);
			mismatches++;
		}
		if (theirs[q].fadd != c->fadd_next || theirs[q].cswap != c->cswap_next) {
			fprintf(stderr,
				"verbs_stress: QP %u: final atomic words %#" PRIx64 "/%#" PRIx64
				", expected %#" PRIx64 "/%#" PRIx64 "\n",
				q, theirs[q].fadd, theirs[q].cswap, c->fadd_next, c->cswap_next);
			mismatches++;
		}
		g.checked_bytes += REGION + 16;
	}
	xfer(fd, &mismatches, sizeof(mismatches), true);
	xfer(fd, &n, sizeof(n), false);
	close(fd);
	if (mismatches)
		FAIL("%d mismatches in the peer's memory", mismatches);
	if (n)
		FAIL("the peer found %d mismatches in our memory", n);

	{
		uint64_t total = 0;

		for (int k = 0; k < OP_COUNT; k++)
			total += g.bytes[k];
		printf("verbs_stress[%s]: posted %" PRIu64 " SEND (%" PRIu64 " B), %" PRIu64
		       " WRITE (%" PRIu64 " B), %" PRIu64 " READ (%" PRIu64 " B), %" PRIu64
		       " FETCH_ADD, %" PRIu64 " CMP_SWAP; received %" PRIu64 " SEND (%" PRIu64
		       " B)\n",
		       g.side ? "client" : "server", g.ops[OP_SEND], g.bytes[OP_SEND],
		       g.ops[OP_WRITE], g.bytes[OP_WRITE], g.ops[OP_READ], g.bytes[OP_READ],
		       g.ops[OP_FADD], g.ops[OP_CSWAP], g.recv_msgs, g.recv_bytes);
		printf("verbs_stress[%s]: %.2f s, %.1f MB/s; %" PRIu64
		       " bytes checked, all intact: ok\n",
		       g.side ? "client" : "server", secs, (double)total / secs / 1e6,
		       g.checked_bytes);
	}

	for (uint32_t q = 0; q < g.nqps; q++) {
		CHECK(ibv_destroy_qp(qps[q].qp) == 0);
		CHECK(ibv_dereg_mr(qps[q].mr) == 0);
		free(qps[q].mem);
		free(qps[q].shadow);
	}
	CHECK(ibv_destroy_cq(scq) == 0);
	CHECK(ibv_destroy_cq(rcq) == 0);
	CHECK(ibv_dealloc_pd(pd) == 0);
	CHECK(ibv_close_device(ctx) == 0);
	ibv_free_device_list(list);
	return 0;
}
