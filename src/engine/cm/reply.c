// SPDX-License-Identifier: MIT
/*
 * reply.c - answers to a MAD that no connection takes, built from the MAD alone and sent
 * back to its sender: the REJ of cm.c's cm_issue_rej (a REQ for no listener, a stale
 * REQ or REP), the DREP of cm_issue_drep (a DREQ for no connection, IBTA 12.6.11: the
 * peer may have lost our DREP), and the SIDR_REP of cm_reject_sidr_req (IBTA 12.11).
 * Each echoes the received TID and swaps the comm IDs.
 */
#include "engine/cm/core.h"

void urnic_cm_issue_rej(struct urnic_cm *cm, const struct urnic_cm_mad *rcvd,
			const struct urnic_cm_addr *to, uint16_t reason, uint8_t msg_code)
{
	struct urnic_cm_mad m;

	urnic_cm_mad_init(&m, URNIC_CM_ATTR_REJ, rcvd->hdr.tid);
	/* The comm IDs lead every message: a REQ has only its sender's, a REP both. */
	m.msg.rej.remote_comm_id = rcvd->msg.req.local_comm_id;
	if (rcvd->hdr.attr_id == URNIC_CM_ATTR_REP)
		m.msg.rej.local_comm_id = rcvd->msg.rep.remote_comm_id;
	m.msg.rej.message_rejected = msg_code;
	m.msg.rej.reason = reason;
	urnic_cm_out_push(cm, &m, to, 0);
}

void urnic_cm_issue_drep(struct urnic_cm *cm, const struct urnic_cm_mad *dreq,
			 const struct urnic_cm_addr *to)
{
	struct urnic_cm_mad m;

	urnic_cm_mad_init(&m, URNIC_CM_ATTR_DREP, dreq->hdr.tid);
	m.msg.drep.local_comm_id = dreq->msg.dreq.remote_comm_id;
	m.msg.drep.remote_comm_id = dreq->msg.dreq.local_comm_id;
	urnic_cm_out_push(cm, &m, to, 0);
}

void urnic_cm_issue_sidr_rep(struct urnic_cm *cm, const struct urnic_cm_mad *sidr_req,
			     const struct urnic_cm_addr *to, uint8_t status)
{
	struct urnic_cm_mad m;

	urnic_cm_mad_init(&m, URNIC_CM_ATTR_SIDR_REP, sidr_req->hdr.tid);
	m.msg.sidr_rep.request_id = sidr_req->msg.sidr_req.request_id;
	m.msg.sidr_rep.service_id = sidr_req->msg.sidr_req.service_id;
	m.msg.sidr_rep.status = status;
	urnic_cm_out_push(cm, &m, to, 0);
}
