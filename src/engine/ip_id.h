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
 *
 * Checking a packet changes nothing (urnic_ip_id_plausible); what it showed is learned
 * (urnic_ip_id_learn) only once a QP has accepted the packet as its peer's, so that
 * packets anyone can forge (another source, a spoofed one to a QP that does not exist
 * or with a PSN its QP would not take) cannot teach the table that a source's real IDs
 * are corruption (docs/security.md: nothing a peer sends changes state shared with
 * other peers before it has passed its QP's checks). Entries are found by address
 * in the whole table: only a source that has had packets accepted takes one, and it
 * takes the one least recently learned from.
 * Context: engine only (no locks). Out of scope: IPv6 (no ID), IPv4 fragments (RoCEv2
 * sets DF).
 */
#ifndef URNIC_ENGINE_IP_ID_H
#define URNIC_ENGINE_IP_ID_H

#include <stdbool.h>
#include <stdint.h>

enum {
	URNIC_IP_ID_SOURCES = 64,      /* entries, any address in any of them */
	URNIC_IP_ID_GSO_SEGS = 64,     /* IDs 0..63: segment k of a GSO send (UDP_MAX_SEGMENTS) */
	URNIC_IP_ID_ZERO_LEARNED = 16, /* ID 0/k packets that show a source does not count */
	URNIC_IP_ID_AHEAD = 256,       /* IDs a counting source may skip (losses, other traffic) */
	URNIC_IP_ID_BEHIND = 64,       /* ... or arrive late by (reordering, duplicates) */
};

struct urnic_ip_id_source {
	uint32_t addr;	   /* IPv4 source, network order as received */
	bool used;	   /* the entry holds a source */
	bool counts;	   /* an ID other than 0/k was accepted: the source counts */
	uint8_t zero_hits; /* packets whose ICRC matched ID 0/k, saturating */
	uint16_t last_id;  /* the highest ID accepted from a counting source */
	uint32_t learned;  /* the table's learn count when this entry last learned */
	uint64_t last_ns;  /* when last_id was accepted */
};

struct urnic_ip_id_table {
	struct urnic_ip_id_source src[URNIC_IP_ID_SOURCES];
	uint32_t learned; /* urnic_ip_id_learn calls, the entries' recency */
	uint32_t recent;  /* the entry last learned into, looked at first */
};

/* What one packet's ICRC showed about its IPv4 ID, kept until its QP has accepted it. */
enum urnic_ip_id_seen_kind {
	URNIC_IP_ID_SEEN_NONE,	    /* nothing to learn (IPv6, no check, learned already) */
	URNIC_IP_ID_SEEN_HINT,	    /* the ICRC matched the transport's hint, ID 0 or k */
	URNIC_IP_ID_SEEN_RECOVERED, /* the ICRC matched `id` only, and it was plausible */
};

struct urnic_ip_id_seen {
	uint8_t kind; /* enum urnic_ip_id_seen_kind */
	uint16_t id;
};

/* Whether a packet from src, whose ICRC is right for ip_id only, is believed. Changes
 * nothing. */
bool urnic_ip_id_plausible(const struct urnic_ip_id_table *t, const uint8_t src[4], uint16_t ip_id,
			   uint64_t now_ns);

/* A packet from src that a QP accepted as its peer's showed `seen`: the source's record
 * moves on (taking the least recently learned entry if src has none). */
void urnic_ip_id_learn(struct urnic_ip_id_table *t, const uint8_t src[4],
		       const struct urnic_ip_id_seen *seen, uint64_t now_ns);

#endif
