/* SPDX-License-Identifier: MIT */
/*
 * pds_rx.c - the target's side of a RUD packet delivery context (pds.h): which PSNs have
 * arrived, duplicates and PSNs beyond the window told apart, and the ACK_CC that reports
 * them (cumulative ACK PSN, SACK bitmap, the NSCC fields this side can fill: bytes
 * received and out-of-order arrivals since the last ACK). Context: the engine thread
 * that owns the context; no locks.
 */
#include <string.h>

#include "engine/uet/pds.h"

enum {
	RCVD_BYTES_MAX = 0xffffff, /* NSCC state: 24 bits */
	OOO_MAX = 0xffff,	   /* 16 bits */
	NSCC_RCVD_SHIFT = 16,
};

void urnic_pds_rx_init(struct urnic_pds_rx *rx, const struct urnic_pds_cfg *cfg)
{
	memset(rx, 0, sizeof(*rx));
	rx->window =
		cfg->window && cfg->window <= URNIC_PDS_WINDOW ? cfg->window : URNIC_PDS_WINDOW;
	rx->ack_every = cfg->ack_every ? cfg->ack_every : 1;
	rx->cack = cfg->start_psn - 1;
	rx->ack_psn = rx->cack;
	rx->high = rx->cack;
}

static bool bit_of(const uint64_t *map, uint32_t psn)
{
	uint32_t i = psn & (URNIC_PDS_WINDOW - 1);

	return map[i / 64] >> (i % 64) & 1;
}

static void set_bit(uint64_t *map, uint32_t psn, bool on)
{
	uint32_t i = psn & (URNIC_PDS_WINDOW - 1);
	uint64_t bit = 1ull << (i % 64);

	if (on)
		map[i / 64] |= bit;
	else
		map[i / 64] &= ~bit;
}

static bool seen(const struct urnic_pds_rx *rx, uint32_t psn)
{
	return bit_of(rx->seen, psn);
}

/* Whether psn has arrived: at or below the CACK, or marked within the window. */
static bool received(const struct urnic_pds_rx *rx, uint32_t psn)
{
	int32_t d = urnic_pds_psn_diff(psn, rx->cack);

	return d <= 0 || ((uint32_t)d <= rx->window && seen(rx, psn));
}

enum urnic_pds_rx_verdict urnic_pds_rx_check(const struct urnic_pds_rx *rx, uint32_t psn)
{
	int32_t d = urnic_pds_psn_diff(psn, rx->cack);

	if (d > 0 && (uint32_t)d > rx->window)
		return URNIC_PDS_RX_OUT_OF_WINDOW;
	return received(rx, psn) ? URNIC_PDS_RX_DUPLICATE : URNIC_PDS_RX_NEW;
}

enum urnic_pds_rx_verdict
urnic_pds_rx_packet(struct urnic_pds_rx *rx, const struct urnic_uet_pds *h, uint32_t bytes, bool ce)
{
	int32_t d = urnic_pds_psn_diff(h->psn, rx->cack);

	if (d > 0 && (uint32_t)d > rx->window) {
		rx->st.out_of_window++;
		return URNIC_PDS_RX_OUT_OF_WINDOW;
	}
	if (received(rx, h->psn)) {
		/* Our ACK was lost or is late: the initiator resent. Say again at once. */
		rx->st.duplicates++;
		rx->ack_now = true;
		rx->retx |= (h->flags & URNIC_UET_F_RETX) != 0;
		return URNIC_PDS_RX_DUPLICATE;
	}
	if (d != 1) {
		rx->st.out_of_order++;
		if (rx->ooo < OOO_MAX)
			rx->ooo++;
	}
	set_bit(rx->seen, h->psn, true);
	while (seen(rx, rx->cack + 1)) {
		set_bit(rx->seen, rx->cack + 1, false);
		for (unsigned n = 0; n < URNIC_PDS_SACK_REPORTS; n++)
			set_bit(rx->reported[n], rx->cack + 1, false);
		rx->cack++;
	}
	rx->st.delivered++;
	rx->ack_psn = h->psn;
	if (urnic_pds_psn_diff(h->psn, rx->high) > 0)
		rx->high = h->psn;
	rx->unacked++;
	rx->rcvd_bytes =
		rx->rcvd_bytes + bytes < RCVD_BYTES_MAX ? rx->rcvd_bytes + bytes : RCVD_BYTES_MAX;
	/* M tells of the packet that causes the ACK (UE 1.0 PDS, ACK flags): a marked one
	 * causes it at once, so the mark is not folded into other packets' ACK. */
	rx->ce = ce;
	if (ce)
		rx->ack_now = true;
	if (h->flags & URNIC_UET_F_RETX) {
		/* A resent packet fills a hole the initiator waits on. */
		rx->retx = true;
		rx->ack_now = true;
	}
	if (h->flags & URNIC_UET_F_AR)
		rx->ack_now = true;
	return URNIC_PDS_RX_NEW;
}

bool urnic_pds_rx_ack_due(const struct urnic_pds_rx *rx)
{
	return rx->ack_now || rx->unacked >= rx->ack_every;
}

/* An ACK_CC whose bitmap starts at base (above the CACK), then the counts reset. */
static void fill(struct urnic_pds_rx *rx, struct urnic_uet_pds *ack, uint32_t base)
{
	int32_t off = urnic_pds_psn_diff(rx->ack_psn, rx->cack);

	memset(ack, 0, sizeof(*ack));
	ack->type = URNIC_UET_ACK_CC;
	ack->next = URNIC_UET_NEXT_NONE;
	ack->flags = (uint8_t)((rx->ce ? URNIC_UET_F_M : 0) | (rx->retx ? URNIC_UET_F_RETX : 0));
	ack->cack_psn = rx->cack;
	ack->ack_psn_offset = (int16_t)(off >= INT16_MIN && off <= INT16_MAX ? off : 0);
	ack->cc_type = URNIC_UET_CC_NSCC;
	ack->sack_psn_offset = (int16_t)urnic_pds_psn_diff(base, rx->cack);
	for (unsigned i = 0; i < URNIC_PDS_SACK_BITS; i++) {
		if (!received(rx, base + i))
			continue;
		ack->sack_bitmap |= 1ull << i;
		if (urnic_pds_psn_diff(base + i, rx->cack) <= 0)
			continue;
		for (unsigned n = 0; n < URNIC_PDS_SACK_REPORTS; n++) {
			if (!bit_of(rx->reported[n], base + i)) {
				set_bit(rx->reported[n], base + i, true);
				break;
			}
		}
	}
	/* NSCC state: service_time, restore_cwnd and rcv_cwnd_pend 0 (no receiver
	 * pressure to report), rcvd_bytes, ooo_count. */
	ack->ack_cc_state = (uint64_t)rx->rcvd_bytes << NSCC_RCVD_SHIFT | rx->ooo;
	rx->unacked = 0;
	rx->ooo = 0;
	rx->rcvd_bytes = 0;
	rx->ack_now = false;
	rx->ce = false;
	rx->retx = false;
	rx->st.acks++;
}

/* The bitmap's first PSN (pds.h): the lowest arrival above the CACK that fewer than
 * URNIC_PDS_SACK_REPORTS ACKs have reported; just above the CACK when there is none. */
static uint32_t sack_base(const struct urnic_pds_rx *rx)
{
	const uint64_t *last = rx->reported[URNIC_PDS_SACK_REPORTS - 1];

	for (uint32_t d = 1; d <= rx->window; d++) {
		uint32_t psn = rx->cack + d;

		if (urnic_pds_psn_diff(psn, rx->high) > 0)
			break;
		if (seen(rx, psn) && !bit_of(last, psn))
			return psn;
	}
	return rx->cack + 1;
}

void urnic_pds_rx_ack(struct urnic_pds_rx *rx, struct urnic_uet_pds *ack)
{
	fill(rx, ack, sack_base(rx));
}

void urnic_pds_rx_probe(struct urnic_pds_rx *rx, const struct urnic_uet_pds *probe,
			struct urnic_uet_pds *ack)
{
	uint32_t base = probe->payload;
	int32_t d = urnic_pds_psn_diff(base, rx->cack);

	/* The base asked for, kept above the CACK and inside the window. */
	if (d <= 0 || (uint32_t)d > rx->window)
		base = rx->cack + 1;
	rx->st.probes++;
	fill(rx, ack, base);
	ack->flags |= URNIC_UET_F_P;
	ack->probe_opaque = probe->probe_opaque;
	ack->ack_psn_offset = 0;
}
