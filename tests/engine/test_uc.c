/* SPDX-License-Identifier: MIT */
/*
 * test_uc.c - Unreliable Connection (IBTA 9.8; rxe's "UC: drop until next FIRST/ONLY").
 *
 *   host 0 (10.0.0.1) UC QP a <--- fabric, MTU 1024 ---> UC QP b host 1 (10.0.0.2)
 *
 * SEND and RDMA WRITE (with immediate) use the UC opcodes, segmented like RC, with no
 * AckReq; nothing ever comes back, and the sender completes a WR once its last packet
 * is out. A lost packet drops exactly the message it belongs to: the receiver throws
 * away the rest of it up to the next FIRST/ONLY and the receive WQE it was filling
 * takes the next message. No receive WQE, a bad R_Key, a WRITE the QP does not grant:
 * the message is dropped silently, counted, and the QP carries on. Against rxe's own
 * capture (tests/golden/rxe_uc_send.pcap): our UC SEND has rxe's bytes wherever the
 * QPN and PSN do not differ, and rxe's packet is received like ours.
 */
#include <string.h>

#include "fabric.h"
#include "pcap.h"
#include "wire/byteorder.h"

struct env {
	struct fab_pair p;
	struct fab_buf la, ra;
	struct fab_conn c;
};

static void env_open(struct env *v, uint32_t access, uint64_t seed)
{
	memset(v, 0, sizeof(*v));
	v->c = fab_conn_default();
	v->c.access = access;
	fab_pair_open(&v->p, NULL, seed);
	v->p.a->qp.type = URNIC_QPT_UC; /* still in RESET: a UC QP from now on */
	v->p.b->qp.type = URNIC_QPT_UC;
	fab_connect(v->p.a, v->p.b, &v->c);
	fab_buf_new(v->p.f, &v->la, 0, &v->p.pd[0], 65536, FAB_ALL_ACCESS);
	fab_buf_new(v->p.f, &v->ra, 1, &v->p.pd[1], 65536, FAB_ALL_ACCESS);
	fab_fill(v->la.p, 65536, (uint32_t)seed);
}

static void env_close(struct env *v)
{
	fab_buf_free(v->p.f, &v->la);
	fab_buf_free(v->p.f, &v->ra);
	fab_pair_close(&v->p);
}

static void post_send(struct env *v, uint64_t wr_id, uint32_t opcode, uint32_t off, uint32_t len,
		      uint64_t remote_off, uint32_t rkey)
{
	struct fab_send_wr wr = {
		.wr_id = wr_id,
		.opcode = opcode,
		.imm_be = 0xdeadbeefu,
		.remote_addr = v->ra.mr->iova + remote_off,
		.rkey = rkey,
		.num_sge = 1,
		.sge = { fab_sge(v->la.mr, off, len) },
	};

	CHECK_EQ(fab_post_send(v->p.a, &wr), 0);
}

static void post_recv(struct env *v, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct urnic_sge sge = fab_sge(v->ra.mr, off, len);

	CHECK_EQ(fab_post_recv(v->p.b, wr_id, &sge, 1), 0);
}

/* Nothing but UC requests from host 0 on the wire: no ACKs, no AckReq. */
static void check_unacknowledged(const struct fabric *f)
{
	for (uint32_t i = 0; i < f->ntrace; i++) {
		const struct fab_pktinfo *pi = &f->trace[i];

		CHECK_EQ(pi->src, 0);
		CHECK(pi->opcode >= URNIC_OP_UC_SEND_FIRST &&
		      pi->opcode <= URNIC_OP_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
		CHECK(!pi->ackreq);
		CHECK(!pi->has_aeth);
	}
	CHECK_EQ(f->hosts[1].e->stats.counters[URNIC_CTR_tx_packets], 0);
}

static void test_uc_send_segmented_without_acks(void)
{
	struct env v;
	struct urnic_cqe sc[2], rc[2];
	static const uint8_t ops[] = { URNIC_OP_UC_SEND_FIRST, URNIC_OP_UC_SEND_MIDDLE,
				       URNIC_OP_UC_SEND_LAST,
				       URNIC_OP_UC_SEND_ONLY_WITH_IMMEDIATE };

	env_open(&v, FAB_ALL_ACCESS, 1);
	post_recv(&v, 100, 0, 8192);
	post_recv(&v, 101, 8192, 8192);
	post_send(&v, 1, URNIC_WR_SEND, 0, 3000, 0, 0);
	post_send(&v, 2, URNIC_WR_SEND_WITH_IMM, 4096, 10, 0, 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 2);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, rc, 2);
	fabric_settle(v.p.f);
	CHECK_CQE(sc[0], 1, URNIC_WC_SUCCESS, URNIC_WC_SEND, 3000);
	CHECK_CQE(sc[1], 2, URNIC_WC_SUCCESS, URNIC_WC_SEND, 10);
	CHECK_CQE(rc[0], 100, URNIC_WC_SUCCESS, URNIC_WC_RECV, 3000);
	CHECK_EQ(rc[0].src_qp, v.p.a->qp.qpn);
	CHECK_EQ(rc[0].wc_flags, 0);
	CHECK_CQE(rc[1], 101, URNIC_WC_SUCCESS, URNIC_WC_RECV, 10);
	CHECK_EQ(rc[1].wc_flags, URNIC_WC_WITH_IMM);
	CHECK_EQ(rc[1].imm_be, 0xdeadbeefu);
	CHECK(memcmp(v.ra.p, v.la.p, 3000) == 0);
	CHECK(memcmp(v.ra.p + 8192, v.la.p + 4096, 10) == 0);
	CHECK_EQ(v.p.f->ntrace, 4);
	for (uint32_t i = 0; i < 4; i++) {
		CHECK_EQ(v.p.f->trace[i].opcode, ops[i]);
		CHECK_EQ(v.p.f->trace[i].psn, v.c.psn_a + i);
	}
	check_unacknowledged(v.p.f);
	env_close(&v);
}

static void test_uc_write_and_write_with_imm(void)
{
	struct env v;
	struct urnic_cqe sc[2], rc[1];

	env_open(&v, FAB_ALL_ACCESS, 2);
	post_recv(&v, 100, 60000, 16);
	post_send(&v, 1, URNIC_WR_RDMA_WRITE, 0, 2500, 1000, v.ra.mr->key);
	post_send(&v, 2, URNIC_WR_RDMA_WRITE_WITH_IMM, 8192, 2048, 20000, v.ra.mr->key);
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 2);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, rc, 1);
	fabric_settle(v.p.f);
	CHECK_CQE(sc[0], 1, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 2500);
	CHECK_CQE(sc[1], 2, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 2048);
	CHECK_CQE(rc[0], 100, URNIC_WC_SUCCESS, URNIC_WC_RECV_RDMA_WITH_IMM, 2048);
	CHECK_EQ(rc[0].imm_be, 0xdeadbeefu);
	CHECK(memcmp(v.ra.p + 1000, v.la.p, 2500) == 0);
	CHECK(memcmp(v.ra.p + 20000, v.la.p + 8192, 2048) == 0);
	CHECK_EQ(v.p.f->trace[0].opcode, URNIC_OP_UC_RDMA_WRITE_FIRST);
	CHECK_EQ(v.p.f->trace[2].opcode, URNIC_OP_UC_RDMA_WRITE_LAST);
	CHECK_EQ(v.p.f->trace[3].opcode, URNIC_OP_UC_RDMA_WRITE_FIRST);
	CHECK_EQ(v.p.f->trace[4].opcode, URNIC_OP_UC_RDMA_WRITE_LAST_WITH_IMMEDIATE);
	check_unacknowledged(v.p.f);
	env_close(&v);
}

/* Three 3-packet SENDs, three receive WQEs; the packet at PSN index `lost` (0-8) never
 * arrives. The message it belonged to is lost; the others arrive in order, the one
 * after the loss in the WQE the broken message was filling, so one WQE is left. */
static void lost_packet_drops_its_message(uint32_t lost, uint64_t seed)
{
	struct env v;
	struct urnic_cqe sc[3], rc[2];
	uint32_t broken = lost / 3;
	int k = 0;

	env_open(&v, FAB_ALL_ACCESS, seed);
	fab_add_rule(v.p.f, &(struct fab_rule){ .match = FAB_M_PSN,
						.psn = v.c.psn_a + lost,
						.action = FAB_DROP });
	for (uint32_t m = 0; m < 3; m++)
		post_recv(&v, 100 + m, 4096 * m, 4096);
	for (uint32_t m = 0; m < 3; m++)
		post_send(&v, m, URNIC_WR_SEND, 8192 * m, 3000 - m, 0, 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 3);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, rc, 2);
	fabric_settle(v.p.f);
	for (uint32_t m = 0; m < 3; m++)
		CHECK_CQE(sc[m], m, URNIC_WC_SUCCESS, URNIC_WC_SEND, 3000 - m);
	for (uint32_t m = 0; m < 3; m++) {
		if (m == broken)
			continue;
		CHECK_CQE(rc[k], 100 + (uint64_t)k, URNIC_WC_SUCCESS, URNIC_WC_RECV, 3000 - m);
		CHECK(memcmp(v.ra.p + 4096 * (uint32_t)k, v.la.p + 8192 * m, 3000 - m) == 0);
		k++;
	}
	CHECK_EQ(fab_poll(&v.p.b->rcq, rc, 1), 0);
	CHECK_EQ(atomic_load(&v.p.b->qp.rq.prod) - atomic_load(&v.p.b->qp.rq.cons), 1);
	CHECK_EQ(v.p.b->qp.state, URNIC_QPS_RTS);
	/* Dropped: the packets after the lost one in its message; when the LAST was lost,
	 * the end of the broken message shows when the next FIRST comes. */
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_drop_uc_seq), lost % 3 == 0   ? 2
							   : lost % 3 == 1 ? 1
							   : broken < 2	   ? 1
									   : 0);
	check_unacknowledged(v.p.f);
	env_close(&v);
}

static void test_uc_lost_packet_drops_exactly_its_message(void)
{
	for (uint32_t lost = 0; lost < 9; lost++)
		lost_packet_drops_its_message(lost, 10 + lost);
}

static void test_uc_no_receive_wqe_drops_silently(void)
{
	struct env v;
	struct urnic_cqe sc[2], rc[1];

	env_open(&v, FAB_ALL_ACCESS, 3);
	post_send(&v, 1, URNIC_WR_SEND, 0, 2000, 0, 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 1);
	fabric_settle(v.p.f);
	/* No RNR on UC: the FIRST is dropped for want of a WQE, the LAST with it. */
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_drop_no_rwqe), 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_drop_uc_seq), 1);
	post_recv(&v, 100, 0, 4096);
	post_send(&v, 2, URNIC_WR_SEND, 4096, 100, 0, 0);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, rc, 1);
	CHECK_CQE(rc[0], 100, URNIC_WC_SUCCESS, URNIC_WC_RECV, 100);
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 1);
	check_unacknowledged(v.p.f);
	env_close(&v);
}

static void test_uc_bad_rkey_and_ungranted_write_drop_silently(void)
{
	struct env v;
	struct urnic_cqe sc[3], rc[1];

	env_open(&v, FAB_ALL_ACCESS, 4);
	post_recv(&v, 100, 0, 4096);
	post_send(&v, 1, URNIC_WR_RDMA_WRITE, 0, 3000, 0, v.ra.mr->key ^ 0x80);
	post_send(&v, 2, URNIC_WR_RDMA_WRITE, 0, 100, 65536 - 50, v.ra.mr->key); /* past the end */
	post_send(&v, 3, URNIC_WR_SEND, 0, 64, 0, 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 3);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, rc, 1);
	fabric_settle(v.p.f);
	CHECK_EQ(sc[0].status, URNIC_WC_SUCCESS); /* the sender never learns */
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_drop_uc_invalid), 2);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_drop_uc_seq), 2); /* write 1's MIDDLE, LAST */
	CHECK_CQE(rc[0], 100, URNIC_WC_SUCCESS, URNIC_WC_RECV, 64);
	for (int i = 64; i < 65536; i++)
		CHECK_EQ(v.ra.p[i], 0);
	CHECK_EQ(v.p.b->qp.state, URNIC_QPS_RTS);
	check_unacknowledged(v.p.f);
	env_close(&v);

	/* A responder QP without remote write rights drops WRITEs. */
	env_open(&v, URNIC_ACCESS_LOCAL_WRITE, 5);
	post_send(&v, 1, URNIC_WR_RDMA_WRITE, 0, 100, 0, v.ra.mr->key);
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 1);
	fabric_settle(v.p.f);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_drop_uc_invalid), 1);
	for (int i = 0; i < 100; i++)
		CHECK_EQ(v.ra.p[i], 0);
	check_unacknowledged(v.p.f);
	env_close(&v);
}

static void test_uc_message_longer_than_buffer_drops_and_keeps_the_wqe(void)
{
	struct env v;
	struct urnic_cqe sc[2], rc[1];

	env_open(&v, FAB_ALL_ACCESS, 6);
	post_recv(&v, 100, 0, 1500);
	post_send(&v, 1, URNIC_WR_SEND, 0, 2000, 0, 0); /* FIRST fits, LAST does not */
	post_send(&v, 2, URNIC_WR_SEND, 4096, 1400, 0, 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 2);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, rc, 1);
	fabric_settle(v.p.f);
	/* rxe class D: the long message is dropped; the next one takes the same WQE. */
	CHECK_CQE(rc[0], 100, URNIC_WC_SUCCESS, URNIC_WC_RECV, 1400);
	CHECK(memcmp(v.ra.p, v.la.p + 4096, 1400) == 0);
	CHECK_EQ(v.p.b->qp.state, URNIC_QPS_RTS);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_drop_recv_too_long), 1);
	check_unacknowledged(v.p.f);
	env_close(&v);
}

static void test_uc_requester_local_error(void)
{
	struct env v;
	struct urnic_cqe sc[2];

	env_open(&v, FAB_ALL_ACCESS, 7);
	post_send(&v, 1, URNIC_WR_SEND, 0, 100, 0, 0);
	{
		struct fab_send_wr wr = { .wr_id = 2, .opcode = URNIC_WR_SEND, .num_sge = 1 };

		wr.sge[0] = fab_sge(v.la.mr, 0, 100);
		wr.sge[0].lkey ^= 0x80; /* a key that does not exist */
		CHECK_EQ(fab_post_send(v.p.a, &wr), 0);
	}
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 2);
	CHECK_CQE(sc[0], 1, URNIC_WC_SUCCESS, URNIC_WC_SEND, 100);
	CHECK_EQ(sc[1].wr_id, 2);
	CHECK_EQ(sc[1].status, URNIC_WC_LOC_PROT_ERR);
	CHECK_EQ(v.p.a->qp.state, URNIC_QPS_ERR);
	fabric_settle(v.p.f);
	env_close(&v);
}

static void test_uc_completion_only_after_the_packets_left(void)
{
	struct env v;
	struct urnic_cqe sc[3];
	struct urnic_engine *e;
	struct fab_send_wr wr = {
		.wr_id = 2, .opcode = URNIC_WR_SEND, .flags = URNIC_SEND_INLINE, .num_sge = 1
	};

	env_open(&v, FAB_ALL_ACCESS, 9);
	e = fab_engine(v.p.f, 0);
	post_send(&v, 1, URNIC_WR_SEND, 0, 3000, 0, 0);
	wr.sge[0] = (struct urnic_sge){ (uint64_t)(uintptr_t)v.la.p, 300, 0 };
	CHECK_EQ(fab_post_send(v.p.a, &wr), 0);
	/* As the device runs it: completed WQEs have no packet left in the tx batch. */
	CHECK(urnic_engine_progress(e, v.p.f->now_ns));
	CHECK_EQ(fab_poll(&v.p.a->scq, sc, 3), 2);
	CHECK_EQ(e->tx.n, 0);
	CHECK_EQ(v.p.f->ntrace, 4);
	fabric_settle(v.p.f);
	env_close(&v);
}

static void test_uc_packets_match_rxe_and_rxe_packets_are_received(void)
{
	char path[512];
	struct wire_pcap pc;
	struct wire_frame fr;
	struct wire_udp u = { 0 };
	uint8_t rxe[256];
	uint32_t len = 0;
	struct env v;
	struct urnic_cqe sc[1], rc[1];
	struct fab_rule *cap;

	snprintf(path, sizeof(path), "%s/rxe_uc_send.pcap", URNIC_GOLDEN_DIR);
	CHECK_EQ(wire_pcap_open(&pc, path), 0);
	while (!len && wire_pcap_next(&pc, &fr) == 1)
		if (wire_frame_udp(&fr, &u) && u.dport == URNIC_ROCE_UDP_PORT && !u.ipv6) {
			len = (uint32_t)u.payload_bytes;
			CHECK(len <= sizeof(rxe));
			memcpy(rxe, u.payload, len);
		}
	/* ibv_uc_pingpong -s 64 on rxe: UC SEND_ONLY, 64 bytes of 0x7b. */
	CHECK_EQ(len, 12 + 64 + 4);
	CHECK_EQ(rxe[0], URNIC_OP_UC_SEND_ONLY);

	env_open(&v, FAB_ALL_ACCESS, 8);
	cap = fab_add_rule(v.p.f,
			   &(struct fab_rule){ .match = 0, .action = FAB_PASS, .capture = true });
	memset(v.la.p, 0x7b, 64);
	post_recv(&v, 100, 0, 4096);
	post_send(&v, 1, URNIC_WR_SEND, 0, 64, 0, 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 1);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, rc, 1);
	/* Byte for byte but the QPN (5-7), the PSN (9-11) and the ICRC. */
	CHECK_EQ(cap->cap_len, len);
	for (uint32_t i = 0; i < len - 4; i++)
		if (!((i >= 5 && i <= 7) || (i >= 9 && i <= 11)))
			CHECK_EQ(cap->cap[i], rxe[i]);

	/* rxe's packet, to our QP, from the address it is connected to; an ONLY at any
	 * PSN starts a message on UC. */
	post_recv(&v, 101, 4096, 4096);
	urnic_put_be24(rxe + 5, v.p.b->qp.qpn);
	memcpy(v.p.b->qp.attr.peer.ip, u.ip + 12, 4);
	fab_inject(v.p.f, u.ip + 12, 1, u.sport, rxe, len, true);
	CHECK_EQ(fab_poll(&v.p.b->rcq, rc, 1), 1);
	CHECK_CQE(rc[0], 101, URNIC_WC_SUCCESS, URNIC_WC_RECV, 64);
	for (int i = 0; i < 64; i++)
		CHECK_EQ(v.ra.p[4096 + i], 0x7b);
	wire_pcap_close(&pc);
	env_close(&v);
}

int main(void)
{
	RUN(test_uc_send_segmented_without_acks);
	RUN(test_uc_write_and_write_with_imm);
	RUN(test_uc_lost_packet_drops_exactly_its_message);
	RUN(test_uc_no_receive_wqe_drops_silently);
	RUN(test_uc_bad_rkey_and_ungranted_write_drop_silently);
	RUN(test_uc_message_longer_than_buffer_drops_and_keeps_the_wqe);
	RUN(test_uc_requester_local_error);
	RUN(test_uc_completion_only_after_the_packets_left);
	RUN(test_uc_packets_match_rxe_and_rxe_packets_are_received);
	return 0;
}
