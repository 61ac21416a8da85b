/* SPDX-License-Identifier: MIT */
/*
 * odp.c - on-demand paging for a device (odp.h): process_vm_readv/writev copies for the
 * engine, MADV_POPULATE_WRITE before an atomic, prefetch for ibv_advise_mr(3).
 *
 * The copies name the calling thread, not the process: process_vm_* finds the memory
 * through the task the id names, and a process whose main thread has exited keeps its
 * memory only in its other threads. The id is kept per thread and forgotten in a forked
 * child, whose thread ids are new.
 */
#include "dev/odp.h"

#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum {
	TOUCH_PAGES = 256, /* pages one fallback prefetch call touches */
};

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static bool can_copy;	  /* process_vm_readv/writev on ourselves work */
static bool can_populate; /* MADV_POPULATE_READ/WRITE exist */
static uintptr_t page_bytes;
static _Thread_local pid_t self_tid;

static void forget_tid(void)
{
	self_tid = 0;
}

static pid_t self(void)
{
	if (!self_tid)
		self_tid = gettid();
	return self_tid;
}

/* Moves len bytes between local and remote, our own memory either way: 0, or -EFAULT
 * when the kernel moved fewer (it stops at the first page it cannot reach). errno is
 * kept: the engine may run in an application thread, inside any verb. */
static int vm_copy(void *local, void *remote, size_t len, bool to_remote)
{
	struct iovec l = { local, len }, r = { remote, len };
	int saved = errno;
	ssize_t n;

	if (to_remote)
		n = process_vm_writev(self(), &l, 1, &r, 1, 0);
	else
		n = process_vm_readv(self(), &l, 1, &r, 1, 0);
	errno = saved;
	return n >= 0 && (size_t)n == len ? 0 : -EFAULT;
}

static int odp_read(void *dst, const void *src, size_t len)
{
	return vm_copy(dst, (void *)(uintptr_t)src, len, false);
}

static int odp_write(void *dst, const void *src, size_t len)
{
	return vm_copy((void *)(uintptr_t)src, dst, len, true);
}

static uintptr_t page_of(const void *p)
{
	return (uintptr_t)p & ~(page_bytes - 1);
}

/* The page holding the 8 aligned bytes at p (they never straddle two), populated
 * writable: a private page's copy-on-write is broken, a missing one faulted in. */
static int odp_atomic_ready(void *p)
{
	int saved = errno, ret;

	ret = madvise((void *)page_of(p), page_bytes, MADV_POPULATE_WRITE);
	errno = saved;
	return ret ? -EFAULT : 0;
}

static const struct urnic_odp_ops ops_full = {
	.read = odp_read,
	.write = odp_write,
	.atomic_ready = odp_atomic_ready,
};

static const struct urnic_odp_ops ops_no_atomic = {
	.read = odp_read,
	.write = odp_write,
};

/* What this process may do, tried on a word of our own stack. */
static void probe(void)
{
	uint64_t word = 1, copy = 0;

	page_bytes = (uintptr_t)sysconf(_SC_PAGESIZE);
	pthread_atfork(NULL, NULL, forget_tid);
	can_copy = vm_copy(&copy, &word, sizeof(word), false) == 0 && copy == word &&
		   vm_copy(&copy, &word, sizeof(word), true) == 0;
	can_populate = madvise((void *)page_of(&word), page_bytes, MADV_POPULATE_WRITE) == 0;
}

const struct urnic_odp_ops *urnic_dev_odp_ops(void)
{
	pthread_once(&probe_once, probe);
	if (!can_copy)
		return NULL;
	return can_populate ? &ops_full : &ops_no_atomic;
}

/* ib_access_writable(): the rights under which the kernel maps a region writable. */
static bool region_writes(uint32_t access)
{
	return access & (URNIC_ACCESS_LOCAL_WRITE | URNIC_ACCESS_REMOTE_WRITE |
			 URNIC_ACCESS_REMOTE_ATOMIC | URNIC_ACCESS_MW_BIND);
}

int urnic_dev_odp_check(struct urnic_dev *d, const struct urnic_pd *pd, uint32_t lkey,
			uint64_t addr, uint32_t len, enum urnic_dev_prefetch advice, void **host)
{
	const struct urnic_mr *mr;
	struct urnic_mr_at at;
	int ret = 0;

	pthread_mutex_lock(&d->lock);
	mr = urnic_mr_find(&d->eng->mrs, lkey);
	if (!mr || (mr->kind == URNIC_KEY_MR && !(mr->access & URNIC_ACCESS_ON_DEMAND)))
		ret = -ENOENT;
	else if (mr->kind != URNIC_KEY_MR)
		ret = -EINVAL;
	else if (mr->pd != pd || (advice == URNIC_DEV_PREFETCH_WRITE && !region_writes(mr->access)))
		ret = -EPERM;
	else if (urnic_mr_resolve(&d->eng->mrs, pd, lkey, addr, len, 0, &at) != URNIC_MR_OK)
		ret = -EFAULT;
	else
		*host = at.host;
	pthread_mutex_unlock(&d->lock);
	return ret;
}

/* Before MADV_POPULATE_*: one byte of every page of [lo, hi) read through
 * process_vm_readv, TOUCH_PAGES at a time, faults them in (readable: a write later
 * breaks copy-on-write itself). -EFAULT at the first page that is not mapped readable. */
static int touch(uintptr_t lo, uintptr_t hi)
{
	struct iovec remote[TOUCH_PAGES];
	uint8_t sink[TOUCH_PAGES];

	while (lo < hi) {
		struct iovec local = { sink, 0 };
		size_t n = 0;

		for (; n < TOUCH_PAGES && lo < hi; n++, lo += page_bytes)
			remote[n] = (struct iovec){ (void *)lo, 1 };
		local.iov_len = n;
		if (process_vm_readv(self(), &local, 1, remote, n, 0) != (ssize_t)n)
			return -EFAULT;
	}
	return 0;
}

int urnic_dev_odp_prefetch(void *host, size_t len, enum urnic_dev_prefetch advice, bool sync)
{
	uintptr_t lo = (uintptr_t)host, last = lo + (len - 1), hi;

	pthread_once(&probe_once, probe);
	if (advice == URNIC_DEV_PREFETCH_NO_FAULT || len == 0)
		return 0;
	if (last < lo || last > UINTPTR_MAX - page_bytes)
		return sync ? -EFAULT : 0; /* past the last page: nothing is mapped there */
	lo = page_of(host);
	hi = page_of((void *)last) + page_bytes;
	if (!sync) {
		(void)madvise((void *)lo, hi - lo, MADV_WILLNEED);
		return 0;
	}
	if (!can_populate)
		return touch(lo, hi);
	/* ENOMEM: a gap; EINVAL: no access or read-only under a write; EFAULT: SIGBUS
	 * territory (madvise(2)). All of them are memory the range cannot be read or
	 * written in. */
	return madvise((void *)lo, hi - lo,
		       advice == URNIC_DEV_PREFETCH_WRITE ? MADV_POPULATE_WRITE
							  : MADV_POPULATE_READ)
		       ? -EFAULT
		       : 0;
}
