/* SPDX-License-Identifier: MIT */
/*
 * mw.h - memory windows: allocation, binding and invalidation.
 *
 * IBTA 10.6.7: a window is a remotely accessible range of a region, with its own R_Key
 * and rights. Type 1 windows are bound by ibv_bind_mw (through a BIND_MW work request,
 * as rdma-core does for rxe) and usable by every QP of the PD; type 2B windows are bound
 * by a BIND_MW work request, usable only through that QP (o10-37.2.36) and invalidated
 * by LOCAL_INV or a peer's SEND with Invalidate. Windows sit in the region table (mr.h):
 * their keys are (index << 16) | 16 bits, of which the low 8 are the consumer key the
 * binder chooses (IBTA 10.6.7.3: the "key" part of the R_Key), as rxe keeps it.
 * Checks follow rxe_mw.c, each with the IBTA rule it cites. Type 2A and zero-based type 1
 * windows are out of scope (rxe offers neither).
 * Context: under the device lock, like the region table.
 */
#ifndef URNIC_MEM_MW_H
#define URNIC_MEM_MW_H

#include <stdint.h>

#include "mem/mr.h"

/* Rights a window may carry (rxe RXE_ACCESS_SUPPORTED_MW, what urnic implements). */
#define URNIC_MW_ACCESS_SUPPORTED                                                                  \
	(URNIC_ACCESS_REMOTE_WRITE | URNIC_ACCESS_REMOTE_READ | URNIC_ACCESS_REMOTE_ATOMIC |       \
	 URNIC_ACCESS_ZERO_BASED | URNIC_ACCESS_FLUSH_GLOBAL | URNIC_ACCESS_FLUSH_PERSISTENT)

/* Rights a bind may ask for: the supported ones and local write, which a window cannot
 * grant (IBTA 10.6.7: a window grants remote access; local access goes through a
 * region's L_Key) and is dropped, as rxe (RXE_ACCESS_SUPPORTED_MW) and the hardware
 * providers take it. rdma-core's tests bind with REMOTE_WRITE | LOCAL_WRITE. */
#define URNIC_MW_ACCESS_ACCEPTED (URNIC_MW_ACCESS_SUPPORTED | URNIC_ACCESS_LOCAL_WRITE)

/* Allocates a FREE window of kind URNIC_KEY_MW1 or URNIC_KEY_MW2 in pd. key_rand: 32
 * random bits (mr.h). Returns 0, -EINVAL (kind) or -ENOMEM (table full). */
int urnic_mw_alloc(struct urnic_mr_table *t, struct urnic_pd *pd, enum urnic_key_kind kind,
		   uint32_t key_rand, struct urnic_mr **out);

/* Frees a window, bound or not; its region is released (rxe_dealloc_mw does the same). */
void urnic_mw_dealloc(struct urnic_mr_table *t, struct urnic_mr *mw);

/* A bind request (the BIND_MW work request's fields). */
struct urnic_mw_bind {
	uint32_t mw_rkey;  /* the window, by its R_Key when the WR was posted */
	uint32_t new_rkey; /* its low 8 bits become the window's consumer key */
	uint32_t mr_lkey;  /* the region (length 0: a type 1 window is unbound) */
	uint64_t addr;
	uint64_t length;
	uint32_t access; /* the window's rights, enum urnic_access */
};

/* Why a bind failed: the work request completes with IBV_WC_MW_BIND_ERR either way. */
enum urnic_mw_bind_check {
	URNIC_MW_BIND_OK = 0,
	URNIC_MW_BIND_BAD_WINDOW,     /* no window with that R_Key */
	URNIC_MW_BIND_BAD_REGION,     /* no region with that L_Key */
	URNIC_MW_BIND_BAD_ACCESS,     /* rights not accepted, or zero-based type 1 */
	URNIC_MW_BIND_BAD_STATE,      /* type 2 window already bound (o10-37.2.30) */
	URNIC_MW_BIND_BAD_PD,	      /* window, region and QP not in one PD (C10-72) */
	URNIC_MW_BIND_NO_REGION,      /* type 2 without a region or length (o10-37.2.40) */
	URNIC_MW_BIND_NOT_BINDABLE,   /* region without MW_BIND, zero-based (C10-73) */
	URNIC_MW_BIND_NO_LOCAL_WRITE, /* writable window on a read-only region (C10-74) */
	URNIC_MW_BIND_OUT_OF_RANGE,   /* window not inside the region (C10-75) */
};

/* Validates, then binds; nothing changes unless the answer is URNIC_MW_BIND_OK. qp_pd
 * and qpn: the QP the bind was posted to. */
enum urnic_mw_bind_check urnic_mw_bind(struct urnic_mr_table *t, const struct urnic_pd *qp_pd,
				       uint32_t qpn, const struct urnic_mw_bind *b);

/*
 * The QP qpn goes away: every type 2B window bound through it is invalidated (freed,
 * its R_Key validating nothing). Such a window serves that QP only (o10-37.2.36), and
 * its binding names the QP by number, which a later QP may carry. The specification
 * lets a CI refuse to destroy the QP instead; verbs programs expect ibv_destroy_qp to
 * succeed, and rxe lets it.
 */
void urnic_mw_release_qp(struct urnic_mr_table *t, uint32_t qpn);

const char *urnic_mw_bind_check_name(enum urnic_mw_bind_check c);

/*
 * Invalidates the window named by rkey for QP qpn of PD pd (LOCAL_INV, or a SEND with
 * Invalidate received, IBTA 10.6.7.2.4 / o10-37.2.26): it must be a bound type 2B window
 * of that PD bound through that QP. Region keys cannot be invalidated (no fast-register
 * regions; rxe refuses user regions the same way). Returns URNIC_MR_OK or why not.
 */
enum urnic_mr_check urnic_mw_invalidate(struct urnic_mr_table *t, const struct urnic_pd *pd,
					uint32_t qpn, uint32_t rkey);

#endif
