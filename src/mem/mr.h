/* SPDX-License-Identifier: MIT */
/*
 * mr.h - protection domains and the memory region table.
 *
 * IBTA 10.6: a memory region is a registered virtual range with access rights, named
 * locally by an L_Key and remotely by an R_Key. A key is (table index << 16) | 16 bits,
 * both halves from the caller's 32 random bits (house style: randomness is an
 * argument; src/verbs draws them from the kernel's CSPRNG): the index is the first free
 * slot from a random one, so keys are not sequential and a peer that knows one key
 * knows nothing of the next; a window's key keeps 24 unpredictable bits beside the 8
 * its binder chooses (mw.h). A key freed and reused by a new region does not validate
 * the old one. Lookups check key, PD, bounds and rights before any byte is touched
 * (order key -> PD -> bounds -> rights, as rxe_mr.c).
 * Memory windows (IBTA 10.6.7, mw.h) live in the same table: MR and MW keys share one
 * key space, as in rxe, and a key names either a region or a window (slot kind).
 * An on-demand region (URNIC_ACCESS_ON_DEMAND) is resolved like any other; its bytes
 * move only through the table's odp calls (odp.h). An implicit one is registered at host
 * NULL, IOVA 0, for 2^64 - 1 bytes: its IOVAs are the process's addresses.
 * Context: the table is owned by a device; mutations and lookups run under the device lock.
 */
#ifndef URNIC_MEM_MR_H
#define URNIC_MEM_MR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Access rights, numerically equal to enum ibv_access_flags (checked in src/verbs). */
enum urnic_access {
	URNIC_ACCESS_LOCAL_WRITE = 1,
	URNIC_ACCESS_REMOTE_WRITE = 2,
	URNIC_ACCESS_REMOTE_READ = 4,
	URNIC_ACCESS_REMOTE_ATOMIC = 8,
	URNIC_ACCESS_MW_BIND = 16,
	URNIC_ACCESS_ZERO_BASED = 32,
	URNIC_ACCESS_ON_DEMAND = 64,
	URNIC_ACCESS_HUGETLB = 128,
	/* IBTA 1.5 (Annex A19): FLUSH placement rights, rdma-core's IBV_ACCESS_FLUSH_*. */
	URNIC_ACCESS_FLUSH_GLOBAL = 1 << 8,
	URNIC_ACCESS_FLUSH_PERSISTENT = 1 << 9,
	URNIC_ACCESS_RELAXED_ORDERING = 1 << 20,
};

/* What a key names. The window kinds are numerically enum ibv_mw_type. */
enum urnic_key_kind {
	URNIC_KEY_MR = 0,
	URNIC_KEY_MW1 = 1, /* type 1 window: bound by ibv_bind_mw, usable by any QP of its PD */
	URNIC_KEY_MW2 = 2, /* type 2B window: bound by a BIND_MW WR, usable by that QP only */
};

/* Window states (IBTA 10.6.7.2; rxe's FREE / VALID). */
enum urnic_mw_state {
	URNIC_MW_FREE = 0, /* allocated, not bound: its R_Key validates nothing */
	URNIC_MW_VALID,	   /* bound to a region */
};

struct urnic_pd {
	uint32_t handle;
};

/* One slot of the key table: a region, or a window (kind != URNIC_KEY_MR), for which
 * iova/length/access are the bound range and rights and host is unused. */
struct urnic_mr {
	struct urnic_pd *pd;
	uint8_t *host; /* where iova maps to in this process */
	uint64_t iova; /* the address peers and SGEs name */
	uint64_t length;
	uint32_t access; /* enum urnic_access */
	uint32_t key;	 /* lkey == rkey; a window's R_Key */
	bool live;
	uint8_t kind;		/* enum urnic_key_kind */
	uint8_t mw_state;	/* windows: enum urnic_mw_state */
	uint32_t mw_qpn;	/* type 2 window: the QP it was bound through */
	struct urnic_mr *mw_mr; /* valid window: the region it is bound to */
	uint32_t nwindows;	/* region: windows bound to it */
	/* Bumped by every change of what the key grants (deregistration, reregistration,
	 * a window's bind, invalidation or deallocation): a message that resolved the key
	 * under one grant is not finished under another (urnic_mr_resolve_remote). */
	uint32_t gen;
	/* Region: reads of it that a requester's process on this host was offered and has
	 * not said are done (direct placement, wire/addr.h); deregistration and
	 * reregistration wait for them (dev). */
	uint32_t pulls;
};

/* Outcome of a key lookup, mapped by callers to NAK codes or completion statuses. */
enum urnic_mr_check {
	URNIC_MR_OK = 0,
	URNIC_MR_BAD_KEY, /* no live region with this key */
	URNIC_MR_BAD_PD,  /* region of another protection domain */
	URNIC_MR_OUT_OF_RANGE,
	URNIC_MR_NO_RIGHT, /* region lacks the access right */
	URNIC_MR_BAD_QP,   /* type 2 window bound through another QP (IBTA o10-37.2.36) */
};

struct urnic_odp_ops;

struct urnic_mr_table {
	struct urnic_mr *slots;
	uint32_t nslots;
	uint32_t nlive;
	uint32_t mw2_bound; /* type 2B windows bound (urnic_mw_release_qp) */
	/* How on-demand regions are reached (odp.h), set by the driver; NULL: never. */
	const struct urnic_odp_ops *odp;
};

/* Where a resolved range lies: its process address, whether its region is on demand
 * (its bytes then move only through the table's odp calls), and the generation of the
 * key's slot (struct urnic_mr.gen), set whenever the key names a live slot. */
struct urnic_mr_at {
	uint8_t *host;
	uint32_t gen;
	bool odp;
};

int urnic_mr_table_init(struct urnic_mr_table *t, uint32_t nslots);
void urnic_mr_table_fini(struct urnic_mr_table *t);

/* Registers [iova, iova+length) at host address host. key_rand: 32 random bits, from
 * which the key is made. Returns 0 and the new region in *out, or -ENOMEM when the
 * table is full. */
int urnic_mr_register(struct urnic_mr_table *t, struct urnic_pd *pd, void *host, uint64_t iova,
		      uint64_t length, uint32_t access, uint32_t key_rand, struct urnic_mr **out);
/* Returns 0, or -EBUSY (nothing done) while windows are bound to the region (rxe refuses
 * the same, IBTA 10.6.7.2.6: a region with bound windows stays registered). */
int urnic_mr_deregister(struct urnic_mr_table *t, struct urnic_mr *mr);

/* What urnic_mr_reregister changes, numerically enum ibv_rereg_mr_flags. */
enum urnic_mr_rereg {
	URNIC_MR_REREG_TRANSLATION = 1, /* host, length; iova becomes host (ibv_reg_mr's) */
	URNIC_MR_REREG_PD = 2,
	URNIC_MR_REREG_ACCESS = 4,
};
/* Changes a region in place, its key kept (as rxe_rereg_user_mr): 0, or -EBUSY (nothing
 * done) while windows are bound to it. Arguments not named by `what` are ignored. */
int urnic_mr_reregister(struct urnic_mr *mr, uint32_t what, struct urnic_pd *pd, void *host,
			uint64_t length, uint32_t access);
/* The free slot search shared by regions and windows: a slot and its new key made of
 * key_rand (32 random bits), or NULL. */
struct urnic_mr *urnic_mr_slot_take(struct urnic_mr_table *t, uint32_t key_rand);

/*
 * Resolves an L_Key: key/[iova, iova+len) for the given rights. On URNIC_MR_OK, *at says
 * where iova is. len 0 is always in range of a valid key. Window keys are R_Keys only and
 * never resolve here (IBTA 10.6.7: a window grants remote access).
 */
enum urnic_mr_check urnic_mr_resolve(const struct urnic_mr_table *t, const struct urnic_pd *pd,
				     uint32_t key, uint64_t iova, uint64_t len, uint32_t need,
				     struct urnic_mr_at *at);

/*
 * Resolves an R_Key received by QP qpn of PD pd: a region's key as urnic_mr_resolve, or a
 * bound window's (mw.c): window state, PD, the binding QP for type 2, range inside the
 * window (offset from its start when bound zero-based) and the window's rights; the
 * memory is its region's. at->gen is set even when a check fails: a multi-packet message
 * records it with its first packet and refuses the rest when it has moved.
 */
enum urnic_mr_check urnic_mr_resolve_remote(const struct urnic_mr_table *t,
					    const struct urnic_pd *pd, uint32_t qpn, uint32_t key,
					    uint64_t iova, uint64_t len, uint32_t need,
					    struct urnic_mr_at *at);

/* Direct placement (wire/addr.h): a region's memory offered to a requester's process
 * for it to read (pulls). Hold returns the region key names, or NULL when it names no
 * live region (a window's key, for one: not offered), with *gen its grant; release
 * undoes one hold, unless the grant changed since (its holds went with it). */
struct urnic_mr *urnic_mr_pull_hold(struct urnic_mr_table *t, uint32_t key, uint32_t *gen);
void urnic_mr_pull_release(struct urnic_mr_table *t, uint32_t key, uint32_t gen);

/* The live slot (region or window) a key names, or NULL; no other check. */
const struct urnic_mr *urnic_mr_find(const struct urnic_mr_table *t, uint32_t key);

/* The region an R_Key gives remote access to (the window's region for a window key),
 * after the same checks as urnic_mr_resolve_remote with len 0; NULL if they fail. */
const struct urnic_mr *urnic_mr_remote_region(const struct urnic_mr_table *t,
					      const struct urnic_pd *pd, uint32_t qpn, uint32_t key,
					      uint32_t need);

const char *urnic_mr_check_name(enum urnic_mr_check c);

#endif
