/* SPDX-License-Identifier: MIT */
/*
 * flood.c - hostile scenarios: many requests at once. Thousands of SENDs with no receive
 * posted and ahead of the expected PSN (RNR NAKs, IBTA 9.7.5.1.5; one NAK sequence
 * error, 9.7.5.1.2), and READs up to and past max_dest_rd_atomic (9.7.5.1.3): each
 * answered correctly or refused once, the target's RSS bounded. Out of scope: what one
 * request may do (requests.c, sequence.c).
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "attacker.h"

/* Sends n SEND_ONLY at the same PSN to a QP without receive WQEs; each must draw an RNR
 * NAK (IBTA 9.7.5.1.5: syndrome 0x20 | our min_rnr_timer, the packet's PSN). Returns
 * how many correct RNR NAKs came back. */
static uint32_t rnr_burst(int qi, uint32_t n)
{
	struct qpinfo *q = &A.qp[qi];
	struct urnic_pkt h = hdr(qi, URNIC_OP_RC_SEND_ONLY, q->epsn);
	uint8_t data[64], syn = (uint8_t)(URNIC_AETH_RNR_NAK | A.o.min_rnr_timer);
	uint32_t good = 0, bad = 0;
	char got[160];

	fill(data, 64, 1);
	for (uint32_t sent = 0; sent < n;) {
		uint32_t k, burst = n - sent < 32 ? n - sent : 32;

		for (k = 0; k < burst; k++)
			xmit(&h, data, 64, 0);
		sent += burst;
		for (k = 0; k < burst && get_reply(REPLY_MS); k++) {
			const struct urnic_pkt *p = &A.r.pkt;

			if (A.r.decoded && A.r.icrc_ok &&
			    p->bth.opcode == URNIC_OP_RC_ACKNOWLEDGE && p->bth.psn == q->epsn &&
			    p->aeth.syndrome == syn && p->aeth.msn == q->msn &&
			    p->bth.dqpn == q->dest) {
				good++;
			} else if (bad++ == 0) {
				describe(got, sizeof(got));
				fail_at(__LINE__, "rnr",
					"got %s; expected an RNR NAK %02x psn 0x%06x", got, syn,
					q->epsn);
			}
		}
	}
	return good;
}

/* A flood of new requests (IBTA 9.7.5.1.5): 10,000 SENDs to a QP with no receive posted
 * draw 10,000 RNR NAKs; SENDs ahead of the RNR NAK'd PSN are dropped silently; after a
 * WRITE at the expected PSN, 10,000 SENDs ahead draw one NAK sequence error and
 * silence; the target allocates nothing for them (its RSS grows by at most 1 MiB). */
void sc_rnr_flood(void)
{
	struct topts o = topts_default(2);
	struct urnic_ctrfile s;
	uint8_t data[64];
	struct urnic_pkt h;
	struct wcx w[8];
	long rss0, rss1;
	uint32_t good, extra = 0;
	int n;

	o.recv = 0;
	start_target(&o);
	snap(&s);
	good = rnr_burst(0, 1000); /* warm-up: every buffer the path touches is touched */
	EXPECT(good == 1000, "%u of 1000 RNR NAKs", good);
	rss0 = target_rss_kb();
	good = rnr_burst(0, 10000);
	EXPECT(good == 10000, "%u of 10000 RNR NAKs", good);
	settle();
	EXPECT_CTR(s, "rnr_nak_sent", 11000);

	/* Ahead of the expected PSN right after an RNR NAK: silence. The RNR NAK already
	 * named the PSN the requester resumes from; a sequence NAK would cost it a retry. */
	snap(&s);
	fill(data, 64, 2);
	for (uint32_t k = 1; k <= 5000; k++) {
		h = hdr(0, URNIC_OP_RC_SEND_ONLY, urnic_psn_add(A.qp[0].epsn, k));
		xmit(&h, data, 64, 0);
		if (k % 256 == 0)
			settle();
	}
	while (get_reply(SILENCE_MS))
		extra++;
	EXPECT(extra == 0, "%u replies to SENDs ahead of an RNR NAK'd PSN", extra);
	settle();
	EXPECT_CTR(s, "nak_seq_sent", 0);
	EXPECT_CTR(s, "drop_psn_after_nak", 5000);

	/* A WRITE at the expected PSN needs no receive; then SENDs ahead (across the 24-bit
	 * wrap): one sequence NAK, then nothing (IBTA 9.7.5.1.2). */
	good_write(0, 0, 64, 5, "WRITE at the expected PSN after the RNR NAKs");
	snap(&s);
	for (uint32_t k = 1; k <= 10000; k++) {
		h = hdr(0, URNIC_OP_RC_SEND_ONLY, urnic_psn_add(A.qp[0].epsn, k));
		xmit(&h, data, 64, 0);
		if (k % 256 == 0)
			settle();
	}
	expect_nak(0, A.qp[0].epsn, 0x60, "the first SEND ahead");
	while (get_reply(SILENCE_MS))
		extra++;
	EXPECT(extra == 0, "%u more replies to SENDs ahead of the expected PSN", extra);
	settle();
	EXPECT_CTR(s, "nak_seq_sent", 1);
	EXPECT_CTR(s, "drop_psn_after_nak", 9999);
	rss1 = target_rss_kb();
	say("target RSS %ld kB before the flood, %ld kB after", rss0, rss1);
	EXPECT(rss0 > 0 && rss1 - rss0 <= 1024, "the target's RSS grew by %ld kB", rss1 - rss0);

	/* A receive posted now is used by the next SEND at the expected PSN. */
	tcmd("post 0 1");
	good_send(0, 64, 3, "SEND after a receive was posted");
	n = target_wcs(w, 8);
	EXPECT(n == 1 && w[0].qp == 0 && w[0].status == 0 && w[0].opcode == 128 &&
		       w[0].byte_len == 64,
	       "expected one successful 64-byte receive, got %d completion(s), first status %d", n,
	       n ? w[0].status : -1);
	probe(1);
}

/* READ requests back to back: each answered correctly, in PSN order, with the bytes of
 * the region; the last READ always is; nothing grows. */
struct flood {
	uint32_t nreq, len, npsn, e, msn0, got;
	int32_t last; /* the last response's PSN, relative to e */
	bool last_answered;
	const char *what;
};

/* Checks the response in A.r: for one of the READs, in PSN order, with its bytes. */
static void flood_response(struct flood *f)
{
	const struct mrinfo *ro = &A.mr[HR_RO];
	const struct urnic_pkt *p = &A.r.pkt;
	int32_t d = urnic_psn_diff(p->bth.psn, f->e);
	uint32_t rk = d >= 0 ? (uint32_t)d / f->npsn : 0, j = d >= 0 ? (uint32_t)d % f->npsn : 0;
	uint64_t roff = (rk * 64u) % (ro->len - f->len) + (uint64_t)j * MTU;
	uint32_t n = f->len - j * MTU < MTU ? f->len - j * MTU : MTU;
	bool aeth = urnic_opcode_info(p->bth.opcode)->flags & URNIC_OPF_AETH;
	char desc[160];

	f->got++;
	describe(desc, sizeof(desc));
	if (!A.r.decoded || !A.r.icrc_ok || d < 0 || d >= (int32_t)(f->nreq * f->npsn) ||
	    d <= f->last || !(urnic_opcode_info(p->bth.opcode)->flags & URNIC_OPF_READ) ||
	    p->payload_bytes != n || memcmp(p->payload, A.shadow[HR_RO] + roff, n) != 0 ||
	    (aeth && p->aeth.msn != f->msn0 + rk + 1)) {
		fail_at(__LINE__, "read flood", "%s: bad or out-of-order response %s", f->what,
			desc);
		return;
	}
	f->last = d;
	if (rk == f->nreq - 1 && (p->bth.opcode == URNIC_OP_RC_RDMA_READ_RESPONSE_LAST ||
				  p->bth.opcode == URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY))
		f->last_answered = true;
}

/* nreq READs of len bytes sent back to back on QP qi; *rss: the target's RSS
 * afterwards. */
static void read_flood(int qi, uint32_t nreq, uint32_t len, long *rss)
{
	struct qpinfo *q = &A.qp[qi];
	const struct mrinfo *ro = &A.mr[HR_RO];
	struct flood f = { nreq, len, (len + MTU - 1) / MTU, q->epsn, q->msn, 0, -1, false, NULL };
	struct urnic_ctrfile s;
	char what[64];
	uint64_t end;

	snap(&s);
	snprintf(what, sizeof(what), "%u READs of %u bytes", nreq, len);
	f.what = what;
	for (uint32_t k = 0; k < nreq; k++) {
		uint64_t off = (k * 64u) % (ro->len - len);

		send_read(qi, urnic_psn_add(f.e, k * f.npsn), ro->addr + off, ro->rkey, len);
		/* Drain what has come back so far (the socket buffer may be small). */
		if (k % 16 == 15)
			while (get_reply(-1))
				flood_response(&f);
	}
	/* The rest: until the target has sent no more than we have. */
	settle();
	end = now_ms() + 3000;
	while (now_ms() < end) {
		if (get_reply(100)) {
			flood_response(&f);
			continue;
		}
		if (ctr("read_resp_sent") - snap_of(&s, "read_resp_sent") <= f.got)
			break;
	}
	EXPECT(f.last_answered, "%s: the last READ was not answered in full", what);
	EXPECT_CTR(s, "read_resp_sent", f.got);
	say("%s: %u response packets for %u requests", what, f.got, nreq);
	q->epsn = urnic_psn_add(f.e, nreq * f.npsn);
	q->msn += nreq;
	*rss = target_rss_kb();
}

/* True once every thread of the target is stopped: kill(SIGSTOP) returns before the
 * signal has stopped them, and a thread still running could take a packet meant for
 * the stopped batch. */
static bool target_stopped(void)
{
	char path[64], stat[512];
	struct dirent *de;
	bool all = true;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)A.pid);
	d = opendir(path);
	if (!d)
		return false;
	while (all && (de = readdir(d)) != NULL) {
		char *st;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/stat", (int)A.pid, de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue; /* a thread that just ended */
		st = fgets(stat, sizeof(stat), f) ? strrchr(stat, ')') : NULL;
		fclose(f);
		all = st && st[1] == ' ' && (st[2] == 'T' || st[2] == 't');
	}
	closedir(d);
	return all;
}

/* More READs than max_dest_rd_atomic at once (IBTA 9.7.5.1.3: the requester must not
 * exceed the responder's resources): the target is stopped while 64 READs queue up, so
 * it takes them in one batch. The fifth gets NAK Invalid Request and the QP goes to error,
 * which cancels the responses not yet sent to the 4 it had resources for (what of them
 * leaves is right and in order); nothing more is answered. */
static void read_flood_refused(int qi, uint32_t nreq)
{
	struct qpinfo *q = &A.qp[qi];
	const struct mrinfo *ro = &A.mr[HR_RO];
	struct flood f = { 4, MTU, 1, q->epsn, q->msn, 0, -1, false, "READs within the grant" };
	struct urnic_ctrfile s;
	uint32_t naks = 0, others = 0;

	snap(&s);
	REQUIRE(kill(A.pid, SIGSTOP) == 0, "SIGSTOP: %s", strerror(errno));
	for (int i = 0; i < 2000 && !target_stopped(); i++)
		sleep_ms(1);
	REQUIRE(target_stopped(), "the target did not stop within 2 s");
	for (uint32_t k = 0; k < nreq; k++)
		send_read(qi, urnic_psn_add(f.e, k), ro->addr + (k * 64u) % (ro->len - MTU),
			  ro->rkey, MTU);
	REQUIRE(kill(A.pid, SIGCONT) == 0, "SIGCONT: %s", strerror(errno));
	settle();
	while (get_reply(300)) {
		const struct urnic_pkt *p = &A.r.pkt;

		if (A.r.decoded && p->bth.opcode == URNIC_OP_RC_ACKNOWLEDGE) {
			EXPECT(A.r.icrc_ok && p->bth.psn == urnic_psn_add(f.e, 4) &&
				       p->aeth.syndrome == (URNIC_AETH_NAK | URNIC_NAK_INVALID_REQ),
			       "flood: expected NAK invalid request psn 0x%06x, got psn 0x%06x "
			       "syndrome 0x%02x",
			       urnic_psn_add(f.e, 4), p->bth.psn, p->aeth.syndrome);
			naks++;
		} else if (A.r.decoded &&
			   (urnic_opcode_info(p->bth.opcode)->flags & URNIC_OPF_READ)) {
			flood_response(&f);
		} else {
			others++;
		}
	}
	say("%u READs at once: %u answered, %u NAK, %u other packets", nreq, f.got, naks, others);
	EXPECT(f.got <= 4, "%u response packets for the 4 granted READs", f.got);
	EXPECT(naks == 1 && others == 0, "expected one NAK and nothing else, got %u and %u", naks,
	       others);
	EXPECT_CTR(s, "refused_rd_atomic", 1);
	EXPECT_CTR(s, "nak_inv_req_sent", 1);
	expect_qp_state(qi, "ERR");
}

void sc_read_flood(void)
{
	struct topts o = topts_default(2);
	long rss0, rss1, rss2;

	start_target(&o);
	/* READs back to back, as many as the target grants (max_dest_rd_atomic 4). */
	read_flood(0, 4, 512, &rss0); /* warm-up */
	read_flood(0, 4, MTU, &rss1);
	read_flood(0, 4, 4 * MTU, &rss1);
	read_flood_refused(0, 64);
	rss2 = target_rss_kb();
	say("target RSS %ld kB after the warm-up, %ld kB after the floods", rss0, rss2);
	EXPECT(rss0 > 0 && rss2 - rss0 <= 1024, "the target's RSS grew by %ld kB", rss2 - rss0);
	(void)rss1;
	probe(1);
}
