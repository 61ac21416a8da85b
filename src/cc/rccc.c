/* SPDX-License-Identifier: MIT */
/*
 * rccc.c - receiver credits (rccc.h): cumulative 24-bit counters read against 64-bit
 * ones, and a pacer that grants an MTU at a time round-robin among senders that want.
 */
#include <string.h>

#include "cc/rccc.h"

enum { HALF_WIRE = (URNIC_RCCC_WIRE_MASK + 1) / 2 };

/* The 64-bit count a 24-bit wire value stands for, near base (RFC 1982's serial numbers):
 * ahead of base by less than half the space, else stale (returns false). */
static bool unwrap(uint64_t base, uint32_t wire, uint64_t *out)
{
	uint32_t ahead = (wire - (uint32_t)base) & URNIC_RCCC_WIRE_MASK;

	if (ahead >= HALF_WIRE)
		return false;
	*out = base + ahead;
	return true;
}

void urnic_rccc_rx_init(struct urnic_rccc_rx *rx, const struct urnic_rccc_rx_params *p,
			uint64_t now)
{
	memset(rx, 0, sizeof(*rx));
	rx->p = *p;
	if (!rx->p.mtu)
		rx->p.mtu = 4096;
	if (!rx->p.pace_permille || rx->p.pace_permille > 1000)
		rx->p.pace_permille = 990;
	rx->next_grant_ns = now;
}

void urnic_rccc_rx_demand(struct urnic_rccc_rx *rx, uint32_t s, uint32_t wire)
{
	uint64_t asked;

	if (s >= URNIC_RCCC_SENDERS)
		return;
	if (!unwrap(rx->asked[s], wire, &asked)) {
		rx->st.stale++;
		return;
	}
	rx->asked[s] = asked;
	rx->st.demands++;
}

static uint64_t pace_ns(const struct urnic_rccc_rx *rx, uint64_t bytes)
{
	return bytes * 8u * 1000000000u * 1000u / (rx->p.link_bps * rx->p.pace_permille);
}

void urnic_rccc_rx_arrived(struct urnic_rccc_rx *rx, uint32_t s, uint32_t bytes, uint64_t now)
{
	uint64_t excess;

	if (s >= URNIC_RCCC_SENDERS)
		return;
	rx->arrived[s] += bytes;
	excess = rx->arrived[s] > rx->granted[s] ? rx->arrived[s] - rx->granted[s] : 0;
	if (excess <= rx->charged[s])
		return;
	rx->next_grant_ns = (rx->next_grant_ns > now ? rx->next_grant_ns : now) +
			    pace_ns(rx, excess - rx->charged[s]);
	rx->charged[s] = excess;
}

bool urnic_rccc_rx_grant(struct urnic_rccc_rx *rx, uint64_t now, uint32_t *s, uint32_t *wire,
			 uint32_t *bytes, uint64_t *next_ns)
{
	uint32_t i, k;
	uint64_t want, ns;

	for (k = 0; k < URNIC_RCCC_SENDERS; k++) {
		i = (rx->next + k) % URNIC_RCCC_SENDERS;
		if (rx->asked[i] > rx->granted[i])
			break;
	}
	if (k == URNIC_RCCC_SENDERS) {
		*next_ns = 0;
		return false;
	}
	if (now < rx->next_grant_ns) {
		*next_ns = rx->next_grant_ns;
		return false;
	}
	want = rx->asked[i] - rx->granted[i];
	*bytes = want < rx->p.mtu ? (uint32_t)want : rx->p.mtu;
	rx->granted[i] += *bytes;
	*s = i;
	*wire = (uint32_t)(rx->granted[i] & URNIC_RCCC_WIRE_MASK);
	rx->next = (i + 1) % URNIC_RCCC_SENDERS;
	/* The next grant when these bytes have crossed the last hop at the paced rate; an
	 * idle pacer does not bank time. */
	ns = pace_ns(rx, *bytes);
	rx->next_grant_ns = (rx->next_grant_ns > now ? rx->next_grant_ns : now) + ns;
	*next_ns = rx->next_grant_ns;
	rx->st.grants++;
	rx->st.granted_bytes += *bytes;
	return true;
}

void urnic_rccc_tx_init(struct urnic_rccc_tx *tx, uint64_t speculative_bytes)
{
	memset(tx, 0, sizeof(*tx));
	tx->spec = speculative_bytes;
}

uint32_t urnic_rccc_tx_want(struct urnic_rccc_tx *tx, uint64_t bytes)
{
	uint64_t beyond;

	tx->queued += bytes;
	beyond = tx->queued > tx->spec ? tx->queued - tx->spec : 0;
	return (uint32_t)(beyond & URNIC_RCCC_WIRE_MASK);
}

void urnic_rccc_tx_grant(struct urnic_rccc_tx *tx, uint32_t wire)
{
	uint64_t credit;

	if (!unwrap(tx->credit, wire, &credit)) {
		tx->stale++;
		return;
	}
	tx->credit = credit;
}

bool urnic_rccc_tx_may_send(const struct urnic_rccc_tx *tx, uint64_t bytes)
{
	return tx->used + bytes <= tx->credit + tx->spec;
}

void urnic_rccc_tx_sent(struct urnic_rccc_tx *tx, uint64_t bytes)
{
	tx->used += bytes;
}
