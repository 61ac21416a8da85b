/* SPDX-License-Identifier: MIT */
/*
 * pds_tx.c - the initiator's side of a RUD packet delivery context (pds.h): the send
 * window, ACK and SACK processing, loss inferred by time (RACK, RFC 8985 §6.2), the
 * tail loss probe (RFC 8985 §7) and the retransmission timeout with back-off (RFC 6298
 * §2, §5). Context: the engine thread that owns the context; no locks.
 */
#include <string.h>

#include "engine/uet/pds.h"

enum {
	NS_PER_MS = 1000000,
	NS_PER_US = 1000,
	SENDS_MAX = 255,
};

void urnic_pds_cfg_default(struct urnic_pds_cfg *c, uint32_t start_psn)
{
	*c = (struct urnic_pds_cfg){
		.start_psn = start_psn,
		.window = URNIC_PDS_WINDOW,
		/* A software path's RTT is tens of microseconds, but a descheduled peer
		 * answers milliseconds late: the timeout must not fire on a busy host. */
		.rto_min_ns = 4ull * NS_PER_MS,
		.rto_max_ns = 1000ull * NS_PER_MS,
		.reorder_min_ns = 50ull * NS_PER_US,
		.retry_max = 7, /* as an RC QP's retry_cnt at its largest */
		.ack_every = 16,
	};
}

static struct urnic_pds_tx_pkt *slot(struct urnic_pds_tx *tx, uint32_t psn)
{
	return &tx->pkt[psn & (URNIC_PDS_WINDOW - 1)];
}

static bool sent_not_covered(const struct urnic_pds_tx *tx, uint32_t psn)
{
	return urnic_pds_psn_diff(psn, tx->una) >= 0 && urnic_pds_psn_diff(psn, tx->nxt) < 0;
}

void urnic_pds_tx_init(struct urnic_pds_tx *tx, const struct urnic_pds_cfg *cfg)
{
	memset(tx, 0, sizeof(*tx));
	tx->cfg = *cfg;
	if (tx->cfg.window == 0 || tx->cfg.window > URNIC_PDS_WINDOW)
		tx->cfg.window = URNIC_PDS_WINDOW;
	tx->una = tx->nxt = cfg->start_psn;
	tx->reo_mult = 1;
}

uint32_t urnic_pds_tx_outstanding(const struct urnic_pds_tx *tx)
{
	return tx->nxt - tx->una;
}

bool urnic_pds_tx_room(const struct urnic_pds_tx *tx)
{
	return !tx->failed && urnic_pds_tx_outstanding(tx) < tx->cfg.window;
}

uint32_t urnic_pds_tx_send(struct urnic_pds_tx *tx, uint32_t bytes, uint16_t ev, uint64_t now)
{
	uint32_t psn = tx->nxt++;

	*slot(tx, psn) = (struct urnic_pds_tx_pkt){
		.sent_ns = now, .bytes = bytes, .ev = ev, .state = URNIC_PDS_IN_FLIGHT, .sends = 1
	};
	if (psn == tx->una)
		tx->progress_ns = now; /* the timeout runs from the first packet outstanding */
	tx->inflight_bytes += bytes;
	tx->last_send_ns = now;
	tx->st.sent++;
	return psn;
}

bool urnic_pds_tx_next_lost(const struct urnic_pds_tx *tx, uint32_t *psn)
{
	if (!tx->lost)
		return false;
	for (uint32_t p = tx->una; p != tx->nxt; p++) {
		if (tx->pkt[p & (URNIC_PDS_WINDOW - 1)].state == URNIC_PDS_LOST) {
			*psn = p;
			return true;
		}
	}
	return false;
}

void urnic_pds_tx_resend(struct urnic_pds_tx *tx, uint32_t psn, uint16_t ev, uint64_t now)
{
	struct urnic_pds_tx_pkt *p = slot(tx, psn);

	if (!sent_not_covered(tx, psn) || p->state != URNIC_PDS_LOST)
		return;
	p->state = URNIC_PDS_IN_FLIGHT;
	p->sent_ns = now;
	p->ev = ev;
	if (p->sends < SENDS_MAX)
		p->sends++;
	tx->lost--;
	tx->inflight_bytes += p->bytes;
	tx->last_send_ns = now;
	tx->st.resent++;
}

static void mark_lost(struct urnic_pds_tx *tx, struct urnic_pds_tx_pkt *p)
{
	p->state = URNIC_PDS_LOST;
	tx->inflight_bytes -= p->bytes;
	tx->lost++;
}

/* p reached the target: account for it and move RACK's clock (RFC 8985 §6.2 step 2: an
 * ACK quicker than the minimum RTT after a resend answers the first send, whose time is
 * gone, so it says nothing about later sends). */
static void delivered(struct urnic_pds_tx *tx, struct urnic_pds_tx_pkt *p, uint64_t now,
		      struct urnic_pds_acked *out, bool marked)
{
	bool spurious =
		p->state == URNIC_PDS_LOST || (p->sends > 1 && now - p->sent_ns < tx->min_rtt_ns);

	if (p->state == URNIC_PDS_IN_FLIGHT)
		tx->inflight_bytes -= p->bytes;
	else if (p->state == URNIC_PDS_LOST)
		tx->lost--;
	else if (p->state == URNIC_PDS_PARKED)
		tx->parked--;
	if (spurious) {
		/* Taken for lost, yet it arrived: the paths reorder more than the window
		 * allowed for. RFC 8985 §6.2 step 4 widens it (by DSACK there; here by the
		 * packet being reported before its resend could have been). */
		tx->st.spurious++;
		if (tx->reo_mult < URNIC_PDS_REO_MULT_MAX)
			tx->reo_mult++;
		tx->reo_quiet = 0;
	} else if (++tx->reo_quiet >= URNIC_PDS_REO_PERSIST && tx->reo_mult > 1) {
		tx->reo_mult--; /* a long run without: narrow it again */
		tx->reo_quiet = 0;
	}
	out->delivered_bytes += p->bytes;
	if (!marked && out->n_evs < URNIC_PDS_ACKED_EVS)
		out->evs[out->n_evs++] = p->ev;
	if ((p->sends == 1 || now - p->sent_ns >= tx->min_rtt_ns) && p->sent_ns > tx->rack_sent_ns)
		tx->rack_sent_ns = p->sent_ns;
}

/* RFC 8985 §6.2 step 4: a quarter of the minimum RTT times the multiplier spurious
 * losses raise, at least the configured floor, at most the smoothed RTT. */
static uint64_t reorder_window(const struct urnic_pds_tx *tx)
{
	uint64_t w = tx->min_rtt_ns / 4 * tx->reo_mult, spread;

	if (tx->srtt_ns && w > tx->srtt_ns)
		w = tx->srtt_ns;
	/* Sprayed packets wait in queues of different depths: one path's may hold a packet
	 * for as long as the queueing the RTT samples show (SRTT above the minimum, and
	 * their variation) after a packet sent later went by another. RACK's window of a
	 * fraction of the minimum RTT took them for lost: over four 1 Gb/s links whose
	 * queues held 0.1-2 ms, eight QPs resent 8246 packets in 3 s with none lost. */
	spread =
		tx->srtt_ns > tx->min_rtt_ns ? tx->srtt_ns - tx->min_rtt_ns + 2 * tx->rttvar_ns : 0;
	if (spread > w)
		w = spread;
	return w > tx->cfg.reorder_min_ns ? w : tx->cfg.reorder_min_ns;
}

/* RFC 8985 §6.2 step 5: packets sent before the latest one delivered are lost once an
 * RTT and the reordering window have passed since; the next such deadline is kept. The
 * scan stops at the first packet sent once after that time: every later PSN was first
 * sent later still, and a resend of it is later again. */
static uint32_t rack_detect(struct urnic_pds_tx *tx, uint64_t now)
{
	uint64_t wait = tx->srtt_ns + reorder_window(tx);
	uint32_t lost = 0;

	tx->rack_deadline_ns = 0;
	for (uint32_t psn = tx->una; psn != tx->nxt; psn++) {
		struct urnic_pds_tx_pkt *p = slot(tx, psn);

		if (p->state != URNIC_PDS_IN_FLIGHT)
			continue;
		if (p->sent_ns >= tx->rack_sent_ns) {
			if (p->sends == 1)
				break;
			continue;
		}
		if (now >= p->sent_ns + wait) {
			mark_lost(tx, p);
			tx->st.lost_reorder++;
			lost++;
		} else if (!tx->rack_deadline_ns || p->sent_ns + wait < tx->rack_deadline_ns) {
			tx->rack_deadline_ns = p->sent_ns + wait;
		}
	}
	return lost;
}

/* RFC 6298 §2: the smoothed RTT and its variation. */
static void rtt_sample(struct urnic_pds_tx *tx, uint64_t rtt)
{
	uint64_t err;

	if (!tx->srtt_ns) {
		tx->srtt_ns = rtt;
		tx->rttvar_ns = rtt / 2;
		tx->min_rtt_ns = rtt;
		return;
	}
	err = rtt > tx->srtt_ns ? rtt - tx->srtt_ns : tx->srtt_ns - rtt;
	tx->rttvar_ns = (3 * tx->rttvar_ns + err) / 4;
	tx->srtt_ns = (7 * tx->srtt_ns + rtt) / 8;
	if (rtt < tx->min_rtt_ns)
		tx->min_rtt_ns = rtt;
}

/* The RTT sample an ACK gives: from the packet that caused it, if it went out once and
 * this ACK is the first news of it (Karn's rule, RFC 6298 §3). */
static uint64_t sample_of(struct urnic_pds_tx *tx, const struct urnic_uet_pds *ack, uint64_t now)
{
	uint32_t psn;
	struct urnic_pds_tx_pkt *p;

	if (ack->flags & URNIC_UET_F_P)
		return 0;
	psn = ack->cack_psn + (uint32_t)(int32_t)ack->ack_psn_offset;
	if (!sent_not_covered(tx, psn))
		return 0;
	p = slot(tx, psn);
	if (p->sends != 1 || (p->state != URNIC_PDS_IN_FLIGHT && p->state != URNIC_PDS_LOST))
		return 0;
	return now > p->sent_ns ? now - p->sent_ns : 1;
}

void urnic_pds_tx_ack(struct urnic_pds_tx *tx, const struct urnic_uet_pds *ack, uint64_t now,
		      struct urnic_pds_acked *out)
{
	uint32_t cack = ack->cack_psn, end = cack + 1;
	uint32_t trigger = cack + (uint32_t)(int32_t)ack->ack_psn_offset;
	bool marked = (ack->flags & URNIC_UET_F_M) && !(ack->flags & URNIC_UET_F_P);
	uint64_t rtt;
	bool progress = false;

	memset(out, 0, sizeof(*out));
	out->una_before = out->una = tx->una;
	/* The CACK may not cover a PSN never sent. An older ACK overtaken by a newer one (ACKs
	 * take the paths their packets took) still tells which PSNs arrived: its bitmap is
	 * taken, its CACK is not. */
	if (urnic_pds_psn_diff(end, tx->nxt) > 0) {
		tx->st.acks_invalid++;
		return;
	}
	if (urnic_pds_psn_diff(end, tx->una) < 0) {
		tx->st.acks_stale++;
		end = tx->una;
	}
	tx->st.acks++;
	rtt = sample_of(tx, ack, now);
	if ((ack->flags & URNIC_UET_F_P) && tx->probe_out && ack->probe_opaque == tx->probe_id) {
		/* The answer to the probe reports everything that arrived before it: what was
		 * sent a reordering window before the probe and is missing is lost. */
		if (tx->probe_sent_ns > tx->rack_sent_ns)
			tx->rack_sent_ns = tx->probe_sent_ns;
		tx->probe_out = false;
	}
	for (; tx->una != end; tx->una++) {
		struct urnic_pds_tx_pkt *p = slot(tx, tx->una);

		if (p->state != URNIC_PDS_SACKED)
			delivered(tx, p, now, out, marked && tx->una == trigger);
		p->state = URNIC_PDS_FREE;
		tx->st.acked++;
		progress = true;
	}
	if (!(ack->flags & URNIC_UET_F_P)) {
		/* The PSN that caused the ACK arrived, whatever the bitmap says. */
		uint32_t psn = trigger;
		struct urnic_pds_tx_pkt *p = slot(tx, psn);

		if (sent_not_covered(tx, psn) &&
		    (p->state == URNIC_PDS_IN_FLIGHT || p->state == URNIC_PDS_LOST ||
		     p->state == URNIC_PDS_PARKED)) {
			delivered(tx, p, now, out, marked);
			p->state = URNIC_PDS_SACKED;
			tx->st.sacked++;
			progress = true;
		}
	}
	if (ack->type == URNIC_UET_ACK_CC) {
		uint32_t base = cack + (uint32_t)(int32_t)ack->sack_psn_offset;

		for (unsigned i = 0; i < URNIC_PDS_SACK_BITS; i++) {
			uint32_t psn = base + i;
			struct urnic_pds_tx_pkt *p;

			if (!(ack->sack_bitmap >> i & 1) || !sent_not_covered(tx, psn))
				continue;
			p = slot(tx, psn);
			if (p->state != URNIC_PDS_IN_FLIGHT && p->state != URNIC_PDS_LOST &&
			    p->state != URNIC_PDS_PARKED)
				continue;
			delivered(tx, p, now, out, false);
			p->state = URNIC_PDS_SACKED;
			tx->st.sacked++;
			progress = true;
		}
	}
	if (progress) {
		tx->progress_ns = now;
		tx->backoff = 0;
	}
	if (rtt)
		rtt_sample(tx, rtt);
	out->una = tx->una;
	out->rtt_ns = rtt;
	out->ecn = (ack->flags & URNIC_UET_F_M) != 0;
	out->lost = rack_detect(tx, now);
}

void urnic_pds_tx_nack(struct urnic_pds_tx *tx, const struct urnic_uet_pds *nack, uint64_t now)
{
	struct urnic_pds_tx_pkt *p = slot(tx, nack->nack_psn);

	(void)now;
	switch (nack->nack_code) {
	case URNIC_UET_NACK_TRIMMED:
	case URNIC_UET_NACK_TRIMMED_LAST_HOP:
	case URNIC_UET_NACK_RCVR_INFER_LOSS:
	case URNIC_UET_NACK_PSN_OOR_WINDOW:
		/* The packet did not get there, whole: send it again at once rather than wait
		 * for time to tell (a trimmed packet's header arrived, its payload did not). */
		if (sent_not_covered(tx, nack->nack_psn) && p->state == URNIC_PDS_IN_FLIGHT) {
			mark_lost(tx, p);
			tx->st.lost_nack++;
			return;
		}
		break;
	default:
		break;
	}
	tx->st.nacks_other++;
}

void urnic_pds_tx_park(struct urnic_pds_tx *tx, uint32_t psn, uint64_t until, uint64_t now)
{
	struct urnic_pds_tx_pkt *p = slot(tx, psn);

	if (!sent_not_covered(tx, psn))
		return;
	if (p->state == URNIC_PDS_IN_FLIGHT)
		tx->inflight_bytes -= p->bytes;
	else if (p->state == URNIC_PDS_LOST)
		tx->lost--;
	else
		return;
	p->state = URNIC_PDS_PARKED;
	tx->parked++;
	if (until > tx->park_until_ns)
		tx->park_until_ns = until;
	/* The refusal is an answer: the timeout starts again from it. */
	tx->progress_ns = now;
}

/* The parked packets are due: lost, so sent again next. */
static void unpark(struct urnic_pds_tx *tx, uint64_t now)
{
	for (uint32_t psn = tx->una; tx->parked && psn != tx->nxt; psn++) {
		struct urnic_pds_tx_pkt *p = slot(tx, psn);

		if (p->state == URNIC_PDS_PARKED) {
			p->state = URNIC_PDS_LOST;
			tx->parked--;
			tx->lost++;
		}
	}
	tx->park_until_ns = 0;
	tx->progress_ns = now;
}

/* RFC 6298 §2.2-2.5 and §5.5: SRTT + 4 RTTVAR, at least rto_min, doubled per timeout in
 * a row, at most rto_max. */
static uint64_t rto(const struct urnic_pds_tx *tx)
{
	uint64_t t = tx->srtt_ns + 4 * tx->rttvar_ns;

	if (t < tx->cfg.rto_min_ns)
		t = tx->cfg.rto_min_ns;
	for (uint32_t i = 0; i < tx->backoff && t < tx->cfg.rto_max_ns; i++)
		t *= 2;
	return t < tx->cfg.rto_max_ns ? t : tx->cfg.rto_max_ns;
}

/* RFC 8985 §7.2: two smoothed RTTs (and the reordering window) after the last send;
 * before any RTT sample, half the minimum timeout. Always before the timeout. */
static uint64_t pto(const struct urnic_pds_tx *tx)
{
	uint64_t t = tx->srtt_ns ? 2 * tx->srtt_ns + reorder_window(tx) : tx->cfg.rto_min_ns / 2;

	return t < rto(tx) ? t : rto(tx) / 2;
}

static void earliest(uint64_t *next, uint64_t t)
{
	if (t && (!*next || t < *next))
		*next = t;
}

enum urnic_pds_tx_action urnic_pds_tx_timer(struct urnic_pds_tx *tx, uint64_t now,
					    uint64_t *next_ns)
{
	enum urnic_pds_tx_action act = URNIC_PDS_TX_NOTHING;
	uint64_t probe_at;

	*next_ns = 0;
	if (tx->failed)
		return URNIC_PDS_TX_FAILED;
	if (tx->una == tx->nxt)
		return URNIC_PDS_TX_NOTHING;
	if (tx->rack_deadline_ns && now >= tx->rack_deadline_ns)
		rack_detect(tx, now);
	if (tx->parked && now >= tx->park_until_ns)
		unpark(tx, now);
	/* Only parked packets out: the target answered; nothing times out meanwhile. */
	if (tx->parked && !tx->inflight_bytes && !tx->lost) {
		earliest(next_ns, tx->park_until_ns);
		return act;
	}
	if (now >= tx->progress_ns + rto(tx)) {
		/* RFC 6298 §5.4-5.6: everything still in flight is resent, the timer backs
		 * off; retry_max timeouts with no progress between them end the context. */
		for (uint32_t psn = tx->una; psn != tx->nxt; psn++) {
			struct urnic_pds_tx_pkt *p = slot(tx, psn);

			if (p->state == URNIC_PDS_IN_FLIGHT) {
				mark_lost(tx, p);
				tx->st.lost_timeout++;
			}
		}
		tx->st.timeouts++;
		tx->progress_ns = now;
		tx->probe_out = false;
		if (++tx->backoff > tx->cfg.retry_max) {
			tx->failed = true;
			return URNIC_PDS_TX_FAILED;
		}
	}
	probe_at =
		(tx->last_send_ns > tx->progress_ns ? tx->last_send_ns : tx->progress_ns) + pto(tx);
	if (!tx->probe_out && !tx->lost && tx->inflight_bytes && now >= probe_at) {
		tx->probe_out = true;
		tx->probe_id++;
		tx->probe_sent_ns = now;
		tx->st.probes++;
		act = URNIC_PDS_TX_PROBE;
	}
	earliest(next_ns, tx->rack_deadline_ns);
	earliest(next_ns, tx->progress_ns + rto(tx));
	if (tx->parked)
		earliest(next_ns, tx->park_until_ns);
	if (!tx->probe_out && !tx->lost && tx->inflight_bytes)
		earliest(next_ns, probe_at > now ? probe_at : now + 1);
	return act;
}
