/* SPDX-License-Identifier: MIT */
/*
 * test_opcode.c - the opcode table says what rxe's rxe_opcode[] says.
 *
 * Header sizes per opcode are written out here by hand from rxe_opcode.c (and IBTA 1.5
 * for FLUSH / ATOMIC_WRITE, reference 2.3; XRC from IBTA Annex A14: the RC sizes plus a
 * 4-byte XRCETH on each request) and compared with the table, which derives them from
 * the flags. Also: names match the enum, message positions and the REQ/RESP
 * split are consistent, and READ_RESPONSE_MIDDLE is the one READ response without AETH.
 */
#include <string.h>

#include "check.h"
#include "wire/pkt.h"

static const struct {
	uint8_t opcode;
	uint8_t hdr_bytes;
	const char *name;
} rxe_lengths[] = {
	{ 0x00, 12, "RC_SEND_FIRST" },
	{ 0x01, 12, "RC_SEND_MIDDLE" },
	{ 0x02, 12, "RC_SEND_LAST" },
	{ 0x03, 16, "RC_SEND_LAST_WITH_IMMEDIATE" },
	{ 0x04, 12, "RC_SEND_ONLY" },
	{ 0x05, 16, "RC_SEND_ONLY_WITH_IMMEDIATE" },
	{ 0x06, 28, "RC_RDMA_WRITE_FIRST" },
	{ 0x07, 12, "RC_RDMA_WRITE_MIDDLE" },
	{ 0x08, 12, "RC_RDMA_WRITE_LAST" },
	{ 0x09, 16, "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE" },
	{ 0x0a, 28, "RC_RDMA_WRITE_ONLY" },
	{ 0x0b, 32, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE" },
	{ 0x0c, 28, "RC_RDMA_READ_REQUEST" },
	{ 0x0d, 16, "RC_RDMA_READ_RESPONSE_FIRST" },
	{ 0x0e, 12, "RC_RDMA_READ_RESPONSE_MIDDLE" },
	{ 0x0f, 16, "RC_RDMA_READ_RESPONSE_LAST" },
	{ 0x10, 16, "RC_RDMA_READ_RESPONSE_ONLY" },
	{ 0x11, 16, "RC_ACKNOWLEDGE" },
	{ 0x12, 24, "RC_ATOMIC_ACKNOWLEDGE" },
	{ 0x13, 40, "RC_COMPARE_SWAP" },
	{ 0x14, 40, "RC_FETCH_ADD" },
	{ 0x16, 16, "RC_SEND_LAST_WITH_INVALIDATE" },
	{ 0x17, 16, "RC_SEND_ONLY_WITH_INVALIDATE" },
	{ 0x1c, 32, "RC_FLUSH" },
	{ 0x1d, 28, "RC_ATOMIC_WRITE" },
	{ 0x20, 12, "UC_SEND_FIRST" },
	{ 0x21, 12, "UC_SEND_MIDDLE" },
	{ 0x22, 12, "UC_SEND_LAST" },
	{ 0x23, 16, "UC_SEND_LAST_WITH_IMMEDIATE" },
	{ 0x24, 12, "UC_SEND_ONLY" },
	{ 0x25, 16, "UC_SEND_ONLY_WITH_IMMEDIATE" },
	{ 0x26, 28, "UC_RDMA_WRITE_FIRST" },
	{ 0x27, 12, "UC_RDMA_WRITE_MIDDLE" },
	{ 0x28, 12, "UC_RDMA_WRITE_LAST" },
	{ 0x29, 16, "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE" },
	{ 0x2a, 28, "UC_RDMA_WRITE_ONLY" },
	{ 0x2b, 32, "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE" },
	{ 0x64, 20, "UD_SEND_ONLY" },
	{ 0x65, 24, "UD_SEND_ONLY_WITH_IMMEDIATE" },
	{ 0xa0, 16, "XRC_SEND_FIRST" },
	{ 0xa1, 16, "XRC_SEND_MIDDLE" },
	{ 0xa2, 16, "XRC_SEND_LAST" },
	{ 0xa3, 20, "XRC_SEND_LAST_WITH_IMMEDIATE" },
	{ 0xa4, 16, "XRC_SEND_ONLY" },
	{ 0xa5, 20, "XRC_SEND_ONLY_WITH_IMMEDIATE" },
	{ 0xa6, 32, "XRC_RDMA_WRITE_FIRST" },
	{ 0xa7, 16, "XRC_RDMA_WRITE_MIDDLE" },
	{ 0xa8, 16, "XRC_RDMA_WRITE_LAST" },
	{ 0xa9, 20, "XRC_RDMA_WRITE_LAST_WITH_IMMEDIATE" },
	{ 0xaa, 32, "XRC_RDMA_WRITE_ONLY" },
	{ 0xab, 36, "XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE" },
	{ 0xac, 32, "XRC_RDMA_READ_REQUEST" },
	{ 0xad, 16, "XRC_RDMA_READ_RESPONSE_FIRST" },
	{ 0xae, 12, "XRC_RDMA_READ_RESPONSE_MIDDLE" },
	{ 0xaf, 16, "XRC_RDMA_READ_RESPONSE_LAST" },
	{ 0xb0, 16, "XRC_RDMA_READ_RESPONSE_ONLY" },
	{ 0xb1, 16, "XRC_ACKNOWLEDGE" },
	{ 0xb2, 24, "XRC_ATOMIC_ACKNOWLEDGE" },
	{ 0xb3, 44, "XRC_COMPARE_SWAP" },
	{ 0xb4, 44, "XRC_FETCH_ADD" },
	{ 0xb6, 20, "XRC_SEND_LAST_WITH_INVALIDATE" },
	{ 0xb7, 20, "XRC_SEND_ONLY_WITH_INVALIDATE" },
};

#define NLENGTHS (sizeof(rxe_lengths) / sizeof(rxe_lengths[0]))

static void table_matches_rxe_lengths(void)
{
	unsigned op, known = 0;
	size_t i;

	CHECK_EQ(NLENGTHS, 62);
	for (i = 0; i < NLENGTHS; i++) {
		const struct urnic_opcode_info *info = urnic_opcode_info(rxe_lengths[i].opcode);

		CHECK(info->name != NULL);
		if (strcmp(info->name, rxe_lengths[i].name))
			fprintf(stderr, "0x%02x: %s != %s\n", rxe_lengths[i].opcode, info->name,
				rxe_lengths[i].name);
		CHECK(strcmp(info->name, rxe_lengths[i].name) == 0);
		CHECK_EQ(info->hdr_bytes, rxe_lengths[i].hdr_bytes);
	}
	/* Besides rxe's: the CNP (A17.9.3), which rxe does not know, BTH and 16 bytes. */
	CHECK(strcmp(urnic_opcode_info(0x81)->name, "CNP") == 0);
	CHECK_EQ(urnic_opcode_info(0x81)->hdr_bytes, 28);
	for (op = 0; op < 256; op++)
		known += urnic_opcode_table[op].name != NULL;
	CHECK_EQ(known, NLENGTHS + 1);
}

static void enum_values_are_the_wire_values(void)
{
	CHECK_EQ(URNIC_OP_RC_SEND_FIRST, 0x00);
	CHECK_EQ(URNIC_OP_RC_RDMA_READ_REQUEST, 0x0c);
	CHECK_EQ(URNIC_OP_RC_ACKNOWLEDGE, 0x11);
	CHECK_EQ(URNIC_OP_RC_SEND_ONLY_WITH_INVALIDATE, 0x17);
	CHECK_EQ(URNIC_OP_RC_FLUSH, 0x1c);
	CHECK_EQ(URNIC_OP_RC_ATOMIC_WRITE, 0x1d);
	CHECK_EQ(URNIC_OP_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 0x2b);
	CHECK_EQ(URNIC_OP_UD_SEND_ONLY, 0x64);
	CHECK_EQ(URNIC_OP_UD_SEND_ONLY_WITH_IMMEDIATE, 0x65);
	/* UC reuses the RC codes for SEND and WRITE (IBTA 9.2.1: base | op). */
	CHECK_EQ(URNIC_OP_UC_SEND_FIRST, URNIC_OP_RC_SEND_FIRST | 0x20);
	CHECK_EQ(URNIC_OP_UD_SEND_ONLY, URNIC_OP_RC_SEND_ONLY | 0x60);
	/* XRC: transport 0b101 (IBTA 9.2.1, Annex A14), the RC operations. */
	CHECK_EQ(URNIC_OP_XRC_SEND_FIRST, 0xa0);
	CHECK_EQ(URNIC_OP_XRC_ACKNOWLEDGE, URNIC_OP_RC_ACKNOWLEDGE | 0xa0);
	CHECK_EQ(URNIC_OP_XRC_SEND_ONLY_WITH_INVALIDATE, 0xb7);
	for (unsigned op = 0; op < 256; op++) {
		const struct urnic_opcode_info *x = urnic_opcode_info((uint8_t)op);
		const struct urnic_opcode_info *rc = urnic_opcode_info((uint8_t)(op & 0x1f));

		if (!x->name || !(x->flags & URNIC_OPF_XRC))
			continue;
		CHECK_EQ(op & URNIC_OPCODE_TRANSPORT_MASK, 0xa0);
		CHECK(rc->name != NULL && strcmp(rc->name + 2, x->name + 3) == 0);
		CHECK_EQ(x->flags & ~(uint32_t)(URNIC_OPF_XRC | URNIC_OPF_XRCETH),
			 rc->flags & ~(uint32_t)URNIC_OPF_RC);
	}
}

static void flags_are_consistent(void)
{
	unsigned op;

	for (op = 0; op < 256; op++) {
		uint32_t f = urnic_opcode_table[op].flags;

		if (!urnic_opcode_table[op].name) {
			CHECK_EQ(f, 0);
			CHECK_EQ(urnic_opcode_table[op].hdr_bytes, 0);
			continue;
		}
		/* One kind of operation each; the CNP is none (A17.9.3), and alone. */
		CHECK_EQ(__builtin_popcount(f & (URNIC_OPF_SEND | URNIC_OPF_WRITE | URNIC_OPF_READ |
						 URNIC_OPF_ATOMIC | URNIC_OPF_ACK |
						 URNIC_OPF_FLUSH | URNIC_OPF_ATOMIC_WRITE)),
			 (f & URNIC_OPF_CNP) ? 0 : 1);
		if (f & URNIC_OPF_CNP)
			CHECK_EQ(f, URNIC_OPF_CNP | URNIC_OPF_ONLY);
		/* Immediate data and invalidation end a message. */
		if (f & (URNIC_OPF_IMMDT | URNIC_OPF_IETH))
			CHECK(f & URNIC_OPF_LAST);
		/* RETH starts a WRITE, carries a READ request, FLUSH and ATOMIC_WRITE. */
		if ((f & URNIC_OPF_RETH) && (f & URNIC_OPF_WRITE))
			CHECK(f & URNIC_OPF_FIRST);
		if ((f & URNIC_OPF_WRITE) && (f & URNIC_OPF_FIRST))
			CHECK(f & URNIC_OPF_RETH);
		if (f & URNIC_OPF_RESP)
			CHECK(f & (URNIC_OPF_RC | URNIC_OPF_XRC));
		/* IBTA A14: every XRC request names its SRQ, nothing else carries one. */
		CHECK_EQ(!!(f & URNIC_OPF_XRCETH), (f & URNIC_OPF_XRC) && (f & URNIC_OPF_REQ));
		if (f & URNIC_OPF_UD)
			CHECK((f & URNIC_OPF_DETH) && (f & URNIC_OPF_ONLY) == URNIC_OPF_ONLY);
	}
	CHECK(!(urnic_opcode_table[URNIC_OP_RC_RDMA_READ_RESPONSE_MIDDLE].flags & URNIC_OPF_AETH));
	CHECK(urnic_opcode_table[URNIC_OP_RC_RDMA_READ_RESPONSE_FIRST].flags & URNIC_OPF_AETH);
	CHECK(urnic_opcode_table[URNIC_OP_RC_RDMA_READ_RESPONSE_LAST].flags & URNIC_OPF_AETH);
	CHECK(urnic_opcode_table[URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY].flags & URNIC_OPF_AETH);
	CHECK(!(urnic_opcode_table[URNIC_OP_RC_FLUSH].flags & URNIC_OPF_PAYLOAD));
	CHECK(urnic_opcode_table[URNIC_OP_RC_ATOMIC_WRITE].flags & URNIC_OPF_PAYLOAD);
	CHECK(!(urnic_opcode_table[URNIC_OP_RC_RDMA_READ_REQUEST].flags & URNIC_OPF_PAYLOAD));
}

int main(void)
{
	RUN(table_matches_rxe_lengths);
	RUN(enum_values_are_the_wire_values);
	RUN(flags_are_consistent);
	return 0;
}
