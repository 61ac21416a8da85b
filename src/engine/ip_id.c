/* SPDX-License-Identifier: MIT */
/*
 * ip_id.c - which IPv4 IDs a source could have sent (ip_id.h has the why).
 *
 * A source is first taken to send ID 0/k. The first recovered ID of 64 or more from a
 * source not yet seen sending URNIC_IP_ID_ZERO_LEARNED packets with ID 0/k makes it a
 * counting source (rxe's first packet is believed); after that only IDs a little ahead
 * of the last one are, the window growing by one per millisecond idle (Linux's random
 * step: at most one per jiffy, HZ <= 1000). From a source that sends ID 0/k, only
 * segment numbers are: a recovered ID past them is corruption. Only accepted packets
 * are learned from (ip_id.h), and a source without an entry is one not learned yet.
 */
#include <string.h>

#include "engine/ip_id.h"

#define NS_PER_MS 1000000u

static const struct urnic_ip_id_source *find(const struct urnic_ip_id_table *t,
					     const uint8_t src[4])
{
	uint32_t addr;

	memcpy(&addr, src, 4);
	/* Most packets come from the source last learned from. */
	if (t->src[t->recent].used && t->src[t->recent].addr == addr)
		return &t->src[t->recent];
	for (uint32_t i = 0; i < URNIC_IP_ID_SOURCES; i++)
		if (t->src[i].used && t->src[i].addr == addr)
			return &t->src[i];
	return NULL;
}

/* src's entry, or a new one in place of a free entry or the least recently learned:
 * only a source whose packets were accepted can take one, so a forger cannot make the
 * table forget a peer. */
static struct urnic_ip_id_source *take(struct urnic_ip_id_table *t, const uint8_t src[4])
{
	const struct urnic_ip_id_source *found = find(t, src);
	struct urnic_ip_id_source *s;
	uint32_t victim = 0;

	if (found)
		return &t->src[found - t->src];
	for (uint32_t i = 0; i < URNIC_IP_ID_SOURCES; i++) {
		if (!t->src[i].used) {
			victim = i;
			break;
		}
		if (t->learned - t->src[i].learned > t->learned - t->src[victim].learned)
			victim = i;
	}
	s = &t->src[victim];
	memset(s, 0, sizeof(*s));
	memcpy(&s->addr, src, 4);
	s->used = true;
	return s;
}

/* How far ahead of the last ID a counting source's next may be. */
static uint64_t ahead_max(const struct urnic_ip_id_source *s, uint64_t now_ns)
{
	return URNIC_IP_ID_AHEAD + (now_ns > s->last_ns ? (now_ns - s->last_ns) / NS_PER_MS : 0);
}

static bool just_ahead(const struct urnic_ip_id_source *s, uint16_t ip_id, uint64_t now_ns)
{
	uint16_t ahead = (uint16_t)(ip_id - s->last_id);

	return ahead && ahead <= ahead_max(s, now_ns);
}

bool urnic_ip_id_plausible(const struct urnic_ip_id_table *t, const uint8_t src[4], uint16_t ip_id,
			   uint64_t now_ns)
{
	const struct urnic_ip_id_source *s = find(t, src);

	if (s && s->counts)
		return just_ahead(s, ip_id, now_ns) ||
		       (uint16_t)(s->last_id - ip_id) <= URNIC_IP_ID_BEHIND;
	if (ip_id < URNIC_IP_ID_GSO_SEGS)
		return true; /* segment k of a GSO send the receiver's GRO cut differently */
	return !s || s->zero_hits < URNIC_IP_ID_ZERO_LEARNED;
}

void urnic_ip_id_learn(struct urnic_ip_id_table *t, const uint8_t src[4],
		       const struct urnic_ip_id_seen *seen, uint64_t now_ns)
{
	struct urnic_ip_id_source *s;

	if (seen->kind == URNIC_IP_ID_SEEN_NONE)
		return;
	s = take(t, src);
	s->learned = ++t->learned;
	t->recent = (uint32_t)(s - t->src);
	if (seen->kind == URNIC_IP_ID_SEEN_HINT) {
		if (s->zero_hits < URNIC_IP_ID_ZERO_LEARNED)
			s->zero_hits++;
		return;
	}
	if (s->counts) {
		if (just_ahead(s, seen->id, now_ns)) {
			s->last_id = seen->id;
			s->last_ns = now_ns;
		}
		return;
	}
	if (seen->id < URNIC_IP_ID_GSO_SEGS || s->zero_hits >= URNIC_IP_ID_ZERO_LEARNED)
		return;
	s->counts = true;
	s->last_id = seen->id;
	s->last_ns = now_ns;
}
