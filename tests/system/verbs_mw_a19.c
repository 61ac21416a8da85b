/* SPDX-License-Identifier: MIT */
/*
 * verbs_mw_a19.c - memory windows, invalidation, ATOMIC_WRITE and FLUSH as an application
 * calls them, over the drop-in libibverbs, with two urnic devices in one process:
 *
 *   urnic0 (first URNIC_ADDR) RC QP q0 --- RoCEv2 over lo ---> urnic1 RC QP q1 (target)
 *
 * The target's region grants no remote right of its own (local write and MW_BIND): q0
 * reaches it only through windows. A type 1 window bound with ibv_bind_mw and a type 2
 * window bound with ibv_wr_bind_mw (then another with ibv_post_send IBV_WR_BIND_MW) serve
 * RDMA WRITE and READ through their R_Keys; ibv_wr_send_inv / IBV_WR_SEND_WITH_INV
 * invalidate a type 2 window remotely (the receive says IBV_WC_WITH_INV and
 * ibv_wc_read_invalidated_rkey names the key), ibv_wr_local_inv locally. ATOMIC_WRITE
 * (ibv_wr_atomic_write, and ibv_post_send from an SGE) and FLUSH (wr_flush, rdma-core
 * 45+'s ibv_qp_ex member, reached through its layout since Debian's headers predate it)
 * go to a second region with remote write and IBV_ACCESS_FLUSH_GLOBAL. The device
 * attributes advertise all of it. ibv_rereg_mr moves a region to new memory and rights
 * under the same key (not while windows are bound to it). Last, a WRITE through an
 * invalidated key completes IBV_WC_REM_ACCESS_ERR. Prints "ok NAME" per step; exits 1 on the first
 * failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "check.h"

/* rdma-core 45+ (IBTA 1.5 FLUSH), not in Debian 12's rdma-core 44 headers. */
#define ACCESS_FLUSH_GLOBAL (1 << 8)
#define ACCESS_FLUSH_PERSISTENT (1 << 9)
#define WC_FLUSH 8
#define QP_EX_WITH_FLUSH (1 << 11)
#define FLUSH_GLOBAL 1
#define FLUSH_RANGE 0
#define FLUSH_MR 1
#define DEVICE_FLUSH_GLOBAL (1ULL << 38)
#define DEVICE_ATOMIC_WRITE (1ULL << 40)

struct qp_ex45 {
	struct ibv_qp_ex ex;
	void (*wr_flush)(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr, size_t len,
			 uint8_t type, uint8_t level);
};

#define BUF 65536

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_cq_ex *cqx; /* receive CQ, extended poll API */
	uint8_t *buf;
	struct ibv_mr *mr; /* local use */
	union ibv_gid gid;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
};

static void side_open(struct side *s, struct ibv_device *dev)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 64, .wc_flags = IBV_WC_STANDARD_FLAGS };

	s->ctx = ibv_open_device(dev);
	CHECK(s->ctx);
	s->pd = ibv_alloc_pd(s->ctx);
	CHECK(s->pd);
	s->cq = ibv_create_cq(s->ctx, 64, NULL, NULL, 0);
	CHECK(s->cq);
	s->cqx = ibv_create_cq_ex(s->ctx, &ca);
	CHECK(s->cqx);
	s->buf = aligned_alloc(4096, BUF);
	CHECK(s->buf);
	memset(s->buf, 0, BUF);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF, IBV_ACCESS_LOCAL_WRITE);
	CHECK(s->mr);
	CHECK(ibv_query_gid(s->ctx, 1, 1, &s->gid) == 0);
}

static void rc_qp(struct side *s)
{
	struct ibv_qp_init_attr_ex init = {
		.send_cq = s->cq,
		.recv_cq = ibv_cq_ex_to_cq(s->cqx),
		.cap = { .max_send_wr = 32,
			 .max_recv_wr = 8,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = s->pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ |
				  IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_INV |
				  IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW |
				  IBV_QP_EX_WITH_ATOMIC_WRITE | QP_EX_WITH_FLUSH,
	};

	s->qp = ibv_create_qp_ex(s->ctx, &init);
	CHECK(s->qp);
	s->qpx = ibv_qp_to_qp_ex(s->qp);
	CHECK(s->qpx);
}

static void connect_qp(struct side *s, const struct side *peer)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC | ACCESS_FLUSH_GLOBAL,
	};

	CHECK(ibv_modify_qp(s->qp, &a,
			    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) ==
	      0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = 0x1000;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.grh.hop_limit = 64;
	CHECK(ibv_modify_qp(s->qp, &a,
			    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER) == 0);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x1000;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	CHECK(ibv_modify_qp(s->qp, &a,
			    IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC) == 0);
}

static void poll1(struct ibv_cq *cq, struct ibv_wc *wc)
{
	time_t end = time(NULL) + 10;
	int n;

	while ((n = ibv_poll_cq(cq, 1, wc)) == 0)
		CHECK(time(NULL) < end);
	CHECK(n == 1);
}

/* One send completion: wr_id, status and opcode as expected. */
static void expect(struct side *s, uint64_t id, enum ibv_wc_status st, int opcode)
{
	struct ibv_wc wc;

	poll1(s->cq, &wc);
	if (wc.wr_id != id || wc.status != st || (st == IBV_WC_SUCCESS && (int)wc.opcode != opcode))
		fprintf(stderr, "completion %llu status %d (%s) opcode %d\n",
			(unsigned long long)wc.wr_id, wc.status, ibv_wc_status_str(wc.status),
			wc.opcode);
	CHECK(wc.wr_id == id);
	CHECK(wc.status == st);
	if (st == IBV_WC_SUCCESS)
		CHECK((int)wc.opcode == opcode);
}

static void rdma(struct side *s, enum ibv_wr_opcode op, uint64_t id, uint32_t off, uint32_t len,
		 uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)(s->buf + off), len, s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	CHECK(ibv_post_send(s->qp, &wr, &bad) == 0);
}

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

/* The next receive on the extended CQ: with IBV_WC_WITH_INV naming key. */
static void expect_recv_inv(struct side *s, uint64_t id, uint32_t len, uint32_t key)
{
	struct ibv_poll_cq_attr pa = { 0 };
	time_t end = time(NULL) + 10;
	int ret;

	while ((ret = ibv_start_poll(s->cqx, &pa)) == ENOENT)
		CHECK(time(NULL) < end);
	CHECK(ret == 0);
	CHECK(s->cqx->wr_id == id);
	CHECK(s->cqx->status == IBV_WC_SUCCESS);
	CHECK(ibv_wc_read_opcode(s->cqx) == IBV_WC_RECV);
	CHECK(ibv_wc_read_byte_len(s->cqx) == len);
	CHECK(ibv_wc_read_wc_flags(s->cqx) & IBV_WC_WITH_INV);
	CHECK(ibv_wc_read_invalidated_rkey(s->cqx) == key);
	ibv_end_poll(s->cqx);
}

static void post_recv(struct side *s, uint64_t id, uint32_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)(s->buf + off), len, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	CHECK(ibv_post_recv(s->qp, &wr, &bad) == 0);
}

int main(void)
{
	struct side c, t; /* c: the client (requester), t: the target */
	struct ibv_device **list;
	struct ibv_device_attr_ex dx;
	struct ibv_mr *win_mr, *rw_mr;
	struct ibv_mw *mw1, *mw2, *mw3;
	uint8_t *tbuf, *rwbuf;
	uint64_t base, rwbase;
	int n;

	list = ibv_get_device_list(&n);
	CHECK(list && n >= 2);
	side_open(&c, list[0]);
	side_open(&t, list[1]);

	/* Device attributes (rxe's set: MEM_WINDOW, TYPE_2B, MEM_MGT_EXTENSIONS). */
	CHECK(ibv_query_device_ex(t.ctx, NULL, &dx) == 0);
	CHECK(dx.orig_attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW);
	CHECK(dx.orig_attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	CHECK(dx.orig_attr.device_cap_flags & IBV_DEVICE_MEM_MGT_EXTENSIONS);
	CHECK(dx.orig_attr.max_mw > 0);
	CHECK(dx.device_cap_flags_ex & DEVICE_ATOMIC_WRITE);
	CHECK(dx.device_cap_flags_ex & DEVICE_FLUSH_GLOBAL);
	printf("ok query_device_ex max_mw %d cap_flags 0x%x cap_flags_ex 0x%llx\n",
	       dx.orig_attr.max_mw, dx.orig_attr.device_cap_flags,
	       (unsigned long long)dx.device_cap_flags_ex);

	/* The target's memory: windows only, and a region for ATOMIC_WRITE and FLUSH. */
	tbuf = aligned_alloc(4096, BUF);
	rwbuf = aligned_alloc(4096, 8192);
	CHECK(tbuf && rwbuf);
	fill(tbuf, BUF, 1);
	memset(rwbuf, 0, 8192);
	win_mr = ibv_reg_mr(t.pd, tbuf, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	CHECK(win_mr);
	rw_mr = ibv_reg_mr(t.pd, rwbuf, 8192,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | ACCESS_FLUSH_GLOBAL);
	CHECK(rw_mr);
	errno = 0;
	CHECK(!ibv_reg_mr(t.pd, rwbuf, 8192, IBV_ACCESS_LOCAL_WRITE | ACCESS_FLUSH_PERSISTENT) &&
	      errno == EOPNOTSUPP);
	base = (uintptr_t)tbuf;
	rwbase = (uintptr_t)rwbuf;
	printf("ok reg_mr window region rkey 0x%x, flush region rkey 0x%x\n", win_mr->rkey,
	       rw_mr->rkey);

	rc_qp(&c);
	rc_qp(&t);
	connect_qp(&c, &t);
	connect_qp(&t, &c);
	printf("ok connect qp 0x%x -> 0x%x\n", c.qp->qp_num, t.qp->qp_num);

	/* The documented errors of the window and post verbs (ibv_alloc_mw(3),
	 * ibv_bind_mw(3), ibv_post_send(3)). */
	{
		struct ibv_pd *other = ibv_alloc_pd(t.ctx);
		struct ibv_mr *other_mr;
		struct ibv_mw *w;
		struct ibv_mw_bind b = { .bind_info = { .addr = base, .length = 64 } };
		struct ibv_sge sge = { (uintptr_t)c.buf, 4, c.mr->lkey };
		struct ibv_send_wr wr = { .opcode = IBV_WR_ATOMIC_WRITE,
					  .sg_list = &sge,
					  .num_sge = 1 },
				   *bad;

		CHECK(other);
		other_mr =
			ibv_reg_mr(other, tbuf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
		CHECK(other_mr);
		errno = 0;
		CHECK(!ibv_alloc_mw(t.pd, (enum ibv_mw_type)3) && errno == EINVAL);
		w = ibv_alloc_mw(t.pd, IBV_MW_TYPE_1);
		CHECK(w);
		CHECK(ibv_bind_mw(t.qp, w, &b) == EINVAL); /* a range without a region */
		b.bind_info.mr = other_mr;
		CHECK(ibv_bind_mw(t.qp, w, &b) == EPERM); /* a region of another PD */
		CHECK(ibv_dealloc_mw(w) == 0);
		CHECK(ibv_post_send(c.qp, &wr, &bad) == EINVAL && bad == &wr); /* not 8 bytes */
		wr.opcode = (enum ibv_wr_opcode)14; /* FLUSH: ibv_wr_flush only */
		CHECK(ibv_post_send(c.qp, &wr, &bad) == EINVAL && bad == &wr);
		CHECK(ibv_dereg_mr(other_mr) == 0);
		w = ibv_alloc_mw(other, IBV_MW_TYPE_2);
		CHECK(w);
		CHECK(ibv_dealloc_pd(other) == EBUSY); /* a window holds its PD */
		CHECK(ibv_dealloc_mw(w) == 0);
		CHECK(ibv_dealloc_pd(other) == 0);
	}
	printf("ok errors: alloc_mw type, bind_mw EINVAL/EPERM, dealloc_pd EBUSY, post_send "
	       "EINVAL\n");

	/* Type 1: ibv_bind_mw (a BIND_MW work request), WRITE and READ through it. */
	mw1 = ibv_alloc_mw(t.pd, IBV_MW_TYPE_1);
	CHECK(mw1);
	{
		uint32_t before = mw1->rkey;
		struct ibv_mw_bind b = {
			.wr_id = 11,
			.send_flags = IBV_SEND_SIGNALED,
			.bind_info = { .mr = win_mr,
				       .addr = base,
				       .length = 8192,
				       .mw_access_flags =
					       IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ },
		};

		CHECK(ibv_bind_mw(t.qp, mw1, &b) == 0);
		expect(&t, 11, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
		CHECK(mw1->rkey == ((before & ~0xffu) | ((before + 1) & 0xff)));
		b.bind_info.mw_access_flags |= IBV_ACCESS_ZERO_BASED;
		CHECK(ibv_bind_mw(t.qp, mw1, &b) == EINVAL);
	}
	fill(c.buf, 4096, 9);
	rdma(&c, IBV_WR_RDMA_WRITE, 12, 0, 3000, base + 1000, mw1->rkey);
	expect(&c, 12, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	CHECK(memcmp(tbuf + 1000, c.buf, 3000) == 0);
	rdma(&c, IBV_WR_RDMA_READ, 13, 8192, 8192, base, mw1->rkey);
	expect(&c, 13, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	CHECK(memcmp(c.buf + 8192, tbuf, 8192) == 0);
	printf("ok type 1 window: ibv_bind_mw, WRITE and READ through rkey 0x%x\n", mw1->rkey);

	/* The region cannot go while a window is bound to it (rxe: EINVAL). */
	CHECK(ibv_dereg_mr(win_mr) == EINVAL);
	printf("ok dereg_mr with a bound window: EINVAL\n");

	/* Type 2: ibv_wr_bind_mw, WRITE through it, then SEND with invalidate. */
	mw2 = ibv_alloc_mw(t.pd, IBV_MW_TYPE_2);
	CHECK(mw2);
	{
		struct ibv_mw_bind_info info = { .mr = win_mr,
						 .addr = base + 16384,
						 .length = 4096,
						 .mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
		uint32_t key = ibv_inc_rkey(mw2->rkey);

		ibv_wr_start(t.qpx);
		t.qpx->wr_id = 21;
		t.qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_bind_mw(t.qpx, mw2, key, &info);
		CHECK(ibv_wr_complete(t.qpx) == 0);
		expect(&t, 21, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
		mw2->rkey = key; /* the application's part for type 2 (ibv_wr_bind_mw(3)) */
	}
	rdma(&c, IBV_WR_RDMA_WRITE, 22, 0, 4096, base + 16384, mw2->rkey);
	expect(&c, 22, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	CHECK(memcmp(tbuf + 16384, c.buf, 4096) == 0);
	post_recv(&t, 23, 32768, 2048);
	ibv_wr_start(c.qpx);
	c.qpx->wr_id = 24;
	c.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_inv(c.qpx, mw2->rkey);
	ibv_wr_set_sge(c.qpx, c.mr->lkey, (uintptr_t)c.buf, 1500);
	CHECK(ibv_wr_complete(c.qpx) == 0);
	expect(&c, 24, IBV_WC_SUCCESS, IBV_WC_SEND);
	expect_recv_inv(&t, 23, 1500, mw2->rkey);
	CHECK(memcmp(t.buf + 32768, c.buf, 1500) == 0);
	printf("ok type 2 window: ibv_wr_bind_mw, WRITE, ibv_wr_send_inv -> IBV_WC_WITH_INV 0x%x\n",
	       mw2->rkey);

	/* An empty inline SEND from address 0 through the builders, as UCX sends an empty
	 * message: no byte is read (ibv_wr_set_inline_data(3)), a 0-byte message arrives. */
	{
		struct ibv_poll_cq_attr pa = { 0 };
		time_t end = time(NULL) + 10;
		int ret;

		post_recv(&t, 25, 32768, 2048);
		ibv_wr_start(c.qpx);
		c.qpx->wr_id = 26;
		c.qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(c.qpx);
		ibv_wr_set_inline_data(c.qpx, NULL, 0);
		CHECK(ibv_wr_complete(c.qpx) == 0);
		expect(&c, 26, IBV_WC_SUCCESS, IBV_WC_SEND);
		while ((ret = ibv_start_poll(t.cqx, &pa)) == ENOENT)
			CHECK(time(NULL) < end);
		CHECK(ret == 0);
		CHECK(t.cqx->wr_id == 25 && t.cqx->status == IBV_WC_SUCCESS);
		CHECK(ibv_wc_read_byte_len(t.cqx) == 0);
		ibv_end_poll(t.cqx);
	}
	printf("ok empty inline SEND from address 0: a 0-byte message\n");

	/* Bound again with ibv_post_send IBV_WR_BIND_MW, invalidated by IBV_WR_SEND_WITH_INV. */
	{
		struct ibv_send_wr wr = { .wr_id = 31,
					  .opcode = IBV_WR_BIND_MW,
					  .send_flags = IBV_SEND_SIGNALED },
				   *bad;
		struct ibv_sge sge = { (uintptr_t)c.buf, 64, c.mr->lkey };

		wr.bind_mw.mw = mw2;
		wr.bind_mw.rkey = ibv_inc_rkey(mw2->rkey);
		wr.bind_mw.bind_info =
			(struct ibv_mw_bind_info){ .mr = win_mr,
						   .addr = base,
						   .length = 64,
						   .mw_access_flags = IBV_ACCESS_REMOTE_READ };
		CHECK(ibv_post_send(t.qp, &wr, &bad) == 0);
		expect(&t, 31, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
		mw2->rkey = wr.bind_mw.rkey;
		rdma(&c, IBV_WR_RDMA_READ, 32, 0, 64, base, mw2->rkey);
		expect(&c, 32, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
		post_recv(&t, 33, 32768, 2048);
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 34;
		wr.opcode = IBV_WR_SEND_WITH_INV;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.invalidate_rkey = mw2->rkey;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		CHECK(ibv_post_send(c.qp, &wr, &bad) == 0);
		expect(&c, 34, IBV_WC_SUCCESS, IBV_WC_SEND);
		expect_recv_inv(&t, 33, 64, mw2->rkey);
	}
	printf("ok type 2 window: IBV_WR_BIND_MW, READ, IBV_WR_SEND_WITH_INV\n");

	/* Local invalidate: ibv_wr_local_inv after an ibv_post_send bind. */
	mw3 = ibv_alloc_mw(t.pd, IBV_MW_TYPE_2);
	CHECK(mw3);
	{
		struct ibv_mw_bind_info info = { .mr = win_mr,
						 .addr = base + 40960,
						 .length = 4096,
						 .mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
		uint32_t key = ibv_inc_rkey(mw3->rkey);

		ibv_wr_start(t.qpx);
		t.qpx->wr_id = 41;
		t.qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_bind_mw(t.qpx, mw3, key, &info);
		t.qpx->wr_id = 42;
		ibv_wr_local_inv(t.qpx, key);
		CHECK(ibv_wr_complete(t.qpx) == 0);
		expect(&t, 41, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
		expect(&t, 42, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
		mw3->rkey = key;
	}
	printf("ok type 2 window: ibv_wr_bind_mw then ibv_wr_local_inv\n");

	/* ATOMIC_WRITE: ibv_wr_atomic_write, and ibv_post_send with an 8-byte SGE. */
	{
		const uint64_t v = 0x0123456789abcdefull;
		struct ibv_wc wc;

		ibv_wr_start(c.qpx);
		c.qpx->wr_id = 51;
		c.qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_atomic_write(c.qpx, rw_mr->rkey, rwbase + 64, &v);
		CHECK(ibv_wr_complete(c.qpx) == 0);
		expect(&c, 51, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE);
		CHECK(memcmp(rwbuf + 64, &v, 8) == 0);
		memcpy(c.buf + 512, "atomicwr", 8);
		rdma(&c, IBV_WR_ATOMIC_WRITE, 52, 512, 8, rwbase + 4096, rw_mr->rkey);
		poll1(c.cq, &wc);
		CHECK(wc.wr_id == 52 && wc.status == IBV_WC_SUCCESS &&
		      wc.opcode == IBV_WC_ATOMIC_WRITE);
		CHECK(memcmp(rwbuf + 4096, "atomicwr", 8) == 0);
	}
	printf("ok ATOMIC_WRITE: ibv_wr_atomic_write and IBV_WR_ATOMIC_WRITE\n");

	/* FLUSH: a range, then the whole region. */
	{
		struct qp_ex45 *x = (struct qp_ex45 *)c.qpx;

		CHECK(x->wr_flush);
		ibv_wr_start(c.qpx);
		c.qpx->wr_id = 61;
		c.qpx->wr_flags = IBV_SEND_SIGNALED;
		x->wr_flush(c.qpx, rw_mr->rkey, rwbase, 4096, FLUSH_GLOBAL, FLUSH_RANGE);
		c.qpx->wr_id = 62;
		x->wr_flush(c.qpx, rw_mr->rkey, 0, 0, FLUSH_GLOBAL, FLUSH_MR);
		CHECK(ibv_wr_complete(c.qpx) == 0);
		expect(&c, 61, IBV_WC_SUCCESS, WC_FLUSH);
		expect(&c, 62, IBV_WC_SUCCESS, WC_FLUSH);
	}
	printf("ok FLUSH: global visibility of a range and of the whole region\n");

	/* ibv_rereg_mr(3): refused while windows are bound to the region (EBUSY, the region
	 * unchanged); the flush region moves to new memory and gains remote read, keeping
	 * its keys: a WRITE and a READ through the same R_Key reach the new buffer only. A
	 * PD change moves the region's hold from one PD to the other. */
	{
		uint8_t *nbuf = aligned_alloc(4096, 8192);
		struct ibv_pd *other = ibv_alloc_pd(t.ctx);
		uint32_t rkey = rw_mr->rkey;
		int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ | ACCESS_FLUSH_GLOBAL;

		CHECK(nbuf && other);
		memset(nbuf, 0, 8192);
		errno = 0;
		CHECK(ibv_rereg_mr(win_mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				   IBV_ACCESS_LOCAL_WRITE) == IBV_REREG_MR_ERR_CMD &&
		      errno == EBUSY);
		errno = 0;
		CHECK(ibv_rereg_mr(rw_mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, NULL, 0, 0) ==
			      IBV_REREG_MR_ERR_INPUT &&
		      errno == EINVAL);
		CHECK(ibv_rereg_mr(rw_mr,
				   IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS,
				   NULL, nbuf, 8192, acc) == 0);
		CHECK(rw_mr->addr == nbuf && rw_mr->length == 8192 && rw_mr->rkey == rkey);
		memset(rwbuf, 0xee, 8192);
		fill(c.buf, 64, 9);
		rdma(&c, IBV_WR_RDMA_WRITE, 81, 0, 64, (uintptr_t)nbuf + 128, rkey);
		expect(&c, 81, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
		CHECK(memcmp(nbuf + 128, c.buf, 64) == 0);
		rdma(&c, IBV_WR_RDMA_READ, 82, 4096, 64, (uintptr_t)nbuf + 128, rkey);
		expect(&c, 82, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
		CHECK(memcmp(c.buf + 4096, c.buf, 64) == 0);
		for (int i = 0; i < 8192; i++)
			CHECK(rwbuf[i] == 0xee); /* the old memory is not the region's any more */
		CHECK(ibv_rereg_mr(rw_mr, IBV_REREG_MR_CHANGE_PD, other, NULL, 0, 0) == 0);
		CHECK(rw_mr->pd == other);
		CHECK(ibv_dealloc_pd(other) == EBUSY);
		CHECK(ibv_rereg_mr(rw_mr, IBV_REREG_MR_CHANGE_PD, t.pd, NULL, 0, 0) == 0);
		CHECK(ibv_dealloc_pd(other) == 0);
		CHECK(ibv_rereg_mr(rw_mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, rwbuf, 8192, 0) ==
		      0);
		free(nbuf);
	}
	printf("ok rereg_mr: EBUSY with windows bound, new memory and rights under the same key\n");

	/* Windows go; then the region can. */
	CHECK(ibv_dealloc_mw(mw1) == 0);
	CHECK(ibv_dealloc_mw(mw3) == 0);
	/* Last: a WRITE through the invalidated key is refused by the target. */
	rdma(&c, IBV_WR_RDMA_WRITE, 71, 0, 64, base, mw2->rkey);
	expect(&c, 71, IBV_WC_REM_ACCESS_ERR, 0);
	CHECK(memcmp(tbuf, c.buf + 8192, 64) == 0); /* as READ saw it before */
	printf("ok WRITE through an invalidated window: IBV_WC_REM_ACCESS_ERR\n");
	CHECK(ibv_dealloc_mw(mw2) == 0);
	CHECK(ibv_dereg_mr(win_mr) == 0);
	CHECK(ibv_dereg_mr(rw_mr) == 0);

	CHECK(ibv_destroy_qp(c.qp) == 0);
	CHECK(ibv_destroy_qp(t.qp) == 0);
	for (struct side *s = &c; s; s = s == &c ? &t : NULL) {
		CHECK(ibv_dereg_mr(s->mr) == 0);
		CHECK(ibv_destroy_cq(s->cq) == 0);
		CHECK(ibv_destroy_cq(ibv_cq_ex_to_cq(s->cqx)) == 0);
		CHECK(ibv_dealloc_pd(s->pd) == 0);
		CHECK(ibv_close_device(s->ctx) == 0);
		free(s->buf);
	}
	free(tbuf);
	free(rwbuf);
	ibv_free_device_list(list);
	printf("ok cleanup\n");
	return 0;
}
