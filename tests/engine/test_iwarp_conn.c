/* SPDX-License-Identifier: MIT */
/*
 * test_iwarp_conn.c - two MPA setup machines (src/engine/iwarp) back to back through
 * byte pipes with random splits, down to one byte: accept, reject, CRC either way and
 * siw's strict policy, peer-to-peer RTRs, markers, bad revision, oversize private data,
 * siw's relaxed IRD/ORD negotiation, IRD and RTR refusals with their Terminates,
 * timeouts; then FPDUs framed to a MULPDU and cut back out of the stream, and the
 * Terminate each receive error calls for.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "engine/iwarp/fpdu_tx.h"
#include "engine/iwarp/mpa_rtr.h"
#include "iwarp_pipe.h"
#include "wire/byteorder.h"

#define SEC 1000000000ull

static struct iwp_end ini, rsp;

enum action { ACCEPT, REJECT, NOTHING };

static const struct urnic_mpa_cfg base = { .ird = 4, .ord = 4, .timeout_ns = 10 * SEC };

/* Runs setup to its end; split 1 is one byte at a time. */
static void run(const struct urnic_mpa_cfg *ci, const struct urnic_mpa_cfg *cr, enum action a,
		size_t split)
{
	enum urnic_mpa_conn_event ev = URNIC_MPA_EV_NONE;
	size_t moved;
	int round;

	iwp_end_free(&ini);
	iwp_end_free(&rsp);
	iwp_end_init(&ini);
	iwp_end_init(&rsp);
	CHECK_EQ(urnic_mpa_conn_init(&ini.c, ci, true, 0), 0);
	CHECK_EQ(urnic_mpa_conn_init(&rsp.c, cr, false, 0), 0);
	for (round = 0; round < 16; round++) {
		moved = iwp_pump(&ini, &rsp, split, 1);
		if (rsp.c.state == URNIC_MPA_CONN_REQ_RCVD && a == ACCEPT) {
			CHECK_EQ(urnic_mpa_conn_accept(&rsp.c, 4, 4, (const uint8_t *)"srv", 3, &ev,
						       1),
				 0);
			iwp_note(&rsp, ev);
		} else if (rsp.c.state == URNIC_MPA_CONN_REQ_RCVD && a == REJECT) {
			CHECK_EQ(urnic_mpa_conn_reject(&rsp.c, (const uint8_t *)"busy", 4), 0);
		}
		moved += iwp_pump(&rsp, &ini, split, 1);
		if (!moved && round > 2)
			break;
	}
}

static void check_connected(bool crc)
{
	CHECK_EQ(ini.c.state, URNIC_MPA_CONN_CONNECTED);
	CHECK_EQ(rsp.c.state, URNIC_MPA_CONN_CONNECTED);
	CHECK_EQ(ini.events[URNIC_MPA_EV_CONNECTED], 1);
	CHECK_EQ(rsp.events[URNIC_MPA_EV_CONNECTED], 1);
	CHECK_EQ(rsp.events[URNIC_MPA_EV_REQUEST], 1);
	CHECK_EQ(ini.c.params.crc, crc);
	CHECK_EQ(rsp.c.params.crc, crc);
	CHECK(ini.c.params.enhanced && rsp.c.params.enhanced);
	CHECK_EQ(rsp.c.peer_pd_len, 3);
	CHECK(!memcmp(rsp.c.peer_pd, "cli", 3));
	CHECK_EQ(ini.c.peer_pd_len, 3);
	CHECK(!memcmp(ini.c.peer_pd, "srv", 3));
	CHECK_EQ(ini.c.params.peer_ird, 4);
	CHECK_EQ(rsp.c.params.peer_ord, 4);
}

static struct urnic_mpa_cfg cfg_pd(void)
{
	struct urnic_mpa_cfg c = base;

	c.pd = (const uint8_t *)"cli";
	c.pd_len = 3;
	return c;
}

static void test_accept_any_split(void)
{
	struct urnic_mpa_cfg c = cfg_pd();
	size_t split;

	for (split = 1; split < 80; split += 7) {
		run(&c, &base, ACCEPT, split);
		check_connected(false);
		CHECK_EQ(ini.nfpdus + rsp.nfpdus, 0);
	}
}

/* RFC 5044 7.1: CRC when either side asks; siw's strict policy refuses a difference. */
static void test_crc_negotiation(void)
{
	struct urnic_mpa_cfg ci = cfg_pd(), cr = base;
	int a, b;

	for (a = 0; a < 2; a++)
		for (b = 0; b < 2; b++) {
			ci.crc_required = a;
			cr.crc_required = b;
			run(&ci, &cr, ACCEPT, 1 + iwp_rand() % 30);
			check_connected(a || b);
		}
	/* Responder strict without CRC, initiator asks: a Reply with R, both give up. */
	ci.crc_required = true;
	cr.crc_required = false;
	cr.crc_strict = true;
	run(&ci, &cr, ACCEPT, 5);
	CHECK_EQ(rsp.c.state, URNIC_MPA_CONN_FAILED);
	CHECK_EQ(rsp.c.reason, URNIC_MPA_CONN_R_CRC_POLICY);
	CHECK_EQ(rsp.c.refusals[URNIC_MPA_CONN_R_CRC_POLICY], 1);
	CHECK_EQ(ini.c.state, URNIC_MPA_CONN_REJECTED);
	/* Initiator strict without CRC, the responder requires it: the Reply is refused. */
	ci.crc_required = false;
	ci.crc_strict = true;
	cr.crc_required = true;
	cr.crc_strict = false;
	run(&ci, &cr, ACCEPT, 5);
	CHECK_EQ(ini.c.state, URNIC_MPA_CONN_FAILED);
	CHECK_EQ(ini.c.reason, URNIC_MPA_CONN_R_CRC_POLICY);
}

static void test_reject(void)
{
	struct urnic_mpa_cfg c = cfg_pd();

	run(&c, &base, REJECT, 1);
	CHECK_EQ(rsp.c.state, URNIC_MPA_CONN_REJECTED);
	CHECK_EQ(ini.c.state, URNIC_MPA_CONN_REJECTED);
	CHECK_EQ(ini.events[URNIC_MPA_EV_REJECTED], 1);
	CHECK_EQ(ini.c.peer_pd_len, 4);
	CHECK(!memcmp(ini.c.peer_pd, "busy", 4));
	CHECK(ini.c.peer.reject);
	CHECK_EQ(urnic_mpa_conn_accept(&rsp.c, 1, 1, NULL, 0, &(enum urnic_mpa_conn_event){ 0 }, 1),
		 -EALREADY);
}

/* RFC 6581 3 peer-to-peer: the responder picks an RTR the initiator offered (siw: Write
 * first, then Read), the initiator sends it, the responder takes it before connecting. */
static void test_p2p_rtr(void)
{
	static const struct {
		bool w, r, s;
		uint8_t want;
	} cases[] = {
		{ 1, 1, 1, URNIC_MPA_RTR_WRITE },
		{ 0, 1, 1, URNIC_MPA_RTR_READ },
		{ 0, 0, 1, URNIC_MPA_RTR_SEND },
		{ 1, 0, 0, URNIC_MPA_RTR_WRITE },
	};
	struct urnic_mpa_cfg c = cfg_pd();
	unsigned i, crc;

	for (crc = 0; crc < 2; crc++)
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			c.p2p = true;
			c.crc_required = crc;
			c.rtr_write = cases[i].w;
			c.rtr_read = cases[i].r;
			c.rtr_send = cases[i].s;
			run(&c, &base, ACCEPT, 1 + i * 3);
			check_connected(crc);
			CHECK(ini.c.params.p2p && rsp.c.params.p2p);
			CHECK_EQ(ini.c.params.rtr, cases[i].want);
			CHECK_EQ(rsp.c.params.rtr, cases[i].want);
			/* The RTR never reaches the responder's FPDU stream; a Read's
			 * zero-length Read Response reaches the initiator's. */
			CHECK_EQ(rsp.nfpdus, 0);
			CHECK_EQ(ini.nfpdus, cases[i].want == URNIC_MPA_RTR_READ);
			if (ini.nfpdus) {
				CHECK_EQ(ini.fpdus[0].hdr.opcode, URNIC_RDMAP_READ_RESP);
				CHECK_EQ(ini.fpdus[0].payload_len, 0);
				CHECK(ini.fpdus[0].hdr.last);
			}
		}
}

/* The RTR FPDU as siw's siw_qp_mpa_rts() builds it: zero-length Write to STag 1. */
static void test_rtr_fpdu_bytes(void)
{
	static const uint8_t siw_write_rtr[] = { 0x00, 0x0e, 0xc1, 0x40, 0, 0, 0, 1, 0, 0,
						 0,    0,    0,	   0,	 0, 0, 0, 0, 0, 0 };
	uint8_t buf[64];
	struct urnic_fpdu f;
	struct urnic_ddp_hdr h;
	size_t hb;

	CHECK_EQ(urnic_mpa_rtr_fpdu(URNIC_MPA_RTR_WRITE, false, buf, sizeof(buf)),
		 (ssize_t)sizeof(siw_write_rtr));
	CHECK(!memcmp(buf, siw_write_rtr, sizeof(siw_write_rtr)));
	CHECK_EQ(urnic_fpdu_decode(&f, siw_write_rtr, sizeof(siw_write_rtr), 0), URNIC_IW_R_OK);
	CHECK_EQ(urnic_ddp_decode(&h, &hb, f.ulpdu, f.ulpdu_len), URNIC_IW_R_OK);
	CHECK(urnic_mpa_rtr_is(URNIC_MPA_RTR_WRITE, &h, f.ulpdu_len - hb));
	CHECK(!urnic_mpa_rtr_is(URNIC_MPA_RTR_READ, &h, f.ulpdu_len - hb));
	CHECK_EQ(h.stag, URNIC_MPA_RTR_STAG);
	CHECK_EQ(urnic_mpa_rtr_fpdu(URNIC_MPA_RTR_READ, true, buf, sizeof(buf)),
		 URNIC_MPA_RTR_FPDU_MAX);
	CHECK_EQ(urnic_fpdu_decode(&f, buf, URNIC_MPA_RTR_FPDU_MAX, URNIC_FPDU_CRC), URNIC_IW_R_OK);
	CHECK_EQ(urnic_ddp_decode(&h, &hb, f.ulpdu, f.ulpdu_len), URNIC_IW_R_OK);
	CHECK(urnic_mpa_rtr_is(URNIC_MPA_RTR_READ, &h, f.ulpdu_len - hb));
	CHECK_EQ(urnic_mpa_rtr_fpdu(URNIC_MPA_RTR_NONE, false, buf, sizeof(buf)), -EINVAL);
}

/* Feeds a hand-made frame one byte at a time; the event when it ends. */
static enum urnic_mpa_conn_event feed_bytes(struct urnic_mpa_conn *c, const uint8_t *p, size_t n,
					    size_t *at)
{
	enum urnic_mpa_conn_event ev = URNIC_MPA_EV_NONE;
	size_t i, used;

	for (i = 0; i < n && ev == URNIC_MPA_EV_NONE; i++) {
		ev = urnic_mpa_conn_input(c, p + i, 1, &used, 1);
		CHECK_EQ(used, ev == URNIC_MPA_EV_NONE || used ? 1 : 0);
	}
	*at = i;
	return ev;
}

static size_t make_rr(uint8_t *buf, uint8_t kind, uint16_t ird, uint16_t ord, bool p2p, bool rd)
{
	struct urnic_mpa_rr rr = { .kind = kind,
				   .enhanced = true,
				   .revision = 2,
				   .ird = ird,
				   .ord = ord,
				   .p2p = p2p,
				   .rtr_read = rd };
	ssize_t n = urnic_mpa_rr_encode(&rr, buf, URNIC_MPA_RR_MAX);

	CHECK(n > 0);
	return (size_t)n;
}

static void check_term(struct urnic_mpa_conn *c, enum urnic_iw_term want)
{
	struct urnic_iw_term_code tc = urnic_iw_term_code(want);
	uint8_t out[URNIC_MPA_OUT_MAX];
	size_t n = urnic_mpa_conn_output(c, out, sizeof(out)), hb;
	struct urnic_fpdu f;
	struct urnic_ddp_hdr h;
	struct urnic_rdmap_term t;

	CHECK_EQ(urnic_fpdu_decode(&f, out, n, 0), URNIC_IW_R_OK);
	CHECK_EQ(f.bytes, n);
	CHECK_EQ(urnic_ddp_decode(&h, &hb, f.ulpdu, f.ulpdu_len), URNIC_IW_R_OK);
	CHECK_EQ(h.opcode, URNIC_RDMAP_TERMINATE);
	CHECK_EQ(urnic_rdmap_term_decode(&t, f.ulpdu + hb, f.ulpdu_len - hb), URNIC_IW_R_OK);
	CHECK(t.layer == tc.layer && t.etype == tc.etype && t.code == tc.code);
}

static void test_refusals(void)
{
	struct urnic_mpa_conn c;
	struct urnic_mpa_cfg p2p = base;
	uint8_t f[URNIC_MPA_RR_MAX], out[URNIC_MPA_OUT_MAX];
	struct urnic_mpa_rr rr;
	size_t n, at, used;

	/* Markers: siw answers with a Reply with R set. */
	n = make_rr(f, URNIC_MPA_REQ, 4, 4, false, false);
	f[16] |= 0x80;
	CHECK_EQ(urnic_mpa_conn_init(&c, &base, false, 0), 0);
	CHECK_EQ(feed_bytes(&c, f, n, &at), URNIC_MPA_EV_ERROR);
	CHECK_EQ(at, URNIC_MPA_HDR_BYTES);
	CHECK_EQ(c.reason, URNIC_MPA_CONN_R_MARKERS);
	n = urnic_mpa_conn_output(&c, out, sizeof(out));
	CHECK_EQ(urnic_mpa_rr_decode(&rr, &used, out, n), URNIC_IW_R_OK);
	CHECK(rr.kind == URNIC_MPA_REP && rr.reject && !rr.markers);
	/* Revision 3: refused from the header, nothing sent. */
	n = make_rr(f, URNIC_MPA_REQ, 4, 4, false, false);
	f[17] = 3;
	CHECK_EQ(urnic_mpa_conn_init(&c, &base, false, 0), 0);
	CHECK_EQ(feed_bytes(&c, f, n, &at), URNIC_MPA_EV_ERROR);
	CHECK(c.reason == URNIC_MPA_CONN_R_FRAME && c.wire_reason == URNIC_IW_R_MPA_REVISION);
	CHECK_EQ(urnic_mpa_conn_output(&c, out, sizeof(out)), 0);
	/* PD_Length 513: refused at the 20th byte, before any private data. */
	n = make_rr(f, URNIC_MPA_REP, 4, 4, false, false);
	urnic_put_be16(f + 18, URNIC_MPA_PD_MAX + 1);
	CHECK_EQ(urnic_mpa_conn_init(&c, &base, true, 0), 0);
	CHECK_EQ(feed_bytes(&c, f, n, &at), URNIC_MPA_EV_ERROR);
	CHECK(at == URNIC_MPA_HDR_BYTES && c.wire_reason == URNIC_IW_R_MPA_PD_TOO_LONG);
	/* A Request where the Reply belongs. */
	n = make_rr(f, URNIC_MPA_REQ, 4, 4, false, false);
	CHECK_EQ(urnic_mpa_conn_init(&c, &base, true, 0), 0);
	CHECK_EQ(feed_bytes(&c, f, n, &at), URNIC_MPA_EV_ERROR);
	CHECK_EQ(c.reason, URNIC_MPA_CONN_R_WRONG_KEY);
	/* Peer-to-peer with a Write offered and a Read chosen. */
	p2p.p2p = p2p.rtr_write = true;
	n = make_rr(f, URNIC_MPA_REP, 4, 4, true, true);
	CHECK_EQ(urnic_mpa_conn_init(&c, &p2p, true, 0), 0);
	(void)urnic_mpa_conn_output(&c, out, sizeof(out));
	CHECK_EQ(feed_bytes(&c, f, n, &at), URNIC_MPA_EV_ERROR);
	CHECK_EQ(c.reason, URNIC_MPA_CONN_R_NO_MATCHING_RTR);
	check_term(&c, URNIC_IW_TERM_MPA_NO_MATCHING_RTR);
	/* Bytes after the Request before the Reply went out. */
	n = make_rr(f, URNIC_MPA_REQ, 4, 4, false, false);
	CHECK_EQ(urnic_mpa_conn_init(&c, &base, false, 0), 0);
	f[n] = 0;
	CHECK_EQ(urnic_mpa_conn_input(&c, f, n + 1, &used, 1), URNIC_MPA_EV_REQUEST);
	CHECK_EQ(used, n);
	CHECK_EQ(urnic_mpa_conn_input(&c, f + n, 1, &used, 1), URNIC_MPA_EV_ERROR);
	CHECK_EQ(c.reason, URNIC_MPA_CONN_R_EARLY_DATA);
}

/* reply_with(CFG, IRD, ORD): an initiator of CFG fed a Reply with IRD and ORD. */
static enum urnic_mpa_conn_event
reply_with(struct urnic_mpa_conn *c, const struct urnic_mpa_cfg *cfg, uint16_t ird, uint16_t ord)
{
	uint8_t f[URNIC_MPA_RR_MAX], out[URNIC_MPA_OUT_MAX];
	size_t n = make_rr(f, URNIC_MPA_REP, ird, ord, false, false), at;

	CHECK_EQ(urnic_mpa_conn_init(c, cfg, true, 0), 0);
	(void)urnic_mpa_conn_output(c, out, sizeof(out));
	return feed_bytes(c, f, n, &at);
}

/* siw_proc_mpareply's relaxed IRD negotiation: our ORD comes down to the Reply's IRD, our
 * IRD goes up to its ORD within the device's limit; an ORD past that limit is
 * RFC 6581 3's insufficient IRD, with the Terminate. */
static void test_relaxed_ird(void)
{
	struct urnic_mpa_cfg cfg = base;
	struct urnic_mpa_conn c;

	CHECK_EQ(reply_with(&c, &cfg, 2, 1), URNIC_MPA_EV_CONNECTED);
	CHECK(c.params.ord == 2 && c.params.ird == 1);
	CHECK(c.params.peer_ird == 2 && c.params.peer_ord == 1);
	CHECK_EQ(reply_with(&c, &cfg, 0, 0), URNIC_MPA_EV_CONNECTED);
	CHECK(c.params.ord == 0 && c.params.ird == 0);
	cfg.ird_max = 16;
	CHECK_EQ(reply_with(&c, &cfg, 4, 16), URNIC_MPA_EV_CONNECTED);
	CHECK(c.params.ord == 4 && c.params.ird == 16);
	CHECK_EQ(c.refusals[URNIC_MPA_CONN_R_IRD_INSUFFICIENT], 0);
	CHECK_EQ(reply_with(&c, &cfg, 4, 17), URNIC_MPA_EV_ERROR);
	CHECK_EQ(c.reason, URNIC_MPA_CONN_R_IRD_INSUFFICIENT);
	check_term(&c, URNIC_IW_TERM_MPA_INSUFFICIENT_IRD);
	cfg.ird_max = 0; /* no device limit given: the IRD asked for is the limit */
	CHECK_EQ(reply_with(&c, &cfg, 4, 5), URNIC_MPA_EV_ERROR);
	CHECK_EQ(c.reason, URNIC_MPA_CONN_R_IRD_INSUFFICIENT);
	check_term(&c, URNIC_IW_TERM_MPA_INSUFFICIENT_IRD);
}

static void test_bad_arguments(void)
{
	static const uint8_t big[URNIC_MPA_PD_MAX + 1];
	struct urnic_mpa_cfg c = base;
	struct urnic_mpa_conn m;
	enum urnic_mpa_conn_event ev;
	uint8_t f[URNIC_MPA_RR_MAX];
	size_t n, used;

	c.pd = big;
	c.pd_len = URNIC_MPA_ULP_PD_MAX + 1;
	CHECK_EQ(urnic_mpa_conn_init(&m, &c, true, 0), -EMSGSIZE);
	c.pd_len = URNIC_MPA_ULP_PD_MAX;
	CHECK_EQ(urnic_mpa_conn_init(&m, &c, true, 0), 0);
	CHECK_EQ(m.out_len, URNIC_MPA_RR_MAX);
	c = base;
	c.ird = URNIC_MPA_IRD_ORD_MAX + 1;
	CHECK_EQ(urnic_mpa_conn_init(&m, &c, true, 0), -EINVAL);
	c = base;
	c.rtr_write = true; /* an RTR without p2p */
	CHECK_EQ(urnic_mpa_conn_init(&m, &c, true, 0), -EINVAL);
	n = make_rr(f, URNIC_MPA_REQ, 2, 2, false, false);
	CHECK_EQ(urnic_mpa_conn_init(&m, &base, false, 0), 0);
	CHECK_EQ(urnic_mpa_conn_input(&m, f, n, &used, 1), URNIC_MPA_EV_REQUEST);
	CHECK_EQ(urnic_mpa_conn_accept(&m, 2, 2, big, URNIC_MPA_ULP_PD_MAX + 1, &ev, 1), -EMSGSIZE);
	CHECK_EQ(urnic_mpa_conn_reject(&m, big, URNIC_MPA_ULP_PD_MAX + 1), -EMSGSIZE);
	/* siw_accept: an ORD above the initiator's IRD cannot be served. */
	CHECK_EQ(urnic_mpa_conn_accept(&m, 2, 3, NULL, 0, &ev, 1), -EINVAL);
	CHECK_EQ(m.state, URNIC_MPA_CONN_REQ_RCVD);
	CHECK_EQ(m.out_len, 0);
	CHECK_EQ(urnic_mpa_conn_accept(&m, 2, 2, NULL, 0, &ev, 1), 0);
	CHECK_EQ(ev, URNIC_MPA_EV_CONNECTED);
}

/* RFC 5044 7.1 revision 1 (no IRD/ORD word): a responder answers in kind, an initiator
 * takes such a Reply as plain MPA, as siw falls back. */
static void test_revision_1(void)
{
	struct urnic_mpa_rr v1 = { .kind = URNIC_MPA_REQ, .revision = 1 }, rr;
	struct urnic_mpa_conn c;
	enum urnic_mpa_conn_event ev;
	uint8_t f[URNIC_MPA_RR_MAX];
	size_t n, at, used;

	n = (size_t)urnic_mpa_rr_encode(&v1, f, sizeof(f));
	CHECK_EQ(urnic_mpa_conn_init(&c, &base, false, 0), 0);
	CHECK_EQ(feed_bytes(&c, f, n, &at), URNIC_MPA_EV_REQUEST);
	CHECK(!c.params.enhanced && !c.params.p2p);
	CHECK_EQ(urnic_mpa_conn_accept(&c, 4, 4, NULL, 0, &ev, 1), 0);
	CHECK_EQ(ev, URNIC_MPA_EV_CONNECTED);
	n = urnic_mpa_conn_output(&c, f, sizeof(f));
	CHECK_EQ(urnic_mpa_rr_decode(&rr, &used, f, n), URNIC_IW_R_OK);
	CHECK(rr.kind == URNIC_MPA_REP && rr.revision == 1 && !rr.enhanced && !rr.reject);
	CHECK_EQ(urnic_mpa_conn_init(&c, &base, true, 0), 0);
	CHECK_EQ(feed_bytes(&c, f, n, &at), URNIC_MPA_EV_CONNECTED);
	CHECK(!c.params.enhanced && c.params.ird == 4);
	/* An initiator asking for peer-to-peer mode connects without an RTR when the Reply
	 * is revision 1 or clears P2P (RFC 6581 3): its ULP then sends first. */
	for (int enh = 0; enh < 2; enh++) {
		struct urnic_mpa_cfg p2p = base;
		uint8_t g[URNIC_MPA_RR_MAX], req[URNIC_MPA_OUT_MAX];
		size_t k = enh ? make_rr(g, URNIC_MPA_REP, 4, 4, false, false) : n;

		if (!enh)
			memcpy(g, f, n);
		p2p.p2p = p2p.rtr_write = p2p.rtr_read = true;
		CHECK_EQ(urnic_mpa_conn_init(&c, &p2p, true, 0), 0);
		(void)urnic_mpa_conn_output(&c, req, sizeof(req)); /* the Request */
		CHECK_EQ(feed_bytes(&c, g, k, &at), URNIC_MPA_EV_CONNECTED);
		CHECK(!c.params.p2p && c.params.rtr == URNIC_MPA_RTR_NONE);
		CHECK_EQ(c.params.enhanced, enh);
		CHECK_EQ(c.out_len, 0);
	}
}

static void test_timeouts(void)
{
	struct urnic_mpa_conn c;
	struct urnic_mpa_cfg p2p = base;
	enum urnic_mpa_conn_event ev;
	uint8_t f[URNIC_MPA_RR_MAX];
	size_t n, used;
	int initiator;

	for (initiator = 0; initiator < 2; initiator++) {
		CHECK_EQ(urnic_mpa_conn_init(&c, &base, initiator, 5 * SEC), 0);
		CHECK_EQ(urnic_mpa_conn_tick(&c, 15 * SEC - 1), URNIC_MPA_EV_NONE);
		/* half a frame does not hold the timer off */
		CHECK_EQ(urnic_mpa_conn_input(&c, (const uint8_t *)"MPA ID", 6, &used, 6 * SEC),
			 URNIC_MPA_EV_NONE);
		CHECK_EQ(urnic_mpa_conn_tick(&c, 15 * SEC), URNIC_MPA_EV_ERROR);
		CHECK_EQ(c.reason, URNIC_MPA_CONN_R_TIMEOUT);
		CHECK_EQ(c.refusals[URNIC_MPA_CONN_R_TIMEOUT], 1);
	}
	/* The peer-to-peer responder waits for the RTR with a new deadline. */
	p2p.p2p = p2p.rtr_write = true;
	CHECK_EQ(urnic_mpa_conn_init(&c, &p2p, true, 0), 0);
	n = urnic_mpa_conn_output(&c, f, sizeof(f));
	CHECK_EQ(urnic_mpa_conn_init(&c, &base, false, 0), 0);
	CHECK_EQ(urnic_mpa_conn_input(&c, f, n, &used, 9 * SEC), URNIC_MPA_EV_REQUEST);
	CHECK_EQ(urnic_mpa_conn_accept(&c, 4, 4, NULL, 0, &ev, 9 * SEC), 0);
	CHECK_EQ(ev, URNIC_MPA_EV_NONE);
	CHECK_EQ(urnic_mpa_conn_tick(&c, 18 * SEC), URNIC_MPA_EV_NONE);
	CHECK_EQ(urnic_mpa_conn_tick(&c, 19 * SEC), URNIC_MPA_EV_ERROR);
	CHECK_EQ(c.reason, URNIC_MPA_CONN_R_TIMEOUT);
	/* TCP closing during setup is an error too, and nothing once connected. */
	CHECK_EQ(urnic_mpa_conn_init(&c, &base, true, 0), 0);
	CHECK_EQ(urnic_mpa_conn_closed(&c), URNIC_MPA_EV_ERROR);
	CHECK_EQ(c.reason, URNIC_MPA_CONN_R_CLOSED);
}

int main(void)
{
	iwp_end_init(&ini);
	iwp_end_init(&rsp);
	RUN(test_accept_any_split);
	RUN(test_crc_negotiation);
	RUN(test_reject);
	RUN(test_p2p_rtr);
	RUN(test_rtr_fpdu_bytes);
	RUN(test_refusals);
	RUN(test_relaxed_ird);
	RUN(test_bad_arguments);
	RUN(test_revision_1);
	RUN(test_timeouts);
	iwp_end_free(&ini);
	iwp_end_free(&rsp);
	return 0;
}
