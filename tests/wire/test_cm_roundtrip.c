/* SPDX-License-Identifier: MIT */
/*
 * test_cm_roundtrip.c - random CM messages survive encode and decode unchanged; the
 * field table is a layout; rdma_cm headers and service IDs round-trip (src/wire/cm.h,
 * cma.h).
 *
 * cm.def must describe each message as IBTA 12.6 / 12.11 lay it out: fields in offset
 * order, none overlapping, the private data ending the 232 data bytes. For every message,
 * random structs with valid values encode to 256 bytes that decode to the same fields
 * and encode to the same bytes again; random values outside the rules are refused by
 * encode exactly when urnic_cm_check refuses them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cmgen.h"
#include "wire/cma.h"

#define ROUNDS 2000

static void fields_are_a_layout(void)
{
	size_t a, i;

	for (a = 0; a < wire_cm_nattrs; a++) {
		unsigned end = 0, last_end = 0, covered = 0;

		for (i = 0; i < wire_cm_nfields; i++) {
			const struct wire_cm_field *f = &wire_cm_fields[i];
			unsigned start = f->byte * 8 + f->bit;

			if (f->attr_id != wire_cm_attrs[a])
				continue;
			if (start < end)
				fprintf(stderr, "%s.%s overlaps or is out of order\n", f->msg,
					f->name);
			CHECK(start >= end);
			end = start + f->width;
			covered += f->width;
			CHECK(f->width <= 64 || f->size * 8 == f->width);
			last_end = end;
		}
		/* IBTA 12.6: the private data runs to the end of every message */
		CHECK_EQ(last_end, URNIC_MAD_DATA_BYTES * 8);
		CHECK(covered > 0);
		CHECK(urnic_cm_attr_name(wire_cm_attrs[a]) != NULL);
	}
	CHECK_EQ(wire_cm_nattrs, 9);
	CHECK(urnic_cm_attr_name(URNIC_CM_ATTR_LAP) == NULL);
	CHECK(!strcmp(urnic_cm_attr_name(URNIC_CM_ATTR_SIDR_REP), "SIDR_REP"));
}

static void random_messages_round_trip(void)
{
	struct wire_rng rng = { 0xc0ffee };
	struct urnic_cm_mad m, out;
	uint8_t buf[URNIC_MAD_BYTES], again[URNIC_MAD_BYTES];
	const char *diff;
	size_t a;
	int n;

	for (a = 0; a < wire_cm_nattrs; a++) {
		for (n = 0; n < ROUNDS; n++) {
			wire_cm_random(&m, wire_cm_attrs[a], &rng);
			CHECK_EQ(urnic_cm_check(&m), URNIC_CM_R_OK);
			CHECK_EQ(urnic_cm_encode(&m, buf, sizeof(buf)), URNIC_MAD_BYTES);
			memset(&out, 0xa5, sizeof(out));
			CHECK_EQ(urnic_cm_decode(&out, buf, sizeof(buf), NULL), URNIC_MAD_BYTES);
			diff = wire_cm_diff(&m, &out);
			if (diff)
				fprintf(stderr, "%s: %s differs\n",
					urnic_cm_attr_name(wire_cm_attrs[a]), diff);
			CHECK(diff == NULL);
			CHECK_EQ(urnic_cm_encode(&out, again, sizeof(again)), URNIC_MAD_BYTES);
			CHECK(memcmp(buf, again, sizeof(buf)) == 0);
		}
	}
}

/* Each field lands at its offset: a MAD with one field all ones differs from the MAD with
 * it zero in exactly the field's bits (fields where all ones is a reserved code skipped). */
static void each_field_lands_at_its_offset(void)
{
	struct urnic_cm_mad m;
	uint8_t base[URNIC_MAD_BYTES], buf[URNIC_MAD_BYTES];
	size_t i;
	unsigned b;

	for (i = 0; i < wire_cm_nfields; i++) {
		const struct wire_cm_field *f = &wire_cm_fields[i];
		unsigned start = (URNIC_MAD_HDR_BYTES + f->byte) * 8 + f->bit;

		urnic_cm_mad_init(&m, f->attr_id, 0);
		if (f->attr_id == URNIC_CM_ATTR_REQ)
			m.msg.req.path_mtu = 1; /* 0 is reserved */
		CHECK_EQ(urnic_cm_encode(&m, base, sizeof(base)), URNIC_MAD_BYTES);
		if (f->width > 64)
			memset((uint8_t *)&m.msg + f->off, 0xff, f->size);
		else
			wire_cm_set(&m, f,
				    f->width == 64 ? UINT64_MAX : (UINT64_C(1) << f->width) - 1);
		if (urnic_cm_check(&m) != URNIC_CM_R_OK)
			continue; /* all ones is a reserved code: covered by test_cm */
		CHECK_EQ(urnic_cm_encode(&m, buf, sizeof(buf)), URNIC_MAD_BYTES);
		for (b = 0; b < URNIC_MAD_BYTES * 8; b++) {
			int in = b >= start && b < start + f->width;
			int changed = ((base[b / 8] ^ buf[b / 8]) >> (7 - b % 8)) & 1;

			if (in != changed)
				fprintf(stderr, "%s.%s: bit %u\n", f->msg, f->name, b);
			CHECK_EQ(in, changed);
		}
	}
}

/* Random bytes in every field, reserved codes and too-wide values included: encode
 * refuses exactly what urnic_cm_check refuses, and never writes a MAD decode refuses. */
static void encode_refuses_what_check_refuses(void)
{
	struct wire_rng rng = { 0xbad };
	struct urnic_cm_mad m, out;
	uint8_t buf[URNIC_MAD_BYTES];
	unsigned refused = 0, k;
	size_t a;
	int n;

	for (a = 0; a < wire_cm_nattrs; a++) {
		for (n = 0; n < ROUNDS; n++) {
			wire_cm_random(&m, wire_cm_attrs[a], &rng);
			for (k = 0; k < 8; k++) /* scribble on the message's first 64 bytes */
				((uint8_t *)&m.msg)[wire_rng_below(&rng, 64)] =
					(uint8_t)wire_rng_u32(&rng);
			if (urnic_cm_check(&m) != URNIC_CM_R_OK) {
				CHECK_EQ(urnic_cm_encode(&m, buf, sizeof(buf)), -EINVAL);
				refused++;
				continue;
			}
			CHECK_EQ(urnic_cm_encode(&m, buf, sizeof(buf)), URNIC_MAD_BYTES);
			CHECK_EQ(urnic_cm_decode(&out, buf, sizeof(buf), NULL), URNIC_MAD_BYTES);
		}
	}
	printf("  %u of %u refused\n", refused, (unsigned)(wire_cm_nattrs * ROUNDS));
	CHECK(refused > 0);
	CHECK_EQ(urnic_cm_encode(&m, buf, URNIC_MAD_BYTES - 1), -ENOBUFS);
}

/* rdma_cm's header, IPv4 (cma_format_hdr: 12 zero bytes and the address) and IPv6. */
static void cma_headers_round_trip(void)
{
	struct wire_rng rng = { 6 };
	struct urnic_cma_hdr h, out;
	uint8_t buf[URNIC_CMA_HDR_BYTES + 4], again[URNIC_CMA_HDR_BYTES];
	int n, k;

	for (n = 0; n < ROUNDS; n++) {
		memset(&h, 0, sizeof(h));
		h.ip_version = n % 2 ? 6 : 4;
		h.src_port = (uint16_t)wire_rng_u32(&rng);
		for (k = h.ip_version == 4 ? 12 : 0; k < 16; k++) {
			h.src_addr[k] = (uint8_t)wire_rng_u32(&rng);
			h.dst_addr[k] = (uint8_t)wire_rng_u32(&rng);
		}
		memset(buf, 0xa5, sizeof(buf));
		CHECK_EQ(urnic_cma_hdr_encode(&h, buf, sizeof(buf)), URNIC_CMA_HDR_BYTES);
		CHECK_EQ(buf[URNIC_CMA_HDR_BYTES], 0xa5);
		CHECK_EQ(buf[0], 0);
		CHECK_EQ(buf[1], h.ip_version << 4);
		CHECK_EQ(buf[2] << 8 | buf[3], h.src_port);
		/* rdma_cm's private data follows the header: decode reads only 36 bytes */
		CHECK_EQ(urnic_cma_hdr_decode(&out, buf, sizeof(buf), NULL), URNIC_CMA_HDR_BYTES);
		CHECK(out.ip_version == h.ip_version && out.src_port == h.src_port);
		CHECK(!memcmp(out.src_addr, h.src_addr, 16) &&
		      !memcmp(out.dst_addr, h.dst_addr, 16));
		CHECK_EQ(urnic_cma_hdr_encode(&out, again, sizeof(again)), URNIC_CMA_HDR_BYTES);
		CHECK(memcmp(buf, again, sizeof(again)) == 0);
	}
}

/* cma_get_service_id(): ps << 16 | port, for the four port spaces. */
static void service_ids_round_trip(void)
{
	static const struct {
		enum urnic_rdma_ps ps;
		uint64_t base;
	} spaces[] = {
		{ URNIC_RDMA_PS_TCP, 0x0000000001060000ull },
		{ URNIC_RDMA_PS_UDP, 0x0000000001110000ull },
		{ URNIC_RDMA_PS_IB, 0x00000000013f0000ull },
		{ URNIC_RDMA_PS_IPOIB, 0x0000000000020000ull },
	};
	enum urnic_rdma_ps ps;
	uint16_t port;
	unsigned p;
	size_t i;

	for (i = 0; i < sizeof(spaces) / sizeof(spaces[0]); i++) {
		for (p = 0; p <= 0xffff; p += 0x1111) {
			uint64_t sid = urnic_cma_service_id(spaces[i].ps, (uint16_t)p);

			CHECK_EQ(sid, spaces[i].base | p);
			CHECK_EQ(urnic_cma_service_id_decode(sid, &ps, &port, NULL), 0);
			CHECK(ps == spaces[i].ps && port == p);
		}
	}
	CHECK_EQ(urnic_cma_service_id(URNIC_RDMA_PS_TCP, 7174), 0x0000000001061c06ull);
}

int main(void)
{
	RUN(fields_are_a_layout);
	RUN(random_messages_round_trip);
	RUN(each_field_lands_at_its_offset);
	RUN(encode_refuses_what_check_refuses);
	RUN(cma_headers_round_trip);
	RUN(service_ids_round_trip);
	return 0;
}
