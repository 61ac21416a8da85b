/* SPDX-License-Identifier: MIT */
/*
 * ip_id.c - which IPv4 IDs a source could have sent (ip_id.h has the why).
 *
 * A source is first taken to send ID 0/k. The first recovered ID of 64 or more from a
 * source not yet seen sending URNIC_IP_ID_ZERO_LEARNED packets with ID 0/k makes it a
 * counting source (rxe's first packet is believed); after that only IDs a little ahead
 * of the last one are, the window growing by one per millisecond idle (Linux's random
 * step: at most one per jiffy, HZ <= 1000). From a source that sends ID 0/k, only
 * segment numbers are: a recovered ID past them is corruption.
 */
#include <string.h>

#include "engine/ip_id.h"

#define NS_PER_MS 1000000u

static struct urnic_ip_id_source *slot(struct urnic_ip_id_table *t, const uint8_t src[4])
{
	struct urnic_ip_id_source *s;
	uint32_t addr;

	memcpy(&addr, src, 4);
	/* Fibonacci hashing: the top 6 bits of addr * 2^32/phi. */
	s = &t->src[(uint32_t)(addr * 2654435769u) >> 26];
	if (s->addr != addr) {
		memset(s, 0, sizeof(*s));
		s->addr = addr;
	}
	return s;
}

_Static_assert(URNIC_IP_ID_SOURCES == 1 << (32 - 26), "slot() takes the top 6 bits");

void urnic_ip_id_hint_matched(struct urnic_ip_id_table *t, const uint8_t src[4])
{
	struct urnic_ip_id_source *s = slot(t, src);

	if (s->zero_hits < URNIC_IP_ID_ZERO_LEARNED)
		s->zero_hits++;
}

/* How far ahead of the last ID a counting source's next may be. */
static uint64_t ahead_max(const struct urnic_ip_id_source *s, uint64_t now_ns)
{
	return URNIC_IP_ID_AHEAD + (now_ns > s->last_ns ? (now_ns - s->last_ns) / NS_PER_MS : 0);
}

bool urnic_ip_id_plausible(struct urnic_ip_id_table *t, const uint8_t src[4], uint16_t ip_id,
			   uint64_t now_ns)
{
	struct urnic_ip_id_source *s = slot(t, src);

	if (s->counts) {
		uint16_t ahead = (uint16_t)(ip_id - s->last_id);

		if (ahead && ahead <= ahead_max(s, now_ns)) {
			s->last_id = ip_id;
			s->last_ns = now_ns;
			return true;
		}
		return (uint16_t)(s->last_id - ip_id) <= URNIC_IP_ID_BEHIND;
	}
	if (ip_id < URNIC_IP_ID_GSO_SEGS)
		return true; /* segment k of a GSO send the receiver's GRO cut differently */
	if (s->zero_hits >= URNIC_IP_ID_ZERO_LEARNED)
		return false;
	s->counts = true;
	s->last_id = ip_id;
	s->last_ns = now_ns;
	return true;
}
