/* SPDX-License-Identifier: MIT */
/*
 * icrc_gso.c - the ICRC term of a non-zero IPv4 ID, for the segments of a UDP GSO send
 * (see icrc_gso.h; IBTA Annex A17.3.3 for what the ICRC covers).
 *
 * Two equal-length messages that differ only in the two ID bytes have CRCs that differ by
 * the CRC register of the difference fed from zero: the ID bytes w (first byte on the
 * wire in the low byte, zlib's reflected order) times x^16, then times x^8 for each of
 * the T bytes that follow. urnic_icrc_ipv4_id() in icrc.c runs the same algebra backwards
 * (x^-n) to find a received packet's ID; tests/wire/test_icrc_gso.c checks both against
 * urnic_icrc_flow() with the ID set.
 */
#include "wire/icrc_gso.h"

#include "wire/pkt.h"

#define IPV4_BYTES_AFTER_ID 14 /* a 20-byte header, ID at offset 4 */
#define UDP_HDR_BYTES 8
#define CRC32_X0 0x80000000u /* x^0, reflected */
#define CRC32_X1 0x40000000u /* x^1 */

/* x^n mod P by square and multiply. */
static uint32_t x_pow(uint64_t n)
{
	uint32_t r = CRC32_X0, sq = CRC32_X1;

	while (n) {
		if (n & 1)
			r = urnic_crc32_mulmod(sq, r);
		sq = urnic_crc32_mulmod(sq, sq);
		n >>= 1;
	}
	return r;
}

uint32_t urnic_icrc_ipv4_id_factor(size_t covered_udp_payload)
{
	uint64_t t = IPV4_BYTES_AFTER_ID + UDP_HDR_BYTES + (uint64_t)covered_udp_payload;

	return x_pow(8 * t + 16);
}

uint32_t urnic_icrc_ipv4_id_delta(uint32_t factor, uint16_t ip_id)
{
	uint32_t w = (uint32_t)(ip_id >> 8) | (uint32_t)(ip_id & 0xff) << 8;

	return w ? urnic_crc32_mulmod(w, factor) : 0;
}
