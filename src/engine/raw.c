/* SPDX-License-Identifier: MIT */
/*
 * raw.c - raw packet QPs: their send loop, their receive of steered frames, and the
 * device's flow rules (raw.h).
 *
 * Sending (ibv_post_send(3) on IBV_QPT_RAW_PACKET): IBV_WR_SEND only; the WR's data is
 * the frame, from the Ethernet header on, copied into the raw tx batch; a WR shorter
 * than an Ethernet header or longer than the port's frame completes with LOC_LEN_ERR,
 * another opcode with LOC_QP_OP_ERR, an SGE that does not resolve with LOC_PROT_ERR,
 * and the QP goes to error (IBTA 10.8.3.1, as for every QP). Receiving: in RTR and RTS,
 * the frame whole into the next receive WQE (the QP's RQ or SRQ), byte_len its length;
 * no receive WQE: dropped and counted. The completion and receive WQE handling are the
 * RoCE parts' (roce/msg.h), which treat the QP as they treat a UD QP without a GRH.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/raw.h"
#include "engine/roce/msg.h"
#include "engine/roce/rc.h"
#include "mem/sge.h"

enum { RAW_BUDGET_FRAMES = 128, ETH_HDR_BYTES = 14 };

int urnic_engine_raw_init(struct urnic_engine *e, uint32_t frame_max)
{
	if (!e->raw) {
		e->raw = calloc(1, sizeof(*e->raw));
		if (!e->raw)
			return -ENOMEM;
	}
	if (frame_max)
		e->raw->frame_max =
			frame_max < URNIC_RAW_FRAME_MAX ? frame_max : URNIC_RAW_FRAME_MAX;
	else if (!e->raw->frame_max)
		e->raw->frame_max = URNIC_RAW_FRAME_MAX;
	return 0;
}

/* Room for one more frame: the batch goes to the driver when full; if the driver did
 * not take it (a test fabric without a wire), its frames are counted as lost. */
static uint8_t *frame_slot(struct urnic_engine *e)
{
	struct urnic_raw_tx *t = &e->raw->tx;

	if (t->n == URNIC_RAW_TX_FRAMES) {
		e->hooks.flush(e);
		if (t->n == URNIC_RAW_TX_FRAMES) {
			urnic_count_n(e, URNIC_CTR_drop_raw_tx_failed, t->n);
			t->n = 0;
		}
	}
	return t->frame[t->n];
}

/* The WR's frame into the batch; a completion status. */
static uint8_t frame_out(struct urnic_engine *e, struct urnic_qp *qp,
			 const struct urnic_send_wqe *w)
{
	struct urnic_frag f[URNIC_MAX_SGE];
	uint8_t *dst;
	uint32_t off = 0;
	int nf;

	if (w->opcode != URNIC_WR_SEND)
		return URNIC_WC_LOC_QP_OP_ERR;
	if (w->length < ETH_HDR_BYTES || w->length > e->raw->frame_max)
		return URNIC_WC_LOC_LEN_ERR;
	dst = frame_slot(e);
	if (w->flags & URNIC_SEND_INLINE) {
		memcpy(dst, w->inline_data, w->length);
	} else {
		nf = urnic_sge_gather(&e->mrs, qp->pd, w->sge, w->num_sge, 0, w->length, 0, f,
				      URNIC_MAX_SGE, e->odp_bounce, sizeof(e->odp_bounce));
		if (nf < 0)
			return URNIC_WC_LOC_PROT_ERR;
		for (int i = 0; i < nf; i++) {
			memcpy(dst + off, f[i].base, f[i].len);
			off += (uint32_t)f[i].len;
		}
	}
	e->raw->tx.len[e->raw->tx.n++] = w->length;
	urnic_count(e, URNIC_CTR_raw_tx_frames);
	return URNIC_WC_SUCCESS;
}

static bool raw_progress(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_req *r = &qp->req;
	uint32_t budget = RAW_BUDGET_FRAMES;
	bool did = false;

	if (qp->state != URNIC_QPS_RTS)
		return false;
	while (budget-- && qp->state == URNIC_QPS_RTS) {
		uint32_t prod = atomic_load_explicit(&qp->sq.prod, memory_order_acquire);
		struct urnic_send_wqe *w;
		uint8_t st;

		if (r->idx == prod)
			break;
		w = rc_swqe(qp, r->idx);
		did = true;
		st = frame_out(e, qp, w);
		if (st != URNIC_WC_SUCCESS) {
			/* The WQEs before it complete normally, this one with its error. */
			while (qp->comp.idx != r->idx && qp->state != URNIC_QPS_ERR)
				urnic_roce_complete_swqe(e, qp, URNIC_WC_SUCCESS);
			if (qp->state == URNIC_QPS_RTS)
				urnic_roce_fail_swqe(e, qp, w, st);
			return true;
		}
		/* The frame is a copy: the WR is complete once it is in the batch. */
		r->idx++;
	}
	while (qp->comp.idx != r->idx && qp->state != URNIC_QPS_ERR)
		urnic_roce_complete_swqe(e, qp, URNIC_WC_SUCCESS);
	return did;
}

/* A RoCE packet stands for the frame in the receive helpers: no immediate, no GRH. */
static const struct urnic_pkt no_pkt;

static void deliver(struct urnic_engine *e, struct urnic_qp *qp, const uint8_t *frame, uint32_t len)
{
	int ret;

	urnic_engine_serve(e, qp);
	if (qp->state == URNIC_QPS_ERR) {
		urnic_count(e, URNIC_CTR_drop_qp_error);
		return;
	}
	if (qp->state != URNIC_QPS_RTR && qp->state != URNIC_QPS_RTS) {
		urnic_count(e, URNIC_CTR_drop_qp_state);
		return;
	}
	if (!urnic_roce_take_rwqe(e, qp)) {
		urnic_count(e, URNIC_CTR_drop_no_rwqe);
		return;
	}
	qp->resp.rwqe_off = 0;
	ret = urnic_roce_place(e, qp, frame, len);
	if (ret == -EMSGSIZE) {
		urnic_roce_recv_too_long(e, qp, &no_pkt);
		return;
	}
	if (ret) {
		/* A receive SGE that does not resolve (IBTA 10.8.3.1). */
		urnic_roce_complete_rwqe(e, qp, &no_pkt, URNIC_WC_RECV, len, URNIC_WC_LOC_PROT_ERR);
		urnic_qp_to_error(e, qp);
		return;
	}
	urnic_count(e, URNIC_CTR_raw_rx_frames);
	urnic_roce_complete_rwqe(e, qp, &no_pkt, URNIC_WC_RECV, len, URNIC_WC_SUCCESS);
}

uint32_t urnic_engine_raw_rx(struct urnic_engine *e, const uint8_t *frame, size_t len,
			     uint64_t now_ns)
{
	struct urnic_raw *raw = e->raw;
	uint32_t idx[URNIC_RAW_MAX_FLOWS], qpns[URNIC_RAW_MAX_FLOWS];
	struct urnic_flow_keys k;
	uint32_t n, nq = 0;

	if (!raw || !raw->nrules)
		return 0;
	e->now_ns = now_ns;
	urnic_engine_serve(e, NULL);
	if (urnic_flow_parse(frame, len, &k) < 0) {
		urnic_count(e, URNIC_CTR_drop_raw_bad_frame);
		return 0;
	}
	n = urnic_flow_select(raw->rules, raw->nrules, &k, idx, URNIC_RAW_MAX_FLOWS);
	if (!n) {
		urnic_count(e, URNIC_CTR_drop_raw_no_flow);
		return 0;
	}
	if (len > raw->frame_max) {
		urnic_count(e, URNIC_CTR_drop_raw_too_long);
		return 0;
	}
	/* Once per QP, however many of its rules took the frame. */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t qpn = raw->rules[idx[i]].qpn;
		struct urnic_qp *qp;
		bool seen = false;

		for (uint32_t j = 0; j < nq && !seen; j++)
			seen = qpns[j] == qpn;
		if (seen)
			continue;
		qpns[nq++] = qpn;
		qp = urnic_engine_qp_find(e, qpn);
		/* RSS: the frame goes to one queue of the QP's table, by its hash. */
		if (qp && qp->rss && qp->rss->n)
			qp = urnic_engine_qp_find(
				e, qp->rss->qpn[urnic_flow_rss_hash(qp->rss, &k) % qp->rss->n]);
		if (qp && qp->type == URNIC_QPT_RAW_PACKET)
			deliver(e, qp, frame, (uint32_t)len);
	}
	urnic_engine_serve(e, NULL);
	return nq;
}

int urnic_engine_flow_add(struct urnic_engine *e, const struct urnic_flow_rule *r, uint32_t *id)
{
	struct urnic_qp *qp = urnic_engine_qp_find(e, r->qpn);
	struct urnic_raw *raw;

	if (!qp || qp->type != URNIC_QPT_RAW_PACKET)
		return -EINVAL;
	if (urnic_engine_raw_init(e, 0))
		return -ENOMEM;
	raw = e->raw;
	if (raw->nrules == URNIC_RAW_MAX_FLOWS)
		return -ENOMEM;
	raw->rules[raw->nrules] = *r;
	raw->rules[raw->nrules].id = *id = ++raw->next_id;
	raw->nrules++;
	return 0;
}

static void del_at(struct urnic_raw *raw, uint32_t i)
{
	/* Rules keep their order: ties between equal priorities go to the older. */
	memmove(&raw->rules[i], &raw->rules[i + 1], (raw->nrules - i - 1) * sizeof(raw->rules[0]));
	raw->nrules--;
}

int urnic_engine_flow_del(struct urnic_engine *e, uint32_t id)
{
	struct urnic_raw *raw = e->raw;

	for (uint32_t i = 0; raw && i < raw->nrules; i++) {
		if (raw->rules[i].id == id) {
			del_at(raw, i);
			return 0;
		}
	}
	return -ENOENT;
}

void urnic_engine_flow_del_qp(struct urnic_engine *e, uint32_t qpn)
{
	struct urnic_raw *raw = e->raw;

	for (uint32_t i = 0; raw && i < raw->nrules;) {
		if (raw->rules[i].qpn == qpn)
			del_at(raw, i);
		else
			i++;
	}
}

static void raw_rx(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
		   const struct urnic_rx_meta *m)
{
	/* RoCE packets are not a raw QP's: they are steered by QPN, which names no raw
	 * QP on the wire (roce/rx.c drops them by their opcode's transport). */
	(void)qp, (void)pkt, (void)m;
	urnic_count(e, URNIC_CTR_drop_opcode_qp_type);
}

static bool raw_from_peer(const struct urnic_qp *qp, const struct urnic_pkt *pkt)
{
	(void)qp, (void)pkt;
	return false;
}

static void raw_no_timers(struct urnic_engine *e, struct urnic_qp *qp, uint64_t *next,
			  uint64_t *hold)
{
	(void)e, (void)qp, (void)next, (void)hold;
}

static void raw_flush(struct urnic_engine *e, struct urnic_qp *qp)
{
	urnic_rc_flush(e, qp);
	urnic_roce_flush_rq(e, qp);
}

static void raw_release_held(struct urnic_engine *e, struct urnic_qp *qp, bool parting)
{
	(void)qp, (void)parting;
	/* The QP's rules go with it (ibv_destroy_qp refuses while the application holds
	 * any; this covers the engine's own teardown). */
	if (parting)
		urnic_engine_flow_del_qp(e, qp->qpn);
}

static void raw_enter_error(struct urnic_engine *e, struct urnic_qp *qp, bool fatal)
{
	(void)e, (void)qp, (void)fatal;
}

const struct urnic_qp_ops urnic_raw_ops = {
	.name = "RAW_PACKET",
	.opcode_flag = 0,
	.connected = false,
	.rx = raw_rx,
	.from_peer = raw_from_peer,
	.progress = raw_progress,
	.timers = raw_no_timers,
	.flush = raw_flush,
	.release_held = raw_release_held,
	.enter_error = raw_enter_error,
};
