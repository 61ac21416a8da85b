/* SPDX-License-Identifier: MIT */
/*
 * txbatch.c - lays packets out in a send batch and computes their ICRC (IBTA Annex
 * A17.3.3) as the payload is copied.
 */
#include "wire/txbatch.h"

#include <errno.h>
#include <string.h>

#include "wire/byteorder.h"
#include "wire/crc_copy.h"

struct urnic_txpkt *urnic_txbatch_next(struct urnic_txbatch *b, const struct urnic_peer *dst)
{
	struct urnic_txpkt *p = &b->pkts[b->n];

	p->wire = b->n ? b->pkts[b->n - 1].wire + urnic_txpkt_bytes(&b->pkts[b->n - 1]) : b->wire;
	p->dst = *dst;
	p->hdr_bytes = 0;
	p->payload_bytes = 0;
	p->nfrags = 0;
	p->trailer_bytes = 0;
	p->direct_flags = 0;
	p->direct_nseg = 0;
	return p;
}

/*
 * The payload is copied from its fragments by urnic_crc32_copy, which folds each block
 * into the CRC as it stores it, so the payload is read once rather than twice (once
 * for the ICRC, once for the copy). The bytes are those a socket sends; IPv4 ID 0, what
 * Linux sends from an unconnected DF socket (the transport adjusts the ICRC of GSO
 * segments, which get IDs 0, 1, 2, ...).
 */
int urnic_txbatch_commit(struct urnic_txbatch *b, struct urnic_txpkt *p, bool ipv6,
			 const uint8_t *src_ip)
{
	static const uint8_t zeros[3];
	struct urnic_icrc_flow flow = { 0 };
	uint32_t pad = (4 - (p->payload_bytes & 3)) & 3;
	uint32_t total = p->hdr_bytes + p->payload_bytes + pad;
	uint8_t *d = p->wire;
	uint32_t c;

	/* The batch's wire buffer holds a batch of the largest packets: nothing larger is
	 * built (the path MTU is at most URNIC_TX_PAYLOAD_MAX), and a bug that did is
	 * refused here. */
	if (p->payload_bytes > URNIC_TX_PAYLOAD_MAX || p->hdr_bytes > URNIC_TX_HDR_MAX)
		return -EMSGSIZE;
	flow.ipv6 = ipv6;
	memcpy(flow.src, src_ip, 16);
	memcpy(flow.dst, p->dst.ip, 16);
	flow.sport = p->dst.sport;
	flow.dport = URNIC_ROCE_UDP_PORT;
	memcpy(d, p->hdr, p->hdr_bytes);
	c = urnic_icrc_flow(&flow, &(struct urnic_frag){ d, p->hdr_bytes }, 1, total);
	d += p->hdr_bytes;
	for (uint32_t i = 0; i < p->nfrags; i++) {
		c = urnic_crc32_copy(c, d, p->frags[i].base, p->frags[i].len);
		d += p->frags[i].len;
	}
	c = urnic_crc32_copy(c, d, zeros, pad);
	d += pad;
	urnic_put_le32(d, c);
	p->trailer_bytes = pad + URNIC_ICRC_BYTES;
	b->n++;
	return 0;
}

int urnic_txbatch_commit_plain(struct urnic_txbatch *b, struct urnic_txpkt *p)
{
	uint8_t *d = p->wire;

	if (p->payload_bytes > URNIC_TX_PAYLOAD_MAX || p->hdr_bytes > URNIC_TX_HDR_MAX)
		return -EMSGSIZE;
	memcpy(d, p->hdr, p->hdr_bytes);
	d += p->hdr_bytes;
	for (uint32_t i = 0; i < p->nfrags; i++) {
		memcpy(d, p->frags[i].base, p->frags[i].len);
		d += p->frags[i].len;
	}
	p->trailer_bytes = 0;
	b->n++;
	return 0;
}
