/* SPDX-License-Identifier: MIT */
/*
 * test_share_batch.c - the batches in which a process hands packets to the process that
 * owns their QP on a shared address (src/transport/share.h): records survive the trip
 * (source, port, IPv4 ID hint, TOS, TTL, bytes), a batch serves one owner and never
 * outgrows URNIC_SHARE_BATCH, and a batch cut anywhere is refused, never read past.
 * No sockets: urnic_share_flush is exercised by tests/system/forward.sh.
 */
#include <string.h>

#include "check.h"
#include "transport/share.h"

static struct urnic_share s;

static struct urnic_share_rec rec(uint8_t tag, const uint8_t *pkt, uint32_t len)
{
	struct urnic_share_rec r = { .sport = (uint16_t)(0xc000 | tag),
				     .ip_id_hint = tag,
				     .tos = (uint8_t)(tag ^ 0x6a),
				     .ttl = (uint8_t)(64 - tag),
				     .pkt = pkt,
				     .len = len };

	memset(r.src, tag, sizeof(r.src));
	return r;
}

static void test_round_trip(void)
{
	static uint8_t pkt[3][4200];
	uint32_t lens[3] = { 4136, 0, 60 }, off = 0;
	struct urnic_share_rec r;

	memset(&s, 0, sizeof(s));
	for (int i = 0; i < 3; i++) {
		struct urnic_share_rec in;

		memset(pkt[i], 0x10 + i, sizeof(pkt[i]));
		in = rec((uint8_t)(i + 1), pkt[i], lens[i]);
		CHECK(urnic_share_fits(&s, 5, &in));
		urnic_share_add(&s, 5, &in);
	}
	CHECK_EQ(s.batch_n, 3);
	CHECK_EQ(s.batch_slot, 5);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(urnic_share_next(s.batch, s.batch_bytes, &off, &r), 1);
		CHECK_EQ(r.sport, 0xc000 | (i + 1));
		CHECK_EQ(r.ip_id_hint, i + 1);
		CHECK_EQ(r.tos, (i + 1) ^ 0x6a);
		CHECK_EQ(r.ttl, 64 - (i + 1));
		CHECK_EQ(r.src[15], i + 1);
		CHECK_EQ(r.len, lens[i]);
		CHECK(memcmp(r.pkt, pkt[i], lens[i]) == 0);
	}
	CHECK_EQ(urnic_share_next(s.batch, s.batch_bytes, &off, &r), 0);
	CHECK_EQ(off, s.batch_bytes);
}

static void test_one_owner_bounded(void)
{
	static uint8_t pkt[4136];
	struct urnic_share_rec r = rec(1, pkt, sizeof(pkt));
	uint32_t n = 0;

	memset(&s, 0, sizeof(s));
	urnic_share_add(&s, 2, &r);
	CHECK(!urnic_share_fits(&s, 3, &r)); /* another owner: flush first */
	while (urnic_share_fits(&s, 2, &r)) {
		urnic_share_add(&s, 2, &r);
		n++;
	}
	/* As many whole records as 64 KiB holds, and no more. */
	CHECK_EQ(s.batch_n, URNIC_SHARE_BATCH / (URNIC_SHARE_REC_HDR + sizeof(pkt)));
	CHECK(s.batch_bytes <= URNIC_SHARE_BATCH);
	CHECK(s.batch_bytes + URNIC_SHARE_REC_HDR + sizeof(pkt) > URNIC_SHARE_BATCH);
	CHECK(n > 0);
}

static void test_cut_batches(void)
{
	static uint8_t pkt[2][100];
	uint32_t whole;

	memset(&s, 0, sizeof(s));
	for (int i = 0; i < 2; i++) {
		struct urnic_share_rec in = rec((uint8_t)i, pkt[i], sizeof(pkt[i]));

		urnic_share_add(&s, 1, &in);
	}
	whole = s.batch_bytes;
	for (uint32_t cut = 0; cut < whole; cut++) {
		uint32_t off = 0, got = 0;
		struct urnic_share_rec r;
		int ret;

		while ((ret = urnic_share_next(s.batch, cut, &off, &r)) > 0) {
			CHECK(off <= cut);
			got++;
		}
		/* Whole records up to the cut, then the rest refused (or nothing left). */
		CHECK_EQ(got, cut / (URNIC_SHARE_REC_HDR + sizeof(pkt[0])));
		CHECK_EQ(ret, cut % (URNIC_SHARE_REC_HDR + sizeof(pkt[0])) ? -EBADMSG : 0);
	}
	/* A length field that points past the end. */
	s.batch[18] = 0xff;
	{
		uint32_t off = 0;
		struct urnic_share_rec r;

		CHECK_EQ(urnic_share_next(s.batch, whole, &off, &r), -EBADMSG);
		CHECK_EQ(off, 0);
	}
}

int main(void)
{
	RUN(test_round_trip);
	RUN(test_one_owner_bounded);
	RUN(test_cut_batches);
	return 0;
}
