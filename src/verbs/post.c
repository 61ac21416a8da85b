/* SPDX-License-Identifier: MIT */
/*
 * post.c - ibv_post_send and ibv_post_recv (and the ring part of ibv_post_srq_recv):
 * the application side of the work queues.
 *
 * ibv_post_send(3): a WR is checked (QP state, opcode for the transport, SGE count,
 * inline size, queue room, a UD WR's address handle) and copied into the send ring,
 * a UD WR with a copy of its AH's destination; on the first bad WR the
 * call stops, sets *bad_wr and returns the errno the man page lists (EINVAL, ENOMEM).
 * Inline data is copied at post time, as IBTA 10.8.3 allows (the buffer is free on
 * return). No lock but the queue's own, no system call unless the engine sleeps.
 * Memory window binds (the window's R_Key at post time is what names it), local
 * invalidate and SEND with invalidate carry no data; ATOMIC_WRITE carries exactly 8
 * bytes (IBTA A19.4.2), from its SGEs or inline. FLUSH has no ibv_send_wr form: only
 * ibv_wr_flush posts it (as in rdma-core). An XRC send QP's WR names the SRQ at the
 * target (qp_type.xrc.remote_srqn); an XRC receive QP has no queue to post to (EINVAL).
 */
#include <errno.h>
#include <string.h>

#include "verbs/verbs.h"

_Static_assert((int)IBV_WR_SEND == (int)URNIC_WR_SEND &&
		       (int)IBV_WR_RDMA_READ == (int)URNIC_WR_RDMA_READ &&
		       (int)IBV_WR_ATOMIC_FETCH_AND_ADD == (int)URNIC_WR_ATOMIC_FETCH_AND_ADD &&
		       (int)IBV_WR_SEND_WITH_INV == (int)URNIC_WR_SEND_WITH_INV &&
		       (int)IBV_WR_LOCAL_INV == (int)URNIC_WR_LOCAL_INV &&
		       (int)IBV_WR_BIND_MW == (int)URNIC_WR_BIND_MW &&
		       (int)IBV_WR_ATOMIC_WRITE == (int)URNIC_WR_ATOMIC_WRITE &&
		       URNIC_IBV_WR_FLUSH == (int)URNIC_WR_FLUSH,
	       "work request opcodes");
_Static_assert((int)IBV_SEND_SIGNALED == (int)URNIC_SEND_SIGNALED &&
		       (int)IBV_SEND_INLINE == (int)URNIC_SEND_INLINE &&
		       (int)IBV_SEND_FENCE == (int)URNIC_SEND_FENCE &&
		       (int)IBV_SEND_SOLICITED == (int)URNIC_SEND_SOLICITED,
	       "send flags");

/* The operations of each transport (IBTA 9.8: UC has SEND and RDMA WRITE, UD only
 * SEND; binds on RC and UC, the rest RC only, as rxe's rxe_wr_opcode_info[]). */
static bool opcode_ok(enum urnic_qp_type t, uint32_t op)
{
	/* XRC (IBTA A14): SEND, WRITE, READ and atomics from a send QP (engine/roce/msg.c
	 * says why no more); nothing from a receive QP. */
	if (t == URNIC_QPT_XRC_RECV)
		return false;
	if (t == URNIC_QPT_XRC_SEND)
		return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE ||
		       op == IBV_WR_RDMA_WRITE_WITH_IMM || op == IBV_WR_RDMA_READ ||
		       op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
	if (t == URNIC_QPT_RAW_PACKET) /* a frame: SEND only (engine/raw.h) */
		return op == IBV_WR_SEND;
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return true;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_BIND_MW:
		return t != URNIC_QPT_UD;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_LOCAL_INV:
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_ATOMIC_WRITE:
	case URNIC_IBV_WR_FLUSH:
		return t == URNIC_QPT_RC;
	default:
		return false;
	}
}

/* Work requests whose SGEs (or inline data) are a message. */
static bool carries_data(uint32_t op)
{
	return op != IBV_WR_BIND_MW && op != IBV_WR_LOCAL_INV && op != URNIC_IBV_WR_FLUSH;
}

/* The SGEs' bytes into the WQE (inline data). An empty SGE may have address 0 (UCX's
 * empty messages): nothing is read, and memcpy may not be given a null pointer even for
 * no bytes (C11 7.24.1p2). */
static void copy_inline(struct urnic_send_wqe *w, const struct ibv_send_wr *wr)
{
	uint32_t off = 0;

	for (int i = 0; i < wr->num_sge; i++) {
		if (!wr->sg_list[i].length)
			continue;
		memcpy(w->inline_data + off, (const void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		off += wr->sg_list[i].length;
	}
}

int urnic_fill_send_wqe(struct urnic_qp *qp, struct urnic_send_wqe *w, const struct ibv_send_wr *wr)
{
	uint64_t total = 0;

	if (!opcode_ok(qp->type, (uint32_t)wr->opcode))
		return EINVAL;
	if (urnic_container_of(qp, struct urnic_vqp, qp)->iwarp &&
	    !urnic_iw_opcode_ok((uint32_t)wr->opcode))
		return EINVAL; /* RFC 5040 has no such operation (libsiw: EINVAL) */
	/* UD: the destination comes with every WR (ibv_post_send(3) wr.ud). */
	if (qp->type == URNIC_QPT_UD) {
		if (!wr->wr.ud.ah)
			return EINVAL;
		w->ud_dst = to_vah(wr->wr.ud.ah)->peer;
		w->ud_remote_qpn = wr->wr.ud.remote_qpn & 0xffffff;
		w->ud_remote_qkey = wr->wr.ud.remote_qkey;
	}
	if (qp->type == URNIC_QPT_XRC_SEND)
		w->xrc_srqn = wr->qp_type.xrc.remote_srqn & 0xffffff;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->sq.max_sge)
		return EINVAL;
	if (carries_data((uint32_t)wr->opcode))
		for (int i = 0; i < wr->num_sge; i++)
			total += wr->sg_list[i].length;
	if (total > (1ull << 31))
		return EINVAL;
	/* IBTA A19.4.2: an ATOMIC_WRITE is 8 bytes. */
	if (wr->opcode == IBV_WR_ATOMIC_WRITE && total != 8)
		return EINVAL;
	if (wr->opcode == IBV_WR_BIND_MW && !wr->bind_mw.mw)
		return EINVAL;
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->flags = wr->send_flags;
	w->imm_be = wr->imm_data;
	w->length = (uint32_t)total;
	w->started = false;
	w->done = false;
	w->status = URNIC_WC_SUCCESS;
	w->role = URNIC_SWQE_APP;
	w->remote_len = 0;
	switch ((uint32_t)wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_WRITE:
	case URNIC_IBV_WR_FLUSH:
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_LOCAL_INV:
	case IBV_WR_SEND_WITH_INV:
		w->remote_addr = 0;
		w->rkey = wr->invalidate_rkey;
		break;
	case IBV_WR_BIND_MW:
		/* The window is named by its R_Key now; the new one takes the consumer key
		 * of bind_mw.rkey (IBTA 10.6.7.3). */
		w->mw_rkey = wr->bind_mw.mw->rkey;
		w->rkey = wr->bind_mw.rkey;
		w->mr_lkey = wr->bind_mw.bind_info.mr ? wr->bind_mw.bind_info.mr->lkey : 0;
		w->remote_addr = wr->bind_mw.bind_info.addr;
		w->remote_len = wr->bind_mw.bind_info.length;
		w->mw_access = wr->bind_mw.bind_info.mw_access_flags;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		w->remote_addr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->swap = wr->wr.atomic.swap;
		break;
	default:
		w->remote_addr = 0;
		w->rkey = 0;
		break;
	}
	/* Inline applies to SEND and WRITE only (ibv_post_send(3)), and to the 8 bytes of
	 * an ATOMIC_WRITE, which always fit in the WQE (ibv_wr_atomic_write copies them). */
	if (!carries_data((uint32_t)wr->opcode)) {
		w->flags &= ~(uint32_t)IBV_SEND_INLINE;
		w->num_sge = 0;
	} else if ((wr->send_flags & IBV_SEND_INLINE) && wr->opcode != IBV_WR_RDMA_READ &&
		   wr->opcode != IBV_WR_ATOMIC_CMP_AND_SWP &&
		   wr->opcode != IBV_WR_ATOMIC_FETCH_AND_ADD) {
		if (total > qp->sq.max_inline && wr->opcode != IBV_WR_ATOMIC_WRITE)
			return EINVAL;
		copy_inline(w, wr);
		w->num_sge = 0;
	} else {
		w->flags &= ~(uint32_t)IBV_SEND_INLINE;
		w->num_sge = (uint32_t)wr->num_sge;
		for (int i = 0; i < wr->num_sge; i++)
			w->sge[i] = (struct urnic_sge){ wr->sg_list[i].addr, wr->sg_list[i].length,
							wr->sg_list[i].lkey };
	}
	return 0;
}

int urnic_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct urnic_vqp *v = to_vqp(ibqp);
	struct urnic_qp *qp = &v->qp;
	struct urnic_wq *sq = &qp->sq;
	uint32_t prod, cons, last_len = 0;
	int ret = 0;

	/* IBTA 10.3.1 table 90: posting to the send queue needs RTS (or ERR, where the
	 * work is flushed); an XRC receive QP has none (IBTA A14). */
	if ((qp->state != URNIC_QPS_RTS && qp->state != URNIC_QPS_ERR) ||
	    qp->type == URNIC_QPT_XRC_RECV) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&sq->lock);
	prod = atomic_load_explicit(&sq->prod, memory_order_relaxed);
	cons = atomic_load_explicit(&sq->cons, memory_order_acquire);
	for (; wr; wr = wr->next) {
		if (prod - cons >= sq->max_wr) {
			ret = ENOMEM;
			break;
		}
		/* FLUSH has no ibv_send_wr fields: ibv_wr_flush only. */
		if ((uint32_t)wr->opcode == URNIC_IBV_WR_FLUSH) {
			ret = EINVAL;
			break;
		}
		ret = urnic_fill_send_wqe(qp, urnic_wq_slot(sq, prod), wr);
		if (ret)
			break;
		last_len = ((struct urnic_send_wqe *)urnic_wq_slot(sq, prod))->length;
		prod++;
	}
	atomic_store_explicit(&sq->prod, prod, memory_order_release);
	pthread_spin_unlock(&sq->lock);
	if (ret)
		*bad_wr = wr;
	urnic_send_doorbell(v, last_len);
	return ret;
}

/* Requests of at most this many packets may wait for the next pass in a streak of
 * posts (dev/post_batch.h). Measured with ib_write_bw: 8 B 0.2 -> 1.1 Mpps,
 * 8 KiB +25 %, 16 KiB unchanged; 64 KiB messages mostly find the window full, and
 * holding them only made the application poll more. */
#define POST_BATCH_PKTS 4u

void urnic_send_doorbell(struct urnic_vqp *v, uint32_t last_len)
{
	/* The next pass visits this QP (the engine's passes skip idle QPs); then send
	 * now from this thread if the pipeline is free (or leave it to the next pass, in
	 * a streak of small posts); else make sure the engine thread is awake to do it. */
	urnic_dev_qp_posted(v->dev, v->qp.qpn);
	if (!urnic_dev_doorbell(v->dev, last_len <= POST_BATCH_PKTS * v->qp.attr.path_mtu))
		urnic_dev_kick(v->dev);
}

int urnic_post_recv_ring(struct urnic_wq *rq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	uint32_t prod, cons;
	int ret = 0;

	pthread_spin_lock(&rq->lock);
	prod = atomic_load_explicit(&rq->prod, memory_order_relaxed);
	cons = atomic_load_explicit(&rq->cons, memory_order_acquire);
	for (; wr; wr = wr->next) {
		struct urnic_recv_wqe *w;
		uint64_t total = 0;

		if (prod - cons >= rq->max_wr) {
			ret = ENOMEM;
			break;
		}
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_sge) {
			ret = EINVAL;
			break;
		}
		w = urnic_wq_slot(rq, prod);
		w->wr_id = wr->wr_id;
		w->num_sge = (uint32_t)wr->num_sge;
		for (int i = 0; i < wr->num_sge; i++) {
			w->sge[i] = (struct urnic_sge){ wr->sg_list[i].addr, wr->sg_list[i].length,
							wr->sg_list[i].lkey };
			total += wr->sg_list[i].length;
		}
		w->length = total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
		prod++;
	}
	atomic_store_explicit(&rq->prod, prod, memory_order_release);
	pthread_spin_unlock(&rq->lock);
	if (ret)
		*bad_wr = wr;
	return ret;
}

int urnic_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct urnic_vqp *v = to_vqp(ibqp);
	struct urnic_qp *qp = &v->qp;
	int ret;

	/* IBTA 10.3.1 table 90: receives may be posted from INIT on, not in RESET; a QP
	 * on an SRQ has no receive queue of its own (ibv_post_recv(3): EINVAL). */
	if (qp->state == URNIC_QPS_RESET || qp->srq || qp->type == URNIC_QPT_XRC_SEND ||
	    qp->type == URNIC_QPT_XRC_RECV) {
		*bad_wr = wr;
		return EINVAL;
	}
	ret = urnic_post_recv_ring(&qp->rq, wr, bad_wr);
	/* A pass looks at the QP again: it awaits a receive now, or flushes it in error. */
	urnic_dev_qp_posted(v->dev, qp->qpn);
	if (qp->state == URNIC_QPS_ERR)
		urnic_dev_kick(v->dev);
	return ret;
}
