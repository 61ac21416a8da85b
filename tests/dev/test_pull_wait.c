/* SPDX-License-Identifier: MIT */
/*
 * test_pull_wait.c - deregistering or reregistering a region that an offer to pull lets
 * another process read (wire/addr.h, dev/verbs_mem.c): ibv_dereg_mr and ibv_rereg_mr
 * wait until the requester says it is done (here: the hold released by another thread
 * 100 ms later, as the engine does when PULLED comes), counted in direct_pull_wait; a
 * word that never comes is given up on after URNIC_DIRECT_PULL_WAIT_NS, counted in
 * direct_pull_abandoned. A region without a hold goes at once. One device, 127.0.42.9,
 * through the verbs, no packet sent.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "dev_counter.h"
#include "dev/device.h"
#include "verbs/verbs.h"

static struct urnic_dev *dev;

struct release {
	uint32_t key, gen;
};

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* An offer's hold on mr, as the responder takes it (responder.c, offer_tail). */
static struct release hold(struct ibv_mr *mr)
{
	struct release r = { mr->rkey, 0 };

	pthread_mutex_lock(&dev->lock);
	CHECK(urnic_mr_pull_hold(&dev->eng->mrs, mr->rkey, &r.gen) != NULL);
	pthread_mutex_unlock(&dev->lock);
	return r;
}

static void *release_later(void *arg)
{
	struct release *r = arg;

	usleep(100000);
	pthread_mutex_lock(&dev->lock);
	urnic_mr_pull_release(&dev->eng->mrs, r->key, r->gen);
	pthread_mutex_unlock(&dev->lock);
	return NULL;
}

/* Registers buf, holds it as an offer does, has another thread let go 100 ms later,
 * and deregisters it (or reregisters it, then deregisters it): the milliseconds the
 * first of those took. */
static uint64_t released_later(struct ibv_pd *pd, char *buf, size_t len, bool rereg)
{
	struct ibv_mr *mr =
		ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	struct release r;
	uint64_t t0, waited;
	pthread_t t;

	CHECK(mr != NULL);
	r = hold(mr);
	CHECK_EQ(pthread_create(&t, NULL, release_later, &r), 0);
	t0 = now_ms();
	if (rereg)
		CHECK_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				      IBV_ACCESS_LOCAL_WRITE),
			 0);
	else
		CHECK_EQ(ibv_dereg_mr(mr), 0);
	waited = now_ms() - t0;
	pthread_join(t, NULL);
	if (rereg)
		CHECK_EQ(ibv_dereg_mr(mr), 0);
	return waited;
}

int main(void)
{
	static char buf[65536];
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint64_t t0, waited;

	CHECK(list && list[0]);
	ctx = ibv_open_device(list[0]);
	CHECK(ctx != NULL);
	dev = urnic_ctx_dev(ctx);
	pd = ibv_alloc_pd(ctx);
	CHECK(pd != NULL);

	/* No hold: at once, nothing counted. */
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	CHECK(mr != NULL);
	t0 = now_ms();
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK(now_ms() - t0 < 50);
	CHECK_EQ(dev_counter(dev, URNIC_CTR_direct_pull_wait), 0);

	/* Deregistration waits for the word; so does reregistration. */
	waited = released_later(pd, buf, sizeof(buf), false);
	printf("dereg waited %llu ms\n", (unsigned long long)waited);
	CHECK(waited >= 90 && waited < 900);
	CHECK_EQ(dev_counter(dev, URNIC_CTR_direct_pull_wait), 1);
	CHECK_EQ(dev_counter(dev, URNIC_CTR_direct_pull_abandoned), 0);
	waited = released_later(pd, buf, sizeof(buf), true);
	printf("rereg waited %llu ms\n", (unsigned long long)waited);
	CHECK(waited >= 90 && waited < 900);
	CHECK_EQ(dev_counter(dev, URNIC_CTR_direct_pull_wait), 2);

	/* A word that never comes: given up on after the wait, counted. */
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	CHECK(mr != NULL);
	hold(mr);
	t0 = now_ms();
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	waited = now_ms() - t0;
	printf("dereg gave up after %llu ms\n", (unsigned long long)waited);
	CHECK(waited >= URNIC_DIRECT_PULL_WAIT_NS / 1000000 - 10);
	CHECK_EQ(dev_counter(dev, URNIC_CTR_direct_pull_wait), 3);
	CHECK_EQ(dev_counter(dev, URNIC_CTR_direct_pull_abandoned), 1);

	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	ibv_free_device_list(list);
	printf("ok\n");
	return 0;
}
