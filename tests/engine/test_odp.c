/* SPDX-License-Identifier: MIT */
/*
 * test_odp.c - on-demand regions (mem/odp.h): their bytes move only through the table's
 * odp calls, and a call that fails ends the access as an RNIC's page fault on memory
 * that is not there: a peer's WRITE, READ or atomic gets NAK remote access error (the
 * requester completes IBV_WC_REM_ACCESS_ERR, IBTA 9.7.5.2.4; UC drops the message), a
 * local SGE IBV_WC_LOC_PROT_ERR, and odp_fault_remote / odp_fault_local count it.
 *
 *   host 0: QP a, buffer la ---- RC (or UC), MTU 256 ----> host 1: QP b, buffer rbuf
 *
 * The calls here are the test's: a plain copy, refused for one "unmapped" window of
 * addresses. Ordinary regions never reach them.
 */
#include <string.h>

#include "fabric.h"
#include "mem/odp.h"

#define PAGE 4096
#define ODP_ALL (FAB_ALL_ACCESS | URNIC_ACCESS_ON_DEMAND)

/* The test's calls: copies, except over [lo, hi), "not mapped". */
static struct {
	uintptr_t lo, hi;
	unsigned reads, writes, atomics;
} fake;

static bool refused(const void *p, size_t len)
{
	return (uintptr_t)p < fake.hi && (uintptr_t)p + len > fake.lo;
}

static int fake_read(void *dst, const void *src, size_t len)
{
	fake.reads++;
	if (refused(src, len))
		return -EFAULT;
	memcpy(dst, src, len);
	return 0;
}

static int fake_write(void *dst, const void *src, size_t len)
{
	fake.writes++;
	if (refused(dst, len))
		return -EFAULT;
	memcpy(dst, src, len);
	return 0;
}

static int fake_atomic_ready(void *p)
{
	fake.atomics++;
	return refused(p, 8) ? -EFAULT : 0;
}

static const struct urnic_odp_ops fake_ops = {
	.read = fake_read,
	.write = fake_write,
	.atomic_ready = fake_atomic_ready,
};

static const struct urnic_odp_ops fake_ops_no_atomic = {
	.read = fake_read,
	.write = fake_write,
};

struct env {
	struct fab_pair p;
	struct fab_buf la; /* host 0, ordinary */
	uint8_t *rbuf;	   /* host 1: 3 pages */
	uint8_t *before;
	struct urnic_mr *rmr; /* over rbuf, rights racc */
};

/* A pair (RC, or UC when uc) with the test's odp calls on both hosts, nothing refused. */
static void env_open(struct env *v, bool uc, uint32_t racc, uint64_t seed)
{
	struct fab_conn c = fab_conn_default();

	memset(v, 0, sizeof(*v));
	memset(&fake, 0, sizeof(fake));
	c.mtu = 256;
	fab_pair_open(&v->p, NULL, seed);
	if (uc) {
		v->p.a->qp.type = URNIC_QPT_UC;
		v->p.b->qp.type = URNIC_QPT_UC;
	}
	fab_connect(v->p.a, v->p.b, &c);
	fab_engine(v->p.f, 0)->mrs.odp = &fake_ops;
	fab_engine(v->p.f, 1)->mrs.odp = &fake_ops;
	fab_buf_new(v->p.f, &v->la, 0, &v->p.pd[0], 3 * PAGE, FAB_ALL_ACCESS);
	fab_fill(v->la.p, 3 * PAGE, (uint32_t)seed);
	v->rbuf = aligned_alloc(PAGE, 3 * PAGE);
	v->before = malloc(3 * PAGE);
	CHECK(v->rbuf && v->before);
	fab_fill(v->rbuf, 3 * PAGE, (uint32_t)seed + 1);
	memcpy(v->before, v->rbuf, 3 * PAGE);
	v->rmr = fab_reg(v->p.f, 1, &v->p.pd[1], v->rbuf, 3 * PAGE, racc);
}

static void env_close(struct env *v)
{
	if (v->rmr)
		fab_dereg(v->p.f, 1, v->rmr);
	fab_buf_free(v->p.f, &v->la);
	free(v->rbuf);
	free(v->before);
	fab_pair_close(&v->p);
}

static void refuse(const void *p, size_t len)
{
	fake.lo = (uintptr_t)p;
	fake.hi = (uintptr_t)p + len;
}

static void post(struct env *v, uint64_t id, uint32_t op, struct urnic_sge sge, uint64_t raddr,
		 uint32_t rkey)
{
	CHECK_EQ(fab_post_send(v->p.a, &(struct fab_send_wr){ .wr_id = id,
							      .opcode = op,
							      .remote_addr = raddr,
							      .rkey = rkey,
							      .compare_add = 5,
							      .num_sge = 1,
							      .sge = { sge } }),
		 0);
}

/* One WR from a; its completion. */
static struct urnic_cqe one_wr(struct env *v, uint32_t op, struct urnic_sge sge, uint64_t raddr,
			       uint32_t rkey)
{
	struct urnic_cqe c;

	post(v, 1, op, sge, raddr, rkey);
	fab_wait_cqes(v->p.f, &v->p.a->scq, &c, 1);
	fabric_settle(v->p.f);
	CHECK_EQ(c.wr_id, 1);
	return c;
}

/* WRITE, READ and atomics into an on-demand region all go through the calls: one
 * write per WRITE packet, one read per READ response packet, a check per atomic. */
static void test_odp_region_through_the_calls(void)
{
	struct env v;
	uint64_t word;

	env_open(&v, false, ODP_ALL, 1);
	CHECK_EQ(one_wr(&v, URNIC_WR_RDMA_WRITE, fab_sge(v.la.mr, 0, 1000), (uintptr_t)v.rbuf + 100,
			v.rmr->key)
			 .status,
		 URNIC_WC_SUCCESS);
	CHECK(memcmp(v.rbuf + 100, v.la.p, 1000) == 0);
	CHECK_EQ(fake.writes, 4); /* 1000 bytes at MTU 256 */
	CHECK_EQ(one_wr(&v, URNIC_WR_RDMA_READ, fab_sge(v.la.mr, 4096, 700),
			(uintptr_t)v.rbuf + 2000, v.rmr->key)
			 .status,
		 URNIC_WC_SUCCESS);
	CHECK(memcmp(v.la.p + 4096, v.rbuf + 2000, 700) == 0);
	CHECK_EQ(fake.reads, 3);
	memcpy(&word, v.rbuf + 64, 8);
	CHECK_EQ(one_wr(&v, URNIC_WR_ATOMIC_FETCH_AND_ADD, fab_sge(v.la.mr, 8192, 8),
			(uintptr_t)v.rbuf + 64, v.rmr->key)
			 .status,
		 URNIC_WC_SUCCESS);
	CHECK_EQ(fake.atomics, 1);
	CHECK(memcmp(v.la.p + 8192, &word, 8) == 0);
	word += 5;
	CHECK(memcmp(v.rbuf + 64, &word, 8) == 0);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_odp_fault_remote), 0);
	CHECK_EQ(v.p.b->qp.state, URNIC_QPS_RTS);
	env_close(&v);
}

/* An ordinary region never reaches the calls. */
static void test_ordinary_region_plain(void)
{
	struct env v;

	env_open(&v, false, FAB_ALL_ACCESS, 2);
	CHECK_EQ(one_wr(&v, URNIC_WR_RDMA_WRITE, fab_sge(v.la.mr, 0, 1000), (uintptr_t)v.rbuf,
			v.rmr->key)
			 .status,
		 URNIC_WC_SUCCESS);
	CHECK_EQ(one_wr(&v, URNIC_WR_RDMA_READ, fab_sge(v.la.mr, 4096, 700), (uintptr_t)v.rbuf,
			v.rmr->key)
			 .status,
		 URNIC_WC_SUCCESS);
	CHECK_EQ(one_wr(&v, URNIC_WR_ATOMIC_CMP_AND_SWP, fab_sge(v.la.mr, 8192, 8),
			(uintptr_t)v.rbuf, v.rmr->key)
			 .status,
		 URNIC_WC_SUCCESS);
	CHECK_EQ(fake.reads + fake.writes + fake.atomics, 0);
	env_close(&v);
}

/* A peer's access the calls refuse: NAK remote access error, counted, both QPs in
 * error, the responder goes on (the process is alive: this is the engine returning). */
static void expect_fault_key(struct env *v, uint32_t op, uint32_t len, uint64_t raddr,
			     uint32_t rkey)
{
	struct urnic_cqe c = one_wr(v, op, fab_sge(v->la.mr, 0, len), raddr, rkey);

	CHECK_EQ(c.status, URNIC_WC_REM_ACCESS_ERR);
	CHECK_EQ(fab_ctr(v->p.f, 1, URNIC_CTR_odp_fault_remote), 1);
	CHECK_EQ(fab_ctr(v->p.f, 1, URNIC_CTR_nak_rem_access_sent), 1);
	CHECK_EQ(fab_ctr(v->p.f, 1, URNIC_CTR_atomic_executed), 0);
	CHECK_EQ(v->p.a->qp.state, URNIC_QPS_ERR);
	CHECK_EQ(v->p.b->qp.state, URNIC_QPS_ERR);
}

static void expect_remote_fault(struct env *v, uint32_t op, uint32_t len, uint64_t raddr)
{
	expect_fault_key(v, op, len, raddr, v->rmr->key);
}

/* A WRITE whose third packet falls on the refused page: the packets before it land,
 * the refused page is untouched. */
static void test_write_to_refused_page(void)
{
	struct env v;

	env_open(&v, false, ODP_ALL, 3);
	refuse(v.rbuf + PAGE, PAGE);
	expect_remote_fault(&v, URNIC_WR_RDMA_WRITE, 1024, (uintptr_t)v.rbuf + PAGE - 512);
	CHECK(memcmp(v.rbuf + PAGE - 512, v.la.p, 512) == 0);
	CHECK(memcmp(v.rbuf + PAGE, v.before + PAGE, 2 * PAGE) == 0);
	env_close(&v);
}

static void test_read_of_refused_page(void)
{
	struct env v;
	uint8_t la_before[1024];

	env_open(&v, false, ODP_ALL, 4);
	memcpy(la_before, v.la.p, sizeof(la_before));
	refuse(v.rbuf + PAGE, PAGE);
	expect_remote_fault(&v, URNIC_WR_RDMA_READ, 1024, (uintptr_t)v.rbuf + PAGE - 256);
	/* The first response packet (before the page) was sent, nothing after it. */
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_read_resp_sent), 1);
	CHECK(memcmp(v.la.p + 256, la_before + 256, sizeof(la_before) - 256) == 0);
	env_close(&v);
}

static void test_atomic_on_refused_page(void)
{
	struct env v;

	env_open(&v, false, ODP_ALL, 5);
	refuse(v.rbuf + PAGE, PAGE);
	expect_remote_fault(&v, URNIC_WR_ATOMIC_FETCH_AND_ADD, 8, (uintptr_t)v.rbuf + PAGE + 8);
	CHECK(memcmp(v.rbuf, v.before, 3 * PAGE) == 0);
	env_close(&v);
}

/* Without a call that can ready an atomic's target (a kernel before 5.14), atomics on
 * on-demand regions are refused, never executed blind. */
static void test_atomic_without_the_call(void)
{
	struct env v;

	env_open(&v, false, ODP_ALL, 6);
	fab_engine(v.p.f, 1)->mrs.odp = &fake_ops_no_atomic;
	expect_remote_fault(&v, URNIC_WR_ATOMIC_CMP_AND_SWP, 8, (uintptr_t)v.rbuf);
	CHECK(memcmp(v.rbuf, v.before, 3 * PAGE) == 0);
	env_close(&v);
}

/* A table without calls (no driver set them) reaches no on-demand memory at all. */
static void test_no_calls_no_access(void)
{
	struct env v;

	env_open(&v, false, ODP_ALL, 7);
	fab_engine(v.p.f, 1)->mrs.odp = NULL;
	expect_remote_fault(&v, URNIC_WR_RDMA_WRITE, 100, (uintptr_t)v.rbuf);
	CHECK(memcmp(v.rbuf, v.before, 3 * PAGE) == 0);
	env_close(&v);
}

/* An implicit region: host NULL, IOVA 0, every address; an IOVA is the address. */
static void test_implicit_region(void)
{
	struct env v;
	struct urnic_mr *imr;

	env_open(&v, false, FAB_ALL_ACCESS, 8);
	CHECK_EQ(urnic_mr_register(&fab_engine(v.p.f, 1)->mrs, &v.p.pd[1], NULL, 0, UINT64_MAX,
				   ODP_ALL, 0x12345678, &imr),
		 0);
	CHECK_EQ(one_wr(&v, URNIC_WR_RDMA_WRITE, fab_sge(v.la.mr, 0, 600), (uintptr_t)v.rbuf + 300,
			imr->key)
			 .status,
		 URNIC_WC_SUCCESS);
	CHECK(memcmp(v.rbuf + 300, v.la.p, 600) == 0);
	CHECK_EQ(one_wr(&v, URNIC_WR_RDMA_READ, fab_sge(v.la.mr, 4096, 300),
			(uintptr_t)v.rbuf + 2 * PAGE, imr->key)
			 .status,
		 URNIC_WC_SUCCESS);
	CHECK(memcmp(v.la.p + 4096, v.rbuf + 2 * PAGE, 300) == 0);
	CHECK(fake.writes > 0 && fake.reads > 0);
	/* An address the calls refuse, anywhere in the space. */
	refuse((void *)(uintptr_t)0x1000, PAGE);
	expect_fault_key(&v, URNIC_WR_RDMA_WRITE, 8, 0x1000, imr->key);
	urnic_mr_deregister(&fab_engine(v.p.f, 1)->mrs, imr);
	env_close(&v);
}

/* A local SGE in an on-demand region that cannot be read: IBV_WC_LOC_PROT_ERR, nothing
 * sent; a READ response or a SEND into one that cannot be written: the same at the side
 * that places it (the requester of a SEND gets NAK remote operational error). */
static void test_local_sges(void)
{
	struct env v;
	struct urnic_mr *lmr;
	struct urnic_cqe c;
	struct urnic_sge s;

	/* SEND from a refused page of host 0. */
	env_open(&v, false, FAB_ALL_ACCESS, 9);
	lmr = fab_reg(v.p.f, 0, &v.p.pd[0], v.la.p, 3 * PAGE, ODP_ALL);
	s = fab_sge(v.rmr, 0, 512);
	CHECK_EQ(fab_post_recv(v.p.b, 7, &s, 1), 0);
	refuse(v.la.p + PAGE, PAGE);
	c = one_wr(&v, URNIC_WR_SEND, fab_sge(lmr, PAGE - 100, 200), 0, 0);
	CHECK_EQ(c.status, URNIC_WC_LOC_PROT_ERR);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_odp_fault_local), 1);
	CHECK(memcmp(v.rbuf, v.before, 3 * PAGE) == 0);
	/* READ into a refused page of host 0 (the completer's placement). */
	fab_dereg(v.p.f, 0, lmr);
	env_close(&v);

	env_open(&v, false, FAB_ALL_ACCESS, 10);
	lmr = fab_reg(v.p.f, 0, &v.p.pd[0], v.la.p, 3 * PAGE, ODP_ALL);
	refuse(v.la.p + PAGE, PAGE);
	c = one_wr(&v, URNIC_WR_RDMA_READ, fab_sge(lmr, PAGE - 256, 512), (uintptr_t)v.rbuf,
		   v.rmr->key);
	CHECK_EQ(c.status, URNIC_WC_LOC_PROT_ERR);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_odp_fault_local), 1);
	fab_dereg(v.p.f, 0, lmr);
	env_close(&v);

	/* SEND into a refused receive buffer of host 1. */
	env_open(&v, false, ODP_ALL, 11);
	s = fab_sge(v.rmr, PAGE, 512);
	CHECK_EQ(fab_post_recv(v.p.b, 7, &s, 1), 0);
	refuse(v.rbuf + PAGE, PAGE);
	c = one_wr(&v, URNIC_WR_SEND, fab_sge(v.la.mr, 0, 300), 0, 0);
	CHECK_EQ(c.status, URNIC_WC_REM_OP_ERR);
	CHECK_EQ(fab_poll(&v.p.b->rcq, &c, 1), 1);
	CHECK_EQ(c.wr_id, 7);
	CHECK_EQ(c.status, URNIC_WC_LOC_PROT_ERR);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_odp_fault_local), 1);
	CHECK(memcmp(v.rbuf, v.before, 3 * PAGE) == 0);
	env_close(&v);
}

/* UC: a WRITE the calls refuse is dropped with the rest of its message (no NAK on UC);
 * the QP stays up and the next WRITE lands. */
static void test_uc_write_to_refused_page(void)
{
	struct env v;

	env_open(&v, true, ODP_ALL, 12);
	refuse(v.rbuf + PAGE, PAGE);
	CHECK_EQ(one_wr(&v, URNIC_WR_RDMA_WRITE, fab_sge(v.la.mr, 0, 1024),
			(uintptr_t)v.rbuf + PAGE - 256, v.rmr->key)
			 .status,
		 URNIC_WC_SUCCESS);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_odp_fault_remote), 1);
	CHECK(memcmp(v.rbuf + PAGE, v.before + PAGE, 2 * PAGE) == 0);
	CHECK_EQ(v.p.b->qp.state, URNIC_QPS_RTS);
	CHECK_EQ(one_wr(&v, URNIC_WR_RDMA_WRITE, fab_sge(v.la.mr, 2048, 100), (uintptr_t)v.rbuf,
			v.rmr->key)
			 .status,
		 URNIC_WC_SUCCESS);
	CHECK(memcmp(v.rbuf, v.la.p + 2048, 100) == 0);
	env_close(&v);
}

int main(void)
{
	RUN(test_odp_region_through_the_calls);
	RUN(test_ordinary_region_plain);
	RUN(test_write_to_refused_page);
	RUN(test_read_of_refused_page);
	RUN(test_atomic_on_refused_page);
	RUN(test_atomic_without_the_call);
	RUN(test_no_calls_no_access);
	RUN(test_implicit_region);
	RUN(test_local_sges);
	RUN(test_uc_write_to_refused_page);
	return 0;
}
