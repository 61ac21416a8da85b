/* SPDX-License-Identifier: MIT */
/*
 * srq.h - the shared receive queue: one ring of receive WQEs that several QPs draw
 * their receives from (IBTA 10.2.9).
 *
 * The ring is a urnic_wq of struct urnic_recv_wqe, posted like a QP's receive queue
 * (ibv_post_srq_recv under the ring's lock, publish with a release store of prod). The
 * engine takes a WQE out of the ring when a message first needs it (the QP keeps a
 * copy while the message is in progress), so QPs sharing the ring never race for one
 * WQE. The limit (ibv_modify_srq IBV_SRQ_LIMIT) arms a one-shot event: when the number
 * of WQEs left drops below it, the engine raises IBV_EVENT_SRQ_LIMIT_REACHED and
 * disarms it (IBTA 10.2.9 SRQ limit, and 11.6.3's affiliated asynchronous events; rxe
 * does the same in get_srq_wqe()).
 * An XRC SRQ (IBTA Annex A14) belongs to an XRC domain, has its own CQ and a number that
 * requests name in their XRCETH; the target QPs of its domain take its WQEs, message by
 * message (engine/roce/xrc.c).
 * Context: posters take the ring lock; the engine (device lock) is the only consumer;
 * limit is written under the device lock.
 */
#ifndef URNIC_QUEUE_SRQ_H
#define URNIC_QUEUE_SRQ_H

#include <stdint.h>

#include "queue/tm.h"
#include "queue/wq.h"

struct urnic_pd; /* mem/mr.h: the SRQ only names its PD */
struct urnic_cq; /* queue/wq.h */

/* An XRC domain as the engine sees it (IBTA A14): what its SRQs and target QPs share.
 * Its address is its identity; owner is the verbs layer's domain. */
struct urnic_xrcd {
	void *owner;
};

struct urnic_srq {
	struct urnic_wq rq;  /* of struct urnic_recv_wqe */
	struct urnic_pd *pd; /* the receive SGEs are checked against this PD */
	uint32_t limit;	     /* armed while non-zero */
	void *owner;	     /* the ibv_srq, for async events */
	/* XRC only (NULL / 0 for a basic SRQ): its domain, the CQ its receives complete
	 * on, and its number in the engine's table (urnic_engine_srq_add). */
	struct urnic_xrcd *xrcd;
	struct urnic_cq *cq;
	uint32_t srqn;
	/* Tag matching (IBV_SRQT_TM) only: its tag list; NULL for other SRQs. cq is the
	 * CQ every completion of its QPs' messages and list operations goes to. */
	struct urnic_tm_list *tm;
};

int urnic_srq_init(struct urnic_srq *srq, uint32_t max_wr, uint32_t max_sge);
/* The same with the ring's memory from mem (NULL: calloc). */
int urnic_srq_init_mem(struct urnic_srq *srq, uint32_t max_wr, uint32_t max_sge,
		       const struct urnic_ring_mem *mem);
void urnic_srq_fini(struct urnic_srq *srq);

/* WQEs posted and not yet taken. */
static inline uint32_t urnic_srq_count(const struct urnic_srq *srq)
{
	return atomic_load_explicit(&srq->rq.prod, memory_order_acquire) -
	       atomic_load_explicit(&srq->rq.cons, memory_order_relaxed);
}

#endif
