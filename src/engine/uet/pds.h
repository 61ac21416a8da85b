/* SPDX-License-Identifier: MIT */
/*
 * pds.h - reliable unordered delivery (UE 1.0 PDS, RUD) on one packet delivery context,
 * sans I/O: the initiator's send window and the target's receive window, each one
 * struct with no allocation after init. Time comes in as an argument (ns).
 *
 * The target takes each new PSN once, in any order (a WRITE's packets are placed as they
 * arrive), and acknowledges with ACK_CC: the cumulative ACK PSN (every PSN up to and
 * including it received), the PSN that caused the ACK as an offset from it, and a 64-bit
 * SACK bitmap placed by its own offset. One bitmap cannot cover what spraying scatters
 * while a hole holds the CACK back, so each starts at the lowest arrival above the CACK
 * that fewer than two ACKs have reported: every arrival is reported, and twice, so that
 * one lost ACK does not make the initiator resend what arrived. The initiator frees what
 * the cumulative ACK covers and marks what the bitmap and the PSN that caused the ACK
 * show.
 * Loss is inferred by time, not by gaps, because spraying reorders (RACK, RFC 8985 §6):
 * a packet is lost once a packet sent after it has been delivered and the smoothed RTT
 * plus a reordering window have passed since it was sent; the window widens each time a
 * packet taken for lost had arrived (links that queue unevenly reorder by more than a
 * quarter RTT) and narrows after a long run without. A trimmed packet's NACK marks
 * it lost at once. With packets outstanding and no ACK for two RTTs, a probe (CTRL
 * PROBE with AR) asks the target for its state (RFC 8985 §7, tail loss probe); the
 * retransmission timeout is the backstop, and retry_max of them in a row, with no
 * progress between, fail the context. A lost packet is sent again with its own PSN and
 * the RETX flag: exactly what was lost is resent.
 *
 * Out of scope here: ROD, RUDI and UUD; PDC establishment and close (SYN, CLOSE); which
 * entropy each packet takes (reps.h; this reports the values that came back) and how
 * fast (the congestion control's; this reports what each ACK delivered, its RTT sample
 * and ECN echo).
 */
#ifndef URNIC_ENGINE_UET_PDS_H
#define URNIC_ENGINE_UET_PDS_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/uet.h"

enum {
	URNIC_PDS_WINDOW = 1024, /* PSNs in flight, and PSNs a target takes beyond its CACK */
	URNIC_PDS_SACK_BITS = 64,
	URNIC_PDS_SACK_REPORTS = 2,   /* ACKs whose bitmap reports each arrival, at least */
	URNIC_PDS_ACKED_EVS = 64,     /* entropy values an ACK's report lists, at most */
	URNIC_PDS_REO_MULT_MAX = 64,  /* the reordering window's multiplier, at most */
	URNIC_PDS_REO_PERSIST = 1024, /* packets delivered with no spurious loss to narrow it */
};

/* 32-bit PSN serial arithmetic (RFC 1982), as urnic_psn_* is for 24-bit PSNs. */
static inline int32_t urnic_pds_psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

struct urnic_pds_cfg {
	uint32_t start_psn;
	uint32_t window;	 /* packets in flight at most (1..URNIC_PDS_WINDOW) */
	uint64_t rto_min_ns;	 /* retransmission timeout floor */
	uint64_t rto_max_ns;	 /* ... and ceiling after back-off */
	uint64_t reorder_min_ns; /* reordering window floor: the paths' delay spread */
	uint32_t retry_max;	 /* timeouts in a row without progress before failing */
	uint32_t ack_every;	 /* target: ACK after this many new packets at most */
};

/* Fills c with urnic's defaults for a software path. */
void urnic_pds_cfg_default(struct urnic_pds_cfg *c, uint32_t start_psn);

enum urnic_pds_pkt_state {
	URNIC_PDS_FREE = 0,
	URNIC_PDS_IN_FLIGHT,
	URNIC_PDS_SACKED, /* delivered out of order; freed when the CACK passes it */
	URNIC_PDS_LOST,	  /* to be sent again */
	URNIC_PDS_PARKED, /* refused for now by the target (RNR): sent again at park_until_ns */
};

struct urnic_pds_tx_pkt {
	uint64_t sent_ns; /* its latest send */
	uint32_t bytes;
	uint16_t ev; /* the entropy value of its latest send */
	uint8_t state;
	uint8_t sends;
};

struct urnic_pds_tx_stats {
	uint64_t sent;	       /* new packets */
	uint64_t resent;       /* retransmissions */
	uint64_t acked;	       /* freed by a cumulative ACK */
	uint64_t sacked;       /* delivered out of order (bitmap) */
	uint64_t lost_reorder; /* inferred lost by time (RACK) */
	uint64_t lost_nack;    /* NACKed: trimmed, or inferred lost by the target */
	uint64_t lost_timeout; /* marked lost by a retransmission timeout */
	uint64_t spurious;     /* marked lost, yet it had arrived (before or as it was resent) */
	uint64_t probes;       /* tail loss probes asked for */
	uint64_t timeouts;     /* retransmission timeouts */
	uint64_t acks;	       /* ACKs taken */
	uint64_t acks_stale;   /* an ACK older than one taken before: its bitmap only */
	uint64_t acks_invalid; /* acknowledging PSNs never sent: ignored */
	uint64_t nacks_other;  /* NACK codes that mark nothing lost */
};

struct urnic_pds_tx {
	struct urnic_pds_cfg cfg;
	uint32_t una;		 /* the oldest PSN the cumulative ACK has not covered */
	uint32_t nxt;		 /* the next new PSN */
	uint32_t lost;		 /* packets in state LOST */
	uint64_t inflight_bytes; /* IN_FLIGHT packets' bytes */
	uint64_t srtt_ns;
	uint64_t rttvar_ns;
	uint64_t min_rtt_ns;
	uint32_t reo_mult;	   /* RACK's reordering window, in quarters of the minimum RTT */
	uint32_t reo_quiet;	   /* packets delivered since the last spurious loss */
	uint64_t rack_sent_ns;	   /* the latest send time of a packet known delivered */
	uint64_t rack_deadline_ns; /* when the next packet sent before it may be lost; 0: none */
	uint64_t progress_ns;	   /* the last ACK that delivered something, or the first send */
	uint64_t last_send_ns;
	uint32_t backoff; /* RTO doublings since the last progress */
	uint64_t probe_sent_ns;
	uint16_t probe_id;	/* the probe_opaque of the probe asked for */
	bool probe_out;		/* a probe asked for, its answer not seen */
	bool failed;		/* retry_max timeouts in a row: the context is dead */
	uint32_t parked;	/* packets in state PARKED */
	uint64_t park_until_ns; /* when they are sent again */
	struct urnic_pds_tx_stats st;
	struct urnic_pds_tx_pkt pkt[URNIC_PDS_WINDOW];
};

/* What one ACK did, for the message layer (PSNs below una are delivered for good) and for
 * congestion control. */
struct urnic_pds_acked {
	uint32_t una_before;
	uint32_t una;		  /* [una_before, una) newly covered by the CACK */
	uint64_t delivered_bytes; /* newly acked or sacked */
	uint64_t rtt_ns;	  /* a sample from a packet sent once, or 0 */
	bool ecn;		  /* the packet that caused the ACK was CE-marked (M) */
	uint32_t lost;		  /* packets this ACK showed lost (by time) */
	/* The entropy values of the packets it reported arrived and not marked (all but
	 * the one that caused it, with M), for the multipath layer (reps.h); the first
	 * URNIC_PDS_ACKED_EVS of them. */
	uint32_t n_evs;
	uint16_t evs[URNIC_PDS_ACKED_EVS];
};

/* What the timer wants done. */
enum urnic_pds_tx_action {
	URNIC_PDS_TX_NOTHING = 0,
	URNIC_PDS_TX_PROBE,  /* send CTRL PROBE, AR, probe_opaque probe_id, payload una */
	URNIC_PDS_TX_FAILED, /* the context failed: complete its work in error */
};

void urnic_pds_tx_init(struct urnic_pds_tx *tx, const struct urnic_pds_cfg *cfg);
/* Whether a new packet fits the window. */
bool urnic_pds_tx_room(const struct urnic_pds_tx *tx);
/* A new packet of bytes is sent with entropy ev: its PSN. Call only with room. */
uint32_t urnic_pds_tx_send(struct urnic_pds_tx *tx, uint32_t bytes, uint16_t ev, uint64_t now);
/* The lowest PSN to send again, if any. */
bool urnic_pds_tx_next_lost(const struct urnic_pds_tx *tx, uint32_t *psn);
/* That PSN was sent again with entropy ev (flag RETX). */
void urnic_pds_tx_resend(struct urnic_pds_tx *tx, uint32_t psn, uint16_t ev, uint64_t now);
/* An ACK or ACK_CC for this context; *out says what it delivered (zeroed when ignored). */
void urnic_pds_tx_ack(struct urnic_pds_tx *tx, const struct urnic_uet_pds *ack, uint64_t now,
		      struct urnic_pds_acked *out);
/* A NACK for this context (not NT). */
void urnic_pds_tx_nack(struct urnic_pds_tx *tx, const struct urnic_uet_pds *nack, uint64_t now);
/* The target refused the packet at psn for now (its receiver was not ready, the RNR NAK's
 * case, IBTA 9.7.5.2.8): neither lost nor in flight until `until`, then sent again. */
void urnic_pds_tx_park(struct urnic_pds_tx *tx, uint32_t psn, uint64_t until, uint64_t now);
/* Runs the loss, probe and retransmission timers at now: the action due, and in *next_ns
 * when to call again (0: nothing outstanding). */
enum urnic_pds_tx_action urnic_pds_tx_timer(struct urnic_pds_tx *tx, uint64_t now,
					    uint64_t *next_ns);
/* Packets sent and not yet covered by the cumulative ACK. */
uint32_t urnic_pds_tx_outstanding(const struct urnic_pds_tx *tx);

enum urnic_pds_rx_verdict {
	URNIC_PDS_RX_NEW,	    /* deliver it */
	URNIC_PDS_RX_DUPLICATE,	    /* taken before: drop, ACK again */
	URNIC_PDS_RX_OUT_OF_WINDOW, /* beyond CACK + window: drop, NACK PSN_OOR_WINDOW */
};

struct urnic_pds_rx_stats {
	uint64_t delivered;
	uint64_t duplicates;
	uint64_t out_of_window;
	uint64_t out_of_order; /* new, but not CACK + 1 */
	uint64_t acks;
	uint64_t probes;
};

struct urnic_pds_rx {
	uint32_t window;
	uint32_t ack_every;
	uint32_t cack;	  /* every PSN up to and including it received */
	uint32_t ack_psn; /* the newest arrival: the PSN the next ACK answers */
	uint32_t high;	  /* the highest PSN arrived */
	uint32_t unacked; /* new packets since the last ACK */
	uint32_t ooo;	  /* out-of-order arrivals since the last ACK */
	uint32_t rcvd_bytes;
	bool ack_now; /* AR, a duplicate or a retransmission: do not wait */
	bool ce;      /* the newest arrival (ack_psn) was CE-marked */
	bool retx;    /* a retransmission since the last ACK */
	struct urnic_pds_rx_stats st;
	uint64_t seen[URNIC_PDS_WINDOW / 64]; /* PSN p in (cack, cack + window]: bit p % WINDOW */
	uint64_t reported[URNIC_PDS_SACK_REPORTS][URNIC_PDS_WINDOW / 64]; /* [n]: in n+1 ACKs */
};

void urnic_pds_rx_init(struct urnic_pds_rx *rx, const struct urnic_pds_cfg *cfg);
/* What urnic_pds_rx_packet would say of psn, taking nothing: a packet the layer above
 * refuses for now (its receiver is not ready) is checked first, then not taken. */
enum urnic_pds_rx_verdict urnic_pds_rx_check(const struct urnic_pds_rx *rx, uint32_t psn);
/* A request packet h (its PSN and flags) of bytes, ce when its IP header said CE. */
enum urnic_pds_rx_verdict urnic_pds_rx_packet(struct urnic_pds_rx *rx,
					      const struct urnic_uet_pds *h, uint32_t bytes,
					      bool ce);
/* Whether an ACK should go now (else it may wait for more packets or the end of the
 * receive batch, when unacked is not 0). */
bool urnic_pds_rx_ack_due(const struct urnic_pds_rx *rx);
/* Fills an ACK_CC (NSCC state: rcvd_bytes, ooo_count) from the window and resets what
 * the next ACK counts. spdcid/dpdcid and the SES header are the caller's. */
void urnic_pds_rx_ack(struct urnic_pds_rx *rx, struct urnic_uet_pds *ack);
/* The answer to a CTRL PROBE: an ACK_CC with P, the probe's opaque value and the SACK
 * bitmap from the base the probe asks for. */
void urnic_pds_rx_probe(struct urnic_pds_rx *rx, const struct urnic_uet_pds *probe,
			struct urnic_uet_pds *ack);

#endif
