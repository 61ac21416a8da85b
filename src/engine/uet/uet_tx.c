/* SPDX-License-Identifier: MIT */
/*
 * uet_tx.c - what an RC QP on the UET transport sends (uet_int.h): its work requests as
 * SES messages in PDS RUD packets, sprayed over entropy values (reps.h) within the
 * delivery context's window and NSCC's, what was lost again with its own PSN and RETX,
 * the READ responses it owes, ACK_CC, NACKs and probes; and its send completions, in
 * post order once the cumulative ACK has passed a message's last packet (a READ: once
 * its response bytes are all in).
 */
#include <string.h>

#include "engine/roce/msg.h"
#include "engine/roce/rc.h"
#include "engine/uet/uet_int.h"
#include "mem/mw.h"
#include "mem/odp.h"
#include "mem/sge.h"

/* Before the first ACK: SYN and the offset from the start PSN instead of the DPDCID. */
static void syn(const struct urnic_uet_qp *u, struct urnic_uet_pds *h)
{
	if (u->tx_synced)
		return;
	h->flags |= URNIC_UET_F_SYN;
	h->psn_offset = (uint16_t)(h->psn - u->tx_start);
	h->dpdcid = 0;
}

static uint8_t ses_opcode(uint32_t wr_opcode)
{
	switch (wr_opcode) {
	case URNIC_WR_RDMA_WRITE:
	case URNIC_WR_RDMA_WRITE_WITH_IMM:
		return URNIC_UET_SES_WRITE;
	case URNIC_WR_RDMA_READ:
		return URNIC_UET_SES_READ;
	default:
		return URNIC_UET_SES_SEND;
	}
}

static bool consumes_receive(uint32_t wr_opcode)
{
	return wr_opcode == URNIC_WR_SEND || wr_opcode == URNIC_WR_SEND_WITH_IMM ||
	       wr_opcode == URNIC_WR_RDMA_WRITE_WITH_IMM;
}

/* Builds request packet psn of the WQE at idx from its record (new or resent). */
static bool emit_request(struct urnic_engine *e, struct urnic_qp *qp, uint32_t psn,
			 const struct urnic_uet_rec *r, uint16_t ev, bool retx)
{
	struct urnic_uet_qp *u = qp->uet;
	struct urnic_send_wqe *w = rc_swqe(qp, r->ref);
	struct urnic_uet_wqe *uw = urnic_uet_wqe_at(qp, r->ref);
	bool imm = w->opcode == URNIC_WR_SEND_WITH_IMM || w->opcode == URNIC_WR_RDMA_WRITE_WITH_IMM;
	bool remote = w->opcode != URNIC_WR_SEND && w->opcode != URNIC_WR_SEND_WITH_IMM;
	struct urnic_uet_pds h = {
		.type = URNIC_UET_RUD_REQ,
		.next = URNIC_UET_NEXT_REQ_STD,
		.flags = retx ? URNIC_UET_F_RETX : 0,
		.psn = psn,
		.spdcid = u->lpdc,
		.dpdcid = u->rpdc,
	};
	struct urnic_uet_ses s = {
		.next = URNIC_UET_NEXT_REQ_STD,
		.opcode = ses_opcode(w->opcode),
		.flags = (uint8_t)(r->ses_flags | (imm ? URNIC_UET_SES_F_HD : 0)),
		.msg_id = uw->msg_id,
		.buffer_offset = (remote ? w->remote_addr : 0) + r->off,
		.mem_key = remote ? w->rkey : 0,
		.initiator = consumes_receive(w->opcode) ? uw->rsn : 0,
		.header_data = imm ? w->imm_be : 0,
		.request_length = w->length,
	};
	struct urnic_txpkt *p = urnic_uet_begin(e, qp, ev);

	/* A tail packet resent asks for its ACK at once: nothing behind it will. */
	if (retx)
		h.flags |= URNIC_UET_F_AR;
	syn(u, &h);
	if (!urnic_uet_put_headers(e, p, &h, &s))
		return false;
	if (w->opcode != URNIC_WR_RDMA_READ && r->len &&
	    urnic_roce_gather(e, qp, w, r->off, r->len, p) < 0) {
		/* Its memory went away under the request (deregistered): IBTA 10.8.3.1. */
		uw->status = URNIC_WC_LOC_PROT_ERR;
		w->done = true;
		w->status = URNIC_WC_LOC_PROT_ERR;
		return false;
	}
	p->payload_bytes = w->opcode == URNIC_WR_RDMA_READ ? 0 : r->len;
	urnic_tx_commit(e, p);
	return true;
}

/* Builds READ response packet psn of job r->ref from its record. */
static bool emit_response(struct urnic_engine *e, struct urnic_qp *qp, uint32_t psn,
			  const struct urnic_uet_rec *r, uint16_t ev, bool retx)
{
	struct urnic_uet_qp *u = qp->uet;
	const struct urnic_uet_job *j = &u->jobs[r->ref];
	struct urnic_uet_pds h = {
		.type = URNIC_UET_RUD_REQ,
		.next = URNIC_UET_NEXT_RSP_DATA,
		.flags = retx ? URNIC_UET_F_RETX | URNIC_UET_F_AR : 0,
		.psn = psn,
		.spdcid = u->lpdc,
		.dpdcid = u->rpdc,
	};
	struct urnic_uet_ses s = {
		.next = URNIC_UET_NEXT_RSP_DATA,
		.list = URNIC_UET_LIST_EXPECTED,
		.rsp_opcode = URNIC_UET_RSP_WITH_DATA,
		.return_code = URNIC_UET_RC_OK,
		.msg_id = j->msg_id,
		.read_msg_id = j->msg_id,
		.mod_len = j->len,
		.msg_offset = r->off,
		.length14 = r->len,
	};
	struct urnic_txpkt *p = urnic_uet_begin(e, qp, ev);
	struct urnic_mr_at at = { 0 };

	syn(u, &h);
	if (!urnic_uet_put_headers(e, p, &h, &s))
		return false;
	if (r->len) {
		/* IBTA 9.7.5.1.7 (o9-58): the key is resolved again for every response
		 * packet, so a region deregistered under a READ is not read. */
		if (urnic_mr_resolve_remote(&e->mrs, qp->pd, qp->qpn, j->rkey, j->va + r->off,
					    r->len, URNIC_ACCESS_REMOTE_READ, &at) != URNIC_MR_OK) {
			urnic_count(e, URNIC_CTR_uet_remote_errors_sent);
			return false;
		}
		if (at.odp) {
			if (urnic_odp_read(e->mrs.odp, e->odp_bounce, at.host, r->len)) {
				urnic_count(e, URNIC_CTR_odp_fault_remote);
				return false;
			}
			at.host = e->odp_bounce;
		}
		p->frags[0] = (struct urnic_frag){ at.host, r->len };
		p->nfrags = 1;
		p->payload_bytes = r->len;
	}
	urnic_tx_commit(e, p);
	return true;
}

/* Whether NSCC and the delivery context's window let bytes more go. */
static bool room(const struct urnic_qp *qp, uint32_t bytes)
{
	const struct urnic_uet_qp *u = qp->uet;

	if (!urnic_pds_tx_room(&u->tx))
		return false;
	return !u->cc_on || urnic_nscc_room(&u->cc, u->tx.inflight_bytes, bytes);
}

/* A new packet: its PSN, its record, its entropy value. */
static bool send_new(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_uet_rec r)
{
	struct urnic_uet_qp *u = qp->uet;
	uint32_t psn = u->tx.nxt;
	uint16_t ev;
	bool ok;

	/* A burst of packets shares one entropy value, so that it leaves as one GSO send
	 * (a value per packet cost a system call per packet: 0.5 against RoCE's 3.3 GB/s
	 * in ib_write_bw -s 65536); bursts still spread over the paths. */
	if (!u->burst_left) {
		u->burst_ev = urnic_uet_ev_port(
			urnic_reps_next(&u->reps, urnic_engine_random(e), e->now_ns));
		u->burst_left = URNIC_UET_BURST_PKTS;
	}
	ev = u->burst_ev;
	u->burst_left--;

	u->rec[psn & (URNIC_PDS_WINDOW - 1)] = r;
	ok = r.kind == URNIC_UET_REC_RSP ? emit_response(e, qp, psn, &r, ev, false)
					 : emit_request(e, qp, psn, &r, ev, false);
	if (!ok)
		return false;
	urnic_pds_tx_send(&u->tx, r.len + URNIC_UET_REQ_HDR, ev, e->now_ns);
	return true;
}

/* What was lost, again, first: the oldest holes hold the receiver's window back. */
static uint32_t resend_lost(struct urnic_engine *e, struct urnic_qp *qp, uint32_t budget)
{
	struct urnic_uet_qp *u = qp->uet;
	uint32_t n = 0, psn;

	while (n < budget && urnic_pds_tx_next_lost(&u->tx, &psn)) {
		const struct urnic_uet_rec *r = &u->rec[psn & (URNIC_PDS_WINDOW - 1)];
		uint16_t ev = urnic_uet_ev_port(
			urnic_reps_next(&u->reps, urnic_engine_random(e), e->now_ns));
		bool ok = r->kind == URNIC_UET_REC_RSP ? emit_response(e, qp, psn, r, ev, true)
						       : emit_request(e, qp, psn, r, ev, true);

		if (!ok) {
			urnic_qp_to_error(e, qp);
			return n;
		}
		urnic_pds_tx_resend(&u->tx, psn, ev, e->now_ns);
		urnic_count(e, URNIC_CTR_uet_tx_resent);
		n++;
	}
	return n;
}

/* The READ responses owed, oldest READ first, each once every request before it has
 * arrived (uet_rx.c decides; job_count counts those started). */
static uint32_t send_responses(struct urnic_engine *e, struct urnic_qp *qp, uint32_t budget)
{
	struct urnic_uet_qp *u = qp->uet;
	uint32_t mtu = qp->attr.path_mtu, n = 0;

	for (uint32_t k = 0; k < u->job_count && n < budget; k++) {
		uint32_t i = (u->job_head + k) % u->njobs;
		struct urnic_uet_job *j = &u->jobs[i];

		if (!j->used)
			continue;
		if (urnic_pds_psn_diff(u->rx.cack, j->req_psn) < 0)
			break; /* its turn has not come, nor that of the READs behind it */
		while (!j->all_sent && n < budget) {
			uint32_t len = j->len - j->sent < mtu ? j->len - j->sent : mtu;
			struct urnic_uet_rec r = { .ref = i,
						   .off = j->sent,
						   .len = (uint16_t)len,
						   .kind = URNIC_UET_REC_RSP };

			if (!room(qp, len))
				return n;
			j->last_psn = u->tx.nxt;
			if (!send_new(e, qp, r)) {
				/* The region went away under the READ: the requester hears
				 * of it by a refusal, and this side enters error (IBTA
				 * 9.7.5.1.7, o9-58). */
				u->rsp_pending = true;
				u->rsp_code = URNIC_UET_RC_BAD_MKEY;
				u->rsp_msg_id = j->msg_id;
				urnic_uet_send_ack(e, qp);
				urnic_qp_to_error(e, qp);
				return n;
			}
			j->sent += len;
			j->all_sent = j->sent == j->len;
			n++;
		}
	}
	return n;
}

/* The next packet of the WQE at req.idx; false when it cannot go now. */
static bool send_wqe_packet(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_send_wqe *w,
			    bool *done)
{
	struct urnic_uet_qp *u = qp->uet;
	struct urnic_uet_wqe *uw = urnic_uet_wqe_at(qp, qp->req.idx);
	uint32_t mtu = qp->attr.path_mtu, off = qp->req.off_bytes;
	uint32_t len = w->length - off < mtu ? w->length - off : mtu;
	struct urnic_uet_rec r = { .ref = qp->req.idx, .off = off, .kind = URNIC_UET_REC_REQ };

	if (w->opcode == URNIC_WR_RDMA_READ) {
		/* One request packet; the responses are the target's. */
		if (qp->req.rd_atomic >= (qp->attr.max_rd_atomic ? qp->attr.max_rd_atomic : 1))
			return false;
		len = 0;
	}
	if (!room(qp, len))
		return false;
	if (!off) {
		memset(uw, 0, sizeof(*uw));
		uw->msg_id = u->next_msg_id++;
		if (consumes_receive(w->opcode))
			uw->rsn = u->next_rsn++;
		w->first_psn = u->tx.nxt;
		w->started = true;
		if (w->opcode == URNIC_WR_RDMA_READ)
			qp->req.rd_atomic++;
	}
	r.len = (uint16_t)len;
	r.ses_flags = (uint8_t)((off ? 0 : URNIC_UET_SES_F_SOM) |
				(off + len == w->length || w->opcode == URNIC_WR_RDMA_READ
					 ? URNIC_UET_SES_F_EOM
					 : 0));
	w->last_psn = u->tx.nxt;
	if (!send_new(e, qp, r)) {
		urnic_roce_fail_swqe(e, qp, w, URNIC_WC_LOC_PROT_ERR);
		return false;
	}
	qp->req.off_bytes = off + len;
	*done = w->opcode == URNIC_WR_RDMA_READ || qp->req.off_bytes >= w->length;
	return true;
}

/* New work from the SQ, as the windows allow. */
static uint32_t send_new_work(struct urnic_engine *e, struct urnic_qp *qp, uint32_t budget)
{
	uint32_t n = 0;

	while (n < budget && qp->state == URNIC_QPS_RTS) {
		uint32_t prod = atomic_load_explicit(&qp->sq.prod, memory_order_acquire);
		struct urnic_send_wqe *w;
		bool done = false;

		if (qp->req.idx == prod)
			break;
		w = rc_swqe(qp, qp->req.idx);
		if (!qp->req.off_bytes && !w->started) {
			uint8_t st = urnic_roce_validate_swqe(e, qp, w);

			w->done = false;
			w->status = URNIC_WC_SUCCESS;
			/* Atomics, ATOMIC_WRITE, FLUSH and SEND with invalidate are not carried
			 * (the device says IBV_ATOMIC_NONE). */
			if (st == URNIC_WC_SUCCESS &&
			    ((rc_wqe_is_read_atomic(w) && w->opcode != URNIC_WR_RDMA_READ) ||
			     w->opcode == URNIC_WR_SEND_WITH_INV))
				st = URNIC_WC_LOC_QP_OP_ERR;
			if (st != URNIC_WC_SUCCESS) {
				urnic_roce_fail_swqe(e, qp, w, st);
				break;
			}
			if (roce_is_local_op(w->opcode)) {
				/* Done when reached (rxe_do_local_ops); completes in order. */
				w->status = urnic_roce_local_op(e, qp, w);
				w->started = true;
				w->done = true;
				qp->req.idx++;
				if (w->status != URNIC_WC_SUCCESS) {
					urnic_qp_to_error(e, qp);
					break;
				}
				continue;
			}
		}
		if (!send_wqe_packet(e, qp, w, &done))
			break;
		n++;
		if (done) {
			qp->req.idx++;
			qp->req.off_bytes = 0;
		}
	}
	return n;
}

void urnic_uet_complete_sq(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_uet_qp *u = qp->uet;

	while (qp->state == URNIC_QPS_RTS && qp->comp.idx != qp->req.idx) {
		struct urnic_send_wqe *w = rc_swqe(qp, qp->comp.idx);
		struct urnic_uet_wqe *uw = urnic_uet_wqe_at(qp, qp->comp.idx);

		if (roce_is_local_op(w->opcode) && w->done) {
			urnic_roce_complete_swqe(e, qp, w->status);
			continue;
		}
		if (uw->status != URNIC_WC_SUCCESS) {
			/* IBTA 10.8.3.1: the failed WQE completes in order, the QP errs. */
			urnic_rc_fail(e, qp, uw->status);
			return;
		}
		/* Acknowledged: the cumulative ACK is past its last packet. */
		if (urnic_pds_psn_diff(u->tx.una, w->last_psn) <= 0)
			break;
		if (w->opcode == URNIC_WR_RDMA_READ && !uw->rsp_done)
			break;
		urnic_roce_complete_swqe(e, qp, URNIC_WC_SUCCESS);
	}
}

bool urnic_uet_progress(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_uet_qp *u = qp->uet;
	uint32_t n = 0;

	if (!u || (qp->state != URNIC_QPS_RTS && qp->state != URNIC_QPS_RTR))
		return false;
	/* A responder answers READs from RTR on (IBTA 10.3.1: it responds to requests);
	 * its own requests wait for RTS. */
	n += resend_lost(e, qp, URNIC_UET_BUDGET_PKTS);
	if (qp->state == URNIC_QPS_ERR)
		return true;
	n += send_responses(e, qp, URNIC_UET_BUDGET_PKTS);
	if (qp->state == URNIC_QPS_ERR)
		return true;
	/* The ACK first: a READ completed by this pass's responses is acknowledged before
	 * the next one is asked for, so that the responder's slot is free for it. */
	if (u->ack_pending || u->rsp_pending) {
		urnic_uet_send_ack(e, qp);
		n++;
	}
	if (qp->state == URNIC_QPS_RTS) {
		n += send_new_work(e, qp, URNIC_UET_BUDGET_PKTS);
		urnic_uet_complete_sq(e, qp);
	}
	if (n)
		urnic_uet_publish_state(e, qp);
	return n != 0;
}
