/* SPDX-License-Identifier: MIT */
/*
 * mr.c - the memory region table: registration, keys and checked resolution.
 *
 * IBTA 10.6 (memory regions); order of checks as rxe_mr.c: a key
 * names a live region, the region belongs to the QP's PD, the range lies inside it, and
 * it grants the right. Nothing here touches the registered memory itself. Window keys
 * (mw.c) share the table and resolve through urnic_mr_resolve_remote only.
 */
#include "mem/mr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define KEY_INDEX(key) ((key) >> 16)

int urnic_mr_table_init(struct urnic_mr_table *t, uint32_t nslots)
{
	memset(t, 0, sizeof(*t));
	t->slots = calloc(nslots, sizeof(*t->slots));
	if (!t->slots)
		return -ENOMEM;
	t->nslots = nslots;
	return 0;
}

void urnic_mr_table_fini(struct urnic_mr_table *t)
{
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

struct urnic_mr *urnic_mr_slot_take(struct urnic_mr_table *t, uint32_t key_rand)
{
	/* The search starts at a random slot, so the index half of a key says nothing
	 * about the keys before or after it (slot 0 never: it would make keys below
	 * 65536, which applications use as "no key"). */
	uint32_t start = (key_rand >> 16) % (t->nslots - 1);
	uint16_t key_bits = (uint16_t)key_rand;

	for (uint32_t n = 0; n < t->nslots - 1; n++) {
		uint32_t idx = 1 + (start + n) % (t->nslots - 1);
		struct urnic_mr *mr = &t->slots[idx];
		uint32_t gen;

		if (mr->live)
			continue;
		gen = mr->gen + 1;
		/* A reused slot must not hand out the key its previous owner had. */
		if (((mr->key & 0xffff) == key_bits) && mr->key)
			key_bits++;
		memset(mr, 0, sizeof(*mr));
		mr->gen = gen;
		mr->key = idx << 16 | key_bits;
		mr->live = true;
		t->nlive++;
		return mr;
	}
	return NULL;
}

int urnic_mr_register(struct urnic_mr_table *t, struct urnic_pd *pd, void *host, uint64_t iova,
		      uint64_t length, uint32_t access, uint32_t key_rand, struct urnic_mr **out)
{
	struct urnic_mr *mr = urnic_mr_slot_take(t, key_rand);

	if (!mr)
		return -ENOMEM;
	mr->kind = URNIC_KEY_MR;
	mr->pd = pd;
	mr->host = host;
	mr->iova = iova;
	mr->length = length;
	mr->access = access;
	*out = mr;
	return 0;
}

int urnic_mr_deregister(struct urnic_mr_table *t, struct urnic_mr *mr)
{
	if (mr->nwindows)
		return -EBUSY;
	mr->live = false;
	mr->host = NULL;
	mr->gen++;
	t->nlive--;
	return 0;
}

int urnic_mr_reregister(struct urnic_mr *mr, uint32_t what, struct urnic_pd *pd, void *host,
			uint64_t length, uint32_t access)
{
	/* A bound window's range and rights were checked against the region as it is
	 * (IBTA 10.6.7.2.6, as for deregistration). */
	if (mr->nwindows)
		return -EBUSY;
	mr->gen++;
	if (what & URNIC_MR_REREG_TRANSLATION) {
		mr->host = host;
		mr->iova = (uintptr_t)host;
		mr->length = length;
	}
	if (what & URNIC_MR_REREG_PD)
		mr->pd = pd;
	if (what & URNIC_MR_REREG_ACCESS)
		mr->access = access;
	return 0;
}

/* Key, PD, bounds, rights of a region (rxe_mr.c order). */
static enum urnic_mr_check region_check(const struct urnic_mr *mr, const struct urnic_pd *pd,
					uint64_t iova, uint64_t len, uint32_t need)
{
	if (mr->pd != pd)
		return URNIC_MR_BAD_PD;
	/* Written so that no sum can wrap: iova >= start and len <= end - iova. */
	if (iova < mr->iova || iova - mr->iova > mr->length || len > mr->length - (iova - mr->iova))
		return URNIC_MR_OUT_OF_RANGE;
	if ((mr->access & need) != need)
		return URNIC_MR_NO_RIGHT;
	return URNIC_MR_OK;
}

static const struct urnic_mr *lookup(const struct urnic_mr_table *t, uint32_t key)
{
	uint32_t idx = KEY_INDEX(key);
	const struct urnic_mr *mr;

	if (idx == 0 || idx >= t->nslots)
		return NULL;
	mr = &t->slots[idx];
	return mr->live && mr->key == key ? mr : NULL;
}

const struct urnic_mr *urnic_mr_find(const struct urnic_mr_table *t, uint32_t key)
{
	return lookup(t, key);
}

struct urnic_mr *urnic_mr_pull_hold(struct urnic_mr_table *t, uint32_t key, uint32_t *gen)
{
	struct urnic_mr *mr = (struct urnic_mr *)lookup(t, key);

	if (!mr || mr->kind != URNIC_KEY_MR)
		return NULL;
	mr->pulls++;
	*gen = mr->gen;
	return mr;
}

void urnic_mr_pull_release(struct urnic_mr_table *t, uint32_t key, uint32_t gen)
{
	struct urnic_mr *mr = (struct urnic_mr *)lookup(t, key);

	if (mr && mr->gen == gen && mr->pulls)
		mr->pulls--;
}

/* Where iova of region mr is. In integers: an implicit region's host is NULL, and
 * arithmetic on a null pointer is undefined even where the sum is the address meant. */
static void region_at(const struct urnic_mr *mr, uint64_t iova, struct urnic_mr_at *at)
{
	at->host = (uint8_t *)((uintptr_t)mr->host + (uintptr_t)(iova - mr->iova));
	at->odp = mr->access & URNIC_ACCESS_ON_DEMAND;
}

enum urnic_mr_check urnic_mr_resolve(const struct urnic_mr_table *t, const struct urnic_pd *pd,
				     uint32_t key, uint64_t iova, uint64_t len, uint32_t need,
				     struct urnic_mr_at *at)
{
	const struct urnic_mr *mr = lookup(t, key);
	enum urnic_mr_check c;

	if (!mr || mr->kind != URNIC_KEY_MR)
		return URNIC_MR_BAD_KEY;
	at->gen = mr->gen;
	c = region_check(mr, pd, iova, len, need);
	if (c == URNIC_MR_OK)
		region_at(mr, iova, at);
	return c;
}

/*
 * A window key: IBTA 10.6.7.2 / C10-78..80 and rxe_lookup_mw() order: bound (state
 * valid), same PD, for a type 2B window the QP it was bound through (o10-37.2.36), the
 * window's rights, then the range inside the window. rxe checks the range against the
 * region only; the window is the narrower bound IBTA asks for.
 */
static enum urnic_mr_check window_check(const struct urnic_mr *mw, const struct urnic_pd *pd,
					uint32_t qpn, uint64_t *iova, uint64_t len, uint32_t need,
					bool ranged)
{
	if (mw->mw_state != URNIC_MW_VALID || !mw->mw_mr)
		return URNIC_MR_BAD_KEY;
	if (mw->pd != pd)
		return URNIC_MR_BAD_PD;
	if (mw->kind == URNIC_KEY_MW2 && mw->mw_qpn != qpn)
		return URNIC_MR_BAD_QP;
	if ((mw->access & need) != need)
		return URNIC_MR_NO_RIGHT;
	if (!ranged)
		return URNIC_MR_OK;
	/* Zero-based: the VA is an offset into the window (IBTA 10.6.3.6). */
	if (mw->access & URNIC_ACCESS_ZERO_BASED) {
		if (*iova > mw->length || len > mw->length - *iova)
			return URNIC_MR_OUT_OF_RANGE;
		*iova += mw->iova;
	} else if (*iova < mw->iova || *iova - mw->iova > mw->length ||
		   len > mw->length - (*iova - mw->iova)) {
		return URNIC_MR_OUT_OF_RANGE;
	}
	return URNIC_MR_OK;
}

enum urnic_mr_check urnic_mr_resolve_remote(const struct urnic_mr_table *t,
					    const struct urnic_pd *pd, uint32_t qpn, uint32_t key,
					    uint64_t iova, uint64_t len, uint32_t need,
					    struct urnic_mr_at *at)
{
	const struct urnic_mr *mr = lookup(t, key);
	enum urnic_mr_check c;

	if (!mr)
		return URNIC_MR_BAD_KEY;
	at->gen = mr->gen;
	if (mr->kind == URNIC_KEY_MR) {
		c = region_check(mr, pd, iova, len, need);
		if (c == URNIC_MR_OK)
			region_at(mr, iova, at);
		return c;
	}
	c = window_check(mr, pd, qpn, &iova, len, need, true);
	if (c != URNIC_MR_OK)
		return c;
	/* The binding put the window inside its region (C10-75) and the region cannot go
	 * while the window is bound: only its memory is left to name. */
	region_at(mr->mw_mr, iova, at);
	return URNIC_MR_OK;
}

const struct urnic_mr *urnic_mr_remote_region(const struct urnic_mr_table *t,
					      const struct urnic_pd *pd, uint32_t qpn, uint32_t key,
					      uint32_t need)
{
	const struct urnic_mr *mr = lookup(t, key);
	uint64_t iova = 0;

	if (!mr)
		return NULL;
	if (mr->kind == URNIC_KEY_MR)
		return region_check(mr, pd, mr->iova, 0, need) == URNIC_MR_OK ? mr : NULL;
	if (window_check(mr, pd, qpn, &iova, 0, need, false) != URNIC_MR_OK)
		return NULL;
	return mr->mw_mr;
}

const char *urnic_mr_check_name(enum urnic_mr_check c)
{
	static const char *const names[] = {
		[URNIC_MR_OK] = "ok",
		[URNIC_MR_BAD_KEY] = "bad key",
		[URNIC_MR_BAD_PD] = "wrong protection domain",
		[URNIC_MR_OUT_OF_RANGE] = "out of range",
		[URNIC_MR_NO_RIGHT] = "missing access right",
		[URNIC_MR_BAD_QP] = "window bound through another QP",
	};

	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "?";
}
