/* SPDX-License-Identifier: MIT */
/*
 * uet_rx.c - what an RC QP on the UET transport receives (uet_int.h): the datagram
 * decoded and validated, its PDC matched to a QP and its peer, then requests (SEND,
 * WRITE, READ, READ responses) checked by RC's rules and placed as they arrive,
 * duplicates acknowledged again, a receiver not ready NACKed, refusals answered; ACKs,
 * NACKs and probes to the requester's side. Receive completions go in RSN order, each
 * once everything sent before its last packet has arrived.
 */
#include <string.h>

#include "engine/roce/msg.h"
#include "engine/roce/rc.h"
#include "engine/uet/uet_int.h"
#include "mem/odp.h"
#include "mem/sge.h"

enum { ECN_MASK = 0x03, ECN_CE = 0x03 };

/* The QP whose PDC ID is dpdcid (its QPN's low 16 bits, uet_int.h), if it speaks UET. */
static struct urnic_qp *pdc_qp(struct urnic_engine *e, uint16_t dpdcid)
{
	struct urnic_qp *qp = e->qpt.qps[dpdcid & (URNIC_MAX_QP - 1)];

	if (!qp || !qp->uet || (qp->qpn & 0xffff) != dpdcid)
		return NULL;
	return qp;
}

struct urnic_qp *urnic_uet_syn_qp(struct urnic_engine *e, const uint8_t *src, uint16_t spdcid)
{
	/* Only the first window of each direction comes this way: a scan will do. */
	for (uint32_t i = 2; i < e->qpt.end; i++) {
		struct urnic_qp *qp = e->qpt.qps[i];

		if (qp && qp->uet && qp->uet->rpdc == spdcid &&
		    memcmp(src, qp->attr.peer.ip, e->cfg.ipv6 ? 16 : 4) == 0)
			return qp;
	}
	return NULL;
}

/* A check of RC's failed (IBTA 9.7.5.2.4-5, class C): the packet is taken, so that it is
 * not sent again, the requester hears the return code for its message, and this QP
 * enters error as an RC responder does after such a NAK. */
static void refuse(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_uet_pkt *pkt,
		   uint8_t code, bool ce)
{
	struct urnic_uet_qp *u = qp->uet;

	urnic_pds_rx_packet(&u->rx, &pkt->pds, (uint32_t)pkt->payload_bytes, ce);
	urnic_count(e, URNIC_CTR_uet_remote_errors_sent);
	u->rsp_pending = true;
	u->rsp_code = code;
	u->rsp_msg_id = pkt->ses.msg_id;
	urnic_uet_send_ack(e, qp);
	urnic_qp_to_error(e, qp);
}

static uint8_t key_code(enum urnic_mr_check c)
{
	switch (c) {
	case URNIC_MR_OUT_OF_RANGE:
		return URNIC_UET_RC_BAD_ADDR;
	case URNIC_MR_NO_RIGHT:
		return URNIC_UET_RC_PERM_VIOLATION;
	default:
		return URNIC_UET_RC_BAD_MKEY;
	}
}

/* The receive message of RSN rsn, with a receive WQE for it (and for every RSN before
 * it): NULL when the receiver is not ready (no WQE posted, or too far ahead). */
static struct urnic_uet_rmsg *rmsg_of(struct urnic_qp *qp, uint32_t rsn,
				      const struct urnic_recv_wqe **wqe)
{
	struct urnic_uet_qp *u = qp->uet;
	uint32_t d = rsn - u->rsn_next;
	uint32_t cons = atomic_load_explicit(&qp->rq.cons, memory_order_relaxed);
	uint32_t prod = atomic_load_explicit(&qp->rq.prod, memory_order_acquire);

	if (d >= URNIC_UET_MSG_SLOTS || prod - cons <= d)
		return NULL;
	*wqe = urnic_wq_slot(&qp->rq, cons + d);
	return &u->msg[rsn % URNIC_UET_MSG_SLOTS];
}

/* The receiver is not ready for the message: RC's RNR NAK (IBTA 9.7.5.2.8), the
 * responder's min_rnr_timer in the payload; the packet is not taken. */
static void not_ready(struct urnic_engine *e, struct urnic_qp *qp, uint32_t psn)
{
	urnic_count(e, URNIC_CTR_uet_rnr_nacks_sent);
	urnic_uet_send_nack(e, qp, psn, URNIC_UET_NACK_NO_SES_MSG_AVAIL, qp->attr.min_rnr_timer);
}

/* The part of a SEND or WRITE with immediate that every packet of it repeats: its length,
 * the immediate. False when it contradicts what earlier packets said. */
static bool rmsg_note(struct urnic_uet_rmsg *msg, const struct urnic_uet_pkt *pkt, bool write)
{
	const struct urnic_uet_ses *s = &pkt->ses;
	bool imm = (s->flags & URNIC_UET_SES_F_HD) != 0;

	if (!msg->used) {
		*msg = (struct urnic_uet_rmsg){ .used = true,
						.len = s->request_length,
						.write = write,
						.imm = imm,
						.imm_be = (uint32_t)s->header_data };
		return true;
	}
	return msg->len == s->request_length && msg->write == write && msg->imm == imm;
}

static void rmsg_got(struct urnic_uet_rmsg *msg, const struct urnic_uet_pkt *pkt)
{
	msg->got += (uint32_t)pkt->payload_bytes;
	if (pkt->ses.flags & URNIC_UET_SES_F_EOM) {
		msg->eom = true;
		msg->last_psn = pkt->pds.psn;
	}
}

/* The receive message of the SEND or WRITE with immediate pkt, and its WQE in *wqe; NULL
 * when the packet was dealt with here: forged (it names an RSN completed before, on a PSN
 * never seen), the receiver not ready (NACKed), or it contradicts what earlier packets of
 * its message said (refused). */
static struct urnic_uet_rmsg *rmsg_for(struct urnic_engine *e, struct urnic_qp *qp,
				       const struct urnic_uet_pkt *pkt, bool ce, bool write,
				       const struct urnic_recv_wqe **wqe)
{
	uint32_t rsn = pkt->ses.initiator;
	struct urnic_uet_rmsg *msg = rmsg_of(qp, rsn, wqe);

	if (!msg) {
		if (rsn - qp->uet->rsn_next >= (uint32_t)-URNIC_UET_MSG_SLOTS)
			urnic_count(e, URNIC_CTR_uet_drop_bad_ses);
		else
			not_ready(e, qp, pkt->pds.psn);
		return NULL;
	}
	if (!rmsg_note(msg, pkt, write)) {
		urnic_count(e, URNIC_CTR_uet_drop_bad_ses);
		refuse(e, qp, pkt, URNIC_UET_RC_UNSUPPORTED_OP, ce);
		return NULL;
	}
	return msg;
}

static void rx_send(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_uet_pkt *pkt,
		    bool ce)
{
	const struct urnic_uet_ses *s = &pkt->ses;
	const struct urnic_recv_wqe *wqe;
	struct urnic_uet_rmsg *msg = rmsg_for(e, qp, pkt, ce, false, &wqe);
	uint32_t n = (uint32_t)pkt->payload_bytes;

	if (!msg)
		return;
	if (s->buffer_offset > s->request_length || n > s->request_length - s->buffer_offset) {
		urnic_count(e, URNIC_CTR_uet_drop_bad_ses);
		refuse(e, qp, pkt, URNIC_UET_RC_UNSUPPORTED_OP, ce);
		return;
	}
	if (s->request_length > wqe->length) {
		/* IBTA 9.7.5.2.4: longer than the receive buffer, NAK invalid request. */
		refuse(e, qp, pkt, URNIC_UET_RC_TOO_LONG, ce);
		return;
	}
	if (n && urnic_sge_scatter(&e->mrs, qp->pd, wqe->sge, wqe->num_sge,
				   (uint32_t)s->buffer_offset, pkt->payload, n)) {
		refuse(e, qp, pkt, URNIC_UET_RC_HOST_UNSUCCESS_CMPL, ce);
		return;
	}
	urnic_pds_rx_packet(&qp->uet->rx, &pkt->pds, n, ce);
	rmsg_got(msg, pkt);
}

static void rx_write(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_uet_pkt *pkt,
		     bool ce)
{
	const struct urnic_uet_ses *s = &pkt->ses;
	uint32_t n = (uint32_t)pkt->payload_bytes;
	struct urnic_uet_rmsg *msg = NULL;
	struct urnic_mr_at at = { 0 };

	if (s->flags & URNIC_UET_SES_F_HD) {
		/* With immediate: it consumes a receive WQE (IBTA 9.7.5.1.6). */
		const struct urnic_recv_wqe *wqe;

		msg = rmsg_for(e, qp, pkt, ce, true, &wqe);
		if (!msg)
			return;
	}
	if (n) {
		/* IBTA 9.7.5.1.7 (C9-50, o9-58): the R_Key, range and right for exactly these
		 * bytes, on every packet, so deregistration takes effect at once. */
		enum urnic_mr_check c =
			s->mem_key >> 32
				? URNIC_MR_BAD_KEY
				: urnic_mr_resolve_remote(&e->mrs, qp->pd, qp->qpn,
							  (uint32_t)s->mem_key, s->buffer_offset, n,
							  URNIC_ACCESS_REMOTE_WRITE, &at);

		if (c != URNIC_MR_OK) {
			refuse(e, qp, pkt, key_code(c), ce);
			return;
		}
		if (!at.odp) {
			memcpy(at.host, pkt->payload, n);
		} else if (urnic_odp_write(e->mrs.odp, at.host, pkt->payload, n)) {
			urnic_count(e, URNIC_CTR_odp_fault_remote);
			refuse(e, qp, pkt, URNIC_UET_RC_HOST_UNSUCCESS_CMPL, ce);
			return;
		}
	}
	urnic_pds_rx_packet(&qp->uet->rx, &pkt->pds, n, ce);
	if (msg)
		rmsg_got(msg, pkt);
}

/* READs taken whose responses are not all sent: what max_dest_rd_atomic bounds. */
static uint32_t unanswered(const struct urnic_uet_qp *u)
{
	uint32_t n = 0;

	for (uint32_t k = 0; k < u->job_count; k++)
		n += !u->jobs[(u->job_head + k) % u->njobs].all_sent;
	return n;
}

static void rx_read(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_uet_pkt *pkt,
		    bool ce)
{
	struct urnic_uet_qp *u = qp->uet;
	const struct urnic_uet_ses *s = &pkt->ses;
	struct urnic_mr_at at = { 0 };
	struct urnic_uet_job *j;

	if (pkt->payload_bytes || s->request_length > e->cfg.max_msg_bytes) {
		urnic_count(e, URNIC_CTR_uet_drop_bad_ses);
		refuse(e, qp, pkt, URNIC_UET_RC_UNSUPPORTED_OP, ce);
		return;
	}
	if (s->request_length) {
		enum urnic_mr_check c =
			s->mem_key >> 32
				? URNIC_MR_BAD_KEY
				: urnic_mr_resolve_remote(&e->mrs, qp->pd, qp->qpn,
							  (uint32_t)s->mem_key, s->buffer_offset,
							  s->request_length,
							  URNIC_ACCESS_REMOTE_READ, &at);

		if (c != URNIC_MR_OK) {
			refuse(e, qp, pkt, key_code(c), ce);
			return;
		}
	}
	if (unanswered(u) >= u->njobs / 2) {
		/* More READs than max_dest_rd_atomic (IBTA 9.7.5.1.3): invalid request. */
		urnic_count(e, URNIC_CTR_refused_rd_atomic);
		refuse(e, qp, pkt, URNIC_UET_RC_UNSUPPORTED_OP, ce);
		return;
	}
	if (u->job_count == u->njobs) {
		/* The slots hold READs answered whole whose ACK has not come: the requester
		 * completed them and asked again before its ACK arrived. Not taken: it is
		 * sent again. */
		urnic_count(e, URNIC_CTR_uet_read_deferred);
		return;
	}
	urnic_pds_rx_packet(&u->rx, &pkt->pds, 0, ce);
	j = &u->jobs[(u->job_head + u->job_count++) % u->njobs];
	*j = (struct urnic_uet_job){ .used = true,
				     .msg_id = s->msg_id,
				     .req_psn = pkt->pds.psn,
				     .va = s->buffer_offset,
				     .rkey = (uint32_t)s->mem_key,
				     .len = s->request_length };
}

/* A READ response (RSP_DATA) to this side's READ msg_id. */
static void rx_response(struct urnic_engine *e, struct urnic_qp *qp,
			const struct urnic_uet_pkt *pkt, bool ce)
{
	struct urnic_uet_qp *u = qp->uet;
	const struct urnic_uet_ses *s = &pkt->ses;
	uint32_t n = (uint32_t)pkt->payload_bytes;
	uint32_t end = qp->req.idx + (qp->req.off_bytes ? 1 : 0);

	/* Taken whatever it holds: a response that fits no READ is dropped, counted, and
	 * not asked for again. */
	urnic_pds_rx_packet(&u->rx, &pkt->pds, n, ce);
	for (uint32_t i = qp->comp.idx; i != end; i++) {
		struct urnic_send_wqe *w = rc_swqe(qp, i);
		struct urnic_uet_wqe *uw = &u->wqe[i & u->sq_mask];

		if (w->opcode != URNIC_WR_RDMA_READ || !w->started || uw->msg_id != s->msg_id)
			continue;
		if (s->mod_len != w->length || s->msg_offset > w->length ||
		    n > w->length - s->msg_offset || uw->rsp_done) {
			urnic_count(e, URNIC_CTR_uet_drop_bad_ses);
			return;
		}
		if (n && urnic_sge_scatter(&e->mrs, qp->pd, w->sge, w->num_sge, s->msg_offset,
					   pkt->payload, n))
			uw->status = URNIC_WC_LOC_PROT_ERR;
		uw->read_got += n;
		uw->rsp_done = uw->read_got == w->length;
		urnic_uet_complete_sq(e, qp);
		return;
	}
	urnic_count(e, URNIC_CTR_uet_drop_bad_ses);
}

void urnic_uet_target_advance(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_uet_qp *u = qp->uet;

	while (qp->state == URNIC_QPS_RTR || qp->state == URNIC_QPS_RTS) {
		struct urnic_uet_rmsg *msg = &u->msg[u->rsn_next % URNIC_UET_MSG_SLOTS];
		uint32_t cons = atomic_load_explicit(&qp->rq.cons, memory_order_relaxed);
		const struct urnic_recv_wqe *w = urnic_wq_slot(&qp->rq, cons);
		struct urnic_cqe cqe = { .status = URNIC_WC_SUCCESS, .qp_num = qp->qpn };

		if (!msg->used || !msg->eom || msg->got != msg->len ||
		    urnic_pds_psn_diff(u->rx.cack, msg->last_psn) < 0)
			break;
		cqe.wr_id = w->wr_id;
		cqe.src_qp = qp->attr.dest_qp_num;
		cqe.opcode = msg->write ? URNIC_WC_RECV_RDMA_WITH_IMM : URNIC_WC_RECV;
		cqe.byte_len = msg->len;
		if (msg->imm) {
			cqe.wc_flags = URNIC_WC_WITH_IMM;
			cqe.imm_be = msg->imm_be;
		}
		memset(msg, 0, sizeof(*msg));
		u->rsn_next++;
		/* The slot is free before its completion is visible (msg.c, as for sends). */
		atomic_store_explicit(&qp->rq.cons, cons + 1, memory_order_release);
		if (!urnic_complete(e, qp, qp->recv_cq, &cqe, false))
			return;
	}
}

void urnic_uet_rx_request(struct urnic_engine *e, struct urnic_qp *qp,
			  const struct urnic_uet_pkt *pkt, bool ce)
{
	struct urnic_uet_qp *u = qp->uet;

	if (pkt->pds.flags & URNIC_UET_F_SYN) {
		/* 0-RTT establishment (UE 1.0 PDS): the start PSN is the packet's less its
		 * offset; later SYNs must agree. */
		uint32_t start = pkt->pds.psn - pkt->pds.psn_offset;

		if (!u->rx_synced) {
			struct urnic_pds_cfg c;

			urnic_pds_cfg_default(&c, start);
			urnic_pds_rx_init(&u->rx, &c);
			u->rx_start = start;
			u->rx_synced = true;
		} else if (start != u->rx_start) {
			urnic_count(e, URNIC_CTR_uet_drop_bad_header);
			return;
		}
	} else if (!u->rx_synced) {
		urnic_count(e, URNIC_CTR_uet_drop_unknown_pdc); /* no start PSN known yet */
		return;
	}

	switch (urnic_pds_rx_check(&u->rx, pkt->pds.psn)) {
	case URNIC_PDS_RX_OUT_OF_WINDOW:
		urnic_count(e, URNIC_CTR_uet_drop_out_of_window);
		urnic_uet_send_nack(e, qp, pkt->pds.psn, URNIC_UET_NACK_PSN_OOR_WINDOW, 0);
		return;
	case URNIC_PDS_RX_DUPLICATE:
		/* Taken before: our ACK was lost or late. Say it again, do nothing again. */
		urnic_count(e, URNIC_CTR_uet_rx_duplicate);
		urnic_pds_rx_packet(&u->rx, &pkt->pds, (uint32_t)pkt->payload_bytes, ce);
		break;
	case URNIC_PDS_RX_NEW:
		e->hold.rx_requests++;
		if (pkt->pds.next == URNIC_UET_NEXT_RSP_DATA) {
			rx_response(e, qp, pkt, ce);
			break;
		}
		switch (pkt->ses.opcode) {
		case URNIC_UET_SES_SEND:
			rx_send(e, qp, pkt, ce);
			break;
		case URNIC_UET_SES_WRITE:
			rx_write(e, qp, pkt, ce);
			break;
		case URNIC_UET_SES_READ:
			rx_read(e, qp, pkt, ce);
			break;
		default:
			urnic_count(e, URNIC_CTR_uet_drop_bad_ses);
			refuse(e, qp, pkt, URNIC_UET_RC_UNSUPPORTED_OP, ce);
			return;
		}
		break;
	}
	if (qp->state == URNIC_QPS_ERR)
		return;
	urnic_uet_target_advance(e, qp);
	if (urnic_pds_rx_ack_due(&u->rx))
		urnic_uet_send_ack(e, qp);
	else if (u->rx.unacked)
		u->ack_pending = true;
	urnic_engine_qp_wake(e, qp);
}

/* The datagram's type and headers as an RC context takes them. */
static bool rc_shape(const struct urnic_uet_pkt *pkt)
{
	switch (pkt->pds.type) {
	case URNIC_UET_RUD_REQ:
		return (pkt->pds.next == URNIC_UET_NEXT_REQ_STD ||
			pkt->pds.next == URNIC_UET_NEXT_RSP_DATA) &&
		       !pkt->pds.use_rsv_pdc;
	case URNIC_UET_ACK_CC:
		return pkt->pds.next == URNIC_UET_NEXT_NONE || pkt->pds.next == URNIC_UET_NEXT_RSP;
	case URNIC_UET_NACK:
		return !(pkt->pds.flags & URNIC_UET_F_NT);
	case URNIC_UET_CTRL:
		return pkt->pds.next == URNIC_UET_CTRL_PROBE;
	default:
		return false;
	}
}

void urnic_uet_rx(struct urnic_engine *e, const struct urnic_rx_meta *m, const uint8_t *buf,
		  size_t len)
{
	struct urnic_uet_pkt pkt;
	struct urnic_qp *qp;
	bool ce = (m->tos & ECN_MASK) == ECN_CE;

	e->now_ns = m->now_ns;
	urnic_count(e, URNIC_CTR_rx_packets);
	urnic_count_n(e, URNIC_CTR_rx_bytes, len);
	if (urnic_uet_decode(&pkt, buf, len) != URNIC_UET_R_OK || !rc_shape(&pkt)) {
		urnic_count(e, URNIC_CTR_uet_drop_bad_header);
		return;
	}
	qp = pkt.pds.type == URNIC_UET_RUD_REQ && (pkt.pds.flags & URNIC_UET_F_SYN)
		     ? urnic_uet_syn_qp(e, m->src_ip, pkt.pds.spdcid)
		     : pdc_qp(e, pkt.pds.dpdcid);
	/* The PDC is found by {source, destination, SPDCID} (UE 1.0 PDS): the QP's peer's. */
	if (!qp || qp->uet->rpdc != pkt.pds.spdcid ||
	    memcmp(m->src_ip, qp->attr.peer.ip, e->cfg.ipv6 ? 16 : 4) != 0) {
		urnic_count(e, URNIC_CTR_uet_drop_unknown_pdc);
		return;
	}
	urnic_engine_serve(e, qp);
	if (qp->state != URNIC_QPS_RTR && qp->state != URNIC_QPS_RTS) {
		urnic_count(e, URNIC_CTR_uet_drop_qp_state);
	} else {
		if (ce)
			urnic_count(e, URNIC_CTR_rx_ecn_ce);
		switch (pkt.pds.type) {
		case URNIC_UET_RUD_REQ:
			urnic_uet_rx_request(e, qp, &pkt, ce);
			break;
		case URNIC_UET_ACK_CC:
			urnic_uet_rx_ack(e, qp, &pkt);
			break;
		case URNIC_UET_NACK:
			urnic_uet_rx_nack(e, qp, &pkt.pds);
			break;
		case URNIC_UET_CTRL: {
			struct urnic_uet_pds ack = { 0 };

			if (!qp->uet->rx_synced)
				break;
			urnic_pds_rx_probe(&qp->uet->rx, &pkt.pds, &ack);
			ack.spdcid = qp->uet->lpdc;
			ack.dpdcid = qp->uet->rpdc;
			urnic_uet_send_ctrl(e, qp, &ack);
			urnic_count(e, URNIC_CTR_uet_acks_sent);
			break;
		}
		default:
			break;
		}
	}
	urnic_engine_serve(e, NULL);
}
