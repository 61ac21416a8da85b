/* SPDX-License-Identifier: MIT */
/*
 * test_icrc_gso.c - the ICRC of GSO segment j (IPv4 ID j, icrc_gso.h) equals the ICRC
 * computed from scratch with that ID (IBTA Annex A17.3.3 covers the ID), for packet
 * lengths from a bare BTH to a 4096-byte MTU payload, and the receive side's ID recovery
 * (urnic_icrc_ipv4_id) finds j again.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "wire/icrc_gso.h"
#include "wire/pkt.h"

static uint32_t rng_state = 12345;

static uint8_t rnd(void)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return (uint8_t)(rng_state >> 16);
}

static uint32_t icrc_with_id(const uint8_t *payload, size_t len, uint16_t id)
{
	struct urnic_icrc_flow flow = {
		.ipv6 = false,
		.src = { 10, 77, 0, 1 },
		.dst = { 10, 77, 0, 11 },
		.ip_id = id,
		.sport = 49152,
		.dport = URNIC_ROCE_UDP_PORT,
	};
	struct urnic_frag f = { payload, len };

	return urnic_icrc_flow(&flow, &f, 1, len);
}

static void segment_icrc_matches_a_fresh_computation(void)
{
	static const size_t lens[] = { 12, 16, 28, 40, 268, 1036, 1052, 2060, 4108, 8192 };
	static const uint16_t ids[] = { 1, 2, 3, 7, 63, 64, 255, 256, 0x1234, 0xffff };
	static uint8_t payload[8192];
	size_t i, k, checked = 0;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		size_t len = lens[i];
		uint32_t factor = urnic_icrc_ipv4_id_factor(len);
		uint32_t id0;

		for (k = 0; k < len; k++)
			payload[k] = rnd();
		id0 = icrc_with_id(payload, len, 0);
		CHECK_EQ(urnic_icrc_ipv4_id_delta(factor, 0), 0);
		for (k = 0; k < sizeof(ids) / sizeof(ids[0]); k++) {
			uint32_t want = icrc_with_id(payload, len, ids[k]);
			uint32_t delta = urnic_icrc_ipv4_id_delta(factor, ids[k]);
			uint16_t found = 0;

			CHECK_EQ(id0 ^ delta, want);
			CHECK(delta != 0);
			/* and the receiver's recovery agrees */
			CHECK_EQ(urnic_icrc_ipv4_id(id0, want, len, &found), 0);
			CHECK_EQ(found, ids[k]);
			checked++;
		}
	}
	printf("    %zu (length, ID) pairs\n", checked);
}

static void every_id_of_a_gso_send_is_distinct(void)
{
	uint32_t factor = urnic_icrc_ipv4_id_factor(1036);
	uint32_t seen[64];
	unsigned j, k;

	/* UDP_SEGMENT sends at most 64 segments: IDs 0..63 give 64 different ICRCs */
	for (j = 0; j < 64; j++) {
		seen[j] = urnic_icrc_ipv4_id_delta(factor, (uint16_t)j);
		for (k = 0; k < j; k++)
			CHECK(seen[k] != seen[j]);
	}
}

int main(void)
{
	RUN(segment_icrc_matches_a_fresh_computation);
	RUN(every_id_of_a_gso_send_is_distinct);
	return 0;
}
