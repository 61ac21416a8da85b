/* SPDX-License-Identifier: MIT */
/*
 * mr.c - the memory region table: registration, keys and checked resolution.
 *
 * IBTA 10.6 (memory regions); order of checks as rxe_mr.c: a key
 * names a live region, the region belongs to the QP's PD, the range lies inside it, and
 * it grants the right. Nothing here touches the registered memory itself.
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
	t->next_free_hint = 1; /* index 0 would make keys below 65536, which apps use as "no key" */
	return 0;
}

void urnic_mr_table_fini(struct urnic_mr_table *t)
{
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

int urnic_mr_register(struct urnic_mr_table *t, struct urnic_pd *pd, void *host, uint64_t iova,
		      uint64_t length, uint32_t access, uint16_t key_bits, struct urnic_mr **out)
{
	for (uint32_t n = 0; n < t->nslots; n++) {
		uint32_t idx = (t->next_free_hint + n) % t->nslots;
		struct urnic_mr *mr;

		if (idx == 0 || t->slots[idx].live)
			continue;
		mr = &t->slots[idx];
		/* A reused slot must not hand out the key its previous region had. */
		if (((mr->key & 0xffff) == key_bits) && mr->key)
			key_bits++;
		mr->pd = pd;
		mr->host = host;
		mr->iova = iova;
		mr->length = length;
		mr->access = access;
		mr->key = idx << 16 | key_bits;
		mr->live = true;
		t->nlive++;
		t->next_free_hint = idx + 1;
		*out = mr;
		return 0;
	}
	return -ENOMEM;
}

void urnic_mr_deregister(struct urnic_mr_table *t, struct urnic_mr *mr)
{
	mr->live = false;
	mr->host = NULL;
	t->nlive--;
}

enum urnic_mr_check urnic_mr_resolve(const struct urnic_mr_table *t, const struct urnic_pd *pd,
				     uint32_t key, uint64_t iova, uint64_t len, uint32_t need,
				     uint8_t **host)
{
	uint32_t idx = KEY_INDEX(key);
	const struct urnic_mr *mr;

	if (idx == 0 || idx >= t->nslots)
		return URNIC_MR_BAD_KEY;
	mr = &t->slots[idx];
	if (!mr->live || mr->key != key)
		return URNIC_MR_BAD_KEY;
	if (mr->pd != pd)
		return URNIC_MR_BAD_PD;
	/* Written so that no sum can wrap: iova >= start and len <= end - iova. */
	if (iova < mr->iova || iova - mr->iova > mr->length || len > mr->length - (iova - mr->iova))
		return URNIC_MR_OUT_OF_RANGE;
	if ((mr->access & need) != need)
		return URNIC_MR_NO_RIGHT;
	*host = mr->host + (iova - mr->iova);
	return URNIC_MR_OK;
}

const char *urnic_mr_check_name(enum urnic_mr_check c)
{
	static const char *const names[] = {
		[URNIC_MR_OK] = "ok",
		[URNIC_MR_BAD_KEY] = "bad key",
		[URNIC_MR_BAD_PD] = "wrong protection domain",
		[URNIC_MR_OUT_OF_RANGE] = "out of range",
		[URNIC_MR_NO_RIGHT] = "missing access right",
	};

	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "?";
}
