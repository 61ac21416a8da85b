/* SPDX-License-Identifier: MIT */
/*
 * rccc.h - receiver credits for the Ultra Ethernet transport (UE 1.0 CMS, RCCC), sans
 * I/O: the receiver grants its last hop's capacity, MTU by MTU, paced a little under
 * its line rate and shared round-robin among the senders that want it, so an incast
 * queues at the senders, not at the switch (the pull pacing of EQDS and NDP).
 *
 * A sender says how much it wants in the credit target of its requests' CC state
 * (RUD_CC_REQ's 24 bits): urnic sends the low 24 bits of the bytes it has ever asked
 * for, and the receiver reads them against what it has granted, so a lost or reordered
 * request neither loses nor repeats demand. Grants go back as the credit of an ACK_CC
 * (CREDIT type) or a CTRL CREDIT, also cumulative in 24 bits. A sender has a speculative
 * allowance it sends without waiting (a round trip's worth, so a short message costs
 * no extra round trip) and asks only for what lies beyond it; the rest waits for
 * grants. Time is an argument (ns); amounts are bytes.
 *
 * Out of scope here: carrying the fields (pds.h), the window that also bounds a sender
 * (nscc.h): a sender sends what both allow.
 */
#ifndef URNIC_CC_RCCC_H
#define URNIC_CC_RCCC_H

#include <stdbool.h>
#include <stdint.h>

enum {
	URNIC_RCCC_SENDERS = 64, /* senders one receiver tracks */
	URNIC_RCCC_WIRE_MASK = 0xffffff,
};

struct urnic_rccc_rx_params {
	uint64_t link_bps;	/* the receiver's last hop */
	uint32_t mtu;		/* bytes per grant */
	uint32_t pace_permille; /* grants at this share of link_bps (990: 0.99) */
};

struct urnic_rccc_rx_stats {
	uint64_t grants;
	uint64_t granted_bytes;
	uint64_t demands; /* credit targets read */
	uint64_t stale;	  /* a target older than one read before: ignored */
};

struct urnic_rccc_rx {
	struct urnic_rccc_rx_params p;
	uint64_t asked[URNIC_RCCC_SENDERS];   /* bytes each sender asked for, in all */
	uint64_t granted[URNIC_RCCC_SENDERS]; /* bytes granted to it, in all */
	uint64_t arrived[URNIC_RCCC_SENDERS]; /* bytes that arrived from it, in all */
	uint64_t charged[URNIC_RCCC_SENDERS]; /* of those beyond its grants, paced for */
	uint32_t next;			      /* round-robin: the sender looked at first */
	uint64_t next_grant_ns;
	struct urnic_rccc_rx_stats st;
};

void urnic_rccc_rx_init(struct urnic_rccc_rx *rx, const struct urnic_rccc_rx_params *p,
			uint64_t now);
/* Sender s's request carried credit target wire (24 bits of what it asked for in all). */
void urnic_rccc_rx_demand(struct urnic_rccc_rx *rx, uint32_t s, uint32_t wire);
/* bytes of data arrived from sender s. What no grant covered (its speculative sends)
 * used the last hop as much as granted bytes do: the pacer waits for it too, or a first
 * round trip's burst from many senders would sit in the queue for good. */
void urnic_rccc_rx_arrived(struct urnic_rccc_rx *rx, uint32_t s, uint32_t bytes, uint64_t now);
/* The grant due by now, if any: to *s, its cumulative credit in 24 bits in *wire (what
 * goes on the wire) and the bytes it adds in *bytes. *next_ns: when the next is due (0:
 * no sender wants any). */
bool urnic_rccc_rx_grant(struct urnic_rccc_rx *rx, uint64_t now, uint32_t *s, uint32_t *wire,
			 uint32_t *bytes, uint64_t *next_ns);

struct urnic_rccc_tx {
	uint64_t queued; /* bytes given to send, in all */
	uint64_t spec;	 /* the speculative allowance */
	uint64_t credit; /* bytes granted, in all */
	uint64_t used;	 /* bytes sent, in all */
	uint64_t stale;	 /* grants older than one taken: ignored */
};

void urnic_rccc_tx_init(struct urnic_rccc_tx *tx, uint64_t speculative_bytes);
/* bytes more are queued to send: the credit target to carry next (24 bits). */
uint32_t urnic_rccc_tx_want(struct urnic_rccc_tx *tx, uint64_t bytes);
/* A grant arrived: cumulative credit in 24 bits. */
void urnic_rccc_tx_grant(struct urnic_rccc_tx *tx, uint32_t wire);
/* Whether bytes may go now; and that they went. */
bool urnic_rccc_tx_may_send(const struct urnic_rccc_tx *tx, uint64_t bytes);
void urnic_rccc_tx_sent(struct urnic_rccc_tx *tx, uint64_t bytes);

#endif
