/* SPDX-License-Identifier: MIT */
/*
 * fuzz_mpa.c - the MPA Request/Reply codec (src/wire/mpa.c, RFC 5044 7.1 with RFC 6581 3's
 * IRD/ORD word) and the setup state machine that reads it (engine/iwarp/mpa_conn.h): arbitrary
 * bytes as the peer's side of the TCP stream, to an initiator awaiting the Reply or to a
 * responder awaiting the Request, in pieces the input chooses.
 *
 * Codec, on the stream and on every prefix of its first frame: a refusal is the first
 * header rule the bytes break (stated again here), named, and writes nothing; an accepted
 * frame has at most 512 bytes of private data, lies within the bytes given and encodes
 * back to exactly the bytes it consumed but the bits RFC 5044 7.1 leaves unchecked on
 * reception (the reserved flags, and E in revision 1), which it sends as zero.
 * Machine: it never takes more than it is given, nor a byte past the frame; it reaches a
 * frame event exactly when the codec accepts the stream's first frame, after that frame's
 * bytes, and fails for the codec's reason otherwise; what it refuses has a named reason,
 * counted; what it sends (Request, Reply, RTR) decodes. A broken rule aborts; ASan sees any
 * read past the input.
 *
 * Input: byte 0: bit 0 initiator, 1 crc_required, 2 crc_strict, 3 p2p with the RTRs of
 * bits 4-6 (Write, Read, Send), 7 the responder rejects; byte 1: bits 0-3 the largest piece
 * (1 << n bytes, n at most 10), bit 4 the responder decides after one more piece, bit 5
 * the responder's private data is the largest allowed; byte 2: IRD (bits 0-3) and ORD
 * (bits 4-7) of this side; byte 3 seeds the splits; the rest is the stream.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/iwarp/mpa_conn.h"
#include "engine/iwarp/mpa_rtr.h"
#include "harness.h"
#include "wire/byteorder.h"
#include "wire/ddp.h"
#include "wire/fpdu.h"
#include "wire/mpa.h"

enum {
	FUZZ_MPA_CFG = 4,
	FUZZ_MPA_NOW = 1000,
	FUZZ_MPA_TIMEOUT = 1000000000,
};

static void must(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_mpa: %s\n", what);
		abort();
	}
}

/* RFC 5044 7.1 and RFC 6581 3, in the order mpa.h's reader meets the fields. */
static enum urnic_iw_reason first_rule_broken(const uint8_t *d, size_t n)
{
	uint16_t pd_len;

	if (n < URNIC_MPA_HDR_BYTES)
		return URNIC_IW_R_MPA_TRUNCATED;
	if (memcmp(d, "MPA ID Req Frame", 16) && memcmp(d, "MPA ID Rep Frame", 16))
		return URNIC_IW_R_MPA_KEY;
	if (d[16] & 0x80)
		return URNIC_IW_R_MPA_MARKERS;
	if (d[17] != 1 && d[17] != 2)
		return URNIC_IW_R_MPA_REVISION;
	pd_len = (uint16_t)(d[18] << 8 | d[19]);
	if (pd_len > URNIC_MPA_PD_MAX)
		return URNIC_IW_R_MPA_PD_TOO_LONG;
	if (n - URNIC_MPA_HDR_BYTES < pd_len)
		return URNIC_IW_R_MPA_PD_TRUNCATED;
	if (d[17] == 2 && (d[16] & 0x10) && pd_len < URNIC_MPA_V2_BYTES)
		return URNIC_IW_R_MPA_V2_SHORT;
	return URNIC_IW_R_OK;
}

static bool mpa_reason(enum urnic_iw_reason r)
{
	return r >= URNIC_IW_R_MPA_TRUNCATED && r <= URNIC_IW_R_MPA_V2_SHORT;
}

/* One decode of n bytes at d, checked; the reason, *rr and *consumed as decode gave them. */
static enum urnic_iw_reason decode(const uint8_t *d, size_t n, struct urnic_mpa_rr *rr,
				   size_t *consumed)
{
	struct urnic_mpa_rr poison;
	uint8_t again[URNIC_MPA_RR_MAX];
	enum urnic_iw_reason r;
	size_t v2, got = 0xa5a5;

	memset(&poison, 0xa5, sizeof(poison));
	*rr = poison;
	r = urnic_mpa_rr_decode(rr, &got, d, n);
	must(r == first_rule_broken(d, n), "refused for another rule than the first, or accepted");
	if (r != URNIC_IW_R_OK) {
		must(mpa_reason(r), "a refusal without an MPA reason");
		must(!memcmp(rr, &poison, sizeof(poison)) && got == 0xa5a5,
		     "a refused frame wrote the output");
		return r;
	}
	*consumed = got;
	v2 = rr->enhanced ? URNIC_MPA_V2_BYTES : 0;
	must(got == URNIC_MPA_HDR_BYTES + (size_t)urnic_get_be16(d + 18) && got <= n,
	     "consumed is not the header and PD_Length");
	must(got - URNIC_MPA_HDR_BYTES <= URNIC_MPA_PD_MAX && rr->pd_len + v2 <= URNIC_MPA_PD_MAX,
	     "private data over 512 bytes (RFC 5044 7.1)");
	must(rr->pd_len + v2 == got - URNIC_MPA_HDR_BYTES, "private data length");
	must(rr->pd_len ? rr->pd == d + URNIC_MPA_HDR_BYTES + v2 : rr->pd == NULL,
	     "private data outside the frame");
	must(rr->kind == (d[9] == 'q' ? URNIC_MPA_REQ : URNIC_MPA_REP), "kind is not the key's");
	must(!rr->markers && (rr->revision == 1 || rr->revision == 2) &&
		     (!rr->enhanced || rr->revision == 2),
	     "an accepted frame breaks a header rule");
	must(rr->ird <= URNIC_MPA_IRD_ORD_MAX && rr->ord <= URNIC_MPA_IRD_ORD_MAX, "IRD/ORD");
	/* Every bit decode takes, encode writes back: the same bytes, not just the fields,
	 * but for the unchecked bits, which are sent as zero. */
	must(urnic_mpa_rr_encode(rr, again, got - 1) == -ENOBUFS, "encodes into too little room");
	must(urnic_mpa_rr_encode(rr, again, sizeof(again)) == (ssize_t)got,
	     "an accepted frame does not encode to its length");
	must(again[16] == (d[16] & (d[17] == 1 ? 0xe8 : 0xf8)),
	     "an accepted frame's flags encode to others");
	must(!memcmp(again, d, 16) && !memcmp(again + 17, d + 17, got - 17),
	     "an accepted frame encodes to other bytes");
	return r;
}

/* The codec on the stream and on every prefix of its first frame. */
static enum urnic_iw_reason check_codec(const uint8_t *d, size_t n, struct urnic_mpa_rr *rr,
					size_t *consumed)
{
	enum urnic_iw_reason r = decode(d, n, rr, consumed), rp;
	struct urnic_mpa_rr tmp;
	size_t k, end, c;

	end = r == URNIC_IW_R_OK ? *consumed : n < URNIC_MPA_RR_MAX ? n : URNIC_MPA_RR_MAX;
	for (k = 0; k < end; k++) {
		rp = decode(d, k, &tmp, &c);
		if (r == URNIC_IW_R_OK)
			must(rp == URNIC_IW_R_MPA_TRUNCATED || rp == URNIC_IW_R_MPA_PD_TRUNCATED,
			     "a prefix of a good frame refused for more than its length");
	}
	return r;
}

static bool same_fields(const struct urnic_mpa_rr *a, const struct urnic_mpa_rr *b)
{
	return a->kind == b->kind && a->markers == b->markers && a->crc == b->crc &&
	       a->reject == b->reject && a->enhanced == b->enhanced && a->gso_exp == b->gso_exp &&
	       a->revision == b->revision && a->p2p == b->p2p && a->rtr_send == b->rtr_send &&
	       a->rtr_write == b->rtr_write && a->rtr_read == b->rtr_read && a->ird == b->ird &&
	       a->ord == b->ord && a->pd_len == b->pd_len &&
	       (!a->pd_len || !memcmp(a->pd, b->pd, a->pd_len));
}

/* The event a good first frame must cause (the policy of mpa_conn.c, after siw_cm.c). */
static enum urnic_mpa_conn_reason expected(const struct urnic_mpa_conn *c,
					   const struct urnic_mpa_rr *rr)
{
	const struct urnic_mpa_cfg *cfg = &c->cfg;
	uint16_t ird_max = cfg->ird_max > cfg->ird ? cfg->ird_max : cfg->ird;

	if (rr->kind != (c->initiator ? URNIC_MPA_REP : URNIC_MPA_REQ))
		return URNIC_MPA_CONN_R_WRONG_KEY;
	if (!c->initiator)
		return cfg->crc_strict && rr->crc != cfg->crc_required ? URNIC_MPA_CONN_R_CRC_POLICY
								       : URNIC_MPA_CONN_R_OK;
	if (rr->reject)
		return URNIC_MPA_CONN_R_REJECTED;
	if ((cfg->crc_required && !rr->crc) || (cfg->crc_strict && !cfg->crc_required && rr->crc))
		return URNIC_MPA_CONN_R_CRC_POLICY;
	if (!rr->enhanced)
		return URNIC_MPA_CONN_R_OK;
	if (rr->ord > ird_max)
		return URNIC_MPA_CONN_R_IRD_INSUFFICIENT;
	/* RFC 6581 3: a Reply that clears P2P asks for no RTR (mpa_conn.c on_reply). */
	if (cfg->p2p && rr->p2p && !(cfg->rtr_write && rr->rtr_write) &&
	    !(cfg->rtr_read && rr->rtr_read) && !(cfg->rtr_send && rr->rtr_send))
		return URNIC_MPA_CONN_R_NO_MATCHING_RTR;
	return URNIC_MPA_CONN_R_OK;
}

/* What this side queued: one frame of kind (decoded and returned in *rr), then an FPDU
 * of fpdu_bytes (an RTR or a Terminate; 0: none). */
static void check_output(struct urnic_mpa_conn *c, uint8_t kind, struct urnic_mpa_rr *rr)
{
	static uint8_t out[URNIC_MPA_OUT_MAX];
	size_t n, used = 0;

	must(c->out_len <= sizeof(c->out), "output past its buffer");
	n = urnic_mpa_conn_output(c, out, sizeof(out));
	must(c->out_len == 0, "output left behind");
	if (kind) {
		must(decode(out, n, rr, &used) == URNIC_IW_R_OK && rr->kind == kind,
		     "sent a frame that does not decode");
	}
	if (used < n) {
		struct urnic_fpdu f;
		struct urnic_ddp_hdr h;
		size_t hb;

		must(urnic_fpdu_decode(&f, out + used, n - used,
				       c->params.crc ? URNIC_FPDU_CRC : 0) == URNIC_IW_R_OK &&
			     f.bytes == n - used,
		     "sent bytes after the frame that are not one FPDU");
		must(urnic_ddp_decode(&h, &hb, f.ulpdu, f.ulpdu_len) == URNIC_IW_R_OK,
		     "sent an FPDU with a bad DDP header");
	}
}

struct run {
	struct urnic_mpa_conn c;
	const uint8_t *stream;
	size_t len, taken;
	uint8_t cfg0, cfg1, cfg2;
	bool decided;
	/* the first frame's outcome */
	bool frame_done;
	enum urnic_mpa_conn_event frame_ev;
	size_t frame_at;
};

/* Responder in REQ_RCVD: accept (private data at the limit when asked) or reject. */
static void decide(struct run *r)
{
	static const uint8_t pd[URNIC_MPA_PD_MAX + 1];
	struct urnic_mpa_conn *c = &r->c;
	enum urnic_mpa_conn_event ev = URNIC_MPA_EV_ERROR;
	struct urnic_mpa_rr rep;
	uint16_t ird = r->cfg2 & 0x0f, ord = r->cfg2 >> 4, pd_max;

	r->decided = true;
	pd_max = c->params.enhanced ? URNIC_MPA_ULP_PD_MAX : URNIC_MPA_PD_MAX;
	if (r->cfg0 & 0x80) {
		must(urnic_mpa_conn_reject(c, pd, (uint16_t)(pd_max + 1)) == -EMSGSIZE,
		     "rejects with too much private data");
		must(urnic_mpa_conn_reject(c, pd, (r->cfg1 & 0x20) ? pd_max : 0) == 0, "reject");
		must(c->state == URNIC_MPA_CONN_REJECTED, "rejected, not in REJECTED");
		check_output(c, URNIC_MPA_REP, &rep);
		must(rep.reject && rep.revision == c->peer.revision, "the reject's Reply");
		return;
	}
	if (c->params.enhanced && ord > c->params.peer_ird) {
		must(urnic_mpa_conn_accept(c, ird, ord, NULL, 0, &ev, FUZZ_MPA_NOW) == -EINVAL,
		     "accepts an ORD over the peer's IRD");
		ord = c->params.peer_ird;
	}
	must(urnic_mpa_conn_accept(c, ird, ord, pd, (uint16_t)(pd_max + 1), &ev, FUZZ_MPA_NOW) ==
		     -EMSGSIZE,
	     "accepts with too much private data");
	must(urnic_mpa_conn_accept(c, ird, ord, pd, (r->cfg1 & 0x20) ? pd_max : 0, &ev,
				   FUZZ_MPA_NOW) == 0,
	     "accept");
	must(ev == (c->params.p2p ? URNIC_MPA_EV_NONE : URNIC_MPA_EV_CONNECTED), "accept's event");
	must(c->state == (c->params.p2p ? URNIC_MPA_CONN_WAIT_RTR : URNIC_MPA_CONN_CONNECTED),
	     "accept's state");
	check_output(c, URNIC_MPA_REP, &rep);
	must(!rep.reject && rep.revision == c->peer.revision && rep.crc == c->params.crc &&
		     rep.enhanced == c->params.enhanced,
	     "the Reply does not answer the Request");
	must(!rep.enhanced || (rep.ird == ird && rep.ord == ord && rep.p2p == c->params.p2p),
	     "the Reply's IRD/ORD word");
	must(!c->params.p2p || rep.rtr_write + rep.rtr_read + rep.rtr_send == 1,
	     "a peer-to-peer Reply names one RTR");
}

/* A refusal: named, counted, in FAILED; a frame's refusal is the codec's. */
static void check_error(struct run *r)
{
	struct urnic_mpa_conn *c = &r->c;
	struct urnic_mpa_rr rr;
	size_t got;

	must(c->state == URNIC_MPA_CONN_FAILED, "an error outside FAILED");
	must(c->reason > URNIC_MPA_CONN_R_OK && c->reason < URNIC_MPA_CONN_R_COUNT,
	     "an error without a reason");
	must(c->refusals[c->reason] == 1, "a refusal not counted once");
	if (c->reason == URNIC_MPA_CONN_R_FRAME || c->reason == URNIC_MPA_CONN_R_MARKERS) {
		must(mpa_reason(c->wire_reason) && c->wire_reason != URNIC_IW_R_MPA_TRUNCATED &&
			     c->wire_reason != URNIC_IW_R_MPA_PD_TRUNCATED,
		     "a frame refused without the codec's reason");
		must(decode(r->stream, r->taken, &rr, &got) == c->wire_reason,
		     "a frame refused for another reason than the codec's");
		must((c->reason == URNIC_MPA_CONN_R_MARKERS) ==
			     (c->wire_reason == URNIC_IW_R_MPA_MARKERS),
		     "markers named apart");
	}
	/* siw refuses a Request with a Reply with R set; the initiator sends a Terminate. */
	if (!c->initiator &&
	    (c->reason == URNIC_MPA_CONN_R_CRC_POLICY || c->reason == URNIC_MPA_CONN_R_MARKERS)) {
		check_output(c, URNIC_MPA_REP, &rr);
		must(rr.reject && rr.pd_len == 0, "a refusal's Reply");
	} else {
		check_output(c, 0, &rr);
	}
}

/* The first frame's event: after exactly its bytes, with the fields the codec gives. */
static void check_frame_event(struct run *r, enum urnic_mpa_conn_event ev)
{
	struct urnic_mpa_conn *c = &r->c;
	struct urnic_mpa_rr rr;
	size_t got = 0;
	enum urnic_mpa_conn_reason want;

	r->frame_done = true;
	r->frame_ev = ev;
	r->frame_at = r->taken;
	if (ev == URNIC_MPA_EV_ERROR &&
	    (c->reason == URNIC_MPA_CONN_R_FRAME || c->reason == URNIC_MPA_CONN_R_MARKERS))
		return;
	must(decode(r->stream, r->taken, &rr, &got) == URNIC_IW_R_OK && got == r->taken,
	     "a frame event without exactly one good frame taken");
	want = expected(c, &rr);
	if (ev == URNIC_MPA_EV_ERROR) {
		must(c->reason == want, "refused for another reason than the policy's");
		return;
	}
	must(same_fields(&c->peer, &rr), "the peer's frame is not what the codec decodes");
	must(c->peer_pd_len == rr.pd_len, "the peer's private data length");
	must(c->peer_pd_len <= URNIC_MPA_PD_MAX, "the peer's private data over 512 bytes");
	if (ev == URNIC_MPA_EV_REQUEST) {
		must(!c->initiator && want == URNIC_MPA_CONN_R_OK, "a REQUEST the policy refuses");
		must(c->state == URNIC_MPA_CONN_REQ_RCVD, "REQUEST outside REQ_RCVD");
	} else if (ev == URNIC_MPA_EV_REJECTED) {
		must(c->initiator && want == URNIC_MPA_CONN_R_REJECTED, "REJECTED without R");
		must(c->state == URNIC_MPA_CONN_REJECTED, "REJECTED outside REJECTED");
	} else {
		must(ev == URNIC_MPA_EV_CONNECTED && c->initiator && want == URNIC_MPA_CONN_R_OK,
		     "an event the policy does not give");
		must(c->state == URNIC_MPA_CONN_CONNECTED && c->params.crc == rr.crc,
		     "CONNECTED with other CRC than the Reply's");
		must(!c->params.p2p || c->params.rtr != URNIC_MPA_RTR_NONE, "p2p without an RTR");
		check_output(c, 0, &rr);
	}
}

static bool waiting(const struct urnic_mpa_conn *c)
{
	return c->state == URNIC_MPA_CONN_WAIT_REQ || c->state == URNIC_MPA_CONN_WAIT_REP ||
	       c->state == URNIC_MPA_CONN_WAIT_RTR;
}

/* One piece of the stream, *used of it taken; false once the machine takes no more. */
static bool feed(struct run *r, const uint8_t *p, size_t k, size_t *taken)
{
	struct urnic_mpa_conn *c = &r->c;
	uint8_t before = c->state;
	enum urnic_mpa_conn_event ev;
	size_t used = 0xa5a5;

	ev = urnic_mpa_conn_input(c, p, k, &used, FUZZ_MPA_NOW);
	must(used <= k, "took more than given");
	r->taken += used;
	*taken = used;
	if (before == URNIC_MPA_CONN_WAIT_REQ || before == URNIC_MPA_CONN_WAIT_REP) {
		must(r->taken <= URNIC_MPA_RR_MAX, "took more than a frame");
		if (ev != URNIC_MPA_EV_NONE)
			check_frame_event(r, ev);
	}
	switch (ev) {
	case URNIC_MPA_EV_NONE:
		must(waiting(c) ? used == k : used == 0, "NONE left bytes or took them");
		return waiting(c);
	case URNIC_MPA_EV_ERROR:
		check_error(r);
		must(before != URNIC_MPA_CONN_REQ_RCVD || c->reason == URNIC_MPA_CONN_R_EARLY_DATA,
		     "bytes before the Reply are early data");
		return false;
	case URNIC_MPA_EV_REQUEST:
		return true;
	case URNIC_MPA_EV_CONNECTED:
		must(c->state == URNIC_MPA_CONN_CONNECTED, "CONNECTED outside CONNECTED");
		if (before == URNIC_MPA_CONN_WAIT_RTR)
			must(c->rtr_len ==
				     urnic_fpdu_bytes((size_t)c->rtr_in[0] << 8 | c->rtr_in[1]),
			     "an RTR taken with bytes past its FPDU");
		return false;
	default:
		must(ev == URNIC_MPA_EV_REJECTED, "an unknown event");
		return false;
	}
}

static void open_conn(struct run *r)
{
	struct urnic_mpa_cfg cfg = { .crc_required = r->cfg0 & 0x02,
				     .crc_strict = r->cfg0 & 0x04,
				     .p2p = r->cfg0 & 0x08,
				     .ird = r->cfg2 & 0x0f,
				     .ord = r->cfg2 >> 4,
				     .pd = (const uint8_t *)"fuzz_mpa",
				     .pd_len = 8,
				     .timeout_ns = FUZZ_MPA_TIMEOUT };
	struct urnic_mpa_rr req;

	if (cfg.p2p) {
		cfg.rtr_write = r->cfg0 & 0x10;
		cfg.rtr_read = r->cfg0 & 0x20;
		cfg.rtr_send = r->cfg0 & 0x40;
	}
	must(urnic_mpa_conn_init(&r->c, &cfg, r->cfg0 & 0x01, FUZZ_MPA_NOW) == 0, "init");
	if (!r->c.initiator) {
		must(r->c.state == URNIC_MPA_CONN_WAIT_REQ && r->c.out_len == 0, "responder init");
		return;
	}
	must(r->c.state == URNIC_MPA_CONN_WAIT_REP, "initiator init");
	check_output(&r->c, URNIC_MPA_REQ, &req);
	must(req.revision == 2 && req.enhanced && req.crc == cfg.crc_required &&
		     req.p2p == cfg.p2p && req.ird == cfg.ird && req.ord == cfg.ord &&
		     req.pd_len == cfg.pd_len && !memcmp(req.pd, cfg.pd, cfg.pd_len),
	     "the Request is not the configuration's");
}

/* Whether the machine's first frame agrees with the codec on the whole stream. */
static void check_against_codec(struct run *r)
{
	struct urnic_mpa_rr rr;
	size_t got = 0;
	enum urnic_iw_reason d = check_codec(r->stream, r->len, &rr, &got);

	if (d == URNIC_IW_R_OK) {
		must(r->frame_done && r->frame_at == got, "a good frame without its event");
		must(r->frame_ev != URNIC_MPA_EV_ERROR || (r->c.reason != URNIC_MPA_CONN_R_FRAME &&
							   r->c.reason != URNIC_MPA_CONN_R_MARKERS),
		     "a good frame refused as a frame");
	} else if (d == URNIC_IW_R_MPA_TRUNCATED || d == URNIC_IW_R_MPA_PD_TRUNCATED) {
		must(!r->frame_done && waiting(&r->c) && r->taken == r->len,
		     "a partial frame did not wait for the rest");
	} else {
		must(r->frame_done && r->frame_ev == URNIC_MPA_EV_ERROR && r->c.wire_reason == d,
		     "a bad frame not refused for the codec's reason");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct run r;
	size_t pos, max;
	uint32_t x;
	bool more = true;

	if (size < FUZZ_MPA_CFG)
		return 0;
	memset(&r, 0, sizeof(r));
	r.cfg0 = data[0];
	r.cfg1 = data[1];
	r.cfg2 = data[2];
	r.stream = data + FUZZ_MPA_CFG;
	r.len = size - FUZZ_MPA_CFG;
	max = (size_t)1 << ((data[1] & 0x0f) > 10 ? 10 : (data[1] & 0x0f));
	x = data[3] | 0x100u;
	open_conn(&r);
	for (pos = 0; pos < r.len && more;) {
		size_t k, used;

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		k = 1 + x % max;
		if (k > r.len - pos)
			k = r.len - pos;
		more = feed(&r, r.stream + pos, k, &used);
		if (r.c.state != URNIC_MPA_CONN_REQ_RCVD) {
			pos += k;
			continue;
		}
		/* After the Request, the rest of the piece comes again: as the RTR once
		 * accepted, or as early data when the responder decides one piece late. */
		pos += used;
		if (!(r.cfg1 & 0x10))
			decide(&r);
	}
	if (r.c.state == URNIC_MPA_CONN_REQ_RCVD && !r.decided)
		decide(&r);
	check_against_codec(&r);
	if (getenv("URNIC_FUZZ_TRACE"))
		fprintf(stderr, "fuzz_mpa: %s, state %u, %s (%s), %zu of %zu bytes taken\n",
			r.c.initiator ? "initiator" : "responder", r.c.state,
			urnic_mpa_conn_reason_name(r.c.reason),
			urnic_iw_reason_name(r.c.wire_reason), r.taken, r.len);
	if (waiting(&r.c)) {
		must(urnic_mpa_conn_tick(&r.c, FUZZ_MPA_NOW + FUZZ_MPA_TIMEOUT) ==
				     URNIC_MPA_EV_ERROR &&
			     r.c.reason == URNIC_MPA_CONN_R_TIMEOUT,
		     "no timeout while waiting");
		check_error(&r);
	}
	return 0;
}
