/* SPDX-License-Identifier: MIT */
/*
 * dm.c - device memory (dm.h): the budget, the allocations and their handles, the
 * checked copies, and the zero-based regions registered on an allocation.
 *
 * ibv_alloc_dm(3): "ibv_free_dm() may fail if any other resources (such as an MR) is
 * still associated with the DM" (the kernel's usecnt: EBUSY). The bytes stay until the
 * last reference (the allocation's own and its imports') goes, so an import never reads
 * freed memory; the budget counts them until then.
 */
#include "dev/dm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dev/device.h"
#include "dev/verbs_mem.h"

/* Hardware on-chip memory is at least cache-line aligned; so are atomics' 8 bytes. */
#define MIN_ALIGN 64u

void urnic_dev_dm_init(struct urnic_dm_pool *p)
{
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	p->next_handle = 1;
}

/* Unlinks and frees one allocation. Context: the pool lock held. */
static void release(struct urnic_dm_pool *p, struct urnic_dm *dm)
{
	for (struct urnic_dm **pp = &p->all; *pp; pp = &(*pp)->next) {
		if (*pp == dm) {
			*pp = dm->next;
			break;
		}
	}
	p->used_bytes -= dm->length;
	free(dm->mem);
	free(dm);
}

/* Drops one reference. Context: the pool lock held. */
static void put(struct urnic_dm_pool *p, struct urnic_dm *dm)
{
	if (--dm->refs == 0)
		release(p, dm);
}

void urnic_dev_dm_release_all(struct urnic_dm_pool *p)
{
	pthread_mutex_lock(&p->lock);
	while (p->all)
		release(p, p->all);
	pthread_mutex_unlock(&p->lock);
}

/* A handle no live allocation has: handles are 32 bits and may wrap. */
static uint32_t new_handle(struct urnic_dm_pool *p)
{
	for (;;) {
		uint32_t h = p->next_handle++;
		const struct urnic_dm *dm = p->all;

		while (dm && dm->handle != h)
			dm = dm->next;
		if (h && !dm)
			return h;
	}
}

int urnic_dev_dm_alloc(struct urnic_dev *d, uint64_t length, uint32_t log_align,
		       struct urnic_dm **out)
{
	struct urnic_dm_pool *p = &d->dm;
	size_t align = MIN_ALIGN;
	struct urnic_dm *dm;
	void *mem;

	/* As mlx5_alloc_dm: more than the device has is EINVAL, more than is left ENOMEM. */
	if (length == 0 || length > d->lim.max_dm_size || log_align > URNIC_DM_MAX_LOG_ALIGN)
		return -EINVAL;
	if ((1u << log_align) > align)
		align = 1u << log_align;
	dm = calloc(1, sizeof(*dm));
	if (!dm)
		return -ENOMEM;
	if (posix_memalign(&mem, align, (size_t)length)) {
		free(dm);
		return -ENOMEM;
	}
	memset(mem, 0, (size_t)length); /* nothing of an earlier allocation shows through */
	pthread_mutex_lock(&p->lock);
	if (length > d->lim.max_dm_size - p->used_bytes) {
		pthread_mutex_unlock(&p->lock);
		free(mem);
		free(dm);
		return -ENOMEM;
	}
	p->used_bytes += length;
	dm->mem = mem;
	dm->length = length;
	dm->refs = 1;
	dm->handle = new_handle(p);
	dm->next = p->all;
	p->all = dm;
	pthread_mutex_unlock(&p->lock);
	*out = dm;
	return 0;
}

int urnic_dev_dm_free(struct urnic_dev *d, struct urnic_dm *dm)
{
	struct urnic_dm_pool *p = &d->dm;

	pthread_mutex_lock(&p->lock);
	if (dm->regions) {
		pthread_mutex_unlock(&p->lock);
		return -EBUSY;
	}
	dm->freed = true;
	put(p, dm);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

int urnic_dev_dm_import(struct urnic_dev *d, uint32_t handle, struct urnic_dm **out)
{
	struct urnic_dm_pool *p = &d->dm;
	struct urnic_dm *dm;

	pthread_mutex_lock(&p->lock);
	for (dm = p->all; dm; dm = dm->next)
		if (dm->handle == handle && !dm->freed)
			break;
	if (dm)
		dm->refs++;
	pthread_mutex_unlock(&p->lock);
	if (!dm)
		return -ENOENT; /* as the kernel's lookup of an unknown handle */
	*out = dm;
	return 0;
}

void urnic_dev_dm_unimport(struct urnic_dev *d, struct urnic_dm *dm)
{
	pthread_mutex_lock(&d->dm.lock);
	put(&d->dm, dm);
	pthread_mutex_unlock(&d->dm.lock);
}

/* The range check of a copy, mlx5_access_dm's order: inside, then granules. Written so
 * that no sum can wrap. */
static int copy_check(const struct urnic_dm *dm, uint64_t offset, size_t length)
{
	if (offset > dm->length || length > dm->length - offset)
		return -EFAULT;
	if (offset % URNIC_DM_GRANULE || length % URNIC_DM_GRANULE)
		return -EINVAL;
	return 0;
}

int urnic_dev_dm_copy_to(struct urnic_dm *dm, uint64_t offset, const void *host, size_t length)
{
	int ret = copy_check(dm, offset, length);

	if (!ret && length)
		memcpy(dm->mem + offset, host, length);
	return ret;
}

int urnic_dev_dm_copy_from(void *host, struct urnic_dm *dm, uint64_t offset, size_t length)
{
	int ret = copy_check(dm, offset, length);

	if (!ret && length)
		memcpy(host, dm->mem + offset, length);
	return ret;
}

int urnic_dev_dm_mr_register(struct urnic_dev *d, struct urnic_pd *pd, struct urnic_dm *dm,
			     uint64_t offset, uint64_t length, uint32_t access, uint32_t key_rand,
			     struct urnic_mr **out)
{
	struct urnic_dm_pool *p = &d->dm;
	int ret;

	/* The kernel's UVERBS_METHOD_DM_MR_REG: the range lies inside the allocation. */
	if (offset > dm->length || length > dm->length - offset)
		return -EINVAL;
	/* Counted first, so that a concurrent ibv_free_dm sees the region being made. */
	pthread_mutex_lock(&p->lock);
	if (dm->freed) {
		pthread_mutex_unlock(&p->lock);
		return -EINVAL;
	}
	dm->regions++;
	pthread_mutex_unlock(&p->lock);
	ret = urnic_dev_mr_register(d, pd, dm->mem + offset, 0, length, access, key_rand, out);
	if (ret) {
		pthread_mutex_lock(&p->lock);
		dm->regions--;
		pthread_mutex_unlock(&p->lock);
	}
	return ret;
}

int urnic_dev_dm_mr_deregister(struct urnic_dev *d, struct urnic_dm *dm, struct urnic_mr *mr)
{
	int ret = urnic_dev_mr_deregister(d, mr);

	if (ret)
		return ret;
	pthread_mutex_lock(&d->dm.lock);
	dm->regions--;
	pthread_mutex_unlock(&d->dm.lock);
	return 0;
}
