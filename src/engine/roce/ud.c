/* SPDX-License-Identifier: MIT */
/*
 * ud.c - Unreliable Datagram: single-packet SENDs to any QP that knows our Q_Key.
 *
 * IBTA 9.8 and 10.2.5, as rxe implements them. Sending: SEND and SEND with immediate
 * only, one UD_SEND_ONLY packet per message with a DETH (the Q_Key of the work
 * request, or the QP's own when the WR's has its high bit set, IBTA 10.2.5; our QPN as
 * the source QP), to the address and QP the work request names, from the UDP source
 * port the QP got at creation (rxe: 0xc000 + hash_32(qpn, 14)); completed when sent.
 * A message longer than the port MTU (kept in the QP's path_mtu) is completed
 * successfully without sending anything: C10-93.1.1 forbids both the packets and an
 * error, and rxe does the same.
 * Receiving: packets from any address; the Q_Key must be the QP's (else dropped,
 * counted); the PSN is not checked; no receive WQE means a silent drop (no RNR on UD).
 * The receive buffer gets the 40-byte GRH area first, as rxe writes it and rdma-core's
 * ibv_init_ah_from_wc() reads it: for IPv4, 20 zero bytes and then the packet's IPv4
 * header, for IPv6 the IPv6 header; then the payload. The completion carries the
 * sender's QPN, IBV_WC_GRH and byte_len = 40 + payload. A buffer too short for both:
 * the datagram is dropped and counted, the WQE stays for the next one (with an SRQ it
 * completes with REM_INV_REQ_ERR), the QP goes on (rxe: classes D and E).
 * Multicast: a datagram to DestQP 0xFFFFFF reaches every QP attached to its group
 * (engine/mcast.h, roce/rx.c rx_mcast), each through this same receive path.
 * Out of scope: QP1 (GSI) and its privileged Q_Keys.
 */
#include <errno.h>
#include <string.h>

#include "engine/roce/rc.h"
#include "engine/roce/roce.h"
#include "wire/byteorder.h"
#include "wire/psn.h"

/* IBTA 10.2.5: "controlled" Q_Keys have the high bit set; a WR carrying one asks for
 * the QP's own Q_Key. */
#define QKEY_USE_QP 0x80000000u

static bool ud_send_packet(struct urnic_engine *e, struct urnic_qp *qp,
			   const struct urnic_send_wqe *w, int *err)
{
	struct urnic_peer dst = w->ud_dst;
	struct urnic_pkt h = { 0 };
	struct urnic_txpkt *p;

	if (w->length > qp->attr.path_mtu) {
		/* C10-93.1.1: no packet and no error; the PSN is used up as in rxe. */
		urnic_count(e, URNIC_CTR_drop_ud_too_long);
		qp->req.psn = urnic_psn_add(qp->req.psn, 1);
		return true;
	}
	h.bth.opcode = w->opcode == URNIC_WR_SEND_WITH_IMM ? URNIC_OP_UD_SEND_ONLY_WITH_IMMEDIATE
							   : URNIC_OP_UD_SEND_ONLY;
	h.bth.psn = qp->req.psn;
	h.bth.se = w->flags & URNIC_SEND_SOLICITED;
	h.deth.qkey = (w->ud_remote_qkey & QKEY_USE_QP) ? qp->attr.qkey : w->ud_remote_qkey;
	h.deth.sqpn = qp->qpn;
	h.imm_be = w->imm_be;
	/* The QP's own flow: one source port for all its datagrams, as rxe. */
	dst.sport = qp->attr.peer.sport;
	p = urnic_roce_emit_to(e, qp, &h, w->length, &dst, w->ud_remote_qpn & 0xffffff);
	if (urnic_roce_gather(e, qp, w, 0, w->length, p) < 0) {
		*err = URNIC_WC_LOC_PROT_ERR;
		return false; /* not committed: the slot is reused by the next packet */
	}
	urnic_tx_commit(e, p);
	qp->req.psn = urnic_psn_add(qp->req.psn, 1);
	return true;
}

static bool ud_progress(struct urnic_engine *e, struct urnic_qp *qp)
{
	if (qp->state != URNIC_QPS_RTS)
		return false;
	return urnic_roce_unreliable_send(e, qp, ud_send_packet, NULL);
}

static uint16_t ipv4_checksum(const uint8_t *h, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += urnic_get_be16(h + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/*
 * The GRH area of a UD receive buffer. The engine sees the UDP payload, not the IP
 * header, so the header is rebuilt as the sender's kernel wrote it from an unconnected
 * DF socket (the same assumption as the ICRC check, docs/differences-from-rxe.md):
 * IPv4 ID 0, DF, the TOS and TTL the socket reported (the envelope's tos and ttl), a valid
 * header checksum (ibv_init_ah_from_wc() checks it to tell IPv4 from IPv6); IPv6 with
 * the traffic class and hop limit reported and flow label 0.
 */
static void build_grh(uint8_t grh[URNIC_UD_GRH_BYTES], bool ipv6, const struct urnic_rx_meta *m,
		      size_t udp_bytes)
{
	enum { IPV4_HDR = 20, UDP_HDR = 8, IPPROTO_UDP_ = 17 };

	memset(grh, 0, URNIC_UD_GRH_BYTES);
	if (ipv6) {
		urnic_put_be32(grh, 6u << 28 | (uint32_t)m->tos << 20);
		urnic_put_be16(grh + 4, (uint16_t)(UDP_HDR + udp_bytes));
		grh[6] = IPPROTO_UDP_;
		grh[7] = m->ttl;
		memcpy(grh + 8, m->src_ip, 16);
		memcpy(grh + 24, m->dst_ip, 16);
	} else {
		uint8_t *ip = grh + URNIC_UD_GRH_BYTES - IPV4_HDR;

		ip[0] = 0x45; /* version 4, 5 words */
		ip[1] = m->tos;
		urnic_put_be16(ip + 2, (uint16_t)(IPV4_HDR + UDP_HDR + udp_bytes));
		urnic_put_be16(ip + 6, 0x4000); /* DF */
		ip[8] = m->ttl;
		ip[9] = IPPROTO_UDP_;
		memcpy(ip + 12, m->src_ip, 4);
		memcpy(ip + 16, m->dst_ip, 4);
		urnic_put_be16(ip + 10, ipv4_checksum(ip, IPV4_HDR));
	}
}

static void ud_rx(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
		  const struct urnic_rx_meta *m)
{
	const struct urnic_recv_wqe *rw;
	uint8_t grh[URNIC_UD_GRH_BYTES];
	int ret;

	e->hold.rx_requests++;
	/* IBTA 10.2.5: a datagram is accepted only with the receiving QP's Q_Key. */
	if (pkt->deth.qkey != qp->attr.qkey) {
		urnic_count(e, URNIC_CTR_drop_bad_qkey);
		return;
	}
	/* No receive WQE: dropped, UD has no RNR (IBTA 9.8). */
	if (!urnic_roce_take_rwqe(e, qp)) {
		urnic_count(e, URNIC_CTR_drop_no_rwqe);
		return;
	}
	/* The GRH and the payload must both fit before either is written. */
	rw = urnic_roce_rwqe(qp);
	qp->resp.rwqe_off = 0;
	if (rw->length < URNIC_UD_GRH_BYTES ||
	    pkt->payload_bytes > rw->length - URNIC_UD_GRH_BYTES) {
		ret = -EMSGSIZE;
	} else {
		build_grh(grh, e->cfg.ipv6, m, pkt->bytes);
		ret = urnic_roce_place(e, qp, grh, sizeof(grh));
		if (ret == 0)
			ret = urnic_roce_place(e, qp, pkt->payload, pkt->payload_bytes);
	}
	if (ret == -EMSGSIZE) {
		urnic_roce_recv_too_long(e, qp, pkt);
		return;
	}
	if (ret) {
		/* A receive SGE that does not resolve: a local protection error (IBTA
		 * 10.8.3.1), the WQE completes with it, the QP goes to error. */
		urnic_roce_complete_rwqe(e, qp, pkt, URNIC_WC_RECV,
					 URNIC_UD_GRH_BYTES + pkt->payload_bytes,
					 URNIC_WC_LOC_PROT_ERR);
		urnic_qp_to_error(e, qp);
		return;
	}
	urnic_roce_complete_rwqe(e, qp, pkt, URNIC_WC_RECV, qp->resp.rwqe_off, URNIC_WC_SUCCESS);
}

/* UD has no connected peer (IBTA 10.2.5): a datagram with the QP's Q_Key is all the
 * proof there is, and its source's IPv4 IDs go to a table of their own (roce/rx.c). */
static bool ud_from_peer(const struct urnic_qp *qp, const struct urnic_pkt *pkt)
{
	return pkt->deth.qkey == qp->attr.qkey;
}

static void ud_no_timers(struct urnic_engine *e, struct urnic_qp *qp, uint64_t *next,
			 uint64_t *hold)
{
	(void)e, (void)qp, (void)next, (void)hold;
}

static void ud_release_held(struct urnic_engine *e, struct urnic_qp *qp, bool parting)
{
	(void)e, (void)qp, (void)parting; /* nothing is held on UD */
}

static void ud_enter_error(struct urnic_engine *e, struct urnic_qp *qp, bool fatal)
{
	(void)e, (void)qp, (void)fatal;
}

const struct urnic_qp_ops urnic_roce_ud_ops = {
	.name = "UD",
	.opcode_flag = URNIC_OPF_UD,
	.opcode_base = URNIC_OP_UD_SEND_ONLY & URNIC_OPCODE_TRANSPORT_MASK,
	.connected = false,
	.rx = ud_rx,
	.from_peer = ud_from_peer,
	.progress = ud_progress,
	.timers = ud_no_timers,
	.flush = urnic_rc_op_flush,
	.release_held = ud_release_held,
	.enter_error = ud_enter_error,
};
