/* SPDX-License-Identifier: MIT */
/*
 * addr.h - where a packet goes and where a received one came from: the peer of a QP
 * (RoCEv2: the GID is the IP address, IBTA Annex A17.4) and what the transport saw of a
 * datagram that the packet's own bytes do not carry (addresses, ports, IP header
 * fields, the time). The transport fills a urnic_rx_meta per packet and passes it to
 * the engine's receive entry point as an argument.
 */
#ifndef URNIC_WIRE_ADDR_H
#define URNIC_WIRE_ADDR_H

#include <stdbool.h>
#include <stdint.h>

/* Where a packet goes: the peer of a connected QP (its address vector) or the address
 * handle of a UD work request. */
struct urnic_peer {
	bool ipv6;
	uint8_t ip[16]; /* IPv4 in the first four bytes */
	/* UDP source port: Linux's rdma_get_udp_sport() folds the flow label into
	 * 0xC000..0xFFFF (IBTA A17.3.1 leaves the choice to the sender). */
	uint16_t sport;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint32_t flow_label;
};

/* urnic's QPNs: owner << 20 | generation << 12 | index (engine.c, urnic_engine_qp_add).
 * The owner is the process's slot among those sharing an address, which the transport
 * steers a received packet by (transport/share.h). */
enum {
	URNIC_QPN_INDEX_BITS = 12,
	URNIC_QPN_OWNER_SHIFT = 20, /* QPN bits 23..20: which process on the address owns it */
	URNIC_QPN_OWNERS = 16,
};

/* The slot of the process that owns a QPN among those sharing its address. */
static inline uint32_t urnic_qpn_owner(uint32_t qpn)
{
	return (qpn >> URNIC_QPN_OWNER_SHIFT) & (URNIC_QPN_OWNERS - 1);
}

/* Linux's default IP TTL / hop limit, which the kernel also gives RoCEv2 address
 * vectors (ib_resolve_eth_dmac takes the route's hop limit, not the caller's). */
#define URNIC_DEFAULT_TTL 64

/*
 * Direct placement between urnic processes of one user on one host
 * (transport/local.h): a READ request that travels through a shared memory lane names
 * where its requester's process wants the data (segments of that process's memory, as
 * its scatter list resolves there), and the responder's process writes it there with
 * one copy instead of sending it in response packets; its one response then says
 * URNIC_DIRECT_PLACED. A WRITE names where its data is, and the responder's process
 * copies it from there (URNIC_DIRECT_WRITE). Never on a wire: a lane carries it beside
 * the packet.
 */
enum {
	URNIC_DIRECT_PLACED = 1, /* a READ's data is in the requester's memory already */
	/* Responder to requester, before PLACED: take the READ's tail from the one segment
	 * named, of the responder's memory, while the responder writes the head. */
	URNIC_DIRECT_PULL = 2,
	URNIC_DIRECT_SPLIT = 4,	    /* with PLACED: only the head; the requester pulled the tail */
	URNIC_DIRECT_PULLED = 8,    /* requester to responder: done with the offer at this PSN */
	URNIC_DIRECT_CAN_PULL = 16, /* with a READ's segments: its requester takes offers */
	/* A WRITE ONLY without payload whose RETH length is in the segments named, of the
	 * requester's memory: the responder copies it from there. */
	URNIC_DIRECT_WRITE = 32,
	URNIC_DIRECT_MAX_SEGS = 32,
	/* A READ this long or longer asks for direct placement: below it the packets,
	 * one copy each way through the lane, cost less than the system call. */
	URNIC_DIRECT_MIN_BYTES = 16384,
	/* A READ this long or longer is split: the copy of its tail runs on the requester's
	 * CPU while the responder's copies the head. */
	URNIC_DIRECT_SPLIT_BYTES = 131072,
};

/* How long deregistering a region waits for a requester's process to say it finished
 * copying from it (dev/verbs_mem.c): far beyond a copy of the longest READ. */
#define URNIC_DIRECT_PULL_WAIT_NS 1000000000ull

struct urnic_direct_seg {
	uint64_t addr; /* in the sending process */
	uint64_t len;
};

struct urnic_direct_note {
	uint32_t pid; /* the process that sent it, as the kernel told (SO_PEERCRED) */
	uint32_t flags;
	uint32_t nseg;
	struct urnic_direct_seg seg[URNIC_DIRECT_MAX_SEGS];
};

/* A received datagram's envelope. src_ip/dst_ip: IPv4 in the first four bytes.
 * ip_id_hint: the IPv4 ID to try first when checking the ICRC (segment k of a GRO
 * super-packet has k, the ID Linux gave segment k of the GSO send, inet_gso_segment;
 * 0 otherwise). tos/ttl: IPv4 TOS or IPv6 traffic class and TTL or hop limit where the
 * socket shows them (0 and URNIC_DEFAULT_TTL where not), for a UD receive's GRH
 * (IBTA 11.4.1.2). now_ns: the time the packet is handled at. */
struct urnic_rx_meta {
	uint8_t src_ip[16];
	uint8_t dst_ip[16];
	uint16_t sport;
	uint16_t ip_id_hint;
	uint8_t tos;
	uint8_t ttl;
	uint64_t now_ns;
	/* What a shared memory lane said beside the packet, or NULL (the socket, and any
	 * record of more than one packet). */
	const struct urnic_direct_note *direct;
};

/* Whether ip (4 bytes for IPv4, else 16) is a multicast address (rdma_is_multicast_addr
 * on the GID it comes from): ff00::/8, 224.0.0.0/4. */
static inline bool urnic_mcast_ip(bool ipv6, const uint8_t *ip)
{
	return ipv6 ? ip[0] == 0xff : (ip[0] & 0xf0) == 0xe0;
}

#endif
