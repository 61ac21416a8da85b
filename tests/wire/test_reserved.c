/* SPDX-License-Identifier: MIT */
/*
 * test_reserved.c - malformed BTH / DETH fields are dropped, variant bits are kept.
 *
 * IBTA 9.2: TVer must be 0 and reserved bits (BTH Resv6 in byte 4, Resv7 in byte 8)
 * zero; IBTA 9.3: DETH byte 4 is reserved. Unknown opcodes and a PadCnt larger than the
 * bytes before the ICRC are -EBADMSG. FECN/BECN (Annex A17) and MigReq (reference 2.13)
 * are decoded, never rejected. Encoding an unknown opcode is -EINVAL.
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "pktgen.h"

static size_t build(uint8_t opcode, size_t payload_bytes, uint8_t pad, uint8_t *buf, size_t cap)
{
	struct wire_rng rng = { opcode };
	struct urnic_pkt pkt;

	wire_pkt_random(&pkt, opcode, &rng);
	pkt.bth.fecn = pkt.bth.becn = pkt.bth.mig = false;
	pkt.bth.pad = pad;
	return wire_pkt_build(&pkt, NULL, payload_bytes, buf, cap);
}

static void reserved_bth_bits_are_rejected(void)
{
	struct urnic_pkt pkt;
	struct urnic_bth bth;
	uint8_t buf[64];
	size_t len = build(URNIC_OP_RC_SEND_ONLY, 8, 0, buf, sizeof(buf));
	unsigned b;

	CHECK(urnic_pkt_decode(&pkt, buf, len) > 0);
	for (b = 0; b < 6; b++) { /* Resv6: BTH byte 4 bits 5..0 */
		buf[4] ^= (uint8_t)(1u << b);
		CHECK_EQ(urnic_pkt_decode(&pkt, buf, len), -EBADMSG);
		CHECK_EQ(urnic_bth_decode(&bth, buf, len), -EBADMSG);
		buf[4] ^= (uint8_t)(1u << b);
	}
	for (b = 0; b < 7; b++) { /* Resv7: BTH byte 8 bits 6..0 */
		buf[8] ^= (uint8_t)(1u << b);
		CHECK_EQ(urnic_pkt_decode(&pkt, buf, len), -EBADMSG);
		CHECK_EQ(urnic_bth_decode(&bth, buf, len), -EBADMSG);
		buf[8] ^= (uint8_t)(1u << b);
	}
	CHECK(urnic_pkt_decode(&pkt, buf, len) > 0);
}

static void nonzero_tver_is_rejected(void)
{
	struct urnic_pkt pkt;
	uint8_t buf[64];
	size_t len = build(URNIC_OP_RC_SEND_ONLY, 8, 0, buf, sizeof(buf));
	unsigned tver;

	for (tver = 1; tver < 16; tver++) {
		buf[1] = (uint8_t)((buf[1] & 0xf0) | tver);
		CHECK_EQ(urnic_pkt_decode(&pkt, buf, len), -EBADMSG);
	}
	buf[1] &= 0xf0;
	CHECK(urnic_pkt_decode(&pkt, buf, len) > 0);
}

static void variant_bits_are_decoded_not_rejected(void)
{
	struct urnic_pkt pkt;
	uint8_t buf[64], again[64];
	size_t len = build(URNIC_OP_RC_ACKNOWLEDGE, 0, 0, buf, sizeof(buf));

	buf[4] |= 0x80; /* FECN */
	CHECK(urnic_pkt_decode(&pkt, buf, len) > 0);
	CHECK(pkt.bth.fecn && !pkt.bth.becn);
	buf[4] = (uint8_t)((buf[4] & ~0x80u) | 0x40u); /* BECN */
	CHECK(urnic_pkt_decode(&pkt, buf, len) > 0);
	CHECK(!pkt.bth.fecn && pkt.bth.becn);
	buf[1] |= 0x40; /* MigReq: ConnectX-3 Pro sets it in ACKs */
	CHECK(urnic_pkt_decode(&pkt, buf, len) > 0);
	CHECK(pkt.bth.mig);
	CHECK_EQ(urnic_pkt_encode_hdr(&pkt, again, sizeof(again)), 16);
	CHECK(memcmp(again, buf, 16) == 0);
}

static void reserved_deth_byte_is_rejected(void)
{
	struct urnic_pkt pkt;
	struct urnic_deth deth;
	uint8_t buf[64];
	size_t len = build(URNIC_OP_UD_SEND_ONLY, 8, 0, buf, sizeof(buf));
	unsigned b;

	CHECK(urnic_pkt_decode(&pkt, buf, len) > 0);
	for (b = 0; b < 8; b++) {
		buf[URNIC_BTH_BYTES + 4] ^= (uint8_t)(1u << b);
		CHECK_EQ(urnic_pkt_decode(&pkt, buf, len), -EBADMSG);
		CHECK_EQ(urnic_deth_decode(&deth, buf + URNIC_BTH_BYTES, URNIC_DETH_BYTES),
			 -EBADMSG);
		buf[URNIC_BTH_BYTES + 4] ^= (uint8_t)(1u << b);
	}
	CHECK(urnic_pkt_decode(&pkt, buf, len) > 0);
}

/* IBTA Annex A14: the XRCETH's first byte is reserved; the SRQ number is 24 bits. */
static void reserved_xrceth_byte_is_rejected(void)
{
	struct urnic_pkt pkt;
	uint32_t srqn;
	uint8_t buf[64];
	size_t len = build(URNIC_OP_XRC_SEND_ONLY, 8, 0, buf, sizeof(buf));
	unsigned b;

	CHECK_EQ(urnic_pkt_decode(&pkt, buf, len), URNIC_BTH_BYTES + URNIC_XRCETH_BYTES);
	for (b = 0; b < 8; b++) {
		buf[URNIC_BTH_BYTES] ^= (uint8_t)(1u << b);
		CHECK_EQ(urnic_pkt_decode(&pkt, buf, len), -EBADMSG);
		CHECK_EQ(urnic_xrceth_decode(&srqn, buf + URNIC_BTH_BYTES, URNIC_XRCETH_BYTES),
			 -EBADMSG);
		buf[URNIC_BTH_BYTES] ^= (uint8_t)(1u << b);
	}
	CHECK(urnic_pkt_decode(&pkt, buf, len) > 0);
}

static void unknown_opcodes_are_rejected(void)
{
	struct urnic_pkt pkt;
	uint8_t buf[128] = { 0 }, out[128];
	unsigned op, unknown = 0;

	for (op = 0; op < 256; op++) {
		if (urnic_opcode_table[op].name)
			continue;
		unknown++;
		buf[0] = (uint8_t)op; /* a long, otherwise clean buffer */
		CHECK_EQ(urnic_pkt_decode(&pkt, buf, sizeof(buf)), -EBADMSG);
		memset(&pkt, 0, sizeof(pkt));
		pkt.bth.opcode = (uint8_t)op;
		CHECK_EQ(urnic_pkt_encode_hdr(&pkt, out, sizeof(out)), -EINVAL);
	}
	CHECK_EQ(unknown, 256 - 63);
	/* Spot checks: RD, RESYNC, the CNP class's other codes, XRC's RESYNC slot and A19
	 * codes, manufacturer-specific. */
	CHECK(!urnic_opcode_table[0x15].name);
	CHECK(!urnic_opcode_table[0x40].name);
	CHECK(!urnic_opcode_table[0x80].name);
	CHECK(!urnic_opcode_table[0x82].name);
	CHECK(!urnic_opcode_table[0xb5].name);
	CHECK(!urnic_opcode_table[0xbc].name);
	CHECK(!urnic_opcode_table[0xe0].name);
}

static void pad_beyond_payload_is_rejected(void)
{
	struct urnic_pkt pkt;
	uint8_t buf[64];
	size_t payload, len;
	uint8_t pad;

	for (payload = 0; payload < 4; payload++) {
		len = build(URNIC_OP_RC_SEND_ONLY, payload, 0, buf, sizeof(buf));
		for (pad = 0; pad < 4; pad++) {
			buf[1] = (uint8_t)((buf[1] & ~0x30u) | (unsigned)pad << 4);
			if (pad <= payload) {
				CHECK_EQ(urnic_pkt_decode(&pkt, buf, len), URNIC_BTH_BYTES);
				CHECK_EQ(pkt.payload_bytes, payload - pad);
			} else {
				CHECK_EQ(urnic_pkt_decode(&pkt, buf, len), -EBADMSG);
			}
		}
	}
}

static void rdeth_opcodes_stay_unknown(void)
{
	unsigned op;

	/* RD is out of scope (pkt.h): no opcode in the table may need an RDETH. */
	for (op = 0; op < 256; op++)
		CHECK(!(urnic_opcode_table[op].flags & URNIC_OPF_RDETH));
}

int main(void)
{
	RUN(reserved_bth_bits_are_rejected);
	RUN(nonzero_tver_is_rejected);
	RUN(variant_bits_are_decoded_not_rejected);
	RUN(reserved_deth_byte_is_rejected);
	RUN(reserved_xrceth_byte_is_rejected);
	RUN(unknown_opcodes_are_rejected);
	RUN(pad_beyond_payload_is_rejected);
	RUN(rdeth_opcodes_stay_unknown);
	return 0;
}
