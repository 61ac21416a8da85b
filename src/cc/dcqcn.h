/* SPDX-License-Identifier: MIT */
/*
 * dcqcn.h - DCQCN, the congestion control of RoCEv2 hardware (Zhu et al., "Congestion
 * Control for Large-Scale RDMA Deployments", SIGCOMM 2015), sans I/O: the notification
 * point (NP, the receiver: a CNP, BTH opcode 0x81, for CE-marked packets, at most one
 * per QP per interval) and the reaction point (RP, the sender: a rate cut by alpha / 2
 * on a CNP, alpha's moving average, then fast recovery, additive and hyper increase on
 * a timer and a byte counter), with ConnectX's defaults, and the pacing of the sends at
 * the RP's rate. Time is an argument (ns), rates are bits per second; alpha's
 * parameters are in ConnectX's 1/1024ths, alpha itself in 1/2^20ths (dcqcn.c).
 *
 * Out of scope here: reading ECN from the IP header, sending and parsing CNPs, and
 * where the requester waits for its pace (the engine's); the congestion point (the
 * switch's RED/ECN marking), which the tests model.
 */
#ifndef URNIC_CC_DCQCN_H
#define URNIC_CC_DCQCN_H

#include <stdbool.h>
#include <stdint.h>

/* The parameters, named as ConnectX's firmware names them (mlxconfig ROCE_CC_*,
 * mlx5 cong_control_r_roce_ecn_rp / _np). */
struct urnic_dcqcn_params {
	uint64_t line_rate_bps;	     /* RPG_MAX_RATE 0: the line rate; the rate uncut */
	uint64_t min_rate_bps;	     /* RPG_MIN_RATE */
	uint64_t ai_rate_bps;	     /* RPG_AI_RATE: additive increase of the target */
	uint64_t hai_rate_bps;	     /* RPG_HAI_RATE: hyper increase, per stage beyond F */
	uint64_t time_reset_ns;	     /* RPG_TIME_RESET: the rate-increase timer */
	uint64_t byte_reset;	     /* RPG_BYTE_RESET: the rate-increase byte counter */
	uint32_t threshold;	     /* RPG_THRESHOLD: F, stages of fast recovery */
	uint32_t gd_log2;	     /* RPG_GD: a cut takes rate * alpha / 2^gd */
	uint32_t min_dec_fac_pct;    /* RPG_MIN_DEC_FAC: a cut keeps at least this much */
	uint32_t g;		     /* DCE_TCP_G: alpha keeps g/1024 of itself per update */
	uint64_t alpha_period_ns;    /* DCE_TCP_RTT: alpha's update period */
	uint64_t reduce_period_ns;   /* RATE_REDUCE_MONITOR_PERIOD: cuts at most this often */
	uint32_t initial_alpha;	     /* INITIAL_ALPHA_VALUE, in 1/1024ths */
	uint64_t cnp_interval_ns;    /* MIN_TIME_BETWEEN_CNPS (the NP) */
	bool clamp_target_on_cut;    /* CLAMP_TGT_RATE: a cut sets the target to the rate */
	bool clamp_target_after_inc; /* CLAMP_TGT_RATE_AFTER_TIME_INC: ... once the timer
				      * raised it (the first cut always does) */
};

/* ConnectX's defaults for a port of line_rate_bps. */
void urnic_dcqcn_defaults(struct urnic_dcqcn_params *p, uint64_t line_rate_bps);

/* The reaction point of one QP. */
struct urnic_dcqcn_rp {
	const struct urnic_dcqcn_params *p;
	bool limited;	     /* a CNP came since the rate was last back at the line rate */
	bool cnp_pending;    /* a CNP came since the last cut */
	bool alpha_cnp;	     /* ... since alpha's last update */
	uint64_t rate_bps;   /* R_C, the current rate */
	uint64_t target_bps; /* R_T, the target rate */
	uint32_t alpha;	     /* in 1/2^20ths (1 << 20: 1.0) */
	uint32_t timer_stage, byte_stage; /* i_T, i_B: increases since the last cut */
	uint64_t bytes;			  /* sent since the byte counter last fired */
	uint64_t cut_ns;		  /* the last cut */
	uint64_t alpha_ns;		  /* alpha's last update */
	uint64_t timer_ns;		  /* the rate-increase timer's start */
	/* Pacing: when the last send left, and its bytes; the next leaves their time at
	 * the current rate later (urnic_dcqcn_rp_next_send). */
	uint64_t sent_ns, sent_bytes;
	uint64_t cuts, increases; /* for `urnic counters --qp` */
};

void urnic_dcqcn_rp_init(struct urnic_dcqcn_rp *rp, const struct urnic_dcqcn_params *p,
			 uint64_t now_ns);
/* A CNP for this QP arrived: its rate is cut at the next urnic_dcqcn_rp_advance, and
 * alpha's next update counts it. */
void urnic_dcqcn_rp_cnp(struct urnic_dcqcn_rp *rp);
/* Runs what is due by now_ns: the cut a CNP asked for, alpha's updates, the timer's
 * increases. Returns the current rate. */
uint64_t urnic_dcqcn_rp_advance(struct urnic_dcqcn_rp *rp, uint64_t now_ns);
/*
 * Pacing: whether bytes may leave at now_ns under the current rate. If so they are
 * counted (the byte counter's increases) and the next send is put off by their time at
 * the rate; if not, *wait_ns says how long until it may, at the rate now. Unlimited (no
 * CNP since the rate was last at the line rate): always.
 */
bool urnic_dcqcn_rp_may_send(struct urnic_dcqcn_rp *rp, uint64_t now_ns, uint64_t bytes,
			     uint64_t *wait_ns);
/* When the next send may leave: the last one's bytes at the rate now, so that a rate
 * raised while a QP waits (a cut to RPG_MIN_RATE leaves a 4 KiB packet 33 ms apart)
 * shortens the wait at once, as a NIC's rate limiter does. */
uint64_t urnic_dcqcn_rp_next_send(const struct urnic_dcqcn_rp *rp);
/* When a QP told to wait should ask again: its next send at the rate now, or the
 * timer's next increase if that comes first (the rate then rises, the wait shortens). */
uint64_t urnic_dcqcn_rp_wake(const struct urnic_dcqcn_rp *rp);

/* The notification point of one QP: whether a CE-marked packet arriving at now_ns
 * gets a CNP (at most one per cnp_interval_ns), and if so, notes it. */
struct urnic_dcqcn_np {
	bool sent;
	uint64_t last_ns;
	uint64_t cnps;
};

bool urnic_dcqcn_np_ce(struct urnic_dcqcn_np *np, const struct urnic_dcqcn_params *p,
		       uint64_t now_ns);

#endif
