/* SPDX-License-Identifier: MIT */
/*
 * test_dcqcn.c - DCQCN's reaction and notification points (src/cc/dcqcn.h) against the
 * equations of Zhu et al. (SIGCOMM 2015, section 3) with ConnectX's defaults: uncut,
 * a QP sends at will; the first CNP cuts the rate by alpha / 2 (never below half) and
 * keeps the target; cuts come at most once per RATE_REDUCE_MONITOR_PERIOD; alpha rises
 * with CNPs and decays without; fast recovery, then additive and hyper increase on the
 * timer and the byte counter, back to the line rate, where the QP is unlimited again;
 * pacing holds a cut QP to its rate; the NP sends one CNP per interval. Then the loop
 * closed: two QPs through one 10 Gb/s bottleneck that marks ECN as a RED switch does
 * share it fairly and keep its queue short, busy throughout with the paper's
 * parameters.
 */
#include <stdio.h>

#include "cc/dcqcn.h"
#include "check.h"

#define GBPS 1000000000ull
#define US 1000ull
#define MS 1000000ull

static void uncut_sends_at_will(void)
{
	struct urnic_dcqcn_params p;
	struct urnic_dcqcn_rp rp;
	uint64_t wait = 0;

	urnic_dcqcn_defaults(&p, 25 * GBPS);
	urnic_dcqcn_rp_init(&rp, &p, 0);
	CHECK_EQ(urnic_dcqcn_rp_advance(&rp, 10 * MS), 25 * GBPS);
	for (int i = 0; i < 1000; i++)
		CHECK(urnic_dcqcn_rp_may_send(&rp, 10 * MS, 65536, &wait));
	CHECK(!rp.limited);
	CHECK_EQ(rp.cuts, 0);
}

static void first_cnp_cuts_by_half_alpha(void)
{
	struct urnic_dcqcn_params p;
	struct urnic_dcqcn_rp rp;

	urnic_dcqcn_defaults(&p, 25 * GBPS);
	urnic_dcqcn_rp_init(&rp, &p, 0);
	urnic_dcqcn_rp_cnp(&rp);
	/* alpha 1023/1024 (INITIAL_ALPHA_VALUE): the rate loses 1023/2048 of itself, but
	 * RPG_MIN_DEC_FAC keeps half (this cut is smaller): 25 Gb/s less 1023/2048 of it. The
	 * target keeps the rate before the cut. */
	CHECK_EQ(urnic_dcqcn_rp_advance(&rp, 100), 25 * GBPS - 25 * GBPS * 1023 / 2048);
	CHECK_EQ(rp.target_bps, 25 * GBPS);
	CHECK(rp.limited);
	CHECK_EQ(rp.cuts, 1);
	/* With alpha 1/4: a cut of 1/8. */
	urnic_dcqcn_rp_init(&rp, &p, 0);
	rp.alpha = 1 << 18;
	urnic_dcqcn_rp_cnp(&rp);
	CHECK_EQ(urnic_dcqcn_rp_advance(&rp, 100), 25 * GBPS / 8 * 7);
	/* Never below RPG_MIN_RATE. */
	p.min_dec_fac_pct = 0;
	urnic_dcqcn_rp_init(&rp, &p, 0);
	rp.rate_bps = 1500000;
	rp.alpha = 1 << 20;
	urnic_dcqcn_rp_cnp(&rp);
	CHECK_EQ(urnic_dcqcn_rp_advance(&rp, 100), 1000000);
}

static void cuts_at_most_once_per_period(void)
{
	struct urnic_dcqcn_params p;
	struct urnic_dcqcn_rp rp;
	uint64_t r1;

	urnic_dcqcn_defaults(&p, 25 * GBPS);
	urnic_dcqcn_rp_init(&rp, &p, 0);
	urnic_dcqcn_rp_cnp(&rp);
	r1 = urnic_dcqcn_rp_advance(&rp, 10 * US);
	urnic_dcqcn_rp_cnp(&rp);
	CHECK_EQ(urnic_dcqcn_rp_advance(&rp, 11 * US), r1); /* within 4 us: held */
	CHECK_EQ(rp.cuts, 1);
	CHECK(urnic_dcqcn_rp_advance(&rp, 14 * US) < r1); /* then cut */
	CHECK_EQ(rp.cuts, 2);
	CHECK(!rp.cnp_pending);
}

static void alpha_rises_with_cnps_and_decays_without(void)
{
	struct urnic_dcqcn_params p;
	struct urnic_dcqcn_rp rp;
	uint64_t model;

	urnic_dcqcn_defaults(&p, 25 * GBPS);
	urnic_dcqcn_rp_init(&rp, &p, 0);
	rp.alpha = 1 << 19; /* 0.5 */
	urnic_dcqcn_rp_cnp(&rp);
	urnic_dcqcn_rp_advance(&rp, 1 * US);
	/* alpha = alpha * 1019/1024 + 5/1024 of one */
	CHECK_EQ(rp.alpha, ((1 << 19) * 1019 + (1 << 20) * 5) / 1024);
	model = rp.alpha;
	for (uint64_t t = 2; t <= 500; t++) {
		urnic_dcqcn_rp_advance(&rp, t * US);
		model = model * 1019 / 1024;
		CHECK_EQ(rp.alpha, model);
	}
	/* A long idle: caught up at once, to nothing. */
	urnic_dcqcn_rp_advance(&rp, 10 * 1000 * MS);
	CHECK_EQ(rp.alpha, 0);
}

static void recovers_to_the_line_rate(void)
{
	struct urnic_dcqcn_params p;
	struct urnic_dcqcn_rp rp;
	uint64_t rate, t;

	urnic_dcqcn_defaults(&p, 10 * GBPS);
	p.byte_reset = 0; /* the timer alone */
	urnic_dcqcn_rp_init(&rp, &p, 0);
	urnic_dcqcn_rp_cnp(&rp);
	rate = urnic_dcqcn_rp_advance(&rp, 0);
	/* First stage (F = 1): fast recovery halfway to the target. */
	CHECK_EQ(urnic_dcqcn_rp_advance(&rp, 300 * US), (10 * GBPS + rate + 1) / 2);
	CHECK_EQ(rp.target_bps, 10 * GBPS);
	/* A second cut, after the timer raised the rate: the target takes the rate
	 * (CLAMP_TGT_RATE_AFTER_TIME_INC). */
	rate = rp.rate_bps;
	urnic_dcqcn_rp_cnp(&rp);
	urnic_dcqcn_rp_advance(&rp, 301 * US);
	CHECK_EQ(rp.target_bps, rate);
	rate = rp.rate_bps;
	t = rp.target_bps;
	/* Stage 1 fast recovery, then additive increase: 5 Mb/s on the target a stage. */
	urnic_dcqcn_rp_advance(&rp, 601 * US);
	CHECK_EQ(rp.target_bps, t);
	CHECK_EQ(rp.rate_bps, (t + rate + 1) / 2);
	urnic_dcqcn_rp_advance(&rp, 901 * US);
	CHECK_EQ(rp.target_bps, t + 5000000);
	urnic_dcqcn_rp_advance(&rp, 1201 * US);
	CHECK_EQ(rp.target_bps, t + 10000000);
	CHECK(rp.rate_bps > rate);
	/* The timer alone climbs back slowly (5 Mb/s every 300 us): after 10 s, all of it. */
	for (t = 2; t <= 10000; t++)
		urnic_dcqcn_rp_advance(&rp, t * MS);
	CHECK_EQ(rp.rate_bps, 10 * GBPS);
	CHECK(!rp.limited);
}

static void hyper_increase_when_both_counters_pass(void)
{
	struct urnic_dcqcn_params p;
	struct urnic_dcqcn_rp rp;
	uint64_t wait, t;

	urnic_dcqcn_defaults(&p, 100 * GBPS);
	urnic_dcqcn_rp_init(&rp, &p, 0);
	urnic_dcqcn_rp_cnp(&rp);
	urnic_dcqcn_rp_advance(&rp, 0);
	rp.target_bps = rp.rate_bps = 10 * GBPS;
	/* Two timer stages and three byte stages: min(i_T, i_B) = 2 > F = 1. */
	urnic_dcqcn_rp_advance(&rp, 600 * US);
	CHECK_EQ(rp.timer_stage, 2);
	t = rp.target_bps;
	for (int i = 0; i < 3; i++) {
		rp.sent_bytes = 0; /* as if sent long ago */
		CHECK(urnic_dcqcn_rp_may_send(&rp, 600 * US, 32767, &wait));
	}
	CHECK_EQ(rp.byte_stage, 3);
	/* Byte stage 1: additive (i_B <= F); 2 and 3: hyper, (min - F) * 50 Mb/s. */
	CHECK_EQ(rp.target_bps, t + 5000000 + 1 * 50000000 + 1 * 50000000);
	urnic_dcqcn_rp_advance(&rp, 900 * US); /* i_T = 3, i_B = 3: 2 * 50 Mb/s */
	CHECK_EQ(rp.target_bps, t + 5000000 + 2 * 50000000 + 2 * 50000000);
}

static void pacing_holds_the_rate(void)
{
	struct urnic_dcqcn_params p;
	struct urnic_dcqcn_rp rp;
	uint64_t now = 0, sent = 0, wait = 0, rate;

	urnic_dcqcn_defaults(&p, 8 * GBPS);
	p.byte_reset = 0;
	p.time_reset_ns = 1000 * MS; /* no increase in the 10 ms */
	urnic_dcqcn_rp_init(&rp, &p, 0);
	urnic_dcqcn_rp_cnp(&rp);
	rate = urnic_dcqcn_rp_advance(&rp, 0);
	while (now < 10 * MS) {
		if (urnic_dcqcn_rp_may_send(&rp, now, 4096, &wait))
			sent += 4096;
		else
			now += wait;
	}
	/* rate * 10 ms, within a packet */
	CHECK(sent * 8 >= rate / 100 - 4096 * 8 && sent * 8 <= rate / 100 + 4096 * 8);
}

/* Cut to RPG_MIN_RATE, a 4 KiB packet puts the next one 33 ms off; the timer's first
 * increase (300 us later, fast recovery halfway to the target) brings it in at once. */
static void a_raised_rate_shortens_the_wait(void)
{
	struct urnic_dcqcn_params p;
	struct urnic_dcqcn_rp rp;
	uint64_t wait = 0;

	urnic_dcqcn_defaults(&p, 100 * GBPS);
	urnic_dcqcn_rp_init(&rp, &p, 0);
	urnic_dcqcn_rp_cnp(&rp);
	urnic_dcqcn_rp_advance(&rp, 0);
	rp.rate_bps = p.min_rate_bps;
	CHECK(urnic_dcqcn_rp_may_send(&rp, 0, 4096, &wait));
	CHECK(!urnic_dcqcn_rp_may_send(&rp, 1000, 4096, &wait));
	CHECK_EQ(wait, 4096ull * 8 * 1000 - 1000); /* 32.768 ms at 1 Mb/s */
	CHECK(urnic_dcqcn_rp_advance(&rp, 300 * US) > 10 * GBPS);
	CHECK(urnic_dcqcn_rp_may_send(&rp, 300 * US, 4096, &wait));
}

static void np_one_cnp_per_interval(void)
{
	struct urnic_dcqcn_params p;
	struct urnic_dcqcn_np np = { 0 };

	urnic_dcqcn_defaults(&p, 25 * GBPS);
	CHECK(urnic_dcqcn_np_ce(&np, &p, 0));
	CHECK(!urnic_dcqcn_np_ce(&np, &p, 1 * US));
	CHECK(!urnic_dcqcn_np_ce(&np, &p, 3999));
	CHECK(urnic_dcqcn_np_ce(&np, &p, 4 * US));
	CHECK(urnic_dcqcn_np_ce(&np, &p, 100 * US));
	CHECK_EQ(np.cnps, 3);
}

/*
 * The loop closed, in 1 us steps:
 *
 *   QP a (25 Gb/s NIC) ──┐                            ┌── NP a ─┐
 *                        ├─ switch queue ── 10 Gb/s ──┤         │ CNPs, 8 us later
 *   QP b (25 Gb/s NIC) ──┘  RED/ECN: Kmin 5 KB,       └── NP b ─┤
 *        ^                  Kmax 200 KB, Pmax 1 %                 │
 *        └────────────────────────────────────────────────────────┘
 *
 * 4 KiB packets, marked as they join the queue (the paper's recommended settings,
 * section 5). Over the last 40 ms of 60: the link busy, each QP a fair part, the queue
 * short.
 */
enum { DELAY_US = 8, SIM_US = 60000, MEASURE_FROM_US = 20000, PKT = 4096 };

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static bool red_mark(uint64_t queue_bytes)
{
	const double kmin = 5000, kmax = 200000, pmax = 0.01;

	if (queue_bytes <= kmin)
		return false;
	if (queue_bytes >= kmax)
		return true;
	return uniform() < pmax * ((double)queue_bytes - kmin) / (kmax - kmin);
}

/* Runs the loop with parameters p; returns the bottleneck's use over the measured part
 * and sets QP a's share of the bytes and the longest queue. */
static double share_a_bottleneck(const struct urnic_dcqcn_params *p, double *share_a,
				 uint64_t *queue_longest)
{
	struct urnic_dcqcn_rp rp[2];
	struct urnic_dcqcn_np np[2] = { 0 };
	bool cnp_at[2][DELAY_US] = { { false } };
	uint64_t queue = 0, queue_max = 0, wait, served_bits = 0, bytes[2] = { 0, 0 };
	double link_credit = 0, nic_credit[2] = { 0, 0 };

	rng = 0x9e3779b97f4a7c15ull;
	for (int q = 0; q < 2; q++)
		urnic_dcqcn_rp_init(&rp[q], p, 0);
	for (uint64_t t = 0; t < SIM_US; t++) {
		uint64_t now = t * US;

		for (int q = 0; q < 2; q++) {
			/* CNPs sent DELAY_US ago arrive. */
			if (cnp_at[q][t % DELAY_US]) {
				urnic_dcqcn_rp_cnp(&rp[q]);
				cnp_at[q][t % DELAY_US] = false;
			}
			urnic_dcqcn_rp_advance(&rp[q], now);
			/* A NIC puts at most 25 Gb/s on its wire. */
			nic_credit[q] += 25.0 * GBPS / 8 / 1000000;
			if (nic_credit[q] > 2 * PKT)
				nic_credit[q] = 2 * PKT;
			while (nic_credit[q] >= PKT &&
			       urnic_dcqcn_rp_may_send(&rp[q], now, PKT, &wait)) {
				nic_credit[q] -= PKT;
				if (red_mark(queue) && urnic_dcqcn_np_ce(&np[q], p, now))
					cnp_at[q][t % DELAY_US] = true;
				queue += PKT;
				if (t >= MEASURE_FROM_US)
					bytes[q] += PKT;
			}
		}
		/* The bottleneck drains 10 Gb/s. */
		link_credit += 10.0 * GBPS / 8 / 1000000;
		while (queue && link_credit >= PKT) {
			queue -= PKT;
			link_credit -= PKT;
			if (t >= MEASURE_FROM_US)
				served_bits += PKT * 8;
		}
		if (!queue && link_credit > PKT)
			link_credit = PKT;
		if (t >= MEASURE_FROM_US && queue > queue_max)
			queue_max = queue;
	}
	double secs = (double)(SIM_US - MEASURE_FROM_US) / 1e6;
	double util = (double)served_bits / secs / (10.0 * GBPS);
	double share0 = (double)bytes[0] / (double)(bytes[0] + bytes[1]);

	printf("bottleneck busy %.3f, QP a's share %.3f, queue at most %llu B, cuts %llu and "
	       "%llu, CNPs %llu and %llu\n",
	       util, share0, (unsigned long long)queue_max, (unsigned long long)rp[0].cuts,
	       (unsigned long long)rp[1].cuts, (unsigned long long)np[0].cnps,
	       (unsigned long long)np[1].cnps);
	CHECK(rp[0].cuts > 10 && rp[1].cuts > 10);
	*share_a = share0;
	*queue_longest = queue_max;
	return util;
}

/* With the parameters of the paper's evaluation (section 5, as our reference notes
 * give them: g 1/256, alpha and rate timers 55 us, byte counter 10 MB, F 5, R_AI 40
 * Mb/s, a CNP and a cut at most every 50 us): the link busy, fair, the queue near Kmax. */
static void paper_parameters_share_a_bottleneck(void)
{
	struct urnic_dcqcn_params p;
	uint64_t queue;
	double share, util;

	urnic_dcqcn_defaults(&p, 25 * GBPS);
	p.g = 1020;
	p.alpha_period_ns = 55 * US;
	p.time_reset_ns = 55 * US;
	p.byte_reset = 10 * 1000 * 1000;
	p.threshold = 5;
	p.ai_rate_bps = 40000000;
	p.hai_rate_bps = 200000000;
	p.cnp_interval_ns = 50 * US;
	p.reduce_period_ns = 50 * US;
	p.clamp_target_on_cut = true;
	util = share_a_bottleneck(&p, &share, &queue);
	CHECK(util > 0.95);
	CHECK(share > 0.4 && share < 0.6);
	CHECK(queue < 400000);
}

/* ConnectX's defaults (a CNP and a cut at most every 4 us, alpha updated every
 * microsecond, the target kept on a cut, a stage every 32767 bytes): busy and fair
 * too, the queue up to about twice Kmax. (With the target set to the rate on every
 * cut, CLAMP_TGT_RATE, the same model kept the link 77 % busy.) */
static void connectx_defaults_share_a_bottleneck(void)
{
	struct urnic_dcqcn_params p;
	uint64_t queue;
	double share, util;

	urnic_dcqcn_defaults(&p, 25 * GBPS);
	util = share_a_bottleneck(&p, &share, &queue);
	CHECK(util > 0.95);
	CHECK(share > 0.4 && share < 0.6);
	CHECK(queue < 1000000);
}

int main(void)
{
	RUN(uncut_sends_at_will);
	RUN(first_cnp_cuts_by_half_alpha);
	RUN(cuts_at_most_once_per_period);
	RUN(alpha_rises_with_cnps_and_decays_without);
	RUN(recovers_to_the_line_rate);
	RUN(hyper_increase_when_both_counters_pass);
	RUN(pacing_holds_the_rate);
	RUN(a_raised_rate_shortens_the_wait);
	RUN(np_one_cnp_per_interval);
	RUN(paper_parameters_share_a_bottleneck);
	RUN(connectx_defaults_share_a_bottleneck);
	return 0;
}
