/* SPDX-License-Identifier: MIT */
/*
 * test_iwarp.c - the iWARP codecs (mpa.h, fpdu.h, ddp.h) round-trip what they encode and
 * refuse hostile input with the reason or errno each rule names, leaving the caller's
 * struct untouched on a refusal.
 *
 * Covers RFC 5044 7.1 and RFC 6581 3 (MPA frames), RFC 5044 4 (FPDU, CRC32c), RFC 5041 4
 * and RFC 5040 4 (DDP/RDMAP headers, Read Request, Terminate) and the tables
 * iwarp_reason.def and iwarp_term.def.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "wire/byteorder.h"
#include "wire/ddp.h"
#include "wire/fpdu.h"
#include "wire/mpa.h"

static const uint8_t pd_bytes[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

static size_t mpa_frame(uint8_t *buf, size_t cap, const struct urnic_mpa_rr *rr)
{
	ssize_t n = urnic_mpa_rr_encode(rr, buf, cap);

	CHECK(n > 0);
	return (size_t)n;
}

static void test_mpa_roundtrip(void)
{
	struct urnic_mpa_rr rr = { .kind = URNIC_MPA_REQ,
				   .crc = true,
				   .enhanced = true,
				   .revision = 2,
				   .p2p = true,
				   .rtr_write = true,
				   .ird = 0x3fff,
				   .ord = 7,
				   .pd = pd_bytes,
				   .pd_len = 8 };
	struct urnic_mpa_rr out;
	uint8_t buf[600], again[600];
	size_t n = mpa_frame(buf, sizeof(buf), &rr), used = 0;

	CHECK_EQ(n, 20 + 4 + 8);
	CHECK(!memcmp(buf, "MPA ID Req Frame", 16));
	CHECK_EQ(buf[16], 0x50); /* C and E, as siw sends with CRC on */
	CHECK_EQ(urnic_get_be16(buf + 18), 12);
	CHECK_EQ(urnic_get_be16(buf + 20), 0xbfff); /* A with IRD 0x3fff */
	CHECK_EQ(urnic_get_be16(buf + 22), 0x8007); /* C with ORD 7 */
	CHECK_EQ(urnic_mpa_rr_decode(&out, &used, buf, n + 5), URNIC_IW_R_OK);
	CHECK_EQ(used, n);
	CHECK(out.kind == URNIC_MPA_REQ && out.crc && out.enhanced && out.p2p && out.rtr_write);
	CHECK(!out.rtr_send && !out.rtr_read && !out.reject && !out.markers);
	CHECK_EQ(out.ird, 0x3fff);
	CHECK_EQ(out.ord, 7);
	CHECK(out.pd_len == 8 && !memcmp(out.pd, pd_bytes, 8));
	CHECK_EQ(urnic_mpa_rr_encode(&out, again, sizeof(again)), (ssize_t)n);
	CHECK(!memcmp(buf, again, n));

	/* Revision 1: no IRD/ORD word, the private data is all the ULP's; a rejecting Reply. */
	rr = (struct urnic_mpa_rr){
		.kind = URNIC_MPA_REP, .reject = true, .revision = 1, .pd = pd_bytes, .pd_len = 3
	};
	n = mpa_frame(buf, sizeof(buf), &rr);
	CHECK_EQ(n, 23);
	CHECK_EQ(buf[16], 0x20);
	CHECK_EQ(urnic_mpa_rr_decode(&out, &used, buf, n), URNIC_IW_R_OK);
	CHECK(out.kind == URNIC_MPA_REP && out.reject && !out.enhanced && out.pd_len == 3);
}

/* A hostile frame: refused with reason r, and *out left as it was. */
static void mpa_refused(const uint8_t *buf, size_t len, enum urnic_iw_reason r)
{
	struct urnic_mpa_rr out, before;
	size_t used = 12345;

	memset(&out, 0xa5, sizeof(out));
	memcpy(&before, &out, sizeof(out));
	CHECK_EQ(urnic_mpa_rr_decode(&out, &used, buf, len), r);
	CHECK(!memcmp(&out, &before, sizeof(out)));
	CHECK_EQ(used, 12345);
}

static void test_mpa_hostile(void)
{
	struct urnic_mpa_rr rr = {
		.kind = URNIC_MPA_REQ, .enhanced = true, .revision = 2, .ird = 1, .ord = 1
	};
	uint8_t good[600], buf[600];
	size_t n = mpa_frame(good, sizeof(good), &rr);

	mpa_refused(good, 19, URNIC_IW_R_MPA_TRUNCATED);
	mpa_refused(good, 0, URNIC_IW_R_MPA_TRUNCATED);
	memcpy(buf, good, n);
	buf[4] = 'x';
	mpa_refused(buf, n, URNIC_IW_R_MPA_KEY);
	memcpy(buf, good, n);
	buf[16] |= 0x80;
	mpa_refused(buf, n, URNIC_IW_R_MPA_MARKERS);
	memcpy(buf, good, n);
	buf[17] = 3;
	mpa_refused(buf, n, URNIC_IW_R_MPA_REVISION);
	buf[17] = 0;
	mpa_refused(buf, n, URNIC_IW_R_MPA_REVISION);
	/* Reserved bits, and E in revision 1, are not checked on reception (RFC 5044 7.1). */
	{
		struct urnic_mpa_rr a, b;
		size_t ua, ub;

		CHECK(urnic_mpa_rr_decode(&a, &ua, good, n) == URNIC_IW_R_OK);
		memcpy(buf, good, n);
		buf[16] |= 0x07;
		CHECK(urnic_mpa_rr_decode(&b, &ub, buf, n) == URNIC_IW_R_OK);
		CHECK(ua == ub && a.enhanced == b.enhanced && a.crc == b.crc && a.ird == b.ird &&
		      a.ord == b.ord && a.pd_len == b.pd_len);
		buf[17] = 1;
		CHECK(urnic_mpa_rr_decode(&b, &ub, buf, n) == URNIC_IW_R_OK);
		CHECK(!b.enhanced && b.revision == 1 && b.pd_len == a.pd_len + URNIC_MPA_V2_BYTES);
	}
	memset(buf, 0, sizeof(buf));
	memcpy(buf, good, 20);
	urnic_put_be16(buf + 18, 513);
	mpa_refused(buf, sizeof(buf), URNIC_IW_R_MPA_PD_TOO_LONG);
	urnic_put_be16(buf + 18, 512); /* the limit itself is fine */
	{
		struct urnic_mpa_rr out;
		size_t used;

		CHECK_EQ(urnic_mpa_rr_decode(&out, &used, buf, 532), URNIC_IW_R_OK);
		CHECK_EQ(out.pd_len, 508);
	}
	mpa_refused(buf, 531, URNIC_IW_R_MPA_PD_TRUNCATED);
	urnic_put_be16(buf + 18, 2);
	mpa_refused(buf, 22, URNIC_IW_R_MPA_V2_SHORT);
}

static void test_mpa_encode_refusals(void)
{
	static uint8_t big[URNIC_MPA_PD_MAX + 1];
	struct urnic_mpa_rr rr = { .kind = URNIC_MPA_REQ, .revision = 2 };
	uint8_t buf[600];

	rr.markers = true;
	CHECK_EQ(urnic_mpa_rr_encode(&rr, buf, sizeof(buf)), -EOPNOTSUPP);
	rr.markers = false;
	rr.kind = 3;
	CHECK_EQ(urnic_mpa_rr_encode(&rr, buf, sizeof(buf)), -EINVAL);
	rr.kind = URNIC_MPA_REP;
	rr.revision = 0;
	CHECK_EQ(urnic_mpa_rr_encode(&rr, buf, sizeof(buf)), -EINVAL);
	rr.revision = 1;
	rr.enhanced = true;
	CHECK_EQ(urnic_mpa_rr_encode(&rr, buf, sizeof(buf)), -EINVAL);
	rr.revision = 2;
	rr.ird = 0x4000;
	CHECK_EQ(urnic_mpa_rr_encode(&rr, buf, sizeof(buf)), -EINVAL);
	rr.ird = 1;
	rr.pd = big;
	rr.pd_len = URNIC_MPA_PD_MAX - 3; /* with the IRD/ORD word: 513 */
	CHECK_EQ(urnic_mpa_rr_encode(&rr, buf, sizeof(buf)), -EMSGSIZE);
	rr.pd_len = URNIC_MPA_PD_MAX - 4;
	CHECK_EQ(urnic_mpa_rr_encode(&rr, buf, sizeof(buf)), 20 + 512);
	CHECK_EQ(urnic_mpa_rr_encode(&rr, buf, 20 + 511), -ENOBUFS);
}

static void test_fpdu_crc_vector(void)
{
	/* RFC 3385's CRC32c check value, and RFC 3720 B.4's 32 zero bytes. */
	static const uint8_t zeros[32];

	CHECK_EQ(urnic_fpdu_crc((const uint8_t *)"123456789", 9), 0xe3069283u);
	CHECK_EQ(urnic_fpdu_crc(zeros, sizeof(zeros)), 0x8a9136aau);
}

static void test_fpdu_roundtrip(void)
{
	uint8_t ulpdu[64], buf[128];
	struct urnic_fpdu f;
	size_t len;

	for (len = URNIC_FPDU_ULPDU_MIN; len < 22; len++) {
		ssize_t n;

		memset(ulpdu, (int)len, sizeof(ulpdu));
		memset(buf, 0xee, sizeof(buf));
		n = urnic_fpdu_encode(buf, sizeof(buf), ulpdu, len, URNIC_FPDU_CRC);
		CHECK_EQ(n, (ssize_t)urnic_fpdu_bytes(len));
		CHECK_EQ(n % 4, 0);
		CHECK_EQ(urnic_fpdu_decode(&f, buf, (size_t)n, URNIC_FPDU_CRC), URNIC_IW_R_OK);
		CHECK_EQ(f.ulpdu_len, len);
		CHECK_EQ(f.pad, (4 - (2 + len) % 4) % 4);
		CHECK_EQ(f.bytes, (size_t)n);
		CHECK(!memcmp(f.ulpdu, ulpdu, len));
		CHECK_EQ(urnic_get_le32(buf + n - 4), urnic_fpdu_crc(buf, (size_t)n - 4));
		/* Without CRC the field is zero, and a corrupted byte is not noticed. */
		n = urnic_fpdu_encode(buf, sizeof(buf), ulpdu, len, 0);
		CHECK_EQ(urnic_get_le32(buf + n - 4), 0);
		buf[5] ^= 1;
		CHECK_EQ(urnic_fpdu_decode(&f, buf, (size_t)n, 0), URNIC_IW_R_OK);
	}
}

static void test_fpdu_hostile(void)
{
	uint8_t ulpdu[20] = { 0x41, 0x43 }, buf[64];
	struct urnic_fpdu f, before;
	ssize_t n = urnic_fpdu_encode(buf, sizeof(buf), ulpdu, sizeof(ulpdu), URNIC_FPDU_CRC);

	CHECK_EQ(n, 28);
	memset(&f, 0x5a, sizeof(f));
	memcpy(&before, &f, sizeof(f));
	CHECK_EQ(urnic_fpdu_decode(&f, buf, 1, URNIC_FPDU_CRC), URNIC_IW_R_FPDU_TRUNCATED);
	CHECK_EQ(urnic_fpdu_decode(&f, buf, 27, URNIC_FPDU_CRC), URNIC_IW_R_FPDU_TRUNCATED);
	CHECK_EQ(urnic_fpdu_decode(&f, buf, 28, URNIC_FPDU_CRC | URNIC_FPDU_MARKERS),
		 URNIC_IW_R_FPDU_MARKERS);
	buf[10] ^= 0x10;
	CHECK_EQ(urnic_fpdu_decode(&f, buf, 28, URNIC_FPDU_CRC), URNIC_IW_R_FPDU_CRC);
	buf[10] ^= 0x10;
	buf[22] = 0xff; /* a pad byte: covered by the CRC */
	CHECK_EQ(urnic_fpdu_decode(&f, buf, 28, URNIC_FPDU_CRC), URNIC_IW_R_FPDU_CRC);
	urnic_put_be16(buf, 13);
	CHECK_EQ(urnic_fpdu_decode(&f, buf, 28, 0), URNIC_IW_R_FPDU_SHORT_ULPDU);
	urnic_put_be16(buf, 0xffff);
	CHECK_EQ(urnic_fpdu_decode(&f, buf, 28, 0), URNIC_IW_R_FPDU_TRUNCATED);
	CHECK(!memcmp(&f, &before, sizeof(f)));
	CHECK_EQ(urnic_fpdu_encode(buf, sizeof(buf), ulpdu, sizeof(ulpdu), URNIC_FPDU_MARKERS),
		 -EOPNOTSUPP);
	CHECK_EQ(urnic_fpdu_encode(buf, 27, ulpdu, sizeof(ulpdu), 0), -ENOBUFS);
	CHECK_EQ(urnic_fpdu_encode(buf, sizeof(buf), ulpdu, 0x10000, 0), -EMSGSIZE);
}

/* One header of each opcode re-encodes to its bytes and decodes to its fields. */
static void ddp_roundtrip(const struct urnic_ddp_hdr *h, size_t want)
{
	uint8_t buf[64], again[64];
	struct urnic_ddp_hdr out;
	size_t hdr_bytes = 0;
	ssize_t n = urnic_ddp_encode(h, buf, sizeof(buf));

	CHECK_EQ(n, (ssize_t)want);
	CHECK_EQ(urnic_ddp_decode(&out, &hdr_bytes, buf, (size_t)n), URNIC_IW_R_OK);
	CHECK_EQ(hdr_bytes, want);
	CHECK(out.tagged == h->tagged && out.last == h->last && out.opcode == h->opcode);
	CHECK(out.stag == h->stag && out.to == h->to && out.inv_stag == h->inv_stag);
	CHECK(out.qn == h->qn && out.msn == h->msn && out.mo == h->mo);
	CHECK(out.rreq.sink_stag == h->rreq.sink_stag && out.rreq.sink_to == h->rreq.sink_to);
	CHECK(out.rreq.size == h->rreq.size && out.rreq.src_stag == h->rreq.src_stag);
	CHECK(out.rreq.src_to == h->rreq.src_to);
	CHECK_EQ(urnic_ddp_encode(&out, again, sizeof(again)), n);
	CHECK(!memcmp(buf, again, want));
	CHECK_EQ(buf[0] & 0x03, 1); /* DV */
	CHECK_EQ(buf[1] >> 6, 1);   /* RV */
	CHECK_EQ(buf[1] & 0x0f, h->opcode);
}

static void test_ddp_roundtrip(void)
{
	struct urnic_ddp_hdr h;

	h = (struct urnic_ddp_hdr){ .tagged = true,
				    .last = true,
				    .opcode = URNIC_RDMAP_WRITE,
				    .stag = 0x12345678,
				    .to = 0x1122334455667788ull };
	ddp_roundtrip(&h, 14);
	h.opcode = URNIC_RDMAP_READ_RESP;
	h.last = false;
	ddp_roundtrip(&h, 14);
	h = (struct urnic_ddp_hdr){ .last = true, .opcode = URNIC_RDMAP_SEND, .msn = 9, .mo = 0 };
	ddp_roundtrip(&h, 18);
	h.opcode = URNIC_RDMAP_SEND_SE;
	h.last = false;
	h.mo = 4096;
	ddp_roundtrip(&h, 18);
	h.opcode = URNIC_RDMAP_SEND_INV;
	h.inv_stag = 0xabcdef01;
	ddp_roundtrip(&h, 18);
	h.opcode = URNIC_RDMAP_SEND_SE_INV;
	ddp_roundtrip(&h, 18);
	h = (struct urnic_ddp_hdr){
		.last = true, .opcode = URNIC_RDMAP_TERMINATE, .qn = 2, .msn = 1
	};
	ddp_roundtrip(&h, 18);
	h = (struct urnic_ddp_hdr){ .last = true,
				    .opcode = URNIC_RDMAP_READ_REQ,
				    .qn = 1,
				    .msn = 3,
				    .rreq = { 0x64751200, 0x5633050a6f30ull, 64, 0xf3c29700,
					      0x5591efedfd50ull } };
	ddp_roundtrip(&h, 46);
}

static void ddp_refused(const uint8_t *buf, size_t len, enum urnic_iw_reason r)
{
	struct urnic_ddp_hdr out, before;
	size_t hdr_bytes = 777;

	memset(&out, 0x3c, sizeof(out));
	memcpy(&before, &out, sizeof(out));
	CHECK_EQ(urnic_ddp_decode(&out, &hdr_bytes, buf, len), r);
	CHECK(!memcmp(&out, &before, sizeof(out)));
	CHECK_EQ(hdr_bytes, 777);
}

static void test_ddp_hostile(void)
{
	struct urnic_ddp_hdr send = { .last = true, .opcode = URNIC_RDMAP_SEND, .msn = 1 };
	struct urnic_ddp_hdr rreq = {
		.last = true, .opcode = URNIC_RDMAP_READ_REQ, .qn = 1, .msn = 1
	};
	uint8_t good[64], buf[64];

	CHECK_EQ(urnic_ddp_encode(&send, good, sizeof(good)), 18);
	ddp_refused(good, 17, URNIC_IW_R_DDP_TRUNCATED);
	ddp_refused(good, 1, URNIC_IW_R_DDP_TRUNCATED);
	memcpy(buf, good, 18);
	buf[0] = (uint8_t)(buf[0] | 0x80); /* tagged: 14 bytes suffice, but Send is untagged */
	ddp_refused(buf, 13, URNIC_IW_R_DDP_TRUNCATED);
	ddp_refused(buf, 18, URNIC_IW_R_RDMAP_MODEL);
	memcpy(buf, good, 18);
	buf[0] = (uint8_t)((buf[0] & ~0x03) | 2);
	ddp_refused(buf, 18, URNIC_IW_R_DDP_VERSION);
	buf[0] = (uint8_t)(buf[0] & ~0x03);
	ddp_refused(buf, 18, URNIC_IW_R_DDP_VERSION);
	memcpy(buf, good, 18);
	buf[0] |= 0x04;
	ddp_refused(buf, 18, URNIC_IW_R_DDP_RESERVED);
	memcpy(buf, good, 18);
	buf[1] = (uint8_t)((buf[1] & 0x3f) | 0x80);
	ddp_refused(buf, 18, URNIC_IW_R_RDMAP_VERSION);
	memcpy(buf, good, 18);
	buf[1] |= 0x10;
	ddp_refused(buf, 18, URNIC_IW_R_RDMAP_RESERVED);
	memcpy(buf, good, 18);
	buf[1] = (uint8_t)((buf[1] & 0xf0) | 8);
	ddp_refused(buf, 18, URNIC_IW_R_RDMAP_OPCODE);
	buf[1] = (uint8_t)((buf[1] & 0xf0) | URNIC_RDMAP_WRITE);
	ddp_refused(buf, 18, URNIC_IW_R_RDMAP_MODEL);
	memcpy(buf, good, 18);
	urnic_put_be32(buf + 6, 1);
	ddp_refused(buf, 18, URNIC_IW_R_RDMAP_QN);
	memcpy(buf, good, 18);
	urnic_put_be32(buf + 2, 0x1234); /* an Invalidate STag on a plain Send */
	ddp_refused(buf, 18, URNIC_IW_R_RDMAP_RESERVED);

	CHECK_EQ(urnic_ddp_encode(&rreq, good, sizeof(good)), 46);
	ddp_refused(good, 45, URNIC_IW_R_RDMAP_READ_REQ_LENGTH);
	memset(good + 46, 0, 4);
	ddp_refused(good, 50, URNIC_IW_R_RDMAP_READ_REQ_LENGTH);
	good[0] &= (uint8_t)~0x40; /* L clear */
	ddp_refused(good, 46, URNIC_IW_R_RDMAP_READ_REQ_LENGTH);

	/* The encoder refuses what the decoder would. */
	send.qn = 2;
	CHECK_EQ(urnic_ddp_encode(&send, buf, sizeof(buf)), -EINVAL);
	send.qn = 0;
	send.tagged = true;
	CHECK_EQ(urnic_ddp_encode(&send, buf, sizeof(buf)), -EINVAL);
	send.tagged = false;
	send.inv_stag = 5;
	CHECK_EQ(urnic_ddp_encode(&send, buf, sizeof(buf)), -EINVAL);
	send.inv_stag = 0;
	send.opcode = 9;
	CHECK_EQ(urnic_ddp_encode(&send, buf, sizeof(buf)), -EINVAL);
	send.opcode = URNIC_RDMAP_SEND;
	CHECK_EQ(urnic_ddp_encode(&send, buf, 17), -ENOBUFS);
	rreq.mo = 8;
	CHECK_EQ(urnic_ddp_encode(&rreq, buf, sizeof(buf)), -EINVAL);
}

/* A Terminate for a failed Read Request: M, D, R and its 2 + 18 + 28 copied bytes. */
static void test_term_roundtrip(void)
{
	struct urnic_ddp_hdr rreq = { .last = true,
				      .opcode = URNIC_RDMAP_READ_REQ,
				      .qn = 1,
				      .msn = 4,
				      .rreq = { 1, 2, 3, 4, 5 } };
	struct urnic_ddp_hdr wr = { .tagged = true,
				    .last = true,
				    .opcode = URNIC_RDMAP_WRITE,
				    .stag = 0x100,
				    .to = 0x2000 };
	struct urnic_iw_term_code c = urnic_iw_term_code(URNIC_IW_TERM_RDMAP_INVALID_STAG);
	struct urnic_rdmap_term t = { .layer = c.layer,
				      .etype = c.etype,
				      .code = c.code,
				      .m = true,
				      .d = true,
				      .r = true,
				      .seg_len = 46 };
	struct urnic_rdmap_term out;
	uint8_t copied[64], buf[128], again[128];
	ssize_t n;

	CHECK_EQ(urnic_ddp_encode(&rreq, copied, sizeof(copied)), 46);
	t.copied = copied;
	t.copied_bytes = 46;
	n = urnic_rdmap_term_encode(&t, buf, sizeof(buf));
	CHECK_EQ(n, 4 + 2 + 46);
	CHECK_EQ(buf[0], 0x01); /* layer 0 RDMAP, etype 1 remote protection */
	CHECK_EQ(buf[1], 0x00);
	CHECK_EQ(urnic_get_be16(buf + 2), 0xe000);
	CHECK_EQ(urnic_rdmap_term_decode(&out, buf, (size_t)n), URNIC_IW_R_OK);
	CHECK(out.m && out.d && out.r && out.seg_len == 46 && out.copied_bytes == 46);
	CHECK(!memcmp(out.copied, copied, 46));
	CHECK_EQ(urnic_rdmap_term_encode(&out, again, sizeof(again)), n);
	CHECK(!memcmp(buf, again, (size_t)n));
	CHECK(!strcmp(urnic_iw_term_name(out.layer, out.etype, out.code), "invalid STag"));

	/* A DDP tagged-buffer error on a Write: D only, the segment length field (not marked
	 * valid) and the 14-byte tagged header. */
	c = urnic_iw_term_code(URNIC_IW_TERM_DDP_T_BASE_BOUNDS);
	CHECK_EQ(urnic_ddp_encode(&wr, copied, sizeof(copied)), 14);
	t = (struct urnic_rdmap_term){ .layer = c.layer,
				       .etype = c.etype,
				       .code = c.code,
				       .d = true,
				       .copied = copied,
				       .copied_bytes = 14 };
	n = urnic_rdmap_term_encode(&t, buf, sizeof(buf));
	CHECK_EQ(n, 20);
	CHECK_EQ(buf[0], 0x11);
	CHECK_EQ(buf[1], 0x01);
	CHECK_EQ(urnic_rdmap_term_decode(&out, buf, (size_t)n), URNIC_IW_R_OK);
	CHECK(!out.m && out.d && !out.r && out.copied_bytes == 14);
	/* R on a Write copies no more: its RDMAP header is inside the DDP one. */
	t.r = true;
	CHECK_EQ(urnic_rdmap_term_encode(&t, buf, sizeof(buf)), 20);
	t.copied_bytes = 18;
	CHECK_EQ(urnic_rdmap_term_encode(&t, buf, sizeof(buf)), -EINVAL);
}

/* The bytes siw's siw_send_terminate() writes for a remote protection error on an
 * inbound Send (drivers/infiniband/sw/siw/siw_qp.c): M, D and R set, then the Send's
 * segment length and its 18-byte untagged header, and no RDMAP header beyond it. */
static void test_term_siw_layout(void)
{
	uint8_t body[4 + 2 + 18] = { 0x01, 0x00, 0xe0, 0x00, 0x00, 0x40 };
	struct urnic_ddp_hdr send = { .last = true, .opcode = URNIC_RDMAP_SEND, .msn = 3 };
	struct urnic_rdmap_term t;

	CHECK_EQ(urnic_ddp_encode(&send, body + 6, 18), 18);
	CHECK_EQ(urnic_rdmap_term_decode(&t, body, sizeof(body)), URNIC_IW_R_OK);
	CHECK(t.m && t.d && t.r && t.seg_len == 0x40 && t.copied_bytes == 18);
	CHECK(t.layer == URNIC_IW_LAYER_RDMAP && t.etype == 1 && t.code == 0);
	CHECK_EQ(t.copied, body + 6);
}

static void term_refused(const uint8_t *buf, size_t len, enum urnic_iw_reason r)
{
	struct urnic_rdmap_term out, before;

	memset(&out, 0x77, sizeof(out));
	memcpy(&before, &out, sizeof(out));
	CHECK_EQ(urnic_rdmap_term_decode(&out, buf, len), r);
	CHECK(!memcmp(&out, &before, sizeof(out)));
}

static void test_term_hostile(void)
{
	struct urnic_ddp_hdr send = { .last = true, .opcode = URNIC_RDMAP_SEND, .msn = 1 };
	struct urnic_rdmap_term t = { .layer = URNIC_IW_LAYER_DDP,
				      .etype = 2,
				      .code = 1,
				      .m = true,
				      .d = true,
				      .seg_len = 30 };
	uint8_t copied[32], good[64], buf[64];
	ssize_t n;

	CHECK_EQ(urnic_ddp_encode(&send, copied, sizeof(copied)), 18);
	t.copied = copied;
	t.copied_bytes = 18;
	n = urnic_rdmap_term_encode(&t, good, sizeof(good));
	CHECK_EQ(n, 24);
	term_refused(good, 3, URNIC_IW_R_TERM_TRUNCATED);
	term_refused(good, 5, URNIC_IW_R_TERM_TRUNCATED);
	term_refused(good, 23, URNIC_IW_R_TERM_TRUNCATED);
	memcpy(buf, good, 24);
	buf[24] = 0;
	term_refused(buf, 25, URNIC_IW_R_TERM_LENGTH);
	buf[0] = 0x31;
	term_refused(buf, 24, URNIC_IW_R_TERM_LAYER);
	memcpy(buf, good, 24);
	buf[3] |= 0x01;
	term_refused(buf, 24, URNIC_IW_R_TERM_RESERVED);
	memcpy(buf, good, 24);
	buf[2] = 0x20; /* R without D */
	term_refused(buf, 4, URNIC_IW_R_TERM_RESERVED);
	buf[2] = 0x80; /* M without D */
	term_refused(buf, 4, URNIC_IW_R_TERM_RESERVED);
	buf[2] = 0x00; /* no copied headers: the 4-byte header alone */
	term_refused(buf, 5, URNIC_IW_R_TERM_LENGTH);

	t.layer = 3;
	CHECK_EQ(urnic_rdmap_term_encode(&t, buf, sizeof(buf)), -EINVAL);
	t.layer = URNIC_IW_LAYER_DDP;
	t.d = false;
	t.r = true;
	CHECK_EQ(urnic_rdmap_term_encode(&t, buf, sizeof(buf)), -EINVAL);
	t.r = false; /* M without D */
	CHECK_EQ(urnic_rdmap_term_encode(&t, buf, sizeof(buf)), -EINVAL);
	t.d = true;
	t.r = false;
	CHECK_EQ(urnic_rdmap_term_encode(&t, buf, 23), -ENOBUFS);
}

/* The tables: every reason named and distinct, every Terminate triple unique. */
static void test_tables(void)
{
	unsigned i, j;

	for (i = 0; i < URNIC_IW_R_COUNT; i++)
		for (j = i + 1; j < URNIC_IW_R_COUNT; j++)
			CHECK(strcmp(urnic_iw_reason_name(i), urnic_iw_reason_name(j)));
	CHECK(!strcmp(urnic_iw_reason_name(URNIC_IW_R_COUNT), "unknown reason"));
	for (i = 0; i < URNIC_IW_TERM_COUNT; i++) {
		struct urnic_iw_term_code a = urnic_iw_term_code(i);

		for (j = i + 1; j < URNIC_IW_TERM_COUNT; j++) {
			struct urnic_iw_term_code b = urnic_iw_term_code(j);

			CHECK(a.layer != b.layer || a.etype != b.etype || a.code != b.code);
		}
		CHECK(urnic_iw_term_name(a.layer, a.etype, a.code));
	}
	CHECK(!urnic_iw_term_name(2, 0, 0x08));
	CHECK(!strcmp(urnic_iw_term_name(2, 0, 0x02), "MPA CRC error"));
	CHECK(!strcmp(urnic_iw_term_name(1, 2, 0x05), "DDP message too long for receive buffer"));
}

int main(void)
{
	RUN(test_mpa_roundtrip);
	RUN(test_mpa_hostile);
	RUN(test_mpa_encode_refusals);
	RUN(test_fpdu_crc_vector);
	RUN(test_fpdu_roundtrip);
	RUN(test_fpdu_hostile);
	RUN(test_ddp_roundtrip);
	RUN(test_ddp_hostile);
	RUN(test_term_roundtrip);
	RUN(test_term_hostile);
	RUN(test_term_siw_layout);
	RUN(test_tables);
	return 0;
}
