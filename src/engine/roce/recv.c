/* SPDX-License-Identifier: MIT */
/*
 * recv.c - the receiving half of the message pieces shared by the RC, UC and UD
 * protocol parts: opcode sequence and length checks (IBTA 9.7.5.1.4, 9.7.5.1.6),
 * receive WQEs from the RQ or the SRQ (10.2.9) and their completions, SEND placement,
 * the R_Key check of every WRITE packet (9.7.5.1.7) and the flush of a QP's receives.
 * Each caller turns a failed check into a NAK (RC), a silent drop (UC/UD) or a
 * completion error.
 */
#include <errno.h>
#include <string.h>

#include "engine/roce/rc.h"
#include "engine/roce/tm.h"
#include "mem/mw.h"
#include "mem/odp.h"
#include "mem/sge.h"
#include "wire/psn.h"

bool urnic_roce_op_sequence_ok(const struct urnic_resp *r, uint32_t flags)
{
	bool first = flags & URNIC_OPF_FIRST;

	if (r->in_send)
		return (flags & URNIC_OPF_SEND) && !first;
	if (r->in_write)
		return (flags & URNIC_OPF_WRITE) && !first;
	return first;
}

bool urnic_roce_payload_len_ok(uint32_t flags, uint32_t payload_bytes, uint32_t mtu)
{
	if (!(flags & URNIC_OPF_PAYLOAD))
		return true;
	return (flags & URNIC_OPF_LAST) ? payload_bytes <= mtu : payload_bytes == mtu;
}

static void srq_took_one(struct urnic_engine *e, struct urnic_srq *srq)
{
	/* IBTA 10.2.9: an armed limit fires once, when fewer WQEs than the limit are left,
	 * and disarms (rxe get_srq_wqe()). */
	if (srq->limit && urnic_srq_count(srq) < srq->limit) {
		srq->limit = 0;
		urnic_count(e, URNIC_CTR_srq_limit_reached);
		if (e->hooks.srq_limit)
			e->hooks.srq_limit(e, srq);
	}
}

bool urnic_roce_take_rwqe(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_resp *r = &qp->resp;
	struct urnic_wq *q = qp->srq ? &qp->srq->rq : &qp->rq;
	uint32_t cons = atomic_load_explicit(&q->cons, memory_order_relaxed);

	if (r->have_rwqe)
		return true;
	if (cons == atomic_load_explicit(&q->prod, memory_order_acquire))
		return false;
	if (qp->srq) {
		/* Taken out of the shared ring at once, so that another QP's message cannot
		 * take the same WQE while this one is in progress. */
		const struct urnic_recv_wqe *w = urnic_wq_slot(q, cons);
		uint32_t nsge = w->num_sge <= URNIC_MAX_SGE ? w->num_sge : URNIC_MAX_SGE;

		memcpy(&r->srq_wqe, w, offsetof(struct urnic_recv_wqe, sge));
		memcpy(r->srq_wqe.sge, w->sge, nsge * sizeof(w->sge[0]));
		r->srq_wqe.num_sge = nsge;
		atomic_store_explicit(&q->cons, cons + 1, memory_order_release);
		srq_took_one(e, qp->srq);
	}
	r->have_rwqe = true;
	r->rwqe_off = 0;
	return true;
}

const struct urnic_recv_wqe *urnic_roce_rwqe(const struct urnic_qp *qp)
{
	if (qp->srq)
		return &qp->resp.srq_wqe;
	return urnic_wq_slot(&qp->rq, atomic_load_explicit(&qp->rq.cons, memory_order_relaxed));
}

int urnic_roce_place(struct urnic_engine *e, struct urnic_qp *qp, const uint8_t *data, uint32_t len)
{
	const struct urnic_recv_wqe *rw = urnic_roce_rwqe(qp);
	/* The SGEs of an SRQ's WQEs belong to the SRQ's protection domain (IBTA 10.2.9). */
	const struct urnic_pd *pd = qp->srq ? qp->srq->pd : qp->pd;
	uint32_t off = qp->resp.rwqe_off;
	int ret;

	if (off > rw->length || len > rw->length - off)
		return -EMSGSIZE; /* IBTA 9.7.5.1.6: message longer than the receive buffer */
	if (len) {
		ret = urnic_sge_scatter(&e->mrs, pd, rw->sge, rw->num_sge, off, data, len);
		if (ret == -ENXIO)
			urnic_count(e, URNIC_CTR_odp_fault_local);
		if (ret)
			return ret == -EMSGSIZE ? -EMSGSIZE : -EFAULT;
	}
	qp->resp.rwqe_off = off + len;
	return 0;
}

static void push_rwqe_cqe(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_cqe *cqe,
			  bool solicited)
{
	struct urnic_resp *r = &qp->resp;
	struct urnic_cq *cq = urnic_roce_tm_qp(qp) ? urnic_roce_tm_cqe(qp, cqe) : qp->recv_cq;

	cqe->wr_id = urnic_roce_rwqe(qp)->wr_id;
	cqe->qp_num = qp->qpn;
	r->have_rwqe = false;
	r->rwqe_off = 0;
	if (!qp->srq)
		atomic_store_explicit(&qp->rq.cons,
				      atomic_load_explicit(&qp->rq.cons, memory_order_relaxed) + 1,
				      memory_order_release);
	urnic_complete(e, qp, cq, cqe, solicited);
}

void urnic_roce_complete_rwqe(struct urnic_engine *e, struct urnic_qp *qp,
			      const struct urnic_pkt *pkt, uint8_t opcode, uint32_t byte_len,
			      uint8_t status)
{
	uint32_t flags = urnic_opcode_info(pkt->bth.opcode)->flags;
	struct urnic_cqe cqe = {
		.status = status,
		.opcode = opcode,
		.byte_len = byte_len,
		.src_qp = qp->attr.dest_qp_num,
	};

	if (qp->type == URNIC_QPT_UD) {
		/* IBTA 11.4.2.1: a UD completion names the sender's QP and says that the
		 * buffer starts with a GRH (RoCEv2 always has one). */
		cqe.src_qp = pkt->deth.sqpn;
		cqe.wc_flags |= URNIC_WC_WITH_GRH;
		cqe.sl = URNIC_WC_SL_ROCE_UDP |
			 (e->cfg.ipv6 ? URNIC_WC_SL_L3_IPV6 : URNIC_WC_SL_L3_IPV4);
	}
	if (flags & URNIC_OPF_IMMDT) {
		cqe.wc_flags |= URNIC_WC_WITH_IMM;
		cqe.imm_be = pkt->imm_be;
	} else if (flags & URNIC_OPF_IETH) {
		cqe.wc_flags |= URNIC_WC_WITH_INV;
		cqe.imm_be = pkt->ieth_rkey;
	}
	push_rwqe_cqe(e, qp, &cqe, pkt->bth.se);
}

void urnic_roce_flush_held_rwqe(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_cqe cqe = {
		.status = URNIC_WC_WR_FLUSH_ERR,
		.opcode = URNIC_WC_RECV,
	};

	if (!qp->srq || !qp->resp.have_rwqe || !qp->recv_cq)
		return;
	push_rwqe_cqe(e, qp, &cqe, false);
}

int urnic_roce_recv_send(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
			 uint32_t flags)
{
	struct urnic_resp *r = &qp->resp;
	/* Tag matching: a matched message's TMH is not placed (tm.c). */
	uint32_t skip = urnic_roce_tm_qp(qp) ? urnic_roce_tm_skip(qp, pkt, flags) : 0;
	int ret = urnic_roce_place(e, qp, pkt->payload + skip, pkt->payload_bytes - skip);

	if (ret) {
		r->in_send = false;
		return ret;
	}
	r->in_send = !(flags & URNIC_OPF_LAST);
	if (!(flags & URNIC_OPF_LAST))
		return 0;
	if (r->tm.kind == URNIC_TM_MSG_RNDV) {
		/* A matched rendezvous request: its READ completes the tag (tm.c). */
		r->tm.kind = URNIC_TM_MSG_NONE;
		return 0;
	}
	/* IBTA 9.4.1.2 / o10-37.2.x: a SEND with Invalidate invalidates the R_Key its IETH
	 * names before the receive completes (rxe execute()); if the key is not a type 2B
	 * window bound through this QP, the WQE completes in error (class J). */
	if ((flags & URNIC_OPF_IETH) &&
	    urnic_mw_invalidate(&e->mrs, qp->pd, qp->qpn, pkt->ieth_rkey) != URNIC_MR_OK) {
		urnic_roce_complete_rwqe(e, qp, pkt, URNIC_WC_RECV, r->rwqe_off,
					 URNIC_WC_REM_INV_REQ_ERR);
		return -EKEYREJECTED;
	}
	urnic_roce_complete_rwqe(e, qp, pkt, URNIC_WC_RECV, r->rwqe_off, URNIC_WC_SUCCESS);
	return 0;
}

void urnic_roce_recv_too_long(struct urnic_engine *e, struct urnic_qp *qp,
			      const struct urnic_pkt *pkt)
{
	urnic_count(e, URNIC_CTR_drop_recv_too_long);
	qp->resp.in_send = false;
	qp->resp.rwqe_off = 0;
	if (qp->srq)
		urnic_roce_complete_rwqe(e, qp, pkt, URNIC_WC_RECV, 0, URNIC_WC_REM_INV_REQ_ERR);
}

enum urnic_roce_write_check urnic_roce_write_check(struct urnic_engine *e, struct urnic_qp *qp,
						   const struct urnic_pkt *pkt, uint32_t flags,
						   struct urnic_mr_at *at)
{
	struct urnic_resp *r = &qp->resp;

	*at = (struct urnic_mr_at){ 0 };
	if (!(flags & URNIC_OPF_FIRST)) {
		/* MIDDLE: strictly less than what is left; LAST: exactly what is left. */
		if ((flags & URNIC_OPF_LAST) ? pkt->payload_bytes != r->write_resid
					     : pkt->payload_bytes >= r->write_resid)
			return ROCE_WRITE_BAD_LENGTH;
		/* IBTA 9.7.5.1.7 and 10.6.7: the key is checked for every packet that
		 * touches memory, so deregistering a region or revoking a window takes
		 * effect inside a message (as READ responses do, resources.c read_reply). */
		if (urnic_mr_resolve_remote(&e->mrs, qp->pd, qp->qpn, r->write_rkey, r->write_va,
					    pkt->payload_bytes, URNIC_ACCESS_REMOTE_WRITE,
					    at) != URNIC_MR_OK ||
		    at->gen != r->write_gen) {
			urnic_count(e, URNIC_CTR_write_key_revoked);
			return ROCE_WRITE_BAD_ACCESS;
		}
		return ROCE_WRITE_OK;
	}
	if (pkt->reth.len > e->cfg.max_msg_bytes ||
	    ((flags & URNIC_OPF_LAST) ? pkt->payload_bytes != pkt->reth.len
				      : pkt->reth.len <= qp->attr.path_mtu))
		return ROCE_WRITE_BAD_LENGTH;
	/* IBTA 9.7.5.1.7: R_Key, bounds and rights for the whole WRITE. A zero-length
	 * WRITE checks no R_Key, like a zero-length READ (C9-88). */
	if (pkt->reth.len &&
	    urnic_mr_resolve_remote(&e->mrs, qp->pd, qp->qpn, pkt->reth.rkey, pkt->reth.va,
				    pkt->reth.len, URNIC_ACCESS_REMOTE_WRITE, at) != URNIC_MR_OK)
		return ROCE_WRITE_BAD_ACCESS;
	r->write_gen = at->gen;
	r->write_rkey = pkt->reth.rkey;
	r->write_va = pkt->reth.va;
	r->write_resid = pkt->reth.len;
	r->write_len = pkt->reth.len;
	return ROCE_WRITE_OK;
}

int urnic_roce_recv_write(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
			  uint32_t flags, const struct urnic_mr_at *at)
{
	struct urnic_resp *r = &qp->resp;

	if (pkt->payload_bytes) {
		if (!at->odp) {
			memcpy(at->host, pkt->payload, pkt->payload_bytes);
		} else if (urnic_odp_write(e->mrs.odp, at->host, pkt->payload,
					   pkt->payload_bytes)) {
			urnic_count(e, URNIC_CTR_odp_fault_remote);
			return -EFAULT;
		}
	}
	r->write_va += pkt->payload_bytes;
	r->write_resid -= pkt->payload_bytes;
	r->in_write = !(flags & URNIC_OPF_LAST);
	if ((flags & URNIC_OPF_LAST) && (flags & URNIC_OPF_IMMDT))
		urnic_roce_complete_rwqe(e, qp, pkt, URNIC_WC_RECV_RDMA_WITH_IMM, r->write_len,
					 URNIC_WC_SUCCESS);
	return 0;
}

void urnic_roce_flush_rq(struct urnic_engine *e, struct urnic_qp *qp)
{
	uint32_t cons = atomic_load_explicit(&qp->rq.cons, memory_order_relaxed);
	uint32_t prod = atomic_load_explicit(&qp->rq.prod, memory_order_acquire);

	/* With an SRQ only the WQE this QP took out of it is the QP's to flush; the rest
	 * stays in the shared ring for the other QPs (IBTA 10.2.9). */
	if (qp->srq) {
		urnic_roce_flush_held_rwqe(e, qp);
		return;
	}
	if (!qp->recv_cq || qp->rq.depth == 0)
		return;
	for (; cons != prod; cons++) {
		const struct urnic_recv_wqe *w = urnic_wq_slot(&qp->rq, cons);
		struct urnic_cqe cqe = {
			.wr_id = w->wr_id,
			.status = URNIC_WC_WR_FLUSH_ERR,
			.opcode = URNIC_WC_RECV,
			.qp_num = qp->qpn,
		};

		if (!urnic_cq_has_room(qp->recv_cq)) {
			urnic_count(e, URNIC_CTR_cq_overflow);
			break;
		}
		/* The slot is free before its completion is visible, as for sends
		 * (urnic_roce_complete_swqe): a reaper that reposts at once finds room. */
		atomic_store_explicit(&qp->rq.cons, cons + 1, memory_order_release);
		urnic_cq_push(qp->recv_cq, &cqe, false);
	}
	qp->resp.have_rwqe = false;
}
