/* SPDX-License-Identifier: MIT */
/*
 * requests.c - hostile scenarios: well-formed requests at the expected PSN that the
 * responder must refuse with a NAK, its QP then in error and memory untouched (IBTA
 * 9.7.5.1.6/9.7.5.1.7, class C): R_Keys, bounds and rights; lengths; misaligned atomics
 * (9.4.5) next to an aligned one executed once; FLUSH and ATOMIC_WRITE (Annex A19).
 * Out of scope: PSNs, opcode sequence and duplicates (sequence.c), floods (flood.c).
 */
#include <stdint.h>
#include <string.h>

#include "attacker.h"

struct acase {
	const char *what;
	uint8_t op;
	uint64_t va;
	uint32_t rkey;
	uint32_t len; /* RETH length */
	uint32_t payload;
};

/* R_Key, bounds and rights (IBTA 9.7.5.1.7, class C; rxe-siw-perftest.md §1.4): NAK remote
 * access error (0x62) with the request's PSN, the QP in error, and not one byte of any
 * region or guard changed, not even the in-range part of a WRITE_FIRST. One QP per
 * case; the last QP checks the target still serves. */
void sc_remote_access(void)
{
	const struct mrinfo *rw, *ro, *at, *no, *rc;
	struct acase c[20];
	struct urnic_ctrfile s;
	struct topts o;
	uint8_t data[MTU];
	int n = 0;

	/* The region addresses are the target's: start it first, with enough QPs. */
	o = topts_default(18);
	o.recv = 0;
	start_target(&o);
	rw = &A.mr[HR_RW];
	ro = &A.mr[HR_RO];
	at = &A.mr[HR_ATOMIC];
	no = &A.mr[HR_NONE];
	rc = &A.mr[HR_RECV];
	c[n++] = (struct acase){ "WRITE with forged R_Key bits",
				 URNIC_OP_RC_RDMA_WRITE_ONLY,
				 rw->addr,
				 rw->rkey ^ 0x5a,
				 16,
				 16 };
	c[n++] = (struct acase){ "WRITE with the R_Key of no region",
				 URNIC_OP_RC_RDMA_WRITE_ONLY,
				 rw->addr,
				 0x00fffe00u | (rw->rkey & 0xff),
				 16,
				 16 };
	c[n++] = (struct acase){ "WRITE just below the region",
				 URNIC_OP_RC_RDMA_WRITE_ONLY,
				 rw->addr - 16,
				 rw->rkey,
				 16,
				 16 };
	c[n++] = (struct acase){ "WRITE just past the end",
				 URNIC_OP_RC_RDMA_WRITE_ONLY,
				 rw->addr + rw->len,
				 rw->rkey,
				 16,
				 16 };
	c[n++] = (struct acase){ "WRITE straddling the end",
				 URNIC_OP_RC_RDMA_WRITE_ONLY,
				 rw->addr + rw->len - 8,
				 rw->rkey,
				 16,
				 16 };
	c[n++] = (struct acase){ "WRITE_FIRST whose RETH length runs past the end",
				 URNIC_OP_RC_RDMA_WRITE_FIRST,
				 rw->addr + rw->len - MTU,
				 rw->rkey,
				 2 * MTU,
				 MTU };
	c[n++] = (struct acase){ "WRITE at an address that wraps 2^64",
				 URNIC_OP_RC_RDMA_WRITE_ONLY,
				 UINT64_MAX - 7,
				 rw->rkey,
				 16,
				 16 };
	c[n++] = (struct acase){ "WRITE to the read-only region",
				 URNIC_OP_RC_RDMA_WRITE_ONLY,
				 ro->addr,
				 ro->rkey,
				 16,
				 16 };
	c[n++] = (struct acase){ "WRITE to the region without remote rights",
				 URNIC_OP_RC_RDMA_WRITE_ONLY,
				 no->addr,
				 no->rkey,
				 16,
				 16 };
	c[n++] = (struct acase){ "WRITE to the receive buffers",
				 URNIC_OP_RC_RDMA_WRITE_ONLY,
				 rc->addr,
				 rc->rkey,
				 16,
				 16 };
	c[n++] = (struct acase){ "READ from the write-only region",
				 URNIC_OP_RC_RDMA_READ_REQUEST,
				 rw->addr,
				 rw->rkey,
				 64,
				 0 };
	c[n++] = (struct acase){ "READ running past the end of the read-only region",
				 URNIC_OP_RC_RDMA_READ_REQUEST,
				 ro->addr + 4096,
				 ro->rkey,
				 8192,
				 0 };
	c[n++] = (struct acase){ "READ from the region without remote rights",
				 URNIC_OP_RC_RDMA_READ_REQUEST,
				 no->addr,
				 no->rkey,
				 64,
				 0 };
	c[n++] = (struct acase){
		"READ with R_Key 0", URNIC_OP_RC_RDMA_READ_REQUEST, ro->addr, 0, 64, 0
	};
	c[n++] = (struct acase){ "FETCH_ADD on the write-only region",
				 URNIC_OP_RC_FETCH_ADD,
				 rw->addr,
				 rw->rkey,
				 0,
				 0 };
	c[n++] = (struct acase){ "CMP_SWAP with a forged R_Key",
				 URNIC_OP_RC_COMPARE_SWAP,
				 at->addr,
				 at->rkey ^ 1,
				 0,
				 0 };
	c[n++] = (struct acase){ "FETCH_ADD just past the end of the atomic region",
				 URNIC_OP_RC_FETCH_ADD,
				 at->addr + at->len,
				 at->rkey,
				 0,
				 0 };
	REQUIRE(n + 1 == o.qps, "%d cases need %d QPs", n, n + 1);

	fill(data, MTU, 9);
	snap(&s);
	for (int i = 0; i < n; i++) {
		struct urnic_pkt h = hdr(i, c[i].op, A.qp[i].epsn);
		uint32_t flags = urnic_opcode_info(c[i].op)->flags;

		if (flags & URNIC_OPF_ATOMIC)
			h.atmeth = (struct urnic_atmeth){ c[i].va, c[i].rkey, 0x1111, 0 };
		else
			h.reth = (struct urnic_reth){ c[i].va, c[i].rkey, c[i].len };
		xmit(&h, data, c[i].payload, 0);
		expect_nak(i, A.qp[i].epsn, 0x62, c[i].what);
	}
	settle();
	EXPECT_CTR(s, "nak_rem_access_sent", n);
	EXPECT_CTR(s, "nak_inv_req_sent", 0);
	EXPECT_CTR(s, "atomic_executed", 0);
	EXPECT_CTR(s, "read_resp_sent", 0);
	for (int i = 0; i < n; i++)
		expect_qp_state(i, "ERR");
	probe(n);
}

static uint64_t shadow_u64(int r, uint64_t off)
{
	uint64_t v;

	memcpy(&v, A.shadow[r] + off, 8);
	return v;
}

/* Atomics (IBTA 9.4.5): a target not 8-byte aligned is an invalid request (0x61) and
 * nothing executes; an aligned one executes once, and its duplicate returns the saved
 * original value without executing again (9.7.5.1.2). An aligned IOVA whose memory is
 * not 8-byte aligned (ibv_reg_mr_iova) is misaligned too: rxe checks the address it
 * would operate on (rxe_mr.c, rxe_mr_do_atomic_op) and NAKs 0x61; an 8-byte atomic on
 * an unaligned address is undefined in C, a split lock on x86, a fault elsewhere. */
void sc_misaligned_atomic(void)
{
	struct topts o = topts_default(5);
	const struct mrinfo *at;
	struct urnic_ctrfile s;
	struct urnic_pkt h;
	struct qpinfo *q;
	uint64_t old;
	uint32_t psn;

	start_target(&o);
	at = &A.mr[HR_ATOMIC];
	snap(&s);
	h = hdr(0, URNIC_OP_RC_FETCH_ADD, A.qp[0].epsn);
	h.atmeth = (struct urnic_atmeth){ at->addr + 4, at->rkey, 1, 0 };
	xmit(&h, NULL, 0, 0);
	expect_nak(0, A.qp[0].epsn, 0x61, "FETCH_ADD at +4");
	h = hdr(1, URNIC_OP_RC_COMPARE_SWAP, A.qp[1].epsn);
	h.atmeth = (struct urnic_atmeth){ at->addr + 1, at->rkey, 0x42, shadow_u64(HR_ATOMIC, 0) };
	xmit(&h, NULL, 0, 0);
	expect_nak(1, A.qp[1].epsn, 0x61, "CMP_SWAP at +1");
	settle();
	EXPECT_CTR(s, "nak_inv_req_sent", 2);
	EXPECT_CTR(s, "atomic_executed", 0);
	expect_qp_state(0, "ERR");
	expect_qp_state(1, "ERR");

	/* Aligned: executed once, replayed once. */
	q = &A.qp[2];
	psn = q->epsn;
	old = shadow_u64(HR_ATOMIC, 8);
	h = hdr(2, URNIC_OP_RC_FETCH_ADD, psn);
	h.atmeth = (struct urnic_atmeth){ at->addr + 8, at->rkey, 5, 0 };
	xmit(&h, NULL, 0, 0);
	q->msn++;
	if (expect_reply(2, URNIC_OP_RC_ATOMIC_ACKNOWLEDGE, psn, -1, q->msn, "FETCH_ADD at +8")) {
		uint64_t now = old + 5;

		EXPECT(A.r.pkt.atmack_orig == old, "FETCH_ADD returned %llx, the value was %llx",
		       (unsigned long long)A.r.pkt.atmack_orig, (unsigned long long)old);
		memcpy(A.shadow[HR_ATOMIC] + 8, &now, 8);
	}
	q->epsn = urnic_psn_add(q->epsn, 1);
	xmit(&h, NULL, 0, 0);
	if (expect_reply(2, URNIC_OP_RC_ATOMIC_ACKNOWLEDGE, psn, -1, q->msn,
			 "the duplicate FETCH_ADD"))
		EXPECT(A.r.pkt.atmack_orig == old,
		       "the duplicate returned %llx, not the saved %llx",
		       (unsigned long long)A.r.pkt.atmack_orig, (unsigned long long)old);
	settle();
	EXPECT_CTR(s, "atomic_executed", 1);

	/* Aligned IOVA, unaligned memory. */
	snap(&s);
	h = hdr(3, URNIC_OP_RC_FETCH_ADD, A.qp[3].epsn);
	h.atmeth = (struct urnic_atmeth){ A.mr[HR_ATOMIC_ODD].addr + 8, A.mr[HR_ATOMIC_ODD].rkey, 1,
					  0 };
	xmit(&h, NULL, 0, 0);
	expect_nak(3, A.qp[3].epsn, 0x61, "FETCH_ADD at an aligned IOVA over unaligned memory");
	settle();
	EXPECT_CTR(s, "atomic_executed", 0);
	probe(4);
}

/* Length errors (IBTA 9.7.5.1.6, class C): payload over the path MTU, a FIRST that is
 * not a full MTU, a RETH length over 2^31, a WRITE_ONLY whose payload is not its RETH
 * length, a WRITE_LAST carrying more than its RETH granted: NAK invalid request (0x61)
 * and not one byte placed beyond what was granted. */
void sc_length_errors(void)
{
	struct topts o = topts_default(8);
	const struct mrinfo *rw;
	struct urnic_ctrfile s;
	static uint8_t data[8192];
	struct urnic_pkt h;
	struct wcx w[64];
	int n;

	start_target(&o);
	rw = &A.mr[HR_RW];
	fill(data, sizeof(data), 11);
	snap(&s);

	h = hdr(0, URNIC_OP_RC_SEND_ONLY, A.qp[0].epsn);
	xmit(&h, data, MTU + 1, 0);
	expect_nak(0, A.qp[0].epsn, 0x61, "SEND_ONLY of MTU + 1 bytes");
	h = hdr(1, URNIC_OP_RC_RDMA_WRITE_ONLY, A.qp[1].epsn);
	h.reth = (struct urnic_reth){ rw->addr, rw->rkey, MTU + 4 };
	xmit(&h, data, MTU + 4, 0);
	expect_nak(1, A.qp[1].epsn, 0x61, "RDMA_WRITE_ONLY of MTU + 4 bytes");
	h = hdr(2, URNIC_OP_RC_SEND_FIRST, A.qp[2].epsn);
	xmit(&h, data, 1000, 0);
	expect_nak(2, A.qp[2].epsn, 0x61, "SEND_FIRST of less than the MTU");
	h = hdr(3, URNIC_OP_RC_SEND_ONLY, A.qp[3].epsn);
	xmit(&h, data, 8000, 0);
	expect_nak(3, A.qp[3].epsn, 0x61, "SEND_ONLY of 8000 bytes");
	h = hdr(4, URNIC_OP_RC_RDMA_WRITE_FIRST, A.qp[4].epsn);
	h.reth = (struct urnic_reth){ rw->addr, rw->rkey, 0xffff0000u };
	xmit(&h, data, MTU, 0);
	expect_nak(4, A.qp[4].epsn, 0x61, "RDMA_WRITE_FIRST with a RETH length over 2^31");
	h = hdr(5, URNIC_OP_RC_RDMA_WRITE_ONLY, A.qp[5].epsn);
	h.reth = (struct urnic_reth){ rw->addr + rw->len - 8, rw->rkey, 8 };
	xmit(&h, data, 16, 0);
	expect_nak(5, A.qp[5].epsn, 0x61, "RDMA_WRITE_ONLY of 16 bytes with a RETH length of 8");

	/* The first MTU of a 1124-byte WRITE at the very end of the region lands ... */
	h = hdr(6, URNIC_OP_RC_RDMA_WRITE_FIRST, A.qp[6].epsn);
	h.bth.ackreq = false;
	h.reth = (struct urnic_reth){ rw->addr + rw->len - (MTU + 100), rw->rkey, MTU + 100 };
	xmit(&h, data, MTU, 0);
	expect_silence("RDMA_WRITE_FIRST without AckReq");
	memcpy(A.shadow[HR_RW] + rw->len - (MTU + 100), data, MTU);
	/* ... its LAST with a full MTU instead of the 100 bytes left does not. */
	h = hdr(6, URNIC_OP_RC_RDMA_WRITE_LAST, urnic_psn_add(A.qp[6].epsn, 1));
	xmit(&h, data + MTU, MTU, 0);
	expect_nak(6, urnic_psn_add(A.qp[6].epsn, 1), 0x61,
		   "RDMA_WRITE_LAST carrying 924 bytes more than the RETH granted");
	settle();
	EXPECT_CTR(s, "nak_inv_req_sent", 7);
	for (int i = 0; i < 7; i++)
		expect_qp_state(i, "ERR");
	n = target_wcs(w, 64);
	for (int k = 0; k < n; k++)
		EXPECT(w[k].status != 0, "QP %d receive 0x%llx completed successfully", w[k].qp,
		       w[k].wr_id);

	/* Zero-length READ and WRITE check no R_Key (C9-88) and touch nothing. */
	h = hdr(7, URNIC_OP_RC_RDMA_READ_REQUEST, A.qp[7].epsn);
	h.reth = (struct urnic_reth){ 0xdeadbeef000ull, 0x7777, 0 };
	xmit(&h, NULL, 0, 0);
	A.qp[7].msn++;
	if (expect_reply(7, URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY, A.qp[7].epsn, -1, A.qp[7].msn,
			 "a zero-length READ with a made-up R_Key"))
		EXPECT(A.r.pkt.payload_bytes == 0, "the zero-length READ returned %u bytes",
		       A.r.pkt.payload_bytes);
	A.qp[7].epsn = urnic_psn_add(A.qp[7].epsn, 1);
	h = hdr(7, URNIC_OP_RC_RDMA_WRITE_ONLY, A.qp[7].epsn);
	h.reth = (struct urnic_reth){ 0xdeadbeef000ull, 0x7777, 0 };
	xmit(&h, NULL, 0, 0);
	A.qp[7].msn++;
	expect_reply(7, URNIC_OP_RC_ACKNOWLEDGE, A.qp[7].epsn, -1, A.qp[7].msn,
		     "a zero-length WRITE with a made-up R_Key");
	A.qp[7].epsn = urnic_psn_add(A.qp[7].epsn, 1);
	probe(7);
}

/* FLUSH and ATOMIC_WRITE (IBTA 1.5, Annex A19). The target's QPs were not given the
 * flush rights (rxe: IB_ACCESS_FLUSH_*), so a FLUSH is an invalid request (0x61, class
 * C), whatever its R_Key. An ATOMIC_WRITE is either not supported (0x61) or performed
 * (an ACK, and its 8 bytes in memory); an ACK for bytes that never land is wrong. */
void sc_unsupported_opcodes(void)
{
	struct topts o = topts_default(4);
	const struct mrinfo *rw;
	struct urnic_pkt h;
	uint8_t data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	char got[160];

	start_target(&o);
	rw = &A.mr[HR_RW];
	h = hdr(0, URNIC_OP_RC_ATOMIC_WRITE, A.qp[0].epsn);
	h.reth = (struct urnic_reth){ rw->addr + 64, rw->rkey, 8 };
	xmit(&h, data, 8, 0);
	if (!get_reply(REPLY_MS)) {
		fail_at(__LINE__, "reply", "ATOMIC_WRITE: no reply");
	} else if (A.r.pkt.bth.opcode == URNIC_OP_RC_ACKNOWLEDGE &&
		   A.r.pkt.aeth.syndrome == (URNIC_AETH_NAK | URNIC_NAK_INVALID_REQ)) {
		expect_qp_state(0, "ERR"); /* not supported */
	} else {
		describe(got, sizeof(got));
		tcmd("read rw 64 8");
		if (A.nans == 1 && strcmp(A.ans[0], "data 0102030405060708") == 0)
			memcpy(A.shadow[HR_RW] + 64, data, 8); /* supported and performed */
		else
			fail_at(__LINE__, "ATOMIC_WRITE",
				"answered with %s, but its 8 bytes did not land (%s); expected NAK "
				"invalid request (0x61) if not supported",
				got, A.nans ? A.ans[0] : "");
	}
	h = hdr(1, URNIC_OP_RC_FLUSH, A.qp[1].epsn);
	h.feth = 1; /* global visibility */
	h.reth = (struct urnic_reth){ rw->addr, rw->rkey ^ 0x5a, 64 };
	xmit(&h, NULL, 0, 0);
	expect_nak(1, A.qp[1].epsn, 0x61, "FLUSH with a forged R_Key");
	h = hdr(2, URNIC_OP_RC_FLUSH, A.qp[2].epsn);
	h.feth = 1;
	h.reth = (struct urnic_reth){ rw->addr, rw->rkey, 64 };
	xmit(&h, NULL, 0, 0);
	expect_nak(2, A.qp[2].epsn, 0x61, "FLUSH on a QP without flush rights");
	settle();
	expect_qp_state(1, "ERR");
	expect_qp_state(2, "ERR");
	probe(3);
}
