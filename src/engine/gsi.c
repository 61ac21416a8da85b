/* SPDX-License-Identifier: MIT */
/*
 * gsi.c - QP 1 (IBTA 13.5.1): CM MADs between the wire and the device's connection
 * manager. The GSI is a UD QP with the well-known Q_Key 0x80010000 that every port has;
 * rdma_cm over RoCEv2 sends each MAD as one UD SEND_ONLY from QP 1 to QP 1, as Linux's
 * mad.c does over rxe (P_Key 0xffff, the GSI's own PSN sequence from 0, the UDP source
 * port rxe gives QPN 1).
 */
#include <errno.h>
#include <string.h>

#include "engine/cm/cm.h"
#include "engine/gsi.h"
#include "wire/mad.h"

/* A GID of the CM's (::ffff:a.b.c.d for IPv4, RFC 4291 2.5.5.2) from an address of the
 * transport's (IPv4 in the first four bytes). */
static void gid_of(uint8_t gid[16], bool ipv6, const uint8_t *ip)
{
	if (ipv6) {
		memcpy(gid, ip, 16);
		return;
	}
	memset(gid, 0, 10);
	gid[10] = 0xff;
	gid[11] = 0xff;
	memcpy(gid + 12, ip, 4);
}

/* The reverse, false for a GID of the other family (nothing to send it over). */
static bool ip_of(const uint8_t gid[16], bool ipv6, uint8_t *ip)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	bool v4 = memcmp(gid, mapped, sizeof(mapped)) == 0;

	if (v4 == ipv6)
		return false;
	memcpy(ip, v4 ? gid + 12 : gid, v4 ? 4 : 16);
	return true;
}

void urnic_gsi_rx(struct urnic_engine *e, const struct urnic_pkt *pkt,
		  const struct urnic_rx_meta *m)
{
	struct urnic_cm_addr from = { .udp_sport = m->sport };
	int ret;

	if (!e->cm) {
		urnic_count(e, URNIC_CTR_drop_gsi_no_cm);
		return;
	}
	/* IBTA 13.5.1: QP 1 takes SENDs of whole MADs from other GSIs (13.4.2: 256 bytes). */
	if (pkt->bth.opcode != URNIC_OP_UD_SEND_ONLY || pkt->payload_bytes != URNIC_MAD_BYTES ||
	    pkt->deth.sqpn != URNIC_GSI_QPN) {
		urnic_count(e, URNIC_CTR_drop_gsi_not_mad);
		return;
	}
	if (pkt->deth.qkey != URNIC_GSI_QKEY) {
		urnic_count(e, URNIC_CTR_drop_gsi_bad_qkey);
		return;
	}
	gid_of(from.gid, e->cfg.ipv6, m->src_ip);
	ret = urnic_cm_input_bytes(e->cm, pkt->payload, pkt->payload_bytes, &from, e->now_ns);
	if (ret == 0)
		urnic_count(e, URNIC_CTR_rx_gsi_mads);
	else if (ret == -EAGAIN)
		urnic_count(e, URNIC_CTR_drop_gsi_busy);
	else
		urnic_count(e, URNIC_CTR_drop_gsi_refused);
}

/* One MAD as a UD SEND_ONLY from QP 1 (IBTA 9.8.3: BTH, DETH, payload). */
static void send_mad(struct urnic_engine *e, const struct urnic_cm_out *o)
{
	struct urnic_peer dst = { .ipv6 = e->cfg.ipv6, .sport = e->gsi_sport, .hop_limit = 64 };
	struct urnic_pkt h = { 0 };
	struct urnic_txpkt *p;
	ssize_t n;

	if (!ip_of(o->dst.gid, e->cfg.ipv6, dst.ip)) {
		urnic_count(e, URNIC_CTR_drop_tx_failed);
		return;
	}
	if (urnic_txbatch_full(&e->tx))
		e->hooks.flush(e);
	p = urnic_txbatch_next(&e->tx, &dst);
	h.bth.opcode = URNIC_OP_UD_SEND_ONLY;
	h.bth.pkey = URNIC_DEFAULT_PKEY;
	h.bth.dqpn = o->dst_qpn;
	h.bth.psn = e->gsi_psn;
	e->gsi_psn = (e->gsi_psn + 1) & 0xffffff;
	h.deth.qkey = URNIC_GSI_QKEY;
	h.deth.sqpn = URNIC_GSI_QPN;
	n = urnic_pkt_encode_hdr(&h, p->hdr, sizeof(p->hdr));
	p->hdr_bytes = n > 0 ? (uint32_t)n : 0;
	p->payload_bytes = URNIC_MAD_BYTES;
	p->frags[0] = (struct urnic_frag){ o->mad, URNIC_MAD_BYTES };
	p->nfrags = 1;
	/* The commit copies the payload into the batch: o may go after it. */
	urnic_tx_commit(e, p);
	urnic_count(e, URNIC_CTR_tx_gsi_mads);
}

uint32_t urnic_gsi_send(struct urnic_engine *e)
{
	struct urnic_cm_out o;
	uint32_t n = 0;

	while (e->cm && urnic_cm_out_pop(e->cm, &o)) {
		send_mad(e, &o);
		n++;
	}
	return n;
}
