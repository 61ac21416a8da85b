/* SPDX-License-Identifier: MIT */
/*
 * nscc.c - NSCC's window (nscc.h): the quadrants, the adjustment period and quick adapt,
 * with UE 1.0's constants scaled from its reference network.
 */
#include <string.h>

#include "cc/nscc.h"

enum {
	NS_PER_US = 1000,
	REF_RTT_NS = 12 * NS_PER_US,
	ADJUST_MTUS = 8,
	QA_GATE = 3,	    /* quick adapt when achieved < maxwnd / 2^3 */
	QA_TARGETS = 4,	    /* ... or the delay is over four targets */
	FAST_CLEAN_DIV = 8, /* "near-zero" delay: under target / 8 */
};

static const double REF_BDP_BYTES = 100e9 / 8 * 12e-6; /* 150 KB */
static const double GAMMA = 0.8;
static const double MAX_MD_KEEP = 0.5; /* a decrease keeps at least half */
static const double DELAY_EWMA = 0.0125;

static uint64_t bdp_of(const struct urnic_nscc *n, uint64_t rtt_ns)
{
	return (uint64_t)((double)n->p.link_bps / 8.0 * (double)rtt_ns / 1e9);
}

/* The window's ceiling and the constants, from the base RTT (which samples may lower). */
static void derive(struct urnic_nscc *n)
{
	double a, b, mtu = (double)n->p.mtu;

	n->bdp = bdp_of(n, n->base_rtt_ns);
	if (n->bdp < n->p.mtu)
		n->bdp = n->p.mtu;
	n->maxwnd = n->bdp + n->bdp / 2;
	a = (double)n->bdp / REF_BDP_BYTES;
	b = (double)n->target_ns / REF_RTT_NS;
	n->alpha = 4.0 * mtu * a * b / (double)n->target_ns;
	n->fi = 5.0 * mtu * a;
	n->fi_scale = 0.25 * a;
	n->eta = 0.15 * mtu * a;
}

void urnic_nscc_init(struct urnic_nscc *n, const struct urnic_nscc_params *p, uint64_t now)
{
	memset(n, 0, sizeof(*n));
	n->p = *p;
	if (!n->p.mtu)
		n->p.mtu = 4096;
	n->base_rtt_ns = p->base_rtt_ns ? p->base_rtt_ns : REF_RTT_NS;
	n->target_ns = p->target_qdelay_ns ? p->target_qdelay_ns
		       : p->trimming	   ? n->base_rtt_ns * 3 / 4
					   : n->base_rtt_ns;
	derive(n);
	n->adjust_bytes = (uint64_t)ADJUST_MTUS * n->p.mtu;
	n->qa_threshold_ns = QA_TARGETS * n->target_ns;
	n->qa_gate = QA_GATE;
	n->cwnd = n->maxwnd;
	n->last_adjust_ns = now;
	n->qa_end_ns = now + n->base_rtt_ns + n->target_ns;
}

static void bound(struct urnic_nscc *n)
{
	if (n->cwnd < n->p.mtu)
		n->cwnd = n->p.mtu;
	if (n->cwnd > n->maxwnd)
		n->cwnd = n->maxwnd;
}

/* Quick adapt: once per round (a base RTT and a target), if a loss or a delay far over
 * target came and the round achieved under maxwnd / 2^qa_gate, the window becomes what
 * was achieved, and marks on what is still in flight are ignored. */
static bool quick_adapt(struct urnic_nscc *n, uint64_t now, uint64_t delay, uint64_t inflight)
{
	bool cut = false;

	if (delay > n->qa_threshold_ns)
		n->qa_pending = true;
	if (now < n->qa_end_ns)
		return false;
	if (n->qa_pending && n->achieved < n->maxwnd >> n->qa_gate) {
		n->cwnd = n->achieved;
		bound(n);
		n->ignore_bytes = inflight;
		n->inc = 0;
		n->received = 0;
		n->st.quick_adapts++;
		cut = true;
	}
	n->qa_pending = false;
	n->achieved = 0;
	n->qa_end_ns = now + n->base_rtt_ns + n->target_ns;
	return cut;
}

void urnic_nscc_ack(struct urnic_nscc *n, uint64_t now, uint64_t bytes, uint64_t rtt_ns, bool ecn,
		    uint64_t inflight)
{
	uint64_t delay;

	n->st.acks++;
	if (rtt_ns) {
		if (rtt_ns < n->base_rtt_ns) {
			n->base_rtt_ns = rtt_ns;
			derive(n);
		}
		delay = rtt_ns - n->base_rtt_ns;
		n->avg_delay_ns = (uint64_t)(DELAY_EWMA * (double)delay +
					     (1 - DELAY_EWMA) * (double)n->avg_delay_ns);
	} else {
		delay = n->avg_delay_ns;
	}
	n->achieved += bytes;
	if (ecn && n->ignore_bytes) {
		/* Marked before the quick adapt took effect: already answered. */
		n->ignore_bytes = n->ignore_bytes > bytes ? n->ignore_bytes - bytes : 0;
		return;
	}
	if (quick_adapt(n, now, delay, inflight))
		return;
	if (!ecn && delay < n->target_ns) {
		n->st.proportional++;
		if (delay < n->target_ns / FAST_CLEAN_DIV) {
			n->clean += bytes;
			if (n->clean > n->cwnd || n->fast_on) {
				/* A whole clean window: the path has room, grow fast. */
				n->cwnd += (uint64_t)((double)bytes * n->fi_scale);
				n->fast_on = true;
				n->st.fast++;
			}
		} else {
			n->clean = 0;
			n->fast_on = false;
		}
		if (!n->fast_on)
			n->inc += n->alpha * (double)bytes * (double)(n->target_ns - delay);
	} else if (!ecn) {
		n->st.fair++;
		n->inc += n->fi * (double)bytes;
	} else if (delay >= n->target_ns) {
		n->clean = 0;
		n->fast_on = false;
		if (n->avg_delay_ns > n->target_ns && now - n->last_decrease_ns > n->base_rtt_ns) {
			double keep = 1.0 - GAMMA * (double)(n->avg_delay_ns - n->target_ns) /
						    (double)n->avg_delay_ns;

			n->cwnd = (uint64_t)((double)n->cwnd *
					     (keep > MAX_MD_KEEP ? keep : MAX_MD_KEEP));
			n->last_decrease_ns = now;
			n->st.decreases++;
		}
	} else {
		n->st.held++;
	}
	bound(n);
	n->received += bytes;
	if (n->received > n->adjust_bytes || now - n->last_adjust_ns >= n->base_rtt_ns) {
		n->cwnd += (uint64_t)(n->inc / (double)n->cwnd);
		if (now - n->last_adjust_ns >= n->base_rtt_ns) {
			n->cwnd += (uint64_t)n->eta;
			n->last_adjust_ns = now;
		}
		n->inc = 0;
		n->received = 0;
		bound(n);
	}
}

void urnic_nscc_loss(struct urnic_nscc *n, uint64_t now, uint64_t bytes)
{
	(void)now;
	n->st.losses++;
	n->qa_pending = true;
	n->cwnd = n->cwnd > bytes ? n->cwnd - bytes : 0;
	bound(n);
}

bool urnic_nscc_room(const struct urnic_nscc *n, uint64_t inflight, uint64_t bytes)
{
	return inflight + bytes <= n->cwnd;
}
