/* SPDX-License-Identifier: MIT */
/*
 * nscc.h - NSCC, the sender's congestion window of the Ultra Ethernet transport (UE 1.0
 * CMS, network-signal congestion control), sans I/O: delay and ECN read together, each
 * ACK in one of four quadrants.
 *
 *   no mark, delay under target   proportional increase (more the emptier the queue), and
 *                                 fast increase after a clean window at near-zero delay
 *   no mark, delay over target    fair increase: a queue drains, every flow grows alike
 *   mark, delay over target       multiplicative decrease by how far the average delay
 *                                 is over target, at most once per base RTT
 *   mark, delay under target      nothing: the multipath layer moves off the hot path
 *
 * Increases collect and are applied once per adjustment period (a base RTT, or 8 MTUs
 * acknowledged), as inc / cwnd, plus a small eta per period so that windows converge.
 * Quick adapt: after a loss or trim, or with the delay over four targets, a window that
 * achieved far less than it allowed in the last round trip is cut to what it achieved.
 * The constants scale from UE's reference network (100 Gb/s, 12 us): a = BDP / 150 KB,
 * b = target / 12 us; the window starts at its ceiling, 1.5 BDP (no slow start).
 * Time is an argument (ns); windows are bytes.
 *
 * Out of scope here: the receiver's credits (RCCC), reading ECN and RTT off packets.
 */
#ifndef URNIC_CC_NSCC_H
#define URNIC_CC_NSCC_H

#include <stdbool.h>
#include <stdint.h>

struct urnic_nscc_params {
	uint64_t link_bps;	   /* the sender's line rate */
	uint64_t base_rtt_ns;	   /* the unloaded round trip; lowered by samples */
	uint64_t target_qdelay_ns; /* 0: base_rtt_ns (0.75 of it with trimming) */
	uint32_t mtu;		   /* payload bytes of a full packet */
	bool trimming;		   /* the network trims instead of dropping */
};

struct urnic_nscc_stats {
	uint64_t acks;
	uint64_t proportional; /* ACKs in each quadrant */
	uint64_t fair;
	uint64_t decreases; /* multiplicative decreases applied */
	uint64_t held;	    /* marked under target */
	uint64_t fast;	    /* fast increases */
	uint64_t quick_adapts;
	uint64_t losses;
};

struct urnic_nscc {
	struct urnic_nscc_params p;
	/* derived */
	uint64_t bdp;
	uint64_t maxwnd;
	uint64_t target_ns;
	double alpha;	 /* bytes per ns of headroom, per byte acked */
	double fi;	 /* fair increase, bytes per byte acked */
	double fi_scale; /* fast increase, bytes per byte acked */
	double eta;	 /* bytes per adjustment period */
	uint64_t adjust_bytes;
	uint64_t qa_threshold_ns;
	uint32_t qa_gate;
	/* state */
	uint64_t cwnd;
	uint64_t base_rtt_ns;
	uint64_t avg_delay_ns;
	double inc;
	uint64_t received; /* bytes since the last adjustment */
	uint64_t last_adjust_ns;
	uint64_t last_decrease_ns;
	uint64_t clean; /* bytes acked at near-zero delay in a row */
	bool fast_on;
	uint64_t achieved; /* bytes acked in this quick-adapt round */
	uint64_t qa_end_ns;
	bool qa_pending;       /* a loss or trim since the round began */
	uint64_t ignore_bytes; /* marks on what was in flight at a quick adapt say nothing new */
	struct urnic_nscc_stats st;
};

void urnic_nscc_init(struct urnic_nscc *n, const struct urnic_nscc_params *p, uint64_t now);
/* An ACK: bytes newly delivered, its RTT sample (0: none), whether it carried a mark. */
void urnic_nscc_ack(struct urnic_nscc *n, uint64_t now, uint64_t bytes, uint64_t rtt_ns, bool ecn,
		    uint64_t inflight);
/* Bytes lost or trimmed (a NACK, or loss inferred by time). */
void urnic_nscc_loss(struct urnic_nscc *n, uint64_t now, uint64_t bytes);
/* Whether bytes more may go with inflight outstanding. */
bool urnic_nscc_room(const struct urnic_nscc *n, uint64_t inflight, uint64_t bytes);

#endif
