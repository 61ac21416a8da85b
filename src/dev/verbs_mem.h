/* SPDX-License-Identifier: MIT */
/*
 * verbs_mem.h - the device's key table as the verbs layer uses it: registering,
 * reregistering and deregistering memory regions, allocating and freeing memory
 * windows (ibv_reg_mr(3), ibv_rereg_mr(3), ibv_dereg_mr(3), ibv_alloc_mw(3),
 * ibv_dealloc_mw(3)).
 *
 * The table (mem/mr.h, mem/mw.h) belongs to the device's engine, which resolves keys
 * under the device lock: every change takes it, so once a call returns no packet sees
 * the old grant. A window is bound by a work request (the post path), not here. The
 * plain data verbs translates to and from the ABI comes with this header: struct
 * urnic_pd, the access rights, key kinds and reregistration flags (mem/mr.h). Keys are
 * made of the caller's 32 random bits (mem/mr.h: randomness is an argument).
 * Context: application threads; each call takes the device lock unless it says not.
 */
#ifndef URNIC_DEV_VERBS_MEM_H
#define URNIC_DEV_VERBS_MEM_H

#include <stdint.h>

#include "dev/device.h"
#include "mem/mr.h"

/* Registers [iova, iova + length) at addr in pd with rights access (enum urnic_access).
 * Returns 0 and the region in *out, or -ENOMEM when the key table is full. */
int urnic_dev_mr_register(struct urnic_dev *d, struct urnic_pd *pd, void *addr, uint64_t iova,
			  uint64_t length, uint32_t access, uint32_t key_rand,
			  struct urnic_mr **out);

/* Changes what `what` (enum urnic_mr_rereg) names, the key kept. Returns 0, or -EBUSY
 * (nothing done) while windows are bound to the region. */
int urnic_dev_mr_reregister(struct urnic_dev *d, struct urnic_mr *mr, uint32_t what,
			    struct urnic_pd *pd, void *addr, uint64_t length, uint32_t access);

/* Returns 0 (the engine never touches the memory again), or -EBUSY (nothing done)
 * while windows are bound to the region. */
int urnic_dev_mr_deregister(struct urnic_dev *d, struct urnic_mr *mr);

/* Allocates a free window of kind URNIC_KEY_MW1 or URNIC_KEY_MW2 in pd. Returns 0 and
 * the window in *out, -EINVAL (kind) or -ENOMEM (table full). */
int urnic_dev_mw_alloc(struct urnic_dev *d, struct urnic_pd *pd, enum urnic_key_kind kind,
		       uint32_t key_rand, struct urnic_mr **out);

/* Frees a window, bound or not: from then on its R_Key validates nothing. */
void urnic_dev_mw_dealloc(struct urnic_dev *d, struct urnic_mr *mw);

/* A region's key (L_Key and R_Key alike) or a window's R_Key as allocated; fixed for
 * the slot's life. No lock. */
static inline uint32_t urnic_dev_mr_key(const struct urnic_mr *mr)
{
	return mr->key;
}

/* A region's rights (enum urnic_access): changed only by urnic_dev_mr_reregister,
 * which the application does not race with its own reading. No lock. */
static inline uint32_t urnic_dev_mr_access(const struct urnic_mr *mr)
{
	return mr->access;
}

#endif
