/* SPDX-License-Identifier: MIT */
/*
 * msg.c - the sending half of the message pieces shared by the RC, UC and UD protocol
 * parts (recv.c has the receiving half). See msg.h.
 *
 * Nothing here decides what a failure means on the wire: each caller turns a failed
 * check into a NAK (RC), a silent drop (UC/UD) or a completion error.
 */
#include <errno.h>
#include <string.h>

#include "engine/roce/cc.h"
#include "engine/roce/rc.h"
#include "engine/roce/tm.h"
#include "mem/mw.h"
#include "mem/sge.h"
#include "wire/psn.h"

/* IBTA 9.2.1: the UC SEND and RDMA WRITE opcodes are the RC ones in the UC range, the
 * XRC opcodes (Annex A14) the RC ones in the XRC range: the builders here write RC
 * opcodes and urnic_roce_emit_to puts them under the QP type's transport. */
enum { UC_OPCODE_OFFSET = URNIC_OP_UC_SEND_FIRST - URNIC_OP_RC_SEND_FIRST };
enum { XRC_OPCODE_OFFSET = URNIC_OP_XRC_SEND_FIRST - URNIC_OP_RC_SEND_FIRST };
_Static_assert(URNIC_OP_XRC_RDMA_READ_RESPONSE_ONLY ==
			       URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY + XRC_OPCODE_OFFSET &&
		       URNIC_OP_XRC_ATOMIC_ACKNOWLEDGE ==
			       URNIC_OP_RC_ATOMIC_ACKNOWLEDGE + XRC_OPCODE_OFFSET &&
		       URNIC_OP_XRC_FETCH_ADD == URNIC_OP_RC_FETCH_ADD + XRC_OPCODE_OFFSET &&
		       URNIC_OP_XRC_SEND_ONLY_WITH_INVALIDATE ==
			       URNIC_OP_RC_SEND_ONLY_WITH_INVALIDATE + XRC_OPCODE_OFFSET,
	       "XRC opcodes are RC opcodes + 0xa0");
_Static_assert(URNIC_OP_UC_SEND_LAST_WITH_IMMEDIATE ==
			       URNIC_OP_RC_SEND_LAST_WITH_IMMEDIATE + UC_OPCODE_OFFSET &&
		       URNIC_OP_UC_SEND_ONLY_WITH_IMMEDIATE ==
			       URNIC_OP_RC_SEND_ONLY_WITH_IMMEDIATE + UC_OPCODE_OFFSET &&
		       URNIC_OP_UC_RDMA_WRITE_FIRST ==
			       URNIC_OP_RC_RDMA_WRITE_FIRST + UC_OPCODE_OFFSET &&
		       URNIC_OP_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE ==
			       URNIC_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE + UC_OPCODE_OFFSET,
	       "UC opcodes are RC opcodes + 0x20");

/* An XRC send QP carries SEND, RDMA WRITE, READ and the atomics (IBTA A14's request
 * opcodes); an XRC receive QP sends nothing. Windows bound through an XRC QP would serve
 * no request (none arrives at a send QP, a receive QP has no send queue to bind with),
 * so neither BIND_MW, LOCAL_INV nor SEND with Invalidate is offered on XRC, and A19 has
 * no XRC opcodes. */
static bool xrc_send_allowed(uint32_t wr_opcode)
{
	switch (wr_opcode) {
	case URNIC_WR_SEND:
	case URNIC_WR_SEND_WITH_IMM:
	case URNIC_WR_RDMA_WRITE:
	case URNIC_WR_RDMA_WRITE_WITH_IMM:
	case URNIC_WR_RDMA_READ:
	case URNIC_WR_ATOMIC_CMP_AND_SWP:
	case URNIC_WR_ATOMIC_FETCH_AND_ADD:
		return true;
	default:
		return false;
	}
}

bool urnic_roce_wr_allowed(enum urnic_qp_type t, uint32_t wr_opcode)
{
	if (t == URNIC_QPT_XRC_SEND)
		return xrc_send_allowed(wr_opcode);
	if (t == URNIC_QPT_XRC_RECV)
		return false;
	switch (wr_opcode) {
	case URNIC_WR_SEND:
	case URNIC_WR_SEND_WITH_IMM:
		return true;
	case URNIC_WR_RDMA_WRITE:
	case URNIC_WR_RDMA_WRITE_WITH_IMM:
		return t == URNIC_QPT_RC || t == URNIC_QPT_UC;
	case URNIC_WR_BIND_MW: /* rxe: RC and UC */
		return t == URNIC_QPT_RC || t == URNIC_QPT_UC;
	case URNIC_WR_SEND_WITH_INV: /* IBTA 9.2.1: the IETH opcodes are RC ones */
	case URNIC_WR_LOCAL_INV:     /* rxe: RC only */
	case URNIC_WR_RDMA_READ:
	case URNIC_WR_ATOMIC_CMP_AND_SWP:
	case URNIC_WR_ATOMIC_FETCH_AND_ADD:
	case URNIC_WR_ATOMIC_WRITE:
	case URNIC_WR_FLUSH:
		return t == URNIC_QPT_RC;
	default:
		return false;
	}
}

uint8_t urnic_roce_validate_swqe(struct urnic_engine *e, struct urnic_qp *qp,
				 const struct urnic_send_wqe *w)
{
	bool writes_local = w->opcode == URNIC_WR_RDMA_READ ||
			    w->opcode == URNIC_WR_ATOMIC_CMP_AND_SWP ||
			    w->opcode == URNIC_WR_ATOMIC_FETCH_AND_ADD;

	if (!urnic_roce_wr_allowed(qp->type, w->opcode))
		return URNIC_WC_LOC_QP_OP_ERR;
	/* IBTA 9.4.5: atomics operate on 8 bytes at an 8-byte aligned address. */
	if ((w->opcode == URNIC_WR_ATOMIC_CMP_AND_SWP ||
	     w->opcode == URNIC_WR_ATOMIC_FETCH_AND_ADD) &&
	    (w->length < 8 || (w->remote_addr & 7)))
		return URNIC_WC_LOC_QP_OP_ERR;
	/* IBTA A19.4.2: ATOMIC_WRITE carries exactly 8 bytes. Its alignment is the
	 * responder's to check (rxe NAKs a misaligned one, it does not refuse it here). */
	if (w->opcode == URNIC_WR_ATOMIC_WRITE && w->length != 8)
		return URNIC_WC_LOC_LEN_ERR;
	/* IBTA A19.4.1: a FLUSH names a placement type (global visibility, persistence)
	 * and a selectivity level (a range, or the whole region); it carries no data. */
	if (w->opcode == URNIC_WR_FLUSH &&
	    (w->flush_type == 0 || (w->flush_type & ~(uint32_t)URNIC_FLUSH_TYPE_MASK) ||
	     w->flush_level > URNIC_FLUSH_LEVEL_MR || w->length || w->remote_len > (1u << 31)))
		return URNIC_WC_LOC_QP_OP_ERR;
	if (w->length > e->cfg.max_msg_bytes)
		return URNIC_WC_LOC_LEN_ERR; /* IBTA C9-94 / ibv_port_attr.max_msg_sz */
	if (!(w->flags & URNIC_SEND_INLINE)) {
		/* Reads from memory need no right; READ and atomic results are written. */
		uint32_t need = writes_local ? URNIC_ACCESS_LOCAL_WRITE : 0;
		struct urnic_frag f[URNIC_MAX_SGE];

		if (urnic_sge_gather(&e->mrs, qp->pd, w->sge, w->num_sge, 0, w->length, need, f,
				     URNIC_MAX_SGE, NULL, 0) < 0)
			return URNIC_WC_LOC_PROT_ERR;
	}
	return URNIC_WC_SUCCESS;
}

uint8_t urnic_roce_wc_opcode(uint32_t wr_opcode)
{
	switch (wr_opcode) {
	case URNIC_WR_RDMA_WRITE:
	case URNIC_WR_RDMA_WRITE_WITH_IMM:
		return URNIC_WC_RDMA_WRITE;
	case URNIC_WR_RDMA_READ:
		return URNIC_WC_RDMA_READ;
	case URNIC_WR_ATOMIC_CMP_AND_SWP:
		return URNIC_WC_COMP_SWAP;
	case URNIC_WR_ATOMIC_FETCH_AND_ADD:
		return URNIC_WC_FETCH_ADD;
	case URNIC_WR_BIND_MW:
		return URNIC_WC_BIND_MW;
	case URNIC_WR_LOCAL_INV:
		return URNIC_WC_LOCAL_INV;
	case URNIC_WR_ATOMIC_WRITE:
		return URNIC_WC_ATOMIC_WRITE;
	case URNIC_WR_FLUSH:
		return URNIC_WC_FLUSH;
	default:
		return URNIC_WC_SEND;
	}
}

uint8_t urnic_roce_local_op(struct urnic_engine *e, struct urnic_qp *qp,
			    const struct urnic_send_wqe *w)
{
	if (w->opcode == URNIC_WR_BIND_MW) {
		struct urnic_mw_bind b = {
			.mw_rkey = w->mw_rkey,
			.new_rkey = w->rkey,
			.mr_lkey = w->mr_lkey,
			.addr = w->remote_addr,
			.length = w->remote_len,
			.access = w->mw_access,
		};

		/* IBTA 10.6.7.3 / rxe_bind_mw(): a failed bind completes with MW_BIND_ERR. */
		return urnic_mw_bind(&e->mrs, qp->pd, qp->qpn, &b) == URNIC_MW_BIND_OK
			       ? URNIC_WC_SUCCESS
			       : URNIC_WC_MW_BIND_ERR;
	}
	/* LOCAL_INV (IBTA 10.6.7.2.4): rxe completes a failed one with LOC_QP_OP_ERR. */
	return urnic_mw_invalidate(&e->mrs, qp->pd, qp->qpn, w->rkey) == URNIC_MR_OK
		       ? URNIC_WC_SUCCESS
		       : URNIC_WC_LOC_QP_OP_ERR;
}

struct urnic_txpkt *urnic_roce_emit_to(struct urnic_engine *e, struct urnic_qp *qp,
				       struct urnic_pkt *h, uint32_t payload_bytes,
				       const struct urnic_peer *dst, uint32_t dqpn)
{
	struct urnic_txpkt *p = urnic_tx_begin(e, qp);
	ssize_t n;

	p->dst = *dst;
	urnic_roce_cc_mark(e, qp, p);
	h->bth.opcode = (uint8_t)(qp->ops->opcode_base | (h->bth.opcode & URNIC_OPCODE_OP_MASK));
	h->bth.pkey = URNIC_DEFAULT_PKEY;
	h->bth.dqpn = dqpn;
	h->bth.pad = (uint8_t)((4 - (payload_bytes & 3)) & 3);
	n = urnic_pkt_encode_hdr(h, p->hdr, sizeof(p->hdr));
	p->hdr_bytes = n > 0 ? (uint32_t)n : 0;
	p->payload_bytes = payload_bytes;
	return p;
}

struct urnic_txpkt *urnic_roce_emit(struct urnic_engine *e, struct urnic_qp *qp,
				    struct urnic_pkt *h, uint32_t payload_bytes)
{
	return urnic_roce_emit_to(e, qp, h, payload_bytes, &qp->attr.peer, qp->attr.dest_qp_num);
}

int urnic_roce_gather(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_send_wqe *w,
		      uint32_t off, uint32_t len, struct urnic_txpkt *p)
{
	int n;

	if (len == 0)
		return 0;
	if (w->flags & URNIC_SEND_INLINE) {
		p->frags[0] = (struct urnic_frag){ w->inline_data + off, len };
		p->nfrags = 1;
		return 0;
	}
	n = urnic_sge_gather(&e->mrs, qp->pd, w->sge, w->num_sge, off, len, 0, p->frags,
			     URNIC_MAX_SGE, e->odp_bounce, sizeof(e->odp_bounce));
	if (n == -ENXIO)
		urnic_count(e, URNIC_CTR_odp_fault_local);
	if (n < 0)
		return -EFAULT;
	p->nfrags = (uint32_t)n;
	return 0;
}

/* The RC opcode of one packet of a SEND or WRITE (IBTA 9.7.4.1.1). */
static uint8_t data_opcode(const struct urnic_send_wqe *w, bool first, bool last)
{
	/* Indexed by first | last << 1. */
	static const uint8_t send[4] = { URNIC_OP_RC_SEND_MIDDLE, URNIC_OP_RC_SEND_FIRST,
					 URNIC_OP_RC_SEND_LAST, URNIC_OP_RC_SEND_ONLY };
	static const uint8_t write[4] = { URNIC_OP_RC_RDMA_WRITE_MIDDLE,
					  URNIC_OP_RC_RDMA_WRITE_FIRST, URNIC_OP_RC_RDMA_WRITE_LAST,
					  URNIC_OP_RC_RDMA_WRITE_ONLY };
	int k = (first ? 1 : 0) | (last ? 2 : 0);

	switch (w->opcode) {
	case URNIC_WR_SEND_WITH_IMM:
		if (last)
			return first ? URNIC_OP_RC_SEND_ONLY_WITH_IMMEDIATE
				     : URNIC_OP_RC_SEND_LAST_WITH_IMMEDIATE;
		return send[k];
	case URNIC_WR_SEND_WITH_INV:
		if (last)
			return first ? URNIC_OP_RC_SEND_ONLY_WITH_INVALIDATE
				     : URNIC_OP_RC_SEND_LAST_WITH_INVALIDATE;
		return send[k];
	case URNIC_WR_RDMA_WRITE:
		return write[k];
	case URNIC_WR_RDMA_WRITE_WITH_IMM:
		if (last)
			return first ? URNIC_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE
				     : URNIC_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE;
		return write[k];
	default:
		return send[k];
	}
}

bool urnic_roce_send_data_packet(struct urnic_engine *e, struct urnic_qp *qp,
				 const struct urnic_send_wqe *w, int *err)
{
	struct urnic_req *r = &qp->req;
	uint32_t mtu = qp->attr.path_mtu;
	uint32_t off = r->off_bytes;
	uint32_t n = w->length - off < mtu ? w->length - off : mtu;
	bool first = off == 0, last = off + n == w->length;
	struct urnic_pkt h = { 0 };
	struct urnic_txpkt *p;

	h.bth.opcode = data_opcode(w, first, last);
	h.bth.psn = r->psn;
	h.xrc_srqn = w->xrc_srqn; /* XRC: every packet names the target's SRQ (IBTA A14) */
	/* IBTA 9.2.3 SE: on the last packet of a solicited SEND / WRITE with immediate. */
	h.bth.se = last && (w->flags & URNIC_SEND_SOLICITED);
	/* RC (and XRC) asks for an ACK at the end of a message and inside long ones (as
	 * rxe); UC is never acknowledged (IBTA 9.8: AckReq is 0). */
	if (qp->type != URNIC_QPT_UC) {
		h.bth.ackreq = last || ++r->noack_pkts > URNIC_ACKREQ_EVERY;
		if (h.bth.ackreq)
			r->noack_pkts = 0;
	}
	if (first &&
	    (w->opcode == URNIC_WR_RDMA_WRITE || w->opcode == URNIC_WR_RDMA_WRITE_WITH_IMM))
		h.reth = (struct urnic_reth){ w->remote_addr, w->rkey, w->length };
	h.imm_be = w->imm_be;
	h.ieth_rkey = w->rkey; /* SEND_WITH_INV carries the rkey to invalidate */
	p = urnic_roce_emit(e, qp, &h, n);
	if (urnic_roce_gather(e, qp, w, off, n, p) < 0) {
		*err = URNIC_WC_LOC_PROT_ERR;
		return false; /* not committed: the slot is reused by the next packet */
	}
	urnic_tx_commit(e, p);
	r->psn = urnic_psn_add(r->psn, 1);
	r->off_bytes += n;
	return last;
}

void urnic_roce_complete_swqe(struct urnic_engine *e, struct urnic_qp *qp, uint8_t status)
{
	struct urnic_send_wqe *w = rc_swqe(qp, qp->comp.idx);
	/* IBTA 10.8.4: unsignaled WRs complete silently unless they fail. */
	bool report =
		status != URNIC_WC_SUCCESS || qp->sq_sig_all || (w->flags & URNIC_SEND_SIGNALED);
	struct urnic_cqe cqe = {
		.wr_id = w->wr_id,
		.status = status,
		.opcode = urnic_roce_wc_opcode(w->opcode),
		.byte_len = w->length,
		.qp_num = qp->qpn,
	};

	if (w->role != URNIC_SWQE_APP) {
		/* Posted by the engine for tag matching: completes on the SRQ's CQ. */
		report = false;
		urnic_roce_tm_swqe_done(e, qp, w, status);
	}
	if (rc_wqe_is_read_atomic(w) && qp->req.rd_atomic)
		qp->req.rd_atomic--;
	if (w->sent_direct) {
		uint32_t n = rc_wqe_npsn(w, qp->attr.path_mtu);

		qp->req.direct_psns -= n < qp->req.direct_psns ? n : qp->req.direct_psns;
		w->sent_direct = false;
	}
	w->done = true;
	w->started = false;
	qp->comp.idx++;
	qp->comp.read_off_bytes = 0;
	qp->comp.read_pulled = false;
	/* The slot is free before the completion is visible: an application that posts one
	 * WR per completion it polls (perftest) must find room in a queue of max_wr. */
	atomic_store_explicit(&qp->sq.cons, qp->comp.idx, memory_order_release);
	if (report)
		urnic_complete(e, qp, qp->send_cq, &cqe, false);
}

void urnic_roce_fail_swqe(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_send_wqe *w,
			  uint8_t status)
{
	w->started = true;
	w->done = true;
	w->status = status;
	urnic_qp_to_error(e, qp);
}

enum { UNRELIABLE_BUDGET_PKTS = 128 };

/* Completes the WQEs sent so far (comp.idx up to req.idx). Their packets leave first:
 * the tx batch points into their memory, which the application may reuse, and into
 * their inline data, which the next WR posted to the freed slot overwrites, as soon as
 * it sees the completion. One flush covers all the WQEs of a progress call. */
void urnic_roce_complete_sent(struct urnic_engine *e, struct urnic_qp *qp)
{
	if (qp->comp.idx == qp->req.idx)
		return;
	if (e->tx.n)
		e->hooks.flush(e);
	/* A CQ overrun puts the QP in error, which flushes the rest (IBTA 11.4.2.1). */
	while (qp->comp.idx != qp->req.idx && qp->state != URNIC_QPS_ERR)
		urnic_roce_complete_swqe(e, qp, URNIC_WC_SUCCESS);
}

bool urnic_roce_unreliable_send(struct urnic_engine *e, struct urnic_qp *qp, roce_send_fn send,
				roce_hold_fn hold)
{
	struct urnic_req *r = &qp->req;
	uint32_t budget = UNRELIABLE_BUDGET_PKTS;
	int err = URNIC_WC_SUCCESS;
	bool did = false;

	while (budget-- && qp->state == URNIC_QPS_RTS) {
		uint32_t prod = atomic_load_explicit(&qp->sq.prod, memory_order_acquire);
		struct urnic_send_wqe *w;

		if (r->idx == prod)
			break;
		w = rc_swqe(qp, r->idx);
		if (!urnic_roce_cc_may_send(e, qp, w))
			break; /* DCQCN: its rate (cc.h) */
		if (!w->started) {
			err = urnic_roce_validate_swqe(e, qp, w);
			if (err != URNIC_WC_SUCCESS)
				goto fail;
			w->first_psn = r->psn;
			w->started = true;
			w->done = false;
			w->status = URNIC_WC_SUCCESS;
		}
		did = true;
		if (roce_is_local_op(w->opcode)) {
			/* A bind on UC: done here, completed in order with the sends. */
			err = urnic_roce_local_op(e, qp, w);
			if (err != URNIC_WC_SUCCESS)
				goto fail;
		} else if (!send(e, qp, w, &err)) {
			if (err == URNIC_WC_SUCCESS)
				continue;
			goto fail;
		}
		/* Sent: nothing will acknowledge it, so it is complete once it has left
		 * (IBTA 9.8; rxe marks UC/UD WQEs done at send). Work completes in post
		 * order because the requester and the completer walk the queue together. */
		w->last_psn = urnic_psn_add(r->psn, URNIC_PSN_MASK);
		r->idx++;
		r->off_bytes = 0;
		qp->comp.psn = r->psn;
	}
	if (!(hold && hold(e, qp)))
		urnic_roce_complete_sent(e, qp);
	return did;

fail:
	/* The WQEs before it were sent and complete normally; this one with its error. */
	qp->comp.uc_hold_ns = 0;
	urnic_roce_complete_sent(e, qp);
	if (qp->state == URNIC_QPS_RTS)
		urnic_roce_fail_swqe(e, qp, rc_swqe(qp, r->idx), (uint8_t)err);
	return true;
}
