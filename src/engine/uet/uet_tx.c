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

enum {
	ECN_MASK = 0x03,
	ECN_ECT0 = 0x02, /* RFC 3168 §5: ECN-capable transport */
};

/* A packet to the peer from entropy value ev, ECN-capable (NSCC reads the marks). */
static struct urnic_txpkt *begin(struct urnic_engine *e, struct urnic_qp *qp, uint16_t ev)
{
	struct urnic_txpkt *p = urnic_tx_begin(e, qp);

	p->dst.sport = ev;
	p->dst.traffic_class = (uint8_t)((qp->attr.peer.traffic_class & ~ECN_MASK) | ECN_ECT0);
	return p;
}

/* Encodes the PDS header and the SES header into p's header bytes. */
static bool put_headers(struct urnic_engine *e, struct urnic_txpkt *p,
			const struct urnic_uet_pds *h, const struct urnic_uet_ses *s)
{
	ssize_t n = urnic_uet_pds_encode(h, p->hdr, sizeof(p->hdr)), m = 0;

	if (n > 0 && s)
		m = urnic_uet_ses_encode(s, p->hdr + n, sizeof(p->hdr) - (size_t)n);
	if (n <= 0 || m < 0) {
		/* Every header built here is one the decoder takes: a bug, not input. */
		urnic_count(e, URNIC_CTR_drop_tx_failed);
		return false;
	}
	p->hdr_bytes = (uint32_t)(n + m);
	return true;
}

static struct urnic_uet_wqe *uwqe(struct urnic_qp *qp, uint32_t idx)
{
	return &qp->uet->wqe[idx & qp->uet->sq_mask];
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
	struct urnic_uet_wqe *uw = uwqe(qp, r->ref);
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
	struct urnic_txpkt *p = begin(e, qp, ev);

	/* A tail packet resent asks for its ACK at once: nothing behind it will. */
	if (retx)
		h.flags |= URNIC_UET_F_AR;
	if (!put_headers(e, p, &h, &s))
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
	struct urnic_txpkt *p = begin(e, qp, ev);
	struct urnic_mr_at at = { 0 };

	if (!put_headers(e, p, &h, &s))
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
	struct urnic_uet_wqe *uw = uwqe(qp, qp->req.idx);
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
		struct urnic_uet_wqe *uw = uwqe(qp, qp->comp.idx);

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

static void publish_state(struct urnic_engine *e, const struct urnic_qp *qp)
{
	const struct urnic_uet_qp *u = qp->uet;

	if (!e->stats.cur_qp)
		return;
	e->stats.cur_qp[URNIC_CTR_uet_cwnd_bytes] = u->cc_on ? u->cc.cwnd : 0;
	e->stats.cur_qp[URNIC_CTR_uet_srtt_us] = u->tx.srtt_ns / 1000u;
	e->stats.cur_qp[URNIC_CTR_uet_inflight_bytes] = u->tx.inflight_bytes;
}

void urnic_uet_rx_ack(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_uet_pkt *pkt)
{
	struct urnic_uet_qp *u = qp->uet;
	struct urnic_pds_acked a;
	uint64_t lost_before = u->tx.st.lost_reorder;
	uint32_t done;

	urnic_count(e, URNIC_CTR_uet_acks_rcvd);
	urnic_pds_tx_ack(&u->tx, &pkt->pds, e->now_ns, &a);
	for (uint32_t i = 0; i < a.n_evs; i++)
		urnic_reps_delivered(&u->reps, a.evs[i], false);
	if (a.ecn)
		urnic_reps_delivered(&u->reps, 0, true);
	if (u->cc_on) {
		if (a.delivered_bytes)
			urnic_nscc_ack(&u->cc, e->now_ns, a.delivered_bytes, a.rtt_ns, a.ecn,
				       u->tx.inflight_bytes);
		if (u->tx.st.lost_reorder > lost_before)
			urnic_nscc_loss(&u->cc, e->now_ns,
					(u->tx.st.lost_reorder - lost_before) * qp->attr.path_mtu);
	}
	if (pkt->pds.next == URNIC_UET_NEXT_RSP && pkt->ses.return_code != URNIC_UET_RC_OK) {
		/* A refusal of the message msg_id: its WQE fails in order. */
		uint8_t st = pkt->ses.return_code == URNIC_UET_RC_TOO_LONG ||
					     pkt->ses.return_code == URNIC_UET_RC_UNSUPPORTED_OP
				     ? URNIC_WC_REM_INV_REQ_ERR
			     : pkt->ses.return_code == URNIC_UET_RC_HOST_UNSUCCESS_CMPL
				     ? URNIC_WC_REM_OP_ERR
				     : URNIC_WC_REM_ACCESS_ERR;

		urnic_count(e, URNIC_CTR_uet_remote_errors_rcvd);
		for (uint32_t i = qp->comp.idx; i != qp->req.idx + (qp->req.off_bytes ? 1 : 0);
		     i++) {
			if (uwqe(qp, i)->msg_id == pkt->ses.msg_id && rc_swqe(qp, i)->started) {
				uwqe(qp, i)->status = st;
				break;
			}
		}
	}
	/* READs answered whole and acknowledged free their slots, oldest first. */
	while (u->job_count) {
		struct urnic_uet_job *j = &u->jobs[u->job_head];

		if (j->used && !(j->all_sent && urnic_pds_psn_diff(u->tx.una, j->last_psn) > 0))
			break;
		j->used = false;
		u->job_head = (u->job_head + 1) % u->njobs;
		u->job_count--;
	}
	publish_state(e, qp);
	done = qp->comp.idx;
	urnic_uet_complete_sq(e, qp);
	/* Completions an ACK brought alone: the peer's answer is still to come, and the
	 * application may wait for it on memory (ib_write_lat), where only the engine
	 * thread takes it in (dev/pipeline.c asks it to watch the socket; roce/rc.c). */
	if (qp->comp.idx != done)
		e->hold.answers_due++;
	urnic_engine_qp_wake(e, qp);
}

void urnic_uet_rx_nack(struct urnic_engine *e, struct urnic_qp *qp,
		       const struct urnic_uet_pds *nack)
{
	struct urnic_uet_qp *u = qp->uet;

	urnic_count(e, URNIC_CTR_uet_nacks_rcvd);
	if (nack->nack_code != URNIC_UET_NACK_NO_SES_MSG_AVAIL) {
		urnic_pds_tx_nack(&u->tx, nack, e->now_ns);
		if (u->cc_on && (nack->nack_code == URNIC_UET_NACK_TRIMMED ||
				 nack->nack_code == URNIC_UET_NACK_TRIMMED_LAST_HOP))
			urnic_nscc_loss(&u->cc, e->now_ns, qp->attr.path_mtu);
		urnic_engine_qp_wake(e, qp);
		return;
	}
	/* The receiver was not ready (RC's RNR NAK, IBTA 9.7.5.2.8): the packet waits the
	 * timer the NACK names, rnr_retry times at most (7: for ever). */
	urnic_count(e, URNIC_CTR_uet_rnr_nacks_rcvd);
	if (qp->attr.rnr_retry != 7) {
		if (!u->rnr_left) {
			const struct urnic_uet_rec *r =
				&u->rec[nack->nack_psn & (URNIC_PDS_WINDOW - 1)];

			if (r->kind == URNIC_UET_REC_REQ)
				uwqe(qp, r->ref)->status = URNIC_WC_RNR_RETRY_EXC_ERR;
			urnic_uet_complete_sq(e, qp);
			return;
		}
		u->rnr_left--;
	}
	urnic_pds_tx_park(&u->tx, nack->nack_psn,
			  e->now_ns + 1000ull * urnic_rnr_timer_us((uint8_t)(nack->payload & 0x1f)),
			  e->now_ns);
}

void urnic_uet_send_ctrl(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_uet_pds *h)
{
	struct urnic_txpkt *p = begin(e, qp, qp->uet->ack_ev);

	if (!put_headers(e, p, h, NULL))
		return;
	urnic_tx_commit(e, p);
}

void urnic_uet_send_ack(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_uet_qp *u = qp->uet;
	struct urnic_uet_pds h = { 0 };
	struct urnic_uet_ses s = {
		.next = URNIC_UET_NEXT_RSP,
		.list = URNIC_UET_LIST_EXPECTED,
		.rsp_opcode = URNIC_UET_RSP_RESPONSE,
		.return_code = u->rsp_code,
		.msg_id = u->rsp_msg_id,
	};
	struct urnic_txpkt *p;

	urnic_pds_rx_ack(&u->rx, &h);
	h.spdcid = u->lpdc;
	h.dpdcid = u->rpdc;
	h.next = u->rsp_pending ? URNIC_UET_NEXT_RSP : URNIC_UET_NEXT_NONE;
	p = begin(e, qp, u->ack_ev);
	if (!put_headers(e, p, &h, u->rsp_pending ? &s : NULL))
		return;
	urnic_tx_commit(e, p);
	u->ack_pending = false;
	u->rsp_pending = false;
	urnic_count(e, URNIC_CTR_uet_acks_sent);
}

void urnic_uet_send_nack(struct urnic_engine *e, struct urnic_qp *qp, uint32_t psn, uint8_t code,
			 uint32_t payload)
{
	struct urnic_uet_pds h = {
		.type = URNIC_UET_NACK,
		.nack_code = code,
		.nack_psn = psn,
		.spdcid = qp->uet->lpdc,
		.dpdcid = qp->uet->rpdc,
		.payload = payload,
	};

	urnic_uet_send_ctrl(e, qp, &h);
	urnic_count(e, URNIC_CTR_uet_nacks_sent);
}

void urnic_uet_send_probe(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_uet_qp *u = qp->uet;
	struct urnic_uet_pds h = {
		.type = URNIC_UET_CTRL,
		.next = URNIC_UET_CTRL_PROBE,
		.flags = URNIC_UET_F_AR,
		.probe_opaque = u->tx.probe_id,
		.psn = u->tx.nxt,
		.spdcid = u->lpdc,
		.dpdcid = u->rpdc,
		.payload = u->tx.una,
	};

	urnic_uet_send_ctrl(e, qp, &h);
	urnic_count(e, URNIC_CTR_uet_tx_probes);
}

bool urnic_uet_progress(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_uet_qp *u = qp->uet;
	uint32_t n = 0;

	if (!u || (qp->state != URNIC_QPS_RTS && qp->state != URNIC_QPS_RTR))
		return false;
	if (qp->state == URNIC_QPS_RTS) {
		n += resend_lost(e, qp, URNIC_UET_BUDGET_PKTS);
		if (qp->state != URNIC_QPS_RTS)
			return true;
		n += send_responses(e, qp, URNIC_UET_BUDGET_PKTS);
		if (qp->state != URNIC_QPS_RTS)
			return true;
		n += send_new_work(e, qp, URNIC_UET_BUDGET_PKTS);
		urnic_uet_complete_sq(e, qp);
	}
	if (u->ack_pending || u->rsp_pending) {
		urnic_uet_send_ack(e, qp);
		n++;
	}
	if (n)
		publish_state(e, qp);
	return n != 0;
}
