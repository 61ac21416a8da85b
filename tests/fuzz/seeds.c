/* SPDX-License-Identifier: MIT */
/*
 * seeds.c - writes the seed corpora of the fuzz targets (corpus/<target>/; the record
 * format is harness.h's).
 *
 * From the golden rxe captures (tests/golden/rxe_*.pcap): every RoCEv2 UDP payload,
 * requests into the responder's corpus (the UC and UD captures into fuzz_uc's and
 * fuzz_ud's too) and responses into the completer's, one file per capture (its packets
 * in order) and one per opcode seen; PSNs made relative to the first request of the
 * connection and R_Keys replaced by region selectors (WRITE -> the remote-write region,
 * READ -> remote-read, atomics -> remote-atomic), so they reach the execute paths instead
 * of failing the key check. Then hand-made sequences that drive both QPs through what the
 * captures lack: multi-packet messages, duplicates, PSN gaps, RNR, resource overflow,
 * errors, application actions between packets (windows, deregistration, rereg, QPs
 * destroyed and made again), UC loss, UD Q_Keys and multicast, SRQ sharing and its
 * limit, and, for the completer, the ideal answers to Q's planned work (harness.c
 * fuzz_plan) and their usual failures (RNR, sequence NAK, implicit NAK, remote errors,
 * duplicates). Inputs that show engine bugs not fixed yet go to corpus/pending-<target>/
 * (README.md, "Known bugs"). The ICRC is left zero: the harness skips it.
 * Usage: fuzz_seeds GOLDEN_DIR OUT_DIR (writes OUT_DIR/<target> for each target).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/mcast.h"
#include "harness.h"
#include "mem/mr.h"
#include "pcap.h"
#include "wire/byteorder.h"
#include "wire/pkt.h"
#include "wire/psn.h"
#include "wire/tmh.h"

enum { OUT_MAX = 1 << 20, MAX_GOLDEN_RECORDS = 96, PEER_SQPN = 0x123 };

struct out {
	uint8_t buf[OUT_MAX];
	size_t len;
	unsigned records;
};

static const char *out_dir;
static unsigned written;

static void rec_raw(struct out *o, uint8_t ctl, const uint8_t *pkt, size_t len)
{
	if (o->len + FUZZ_REC_HDR + len > sizeof(o->buf) || len > 0xffff)
		return;
	o->buf[o->len] = ctl;
	urnic_put_be16(o->buf + o->len + 1, (uint16_t)len);
	memcpy(o->buf + o->len + FUZZ_REC_HDR, pkt, len);
	o->len += FUZZ_REC_HDR + len;
	o->records++;
}

/* Headers of h, len bytes of payload (a fixed pattern), pad, a zero ICRC. */
static void rec(struct out *o, uint8_t ctl, const struct urnic_pkt *h0, uint32_t len)
{
	static uint8_t pkt[8192];
	struct urnic_pkt h = *h0;
	ssize_t n;
	uint32_t pad = (4 - (len & 3)) & 3;

	h.bth.pad = (uint8_t)pad;
	if (!h.bth.pkey)
		h.bth.pkey = URNIC_DEFAULT_PKEY;
	n = urnic_pkt_encode_hdr(&h, pkt, sizeof(pkt));
	if (n < 0 || (size_t)n + len + pad + 4 > sizeof(pkt)) {
		fprintf(stderr, "cannot encode opcode 0x%02x\n", h.bth.opcode);
		exit(1);
	}
	for (uint32_t i = 0; i < len; i++)
		pkt[n + i] = (uint8_t)(i * 7 + 3);
	memset(pkt + n + len, 0, pad + 4);
	rec_raw(o, ctl, pkt, (size_t)n + len + pad + 4);
}

static void write_out(const char *target, const char *name, const struct out *o)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s.bin", out_dir, target, name);
	f = fopen(path, "wb");
	if (!f || fwrite(o->buf, 1, o->len, f) != o->len || fclose(f)) {
		perror(path);
		exit(1);
	}
	written++;
}

static void save(const char *target, const char *name, struct out *o)
{
	write_out(target, name, o);
	o->len = 0;
	o->records = 0;
}

/* An application action (harness.h, enum fuzz_action): the action, then its arguments. */
static void act(struct out *o, uint8_t ctl, const uint8_t *a, size_t n)
{
	rec_raw(o, (uint8_t)(ctl | FUZZ_CTL_ACTION), a, n);
}

#define ACT(o, ctl, ...)                                                                           \
	act(o, ctl, (const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ }))

static struct urnic_pkt hdr(uint8_t opcode, uint32_t psn)
{
	struct urnic_pkt h;

	memset(&h, 0, sizeof(h));
	h.bth.opcode = opcode;
	h.bth.psn = psn & URNIC_PSN_MASK;
	h.bth.ackreq = true;
	return h;
}

static struct urnic_pkt req_reth(uint8_t opcode, uint32_t psn, uint32_t r, uint64_t off,
				 uint32_t len)
{
	struct urnic_pkt h = hdr(opcode, psn);

	h.reth = (struct urnic_reth){ off, r, len };
	return h;
}

static struct urnic_pkt req_atomic(uint8_t opcode, uint32_t psn, uint32_t r, uint64_t off)
{
	struct urnic_pkt h = hdr(opcode, psn);

	h.atmeth = (struct urnic_atmeth){ off, r, 5, 0x5a5a5a5a5a5a5a5aull };
	return h;
}

static struct urnic_pkt resp(uint8_t opcode, uint32_t psn, uint8_t syndrome, uint32_t msn)
{
	struct urnic_pkt h = hdr(opcode, psn);

	h.bth.ackreq = false;
	h.aeth = (struct urnic_aeth){ syndrome, msn };
	return h;
}

/* ---- from the golden captures ---- */

struct sender {
	uint8_t ip[16];
	bool have_req;
	uint32_t first_req_psn;
	bool have_resp;
	uint32_t first_resp_psn;
};

struct flow_state {
	struct sender s[8];
	int n;
	uint64_t va_base[4];
	bool have_va[4];
	bool seen_op[256];
};

static struct sender *sender_of(struct flow_state *fs, const uint8_t *ip)
{
	for (int i = 0; i < fs->n; i++)
		if (memcmp(fs->s[i].ip, ip, 16) == 0)
			return &fs->s[i];
	if (fs->n == 8)
		return &fs->s[7];
	memset(&fs->s[fs->n], 0, sizeof(fs->s[0]));
	memcpy(fs->s[fs->n].ip, ip, 16);
	return &fs->s[fs->n++];
}

static void ip16(const struct wire_udp *u, const uint8_t *which, uint8_t *out)
{
	memset(out, 0, 16);
	memcpy(out, which, u->ipv6 ? 16 : 4);
}

/* Rewrites a captured packet for the harness: relative PSN, region selector R_Key. */
static size_t adapt(struct flow_state *fs, const struct urnic_pkt *p0, uint32_t psn_base,
		    const uint8_t *raw, size_t raw_len, uint8_t *out)
{
	uint32_t flags = urnic_opcode_info(p0->bth.opcode)->flags;
	struct urnic_pkt p = *p0;
	ssize_t n;

	p.bth.psn = (p.bth.psn - psn_base) & URNIC_PSN_MASK;
	if (flags & (URNIC_OPF_RETH | URNIC_OPF_ATMETH)) {
		int sel = (flags & URNIC_OPF_ATOMIC) ? FR_ATOMIC
			  : (flags & URNIC_OPF_READ) ? FR_RO
						     : FR_RW;
		uint64_t va = (flags & URNIC_OPF_ATMETH) ? p.atmeth.va : p.reth.va;
		uint64_t off;

		if (!fs->have_va[sel]) {
			fs->have_va[sel] = true;
			fs->va_base[sel] = va;
		}
		off = (va - fs->va_base[sel]) % 8192;
		if (flags & URNIC_OPF_ATMETH) {
			p.atmeth.va = off & ~7ull;
			p.atmeth.rkey = (uint32_t)sel;
		} else {
			p.reth.va = off;
			p.reth.rkey = (uint32_t)sel;
		}
	}
	n = urnic_pkt_encode_hdr(&p, out, 64);
	if (n < 0)
		return 0;
	memcpy(out + n, raw + n, raw_len - (size_t)n);
	return raw_len;
}

static int is_rxe_pcap(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return !strncmp(d->d_name, "rxe_", 4) && n > 5 && !strcmp(d->d_name + n - 5, ".pcap");
}

static void from_capture(const char *path, const char *stem, struct flow_state *singles)
{
	static struct out req, rsp, one;
	static uint8_t buf[65536];
	struct flow_state fs;
	struct wire_pcap pc;
	struct wire_frame fr;
	struct wire_udp u;
	char name[512];

	memset(&fs, 0, sizeof(fs));
	for (int pass = 0; pass < 2; pass++) {
		if (wire_pcap_open(&pc, path)) {
			fprintf(stderr, "%s: cannot read\n", path);
			exit(1);
		}
		while (wire_pcap_next(&pc, &fr) == 1) {
			struct urnic_pkt p;
			uint8_t src[16], dst[16];
			struct sender *s, *d;
			uint32_t flags;
			size_t len;

			if (!wire_frame_udp(&fr, &u) || u.dport != URNIC_ROCE_UDP_PORT ||
			    urnic_pkt_decode(&p, u.payload, u.payload_bytes) < 0)
				continue;
			flags = urnic_opcode_info(p.bth.opcode)->flags;
			ip16(&u, u.ipv6 ? u.ip + 8 : u.ip + 12, src);
			ip16(&u, u.ipv6 ? u.ip + 24 : u.ip + 16, dst);
			s = sender_of(&fs, src);
			d = sender_of(&fs, dst);
			if (pass == 0) {
				/* RC only: a capture's UD MADs have PSNs of their own. */
				if ((flags & URNIC_OPF_REQ) && (flags & URNIC_OPF_RC) &&
				    !s->have_req) {
					s->have_req = true;
					s->first_req_psn = p.bth.psn;
				}
				if ((flags & URNIC_OPF_RESP) && !s->have_resp) {
					s->have_resp = true;
					s->first_resp_psn = p.bth.psn;
				}
				continue;
			}
			if (flags & URNIC_OPF_REQ) {
				len = adapt(&fs, &p, s->first_req_psn, u.payload, u.payload_bytes,
					    buf);
				if (len && req.records < MAX_GOLDEN_RECORDS)
					rec_raw(&req, 0, buf, len);
			} else {
				/* Responses count from the first request of their requester. */
				len = adapt(&fs, &p,
					    d->have_req ? d->first_req_psn : s->first_resp_psn,
					    u.payload, u.payload_bytes, buf);
				if (len && rsp.records < MAX_GOLDEN_RECORDS)
					rec_raw(&rsp, 0, buf, len);
			}
			if (len && !singles->seen_op[p.bth.opcode]) {
				singles->seen_op[p.bth.opcode] = true;
				/* Alone, it is the first packet of its stream: PSN 0. */
				if (len >= URNIC_BTH_BYTES)
					urnic_put_be24(buf + 9, 0);
				rec_raw(&one, 0, buf, len);
				snprintf(name, sizeof(name), "golden-op-%02x-%s", p.bth.opcode,
					 urnic_opcode_info(p.bth.opcode)->name);
				save((flags & URNIC_OPF_REQ) ? "responder" : "completer", name,
				     &one);
			}
		}
		wire_pcap_close(&pc);
	}
	if (req.records) {
		snprintf(name, sizeof(name), "golden-%s", stem);
		/* The UC and UD captures seed their own targets too. */
		if (strstr(stem, "_uc_"))
			write_out("uc", name, &req);
		if (strstr(stem, "_ud_"))
			write_out("ud", name, &req);
		save("responder", name, &req);
	}
	if (rsp.records) {
		snprintf(name, sizeof(name), "golden-%s", stem);
		save("completer", name, &rsp);
	}
}

static void from_golden(const char *dir)
{
	struct flow_state singles;
	struct dirent **names;
	char path[4096], stem[256];
	int n;

	memset(&singles, 0, sizeof(singles));
	n = scandir(dir, &names, is_rxe_pcap, alphasort);
	if (n <= 0) {
		fprintf(stderr, "%s: no rxe_*.pcap\n", dir);
		exit(1);
	}
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		snprintf(stem, sizeof(stem), "%.*s", (int)strlen(names[i]->d_name) - 5,
			 names[i]->d_name);
		from_capture(path, stem, &singles);
		free(names[i]);
	}
	free(names);
}

/* ---- hand-made: the responder (QP R; PSN 0 = its first expected PSN) ---- */

static void responder_seeds(const char *target)
{
	static struct out o;
	struct urnic_pkt h;

	rec(&o, 0,
	    &(struct urnic_pkt){ .bth = { .opcode = URNIC_OP_RC_SEND_ONLY, .ackreq = true } }, 100);
	save(target, "send-only", &o);

	/* Into the receives as harness.c posts them: 3072 bytes, 1000 + 1048, 16. */
	h = hdr(URNIC_OP_RC_SEND_FIRST, 0);
	h.bth.ackreq = false;
	rec(&o, 0, &h, FUZZ_MTU);
	h = hdr(URNIC_OP_RC_SEND_MIDDLE, 1);
	h.bth.ackreq = false;
	rec(&o, 0, &h, FUZZ_MTU);
	h = hdr(URNIC_OP_RC_SEND_LAST, 2);
	rec(&o, 0, &h, 1);
	h = hdr(URNIC_OP_RC_SEND_FIRST, 3); /* across the two SGEs of the 2nd receive */
	rec(&o, 0, &h, FUZZ_MTU);
	h = hdr(URNIC_OP_RC_SEND_LAST_WITH_IMMEDIATE, 4);
	h.imm_be = 0x01020304;
	rec(&o, 0, &h, 7);
	h = hdr(URNIC_OP_RC_SEND_ONLY, 5);
	rec(&o, 0, &h, 16);
	save(target, "send-multi", &o);

	h = req_reth(URNIC_OP_RC_RDMA_WRITE_ONLY, 0, FR_RW, 16, 64);
	rec(&o, 0, &h, 64);
	h = req_reth(URNIC_OP_RC_RDMA_WRITE_FIRST, 1, FR_RW, 1000, 2500);
	rec(&o, 0, &h, FUZZ_MTU);
	h = hdr(URNIC_OP_RC_RDMA_WRITE_MIDDLE, 2);
	rec(&o, 0, &h, FUZZ_MTU);
	h = hdr(URNIC_OP_RC_RDMA_WRITE_LAST, 3);
	rec(&o, 0, &h, 2500 - 2 * FUZZ_MTU);
	h = req_reth(URNIC_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 4, FR_RW, 0, 8);
	h.imm_be = 0xa0b0c0d0;
	rec(&o, 0, &h, 8);
	h = req_reth(URNIC_OP_RC_RDMA_WRITE_ONLY, 5, FR_RW, 8192 - 8, 0);
	rec(&o, 0, &h, 0);
	save(target, "write", &o);

	h = req_reth(URNIC_OP_RC_RDMA_READ_REQUEST, 0, FR_RO, 100, 3000);
	rec(&o, 0, &h, 0);
	h = req_reth(URNIC_OP_RC_RDMA_READ_REQUEST, 3, FR_RO, 0, 0);
	rec(&o, 0, &h, 0);
	h = req_atomic(URNIC_OP_RC_COMPARE_SWAP, 4, FR_ATOMIC, 0);
	rec(&o, 0, &h, 0);
	h = req_atomic(URNIC_OP_RC_FETCH_ADD, 5, FR_ATOMIC, 8);
	rec(&o, 0, &h, 0);
	save(target, "read-atomic", &o);

	/* Duplicates: a WRITE, a READ replayed whole and from its middle, an atomic. */
	h = req_reth(URNIC_OP_RC_RDMA_WRITE_ONLY, 0, FR_RW, 0, 32);
	rec(&o, 0, &h, 32);
	rec(&o, 0, &h, 32);
	h = req_reth(URNIC_OP_RC_RDMA_READ_REQUEST, 1, FR_RO, 0, 2048);
	rec(&o, 0, &h, 0);
	rec(&o, 0, &h, 0);
	h = req_reth(URNIC_OP_RC_RDMA_READ_REQUEST, 2, FR_RO, 1024, 1024);
	rec(&o, 0, &h, 0);
	h = req_atomic(URNIC_OP_RC_FETCH_ADD, 3, FR_ATOMIC, 16);
	rec(&o, 0, &h, 0);
	rec(&o, 0, &h, 0);
	h = req_reth(URNIC_OP_RC_RDMA_READ_REQUEST, 1, FR_RO, 0, 4096); /* grew: dropped */
	rec(&o, 0, &h, 0);
	save(target, "duplicates", &o);

	/* A PSN gap: one NAK, silence, then the expected PSN. */
	h = req_reth(URNIC_OP_RC_RDMA_WRITE_ONLY, 5, FR_RW, 0, 16);
	rec(&o, 0, &h, 16);
	h.bth.psn = 6;
	rec(&o, 0, &h, 16);
	h.bth.psn = 0;
	rec(&o, 0, &h, 16);
	h = hdr(URNIC_OP_RC_SEND_ONLY, 0x7fffff);
	rec(&o, 0, &h, 4);
	save(target, "psn-gap", &o);

	/* More SENDs than receives: RNR NAKs, then a receive is posted (ctl bit 7). */
	for (uint32_t k = 0; k < 6; k++) {
		h = hdr(URNIC_OP_RC_SEND_ONLY, k < 4 ? k : 4);
		rec(&o, 0, &h, 8);
	}
	h = hdr(URNIC_OP_RC_SEND_ONLY, 4);
	rec(&o, FUZZ_CTL_POST | (2 << FUZZ_CTL_CLOCK_SHIFT), &h, 8);
	save(target, "rnr", &o);

	/* READs beyond max_dest_rd_atomic, all in one receive batch. */
	for (uint32_t k = 0; k < 8; k++) {
		h = req_reth(URNIC_OP_RC_RDMA_READ_REQUEST, k * 2, FR_RO, k * 512, 2048);
		rec(&o, k < 7 ? FUZZ_CTL_NO_PASS : 0, &h, 0);
	}
	save(target, "read-flood", &o);

	/* Errors: each ends the QP (class C), so one per file. */
	h = req_atomic(URNIC_OP_RC_FETCH_ADD, 0, FR_ATOMIC, 4);
	rec(&o, 0, &h, 0);
	save(target, "error-misaligned-atomic", &o);
	h = req_reth(URNIC_OP_RC_RDMA_WRITE_ONLY, 0, FR_DEAD, 0, 16);
	rec(&o, 0, &h, 16);
	save(target, "error-stale-key", &o);
	h = req_reth(URNIC_OP_RC_RDMA_WRITE_ONLY, 0, FR_RO, 0, 16);
	rec(&o, 0, &h, 16);
	save(target, "error-no-right", &o);
	h = req_reth(URNIC_OP_RC_RDMA_READ_REQUEST, 0, FR_RO, 8000, 1024);
	rec(&o, 0, &h, 0);
	save(target, "error-read-beyond", &o);
	h = hdr(URNIC_OP_RC_SEND_MIDDLE, 0);
	rec(&o, 0, &h, FUZZ_MTU);
	save(target, "error-op-sequence", &o);
	h = hdr(URNIC_OP_RC_SEND_ONLY, 0);
	rec(&o, 0, &h, FUZZ_MTU + 4);
	save(target, "error-too-long", &o);
	h = hdr(URNIC_OP_RC_SEND_FIRST, 0);
	rec(&o, 0, &h, FUZZ_MTU);
	for (uint32_t k = 1; k < 3; k++) {
		h = hdr(URNIC_OP_RC_SEND_MIDDLE, k);
		rec(&o, 0, &h, FUZZ_MTU);
	}
	h = hdr(URNIC_OP_RC_SEND_LAST, 3);
	rec(&o, 0, &h, 500); /* 3572 bytes into a 3072-byte receive */
	save(target, "error-receive-too-small", &o);
	for (uint32_t k = 0; k < 4; k++) { /* the 4th receive has an SGE without local write */
		h = hdr(URNIC_OP_RC_SEND_ONLY, k);
		rec(&o, 0, &h, k == 3 ? 1000 : 8);
	}
	save(target, "error-receive-protection", &o);

	/* The rest of the opcode table, once each. */
	h = hdr(URNIC_OP_RC_SEND_ONLY_WITH_INVALIDATE, 0);
	h.ieth_rkey = 0x12345678;
	rec(&o, 0, &h, 16);
	h = hdr(URNIC_OP_RC_SEND_ONLY_WITH_IMMEDIATE, 1);
	rec(&o, 0, &h, 0);
	h = req_reth(URNIC_OP_RC_ATOMIC_WRITE, 2, FR_RW, 64, 8);
	rec(&o, 0, &h, 8);
	h = req_reth(URNIC_OP_RC_FLUSH, 3, FR_RW, 0, 64);
	h.feth = 1;
	rec(&o, 0, &h, 0);
	save(target, "rare-opcodes", &o);

	/* Responses to R (its completer, nothing outstanding) and requests to Q. */
	h = resp(URNIC_OP_RC_ACKNOWLEDGE, 0, 0x1f, 1);
	rec(&o, 0, &h, 0);
	h = resp(URNIC_OP_RC_ACKNOWLEDGE, 0xffffff, 0x60, 1);
	rec(&o, 0, &h, 0);
	h = hdr(URNIC_OP_RC_SEND_ONLY, 0);
	rec(&o, FUZZ_CTL_QP_OTHER, &h, 16);
	h = req_reth(URNIC_OP_RC_RDMA_READ_REQUEST, 1, FR_RO, 0, 64);
	rec(&o, FUZZ_CTL_QP_OTHER, &h, 0);
	save(target, "other-directions", &o);

	/* A READ whose answer is cut short by the clock (timers of Q fire meanwhile). */
	h = req_reth(URNIC_OP_RC_RDMA_READ_REQUEST, 0, FR_RO, 0, 8192);
	rec(&o, FUZZ_CTL_NO_PASS, &h, 0);
	h = hdr(URNIC_OP_RC_SEND_ONLY, 8);
	rec(&o, 6 << FUZZ_CTL_CLOCK_SHIFT, &h, 8);
	save(target, "clock", &o);
}

/* ---- hand-made: application actions between packets (harness.h enum fuzz_action) ---- */

/* Window slot selectors (harness.h): an R_Key of FR_COUNT + w names window slot w. */
enum { W0 = FR_COUNT, W1, W2, W3 };

enum {
	RW = URNIC_ACCESS_REMOTE_WRITE,
	RR = URNIC_ACCESS_REMOTE_READ,
	RA = URNIC_ACCESS_REMOTE_ATOMIC,
	LW = URNIC_ACCESS_LOCAL_WRITE,
};

/*
 * Inputs that broke an invariant because of an engine bug (crash-*), kept so that the
 * replay test runs them on every build, and their near misses (near-*). An input that
 * shows a bug not fixed yet goes to corpus/pending-<target>/ instead (save() with
 * "pending-<target>"), which neither the replay test nor the libFuzzer run reads:
 * fuzz_known_bugs_<target> checks that its crash-* inputs still fail and its near-*
 * ones do not, until the fix moves them here (README.md, "Known bugs").
 */

static void action_seeds(void)
{
	static struct out o;
	struct urnic_pkt h;

	/* A type 1 window over the remote-write region: used, the region cannot go while
	 * it is bound (EBUSY), then the window goes and the region after it. */
	ACT(&o, 0, FA_MW_ALLOC, 0, 0);
	ACT(&o, 0, FA_BIND, 0, FR_RW, 0x00, 0x00, 0x10, 0x00, RW | RR);
	h = req_reth(URNIC_OP_RC_RDMA_WRITE_ONLY, 0, W0, 16, 64);
	rec(&o, 0, &h, 64);
	h = req_reth(URNIC_OP_RC_RDMA_READ_REQUEST, 1, W0, 0, 2048);
	rec(&o, 0, &h, 0);
	ACT(&o, 0, FA_DEREG, FR_RW);
	ACT(&o, 0, FA_MW_DEALLOC, 0);
	ACT(&o, 0, FA_DEREG, FR_RW);
	h = req_reth(URNIC_OP_RC_RDMA_WRITE_ONLY, 3, W0, 16, 64);
	rec(&o, 0, &h, 64);
	save("responder", "act-window-type1", &o);

	/* A type 2 window over the window-only region, used, then invalidated by the
	 * peer's SEND with Invalidate: its key is refused after. */
	ACT(&o, 0, FA_MW_ALLOC, 1, 1);
	ACT(&o, 0, FA_BIND, 1, FR_WIN, 0x04, 0x00, 0x08, 0x00, RW | RR | RA);
	h = req_reth(URNIC_OP_RC_RDMA_WRITE_ONLY, 0, W1, 1024, 100);
	rec(&o, 0, &h, 100);
	h = req_atomic(URNIC_OP_RC_FETCH_ADD, 1, W1, 1024 + 128);
	rec(&o, 0, &h, 0);
	h = req_reth(URNIC_OP_RC_RDMA_READ_REQUEST, 2, W1, 1024, 1000);
	rec(&o, 0, &h, 0);
	h = hdr(URNIC_OP_RC_SEND_ONLY_WITH_INVALIDATE, 3);
	h.ieth_rkey = W1;
	rec(&o, 0, &h, 16);
	h = req_reth(URNIC_OP_RC_RDMA_WRITE_ONLY, 4, W1, 1024, 100);
	rec(&o, 0, &h, 100);
	save("responder", "act-window-type2", &o);

	/* LOCAL_INV, a bind again, and a window bound through Q used on R (o10-37.2.36). */
	ACT(&o, 0, FA_MW_ALLOC, 2, 1);
	ACT(&o, 0, FA_BIND, 2, FR_WIN, 0x00, 0x00, 0x10, 0x00, RW);
	h = req_reth(URNIC_OP_RC_RDMA_WRITE_ONLY, 0, W2, 0, 32);
	rec(&o, 0, &h, 32);
	ACT(&o, 0, FA_INVALIDATE, 2);
	ACT(&o, 0, FA_BIND, 2, FR_WIN, 0x08, 0x00, 0x08, 0x00, RW);
	h = req_reth(URNIC_OP_RC_RDMA_WRITE_ONLY, 1, W2, 0x800, 32);
	rec(&o, 0, &h, 32);
	ACT(&o, FUZZ_CTL_ACT_OTHER, FA_MW_ALLOC, 3, 1);
	ACT(&o, FUZZ_CTL_ACT_OTHER, FA_BIND, 3, FR_WIN, 0x10, 0x00, 0x08, 0x00, RW);
	h = req_reth(URNIC_OP_RC_RDMA_WRITE_ONLY, 2, W3, 0x1000, 32);
	rec(&o, 0, &h, 32);
	save("responder", "act-local-inv", &o);

	/* A region moved to another buffer, its rights changed. */
	h = req_reth(URNIC_OP_RC_RDMA_WRITE_ONLY, 0, FR_RW, 0, 64);
	rec(&o, 0, &h, 64);
	ACT(&o, 0, FA_REREG, FR_RW, URNIC_MR_REREG_TRANSLATION, 0);
	h = req_reth(URNIC_OP_RC_RDMA_WRITE_ONLY, 1, FR_RW, 128, 64);
	rec(&o, 0, &h, 64);
	ACT(&o, 0, FA_REREG, FR_RO, URNIC_MR_REREG_ACCESS, LW | RR);
	h = req_reth(URNIC_OP_RC_RDMA_READ_REQUEST, 2, FR_RO, 0, 512);
	rec(&o, 0, &h, 0);
	ACT(&o, 0, FA_REREG, FR_RW, URNIC_MR_REREG_ACCESS, LW);
	h = req_reth(URNIC_OP_RC_RDMA_WRITE_ONLY, 3, FR_RW, 0, 16);
	rec(&o, 0, &h, 16);
	save("responder", "act-rereg", &o);

	/* Registered again under a new key; the receive region moved to another PD. */
	ACT(&o, 0, FA_DEREG, FR_ATOMIC);
	ACT(&o, 0, FA_REG, FR_ATOMIC);
	h = req_atomic(URNIC_OP_RC_FETCH_ADD, 0, FR_ATOMIC, 0);
	rec(&o, 0, &h, 0);
	ACT(&o, 0, FA_REREG, FR_RECV, URNIC_MR_REREG_PD, 0);
	h = hdr(URNIC_OP_RC_SEND_ONLY, 1);
	rec(&o, 0, &h, 16);
	save("responder", "act-reregister", &o);

	/* The QP to error in the middle of a message; a receive posted after. */
	h = hdr(URNIC_OP_RC_SEND_FIRST, 0);
	rec(&o, 0, &h, FUZZ_MTU);
	ACT(&o, 0, FA_MODIFY_ERR);
	h = hdr(URNIC_OP_RC_SEND_LAST, 1);
	rec(&o, FUZZ_CTL_POST, &h, 10);
	save("responder", "act-modify-error", &o);

	/* R destroyed (its QPN now unknown) and made again; Q too. */
	h = hdr(URNIC_OP_RC_SEND_ONLY, 0);
	rec(&o, 0, &h, 16);
	ACT(&o, 0, FA_DESTROY);
	h = hdr(URNIC_OP_RC_SEND_ONLY, 1);
	rec(&o, 0, &h, 16);
	ACT(&o, 0, FA_CREATE, 0);
	h = hdr(URNIC_OP_RC_SEND_ONLY, 0);
	rec(&o, 0, &h, 16);
	ACT(&o, FUZZ_CTL_ACT_OTHER, FA_DESTROY);
	ACT(&o, FUZZ_CTL_ACT_OTHER, FA_CREATE, 0);
	save("responder", "act-destroy-create", &o);

	/* A type 2 window bound through R, R made again under another QPN: refused. */
	ACT(&o, 0, FA_MW_ALLOC, 0, 1);
	ACT(&o, 0, FA_BIND, 0, FR_WIN, 0x00, 0x00, 0x10, 0x00, RW);
	ACT(&o, 0, FA_DESTROY);
	ACT(&o, 0, FA_CREATE, 0);
	h = req_reth(URNIC_OP_RC_RDMA_WRITE_ONLY, 0, W0, 0, 64);
	rec(&o, 0, &h, 64);
	save("responder", "act-window-after-destroy", &o);

	/* The region a READ reads deregistered before its responses go out. */
	h = req_reth(URNIC_OP_RC_RDMA_READ_REQUEST, 0, FR_RO, 0, 3000);
	rec(&o, FUZZ_CTL_NO_PASS, &h, 0);
	ACT(&o, 0, FA_DEREG, FR_RO);
	save("responder", "act-read-dereg", &o);
}

/* Near misses of the known bugs (bug_seeds), so that one mutation reaches each: an
 * action between the packets of a WRITE that leaves its target alone (another region
 * deregistered or moved, another window unbound), a QP made again one creation short of
 * its old QPN. They pass, but steer the fuzzer to the bugs within seconds, so they wait
 * beside the crash inputs. */
static void near_miss_seeds(void)
{
	static struct out o;
	struct urnic_pkt h;

	h = req_reth(URNIC_OP_RC_RDMA_WRITE_FIRST, 0, FR_RW, 0, 3000);
	rec(&o, 0, &h, FUZZ_MTU);
	ACT(&o, 0, FA_DEREG, FR_RO);
	h = hdr(URNIC_OP_RC_RDMA_WRITE_MIDDLE, 1);
	rec(&o, 0, &h, FUZZ_MTU);
	ACT(&o, 0, FA_REREG, FR_ATOMIC, URNIC_MR_REREG_TRANSLATION, 0);
	h = hdr(URNIC_OP_RC_RDMA_WRITE_LAST, 2);
	rec(&o, 0, &h, 3000 - 2 * FUZZ_MTU);
	ACT(&o, 0, FA_MW_ALLOC, 0, 0);
	ACT(&o, 0, FA_MW_ALLOC, 1, 0);
	ACT(&o, 0, FA_BIND, 0, FR_WIN, 0x00, 0x00, 0x10, 0x00, RW);
	ACT(&o, 0, FA_BIND, 1, FR_WIN, 0x10, 0x00, 0x08, 0x00, RW);
	h = req_reth(URNIC_OP_RC_RDMA_WRITE_FIRST, 3, W0, 0, 3000);
	rec(&o, 0, &h, FUZZ_MTU);
	ACT(&o, 0, FA_BIND, 1, FR_WIN, 0, 0, 0, 0, 0);
	h = hdr(URNIC_OP_RC_RDMA_WRITE_MIDDLE, 4);
	rec(&o, 0, &h, FUZZ_MTU);
	ACT(&o, 0, FA_MW_DEALLOC, 1);
	h = hdr(URNIC_OP_RC_RDMA_WRITE_LAST, 5);
	rec(&o, 0, &h, 3000 - 2 * FUZZ_MTU);
	save("responder", "near-write-after-dereg", &o);

	ACT(&o, 0, FA_MW_ALLOC, 0, 1);
	ACT(&o, 0, FA_BIND, 0, FR_WIN, 0x00, 0x00, 0x10, 0x00, RW);
	ACT(&o, 0, FA_DESTROY);
	ACT(&o, 0, FA_CREATE, FUZZ_QPN_PERIOD - 3);
	h = req_reth(URNIC_OP_RC_RDMA_WRITE_ONLY, 0, W0, 0, 64);
	rec(&o, 0, &h, 64);
	save("responder", "near-mw2-qpn-reuse", &o);

	h = req_reth(URNIC_OP_UC_RDMA_WRITE_FIRST, 0, FR_RW, 0, 3000);
	h.bth.ackreq = false;
	rec(&o, 0, &h, FUZZ_MTU);
	ACT(&o, 0, FA_DEREG, FR_RO);
	h = hdr(URNIC_OP_UC_RDMA_WRITE_MIDDLE, 1);
	h.bth.ackreq = false;
	rec(&o, 0, &h, FUZZ_MTU);
	ACT(&o, 0, FA_REREG, FR_ATOMIC, URNIC_MR_REREG_TRANSLATION, 0);
	h = hdr(URNIC_OP_UC_RDMA_WRITE_LAST, 2);
	h.bth.ackreq = false;
	rec(&o, 0, &h, 3000 - 2 * FUZZ_MTU);
	save("uc", "near-uc-write-after-dereg", &o);
}

/* Engine bugs the fuzzer showed: a WRITE's R_Key was resolved once, on its first packet,
 * and the rest of the message placed through that pointer after the region or window
 * had gone; a type 2 window outlived the QP it was bound through, and a new QP given the
 * same QPN could use it. */
static void bug_seeds(void)
{
	static struct out o;
	struct urnic_pkt h;

	h = req_reth(URNIC_OP_RC_RDMA_WRITE_FIRST, 0, FR_RW, 0, 3000);
	rec(&o, 0, &h, FUZZ_MTU);
	ACT(&o, 0, FA_DEREG, FR_RW);
	h = hdr(URNIC_OP_RC_RDMA_WRITE_MIDDLE, 1);
	rec(&o, 0, &h, FUZZ_MTU);
	h = hdr(URNIC_OP_RC_RDMA_WRITE_LAST, 2);
	rec(&o, 0, &h, 3000 - 2 * FUZZ_MTU);
	save("responder", "crash-write-after-dereg", &o);

	h = req_reth(URNIC_OP_RC_RDMA_WRITE_FIRST, 0, FR_RW, 0, 3000);
	rec(&o, 0, &h, FUZZ_MTU);
	ACT(&o, 0, FA_REREG, FR_RW, URNIC_MR_REREG_TRANSLATION, 0);
	h = hdr(URNIC_OP_RC_RDMA_WRITE_MIDDLE, 1);
	rec(&o, 0, &h, FUZZ_MTU);
	h = hdr(URNIC_OP_RC_RDMA_WRITE_LAST, 2);
	rec(&o, 0, &h, 3000 - 2 * FUZZ_MTU);
	save("responder", "crash-write-after-rereg", &o);

	ACT(&o, 0, FA_MW_ALLOC, 0, 0);
	ACT(&o, 0, FA_BIND, 0, FR_WIN, 0x00, 0x00, 0x10, 0x00, RW);
	h = req_reth(URNIC_OP_RC_RDMA_WRITE_FIRST, 0, W0, 0, 3000);
	rec(&o, 0, &h, FUZZ_MTU);
	ACT(&o, 0, FA_BIND, 0, FR_WIN, 0, 0, 0, 0, 0); /* unbound: length 0 */
	h = hdr(URNIC_OP_RC_RDMA_WRITE_MIDDLE, 1);
	rec(&o, 0, &h, FUZZ_MTU);
	h = hdr(URNIC_OP_RC_RDMA_WRITE_LAST, 2);
	rec(&o, 0, &h, 3000 - 2 * FUZZ_MTU);
	save("responder", "crash-write-after-unbind", &o);

	/* R's slot gets its QPN back after FUZZ_QPN_PERIOD creations: Q's, the churn, R's. */
	ACT(&o, 0, FA_MW_ALLOC, 0, 1);
	ACT(&o, 0, FA_BIND, 0, FR_WIN, 0x00, 0x00, 0x10, 0x00, RW);
	ACT(&o, 0, FA_DESTROY);
	ACT(&o, 0, FA_CREATE, FUZZ_QPN_PERIOD - 2);
	h = req_reth(URNIC_OP_RC_RDMA_WRITE_ONLY, 0, W0, 0, 64);
	rec(&o, 0, &h, 64);
	save("responder", "crash-mw2-qpn-reuse", &o);

	h = req_reth(URNIC_OP_UC_RDMA_WRITE_FIRST, 0, FR_RW, 0, 3000);
	h.bth.ackreq = false;
	rec(&o, 0, &h, FUZZ_MTU);
	ACT(&o, 0, FA_DEREG, FR_RW);
	h = hdr(URNIC_OP_UC_RDMA_WRITE_MIDDLE, 1);
	h.bth.ackreq = false;
	rec(&o, 0, &h, FUZZ_MTU);
	h = hdr(URNIC_OP_UC_RDMA_WRITE_LAST, 2);
	h.bth.ackreq = false;
	rec(&o, 0, &h, 3000 - 2 * FUZZ_MTU);
	save("uc", "crash-uc-write-after-dereg", &o);
}

/* ---- hand-made: UC (R a UC responder, Q a UC requester; no ACKs) ---- */

static struct urnic_pkt uc(uint8_t opcode, uint32_t psn)
{
	struct urnic_pkt h = hdr(opcode, psn);

	h.bth.ackreq = false; /* IBTA 9.8: never on UC */
	return h;
}

static struct urnic_pkt uc_reth(uint8_t opcode, uint32_t psn, uint32_t r, uint64_t off,
				uint32_t len)
{
	struct urnic_pkt h = uc(opcode, psn);

	h.reth = (struct urnic_reth){ off, r, len };
	return h;
}

static void uc_seeds(void)
{
	static struct out o;
	static const uint8_t none[1];
	struct urnic_pkt h;

	h = uc(URNIC_OP_UC_SEND_ONLY, 0);
	rec(&o, 0, &h, 100);
	save("uc", "send-only", &o);

	h = uc(URNIC_OP_UC_SEND_FIRST, 0);
	rec(&o, 0, &h, FUZZ_MTU);
	h = uc(URNIC_OP_UC_SEND_MIDDLE, 1);
	rec(&o, 0, &h, FUZZ_MTU);
	h = uc(URNIC_OP_UC_SEND_LAST, 2);
	rec(&o, 0, &h, 1);
	h = uc(URNIC_OP_UC_SEND_FIRST, 3);
	rec(&o, 0, &h, FUZZ_MTU);
	h = uc(URNIC_OP_UC_SEND_LAST_WITH_IMMEDIATE, 4);
	h.imm_be = 0x01020304;
	rec(&o, 0, &h, 7);
	h = uc(URNIC_OP_UC_SEND_ONLY_WITH_IMMEDIATE, 5);
	rec(&o, 0, &h, 16);
	save("uc", "send-multi", &o);

	h = uc_reth(URNIC_OP_UC_RDMA_WRITE_ONLY, 0, FR_RW, 16, 64);
	rec(&o, 0, &h, 64);
	h = uc_reth(URNIC_OP_UC_RDMA_WRITE_FIRST, 1, FR_RW, 1000, 2500);
	rec(&o, 0, &h, FUZZ_MTU);
	h = uc(URNIC_OP_UC_RDMA_WRITE_MIDDLE, 2);
	rec(&o, 0, &h, FUZZ_MTU);
	h = uc(URNIC_OP_UC_RDMA_WRITE_LAST, 3);
	rec(&o, 0, &h, 2500 - 2 * FUZZ_MTU);
	h = uc_reth(URNIC_OP_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 4, FR_RW, 0, 8);
	rec(&o, 0, &h, 8);
	h = uc_reth(URNIC_OP_UC_RDMA_WRITE_FIRST, 5, FR_RW, 0, 1500);
	rec(&o, 0, &h, FUZZ_MTU);
	h = uc(URNIC_OP_UC_RDMA_WRITE_LAST_WITH_IMMEDIATE, 6);
	rec(&o, 0, &h, 1500 - FUZZ_MTU);
	save("uc", "write", &o);

	/* Loss: a gap drops the message up to the next FIRST/ONLY (IBTA 9.8); a FIRST in
	 * a message starts a new one; a MIDDLE outside one is dropped. */
	h = uc(URNIC_OP_UC_SEND_FIRST, 0);
	rec(&o, 0, &h, FUZZ_MTU);
	h = uc(URNIC_OP_UC_SEND_MIDDLE, 2);
	rec(&o, 0, &h, FUZZ_MTU);
	h = uc(URNIC_OP_UC_SEND_LAST, 3);
	rec(&o, 0, &h, 1);
	h = uc(URNIC_OP_UC_SEND_ONLY, 4);
	rec(&o, 0, &h, 16);
	h = uc(URNIC_OP_UC_SEND_FIRST, 5);
	rec(&o, 0, &h, FUZZ_MTU);
	h = uc(URNIC_OP_UC_SEND_FIRST, 6);
	rec(&o, 0, &h, FUZZ_MTU);
	h = uc(URNIC_OP_UC_SEND_LAST, 7);
	rec(&o, 0, &h, 1);
	h = uc(URNIC_OP_UC_SEND_MIDDLE, 8);
	rec(&o, 0, &h, FUZZ_MTU);
	h = uc_reth(URNIC_OP_UC_RDMA_WRITE_FIRST, 0x7fffff, FR_RW, 0, 3000);
	rec(&o, 0, &h, FUZZ_MTU);
	save("uc", "loss", &o);

	/* Dropped silently: no right, stale key, too long for the packet or the buffer;
	 * then a receive SGE without local write (the QP goes to error). */
	h = uc_reth(URNIC_OP_UC_RDMA_WRITE_ONLY, 0, FR_RO, 0, 16);
	rec(&o, 0, &h, 16);
	h = uc_reth(URNIC_OP_UC_RDMA_WRITE_ONLY, 1, FR_DEAD, 0, 16);
	rec(&o, 0, &h, 16);
	h = uc(URNIC_OP_UC_SEND_ONLY, 2);
	rec(&o, 0, &h, FUZZ_MTU + 4);
	for (uint32_t k = 0; k < 5; k++) {
		h = uc(URNIC_OP_UC_SEND_ONLY, 3 + k);
		rec(&o, 0, &h, k == 2 ? 100 : k == 4 ? 1000 : 8);
	}
	save("uc", "errors", &o);

	/* The requester: Q's work posted and sent as records come (ctl bit 7). */
	for (int k = 0; k < 8; k++)
		rec_raw(&o, (uint8_t)(FUZZ_CTL_POST | (k & 3) << FUZZ_CTL_CLOCK_SHIFT), none, 0);
	save("uc", "requester", &o);

	/* Actions: a window on a UC QP (bound by a WR, as on RC), the region gone, the QP
	 * to error, destroyed and made again. */
	ACT(&o, 0, FA_MW_ALLOC, 0, 0);
	ACT(&o, 0, FA_BIND, 0, FR_WIN, 0x00, 0x00, 0x10, 0x00, RW);
	h = uc_reth(URNIC_OP_UC_RDMA_WRITE_ONLY, 0, W0, 64, 64);
	rec(&o, 0, &h, 64);
	ACT(&o, 0, FA_DEREG, FR_RW);
	h = uc_reth(URNIC_OP_UC_RDMA_WRITE_ONLY, 1, FR_RW, 0, 64);
	rec(&o, 0, &h, 64);
	h = uc(URNIC_OP_UC_SEND_FIRST, 2);
	rec(&o, 0, &h, FUZZ_MTU);
	ACT(&o, 0, FA_MODIFY_ERR);
	ACT(&o, FUZZ_CTL_POST, FA_DESTROY);
	ACT(&o, 0, FA_CREATE, 3);
	h = uc(URNIC_OP_UC_SEND_ONLY, 0);
	rec(&o, 0, &h, 16);
	ACT(&o, FUZZ_CTL_ACT_OTHER, FA_MODIFY_ERR);
	save("uc", "actions", &o);
}

/* ---- hand-made: UD (Q_Key 0 is the receiving QP's, harness.h) ---- */

static struct urnic_pkt ud(uint8_t opcode, uint32_t qkey)
{
	struct urnic_pkt h = hdr(opcode, 0);

	h.bth.ackreq = false;
	h.deth = (struct urnic_deth){ qkey, PEER_SQPN };
	return h;
}

static void ud_seeds(void)
{
	static struct out o;
	static const uint8_t none[1];
	struct urnic_pkt h;

	h = ud(URNIC_OP_UD_SEND_ONLY, 0);
	rec(&o, 0, &h, 100);
	save("ud", "send-only", &o);

	h = ud(URNIC_OP_UD_SEND_ONLY_WITH_IMMEDIATE, FUZZ_QKEY);
	h.imm_be = 0x0a0b0c0d;
	rec(&o, 0, &h, 0);
	h = ud(URNIC_OP_UD_SEND_ONLY, 0);
	rec(&o, FUZZ_CTL_QP_OTHER, &h, 64);
	save("ud", "send-imm", &o);

	/* A wrong Q_Key; the GRH and the payload into each receive: the 16-byte one is too
	 * short (dropped, the WQE stays), the 4th has an SGE without local write. */
	h = ud(URNIC_OP_UD_SEND_ONLY, 0x22222222);
	rec(&o, 0, &h, 16);
	h = ud(URNIC_OP_UD_SEND_ONLY, 0);
	rec(&o, 0, &h, FUZZ_MTU);
	rec(&o, 0, &h, 1000);
	rec(&o, 0, &h, 8);
	rec(&o, FUZZ_CTL_POST, &h, 600);
	save("ud", "errors", &o);

	/* More datagrams than receives: dropped (no RNR on UD), then receives posted. */
	h = ud(URNIC_OP_UD_SEND_ONLY, 0);
	for (int k = 0; k < 6; k++)
		rec(&o, 0, &h, 8);
	rec(&o, FUZZ_CTL_POST, &h, 8);
	rec(&o, FUZZ_CTL_POST | FUZZ_CTL_NO_PASS, &h, 8);
	save("ud", "no-receive", &o);

	/* Multicast: R, then Q, attached to group 0; datagrams to DestQP 0xFFFFFF for
	 * group 0 (PSN even) and 1 (odd, no group); R cannot go while attached. */
	ACT(&o, 0, FA_MCAST_ATTACH, 0);
	h = ud(URNIC_OP_UD_SEND_ONLY, 0);
	h.bth.dqpn = URNIC_MCAST_QPN;
	rec(&o, FUZZ_CTL_QP_RAW, &h, 32);
	h.bth.psn = 1;
	rec(&o, FUZZ_CTL_QP_RAW, &h, 32);
	ACT(&o, FUZZ_CTL_ACT_OTHER, FA_MCAST_ATTACH, 0);
	ACT(&o, 0, FA_MCAST_ATTACH, 0);
	h.bth.psn = 0;
	h.deth.qkey = FUZZ_QKEY;
	rec(&o, FUZZ_CTL_QP_RAW, &h, 32);
	ACT(&o, 0, FA_DESTROY);
	ACT(&o, 0, FA_MCAST_DETACH, 0);
	ACT(&o, 0, FA_MCAST_DETACH, 0);
	ACT(&o, 0, FA_DESTROY);
	rec(&o, FUZZ_CTL_QP_RAW, &h, 32);
	ACT(&o, 0, FA_CREATE, 0);
	ACT(&o, 0, FA_MCAST_ATTACH, 1);
	h.bth.psn = 1;
	rec(&o, FUZZ_CTL_QP_RAW, &h, 32);
	save("ud", "multicast", &o);

	/* The requester: Q's SENDs, one longer than the MTU (completed, not sent). */
	for (int k = 0; k < 6; k++)
		rec_raw(&o, (uint8_t)(FUZZ_CTL_POST | (k & 3) << FUZZ_CTL_CLOCK_SHIFT), none, 0);
	save("ud", "requester", &o);

	/* A bind on a UD QP (not a UD operation: the QP fails), Q to error, R made again. */
	ACT(&o, 0, FA_MW_ALLOC, 0, 1);
	ACT(&o, 0, FA_BIND, 0, FR_WIN, 0x00, 0x00, 0x10, 0x00, RW);
	h = ud(URNIC_OP_UD_SEND_ONLY, 0);
	rec(&o, 0, &h, 8);
	ACT(&o, FUZZ_CTL_ACT_OTHER, FA_MODIFY_ERR);
	ACT(&o, 0, FA_DESTROY);
	ACT(&o, 0, FA_CREATE, 0);
	rec(&o, 0, &h, 8);
	save("ud", "actions", &o);
}

/* ---- hand-made: SRQ (R and Q take their receives from one SRQ of 4 WQEs) ---- */

static void srq_seeds(void)
{
	static struct out o;
	struct urnic_pkt h;

	/* Both QPs draw from the SRQ until it is empty (RNR), then receives are posted. */
	for (uint32_t k = 0; k < 3; k++) {
		h = hdr(URNIC_OP_RC_SEND_ONLY, k);
		rec(&o, 0, &h, 8);
		rec(&o, FUZZ_CTL_QP_OTHER, &h, 8);
	}
	h = hdr(URNIC_OP_RC_SEND_ONLY, 3);
	rec(&o, FUZZ_CTL_POST | (2 << FUZZ_CTL_CLOCK_SHIFT), &h, 8);
	save("srq", "shared", &o);

	/* The limit: armed at 3, it fires when 2 are left; armed above the count, on the
	 * next WQE taken. */
	ACT(&o, 0, FA_SRQ_ARM, 3);
	h = hdr(URNIC_OP_RC_SEND_ONLY, 0);
	rec(&o, 0, &h, 8);
	h = hdr(URNIC_OP_RC_SEND_ONLY, 1);
	rec(&o, 0, &h, 8);
	ACT(&o, 0, FA_SRQ_ARM, 10);
	h = hdr(URNIC_OP_RC_SEND_ONLY, 2);
	rec(&o, FUZZ_CTL_POST, &h, 8);
	save("srq", "limit", &o);

	/* R holds a WQE for a message when it goes to error (flushed, Last WQE Reached);
	 * Q goes on; R is made again. */
	h = hdr(URNIC_OP_RC_SEND_FIRST, 0);
	rec(&o, 0, &h, FUZZ_MTU);
	ACT(&o, 0, FA_MODIFY_ERR);
	h = hdr(URNIC_OP_RC_SEND_ONLY, 0);
	rec(&o, FUZZ_CTL_QP_OTHER, &h, 8);
	ACT(&o, 0, FA_DESTROY);
	ACT(&o, 0, FA_CREATE, 0);
	rec(&o, 0, &h, 8);
	save("srq", "error", &o);
}

/* ---- hand-made: XRC (R an XRC receive QP; XRCETH SRQ 0..2 select harness slots) ---- */

static struct urnic_pkt xrc(uint8_t opcode, uint32_t psn, uint32_t srq)
{
	struct urnic_pkt h = hdr(opcode, psn);

	h.xrc_srqn = srq;
	return h;
}

static struct urnic_pkt xrc_reth(uint8_t opcode, uint32_t psn, uint32_t srq, uint32_t r,
				 uint64_t off, uint32_t len)
{
	struct urnic_pkt h = req_reth(opcode, psn, r, off, len);

	h.xrc_srqn = srq;
	return h;
}

static void xrc_seeds(void)
{
	static struct out o;
	struct urnic_pkt h;

	/* A SEND to each SRQ of R's domain; slot 1's PD is not FR_RECV's: the receive
	 * fails its local protection check. */
	h = xrc(URNIC_OP_XRC_SEND_ONLY, 0, 0);
	rec(&o, 0, &h, 100);
	h = xrc(URNIC_OP_XRC_SEND_ONLY_WITH_IMMEDIATE, 1, 0);
	rec(&o, 0, &h, 8);
	h = xrc(URNIC_OP_XRC_SEND_ONLY, 2, 1);
	rec(&o, 0, &h, 8);
	save("xrc", "send", &o);

	/* WRITE, READ and atomics through SRQ 0 (R's PD), then a WRITE through SRQ 1 (the
	 * other PD: refused). */
	h = xrc_reth(URNIC_OP_XRC_RDMA_WRITE_ONLY, 0, 0, FR_RW, 64, 200);
	rec(&o, 0, &h, 200);
	h = xrc_reth(URNIC_OP_XRC_RDMA_READ_REQUEST, 1, 0, FR_RO, 0, 3000);
	rec(&o, 0, &h, 0);
	h = req_atomic(URNIC_OP_XRC_COMPARE_SWAP, 4, FR_ATOMIC, 8);
	h.xrc_srqn = 0;
	rec(&o, 0, &h, 0);
	h = req_atomic(URNIC_OP_XRC_FETCH_ADD, 5, FR_ATOMIC, 16);
	h.xrc_srqn = 0;
	rec(&o, 0, &h, 0);
	h = xrc_reth(URNIC_OP_XRC_RDMA_WRITE_ONLY, 6, 1, FR_RW, 0, 16);
	rec(&o, 0, &h, 16);
	save("xrc", "rdma", &o);

	/* The SRQ of another domain, a number no SRQ has, an SRQ changed in mid-message. */
	h = xrc(URNIC_OP_XRC_SEND_ONLY, 0, FUZZ_XSRQ_FOREIGN);
	rec(&o, 0, &h, 8);
	save("xrc", "foreign", &o);
	h = xrc(URNIC_OP_XRC_SEND_ONLY, 0, 0x00ab12);
	rec(&o, 0, &h, 8);
	save("xrc", "nonexistent", &o);
	h = xrc(URNIC_OP_XRC_SEND_FIRST, 0, 0);
	rec(&o, 0, &h, FUZZ_MTU);
	h = xrc(URNIC_OP_XRC_SEND_LAST, 1, 1);
	rec(&o, 0, &h, 10);
	save("xrc", "switch", &o);

	/* SRQ 0 destroyed: before a message, in the middle of a SEND and of a WRITE; made
	 * again (a new number: the old one stays stale). */
	ACT(&o, 0, FA_XSRQ_DESTROY, 0);
	h = xrc(URNIC_OP_XRC_SEND_ONLY, 0, 0);
	rec(&o, 0, &h, 8);
	ACT(&o, 0, FA_XSRQ_CREATE, 0);
	rec(&o, 0, &h, 8);
	save("xrc", "destroyed", &o);
	h = xrc(URNIC_OP_XRC_SEND_FIRST, 0, 0);
	rec(&o, 0, &h, FUZZ_MTU);
	ACT(&o, 0, FA_XSRQ_DESTROY, 0);
	h = xrc(URNIC_OP_XRC_SEND_LAST, 1, 0);
	rec(&o, 0, &h, 10);
	ACT(&o, 0, FA_XSRQ_CREATE, 0);
	h = xrc(URNIC_OP_XRC_SEND_ONLY, 1, 0);
	rec(&o, 0, &h, 10);
	save("xrc", "destroy-mid-send", &o);
	h = xrc_reth(URNIC_OP_XRC_RDMA_WRITE_FIRST, 0, 0, FR_RW, 0, 3 * FUZZ_MTU);
	rec(&o, 0, &h, FUZZ_MTU);
	ACT(&o, 0, FA_XSRQ_DESTROY, 0);
	h = xrc(URNIC_OP_XRC_RDMA_WRITE_MIDDLE, 1, 0);
	rec(&o, 0, &h, FUZZ_MTU);
	h = xrc(URNIC_OP_XRC_RDMA_WRITE_LAST, 2, 0);
	rec(&o, 0, &h, FUZZ_MTU);
	save("xrc", "destroy-mid-write", &o);

	/* The region deregistered between the packets of a WRITE. */
	h = xrc_reth(URNIC_OP_XRC_RDMA_WRITE_FIRST, 0, 0, FR_RW, 0, 3 * FUZZ_MTU);
	rec(&o, 0, &h, FUZZ_MTU);
	ACT(&o, 0, FA_DEREG, FR_RW);
	h = xrc(URNIC_OP_XRC_RDMA_WRITE_MIDDLE, 1, 0);
	rec(&o, 0, &h, FUZZ_MTU);
	h = xrc(URNIC_OP_XRC_RDMA_WRITE_LAST, 2, 0);
	rec(&o, 0, &h, FUZZ_MTU);
	save("xrc", "write-dereg", &o);

	/* SRQ 0 emptied (RNR), receives posted by action and by ctl. */
	for (uint32_t k = 0; k < 5; k++) {
		h = xrc(URNIC_OP_XRC_SEND_ONLY, k, 0);
		rec(&o, 0, &h, 8);
	}
	ACT(&o, 0, FA_XSRQ_POST, 0);
	h = xrc(URNIC_OP_XRC_SEND_ONLY, 4, 0);
	rec(&o, FUZZ_CTL_POST | (6 << FUZZ_CTL_CLOCK_SHIFT), &h, 8);
	save("xrc", "rnr", &o);
}

/* ---- hand-made: tag matching (R on a tag-matching SRQ; tags added by action) ---- */

/* A SEND with a TMH (and an RVH when rvh_len) first, then extra pattern bytes. */
static void rec_tm(struct out *o, uint8_t ctl, uint8_t opcode, uint32_t psn, uint8_t op,
		   uint64_t tag, uint32_t rvh_len, uint32_t extra)
{
	static uint8_t pkt[8192];
	struct urnic_pkt h = hdr(opcode, psn);
	struct urnic_tmh t = { .op = op, .app_ctx = 0xc0ffee, .tag = tag };
	uint32_t len = URNIC_TMH_BYTES + (rvh_len ? URNIC_RVH_BYTES : 0) + extra;
	uint32_t pad = (4 - (len & 3)) & 3;
	ssize_t n;

	h.bth.pad = (uint8_t)pad;
	h.bth.pkey = URNIC_DEFAULT_PKEY;
	n = urnic_pkt_encode_hdr(&h, pkt, sizeof(pkt));
	if (n < 0 || (size_t)n + len + pad + 4 > sizeof(pkt))
		exit(1);
	memset(pkt + n, 0, len + pad + 4);
	urnic_tmh_put(pkt + n, &t);
	if (rvh_len) {
		urnic_put_be64(pkt + n + URNIC_TMH_BYTES + URNIC_RVH_OFF_VA, 0x7f0000001000ull);
		urnic_put_be32(pkt + n + URNIC_TMH_BYTES + URNIC_RVH_OFF_RKEY, 0x4242);
		urnic_put_be32(pkt + n + URNIC_TMH_BYTES + URNIC_RVH_OFF_LEN, rvh_len);
	}
	for (uint32_t i = len - extra; i < len; i++)
		pkt[n + i] = (uint8_t)(i * 7 + 3);
	rec_raw(o, ctl, pkt, (size_t)n + len + pad + 4);
}

static void tm_seeds(void)
{
	static struct out o;
	struct urnic_pkt h;

	/* Eager: a tag of 256 bytes matched, then a message no tag takes (unexpected),
	 * a NO_TAG one, one too short for a TMH, one with an unknown op. */
	ACT(&o, 0, FA_TM_ADD, 0, 5, 0, 2);
	rec_tm(&o, 0, URNIC_OP_RC_SEND_ONLY, 0, URNIC_TMH_EAGER, 5, 0, 100);
	rec_tm(&o, 0, URNIC_OP_RC_SEND_ONLY, 1, URNIC_TMH_EAGER, 6, 0, 20);
	rec_tm(&o, 0, URNIC_OP_RC_SEND_ONLY, 2, URNIC_TMH_NO_TAG, 0, 0, 8);
	h = hdr(URNIC_OP_RC_SEND_ONLY, 3);
	rec(&o, 0, &h, 8);
	rec_tm(&o, 0, URNIC_OP_RC_SEND_ONLY, 4, 7, 5, 0, 8);
	save("tm", "eager", &o);

	/* Phase: a tag posted after an unexpected message waits for the sync. */
	rec_tm(&o, 0, URNIC_OP_RC_SEND_ONLY, 0, URNIC_TMH_EAGER, 9, 0, 30);
	ACT(&o, 0, FA_TM_ADD, 1, 9, 0, 1);
	rec_tm(&o, 0, URNIC_OP_RC_SEND_ONLY, 1, URNIC_TMH_EAGER, 9, 0, 30);
	ACT(&o, 0, FA_TM_SYNC);
	rec_tm(&o, 0, URNIC_OP_RC_SEND_ONLY, 2, URNIC_TMH_EAGER, 9, 0, 30);
	save("tm", "sync", &o);

	/* A multi-packet eager message longer than its tag (1024 - the TMH is not enough);
	 * a wildcard tag. */
	ACT(&o, 0, FA_TM_ADD, 2, 3, 0, 4);
	rec_tm(&o, 0, URNIC_OP_RC_SEND_FIRST, 0, URNIC_TMH_EAGER, 3, 0, FUZZ_MTU - 16);
	h = hdr(URNIC_OP_RC_SEND_LAST, 1);
	rec(&o, 0, &h, 200);
	ACT(&o, 0, FA_TM_ADD, 3, 0, 1, 3);
	rec_tm(&o, 0, URNIC_OP_RC_SEND_ONLY, 2, URNIC_TMH_EAGER, 77, 0, 300);
	save("tm", "eager-long", &o);

	/* A tag removed, then its message (unexpected); a tag whose region goes away. */
	ACT(&o, 0, FA_TM_ADD, 0, 4, 0, 2);
	ACT(&o, 0, FA_TM_DEL, 0);
	rec_tm(&o, 0, URNIC_OP_RC_SEND_ONLY, 0, URNIC_TMH_EAGER, 4, 0, 50);
	ACT(&o, 0, FA_TM_ADD, 1, 8, 0, 2);
	ACT(&o, 0, FA_DEREG, FR_WIN);
	rec_tm(&o, 0, URNIC_OP_RC_SEND_ONLY, 1, URNIC_TMH_EAGER, 8, 0, 50);
	save("tm", "removed", &o);

	/* Rendezvous: matched, R READs the RVH's 600 bytes (its first request, PSN 0 of its
	 * stream), the response comes, R sends the FIN, it is ACKed. */
	ACT(&o, 0, FA_TM_ADD, 0, 7, 0, 4);
	rec_tm(&o, 0, URNIC_OP_RC_SEND_ONLY, 0, URNIC_TMH_RNDV, 7, 600, 0);
	h = resp(URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY, 0, 0, 1);
	rec(&o, 0, &h, 600);
	h = resp(URNIC_OP_RC_ACKNOWLEDGE, 1, 0, 2);
	rec(&o, 0, &h, 0);
	save("tm", "rndv", &o);

	/* The same with the tag removed, or its region deregistered, while the READ is
	 * out; a READ too long for the tag; a rendezvous without an RVH. */
	ACT(&o, 0, FA_TM_ADD, 0, 7, 0, 4);
	rec_tm(&o, 0, URNIC_OP_RC_SEND_ONLY, 0, URNIC_TMH_RNDV, 7, 600, 0);
	ACT(&o, 0, FA_TM_DEL, 0);
	h = resp(URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY, 0, 0, 1);
	rec(&o, 0, &h, 600);
	save("tm", "rndv-del", &o);
	ACT(&o, 0, FA_TM_ADD, 0, 7, 0, 4);
	rec_tm(&o, 0, URNIC_OP_RC_SEND_ONLY, 0, URNIC_TMH_RNDV, 7, 600, 0);
	ACT(&o, 0, FA_DEREG, FR_WIN);
	h = resp(URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY, 0, 0, 1);
	rec(&o, 0, &h, 600);
	save("tm", "rndv-dereg", &o);
	ACT(&o, 0, FA_TM_ADD, 0, 7, 0, 0);
	rec_tm(&o, 0, URNIC_OP_RC_SEND_ONLY, 0, URNIC_TMH_RNDV, 7, 600, 0);
	ACT(&o, 0, FA_TM_ADD, 1, 7, 0, 4);
	rec_tm(&o, 0, URNIC_OP_RC_SEND_ONLY, 1, URNIC_TMH_RNDV, 7, 0, 0);
	save("tm", "rndv-bad", &o);
}

/* ---- hand-made: the completer (QP Q; PSN 0 = its first request) ---- */

struct planned {
	uint32_t first, npsn, len;
	uint32_t opcode;
};

static unsigned plan(struct planned *p)
{
	uint32_t psn = 0;

	if (fuzz_plan_len > 64)
		exit(1);

	for (unsigned k = 0; k < fuzz_plan_len; k++) {
		const struct fuzz_wqe_plan *w = &fuzz_plan[k];
		bool atomic = w->opcode == URNIC_WR_ATOMIC_CMP_AND_SWP ||
			      w->opcode == URNIC_WR_ATOMIC_FETCH_AND_ADD;

		p[k].first = psn;
		p[k].npsn = atomic || !w->length ? 1 : (w->length + FUZZ_MTU - 1) / FUZZ_MTU;
		p[k].len = w->length;
		p[k].opcode = w->opcode;
		psn += p[k].npsn;
	}
	return fuzz_plan_len;
}

/* The answers a correct responder gives to planned WQE k (MSN msn after it). */
static void answer(struct out *o, const struct planned *p, uint32_t msn, uint8_t ctl)
{
	struct urnic_pkt h;

	switch (p->opcode) {
	case URNIC_WR_RDMA_READ:
		for (uint32_t j = 0; j < p->npsn; j++) {
			uint32_t n =
				p->len - j * FUZZ_MTU < FUZZ_MTU ? p->len - j * FUZZ_MTU : FUZZ_MTU;
			uint8_t op = p->npsn == 1	? URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY
				     : j == 0		? URNIC_OP_RC_RDMA_READ_RESPONSE_FIRST
				     : j == p->npsn - 1 ? URNIC_OP_RC_RDMA_READ_RESPONSE_LAST
							: URNIC_OP_RC_RDMA_READ_RESPONSE_MIDDLE;

			h = resp(op, p->first + j, 0x1f, msn);
			rec(o, ctl, &h, p->len ? n : 0);
		}
		break;
	case URNIC_WR_ATOMIC_CMP_AND_SWP:
	case URNIC_WR_ATOMIC_FETCH_AND_ADD:
		h = resp(URNIC_OP_RC_ATOMIC_ACKNOWLEDGE, p->first, 0x1f, msn);
		h.atmack_orig = 0x0102030405060708ull;
		rec(o, ctl, &h, 0);
		break;
	default:
		h = resp(URNIC_OP_RC_ACKNOWLEDGE, p->first + p->npsn - 1, 0x1f, msn);
		rec(o, ctl, &h, 0);
		break;
	}
}

static void all_answers(struct out *o, const struct planned *p, unsigned n, unsigned from,
			uint8_t ctl)
{
	for (unsigned k = from; k < n; k++)
		answer(o, &p[k], k + 1, ctl);
}

static void completer_seeds(void)
{
	static struct out o;
	struct planned p[64] = { 0 };
	unsigned n = plan(p);
	struct urnic_pkt h;
	char name[64];

	all_answers(&o, p, n, 0, 0);
	save("completer", "ideal", &o);

	for (unsigned k = 0; k < n; k++) {
		answer(&o, &p[k], k + 1, 0);
		snprintf(name, sizeof(name), "answer-%u", k);
		save("completer", name, &o);
	}

	/* One ACK for everything before the READ, then the rest. */
	h = resp(URNIC_OP_RC_ACKNOWLEDGE, p[2].first + p[2].npsn - 1, 0x1f, 3);
	rec(&o, 0, &h, 0);
	all_answers(&o, p, n, 3, 0);
	save("completer", "coalesced", &o);

	/* RNR NAK on the first SEND, the RNR time passes, then every answer. */
	h = resp(URNIC_OP_RC_ACKNOWLEDGE, 0, URNIC_AETH_RNR_NAK | 1, 0);
	rec(&o, 0, &h, 0);
	all_answers(&o, p, n, 0, 2 << FUZZ_CTL_CLOCK_SHIFT);
	save("completer", "rnr-then-answers", &o);

	/* Sequence NAK inside the second SEND: go back N from there. */
	answer(&o, &p[0], 1, 0);
	h = resp(URNIC_OP_RC_ACKNOWLEDGE, p[1].first + 1, URNIC_AETH_NAK | URNIC_NAK_PSN_SEQ_ERR,
		 1);
	rec(&o, 0, &h, 0);
	all_answers(&o, p, n, 1, 0);
	save("completer", "seq-nak", &o);

	/* An ACK past the READ: its response was lost (implicit NAK), the READ is retried. */
	answer(&o, &p[0], 1, 0);
	h = resp(URNIC_OP_RC_ACKNOWLEDGE, p[4].first, 0x1f, 5);
	rec(&o, 0, &h, 0);
	all_answers(&o, p, n, 1, 0);
	save("completer", "implicit-nak", &o);

	/* READ responses out of order, short, and twice. */
	h = resp(URNIC_OP_RC_RDMA_READ_RESPONSE_MIDDLE, p[3].first + 1, 0, 0);
	rec(&o, 0, &h, FUZZ_MTU);
	h = resp(URNIC_OP_RC_RDMA_READ_RESPONSE_FIRST, p[3].first, 0x1f, 4);
	rec(&o, 0, &h, FUZZ_MTU);
	rec(&o, 0, &h, FUZZ_MTU);
	h = resp(URNIC_OP_RC_RDMA_READ_RESPONSE_LAST, p[3].first + 1, 0x1f, 4);
	rec(&o, 0, &h, 100);
	save("completer", "read-disorder", &o);

	/* Every answer twice. */
	for (unsigned k = 0; k < n; k++) {
		answer(&o, &p[k], k + 1, 0);
		answer(&o, &p[k], k + 1, 0);
	}
	save("completer", "duplicates", &o);

	/* Remote errors, one file each: the QP goes to error and flushes. */
	for (uint8_t code = 1; code <= 4; code++) {
		h = resp(URNIC_OP_RC_ACKNOWLEDGE, p[2].first, URNIC_AETH_NAK | code, 2);
		answer(&o, &p[0], 1, 0);
		answer(&o, &p[1], 2, 0);
		rec(&o, 0, &h, 0);
		snprintf(name, sizeof(name), "nak-code-%u", code);
		save("completer", name, &o);
	}

	/* Silence: the retransmission timer fires until the retries run out. */
	for (int k = 0; k < 5; k++) {
		h = resp(URNIC_OP_RC_ACKNOWLEDGE, 0xffffff, 0x1f, 0);
		rec(&o, 6 << FUZZ_CTL_CLOCK_SHIFT, &h, 0);
	}
	save("completer", "timeouts", &o);

	/* The READ's target region deregistered between its response packets; Q destroyed
	 * with work outstanding, answered at its old QPN, made again. */
	h = resp(URNIC_OP_RC_RDMA_READ_RESPONSE_FIRST, p[3].first, 0x1f, 4);
	rec(&o, 0, &h, FUZZ_MTU);
	ACT(&o, 0, FA_DEREG, FR_DST);
	h = resp(URNIC_OP_RC_RDMA_READ_RESPONSE_MIDDLE, p[3].first + 1, 0, 0);
	rec(&o, 0, &h, FUZZ_MTU);
	h = resp(URNIC_OP_RC_RDMA_READ_RESPONSE_LAST, p[3].first + 2, 0x1f, 4);
	rec(&o, 0, &h, p[3].len - 2 * FUZZ_MTU);
	save("completer", "act-read-dereg", &o);
	answer(&o, &p[0], 1, 0);
	ACT(&o, 0, FA_DESTROY);
	answer(&o, &p[1], 2, 0);
	ACT(&o, 0, FA_CREATE, 0);
	all_answers(&o, p, n, 0, 0);
	save("completer", "act-destroy-create", &o);

	/* More work posted as answers come (ctl bit 7). */
	for (unsigned k = 0; k < n; k++)
		answer(&o, &p[k], k + 1, FUZZ_CTL_POST);
	save("completer", "repost", &o);
}

static void mkdir_p(const char *target)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", out_dir, target);
	if (mkdir(out_dir, 0755) < 0 && errno != EEXIST) {
		perror(out_dir);
		exit(1);
	}
	if (mkdir(path, 0755) < 0 && errno != EEXIST) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s GOLDEN_DIR OUT_DIR\n", argv[0]);
		return 2;
	}
	out_dir = argv[2];
	mkdir_p("responder");
	mkdir_p("completer");
	mkdir_p("uc");
	mkdir_p("ud");
	mkdir_p("srq");
	mkdir_p("xrc");
	mkdir_p("tm");
	from_golden(argv[1]);
	responder_seeds("responder");
	responder_seeds("srq");
	action_seeds();
	bug_seeds();
	near_miss_seeds();
	uc_seeds();
	ud_seeds();
	srq_seeds();
	xrc_seeds();
	tm_seeds();
	completer_seeds();
	printf("wrote %u seed files under %s\n", written, out_dir);
	return 0;
}
