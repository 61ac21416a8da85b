/* SPDX-License-Identifier: MIT */
/*
 * icrc_gso.h - the ICRC of an IPv4 packet whose IP ID the kernel assigns after urnic built
 * it: the segments of a UDP GSO send (UDP_SEGMENT).
 *
 * The ICRC covers the IPv4 identification (IBTA Annex A17.3.3 masks only TOS, TTL and the
 * header checksum). Linux gives an unconnected DF socket's datagram ID 0, but cuts a GSO
 * send into segments numbered from that ID on (inet_gso_segment: id, id + 1, ...; only
 * TCP has a FIXEDID mode), as NICs doing UDP segmentation offload do. So segment j
 * leaves with ID j, and its ICRC must be the one for ID j. CRC-32 is linear: that ICRC is
 * the ID-0 one XOR a term that depends only on j and the packet's length.
 */
#ifndef URNIC_WIRE_ICRC_GSO_H
#define URNIC_WIRE_ICRC_GSO_H

#include <stddef.h>
#include <stdint.h>

/* The length factor x^(8T + 16) mod P for a packet of covered_udp_payload bytes (the UDP
 * payload before the ICRC) behind a 20-byte IPv4 header; T counts the bytes after the ID. */
uint32_t urnic_icrc_ipv4_id_factor(size_t covered_udp_payload);

/* What to XOR into the ICRC computed for ID 0 to get the ICRC for ip_id, given the
 * packet's factor. 0 for ID 0; applying it twice restores the ID-0 ICRC. */
uint32_t urnic_icrc_ipv4_id_delta(uint32_t factor, uint16_t ip_id);

#endif
