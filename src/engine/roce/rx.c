/* SPDX-License-Identifier: MIT */
/*
 * rx.c - RoCEv2 receive validation and dispatch. Every received packet is checked
 * before it may change anything, in the order of rxe_recv.c and IBTA 9.6 (packet
 * header validation): headers decode (length, opcode, TVer, reserved bits), ICRC
 * (Annex A17.3.3), destination QP exists and is in a state that receives (IBTA 10.3.1
 * table 90), the opcode belongs to the QP's transport, P_Key matches (10.9.3), source
 * address is the connected peer (rxe check_addr; not for UD, which hears from anyone).
 * Then the packet goes to its QP type's ops. Each refusal has a counter (counters.def).
 */
#include <string.h>

#include "engine/gsi.h"
#include "engine/roce/cc.h"
#include "engine/roce/roce.h"
#include "wire/mad.h"
#include "wire/byteorder.h"

/*
 * IBTA A17.3.3: the ICRC as the sender must have computed it over the IP and UDP headers
 * the socket does not show us. An IPv4 sender's ID is assumed to be the transport's hint
 * (0 for a datagram from an unconnected DF socket, k for segment k of a GSO send: urnic
 * to urnic); otherwise the ID is recovered from the difference (Linux rxe counts it)
 * and believed only if the source could have sent it (ip_id.h: a GSO segment number, or
 * an ID just ahead of a counting source's last), or only 16 of the CRC's 32 bits would
 * be left to catch corruption. What the check saw goes into ipid.seen, for the table to
 * learn only once a QP has accepted the packet (learn_ip_id).
 */
static bool icrc_ok(struct urnic_engine *e, const struct urnic_pkt *pkt,
		    const struct urnic_rx_meta *m, const uint8_t *buf, size_t len)
{
	bool ipv6 = e->cfg.ipv6;
	const struct urnic_ip_id_table *ids =
		(urnic_opcode_info(pkt->bth.opcode)->flags & URNIC_OPF_UD) ? &e->ipid.ids_ud
									   : &e->ipid.ids;
	struct urnic_icrc_flow flow = { 0 };
	struct urnic_frag frag = { buf, len - URNIC_ICRC_BYTES };
	uint32_t rx = urnic_get_le32(buf + frag.len), icrc;
	uint16_t ip_id;

	flow.ipv6 = ipv6;
	memcpy(flow.src, m->src_ip, ipv6 ? 16 : 4);
	memcpy(flow.dst, m->dst_ip, ipv6 ? 16 : 4);
	flow.sport = m->sport;
	flow.dport = URNIC_ROCE_UDP_PORT;
	flow.ip_id = ipv6 ? 0 : m->ip_id_hint;
	icrc = urnic_icrc_flow(&flow, &frag, 1, frag.len);
	if (icrc == rx) {
		if (!ipv6)
			e->ipid.seen.kind = URNIC_IP_ID_SEEN_HINT;
		return true;
	}
	if (!ipv6 && e->cfg.icrc_any_ipv4_id &&
	    urnic_icrc_ipv4_id(icrc, rx, frag.len, &ip_id) == 0 &&
	    urnic_ip_id_plausible(ids, m->src_ip, ip_id, e->now_ns)) {
		e->ipid.seen = (struct urnic_ip_id_seen){ URNIC_IP_ID_SEEN_RECOVERED, ip_id };
		urnic_count(e, URNIC_CTR_rx_icrc_ipv4_id);
		return true;
	}
	urnic_count(e, URNIC_CTR_drop_bad_icrc);
	return false;
}

/* Learns the source's IPv4 ID from a packet its QP accepted as one only its peer could
 * have sent (ops->from_peer): a forged packet to a QP that does not exist, from another
 * address or with a PSN its QP would not take teaches nothing. UD's table is apart:
 * any source can send to a UD QP (IBTA 10.2.5). */
static void learn_ip_id(struct urnic_engine *e, const struct urnic_qp *qp, const uint8_t *src_ip)
{
	urnic_ip_id_learn(qp->type == URNIC_QPT_UD ? &e->ipid.ids_ud : &e->ipid.ids, src_ip,
			  &e->ipid.seen, e->now_ns);
	e->ipid.seen.kind = URNIC_IP_ID_SEEN_NONE; /* once, for a multicast packet's QPs too */
}

/* A packet for this QP, already decoded and its ICRC checked: QP state, transport,
 * P_Key and source are validated before the QP's type sees it. */
static void rx_qp(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
		  const struct urnic_rx_meta *m)
{
	const struct urnic_opcode_info *info = urnic_opcode_info(pkt->bth.opcode);
	const struct urnic_qp_ops *ops = qp->ops;
	bool cnp = pkt->bth.opcode == URNIC_OP_CNP;
	bool from_peer;

	/* IBTA 10.3.1 table 90: RESET and INIT discard; ERR discards too. */
	if (qp->state == URNIC_QPS_ERR) {
		urnic_count(e, URNIC_CTR_drop_qp_error);
		return;
	}
	if (qp->state < URNIC_QPS_RTR ||
	    ((info->flags & URNIC_OPF_RESP) && qp->state < URNIC_QPS_RTS)) {
		urnic_count(e, URNIC_CTR_drop_qp_state);
		return;
	}
	/* A CNP (IBTA A17.9.3) goes to any connected QP: it names the QP that sent, and a
	 * UD QP has no one peer to slow down for. */
	if (cnp ? !ops->connected : !(info->flags & ops->opcode_flag)) {
		urnic_count(e, URNIC_CTR_drop_opcode_qp_type);
		return;
	}
	/* IBTA 10.9.3: P_Keys match when the low 15 bits agree and one of the two is a
	 * full member; our only P_Key is the default 0xffff (full member). */
	if ((pkt->bth.pkey & 0x7fff) != 0x7fff) {
		urnic_count(e, URNIC_CTR_drop_bad_pkey);
		return;
	}
	if (ops->connected && memcmp(m->src_ip, qp->attr.peer.ip, e->cfg.ipv6 ? 16 : 4) != 0) {
		urnic_count(e, URNIC_CTR_drop_addr_mismatch);
		return;
	}
	if (cnp) {
		urnic_roce_cc_rx_cnp(e, qp); /* for the QP's rate, not its transport */
		return;
	}
	from_peer = ops->from_peer(qp, pkt);
	urnic_engine_qp_wake(e, qp); /* what the packet leaves to do (an ACK, a response) */
	urnic_roce_cc_rx_tos(e, qp, m->tos);
	ops->rx(e, qp, pkt, m);
	if (from_peer)
		learn_ip_id(e, qp, m->src_ip);
}

static void rx_counted(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
		       const struct urnic_rx_meta *m)
{
	urnic_engine_serve(e, qp);
	if (e->stats.cur_qp) {
		e->stats.cur_qp[URNIC_CTR_rx_packets]++;
		e->stats.cur_qp[URNIC_CTR_rx_bytes] += pkt->bytes;
	}
	rx_qp(e, qp, pkt, m);
	urnic_engine_serve(e, NULL);
}

/* A packet to a multicast group (DestQP 0xFFFFFF, mcast.h) goes to every QP of this
 * device attached to its destination address, each validating it as its own (state, a
 * UD opcode, its Q_Key, a receive WQE), as rxe_rcv_mcast_pkt. */
static void rx_mcast(struct urnic_engine *e, const struct urnic_pkt *pkt,
		     const struct urnic_rx_meta *m)
{
	const struct urnic_mcast_group *g = urnic_mcast_find(&e->mcast, e->cfg.ipv6, m->dst_ip);

	if (!g) {
		urnic_count(e, URNIC_CTR_drop_mcast_no_group);
		return;
	}
	for (uint32_t i = 0; i < g->nqp; i++) {
		struct urnic_qp *qp = urnic_engine_qp_find(e, g->qpn[i]);

		if (qp)
			rx_counted(e, qp, pkt, m);
	}
}

void urnic_roce_rx(struct urnic_engine *e, const struct urnic_rx_meta *m, const uint8_t *buf,
		   size_t len)
{
	struct urnic_pkt pkt;
	struct urnic_qp *qp;

	e->now_ns = m->now_ns;
	urnic_count(e, URNIC_CTR_rx_packets);
	e->stats.counters[URNIC_CTR_rx_bytes] += len;
	if (urnic_pkt_decode(&pkt, buf, len) < 0) {
		urnic_count(e, URNIC_CTR_drop_bad_header);
		return;
	}
	e->ipid.seen.kind = URNIC_IP_ID_SEEN_NONE;
	if (!e->cfg.skip_icrc_check && !icrc_ok(e, &pkt, m, buf, len))
		return;
	if (pkt.bth.dqpn == URNIC_MCAST_QPN) {
		rx_mcast(e, &pkt, m);
		return;
	}
	/* IBTA 10.5 / A17.4: a packet to a group is multicast and names DestQP 0xFFFFFF; one
	 * that names a QP is addressed to no QP here (a group socket receives it whether or
	 * not that QP joined, and an RC QP never joins). */
	if (urnic_mcast_ip(e->cfg.ipv6, m->dst_ip)) {
		urnic_count(e, URNIC_CTR_drop_mcast_unicast_qpn);
		return;
	}
	if (pkt.bth.dqpn == URNIC_GSI_QPN) {
		urnic_gsi_rx(e, &pkt, m);
		return;
	}
	qp = urnic_engine_qp_find(e, pkt.bth.dqpn);
	if (!qp) {
		urnic_count(e, URNIC_CTR_drop_unknown_qp);
		return;
	}
	e->rx_direct = m->direct;
	rx_counted(e, qp, &pkt, m);
	e->rx_direct = NULL;
}
