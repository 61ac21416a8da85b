/* SPDX-License-Identifier: MIT */
/*
 * test_remote_access.c - remote access violations never touch memory (docs/security.md;
 * IBTA 9.7.5.1.7, 9.9.3.1 class C errors).
 *
 * A request with a bad R_Key, a range outside the region, or a region without the
 * right gets NAK remote access error: the requester completes IBV_WC_REM_ACCESS_ERR
 * (10), both QPs end in error. An operation the QP itself does not grant (its access
 * flags), or a misaligned atomic, gets NAK invalid request: IBV_WC_REM_INV_REQ_ERR (9).
 * The responder's memory around and inside the region is compared byte for byte with a
 * copy taken before; the WRs behind the failed one are flushed; the counters move.
 */
#include <string.h>

#include "fabric.h"

#define PAGE 4096
#define GUARDED (3 * PAGE) /* guard page | region | guard page */

struct env {
	struct fab_pair p;
	struct fab_buf la;
	uint8_t *rbuf;	      /* host 1: the guarded buffer */
	uint8_t *before;      /* its copy */
	struct urnic_mr *rmr; /* covers rbuf[PAGE .. 2 PAGE) */
	struct urnic_pd other_pd;
};

static void env_open(struct env *v, uint32_t mr_access, uint32_t qp_access, uint32_t mtu,
		     uint64_t seed)
{
	struct fab_conn c = fab_conn_default();

	c.mtu = mtu;
	fab_pair_open(&v->p, NULL, seed);
	fab_connect_one(v->p.a, v->p.b, &c, c.psn_a, c.psn_b);
	c.access = qp_access;
	fab_connect_one(v->p.b, v->p.a, &c, c.psn_b, c.psn_a);
	fab_buf_new(v->p.f, &v->la, 0, &v->p.pd[0], 65536, FAB_ALL_ACCESS);
	fab_fill(v->la.p, 65536, (uint32_t)seed);
	v->rbuf = malloc(GUARDED);
	v->before = malloc(GUARDED);
	CHECK(v->rbuf && v->before);
	fab_fill(v->rbuf, GUARDED, (uint32_t)seed + 7);
	memcpy(v->before, v->rbuf, GUARDED);
	v->rmr = fab_reg(v->p.f, 1, &v->p.pd[1], v->rbuf + PAGE, PAGE, mr_access);
	v->other_pd.handle = 2;
}

static void env_close(struct env *v)
{
	fab_dereg(v->p.f, 1, v->rmr);
	free(v->rbuf);
	free(v->before);
	fab_buf_free(v->p.f, &v->la);
	fab_pair_close(&v->p);
}

static void post(struct env *v, uint64_t id, uint32_t op, uint64_t raddr, uint32_t rkey,
		 uint32_t len)
{
	CHECK_EQ(fab_post_send(v->p.a,
			       &(struct fab_send_wr){ .wr_id = id,
						      .opcode = op,
						      .remote_addr = raddr,
						      .rkey = rkey,
						      .compare_add = 1,
						      .swap = 2,
						      .num_sge = 1,
						      .sge = { fab_sge(v->la.mr, 8 * id, len) } }),
		 0);
}

/* Posts the bad request (plus a WR behind it) and checks the whole outcome. */
static void expect_failure(struct env *v, uint32_t op, uint64_t raddr, uint32_t rkey, uint32_t len,
			   uint8_t status)
{
	struct urnic_cqe sc[2], rc;
	uint8_t la_before[256];
	enum urnic_counter sent = status == URNIC_WC_REM_ACCESS_ERR ? URNIC_CTR_nak_rem_access_sent
								    : URNIC_CTR_nak_inv_req_sent;
	enum urnic_counter rcvd = status == URNIC_WC_REM_ACCESS_ERR ? URNIC_CTR_nak_rem_access_rcvd
								    : URNIC_CTR_nak_inv_req_rcvd;

	memcpy(la_before, v->la.p, sizeof(la_before));
	CHECK_EQ(fab_post_recv(v->p.b, 77, NULL, 0), 0);
	post(v, 1, op, raddr, rkey, len);
	post(v, 2, URNIC_WR_RDMA_WRITE, v->rmr->iova, v->rmr->key, 16);
	fab_wait_cqes(v->p.f, &v->p.a->scq, sc, 2);
	fabric_settle(v->p.f);
	CHECK_EQ(sc[0].wr_id, 1);
	CHECK_EQ(sc[0].status, status);
	CHECK_EQ(sc[1].wr_id, 2);
	CHECK_EQ(sc[1].status, URNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(fab_poll(&v->p.a->scq, sc, 1), 0);
	/* Class C: the responder NAKed and went to error; its receive was flushed. */
	CHECK_EQ(v->p.b->qp.state, URNIC_QPS_ERR);
	CHECK_EQ(v->p.a->qp.state, URNIC_QPS_ERR);
	CHECK_EQ(fab_poll(&v->p.b->rcq, &rc, 1), 1);
	CHECK_EQ(rc.wr_id, 77);
	CHECK_EQ(rc.status, URNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(fab_ctr(v->p.f, 1, sent), 1);
	CHECK_EQ(fab_ctr(v->p.f, 0, rcvd), 1);
	/* Not a byte changed, inside the region or around it, nor in the READ target. */
	CHECK(memcmp(v->rbuf, v->before, GUARDED) == 0);
	if (op == URNIC_WR_RDMA_READ || op == URNIC_WR_ATOMIC_FETCH_AND_ADD ||
	    op == URNIC_WR_ATOMIC_CMP_AND_SWP)
		CHECK(memcmp(v->la.p, la_before, sizeof(la_before)) == 0);
	CHECK_EQ(fab_ctr(v->p.f, 1, URNIC_CTR_atomic_executed), 0);
	CHECK_EQ(fab_ctr(v->p.f, 1, URNIC_CTR_read_resp_sent), 0);
}

static void one(uint32_t mr_access, uint32_t qp_access, uint32_t op, int64_t raddr_off,
		uint32_t rkey_xor, uint32_t len, uint8_t status, uint64_t seed)
{
	struct env v;

	env_open(&v, mr_access, qp_access, 256, seed);
	expect_failure(&v, op, v.rmr->iova + (uint64_t)raddr_off, v.rmr->key ^ rkey_xor, len,
		       status);
	env_close(&v);
}

static void test_bad_rkey(void)
{
	/* Same slot, other key bits; and another slot altogether. */
	one(FAB_ALL_ACCESS, FAB_ALL_ACCESS, URNIC_WR_RDMA_WRITE, 0, 0x01, 100,
	    URNIC_WC_REM_ACCESS_ERR, 1);
	one(FAB_ALL_ACCESS, FAB_ALL_ACCESS, URNIC_WR_RDMA_WRITE, 0, 0x300, 100,
	    URNIC_WC_REM_ACCESS_ERR, 2);
	one(FAB_ALL_ACCESS, FAB_ALL_ACCESS, URNIC_WR_RDMA_READ, 0, 0x80, 100,
	    URNIC_WC_REM_ACCESS_ERR, 3);
	one(FAB_ALL_ACCESS, FAB_ALL_ACCESS, URNIC_WR_ATOMIC_FETCH_AND_ADD, 0, 0x02, 8,
	    URNIC_WC_REM_ACCESS_ERR, 4);
	one(FAB_ALL_ACCESS, FAB_ALL_ACCESS, URNIC_WR_RDMA_WRITE_WITH_IMM, 0, 0x04, 100,
	    URNIC_WC_REM_ACCESS_ERR, 5);
}

static void test_address_outside_region(void)
{
	/* Just below, just past the end, far away. */
	one(FAB_ALL_ACCESS, FAB_ALL_ACCESS, URNIC_WR_RDMA_WRITE, -8, 0, 16, URNIC_WC_REM_ACCESS_ERR,
	    10);
	one(FAB_ALL_ACCESS, FAB_ALL_ACCESS, URNIC_WR_RDMA_WRITE, PAGE, 0, 1,
	    URNIC_WC_REM_ACCESS_ERR, 11);
	one(FAB_ALL_ACCESS, FAB_ALL_ACCESS, URNIC_WR_RDMA_READ, -1, 0, 1, URNIC_WC_REM_ACCESS_ERR,
	    12);
	one(FAB_ALL_ACCESS, FAB_ALL_ACCESS, URNIC_WR_ATOMIC_CMP_AND_SWP, PAGE, 0, 8,
	    URNIC_WC_REM_ACCESS_ERR, 13);
	one(FAB_ALL_ACCESS, FAB_ALL_ACCESS, URNIC_WR_RDMA_WRITE, -(int64_t)(1ull << 40), 0, 16,
	    URNIC_WC_REM_ACCESS_ERR, 14);
}

/* Starts inside, ends outside: the whole WRITE is checked at its first packet (IBTA
 * 9.7.5.1.7), so not even the packets that fit are written. */
static void test_length_beyond_region(void)
{
	one(FAB_ALL_ACCESS, FAB_ALL_ACCESS, URNIC_WR_RDMA_WRITE, PAGE - 1000, 0, 1001,
	    URNIC_WC_REM_ACCESS_ERR, 20);
	one(FAB_ALL_ACCESS, FAB_ALL_ACCESS, URNIC_WR_RDMA_WRITE, 0, 0, PAGE + 1,
	    URNIC_WC_REM_ACCESS_ERR, 21);
	one(FAB_ALL_ACCESS, FAB_ALL_ACCESS, URNIC_WR_RDMA_READ, PAGE - 100, 0, 200,
	    URNIC_WC_REM_ACCESS_ERR, 22);
	one(FAB_ALL_ACCESS, FAB_ALL_ACCESS, URNIC_WR_RDMA_WRITE_WITH_IMM, PAGE - 10, 0, 20,
	    URNIC_WC_REM_ACCESS_ERR, 23);
}

static void test_region_without_the_right(void)
{
	const uint32_t all = FAB_ALL_ACCESS;

	one(all & ~(uint32_t)URNIC_ACCESS_REMOTE_WRITE, all, URNIC_WR_RDMA_WRITE, 0, 0, 100,
	    URNIC_WC_REM_ACCESS_ERR, 30);
	one(all & ~(uint32_t)URNIC_ACCESS_REMOTE_WRITE, all, URNIC_WR_RDMA_WRITE_WITH_IMM, 0, 0,
	    100, URNIC_WC_REM_ACCESS_ERR, 31);
	one(all & ~(uint32_t)URNIC_ACCESS_REMOTE_READ, all, URNIC_WR_RDMA_READ, 0, 0, 100,
	    URNIC_WC_REM_ACCESS_ERR, 32);
	one(all & ~(uint32_t)URNIC_ACCESS_REMOTE_ATOMIC, all, URNIC_WR_ATOMIC_FETCH_AND_ADD, 0, 0,
	    8, URNIC_WC_REM_ACCESS_ERR, 33);
	one(all & ~(uint32_t)URNIC_ACCESS_REMOTE_ATOMIC, all, URNIC_WR_ATOMIC_CMP_AND_SWP, 0, 0, 8,
	    URNIC_WC_REM_ACCESS_ERR, 34);
	/* Local-only region. */
	one(URNIC_ACCESS_LOCAL_WRITE, all, URNIC_WR_RDMA_READ, 0, 0, 100, URNIC_WC_REM_ACCESS_ERR,
	    35);
}

/* A region of another protection domain than the QP's. */
static void test_region_of_other_pd(void)
{
	struct env v;

	env_open(&v, FAB_ALL_ACCESS, FAB_ALL_ACCESS, 256, 40);
	fab_dereg(v.p.f, 1, v.rmr);
	v.rmr = fab_reg(v.p.f, 1, &v.other_pd, v.rbuf + PAGE, PAGE, FAB_ALL_ACCESS);
	expect_failure(&v, URNIC_WR_RDMA_WRITE, v.rmr->iova, v.rmr->key, 64,
		       URNIC_WC_REM_ACCESS_ERR);
	env_close(&v);
}

/* A deregistered region's key no longer works, even though its slot exists. */
static void test_deregistered_region(void)
{
	struct env v;
	uint32_t old_key;
	uint64_t old_iova;

	env_open(&v, FAB_ALL_ACCESS, FAB_ALL_ACCESS, 256, 41);
	old_key = v.rmr->key;
	old_iova = v.rmr->iova;
	fab_dereg(v.p.f, 1, v.rmr);
	/* The slot is reused by a new region at the same place: the old key still fails. */
	v.rmr = fab_reg(v.p.f, 1, &v.p.pd[1], v.rbuf + PAGE, PAGE, FAB_ALL_ACCESS);
	CHECK(v.rmr->key != old_key);
	expect_failure(&v, URNIC_WR_RDMA_WRITE, old_iova, old_key, 64, URNIC_WC_REM_ACCESS_ERR);
	env_close(&v);
}

/* The QP does not grant the operation: NAK invalid request (rxe check_op_valid). */
static void test_qp_without_the_access_flag(void)
{
	const uint32_t all = FAB_ALL_ACCESS;

	one(all, all & ~(uint32_t)URNIC_ACCESS_REMOTE_WRITE, URNIC_WR_RDMA_WRITE, 0, 0, 100,
	    URNIC_WC_REM_INV_REQ_ERR, 50);
	one(all, all & ~(uint32_t)URNIC_ACCESS_REMOTE_READ, URNIC_WR_RDMA_READ, 0, 0, 100,
	    URNIC_WC_REM_INV_REQ_ERR, 51);
	one(all, all & ~(uint32_t)URNIC_ACCESS_REMOTE_ATOMIC, URNIC_WR_ATOMIC_FETCH_AND_ADD, 0, 0,
	    8, URNIC_WC_REM_INV_REQ_ERR, 52);
	one(all, URNIC_ACCESS_LOCAL_WRITE, URNIC_WR_RDMA_WRITE_WITH_IMM, 0, 0, 100,
	    URNIC_WC_REM_INV_REQ_ERR, 53);
}

/* The requester refuses a misaligned atomic itself (local check), so the packet is
 * made misaligned on the wire: the responder answers NAK invalid request (IBTA 9.4.5). */
static void misalign(uint8_t *buf, uint32_t len, void *arg)
{
	uint64_t va = 0;

	(void)len;
	(void)arg;
	for (int i = 0; i < 8; i++) /* AtomicETH VA, right after the BTH */
		va = va << 8 | buf[12 + i];
	va += 4;
	for (int i = 7; i >= 0; i--) {
		buf[12 + i] = (uint8_t)va;
		va >>= 8;
	}
}

static void test_misaligned_atomic_on_the_wire(void)
{
	struct env v;

	env_open(&v, FAB_ALL_ACCESS, FAB_ALL_ACCESS, 256, 60);
	fab_add_rule(v.p.f, &(struct fab_rule){ .match = FAB_M_OPCODE,
						.opcode = URNIC_OP_RC_COMPARE_SWAP,
						.count = 1,
						.action = FAB_MUTATE,
						.mutate = misalign });
	expect_failure(&v, URNIC_WR_ATOMIC_CMP_AND_SWP, v.rmr->iova + 64, v.rmr->key, 8,
		       URNIC_WC_REM_INV_REQ_ERR);
	CHECK_EQ(v.p.f->rules[0].hits, 1);
	env_close(&v);
}

/* A good WRITE, then a bad one: the first completes, the second fails, the third is
 * flushed; only the first one's bytes changed. */
static void test_error_after_success_keeps_order(void)
{
	struct env v;
	struct urnic_cqe sc[3];

	env_open(&v, FAB_ALL_ACCESS, FAB_ALL_ACCESS, 256, 70);
	post(&v, 1, URNIC_WR_RDMA_WRITE, v.rmr->iova + 100, v.rmr->key, 300);
	post(&v, 2, URNIC_WR_RDMA_WRITE, v.rmr->iova + 100, v.rmr->key + 1, 300);
	post(&v, 3, URNIC_WR_RDMA_WRITE, v.rmr->iova + 500, v.rmr->key, 300);
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 3);
	fabric_settle(v.p.f);
	CHECK_CQE(sc[0], 1, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 300);
	CHECK_EQ(sc[1].wr_id, 2);
	CHECK_EQ(sc[1].status, URNIC_WC_REM_ACCESS_ERR);
	CHECK_EQ(sc[2].wr_id, 3);
	CHECK_EQ(sc[2].status, URNIC_WC_WR_FLUSH_ERR);
	CHECK(memcmp(v.rbuf + PAGE + 100, v.la.p + 8, 300) == 0);
	memcpy(v.before + PAGE + 100, v.la.p + 8, 300);
	CHECK(memcmp(v.rbuf, v.before, GUARDED) == 0);
	/* The responder's QP is in error too: what it is asked to send is flushed. */
	CHECK_EQ(fab_post_send(v.p.b, &(struct fab_send_wr){ .wr_id = 9, .opcode = URNIC_WR_SEND }),
		 0);
	fabric_settle(v.p.f);
	CHECK_EQ(fab_poll(&v.p.b->scq, sc, 1), 1);
	CHECK_EQ(sc[0].status, URNIC_WC_WR_FLUSH_ERR);
	env_close(&v);
}

int main(void)
{
	RUN(test_bad_rkey);
	RUN(test_address_outside_region);
	RUN(test_length_beyond_region);
	RUN(test_region_without_the_right);
	RUN(test_region_of_other_pd);
	RUN(test_deregistered_region);
	RUN(test_qp_without_the_access_flag);
	RUN(test_misaligned_atomic_on_the_wire);
	RUN(test_error_after_success_keeps_order);
	return 0;
}
