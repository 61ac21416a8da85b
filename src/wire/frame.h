/* SPDX-License-Identifier: MIT */
/*
 * frame.h - an Ethernet frame carrying an IPv4 UDP datagram, as a packet ring hands it
 * over (transport/ring.h): the headers the kernel checks before a UDP socket sees a
 * datagram, checked here because the ring sees the frame before the kernel's IP and UDP
 * layers do (RFC 791 §3.1, RFC 768). Only what RoCEv2 sends is accepted: no IP options,
 * no fragments (IBTA A17.4: RoCEv2 packets are never fragmented). The UDP checksum is
 * not checked: the ICRC covers the payload (IBTA A17.3.3), as rxe relies on too.
 */
#ifndef URNIC_WIRE_FRAME_H
#define URNIC_WIRE_FRAME_H

#include <stddef.h>
#include <stdint.h>

enum {
	URNIC_ETH_HDR = 14,
	URNIC_ETH_P_IPV4 = 0x0800,
	URNIC_IPV4_HDR = 20, /* without options: all a RoCEv2 sender emits */
	URNIC_UDP_HDR = 8,
	URNIC_FRAME_UDP_PAYLOAD = URNIC_ETH_HDR + URNIC_IPV4_HDR + URNIC_UDP_HDR,
};

/* What the headers say, in host order; the payload is frame[payload_off ..). */
struct urnic_frame {
	uint8_t src[4], dst[4];
	uint16_t sport, dport;
	uint16_t ip_id;
	uint8_t tos, ttl;
	uint32_t payload_off, payload_len;
};

/* Decodes the len captured bytes of a frame. Returns 0, or -EBADMSG: not IPv4 UDP, IP
 * options, a fragment, a bad header checksum, or lengths that disagree with each other
 * or run past the captured bytes (trailing bytes past the IP length, Ethernet's
 * padding, are allowed). */
int urnic_frame_decode(const uint8_t *frame, size_t len, struct urnic_frame *f);

/* The checksum a sender writes at ip + 10 for the 20-byte IPv4 header at ip, its own
 * checksum field taken as zero (RFC 791 §3.1, RFC 1071), in host order. */
uint16_t urnic_ipv4_hdr_csum(const uint8_t *ip);

#endif
