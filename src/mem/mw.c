/* SPDX-License-Identifier: MIT */
/*
 * mw.c - memory windows in the key table: allocate, bind, invalidate, free. See mw.h.
 *
 * Validate, then mutate: every check of a bind or an invalidation runs before the window
 * or its region changes. Nothing here touches the memory a window covers.
 */
#include "mem/mw.h"

#include <errno.h>
#include <string.h>

#define KEY_INDEX(key) ((key) >> 16)
#define CONSUMER_KEY_MASK 0xffu

static struct urnic_mr *lookup(struct urnic_mr_table *t, uint32_t key)
{
	uint32_t idx = KEY_INDEX(key);
	struct urnic_mr *m;

	if (idx == 0 || idx >= t->nslots)
		return NULL;
	m = &t->slots[idx];
	return m->live && m->key == key ? m : NULL;
}

int urnic_mw_alloc(struct urnic_mr_table *t, struct urnic_pd *pd, enum urnic_key_kind kind,
		   uint32_t key_rand, struct urnic_mr **out)
{
	struct urnic_mr *mw;

	if (kind != URNIC_KEY_MW1 && kind != URNIC_KEY_MW2)
		return -EINVAL;
	mw = urnic_mr_slot_take(t, key_rand);
	if (!mw)
		return -ENOMEM;
	mw->kind = (uint8_t)kind;
	mw->pd = pd;
	mw->mw_state = URNIC_MW_FREE;
	*out = mw;
	return 0;
}

/* The window lets go of its region and validates nothing any more; a message that
 * resolved its key before is not finished through it (urnic_mr_resolve_remote). */
static void unbind(struct urnic_mr_table *t, struct urnic_mr *mw)
{
	mw->gen++;
	if (mw->kind == URNIC_KEY_MW2 && mw->mw_state == URNIC_MW_VALID)
		t->mw2_bound--;
	if (mw->mw_mr)
		mw->mw_mr->nwindows--;
	mw->mw_mr = NULL;
	mw->mw_state = URNIC_MW_FREE;
	mw->mw_qpn = 0;
	mw->iova = 0;
	mw->length = 0;
	mw->access = 0;
}

void urnic_mw_dealloc(struct urnic_mr_table *t, struct urnic_mr *mw)
{
	unbind(t, mw);
	mw->live = false;
	t->nlive--;
}

static enum urnic_mw_bind_check check_bind(const struct urnic_mr *mw, const struct urnic_mr *mr,
					   const struct urnic_pd *qp_pd,
					   const struct urnic_mw_bind *b)
{
	if (b->access & ~(uint32_t)URNIC_MW_ACCESS_ACCEPTED)
		return URNIC_MW_BIND_BAD_ACCESS;
	if (mw->kind == URNIC_KEY_MW1) {
		/* o10-36.2.2: a type 1 window is not zero-based. */
		if (b->access & URNIC_ACCESS_ZERO_BASED)
			return URNIC_MW_BIND_BAD_ACCESS;
	} else {
		/* o10-37.2.30: a type 2 window is bound only while free. */
		if (mw->mw_state != URNIC_MW_FREE)
			return URNIC_MW_BIND_BAD_STATE;
		/* C10-72: through a QP of the window's PD. */
		if (mw->pd != qp_pd)
			return URNIC_MW_BIND_BAD_PD;
		/* o10-37.2.40: a type 2 window is freed by invalidation, not a bind of
		 * nothing. */
		if (!mr || b->length == 0)
			return URNIC_MW_BIND_NO_REGION;
	}
	if (!mr)
		return URNIC_MW_BIND_OK; /* type 1 unbind */
	if (mr->pd != mw->pd)
		return URNIC_MW_BIND_BAD_PD; /* ibv_bind_mw(3): EPERM before it gets here */
	/* C10-73: the region allows binding; zero-based regions are not bindable (rxe). */
	if (!(mr->access & URNIC_ACCESS_MW_BIND) || (mr->access & URNIC_ACCESS_ZERO_BASED))
		return URNIC_MW_BIND_NOT_BINDABLE;
	/* C10-74: remote write or atomic through the window needs local write on the
	 * region. */
	if ((b->access & (URNIC_ACCESS_REMOTE_WRITE | URNIC_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & URNIC_ACCESS_LOCAL_WRITE))
		return URNIC_MW_BIND_NO_LOCAL_WRITE;
	/* C10-75: the window lies inside the region (also when it is zero-based: the
	 * address still names where it starts). No sum can wrap. */
	if (b->addr < mr->iova || b->addr - mr->iova > mr->length ||
	    b->length > mr->length - (b->addr - mr->iova))
		return URNIC_MW_BIND_OUT_OF_RANGE;
	return URNIC_MW_BIND_OK;
}

enum urnic_mw_bind_check urnic_mw_bind(struct urnic_mr_table *t, const struct urnic_pd *qp_pd,
				       uint32_t qpn, const struct urnic_mw_bind *b)
{
	struct urnic_mr *mw = lookup(t, b->mw_rkey);
	struct urnic_mr *mr = NULL;
	enum urnic_mw_bind_check c;

	if (!mw || mw->kind == URNIC_KEY_MR)
		return URNIC_MW_BIND_BAD_WINDOW;
	if (b->length) {
		mr = lookup(t, b->mr_lkey);
		if (!mr || mr->kind != URNIC_KEY_MR)
			return URNIC_MW_BIND_BAD_REGION;
	}
	c = check_bind(mw, mr, qp_pd, b);
	if (c != URNIC_MW_BIND_OK)
		return c;

	unbind(t, mw); /* a type 1 window may be bound again while bound */
	/* IBTA 10.6.7.3: the binder chooses the key part (low 8 bits) of the new R_Key. */
	mw->key = (mw->key & ~CONSUMER_KEY_MASK) | (b->new_rkey & CONSUMER_KEY_MASK);
	if (!mr)
		return URNIC_MW_BIND_OK;
	mw->mw_mr = mr;
	mr->nwindows++;
	mw->mw_state = URNIC_MW_VALID;
	mw->iova = b->addr;
	mw->length = b->length;
	mw->access = b->access & URNIC_MW_ACCESS_SUPPORTED; /* local write dropped */
	if (mw->kind == URNIC_KEY_MW2) {
		mw->mw_qpn = qpn;
		t->mw2_bound++;
	}
	return URNIC_MW_BIND_OK;
}

enum urnic_mr_check urnic_mw_invalidate(struct urnic_mr_table *t, const struct urnic_pd *pd,
					uint32_t qpn, uint32_t rkey)
{
	struct urnic_mr *mw = lookup(t, rkey);

	/* o10-37.2.26: only type 2 windows are invalidated; a free one names nothing. */
	if (!mw || mw->kind != URNIC_KEY_MW2 || mw->mw_state != URNIC_MW_VALID)
		return URNIC_MR_BAD_KEY;
	if (mw->pd != pd)
		return URNIC_MR_BAD_PD;
	/* A type 2B window belongs to the QP that bound it (o10-37.2.36): another
	 * connection cannot revoke it. */
	if (mw->mw_qpn != qpn)
		return URNIC_MR_BAD_QP;
	unbind(t, mw);
	return URNIC_MR_OK;
}

void urnic_mw_release_qp(struct urnic_mr_table *t, uint32_t qpn)
{
	/* Only as far as the last bound type 2 window: most tables have none. */
	for (uint32_t i = 1, left = t->mw2_bound; left && i < t->nslots; i++) {
		struct urnic_mr *mw = &t->slots[i];

		if (!mw->live || mw->kind != URNIC_KEY_MW2 || mw->mw_state != URNIC_MW_VALID)
			continue;
		left--;
		if (mw->mw_qpn == qpn)
			unbind(t, mw);
	}
}

const char *urnic_mw_bind_check_name(enum urnic_mw_bind_check c)
{
	static const char *const names[] = {
		[URNIC_MW_BIND_OK] = "ok",
		[URNIC_MW_BIND_BAD_WINDOW] = "no such window",
		[URNIC_MW_BIND_BAD_REGION] = "no such region",
		[URNIC_MW_BIND_BAD_ACCESS] = "rights a window cannot have",
		[URNIC_MW_BIND_BAD_STATE] = "type 2 window already bound",
		[URNIC_MW_BIND_BAD_PD] = "not one protection domain",
		[URNIC_MW_BIND_NO_REGION] = "type 2 bind without a region",
		[URNIC_MW_BIND_NOT_BINDABLE] = "region does not allow binding",
		[URNIC_MW_BIND_NO_LOCAL_WRITE] = "writable window on a region without local write",
		[URNIC_MW_BIND_OUT_OF_RANGE] = "window outside its region",
	};

	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "?";
}
