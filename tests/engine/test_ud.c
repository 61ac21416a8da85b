/* SPDX-License-Identifier: MIT */
/*
 * test_ud.c - Unreliable Datagram (IBTA 9.8, 10.2.5; rxe-siw-perftest.md 2.2-2.3, 2.13).
 *
 *   host 0 (10.0.0.1) UD QP ---+
 *   host 1 (10.0.0.2) UD QP ---+-- one fabric; each QP sends to any other by address
 *   host 2 (10.0.0.3) UD QP ---+   handle (the WR's destination), Q_Key 0x11111111
 *
 * A SEND is one UD_SEND_ONLY packet with a DETH (Q_Key, source QPN), no AckReq, from
 * the QP's creation port; the receive buffer gets the 40-byte GRH area (20 zero bytes
 * and the IPv4 header, as rxe) and then the payload; the completion carries the source
 * QPN, IBV_WC_GRH and 40 + payload bytes. A wrong Q_Key, a missing receive WQE: the
 * datagram is dropped and counted, nothing is sent back. A message longer than the
 * port MTU completes successfully without a packet (C10-93.1.1). A lost datagram loses
 * only itself. A datagram too long for the receive buffer is dropped, the WQE kept (as
 * rxe). Against rxe's own
 * capture (tests/golden/rxe_ud_send.pcap): our UD packet has rxe's bytes wherever the
 * QPNs and PSN do not differ, and rxe's packet is received like ours.
 */
#include <string.h>

#include "fabric.h"
#include "pcap.h"
#include "wire/byteorder.h"

#define QKEY 0x11111111u

struct env {
	struct fabric *f;
	int n;
	struct urnic_pd pd[FAB_MAX_HOSTS];
	struct fab_qp *q[FAB_MAX_HOSTS];
	struct fab_buf b[FAB_MAX_HOSTS];
};

static void env_open(struct env *v, int nhosts, uint64_t seed)
{
	memset(v, 0, sizeof(*v));
	v->f = fabric_new(nhosts, seed);
	v->n = nhosts;
	for (int i = 0; i < nhosts; i++) {
		v->pd[i].handle = 1;
		v->q[i] = fab_qp_new_type(v->f, i, &v->pd[i], URNIC_QPT_UD, NULL, 64, 64, true);
		fab_ud_ready(v->q[i], QKEY, 0x1000u * (uint32_t)(i + 1));
		fab_buf_new(v->f, &v->b[i], i, &v->pd[i], 65536, URNIC_ACCESS_LOCAL_WRITE);
		fab_fill(v->b[i].p + 32768, 32768, (uint32_t)(seed + (uint64_t)i));
	}
}

static void env_close(struct env *v)
{
	for (int i = 0; i < v->n; i++) {
		fab_buf_free(v->f, &v->b[i]);
		fab_qp_free(v->q[i]);
	}
	fabric_free(v->f);
}

/* Sends len bytes from host from's buffer (offset 32768) to host to's QP. */
static void ud_send(struct env *v, int from, int to, uint64_t wr_id, uint32_t len, uint32_t opcode,
		    uint32_t qkey)
{
	struct fab_send_wr wr = {
		.wr_id = wr_id,
		.opcode = opcode,
		.imm_be = 0x78563412u,
		.num_sge = 1,
		.sge = { fab_sge(v->b[from].mr, 32768, len) },
		.ud_dst = fab_peer(v->f, to),
		.remote_qpn = v->q[to]->qp.qpn,
		.remote_qkey = qkey,
	};

	CHECK_EQ(fab_post_send(v->q[from], &wr), 0);
}

/* A receive WQE of len bytes at offset off of the host's buffer. */
static void ud_recv(struct env *v, int host, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct urnic_sge sge = fab_sge(v->b[host].mr, off, len);

	CHECK_EQ(fab_post_recv(v->q[host], wr_id, &sge, 1), 0);
}

static uint16_t sum16(const uint8_t *p, int n)
{
	uint32_t s = 0;

	for (int i = 0; i < n; i += 2)
		s += urnic_get_be16(p + i);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static void test_ud_send_recv_with_grh(void)
{
	struct env v;
	struct urnic_cqe sc[2], rc[2];
	struct fab_rule *cap;
	const uint8_t *ip;

	env_open(&v, 2, 1);
	cap = fab_add_rule(v.f, &(struct fab_rule){ .match = FAB_M_OPCODE,
						    .opcode = URNIC_OP_UD_SEND_ONLY,
						    .action = FAB_PASS,
						    .capture = true });
	ud_recv(&v, 1, 100, 0, 40 + 1000);
	ud_recv(&v, 1, 101, 2048, 40 + 1000);
	ud_send(&v, 0, 1, 1, 999, URNIC_WR_SEND, QKEY);
	ud_send(&v, 0, 1, 2, 500, URNIC_WR_SEND_WITH_IMM, QKEY);
	fab_wait_cqes(v.f, &v.q[1]->rcq, rc, 2);
	fab_wait_cqes(v.f, &v.q[0]->scq, sc, 2);
	CHECK_CQE(sc[0], 1, URNIC_WC_SUCCESS, URNIC_WC_SEND, 999);
	CHECK_CQE(sc[1], 2, URNIC_WC_SUCCESS, URNIC_WC_SEND, 500);

	/* IBTA 11.4.2.1: source QP, GRH flag, byte_len counts the GRH area. */
	CHECK_CQE(rc[0], 100, URNIC_WC_SUCCESS, URNIC_WC_RECV, 40 + 999);
	CHECK_EQ(rc[0].src_qp, v.q[0]->qp.qpn);
	CHECK_EQ(rc[0].qp_num, v.q[1]->qp.qpn);
	CHECK_EQ(rc[0].wc_flags, URNIC_WC_WITH_GRH);
	CHECK_CQE(rc[1], 101, URNIC_WC_SUCCESS, URNIC_WC_RECV, 40 + 500);
	CHECK_EQ(rc[1].wc_flags, URNIC_WC_WITH_GRH | URNIC_WC_WITH_IMM);
	CHECK_EQ(rc[1].imm_be, 0x78563412u);
	CHECK(memcmp(v.b[1].p + 40, v.b[0].p + 32768, 999) == 0);
	CHECK(memcmp(v.b[1].p + 2048 + 40, v.b[0].p + 32768, 500) == 0);

	/* The GRH area: 20 zero bytes, then the IPv4 header of the packet (as rxe). */
	for (int i = 0; i < 20; i++)
		CHECK_EQ(v.b[1].p[i], 0);
	ip = v.b[1].p + 20;
	CHECK_EQ(ip[0], 0x45);
	CHECK_EQ(cap->cap_len, 12 + 8 + 1000 + 4); /* BTH, DETH, 999 + 1 pad, ICRC */
	CHECK_EQ(urnic_get_be16(ip + 2), 20 + 8 + cap->cap_len);
	CHECK_EQ(urnic_get_be16(ip + 6), 0x4000); /* DF, as Linux sends RoCE */
	CHECK_EQ(ip[8], 64);
	CHECK_EQ(ip[9], 17);
	CHECK_EQ(sum16(ip, 20), 0xffff); /* a valid header checksum */
	CHECK(memcmp(ip + 12, v.f->hosts[0].ip, 4) == 0);
	CHECK(memcmp(ip + 16, v.f->hosts[1].ip, 4) == 0);

	/* The packet: UD SEND only, P_Key 0xffff, no AckReq, DETH Q_Key and source QPN
	 * (IBTA 9.3.2), sent from the QP's creation port (rxe: 0xc000 + hash_32). */
	CHECK_EQ(cap->cap[0], URNIC_OP_UD_SEND_ONLY);
	CHECK_EQ((cap->cap[1] >> 4) & 3, 1);
	CHECK_EQ(urnic_get_be16(cap->cap + 2), 0xffff);
	CHECK_EQ(urnic_get_be24(cap->cap + 5), v.q[1]->qp.qpn);
	CHECK_EQ(cap->cap[8], 0);
	CHECK_EQ(urnic_get_be24(cap->cap + 9), 0x1000);
	CHECK_EQ(urnic_get_be32(cap->cap + 12), QKEY);
	CHECK_EQ(cap->cap[16], 0);
	CHECK_EQ(urnic_get_be24(cap->cap + 17), v.q[0]->qp.qpn);
	CHECK_EQ(cap->cap_info.sport, v.q[0]->qp.attr.peer.sport);
	CHECK(cap->cap_info.sport >= 0xc000);
	for (uint32_t i = 0; i < v.f->ntrace; i++) {
		CHECK(!v.f->trace[i].ackreq);
		CHECK_EQ(v.f->trace[i].src, 0); /* nothing comes back */
	}
	CHECK_EQ(v.f->trace[1].opcode, URNIC_OP_UD_SEND_ONLY_WITH_IMMEDIATE);
	CHECK_EQ(v.f->trace[1].psn, 0x1001);
	env_close(&v);
}

static void test_ud_qkey_mismatch_dropped_and_counted(void)
{
	struct env v;
	struct urnic_cqe sc[3], rc[1];

	env_open(&v, 2, 2);
	ud_recv(&v, 1, 100, 0, 2048);
	ud_send(&v, 0, 1, 1, 64, URNIC_WR_SEND, QKEY + 1);
	fab_wait_cqes(v.f, &v.q[0]->scq, sc, 1);
	fabric_settle(v.f);
	/* The sender cannot know (no ACKs): its WR succeeded. */
	CHECK_CQE(sc[0], 1, URNIC_WC_SUCCESS, URNIC_WC_SEND, 64);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_drop_bad_qkey), 1);
	CHECK_EQ(fab_poll(&v.q[1]->rcq, rc, 1), 0);
	CHECK_EQ(v.q[1]->qp.state, URNIC_QPS_RTS);

	/* IBTA 10.2.5: a WR Q_Key with the high bit set means "the QP's own": the
	 * receiver's is the same here, so it arrives. */
	ud_send(&v, 0, 1, 2, 64, URNIC_WR_SEND, 0x80000000u);
	fab_wait_cqes(v.f, &v.q[1]->rcq, rc, 1);
	CHECK_CQE(rc[0], 100, URNIC_WC_SUCCESS, URNIC_WC_RECV, 40 + 64);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_drop_bad_qkey), 1);
	fab_wait_cqes(v.f, &v.q[0]->scq, sc, 1);
	env_close(&v);
}

static void test_ud_longer_than_port_mtu_completes_unsent(void)
{
	struct env v;
	struct urnic_cqe sc[3], rc[1];

	env_open(&v, 2, 3);
	ud_recv(&v, 1, 100, 0, 8192);
	ud_send(&v, 0, 1, 1, FAB_UD_MTU + 1, URNIC_WR_SEND, QKEY);
	ud_send(&v, 0, 1, 2, FAB_UD_MTU, URNIC_WR_SEND, QKEY);
	fab_wait_cqes(v.f, &v.q[0]->scq, sc, 2);
	fab_wait_cqes(v.f, &v.q[1]->rcq, rc, 1);
	/* C10-93.1.1: no packet, no error; the PSN is used up, as in rxe. */
	CHECK_CQE(sc[0], 1, URNIC_WC_SUCCESS, URNIC_WC_SEND, FAB_UD_MTU + 1);
	CHECK_CQE(sc[1], 2, URNIC_WC_SUCCESS, URNIC_WC_SEND, FAB_UD_MTU);
	CHECK_EQ(fab_ctr(v.f, 0, URNIC_CTR_drop_ud_too_long), 1);
	CHECK_EQ(v.f->ntrace, 1);
	CHECK_EQ(v.f->trace[0].psn, 0x1001);
	CHECK_EQ(v.f->trace[0].payload_bytes, FAB_UD_MTU);
	CHECK_CQE(rc[0], 100, URNIC_WC_SUCCESS, URNIC_WC_RECV, 40 + FAB_UD_MTU);
	env_close(&v);
}

static void test_ud_one_qp_many_peers(void)
{
	struct env v;
	struct urnic_cqe sc[8], rc[4];

	env_open(&v, 4, 4);
	/* Host 0 sends to 1, 2 and 3 from one QP, each WR with its own destination. */
	for (int h = 1; h < 4; h++) {
		ud_recv(&v, h, (uint64_t)(100 + h), 0, 2048);
		ud_send(&v, 0, h, (uint64_t)h, (uint32_t)(100 * h), URNIC_WR_SEND, QKEY);
	}
	fab_wait_cqes(v.f, &v.q[0]->scq, sc, 3);
	for (int h = 1; h < 4; h++) {
		fab_wait_cqes(v.f, &v.q[h]->rcq, rc, 1);
		CHECK_CQE(rc[0], (uint64_t)(100 + h), URNIC_WC_SUCCESS, URNIC_WC_RECV,
			  40 + 100 * h);
		CHECK_EQ(rc[0].src_qp, v.q[0]->qp.qpn);
		CHECK(memcmp(v.b[h].p + 40, v.b[0].p + 32768, 100u * (uint32_t)h) == 0);
		CHECK(memcmp(v.b[h].p + 20 + 12, v.f->hosts[0].ip, 4) == 0);
	}
	for (uint32_t i = 0; i < v.f->ntrace; i++)
		CHECK_EQ(v.f->trace[i].dst, (int)i + 1);

	/* And host 1 hears from anyone: 2 and 3 send to it (no address check on UD). */
	ud_recv(&v, 1, 200, 0, 2048);
	ud_recv(&v, 1, 201, 4096, 2048);
	ud_send(&v, 2, 1, 20, 64, URNIC_WR_SEND, QKEY);
	fab_wait_cqes(v.f, &v.q[1]->rcq, rc, 1);
	ud_send(&v, 3, 1, 30, 64, URNIC_WR_SEND, QKEY);
	fab_wait_cqes(v.f, &v.q[1]->rcq, rc + 1, 1);
	CHECK_EQ(rc[0].src_qp, v.q[2]->qp.qpn);
	CHECK_EQ(rc[1].src_qp, v.q[3]->qp.qpn);
	CHECK(memcmp(v.b[1].p + 20 + 12, v.f->hosts[2].ip, 4) == 0);
	CHECK(memcmp(v.b[1].p + 4096 + 20 + 12, v.f->hosts[3].ip, 4) == 0);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_drop_addr_mismatch), 0);
	fab_wait_cqes(v.f, &v.q[2]->scq, sc, 1);
	fab_wait_cqes(v.f, &v.q[3]->scq, sc, 1);
	env_close(&v);
}

static void test_ud_no_receive_wqe_is_dropped_without_rnr(void)
{
	struct env v;
	struct urnic_cqe sc[2], rc[1];

	env_open(&v, 2, 5);
	ud_send(&v, 0, 1, 1, 64, URNIC_WR_SEND, QKEY);
	fab_wait_cqes(v.f, &v.q[0]->scq, sc, 1);
	fabric_settle(v.f);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_drop_no_rwqe), 1);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_tx_packets), 0); /* no RNR NAK on UD */
	ud_recv(&v, 1, 100, 0, 2048);
	ud_send(&v, 0, 1, 2, 64, URNIC_WR_SEND, QKEY);
	fab_wait_cqes(v.f, &v.q[1]->rcq, rc, 1);
	CHECK_CQE(rc[0], 100, URNIC_WC_SUCCESS, URNIC_WC_RECV, 40 + 64);
	fab_wait_cqes(v.f, &v.q[0]->scq, sc, 1);
	env_close(&v);
}

static void test_ud_lost_datagram_loses_only_itself(void)
{
	struct env v;
	struct urnic_cqe sc[3], rc[2];

	env_open(&v, 2, 6);
	fab_add_rule(v.f,
		     &(struct fab_rule){ .match = FAB_M_PSN, .psn = 0x1001, .action = FAB_DROP });
	for (int i = 0; i < 3; i++)
		ud_recv(&v, 1, (uint64_t)(100 + i), 2048u * (uint32_t)i, 2048);
	for (int i = 0; i < 3; i++)
		ud_send(&v, 0, 1, (uint64_t)i, (uint32_t)(10 + i), URNIC_WR_SEND, QKEY);
	fab_wait_cqes(v.f, &v.q[0]->scq, sc, 3);
	fab_wait_cqes(v.f, &v.q[1]->rcq, rc, 2);
	fabric_settle(v.f);
	/* The PSN gap means nothing to UD: datagrams 0 and 2 in WQEs 100 and 101. */
	CHECK_CQE(rc[0], 100, URNIC_WC_SUCCESS, URNIC_WC_RECV, 40 + 10);
	CHECK_CQE(rc[1], 101, URNIC_WC_SUCCESS, URNIC_WC_RECV, 40 + 12);
	CHECK_EQ(fab_poll(&v.q[1]->rcq, rc, 1), 0);
	env_close(&v);
}

static void test_ud_inline_send(void)
{
	struct env v;
	struct urnic_cqe sc[1], rc[1];
	struct fab_send_wr wr;

	env_open(&v, 2, 7);
	ud_recv(&v, 1, 100, 0, 2048);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.opcode = URNIC_WR_SEND;
	wr.flags = URNIC_SEND_INLINE;
	wr.num_sge = 1;
	wr.sge[0] = (struct urnic_sge){ (uint64_t)(uintptr_t)(v.b[0].p + 32768), 200, 0 };
	wr.ud_dst = fab_peer(v.f, 1);
	wr.remote_qpn = v.q[1]->qp.qpn;
	wr.remote_qkey = QKEY;
	CHECK_EQ(fab_post_send(v.q[0], &wr), 0);
	fab_wait_cqes(v.f, &v.q[1]->rcq, rc, 1);
	CHECK_CQE(rc[0], 100, URNIC_WC_SUCCESS, URNIC_WC_RECV, 240);
	CHECK(memcmp(v.b[1].p + 40, v.b[0].p + 32768, 200) == 0);
	fab_wait_cqes(v.f, &v.q[0]->scq, sc, 1);
	env_close(&v);
}

static void test_ud_receive_buffer_too_short_drops_and_keeps_the_wqe(void)
{
	struct env v;
	struct urnic_cqe sc[2], rc[2];

	env_open(&v, 2, 8);
	ud_recv(&v, 1, 100, 0, 40 + 99); /* one byte short for the first datagram */
	ud_send(&v, 0, 1, 1, 100, URNIC_WR_SEND, QKEY);
	fab_wait_cqes(v.f, &v.q[0]->scq, sc, 1);
	fabric_settle(v.f);
	/* rxe class D: dropped, counted; the QP goes on, the WQE waits for the next. */
	CHECK_EQ(fab_poll(&v.q[1]->rcq, rc, 1), 0);
	CHECK_EQ(v.q[1]->qp.state, URNIC_QPS_RTS);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_drop_recv_too_long), 1);
	/* Validate, then mutate: the short buffer was not written. */
	for (int i = 0; i < 40 + 99; i++)
		CHECK_EQ(v.b[1].p[i], 0);
	ud_send(&v, 0, 1, 2, 99, URNIC_WR_SEND, QKEY);
	fab_wait_cqes(v.f, &v.q[1]->rcq, rc, 1);
	CHECK_CQE(rc[0], 100, URNIC_WC_SUCCESS, URNIC_WC_RECV, 40 + 99);
	fab_wait_cqes(v.f, &v.q[0]->scq, sc, 1);
	env_close(&v);
}

static void test_ud_completion_only_after_the_packet_left(void)
{
	struct env v;
	struct urnic_cqe sc[4];
	struct urnic_engine *e;

	env_open(&v, 2, 10);
	e = fab_engine(v.f, 0);
	for (int i = 0; i < 3; i++)
		ud_send(&v, 0, 1, (uint64_t)i, 64, URNIC_WR_SEND, QKEY);
	/* One progress call, as the device runs it: the WQEs complete, and by then their
	 * packets are out of the tx batch (it points into their memory and inline data,
	 * which the application may reuse once it sees the completion). */
	CHECK(urnic_engine_progress(e, v.f->now_ns));
	CHECK_EQ(fab_poll(&v.q[0]->scq, sc, 4), 3);
	CHECK_EQ(e->tx.n, 0);
	CHECK_EQ(v.f->ntrace, 3);
	fabric_settle(v.f);
	env_close(&v);
}

/* The first RoCEv2 packet of a golden capture: UDP payload, source address and port. */
static uint32_t golden_first(const char *file, uint8_t *buf, uint32_t cap, uint8_t *src_ip,
			     uint16_t *sport)
{
	char path[512];
	struct wire_pcap pc;
	struct wire_frame fr;
	struct wire_udp u;

	snprintf(path, sizeof(path), "%s/%s", URNIC_GOLDEN_DIR, file);
	CHECK_EQ(wire_pcap_open(&pc, path), 0);
	while (wire_pcap_next(&pc, &fr) == 1) {
		if (!wire_frame_udp(&fr, &u) || u.dport != URNIC_ROCE_UDP_PORT || u.ipv6)
			continue;
		CHECK(u.payload_bytes <= cap);
		memcpy(buf, u.payload, u.payload_bytes);
		memcpy(src_ip, u.ip + 12, 4);
		*sport = u.sport;
		wire_pcap_close(&pc);
		return (uint32_t)u.payload_bytes;
	}
	wire_pcap_close(&pc);
	CHECK(!"no RoCEv2 packet in the capture");
	return 0;
}

static void test_ud_packets_match_rxe_and_rxe_packets_are_received(void)
{
	struct env v;
	struct urnic_cqe sc[1], rc[1];
	struct fab_rule *cap;
	uint8_t rxe[256], src_ip[4];
	uint16_t sport;
	uint32_t len = golden_first("rxe_ud_send.pcap", rxe, sizeof(rxe), src_ip, &sport);

	/* ibv_ud_pingpong -s 64 on rxe: UD SEND_ONLY, Q_Key 0x11111111, 64 bytes of 0x7b. */
	CHECK_EQ(len, 12 + 8 + 64 + 4);
	CHECK_EQ(rxe[0], URNIC_OP_UD_SEND_ONLY);
	env_open(&v, 2, 9);
	cap = fab_add_rule(
		v.f, &(struct fab_rule){
			     .match = FAB_M_SRC, .src = 0, .action = FAB_PASS, .capture = true });
	memset(v.b[0].p + 32768, 0x7b, 64);
	ud_recv(&v, 1, 100, 0, 2048);
	ud_send(&v, 0, 1, 1, 64, URNIC_WR_SEND, QKEY);
	fab_wait_cqes(v.f, &v.q[1]->rcq, rc, 1);
	fab_wait_cqes(v.f, &v.q[0]->scq, sc, 1);
	/* Byte for byte but the destination QPN (5-7), the PSN (9-11), the source QPN
	 * (17-19) and the ICRC (it covers the QPNs, the PSN and rxe's IP ID). */
	CHECK_EQ(cap->cap_len, len);
	for (uint32_t i = 0; i < len - 4; i++)
		if (!((i >= 5 && i <= 7) || (i >= 9 && i <= 11) || (i >= 17 && i <= 19)))
			CHECK_EQ(cap->cap[i], rxe[i]);

	/* rxe's packet, addressed to our QP (and its ICRC recomputed for that). */
	ud_recv(&v, 1, 101, 4096, 2048);
	urnic_put_be24(rxe + 5, v.q[1]->qp.qpn);
	fab_inject(v.f, src_ip, 1, sport, rxe, len, true);
	CHECK_EQ(fab_poll(&v.q[1]->rcq, rc, 1), 1);
	CHECK_CQE(rc[0], 101, URNIC_WC_SUCCESS, URNIC_WC_RECV, 40 + 64);
	CHECK_EQ(rc[0].src_qp, 0x11);
	CHECK(memcmp(v.b[1].p + 4096 + 20 + 12, src_ip, 4) == 0);
	for (int i = 0; i < 64; i++)
		CHECK_EQ(v.b[1].p[4096 + 40 + i], 0x7b);
	env_close(&v);
}

int main(void)
{
	RUN(test_ud_send_recv_with_grh);
	RUN(test_ud_qkey_mismatch_dropped_and_counted);
	RUN(test_ud_longer_than_port_mtu_completes_unsent);
	RUN(test_ud_one_qp_many_peers);
	RUN(test_ud_no_receive_wqe_is_dropped_without_rnr);
	RUN(test_ud_lost_datagram_loses_only_itself);
	RUN(test_ud_inline_send);
	RUN(test_ud_receive_buffer_too_short_drops_and_keeps_the_wqe);
	RUN(test_ud_completion_only_after_the_packet_left);
	RUN(test_ud_packets_match_rxe_and_rxe_packets_are_received);
	return 0;
}
