/* SPDX-License-Identifier: MIT */
/*
 * frame.c - the Ethernet, IPv4 and UDP headers of a captured frame (frame.h).
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
