/* SPDX-License-Identifier: MIT */
/*
 * frame.c - the Ethernet, IPv4 and UDP headers of a captured frame (frame.h), and the
 * Ethernet, IPv4 or IPv6 and UDP headers a capture file writes around a packet.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "wire/byteorder.h"
#include "wire/frame.h"

/* RFC 1071: the one's complement sum of the IPv4 header's 16-bit words, its checksum
 * field (offset 10) among them or not. */
static uint16_t ipv4_hdr_sum(const uint8_t *ip, bool with_csum)
{
	uint32_t sum = 0;

	for (size_t i = 0; i < URNIC_IPV4_HDR; i += 2)
		if (with_csum || i != 10)
			sum += urnic_get_be16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* RFC 791 §3.1: the sum with the checksum included is 0xffff when the header is
 * intact. */
static int ipv4_csum_ok(const uint8_t *ip)
{
	return ipv4_hdr_sum(ip, true) == 0xffff;
}

uint16_t urnic_ipv4_hdr_csum(const uint8_t *ip)
{
	return (uint16_t)~ipv4_hdr_sum(ip, false);
}

int urnic_frame_decode(const uint8_t *frame, size_t len, struct urnic_frame *f)
{
	const uint8_t *ip = frame + URNIC_ETH_HDR, *udp = ip + URNIC_IPV4_HDR;
	uint32_t tot_len, udp_len;

	if (len < URNIC_FRAME_UDP_PAYLOAD || urnic_get_be16(frame + 12) != URNIC_ETH_P_IPV4)
		return -EBADMSG;
	/* Version 4, IHL 5 (no options), protocol 17. */
	if (ip[0] != 0x45 || ip[9] != 17)
		return -EBADMSG;
	/* RFC 791: MF set or a fragment offset: a fragment. */
	if (urnic_get_be16(ip + 6) & 0x3fff)
		return -EBADMSG;
	tot_len = urnic_get_be16(ip + 2);
	if (tot_len < URNIC_IPV4_HDR + URNIC_UDP_HDR || tot_len > len - URNIC_ETH_HDR)
		return -EBADMSG;
	if (!ipv4_csum_ok(ip))
		return -EBADMSG;
	/* RFC 768: the UDP length covers its header and the payload, within the IP one. */
	udp_len = urnic_get_be16(udp + 4);
	if (udp_len != tot_len - URNIC_IPV4_HDR)
		return -EBADMSG;
	memcpy(f->src, ip + 12, 4);
	memcpy(f->dst, ip + 16, 4);
	f->tos = ip[1];
	f->ttl = ip[8];
	f->ip_id = urnic_get_be16(ip + 4);
	f->sport = urnic_get_be16(udp);
	f->dport = urnic_get_be16(udp + 2);
	f->payload_off = URNIC_FRAME_UDP_PAYLOAD;
	f->payload_len = udp_len - URNIC_UDP_HDR;
	return 0;
}

/* RFC 1071: adds the 16-bit big-endian words of p (a last odd byte padded with zero) to
 * sum, folded later. */
static uint32_t sum16(uint32_t sum, const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += urnic_get_be16(p + i);
	if (i < len)
		sum += (uint32_t)p[i] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

/* RFC 768 (IPv4) and RFC 8200 §8.1 (IPv6): the UDP checksum over the pseudo-header
 * (addresses, protocol 17, UDP length), the UDP header with a zero checksum field and
 * the payload; a sum of zero is sent as 0xffff (zero means "none" for IPv4). */
static uint16_t udp_csum(const struct urnic_frame_env *e, const uint8_t *udp,
			 const uint8_t *payload, uint32_t len)
{
	size_t alen = e->ipv6 ? 16 : 4;
	uint32_t ulen = URNIC_UDP_HDR + len, sum = 0;
	uint16_t c;

	sum = sum16(sum, e->src, alen);
	sum = sum16(sum, e->dst, alen);
	sum += 17 + (ulen >> 16) + (ulen & 0xffff);
	sum = sum16(sum, udp, 6); /* ports and length; the checksum field counts as zero */
	sum = sum16(sum, payload, len);
	c = (uint16_t)~sum;
	return c ? c : 0xffff;
}

int urnic_frame_encode(const struct urnic_frame_env *e, const uint8_t *payload, uint32_t len,
		       uint8_t *hdr)
{
	uint32_t ip_bytes = e->ipv6 ? URNIC_IPV6_HDR : URNIC_IPV4_HDR;
	uint8_t *ip = hdr + URNIC_ETH_HDR, *udp = ip + ip_bytes;

	if (len > URNIC_FRAME_MAX_PAYLOAD)
		return -EMSGSIZE;
	memcpy(hdr, e->dst_mac, 6);
	memcpy(hdr + 6, e->src_mac, 6);
	urnic_put_be16(hdr + 12, e->ipv6 ? URNIC_ETH_P_IPV6 : URNIC_ETH_P_IPV4);
	memset(ip, 0, ip_bytes);
	if (e->ipv6) {
		/* Version 6, the traffic class, flow label 0, the payload length. */
		urnic_put_be32(ip, 6u << 28 | (uint32_t)e->tos << 20);
		urnic_put_be16(ip + 4, (uint16_t)(URNIC_UDP_HDR + len));
		ip[6] = 17;
		ip[7] = e->ttl;
		memcpy(ip + 8, e->src, 16);
		memcpy(ip + 24, e->dst, 16);
	} else {
		ip[0] = 0x45;
		ip[1] = e->tos;
		urnic_put_be16(ip + 2, (uint16_t)(URNIC_IPV4_HDR + URNIC_UDP_HDR + len));
		urnic_put_be16(ip + 4, e->ip_id);
		urnic_put_be16(ip + 6, 0x4000); /* DF: RoCEv2 is never fragmented (A17.4) */
		ip[8] = e->ttl;
		ip[9] = 17;
		memcpy(ip + 12, e->src, 4);
		memcpy(ip + 16, e->dst, 4);
		urnic_put_be16(ip + 10, urnic_ipv4_hdr_csum(ip));
	}
	urnic_put_be16(udp, e->sport);
	urnic_put_be16(udp + 2, e->dport);
	urnic_put_be16(udp + 4, (uint16_t)(URNIC_UDP_HDR + len));
	urnic_put_be16(udp + 6, 0);
	urnic_put_be16(udp + 6, udp_csum(e, udp, payload, len));
	return (int)(URNIC_ETH_HDR + ip_bytes + URNIC_UDP_HDR);
}

void urnic_frame_mac(bool ipv6, const uint8_t *ip, uint8_t mac[6])
{
	if (ipv6 && ip[0] == 0xff) {
		mac[0] = mac[1] = 0x33;
		memcpy(mac + 2, ip + 12, 4);
	} else if (!ipv6 && (ip[0] & 0xf0) == 0xe0) {
		mac[0] = 0x01;
		mac[1] = 0x00;
		mac[2] = 0x5e;
		mac[3] = ip[1] & 0x7f;
		mac[4] = ip[2];
		mac[5] = ip[3];
	} else if (ipv6) {
		mac[0] = 0x02;
		memcpy(mac + 1, ip + 11, 5);
	} else {
		mac[0] = 0x02;
		mac[1] = 0x75; /* 'u': urnic */
		memcpy(mac + 2, ip, 4);
	}
}
