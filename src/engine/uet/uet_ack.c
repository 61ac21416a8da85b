/* SPDX-License-Identifier: MIT */
/*
 * uet_ack.c - the acknowledgements of an RC QP on the UET transport (uet_int.h): the
 * requester's side of ACK_CC (what it delivered to the delivery context, the paths and
 * NSCC; an SES response's refusal; completions) and of NACKs (a trim, a receiver not
 * ready), and the target's ACK_CC, NACKs and the requester's probes as they are sent.
 */
#include <string.h>

#include "engine/roce/msg.h"
#include "engine/roce/rc.h"
#include "engine/uet/uet_int.h"

void urnic_uet_rx_ack(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_uet_pkt *pkt)
{
	struct urnic_uet_qp *u = qp->uet;
	struct urnic_pds_acked a;
	uint64_t lost_before = u->tx.st.lost_reorder;
	uint32_t done;

	urnic_count(e, URNIC_CTR_uet_acks_rcvd);
	u->tx_synced = true; /* the peer has the start PSN */
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
			if (urnic_uet_wqe_at(qp, i)->msg_id == pkt->ses.msg_id &&
			    rc_swqe(qp, i)->started) {
				urnic_uet_wqe_at(qp, i)->status = st;
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
	urnic_uet_publish_state(e, qp);
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
				urnic_uet_wqe_at(qp, r->ref)->status = URNIC_WC_RNR_RETRY_EXC_ERR;
			urnic_uet_complete_sq(e, qp);
			return;
		}
		u->rnr_left--;
	}
	urnic_pds_tx_park(&u->tx, nack->nack_psn,
			  e->now_ns + 1000ull * urnic_rnr_timer_us((uint8_t)(nack->payload & 0x1f)),
			  e->now_ns);
}
