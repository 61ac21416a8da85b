/* SPDX-License-Identifier: MIT */
/*
 * uet_rc.c - the ops of RC QPs on the UET transport (uet_rc.h, uet_int.h): their
 * delivery context set up as the QP enters RTR and RTS, the timers (loss by time, tail
 * probes, timeouts, RNR waits), flush and error.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/roce/msg.h"
#include "engine/roce/rc.h"
#include "engine/uet/uet_int.h"

/* NSCC's view of a software path: the port's rate (ibv_query_port's 100 Gb/s) and a
 * round trip of 50 us unloaded, so its window (1.5 BDP, 937 KB) covers what RoCE's
 * requester window (256 packets of 4 KiB) keeps in flight on a host. */
#define UET_LINK_BPS 100000000000ull
#define UET_BASE_RTT_NS 50000ull

void urnic_uet_qp_free(struct urnic_qp *qp)
{
	if (!qp->uet)
		return;
	free(qp->uet->wqe);
	free(qp->uet->jobs);
	free(qp->uet);
	qp->uet = NULL;
}

static int setup_rtr(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_uet_qp *u = calloc(1, sizeof(*u));
	struct urnic_pds_cfg c;

	if (!u)
		return -ENOMEM;
	/* Twice the responder resources: a READ answered whole keeps its slot until its
	 * responses are acknowledged (a lost one is rebuilt from it), and the requester
	 * may ask again as soon as the data is in. */
	u->njobs = 2 * (qp->resp.res_count ? qp->resp.res_count : 1);
	u->jobs = calloc(u->njobs, sizeof(*u->jobs));
	u->sq_mask = qp->sq.depth ? qp->sq.depth - 1 : 0;
	u->wqe = calloc(qp->sq.depth ? qp->sq.depth : 1, sizeof(*u->wqe));
	if (!u->jobs || !u->wqe) {
		free(u->jobs);
		free(u->wqe);
		free(u);
		return -ENOMEM;
	}
	u->lpdc = (uint16_t)qp->qpn;
	u->rpdc = (uint16_t)qp->attr.dest_qp_num;
	u->ack_ev = urnic_uet_ev_port(qp->qpn ^ qp->attr.dest_qp_num);
	/* The receive window starts with the peer's first SYN (uet_int.h); READ responses
	 * sent in RTR take PSNs from here. */
	urnic_pds_cfg_default(&c, qp->attr.sq_psn);
	urnic_pds_rx_init(&u->rx, &c);
	urnic_pds_tx_init(&u->tx, &c);
	u->tx_start = qp->attr.sq_psn;
	(void)e;
	qp->uet = u;
	return 0;
}

static void setup_rts(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_uet_qp *u = qp->uet;
	struct urnic_pds_cfg c;
	struct urnic_nscc_params p = {
		.link_bps = UET_LINK_BPS,
		.base_rtt_ns = UET_BASE_RTT_NS,
		.mtu = qp->attr.path_mtu,
	};

	urnic_pds_cfg_default(&c, qp->attr.sq_psn);
	/* RC's retry_cnt (IBTA 9.7.6.1.3): timeouts in a row without progress. */
	c.retry_max = qp->attr.retry_cnt;
	/* The QP's Local ACK Timeout (IBTA 9.7.6.1.3) is the least the timeout waits: a
	 * queue deeper than the default floor (a 1 MiB buffer at 1 Gb/s holds 8 ms) made
	 * every packet in flight time out and be sent again while it still waited there,
	 * as RoCE's timer of the same attribute does not. Loss is found by time and tail
	 * probes well before it. */
	if (urnic_qp_rto_ns(qp->attr.timeout) > c.rto_min_ns)
		c.rto_min_ns = urnic_qp_rto_ns(qp->attr.timeout);
	if (c.rto_min_ns > c.rto_max_ns)
		c.rto_max_ns = c.rto_min_ns;
	if (u->tx.nxt == u->tx_start) {
		urnic_pds_tx_init(&u->tx, &c);
		u->tx_start = qp->attr.sq_psn;
	} else {
		/* READ responses went in RTR: their PSN space, which the peer learnt from
		 * their SYN, goes on. */
		u->tx.cfg.retry_max = c.retry_max;
		u->tx.cfg.rto_min_ns = c.rto_min_ns;
		u->tx.cfg.rto_max_ns = c.rto_max_ns;
	}
	urnic_reps_init(&u->reps, URNIC_UET_EVS);
	u->cc_on = !e->cfg.uet_cc_off;
	urnic_nscc_init(&u->cc, &p, e->now_ns);
	u->rnr_left = qp->attr.rnr_retry;
	u->next_msg_id = 0;
	u->next_rsn = 0;
}

void urnic_uet_qp_enter(struct urnic_engine *e, struct urnic_qp *qp, enum urnic_qp_state s)
{
	if (s == URNIC_QPS_RTR && !qp->uet && setup_rtr(e, qp)) {
		urnic_qp_to_error(e, qp);
		return;
	}
	if (s == URNIC_QPS_RTS && qp->uet)
		setup_rts(e, qp);
}

static void op_rx(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
		  const struct urnic_rx_meta *m)
{
	/* UET datagrams come through urnic_uet_rx, never as RoCE packets. */
	(void)e, (void)qp, (void)pkt, (void)m;
}

static bool op_from_peer(const struct urnic_qp *qp, const struct urnic_pkt *pkt)
{
	(void)qp, (void)pkt;
	return false;
}

static void op_timers(struct urnic_engine *e, struct urnic_qp *qp, uint64_t *next, uint64_t *hold)
{
	struct urnic_uet_qp *u = qp->uet;
	uint64_t at = 0, timeouts;
	enum urnic_pds_tx_action act;

	(void)hold;
	if (!u || (qp->state != URNIC_QPS_RTS && qp->state != URNIC_QPS_RTR))
		return;
	timeouts = u->tx.st.timeouts;
	act = urnic_pds_tx_timer(&u->tx, e->now_ns, &at);
	urnic_count_n(e, URNIC_CTR_uet_timeouts, u->tx.st.timeouts - timeouts);
	switch (act) {
	case URNIC_PDS_TX_PROBE:
		urnic_uet_send_probe(e, qp);
		break;
	case URNIC_PDS_TX_FAILED:
		/* retry_cnt timeouts with no progress (IBTA 9.7.6.1.3): the oldest WQE
		 * completes with RETRY_EXC_ERR and the QP errs. */
		urnic_count(e, URNIC_CTR_uet_failed);
		if (qp->comp.idx != atomic_load_explicit(&qp->sq.prod, memory_order_acquire))
			urnic_rc_fail(e, qp, URNIC_WC_RETRY_EXC_ERR);
		else
			urnic_qp_to_error(e, qp);
		return;
	default:
		break;
	}
	if (u->tx.lost) {
		/* Loss by time: what is lost goes in the next progress. */
		e->timers.fired = true;
		urnic_engine_qp_wake(e, qp);
	}
	if (at && (!*next || at < *next))
		*next = at;
}

static void op_release_held(struct urnic_engine *e, struct urnic_qp *qp, bool parting)
{
	/* Nothing is held: a pending ACK leaves with the pass, or now if the QP goes. */
	if (parting && qp->uet && qp->uet->ack_pending &&
	    (qp->state == URNIC_QPS_RTR || qp->state == URNIC_QPS_RTS))
		urnic_uet_send_ack(e, qp);
}

static void op_enter_error(struct urnic_engine *e, struct urnic_qp *qp, bool fatal)
{
	(void)e, (void)qp, (void)fatal;
}

const struct urnic_qp_ops urnic_uet_rc_ops = {
	.name = "UET RC",
	.connected = true,
	.rx = op_rx,
	.from_peer = op_from_peer,
	.progress = urnic_uet_progress,
	.timers = op_timers,
	.flush = urnic_rc_op_flush, /* both queues, as every type's */
	.release_held = op_release_held,
	.enter_error = op_enter_error,
};
