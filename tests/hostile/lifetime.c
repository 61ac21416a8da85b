/* SPDX-License-Identifier: MIT */
/*
 * lifetime.c - hostile scenarios: grants that end while the peer is using them. A
 * region deregistered or reregistered between the FIRST packet of an RDMA WRITE and its
 * MIDDLE/LAST (IBTA 10.6.7 and 9.7.5.1.7: the R_Key is checked for every packet that
 * touches memory, so the change takes effect inside the message), on RC and on UC; a
 * type 2 window whose QP was destroyed (o10-37.2.36: it serves that QP only), reached
 * through a new QP. Out of scope: keys a peer guesses (unreliable.c).
 */
#include <stdio.h>
#include <string.h>

#include "attacker.h"

enum { TORN_OFF = 1024, TORN_PKTS = 3 };

/* The FIRST of a 3-packet RDMA WRITE to region r at TORN_OFF on QP qi, then `cmd` on
 * the target (dereg or rereg of r), then its MIDDLE and LAST. The FIRST was granted
 * and lands; nothing after it may. RC: the MIDDLE gets NAK remote access error (0x62)
 * with its own PSN and the QP goes to error, so the LAST is dropped; UC: both are
 * dropped without a word (IBTA 9.8). */
static void torn_write(int qi, int r, const char *cmd, bool uc)
{
	struct qpinfo *q = &A.qp[qi];
	static uint8_t data[TORN_PKTS * MTU];
	uint32_t psn = q->epsn;
	struct urnic_pkt h;
	char what[96];

	fill(data, sizeof(data), 0x40 + (uint32_t)qi);
	h = hdr(qi, uc ? URNIC_OP_UC_RDMA_WRITE_FIRST : URNIC_OP_RC_RDMA_WRITE_FIRST, psn);
	h.bth.ackreq = false;
	h.reth = (struct urnic_reth){ A.mr[r].addr + TORN_OFF, A.mr[r].rkey, sizeof(data) };
	xmit(&h, data, MTU, 0);
	snprintf(what, sizeof(what), "the FIRST packet of a WRITE to region %s", A.rname[r]);
	expect_silence(what);
	memcpy(A.shadow[r] + TORN_OFF, data, MTU);

	tcmd("%s %s", cmd, A.rname[r]);
	if (strcmp(cmd, "rereg") == 0 && A.nans == 1)
		say("region %s reregistered with the same access: %s (was rkey 0x%x)", A.rname[r],
		    A.ans[0], A.mr[r].rkey);

	h = hdr(qi, uc ? URNIC_OP_UC_RDMA_WRITE_MIDDLE : URNIC_OP_RC_RDMA_WRITE_MIDDLE,
		urnic_psn_add(psn, 1));
	h.bth.ackreq = false;
	xmit(&h, data + MTU, MTU, 0);
	snprintf(what, sizeof(what), "the MIDDLE after %s %s", cmd, A.rname[r]);
	if (uc)
		expect_silence(what);
	else
		expect_nak(qi, urnic_psn_add(psn, 1), 0x62, what);

	h = hdr(qi, uc ? URNIC_OP_UC_RDMA_WRITE_LAST : URNIC_OP_RC_RDMA_WRITE_LAST,
		urnic_psn_add(psn, 2));
	h.bth.ackreq = !uc;
	xmit(&h, data + 2 * MTU, MTU, 0);
	snprintf(what, sizeof(what), "the LAST after %s %s", cmd, A.rname[r]);
	expect_silence(what);
	q->epsn = urnic_psn_add(psn, TORN_PKTS);
}

/* RC (IBTA 9.7.5.1.7, class C): QP 0 has its region deregistered under a WRITE, QP 1
 * its region reregistered (IBV_REREG_MR_CHANGE_ACCESS, the same access: the key still
 * resolves, but to another grant than the FIRST's). QP 2 checks the target serves. */
void sc_write_after_dereg(void)
{
	struct topts o = topts_default(3);
	struct urnic_ctrfile s;
	int gone, changed;

	o.recv = 0;
	start_target(&o);
	gone = add_region("gone", 8192, "wk");
	changed = add_region("changed", 8192, "wk");
	snap(&s);
	torn_write(0, gone, "dereg", false);
	torn_write(1, changed, "rereg", false);
	settle();
	EXPECT_CTR(s, "write_key_revoked", 2);
	EXPECT_CTR(s, "nak_rem_access_sent", 2);
	EXPECT_CTR(s, "drop_qp_error", 2);
	expect_qp_state(0, "ERR");
	expect_qp_state(1, "ERR");
	probe(2);
}

/* UC (IBTA 9.8: no NAK): the same two cases on UC QPs 1 and 2, in silence. The MIDDLE
 * is refused (write_key_revoked, drop_uc_invalid), the LAST dropped as the rest of a
 * broken message (drop_uc_seq); the QP stays in RTS and takes the next good WRITE. */
void sc_uc_write_after_dereg(void)
{
	struct topts o = topts_default(3);
	struct urnic_ctrfile s;
	int gone, changed;

	o.recv = 0;
	o.uc = 2;
	start_target(&o);
	gone = add_region("gone", 8192, "wk");
	changed = add_region("changed", 8192, "wk");
	snap(&s);
	torn_write(1, gone, "dereg", true);
	torn_write(2, changed, "rereg", true);
	settle();
	EXPECT_CTR(s, "write_key_revoked", 2);
	EXPECT_CTR(s, "drop_uc_invalid", 2);
	EXPECT_CTR(s, "drop_uc_seq", 2);
	EXPECT_CTR(s, "tx_packets", 0);
	expect_qp_state(1, "RTS");
	expect_qp_state(2, "RTS");
	good_uc_write(1, HR_RW, 512, 64, 1, 0x345678, "a WRITE on UC QP 1 afterwards");
	good_uc_write(2, HR_RW, 1024, 64, 2, 0x000001, "a WRITE on UC QP 2 afterwards");
	probe(0);
}

/* A type 2 window bound through QP 0 (type 2B, IBTA 10.6.7: it serves QP 0 only),
 * used by a WRITE; QP 0 destroyed. The application then makes and closes connections:
 * no new QP may carry QP 0's number (a peer would reach it, and the window with it), and
 * the window must validate nothing on any QP: a WRITE through it on a new QP gets NAK
 * remote access error (0x62) and writes nothing. */
void sc_window_after_qp_destroy(void)
{
	enum { CYCLES = 300 };
	struct topts o = topts_default(2);
	struct urnic_ctrfile s;
	unsigned long long maddr = 0, mlen = 0;
	unsigned mkey = 0;
	uint32_t old_qpn;
	uint8_t data[64];
	struct urnic_pkt h;
	int r, k, again = 0;

	o.recv = 0;
	start_target(&o);
	r = add_region("windowed", 4096, "wb");
	tcmd("mw_bind 0 windowed 1024 2048");
	REQUIRE(A.nans == 1 && sscanf(A.ans[0], "mw rkey %x addr %llx len %llu", &mkey, &maddr,
				      &mlen) == 3,
		"mw_bind: '%s'", A.nans ? A.ans[0] : "");
	say("window rkey 0x%x over region windowed at 1024..3071, bound through QP 0 (qpn 0x%x)",
	    mkey, A.qp[0].qpn);

	/* Through the window, on the QP it was bound through: granted. */
	fill(data, sizeof(data), 0x77);
	h = hdr(0, URNIC_OP_RC_RDMA_WRITE_ONLY, A.qp[0].epsn);
	h.reth = (struct urnic_reth){ maddr, mkey, sizeof(data) };
	xmit(&h, data, sizeof(data), 0);
	A.qp[0].msn++;
	if (expect_reply(0, URNIC_OP_RC_ACKNOWLEDGE, A.qp[0].epsn, -1, A.qp[0].msn,
			 "a WRITE through the window on its QP"))
		memcpy(A.shadow[r] + 1024, data, sizeof(data));
	A.qp[0].epsn = urnic_psn_add(A.qp[0].epsn, 1);

	old_qpn = A.qp[0].qpn;
	tcmd("destroy 0");
	/* A destroyed QP may still send a parting ACK for what it took in (IBTA 9.7.5.1.1:
	 * an ACK covers all earlier PSNs); it answers nothing that follows. */
	while (get_reply(SILENCE_MS))
		;
	/* Connections come and go; each new one takes index 0 again and a QPN. */
	for (k = 1; k <= CYCLES; k++) {
		tcmd("create 1");
		REQUIRE(A.nans == 1 && parse_qp_line(A.ans[0]), "create: '%s'",
			A.nans ? A.ans[0] : "");
		if (A.qp[0].qpn == old_qpn) {
			again = k;
			break;
		}
		if (k < CYCLES)
			tcmd("destroy 0");
	}
	EXPECT(!again, "QP number 0x%x came back %d QP creations after it was destroyed", old_qpn,
	       again);
	if (!again)
		say("%d QPs created after QP 0x%x was destroyed, none with its number; the last "
		    "is 0x%x",
		    CYCLES, old_qpn, A.qp[0].qpn);

	/* The peer tries the window on the newest QP (the one with the old number, if any). */
	snap(&s);
	fill(data, sizeof(data), 0x99);
	h = hdr(0, URNIC_OP_RC_RDMA_WRITE_ONLY, A.qp[0].epsn);
	h.reth = (struct urnic_reth){ maddr, mkey, sizeof(data) };
	xmit(&h, data, sizeof(data), 0);
	expect_nak(0, A.qp[0].epsn, 0x62, "a WRITE through the window of a destroyed QP");
	settle();
	EXPECT_CTR(s, "nak_rem_access_sent", 1);
	expect_qp_state(0, "ERR");
	probe(1);
}
