/* SPDX-License-Identifier: MIT */
/*
 * fuzz_uet.c - the UET PDS and SES decoder (src/wire/uet.c, urnic_uet_decode): arbitrary
 * bytes as a UDP 4793 datagram's payload.
 *
 * The decoder is checked against a second, plainly written statement of its rules (the
 * order uet.c's header comment gives), byte offsets and masks spelt out here rather than
 * taken from uet_type.def: a refusal is for the first rule the bytes break and leaves
 * the output untouched; an accepted datagram's headers lie within it, its payload is the
 * rest, and its headers encode back to exactly the bytes decoded; every prefix of an
 * accepted datagram's headers is refused as truncated. A broken rule aborts; ASan sees
 * any read past the input.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "wire/uet.h"

static void must(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_uet: %s\n", what);
		abort();
	}
}

/* UE 1.0 PDS: per type, the header length, the flags it defines and the next headers it
 * may carry (bit n: next header n); length 0 is unsupported, a missing row unknown. */
struct row {
	unsigned len, flags, nexts;
};

static const struct row *row_of(unsigned type)
{
	static const struct row unsupported = { 0, 0, 0 };
	static const struct row req = { 12, 0x1c, 0x7e }, req_cc = { 16, 0x1c, 0x7e };
	static const struct row rudi_req = { 8, 0x10, 0x7e }, rudi_resp = { 8, 0x30, 0x7e };
	static const struct row uud = { 4, 0, 0x7e }, ack = { 12, 0x7e, 0x71 };
	static const struct row ack_cc = { 32, 0x3e, 0x71 }, nack = { 16, 0x38, 0x01 };
	static const struct row ctrl = { 16, 0x3c, 0 };

	switch (type) {
	case 1:
	case 9:
	case 12:
		return &unsupported;
	case 2:
	case 3:
		return &req;
	case 13:
	case 14:
		return &req_cc;
	case 4:
		return &rudi_req;
	case 5:
		return &rudi_resp;
	case 6:
		return &uud;
	case 7:
		return &ack;
	case 8:
		return &ack_cc;
	case 10:
		return &nack;
	case 11:
		return &ctrl;
	default:
		return NULL;
	}
}

static bool nack_code_ok(unsigned c)
{
	return (c >= 0x01 && c <= 0x1a && c != 0x0c) || c >= 0xfd;
}

static enum urnic_uet_reason pds_rule(const uint8_t *d, size_t n, size_t *len)
{
	unsigned type, next, flags, plen;
	const struct row *r;
	bool syn;

	if (n < 2)
		return URNIC_UET_R_TRUNCATED;
	type = d[0] >> 3;
	next = (d[0] & 7u) << 1 | d[1] >> 7;
	flags = d[1] & 0x7fu;
	r = row_of(type);
	if (!r)
		return URNIC_UET_R_TYPE;
	if (!r->len)
		return URNIC_UET_R_UNSUPPORTED;
	plen = type == 7 && (flags & 0x40) ? 16 : r->len;
	if (n < plen)
		return URNIC_UET_R_TRUNCATED;
	*len = plen;
	if (flags & ~r->flags)
		return URNIC_UET_R_RESERVED;
	if (type == 11 ? next > 9 : !(r->nexts >> next & 1))
		return type == 11 ? URNIC_UET_R_CTRL_TYPE : URNIC_UET_R_NEXT_HDR;
	syn = (type == 2 || type == 3 || type == 13 || type == 14 || type == 11) && (flags & 4);
	if (syn && (d[10] & 0xe0))
		return URNIC_UET_R_RESERVED;
	if ((type == 7 || type == 8) && (flags & 6) == 6)
		return URNIC_UET_R_ACK_REQ;
	if (type == 8 && d[12] >> 4 > 1)
		return URNIC_UET_R_CC_TYPE;
	if (type == 8 && (d[12] & 0x0f))
		return URNIC_UET_R_RESERVED;
	if (type == 8 && d[12] >> 4 == 1 && (d[27] | d[28] | d[29]))
		return URNIC_UET_R_RESERVED;
	if (type == 10 && !nack_code_ok(d[2]))
		return URNIC_UET_R_NACK_CODE;
	if (type == 10 && (flags & 8) && (d[8] | d[9] | d[10] | d[11]))
		return URNIC_UET_R_RESERVED;
	if (type == 11 && next != 6 && (d[2] | d[3]))
		return URNIC_UET_R_RESERVED;
	if ((type == 4 || type == 5 || type == 6) && (d[2] | d[3]))
		return URNIC_UET_R_RESERVED;
	return URNIC_UET_R_OK;
}

static enum urnic_uet_reason ses_rule(unsigned next, const uint8_t *d, size_t n, size_t *len)
{
	static const unsigned lens[7] = { 0, 20, 32, 44, 12, 20, 12 };

	*len = lens[next];
	if (n < lens[next])
		return URNIC_UET_R_SES_TRUNCATED;
	if (d[1] >> 6)
		return URNIC_UET_R_SES_VERSION;
	if (next <= 3) {
		if ((d[0] & 0xc0) || (d[8] & 0xf0) || (d[10] & 0xf0) ||
		    (next != 3 && (d[2] & 0xc0)))
			return URNIC_UET_R_SES_RESERVED;
		return (d[0] & 0x3f) > 0x11 ? URNIC_UET_R_SES_OPCODE : URNIC_UET_R_OK;
	}
	if (d[0] >> 6 > 1)
		return URNIC_UET_R_SES_LIST;
	if ((d[0] & 0x3f) > 3)
		return URNIC_UET_R_SES_OPCODE;
	if ((d[1] & 0x3f) > 0x24)
		return URNIC_UET_R_SES_RETURN_CODE;
	if ((next == 6 && (d[2] & 0xc0)) || (next == 5 && (d[10] & 0xc0)))
		return URNIC_UET_R_SES_RESERVED;
	return URNIC_UET_R_OK;
}

/* The first rule d breaks; *hdr the header bytes when it breaks none. */
static enum urnic_uet_reason first_rule_broken(const uint8_t *d, size_t n, size_t *hdr)
{
	size_t plen = 0, slen = 0;
	enum urnic_uet_reason r = pds_rule(d, n, &plen);
	unsigned next;

	if (r != URNIC_UET_R_OK)
		return r;
	next = (d[0] & 7u) << 1 | d[1] >> 7;
	if (d[0] >> 3 != 11 && next != 0) {
		r = ses_rule(next, d + plen, n - plen, &slen);
		if (r != URNIC_UET_R_OK)
			return r;
	}
	*hdr = plen + slen;
	return URNIC_UET_R_OK;
}

static enum urnic_uet_reason decode(const uint8_t *d, size_t n, struct urnic_uet_pkt *p)
{
	struct urnic_uet_pkt poison;
	enum urnic_uet_reason r;
	size_t hdr = 0;
	enum urnic_uet_reason want = first_rule_broken(d, n, &hdr);

	memset(&poison, 0xa5, sizeof(poison));
	*p = poison;
	r = urnic_uet_decode(p, d, n);
	if (r != want)
		fprintf(stderr, "fuzz_uet: decoder %s, rules %s\n", urnic_uet_reason_name(r),
			urnic_uet_reason_name(want));
	must(r == want, "refused for another rule than the first, or accepted");
	if (r != URNIC_UET_R_OK) {
		must(!memcmp(p, &poison, sizeof(poison)), "a refused datagram wrote the output");
		return r;
	}
	must(p->payload == d + hdr && p->payload_bytes == n - hdr, "payload not the rest");
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct urnic_uet_pkt p, q;
	uint8_t again[URNIC_UET_PDS_MAX_BYTES + URNIC_UET_SES_MAX_BYTES];
	ssize_t a, b = 0;
	size_t hdr;

	if (decode(data, size, &p) != URNIC_UET_R_OK)
		return 0;
	hdr = size - p.payload_bytes;
	a = urnic_uet_pds_encode(&p.pds, again, sizeof(again));
	must(a > 0, "an accepted PDS header does not encode");
	if (p.pds.type != URNIC_UET_CTRL && p.pds.next != URNIC_UET_NEXT_NONE)
		b = urnic_uet_ses_encode(&p.ses, again + a, sizeof(again) - (size_t)a);
	must(b >= 0 && (size_t)(a + b) == hdr, "accepted headers encode to another length");
	must(!memcmp(again, data, hdr), "accepted headers encode to other bytes");
	for (size_t k = 0; k < hdr; k++) {
		enum urnic_uet_reason r = decode(data, k, &q);

		must(r == URNIC_UET_R_TRUNCATED || r == URNIC_UET_R_SES_TRUNCATED,
		     "a prefix of good headers refused for more than its length");
	}
	return 0;
}
