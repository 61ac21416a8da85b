/* SPDX-License-Identifier: MIT */
/*
 * test_tm_list.c - the tag list of a tag-matching SRQ (queue/tm.h), alone: a message
 * matches the earliest posted tag whose mask accepts it (TMH.tag & mask == entry.tag,
 * ibv_post_srq_ops(3)); a full list refuses ADD; DEL of a consumed or unknown handle
 * fails; a rendezvous keeps its tag until released; after an unexpected message, tags
 * posted before the application's synchronization are not matched, those posted before
 * the message still are, and a SYNC with the device's count brings the others in.
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "queue/tm.h"

static struct urnic_recv_wqe buf(uint64_t wr_id)
{
	struct urnic_recv_wqe w;

	memset(&w, 0, sizeof(w));
	w.wr_id = wr_id;
	w.num_sge = 1;
	w.length = 64;
	w.sge[0] = (struct urnic_sge){ 0x1000, 64, 7 };
	return w;
}

static int add(struct urnic_tm_list *l, uint64_t tag, uint64_t mask, uint64_t wr_id)
{
	struct urnic_recv_wqe w = buf(wr_id);
	bool in_phase;

	return urnic_tm_list_add(l, tag, mask, &w, &in_phase);
}

static void earliest_matching_tag_wins(void)
{
	struct urnic_tm_list l;
	int a, b, c;

	CHECK_EQ(urnic_tm_list_init(&l, 8, 4), 0);
	a = add(&l, 0x10, 0xff, 1);
	b = add(&l, 0x00, 0x00, 2); /* the wildcard: accepts every tag */
	c = add(&l, 0x10, 0xff, 3);
	CHECK(a >= 0 && b >= 0 && c >= 0);
	CHECK_EQ(urnic_tm_list_match(&l, 0x1234510), a);
	urnic_tm_list_consume(&l, (uint32_t)a, false);
	CHECK_EQ(urnic_tm_list_match(&l, 0x10), b); /* b was posted before c */
	urnic_tm_list_consume(&l, (uint32_t)b, false);
	CHECK_EQ(urnic_tm_list_match(&l, 0x10), c);
	CHECK_EQ(urnic_tm_list_match(&l, 0x11), -ENOENT);
	/* Bits of the entry's tag outside its mask: nothing can match it. */
	CHECK(add(&l, 0x100, 0xff, 4) >= 0);
	CHECK_EQ(urnic_tm_list_match(&l, 0x100), -ENOENT);
	CHECK_EQ(l.tags[c].wqe.wr_id, 3);
	urnic_tm_list_fini(&l);
}

static void full_list_and_bad_deletes(void)
{
	struct urnic_tm_list l;
	int h[3];

	CHECK_EQ(urnic_tm_list_init(&l, 3, 4), 0);
	for (int i = 0; i < 3; i++)
		CHECK((h[i] = add(&l, (uint64_t)i, ~0ull, (uint64_t)i)) >= 0);
	CHECK_EQ(add(&l, 9, ~0ull, 9), -ENOMEM);
	CHECK_EQ(urnic_tm_list_del(&l, 3), -EINVAL);
	CHECK_EQ(urnic_tm_list_del(&l, (uint32_t)h[1]), 0);
	CHECK_EQ(urnic_tm_list_del(&l, (uint32_t)h[1]), -ENOENT);
	CHECK_EQ(urnic_tm_list_match(&l, 1), -ENOENT);
	/* A consumed tag cannot be deleted: the message took it first. */
	urnic_tm_list_consume(&l, (uint32_t)h[0], false);
	CHECK_EQ(urnic_tm_list_del(&l, (uint32_t)h[0]), -ENOENT);
	CHECK_EQ(l.posted, 1);
	CHECK(add(&l, 5, ~0ull, 5) >= 0);
	CHECK(add(&l, 6, ~0ull, 6) >= 0);
	CHECK_EQ(add(&l, 7, ~0ull, 7), -ENOMEM);
	CHECK_EQ(urnic_tm_list_init(&(struct urnic_tm_list){ 0 }, 0, 1), -EINVAL);
	urnic_tm_list_fini(&l);
}

static void rendezvous_keeps_its_tag_until_released(void)
{
	struct urnic_tm_list l;
	int h;

	CHECK_EQ(urnic_tm_list_init(&l, 1, 1), 0);
	h = add(&l, 42, ~0ull, 1);
	urnic_tm_list_consume(&l, (uint32_t)h, true);
	CHECK_EQ(l.tags[h].state, URNIC_TM_TAG_CONSUMED);
	CHECK_EQ(urnic_tm_list_match(&l, 42), -ENOENT);
	CHECK_EQ(add(&l, 43, ~0ull, 2), -ENOMEM); /* its buffer is still being filled */
	urnic_tm_list_release(&l, (uint32_t)h);
	CHECK_EQ(l.posted, 0);
	CHECK(add(&l, 43, ~0ull, 2) >= 0);
	urnic_tm_list_fini(&l);
}

static void unexpected_message_holds_new_tags_until_sync(void)
{
	struct urnic_tm_list l;
	struct urnic_recv_wqe w = buf(0);
	bool in_phase;
	int old, young;

	CHECK_EQ(urnic_tm_list_init(&l, 4, 4), 0);
	old = urnic_tm_list_add(&l, 1, ~0ull, &w, &in_phase);
	CHECK(in_phase);
	urnic_tm_list_unexpected(&l);
	young = urnic_tm_list_add(&l, 2, ~0ull, &w, &in_phase);
	CHECK(!in_phase); /* IBV_WC_TM_SYNC_REQ */
	CHECK_EQ(urnic_tm_list_match(&l, 1), old);
	CHECK_EQ(urnic_tm_list_match(&l, 2), -ENOENT);
	urnic_tm_list_sync(&l, 0); /* behind the device: still out of phase */
	CHECK_EQ(urnic_tm_list_match(&l, 2), -ENOENT);
	urnic_tm_list_sync(&l, 1);
	CHECK_EQ(urnic_tm_list_match(&l, 2), young);
	CHECK(urnic_tm_list_add(&l, 3, ~0ull, &w, &in_phase) >= 0);
	CHECK(in_phase);
	urnic_tm_list_fini(&l);
}

int main(void)
{
	RUN(earliest_matching_tag_wins);
	RUN(full_list_and_bad_deletes);
	RUN(rendezvous_keeps_its_tag_until_released);
	RUN(unexpected_message_holds_new_tags_until_sync);
	return 0;
}
