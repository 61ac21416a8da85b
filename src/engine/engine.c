/* SPDX-License-Identifier: MIT */
/*
 * engine.c - the life of an engine and of its QPs: init, the QP table (QPNs, the ops of
 * each QP type), modify (IBTA 10.3.1) and removal. Receive is the protocol's
 * (roce/rx.c), a pass is pass.c's.
 */
#include "engine/engine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/iwarp/iw_qp.h"
#include "engine/raw.h"
#include "engine/roce/roce.h"
#include "engine/uet/uet_rc.h"
#include "engine/slots.h"
#include "mem/mw.h"
#include "wire/psn.h"

int urnic_engine_init(struct urnic_engine *e, bool ipv6, const uint8_t *local_ip,
		      urnic_tx_flush_fn flush, void *io, uint64_t seed)
{
	int ret;

	memset(e, 0, sizeof(*e));
	e->cfg.ipv6 = ipv6;
	memcpy(e->cfg.local_ip, local_ip, ipv6 ? 16 : 4);
	e->cfg.icrc_any_ipv4_id = true;
	e->cfg.max_msg_bytes = 1u << 31;
	e->cfg.iw_await_first_ns = URNIC_IW_AWAIT_FIRST_NS;
	e->hooks.flush = flush;
	e->hooks.io = io;
	e->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
	e->hold.max_ns = URNIC_ACK_HOLD_DEFAULT_NS;
	e->hold.app_polling = true;
	e->stats.qp = calloc(URNIC_MAX_QP, sizeof(*e->stats.qp));
	if (!e->stats.qp)
		return -ENOMEM;
	e->stats.qp_owned = true;
	ret = urnic_mr_table_init(&e->mrs, 1 << 16);
	if (ret)
		goto free_qp_ctrs;
	return 0;

free_qp_ctrs:
	free(e->stats.qp);
	e->stats.qp = NULL;
	return ret;
}

void urnic_engine_fini(struct urnic_engine *e)
{
	urnic_mr_table_fini(&e->mrs);
	urnic_engine_set_qp_counters(e, NULL);
	free(e->raw);
	e->raw = NULL;
}

void urnic_engine_set_qp_counters(struct urnic_engine *e, struct urnic_qp_counters *table)
{
	if (table && e->stats.qp)
		memcpy(table, e->stats.qp, e->qpt.end * sizeof(*table));
	if (e->stats.qp_owned)
		free(e->stats.qp);
	e->stats.qp = table;
	e->stats.qp_owned = false;
	e->stats.cur_qp = NULL;
}

static const struct urnic_qp_ops *ops_of(const struct urnic_engine *e, enum urnic_qp_type t)
{
	/* siw offers RC only (RFC 5040 runs on a connection); other types are refused. */
	if (e->cfg.iwarp)
		return t == URNIC_QPT_RC ? &urnic_iw_rc_ops : NULL;
	/* UET carries RC QPs (uet/uet_rc.h); its datagram service is not offered yet. */
	if (e->cfg.uet)
		return t == URNIC_QPT_RC ? &urnic_uet_rc_ops : NULL;
	switch (t) {
	case URNIC_QPT_RC:
		return &urnic_roce_rc_ops;
	case URNIC_QPT_UC:
		return &urnic_roce_uc_ops;
	case URNIC_QPT_UD:
		return &urnic_roce_ud_ops;
	case URNIC_QPT_XRC_SEND:
		return &urnic_roce_xrc_send_ops;
	case URNIC_QPT_XRC_RECV:
		return &urnic_roce_xrc_recv_ops;
	case URNIC_QPT_RAW_PACKET:
		return &urnic_raw_ops;
	}
	return NULL;
}

int urnic_engine_qp_add(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_qp_table *t = &e->qpt;

	qp->ops = ops_of(e, qp->type);
	if (!qp->ops)
		return e->cfg.iwarp || e->cfg.uet ? -EOPNOTSUPP : -EINVAL;
	if (e->cfg.uet && qp->srq)
		return -EOPNOTSUPP; /* UET's receives are the QP's own RQ's (uet/uet_int.h) */
	/* QPN = owner << 20 | generation << 12 | index. Indexes 0 and 1 are QP0/QP1
	 * (IBTA 3.5.3). The owner is the process's slot on a shared address, so QPNs are
	 * unique per address and packets can be steered by them. A QPN must not come back
	 * soon: a peer's packets, a window bound through a QP (IBTA 10.6.7: a type 2B
	 * window serves its QP only) or anything else that names the old QP would reach
	 * the new one. So slots are taken in turn, as rxe allocates QPNs cyclically, and
	 * each slot counts its own generation: a QPN recurs after 255 QPs have had its
	 * slot, at least 255 * 4094 creations while the table has room. */
	for (uint32_t n = 0; n < URNIC_MAX_QP; n++) {
		uint32_t i = (t->next + n) % URNIC_MAX_QP;

		if (i < 2 || t->qps[i])
			continue;
		t->next = i + 1;
		t->gen[i] = (uint8_t)(t->gen[i] + 1);
		if (!t->gen[i])
			t->gen[i] = 1; /* never 0: a QPN is never a bare index */
		qp->qpn = e->cfg.qpn_owner << URNIC_QPN_OWNER_SHIFT |
			  (uint32_t)t->gen[i] << URNIC_QPN_INDEX_BITS | i;
		t->qps[i] = qp;
		if (i + 1 > t->end)
			t->end = i + 1;
		urnic_engine_qp_wake(e, qp);
		if (e->stats.qp) {
			memset(&e->stats.qp[i], 0, sizeof(e->stats.qp[i]));
			e->stats.qp[i].type = (uint8_t)qp->type;
			e->stats.qp[i].state = (uint8_t)qp->state;
			e->stats.qp[i].qpn = qp->qpn;
		}
		return 0;
	}
	return -ENOMEM;
}

/* What the QP holds for the application's answer leaves now (roce/hold.c): it changes
 * state or goes away (an ibv_rc_pingpong exits right after its last receive, and its
 * peer must still see the last SEND acknowledged). parting: it goes away. */
static void release_held(struct urnic_engine *e, struct urnic_qp *qp, bool parting)
{
	urnic_engine_serve(e, qp);
	qp->ops->release_held(e, qp, parting);
	urnic_engine_serve(e, NULL);
}

void urnic_engine_qp_remove(struct urnic_engine *e, struct urnic_qp *qp, uint64_t now_ns)
{
	struct urnic_qp_table *t = &e->qpt;
	uint32_t i = slot_index(qp->qpn);

	e->now_ns = now_ns;
	release_held(e, qp, true);
	urnic_engine_tm_drop_sq(qp);
	/* Its type 2B windows could serve no other QP; a later QP must not inherit them. */
	urnic_mw_release_qp(&e->mrs, qp->qpn);
	urnic_iw_qp_free(qp);
	urnic_uet_qp_free(qp);

	if (t->qps[i] == qp) {
		t->qps[i] = NULL;
		slot_clear(t->active, i);
		slot_clear(t->awaiting, i);
		slot_clear(t->iw_tx, i);
		if (e->stats.qp)
			e->stats.qp[i].qpn = 0;
	}
	while (t->end > 2 && !t->qps[t->end - 1])
		t->end--;
}

static void reset_protocol_state(struct urnic_qp *qp)
{
	urnic_engine_tm_drop_sq(qp);
	urnic_iw_qp_free(qp); /* its connection is gone with the state (RFC 5040 6.2) */
	urnic_uet_qp_free(qp);
	memset(&qp->req, 0, sizeof(qp->req));
	memset(&qp->comp, 0, sizeof(qp->comp));
	memset(&qp->resp, 0, sizeof(qp->resp));
	memset(&qp->cc, 0, sizeof(qp->cc));
	/* IBTA 10.3.1: RESET empties the work queues. */
	atomic_store(&qp->sq.prod, 0);
	atomic_store(&qp->sq.cons, 0);
	atomic_store(&qp->rq.prod, 0);
	atomic_store(&qp->rq.cons, 0);
}

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

static void apply_attr(struct urnic_qp_attr *a, const struct urnic_qp_attr *attr, uint32_t mask)
{
	if (mask & URNIC_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & URNIC_QP_ACCESS_FLAGS)
		a->access = attr->access;
	if (mask & URNIC_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & URNIC_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & URNIC_QP_AV) {
		a->peer = attr->peer;
		a->sgid_index = attr->sgid_index;
	}
	if (mask & URNIC_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & URNIC_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & URNIC_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & URNIC_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & URNIC_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn & URNIC_PSN_MASK;
	if (mask & URNIC_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn & URNIC_PSN_MASK;
	if (mask & URNIC_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & URNIC_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & URNIC_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & URNIC_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;
}

void urnic_engine_qp_apply(struct urnic_engine *e, struct urnic_qp *qp,
			   const struct urnic_qp_attr *attr, enum urnic_qp_state next,
			   uint32_t mask, uint64_t now_ns)
{
	struct urnic_qp_attr *a = &qp->attr;

	e->now_ns = now_ns;
	/* Leaving RESET fixes the type (drivers and tests may set it up to then). */
	if (qp->state == URNIC_QPS_RESET)
		qp->ops = ops_of(e, qp->type);
	urnic_engine_qp_wake(e, qp);
	apply_attr(a, attr, mask);
	if (!(mask & URNIC_QP_STATE) || next == qp->state)
		return;
	release_held(e, qp, false);
	switch (next) {
	case URNIC_QPS_RESET:
		reset_protocol_state(qp);
		break;
	case URNIC_QPS_RTR:
		qp->resp.epsn = a->rq_psn;
		qp->resp.msn = 0;
		qp->resp.res_count =
			pow2_at_least(a->max_dest_rd_atomic ? a->max_dest_rd_atomic : 1);
		break;
	case URNIC_QPS_RTS:
		qp->req.psn = a->sq_psn;
		qp->req.retrying = false;
		qp->comp.psn = a->sq_psn;
		qp->req.retry_left = a->retry_cnt;
		qp->req.rnr_left = a->rnr_retry;
		break;
	case URNIC_QPS_ERR:
		urnic_engine_serve(e, qp);
		urnic_engine_enter_error(e, qp, false);
		urnic_engine_serve(e, NULL);
		return;
	default:
		break;
	}
	qp->state = next;
	slot_note_state(e, qp);
	if (qp->ops == &urnic_uet_rc_ops)
		urnic_uet_qp_enter(e, qp, next);
}
