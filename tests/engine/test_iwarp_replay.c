/* SPDX-License-Identifier: MIT */
/*
 * test_iwarp_replay.c - Linux siw's captured iWARP streams (tests/golden/siw_*.pcap)
 * replayed through the MPA setup machines and FPDU receive streams (src/engine/iwarp).
 *
 * Per connection, the client's stream goes to a responder and the server's to an
 * initiator, in random splits down to one byte: each sends byte for byte the frame siw
 * sent in its place, connects with siw's parameters, and then cuts every FPDU exactly
 * where the wire codec finds it, with the same headers and payload. Segmented messages
 * are cut as urnic_fpdu_tx_fit() cuts them at the size siw used.
 * Usage: test_engine_iwarp_replay GOLDEN_DIR.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "engine/iwarp/fpdu_tx.h"
#include "iwarp_pipe.h"
#include "tcpflow.h"

static const struct {
	const char *file;
	uint16_t port; /* the server's */
	bool crc;
} captures[] = {
	{ "siw_rping.pcap", 7174, false },     { "siw_rping_crc.pcap", 7174, true },
	{ "siw_send.pcap", 18515, false },     { "siw_write.pcap", 18515, false },
	{ "siw_write_crc.pcap", 18515, true }, { "siw_read.pcap", 18515, false },
};

static struct iwp_end ini, rsp;
static const char *golden_dir;
static unsigned total_fpdus, segmented;

/* The FPDUs the end cut are those the codec finds from off to the stream's end. */
static void check_cut(const struct iwp_end *e, const struct tcp_flow *f, size_t off, bool crc,
		      uint16_t peer_mss)
{
	struct urnic_fpdu fp;
	struct urnic_ddp_hdr h;
	size_t hb, full = 0, remaining = 0;
	unsigned k = 0;
	bool last;

	for (; off < f->len; off += fp.bytes, k++) {
		const struct iwp_fpdu *g = &e->fpdus[k];

		CHECK(k < e->nfpdus);
		CHECK_EQ(urnic_fpdu_decode(&fp, f->stream + off, f->len - off,
					   crc ? URNIC_FPDU_CRC : 0),
			 URNIC_IW_R_OK);
		CHECK_EQ(urnic_ddp_decode(&h, &hb, fp.ulpdu, fp.ulpdu_len), URNIC_IW_R_OK);
		CHECK_EQ(g->bytes, fp.bytes);
		CHECK_EQ(g->payload_len, fp.ulpdu_len - hb);
		CHECK(g->hdr.tagged == h.tagged && g->hdr.last == h.last &&
		      g->hdr.opcode == h.opcode && g->hdr.stag == h.stag && g->hdr.to == h.to &&
		      g->hdr.qn == h.qn && g->hdr.msn == h.msn && g->hdr.mo == h.mo &&
		      g->hdr.rreq.size == h.rreq.size);
		CHECK(!memcmp(g->payload, fp.ulpdu + hb,
			      g->payload_len < sizeof(g->payload) ? g->payload_len
								  : sizeof(g->payload)));
		/* A message in several segments: siw fills each FPDU but the last to one size,
		 * no larger than the peer's MSS, and tx_fit() cuts it the same way. */
		if (!h.last && !full) {
			full = fp.bytes;
			CHECK(full <= peer_mss);
			remaining = 0;
			for (size_t o = off, n;; o += n) {
				struct urnic_fpdu q;
				struct urnic_ddp_hdr qh;
				size_t qb;

				CHECK_EQ(urnic_fpdu_decode(&q, f->stream + o, f->len - o, 0),
					 URNIC_IW_R_OK);
				CHECK_EQ(urnic_ddp_decode(&qh, &qb, q.ulpdu, q.ulpdu_len),
					 URNIC_IW_R_OK);
				remaining += q.ulpdu_len - qb;
				n = q.bytes;
				if (qh.last)
					break;
			}
			segmented++;
		}
		if (full) {
			CHECK_EQ(urnic_fpdu_tx_fit(full, hb, remaining, &last), fp.ulpdu_len - hb);
			CHECK_EQ(last, h.last);
			remaining -= fp.ulpdu_len - hb;
			if (h.last)
				full = 0;
		}
	}
	CHECK_EQ(off, f->len);
	CHECK_EQ(k, e->nfpdus);
	total_fpdus += k;
}

static void replay_conn(const struct tcp_flow *cl, const struct tcp_flow *sv, bool crc)
{
	struct urnic_mpa_rr req, rep;
	struct urnic_mpa_cfg cfg = { .timeout_ns = 1 };
	enum urnic_mpa_conn_event ev;
	uint8_t out[URNIC_MPA_OUT_MAX];
	size_t creq, crep, n, split = 1 + iwp_rand() % 200;

	CHECK_EQ(urnic_mpa_rr_decode(&req, &creq, cl->stream, cl->len), URNIC_IW_R_OK);
	CHECK_EQ(urnic_mpa_rr_decode(&rep, &crep, sv->stream, sv->len), URNIC_IW_R_OK);
	/* The responder: siw's Request in, our Reply out equal to siw's. */
	iwp_end_free(&rsp);
	iwp_end_init(&rsp);
	cfg.crc_required = crc;
	cfg.timeout_ns = 10;
	CHECK_EQ(urnic_mpa_conn_init(&rsp.c, &cfg, false, 0), 0);
	iwp_feed(&rsp, cl->stream, creq, split, 1);
	CHECK_EQ(rsp.last_ev, URNIC_MPA_EV_REQUEST);
	CHECK_EQ(urnic_mpa_conn_accept(&rsp.c, rep.ird, rep.ord, rep.pd, rep.pd_len, &ev, 1), 0);
	iwp_note(&rsp, ev);
	CHECK_EQ(ev, URNIC_MPA_EV_CONNECTED);
	n = urnic_mpa_conn_output(&rsp.c, out, sizeof(out));
	CHECK(n == crep && !memcmp(out, sv->stream, crep));
	CHECK_EQ(rsp.c.params.crc, crc);
	iwp_feed(&rsp, cl->stream + creq, cl->len - creq, split, 2);
	CHECK(!rsp.rx_error);
	check_cut(&rsp, cl, creq, crc, sv->mss);
	/* The initiator: our Request equal to siw's, siw's Reply and FPDUs in. */
	iwp_end_free(&ini);
	iwp_end_init(&ini);
	cfg.crc_required = req.crc;
	cfg.ird = req.ird;
	cfg.ord = req.ord;
	cfg.pd = req.pd;
	cfg.pd_len = req.pd_len;
	CHECK_EQ(urnic_mpa_conn_init(&ini.c, &cfg, true, 0), 0);
	n = urnic_mpa_conn_output(&ini.c, out, sizeof(out));
	CHECK(n == creq && !memcmp(out, cl->stream, creq));
	iwp_feed(&ini, sv->stream, sv->len, split, 1);
	CHECK_EQ(ini.events[URNIC_MPA_EV_CONNECTED], 1);
	CHECK(!ini.rx_error);
	CHECK(ini.c.params.crc == crc && ini.c.params.peer_ird == rep.ird &&
	      ini.c.params.peer_ord == rep.ord && !ini.c.params.p2p);
	check_cut(&ini, sv, crep, crc, cl->mss);
}

static void test_replay_siw_captures(void)
{
	static struct tcp_flows tf;
	struct tcp_flow *peer;
	unsigned i, j, conns;
	char path[512];

	for (i = 0; i < sizeof(captures) / sizeof(captures[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", golden_dir, captures[i].file);
		tcp_flows_read(&tf, path);
		conns = 0;
		for (j = 0; j < tf.n; j++) {
			if (tf.flows[j].dport != captures[i].port || !tf.flows[j].len)
				continue;
			peer = tcp_flows_peer(&tf, &tf.flows[j]);
			CHECK(peer);
			replay_conn(&tf.flows[j], peer, captures[i].crc);
			conns++;
		}
		CHECK(conns > 0);
		tcp_flows_free(&tf);
	}
	printf("  %u FPDUs cut, %u segmented messages\n", total_fpdus, segmented);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s GOLDEN_DIR\n", argv[0]);
		return 2;
	}
	golden_dir = argv[1];
	iwp_end_init(&ini);
	iwp_end_init(&rsp);
	RUN(test_replay_siw_captures);
	iwp_end_free(&ini);
	iwp_end_free(&rsp);
	return 0;
}
