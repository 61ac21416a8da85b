/* SPDX-License-Identifier: MIT */
/*
 * udp_int.h - what the UDP transport's files (udp.c, udp_rx.c, udp_tx.c) share and nobody
 * else uses: not part of udp.h's API.
 */
#ifndef URNIC_TRANSPORT_UDP_INT_H
#define URNIC_TRANSPORT_UDP_INT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

/* ss as ip:port (16 bytes of ip for IPv6, else 4); returns the address's length. Inline:
 * udp_tx.c's build_msgs fills one per message of every send. */
static inline socklen_t urnic_udp_fill_addr(struct sockaddr_storage *ss, bool ipv6,
					    const uint8_t *ip, uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (ipv6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		memcpy(&s6->sin6_addr, ip, 16);
		return sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		memcpy(&s4->sin_addr, ip, 4);
		return sizeof(*s4);
	}
}

#endif
