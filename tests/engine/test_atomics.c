/* SPDX-License-Identifier: MIT */
/*
 * test_atomics.c - the RC atomics end to end on a clean fabric (IBTA 9.4.5).
 *
 * CMP_AND_SWP hit and miss (the original value comes back either way, the swap lands
 * only on a hit), FETCH_AND_ADD wrapping modulo 2^64, and 64 atomics in flight against
 * one word, each executed exactly once and in order. Not here: misaligned, wrong-length
 * or unauthorised atomics (test_local_errors.c, test_remote_access.c), duplicated ones
 * (test_duplicates.c), ATOMIC_WRITE (test_a19.c).
 */
#include <string.h>

#include "ops_common.h"

static uint64_t get64(const uint8_t *p)
{
	uint64_t x;

	memcpy(&x, p, 8);
	return x;
}

static void put64(uint8_t *p, uint64_t x)
{
	memcpy(p, &x, 8);
}

static void atomic_op(struct env *v, uint64_t wr_id, uint32_t op, uint64_t remote_off,
		      uint64_t compare_add, uint64_t swap, uint64_t local_off)
{
	struct urnic_cqe sc;

	CHECK_EQ(fab_post_send(v->p.a,
			       &(struct fab_send_wr){ .wr_id = wr_id,
						      .opcode = op,
						      .remote_addr = v->ra.mr->iova + remote_off,
						      .rkey = v->ra.mr->key,
						      .compare_add = compare_add,
						      .swap = swap,
						      .num_sge = 1,
						      .sge = { fab_sge(v->la.mr, local_off, 8) } }),
		 0);
	fab_wait_cqes(v->p.f, &v->p.a->scq, &sc, 1);
	CHECK_CQE(sc, wr_id, URNIC_WC_SUCCESS,
		  op == URNIC_WR_ATOMIC_CMP_AND_SWP ? URNIC_WC_COMP_SWAP : URNIC_WC_FETCH_ADD, 8);
}

static void test_atomic_cmp_swap_hit_and_miss(void)
{
	struct env v;

	env_open(&v, 1024);
	put64(v.ra.p + 64, 0x1111222233334444ull);
	/* Hit: compare equals, the swap value lands, the original comes back. */
	atomic_op(&v, 1, URNIC_WR_ATOMIC_CMP_AND_SWP, 64, 0x1111222233334444ull,
		  0x5555666677778888ull, 0);
	CHECK_EQ(get64(v.ra.p + 64), 0x5555666677778888ull);
	CHECK_EQ(get64(v.la.p), 0x1111222233334444ull);
	/* Miss: memory unchanged, the current value comes back. */
	atomic_op(&v, 2, URNIC_WR_ATOMIC_CMP_AND_SWP, 64, 0x1111222233334444ull, 0x9ull, 8);
	CHECK_EQ(get64(v.ra.p + 64), 0x5555666677778888ull);
	CHECK_EQ(get64(v.la.p + 8), 0x5555666677778888ull);
	fabric_settle(v.p.f);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_atomic_executed), 2);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_ack_rcvd), 2);
	env_close(&v);
}

static void test_atomic_fetch_add(void)
{
	struct env v;

	env_open(&v, 1024);
	put64(v.ra.p + 128, 1000);
	atomic_op(&v, 3, URNIC_WR_ATOMIC_FETCH_AND_ADD, 128, 234, 0, 16);
	CHECK_EQ(get64(v.ra.p + 128), 1234);
	CHECK_EQ(get64(v.la.p + 16), 1000);
	/* Wraps modulo 2^64 like any atomic add. */
	atomic_op(&v, 4, URNIC_WR_ATOMIC_FETCH_AND_ADD, 128, UINT64_MAX, 0, 24);
	CHECK_EQ(get64(v.ra.p + 128), 1233);
	CHECK_EQ(get64(v.la.p + 24), 1234);
	fabric_settle(v.p.f);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_atomic_executed), 2);
	env_close(&v);
}

/* Many atomics in flight at once, against one word: each executes exactly once. */
static void test_atomic_pipeline(void)
{
	struct env v;
	struct urnic_cqe sc[64];
	uint64_t seen = 0;

	env_open(&v, 1024);
	put64(v.ra.p, 0);
	for (int i = 0; i < 64; i++)
		CHECK_EQ(fab_post_send(v.p.a,
				       &(struct fab_send_wr){
					       .wr_id = (uint64_t)i,
					       .opcode = URNIC_WR_ATOMIC_FETCH_AND_ADD,
					       .remote_addr = v.ra.mr->iova,
					       .rkey = v.ra.mr->key,
					       .compare_add = 1ull << (i % 8),
					       .num_sge = 1,
					       .sge = { fab_sge(v.la.mr, 8 * (uint64_t)i, 8) } }),
			 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 64);
	fabric_settle(v.p.f);
	for (int i = 0; i < 64; i++) {
		CHECK_CQE(sc[i], (uint64_t)i, URNIC_WC_SUCCESS, URNIC_WC_FETCH_ADD, 8);
		/* In order: each saw the sum of all adds before it. */
		CHECK_EQ(get64(v.la.p + 8 * i), seen);
		seen += 1ull << (i % 8);
	}
	CHECK_EQ(get64(v.ra.p), seen);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_atomic_executed), 64);
	env_close(&v);
}

int main(void)
{
	RUN(test_atomic_cmp_swap_hit_and_miss);
	RUN(test_atomic_fetch_add);
	RUN(test_atomic_pipeline);
	return 0;
}
