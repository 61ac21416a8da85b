/* SPDX-License-Identifier: MIT */
/*
 * dcqcn.c - DCQCN's reaction and notification points (dcqcn.h): the equations of Zhu et
 * al., SIGCOMM 2015, section 3, in the form ConnectX's firmware runs them (alpha in
 * 1/1024ths updated every DCE_TCP_RTT, cuts at most every RATE_REDUCE_MONITOR_PERIOD,
 * a cut of rate * alpha / 2^RPG_GD but never below RPG_MIN_DEC_FAC of the rate).
 */
#include "cc/dcqcn.h"

enum {
	/* alpha is kept in 1/2^20ths: in ConnectX's 1/1024ths, each update's truncation
	 * (at least 1 of alpha * 1019/1024) outweighed a CNP's 5, and alpha stayed near 0
	 * with a CNP every few microseconds. */
	ALPHA_SHIFT = 20,
	ALPHA_ONE = 1 << ALPHA_SHIFT,
	G_ONE = 1024, /* DCE_TCP_G's unit */
	/* Updates of alpha or timer stages run at once after a long idle: enough to take
	 * alpha from 1 to 0 (1019/1024 per update) and any rate back to the line. */
	MAX_CATCH_UP = 4096,
};

void urnic_dcqcn_defaults(struct urnic_dcqcn_params *p, uint64_t line_rate_bps)
{
	*p = (struct urnic_dcqcn_params){
		.line_rate_bps = line_rate_bps,
		.min_rate_bps = 1000000,
		.ai_rate_bps = 5000000,
		.hai_rate_bps = 50000000,
		.time_reset_ns = 300000,
		.byte_reset = 32767,
		.threshold = 1,
		.gd_log2 = 11,
		.min_dec_fac_pct = 50,
		.g = 1019,
		.alpha_period_ns = 1000,
		.reduce_period_ns = 4000,
		.initial_alpha = 1023,
		.cnp_interval_ns = 4000,
		.clamp_target_on_cut = false,
		.clamp_target_after_inc = true,
	};
}

void urnic_dcqcn_rp_init(struct urnic_dcqcn_rp *rp, const struct urnic_dcqcn_params *p,
			 uint64_t now_ns)
{
	*rp = (struct urnic_dcqcn_rp){
		.p = p,
		.rate_bps = p->line_rate_bps,
		.target_bps = p->line_rate_bps,
		.alpha = p->initial_alpha << (ALPHA_SHIFT - 10),
		.alpha_ns = now_ns,
		.timer_ns = now_ns,
		.sent_ns = now_ns,
	};
}

void urnic_dcqcn_rp_cnp(struct urnic_dcqcn_rp *rp)
{
	rp->cnp_pending = true;
	rp->alpha_cnp = true;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* alpha = g/1024 of itself, plus (1024 - g)/1024 of 1.0 when a CNP came in the period
 * (the paper's alpha = (1 - g) alpha + g, with its g = (1024 - g)/1024). */
static void alpha_update(struct urnic_dcqcn_rp *rp, bool cnp)
{
	uint64_t g = rp->p->g;

	rp->alpha = (uint32_t)(((uint64_t)rp->alpha * g +
				(cnp ? (uint64_t)ALPHA_ONE * (G_ONE - g) : 0)) /
			       G_ONE);
}

/* The paper's rate increase (section 3.3), after a timer or byte-counter event: fast
 * recovery for the first F stages (towards the target, unchanged), then additive
 * increase of the target, and hyper increase once both counters are past F. */
static void increase(struct urnic_dcqcn_rp *rp)
{
	const struct urnic_dcqcn_params *p = rp->p;
	uint32_t most = rp->timer_stage > rp->byte_stage ? rp->timer_stage : rp->byte_stage;
	uint32_t least = rp->timer_stage < rp->byte_stage ? rp->timer_stage : rp->byte_stage;

	if (most > p->threshold) {
		if (least > p->threshold)
			rp->target_bps += (uint64_t)(least - p->threshold) * p->hai_rate_bps;
		else
			rp->target_bps += p->ai_rate_bps;
		rp->target_bps = min_u64(rp->target_bps, p->line_rate_bps);
	}
	rp->rate_bps = min_u64((rp->target_bps + rp->rate_bps + 1) / 2, p->line_rate_bps);
	rp->increases++;
	/* Back at the line rate: no longer limited, until the next CNP. */
	if (rp->rate_bps == p->line_rate_bps && rp->target_bps == p->line_rate_bps)
		rp->limited = false;
}

/* IBTA A17.9 leaves the reaction to the RNIC; DCQCN (section 3.2): the target takes the
 * rate (on the first cut, and after the timer raised it when ConnectX's
 * CLAMP_TGT_RATE_AFTER_TIME_INC says so), the rate loses alpha / 2. */
static void cut(struct urnic_dcqcn_rp *rp, uint64_t now_ns)
{
	const struct urnic_dcqcn_params *p = rp->p;
	uint64_t dec = (uint64_t)(((unsigned __int128)rp->rate_bps * rp->alpha) >>
				  (p->gd_log2 + ALPHA_SHIFT - 10));
	uint64_t keep = (uint64_t)(((unsigned __int128)rp->rate_bps * p->min_dec_fac_pct) / 100);

	if (!rp->limited || p->clamp_target_on_cut ||
	    (p->clamp_target_after_inc && rp->timer_stage > 0))
		rp->target_bps = rp->rate_bps;
	rp->limited = true;
	rp->rate_bps =
		max_u64(max_u64(rp->rate_bps - min_u64(dec, rp->rate_bps), keep), p->min_rate_bps);
	rp->cnp_pending = false;
	rp->cut_ns = now_ns;
	rp->timer_ns = now_ns;
	rp->timer_stage = 0;
	rp->byte_stage = 0;
	rp->bytes = 0;
	rp->cuts++;
}

uint64_t urnic_dcqcn_rp_advance(struct urnic_dcqcn_rp *rp, uint64_t now_ns)
{
	const struct urnic_dcqcn_params *p = rp->p;
	uint32_t n;

	if (rp->cnp_pending && (!rp->cuts || now_ns - rp->cut_ns >= p->reduce_period_ns))
		cut(rp, now_ns);
	/* alpha: a CNP since the last update raises it, else it decays. */
	for (n = 0; now_ns - rp->alpha_ns >= p->alpha_period_ns && n < MAX_CATCH_UP; n++) {
		alpha_update(rp, rp->alpha_cnp);
		rp->alpha_cnp = false;
		rp->alpha_ns += p->alpha_period_ns;
	}
	if (n == MAX_CATCH_UP)
		rp->alpha_ns = now_ns;
	for (n = 0; rp->limited && now_ns - rp->timer_ns >= p->time_reset_ns && n < MAX_CATCH_UP;
	     n++) {
		rp->timer_ns += p->time_reset_ns;
		rp->timer_stage++;
		increase(rp);
	}
	if (n == MAX_CATCH_UP || !rp->limited)
		rp->timer_ns = now_ns;
	return rp->rate_bps;
}

uint64_t urnic_dcqcn_rp_next_send(const struct urnic_dcqcn_rp *rp)
{
	return rp->sent_ns +
	       (uint64_t)((unsigned __int128)rp->sent_bytes * 8 * 1000000000u / rp->rate_bps);
}

uint64_t urnic_dcqcn_rp_wake(const struct urnic_dcqcn_rp *rp)
{
	uint64_t at = urnic_dcqcn_rp_next_send(rp);

	if (rp->limited)
		at = min_u64(at, rp->timer_ns + rp->p->time_reset_ns);
	return at;
}

bool urnic_dcqcn_rp_may_send(struct urnic_dcqcn_rp *rp, uint64_t now_ns, uint64_t bytes,
			     uint64_t *wait_ns)
{
	const struct urnic_dcqcn_params *p = rp->p;
	uint64_t at;

	if (!rp->limited)
		return true;
	at = urnic_dcqcn_rp_next_send(rp);
	if (now_ns < at) {
		*wait_ns = at - now_ns;
		return false;
	}
	/* Late by the engine's wake-up or idle: the time is not made up later. */
	rp->sent_ns = max_u64(at, now_ns);
	rp->sent_bytes = bytes;
	/* The byte counter (section 3.3): every byte_reset bytes a stage of increase
	 * (0: off, as ConnectX's RPG_BYTE_RESET). */
	if (!p->byte_reset)
		return true;
	rp->bytes += bytes;
	while (rp->limited && rp->bytes >= p->byte_reset) {
		rp->bytes -= p->byte_reset;
		rp->byte_stage++;
		increase(rp);
	}
	return true;
}

bool urnic_dcqcn_np_ce(struct urnic_dcqcn_np *np, const struct urnic_dcqcn_params *p,
		       uint64_t now_ns)
{
	if (np->sent && now_ns - np->last_ns < p->cnp_interval_ns)
		return false;
	np->sent = true;
	np->last_ns = now_ns;
	np->cnps++;
	return true;
}
