/* SPDX-License-Identifier: MIT */
/*
 * tm.h - the tag list of a tag-matching SRQ (ibv_create_srq_ex(3) IBV_SRQT_TM,
 * ibv_post_srq_ops(3)): the tagged buffers posted by IBV_WR_TAG_ADD, which an incoming
 * tagged message matches when TMH.tag & entry.mask == entry.tag, the earliest posted
 * first, and the counters of the phase synchronization between the device and the
 * application (unexpected messages delivered / handled).
 * Data and small functions only: the engine (engine/roce/tm.c) drives it under the
 * device lock. Context: the device lock.
 */
#ifndef URNIC_QUEUE_TM_H
#define URNIC_QUEUE_TM_H

#include <stdbool.h>
#include <stdint.h>

#include "queue/wq.h"

/* What a tag-matching SRQ offers (ibv_query_device_ex(3) tm_caps). */
enum {
	URNIC_TM_MAX_TAGS = 256,    /* tm_caps.max_num_tags: a list is searched whole */
	URNIC_TM_MAX_OPS = 1024,    /* tm_caps.max_ops: operations are never outstanding */
	URNIC_TM_MAX_SGE = 1,	    /* tm_caps.max_sge, as mlx5 */
	URNIC_TM_MAX_RNDV_HDR = 64, /* tm_caps.max_rndv_hdr_size: TMH, RVH and meta-data */
	URNIC_TM_SQ_RESERVE = 8,    /* send slots a QP gets for rendezvous READs and FINs */
};

/* A tag list operation (ibv_post_srq_ops(3)); opcode and flags numerically
 * enum ibv_ops_wr_opcode and enum ibv_ops_flags. */
enum urnic_tm_opcode {
	URNIC_TM_OP_ADD,
	URNIC_TM_OP_DEL,
	URNIC_TM_OP_SYNC,
};

enum urnic_tm_op_flag {
	URNIC_TM_OP_SIGNALED = 1, /* a completion on the SRQ's CQ */
	URNIC_TM_OP_SYNC_CNT = 2, /* unexpected_cnt reports the messages handled */
};

struct urnic_tm_op {
	uint64_t wr_id;
	uint32_t opcode; /* enum urnic_tm_opcode */
	uint32_t flags;	 /* enum urnic_tm_op_flag */
	uint32_t unexpected_cnt;
	uint32_t handle; /* DEL: in; ADD: out */
	uint64_t tag;
	uint64_t mask;
	struct urnic_recv_wqe wqe; /* ADD: recv_wr_id and the buffer */
};

/* Where a tag entry is in its life. */
#define URNIC_TM_TAG_STATES(X)                                                                     \
	X(FREE)	    /* no entry: the handle may be given to the next ADD */                        \
	X(POSTED)   /* in the list, matched by the next message whose tag it accepts */            \
	X(CONSUMED) /* matched by a rendezvous whose data is still being read */

enum urnic_tm_tag_state {
#define X(s) URNIC_TM_TAG_##s,
	URNIC_TM_TAG_STATES(X)
#undef X
};

struct urnic_tm_tag {
	uint64_t tag;
	uint64_t mask;
	uint64_t seq;		   /* the order it was added in: the earliest matches first */
	struct urnic_recv_wqe wqe; /* recv_wr_id and the buffer (max_sge SGEs) */
	uint8_t state;		   /* enum urnic_tm_tag_state */
	/* Posted while the application had handled every unexpected message the device
	 * delivered, or synchronized since: only such a tag is matched (tag_matching.md's
	 * phase synchronization). */
	bool in_phase;
};

struct urnic_tm_list {
	struct urnic_tm_tag *tags; /* max_tags entries, indexed by handle */
	uint32_t max_tags;
	uint32_t max_ops;
	uint32_t posted; /* entries not FREE */
	uint32_t next;	 /* where the search for a free handle starts */
	uint64_t seq;
	uint32_t unexp_hw; /* unexpected messages delivered to the SRQ's plain WQEs */
	uint32_t unexp_sw; /* the count the application last reported (IBV_OPS_TM_SYNC) */
};

/* max_tags entries, all free. 0, -EINVAL (0 tags) or -ENOMEM. */
int urnic_tm_list_init(struct urnic_tm_list *l, uint32_t max_tags, uint32_t max_ops);
void urnic_tm_list_fini(struct urnic_tm_list *l);

/* The application reports that it handled unexpected_cnt unexpected messages. When the
 * count is the device's, the tags posted out of phase become matchable. */
void urnic_tm_list_sync(struct urnic_tm_list *l, uint32_t unexpected_cnt);

/* Posts a tagged buffer: its handle (>= 0), or -ENOMEM (the list is full). *in_phase
 * tells whether it is matchable now; if not, the application must synchronize
 * (IBV_WC_TM_SYNC_REQ). */
int urnic_tm_list_add(struct urnic_tm_list *l, uint64_t tag, uint64_t mask,
		      const struct urnic_recv_wqe *wqe, bool *in_phase);

/* Removes a posted entry: 0, -EINVAL (no such handle) or -ENOENT (not posted: consumed
 * by a message, or never added). */
int urnic_tm_list_del(struct urnic_tm_list *l, uint32_t handle);

/* The handle of the earliest posted, in-phase entry that accepts tag, or -ENOENT. */
int urnic_tm_list_match(const struct urnic_tm_list *l, uint64_t tag);

/* A message took the entry: CONSUMED (rendezvous: until its data has come) or FREE. */
void urnic_tm_list_consume(struct urnic_tm_list *l, uint32_t handle, bool keep);
/* A consumed entry's message is complete: FREE. */
void urnic_tm_list_release(struct urnic_tm_list *l, uint32_t handle);

/* A tagged message went unexpected (to a plain WQE): matching of tags posted from now
 * on waits for the application's synchronization. */
static inline void urnic_tm_list_unexpected(struct urnic_tm_list *l)
{
	l->unexp_hw++;
}

#endif
