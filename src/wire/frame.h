/* SPDX-License-Identifier: MIT */
/*
 * frame.h - an Ethernet frame carrying an IPv4 UDP datagram, as a packet ring hands it
 * over (transport/ring.h): the headers the kernel checks before a UDP socket sees a
 * datagram, checked here because the ring sees the frame before the kernel's IP and UDP
 * layers do (RFC 791 §3.1, RFC 768). Only what RoCEv2 sends is accepted: no IP options,
 * no fragments (IBTA A17.4: RoCEv2 packets are never fragmented). The UDP checksum is
 * not checked: the ICRC covers the payload (IBTA A17.3.3), as rxe relies on too.
 * The other way, the headers a capture writes around a RoCEv2 packet (transport/pcap.h):
 * IPv4 or IPv6, as Linux sends a datagram from a DF socket, with both checksums.
 */
#ifndef URNIC_WIRE_FRAME_H
#define URNIC_WIRE_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	URNIC_ETH_HDR = 14,
	URNIC_ETH_P_IPV4 = 0x0800,
	URNIC_ETH_P_IPV6 = 0x86dd,
	URNIC_IPV4_HDR = 20, /* without options: all a RoCEv2 sender emits */
	URNIC_IPV6_HDR = 40, /* without extension headers, likewise */
	URNIC_UDP_HDR = 8,
	URNIC_FRAME_UDP_PAYLOAD = URNIC_ETH_HDR + URNIC_IPV4_HDR + URNIC_UDP_HDR,
	URNIC_FRAME_HDR_MAX = URNIC_ETH_HDR + URNIC_IPV6_HDR + URNIC_UDP_HDR,
	/* The most UDP payload one IPv4 datagram carries (its total length is 16 bits). */
	URNIC_FRAME_MAX_PAYLOAD = 65535 - URNIC_IPV4_HDR - URNIC_UDP_HDR,
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

/* A datagram's envelope, for urnic_frame_encode. Addresses: 4 bytes (IPv4) or 16. */
struct urnic_frame_env {
	bool ipv6;
	uint8_t src_mac[6], dst_mac[6];
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	uint16_t ip_id; /* IPv4 only */
	uint8_t tos;	/* IPv4 TOS, IPv6 traffic class */
	uint8_t ttl;	/* TTL, hop limit */
};

/* Writes into hdr (URNIC_FRAME_HDR_MAX bytes of room) the Ethernet, IP and UDP headers
 * of a datagram carrying the len bytes at payload: IPv4 with DF and no options (RFC 791
 * §3.1) or IPv6 with flow label 0 and no extension headers (RFC 8200 §3), and the UDP
 * checksum over the pseudo-header and the payload (RFC 768; RFC 8200 §8.1). Returns the
 * header bytes, or -EMSGSIZE when len exceeds URNIC_FRAME_MAX_PAYLOAD. */
int urnic_frame_encode(const struct urnic_frame_env *e, const uint8_t *payload, uint32_t len,
		       uint8_t *hdr);

/* The MAC address a capture gives ip (4 or 16 bytes): a group's, mapped as RFC 1112 §6.4
 * and RFC 2464 §7 say; a unicast address's, made up from the address as the device's
 * GUID is (config.c): 02:75 and the IPv4 address, or 02 and the last five bytes of the
 * IPv6 one (locally administered, RFC 7042 §2.1). */
void urnic_frame_mac(bool ipv6, const uint8_t *ip, uint8_t mac[6]);

#endif
