/* SPDX-License-Identifier: MIT */
/*
 * test_iwarp_golden.c - Linux siw's own iWARP traffic decodes with the MPA, FPDU and
 * DDP/RDMAP codecs, re-encodes to the same bytes, and says what the commands that made it
 * did (golden README.md, MANIFEST.tsv).
 *
 * tests/golden/siw_*.pcap: rping and ib_{send,write,read}_bw -R over siw, two with MPA CRC.
 * Each TCP direction is reassembled (tcpflow.h: IPv4, in sequence order, retransmitted
 * bytes skipped); it starts with an MPA Request or Reply, then FPDUs up to its last byte.
 * Usage: test_wire_iwarp_golden GOLDEN_DIR.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pcap.h"
#include "tcpflow.h"
#include "wire/byteorder.h"
#include "wire/ddp.h"
#include "wire/fpdu.h"
#include "wire/mpa.h"

#define MAX_MSGS 64

/* A whole tagged message (RDMA Write or Read Response): its segments put together. */
struct tagged_msg {
	uint8_t opcode;
	uint32_t stag;
	uint64_t to;
	uint32_t size;
	const uint8_t *first; /* the first segment's payload */
};

/* What one direction's FPDUs held. */
struct dir_state {
	unsigned ops[8];
	unsigned fpdus;
	unsigned dirty_pads; /* FPDUs whose pad bytes are not zero */
	struct tagged_msg tagged[MAX_MSGS], cur;
	unsigned ntagged;
	bool in_tagged;
	struct urnic_rdmap_read_req rreqs[MAX_MSGS];
	unsigned nrreqs;
	uint32_t next_msn[3], next_mo[3];
	const uint8_t *first_send; /* the first Send's payload */
	size_t first_send_len;
};

/* What each capture must hold (MANIFEST.tsv: the commands that ran). The FPDU counts per
 * opcode agree with tshark's iwarp_rdma.opcode; the message sizes with -s. */
static const struct iw_expect {
	const char *file;
	uint16_t port; /* the server's port */
	bool crc;      /* the siw build had mpa_crc_required */
	unsigned conns;
	unsigned ops[8]; /* FPDUs by RDMAP opcode, both directions */
	unsigned writes_64, writes_2500, reads_64, reads_2500;
	unsigned tagged_other; /* tagged messages of other sizes */
	unsigned ird_128;      /* connections whose MPA frames offer IRD = ORD = 128 */
} expects[] = {
	{ "siw_rping.pcap", 7174, false, 1, { 2, 2, 2, 8 }, 2, 0, 2, 0, 0, 0 },
	{ "siw_rping_crc.pcap", 7174, true, 1, { 2, 2, 2, 8 }, 2, 0, 2, 0, 0, 0 },
	/* ib_send_bw -R ends with two 4-byte RDMA Writes of its own. */
	{ "siw_send.pcap", 18515, false, 2, { 2, 0, 0, 27 }, 0, 0, 0, 0, 2, 0 },
	{ "siw_write.pcap", 18515, false, 4, { 15, 0, 0, 64 }, 5, 5, 0, 0, 0, 0 },
	{ "siw_write_crc.pcap", 18515, true, 4, { 15, 0, 0, 64 }, 5, 5, 0, 0, 0, 0 },
	/* ib_read_bw's test QP asks for 128 outstanding reads (its log: "Outstand reads"). */
	{ "siw_read.pcap", 18515, false, 4, { 0, 10, 15, 64 }, 0, 0, 5, 5, 0, 2 },
};

static const char *golden_dir;

/* Every proper prefix of a good frame is refused as truncated, the struct untouched. */
static void check_mpa_prefixes(const uint8_t *p, size_t used)
{
	struct urnic_mpa_rr rr;
	size_t n, got = 99;

	for (n = 0; n < used; n++) {
		memset(&rr, 0x5a, sizeof(rr));
		CHECK_EQ(urnic_mpa_rr_decode(&rr, &got, p, n),
			 n < URNIC_MPA_HDR_BYTES ? URNIC_IW_R_MPA_TRUNCATED
						 : URNIC_IW_R_MPA_PD_TRUNCATED);
		CHECK(got == 99 && rr.kind == 0x5a);
	}
}

/* The MPA frame at the start of the flow: what siw sends, and the same bytes re-encoded. */
static size_t check_mpa(const struct tcp_flow *f, const struct iw_expect *e, uint8_t kind,
			struct urnic_mpa_rr *rr)
{
	uint8_t again[URNIC_MPA_HDR_BYTES + URNIC_MPA_PD_MAX];
	size_t used = 0;

	CHECK_EQ(urnic_mpa_rr_decode(rr, &used, f->stream, f->len), URNIC_IW_R_OK);
	CHECK_EQ(rr->kind, kind);
	CHECK_EQ(rr->revision, 2);
	CHECK(rr->enhanced && !rr->markers && !rr->reject && !rr->gso_exp);
	CHECK_EQ(rr->crc, e->crc);
	/* rdma_cm over iWARP puts no header of its own in the private data (Linux cma.c:
	 * only IB has one), and rping and perftest add none: only the IRD/ORD word. */
	CHECK_EQ(used, URNIC_MPA_HDR_BYTES + URNIC_MPA_V2_BYTES);
	CHECK_EQ(rr->pd_len, 0);
	CHECK(!rr->p2p && !rr->rtr_send && !rr->rtr_write && !rr->rtr_read);
	CHECK_EQ(rr->ird, rr->ord);
	CHECK_EQ(urnic_mpa_rr_encode(rr, again, sizeof(again)), (ssize_t)used);
	CHECK(!memcmp(again, f->stream, used));
	check_mpa_prefixes(f->stream, used);
	return used;
}

static void note_tagged(struct dir_state *d, const struct urnic_ddp_hdr *h, const uint8_t *pl,
			size_t pl_len)
{
	if (d->in_tagged) {
		/* RFC 5041 5.2: later segments continue at the next tagged offset. */
		CHECK_EQ(h->opcode, d->cur.opcode);
		CHECK_EQ(h->stag, d->cur.stag);
		CHECK_EQ(h->to, d->cur.to + d->cur.size);
	} else {
		d->cur = (struct tagged_msg){ h->opcode, h->stag, h->to, 0, pl };
		d->in_tagged = true;
	}
	d->cur.size += (uint32_t)pl_len;
	if (!h->last)
		return;
	CHECK(d->ntagged < MAX_MSGS);
	d->tagged[d->ntagged++] = d->cur;
	d->in_tagged = false;
}

static void note_untagged(struct dir_state *d, const struct urnic_ddp_hdr *h, const uint8_t *pl,
			  size_t pl_len)
{
	/* RFC 5041 5.3: MSNs of a queue start at 1 and count messages; MO counts bytes. */
	CHECK(h->qn < 3);
	if (!d->next_msn[h->qn])
		d->next_msn[h->qn] = 1;
	CHECK_EQ(h->msn, d->next_msn[h->qn]);
	CHECK_EQ(h->mo, d->next_mo[h->qn]);
	d->next_mo[h->qn] += (uint32_t)pl_len;
	if (h->last) {
		d->next_msn[h->qn]++;
		d->next_mo[h->qn] = 0;
	}
	if (h->opcode == URNIC_RDMAP_READ_REQ) {
		CHECK(d->nrreqs < MAX_MSGS);
		d->rreqs[d->nrreqs++] = h->rreq;
	}
	if (h->opcode == URNIC_RDMAP_SEND && !d->first_send) {
		d->first_send = pl;
		d->first_send_len = pl_len;
	}
}

static bool pad_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/* The FPDU cut short is "read more"; with CRC, any flipped bit of it is refused. */
static void check_fpdu_hostile(const uint8_t *p, size_t bytes, bool crc)
{
	static uint8_t copy[70000];
	struct urnic_fpdu f;
	size_t n;

	for (n = 0; n < bytes; n++)
		CHECK_EQ(urnic_fpdu_decode(&f, p, n, crc ? URNIC_FPDU_CRC : 0),
			 URNIC_IW_R_FPDU_TRUNCATED);
	if (!crc)
		return;
	memcpy(copy, p, bytes);
	for (n = URNIC_FPDU_LEN_BYTES; n < bytes; n += 7) {
		copy[n] ^= (uint8_t)(1u << (n % 8));
		CHECK_EQ(urnic_fpdu_decode(&f, copy, bytes, URNIC_FPDU_CRC), URNIC_IW_R_FPDU_CRC);
		copy[n] ^= (uint8_t)(1u << (n % 8));
	}
}

/* One FPDU: framing, CRC (or siw's zeros), headers, and the same bytes re-encoded. */
static size_t check_fpdu(struct dir_state *d, const uint8_t *p, size_t len, bool crc)
{
	uint8_t again[70000];
	struct urnic_fpdu f;
	struct urnic_ddp_hdr h;
	size_t hdr_bytes = 0;

	CHECK_EQ(urnic_fpdu_decode(&f, p, len, crc ? URNIC_FPDU_CRC : 0), URNIC_IW_R_OK);
	if (!crc)
		CHECK_EQ(f.crc, 0);
	CHECK_EQ((URNIC_FPDU_LEN_BYTES + f.ulpdu_len + f.pad) % 4, 0);
	CHECK_EQ(urnic_fpdu_encode(again, sizeof(again), f.ulpdu, f.ulpdu_len,
				   crc ? URNIC_FPDU_CRC : 0),
		 (ssize_t)f.bytes);
	/* siw leaves its pad bytes as they were in its buffer (RFC 5044 4.1 has the sender
	 * zero them; the CRC covers them): the codec sends zeros and accepts any. */
	CHECK(!memcmp(again, p, URNIC_FPDU_LEN_BYTES + f.ulpdu_len));
	CHECK(pad_zero(again + URNIC_FPDU_LEN_BYTES + f.ulpdu_len, f.pad));
	if (pad_zero(p + URNIC_FPDU_LEN_BYTES + f.ulpdu_len, f.pad))
		CHECK(!memcmp(again, p, f.bytes));
	else
		d->dirty_pads++;
	check_fpdu_hostile(p, f.bytes, crc);
	CHECK_EQ(urnic_ddp_decode(&h, &hdr_bytes, f.ulpdu, f.ulpdu_len), URNIC_IW_R_OK);
	CHECK_EQ(urnic_ddp_encode(&h, again, sizeof(again)), (ssize_t)hdr_bytes);
	CHECK(!memcmp(again, f.ulpdu, hdr_bytes));
	d->ops[h.opcode]++;
	d->fpdus++;
	if (h.tagged)
		note_tagged(d, &h, f.ulpdu + hdr_bytes, f.ulpdu_len - hdr_bytes);
	else
		note_untagged(d, &h, f.ulpdu + hdr_bytes, f.ulpdu_len - hdr_bytes);
	return f.bytes;
}

static void walk(struct dir_state *d, const struct tcp_flow *f, size_t off, bool crc)
{
	while (off < f->len)
		off += check_fpdu(d, f->stream + off, f->len - off, crc);
	CHECK_EQ(off, f->len);
	CHECK(!d->in_tagged);
}

/* RFC 5040 4.4-4.5: each Read Request is answered, in order, by a Read Response message
 * to its sink STag and offset, of the size asked for. */
static void match_reads(const struct dir_state *req, const struct dir_state *resp)
{
	unsigned i, n = 0;

	for (i = 0; i < resp->ntagged; i++) {
		const struct tagged_msg *m = &resp->tagged[i];

		if (m->opcode != URNIC_RDMAP_READ_RESP)
			continue;
		CHECK(n < req->nrreqs);
		CHECK_EQ(m->stag, req->rreqs[n].sink_stag);
		CHECK_EQ(m->to, req->rreqs[n].sink_to);
		CHECK_EQ(m->size, req->rreqs[n].size);
		n++;
	}
	CHECK_EQ(n, req->nrreqs);
}

/* rping (librdmacm/examples/rping.c): the client's first Send is its 16-byte
 * rping_rdma_info (buffer address, rkey, size; big-endian), and the server's first RDMA
 * Read fetches exactly that buffer, whose text starts "rdma-ping-0: ". */
static void check_rping(const struct dir_state *client, const struct dir_state *server)
{
	const uint8_t *info = client->first_send;

	CHECK(info && client->first_send_len == 16);
	CHECK_EQ(urnic_get_be32(info + 12), 64);
	CHECK(server->nrreqs >= 1);
	CHECK_EQ(server->rreqs[0].src_to, urnic_get_be64(info));
	CHECK_EQ(server->rreqs[0].src_stag, urnic_get_be32(info + 8));
	CHECK_EQ(server->rreqs[0].size, 64);
	CHECK(client->ntagged >= 1 && client->tagged[0].opcode == URNIC_RDMAP_READ_RESP);
	CHECK(!memcmp(client->tagged[0].first, "rdma-ping-0: ", 13));
}

static void count_sizes(const struct dir_state *d, uint8_t opcode, unsigned *n64, unsigned *n2500,
			unsigned *other)
{
	unsigned i;

	for (i = 0; i < d->ntagged; i++) {
		if (d->tagged[i].opcode != opcode)
			continue;
		if (d->tagged[i].size == 64)
			(*n64)++;
		else if (d->tagged[i].size == 2500)
			(*n2500)++;
		else
			(*other)++;
	}
}

/* Totals over the capture's connections, compared with what the commands did. */
struct totals {
	unsigned conns, ops[8], w64, w2500, r64, r2500, other, dirty_pads, ird_128;
};

static void check_conn(const struct iw_expect *e, const struct tcp_flow *cl,
		       const struct tcp_flow *sv, struct totals *t)
{
	static struct dir_state dc, ds;
	struct urnic_mpa_rr req, rep;
	size_t creq, crep;
	unsigned k;

	memset(&dc, 0, sizeof(dc));
	memset(&ds, 0, sizeof(ds));
	creq = check_mpa(cl, e, URNIC_MPA_REQ, &req);
	crep = check_mpa(sv, e, URNIC_MPA_REP, &rep);
	CHECK_EQ(req.ird, rep.ird);
	if (e->port == 7174)
		CHECK_EQ(req.ird, 1);
	walk(&dc, cl, creq, e->crc);
	walk(&ds, sv, crep, e->crc);
	match_reads(&dc, &ds);
	match_reads(&ds, &dc);
	if (e->port == 7174)
		check_rping(&dc, &ds);
	for (k = 0; k < 8; k++)
		t->ops[k] += dc.ops[k] + ds.ops[k];
	count_sizes(&dc, URNIC_RDMAP_WRITE, &t->w64, &t->w2500, &t->other);
	count_sizes(&ds, URNIC_RDMAP_WRITE, &t->w64, &t->w2500, &t->other);
	count_sizes(&dc, URNIC_RDMAP_READ_RESP, &t->r64, &t->r2500, &t->other);
	count_sizes(&ds, URNIC_RDMAP_READ_RESP, &t->r64, &t->r2500, &t->other);
	t->dirty_pads += dc.dirty_pads + ds.dirty_pads;
	t->ird_128 += req.ird == 128 && req.ord == 128;
	t->conns++;
}

static void check_capture(const struct iw_expect *e)
{
	static struct tcp_flows tf;
	struct tcp_flow *peer;
	struct totals t = { 0 };
	unsigned i, k;
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", golden_dir, e->file);
	tcp_flows_read(&tf, path);
	for (i = 0; i < tf.n; i++) {
		if (tf.flows[i].dport != e->port || !tf.flows[i].len)
			continue;
		peer = tcp_flows_peer(&tf, &tf.flows[i]);
		CHECK(peer);
		check_conn(e, &tf.flows[i], peer, &t);
	}
	CHECK_EQ(t.conns, e->conns);
	for (k = 0; k < 8; k++)
		CHECK_EQ(t.ops[k], e->ops[k]);
	CHECK_EQ(t.w64, e->writes_64);
	CHECK_EQ(t.w2500, e->writes_2500);
	CHECK_EQ(t.r64, e->reads_64);
	CHECK_EQ(t.r2500, e->reads_2500);
	CHECK_EQ(t.other, e->tagged_other);
	CHECK_EQ(t.ird_128, e->ird_128);
	tcp_flows_free(&tf);
	printf("  %s: %u connections, %u tagged messages, %u FPDUs with non-zero pad\n", e->file,
	       t.conns, t.w64 + t.w2500 + t.r64 + t.r2500 + t.other, t.dirty_pads);
}

static void test_golden_siw_captures(void)
{
	unsigned i;

	for (i = 0; i < sizeof(expects) / sizeof(expects[0]); i++)
		check_capture(&expects[i]);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s GOLDEN_DIR\n", argv[0]);
		return 2;
	}
	golden_dir = argv[1];
	RUN(test_golden_siw_captures);
	return 0;
}
