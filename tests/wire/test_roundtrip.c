/* SPDX-License-Identifier: MIT */
/*
 * test_roundtrip.c - decode(encode(x)) == x and encode(decode(bytes)) == bytes.
 *
 * For every opcode in the table (IBTA 9.2.1) and many random field values from a fixed
 * seed: random structs survive encode + decode, and random header bytes (with the
 * reserved bits of IBTA 9.2/9.3 cleared and TVer 0) survive decode + encode unchanged.
 * Also checks each header lands at the offset IBTA 9.2 orders it at.
 */
#include <string.h>

#include "check.h"
#include "pktgen.h"
#include "wire/byteorder.h"

#define ROUNDS 2000
#define MAX_PAYLOAD 300

static void random_structs_survive_encode_decode(void)
{
	struct wire_rng rng = { 0x5eed };
	uint8_t buf[512], payload[MAX_PAYLOAD];
	struct urnic_pkt in, out;
	const char *diff;
	unsigned op, round;
	size_t len, plen, i;
	ssize_t n;

	for (op = 0; op < 256; op++) {
		const struct urnic_opcode_info *info = urnic_opcode_info((uint8_t)op);

		if (!info->name)
			continue;
		for (round = 0; round < ROUNDS; round++) {
			wire_pkt_random(&in, (uint8_t)op, &rng);
			plen = (info->flags & URNIC_OPF_PAYLOAD) ? wire_rng_below(&rng, MAX_PAYLOAD)
								 : 0;
			for (i = 0; i < plen; i++)
				payload[i] = (uint8_t)wire_rng_u32(&rng);
			in.payload_bytes = (uint32_t)plen;
			len = wire_pkt_build(&in, payload, plen, buf, sizeof(buf));
			CHECK(len > 0);
			n = urnic_pkt_decode(&out, buf, len);
			CHECK_EQ(n, info->hdr_bytes);
			diff = wire_pkt_diff(&in, &out);
			if (diff)
				fprintf(stderr, "%s: %s differs\n", info->name, diff);
			CHECK(diff == NULL);
			CHECK(out.payload == buf + n);
			CHECK(memcmp(out.payload, payload, plen) == 0);
		}
	}
}

/* Clear what decode must reject: TVer, Resv6, Resv7, DETH and XRCETH Resv8. */
static void make_clean(uint8_t *hdr, uint32_t flags)
{
	hdr[1] &= 0xf0;
	hdr[4] &= 0xc0;
	hdr[8] &= 0x80;
	if (flags & URNIC_OPF_DETH)
		hdr[URNIC_BTH_BYTES + 4] = 0; /* DETH is the first extension header */
	if (flags & URNIC_OPF_XRCETH)
		hdr[URNIC_BTH_BYTES] = 0; /* and so is the XRCETH (IBTA A14) */
	if (flags & URNIC_OPF_CNP)	  /* A17.9.3: the CNP's 16 reserved bytes */
		memset(hdr + URNIC_BTH_BYTES, 0, URNIC_CNP_RESV_BYTES);
}

static void random_bytes_survive_decode_encode(void)
{
	struct wire_rng rng = { 0xb17e5 };
	uint8_t buf[128], again[128];
	struct urnic_pkt pkt;
	unsigned op, round;
	size_t i, len;

	for (op = 0; op < 256; op++) {
		const struct urnic_opcode_info *info = urnic_opcode_info((uint8_t)op);

		if (!info->name)
			continue;
		for (round = 0; round < ROUNDS; round++) {
			for (i = 0; i < sizeof(buf); i++)
				buf[i] = (uint8_t)wire_rng_u32(&rng);
			buf[0] = (uint8_t)op;
			make_clean(buf, info->flags);
			len = info->hdr_bytes + 3 + URNIC_ICRC_BYTES + wire_rng_below(&rng, 16);
			CHECK_EQ(urnic_pkt_decode(&pkt, buf, len), info->hdr_bytes);
			memset(again, 0, sizeof(again));
			CHECK_EQ(urnic_pkt_encode_hdr(&pkt, again, sizeof(again)), info->hdr_bytes);
			CHECK(memcmp(again, buf, info->hdr_bytes) == 0);
		}
	}
}

/* IBTA 9.2 order, written out per opcode group rather than derived from the flags. */
static void headers_sit_where_ibta_puts_them(void)
{
	struct urnic_pkt pkt;
	uint8_t buf[128];

	memset(&pkt, 0, sizeof(pkt));
	pkt.bth.opcode = URNIC_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE;
	pkt.reth.va = 0x0102030405060708ull;
	pkt.reth.rkey = 0x11121314;
	pkt.reth.len = 0x21222324;
	memcpy(&pkt.imm_be, "\xaa\xbb\xcc\xdd", 4);
	CHECK_EQ(urnic_pkt_encode_hdr(&pkt, buf, sizeof(buf)), 32);
	CHECK_EQ(urnic_get_be64(buf + 12), 0x0102030405060708ull);
	CHECK_EQ(urnic_get_be32(buf + 20), 0x11121314);
	CHECK_EQ(urnic_get_be32(buf + 24), 0x21222324);
	CHECK(memcmp(buf + 28, "\xaa\xbb\xcc\xdd", 4) == 0); /* ImmDt after RETH */

	memset(&pkt, 0, sizeof(pkt));
	pkt.bth.opcode = URNIC_OP_RC_ATOMIC_ACKNOWLEDGE;
	pkt.aeth.syndrome = 0x1f;
	pkt.aeth.msn = 0x123456;
	pkt.atmack_orig = 0x8877665544332211ull;
	CHECK_EQ(urnic_pkt_encode_hdr(&pkt, buf, sizeof(buf)), 24);
	CHECK_EQ(urnic_get_be32(buf + 12), 0x1f123456); /* AETH before AtomicAckETH */
	CHECK_EQ(urnic_get_be64(buf + 16), 0x8877665544332211ull);

	memset(&pkt, 0, sizeof(pkt));
	pkt.bth.opcode = URNIC_OP_RC_FLUSH;
	pkt.feth = 0x00000012; /* selectivity 1 (whole MR), persistence */
	pkt.reth.va = 0x1000;
	pkt.reth.rkey = 0x2000;
	pkt.reth.len = 0x3000;
	CHECK_EQ(urnic_pkt_encode_hdr(&pkt, buf, sizeof(buf)), 32);
	CHECK_EQ(urnic_get_be32(buf + 12), 0x12); /* FETH before RETH (IBTA A19) */
	CHECK_EQ(urnic_get_be64(buf + 16), 0x1000);

	memset(&pkt, 0, sizeof(pkt));
	pkt.bth.opcode = URNIC_OP_UD_SEND_ONLY_WITH_IMMEDIATE;
	pkt.deth.qkey = 0x80010000u;
	pkt.deth.sqpn = 1;
	memcpy(&pkt.imm_be, "\x01\x02\x03\x04", 4);
	CHECK_EQ(urnic_pkt_encode_hdr(&pkt, buf, sizeof(buf)), 24);
	CHECK_EQ(urnic_get_be32(buf + 12), 0x80010000u);
	CHECK_EQ(urnic_get_be32(buf + 16), 1);
	CHECK(memcmp(buf + 20, "\x01\x02\x03\x04", 4) == 0); /* ImmDt after DETH */

	memset(&pkt, 0, sizeof(pkt));
	pkt.bth.opcode = URNIC_OP_RC_COMPARE_SWAP;
	pkt.atmeth.va = 1;
	pkt.atmeth.rkey = 2;
	pkt.atmeth.swap_add = 3;
	pkt.atmeth.compare = 4;
	CHECK_EQ(urnic_pkt_encode_hdr(&pkt, buf, sizeof(buf)), 40);
	CHECK_EQ(urnic_get_be64(buf + 12), 1);
	CHECK_EQ(urnic_get_be32(buf + 20), 2);
	CHECK_EQ(urnic_get_be64(buf + 24), 3); /* Swap (Add) Data, then Compare */
	CHECK_EQ(urnic_get_be64(buf + 32), 4);
}

static void bth_bits_sit_where_ibta_puts_them(void)
{
	struct urnic_bth bth = {
		.opcode = URNIC_OP_RC_SEND_LAST,
		.se = true,
		.mig = false,
		.pad = 2,
		.pkey = 0xffff,
		.fecn = false,
		.becn = true,
		.dqpn = 0x000011,
		.ackreq = true,
		.psn = 0x100000,
	};
	static const uint8_t want[12] = { 0x02, 0xa0, 0xff, 0xff, 0x40, 0x00,
					  0x00, 0x11, 0x80, 0x10, 0x00, 0x00 };
	uint8_t buf[12];

	CHECK_EQ(urnic_bth_encode(&bth, buf, sizeof(buf)), 12);
	CHECK(memcmp(buf, want, sizeof(want)) == 0);
}

/* IBTA A17.9.3's CNP, as ConnectX sends it (NVIDIA's "RoCEv2 CNP Packet Format
 * Example": 81 00 ff ff 40 00 00 d2 00 00 00 00, then 16 zero bytes, then the ICRC):
 * BECN set, DestQP the QP to slow down, PSN 0. Decoded, encoded back the same; a CNP
 * whose reserved bytes are not zero, or that stops short of them, does not decode. */
static void cnp_as_connectx_sends_it(void)
{
	static const uint8_t want[28] = {
		0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x00, 0xd2, 0x00, 0x00
	};
	uint8_t buf[32] = { 0 }, again[32] = { 0 };
	struct urnic_pkt pkt = { 0 };

	pkt.bth = (struct urnic_bth){
		.opcode = URNIC_OP_CNP, .pkey = 0xffff, .becn = true, .dqpn = 0xd2
	};
	CHECK_EQ(urnic_pkt_encode_hdr(&pkt, buf, sizeof(buf)), 28);
	CHECK(memcmp(buf, want, sizeof(want)) == 0);
	CHECK_EQ(urnic_pkt_decode(&pkt, buf, 32), 28);
	CHECK(pkt.bth.becn && pkt.bth.dqpn == 0xd2 && pkt.bth.psn == 0 && pkt.payload_bytes == 0);
	CHECK_EQ(urnic_pkt_encode_hdr(&pkt, again, sizeof(again)), 28);
	CHECK(memcmp(again, want, sizeof(want)) == 0);
	CHECK_EQ(urnic_pkt_decode(&pkt, buf, 31), -EBADMSG); /* no room for the ICRC */
	buf[12 + 15] = 1;
	CHECK_EQ(urnic_pkt_decode(&pkt, buf, 32), -EBADMSG);
}

int main(void)
{
	RUN(random_structs_survive_encode_decode);
	RUN(random_bytes_survive_decode_encode);
	RUN(headers_sit_where_ibta_puts_them);
	RUN(bth_bits_sit_where_ibta_puts_them);
	RUN(cnp_as_connectx_sends_it);
	return 0;
}
