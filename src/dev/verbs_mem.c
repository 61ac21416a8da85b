/* SPDX-License-Identifier: MIT */
/*
 * verbs_mem.c - the key table operations of the verbs layer (verbs_mem.h): each one
 * the mem/ call under the device lock, which the engine holds while it resolves keys
 * (mem/mr.h: mutations and lookups run under the device lock).
 */
#include "dev/verbs_mem.h"

#include "engine/core.h"
#include "mem/mw.h"

#include <time.h>

int urnic_dev_mr_register(struct urnic_dev *d, struct urnic_pd *pd, void *addr, uint64_t iova,
			  uint64_t length, uint32_t access, uint32_t key_rand,
			  struct urnic_mr **out)
{
	int ret;

	pthread_mutex_lock(&d->lock);
	ret = urnic_mr_register(&d->eng->mrs, pd, addr, iova, length, access, key_rand, out);
	pthread_mutex_unlock(&d->lock);
	return ret;
}

/*
 * Direct placement (wire/addr.h): a requester's process on this host may be copying from
 * the region, as an offer of ours allowed, until its word that it is done (PULLED)
 * comes through a pass: the engine thread runs it while we wait without the lock, as
 * an RNIC's deregistration waits for its DMA. A word that does not come within
 * URNIC_DIRECT_PULL_WAIT_NS (its process stopped, or the word was lost) is given up on,
 * counted. Context: the device lock held.
 */
static void wait_pulls(struct urnic_dev *d, struct urnic_mr *mr)
{
	struct timespec ts = { 0, 20000 };
	uint64_t until;

	if (!mr->pulls)
		return;
	urnic_count(d->eng, URNIC_CTR_direct_pull_wait);
	until = urnic_dev_now_ns() + URNIC_DIRECT_PULL_WAIT_NS;
	while (mr->pulls && urnic_dev_now_ns() < until) {
		pthread_mutex_unlock(&d->lock);
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&d->lock);
	}
	if (mr->pulls) {
		urnic_count(d->eng, URNIC_CTR_direct_pull_abandoned);
		mr->pulls = 0;
	}
}

int urnic_dev_mr_reregister(struct urnic_dev *d, struct urnic_mr *mr, uint32_t what,
			    struct urnic_pd *pd, void *addr, uint64_t length, uint32_t access)
{
	int ret;

	pthread_mutex_lock(&d->lock);
	wait_pulls(d, mr);
	ret = urnic_mr_reregister(mr, what, pd, addr, length, access);
	pthread_mutex_unlock(&d->lock);
	return ret;
}

int urnic_dev_mr_deregister(struct urnic_dev *d, struct urnic_mr *mr)
{
	int ret;

	pthread_mutex_lock(&d->lock);
	wait_pulls(d, mr);
	ret = urnic_mr_deregister(&d->eng->mrs, mr);
	pthread_mutex_unlock(&d->lock);
	return ret;
}

int urnic_dev_mw_alloc(struct urnic_dev *d, struct urnic_pd *pd, enum urnic_key_kind kind,
		       uint32_t key_rand, struct urnic_mr **out)
{
	int ret;

	pthread_mutex_lock(&d->lock);
	ret = urnic_mw_alloc(&d->eng->mrs, pd, kind, key_rand, out);
	pthread_mutex_unlock(&d->lock);
	return ret;
}

void urnic_dev_mw_dealloc(struct urnic_dev *d, struct urnic_mr *mw)
{
	pthread_mutex_lock(&d->lock);
	urnic_mw_dealloc(&d->eng->mrs, mw);
	pthread_mutex_unlock(&d->lock);
}
