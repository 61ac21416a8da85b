/* SPDX-License-Identifier: MIT */
/*
 * tm.c - the tag list of a tag-matching SRQ. See tm.h.
 */
#include "queue/tm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int urnic_tm_list_init(struct urnic_tm_list *l, uint32_t max_tags, uint32_t max_ops)
{
	memset(l, 0, sizeof(*l));
	if (max_tags == 0)
		return -EINVAL;
	l->tags = calloc(max_tags, sizeof(*l->tags));
	if (!l->tags)
		return -ENOMEM;
	l->max_tags = max_tags;
	l->max_ops = max_ops;
	return 0;
}

void urnic_tm_list_fini(struct urnic_tm_list *l)
{
	free(l->tags);
	l->tags = NULL;
}

void urnic_tm_list_sync(struct urnic_tm_list *l, uint32_t unexpected_cnt)
{
	l->unexp_sw = unexpected_cnt;
	if (l->unexp_sw != l->unexp_hw)
		return;
	/* In phase again: the application has seen every unexpected message, so the tags
	 * it posted meanwhile cannot overtake one of them (tag_matching.md). */
	for (uint32_t i = 0; i < l->max_tags; i++)
		l->tags[i].in_phase = true;
}

int urnic_tm_list_add(struct urnic_tm_list *l, uint64_t tag, uint64_t mask,
		      const struct urnic_recv_wqe *wqe, bool *in_phase)
{
	/* Handles are given round-robin, so a stale DEL of a consumed entry is unlikely to
	 * name a new one (mlx5 keeps its free entries in a FIFO for the same reason). */
	for (uint32_t n = 0; n < l->max_tags; n++) {
		uint32_t i = (l->next + n) % l->max_tags;
		struct urnic_tm_tag *t = &l->tags[i];

		if (t->state != URNIC_TM_TAG_FREE)
			continue;
		t->tag = tag;
		t->mask = mask;
		t->seq = l->seq++;
		t->wqe = *wqe;
		t->state = URNIC_TM_TAG_POSTED;
		t->in_phase = l->unexp_sw == l->unexp_hw;
		*in_phase = t->in_phase;
		l->next = i + 1;
		l->posted++;
		return (int)i;
	}
	return -ENOMEM;
}

int urnic_tm_list_del(struct urnic_tm_list *l, uint32_t handle)
{
	if (handle >= l->max_tags)
		return -EINVAL;
	if (l->tags[handle].state != URNIC_TM_TAG_POSTED)
		return -ENOENT;
	l->tags[handle].state = URNIC_TM_TAG_FREE;
	l->posted--;
	return 0;
}

int urnic_tm_list_match(const struct urnic_tm_list *l, uint64_t tag)
{
	int best = -ENOENT;

	/* ibv_post_srq_ops(3): a message matches when TMH.tag & entry.mask == entry.tag;
	 * MPI's rule takes the earliest posted receive that matches. */
	for (uint32_t i = 0; i < l->max_tags; i++) {
		const struct urnic_tm_tag *t = &l->tags[i];

		if (t->state != URNIC_TM_TAG_POSTED || !t->in_phase || (tag & t->mask) != t->tag)
			continue;
		if (best < 0 || t->seq < l->tags[best].seq)
			best = (int)i;
	}
	return best;
}

void urnic_tm_list_consume(struct urnic_tm_list *l, uint32_t handle, bool keep)
{
	if (keep) {
		l->tags[handle].state = URNIC_TM_TAG_CONSUMED;
		return;
	}
	l->tags[handle].state = URNIC_TM_TAG_FREE;
	l->posted--;
}

void urnic_tm_list_release(struct urnic_tm_list *l, uint32_t handle)
{
	if (handle < l->max_tags && l->tags[handle].state == URNIC_TM_TAG_CONSUMED) {
		l->tags[handle].state = URNIC_TM_TAG_FREE;
		l->posted--;
	}
}
