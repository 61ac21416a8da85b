/* SPDX-License-Identifier: MIT */
/*
 * sequence.c - hostile scenarios: packets out of sequence. For the responder, opcode
 * sequence errors (IBTA 9.7.5.1.4), PSNs ahead and behind (9.7.5.1.1, 9.7.5.1.2) and
 * duplicate READs (9.7.5.1.2); for the completer, responses to nothing the target asked
 * for (9.7.5.2). Out of scope: malformed packets (validation.c), what one request may
 * access (requests.c), volume (flood.c).
 */
#include <string.h>

#include "attacker.h"

/* Opcode sequence errors (IBTA 9.7.5.1.4, class C): a MIDDLE or LAST without FIRST, a
 * new message inside a SEND: NAK invalid request (0x61) naming the packet's PSN, the QP
 * goes to error and drops what follows; nothing else is touched. */
void sc_op_sequence(void)
{
	struct topts o = topts_default(6);
	struct urnic_ctrfile s;
	uint8_t data[MTU];
	struct urnic_pkt h;
	struct wcx w[64];
	int n, per_qp[6] = { 0 };

	start_target(&o);
	fill(data, MTU, 7);
	snap(&s);

	h = hdr(0, URNIC_OP_RC_SEND_MIDDLE, A.qp[0].epsn);
	xmit(&h, data, MTU, 0);
	expect_nak(0, A.qp[0].epsn, 0x61, "SEND_MIDDLE without SEND_FIRST");
	h = hdr(1, URNIC_OP_RC_SEND_LAST, A.qp[1].epsn);
	xmit(&h, data, 16, 0);
	expect_nak(1, A.qp[1].epsn, 0x61, "SEND_LAST without SEND_FIRST");
	h = hdr(2, URNIC_OP_RC_RDMA_WRITE_MIDDLE, A.qp[2].epsn);
	xmit(&h, data, MTU, 0);
	expect_nak(2, A.qp[2].epsn, 0x61, "RDMA_WRITE_MIDDLE without RDMA_WRITE_FIRST");
	h = hdr(3, URNIC_OP_RC_RDMA_WRITE_LAST, A.qp[3].epsn);
	xmit(&h, data, 16, 0);
	expect_nak(3, A.qp[3].epsn, 0x61, "RDMA_WRITE_LAST without RDMA_WRITE_FIRST");

	/* A SEND_FIRST is fine (its bytes land in the first receive buffer) ... */
	h = hdr(4, URNIC_OP_RC_SEND_FIRST, A.qp[4].epsn);
	h.bth.ackreq = false;
	xmit(&h, data, MTU, 0);
	expect_silence("SEND_FIRST without AckReq");
	memcpy(A.shadow[HR_RECV] + A.qp[4].rq_off[0], data, MTU);
	/* ... but a WRITE before its LAST is not. */
	h = hdr(4, URNIC_OP_RC_RDMA_WRITE_ONLY, urnic_psn_add(A.qp[4].epsn, 1));
	h.reth = (struct urnic_reth){ A.mr[HR_RW].addr, A.mr[HR_RW].rkey, 16 };
	xmit(&h, data, 16, 0);
	expect_nak(4, urnic_psn_add(A.qp[4].epsn, 1), 0x61, "RDMA_WRITE_ONLY inside a SEND");
	settle();
	EXPECT_CTR(s, "nak_inv_req_sent", 5);
	for (int i = 0; i < 5; i++)
		expect_qp_state(i, "ERR");

	/* A QP in error drops even a valid request (IBTA 10.3.1 table 90). */
	snap(&s);
	h = write32(0, 64, data);
	xmit(&h, data, 32, 0);
	expect_silence("a valid WRITE to a QP in error");
	EXPECT_CTR(s, "drop_qp_error", 1);

	/* Every receive of the failed QPs completes once, none successfully. */
	n = target_wcs(w, 64);
	for (int k = 0; k < n; k++) {
		EXPECT(w[k].qp >= 0 && w[k].qp < 5, "a completion on QP %d", w[k].qp);
		EXPECT(w[k].status != 0, "QP %d receive 0x%llx completed successfully", w[k].qp,
		       w[k].wr_id);
		if (w[k].qp >= 0 && w[k].qp < 6)
			per_qp[w[k].qp]++;
	}
	for (int i = 0; i < 5; i++)
		EXPECT(per_qp[i] == o.recv, "QP %d: %d receive completions, expected %d", i,
		       per_qp[i], o.recv);
	probe(5);
}

/* PSN checks (IBTA 9.7.5.1.1/9.7.5.1.2): a request ahead of the expected PSN draws ONE
 * NAK sequence error (0x60) naming the expected PSN, then silence until the expected
 * PSN comes; duplicates (behind) are re-ACKed with the last acknowledged PSN and never
 * executed again (C9-105); a duplicate READ/atomic without a resource is dropped. */
void sc_psn_window(void)
{
	struct topts o = topts_default(2);
	struct qpinfo *q;
	struct urnic_ctrfile s;
	uint8_t data[MTU];
	struct urnic_pkt h;
	uint32_t e, w1;

	start_target(&o);
	q = &A.qp[0];
	e = q->epsn;
	fill(data, MTU, 3);
	snap(&s);
	h = write32(0, 0, data);
	h.bth.psn = urnic_psn_add(e, 0x400000);
	xmit(&h, data, 32, 0);
	expect_nak(0, e, 0x60, "a WRITE 2^22 PSNs ahead");
	settle();
	EXPECT_CTR(s, "nak_seq_sent", 1);

	snap(&s);
	h.bth.psn = urnic_psn_add(e, 1);
	xmit(&h, data, 32, 0);
	h.bth.psn = urnic_psn_add(e, 2);
	xmit(&h, data, 32, 0);
	h.bth.psn = urnic_psn_add(e, 0x7fffff); /* the farthest PSN still "ahead" */
	xmit(&h, data, 32, 0);
	send_read(0, urnic_psn_add(e, 5), A.mr[HR_RO].addr, A.mr[HR_RO].rkey, 64);
	h = hdr(0, URNIC_OP_RC_SEND_ONLY, urnic_psn_add(e, 3));
	xmit(&h, data, 16, 0);
	h = hdr(0, URNIC_OP_RC_FETCH_ADD, urnic_psn_add(e, 7));
	h.atmeth = (struct urnic_atmeth){ A.mr[HR_ATOMIC].addr, A.mr[HR_ATOMIC].rkey, 1, 0 };
	xmit(&h, NULL, 0, 0);
	h = hdr(0, URNIC_OP_RC_RDMA_WRITE_FIRST, urnic_psn_add(e, 9));
	h.reth = (struct urnic_reth){ A.mr[HR_RW].addr, A.mr[HR_RW].rkey, 2 * MTU };
	xmit(&h, data, MTU, 0);
	h = hdr(0, URNIC_OP_RC_SEND_MIDDLE, urnic_psn_add(e, 0x100));
	xmit(&h, data, MTU, 0);
	expect_silent_drop(&s, "requests ahead after the NAK");
	EXPECT_CTR(s, "drop_psn_after_nak", 8);
	EXPECT_CTR(s, "nak_seq_sent", 0);

	/* The expected PSN is served and re-arms the NAK. */
	w1 = q->epsn;
	good_write(0, 256, 16, 1, "the WRITE at the expected PSN");
	snap(&s);
	h = write32(0, 0, data);
	h.bth.psn = urnic_psn_add(q->epsn, 3);
	xmit(&h, data, 32, 0);
	expect_nak(0, q->epsn, 0x60, "a WRITE 3 PSNs ahead, after the gap closed");
	settle();
	EXPECT_CTR(s, "nak_seq_sent", 1);
	good_write(0, 512, 16, 2, "the WRITE at the expected PSN");

	/* Duplicates: re-ACKed with the last acknowledged PSN, never executed again. */
	snap(&s);
	h = write32(0, 1024, data);
	h.bth.psn = urnic_psn_add(q->epsn, 0x1000000 - 0x400000);
	xmit(&h, data, 32, 0);
	expect_reply(0, URNIC_OP_RC_ACKNOWLEDGE, urnic_psn_add(q->epsn, URNIC_PSN_MASK), -1, q->msn,
		     "a duplicate WRITE 2^22 PSNs behind");
	h = write32(0, 256, data);
	h.bth.psn = w1;
	h.reth.len = 16;
	xmit(&h, data + 100, 16, 0);
	expect_reply(0, URNIC_OP_RC_ACKNOWLEDGE, urnic_psn_add(q->epsn, URNIC_PSN_MASK), -1, q->msn,
		     "a duplicate of the first WRITE with other bytes");
	h = hdr(0, URNIC_OP_RC_SEND_ONLY, urnic_psn_add(q->epsn, URNIC_PSN_MASK));
	xmit(&h, data, 16, 0);
	expect_reply(0, URNIC_OP_RC_ACKNOWLEDGE, urnic_psn_add(q->epsn, URNIC_PSN_MASK), -1, q->msn,
		     "a duplicate SEND");
	h = hdr(0, URNIC_OP_RC_FETCH_ADD, w1);
	h.atmeth = (struct urnic_atmeth){ A.mr[HR_ATOMIC].addr, A.mr[HR_ATOMIC].rkey, 1, 0 };
	xmit(&h, NULL, 0, 0);
	expect_silence("a duplicate FETCH_ADD at the PSN of a WRITE");
	EXPECT_CTR(s, "dup_request", 4);
	EXPECT_CTR(s, "drop_dup_no_resource", 1);
	EXPECT_CTR(s, "atomic_executed", 0);
	EXPECT_CTR(s, "rnr_nak_sent", 0);
	probe(0);
	probe(1);
	{
		struct wcx w[8];
		int n = target_wcs(w, 8);

		EXPECT(n == 0, "%d receive completions after duplicates; expected none", n);
	}
}

/* Duplicate READs (IBTA 9.7.5.1.2; rxe-siw-perftest.md §2.11): one whose range lies in
 * the original READ is replayed from its PSN; one that grew, starts before, names
 * another R_Key, or has no READ at its PSN is dropped silently (class D). */
void sc_duplicate_read(void)
{
	struct topts o = topts_default(2);
	const struct mrinfo *ro;
	struct urnic_ctrfile s;
	struct qpinfo *q;
	uint32_t p, msn, wpsn;

	start_target(&o);
	ro = &A.mr[HR_RO];
	q = &A.qp[0];
	p = q->epsn;
	good_read(0, 1024, 2 * MTU, "READ of 2 KiB");
	msn = q->msn;
	wpsn = q->epsn;
	good_write(0, 0, 16, 5, "a WRITE after the READ");

	snap(&s);
	send_read(0, p, ro->addr + 1024, ro->rkey, 4 * MTU);
	send_read(0, p, ro->addr, ro->rkey, 2 * MTU);
	send_read(0, p, ro->addr + 1024, A.mr[HR_RW].rkey, 2 * MTU);
	send_read(0, wpsn, ro->addr + 1024, ro->rkey, 2 * MTU);
	expect_silent_drop(&s, "duplicate READs that grew, start before, name another R_Key, or "
			       "have no READ at their PSN");
	EXPECT_CTR(s, "drop_dup_no_resource", 4);
	EXPECT_CTR(s, "dup_request", 4);

	send_read(0, p, ro->addr + 1024, ro->rkey, 2 * MTU);
	expect_read_responses(0, p, 1024, 2 * MTU, msn, false, "the same READ again");
	send_read(0, urnic_psn_add(p, 1), ro->addr + 1024 + MTU, ro->rkey, MTU);
	expect_read_responses(0, urnic_psn_add(p, 1), 1024 + MTU, MTU, msn, true,
			      "its second half from its second PSN");
	settle();
	EXPECT_CTR(s, "dup_request", 6);
	probe(0);
	probe(1);
}

/* The next request from the target on QP qi must be `opcode` with psn; retransmissions
 * of earlier PSNs are skipped. */
static bool expect_request(int qi, uint8_t opcode, uint32_t psn, const char *what)
{
	char got[160];

	for (;;) {
		const struct urnic_pkt *p = &A.r.pkt;

		if (!get_reply(REPLY_MS)) {
			fail_at(__LINE__, "request", "%s: nothing from the target", what);
			return false;
		}
		if (A.r.decoded && urnic_psn_before(p->bth.psn, psn) &&
		    (urnic_opcode_info(p->bth.opcode)->flags & URNIC_OPF_REQ))
			continue;
		describe(got, sizeof(got));
		if (!A.r.decoded || !A.r.icrc_ok || p->bth.opcode != opcode || p->bth.psn != psn ||
		    p->bth.dqpn != A.qp[qi].dest || !p->bth.ackreq) {
			fail_at(__LINE__, "request", "%s: got %s; expected %s psn 0x%06x", what,
				got, opname(opcode), psn);
			return false;
		}
		return true;
	}
}

static struct urnic_pkt response(int qi, uint8_t opcode, uint32_t psn, uint8_t syndrome,
				 uint32_t msn)
{
	struct urnic_pkt h = hdr(qi, opcode, psn);

	h.bth.ackreq = false;
	h.aeth = (struct urnic_aeth){ syndrome, msn };
	return h;
}

/* Waits (up to 2 s) for the target to poll n completions into w. */
static int wait_wcs(struct wcx *w, int n)
{
	uint64_t end = now_ms() + 2000;
	int got = 0;

	while (got < n && now_ms() < end) {
		got += target_wcs(w + got, n - got);
		if (got < n)
			sleep_ms(5);
	}
	return got;
}

/* The completer (IBTA 9.7.5.2): responses to nothing the target asked for - ACKs outside
 * its outstanding PSNs, READ responses and atomic ACKs to a SEND, a reserved AETH
 * syndrome - are dropped and write nothing; the real ACK then completes the SEND once.
 * With nothing outstanding, NAKs naming the last acknowledged PSN are ignored, as rxe's
 * completer ignores responses when no WQE is outstanding: the QP stays in RTS and its
 * next SEND works. */
void sc_completer(void)
{
	struct topts o = topts_default(2);
	struct urnic_ctrfile s;
	struct qpinfo *q;
	uint8_t junk[MTU];
	struct urnic_pkt h;
	struct wcx w[8];
	int n;

	start_target(&o);
	q = &A.qp[0];
	fill(junk, MTU, 0x77);
	tcmd("send 0 100 %d", 0x5e0d);
	if (expect_request(0, URNIC_OP_RC_SEND_ONLY, q->sq_psn, "the target's SEND"))
		EXPECT(A.r.pkt.payload_bytes == 100 &&
			       memcmp(A.r.pkt.payload, A.shadow[HR_NONE], 100) == 0,
		       "the target's SEND does not carry its buffer");
	snap(&s);
	h = response(0, URNIC_OP_RC_ACKNOWLEDGE, urnic_psn_add(q->sq_psn, 1000), 0x1f, 1);
	xmit(&h, NULL, 0, 0);
	h = response(0, URNIC_OP_RC_ACKNOWLEDGE, urnic_psn_add(q->sq_psn, 0x1000000 - 5), 0x1f, 1);
	xmit(&h, NULL, 0, 0);
	h = response(0, URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY, q->sq_psn, 0x1f, 1);
	xmit(&h, junk, 8, 0);
	h = response(0, URNIC_OP_RC_ATOMIC_ACKNOWLEDGE, q->sq_psn, 0x1f, 1);
	h.atmack_orig = 0xdeadbeefull;
	xmit(&h, NULL, 0, 0);
	h = response(0, URNIC_OP_RC_RDMA_READ_RESPONSE_MIDDLE, q->sq_psn, 0, 0);
	xmit(&h, junk, MTU, 0);
	h = response(0, URNIC_OP_RC_ACKNOWLEDGE, q->sq_psn, 0x40, 1); /* reserved type */
	xmit(&h, NULL, 0, 0);
	expect_silence("responses to nothing the target asked for");
	EXPECT_CTR(s, "drop_stale_response", 5);
	EXPECT_CTR(s, "drop_bad_header", 1);
	n = target_wcs(w, 8);
	EXPECT(n == 0, "%d completions before the real ACK", n);
	expect_qp_state(0, "RTS");

	h = response(0, URNIC_OP_RC_ACKNOWLEDGE, q->sq_psn, 0x1f, 1);
	xmit(&h, NULL, 0, 0);
	n = wait_wcs(w, 1);
	EXPECT(n == 1 && w[0].wr_id == 0x5e0d && w[0].status == 0 && w[0].opcode == 0,
	       "the SEND did not complete successfully once (%d completions, status %d)", n,
	       n ? w[0].status : -1);

	/* Nothing outstanding now: NAKs naming the last acknowledged PSN. */
	snap(&s);
	for (int k = 0; k < 10; k++) {
		h = response(0, URNIC_OP_RC_ACKNOWLEDGE, q->sq_psn, 0x60, 1);
		xmit(&h, NULL, 0, 0);
		settle();
	}
	expect_silence("NAKs with nothing outstanding");
	expect_qp_state(0, "RTS");
	n = target_wcs(w, 8);
	EXPECT(n == 0, "%d completions after NAKs with nothing outstanding (first status %d)", n,
	       n ? w[0].status : -1);

	tcmd("send 0 64 %d", 0x5e0e);
	if (expect_request(0, URNIC_OP_RC_SEND_ONLY, urnic_psn_add(q->sq_psn, 1),
			   "the target's next SEND")) {
		h = response(0, URNIC_OP_RC_ACKNOWLEDGE, urnic_psn_add(q->sq_psn, 1), 0x1f, 2);
		xmit(&h, NULL, 0, 0);
	}
	n = wait_wcs(w, 1);
	EXPECT(n == 1 && w[0].wr_id == 0x5e0e && w[0].status == 0,
	       "the next SEND did not complete successfully (%d completions, status %d)", n,
	       n ? w[0].status : -1);
	probe(1);
}
