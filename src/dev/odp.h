/* SPDX-License-Identifier: MIT */
/*
 * odp.h - on-demand paging (IBV_ACCESS_ON_DEMAND) for a device: the fault-safe calls
 * through which its engine reaches on-demand regions (mem/odp.h), what the kernel lets
 * them do, and prefetch (ibv_advise_mr(3)).
 *
 * Copies go through process_vm_readv(2)/process_vm_writev(2) on the process itself: the
 * kernel faults in what is not present and answers EFAULT where a plain access would
 * raise SIGSEGV (unmapped, no access, read-only under a write). An atomic's target is
 * made present and writable first with madvise(MADV_POPULATE_WRITE) (Linux 5.14).
 * Prefetch populates with MADV_POPULATE_READ/WRITE (or touches each page through
 * process_vm_readv before 5.14); without IBV_ADVISE_MR_FLAG_FLUSH it only hints
 * (MADV_WILLNEED), as a deferred prefetch reports no fault.
 */
#ifndef URNIC_DEV_ODP_H
#define URNIC_DEV_ODP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dev/device.h"
#include "mem/mr.h"
#include "mem/odp.h"

/* The calls the engine's table uses for on-demand regions, or NULL when this process
 * cannot make them (process_vm_readv filtered, e.g. by a seccomp profile): then there is
 * no on-demand paging. atomic_ready is NULL before Linux 5.14. Probed once; no lock. */
const struct urnic_odp_ops *urnic_dev_odp_ops(void);

/* Prefetch advice, numerically enum ibv_advise_mr_advice. */
enum urnic_dev_prefetch {
	URNIC_DEV_PREFETCH_READ = 0,
	URNIC_DEV_PREFETCH_WRITE = 1,
	URNIC_DEV_PREFETCH_NO_FAULT = 2,
};

/* Whether lkey names an on-demand region of pd covering [addr, addr + len) that the
 * advice may prefetch (mlx5's get_prefetchable_mr and its range check): 0 and the
 * range's process address in *host, -ENOENT (no region with this key, or not on demand),
 * -EINVAL (a window's key), -EPERM (another PD's, or PREFETCH_WRITE to a region without
 * a right that writes) or -EFAULT (out of the region). Takes the device lock. */
int urnic_dev_odp_check(struct urnic_dev *d, const struct urnic_pd *pd, uint32_t lkey,
			uint64_t addr, uint32_t len, enum urnic_dev_prefetch advice, void **host);

/* Makes [host, host + len) present as the advice asks. sync (IBV_ADVISE_MR_FLAG_FLUSH):
 * the pages are populated before it returns: 0, or -EFAULT when part of the range is
 * not mapped with the access. Otherwise a hint, 0 always. PREFETCH_NO_FAULT does
 * nothing: the engine uses the process's own page tables, which have what is present. */
int urnic_dev_odp_prefetch(void *host, size_t len, enum urnic_dev_prefetch advice, bool sync);

#endif
