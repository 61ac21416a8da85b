/* SPDX-License-Identifier: MIT */
/*
 * test_ip_id.c - which recovered IPv4 IDs a receiver believes (src/engine/ip_id.c), and
 * that only packets a QP accepted as its peer's teach it (engine.c, rx_from_peer).
 *
 * A source that sends ID 0/k (urnic: unconnected DF sockets, GSO segment numbers) is
 * believed for segment numbers only once it has been seen doing so, so a corrupted
 * packet whose ICRC happens to match some other ID is refused; a counting source (rxe)
 * is believed for its first ID and then for IDs a little ahead of its last one, the
 * window growing with idle time as Linux's random step does. Against random IDs (what
 * corruption looks like) each kind believes only the fraction the window allows.
 *
 *   host 0 (10.0.0.1) RC QP, counts the IPv4 ID as rxe --- fabric --- host 1 (10.0.0.2)
 *   forged packets: from other addresses, or "from" 10.0.0.1 to   RC QP (and a UD QP)
 *   a QP that does not exist, with PSNs the QP would not take,
 *   or to a UD QP (which hears from anyone)
 *
 * None of the forgeries, with valid ICRCs for ID 0 or for IDs ahead of host 0's, may
 * make host 1 refuse host 0's next packets.
 */
#include <string.h>

#include "fabric.h"
#include "engine/ip_id.h"
#include "wire/byteorder.h"

#define MS 1000000ull

static const uint8_t URNIC_PEER[4] = { 127, 0, 3, 2 };
static const uint8_t RXE_PEER[4] = { 10, 0, 2, 15 };

/* xorshift32: corruption's recovered IDs are uniformly random. */
static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* A packet from src matched the ICRC for the hint (ID 0/k) and its QP accepted it. */
static void hint(struct urnic_ip_id_table *t, const uint8_t *src)
{
	urnic_ip_id_learn(t, src, &(struct urnic_ip_id_seen){ URNIC_IP_ID_SEEN_HINT, 0 }, 0);
}

/* A packet from src whose ICRC is right for ip_id only: believed, and then accepted by
 * its QP, as the engine does it. */
static bool accept(struct urnic_ip_id_table *t, const uint8_t *src, uint16_t ip_id, uint64_t now)
{
	if (!urnic_ip_id_plausible(t, src, ip_id, now))
		return false;
	urnic_ip_id_learn(t, src, &(struct urnic_ip_id_seen){ URNIC_IP_ID_SEEN_RECOVERED, ip_id },
			  now);
	return true;
}

static void zero_id_source_believed_for_segment_numbers_only(void)
{
	struct urnic_ip_id_table t;
	uint32_t seed = 1, believed = 0;

	memset(&t, 0, sizeof(t));
	for (int i = 0; i < URNIC_IP_ID_ZERO_LEARNED; i++)
		hint(&t, URNIC_PEER);
	CHECK(!accept(&t, URNIC_PEER, 0x2bcd, 0));
	CHECK(accept(&t, URNIC_PEER, 5, 0)); /* GRO cut a GSO send elsewhere */
	CHECK(accept(&t, URNIC_PEER, URNIC_IP_ID_GSO_SEGS - 1, 0));
	CHECK(!accept(&t, URNIC_PEER, URNIC_IP_ID_GSO_SEGS, 0));
	for (int i = 0; i < 1 << 20; i++)
		believed += accept(&t, URNIC_PEER, (uint16_t)rnd(&seed), 0);
	/* 64 of 65,536 IDs: about 1,024 of 2^20. */
	CHECK(believed > 800 && believed < 1300);
}

static void counting_source_believed_just_ahead(void)
{
	struct urnic_ip_id_table t;
	uint64_t now = 5000 * MS;

	memset(&t, 0, sizeof(t));
	/* rxe's first packet: any ID. */
	CHECK(accept(&t, RXE_PEER, 0xfff0, now));
	CHECK(accept(&t, RXE_PEER, 0xfff1, now));
	CHECK(accept(&t, RXE_PEER, 0x0003, now)); /* wraps, two lost */
	CHECK(accept(&t, RXE_PEER, 0xfff5, now)); /* late, behind */
	CHECK(accept(&t, RXE_PEER, 0x0003 + URNIC_IP_ID_AHEAD, now));
	CHECK(!accept(&t, RXE_PEER, 0x0004 + 2 * URNIC_IP_ID_AHEAD, now));
	CHECK(!accept(&t, RXE_PEER, 0x8000, now));
	/* A second idle: Linux steps the ID by up to one per jiffy. */
	now += 1000 * MS;
	CHECK(accept(&t, RXE_PEER, 0x0003 + URNIC_IP_ID_AHEAD + 1000, now));
	CHECK(!accept(&t, RXE_PEER, 0x0013 + 2 * URNIC_IP_ID_AHEAD + 1000, now));
	/* An ID far behind is not a late packet. */
	CHECK(!accept(&t, RXE_PEER, 0x0003, now));
}

static void counting_source_refuses_random_ids(void)
{
	struct urnic_ip_id_table t;
	uint32_t seed = 7, believed = 0;
	uint16_t id = 100;

	memset(&t, 0, sizeof(t));
	CHECK(accept(&t, RXE_PEER, id, 0));
	for (int i = 0; i < 1 << 20; i++) {
		believed += urnic_ip_id_plausible(&t, RXE_PEER, (uint16_t)rnd(&seed), 0);
		CHECK(accept(&t, RXE_PEER, ++id, 0)); /* the real packets */
	}
	/* 256 ahead + 65 behind of 65,536 IDs: about 5,140 of 2^20. */
	CHECK(believed > 4000 && believed < 6500);
}

static void first_recovered_id_believed_until_zero_ids_learned(void)
{
	struct urnic_ip_id_table t;

	memset(&t, 0, sizeof(t));
	for (int i = 0; i < URNIC_IP_ID_ZERO_LEARNED - 1; i++)
		hint(&t, RXE_PEER);
	/* rxe's ID happened to equal the hint a few times: still believed. */
	CHECK(accept(&t, RXE_PEER, 0x2bcd, 0));
	CHECK(accept(&t, RXE_PEER, 0x2bce, 0));
	CHECK(!accept(&t, RXE_PEER, 0x7000, 0));
}

/* Checking a packet changes nothing: only what a QP accepted is learned. */
static void checking_learns_nothing(void)
{
	struct urnic_ip_id_table t, before;

	memset(&t, 0, sizeof(t));
	CHECK(accept(&t, RXE_PEER, 0x2bcd, 0));
	before = t;
	for (uint32_t id = 0; id < 0x10000; id++) {
		(void)urnic_ip_id_plausible(&t, RXE_PEER, (uint16_t)id, 0);
		(void)urnic_ip_id_plausible(&t, URNIC_PEER, (uint16_t)id, 0);
	}
	CHECK(memcmp(&t, &before, sizeof(t)) == 0);
	CHECK(accept(&t, RXE_PEER, 0x2bce, 0));
}

/* A source keeps its entry while fewer than URNIC_IP_ID_SOURCES others were learned
 * from since it was: whatever their addresses, no other source takes it sooner. */
static void entry_kept_until_least_recently_learned(void)
{
	struct urnic_ip_id_table t;
	uint8_t other[4] = { 10, 9, 0, 0 };

	memset(&t, 0, sizeof(t));
	CHECK(accept(&t, RXE_PEER, 0x2bcd, 0));
	for (uint32_t a = 1; a < URNIC_IP_ID_SOURCES; a++) {
		other[2] = (uint8_t)(a >> 8);
		other[3] = (uint8_t)a;
		hint(&t, other);
	}
	CHECK(!urnic_ip_id_plausible(&t, RXE_PEER, 0x7000, 0)); /* still known to count */
	CHECK(accept(&t, RXE_PEER, 0x2bce, 0));
	/* Learned again: the least recently learned is now the first of the others. */
	other[2] = 1;
	other[3] = 0;
	hint(&t, other);
	CHECK(!urnic_ip_id_plausible(&t, RXE_PEER, 0x7000, 0));
	for (uint32_t a = 1; a < URNIC_IP_ID_SOURCES; a++) {
		other[2] = 2;
		other[3] = (uint8_t)a;
		hint(&t, other);
	}
	/* Sixty-four sources learned from since: forgotten, its next ID is its first. */
	CHECK(urnic_ip_id_plausible(&t, RXE_PEER, 0x7000, 0));
}

/* ---- in the engine ---- */

#define QKEY 0x11111111u
#define RXE_FIRST_ID 0x4000
#define RIG_BYTES (1u << 20)
#define RIG_WRITES 16

struct rig {
	struct fab_pair p;
	struct fab_buf src, dst;
	struct fab_qp *ud; /* host 1's UD QP */
	uint64_t wr_id;
};

static void rxe_writes(struct rig *r, int n, uint32_t len);

/* Host 0 counts the IPv4 ID as rxe does and has written to host 1 a few times, so host 1
 * knows it counts; host 1 also has a UD QP. */
static void rig_open(struct rig *r, uint64_t seed)
{
	struct fab_conn c = fab_conn_default();

	memset(r, 0, sizeof(*r));
	fab_pair_open(&r->p, &c, seed);
	r->p.f->hosts[0].counts_ip_id = true;
	r->p.f->hosts[0].next_ip_id = RXE_FIRST_ID;
	fab_buf_new(r->p.f, &r->src, 0, &r->p.pd[0], RIG_BYTES, FAB_ALL_ACCESS);
	fab_buf_new(r->p.f, &r->dst, 1, &r->p.pd[1], RIG_BYTES, FAB_ALL_ACCESS);
	r->ud = fab_qp_new_type(r->p.f, 1, &r->p.pd[1], URNIC_QPT_UD, NULL, 16, 16, true);
	fab_ud_ready(r->ud, QKEY, 0x3000);
	rxe_writes(r, 4, 300);
	CHECK(fab_ctr(r->p.f, 1, URNIC_CTR_rx_icrc_ipv4_id) > 0);
}

static void rig_close(struct rig *r)
{
	fab_buf_free(r->p.f, &r->src);
	fab_buf_free(r->p.f, &r->dst);
	fab_qp_free(r->ud);
	fab_pair_close(&r->p);
}

/* Host 0 WRITEs n messages of len bytes to host 1, all posted at once: each must arrive
 * and complete, none refused for its ICRC. */
static void rxe_writes(struct rig *r, int n, uint32_t len)
{
	struct fabric *f = r->p.f;
	uint64_t bad_icrc = fab_ctr(f, 1, URNIC_CTR_drop_bad_icrc);
	struct urnic_cqe cqe[RIG_WRITES];

	CHECK(n <= RIG_WRITES && (uint64_t)n * len <= RIG_BYTES);
	fab_fill(r->src.p, (uint64_t)n * len, (uint32_t)r->wr_id * 7919u + 1);
	for (int i = 0; i < n; i++) {
		uint64_t off = (uint64_t)i * len;
		struct fab_send_wr wr = {
			.wr_id = r->wr_id + (uint64_t)i,
			.opcode = URNIC_WR_RDMA_WRITE,
			.num_sge = 1,
			.sge = { fab_sge(r->src.mr, off, len) },
			.remote_addr = r->dst.mr->iova + off,
			.rkey = r->dst.mr->key,
		};

		CHECK_EQ(fab_post_send(r->p.a, &wr), 0);
	}
	fab_wait_cqes(f, &r->p.a->scq, cqe, n);
	for (int i = 0; i < n; i++)
		CHECK_CQE(cqe[i], r->wr_id + (uint64_t)i, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE,
			  len);
	CHECK(memcmp(r->dst.p, r->src.p, (uint64_t)n * len) == 0);
	r->wr_id += (uint64_t)n;
	fabric_settle(f);
	if (!f->drop_ppm)
		CHECK_EQ(fab_ctr(f, 1, URNIC_CTR_drop_bad_icrc), bad_icrc);
}

/* The last ID host 0 gave a packet. */
static uint16_t rxe_last_id(struct rig *r)
{
	return (uint16_t)(r->p.f->hosts[0].next_ip_id - 1);
}

/* Hands host 1 a packet as `from` would send it with IPv4 ID ip_id: a 32-byte
 * WRITE_ONLY to dqpn at psn, or a UD SEND_ONLY with the UD QP's Q_Key. */
static void forge(struct rig *r, const uint8_t *from, uint8_t opcode, uint32_t dqpn, uint32_t psn,
		  uint16_t ip_id)
{
	uint8_t buf[256];
	struct urnic_pkt h;
	uint16_t sport = 0xc123;
	ssize_t n;

	memset(&h, 0, sizeof(h));
	h.bth.opcode = opcode;
	h.bth.pkey = URNIC_DEFAULT_PKEY;
	h.bth.dqpn = dqpn;
	h.bth.psn = psn & URNIC_PSN_MASK;
	h.reth = (struct urnic_reth){ r->dst.mr->iova + RIG_BYTES - 64, r->dst.mr->key, 32 };
	h.deth = (struct urnic_deth){ QKEY, 0x123 };
	n = urnic_pkt_encode_hdr(&h, buf, sizeof(buf));
	CHECK(n > 0);
	memset(buf + n, 0x5a, 32 + URNIC_ICRC_BYTES);
	fab_icrc_fix_id(from, r->p.f->hosts[1].ip, sport, ip_id, buf,
			(uint32_t)n + 32 + URNIC_ICRC_BYTES);
	fab_inject(r->p.f, from, 1, sport, buf, (uint32_t)n + 32 + URNIC_ICRC_BYTES, false);
}

/* Sixteen packets with ID 0 "from" host 0 and others from 256 other addresses (one of
 * which would share its entry in a table direct-mapped by address), all to a QP that
 * does not exist or with PSNs host 1's QP does not take: host 0's counting IDs must
 * still be believed. */
static void spoofed_zero_ids_do_not_unlearn_a_counting_peer(void)
{
	struct rig r;
	const uint8_t *rxe;
	uint32_t qpn, epsn, nowhere;

	rig_open(&r, 21);
	rxe = r.p.f->hosts[0].ip;
	qpn = r.p.b->qp.qpn;
	nowhere = qpn ^ (1u << URNIC_QPN_INDEX_BITS);
	for (uint32_t a = 0; a < 256; a++) {
		uint8_t other[4] = { 10, 0, 9, (uint8_t)a };

		forge(&r, other, URNIC_OP_RC_RDMA_WRITE_ONLY, nowhere, 0, 0);
	}
	forge(&r, rxe, URNIC_OP_RC_RDMA_WRITE_ONLY, nowhere, 0, 0);
	epsn = r.p.b->qp.resp.epsn;
	for (int i = 0; i < URNIC_IP_ID_ZERO_LEARNED; i++) {
		forge(&r, rxe, URNIC_OP_RC_RDMA_WRITE_ONLY, nowhere, epsn, 0);
		forge(&r, rxe, URNIC_OP_RC_RDMA_WRITE_ONLY, qpn, epsn + 0x100000 + (uint32_t)i, 0);
		forge(&r, rxe, URNIC_OP_RC_RDMA_WRITE_ONLY, qpn, epsn - 0x100000 - (uint32_t)i, 0);
	}
	fabric_settle(r.p.f);
	CHECK_EQ(r.p.b->qp.resp.epsn, epsn);
	rxe_writes(&r, 8, 3000);
	CHECK_EQ(r.p.b->qp.state, URNIC_QPS_RTS);
	rig_close(&r);
}

/* IDs just ahead of host 0's last, again and again, "from" host 0 to a QP that does not
 * exist, with PSNs its QP does not take, or to a UD QP with the right Q_Key (UD hears
 * from anyone): host 0's own next IDs, behind them, must still be believed. */
static void spoofed_ids_ahead_do_not_move_a_counting_peer(void)
{
	static const struct {
		uint8_t opcode;
		bool to_qp;
		int32_t psn_off;
	} ways[] = {
		{ URNIC_OP_RC_RDMA_WRITE_ONLY, false, 0 },
		{ URNIC_OP_RC_RDMA_WRITE_ONLY, true, 0x100000 },
		{ URNIC_OP_RC_RDMA_WRITE_ONLY, true, -0x100000 },
		{ URNIC_OP_UD_SEND_ONLY, true, 0 },
	};

	for (uint32_t w = 0; w < sizeof(ways) / sizeof(ways[0]); w++) {
		struct rig r;
		uint32_t dqpn, epsn;
		uint16_t id;

		rig_open(&r, 31 + w);
		dqpn = r.p.b->qp.qpn;
		if (ways[w].opcode == URNIC_OP_UD_SEND_ONLY)
			dqpn = r.ud->qp.qpn;
		else if (!ways[w].to_qp)
			dqpn ^= 1u << URNIC_QPN_INDEX_BITS; /* no such QP */
		epsn = r.p.b->qp.resp.epsn;
		id = rxe_last_id(&r);
		for (int i = 0; i < 64; i++) {
			id = (uint16_t)(id + URNIC_IP_ID_AHEAD - 6);
			forge(&r, r.p.f->hosts[0].ip, ways[w].opcode, dqpn,
			      epsn + (uint32_t)ways[w].psn_off + (uint32_t)i, id);
		}
		fabric_settle(r.p.f);
		rxe_writes(&r, 8, 3000);
		CHECK_EQ(r.p.b->qp.state, URNIC_QPS_RTS);
		rig_close(&r);
	}
}

/* The packets a loss makes host 1 discard (go-back-N) took IDs too: learning from what
 * the QP takes near its expected PSN must keep up with them. */
static void counting_peer_survives_loss(void)
{
	struct rig r;

	rig_open(&r, 41);
	r.p.f->drop_ppm = 50000; /* 5 % */
	r.p.f->fault_src = 0;
	for (int i = 0; i < 8; i++)
		rxe_writes(&r, RIG_WRITES, 65536); /* a window of 256 PSNs in flight */
	r.p.f->drop_ppm = 0;
	CHECK(fab_ctr(r.p.f, 1, URNIC_CTR_nak_seq_sent) > 0);
	CHECK_EQ(fab_ctr(r.p.f, 1, URNIC_CTR_drop_bad_icrc), 0);
	rig_close(&r);
}

int main(void)
{
	RUN(zero_id_source_believed_for_segment_numbers_only);
	RUN(counting_source_believed_just_ahead);
	RUN(counting_source_refuses_random_ids);
	RUN(first_recovered_id_believed_until_zero_ids_learned);
	RUN(checking_learns_nothing);
	RUN(entry_kept_until_least_recently_learned);
	RUN(spoofed_zero_ids_do_not_unlearn_a_counting_peer);
	RUN(spoofed_ids_ahead_do_not_move_a_counting_peer);
	RUN(counting_peer_survives_loss);
	return 0;
}
