/* SPDX-License-Identifier: MIT */
/*
 * test_truncation.c - every prefix of a packet or header fails to decode cleanly.
 *
 * For each opcode in the table (IBTA 9.2.1), a packet with no payload (built by
 * urnic_pkt_encode_hdr) must fail with -EBADMSG for every shorter length: headers, pad
 * and ICRC are all mandatory. With payload a prefix can be a valid shorter packet, so
 * only payload-free packets are cut. Each per-header decoder (pkt.h) is cut the same way
 * and each encoder refuses every capacity below its size with -ENOBUFS.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pktgen.h"

/* Decode from a heap copy of exactly len bytes, so ASan catches any over-read. */
static ssize_t decode_exact(struct urnic_pkt *pkt, const uint8_t *buf, size_t len)
{
	uint8_t *copy = malloc(len ? len : 1);
	ssize_t n;

	CHECK(copy != NULL);
	if (len)
		memcpy(copy, buf, len);
	n = urnic_pkt_decode(pkt, copy, len);
	free(copy);
	return n;
}

static void every_prefix_of_every_opcode_fails(void)
{
	struct wire_rng rng = { 1 };
	struct urnic_pkt pkt, out, poison;
	uint8_t buf[128];
	unsigned op, pad, known = 0;
	size_t full, cut;

	memset(&poison, 0x5a, sizeof(poison));
	for (op = 0; op < 256; op++) {
		const struct urnic_opcode_info *info = urnic_opcode_info((uint8_t)op);

		if (!info->name)
			continue;
		known++;
		for (pad = 0; pad < 4; pad++) {
			wire_pkt_random(&pkt, (uint8_t)op, &rng);
			pkt.bth.pad = (uint8_t)pad;
			full = wire_pkt_build(&pkt, NULL, 0, buf, sizeof(buf));
			CHECK_EQ(full, info->hdr_bytes + pad + URNIC_ICRC_BYTES);
			CHECK_EQ(decode_exact(&out, buf, full), info->hdr_bytes);
			CHECK(wire_pkt_diff(&pkt, &out) == NULL);
			for (cut = 0; cut < full; cut++) {
				memcpy(&out, &poison, sizeof(out));
				CHECK_EQ(decode_exact(&out, buf, cut), -EBADMSG);
				/* validate, then mutate: nothing written on failure */
				CHECK(memcmp(&out, &poison, sizeof(out)) == 0);
			}
		}
	}
	CHECK_EQ(known, 63);
}

/* One header codec: decode and encode as generic function pointers over void *. */
struct codec {
	const char *name;
	size_t bytes;
	ssize_t (*decode)(void *hdr, const uint8_t *buf, size_t len);
	ssize_t (*encode)(const void *hdr, uint8_t *buf, size_t cap);
};

static ssize_t bth_dec(void *h, const uint8_t *b, size_t l)
{
	return urnic_bth_decode(h, b, l);
}

static ssize_t bth_enc(const void *h, uint8_t *b, size_t c)
{
	return urnic_bth_encode(h, b, c);
}

static ssize_t reth_dec(void *h, const uint8_t *b, size_t l)
{
	return urnic_reth_decode(h, b, l);
}

static ssize_t reth_enc(const void *h, uint8_t *b, size_t c)
{
	return urnic_reth_encode(h, b, c);
}

static ssize_t atm_dec(void *h, const uint8_t *b, size_t l)
{
	return urnic_atmeth_decode(h, b, l);
}

static ssize_t atm_enc(const void *h, uint8_t *b, size_t c)
{
	return urnic_atmeth_encode(h, b, c);
}

static ssize_t aeth_dec(void *h, const uint8_t *b, size_t l)
{
	return urnic_aeth_decode(h, b, l);
}

static ssize_t aeth_enc(const void *h, uint8_t *b, size_t c)
{
	return urnic_aeth_encode(h, b, c);
}

static ssize_t deth_dec(void *h, const uint8_t *b, size_t l)
{
	return urnic_deth_decode(h, b, l);
}

static ssize_t deth_enc(const void *h, uint8_t *b, size_t c)
{
	return urnic_deth_encode(h, b, c);
}

static ssize_t xrceth_dec(void *h, const uint8_t *b, size_t l)
{
	return urnic_xrceth_decode(h, b, l);
}

static ssize_t xrceth_enc(const void *h, uint8_t *b, size_t c)
{
	return urnic_xrceth_encode(*(const uint32_t *)h, b, c);
}

static void every_prefix_of_every_header_fails(void)
{
	static const struct codec codecs[] = {
		{ "BTH", URNIC_BTH_BYTES, bth_dec, bth_enc },
		{ "RETH", URNIC_RETH_BYTES, reth_dec, reth_enc },
		{ "AtomicETH", URNIC_ATMETH_BYTES, atm_dec, atm_enc },
		{ "AETH", URNIC_AETH_BYTES, aeth_dec, aeth_enc },
		{ "DETH", URNIC_DETH_BYTES, deth_dec, deth_enc },
		{ "XRCETH", URNIC_XRCETH_BYTES, xrceth_dec, xrceth_enc },
	};
	union {
		struct urnic_bth bth;
		struct urnic_reth reth;
		struct urnic_atmeth atmeth;
		struct urnic_aeth aeth;
		struct urnic_deth deth;
		uint32_t xrc_srqn;
	} hdr;
	uint8_t zeros[64] = { 0 }, out[64];
	size_t i, cut;

	for (i = 0; i < sizeof(codecs) / sizeof(codecs[0]); i++) {
		const struct codec *c = &codecs[i];

		/* An all-zero header of full size is valid for every one of them. */
		CHECK_EQ(c->decode(&hdr, zeros, c->bytes), (ssize_t)c->bytes);
		CHECK_EQ(c->encode(&hdr, out, c->bytes), (ssize_t)c->bytes);
		CHECK(memcmp(out, zeros, c->bytes) == 0);
		for (cut = 0; cut < c->bytes; cut++) {
			uint8_t *copy = malloc(cut ? cut : 1);

			CHECK(copy != NULL);
			memset(copy, 0, cut ? cut : 1);
			CHECK_EQ(c->decode(&hdr, copy, cut), -EBADMSG);
			CHECK_EQ(c->encode(&hdr, copy, cut), -ENOBUFS);
			free(copy);
		}
	}
}

static void encode_hdr_refuses_short_buffers(void)
{
	struct wire_rng rng = { 2 };
	struct urnic_pkt pkt;
	uint8_t buf[128];
	unsigned op;
	size_t cap;

	for (op = 0; op < 256; op++) {
		const struct urnic_opcode_info *info = urnic_opcode_info((uint8_t)op);

		if (!info->name)
			continue;
		wire_pkt_random(&pkt, (uint8_t)op, &rng);
		for (cap = 0; cap < info->hdr_bytes; cap++)
			CHECK_EQ(urnic_pkt_encode_hdr(&pkt, buf, cap), -ENOBUFS);
		CHECK_EQ(urnic_pkt_encode_hdr(&pkt, buf, info->hdr_bytes), info->hdr_bytes);
	}
}

int main(void)
{
	RUN(every_prefix_of_every_opcode_fails);
	RUN(every_prefix_of_every_header_fails);
	RUN(encode_hdr_refuses_short_buffers);
	return 0;
}
