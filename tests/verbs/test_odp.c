/* SPDX-License-Identifier: MIT */
/*
 * test_odp.c - on-demand paging through the verbs (ibv_reg_mr(3) IBV_ACCESS_ON_DEMAND,
 * implicit regions, ibv_advise_mr(3), the ODP capabilities of ibv_query_device_ex(3)),
 * over real memory the engine must fault in, or refuse without faulting itself.
 *
 *   one device (URNIC_ADDR): RC QP c (requester) --- RoCEv2 to its own address ---> QP t
 *
 * t's regions: one registered over addresses mapped only afterwards, one over an mmap'd
 * region nobody has touched, and an implicit one (the whole address space). A WRITE
 * into an unmapped page, a read-only page, a READ of a PROT_NONE page and an atomic on
 * an unmapped page through the implicit region complete IBV_WC_REM_ACCESS_ERR at c, and
 * the process (which is also the responder) goes on, its odp_fault_remote counter
 * moved (counters file); a SEND from an unmapped page completes IBV_WC_LOC_PROT_ERR.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "check.h"
#include "counters_file.h"

#define PAGE 4096
#define RIGHTS                                                                                     \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |               \
	 IBV_ACCESS_REMOTE_ATOMIC)
#define ODP (RIGHTS | IBV_ACCESS_ON_DEMAND)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static union ibv_gid gid;
static uint8_t *lbuf; /* c's buffer, an ordinary region */
static struct ibv_mr *lmr;
static bool atomics; /* the device says ODP atomics work on RC */

/* In page 0, below vm.mmap_min_addr: nothing maps it (a null pointer's page). */
#define NEVER_MAPPED ((uintptr_t)0x100)

/* A range of `pages` pages that nothing is mapped at (reserved, then given back: the
 * next mapping may take it, so it is used at once). */
static uint8_t *hole(size_t pages)
{
	void *p = mmap(NULL, pages * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED);
	CHECK(munmap(p, pages * PAGE) == 0);
	return p;
}

static uint64_t counter(int c)
{
	char path[300];
	struct urnic_ctrfile f;

	CHECK(urnic_ctrfile_path(path, sizeof(path), getpid(), "urnic0") == 0);
	CHECK(urnic_ctrfile_read(path, getpid(), &f) == 0);
	return (uint32_t)c < f.ncounters ? f.values[c] : 0;
}

/* The counters file is written after the pass that moved it: wait for it. */
static void expect_counter(int c, uint64_t want)
{
	time_t end = time(NULL) + 5;

	while (counter(c) != want)
		CHECK(time(NULL) < end);
}

static void poll1(struct ibv_wc *wc)
{
	time_t end = time(NULL) + 10;
	int n;

	while ((n = ibv_poll_cq(cq, 1, wc)) == 0)
		CHECK(time(NULL) < end);
	CHECK(n == 1);
}

static struct ibv_qp *rc_qp(void)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = 16,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags =
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	};

	CHECK(qp);
	CHECK(ibv_modify_qp(qp, &a,
			    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) ==
	      0);
	return qp;
}

static void to_rts(struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = dest,
		.rq_psn = 0x100,
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = 12,
		.ah_attr = { .is_global = 1,
			     .port_num = 1,
			     .grh = { .dgid = gid, .sgid_index = 1, .hop_limit = 64 } },
	};

	CHECK(ibv_modify_qp(qp, &a,
			    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER) == 0);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x100;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	CHECK(ibv_modify_qp(qp, &a,
			    IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC) == 0);
}

/* A fresh connected pair for each case: a failed one leaves both in error. */
struct pair {
	struct ibv_qp *c, *t;
};

static struct pair pair_open(void)
{
	struct pair p = { rc_qp(), rc_qp() };

	to_rts(p.c, p.t->qp_num);
	to_rts(p.t, p.c->qp_num);
	return p;
}

static void pair_close(struct pair *p)
{
	struct ibv_wc wc;

	CHECK(ibv_destroy_qp(p->c) == 0);
	CHECK(ibv_destroy_qp(p->t) == 0);
	while (ibv_poll_cq(cq, 1, &wc) > 0)
		;
}

/* One signaled WR from c over lbuf[off, off + len) (or a local SGE of its own); the
 * completion's status. */
static enum ibv_wc_status one_wr(struct pair *p, enum ibv_wr_opcode op, struct ibv_sge sge,
				 uint64_t raddr, uint32_t rkey)
{
	struct ibv_send_wr wr = { .wr_id = 1,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct ibv_wc wc;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	CHECK(ibv_post_send(p->c, &wr, &bad) == 0);
	poll1(&wc);
	CHECK(wc.wr_id == 1);
	return wc.status;
}

static struct ibv_sge lsge(uint32_t off, uint32_t len)
{
	return (struct ibv_sge){ (uintptr_t)(lbuf + off), len, lmr->lkey };
}

static void test_caps(void)
{
	struct ibv_device_attr_ex a;
	uint32_t rc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE |
		      IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_SRQ_RECV;
	uint64_t word = 0;

	CHECK(ibv_query_device_ex(ctx, NULL, &a) == 0);
	CHECK_EQ(a.odp_caps.general_caps, IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT);
	CHECK_EQ(a.odp_caps.per_transport_caps.rc_odp_caps & rc, rc);
	CHECK_EQ(a.odp_caps.per_transport_caps.uc_odp_caps,
		 IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE |
			 IBV_ODP_SUPPORT_SRQ_RECV);
	CHECK_EQ(a.odp_caps.per_transport_caps.ud_odp_caps,
		 IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_SRQ_RECV);
	/* XRC: RC's operations, receives only from its SRQs. */
	CHECK_EQ(a.xrc_odp_caps,
		 a.odp_caps.per_transport_caps.rc_odp_caps & ~(uint32_t)IBV_ODP_SUPPORT_RECV);
	/* Atomics exactly when this kernel can ready a target (MADV_POPULATE_WRITE). */
	atomics = a.odp_caps.per_transport_caps.rc_odp_caps & IBV_ODP_SUPPORT_ATOMIC;
	CHECK_EQ(atomics,
		 madvise((void *)((uintptr_t)&word & ~(uintptr_t)(PAGE - 1)), PAGE, 23) == 0);
}

/* ibv_reg_mr(3): an on-demand region is not checked against the mapping; an implicit
 * one is addr NULL, length SIZE_MAX at IOVA 0, on demand. */
static void test_registration(void)
{
	uint8_t *h = hole(4);
	struct ibv_mr *mr;

	CHECK(!ibv_reg_mr(pd, h, 4 * PAGE, RIGHTS));
	CHECK_EQ(errno, EFAULT);
	mr = ibv_reg_mr(pd, h, 4 * PAGE, ODP);
	CHECK(mr);
	CHECK(ibv_dereg_mr(mr) == 0);
	mr = ibv_reg_mr(pd, NULL, SIZE_MAX, ODP);
	CHECK(mr);
	CHECK(mr->addr == NULL && mr->length == SIZE_MAX);
	CHECK(ibv_dereg_mr(mr) == 0);
	CHECK(!ibv_reg_mr(pd, NULL, SIZE_MAX, RIGHTS));
	CHECK_EQ(errno, EINVAL);
	CHECK(!ibv_reg_mr_iova(pd, NULL, SIZE_MAX, 4096, ODP));
	CHECK_EQ(errno, EINVAL);
	CHECK(!ibv_reg_mr(pd, h, 0, ODP));
	CHECK_EQ(errno, EINVAL);
	CHECK(!ibv_reg_mr(pd, (void *)(uintptr_t)(UINTPTR_MAX - 100), 200, ODP));
	CHECK_EQ(errno, EINVAL);
}

/* A region registered over addresses mapped only afterwards, and one over memory
 * nobody touched: WRITE and READ find the pages (faulted in by the kernel). */
static void test_mapped_after_registration(void)
{
	struct pair p = pair_open();
	struct ibv_mr *mr, *umr;
	uint8_t *h, *u;

	for (int tries = 0;; tries++) {
		h = hole(4);
		mr = ibv_reg_mr(pd, h, 4 * PAGE, ODP);
		CHECK(mr);
		if (mmap(h, 4 * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) == h)
			break;
		/* Another thread's mapping (an engine thread's, the sanitizer's) took the
		 * hole in between: another hole. */
		CHECK(errno == EEXIST && tries < 10);
		CHECK(ibv_dereg_mr(mr) == 0);
	}
	for (int i = 0; i < 3 * PAGE; i++)
		lbuf[i] = (uint8_t)(i * 7 + 1);
	CHECK_EQ(one_wr(&p, IBV_WR_RDMA_WRITE, lsge(0, 3 * PAGE), (uintptr_t)h + 100, mr->rkey),
		 IBV_WC_SUCCESS);
	CHECK(memcmp(h + 100, lbuf, 3 * PAGE) == 0);
	memset(lbuf + 3 * PAGE, 0, 3 * PAGE);
	CHECK_EQ(one_wr(&p, IBV_WR_RDMA_READ, lsge(3 * PAGE, 3 * PAGE), (uintptr_t)h + 100,
			mr->rkey),
		 IBV_WC_SUCCESS);
	CHECK(memcmp(lbuf + 3 * PAGE, lbuf, 3 * PAGE) == 0);

	u = mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(u != MAP_FAILED);
	umr = ibv_reg_mr(pd, u, 16 * PAGE, ODP);
	CHECK(umr);
	memset(lbuf + 3 * PAGE, 0xee, PAGE);
	CHECK_EQ(one_wr(&p, IBV_WR_RDMA_READ, lsge(3 * PAGE, PAGE), (uintptr_t)u + 5 * PAGE,
			umr->rkey),
		 IBV_WC_SUCCESS);
	for (int i = 0; i < PAGE; i++)
		CHECK(lbuf[3 * PAGE + i] == 0);
	CHECK_EQ(one_wr(&p, IBV_WR_RDMA_WRITE, lsge(0, 2 * PAGE), (uintptr_t)u + 9 * PAGE + 8,
			umr->rkey),
		 IBV_WC_SUCCESS);
	CHECK(memcmp(u + 9 * PAGE + 8, lbuf, 2 * PAGE) == 0);
	expect_counter(URNIC_CTRFILE_odp_fault_remote, 0);
	pair_close(&p);
	CHECK(ibv_dereg_mr(umr) == 0);
	CHECK(ibv_dereg_mr(mr) == 0);
	CHECK(munmap(u, 16 * PAGE) == 0);
	CHECK(munmap(h, 4 * PAGE) == 0);
}

/* Through the implicit region, memory that is not there with the right: the peer gets
 * IBV_WC_REM_ACCESS_ERR, and this process, which served it, is still here to count. */
static void test_implicit_faults(void)
{
	struct ibv_mr *imr = ibv_reg_mr(pd, NULL, SIZE_MAX, ODP);
	uintptr_t h = NEVER_MAPPED;
	uint8_t *ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *none = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *ok = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t faults = counter(URNIC_CTRFILE_odp_fault_remote);
	struct pair p;

	CHECK(imr && ro != MAP_FAILED && none != MAP_FAILED && ok != MAP_FAILED);
	p = pair_open();
	CHECK_EQ(one_wr(&p, IBV_WR_RDMA_WRITE, lsge(0, 64), (uintptr_t)ok + 64, imr->rkey),
		 IBV_WC_SUCCESS);
	CHECK(memcmp(ok + 64, lbuf, 64) == 0);
	CHECK_EQ(one_wr(&p, IBV_WR_RDMA_WRITE, lsge(0, 64), h + 64, imr->rkey),
		 IBV_WC_REM_ACCESS_ERR);
	expect_counter(URNIC_CTRFILE_odp_fault_remote, ++faults);
	pair_close(&p);

	p = pair_open();
	CHECK_EQ(one_wr(&p, IBV_WR_RDMA_WRITE, lsge(0, 64), (uintptr_t)ro, imr->rkey),
		 IBV_WC_REM_ACCESS_ERR);
	expect_counter(URNIC_CTRFILE_odp_fault_remote, ++faults);
	pair_close(&p);

	p = pair_open();
	CHECK_EQ(one_wr(&p, IBV_WR_RDMA_READ, lsge(0, 64), (uintptr_t)none, imr->rkey),
		 IBV_WC_REM_ACCESS_ERR);
	expect_counter(URNIC_CTRFILE_odp_fault_remote, ++faults);
	pair_close(&p);

	if (atomics) {
		p = pair_open();
		CHECK_EQ(one_wr(&p, IBV_WR_ATOMIC_FETCH_AND_ADD, lsge(0, 8), h, imr->rkey),
			 IBV_WC_REM_ACCESS_ERR);
		expect_counter(URNIC_CTRFILE_odp_fault_remote, ++faults);
		pair_close(&p);
		p = pair_open();
		CHECK_EQ(one_wr(&p, IBV_WR_ATOMIC_FETCH_AND_ADD, lsge(0, 8), (uintptr_t)ok,
				imr->rkey),
			 IBV_WC_SUCCESS);
		pair_close(&p);
	}

	/* A local SGE through the implicit region: IBV_WC_LOC_PROT_ERR, counted. */
	p = pair_open();
	CHECK_EQ(one_wr(&p, IBV_WR_RDMA_WRITE, (struct ibv_sge){ h, 64, imr->lkey }, (uintptr_t)ok,
			imr->rkey),
		 IBV_WC_LOC_PROT_ERR);
	expect_counter(URNIC_CTRFILE_odp_fault_local, 1);
	pair_close(&p);

	CHECK(ibv_dereg_mr(imr) == 0);
	munmap(ro, PAGE);
	munmap(none, PAGE);
	munmap(ok, PAGE);
}

/* ibv_advise_mr(3), with the errnos mlx5 gives. */
static void test_advise(void)
{
	uint8_t *m =
		mmap(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr, *rd, *imr;
	struct ibv_sge s;
	unsigned char vec[8];

	CHECK(m != MAP_FAILED);
	mr = ibv_reg_mr(pd, m, 8 * PAGE, ODP);
	rd = ibv_reg_mr(pd, m, 8 * PAGE, IBV_ACCESS_ON_DEMAND); /* nothing that writes */
	imr = ibv_reg_mr(pd, NULL, SIZE_MAX, ODP);
	CHECK(mr && rd && imr);
	s = (struct ibv_sge){ (uintptr_t)m + PAGE, 2 * PAGE, mr->lkey };
	/* A synchronous prefetch for writing leaves the pages present. */
	CHECK(mincore(m, 8 * PAGE, vec) == 0);
	CHECK_EQ(vec[1] & 1, 0);
	CHECK_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, IBV_ADVISE_MR_FLAG_FLUSH,
			       &s, 1),
		 0);
	CHECK(mincore(m, 8 * PAGE, vec) == 0);
	CHECK(vec[1] & vec[2] & 1);
	CHECK_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &s, 1), 0);
	CHECK_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, IBV_ADVISE_MR_FLAG_FLUSH,
			       &s, 1),
		 0);
	/* Unknown advice, unknown flags, no SGE. */
	CHECK_EQ(ibv_advise_mr(pd, (enum ibv_advise_mr_advice)3, 0, &s, 1), EOPNOTSUPP);
	CHECK_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 2, &s, 1), EINVAL);
	CHECK_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &s, 0), EINVAL);
	/* Not an on-demand region's key; PREFETCH_WRITE to one that does not write; out of
	 * the region. */
	s.lkey = lmr->lkey;
	CHECK_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &s, 1), ENOENT);
	s.lkey = rd->lkey;
	CHECK_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &s, 1), 0);
	CHECK_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0, &s, 1), EPERM);
	s = (struct ibv_sge){ (uintptr_t)m + 7 * PAGE, 2 * PAGE, mr->lkey };
	CHECK_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &s, 1), EFAULT);
	/* Through the implicit region: unmapped memory fails a synchronous prefetch only. */
	s = (struct ibv_sge){ (uintptr_t)hole(2), 2 * PAGE, imr->lkey };
	CHECK_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH, &s, 1),
		 EFAULT);
	CHECK_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &s, 1), 0);
	CHECK(ibv_dereg_mr(imr) == 0);
	CHECK(ibv_dereg_mr(rd) == 0);
	CHECK(ibv_dereg_mr(mr) == 0);
	munmap(m, 8 * PAGE);
}

int main(void)
{
	struct ibv_device **devs = ibv_get_device_list(NULL);

	CHECK(devs && devs[0]);
	ctx = ibv_open_device(devs[0]);
	CHECK(ctx);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	CHECK(pd && cq);
	CHECK(ibv_query_gid(ctx, 1, 1, &gid) == 0);
	lbuf = aligned_alloc(PAGE, 6 * PAGE);
	CHECK(lbuf);
	lmr = ibv_reg_mr(pd, lbuf, 6 * PAGE, RIGHTS);
	CHECK(lmr);
	RUN(test_caps);
	RUN(test_registration);
	RUN(test_mapped_after_registration);
	RUN(test_implicit_faults);
	RUN(test_advise);
	CHECK(ibv_dereg_mr(lmr) == 0);
	CHECK(ibv_destroy_cq(cq) == 0);
	CHECK(ibv_dealloc_pd(pd) == 0);
	CHECK(ibv_close_device(ctx) == 0);
	ibv_free_device_list(devs);
	free(lbuf);
	return 0;
}
