/* SPDX-License-Identifier: MIT */
/*
 * verbs_qp.h - the device's side of the verbs layer's queue pairs, completion queues,
 * shared receive queues and multicast groups: what reaches the engine (its QP table,
 * state machine, multicast table, clock and event hooks) and the transport (UDP source
 * ports, group sockets).
 *
 * The verbs layer embeds the objects it shares with the engine and fills and reads them
 * itself on the post and poll paths, with no call, no lock but the ring's own, and no
 * copy: struct urnic_qp with its attributes and rings (engine/qp.h, queue/wq.h,
 * queue/srq.h) and struct urnic_cq, plain data that come with this header, as do the
 * limits it reports (engine/mcast.h). Everything else it does to the engine goes
 * through the functions here. Out of scope: the pipeline itself (device.h).
 * Context: application threads; a function takes the device lock where it says so,
 * exactly around the engine's part, and nothing else.
 */
#ifndef URNIC_DEV_VERBS_QP_H
#define URNIC_DEV_VERBS_QP_H

#include <stdbool.h>
#include <stdint.h>

#include "dev/device.h"
#include "engine/mcast.h"
#include "engine/qp.h"
#include "queue/srq.h"
#include "queue/wq.h"

/* ---- queue pairs ---- */

/* Makes qp's rings (max_*_wr deep, max_*_sge SGEs, the full inline area) from mem (NULL:
 * calloc; called before the device lock is taken) and adds it to the engine in RESET,
 * under the device lock: qp->qpn is set, and a UD QP gets its UDP source port and the
 * port MTU as its path MTU. The caller has filled type, sq_sig_all, pd, send_cq,
 * recv_cq, srq and owner. Returns 0, or -ENOMEM (rings, or the QP table is full) with
 * nothing left to undo. */
int urnic_dev_qp_create(struct urnic_dev *d, struct urnic_qp *qp, const struct urnic_ring_mem *mem,
			uint32_t max_send_wr, uint32_t max_send_sge, uint32_t max_recv_wr,
			uint32_t max_recv_sge);

/* Takes qp out of the engine under the device lock (a held ACK leaves, dated by the
 * device clock), then frees its rings (after unlocking: mem's put may be the
 * application's). */
void urnic_dev_qp_destroy(struct urnic_dev *d, struct urnic_qp *qp);

/* ibv_modify_qp under the device lock: checks the transition and attributes (IBTA 10.3.1
 * table 91; with URNIC_QP_CUR_STATE in mask, that the QP is in cur), chooses the UDP
 * source port of a new address vector or destination QP (into attr->peer.sport) and
 * applies attr's fields named in mask and, with URNIC_QP_STATE, the move to next. A QP
 * moved to ERR gets a pass soon to flush its work. Returns 0, and in *state the QP's
 * state as the lock is released, or -EINVAL (nothing changed). */
int urnic_dev_qp_modify(struct urnic_dev *d, struct urnic_qp *qp, struct urnic_qp_attr *attr,
			enum urnic_qp_state cur, enum urnic_qp_state next, uint32_t mask,
			enum urnic_qp_state *state);

/* Who the QP's async events name from now on (qp->owner; NULL: nobody), under the
 * device lock, which the engine's event hooks run under. */
void urnic_dev_qp_set_owner(struct urnic_dev *d, struct urnic_qp *qp, void *owner);

/* The QP's state and attributes, read together under the device lock. */
void urnic_dev_qp_query(struct urnic_dev *d, const struct urnic_qp *qp, enum urnic_qp_state *state,
			struct urnic_qp_attr *attr);

/* Work was posted to QP qpn (its ring's prod stored before): the next pass visits it.
 * The post path's doorbell bit (engine.h, urnic_engine_doorbell): an atomic or, no lock,
 * inlined. Context: any thread. */
static inline void urnic_dev_qp_posted(struct urnic_dev *d, uint32_t qpn)
{
	urnic_engine_doorbell(d->eng, qpn);
}

/* ---- multicast (ibv_attach_mcast(3), ibv_detach_mcast(3)) ---- */

/* Attaches QP qpn to the group at ip (as struct urnic_peer keeps an address) under the
 * device lock; the group's first QP joins it on the address's interface. 0 (attached
 * now or before), -EINVAL (not a multicast address), -ENOMEM (max_mcast_grp or
 * max_mcast_qp_attach reached) or the transport's error (-ENODEV: no multicast route).
 * *attached, the QP's count of groups, is incremented under the lock when it attaches. */
int urnic_dev_mcast_attach(struct urnic_dev *d, uint32_t qpn, const uint8_t ip[16],
			   uint32_t *attached);

/* Detaches QP qpn under the device lock (the group's last QP leaves it). 0, or -EINVAL
 * (not attached, or not a multicast address); *attached is decremented under the lock. */
int urnic_dev_mcast_detach(struct urnic_dev *d, uint32_t qpn, const uint8_t ip[16],
			   uint32_t *attached);

/* ---- completion queues ---- */

/* A ring for cqe completions from mem (NULL: calloc), its completions timestamped by
 * the device's engine clock if timestamps (ts_ns, the device clock: device.h). 0 or
 * -ENOMEM. */
int urnic_dev_cq_create(struct urnic_dev *d, struct urnic_cq *cq, uint32_t cqe,
			const struct urnic_ring_mem *mem, bool timestamps);

/* Stops events to the CQ's channel under the device lock (the engine may be delivering
 * one), then frees its ring. The QPs that used it are gone. */
void urnic_dev_cq_destroy(struct urnic_dev *d, struct urnic_cq *cq);

/* A new ring for cqe completions from the CQ's allocator, made and freed outside any
 * lock, swapped in under the device lock (the engine pushes) and the CQ's poll_lock
 * (pollers). 0, -EINVAL (more completions unpolled) or -ENOMEM. */
int urnic_dev_cq_resize(struct urnic_dev *d, struct urnic_cq *cq, uint32_t cqe);

/* ---- shared receive queues ---- */

/* The SRQ's ring from mem (NULL: calloc; the engine sees an SRQ only through the QPs
 * that use it). 0 or -ENOMEM; urnic_dev_srq_destroy frees it. No lock. */
int urnic_dev_srq_create(struct urnic_srq *srq, uint32_t max_wr, uint32_t max_sge,
			 const struct urnic_ring_mem *mem);
void urnic_dev_srq_destroy(struct urnic_srq *srq);

/* An XRC SRQ (srq->xrcd, srq->cq set) into the engine's table under the device lock: it
 * gets its number (srq->srqn), and requests naming it reach it. 0 or -ENOMEM. remove
 * takes it out under the lock, before its ring is freed (engine.h). */
int urnic_dev_xrc_srq_add(struct urnic_dev *d, struct urnic_srq *srq);
void urnic_dev_xrc_srq_remove(struct urnic_dev *d, struct urnic_srq *srq);

/* Arms the SRQ limit event (0: disarms), under the device lock: the engine reads and
 * disarms it there (queue/srq.h). */
void urnic_dev_srq_set_limit(struct urnic_dev *d, struct urnic_srq *srq, uint32_t limit);
/* The armed limit (0 once the event fired), read under the device lock. */
uint32_t urnic_dev_srq_get_limit(struct urnic_dev *d, const struct urnic_srq *srq);

/* ---- events ---- */

/* What the engine reports to the verbs layer, each under the device lock from the
 * engine's pass: a QP fell into error by itself, with the event to raise (IBTA 11.6.3.1,
 * engine/core.h: never URNIC_QP_EV_NONE), a QP on an SRQ entered error (Last WQE
 * Reached, IBTA 10.2.9), an armed SRQ fell below its limit (the engine has disarmed it).
 * Any may be NULL. */
struct urnic_dev_events {
	void (*qp_error)(struct urnic_qp *qp, enum urnic_qp_event ev);
	void (*qp_last_wqe)(struct urnic_qp *qp);
	void (*srq_limit)(struct urnic_srq *srq);
};

/* Installs ev in the device's engine. One table serves the whole process (every
 * device reports to the same verbs layer): ev must stay valid, and every call must pass
 * the same table. No lock, as the hooks were installed at each open before. */
void urnic_dev_events_set(struct urnic_dev *d, const struct urnic_dev_events *ev);

#endif
