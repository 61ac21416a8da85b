/* SPDX-License-Identifier: MIT */
/*
 * dm.h - device memory (ibv_alloc_dm(3)): memory the device owns, as a NIC's on-chip
 * memory, allocated from a budget of lim.max_dm_size bytes per device and process
 * (limits.def, reported as ibv_device_attr_ex.max_dm_size). The application reaches it
 * only by copying, in 4-byte granules as the one hardware implementation (mlx5) requires,
 * and by RDMA through zero-based regions registered on it (ibv_reg_dm_mr): local SGEs
 * and peers name offsets into the region, never the device's addresses. An allocation
 * has a handle by which another context of the device imports it (ibv_import_dm(3)).
 * Context: application threads. The pool has its own lock, which the engine never takes:
 * a process that forks with a context open (pyverbs does) allocates in the child.
 */
#ifndef URNIC_DEV_DM_H
#define URNIC_DEV_DM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mem/mr.h"

struct urnic_dev;

/* ibv_memcpy_to_dm / from_dm: offsets and lengths in granules of this many bytes. */
#define URNIC_DM_GRANULE 4u
/* The largest alignment ibv_alloc_dm_attr.log_align_req may ask for: a page. */
#define URNIC_DM_MAX_LOG_ALIGN 12u

/* One allocation. Held by its ibv_dm and by each import of it (refs); freed, and its
 * bytes returned to the budget, when the last lets go. */
struct urnic_dm {
	struct urnic_dm *next; /* the pool's list, by which handles are found */
	uint8_t *mem;
	uint64_t length;
	uint32_t handle;
	uint32_t refs;
	uint32_t regions; /* registered on it: ibv_free_dm refuses with EBUSY while any */
	bool freed;	  /* ibv_free_dm ran: its handle imports nothing any more */
};

/* A device's allocations and the bytes they take from lim.max_dm_size. */
struct urnic_dm_pool {
	pthread_mutex_t lock;
	struct urnic_dm *all;
	uint64_t used_bytes;
	uint32_t next_handle;
};

void urnic_dev_dm_init(struct urnic_dm_pool *p);

/* Frees every allocation left when the device's last context closes, as the kernel
 * frees a closed context's objects. */
void urnic_dev_dm_release_all(struct urnic_dm_pool *p);

/* Allocates length zeroed bytes aligned to 2^log_align (at least 64). Returns 0 and the
 * allocation in *out; -EINVAL for a length of 0 or beyond lim.max_dm_size or an alignment
 * beyond URNIC_DM_MAX_LOG_ALIGN; -ENOMEM when the budget has not that much left. */
int urnic_dev_dm_alloc(struct urnic_dev *d, uint64_t length, uint32_t log_align,
		       struct urnic_dm **out);

/* ibv_free_dm: -EBUSY (nothing done) while regions are registered on it; else the handle
 * imports nothing from now on and the caller's reference is dropped. */
int urnic_dev_dm_free(struct urnic_dev *d, struct urnic_dm *dm);

/* ibv_import_dm: a new reference to the allocation with this handle, or -ENOENT. */
int urnic_dev_dm_import(struct urnic_dev *d, uint32_t handle, struct urnic_dm **out);

/* ibv_unimport_dm: drops an import's reference. */
void urnic_dev_dm_unimport(struct urnic_dev *d, struct urnic_dm *dm);

/* Copies length bytes between host and offset of the allocation. Returns 0, -EFAULT when
 * the range is not inside it, -EINVAL when offset or length is not a multiple of
 * URNIC_DM_GRANULE (mlx5's answers). No lock: concurrent copies and RDMA into the same
 * bytes are the application's to order, as with any registered memory. */
int urnic_dev_dm_copy_to(struct urnic_dm *dm, uint64_t offset, const void *host, size_t length);
int urnic_dev_dm_copy_from(void *host, struct urnic_dm *dm, uint64_t offset, size_t length);

/* Registers [offset, offset + length) of the allocation as a zero-based region of pd:
 * IOVA 0 is its first byte. Returns 0 and the region in *out, -EINVAL when the range is
 * not inside the allocation or it was freed, -ENOMEM when the key table is full. */
int urnic_dev_dm_mr_register(struct urnic_dev *d, struct urnic_pd *pd, struct urnic_dm *dm,
			     uint64_t offset, uint64_t length, uint32_t access, uint32_t key_rand,
			     struct urnic_mr **out);

/* Deregisters a region urnic_dev_dm_mr_register made: 0 (the allocation may be freed
 * once no other region is on it), or -EBUSY (nothing done) while windows are bound. */
int urnic_dev_dm_mr_deregister(struct urnic_dev *d, struct urnic_dm *dm, struct urnic_mr *mr);

static inline uint32_t urnic_dev_dm_handle(const struct urnic_dm *dm)
{
	return dm->handle;
}

#endif
