/* SPDX-License-Identifier: MIT */
/*
 * pcap.h - a tiny classic-pcap reader for the golden captures (tests only).
 *
 * Reads libpcap files (microsecond or nanosecond, either byte order) and pcapng files
 * (enhanced packet blocks, with their comment and flags: what URNIC_PCAP writes) with
 * the Ethernet link type, skips 802.1Q/802.1ad tags and finds UDP over IPv4 (any IHL)
 * or IPv6 (no extension headers), trimmed to the IP and UDP length fields so Ethernet
 * padding is never mistaken for payload. Out of scope: fragments, other link types,
 * pcapng's simple and obsolete packet blocks.
 */
#ifndef URNIC_TESTS_WIRE_PCAP_H
#define URNIC_TESTS_WIRE_PCAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct wire_pcap {
	uint8_t *data; /* the whole file, owned; freed by wire_pcap_close() */
	size_t len;
	size_t off;
	bool swap;	   /* file (pcapng: section) written in big-endian order */
	bool ng;	   /* pcapng */
	unsigned frame_no; /* 1-based number of the frame last returned, as tshark counts */
};

struct wire_frame {
	unsigned frame_no;
	const uint8_t *data; /* points into struct wire_pcap: valid until close */
	size_t len;
	/* pcapng only (else 0, NULL): the interface, epb_flags, and opt_comment (not
	 * NUL-terminated), pointing into struct wire_pcap. */
	uint32_t ifid;
	uint32_t flags;
	const char *comment;
	size_t comment_len;
};

/* A UDP datagram found in a frame; every pointer points into the frame. */
struct wire_udp {
	bool ipv6;
	const uint8_t *ip;
	size_t ip_bytes;    /* IPv4: IHL * 4; IPv6: 40 */
	const uint8_t *udp; /* 8-byte UDP header */
	uint16_t sport;
	uint16_t dport;
	const uint8_t *payload; /* UDP payload, per the UDP length field */
	size_t payload_bytes;
};

/* 0 or -errno (-EINVAL: not classic pcap or pcapng, or not Ethernet). */
int wire_pcap_open(struct wire_pcap *pc, const char *path);
/* 1 and *fr set, 0 at the end, -EBADMSG on a truncated record (or a pcapng interface
 * that is not Ethernet). */
int wire_pcap_next(struct wire_pcap *pc, struct wire_frame *fr);
void wire_pcap_close(struct wire_pcap *pc);

/* true when the frame holds an unfragmented UDP datagram over IPv4 or IPv6. */
bool wire_frame_udp(const struct wire_frame *fr, struct wire_udp *u);

#endif
