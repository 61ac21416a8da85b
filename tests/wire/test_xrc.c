/* SPDX-License-Identifier: MIT */
/*
 * test_xrc.c - XRC packets (IBTA Annex A14) byte for byte: three IPv4 frames laid out by
 * hand from the annex and A17 (BTH, XRCETH right after it on a request, RETH / AtomicETH
 * behind, no XRCETH on a response), each ICRC computed apart from urnic with zlib's
 * crc32 over the A17.3.3 masked headers. They decode to the fields written, encode back
 * to the same bytes and carry the ICRC urnic computes; the XRCETH sits where the annex
 * puts it in every XRC request the table knows.
 */
#include <string.h>

#include "check.h"
#include "pktgen.h"
#include "wire/byteorder.h"
#include "wire/pkt.h"

enum { IP_BYTES = 20, UDP_BYTES = 8 };

/* XRC RDMA WRITE ONLY, 10.50.0.12:49153 -> 10.50.0.11:4791: DestQP 0x123, AckReq, PSN
 * 0x456, pad 3; XRCETH SRQ 0xabcdef; RETH VA 0x7f0012345678, R_Key 0x11223344, length 5;
 * "hello". */
static const uint8_t xrc_write_only[] = {
	0x45, 0x00, 0x00, 0x48, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x26, 0x2b, 0x0a, 0x32, 0x00,
	0x0c, 0x0a, 0x32, 0x00, 0x0b, 0xc0, 0x01, 0x12, 0xb7, 0x00, 0x34, 0x00, 0x00, 0xaa, 0x30,
	0xff, 0xff, 0x00, 0x00, 0x01, 0x23, 0x80, 0x00, 0x04, 0x56, 0x00, 0xab, 0xcd, 0xef, 0x00,
	0x00, 0x7f, 0x00, 0x12, 0x34, 0x56, 0x78, 0x11, 0x22, 0x33, 0x44, 0x00, 0x00, 0x00, 0x05,
	0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00, 0x00, 0x00, 0x6e, 0x46, 0x96, 0x76,
};

/* Its XRC ACKNOWLEDGE back: DestQP 0x456, PSN 0x456, AETH 0x1f / MSN 1, no XRCETH. */
static const uint8_t xrc_ack[] = {
	0x45, 0x00, 0x00, 0x30, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x26, 0x43,
	0x0a, 0x32, 0x00, 0x0b, 0x0a, 0x32, 0x00, 0x0c, 0xc0, 0x01, 0x12, 0xb7,
	0x00, 0x1c, 0x00, 0x00, 0xb1, 0x00, 0xff, 0xff, 0x00, 0x00, 0x04, 0x56,
	0x00, 0x00, 0x04, 0x56, 0x1f, 0x00, 0x00, 0x01, 0x56, 0xc5, 0x8e, 0x9b,
};

/* XRC CmpSwap: DestQP 0x123, AckReq, PSN 0x457; XRCETH SRQ 0x42; AtomicETH VA
 * 0x7f0000001000, R_Key 0x55667788, swap 0x0102..08, compare 0x1112..18. */
static const uint8_t xrc_cmp_swap[] = {
	0x45, 0x00, 0x00, 0x4c, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x26, 0x27, 0x0a,
	0x32, 0x00, 0x0c, 0x0a, 0x32, 0x00, 0x0b, 0xc0, 0x01, 0x12, 0xb7, 0x00, 0x38,
	0x00, 0x00, 0xb3, 0x00, 0xff, 0xff, 0x00, 0x00, 0x01, 0x23, 0x80, 0x00, 0x04,
	0x57, 0x00, 0x00, 0x00, 0x42, 0x00, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x10, 0x00,
	0x55, 0x66, 0x77, 0x88, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x11,
	0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0xbc, 0xc5, 0x8d, 0xc1,
};

/* Decodes the frame's UDP payload, checks its ICRC both ways urnic computes one (from the
 * captured headers, and from a socket's view of the flow) and that the headers encode
 * back to the same bytes. Returns the header bytes. */
static size_t check_frame(const uint8_t *f, size_t len, struct urnic_pkt *pkt)
{
	const uint8_t *udp = f + IP_BYTES, *roce = udp + UDP_BYTES;
	size_t roce_len = len - IP_BYTES - UDP_BYTES, covered = roce_len - URNIC_ICRC_BYTES;
	struct urnic_icrc_flow flow = { .ip_id = 0, .dport = URNIC_ROCE_UDP_PORT };
	struct urnic_frag frag = { roce, covered };
	uint32_t icrc = urnic_get_le32(roce + covered);
	uint8_t again[64];
	ssize_t hdr;

	hdr = urnic_pkt_decode(pkt, roce, roce_len);
	CHECK(hdr > 0);
	CHECK_EQ(urnic_icrc_raw(f, IP_BYTES, udp, roce, covered), icrc);
	memcpy(flow.src, f + 12, 4);
	memcpy(flow.dst, f + 16, 4);
	flow.sport = urnic_get_be16(udp);
	CHECK_EQ(urnic_icrc_flow(&flow, &frag, 1, covered), icrc);
	CHECK_EQ(urnic_pkt_encode_hdr(pkt, again, sizeof(again)), hdr);
	CHECK(memcmp(again, roce, (size_t)hdr) == 0);
	return (size_t)hdr;
}

static void hand_built_frames_decode_encode_and_check(void)
{
	struct urnic_pkt pkt;

	CHECK_EQ(check_frame(xrc_write_only, sizeof(xrc_write_only), &pkt), 32);
	CHECK_EQ(pkt.bth.opcode, URNIC_OP_XRC_RDMA_WRITE_ONLY);
	CHECK_EQ(pkt.bth.dqpn, 0x123);
	CHECK_EQ(pkt.bth.psn, 0x456);
	CHECK(pkt.bth.ackreq);
	CHECK_EQ(pkt.xrc_srqn, 0xabcdef);
	CHECK_EQ(pkt.reth.va, 0x7f0012345678ull);
	CHECK_EQ(pkt.reth.rkey, 0x11223344);
	CHECK_EQ(pkt.reth.len, 5);
	CHECK_EQ(pkt.payload_bytes, 5);
	CHECK(memcmp(pkt.payload, "hello", 5) == 0);

	CHECK_EQ(check_frame(xrc_ack, sizeof(xrc_ack), &pkt), 16);
	CHECK_EQ(pkt.bth.opcode, URNIC_OP_XRC_ACKNOWLEDGE);
	CHECK_EQ(pkt.xrc_srqn, 0); /* a response names no SRQ */
	CHECK_EQ(pkt.aeth.syndrome, 0x1f);
	CHECK_EQ(pkt.aeth.msn, 1);

	CHECK_EQ(check_frame(xrc_cmp_swap, sizeof(xrc_cmp_swap), &pkt), 44);
	CHECK_EQ(pkt.bth.opcode, URNIC_OP_XRC_COMPARE_SWAP);
	CHECK_EQ(pkt.xrc_srqn, 0x42);
	CHECK_EQ(pkt.atmeth.va, 0x7f0000001000ull);
	CHECK_EQ(pkt.atmeth.rkey, 0x55667788);
	CHECK_EQ(pkt.atmeth.swap_add, 0x0102030405060708ull);
	CHECK_EQ(pkt.atmeth.compare, 0x1112131415161718ull);
}

/* Every XRC request: the XRCETH's four bytes follow the BTH, the rest of the RC layout
 * follows them unchanged; the SRQ number is cut to 24 bits with the reserved byte 0. */
static void xrceth_follows_the_bth_of_every_request(void)
{
	struct wire_rng rng = { 7 };
	unsigned op, requests = 0;

	for (op = 0xa0; op < 0xc0; op++) {
		const struct urnic_opcode_info *info = urnic_opcode_info((uint8_t)op);
		const struct urnic_opcode_info *rc = urnic_opcode_info((uint8_t)(op & 0x1f));
		struct urnic_pkt pkt, as_rc;
		uint8_t x[64], r[64];

		if (!info->name || !(info->flags & URNIC_OPF_REQ))
			continue;
		requests++;
		wire_pkt_random(&pkt, (uint8_t)op, &rng);
		pkt.xrc_srqn = 0xff000000u | 0x0a0b0c;
		as_rc = pkt;
		as_rc.bth.opcode = (uint8_t)(op & 0x1f);
		CHECK_EQ(urnic_pkt_encode_hdr(&pkt, x, sizeof(x)), rc->hdr_bytes + 4);
		CHECK_EQ(urnic_pkt_encode_hdr(&as_rc, r, sizeof(r)), rc->hdr_bytes);
		CHECK_EQ(x[0], op);
		CHECK(memcmp(x + 1, r + 1, URNIC_BTH_BYTES - 1) == 0);
		CHECK_EQ(urnic_get_be32(x + URNIC_BTH_BYTES), 0x000a0b0c);
		CHECK(memcmp(x + URNIC_BTH_BYTES + 4, r + URNIC_BTH_BYTES,
			     rc->hdr_bytes - URNIC_BTH_BYTES) == 0);
	}
	CHECK_EQ(requests, 17); /* SEND 8, WRITE 6, READ, CmpSwap, FetchAdd */
}

int main(void)
{
	RUN(hand_built_frames_decode_encode_and_check);
	RUN(xrceth_follows_the_bth_of_every_request);
	return 0;
}
