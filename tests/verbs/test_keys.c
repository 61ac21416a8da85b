/* SPDX-License-Identifier: MIT */
/*
 * test_keys.c - memory keys a peer cannot predict (docs/security.md, "Remote peer").
 *
 * An R_Key is all a peer needs to reach a region: one it can guess from the keys it
 * was given is a region it can reach. urnic makes a key of 32 bits from getrandom(2),
 * the table index among them starting at a random slot (src/mem/mr.h); a window keeps
 * 24 such bits beside the 8 its binder chooses (IBTA 10.6.7.3). Checked here through
 * the verbs, as a peer sees them: keys of many regions and windows are distinct, their
 * indexes not sequential, and every bit that should be random is set in about half of
 * them (512 keys: a fair bit lands outside 30..70 % with odds below 1e-18).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "check.h"
#include "verbs_open.h"

enum { NKEYS = 512 };

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static char buf[4096];

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Distinct; indexes (bits 31..16) seldom one after the other in the order handed out;
 * each bit of `mask` set in 30..70 % of the keys. */
static void check_unpredictable(const uint32_t *keys, uint32_t mask)
{
	uint32_t sorted[NKEYS];
	int consecutive = 0;

	for (int i = 1; i < NKEYS; i++)
		consecutive += (keys[i] >> 16) == (keys[i - 1] >> 16) + 1;
	CHECK(consecutive < NKEYS / 16);
	memcpy(sorted, keys, sizeof(sorted));
	qsort(sorted, NKEYS, sizeof(sorted[0]), cmp_u32);
	for (int i = 1; i < NKEYS; i++)
		CHECK(sorted[i] != sorted[i - 1]);
	for (int b = 0; b < 32; b++) {
		int set = 0;

		if (!(mask >> b & 1))
			continue;
		for (int i = 0; i < NKEYS; i++)
			set += keys[i] >> b & 1;
		if (set < NKEYS * 3 / 10 || set > NKEYS * 7 / 10) {
			fprintf(stderr, "key bit %d set in %d of %d keys\n", b, set, NKEYS);
			CHECK(0);
		}
	}
}

static void region_keys_are_unpredictable(void)
{
	struct ibv_mr *mr[NKEYS];
	uint32_t keys[NKEYS];

	for (int i = 0; i < NKEYS; i++) {
		mr[i] = ibv_reg_mr(pd, buf, sizeof(buf),
				   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		CHECK(mr[i]);
		CHECK_EQ(mr[i]->lkey, mr[i]->rkey);
		keys[i] = mr[i]->rkey;
	}
	check_unpredictable(keys, 0xffffffffu);
	for (int i = 0; i < NKEYS; i++)
		CHECK_EQ(ibv_dereg_mr(mr[i]), 0);
}

/* The low 8 bits of a window's R_Key are the consumer key its binder chooses (rdma-core
 * increments them with each ibv_bind_mw); the other 24 must not be guessable. */
static void window_keys_are_unpredictable(void)
{
	struct ibv_mw *mw[NKEYS];
	uint32_t keys[NKEYS];

	for (int i = 0; i < NKEYS; i++) {
		mw[i] = ibv_alloc_mw(pd, i % 2 ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2);
		CHECK(mw[i]);
		keys[i] = mw[i]->rkey;
	}
	check_unpredictable(keys, 0xffffff00u);
	for (int i = 0; i < NKEYS; i++)
		CHECK_EQ(ibv_dealloc_mw(mw[i]), 0);
}

int main(void)
{
	ctx = verbs_open_first("127.0.5.1");
	pd = ibv_alloc_pd(ctx);
	CHECK(pd);
	RUN(region_keys_are_unpredictable);
	RUN(window_keys_are_unpredictable);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	return 0;
}
