/* SPDX-License-Identifier: MIT */
/*
 * engine.h - the sans-I/O RDMA engine of one device, as its driver sees it: the QP
 * table, one pass (progress and timers), and what it wants sent.
 *
 * The engine never calls the kernel or reads a clock: the driver (src/dev, the test
 * fabric, the fuzz harness) passes the time into every entry point, feeds received
 * packets to the protocol's receive entry point (roce/roce.h), runs urnic_engine_pass()
 * and sends what accumulates in the tx batch through hooks.flush. Context: one thread
 * at a time (the device lock), except urnic_engine_doorbell.
 */
#ifndef URNIC_ENGINE_ENGINE_H
#define URNIC_ENGINE_ENGINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/core.h"

int urnic_engine_init(struct urnic_engine *e, bool ipv6, const uint8_t *local_ip,
		      urnic_tx_flush_fn flush, void *io, uint64_t seed);
void urnic_engine_fini(struct urnic_engine *e);

/* Replaces the per-QP counter table (URNIC_MAX_QP slots, zeroed by the caller) and
 * carries the live slots over; NULL stops per-QP counting. The caller keeps ownership of
 * the new table. Context: under the device lock, outside a pass. */
void urnic_engine_set_qp_counters(struct urnic_engine *e, struct urnic_qp_counters *table);

/* Work was posted to the QP with this QPN: a send or receive WQE published by a store
 * of its queue's prod before this call. The next pass visits the QP. Context: any
 * thread, without the device lock. The bit is set by a read-modify-write with release
 * order, and the pass takes a word by an exchange with acquire order (pass.c,
 * take_doorbells): the two are ordered on the word, so either the pass's exchange reads
 * this bit, and then it sees the prod stored before it, or it came first and the bit
 * waits for the next pass. (A plain load of the bit first, to skip the write when it
 * is set, would need a full fence before it: the prod store could still be in flight
 * while the load sees a bit that the pass is about to take.) */
static inline void urnic_engine_doorbell(struct urnic_engine *e, uint32_t qpn)
{
	uint32_t i = qpn & (URNIC_MAX_QP - 1);

	atomic_fetch_or_explicit(&e->qpt.doorbells[i / 64], 1ull << (i % 64), memory_order_release);
}

/* QP table. urnic_engine_qp_add gives the QP its QPN and its type's ops; remove sends
 * what it still owes its peer first (now_ns: the time). */
int urnic_engine_qp_add(struct urnic_engine *e, struct urnic_qp *qp);
void urnic_engine_qp_remove(struct urnic_engine *e, struct urnic_qp *qp, uint64_t now_ns);

/* The XRC SRQ table (IBTA A14). add gives an XRC SRQ (srq->xrcd set) its number:
 * 0 or -ENOMEM (the table is full). remove takes it out; a receive QP that was serving
 * a message into it lets that message go, and the WQE it had taken is dropped with the
 * SRQ (ibv_destroy_srq discards what is posted). Context: the device lock. */
int urnic_engine_srq_add(struct urnic_engine *e, struct urnic_srq *srq);
void urnic_engine_srq_remove(struct urnic_engine *e, struct urnic_srq *srq);

/* Runs one tag list operation on a tag-matching SRQ (srq->tm) at once, its completion
 * (if signaled, or a DEL that failed) on the SRQ's CQ (tm.c): 0, -EINVAL (bad opcode,
 * handle or SGE count) or -ENOMEM (the list is full, or no room on the CQ), nothing done
 * then. ADD writes the entry's handle into op->handle. Context: the device lock. */
int urnic_engine_tm_op(struct urnic_engine *e, struct urnic_srq *srq, struct urnic_tm_op *op);
/* The QP's send queue is dropped without completions (destroy, RESET): the tags its
 * rendezvous READs were filling go back to their list, so the list loses no entry. */
void urnic_engine_tm_drop_sq(struct urnic_qp *qp);

/* Applies a validated modify (urnic_qp_check_modify) to the QP: RESET clears all
 * protocol state, RTR/RTS set up PSNs and resources, ERR flushes (IBTA 10.3.1). */
void urnic_engine_qp_apply(struct urnic_engine *e, struct urnic_qp *qp,
			   const struct urnic_qp_attr *attr, enum urnic_qp_state next,
			   uint32_t mask, uint64_t now_ns);

/* One pass of the engine at time now_ns, as every driver runs it: progress (what the
 * QPs have to send: new work, retries, READ responses, ACKs; flushes of QPs in error),
 * the timers, and progress again only if a timer left a retry to send. Sets *deadline
 * to the earliest pending timer (0: none); returns true if it did anything. The caller
 * receives before and flushes the tx batch after. */
bool urnic_engine_pass(struct urnic_engine *e, uint64_t now_ns, uint64_t *deadline);

/* Progress, as a pass begins it, only if work was posted since the last pass: the
 * driver runs it before receiving, so that what was posted joins the tx batch before
 * the packets received run the responder, whose direct placements (wire/addr.h) copy
 * for tens of microseconds and send what the batch holds first. Returns true if it ran. */
bool urnic_engine_progress_posted(struct urnic_engine *e, uint64_t now_ns);

/* The two halves of a pass, for tests that drive them apart. */
bool urnic_engine_progress(struct urnic_engine *e, uint64_t now_ns);
uint64_t urnic_engine_timers(struct urnic_engine *e, uint64_t now_ns);

/* True while some QP has work whose completion its application will poll for: sends
 * not yet completed, or receive WQEs posted. An application spinning on memory instead
 * (a one-sided target) awaits nothing here, and the engine thread must read the socket
 * for it. */
bool urnic_engine_app_awaits(struct urnic_engine *e);

#endif
