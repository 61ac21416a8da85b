/* SPDX-License-Identifier: MIT */
/*
 * txbatch.h - a batch of RoCEv2 packets to send, laid out back to back as they go on
 * the wire (UDP payloads: headers, payload, pad, ICRC). The engine builds the packets
 * and the transport sends the bytes: a run of packets to one peer is one buffer, which
 * is what a GSO send takes. Pure code; the ICRC is IBTA Annex A17.3.3.
 */
#ifndef URNIC_WIRE_TXBATCH_H
#define URNIC_WIRE_TXBATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/addr.h"
#include "wire/pkt.h"

enum {
	URNIC_TX_HDR_MAX = 64,
	URNIC_TX_PAYLOAD_MAX = 4096, /* the largest path MTU (IBV_MTU_4096) */
	URNIC_TX_BATCH = 64,
	URNIC_TX_FRAGS = 32, /* payload fragments per packet: a WQE's SGEs at most */
};

/* One packet to send. The protocol fills in the destination, the headers and the
 * payload fragments (pointing into registered memory or WQE inline data);
 * urnic_txbatch_commit lays it out at `wire` as it goes on the wire, right behind the
 * batch's previous packet. */
struct urnic_txpkt {
	struct urnic_peer dst;
	uint32_t hdr_bytes;
	uint32_t payload_bytes;
	uint32_t nfrags;
	uint32_t trailer_bytes; /* pad + ICRC */
	uint8_t *wire;
	uint8_t hdr[URNIC_TX_HDR_MAX];
	struct urnic_frag frags[URNIC_TX_FRAGS];
	/* For a shared memory lane only (addr.h, direct placement): URNIC_DIRECT_* and the
	 * segments of this process's memory a READ request asks to be written. */
	uint8_t direct_flags;
	uint8_t direct_nseg;
	struct urnic_direct_seg direct_seg[URNIC_DIRECT_MAX_SEGS];
};

/* The bytes packet p takes on the wire (its UDP payload). */
static inline uint32_t urnic_txpkt_bytes(const struct urnic_txpkt *p)
{
	return p->hdr_bytes + p->payload_bytes + p->trailer_bytes;
}

/* The most a packet takes: headers, payload, pad, ICRC. */
#define URNIC_TX_PKT_MAX (URNIC_TX_HDR_MAX + URNIC_TX_PAYLOAD_MAX + 8)

/* The packets of one batch and their bytes, in the order they were committed. */
struct urnic_txbatch {
	struct urnic_txpkt pkts[URNIC_TX_BATCH];
	uint32_t n; /* packets committed */
	_Alignas(64) uint8_t wire[URNIC_TX_BATCH * URNIC_TX_PKT_MAX];
};

static inline bool urnic_txbatch_full(const struct urnic_txbatch *b)
{
	return b->n == URNIC_TX_BATCH;
}

/* The next packet slot, its wire position set and its fields cleared, addressed to dst.
 * Context: the batch must not be full. */
struct urnic_txpkt *urnic_txbatch_next(struct urnic_txbatch *b, const struct urnic_peer *dst);

/* Lays the packet from urnic_txbatch_next out at its wire position, copying the payload
 * from its fragments while the ICRC is computed over it, and adds it to the batch.
 * src_ip/ipv6: the sender's address, for the ICRC's pseudo-header. Returns 0, or
 * -EMSGSIZE for a packet larger than the batch has room for (a bug: not added). */
int urnic_txbatch_commit(struct urnic_txbatch *b, struct urnic_txpkt *p, bool ipv6,
			 const uint8_t *src_ip);

/* The same for a packet with no ICRC and no pad (a UET datagram: PDS, SES, payload). */
int urnic_txbatch_commit_plain(struct urnic_txbatch *b, struct urnic_txpkt *p);

#endif
