/* SPDX-License-Identifier: MIT */
/*
 * limits.c - hostile scenarios against the device's configured limits
 * (src/dev/limits.def, URNIC_LIMITS in the target's environment): max_msg_sz bounds
 * the bytes one RDMA READ request may draw and the length of a WRITE (IBTA C9-94,
 * ibv_port_attr.max_msg_sz). Out of scope: READ/atomic resources (flood.c).
 */
#include "attacker.h"

/* With max_msg_sz 65536 a 60-byte READ request must not draw more than 64 KiB of
 * responses: a READ of 65536 bytes is answered in full, one of 65537 gets NAK invalid
 * request (0x61, class C: 9.7.5.1.6) before a response byte, its QP then in error; a
 * WRITE_FIRST announcing 65537 bytes the same. QP 3 checks the target serves. */
void sc_read_amplification(void)
{
	struct topts o = topts_default(4);
	static uint8_t data[MTU];
	struct urnic_ctrfile s;
	struct urnic_pkt h;
	struct qpinfo *q;
	int big;

	o.recv = 0;
	o.env = "URNIC_LIMITS=max_msg_sz=65536";
	start_target(&o);
	big = add_region("big", 131072, "rwk");

	q = &A.qp[0];
	snap(&s);
	send_read(0, q->epsn, A.mr[big].addr + 4096, A.mr[big].rkey, 65536);
	q->msn++;
	expect_read_responses_in(big, 0, q->epsn, 4096, 65536, q->msn, false,
				 "a READ of max_msg_sz bytes");
	q->epsn = urnic_psn_add(q->epsn, 64);
	settle();
	EXPECT_CTR(s, "read_resp_sent", 64);

	snap(&s);
	q = &A.qp[1];
	send_read(1, q->epsn, A.mr[big].addr, A.mr[big].rkey, 65537);
	expect_nak(1, q->epsn, 0x61, "a READ of max_msg_sz + 1 bytes");
	expect_silence("after the NAK");
	settle();
	EXPECT_CTR(s, "refused_read_len", 1);
	EXPECT_CTR(s, "nak_inv_req_sent", 1);
	EXPECT_CTR(s, "read_resp_sent", 0);
	expect_qp_state(1, "ERR");

	snap(&s);
	q = &A.qp[2];
	fill(data, sizeof(data), 31);
	h = hdr(2, URNIC_OP_RC_RDMA_WRITE_FIRST, q->epsn);
	h.bth.ackreq = false;
	h.reth = (struct urnic_reth){ A.mr[big].addr, A.mr[big].rkey, 65537 };
	xmit(&h, data, MTU, 0);
	expect_nak(2, q->epsn, 0x61, "a WRITE_FIRST of max_msg_sz + 1 bytes");
	settle();
	EXPECT_CTR(s, "nak_inv_req_sent", 1);
	expect_qp_state(2, "ERR");
	probe(3);
}
