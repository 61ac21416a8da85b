/* SPDX-License-Identifier: MIT */
/*
 * mr.h - protection domains and the memory region table.
 *
 * IBTA 10.6: a memory region is a registered virtual range with access rights, named
 * locally by an L_Key and remotely by an R_Key. Keys are (table index << 16) | 16 bits
 * taken from the caller's random source (house style: randomness is an argument), so a
 * key freed and reused by a new region does not validate the old one and a peer that
 * knows one key guesses another region's with odds of 1 in 65536 per try (rxe keeps
 * only 8 such bits). Lookups check key, PD, bounds and rights before any byte is
 * touched (order key -> PD -> bounds -> rights, as rxe_mr.c).
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
	URNIC_ACCESS_RELAXED_ORDERING = 1 << 20,
};

struct urnic_pd {
	uint32_t handle;
};

struct urnic_mr {
	struct urnic_pd *pd;
	uint8_t *host;  /* where iova maps to in this process */
	uint64_t iova;  /* the address peers and SGEs name */
	uint64_t length;
	uint32_t access; /* enum urnic_access */
	uint32_t key;    /* lkey == rkey */
	bool live;
};

/* Outcome of a key lookup, mapped by callers to NAK codes or completion statuses. */
enum urnic_mr_check {
	URNIC_MR_OK = 0,
	URNIC_MR_BAD_KEY,    /* no live region with this key */
	URNIC_MR_BAD_PD,     /* region of another protection domain */
	URNIC_MR_OUT_OF_RANGE,
	URNIC_MR_NO_RIGHT,   /* region lacks the access right */
};

struct urnic_mr_table {
	struct urnic_mr *slots;
	uint32_t nslots;
	uint32_t nlive;
	uint32_t next_free_hint;
};

int urnic_mr_table_init(struct urnic_mr_table *t, uint32_t nslots);
void urnic_mr_table_fini(struct urnic_mr_table *t);

/* Registers [iova, iova+length) at host address host. key_bits: 16 random bits.
 * Returns 0 and the new region in *out, or -ENOMEM when the table is full. */
int urnic_mr_register(struct urnic_mr_table *t, struct urnic_pd *pd, void *host, uint64_t iova,
		      uint64_t length, uint32_t access, uint16_t key_bits, struct urnic_mr **out);
void urnic_mr_deregister(struct urnic_mr_table *t, struct urnic_mr *mr);

/*
 * Resolves key/[iova, iova+len) for the given rights. On URNIC_MR_OK, *host is the
 * process address of iova. len 0 is always in range of a valid key.
 */
enum urnic_mr_check urnic_mr_resolve(const struct urnic_mr_table *t, const struct urnic_pd *pd,
				     uint32_t key, uint64_t iova, uint64_t len, uint32_t need,
				     uint8_t **host);

const char *urnic_mr_check_name(enum urnic_mr_check c);

#endif
