/* SPDX-License-Identifier: MIT */
/*
 * cc.c - DCQCN in the RoCEv2 engine (cc.h): the notification point answers CE-marked
 * packets with CNPs (IBTA Annex A17.9.3: BTH opcode 0x81, BECN set, DestQP the sending
 * QP, PSN 0, 16 reserved bytes), the reaction point cuts the QP's rate on a CNP and
 * paces its requester at that rate, with ConnectX's parameters (cc/dcqcn.h). The
 * algorithm is cc/dcqcn.c's; this file is where the packets and the QPs meet it.
 */
#include "engine/roce/cc.h"
#include "engine/roce/msg.h"
#include "engine/roce/rc.h"

/* ConnectX sends its CNPs with DSCP 48 (CNP_DSCP), not ECN-capable: the notification
 * itself must not be marked, nor wait behind the data it reports on. */
enum { CNP_TCLASS = 48 << 2 };

/* The bytes a packet of w takes on the wire (UDP payload), for the rate: a data
 * packet's payload and headers; a READ or atomic request is headers only. */
enum { REQ_HDR_BYTES = 32, READ_REQ_BYTES = 48 };

/* The QP's state for `urnic counters --qp`, and its cuts and increases since last
 * seen: on the QP only (a device has no one rate). */
static void publish(struct urnic_engine *e, struct urnic_qp *qp, uint64_t cuts, uint64_t incs)
{
	struct urnic_dcqcn_rp *rp = &qp->cc.rp;

	urnic_count_n(e, URNIC_CTR_cc_rate_cuts, rp->cuts - cuts);
	urnic_count_n(e, URNIC_CTR_cc_rate_increases, rp->increases - incs);
	if (e->stats.cur_qp) {
		e->stats.cur_qp[URNIC_CTR_cc_rate_mbps] = rp->rate_bps / 1000000u;
		e->stats.cur_qp[URNIC_CTR_cc_alpha] = rp->alpha >> 10; /* 1/2^20 -> 1/1024 */
	}
}

static void send_cnp(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_txpkt *p = urnic_tx_begin(e, qp);
	struct urnic_pkt h = { 0 };
	ssize_t n;

	h.bth = (struct urnic_bth){ .opcode = URNIC_OP_CNP,
				    .pkey = URNIC_DEFAULT_PKEY,
				    .becn = true,
				    .dqpn = qp->attr.dest_qp_num };
	p->dst.traffic_class = CNP_TCLASS;
	n = urnic_pkt_encode_hdr(&h, p->hdr, sizeof(p->hdr));
	p->hdr_bytes = n > 0 ? (uint32_t)n : 0;
	p->payload_bytes = 0;
	urnic_tx_commit(e, p);
	urnic_count(e, URNIC_CTR_tx_cnp);
}

void urnic_roce_cc_rx_ce(struct urnic_engine *e, struct urnic_qp *qp)
{
	urnic_count(e, URNIC_CTR_rx_ecn_ce);
	/* A QP in RTR answers too: its peer's sends are what the queue holds. */
	if (!e->cfg.dcqcn || !qp->ops->connected)
		return;
	if (urnic_dcqcn_np_ce(&qp->cc.np, &e->cfg.dcqcn_params, e->now_ns))
		send_cnp(e, qp);
}

void urnic_roce_cc_rx_cnp(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_dcqcn_rp *rp = &qp->cc.rp;
	uint64_t cuts, incs;

	if (!e->cfg.dcqcn) {
		urnic_count(e, URNIC_CTR_rx_cnp_cc_off);
		return;
	}
	urnic_count(e, URNIC_CTR_rx_cnp);
	if (!qp->cc.rp_on) {
		urnic_dcqcn_rp_init(rp, &e->cfg.dcqcn_params, e->now_ns);
		qp->cc.rp_on = true;
	}
	cuts = rp->cuts;
	incs = rp->increases;
	urnic_dcqcn_rp_cnp(rp);
	urnic_dcqcn_rp_advance(rp, e->now_ns); /* the cut, if one is due */
	publish(e, qp, cuts, incs);
}

static uint32_t next_pkt_bytes(const struct urnic_qp *qp, const struct urnic_send_wqe *w)
{
	uint32_t left, mtu = qp->attr.path_mtu;

	if (roce_is_local_op(w->opcode))
		return 0;
	if (rc_wqe_is_read_atomic(w))
		return READ_REQ_BYTES;
	left = w->length - (w->started ? qp->req.off_bytes : 0);
	return REQ_HDR_BYTES + (left < mtu ? left : mtu) + URNIC_ICRC_BYTES;
}

bool urnic_roce_cc_pace(struct urnic_engine *e, struct urnic_qp *qp, uint32_t bytes)
{
	struct urnic_dcqcn_rp *rp = &qp->cc.rp;
	uint64_t cuts = rp->cuts, incs = rp->increases, wait = 0;
	bool ok;

	urnic_dcqcn_rp_advance(rp, e->now_ns);
	ok = urnic_dcqcn_rp_may_send(rp, e->now_ns, bytes, &wait);
	publish(e, qp, cuts, incs);
	if (ok)
		qp->cc.paced = false;
	else if (!qp->cc.paced) {
		qp->cc.paced = true;
		urnic_count(e, URNIC_CTR_cc_paced);
	}
	return ok;
}

bool urnic_roce_cc_pace_wqe(struct urnic_engine *e, struct urnic_qp *qp,
			    const struct urnic_send_wqe *w)
{
	return urnic_roce_cc_pace(e, qp, next_pkt_bytes(qp, w));
}

void urnic_roce_cc_wake(struct urnic_engine *e, struct urnic_qp *qp, uint64_t *next)
{
	uint64_t at = urnic_dcqcn_rp_wake(&qp->cc.rp);

	if (e->now_ns >= at) {
		qp->cc.paced = false;
		e->timers.fired = true; /* the requester sends again */
	} else if (!*next || at < *next) {
		*next = at;
	}
}
