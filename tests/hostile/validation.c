/* SPDX-License-Identifier: MIT */
/*
 * validation.c - hostile scenarios: single forged packets that the receive checks must
 * drop silently, and count, before they touch anything: bad ICRC (Annex A17.3.3; and an
 * ICRC over a non-zero IPv4 ID, which must be accepted, and forgeries that must not teach
 * the receiver which IDs a peer sends), unknown QP, P_Key, foreign source or transport,
 * truncated and lying headers (IBTA 9.6, rxe_recv.c's order).
 * Out of scope: well-formed requests the responder refuses (requests.c), PSN and
 * sequence errors (sequence.c).
 */
#include <string.h>

#include "attacker.h"
#include "wire/byteorder.h"

/* Bad ICRC (Annex A17.3.3; rxe_icrc.c): dropped silently and counted, memory and PSN
 * untouched; the same QP then serves a READ at the very PSN the bad packets carried. */
void sc_bad_icrc(void)
{
	struct topts o = topts_default(2);
	struct urnic_ctrfile s;
	uint8_t data[32];
	struct urnic_pkt h;

	start_target(&o);
	snap(&s);
	h = write32(0, 64, data);
	xmit(&h, data, 32, X_BAD_ICRC);
	xmit(&h, data, 32, X_FLIP_PAYLOAD);
	xmit(&h, data, 32, X_OTHER_SPORT);
	expect_silent_drop(&s, "WRITEs with a bad ICRC");
	EXPECT_CTR(s, "drop_bad_icrc", 3);
	probe(0);
	probe(1);
}

/* An ICRC computed for a non-zero IPv4 ID (rxe counts the ID; a UDP socket does not
 * show it): the ID is recovered from the ICRC and the WRITE lands, counted; the same
 * packet with a payload byte flipped is still a bad ICRC. */
void sc_icrc_ipv4_id(void)
{
	struct topts o = topts_default(1);
	struct urnic_ctrfile s;
	uint8_t data[32];
	struct urnic_pkt h;

	start_target(&o);
	snap(&s);
	h = write32(0, 256, data);
	xmit(&h, data, 32, X_IPV4_ID | X_FLIP_PAYLOAD);
	expect_silence("WRITE with a corrupt payload and an ICRC for IP ID 0x2bcd");
	EXPECT_CTR(s, "drop_bad_icrc", 1);
	EXPECT_CTR(s, "rx_icrc_ipv4_id", 0);
	good_write_x(0, 256, 32, 0xbad, X_IPV4_ID, "WRITE with an ICRC for IP ID 0x2bcd");
	settle();
	EXPECT_CTR(s, "rx_icrc_ipv4_id", 1);
	EXPECT_CTR(s, "drop_bad_icrc", 1);
	probe(0);
}

/* Poisoning the IPv4 ID table (src/engine/ip_id.h): we count the ID as rxe does, and
 * forged packets with valid ICRCs, for ID 0 and for IDs ever further ahead of ours, must
 * not make the target refuse our next one. They come from the spoofed address, and from
 * ours to a QP that does not exist or with a PSN far ahead of the expected one: nothing
 * a QP takes, so the target learns nothing from them. */
void sc_ip_id_poison(void)
{
	struct topts o = topts_default(2);
	struct urnic_ctrfile s;
	uint16_t ours = 0x2bcd, forged = 0x2bcd;
	uint64_t no_qp, bad_icrc;
	uint8_t data[32];
	struct urnic_pkt h;

	start_target(&o);
	A.ip_id = ours;
	good_write_x(0, 256, 32, 1, X_IPV4_ID, "WRITE with an ICRC for IP ID 0x2bcd");
	snap(&s);
	for (int i = 0; i < 16; i++) {
		h = write32(0, 64, data);
		xmit(&h, data, 32, X_SPOOF);
		A.ip_id = forged = (uint16_t)(forged + 200);
		xmit(&h, data, 32, X_SPOOF | X_IPV4_ID);
	}
	expect_silent_drop(&s, "WRITEs from the spoofed address");
	EXPECT_CTR(s, "drop_addr_mismatch", 32);

	snap(&s);
	forged = ours;
	for (int i = 0; i < 16; i++) {
		h = write32(0, 64, data);
		h.bth.dqpn = A.qp[0].qpn ^ (1u << 12); /* no such QP */
		xmit(&h, data, 32, 0);
		A.ip_id = forged = (uint16_t)(forged + 200);
		xmit(&h, data, 32, X_IPV4_ID);
	}
	expect_silent_drop(&s, "WRITEs to a QP that does not exist");
	/* The IDs far ahead are refused at the ICRC already (how far depends on the time
	 * since our last packet), the others as to no QP. */
	no_qp = ctr("drop_unknown_qp") - snap_of(&s, "drop_unknown_qp");
	bad_icrc = ctr("drop_bad_icrc") - snap_of(&s, "drop_bad_icrc");
	EXPECT(no_qp + bad_icrc == 32 && no_qp >= 16,
	       "32 WRITEs to no QP: %llu unknown QP, %llu bad ICRC", (unsigned long long)no_qp,
	       (unsigned long long)bad_icrc);

	forged = ours;
	for (int i = 0; i < 16; i++) {
		h = write32(0, 64, data);
		h.bth.psn = urnic_psn_add(A.qp[0].epsn, 0x100000 + (uint32_t)i);
		xmit(&h, data, 32, 0);
		if (i == 0)
			expect_nak(0, A.qp[0].epsn, 0x60, "a WRITE 2^20 PSNs ahead");
		A.ip_id = forged = (uint16_t)(forged + 200);
		xmit(&h, data, 32, X_IPV4_ID);
	}
	expect_silence("WRITEs far ahead after the NAK");

	A.ip_id = ++ours;
	good_write_x(0, 512, 32, 2, X_IPV4_ID, "our next counting ID after the forgeries");
	A.ip_id = ++ours;
	good_write_x(0, 768, 32, 3, X_IPV4_ID, "and the one after it");
	probe(0);
	probe(1);
}

/* Unknown destination QP (IBTA 9.6.1.2; rxe_recv.c): a QPN of another generation on a
 * live slot, a free slot, QP0/QP1 and 0xffffff are dropped silently. */
void sc_unknown_qp(void)
{
	struct topts o = topts_default(2);
	struct urnic_ctrfile s;
	uint8_t data[32];
	struct urnic_pkt h;
	uint32_t qpn, bad[5];

	start_target(&o);
	qpn = A.qp[0].qpn;
	bad[0] = qpn ^ (1u << 12);
	bad[1] = (qpn & ~0xfffu) | 0xfff;
	bad[2] = 0xffffff;
	bad[3] = 1;
	bad[4] = 0;
	snap(&s);
	h = write32(0, 64, data);
	for (int i = 0; i < 5; i++) {
		h.bth.dqpn = bad[i];
		xmit(&h, data, 32, 0);
	}
	/* Some of these QPNs name another process's slot on the address (share.h): the
	 * transport drops those before the engine counts them in rx_packets. */
	A.rx_sent -= 5;
	wait_ctr("drop_unknown_qp", snap_of(&s, "drop_unknown_qp") + 4);
	wait_ctr("drop_gsi_no_cm", snap_of(&s, "drop_gsi_no_cm") + 1);
	expect_silent_drop(&s, "WRITEs to QPs that do not exist");
	EXPECT_CTR(s, "drop_unknown_qp", 4);
	EXPECT_CTR(s, "drop_gsi_no_cm", 1); /* QP 1, with no connection manager open */
	probe(0);
	probe(1);
}

/* Wrong P_Key (IBTA 10.9.3: the low 15 bits must match ours, 0x7fff): dropped silently.
 * A limited member of the default partition (0x7fff) matches our full membership. */
void sc_bad_pkey(void)
{
	static const uint16_t bad[] = { 0x0000, 0x8001, 0x7ffe, 0xfffe };
	struct topts o = topts_default(2);
	struct urnic_ctrfile s;
	uint8_t data[32];
	struct urnic_pkt h;

	start_target(&o);
	snap(&s);
	h = write32(0, 64, data);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		h.bth.pkey = bad[i];
		xmit(&h, data, 32, 0);
	}
	expect_silent_drop(&s, "WRITEs with a foreign P_Key");
	EXPECT_CTR(s, "drop_bad_pkey", 4);
	probe(0);
	h = write32(0, 64, data);
	h.bth.pkey = 0x7fff;
	xmit(&h, data, 32, 0);
	A.qp[0].msn++;
	if (expect_reply(0, URNIC_OP_RC_ACKNOWLEDGE, A.qp[0].epsn, -1, A.qp[0].msn,
			 "WRITE as a limited member of the default partition"))
		memcpy(A.shadow[HR_RW] + 64, data, 32);
	A.qp[0].epsn = urnic_psn_add(A.qp[0].epsn, 1);
	probe(1);
}

/* A source address that is not the QP's peer (rxe check_addr) and opcodes of other
 * transports (UC, UD) sent to an RC QP (IBTA 9.6.1.2.x): dropped silently. */
void sc_foreign_source_and_transport(void)
{
	struct topts o = topts_default(2);
	struct urnic_ctrfile s;
	uint8_t data[32];
	struct urnic_pkt h;

	start_target(&o);
	snap(&s);
	h = write32(0, 64, data);
	xmit(&h, data, 32, X_SPOOF);
	h = hdr(0, URNIC_OP_UC_SEND_ONLY, A.qp[0].epsn);
	xmit(&h, data, 16, 0);
	h = hdr(0, URNIC_OP_UC_RDMA_WRITE_ONLY, A.qp[0].epsn);
	h.reth = (struct urnic_reth){ A.mr[HR_RW].addr, A.mr[HR_RW].rkey, 16 };
	xmit(&h, data, 16, 0);
	h = hdr(0, URNIC_OP_UD_SEND_ONLY, A.qp[0].epsn);
	h.deth = (struct urnic_deth){ 0x11111111, A.qp[0].dest };
	xmit(&h, data, 16, 0);
	expect_silent_drop(&s, "a spoofed source and UC/UD opcodes");
	EXPECT_CTR(s, "drop_addr_mismatch", 1);
	EXPECT_CTR(s, "drop_opcode_qp_type", 3);
	probe(0);
	probe(1);
}

static void refix_icrc(uint8_t *buf, size_t len)
{
	struct urnic_icrc_flow flow;
	struct urnic_frag frag = { buf, len - 4 };

	memset(&flow, 0, sizeof(flow));
	memcpy(flow.src, A.addr, 4);
	memcpy(flow.dst, A.taddr, 4);
	flow.sport = URNIC_ROCE_UDP_PORT;
	flow.dport = URNIC_ROCE_UDP_PORT;
	urnic_put_le32(buf + len - 4, urnic_icrc_flow(&flow, &frag, 1, frag.len));
}

/* Truncated and malformed headers (IBTA 9.6.1; house style: every prefix fails cleanly):
 * every prefix of a WRITE_ONLY, and well-checksummed packets whose headers lie (pad
 * beyond the packet, unknown opcodes, TVer 1, reserved bits). Silently dropped. */
void sc_truncated_headers(void)
{
	static const uint8_t unknown_ops[] = {
		0x15, 0x1e, 0x1f, 0x3f, 0x44, 0x80, 0x82, 0xb5, 0xff
	};
	struct topts o = topts_default(2);
	struct urnic_ctrfile s;
	uint8_t data[32], full[128], buf[128];
	struct urnic_pkt h;
	size_t len, lying = 0;

	start_target(&o);
	snap(&s);
	h = write32(0, 64, data);
	len = build(&h, data, 32, 0, full, sizeof(full));
	REQUIRE(len == 12 + 16 + 32 + 4, "WRITE_ONLY of 32 bytes is %zu bytes", len);
	/* An empty datagram, then one byte: both are malformed headers. */
	send_raw(full, 0, false);
	send_raw(full, 1, false);
	A.rx_sent--; /* let settle() wait for the 1-byte one only: the check is below */
	settle();
	/* settle() may return after the first of the two (a clean-clone run counted the
	 * second one pass later): wait for both before checking them. */
	wait_ctr("drop_bad_header", snap_of(&s, "drop_bad_header") + 2);
	EXPECT_CTR(s, "drop_bad_header", 2);
	EXPECT_CTR(s, "rx_packets", 2);
	snap(&s);
	/* Shorter than BTH + RETH + ICRC: the header cannot be read. */
	for (size_t n = 2; n < 32; n++)
		send_raw(full, n, false);
	/* Long enough to decode, but the last four bytes are no ICRC of it. */
	for (size_t n = 32; n < len; n++)
		send_raw(full, n, false);
	/* A correct ICRC over headers that lie. */
	h = write32(0, 64, data);
	len = build(&h, NULL, 0, 0, buf, sizeof(buf)); /* 0 bytes of payload ... */
	buf[1] |= 0x30;				       /* ... and a PadCnt of 3 */
	refix_icrc(buf, len);
	send_raw(buf, len, false);
	lying++;
	for (unsigned i = 0; i < sizeof(unknown_ops); i++) {
		len = build(&h, data, 32, 0, buf, sizeof(buf));
		buf[0] = unknown_ops[i];
		refix_icrc(buf, len);
		send_raw(buf, len, false);
		lying++;
	}
	len = build(&h, data, 32, 0, buf, sizeof(buf));
	buf[1] |= 0x01; /* TVer 1 */
	refix_icrc(buf, len);
	send_raw(buf, len, false);
	lying++;
	len = build(&h, data, 32, 0, buf, sizeof(buf));
	buf[4] |= 0x01; /* Resv6 (IBTA 9.2: reserved, sent as 0) */
	refix_icrc(buf, len);
	send_raw(buf, len, false);
	lying++;
	len = build(&h, data, 32, 0, buf, sizeof(buf));
	buf[8] |= 0x01; /* Resv7 */
	refix_icrc(buf, len);
	send_raw(buf, len, false);
	lying++;
	expect_silent_drop(&s, "truncated and malformed headers");
	EXPECT_CTR(s, "drop_bad_header", 30 + lying);
	EXPECT_CTR(s, "drop_bad_icrc", 64 - 32);
	probe(0);
	probe(1);
}
