/* SPDX-License-Identifier: MIT */
/*
 * host.c - one demo host: its device, PD, buffer and MR, CQs and RC QP, the
 * connection to the other host (INIT -> RTR -> RTS with the exchanged QPN, PSN and
 * GID, as ibv_rc_pingpong does), and the helpers both roles poll and post with.
 * Only the standard verbs API: whatever libibverbs.so.1 is loaded provides it.
 */
#include "demo.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum {
	ROCE_GID_INDEX = 1, /* the RoCEv2 GID of the address */
	PORT = 1,
	SEND_DEPTH = 2 * DEMO_WINDOW,
	MAX_INLINE = 64,
	TIMEOUT_EXP = 14, /* 4.096 us * 2^14 = 67 ms, as perftest */
	RETRY_CNT = 7,	  /* the most transport retries (urnic: exactly 7) */
	RNR_RETRY_INFINITE = 7,
	MIN_RNR_TIMER = 12, /* 0.64 ms, as ibv_rc_pingpong and perftest */
};

const char *const demo_op_names[DEMO_NOPS] = {
	[DEMO_SEND] = "SEND",
	[DEMO_WRITE] = "RDMA WRITE",
	[DEMO_READ] = "RDMA READ",
	[DEMO_FETCH_ADD] = "ATOMIC FETCH_ADD",
	[DEMO_CMP_SWAP] = "ATOMIC CMP_SWAP",
};

static size_t page_up(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}

void demo_layout_init(struct demo_layout *l, const struct demo_opts *o, bool server)
{
	size_t bulk_bytes;

	l->atomic_off = 0;
	l->ping_off = page_up(DEMO_WINDOW * sizeof(uint64_t) + DEMO_CAS_OFF + 8);
	l->slots_off = l->ping_off + 4096;
	l->bulk_off = page_up(l->slots_off + (size_t)DEMO_WINDOW * o->size);
	l->bulk_slots = 0;
	bulk_bytes = 0;
	if (server) {
		uint32_t max_slots = DEMO_BULK_MAX / o->size;

		l->bulk_slots = o->iters < max_slots ? o->iters : max_slots;
		bulk_bytes = (size_t)l->bulk_slots * o->size;
		/* The latency READs take 8 bytes each from here too. */
		if (bulk_bytes < (size_t)o->lat_iters * DEMO_LAT_BYTES)
			bulk_bytes = (size_t)o->lat_iters * DEMO_LAT_BYTES;
	}
	l->len = page_up(l->bulk_off + bulk_bytes);
}

int demo_fail(struct demo_host *h, const char *fmt, ...)
{
	va_list ap;

	if (h->err[0])
		return -EIO; /* keep the first failure: later ones follow from it */
	va_start(ap, fmt);
	vsnprintf(h->err, sizeof(h->err), fmt, ap);
	va_end(ap);
	return -EIO;
}

uint64_t demo_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int demo_send_msg(struct demo_host *h, const struct demo_msg *m)
{
	if (send(h->ctl, m, sizeof(*m), MSG_NOSIGNAL) != (ssize_t)sizeof(*m))
		return -EPIPE;
	return 0;
}

int demo_recv_msg(struct demo_host *h, struct demo_msg *m)
{
	ssize_t n;

	do
		n = recv(h->ctl, m, sizeof(*m), 0);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(*m))
		return -EPIPE;
	m->text[sizeof(m->text) - 1] = 0;
	return 0;
}

static int ip_gid(const char *ip, uint8_t gid[16])
{
	uint8_t v4[4];

	if (inet_pton(AF_INET6, ip, gid) == 1)
		return 0;
	if (inet_pton(AF_INET, ip, v4) != 1)
		return -1;
	memset(gid, 0, 10);
	gid[10] = gid[11] = 0xff; /* ::ffff:a.b.c.d, the RoCEv2 GID of an IPv4 address */
	memcpy(gid + 12, v4, 4);
	return 0;
}

static int open_device(struct demo_host *h)
{
	struct ibv_device **list;
	union ibv_gid gid;
	uint8_t want[16];
	int n, err;

	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		if (list)
			ibv_free_device_list(list);
		return demo_fail(h, "no verbs device: is urnic's libibverbs.so.1 the one loaded? "
				    "(ldd urnic-demo)");
	}
	snprintf(h->dev_name, sizeof(h->dev_name), "%s", ibv_get_device_name(list[0]));
	if (strncmp(h->dev_name, "urnic", 5) != 0) {
		ibv_free_device_list(list);
		return demo_fail(h,
				 "device %s is not a urnic device: the system libibverbs.so.1 "
				 "was loaded instead of urnic's (ldd urnic-demo)",
				 h->dev_name);
	}
	h->ctx = ibv_open_device(list[0]);
	err = errno;
	ibv_free_device_list(list);
	if (!h->ctx) {
		if (err == EADDRINUSE)
			return demo_fail(
				h,
				"cannot bind %s UDP port 4791: address in use. Another "
				"urnic process (a second urnic-demo, an ibv_rc_pingpong...) "
				"has it open; pick free addresses with -a, e.g. "
				"-a 127.0.0.12,127.0.0.13",
				h->ip);
		if (err == EADDRNOTAVAIL)
			return demo_fail(h, "cannot bind %s: not an address of this host", h->ip);
		return demo_fail(h, "cannot open %s on %s: %s", h->dev_name, h->ip, strerror(err));
	}
	if (ibv_query_gid(h->ctx, PORT, ROCE_GID_INDEX, &gid))
		return demo_fail(h, "ibv_query_gid(%s, GID index 1): %s", h->dev_name,
				 strerror(errno));
	if (ip_gid(h->ip, want) || memcmp(want, gid.raw, 16) != 0) {
		char got[INET6_ADDRSTRLEN];

		inet_ntop(AF_INET6, gid.raw, got, sizeof(got));
		return demo_fail(h, "%s has GID[1] %s, not the address %s it was given",
				 h->dev_name, got, h->ip);
	}
	memcpy(h->local.gid, gid.raw, 16);
	if (ibv_query_device(h->ctx, &h->dev))
		return demo_fail(h, "ibv_query_device: %s", strerror(errno));
	return 0;
}

/* The server receives SENDs into its bulk region and posts one receive per slot (as
 * many as the device allows): a client that runs ahead of the server's checks finds
 * receives posted, rather than RNR NAKs. The client receives only ping-pong replies. */
static uint32_t recv_slots(const struct demo_host *h)
{
	uint32_t n = h->lay.bulk_slots;

	if (h->role != DEMO_SERVER)
		return DEMO_WINDOW;
	if (n > (uint32_t)h->dev.max_qp_wr)
		n = (uint32_t)h->dev.max_qp_wr;
	if (n > (uint32_t)h->dev.max_cqe)
		n = (uint32_t)h->dev.max_cqe;
	return n > DEMO_WINDOW ? n : DEMO_WINDOW;
}

static int create_qp(struct demo_host *h)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = SEND_DEPTH,
			.max_recv_wr = h->recv_slots,
			.max_send_sge = 1,
			.max_recv_sge = 1,
			.max_inline_data = MAX_INLINE,
		},
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = PORT,
		.qp_access_flags =
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	};
	int ret;

	h->send_cq = ibv_create_cq(h->ctx, SEND_DEPTH, NULL, NULL, 0);
	h->recv_cq = ibv_create_cq(h->ctx, (int)h->recv_slots, NULL, NULL, 0);
	if (!h->send_cq || !h->recv_cq)
		return demo_fail(h, "ibv_create_cq: %s", strerror(errno));
	init.send_cq = h->send_cq;
	init.recv_cq = h->recv_cq;
	h->qp = ibv_create_qp(h->pd, &init);
	if (!h->qp)
		return demo_fail(h, "ibv_create_qp: %s", strerror(errno));
	ret = ibv_modify_qp(h->qp, &attr,
			    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		return demo_fail(h, "ibv_modify_qp(INIT): %s", strerror(ret));
	return 0;
}

int demo_host_open(struct demo_host *h)
{
	uint32_t psn;

	demo_layout_init(&h->lay, h->o, h->role == DEMO_SERVER);
	if (open_device(h))
		return -EIO;
	h->pd = ibv_alloc_pd(h->ctx);
	if (!h->pd)
		return demo_fail(h, "ibv_alloc_pd: %s", strerror(errno));
	h->buf = mmap(NULL, h->lay.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h->buf == MAP_FAILED) {
		h->buf = NULL;
		return demo_fail(h, "cannot allocate %zu bytes: %s", h->lay.len, strerror(errno));
	}
	h->mr = ibv_reg_mr(h->pd, h->buf, h->lay.len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (!h->mr)
		return demo_fail(h, "ibv_reg_mr(%zu bytes): %s", h->lay.len, strerror(errno));
	h->recv_slots = recv_slots(h);
	if (create_qp(h))
		return -EIO;
	if (getrandom(&psn, sizeof(psn), 0) != sizeof(psn))
		psn = (uint32_t)demo_now_ns();
	h->local.qpn = h->qp->qp_num;
	h->local.psn = psn & 0xffffff;
	h->local.rkey = h->mr->rkey;
	h->local.addr = (uintptr_t)h->buf;
	return 0;
}

static int to_rtr_rts(struct demo_host *h)
{
	const struct ibv_device_attr *dev = &h->dev;
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = h->o->mtu,
		.dest_qp_num = h->remote.qpn,
		.rq_psn = h->remote.psn,
		.min_rnr_timer = MIN_RNR_TIMER,
		.ah_attr = {
			.is_global = 1,
			.grh = { .sgid_index = ROCE_GID_INDEX, .hop_limit = 64 },
			.port_num = PORT,
		},
	};
	int ret;

	memcpy(attr.ah_attr.grh.dgid.raw, h->remote.gid, 16);
	attr.max_dest_rd_atomic =
		(uint8_t)(dev->max_qp_rd_atom < DEMO_WINDOW ? dev->max_qp_rd_atom : DEMO_WINDOW);
	ret = ibv_modify_qp(h->qp, &attr,
			    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return demo_fail(h, "ibv_modify_qp(RTR, path MTU %d): %s", 128 << h->o->mtu,
				 strerror(ret));
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = TIMEOUT_EXP;
	attr.retry_cnt = RETRY_CNT;
	attr.rnr_retry = RNR_RETRY_INFINITE;
	attr.sq_psn = h->local.psn;
	attr.max_rd_atomic =
		(uint8_t)(dev->max_qp_init_rd_atom < DEMO_WINDOW ? dev->max_qp_init_rd_atom
								 : DEMO_WINDOW);
	ret = ibv_modify_qp(h->qp, &attr,
			    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	if (ret)
		return demo_fail(h, "ibv_modify_qp(RTS): %s", strerror(ret));
	return 0;
}

int demo_host_connect(struct demo_host *h)
{
	struct demo_msg m = { .type = DEMO_MSG_CONN };

	_Static_assert(sizeof(h->local) <= sizeof(m.text), "connection data fits a message");
	memcpy(m.text, &h->local, sizeof(h->local));
	if (demo_send_msg(h, &m) || demo_recv_msg(h, &m))
		return -EPIPE;
	if (m.type != DEMO_MSG_CONN)
		return demo_fail(h, "protocol: expected the peer's QP, got message %u", m.type);
	memcpy(&h->remote, m.text, sizeof(h->remote));
	demo_layout_init(&h->peer_lay, h->o, h->role != DEMO_SERVER);
	return to_rtr_rts(h);
}

void demo_host_close(struct demo_host *h)
{
	if (h->qp)
		ibv_destroy_qp(h->qp);
	if (h->send_cq)
		ibv_destroy_cq(h->send_cq);
	if (h->recv_cq)
		ibv_destroy_cq(h->recv_cq);
	if (h->mr)
		ibv_dereg_mr(h->mr);
	if (h->buf)
		munmap(h->buf, h->lay.len);
	if (h->pd)
		ibv_dealloc_pd(h->pd);
	if (h->ctx)
		ibv_close_device(h->ctx);
}

/* Fails on the first completion with an error status. Returns n or -EIO. */
static int check_wcs(struct demo_host *h, const struct ibv_wc *wc, int n)
{
	if (n < 0)
		return demo_fail(h, "ibv_poll_cq failed (%d)", n);
	for (int i = 0; i < n; i++)
		if (wc[i].status != IBV_WC_SUCCESS)
			return demo_fail(h, "work request %llu completed with status '%s' (%d)",
					 (unsigned long long)wc[i].wr_id,
					 ibv_wc_status_str(wc[i].status), wc[i].status);
	return n;
}

int demo_poll(struct demo_host *h, struct ibv_cq *cq, struct ibv_wc *wc, int max)
{
	uint64_t deadline = 0;

	for (unsigned int spins = 0;; spins++) {
		int n = check_wcs(h, wc, ibv_poll_cq(cq, max, wc));

		if (n != 0)
			return n;
		if (spins % 256 == 0) {
			uint64_t now = demo_now_ns();

			if (!deadline)
				deadline = now + DEMO_TIMEOUT_MS * 1000000ull;
			else if (now > deadline)
				return demo_fail(h, "no completion for %d s",
						 DEMO_TIMEOUT_MS / 1000);
		}
	}
}

int demo_reap_sends(struct demo_host *h, uint32_t *outstanding, uint32_t max_outstanding)
{
	struct ibv_wc wc[DEMO_WINDOW];

	for (;;) {
		int n = check_wcs(h, wc, ibv_poll_cq(h->send_cq, DEMO_WINDOW, wc));

		if (n == 0 && *outstanding > max_outstanding)
			n = demo_poll(h, h->send_cq, wc, DEMO_WINDOW);
		if (n <= 0)
			return n;
		*outstanding -= (uint32_t)n;
	}
}

int demo_wait_word(struct demo_host *h, size_t off, uint64_t want, uint32_t *outstanding)
{
	const uint64_t *word = (const uint64_t *)(const void *)(h->buf + off);
	uint64_t deadline = 0, got;

	for (unsigned int spins = 0;; spins++) {
		got = __atomic_load_n(word, __ATOMIC_ACQUIRE);
		if (got == want)
			return 0;
		if (demo_reap_sends(h, outstanding, SEND_DEPTH - 1))
			return -EIO;
		if (spins % 256 == 0) {
			uint64_t now = demo_now_ns();

			if (!deadline)
				deadline = now + DEMO_TIMEOUT_MS * 1000000ull;
			else if (now > deadline)
				return demo_fail(h,
						 "no RDMA WRITE arrived for %d s: expected "
						 "0x%016llx, memory holds 0x%016llx",
						 DEMO_TIMEOUT_MS / 1000, (unsigned long long)want,
						 (unsigned long long)got);
		}
	}
}

int demo_post_send(struct demo_host *h, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int ret = ibv_post_send(h->qp, wr, &bad);

	if (ret)
		return demo_fail(h, "ibv_post_send(wr_id %llu): %s", (unsigned long long)bad->wr_id,
				 strerror(ret));
	return 0;
}

int demo_post_recv(struct demo_host *h, uint64_t wr_id, size_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)(h->buf + off), len, h->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;
	int ret = ibv_post_recv(h->qp, &wr, &bad);

	if (ret)
		return demo_fail(h, "ibv_post_recv: %s", strerror(ret));
	return 0;
}

void demo_report_counters(struct demo_host *h)
{
	struct demo_record r = { .type = DEMO_REC_COUNTERS, .role = h->role };
	char path[128];

	r.err = urnic_ctrfile_path(path, sizeof(path), getpid(), h->dev_name);
	if (!r.err)
		r.err = urnic_ctrfile_read(path, getpid(), &r.ctr);
	if (write(h->report, &r, sizeof(r)) != (ssize_t)sizeof(r))
		return; /* the parent is gone: nobody to tell */
}
