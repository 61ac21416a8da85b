/* SPDX-License-Identifier: MIT */
/*
 * uet_out.c - the packets of an RC QP on the UET transport (uet_int.h) as they are laid
 * out: every one ECN-capable from an entropy value of the device's range, its PDS and SES
 * headers encoded; the target's ACK_CC (with a refusal's SES response), NACKs, the
 * requester's probes; and the QP's window, RTT and bytes in flight as per-QP counters.
 */
#include "engine/uet/uet_int.h"

enum {
	ECN_MASK = 0x03,
	ECN_ECT0 = 0x02, /* RFC 3168 §5: ECN-capable transport */
};

/* A packet to the peer from entropy value ev, ECN-capable (NSCC reads the marks). */
struct urnic_txpkt *urnic_uet_begin(struct urnic_engine *e, struct urnic_qp *qp, uint16_t ev)
{
	struct urnic_txpkt *p = urnic_tx_begin(e, qp);

	p->dst.sport = ev;
	p->dst.traffic_class = (uint8_t)((qp->attr.peer.traffic_class & ~ECN_MASK) | ECN_ECT0);
	return p;
}

/* Encodes the PDS header and the SES header into p's header bytes. */
bool urnic_uet_put_headers(struct urnic_engine *e, struct urnic_txpkt *p,
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

void urnic_uet_publish_state(struct urnic_engine *e, const struct urnic_qp *qp)
{
	const struct urnic_uet_qp *u = qp->uet;

	if (!e->stats.cur_qp)
		return;
	e->stats.cur_qp[URNIC_CTR_uet_cwnd_bytes] = u->cc_on ? u->cc.cwnd : 0;
	e->stats.cur_qp[URNIC_CTR_uet_srtt_us] = u->tx.srtt_ns / 1000u;
	e->stats.cur_qp[URNIC_CTR_uet_inflight_bytes] = u->tx.inflight_bytes;
}

void urnic_uet_send_ctrl(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_uet_pds *h)
{
	struct urnic_txpkt *p = urnic_uet_begin(e, qp, qp->uet->ack_ev);

	if (!urnic_uet_put_headers(e, p, h, NULL))
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
	p = urnic_uet_begin(e, qp, u->ack_ev);
	if (!urnic_uet_put_headers(e, p, &h, u->rsp_pending ? &s : NULL))
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

	/* Before the first ACK the peer may not know this direction's PSNs: the timeout
	 * resends with SYN instead. */
	if (!u->tx_synced)
		return;
	urnic_uet_send_ctrl(e, qp, &h);
	urnic_count(e, URNIC_CTR_uet_tx_probes);
}
