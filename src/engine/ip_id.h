/* SPDX-License-Identifier: MIT */
/*
 * ip_id.h - the IPv4 identifications each source is seen to send, so that an ICRC that
 * is right only for a recovered ID (urnic_icrc_ipv4_id) is believed only when that ID is
 * one the source could have sent.
 *
 * IBTA A17.3.3 covers the IPv4 ID with the ICRC, and a UDP socket does not show it. Two
 * kinds of sender exist: those that send ID 0, or k for segment k of a GSO send (Linux's
 * unconnected DF sockets: urnic), and those that count (Linux rxe: __ip_select_ident per
 * source/destination pair, plus a random step of at most one per jiffy idle). Recovering
 * any ID leaves 16 of the CRC's 32 bits to catch corruption (1 in 65,536 corrupted
 * packets accepted); accepting only a GSO segment number or the next IDs of a counting
 * source leaves 24 to 26 of them.
 * Context: engine only (no locks); the table forgets a source whose slot another takes.
 * Out of scope: IPv6 (no ID), IPv4 fragments (RoCEv2 sets DF).
 */
#ifndef URNIC_ENGINE_IP_ID_H
#define URNIC_ENGINE_IP_ID_H

#include <stdbool.h>
#include <stdint.h>

enum {
	URNIC_IP_ID_SOURCES = 64,      /* slots, direct-mapped by address */
	URNIC_IP_ID_GSO_SEGS = 64,     /* IDs 0..63: segment k of a GSO send (UDP_MAX_SEGMENTS) */
	URNIC_IP_ID_ZERO_LEARNED = 16, /* ID 0/k packets that show a source does not count */
	URNIC_IP_ID_AHEAD = 256,       /* IDs a counting source may skip (losses, other traffic) */
	URNIC_IP_ID_BEHIND = 64,       /* ... or arrive late by (reordering, duplicates) */
};

struct urnic_ip_id_source {
	uint32_t addr;	   /* IPv4 source, network order as received; 0: slot free */
	bool counts;	   /* an ID other than 0/k was accepted: the source counts */
	uint8_t zero_hits; /* packets whose ICRC matched ID 0/k, saturating */
	uint16_t last_id;  /* the highest ID accepted from a counting source */
	uint64_t last_ns;  /* when last_id was accepted */
};

struct urnic_ip_id_table {
	struct urnic_ip_id_source src[URNIC_IP_ID_SOURCES];
};

/* A packet from src matched the ICRC for the transport's hint (ID 0 or k). */
void urnic_ip_id_hint_matched(struct urnic_ip_id_table *t, const uint8_t src[4]);

/* Whether a packet from src, whose ICRC is right for ip_id only, is believed; if so the
 * source's record moves on. */
bool urnic_ip_id_plausible(struct urnic_ip_id_table *t, const uint8_t src[4], uint16_t ip_id,
			   uint64_t now_ns);

#endif
