/* SPDX-License-Identifier: MIT */
/*
 * test_iwarp_fpdu.c - FPDU send framing and the receive stream (src/engine/iwarp): a
 * message cut to an MSS-sized MULPDU as siw cuts it, framed from an iovec, and cut back
 * out of the stream in random splits with its payload and CRC; each receive error and
 * the Terminate (layer, type, code) it calls for.
 */
#include <string.h>

#include "check.h"
#include "engine/iwarp/fpdu_tx.h"
#include "iwarp_pipe.h"
#include "wire/byteorder.h"

static uint8_t stream[1 << 17];
static uint8_t msg[20000];
static struct iwp_end end;

static void reset_rx(bool crc)
{
	iwp_end_free(&end);
	iwp_end_init(&end);
	end.rx_on = true;
	urnic_fpdu_rx_init(&end.rx, crc ? URNIC_FPDU_CRC : 0);
}

static void test_mulpdu(void)
{
	bool last;

	CHECK_EQ(urnic_fpdu_tx_mulpdu(1448), 1448);
	CHECK_EQ(urnic_fpdu_tx_mulpdu(1450), 1448);
	CHECK_EQ(urnic_fpdu_tx_mulpdu(65483), 65480);
	CHECK_EQ(urnic_fpdu_tx_mulpdu(90000), urnic_fpdu_bytes(URNIC_FPDU_ULPDU_MAX));
	CHECK_EQ(urnic_fpdu_tx_mulpdu(40), 0);
	/* siw: 2 + 14 header + payload + 4 CRC fill the MSS exactly, no pad. */
	CHECK_EQ(urnic_fpdu_tx_fit(1448, URNIC_DDP_TAGGED_BYTES, 2500, &last), 1448 - 20);
	CHECK(!last);
	CHECK_EQ(urnic_fpdu_tx_fit(1448, URNIC_DDP_TAGGED_BYTES, 1428, &last), 1428);
	CHECK(last);
	CHECK_EQ(urnic_fpdu_tx_fit(1448, URNIC_DDP_UNTAGGED_BYTES, 1425, &last), 1424);
	CHECK(!last);
}

/* An RDMA Write of len bytes from a 3-element iovec, cut to mulpdu, framed. */
static size_t frame_write(size_t len, size_t mulpdu, bool crc, unsigned *nseg)
{
	struct urnic_ddp_hdr h = { .tagged = true, .opcode = URNIC_RDMAP_WRITE, .stag = 0x1234 };
	size_t off = 0, at = 0, n;
	struct iovec iov[3];
	ssize_t w;

	*nseg = 0;
	do {
		n = urnic_fpdu_tx_fit(mulpdu, URNIC_DDP_TAGGED_BYTES, len - off, &h.last);
		h.to = 0x1000 + off;
		iov[0] = (struct iovec){ msg + off, n / 3 };
		iov[1] = (struct iovec){ msg + off + n / 3, n / 3 };
		iov[2] = (struct iovec){ msg + off + 2 * (n / 3), n - 2 * (n / 3) };
		w = urnic_fpdu_tx_frame(stream + at, sizeof(stream) - at, &h, iov, 3, mulpdu,
					crc ? URNIC_FPDU_CRC : 0);
		CHECK(w > 0 && (size_t)w <= mulpdu);
		if (!h.last)
			CHECK_EQ(w, mulpdu);
		at += (size_t)w;
		off += n;
		(*nseg)++;
	} while (!h.last);
	return at;
}

static void test_frame_and_cut(void)
{
	static const size_t lens[] = { 0, 1, 3, 64, 1427, 1428, 1429, 2500, 20000 };
	unsigned i, k, nseg, crc;
	size_t bytes, got;

	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 7 + 3);
	for (crc = 0; crc < 2; crc++)
		for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			bytes = frame_write(lens[i], 1448, crc, &nseg);
			reset_rx(crc);
			iwp_feed(&end, stream, bytes, 1 + i * 97, 0);
			CHECK(!end.rx_error);
			CHECK_EQ(end.nfpdus, nseg);
			CHECK_EQ(end.rx.state, URNIC_FPDU_RX_LEN);
			for (k = 0, got = 0; k < nseg; k++) {
				CHECK_EQ(end.fpdus[k].hdr.to, 0x1000 + got);
				CHECK_EQ(end.fpdus[k].hdr.last, k + 1 == nseg);
				CHECK(!memcmp(end.fpdus[k].payload, msg + got,
					      end.fpdus[k].payload_len));
				got += end.fpdus[k].payload_len;
			}
			CHECK_EQ(got, lens[i]);
		}
	/* Too big for the MULPDU, too small a buffer. */
	{
		struct urnic_ddp_hdr h = { .tagged = true, .last = true };
		struct iovec v = { msg, 1429 };

		CHECK_EQ(urnic_fpdu_tx_frame(stream, sizeof(stream), &h, &v, 1, 1448, 0),
			 -EMSGSIZE);
		v.iov_len = 100;
		CHECK_EQ(urnic_fpdu_tx_frame(stream, 50, &h, &v, 1, 1448, 0), -ENOBUFS);
	}
}

/* Feeds bytes one at a time; the error's Terminate must be want. */
static void expect_error(const uint8_t *p, size_t n, bool crc, enum urnic_iw_reason r,
			 enum urnic_iw_term want)
{
	reset_rx(crc);
	iwp_feed(&end, p, n, 1, 0);
	CHECK(end.rx_error);
	CHECK_EQ(end.rx.reason, r);
	CHECK_EQ(end.rx.errors[r], 1);
	CHECK_EQ(urnic_fpdu_rx_term(&end.rx), want);
	CHECK_EQ(end.nfpdus, 0);
}

static void test_errors(void)
{
	uint8_t f[256];
	unsigned nseg;
	size_t n = frame_write(64, 1448, true, &nseg);

	/* Any flipped bit of a CRC-protected FPDU: RFC 5044 8, MPA CRC error. */
	memcpy(f, stream, n);
	f[30] ^= 0x10;
	expect_error(f, n, true, URNIC_IW_R_FPDU_CRC, URNIC_IW_TERM_MPA_CRC);
	memcpy(f, stream, n);
	f[n - 1] ^= 1;
	expect_error(f, n, true, URNIC_IW_R_FPDU_CRC, URNIC_IW_TERM_MPA_CRC);
	/* Without CRC negotiated, the same bytes pass. */
	reset_rx(false);
	iwp_feed(&end, f, n, 1, 0);
	CHECK(!end.rx_error && end.nfpdus == 1);
	/* A ULPDU shorter than any DDP header. */
	urnic_put_be16(f, 10);
	expect_error(f, 16, false, URNIC_IW_R_FPDU_SHORT_ULPDU,
		     URNIC_IW_TERM_RDMAP_CATASTROPHIC_STREAM);
	/* DDP version 2 in a tagged segment: RFC 5041 7. */
	memcpy(f, stream, n);
	f[2] = (uint8_t)((f[2] & ~3) | 2);
	expect_error(f, n, false, URNIC_IW_R_DDP_VERSION, URNIC_IW_TERM_DDP_T_VERSION);
	/* RDMAP version 0, and a reserved opcode: RFC 5040 7. */
	memcpy(f, stream, n);
	f[3] &= 0x3f;
	expect_error(f, n, false, URNIC_IW_R_RDMAP_VERSION, URNIC_IW_TERM_RDMAP_VERSION);
	memcpy(f, stream, n);
	f[3] = 0x48;
	expect_error(f, n, false, URNIC_IW_R_RDMAP_OPCODE, URNIC_IW_TERM_RDMAP_OPCODE);
	/* An untagged Send on the Read Request queue: invalid QN. */
	{
		struct urnic_ddp_hdr h = { .last = true, .opcode = URNIC_RDMAP_SEND };
		ssize_t w = urnic_fpdu_tx_frame(f, sizeof(f), &h, NULL, 0, 1448, 0);

		CHECK(w > 0);
		urnic_put_be32(f + 2 + 6, 1);
		expect_error(f, (size_t)w, false, URNIC_IW_R_RDMAP_QN,
			     URNIC_IW_TERM_DDP_U_INVALID_QN);
	}
	/* A Read Request with payload behind its header. */
	{
		struct urnic_ddp_hdr h = { .last = true, .opcode = URNIC_RDMAP_READ_REQ, .qn = 1 };
		uint8_t ulpdu[64] = { 0 };
		ssize_t w = urnic_ddp_encode(&h, ulpdu, sizeof(ulpdu));

		CHECK(w == 46);
		w = urnic_fpdu_encode(f, sizeof(f), ulpdu, 50, 0);
		expect_error(f, (size_t)w, false, URNIC_IW_R_RDMAP_READ_REQ_LENGTH,
			     URNIC_IW_TERM_RDMAP_CATASTROPHIC_STREAM);
	}
	/* Markers cannot be negotiated, so a stream with them is refused outright. */
	iwp_end_free(&end);
	iwp_end_init(&end);
	urnic_fpdu_rx_init(&end.rx, URNIC_FPDU_MARKERS);
	{
		size_t used;

		CHECK_EQ(urnic_fpdu_rx_next(&end.rx, stream, n, &used), URNIC_FPDU_RX_ERROR);
		CHECK_EQ(urnic_fpdu_rx_term(&end.rx), URNIC_IW_TERM_MPA_MARKER);
	}
}

/* Random bytes, and siw-like FPDUs with random bytes flipped, in random splits: the
 * stream either cuts them or stops at one named error; it never reads past a piece. */
static void test_random_bytes(void)
{
	static uint8_t junk[4096];
	unsigned round, i, nseg;
	size_t n;

	for (round = 0; round < 400; round++) {
		if (round % 2) {
			n = frame_write(iwp_rand() % 3000, 1448, true, &nseg);
			if (n > sizeof(junk))
				n = sizeof(junk);
			memcpy(junk, stream, n);
			junk[iwp_rand() % n] ^= (uint8_t)(1 + iwp_rand() % 255);
		} else {
			n = 1 + iwp_rand() % sizeof(junk);
			for (i = 0; i < n; i++)
				junk[i] = (uint8_t)iwp_rand();
		}
		reset_rx(round % 4 < 2);
		iwp_feed(&end, junk, n, 1 + iwp_rand() % 64, 0);
		if (end.rx_error) {
			CHECK(end.rx.reason != URNIC_IW_R_OK);
			CHECK_EQ(end.rx.errors[end.rx.reason], 1);
		}
	}
}

int main(void)
{
	iwp_end_init(&end);
	RUN(test_mulpdu);
	RUN(test_frame_and_cut);
	RUN(test_errors);
	RUN(test_random_bytes);
	iwp_end_free(&end);
	return 0;
}
