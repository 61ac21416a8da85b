/* SPDX-License-Identifier: MIT */
/*
 * test_ip_id.c - which recovered IPv4 IDs a receiver believes (src/engine/ip_id.c).
 *
 * A source that sends ID 0/k (urnic: unconnected DF sockets, GSO segment numbers) is
 * believed for segment numbers only once it has been seen doing so, so a corrupted
 * packet whose ICRC happens to match some other ID is refused; a counting source (rxe)
 * is believed for its first ID and then for IDs a little ahead of its last one, the
 * window growing with idle time as Linux's random step does. Against random IDs (what
 * corruption looks like) each kind believes only the fraction the window allows.
 */
#include <string.h>

#include "check.h"
#include "engine/ip_id.h"

#define MS 1000000ull

static const uint8_t URNIC_PEER[4] = {127, 0, 3, 2};
static const uint8_t RXE_PEER[4] = {10, 0, 2, 15};

/* xorshift32: corruption's recovered IDs are uniformly random. */
static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void zero_id_source_believed_for_segment_numbers_only(void)
{
	struct urnic_ip_id_table t;
	uint32_t seed = 1, believed = 0;

	memset(&t, 0, sizeof(t));
	for (int i = 0; i < URNIC_IP_ID_ZERO_LEARNED; i++)
		urnic_ip_id_hint_matched(&t, URNIC_PEER);
	CHECK(!urnic_ip_id_plausible(&t, URNIC_PEER, 0x2bcd, 0));
	CHECK(urnic_ip_id_plausible(&t, URNIC_PEER, 5, 0)); /* GRO cut a GSO send elsewhere */
	CHECK(urnic_ip_id_plausible(&t, URNIC_PEER, URNIC_IP_ID_GSO_SEGS - 1, 0));
	CHECK(!urnic_ip_id_plausible(&t, URNIC_PEER, URNIC_IP_ID_GSO_SEGS, 0));
	for (int i = 0; i < 1 << 20; i++)
		believed += urnic_ip_id_plausible(&t, URNIC_PEER, (uint16_t)rnd(&seed), 0);
	/* 64 of 65,536 IDs: about 1,024 of 2^20. */
	CHECK(believed > 800 && believed < 1300);
}

static void counting_source_believed_just_ahead(void)
{
	struct urnic_ip_id_table t;
	uint64_t now = 5000 * MS;

	memset(&t, 0, sizeof(t));
	/* rxe's first packet: any ID. */
	CHECK(urnic_ip_id_plausible(&t, RXE_PEER, 0xfff0, now));
	CHECK(urnic_ip_id_plausible(&t, RXE_PEER, 0xfff1, now));
	CHECK(urnic_ip_id_plausible(&t, RXE_PEER, 0x0003, now)); /* wraps, two lost */
	CHECK(urnic_ip_id_plausible(&t, RXE_PEER, 0xfff5, now)); /* late, behind */
	CHECK(urnic_ip_id_plausible(&t, RXE_PEER, 0x0003 + URNIC_IP_ID_AHEAD, now));
	CHECK(!urnic_ip_id_plausible(&t, RXE_PEER, 0x0004 + 2 * URNIC_IP_ID_AHEAD, now));
	CHECK(!urnic_ip_id_plausible(&t, RXE_PEER, 0x8000, now));
	/* A second idle: Linux steps the ID by up to one per jiffy. */
	now += 1000 * MS;
	CHECK(urnic_ip_id_plausible(&t, RXE_PEER, 0x0003 + URNIC_IP_ID_AHEAD + 1000, now));
	CHECK(!urnic_ip_id_plausible(
	    &t, RXE_PEER, 0x0003 + URNIC_IP_ID_AHEAD + 1000 + URNIC_IP_ID_AHEAD + 10, now));
	/* An ID far behind is not a late packet. */
	CHECK(!urnic_ip_id_plausible(&t, RXE_PEER, 0x0003, now));
}

static void counting_source_refuses_random_ids(void)
{
	struct urnic_ip_id_table t, corrupt;
	uint32_t seed = 7, believed = 0;
	uint16_t id = 100;

	memset(&t, 0, sizeof(t));
	CHECK(urnic_ip_id_plausible(&t, RXE_PEER, id, 0));
	for (int i = 0; i < 1 << 20; i++) {
		corrupt = t;
		believed += urnic_ip_id_plausible(&corrupt, RXE_PEER, (uint16_t)rnd(&seed), 0);
		CHECK(urnic_ip_id_plausible(&t, RXE_PEER, ++id, 0)); /* the real packets */
	}
	/* 256 ahead + 65 behind of 65,536 IDs: about 5,140 of 2^20. */
	CHECK(believed > 4000 && believed < 6500);
}

static void first_recovered_id_believed_until_zero_ids_learned(void)
{
	struct urnic_ip_id_table t;

	memset(&t, 0, sizeof(t));
	for (int i = 0; i < URNIC_IP_ID_ZERO_LEARNED - 1; i++)
		urnic_ip_id_hint_matched(&t, RXE_PEER);
	/* rxe's ID happened to equal the hint a few times: still believed. */
	CHECK(urnic_ip_id_plausible(&t, RXE_PEER, 0x2bcd, 0));
	CHECK(urnic_ip_id_plausible(&t, RXE_PEER, 0x2bce, 0));
	/* A source whose slot another address takes is forgotten. */
	for (uint32_t a = 1; a < 100000; a++) {
		uint8_t other[4] = {10, (uint8_t)(a >> 16), (uint8_t)(a >> 8), (uint8_t)a};

		urnic_ip_id_hint_matched(&t, other);
	}
	CHECK(urnic_ip_id_plausible(&t, RXE_PEER, 0x7000, 0));
}

int main(void)
{
	RUN(zero_id_source_believed_for_segment_numbers_only);
	RUN(counting_source_believed_just_ahead);
	RUN(counting_source_refuses_random_ids);
	RUN(first_recovered_id_believed_until_zero_ids_learned);
	return 0;
}
