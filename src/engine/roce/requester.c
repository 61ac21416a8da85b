/* SPDX-License-Identifier: MIT */
/*
 * requester.c - the RC requester: turns send WQEs into request packets.
 *
 * IBTA 9.7.4 (requester behaviour): segmentation at the path MTU into FIRST/MIDDLE/
 * LAST or ONLY (9.7.4.1.1), AckReq on the last packet of a message and every
 * URNIC_ACKREQ_EVERY packets inside long ones (as rxe), a window of
 * URNIC_MAX_UNACKED_PSNS outstanding PSNs, max_rd_atomic outstanding READ/atomic
 * requests (max_rd_atomic), the fence (10.8.3.3), and go-back-N from the oldest unacknowledged
 * PSN when the completer asks for a retry (9.7.4.1.5). A READ retried after part of its
 * data arrived asks only for the rest, as rxe does.
 */
#include <errno.h>
#include <string.h>

#include "engine/roce/rc.h"
#include "mem/sge.h"
#include "wire/psn.h"

enum { REQ_BUDGET_PKTS = 128 };

struct urnic_txpkt *rc_emit(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_pkt *h,
			    uint32_t payload_bytes)
{
	struct urnic_txpkt *p = urnic_tx_begin(e, qp);
	ssize_t n;

	h->bth.pkey = URNIC_DEFAULT_PKEY;
	h->bth.dqpn = qp->attr.dest_qp_num;
	h->bth.pad = (uint8_t)((4 - (payload_bytes & 3)) & 3);
	n = urnic_pkt_encode_hdr(h, p->hdr, sizeof(p->hdr));
	p->hdr_bytes = n > 0 ? (uint32_t)n : 0;
	p->payload_bytes = payload_bytes;
	return p;
}

void rc_arm_rto(struct urnic_engine *e, struct urnic_qp *qp)
{
	uint64_t rto = urnic_qp_rto_ns(qp->attr.timeout);

	qp->req.rto_deadline_ns = rto ? e->now_ns + rto : 0;
}

/* Validates a WQE when it is first picked up (IBTA 10.8.3.1 local errors). */
static int validate(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_send_wqe *w)
{
	switch (w->opcode) {
	case URNIC_WR_SEND:
	case URNIC_WR_SEND_WITH_IMM:
	case URNIC_WR_SEND_WITH_INV:
	case URNIC_WR_RDMA_WRITE:
	case URNIC_WR_RDMA_WRITE_WITH_IMM:
	case URNIC_WR_RDMA_READ:
		break;
	case URNIC_WR_ATOMIC_CMP_AND_SWP:
	case URNIC_WR_ATOMIC_FETCH_AND_ADD:
		/* IBTA 9.4.5: atomics operate on 8 bytes at an 8-byte aligned address. */
		if (w->length < 8 || (w->remote_addr & 7))
			return URNIC_WC_LOC_QP_OP_ERR;
		break;
	default:
		return URNIC_WC_LOC_QP_OP_ERR;
	}
	if (w->length > (1u << 31))
		return URNIC_WC_LOC_LEN_ERR;
	if (!(w->flags & URNIC_SEND_INLINE)) {
		uint32_t need = URNIC_ACCESS_LOCAL_WRITE;
		struct urnic_frag f[URNIC_MAX_SGE];
		int n;

		/* Reads from memory need no right; READ and atomic results are written. */
		if (!rc_wqe_is_read_atomic(w))
			need = 0;
		n = urnic_sge_gather(&e->mrs, qp->pd, w->sge, w->num_sge, 0, w->length, need, f,
				     URNIC_MAX_SGE);
		if (n < 0)
			return URNIC_WC_LOC_PROT_ERR;
	}
	return URNIC_WC_SUCCESS;
}

static uint8_t send_opcode(const struct urnic_send_wqe *w, bool first, bool last)
{
	static const uint8_t send[4] = { URNIC_OP_RC_SEND_MIDDLE, URNIC_OP_RC_SEND_FIRST,
					 URNIC_OP_RC_SEND_LAST, URNIC_OP_RC_SEND_ONLY };
	static const uint8_t write[4] = { URNIC_OP_RC_RDMA_WRITE_MIDDLE, URNIC_OP_RC_RDMA_WRITE_FIRST,
					  URNIC_OP_RC_RDMA_WRITE_LAST, URNIC_OP_RC_RDMA_WRITE_ONLY };
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

/* Payload fragments for bytes [off, off+len) of the WQE. */
static int payload(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_send_wqe *w,
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
			     URNIC_MAX_SGE);
	if (n < 0)
		return n;
	p->nfrags = (uint32_t)n;
	return 0;
}

/* Sends the next packet of a SEND or WRITE. Returns true when the WQE is fully sent. */
static bool send_data_packet(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_send_wqe *w,
			     int *err)
{
	struct urnic_req *r = &qp->req;
	uint32_t mtu = qp->attr.path_mtu;
	uint32_t off = r->off_bytes;
	uint32_t n = w->length - off < mtu ? w->length - off : mtu;
	bool first = off == 0, last = off + n == w->length;
	struct urnic_pkt h = { 0 };
	struct urnic_txpkt *p;

	h.bth.opcode = send_opcode(w, first, last);
	h.bth.psn = r->psn;
	/* IBTA 9.2.3 SE: on the last packet of a solicited SEND / WRITE with immediate. */
	h.bth.se = last && (w->flags & URNIC_SEND_SOLICITED);
	h.bth.ackreq = last || ++r->noack_pkts > URNIC_ACKREQ_EVERY;
	if (h.bth.ackreq)
		r->noack_pkts = 0;
	if (first && (w->opcode == URNIC_WR_RDMA_WRITE || w->opcode == URNIC_WR_RDMA_WRITE_WITH_IMM))
		h.reth = (struct urnic_reth){ w->remote_addr, w->rkey, w->length };
	h.imm_be = w->imm_be;
	h.ieth_rkey = w->rkey; /* SEND_WITH_INV carries the rkey to invalidate */
	p = rc_emit(e, qp, &h, n);
	if (payload(e, qp, w, off, n, p) < 0) {
		*err = URNIC_WC_LOC_PROT_ERR;
		return false; /* not committed: the slot is reused by the next packet */
	}
	urnic_tx_commit(e, p);
	r->psn = urnic_psn_add(r->psn, 1);
	r->off_bytes += n;
	return last;
}

static void send_read_request(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_send_wqe *w)
{
	struct urnic_req *r = &qp->req;
	uint32_t off = r->off_bytes;
	uint32_t rest = w->length - off;
	struct urnic_pkt h = { 0 };
	uint32_t npsn;

	h.bth.opcode = URNIC_OP_RC_RDMA_READ_REQUEST;
	h.bth.psn = r->psn;
	h.bth.ackreq = true;
	h.reth = (struct urnic_reth){ w->remote_addr + off, w->rkey, rest };
	urnic_tx_commit(e, rc_emit(e, qp, &h, 0));
	npsn = rest ? (rest + qp->attr.path_mtu - 1) / qp->attr.path_mtu : 1;
	r->psn = urnic_psn_add(r->psn, npsn);
	r->noack_pkts = 0;
}

static void send_atomic(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_send_wqe *w)
{
	struct urnic_pkt h = { 0 };

	h.bth.opcode = w->opcode == URNIC_WR_ATOMIC_CMP_AND_SWP ? URNIC_OP_RC_COMPARE_SWAP
								 : URNIC_OP_RC_FETCH_ADD;
	h.bth.psn = qp->req.psn;
	h.bth.ackreq = true;
	/* IBTA 9.3.3.3: for FETCH_ADD the add value travels in the Swap/Add field. */
	h.atmeth.va = w->remote_addr;
	h.atmeth.rkey = w->rkey;
	h.atmeth.swap_add = w->opcode == URNIC_WR_ATOMIC_CMP_AND_SWP ? w->swap : w->compare_add;
	h.atmeth.compare = w->opcode == URNIC_WR_ATOMIC_CMP_AND_SWP ? w->compare_add : 0;
	urnic_tx_commit(e, rc_emit(e, qp, &h, 0));
	qp->req.psn = urnic_psn_add(qp->req.psn, 1);
	qp->req.noack_pkts = 0;
}

/* Go-back-N: restart from the oldest unacknowledged PSN (IBTA 9.7.4.1.5). */
static void rewind_to_completer(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_req *r = &qp->req;
	uint32_t prod = atomic_load_explicit(&qp->sq.prod, memory_order_acquire);
	uint32_t resent = (uint32_t)urnic_psn_diff(r->psn, qp->comp.psn);

	r->need_retry = false;
	r->idx = qp->comp.idx;
	r->psn = qp->comp.psn;
	r->off_bytes = 0;
	r->rd_atomic = 0;
	r->noack_pkts = 0;
	e->counters[URNIC_CTR_retransmit_pkts] += resent;
	if (r->idx != prod) {
		struct urnic_send_wqe *w = rc_swqe(qp, r->idx);

		if (w->started) {
			if (w->opcode == URNIC_WR_RDMA_READ)
				r->off_bytes = qp->comp.read_off_bytes;
			else if (!rc_wqe_is_read_atomic(w))
				r->off_bytes = (uint32_t)urnic_psn_diff(r->psn, w->first_psn) *
					       qp->attr.path_mtu;
		}
	}
}

bool urnic_rc_requester_progress(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_req *r = &qp->req;
	uint32_t budget = REQ_BUDGET_PKTS;
	bool did = false;

	if (r->rnr_deadline_ns)
		return false; /* waiting out an RNR NAK (IBTA 9.7.5.2.8) */
	if (r->need_retry) {
		rewind_to_completer(e, qp);
		did = true;
	}
	while (budget-- && qp->state == URNIC_QPS_RTS) {
		uint32_t prod = atomic_load_explicit(&qp->sq.prod, memory_order_acquire);
		struct urnic_send_wqe *w;
		int err = URNIC_WC_SUCCESS;
		bool done;

		if (r->idx == prod)
			break;
		if (urnic_psn_diff(r->psn, qp->comp.psn) >= URNIC_MAX_UNACKED_PSNS)
			break;
		w = rc_swqe(qp, r->idx);
		if (!w->started) {
			/* IBTA 10.8.3.3: a fenced WR waits for outstanding READ/atomics. */
			if ((w->flags & URNIC_SEND_FENCE) && r->rd_atomic)
				break;
			err = validate(e, qp, w);
			if (err == URNIC_WC_SUCCESS) {
				w->first_psn = r->psn;
				w->last_psn = urnic_psn_add(r->psn,
							    rc_wqe_npsn(w, qp->attr.path_mtu) - 1);
				w->started = true;
				w->done = false;
				w->status = URNIC_WC_SUCCESS;
			}
		}
		if (err == URNIC_WC_SUCCESS && rc_wqe_is_read_atomic(w)) {
			if (r->rd_atomic >= (qp->attr.max_rd_atomic ? qp->attr.max_rd_atomic : 1))
				break;
			r->rd_atomic++;
			if (w->opcode == URNIC_WR_RDMA_READ)
				send_read_request(e, qp, w);
			else
				send_atomic(e, qp, w);
			done = true;
		} else if (err == URNIC_WC_SUCCESS) {
			done = send_data_packet(e, qp, w, &err);
		}
		if (err != URNIC_WC_SUCCESS) {
			/* A local error completes this WQE in error once the ones before it
			 * are done; the QP goes to error (IBTA 10.8.3.1). */
			w->started = true;
			w->done = true;
			w->status = (uint8_t)err;
			urnic_qp_to_error(e, qp);
			return true;
		}
		did = true;
		if (!r->rto_deadline_ns)
			rc_arm_rto(e, qp);
		if (done) {
			r->idx++;
			r->off_bytes = 0;
		}
	}
	return did;
}
