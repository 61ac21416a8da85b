/* SPDX-License-Identifier: MIT */
/*
 * test_uet.c - the UET PDS and SES codec (src/wire/uet.h): hand-laid packets of every
 * supported type decode to their fields and encode back to their bytes; every prefix is
 * refused as truncated; every single-bit change is either refused, leaving the output
 * untouched, or decoded to a packet that encodes to exactly the changed bytes (no bit is
 * ignored); each rule of uet_reason.def is broken once and named; random headers of every
 * type, flag set and next header round-trip; the encoder refuses what the decoder would.
 *
 *   test_wire_uet                         the checks above
 *   test_wire_uet --pcap OUT              also writes the hand-laid packets and the
 *                                         random round trips as a pcapng for tshark
 *   test_wire_uet --expected PCAP FILE    decodes PCAP's frames (tests/wire/uet_vectors.py)
 *                                         and compares the fields FILE lists with ours
 *   test_wire_uet --refuse PCAP           every frame of PCAP (uet_vectors.py --bad) is
 *                                         refused, the reasons counted
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pcap.h"
#include "pktgen.h"
#include "wire/byteorder.h"
#include "wire/pcapng.h"
#include "wire/uet.h"

struct vec {
	const char *what;
	const uint8_t *bytes;
	size_t len;
	size_t hdr; /* PDS + SES bytes; the rest is payload */
};

/* RUD_REQ, AR, REQ_STD WRITE (SOM|EOM), 4 bytes of payload. */
static const uint8_t v_rud_std[] = {
	0x11, 0x88, 0xff, 0xfe, 0x12, 0x34, 0x56, 0x78, 0x01, 0x01, 0x02, 0x02, /* PDS */
	0x01, 0x03, 0x00, 0x07, 0x01, 0x00, 0xab, 0xcd, 0x01, 0x23, 0x04, 0x56, /* SES common */
	0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x20, 0x00,				/* buffer offset */
	0x00, 0x00, 0x00, 0x09,							/* initiator */
	0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,				/* memory key */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,				/* header data */
	0x00, 0x00, 0x00, 0x10,							/* request length */
	'a',  'b',  'c',  'd'
};
/* ROD_REQ, SYN|RETX, use_rsv_pdc with psn_offset 5, REQ_SMALL SEND of 256 bytes. */
static const uint8_t v_rod_syn[] = {
	0x18, 0x94, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x10, 0x10,
	0x05, 0x05, 0x03, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01,
	0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};
/* ACK_CC, M, NSCC state: service time 0x10, restore_cwnd, pend 3, 1 KiB, 2 out of order. */
static const uint8_t v_ack_cc[] = {
	0x40, 0x20, 0x00, 0x03, 0x00, 0x00, 0x00, 0xff, 0x02, 0x02, 0x01,
	0x01, 0x00, 0x40, 0x00, 0x01, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x05, 0x00, 0x10, 0x83, 0x00, 0x04, 0x00, 0x00, 0x02,
};
/* NACK TRIMMED, RETX. */
static const uint8_t v_nack[] = {
	0x50, 0x10, 0x01, 0x00, 0x12, 0x34, 0x56, 0x79,
	0x02, 0x02, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00,
};
/* CTRL PROBE, AR, probe_opaque 0xbeef, payload the SACK base. */
static const uint8_t v_probe[] = {
	0x5b, 0x08, 0xbe, 0xef, 0x12, 0x34, 0x56, 0x80,
	0x01, 0x01, 0x02, 0x02, 0x12, 0x34, 0x56, 0x00,
};
/* RUDI_RESP, M|RETX, RSP_DATA_SMALL RESPONSE_W_DATA RC_OK, 8 bytes of payload. */
static const uint8_t v_rudi[] = {
	0x2b, 0x30, 0x00, 0x00, 0xca, 0xfe, 0xf0, 0x0d, 0x02, 0x01, 0x00, 0x08, 0x00, 0x00,
	0x00, 0x05, 0x00, 0x00, 0x00, 0x42, 1,	  2,	3,    4,    5,	  6,	7,    8,
};
/* UUD_REQ, REQ_SMALL DGRAM_SEND of 2 bytes. */
static const uint8_t v_uud[] = {
	0x30, 0x80, 0x00, 0x00, 0x07, 0x03, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01, 0x00,
	0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 'h',	'i',
};
/* ACK, EPSN|P|close request, RSP on the overflow list with RC_BAD_MKEY. */
static const uint8_t v_ack_epsn[] = {
	0x3a, 0x4c, 0x12, 0x34, 0x00, 0x00, 0x00, 0x10, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00,
	0x00, 0x11, 0x41, 0x1c, 0x00, 0x07, 0x02, 0x00, 0x00, 0x03, 0x00, 0x00, 0x10, 0x00,
};
/* RUD_CC_REQ, CCC 7 with credit target 64 KiB, REQ_MEDIUM READ (HD|SOM|EOM) of 4 KiB. */
static const uint8_t v_rud_cc[] = {
	0x69, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x03, 0x00, 0x04,
	0x07, 0x01, 0x00, 0x00, 0x02, 0x07, 0x10, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x0f, 0xff, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
	0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x00, 0xde, 0xad, 0xbe, 0xef,
};
/* ACK_CC with a CREDIT state (256 credits, 3 out of order), RSP_DATA of 4 bytes. */
static const uint8_t v_ack_credit[] = {
	0x42, 0x80, 0xff, 0xff, 0x00, 0x00, 0x00, 0x20, 0x00, 0x05, 0x00, 0x06, 0x10, 0x20,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x03, 0x02, 0x01, 0x00, 0x09, 0x00, 0x00, 0x00, 0x01, 0x00, 0x09,
	0x00, 0x04, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 'd',  'a',	't',  'a',
};

#define VEC(name, hdr)                                                                             \
	{                                                                                          \
#name, name, sizeof(name), hdr                                                     \
	}
static const struct vec vecs[] = {
	VEC(v_rud_std, 56), VEC(v_rod_syn, 32),	   VEC(v_ack_cc, 32), VEC(v_nack, 16),
	VEC(v_probe, 16),   VEC(v_rudi, 20),	   VEC(v_uud, 24),    VEC(v_ack_epsn, 28),
	VEC(v_rud_cc, 48),  VEC(v_ack_credit, 52),
};
enum { NVECS = sizeof(vecs) / sizeof(vecs[0]) };

/* Encodes p's headers again: the PDS header, then the SES one. */
static size_t encode_pkt(const struct urnic_uet_pkt *p, uint8_t *buf, size_t cap)
{
	ssize_t a = urnic_uet_pds_encode(&p->pds, buf, cap), b = 0;

	CHECK(a > 0);
	if (p->pds.type != URNIC_UET_CTRL && p->pds.next != URNIC_UET_NEXT_NONE)
		b = urnic_uet_ses_encode(&p->ses, buf + a, cap - (size_t)a);
	CHECK(b >= 0);
	return (size_t)(a + b);
}

/* Decodes, re-encodes the headers and checks the bytes are the same. */
static struct urnic_uet_pkt decode_ok(const uint8_t *b, size_t len, size_t hdr)
{
	struct urnic_uet_pkt p;
	uint8_t again[128];

	CHECK_EQ(urnic_uet_decode(&p, b, len), URNIC_UET_R_OK);
	CHECK_EQ(p.payload - b, (long long)hdr);
	CHECK_EQ(p.payload_bytes, len - hdr);
	CHECK_EQ(encode_pkt(&p, again, sizeof(again)), hdr);
	CHECK(!memcmp(again, b, hdr));
	return p;
}

static void test_hand_laid_packets(void)
{
	struct urnic_uet_pkt p;

	p = decode_ok(v_rud_std, sizeof(v_rud_std), 56);
	CHECK(p.pds.type == URNIC_UET_RUD_REQ && p.pds.next == URNIC_UET_NEXT_REQ_STD);
	CHECK(p.pds.flags == URNIC_UET_F_AR && p.pds.clear_psn_offset == -2);
	CHECK(p.pds.psn == 0x12345678 && p.pds.spdcid == 0x0101 && p.pds.dpdcid == 0x0202);
	CHECK(p.ses.opcode == URNIC_UET_SES_WRITE &&
	      p.ses.flags == (URNIC_UET_SES_F_SOM | URNIC_UET_SES_F_EOM));
	CHECK(p.ses.msg_id == 7 && p.ses.ri_generation == 1 && p.ses.job_id == 0xabcd);
	CHECK(p.ses.pid_on_fep == 0x123 && p.ses.resource_index == 0x456);
	CHECK(p.ses.buffer_offset == 0x0000100000002000ull && p.ses.initiator == 9);
	CHECK(p.ses.mem_key == 0x1122334455667788ull && p.ses.request_length == 16);
	CHECK(p.payload_bytes == 4 && !memcmp(p.payload, "abcd", 4));

	p = decode_ok(v_rod_syn, sizeof(v_rod_syn), 32);
	CHECK(p.pds.type == URNIC_UET_ROD_REQ &&
	      p.pds.flags == (URNIC_UET_F_SYN | URNIC_UET_F_RETX));
	CHECK(p.pds.use_rsv_pdc && p.pds.psn_offset == 5 && p.pds.dpdcid == 0);
	CHECK(p.pds.psn == 0x100 && p.pds.spdcid == 0x10);
	CHECK(p.ses.next == URNIC_UET_NEXT_REQ_SMALL && p.ses.opcode == URNIC_UET_SES_SEND);
	CHECK(p.ses.length14 == 256 && p.ses.job_id == 1 && p.ses.pid_on_fep == 1 &&
	      p.ses.resource_index == 2);

	p = decode_ok(v_ack_cc, sizeof(v_ack_cc), 32);
	CHECK(p.pds.type == URNIC_UET_ACK_CC && p.pds.flags == URNIC_UET_F_M);
	CHECK(p.pds.ack_psn_offset == 3 && p.pds.cack_psn == 0xff && p.pds.mpr == 0x40);
	CHECK(p.pds.cc_type == URNIC_UET_CC_NSCC && p.pds.sack_psn_offset == 1);
	CHECK(p.pds.sack_bitmap == 0x8000000000000005ull);
	CHECK(p.pds.ack_cc_state == 0x0010830004000002ull);

	p = decode_ok(v_nack, sizeof(v_nack), 16);
	CHECK(p.pds.nack_code == URNIC_UET_NACK_TRIMMED && p.pds.nack_psn == 0x12345679);
	CHECK(p.pds.flags == URNIC_UET_F_RETX && p.pds.spdcid == 0x0202);

	p = decode_ok(v_probe, sizeof(v_probe), 16);
	CHECK(p.pds.type == URNIC_UET_CTRL && p.pds.next == URNIC_UET_CTRL_PROBE);
	CHECK(p.pds.probe_opaque == 0xbeef && p.pds.payload == 0x12345600);

	p = decode_ok(v_rudi, sizeof(v_rudi), 20);
	CHECK(p.pds.type == URNIC_UET_RUDI_RESP && p.pds.pkt_id == 0xcafef00d);
	CHECK(p.ses.rsp_opcode == URNIC_UET_RSP_WITH_DATA && p.ses.return_code == URNIC_UET_RC_OK);
	CHECK(p.ses.length14 == 8 && p.ses.orig_req_psn == 0x42 && p.payload_bytes == 8);

	p = decode_ok(v_uud, sizeof(v_uud), 24);
	CHECK(p.ses.opcode == URNIC_UET_SES_DGRAM_SEND && p.ses.length14 == 2);

	p = decode_ok(v_ack_epsn, sizeof(v_ack_epsn), 28);
	CHECK(p.pds.flags == (URNIC_UET_F_EPSN | URNIC_UET_F_P | URNIC_UET_F_REQ_CLOSE));
	CHECK(p.pds.probe_opaque == 0x1234 && p.pds.ack_psn_offset == 0 && p.pds.payload == 0x11);
	CHECK(p.ses.list == URNIC_UET_LIST_OVERFLOW && p.ses.rsp_opcode == URNIC_UET_RSP_RESPONSE);
	CHECK(p.ses.return_code == URNIC_UET_RC_BAD_MKEY && p.ses.mod_len == 0x1000);

	p = decode_ok(v_rud_cc, sizeof(v_rud_cc), 48);
	CHECK(p.pds.ccc_id == 7 && p.pds.credit_target == 0x10000);
	CHECK(p.ses.opcode == URNIC_UET_SES_READ && p.ses.length14 == 4096);
	CHECK(p.ses.header_data == 0x0102030405060708ull && p.ses.initiator == 10);
	CHECK(p.ses.mem_key == 0xdeadbeef && p.ses.pid_on_fep == 0xfff);

	p = decode_ok(v_ack_credit, sizeof(v_ack_credit), 52);
	CHECK(p.pds.cc_type == URNIC_UET_CC_CREDIT && p.pds.ack_psn_offset == -1);
	CHECK(p.pds.ack_cc_state == 0x0001000000000003ull);
	CHECK(p.ses.next == URNIC_UET_NEXT_RSP_DATA && p.ses.read_msg_id == 9 &&
	      p.ses.length14 == 4 && p.ses.mod_len == 4 && p.payload_bytes == 4);
}

/* A refusal leaves the output as it was. */
static enum urnic_uet_reason refused(const uint8_t *b, size_t len)
{
	struct urnic_uet_pkt p, poison;
	enum urnic_uet_reason r;

	memset(&poison, 0xa5, sizeof(poison));
	p = poison;
	r = urnic_uet_decode(&p, b, len);
	if (r != URNIC_UET_R_OK)
		CHECK(!memcmp(&p, &poison, sizeof(p)));
	return r;
}

static void test_every_prefix_truncated(void)
{
	for (size_t i = 0; i < NVECS; i++) {
		for (size_t k = 0; k < vecs[i].hdr; k++) {
			enum urnic_uet_reason r = refused(vecs[i].bytes, k);

			if (r != URNIC_UET_R_TRUNCATED && r != URNIC_UET_R_SES_TRUNCATED) {
				fprintf(stderr, "%s: prefix %zu: %s\n", vecs[i].what, k,
					urnic_uet_reason_name(r));
				CHECK(0);
			}
		}
	}
}

/* No bit is ignored: a changed packet is refused or decodes to what encodes to it. */
static void test_every_bit_refused_or_kept(void)
{
	uint8_t b[128], again[128];
	unsigned refusals = 0;

	for (size_t i = 0; i < NVECS; i++) {
		for (size_t bit = 0; bit < vecs[i].hdr * 8; bit++) {
			struct urnic_uet_pkt p;
			size_t n;

			memcpy(b, vecs[i].bytes, vecs[i].len);
			b[bit / 8] ^= (uint8_t)(0x80 >> bit % 8);
			if (refused(b, vecs[i].len) != URNIC_UET_R_OK) {
				refusals++;
				continue;
			}
			CHECK_EQ(urnic_uet_decode(&p, b, vecs[i].len), URNIC_UET_R_OK);
			n = encode_pkt(&p, again, sizeof(again));
			CHECK(n <= vecs[i].len && !memcmp(again, b, n));
		}
	}
	CHECK(refusals > 0);
}

struct rule {
	size_t vec;
	size_t byte;
	uint8_t and_mask, or_bits;
	enum urnic_uet_reason want;
};

/* Each rule broken once, on a packet that keeps every other rule. */
static const struct rule rules[] = {
	{ 0, 0, 0x07, 0x00, URNIC_UET_R_TYPE },	       /* type 0 */
	{ 0, 0, 0x07, 0xa0, URNIC_UET_R_TYPE },	       /* type 20 */
	{ 0, 0, 0x07, 0x08, URNIC_UET_R_UNSUPPORTED }, /* TSS */
	{ 0, 0, 0x07, 0x48, URNIC_UET_R_UNSUPPORTED }, /* ACK_CCX */
	{ 0, 0, 0x07, 0x60, URNIC_UET_R_UNSUPPORTED }, /* NACK_CCX */
	{ 0, 1, 0xff, 0x40, URNIC_UET_R_RESERVED },    /* request flag 0x40 */
	{ 0, 1, 0xff, 0x01, URNIC_UET_R_RESERVED },    /* request flag 0x01 */
	{ 1, 1, 0x7f, 0x00, URNIC_UET_R_NEXT_HDR },    /* a request with no SES header */
	{ 0, 0, 0xf8, 0x04, URNIC_UET_R_NEXT_HDR },    /* next header 9 (0x04 << 1 | 1) */
	{ 1, 10, 0xff, 0x80, URNIC_UET_R_RESERVED },   /* pdc_info's reserved bit */
	{ 2, 1, 0xff, 0x06, URNIC_UET_R_ACK_REQ },     /* clear and close */
	{ 2, 1, 0xff, 0x01, URNIC_UET_R_RESERVED },    /* ACK flag 0x01 */
	{ 2, 1, 0xff, 0x40, URNIC_UET_R_RESERVED },    /* EPSN on ACK_CC */
	{ 2, 0, 0xff, 0x01, URNIC_UET_R_NEXT_HDR },    /* an ACK with a request header */
	{ 2, 12, 0x0f, 0x20, URNIC_UET_R_CC_TYPE },    /* cc_type 2 */
	{ 2, 12, 0xf0, 0x01, URNIC_UET_R_RESERVED },   /* cc_flags */
	{ 9, 28, 0xff, 0x01, URNIC_UET_R_RESERVED },   /* CREDIT's reserved bits */
	{ 3, 2, 0x00, 0x00, URNIC_UET_R_NACK_CODE },   /* NACK code 0 */
	{ 3, 2, 0x00, 0x0c, URNIC_UET_R_NACK_CODE },
	{ 3, 2, 0x00, 0x1b, URNIC_UET_R_NACK_CODE },
	{ 3, 2, 0x00, 0xfc, URNIC_UET_R_NACK_CODE },
	{ 3, 1, 0xff, 0x08, URNIC_UET_R_RESERVED }, /* NT with PDC IDs */
	{ 3, 1, 0xff, 0x80, URNIC_UET_R_NEXT_HDR }, /* a NACK with an SES header */
	{ 3, 1, 0xff, 0x40, URNIC_UET_R_RESERVED },
	{ 4, 0, 0xf8, 0x05, URNIC_UET_R_CTRL_TYPE },	/* control type 10 */
	{ 4, 0, 0xf8, 0x00, URNIC_UET_R_RESERVED },	/* NOP with probe_opaque set */
	{ 4, 1, 0xff, 0x40, URNIC_UET_R_RESERVED },	/* CTRL flag 0x40 */
	{ 5, 3, 0xff, 0x01, URNIC_UET_R_RESERVED },	/* RUDI's reserved bytes */
	{ 5, 1, 0xff, 0x08, URNIC_UET_R_RESERVED },	/* RUDI flag */
	{ 6, 1, 0xff, 0x01, URNIC_UET_R_RESERVED },	/* UUD flags */
	{ 6, 2, 0xff, 0x80, URNIC_UET_R_RESERVED },	/* UUD's reserved bytes */
	{ 0, 13, 0x3f, 0x40, URNIC_UET_R_SES_VERSION }, /* SES version 1 */
	{ 0, 12, 0xff, 0x80, URNIC_UET_R_SES_RESERVED },
	{ 0, 12, 0xc0, 0x12, URNIC_UET_R_SES_OPCODE },
	{ 0, 20, 0xff, 0x10, URNIC_UET_R_SES_RESERVED }, /* above pid_on_fep */
	{ 0, 22, 0xff, 0x80, URNIC_UET_R_SES_RESERVED }, /* above resource_index */
	{ 1, 14, 0xff, 0x40, URNIC_UET_R_SES_RESERVED }, /* REQ_SMALL's length */
	{ 7, 16, 0x3f, 0x80, URNIC_UET_R_SES_LIST },
	{ 7, 16, 0xc0, 0x04, URNIC_UET_R_SES_OPCODE }, /* response opcode 4 */
	{ 7, 17, 0xc0, 0x25, URNIC_UET_R_SES_RETURN_CODE },
	{ 9, 42, 0xff, 0x40, URNIC_UET_R_SES_RESERVED }, /* RSP_DATA's payload length */
	{ 5, 10, 0xff, 0x80, URNIC_UET_R_SES_RESERVED }, /* RSP_DATA_SMALL's */
};

static void test_each_rule_named(void)
{
	uint8_t b[128];

	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		const struct rule *r = &rules[i];
		const struct vec *v = &vecs[r->vec];
		enum urnic_uet_reason got;

		memcpy(b, v->bytes, v->len);
		b[r->byte] = (uint8_t)((b[r->byte] & r->and_mask) | r->or_bits);
		got = refused(b, v->len);
		if (got != r->want) {
			fprintf(stderr, "rule %zu on %s: %s, not %s\n", i, v->what,
				urnic_uet_reason_name(got), urnic_uet_reason_name(r->want));
			CHECK(0);
		}
	}
}

/* The flags a type defines (uet_type.def's column), learnt from the decoder's refusals. */
static uint8_t allowed_flags(uint8_t type)
{
	uint8_t b[URNIC_UET_PDS_MAX_BYTES] = { 0 }, f = 0;

	for (unsigned bit = 0; bit < 7; bit++) {
		struct urnic_uet_pds h;
		size_t n;

		urnic_put_be16(b, (uint16_t)(type << 11 | 1u << bit));
		if (urnic_uet_pds_decode(&h, &n, b, sizeof(b)) != URNIC_UET_R_RESERVED)
			f |= (uint8_t)(1u << bit);
	}
	return f;
}

/* Random values in every field the type (and its flags) carries; the rest zero, as the
 * decoder leaves them. */
static void random_pds(struct urnic_uet_pds *h, uint8_t type, uint8_t flags, uint8_t next,
		       struct wire_rng *r)
{
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->flags = flags;
	h->next = next;
	switch (type) {
	case URNIC_UET_ACK:
	case URNIC_UET_ACK_CC:
		h->cack_psn = wire_rng_u32(r);
		h->spdcid = (uint16_t)wire_rng_u32(r);
		h->dpdcid = (uint16_t)wire_rng_u32(r);
		if (flags & URNIC_UET_F_P)
			h->probe_opaque = (uint16_t)wire_rng_u32(r);
		else
			h->ack_psn_offset = (int16_t)wire_rng_u32(r);
		if (flags & URNIC_UET_F_EPSN)
			h->payload = wire_rng_u32(r);
		if (type == URNIC_UET_ACK)
			return;
		h->cc_type = (uint8_t)wire_rng_below(r, 2);
		h->mpr = (uint8_t)wire_rng_u32(r);
		h->sack_psn_offset = (int16_t)wire_rng_u32(r);
		h->sack_bitmap = wire_rng_u64(r);
		h->ack_cc_state = wire_rng_u64(r);
		if (h->cc_type == URNIC_UET_CC_CREDIT)
			h->ack_cc_state &= ~0x000000ffffff0000ull;
		return;
	case URNIC_UET_NACK:
		h->nack_code = (uint8_t)(1 + wire_rng_below(r, URNIC_UET_NACK_RCVR_INFER_LOSS));
		if (h->nack_code == 0x0c)
			h->nack_code = URNIC_UET_NACK_EXP_FATAL;
		h->vendor_code = (uint8_t)wire_rng_u32(r);
		h->nack_psn = wire_rng_u32(r);
		h->payload = wire_rng_u32(r);
		if (!(flags & URNIC_UET_F_NT)) {
			h->spdcid = (uint16_t)wire_rng_u32(r);
			h->dpdcid = (uint16_t)wire_rng_u32(r);
		}
		return;
	case URNIC_UET_RUDI_REQ:
	case URNIC_UET_RUDI_RESP:
		h->pkt_id = wire_rng_u32(r);
		return;
	case URNIC_UET_UUD_REQ:
		return;
	default: /* requests and CTRL */
		break;
	}
	h->psn = wire_rng_u32(r);
	h->spdcid = (uint16_t)wire_rng_u32(r);
	if (flags & URNIC_UET_F_SYN) {
		h->use_rsv_pdc = wire_rng_u32(r) & 1;
		h->psn_offset = (uint16_t)wire_rng_below(r, URNIC_UET_PSN_OFFSET_MAX + 1);
	} else {
		h->dpdcid = (uint16_t)wire_rng_u32(r);
	}
	if (type == URNIC_UET_CTRL) {
		h->payload = wire_rng_u32(r);
		if (next == URNIC_UET_CTRL_PROBE)
			h->probe_opaque = (uint16_t)wire_rng_u32(r);
		return;
	}
	h->clear_psn_offset = (int16_t)wire_rng_u32(r);
	if (type == URNIC_UET_RUD_CC_REQ || type == URNIC_UET_ROD_CC_REQ) {
		h->ccc_id = (uint8_t)wire_rng_u32(r);
		h->credit_target = wire_rng_below(r, 1u << 24);
	}
}

/* The same for the SES header next names. */
static void random_ses(struct urnic_uet_ses *s, uint8_t next, struct wire_rng *r)
{
	memset(s, 0, sizeof(*s));
	s->next = next;
	s->ri_generation = (uint8_t)wire_rng_u32(r);
	s->job_id = wire_rng_below(r, 1u << 24);
	if (next == URNIC_UET_NEXT_REQ_STD || next == URNIC_UET_NEXT_RSP ||
	    next == URNIC_UET_NEXT_RSP_DATA)
		s->msg_id = (uint16_t)wire_rng_u32(r);
	if (next != URNIC_UET_NEXT_REQ_STD && next != URNIC_UET_NEXT_RSP)
		s->length14 = (uint16_t)wire_rng_below(r, URNIC_UET_LEN14_MAX + 1);
	if (next <= URNIC_UET_NEXT_REQ_STD) {
		s->opcode = (uint8_t)wire_rng_below(r, URNIC_UET_SES_OPCODE_MAX + 1);
		s->flags = (uint8_t)wire_rng_below(r, 64);
		s->pid_on_fep = (uint16_t)wire_rng_below(r, 4096);
		s->resource_index = (uint16_t)wire_rng_below(r, 4096);
		if (next != URNIC_UET_NEXT_REQ_MEDIUM)
			s->buffer_offset = wire_rng_u64(r);
		if (next != URNIC_UET_NEXT_REQ_SMALL) {
			s->header_data = wire_rng_u64(r);
			s->initiator = wire_rng_u32(r);
			s->mem_key = wire_rng_u64(r);
		}
		if (next == URNIC_UET_NEXT_REQ_STD)
			s->request_length = wire_rng_u32(r);
		return;
	}
	s->list = (uint8_t)wire_rng_below(r, 2);
	s->rsp_opcode = (uint8_t)wire_rng_below(r, 4);
	s->return_code = (uint8_t)wire_rng_below(r, URNIC_UET_RC_MAX + 1);
	if (next == URNIC_UET_NEXT_RSP)
		s->mod_len = wire_rng_u32(r);
	if (next == URNIC_UET_NEXT_RSP_DATA) {
		s->read_msg_id = (uint16_t)wire_rng_u32(r);
		s->mod_len = wire_rng_u32(r);
		s->msg_offset = wire_rng_u32(r);
	}
	if (next == URNIC_UET_NEXT_RSP_DATA_SMALL)
		s->orig_req_psn = wire_rng_u32(r);
}

static FILE *pcap_out;
static uint64_t pcap_ts = 1700000000000000000ull;

/* One UET datagram in an Ethernet/IPv4/UDP frame of the capture, when one is written. */
static void capture(const uint8_t *udp_payload, size_t len, uint16_t entropy)
{
	static uint8_t block[2048];
	uint8_t hdr[42] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00, 0x45, 0 };
	size_t n;

	if (!pcap_out)
		return;
	urnic_put_be16(hdr + 16, (uint16_t)(20 + 8 + len));
	hdr[22] = 64;
	hdr[23] = 17;
	memcpy(hdr + 26, (const uint8_t[]){ 127, 0, 0, 2, 127, 0, 0, 3 }, 8);
	/* RFC 1071 checksum of the IPv4 header. */
	{
		uint32_t sum = 0;

		for (unsigned i = 14; i < 34; i += 2)
			sum += urnic_get_be16(hdr + i);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		urnic_put_be16(hdr + 24, (uint16_t)~sum);
	}
	urnic_put_be16(hdr + 34, entropy);
	urnic_put_be16(hdr + 36, URNIC_UET_UDP_PORT);
	urnic_put_be16(hdr + 38, (uint16_t)(8 + len));
	CHECK(urnic_pcapng_epb_bytes((uint32_t)(sizeof(hdr) + len), 0) <= sizeof(block));
	n = urnic_pcapng_epb(block, 0, pcap_ts++, hdr, sizeof(hdr), udp_payload, (uint32_t)len,
			     URNIC_PCAPNG_OUTBOUND, NULL);
	CHECK(fwrite(block, 1, n, pcap_out) == n);
}

/* Field by field: struct padding is not compared. */
#define SAME(a, b, f) ((a)->f == (b)->f)
static bool same_pds(const struct urnic_uet_pds *a, const struct urnic_uet_pds *b)
{
	return SAME(a, b, type) && SAME(a, b, next) && SAME(a, b, flags) &&
	       SAME(a, b, clear_psn_offset) && SAME(a, b, psn) && SAME(a, b, spdcid) &&
	       SAME(a, b, dpdcid) && SAME(a, b, use_rsv_pdc) && SAME(a, b, psn_offset) &&
	       SAME(a, b, ccc_id) && SAME(a, b, credit_target) && SAME(a, b, ack_psn_offset) &&
	       SAME(a, b, probe_opaque) && SAME(a, b, cack_psn) && SAME(a, b, cc_type) &&
	       SAME(a, b, mpr) && SAME(a, b, sack_psn_offset) && SAME(a, b, sack_bitmap) &&
	       SAME(a, b, ack_cc_state) && SAME(a, b, nack_code) && SAME(a, b, vendor_code) &&
	       SAME(a, b, nack_psn) && SAME(a, b, payload) && SAME(a, b, pkt_id);
}

static bool same_ses(const struct urnic_uet_ses *a, const struct urnic_uet_ses *b)
{
	return SAME(a, b, next) && SAME(a, b, opcode) && SAME(a, b, flags) &&
	       SAME(a, b, pid_on_fep) && SAME(a, b, resource_index) && SAME(a, b, buffer_offset) &&
	       SAME(a, b, initiator) && SAME(a, b, mem_key) && SAME(a, b, header_data) &&
	       SAME(a, b, request_length) && SAME(a, b, list) && SAME(a, b, rsp_opcode) &&
	       SAME(a, b, return_code) && SAME(a, b, read_msg_id) && SAME(a, b, mod_len) &&
	       SAME(a, b, msg_offset) && SAME(a, b, orig_req_psn) && SAME(a, b, msg_id) &&
	       SAME(a, b, length14) && SAME(a, b, ri_generation) && SAME(a, b, job_id);
}

/* Every supported type with every flag subset it defines and every next header it may
 * carry, random fields: encode, decode, compare, encode again. */
static void test_random_roundtrip(void)
{
	struct wire_rng r = { .state = 0x5eed0e7 };
	unsigned done = 0;

	for (uint8_t type = 1; type < 32; type++) {
		uint8_t flags = allowed_flags(type);

		if (!urnic_uet_pds_bytes(type, 0))
			continue;
		for (unsigned f = 0; f < 128; f++) {
			if ((f & ~flags) ||
			    (f & (URNIC_UET_F_REQ_CLEAR | URNIC_UET_F_REQ_CLOSE)) == 0x06)
				continue;
			for (uint8_t next = 0; next < 16; next++) {
				struct urnic_uet_pkt in = { 0 }, out;
				uint8_t buf[URNIC_UET_PDS_MAX_BYTES + URNIC_UET_SES_MAX_BYTES + 4],
					again[sizeof(buf)];
				ssize_t a, b = 0;
				bool ses;

				random_pds(&in.pds, type, (uint8_t)f, next, &r);
				a = urnic_uet_pds_encode(&in.pds, buf, sizeof(buf));
				if (a == -EINVAL)
					continue; /* a next header the type may not carry */
				CHECK(a > 0);
				CHECK_EQ(urnic_uet_pds_encode(&in.pds, buf, (size_t)a - 1),
					 -ENOBUFS);
				ses = type != URNIC_UET_CTRL && next != URNIC_UET_NEXT_NONE;
				if (ses) {
					random_ses(&in.ses, next, &r);
					b = urnic_uet_ses_encode(&in.ses, buf + a,
								 sizeof(buf) - (size_t)a);
					CHECK(b > 0);
				}
				memcpy(buf + a + b, "pay!", 4);
				CHECK_EQ(urnic_uet_decode(&out, buf, (size_t)(a + b + 4)),
					 URNIC_UET_R_OK);
				CHECK(same_pds(&out.pds, &in.pds));
				CHECK(!ses || same_ses(&out.ses, &in.ses));
				CHECK(out.payload_bytes == 4 && !memcmp(out.payload, "pay!", 4));
				CHECK_EQ(encode_pkt(&out, again, sizeof(again)), a + b);
				CHECK(!memcmp(again, buf, (size_t)(a + b)));
				capture(buf, (size_t)(a + b + 4), (uint16_t)(0xc000 | done));
				done++;
			}
		}
	}
	printf("  %u random headers round-tripped\n", done);
	CHECK(done > 200);
}

static void test_encode_refusals(void)
{
	struct urnic_uet_pds h = { .type = URNIC_UET_RUD_REQ, .next = URNIC_UET_NEXT_REQ_STD };
	struct urnic_uet_ses s = { .next = URNIC_UET_NEXT_REQ_STD };
	uint8_t buf[64];

	CHECK_EQ(urnic_uet_pds_encode(&h, buf, sizeof(buf)), 12);
	h.type = URNIC_UET_TSS;
	CHECK_EQ(urnic_uet_pds_encode(&h, buf, sizeof(buf)), -EINVAL);
	h.type = 31;
	CHECK_EQ(urnic_uet_pds_encode(&h, buf, sizeof(buf)), -EINVAL);
	h.type = URNIC_UET_RUD_REQ;
	h.flags = 0x40;
	CHECK_EQ(urnic_uet_pds_encode(&h, buf, sizeof(buf)), -EINVAL);
	h.flags = URNIC_UET_F_SYN;
	h.psn_offset = URNIC_UET_PSN_OFFSET_MAX + 1;
	CHECK_EQ(urnic_uet_pds_encode(&h, buf, sizeof(buf)), -EINVAL);
	h.psn_offset = 0;
	h.next = URNIC_UET_NEXT_NONE;
	CHECK_EQ(urnic_uet_pds_encode(&h, buf, sizeof(buf)), -EINVAL);
	h = (struct urnic_uet_pds){ .type = URNIC_UET_ACK, .flags = 0x06 };
	CHECK_EQ(urnic_uet_pds_encode(&h, buf, sizeof(buf)), -EINVAL);
	h = (struct urnic_uet_pds){ .type = URNIC_UET_ACK_CC, .cc_type = 2 };
	CHECK_EQ(urnic_uet_pds_encode(&h, buf, sizeof(buf)), -EINVAL);
	h.cc_type = URNIC_UET_CC_CREDIT;
	h.ack_cc_state = 1ull << 20;
	CHECK_EQ(urnic_uet_pds_encode(&h, buf, sizeof(buf)), -EINVAL);
	h = (struct urnic_uet_pds){ .type = URNIC_UET_NACK, .nack_code = 0x0c };
	CHECK_EQ(urnic_uet_pds_encode(&h, buf, sizeof(buf)), -EINVAL);
	h.nack_code = URNIC_UET_NACK_TRIMMED;
	h.flags = URNIC_UET_F_NT;
	h.dpdcid = 1;
	CHECK_EQ(urnic_uet_pds_encode(&h, buf, sizeof(buf)), -EINVAL);
	h = (struct urnic_uet_pds){ .type = URNIC_UET_CTRL, .next = URNIC_UET_CTRL_COUNT };
	CHECK_EQ(urnic_uet_pds_encode(&h, buf, sizeof(buf)), -EINVAL);

	CHECK_EQ(urnic_uet_ses_encode(&s, buf, sizeof(buf)), 44);
	CHECK_EQ(urnic_uet_ses_encode(&s, buf, 43), -ENOBUFS);
	s.opcode = URNIC_UET_SES_OPCODE_MAX + 1;
	CHECK_EQ(urnic_uet_ses_encode(&s, buf, sizeof(buf)), -EINVAL);
	s.opcode = 0;
	s.pid_on_fep = 0x1000;
	CHECK_EQ(urnic_uet_ses_encode(&s, buf, sizeof(buf)), -EINVAL);
	s = (struct urnic_uet_ses){ .next = URNIC_UET_NEXT_REQ_SMALL, .length14 = 0x4000 };
	CHECK_EQ(urnic_uet_ses_encode(&s, buf, sizeof(buf)), -EINVAL);
	s = (struct urnic_uet_ses){ .next = URNIC_UET_NEXT_RSP, .return_code = 0x25 };
	CHECK_EQ(urnic_uet_ses_encode(&s, buf, sizeof(buf)), -EINVAL);
	s.return_code = 0;
	s.job_id = 1u << 24;
	CHECK_EQ(urnic_uet_ses_encode(&s, buf, sizeof(buf)), -EINVAL);
	s = (struct urnic_uet_ses){ .next = URNIC_UET_NEXT_NONE };
	CHECK_EQ(urnic_uet_ses_encode(&s, buf, sizeof(buf)), -EINVAL);
}

static void test_tables(void)
{
	CHECK(!strcmp(urnic_uet_type_name(URNIC_UET_ACK_CC), "ACK_CC"));
	CHECK(!strcmp(urnic_uet_type_name(0), "?") && !strcmp(urnic_uet_type_name(200), "?"));
	CHECK(!strcmp(urnic_uet_reason_name(URNIC_UET_R_NACK_CODE), "NACK_CODE"));
	CHECK(!strcmp(urnic_uet_reason_name(URNIC_UET_R_COUNT), "?"));
	CHECK_EQ(urnic_uet_pds_bytes(URNIC_UET_ACK, URNIC_UET_F_EPSN), 16);
	CHECK_EQ(urnic_uet_pds_bytes(URNIC_UET_ACK_CC, URNIC_UET_F_EPSN), 32);
	CHECK_EQ(urnic_uet_pds_bytes(URNIC_UET_TSS, 0), 0);
	CHECK_EQ(urnic_uet_ses_bytes(URNIC_UET_NEXT_NONE), 0);
	CHECK_EQ(urnic_uet_ses_bytes(7), 0);
	CHECK_EQ(allowed_flags(URNIC_UET_NACK), URNIC_UET_F_M | URNIC_UET_F_RETX | URNIC_UET_F_NT);
}

/* One field of a decoded packet, by the dissector's name (tools/wireshark/uet.lua). */
struct field {
	const char *name;
	unsigned long long (*get)(const struct urnic_uet_pkt *p);
	bool is_signed;
};

#define F_PDS(fname, member)                                                                       \
	static unsigned long long get_##fname(const struct urnic_uet_pkt *p)                       \
	{                                                                                          \
		return (unsigned long long)p->pds.member;                                          \
	}
#define F_SES(fname, member)                                                                       \
	static unsigned long long get_##fname(const struct urnic_uet_pkt *p)                       \
	{                                                                                          \
		return (unsigned long long)p->ses.member;                                          \
	}
F_PDS(type, type)
F_PDS(flags, flags)
F_PDS(psn, psn)
F_PDS(spdcid, spdcid)
F_PDS(dpdcid, dpdcid)
F_PDS(psn_offset, psn_offset)
F_PDS(cack_psn, cack_psn)
F_PDS(mpr, mpr)
F_PDS(sack_bitmap, sack_bitmap)
F_PDS(ack_cc_state, ack_cc_state)
F_PDS(nack_code, nack_code)
F_PDS(probe_opaque, probe_opaque)
F_PDS(pkt_id, pkt_id)
F_PDS(ccc_id, ccc_id)
F_PDS(credit_target, credit_target)
F_PDS(cc_type, cc_type)
F_SES(opcode, opcode)
F_SES(msg_id, msg_id)
F_SES(job_id, job_id)
F_SES(resource_index, resource_index)
F_SES(pid_on_fep, pid_on_fep)
F_SES(buffer_offset, buffer_offset)
F_SES(memory_key, mem_key)
F_SES(request_length, request_length)
F_SES(return_code, return_code)
F_SES(orig_req_psn, orig_req_psn)

static unsigned long long get_clear_psn_offset(const struct urnic_uet_pkt *p)
{
	return (unsigned long long)(long long)p->pds.clear_psn_offset;
}

static unsigned long long get_ack_psn_offset(const struct urnic_uet_pkt *p)
{
	return (unsigned long long)(long long)p->pds.ack_psn_offset;
}

static unsigned long long get_sack_psn_offset(const struct urnic_uet_pkt *p)
{
	return (unsigned long long)(long long)p->pds.sack_psn_offset;
}

static unsigned long long get_nack_psn(const struct urnic_uet_pkt *p)
{
	return p->pds.nack_psn;
}

static const struct field fields[] = {
	{ "uet.pds.type", get_type, false },
	{ "uet.pds.flags", get_flags, false },
	{ "uet.pds.psn", get_psn, false },
	{ "uet.pds.spdcid", get_spdcid, false },
	{ "uet.pds.dpdcid", get_dpdcid, false },
	{ "uet.pds.psn_offset", get_psn_offset, false },
	{ "uet.pds.clear_psn_offset", get_clear_psn_offset, true },
	{ "uet.pds.ack_psn_offset", get_ack_psn_offset, true },
	{ "uet.pds.sack_psn_offset", get_sack_psn_offset, true },
	{ "uet.pds.cack_psn", get_cack_psn, false },
	{ "uet.pds.mpr", get_mpr, false },
	{ "uet.pds.sack_bitmap", get_sack_bitmap, false },
	{ "uet.pds.ack_cc_state", get_ack_cc_state, false },
	{ "uet.pds.nack_code", get_nack_code, false },
	{ "uet.pds.nack_psn", get_nack_psn, false },
	{ "uet.pds.nack_pkt_id", get_nack_psn, false },
	{ "uet.pds.probe_opaque", get_probe_opaque, false },
	{ "uet.pds.pkt_id", get_pkt_id, false },
	{ "uet.pds.ccc_id", get_ccc_id, false },
	{ "uet.pds.credit_target", get_credit_target, false },
	{ "uet.pds.cc_type", get_cc_type, false },
	{ "uet.ses.opcode", get_opcode, false },
	{ "uet.ses.msg_id", get_msg_id, false },
	{ "uet.ses.job_id", get_job_id, false },
	{ "uet.ses.resource_index", get_resource_index, false },
	{ "uet.ses.pid_on_fep", get_pid_on_fep, false },
	{ "uet.ses.buffer_offset", get_buffer_offset, false },
	{ "uet.ses.memory_key", get_memory_key, false },
	{ "uet.ses.request_length", get_request_length, false },
	{ "uet.ses.rsp.return_code", get_return_code, false },
	{ "uet.ses.rsp.orig_req_psn", get_orig_req_psn, false },
};

/* The fields an independently written capture lists (FRAME FIELD VALUE, tests/wire/
 * uet_vectors.py), compared with what this decoder makes of its frames; fields it does
 * not name here are the dissector's alone. */
static int compare_expected(const char *pcap_path, const char *expected_path)
{
	static struct urnic_uet_pkt pkts[256];
	static bool have[256];
	struct wire_pcap pc;
	struct wire_frame fr;
	struct wire_udp u;
	FILE *f = fopen(expected_path, "r");
	char line[256], name[128], value[64];
	unsigned frame, compared = 0;

	CHECK(f && wire_pcap_open(&pc, pcap_path) == 0);
	while (wire_pcap_next(&pc, &fr) == 1) {
		CHECK(fr.frame_no < 256 && wire_frame_udp(&fr, &u));
		CHECK_EQ(u.dport, URNIC_UET_UDP_PORT);
		if (urnic_uet_decode(&pkts[fr.frame_no], u.payload, u.payload_bytes) !=
		    URNIC_UET_R_OK) {
			fprintf(stderr, "frame %u refused: %s\n", fr.frame_no,
				urnic_uet_reason_name(urnic_uet_decode(
					&pkts[fr.frame_no], u.payload, u.payload_bytes)));
			CHECK(0);
		}
		have[fr.frame_no] = true;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %127s %63s", &frame, name, value) != 3 || line[0] == '#' ||
		    !strcmp(value, "-"))
			continue;
		CHECK(frame < 256 && have[frame]);
		for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
			unsigned long long want;

			if (strcmp(fields[i].name, name))
				continue;
			want = fields[i].is_signed ? (unsigned long long)strtoll(value, NULL, 10)
						   : strtoull(value, NULL, 10);
			if (fields[i].get(&pkts[frame]) != want) {
				fprintf(stderr, "frame %u %s: expected %s, decoded %llu\n", frame,
					name, value, fields[i].get(&pkts[frame]));
				CHECK(0);
			}
			compared++;
		}
	}
	fclose(f);
	wire_pcap_close(&pc);
	printf("ok %u fields of %s as the decoder reads them\n", compared, pcap_path);
	CHECK(compared > 20);
	return 0;
}

/* Every frame of a capture of malformed datagrams is refused; the reasons, counted. */
static int refuse_all(const char *pcap_path)
{
	unsigned count[URNIC_UET_R_COUNT] = { 0 }, frames = 0;
	struct wire_pcap pc;
	struct wire_frame fr;
	struct wire_udp u;

	CHECK(wire_pcap_open(&pc, pcap_path) == 0);
	while (wire_pcap_next(&pc, &fr) == 1) {
		enum urnic_uet_reason r;

		CHECK(wire_frame_udp(&fr, &u) && u.dport == URNIC_UET_UDP_PORT);
		r = refused(u.payload, u.payload_bytes);
		if (r == URNIC_UET_R_OK) {
			fprintf(stderr, "frame %u accepted\n", fr.frame_no);
			CHECK(0);
		}
		count[r]++;
		frames++;
	}
	wire_pcap_close(&pc);
	printf("ok %u frames of %s refused:", frames, pcap_path);
	for (unsigned r = 1; r < URNIC_UET_R_COUNT; r++)
		if (count[r])
			printf(" %s %u", urnic_uet_reason_name((enum urnic_uet_reason)r), count[r]);
	printf("\n");
	CHECK(frames > 0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--refuse"))
		return refuse_all(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "--expected"))
		return compare_expected(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "--pcap")) {
		static uint8_t hdr[URNIC_PCAPNG_HDR_BLOCK_MAX];
		size_t n;

		pcap_out = fopen(argv[2], "wb");
		CHECK(pcap_out);
		n = urnic_pcapng_shb(hdr, "test_wire_uet");
		CHECK(fwrite(hdr, 1, n, pcap_out) == n);
		n = urnic_pcapng_idb(hdr, "uet", "UET packets from the codec");
		CHECK(fwrite(hdr, 1, n, pcap_out) == n);
		for (size_t i = 0; i < NVECS; i++)
			capture(vecs[i].bytes, vecs[i].len, (uint16_t)(0xb000 + i));
	} else if (argc != 1) {
		fprintf(stderr, "usage: %s [--pcap OUT | --expected PCAP FILE | --refuse PCAP]\n",
			argv[0]);
		return 2;
	}
	RUN(test_hand_laid_packets);
	RUN(test_every_prefix_truncated);
	RUN(test_every_bit_refused_or_kept);
	RUN(test_each_rule_named);
	RUN(test_random_roundtrip);
	RUN(test_encode_refusals);
	RUN(test_tables);
	if (pcap_out)
		CHECK(fclose(pcap_out) == 0);
	return 0;
}
