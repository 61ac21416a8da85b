/* SPDX-License-Identifier: MIT */
/*
 * test_cm.c - CM MADs that break a rule are refused with the rule's name, and nothing is
 * written; every bit of a CM MAD is a field or a reserved bit (src/wire/cm.h).
 *
 * Each refusal reason of cm_reason.def is reached by a MAD (or rdma_cm header) that
 * breaks exactly that rule (IBTA 13.4.2 header, 12.6 / 12.11 field codes, Annex A11),
 * and the struct that would encode it is refused by urnic_cm_encode with the same
 * reason from urnic_cm_check. Every prefix of a MAD is TRUNCATED. Every single-bit flip
 * of a valid MAD either decodes to a MAD that encodes back to the flipped bytes, or is
 * refused; flips of the bits cm.def leaves uncovered are exactly the RESERVED_SET ones.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cmgen.h"
#include "wire/cma.h"

static unsigned reached[URNIC_CM_R_COUNT];

/* A valid MAD of attr, as bytes. */
static void sample(uint16_t attr, unsigned seed, uint8_t *buf, struct urnic_cm_mad *m)
{
	struct wire_rng rng = { seed };

	wire_cm_random(m, attr, &rng);
	CHECK_EQ(urnic_cm_encode(m, buf, URNIC_MAD_BYTES), URNIC_MAD_BYTES);
}

/* Decoding buf refuses it for reason want and leaves the output as it was. */
static void refused(const uint8_t *buf, size_t len, enum urnic_cm_reason want)
{
	struct urnic_cm_mad out, poison;
	enum urnic_cm_reason why = URNIC_CM_R_OK;

	memset(&poison, 0x5a, sizeof(poison));
	out = poison;
	CHECK_EQ(urnic_cm_decode(&out, buf, len, &why), -EBADMSG);
	if (why != want)
		fprintf(stderr, "refused for \"%s\", want \"%s\"\n", urnic_cm_reason_name(why),
			urnic_cm_reason_name(want));
	CHECK_EQ(why, want);
	CHECK(memcmp(&out, &poison, sizeof(out)) == 0);
	CHECK_EQ(urnic_cm_decode(&out, buf, len, NULL), -EBADMSG); /* why may be NULL */
	reached[want]++;
}

/* The struct m is refused by urnic_cm_check for want, and urnic_cm_encode with -EINVAL. */
static void not_encoded(const struct urnic_cm_mad *m, enum urnic_cm_reason want)
{
	uint8_t buf[URNIC_MAD_BYTES];

	CHECK_EQ(urnic_cm_check(m), want);
	CHECK_EQ(urnic_cm_encode(m, buf, sizeof(buf)), -EINVAL);
	reached[want]++;
}

static void header_rules_are_refused_by_name(void)
{
	static const struct {
		unsigned at;
		uint8_t value;
		enum urnic_cm_reason why;
	} cases[] = {
		{ 0, 2, URNIC_CM_R_BASE_VERSION },
		{ 1, 0x04, URNIC_CM_R_MGMT_CLASS },
		{ 1, 0x81, URNIC_CM_R_MGMT_CLASS },
		{ 2, 1, URNIC_CM_R_CLASS_VERSION },
		{ 3, 0x01, URNIC_CM_R_METHOD },
		{ 3, 0x83, URNIC_CM_R_METHOD },
		{ 17, 0x01, URNIC_CM_R_ATTR_UNKNOWN },
		{ 17, 0x20, URNIC_CM_R_ATTR_UNKNOWN },
		{ 17, 0x19, URNIC_CM_R_ATTR_UNSUPPORTED },
		{ 17, 0x1a, URNIC_CM_R_ATTR_UNSUPPORTED },
		{ 18, 0x80, URNIC_CM_R_RESERVED_SET },
		{ 19, 0x01, URNIC_CM_R_RESERVED_SET },
	};
	struct urnic_cm_mad m, bad;
	uint8_t buf[URNIC_MAD_BYTES], cut[URNIC_MAD_BYTES];
	size_t i;

	sample(URNIC_CM_ATTR_RTU, 1, buf, &m);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(cut, buf, sizeof(cut));
		cut[cases[i].at] = cases[i].value;
		refused(cut, sizeof(cut), cases[i].why);
	}
	/* The same rules on the struct side. */
	bad = m;
	bad.hdr.base_version = 2;
	not_encoded(&bad, URNIC_CM_R_BASE_VERSION);
	bad = m;
	bad.hdr.mgmt_class = 0x04;
	not_encoded(&bad, URNIC_CM_R_MGMT_CLASS);
	bad = m;
	bad.hdr.class_version = 1;
	not_encoded(&bad, URNIC_CM_R_CLASS_VERSION);
	bad = m;
	bad.hdr.method = 0x83;
	not_encoded(&bad, URNIC_CM_R_METHOD);
	bad = m;
	bad.hdr.attr_id = 0x0001; /* ClassPortInfo: a Get, not a message */
	not_encoded(&bad, URNIC_CM_R_ATTR_UNKNOWN);
	bad.hdr.attr_id = URNIC_CM_ATTR_LAP;
	not_encoded(&bad, URNIC_CM_R_ATTR_UNSUPPORTED);
}

/* A MAD is exactly 256 bytes: every shorter prefix, and one byte more, is refused. */
static void every_prefix_and_a_longer_mad_are_refused(void)
{
	struct urnic_cm_mad m;
	uint8_t buf[URNIC_MAD_BYTES + 1];
	size_t a, len;

	for (a = 0; a < wire_cm_nattrs; a++) {
		sample(wire_cm_attrs[a], (unsigned)a + 10, buf, &m);
		for (len = 0; len < URNIC_MAD_BYTES; len++)
			refused(buf, len, URNIC_CM_R_TRUNCATED);
		buf[URNIC_MAD_BYTES] = 0;
		refused(buf, sizeof(buf), URNIC_CM_R_OVERLONG);
	}
}

/* Field values with reserved codes (IBTA 12.6 tables 106-108, 120; Annex A14). */
static void reserved_codes_are_refused_by_name(void)
{
	static const struct {
		uint16_t attr;
		unsigned byte;	     /* in the MAD */
		uint8_t mask, value; /* the byte's bits under mask become value */
		enum urnic_cm_reason why;
	} cases[] = {
		/* REQ byte 43 bits 1-2 transport, byte 51 bits 0-2 extended transport */
		{ URNIC_CM_ATTR_REQ, 24 + 43, 0x06, 0x06, URNIC_CM_R_TRANSPORT_RESERVED },
		{ URNIC_CM_ATTR_REQ, 24 + 51, 0x07, 0x01, URNIC_CM_R_TRANSPORT_RESERVED },
		{ URNIC_CM_ATTR_REQ, 24 + 51, 0x07, 0x05, URNIC_CM_R_TRANSPORT_RESERVED },
		/* REQ byte 50 bits 4-7: path MTU */
		{ URNIC_CM_ATTR_REQ, 24 + 50, 0xf0, 0x00, URNIC_CM_R_MTU_RESERVED },
		{ URNIC_CM_ATTR_REQ, 24 + 50, 0xf0, 0x60, URNIC_CM_R_MTU_RESERVED },
		{ URNIC_CM_ATTR_REQ, 24 + 50, 0xf0, 0xf0, URNIC_CM_R_MTU_RESERVED },
		{ URNIC_CM_ATTR_MRA, 24 + 8, 0xc0, 0xc0, URNIC_CM_R_MSG_CODE_RESERVED },
		{ URNIC_CM_ATTR_REJ, 24 + 8, 0xc0, 0xc0, URNIC_CM_R_MSG_CODE_RESERVED },
		{ URNIC_CM_ATTR_REJ, 24 + 9, 0xfe, 73 << 1, URNIC_CM_R_INFO_LENGTH },
		{ URNIC_CM_ATTR_REJ, 24 + 9, 0xfe, 127 << 1, URNIC_CM_R_INFO_LENGTH },
		{ URNIC_CM_ATTR_SIDR_REP, 24 + 5, 0xff, 73, URNIC_CM_R_INFO_LENGTH },
		{ URNIC_CM_ATTR_SIDR_REP, 24 + 5, 0xff, 255, URNIC_CM_R_INFO_LENGTH },
	};
	struct urnic_cm_mad m;
	uint8_t buf[URNIC_MAD_BYTES];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sample(cases[i].attr, (unsigned)i, buf, &m);
		if (cases[i].attr == URNIC_CM_ATTR_REQ) { /* start from RC, MTU 1024 */
			buf[24 + 43] &= 0xf9;
			buf[24 + 51] &= 0xf8;
			buf[24 + 50] = (uint8_t)((buf[24 + 50] & 0x0f) | 0x30);
		}
		buf[cases[i].byte] = (uint8_t)((buf[cases[i].byte] & ~cases[i].mask) |
					       (cases[i].value & cases[i].mask));
		refused(buf, sizeof(buf), cases[i].why);
	}
}

/* The same codes from the struct side, and values wider than their fields. */
static void reserved_codes_and_wide_values_are_not_encoded(void)
{
	struct wire_rng rng = { 77 };
	struct urnic_cm_mad m, bad;

	wire_cm_random(&m, URNIC_CM_ATTR_REQ, &rng);
	bad = m;
	bad.msg.req.transport_type = URNIC_CM_TRANSPORT_EXT;
	bad.msg.req.ext_transport_type = 2;
	not_encoded(&bad, URNIC_CM_R_TRANSPORT_RESERVED);
	bad = m;
	bad.msg.req.path_mtu = 6;
	not_encoded(&bad, URNIC_CM_R_MTU_RESERVED);
	bad = m;
	bad.msg.req.local_qpn = 1u << 24;
	not_encoded(&bad, URNIC_CM_R_FIELD_WIDTH);
	bad = m;
	bad.msg.req.primary.flow_label = 1u << 20;
	not_encoded(&bad, URNIC_CM_R_FIELD_WIDTH);
	bad = m;
	bad.msg.req.srq = 2;
	not_encoded(&bad, URNIC_CM_R_FIELD_WIDTH);

	wire_cm_random(&m, URNIC_CM_ATTR_REJ, &rng);
	m.msg.rej.ari_length = URNIC_CM_ARI_BYTES + 1;
	not_encoded(&m, URNIC_CM_R_INFO_LENGTH);
	wire_cm_random(&m, URNIC_CM_ATTR_MRA, &rng);
	m.msg.mra.message_mraed = 3;
	not_encoded(&m, URNIC_CM_R_MSG_CODE_RESERVED);
}

/* RD (transport 2) and XRC (3 with extended type 1) are codes IBTA defines: they decode. */
static void rd_and_xrc_requests_decode(void)
{
	struct urnic_cm_mad m, out;
	uint8_t buf[URNIC_MAD_BYTES];
	struct wire_rng rng = { 5 };

	wire_cm_random(&m, URNIC_CM_ATTR_REQ, &rng);
	m.msg.req.transport_type = URNIC_CM_TRANSPORT_RD;
	m.msg.req.ext_transport_type = 0;
	CHECK_EQ(urnic_cm_encode(&m, buf, sizeof(buf)), URNIC_MAD_BYTES);
	CHECK_EQ(urnic_cm_decode(&out, buf, sizeof(buf), NULL), URNIC_MAD_BYTES);
	CHECK_EQ(out.msg.req.transport_type, URNIC_CM_TRANSPORT_RD);
	m.msg.req.transport_type = URNIC_CM_TRANSPORT_EXT;
	m.msg.req.ext_transport_type = URNIC_CM_EXT_TRANSPORT_XRC;
	CHECK_EQ(urnic_cm_encode(&m, buf, sizeof(buf)), URNIC_MAD_BYTES);
	CHECK_EQ(urnic_cm_decode(&out, buf, sizeof(buf), NULL), URNIC_MAD_BYTES);
	CHECK(wire_cm_diff(&m, &out) == NULL);
}

/* Whether MAD bit i (MSB first from byte 0) is in a field of attr, by cmgen's table. */
static bool covered(uint16_t attr, unsigned i)
{
	size_t k;

	if (i < URNIC_MAD_HDR_BYTES * 8) /* header: all but the 16 bits after AttributeID */
		return i < 18 * 8 || i >= 20 * 8;
	i -= URNIC_MAD_HDR_BYTES * 8;
	for (k = 0; k < wire_cm_nfields; k++) {
		const struct wire_cm_field *f = &wire_cm_fields[k];

		if (f->attr_id == attr && i >= f->byte * 8 + f->bit &&
		    i < f->byte * 8 + f->bit + f->width)
			return true;
	}
	return false;
}

/* The reserved bits of each message, counted by hand from the IBTA 12.6 / 12.11 tables,
 * plus the header's 16: REQ byte 4, bytes 24-27, in each path 6 between flow label and
 * packet rate and 3 after SL, 3 after the primary ACK timeout, 2 after the alternate's
 * ACK timeout and SAPSupported; MRA 6
 * after Message MRAed and 3 after the timeout; REJ 6 after Message Rejected and 1 after
 * the ARI length; REP 4 after SRQ; DREQ byte 11; SIDR_REQ bytes 6-7. */
static unsigned reserved_bits(uint16_t attr)
{
	switch (attr) {
	case URNIC_CM_ATTR_REQ:
		return 16 + 8 + 32 + (6 + 3 + 3) + (6 + 3 + 2);
	case URNIC_CM_ATTR_MRA:
		return 16 + 6 + 3;
	case URNIC_CM_ATTR_REJ:
		return 16 + 6 + 1;
	case URNIC_CM_ATTR_REP:
		return 16 + 4;
	case URNIC_CM_ATTR_DREQ:
		return 16 + 8;
	case URNIC_CM_ATTR_SIDR_REQ:
		return 16 + 16;
	default: /* RTU, DREP, SIDR_REP: every data bit is a field */
		return 16;
	}
}

static void every_bit_is_a_field_or_reserved(void)
{
	struct urnic_cm_mad m, out;
	uint8_t buf[URNIC_MAD_BYTES], again[URNIC_MAD_BYTES];
	enum urnic_cm_reason why;
	unsigned i, reserved;
	size_t a;

	for (a = 0; a < wire_cm_nattrs; a++) {
		uint16_t attr = wire_cm_attrs[a];

		sample(attr, (unsigned)a + 20, buf, &m);
		reserved = 0;
		for (i = 0; i < URNIC_MAD_BYTES * 8; i++) {
			buf[i / 8] ^= (uint8_t)(0x80u >> (i % 8));
			if (urnic_cm_decode(&out, buf, sizeof(buf), &why) == URNIC_MAD_BYTES) {
				CHECK(covered(attr, i));
				CHECK_EQ(urnic_cm_encode(&out, again, sizeof(again)),
					 URNIC_MAD_BYTES);
				CHECK(memcmp(again, buf, sizeof(buf)) == 0);
			} else if (!covered(attr, i)) {
				CHECK_EQ(why, URNIC_CM_R_RESERVED_SET);
				reserved++;
			} else if (i >= URNIC_MAD_HDR_BYTES * 8) {
				/* A header flip may name another message, whose reserved
				 * bits the data sets: only a data field is never that. */
				CHECK(why != URNIC_CM_R_RESERVED_SET);
			}
			buf[i / 8] ^= (uint8_t)(0x80u >> (i % 8));
		}
		printf("  %s: %u reserved bits\n", urnic_cm_attr_name(attr), reserved);
		CHECK_EQ(reserved, reserved_bits(attr));
	}
}

/* IBTA 13.5: only UD SEND_ONLYs to QP 1 under the GSI Q_Key are MADs. */
static void only_gsi_packets_are_decoded(void)
{
	struct urnic_cm_mad m, out;
	struct urnic_pkt pkt;
	uint8_t buf[URNIC_MAD_BYTES];
	enum urnic_cm_reason why;

	sample(URNIC_CM_ATTR_DREQ, 3, buf, &m);
	memset(&pkt, 0, sizeof(pkt));
	pkt.bth.opcode = URNIC_OP_UD_SEND_ONLY;
	pkt.bth.dqpn = URNIC_GSI_QPN;
	pkt.deth.qkey = URNIC_GSI_QKEY;
	pkt.deth.sqpn = 1;
	pkt.payload = buf;
	pkt.payload_bytes = sizeof(buf);
	CHECK_EQ(urnic_cm_decode_pkt(&out, &pkt, &why), URNIC_MAD_BYTES);
	CHECK(why == URNIC_CM_R_OK && wire_cm_diff(&m, &out) == NULL);
	pkt.payload_bytes = 200;
	CHECK_EQ(urnic_cm_decode_pkt(&out, &pkt, &why), -EBADMSG);
	CHECK_EQ(why, URNIC_CM_R_TRUNCATED);
	pkt.payload_bytes = sizeof(buf);

	pkt.bth.dqpn = 2;
	CHECK_EQ(urnic_cm_decode_pkt(&out, &pkt, &why), -EBADMSG);
	CHECK_EQ(why, URNIC_CM_R_NOT_GSI);
	pkt.bth.dqpn = URNIC_GSI_QPN;
	pkt.deth.qkey = 0x80010001u;
	CHECK_EQ(urnic_cm_decode_pkt(&out, &pkt, &why), -EBADMSG);
	CHECK_EQ(why, URNIC_CM_R_NOT_GSI);
	pkt.deth.qkey = URNIC_GSI_QKEY;
	pkt.bth.opcode = URNIC_OP_UD_SEND_ONLY_WITH_IMMEDIATE;
	CHECK_EQ(urnic_cm_decode_pkt(&out, &pkt, &why), -EBADMSG);
	CHECK_EQ(why, URNIC_CM_R_NOT_GSI);
	reached[URNIC_CM_R_NOT_GSI]++;
}

/* rdma_cm's header (cma.c: cma_save_ip_info) and service IDs. */
static void cma_rules_are_refused_by_name(void)
{
	struct urnic_cma_hdr h = { .ip_version = 4, .src_port = 0x8f5e }, out, poison;
	uint8_t buf[URNIC_CMA_HDR_BYTES], bad[URNIC_CMA_HDR_BYTES];
	enum urnic_cm_reason why;
	enum urnic_rdma_ps ps = URNIC_RDMA_PS_UDP;
	uint16_t port = 1;
	size_t len;

	h.src_addr[15] = 12;
	h.dst_addr[15] = 11;
	CHECK_EQ(urnic_cma_hdr_encode(&h, buf, sizeof(buf)), URNIC_CMA_HDR_BYTES);
	memset(&poison, 0x5a, sizeof(poison));
	for (len = 0; len < sizeof(buf); len++) {
		out = poison;
		CHECK_EQ(urnic_cma_hdr_decode(&out, buf, len, &why), -EBADMSG);
		CHECK(why == URNIC_CM_R_CMA_TRUNCATED && !memcmp(&out, &poison, sizeof(out)));
	}
	reached[URNIC_CM_R_CMA_TRUNCATED]++;
	static const struct {
		unsigned at;
		uint8_t value;
		enum urnic_cm_reason why;
	} cases[] = {
		{ 0, 1, URNIC_CM_R_CMA_VERSION },
		{ 0, 0x10, URNIC_CM_R_CMA_VERSION },
		{ 1, 0x50, URNIC_CM_R_CMA_IP_VERSION },
		{ 1, 0x00, URNIC_CM_R_CMA_IP_VERSION },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(bad, buf, sizeof(bad));
		bad[cases[i].at] = cases[i].value;
		out = poison;
		CHECK_EQ(urnic_cma_hdr_decode(&out, bad, sizeof(bad), &why), -EBADMSG);
		CHECK(why == cases[i].why && !memcmp(&out, &poison, sizeof(out)));
		reached[cases[i].why]++;
	}
	/* What Linux does not read either: the reserved nibble, an IPv4 address's pad. They
	 * decode, as zeros. */
	memcpy(bad, buf, sizeof(bad));
	bad[1] = 0x41;
	bad[4] = 0xff;
	bad[30] = 0x01;
	out = poison;
	CHECK_EQ(urnic_cma_hdr_decode(&out, bad, sizeof(bad), &why), URNIC_CMA_HDR_BYTES);
	CHECK(why == URNIC_CM_R_OK && out.ip_version == 4 && out.src_port == h.src_port);
	CHECK(!memcmp(out.src_addr, h.src_addr, 16) && !memcmp(out.dst_addr, h.dst_addr, 16));
	h.src_addr[0] = 1; /* IPv4 with a pad: refused by encode */
	CHECK_EQ(urnic_cma_hdr_encode(&h, buf, sizeof(buf)), -EINVAL);
	h.ip_version = 6; /* the same bytes are a fine IPv6 address */
	CHECK_EQ(urnic_cma_hdr_encode(&h, buf, sizeof(buf)), URNIC_CMA_HDR_BYTES);
	CHECK_EQ(urnic_cma_hdr_encode(&h, buf, sizeof(buf) - 1), -ENOBUFS);
	h.ip_version = 5;
	CHECK_EQ(urnic_cma_hdr_encode(&h, buf, sizeof(buf)), -EINVAL);

	/* 0x0107: the IP protocol byte of a space rdma_cm does not have */
	CHECK_EQ(urnic_cma_service_id_decode(0x0000000001070000ull, &ps, &port, &why), -EBADMSG);
	CHECK(why == URNIC_CM_R_SERVICE_ID && ps == URNIC_RDMA_PS_UDP && port == 1);
	CHECK_EQ(urnic_cma_service_id_decode(0x0000000101060000ull, &ps, &port, &why), -EBADMSG);
	reached[URNIC_CM_R_SERVICE_ID]++;
}

/* Every refusal of cm_reason.def was reached above, and each has a text. */
static void every_reason_was_reached(void)
{
	unsigned r;

	for (r = 1; r < URNIC_CM_R_COUNT; r++) {
		if (!reached[r])
			fprintf(stderr, "reason \"%s\" never reached\n",
				urnic_cm_reason_name((enum urnic_cm_reason)r));
		CHECK(reached[r] > 0);
		CHECK(strcmp(urnic_cm_reason_name((enum urnic_cm_reason)r), "?") != 0);
	}
	CHECK(!strcmp(urnic_cm_reason_name(URNIC_CM_R_COUNT), "?"));
}

int main(void)
{
	RUN(header_rules_are_refused_by_name);
	RUN(every_prefix_and_a_longer_mad_are_refused);
	RUN(reserved_codes_are_refused_by_name);
	RUN(reserved_codes_and_wide_values_are_not_encoded);
	RUN(rd_and_xrc_requests_decode);
	RUN(every_bit_is_a_field_or_reserved);
	RUN(only_gsi_packets_are_decoded);
	RUN(cma_rules_are_refused_by_name);
	RUN(every_reason_was_reached);
	return 0;
}
