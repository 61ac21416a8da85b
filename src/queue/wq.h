/* SPDX-License-Identifier: MIT */
/*
 * wq.h - work queues (SQ, RQ) and the completion queue: rings between application
 * threads and the engine thread.
 *
 * A work queue is a single-producer ring: application threads append work requests
 * under the queue's post lock (rdma-core providers lock per queue the same way) and
 * publish them with a release store of prod; the engine reads them with an acquire load
 * and frees slots by advancing cons. The completion queue is the mirror image: the
 * engine produces, ibv_poll_cq consumes under a spinlock. No system call and no
 * allocation on either side: a CQ whose completion channel is due an event goes on its
 * device's list (struct urnic_cq_due) and the device writes the channel (dev/).
 * A ring's memory comes from calloc or from the allocator its creator names (struct
 * urnic_ring_mem: a parent domain's, ibv_alloc_parent_domain(3)).
 * Context: prod is written by posters, cons by the engine (WQ) / the poller (CQ).
 */
#ifndef URNIC_QUEUE_WQ_H
#define URNIC_QUEUE_WQ_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "wire/addr.h"

enum {
	URNIC_MAX_SGE = 32,
	URNIC_MAX_INLINE = URNIC_MAX_SGE * 16,
	URNIC_MAX_WQ_DEPTH = 16384,
	URNIC_MAX_CQE = 1 << 20,
};

/* Which ring an allocator is asked memory for. */
enum urnic_ring_kind {
	URNIC_RING_SQ,
	URNIC_RING_RQ,
	URNIC_RING_CQ,
	URNIC_RING_SRQ,
};

/* What an allocator other than calloc is asked to align a ring to: a page, so that the
 * application can keep it from being copied on fork (madvise(MADV_DONTFORK)) or map it
 * from huge pages page by page, as ibv_alloc_parent_domain(3) expects it to. */
#define URNIC_RING_ALIGN 4096

/* get's answer for "allocate it yourself" (the man page's IBV_ALLOCATOR_USE_DEFAULT). */
#define URNIC_RING_MEM_DEFAULT ((void *)-1)

/*
 * An allocator for rings: get returns size bytes aligned to align for a ring of kind,
 * URNIC_RING_MEM_DEFAULT (the queue uses calloc) or NULL (-ENOMEM); put gives back what
 * get returned, once. The queue zeroes what get returns. Both run in the thread that
 * creates, resizes or destroys the ring, never in the engine's pass. The allocator must
 * outlive the rings it gave memory to.
 */
struct urnic_ring_mem {
	void *(*get)(void *arg, size_t size, size_t align, enum urnic_ring_kind kind);
	void (*put)(void *arg, void *ptr, enum urnic_ring_kind kind);
	void *arg;
};

struct urnic_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/* Work request opcodes, numerically equal to enum ibv_wr_opcode (checked in src/verbs). */
enum urnic_wr_opcode {
	URNIC_WR_RDMA_WRITE = 0,
	URNIC_WR_RDMA_WRITE_WITH_IMM = 1,
	URNIC_WR_SEND = 2,
	URNIC_WR_SEND_WITH_IMM = 3,
	URNIC_WR_RDMA_READ = 4,
	URNIC_WR_ATOMIC_CMP_AND_SWP = 5,
	URNIC_WR_ATOMIC_FETCH_AND_ADD = 6,
	URNIC_WR_LOCAL_INV = 7,
	URNIC_WR_BIND_MW = 8,
	URNIC_WR_SEND_WITH_INV = 9,
	URNIC_WR_FLUSH = 14,	    /* IBTA 1.5 (Annex A19), rdma-core 45+ IBV_WR_FLUSH */
	URNIC_WR_ATOMIC_WRITE = 15, /* IBTA 1.5 (Annex A19) */
};

/* FLUSH placement types and selectivity levels (IBTA A19.4.1; numerically rdma-core's
 * enum ibv_placement_type and enum ibv_selectivity_level). */
enum urnic_flush_attr {
	URNIC_FLUSH_GLOBAL = 1,
	URNIC_FLUSH_PERSISTENT = 2,
	URNIC_FLUSH_TYPE_MASK = 3,
	URNIC_FLUSH_LEVEL_RANGE = 0,
	URNIC_FLUSH_LEVEL_MR = 1,
};

/* Send flags, numerically equal to enum ibv_send_flags. */
enum urnic_send_flag {
	URNIC_SEND_FENCE = 1,
	URNIC_SEND_SIGNALED = 2,
	URNIC_SEND_SOLICITED = 4,
	URNIC_SEND_INLINE = 8,
};

/* Who posted a send WQE: the application, or the engine for a rendezvous matched on a
 * tag-matching SRQ (engine/roce/tm.c: the READ of the sender's data and the FIN after
 * it), which completes on the SRQ's CQ as the tagged receive, not on the send CQ. */
enum urnic_swqe_role {
	URNIC_SWQE_APP = 0,
	URNIC_SWQE_TM_READ,
	URNIC_SWQE_TM_FIN,
};

/* A send work queue element as posted, plus the requester's bookkeeping for it. */
struct urnic_send_wqe {
	uint64_t wr_id;
	uint32_t opcode; /* enum urnic_wr_opcode */
	uint32_t flags;	 /* enum urnic_send_flag */
	uint32_t imm_be;
	uint32_t rkey;
	uint64_t remote_addr;
	uint64_t compare_add;
	uint64_t swap;
	uint32_t length;  /* total bytes */
	uint32_t num_sge; /* 0 with URNIC_SEND_INLINE: data is in inline_data */
	/* UD only: the destination, copied from the work request's address handle at
	 * post time (so destroying the AH later cannot touch queued work), its QP number
	 * and the Q_Key for the DETH (IBTA 10.2.5). */
	struct urnic_peer ud_dst;
	uint32_t ud_remote_qpn;
	uint32_t ud_remote_qkey;
	/* XRC send QPs: the XRC SRQ at the target that this request names (IBTA A14
	 * XRCETH; ibv_post_send(3) qp_type.xrc.remote_srqn). */
	uint32_t xrc_srqn;
	/* BIND_MW (IBTA 10.6.7.3): the window by its R_Key at post time, the region, the
	 * range (remote_addr, remote_len) and the window's rights; rkey carries the new
	 * R_Key. LOCAL_INV and SEND_WITH_INV: rkey is the key to invalidate. FLUSH (A19.4):
	 * the range (remote_addr, remote_len) under rkey, its FETH placement type and
	 * selectivity level. ATOMIC_WRITE: the 8 bytes are the WQE's data. */
	uint64_t remote_len;
	uint32_t mw_rkey;
	uint32_t mr_lkey;
	uint32_t mw_access;
	uint8_t flush_type;
	uint8_t flush_level;
	/* Set by the requester when the WQE is first sent (IBTA 9.7.1: PSNs per packet;
	 * a READ reserves one PSN per response packet). */
	uint32_t first_psn;
	uint32_t last_psn;
	bool started;
	bool direct_tried;  /* sent as a direct WRITE (wire/addr.h): a retry sends packets */
	bool sent_direct;   /* its PSNs count in urnic_req.direct_psns */
	bool done;	    /* completed at the completer, slot may be freed in order */
	uint8_t status;	    /* enum urnic_wc_status once done */
	uint8_t role;	    /* enum urnic_swqe_role */
	uint32_t tm_handle; /* URNIC_SWQE_TM_READ: the tag whose buffer it fills */
	union {
		struct urnic_sge sge[URNIC_MAX_SGE];
		uint8_t inline_data[URNIC_MAX_INLINE];
	};
};

struct urnic_recv_wqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t length; /* sum of sge lengths */
	struct urnic_sge sge[URNIC_MAX_SGE];
};

struct urnic_wq {
	_Atomic uint32_t prod; /* next slot a poster fills */
	_Atomic uint32_t cons; /* oldest slot still owned by the engine */
	uint32_t depth;	       /* power of two */
	uint32_t max_wr;       /* what the application asked for: prod - cons <= max_wr */
	uint32_t max_sge;
	uint32_t max_inline;
	uint32_t slot_bytes;
	uint8_t *slots;
	const struct urnic_ring_mem *slots_from; /* NULL: calloc */
	uint8_t kind;				 /* enum urnic_ring_kind, for put */
	pthread_spinlock_t lock;
};

/* A ring of max_wr (rounded up to a power of two) zeroed slots of slot_bytes from
 * calloc, or from mem (NULL: calloc) asked for a ring of kind. 0 or -ENOMEM. */
int urnic_wq_init(struct urnic_wq *wq, uint32_t max_wr, uint32_t slot_bytes);
int urnic_wq_init_mem(struct urnic_wq *wq, uint32_t max_wr, uint32_t slot_bytes,
		      const struct urnic_ring_mem *mem, enum urnic_ring_kind kind);
void urnic_wq_fini(struct urnic_wq *wq);

static inline void *urnic_wq_slot(const struct urnic_wq *wq, uint32_t idx)
{
	return wq->slots + (size_t)(idx & (wq->depth - 1)) * wq->slot_bytes;
}

/* Completion statuses, numerically equal to enum ibv_wc_status. */
enum urnic_wc_status {
	URNIC_WC_SUCCESS,
	URNIC_WC_LOC_LEN_ERR,
	URNIC_WC_LOC_QP_OP_ERR,
	URNIC_WC_LOC_EEC_OP_ERR,
	URNIC_WC_LOC_PROT_ERR,
	URNIC_WC_WR_FLUSH_ERR,
	URNIC_WC_MW_BIND_ERR,
	URNIC_WC_BAD_RESP_ERR,
	URNIC_WC_LOC_ACCESS_ERR,
	URNIC_WC_REM_INV_REQ_ERR,
	URNIC_WC_REM_ACCESS_ERR,
	URNIC_WC_REM_OP_ERR,
	URNIC_WC_RETRY_EXC_ERR,
	URNIC_WC_RNR_RETRY_EXC_ERR,
	URNIC_WC_LOC_RDD_VIOL_ERR,
	URNIC_WC_REM_INV_RD_REQ_ERR,
	URNIC_WC_REM_ABORT_ERR,
	URNIC_WC_INV_EECN_ERR,
	URNIC_WC_INV_EEC_STATE_ERR,
	URNIC_WC_FATAL_ERR,
	URNIC_WC_RESP_TIMEOUT_ERR,
	URNIC_WC_GENERAL_ERR,
	URNIC_WC_TM_ERR,	     /* a tag list operation failed (ibv_post_srq_ops(3)) */
	URNIC_WC_TM_RNDV_INCOMPLETE, /* a rendezvous the device did not complete */
};

/* Completion opcodes, numerically equal to enum ibv_wc_opcode. */
enum urnic_wc_opcode {
	URNIC_WC_SEND = 0,
	URNIC_WC_RDMA_WRITE = 1,
	URNIC_WC_RDMA_READ = 2,
	URNIC_WC_COMP_SWAP = 3,
	URNIC_WC_FETCH_ADD = 4,
	URNIC_WC_BIND_MW = 5,
	URNIC_WC_LOCAL_INV = 6,
	URNIC_WC_FLUSH = 8, /* rdma-core 45+ IBV_WC_FLUSH */
	URNIC_WC_ATOMIC_WRITE = 9,
	URNIC_WC_RECV = 128,
	URNIC_WC_RECV_RDMA_WITH_IMM = 129,
	/* Tag matching (ibv_post_srq_ops(3), ibv_create_cq_ex(3)): list operations and
	 * messages on a tag-matching SRQ. */
	URNIC_WC_TM_ADD = 130,
	URNIC_WC_TM_DEL = 131,
	URNIC_WC_TM_SYNC = 132,
	URNIC_WC_TM_RECV = 133,
	URNIC_WC_TM_NO_TAG = 134,
};

enum urnic_wc_flag {
	URNIC_WC_WITH_GRH = 1,
	URNIC_WC_WITH_IMM = 2,
	URNIC_WC_WITH_INV = 8,
	URNIC_WC_TM_SYNC_REQ = 16,   /* the application must synchronize (IBV_WR_TAG_SYNC) */
	URNIC_WC_TM_MATCH = 32,	     /* the message matched a tag */
	URNIC_WC_TM_DATA_VALID = 64, /* the tagged buffer holds the message's data */
};

/*
 * The SL of a UD receive completion on RoCE: the received packet's type, as the
 * completion must tell IPv4 from IPv6 (IBTA Annex A17.4.5.1) and as mlx5 reports it
 * in the SL bits, which UCX and other consumers read to find the destination address
 * in the GRH area: bit 3 a UDP (RoCEv2) packet, bits 2:0 the L3 header.
 */
enum urnic_wc_roce_pkt {
	URNIC_WC_SL_ROCE_UDP = 0x8,
	URNIC_WC_SL_L3_IPV6 = 0x1,
	URNIC_WC_SL_L3_IPV4 = 0x2,
};

struct urnic_cqe {
	uint64_t wr_id;
	uint8_t status; /* enum urnic_wc_status */
	uint8_t wc_flags;
	uint16_t opcode; /* enum urnic_wc_opcode */
	uint32_t byte_len;
	uint32_t imm_be; /* or the invalidated rkey with URNIC_WC_WITH_INV */
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t vendor_err;
	uint64_t ts_ns; /* when the engine produced it (the engine's clock) */
	/* With URNIC_WC_TM_MATCH: the TMH's tag and app_ctx (ibv_wc_read_tm_info). */
	uint64_t tm_tag;
	uint32_t tm_priv;
	uint8_t sl; /* UD receives: enum urnic_wc_roce_pkt; 0 otherwise */
};

/* Armed state of a CQ for completion events (ibv_req_notify_cq). */
enum urnic_cq_arm {
	URNIC_CQ_DISARMED = 0,
	URNIC_CQ_ARM_SOLICITED = 1,
	URNIC_CQ_ARM_NEXT = 2,
};

struct urnic_cq;

/* The CQs whose completion channel is due an event, oldest first. An armed CQ that gets
 * its completion is put here (IBTA 11.4.2.2: one event per arming) and its device
 * writes the channel after the pass (dev/pipeline.c, urnic_dev_notify_cqs): the queue
 * makes no system call. Context: the device lock, as urnic_cq_push. */
struct urnic_cq_due {
	struct urnic_cq *head;
	struct urnic_cq *tail;
};

struct urnic_cq {
	_Atomic uint32_t prod; /* engine */
	_Atomic uint32_t cons; /* poller */
	uint32_t depth;	       /* power of two */
	uint32_t cqe;	       /* capacity the application asked for */
	struct urnic_cqe *ring;
	pthread_spinlock_t poll_lock;
	_Atomic int arm;	   /* enum urnic_cq_arm */
	int event_fd;		   /* write end of the completion channel, or -1 */
	void *event_cookie;	   /* what the channel carries (the ibv_cq) */
	struct urnic_cq_due *due;  /* where it goes when its channel is due, or NULL */
	struct urnic_cq *due_next; /* on that list */
	uint32_t events_due;	   /* events owed to the channel; > 0: on the list */
	/* Completion timestamps (ibv_create_cq_ex(3)): the engine's notion of now, or NULL
	 * for a CQ that was not asked for them (ts_ns stays 0), and the last one given:
	 * a pass may be dated a little before the one that ran ahead of it on another
	 * thread, and a CQ's timestamps never go back. */
	const uint64_t *clock_ns;
	uint64_t last_ts_ns;
	const struct urnic_ring_mem *mem;	/* where rings come from; NULL: calloc */
	const struct urnic_ring_mem *ring_from; /* where this one came from; NULL: calloc */
	uint64_t overflows;
};

/* A ring for cqe completions from calloc, or from mem (NULL: calloc), which resizing
 * asks again. 0 or -ENOMEM. */
int urnic_cq_init(struct urnic_cq *cq, uint32_t cqe);
int urnic_cq_init_mem(struct urnic_cq *cq, uint32_t cqe, const struct urnic_ring_mem *mem);
void urnic_cq_fini(struct urnic_cq *cq);
/* A CQ's ring on its own, for resizing in three steps: the allocator (maybe the
 * application's) is not called under the locks the swap needs. */
struct urnic_cq_ring {
	struct urnic_cqe *ring;
	uint32_t depth;
	uint32_t cqe;
	const struct urnic_ring_mem *from;
};

/* A ring for cqe completions from the CQ's allocator. 0 or -ENOMEM. No lock. */
int urnic_cq_ring_alloc(const struct urnic_cq *cq, uint32_t cqe, struct urnic_cq_ring *r);
/* Moves the unpolled completions over to r's ring in order and makes it the CQ's; r
 * then holds the old ring. -EINVAL (nothing changed) if more than r->cqe are unpolled.
 * Context: neither the engine (push) nor a poller may run: the caller holds the device
 * lock and poll_lock. */
int urnic_cq_ring_swap(struct urnic_cq *cq, struct urnic_cq_ring *r);
/* Gives r's ring back to where it came from. No lock. */
void urnic_cq_ring_free(struct urnic_cq_ring *r);
/* The three steps at once, for a CQ no engine or poller uses. -EINVAL or -ENOMEM. */
int urnic_cq_resize(struct urnic_cq *cq, uint32_t cqe);

/*
 * Engine side: append one completion. Returns false when the CQ is full (IBTA 11.4.2.1:
 * CQ overrun is an error; the caller puts the QP in error).
 * solicited tells whether the completion satisfies an ARM_SOLICITED request (the SE bit
 * of a receive); an unsuccessful completion does in any case.
 */
bool urnic_cq_push(struct urnic_cq *cq, const struct urnic_cqe *cqe, bool solicited);

/* Engine side: whether one more completion fits (the engine is the only producer, so
 * a push right after a true answer succeeds). */
static inline bool urnic_cq_has_room(struct urnic_cq *cq)
{
	uint32_t prod = atomic_load_explicit(&cq->prod, memory_order_relaxed);

	return prod - atomic_load_explicit(&cq->cons, memory_order_acquire) < cq->cqe;
}

/* Poller side: arms the CQ for one event (ibv_req_notify_cq(3)): the next completion,
 * or the next solicited or unsuccessful one. A completion pushed before may not have
 * fired it: the caller polls after this, and either that poll or the event finds it.
 * Context: any thread, no lock. */
void urnic_cq_arm(struct urnic_cq *cq, bool solicited_only);

/* Poller side: copy out up to n completions, oldest first. */
int urnic_cq_poll(struct urnic_cq *cq, struct urnic_cqe *out, int n);

/* Removes the unpolled completions of QP qpn (those of receives too unless keep_recv),
 * the others keeping their order; returns how many went. Context: neither the engine
 * nor a poller may run (the device lock and poll_lock, as urnic_cq_resize). */
uint32_t urnic_cq_discard_qp(struct urnic_cq *cq, uint32_t qpn, bool keep_recv);

void urnic_cq_due_init(struct urnic_cq_due *l);
/* The CQ whose channel became due first, taken off the list, with the number of events
 * it is owed in *n; NULL when none is. Context: the device lock. */
struct urnic_cq *urnic_cq_due_pop(struct urnic_cq_due *l, uint32_t *n);
/* No more events for this CQ's channel (ibv_destroy_cq): event_fd -1, and off its
 * device's list if it was due one. Context: the device lock. */
void urnic_cq_detach_channel(struct urnic_cq *cq);

#endif
