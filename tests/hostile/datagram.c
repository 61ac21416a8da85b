/* SPDX-License-Identifier: MIT */
/*
 * datagram.c - hostile scenarios on what a peer reaches without a connection: UD QPs
 * (IBTA 9.8; the Q_Key is the only check, 10.2.4), the shared receive queue that RC QPs
 * draw their receives from (IBTA 10.2.9) and multicast groups (ibv_attach_mcast(3),
 * RoCEv2 Annex A17.4). Datagrams with wrong or controlled Q_Keys, to QP0/QP1 and QPNs
 * that do not exist, with truncated DETHs, longer than the receive buffer, by the
 * thousand with no receive posted; RC SENDs longer than an SRQ WQE, exhausting the
 * SRQ, or holding one of its WQEs unfinished; datagrams to groups the target is, is not
 * or is no longer attached to. Each is dropped and counted, or lands with the GRH area
 * (IBTA 11.4.1.2) and the completion a UD receive has. Out of scope: the target's own
 * UD sends, QP1 (GSI) traffic itself.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "attacker.h"
#include "wire/byteorder.h"

/* ibv_wc_opcode, ibv_wc_flags and ibv_wc_status values as the target prints them. */
enum {
	WC_SUCCESS = 0,
	WC_LOC_LEN_ERR = 1,
	WC_REM_INV_REQ_ERR = 9,
	WC_RECV = 128,
	WC_GRH = 1,
	EV_QP_FATAL = 1,
	EV_SRQ_LIMIT = 15,
	EV_LAST_WQE = 16,
};

enum {
	UD_PAYLOAD = 512,		      /* the largest datagram a UD receive takes */
	UD_WQE = HOSTILE_UD_GRH + UD_PAYLOAD, /* a UD receive WQE: the GRH area, then that */
	PEER_TTL = 77,			      /* our unicast TTL and TOS, for the GRH area */
	PEER_TOS = 0x20,
	MCAST_TTL = 5,	      /* our multicast TTL */
	MCAST_QPN = 0xffffff, /* the DestQP of a datagram to a group (IB_MULTICAST_QPN) */
	SPRAY_BATCH = 256,
	SPRAY_WINDOW = 2048, /* datagrams sent and not yet taken in by the target */
};

/* One completion as `wc` prints it (target.c). */
struct dwc {
	int qp;
	unsigned long long wr_id;
	int status, opcode;
	unsigned byte_len;
	int flags;
	unsigned src_qp;
};

/* The completions polled since the last call. */
static int wcs(struct dwc *w, int n)
{
	int got = 0;

	tcmd("wc");
	for (int i = 0; i < A.nans && got < n; i++)
		if (sscanf(A.ans[i], "wc %d %llx %d %d %u %d %x", &w[got].qp, &w[got].wr_id,
			   &w[got].status, &w[got].opcode, &w[got].byte_len, &w[got].flags,
			   &w[got].src_qp) == 7)
			got++;
	return got;
}

/* The index of the completion of QP qi in w[0..n), or -1. */
static int wc_of(const struct dwc *w, int n, int qi)
{
	for (int i = 0; i < n; i++)
		if (w[i].qp == qi)
			return i;
	return -1;
}

static void read_bytes(uint64_t off, uint32_t len, uint8_t *out)
{
	tcmd("read recv %llu %u", (unsigned long long)off, len);
	REQUIRE(A.nans == 1 && strncmp(A.ans[0], "data ", 5) == 0, "read recv %llu",
		(unsigned long long)off);
	for (uint32_t i = 0; i < len; i++) {
		unsigned v = 0;

		sscanf(A.ans[0] + 5 + 2 * i, "%2x", &v);
		out[i] = (uint8_t)v;
	}
}

/* Receive slot off of region recv must be what the shadow says, all HOSTILE_RECV_SLOT
 * bytes of it (what lies past the WQE's buffer too). */
static void check_slot(uint64_t off, const char *what)
{
	static uint8_t got[HOSTILE_RECV_SLOT];
	const uint8_t *want = A.shadow[HR_RECV] + off;

	read_bytes(off, HOSTILE_RECV_SLOT, got);
	for (uint32_t i = 0; i < HOSTILE_RECV_SLOT; i++) {
		if (got[i] != want[i]) {
			fail_at(__LINE__, "memory",
				"%s: receive slot %llu differs at byte %u: 0x%02x, expected 0x%02x",
				what, (unsigned long long)off, i, got[i], want[i]);
			memcpy(A.shadow[HR_RECV] + off, got, sizeof(got)); /* reported once */
			return;
		}
	}
}

static uint16_t ipv4_sum(const uint8_t *h, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += urnic_get_be16(h + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* The GRH area in front of a UD receive (IBTA 11.4.1.2; as rxe writes it for IPv4 and
 * rdma-core's ibv_init_ah_from_wc reads it): 20 zero bytes, then the IPv4 header the
 * datagram of udp_bytes came in: ID 0 and DF (our socket's), our TOS and TTL. */
static void grh_of(uint8_t *g, const uint8_t *src, const uint8_t *dst, size_t udp_bytes,
		   uint8_t tos, uint8_t ttl)
{
	uint8_t *ip = g + 20;

	memset(g, 0, HOSTILE_UD_GRH);
	ip[0] = 0x45;
	ip[1] = tos;
	urnic_put_be16(ip + 2, (uint16_t)(20 + 8 + udp_bytes));
	urnic_put_be16(ip + 6, 0x4000);
	ip[8] = ttl;
	ip[9] = 17;
	memcpy(ip + 12, src, 4);
	memcpy(ip + 16, dst, 4);
	urnic_put_be16(ip + 10, ipv4_sum(ip, 20));
}

/* A UD SEND_ONLY (IBTA 9.8: BTH, DETH with qkey and our QPN sqpn) of len bytes to dqpn
 * at address dst, from our address (spoof: the second one), with its ICRC for that
 * flow (Annex A17.3.3: a multicast one covers the group address). Returns its length. */
static size_t ud_build(uint32_t dqpn, uint32_t qkey, uint32_t sqpn, const uint8_t *dst, bool spoof,
		       const uint8_t *payload, uint32_t len, uint8_t *out, size_t cap)
{
	struct urnic_pkt h;
	struct urnic_icrc_flow flow;
	struct urnic_frag frag;
	uint32_t pad = (4 - (len & 3)) & 3;
	size_t total;
	ssize_t n;

	memset(&h, 0, sizeof(h));
	h.bth.opcode = URNIC_OP_UD_SEND_ONLY;
	h.bth.pkey = URNIC_DEFAULT_PKEY;
	h.bth.dqpn = dqpn;
	h.bth.psn = 0x123456;
	h.bth.pad = (uint8_t)pad;
	h.deth = (struct urnic_deth){ qkey, sqpn };
	n = urnic_pkt_encode_hdr(&h, out, cap);
	REQUIRE(n > 0 && (size_t)n + len + pad + 4 <= cap, "cannot encode a UD SEND_ONLY");
	if (len)
		memcpy(out + n, payload, len);
	memset(out + n + len, 0, pad);
	total = (size_t)n + len + pad;
	memset(&flow, 0, sizeof(flow));
	memcpy(flow.src, spoof ? A.spoof : A.addr, 4);
	memcpy(flow.dst, dst, 4);
	flow.sport = URNIC_ROCE_UDP_PORT;
	flow.dport = URNIC_ROCE_UDP_PORT;
	frag = (struct urnic_frag){ out, total };
	urnic_put_le32(out + total, urnic_icrc_flow(&flow, &frag, 1, total));
	return total + 4;
}

/* buf to dst:4791. counted: the target takes it in (settle() waits for it); a datagram
 * to a group the target has not joined never reaches it. */
static void send_to(const uint8_t *buf, size_t len, const uint8_t *dst, bool spoof, bool counted)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(URNIC_ROCE_UDP_PORT) };
	ssize_t n;

	memcpy(&to.sin_addr, dst, 4);
	do
		n = sendto(spoof ? A.spoof_fd : A.fd, buf, len, 0, (struct sockaddr *)&to,
			   sizeof(to));
	while (n < 0 && (errno == EAGAIN || errno == ENOBUFS || errno == EINTR));
	REQUIRE(n == (ssize_t)len, "sendto: %s", strerror(errno));
	if (counted)
		A.rx_sent++;
}

/* A datagram of len bytes (fill seed) to dqpn at the target's address, or at a group. */
static size_t ud_send(uint32_t dqpn, uint32_t qkey, uint32_t sqpn, const uint8_t *dst,
		      const uint8_t *data, uint32_t len, bool counted)
{
	static uint8_t buf[PKT_MAX];
	size_t n = ud_build(dqpn, qkey, sqpn, dst, false, data, len, buf, sizeof(buf));

	send_to(buf, n, dst, false, counted);
	return n;
}

/* QP qi's next posted receive slot (the FIFO of `recv` lines), taken. */
static uint32_t next_slot(int qi)
{
	struct qpinfo *q = &A.qp[qi];
	uint32_t cap = sizeof(q->rq_off) / sizeof(q->rq_off[0]);

	REQUIRE(q->rq_head != q->rq_tail, "QP %d has no receive posted", qi);
	return q->rq_off[q->rq_head++ % cap];
}

/* QP qi's next posted receive slot, not taken. */
static uint32_t peek_slot(int qi)
{
	const struct qpinfo *q = &A.qp[qi];

	return q->rq_off[q->rq_head % (sizeof(q->rq_off) / sizeof(q->rq_off[0]))];
}

/* A receive WQE: its buffer's offset in region recv, its wr_id. */
struct rwqe {
	uint32_t off;
	unsigned long long wr_id;
};

/* QP qi's next posted receive WQE, taken (target.c: wr_id QP << 32 | its post count). */
static struct rwqe next_rwqe(int qi)
{
	unsigned long long seq = A.qp[qi].rq_head;

	return (struct rwqe){ next_slot(qi), (unsigned long long)qi << 32 | seq };
}

/* A datagram that must land in WQE at of QP qi: one completion (RECV, success,
 * byte_len GRH + len, IBV_WC_GRH, the sender's QPN) and, in its slot, the GRH area and
 * the payload, nothing past them. udp: the datagram's length; dst: where it was sent,
 * with tos and ttl. */
static void expect_ud_in(int qi, const struct dwc *w, struct rwqe at, const uint8_t *src,
			 const uint8_t *dst, uint8_t tos, uint8_t ttl, size_t udp, uint32_t sqpn,
			 const uint8_t *data, uint32_t len, const char *what)
{
	EXPECT(w && w->qp == qi && w->status == WC_SUCCESS && w->opcode == WC_RECV &&
		       w->byte_len == HOSTILE_UD_GRH + len && (w->flags & WC_GRH) &&
		       w->src_qp == sqpn && w->wr_id == at.wr_id,
	       "%s: completion qp %d wr_id 0x%llx status %d opcode %d byte_len %u flags 0x%x "
	       "src_qp 0x%x; expected qp %d wr_id 0x%llx status 0 RECV byte_len %u GRH src_qp "
	       "0x%x",
	       what, w ? w->qp : -1, w ? w->wr_id : 0, w ? w->status : -1, w ? w->opcode : -1,
	       w ? w->byte_len : 0, w ? w->flags : 0, w ? w->src_qp : 0, qi, at.wr_id,
	       HOSTILE_UD_GRH + len, sqpn);
	grh_of(A.shadow[HR_RECV] + at.off, src, dst, udp, tos, ttl);
	if (len) /* a zero-length datagram's data may be NULL */
		memcpy(A.shadow[HR_RECV] + at.off + HOSTILE_UD_GRH, data, len);
	check_slot(at.off, what);
}

/* The same in QP qi's next posted receive. */
static void expect_ud_landed(int qi, const struct dwc *w, const uint8_t *src, const uint8_t *dst,
			     uint8_t tos, uint8_t ttl, size_t udp, uint32_t sqpn,
			     const uint8_t *data, uint32_t len, const char *what)
{
	expect_ud_in(qi, w, next_rwqe(qi), src, dst, tos, ttl, udp, sqpn, data, len, what);
}

/* Our sockets' TOS and TTLs, so that the GRH area shows the target reports them. */
static void set_peer_ttl(void)
{
	int ttl = PEER_TTL, tos = PEER_TOS, mttl = MCAST_TTL;

	REQUIRE(setsockopt(A.fd, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl)) == 0 &&
			setsockopt(A.fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)) == 0 &&
			setsockopt(A.fd, IPPROTO_IP, IP_MULTICAST_TTL, &mttl, sizeof(mttl)) == 0 &&
			setsockopt(A.spoof_fd, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl)) == 0,
		"setsockopt: %s", strerror(errno));
}

static struct topts ud_topts(int qps, int ud)
{
	struct topts o = topts_default(qps);

	o.ud = ud;
	o.recv_bytes = UD_WQE;
	return o;
}

/* Q_Keys (IBTA 10.2.4: a datagram is accepted only with the receiving QP's Q_Key; the
 * controlled ones, high bit set, are no exception and never mean "the receiver's own",
 * which only a sender's work request may ask for), QP0/QP1 and QPNs not there,
 * truncated DETHs, payloads past the receive buffer: dropped, counted, nothing written,
 * no completion, the WQE left for the next datagram (rxe: class D/E). Good ones land
 * with the GRH area, also from an address no QP knows (UD hears from anyone), and
 * zero-length. QP 0 is RC (the probe), QPs 1 and 2 UD. */
void sc_ud_qkey(void)
{
	struct topts o = ud_topts(3, 2);
	static uint8_t data[UD_PAYLOAD + 64], buf[PKT_MAX];
	struct urnic_ctrfile s;
	struct dwc w[16];
	uint32_t q1, k1, gen1, bad_qpn[5], bad_qkey[5];
	size_t udp;
	int n;

	start_target(&o);
	set_peer_ttl();
	q1 = A.qp[1].qpn;
	k1 = hostile_qkey(1);
	gen1 = q1 & ~0xfffu;

	/* A good datagram first: what every refused one below must not do. */
	fill(data, 100, 1);
	udp = ud_send(q1, k1, 0x000123, A.taddr, data, 100, true);
	settle();
	n = wcs(w, 16);
	EXPECT(n == 1, "a good datagram: %d completions", n);
	expect_ud_landed(1, n ? &w[0] : NULL, A.addr, A.taddr, PEER_TOS, PEER_TTL, udp, 0x123, data,
			 100, "a good datagram");

	/* Wrong Q_Keys: another QP's, one bit off, zero; the controlled ones: ours with the
	 * high bit, QP1's well-known 0x80010000, all ones. */
	snap(&s);
	bad_qkey[0] = hostile_qkey(2);
	bad_qkey[1] = k1 ^ 1;
	bad_qkey[2] = 0;
	bad_qkey[3] = k1 | 0x80000000u;
	bad_qkey[4] = 0x80010000u;
	fill(data, 64, 2);
	for (int i = 0; i < 5; i++)
		ud_send(q1, bad_qkey[i], 0x000124, A.taddr, data, 64, true);
	ud_send(q1, 0xffffffffu, 0x000124, A.taddr, data, 64, true);
	expect_silent_drop(&s, "datagrams with a Q_Key not the QP's");
	EXPECT_CTR(s, "drop_bad_qkey", 6);

	/* QP0 (IBTA 3.5.3: the SMI, which RoCE does not serve), QP1 (the GSI) with no
	 * connection manager open in the target, QP1 in the index of the current
	 * generation, another generation of QP 1, a free slot. */
	snap(&s);
	bad_qpn[0] = 0;
	bad_qpn[1] = 1;
	bad_qpn[2] = gen1 | 1;
	bad_qpn[3] = q1 ^ (1u << 12);
	bad_qpn[4] = gen1 | 0x7ff;
	for (int i = 0; i < 5; i++)
		ud_send(bad_qpn[i], i < 2 ? 0x80010000u : k1, 0x000125, A.taddr, data, 64, true);
	expect_silent_drop(&s, "datagrams to QP0, QP1 and QPNs not there");
	EXPECT_CTR(s, "drop_unknown_qp", 4);
	EXPECT_CTR(s, "drop_gsi_no_cm", 1);

	/* The DETH cut anywhere (IBTA 9.6: the headers the opcode names must all be
	 * there), each with a right ICRC over what is left. */
	snap(&s);
	for (uint32_t k = 0; k < 8; k++) {
		struct urnic_icrc_flow flow;
		struct urnic_frag frag;
		size_t cut = 12 + k;

		ud_build(q1, k1, 0x000126, A.taddr, false, NULL, 0, buf, sizeof(buf));
		memset(&flow, 0, sizeof(flow));
		memcpy(flow.src, A.addr, 4);
		memcpy(flow.dst, A.taddr, 4);
		flow.sport = URNIC_ROCE_UDP_PORT;
		flow.dport = URNIC_ROCE_UDP_PORT;
		frag = (struct urnic_frag){ buf, cut };
		urnic_put_le32(buf + cut, urnic_icrc_flow(&flow, &frag, 1, cut));
		send_to(buf, cut + 4, A.taddr, false, true);
	}
	expect_silent_drop(&s, "datagrams with a truncated DETH");
	EXPECT_CTR(s, "drop_bad_header", 8);

	/* One byte more than the buffer takes after its GRH area (IBTA 9.9.3.1: a UD
	 * responder drops what it cannot take; rxe class D): dropped whole, the WQE stays;
	 * the next one, exactly as long as the buffer allows, lands in it. */
	snap(&s);
	fill(data, UD_PAYLOAD + 1, 3);
	ud_send(q1, k1, 0x000127, A.taddr, data, UD_PAYLOAD + 1, true);
	expect_silent_drop(&s, "a datagram one byte longer than the receive buffer");
	EXPECT_CTR(s, "drop_recv_too_long", 1);
	n = wcs(w, 16);
	EXPECT(n == 0, "%d completions after the datagrams that were refused", n);
	check_slot(peek_slot(1), "the refused datagrams");

	fill(data, UD_PAYLOAD, 4);
	udp = ud_send(q1, k1, 0x000128, A.taddr, data, UD_PAYLOAD, true);
	settle();
	n = wcs(w, 16);
	EXPECT(n == 1, "a datagram filling the buffer: %d completions", n);
	expect_ud_landed(1, n ? &w[0] : NULL, A.addr, A.taddr, PEER_TOS, PEER_TTL, udp, 0x128, data,
			 UD_PAYLOAD, "a datagram as long as the buffer allows");

	/* Zero bytes: the GRH area only. From the second address, which no QP knows. */
	udp = ud_build(q1, k1, 0x000129, A.taddr, true, NULL, 0, buf, sizeof(buf));
	send_to(buf, udp, A.taddr, true, true);
	settle();
	n = wcs(w, 16);
	EXPECT(n == 1, "a zero-length datagram: %d completions", n);
	expect_ud_landed(1, n ? &w[0] : NULL, A.spoof, A.taddr, 0, PEER_TTL, udp, 0x129, NULL, 0,
			 "a zero-length datagram from another address");

	/* Both UD QPs still receive, each with its own Q_Key. */
	fill(data, 200, 5);
	udp = ud_send(q1, k1, 0x00012a, A.taddr, data, 200, true);
	ud_send(A.qp[2].qpn, hostile_qkey(2), 0x00012b, A.taddr, data, 200, true);
	settle();
	n = wcs(w, 16);
	EXPECT(n == 2, "a datagram to each UD QP afterwards: %d completions", n);
	expect_ud_landed(1, wc_of(w, n, 1) >= 0 ? &w[wc_of(w, n, 1)] : NULL, A.addr, A.taddr,
			 PEER_TOS, PEER_TTL, udp, 0x12a, data, 200, "QP 1 afterwards");
	expect_ud_landed(2, wc_of(w, n, 2) >= 0 ? &w[wc_of(w, n, 2)] : NULL, A.addr, A.taddr,
			 PEER_TOS, PEER_TTL, udp, 0x12b, data, 200, "QP 2 afterwards");
	expect_qp_state(1, "RTS");
	expect_qp_state(2, "RTS");
	probe(0);
}

/* n datagrams of 64 bytes to QP qi with its Q_Key, in sendmmsg batches; datagram k
 * carries first + k in its first 4 bytes. */
static void ud_spray(int qi, uint32_t first, uint32_t n)
{
	static uint8_t pkt[SPRAY_BATCH][128];
	struct mmsghdr msg[SPRAY_BATCH];
	struct iovec iov[SPRAY_BATCH];
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(URNIC_ROCE_UDP_PORT) };

	memcpy(&to.sin_addr, A.taddr, 4);
	for (uint32_t k = 0; k < n;) {
		uint32_t b = 0;

		for (; b < SPRAY_BATCH && k < n; b++, k++) {
			uint8_t data[64];

			fill(data, sizeof(data), first + k);
			urnic_put_be32(data, first + k);
			iov[b].iov_base = pkt[b];
			iov[b].iov_len = ud_build(A.qp[qi].qpn, hostile_qkey((unsigned)qi),
						  0x000200, A.taddr, false, data, sizeof(data),
						  pkt[b], sizeof(pkt[b]));
			memset(&msg[b], 0, sizeof(msg[b]));
			msg[b].msg_hdr.msg_name = &to;
			msg[b].msg_hdr.msg_namelen = sizeof(to);
			msg[b].msg_hdr.msg_iov = &iov[b];
			msg[b].msg_hdr.msg_iovlen = 1;
		}
		send_all(msg, b);
		A.rx_sent += b;
		keep_up(SPRAY_WINDOW);
	}
	settle();
}

/* A flood with no receive posted (IBTA 9.8: UD has no RNR; each datagram is dropped and
 * counted, nothing is kept for later): 1,000 to warm up, then 10,000, the target's RSS
 * grows by at most 1 MiB; then 4 receives posted and 20 datagrams: the first 4 fill
 * the 4 WQEs in the order they were posted, the other 16 are dropped. QP 0 is RC (the
 * probe), QP 1 UD. */
void sc_ud_flood(void)
{
	struct topts o = ud_topts(2, 1);
	struct urnic_ctrfile s;
	struct dwc w[32];
	long rss0, rss1;
	int n;

	o.recv = 0;
	start_target(&o);
	set_peer_ttl();
	snap(&s);
	ud_spray(1, 0, 1000);
	rss0 = target_rss_kb();
	ud_spray(1, 1000, 10000);
	rss1 = target_rss_kb();
	expect_silent_drop(&s, "11,000 datagrams with no receive posted");
	EXPECT_CTR(s, "drop_no_rwqe", 11000);
	EXPECT_CTR(s, "drop_socket_overflow", 0);
	n = wcs(w, 32);
	EXPECT(n == 0, "%d completions with no receive posted", n);
	say("target RSS %ld kB after 1,000 datagrams, %ld kB after 10,000 more", rss0, rss1);
	EXPECT(rss0 > 0 && rss1 - rss0 <= 1024, "the target's RSS grew by %ld kB", rss1 - rss0);

	/* A few receives: filled in order by the first datagrams, the rest dropped. */
	tcmd("post 1 4");
	snap(&s);
	ud_spray(1, 20000, 20);
	EXPECT_CTR(s, "drop_no_rwqe", 16);
	n = wcs(w, 32);
	EXPECT(n == 4, "%d completions for 4 receives posted", n);
	for (int k = 0; k < n && k < 4; k++) {
		uint8_t data[64], buf[128];
		char what[64];
		size_t udp;

		fill(data, sizeof(data), 20000u + (uint32_t)k);
		urnic_put_be32(data, 20000u + (uint32_t)k);
		udp = ud_build(A.qp[1].qpn, hostile_qkey(1), 0x200, A.taddr, false, data,
			       sizeof(data), buf, sizeof(buf));
		snprintf(what, sizeof(what), "datagram %d after the flood", k);
		expect_ud_landed(1, &w[k], A.addr, A.taddr, PEER_TOS, PEER_TTL, udp, 0x200, data,
				 sizeof(data), what);
	}
	expect_qp_state(1, "RTS");
	probe(0);
}

/* The SRQ's WQEs as `srq_post` reported them, in the order the target takes them. */
static struct rwqe srq_wqe[HOSTILE_SRQ_WR];
static uint32_t srq_len[HOSTILE_SRQ_WR];
static int srq_n;

static void srq_post(int n, uint32_t len)
{
	int got = 0;

	tcmd("srq_post %d %u", n, len);
	for (int i = 0; i < A.nans && srq_n < HOSTILE_SRQ_WR; i++) {
		unsigned long long id;
		unsigned off, l;

		if (sscanf(A.ans[i], "srq_recv %llx %u %u", &id, &off, &l) != 3)
			continue;
		srq_wqe[srq_n] = (struct rwqe){ off, id };
		srq_len[srq_n++] = l;
		got++;
	}
	REQUIRE(got == n && len == srq_len[srq_n - 1], "srq_post %d %u: %d WQEs", n, len, got);
}

/* The asynchronous events since the last call: how many SRQ limit events, Last WQE
 * Reached and QP fatal events for QP qi, and others. */
struct events {
	int srq_limit, last_wqe, fatal, other;
};

static struct events events_of(int qi)
{
	struct events ev = { 0 };

	tcmd("events");
	for (int i = 0; i < A.nans; i++) {
		int type, q;

		say("  target| %s", A.ans[i]);
		if (sscanf(A.ans[i], "event %d srq", &type) == 1 && strstr(A.ans[i], " srq ") &&
		    type == EV_SRQ_LIMIT)
			ev.srq_limit++;
		else if (sscanf(A.ans[i], "event %d qp %d", &type, &q) == 2 && q == qi &&
			 type == EV_LAST_WQE)
			ev.last_wqe++;
		else if (sscanf(A.ans[i], "event %d qp %d", &type, &q) == 2 && q == qi &&
			 type == EV_QP_FATAL)
			ev.fatal++;
		else
			ev.other++;
	}
	return ev;
}

/* One RC SEND packet of QP qi at psn. */
static void rc_send(int qi, uint8_t op, uint32_t psn, bool ackreq, const uint8_t *data,
		    uint32_t len)
{
	struct urnic_pkt h = hdr(qi, op, psn);

	h.bth.ackreq = ackreq;
	xmit(&h, data, len, 0);
}

/* A SEND of QP qi (SEND_ONLY, or the LAST of a message) that must be ACKed. */
static void rc_send_acked(int qi, uint8_t op, const uint8_t *data, uint32_t len, const char *what)
{
	struct qpinfo *q = &A.qp[qi];

	rc_send(qi, op, q->epsn, true, data, len);
	q->msn++;
	expect_reply(qi, URNIC_OP_RC_ACKNOWLEDGE, q->epsn, -1, q->msn, what);
	q->epsn = urnic_psn_add(q->epsn, 1);
}

/* The one completion in w[0..n) must be QP qi's for SRQ WQE k, with status and
 * byte_len. */
static void expect_srq_wc(const struct dwc *w, int n, int qi, int k, int status, unsigned byte_len,
			  const char *what)
{
	EXPECT(n == 1 && w[0].qp == qi && w[0].wr_id == srq_wqe[k].wr_id && w[0].status == status &&
		       w[0].opcode == WC_RECV && w[0].byte_len == byte_len,
	       "%s: %d completions, the first qp %d wr_id 0x%llx status %d opcode %d byte_len "
	       "%u; expected one, qp %d wr_id 0x%llx status %d RECV byte_len %u",
	       what, n, n ? w[0].qp : -1, n ? w[0].wr_id : 0, n ? w[0].status : -1,
	       n ? w[0].opcode : -1, n ? w[0].byte_len : 0, qi, srq_wqe[k].wr_id, status, byte_len);
}

/* Four QPs on one SRQ (IBTA 10.2.9): RC QPs 0, 1, 2 and UD QP 3; four WQEs of 1,536
 * bytes, the limit armed at 2. QP 0: a SEND that fits, then one of 2 MTUs whose LAST
 * does not fit (IBTA 9.7.5.1.6, class C: NAK invalid request, the WQE completes with a
 * local length error, the QP goes to error and its Last WQE Reached event comes,
 * 11.6.3). QP 1 takes a WQE with a FIRST and sends no LAST yet: the third WQE taken
 * leaves one, under the limit, which fires once. QP 2 takes the last and finds the SRQ
 * empty (RNR NAK, 9.7.5.1.5): the WQE QP 1 holds is not given to it. UD QP 3 finds it
 * empty too (dropped), then takes a WQE of 296 bytes with a datagram one byte too long
 * (class E: it completes with remote invalid request, the QP goes on) and the next with
 * one that fits. QP 2's SEND is then taken, and QP 1's LAST completes its message in
 * the WQE it held. Not a byte outside what each message was given changes; the limit
 * never fires again unless armed. */
void sc_srq(void)
{
	struct topts o = topts_default(4);
	static uint8_t d0[100], big[2 * MTU], held[MTU + 500], d2[64], d3[64], dud[300],
		buf[PKT_MAX];
	struct urnic_ctrfile s;
	struct events ev;
	struct dwc w[16];
	uint32_t psn;
	size_t udp;
	int n;

	o.srq = 4;
	o.ud = 1;
	o.recv = 0;
	start_target(&o);
	set_peer_ttl();
	srq_post(4, 1536);
	tcmd("srq_limit 2");
	snap(&s);

	/* QP 0: a SEND that fits, then one that does not. */
	fill(d0, sizeof(d0), 1);
	rc_send_acked(0, URNIC_OP_RC_SEND_ONLY, d0, sizeof(d0), "a SEND into the SRQ");
	n = wcs(w, 16);
	expect_srq_wc(w, n, 0, 0, WC_SUCCESS, sizeof(d0), "a SEND into the SRQ");
	memcpy(A.shadow[HR_RECV] + srq_wqe[0].off, d0, sizeof(d0));
	check_slot(srq_wqe[0].off, "a SEND into the SRQ");

	fill(big, sizeof(big), 2);
	psn = A.qp[0].epsn;
	rc_send(0, URNIC_OP_RC_SEND_FIRST, psn, false, big, MTU);
	rc_send(0, URNIC_OP_RC_SEND_LAST, urnic_psn_add(psn, 1), true, big + MTU, MTU);
	expect_nak(0, urnic_psn_add(psn, 1), 0x61, "a SEND of 2,048 bytes into a WQE of 1,536");
	n = wcs(w, 16);
	expect_srq_wc(w, n, 0, 1, WC_LOC_LEN_ERR, 2 * MTU, "the SEND that did not fit");
	memcpy(A.shadow[HR_RECV] + srq_wqe[1].off, big, MTU); /* its FIRST was placed */
	check_slot(srq_wqe[1].off, "the SEND that did not fit");
	expect_qp_state(0, "ERR");

	/* QP 1 holds the third WQE: one is left, under the limit of 2. */
	fill(held, sizeof(held), 3);
	psn = A.qp[1].epsn;
	rc_send(1, URNIC_OP_RC_SEND_FIRST, psn, false, held, MTU);
	expect_silence("the FIRST of a SEND on QP 1");
	A.qp[1].epsn = urnic_psn_add(psn, 1);

	/* QP 2 takes the fourth, then finds none: the one QP 1 holds is not its. */
	fill(d2, sizeof(d2), 4);
	rc_send_acked(2, URNIC_OP_RC_SEND_ONLY, d2, sizeof(d2), "a SEND on QP 2");
	n = wcs(w, 16);
	expect_srq_wc(w, n, 2, 3, WC_SUCCESS, sizeof(d2), "a SEND on QP 2");
	memcpy(A.shadow[HR_RECV] + srq_wqe[3].off, d2, sizeof(d2));
	fill(d3, sizeof(d3), 5);
	rc_send(2, URNIC_OP_RC_SEND_ONLY, A.qp[2].epsn, true, d3, sizeof(d3));
	expect_nak(2, A.qp[2].epsn, (uint8_t)(URNIC_AETH_RNR_NAK | A.o.min_rnr_timer),
		   "a SEND on QP 2 with the SRQ empty but for the WQE QP 1 holds");
	fill(dud, sizeof(dud), 6);
	ud_send(A.qp[3].qpn, hostile_qkey(3), 0x000300, A.taddr, dud, 256, true);
	expect_silence("a datagram to UD QP 3 with the SRQ empty");
	n = wcs(w, 16);
	EXPECT(n == 0, "%d completions with the SRQ empty", n);
	settle();
	EXPECT_CTR(s, "nak_inv_req_sent", 1);
	EXPECT_CTR(s, "rnr_nak_sent", 1);
	EXPECT_CTR(s, "drop_no_rwqe", 1);
	EXPECT_CTR(s, "srq_limit_reached", 1);
	ev = events_of(0);
	EXPECT(ev.srq_limit == 1 && ev.last_wqe == 1 && ev.fatal <= 1 && ev.other == 0,
	       "events: %d SRQ limit, %d Last WQE Reached for QP 0, %d QP fatal, %d others; "
	       "expected 1, 1, at most 1, 0",
	       ev.srq_limit, ev.last_wqe, ev.fatal, ev.other);

	/* Three more WQEs of 296 bytes: a datagram one byte too long for the first takes
	 * it (class E), the next lands. */
	srq_post(3, HOSTILE_UD_GRH + 256);
	snap(&s);
	ud_send(A.qp[3].qpn, hostile_qkey(3), 0x000301, A.taddr, dud, 257, true);
	expect_silent_drop(&s, "a datagram one byte too long for the SRQ WQE");
	EXPECT_CTR(s, "drop_recv_too_long", 1);
	n = wcs(w, 16);
	expect_srq_wc(w, n, 3, 4, WC_REM_INV_REQ_ERR, 0, "a datagram one byte too long");
	check_slot(srq_wqe[4].off, "a datagram one byte too long");
	udp = ud_build(A.qp[3].qpn, hostile_qkey(3), 0x000302, A.taddr, false, dud, 256, buf,
		       sizeof(buf));
	send_to(buf, udp, A.taddr, false, true);
	settle();
	n = wcs(w, 16);
	EXPECT(n == 1, "a datagram into the SRQ: %d completions", n);
	expect_ud_in(3, n ? &w[0] : NULL, srq_wqe[5], A.addr, A.taddr, PEER_TOS, PEER_TTL, udp,
		     0x302, dud, 256, "a datagram into the SRQ");

	/* QP 2's SEND again, then QP 1's LAST into the WQE it held. */
	rc_send_acked(2, URNIC_OP_RC_SEND_ONLY, d3, sizeof(d3), "QP 2's SEND after the RNR NAK");
	n = wcs(w, 16);
	expect_srq_wc(w, n, 2, 6, WC_SUCCESS, sizeof(d3), "QP 2's SEND after the RNR NAK");
	memcpy(A.shadow[HR_RECV] + srq_wqe[6].off, d3, sizeof(d3));
	rc_send_acked(1, URNIC_OP_RC_SEND_LAST, held + MTU, 500, "the LAST of QP 1's SEND");
	n = wcs(w, 16);
	expect_srq_wc(w, n, 1, 2, WC_SUCCESS, sizeof(held), "the LAST of QP 1's SEND");
	memcpy(A.shadow[HR_RECV] + srq_wqe[2].off, held, sizeof(held));
	for (int k = 0; k < srq_n; k++)
		check_slot(srq_wqe[k].off, "the SRQ's WQEs at the end");

	ev = events_of(0);
	EXPECT(ev.srq_limit + ev.last_wqe + ev.fatal + ev.other == 0,
	       "%d more events; the limit is disarmed and no other QP failed",
	       ev.srq_limit + ev.last_wqe + ev.fatal + ev.other);
	settle();
	EXPECT_CTR(s, "srq_limit_reached", 0);
	expect_qp_state(1, "RTS");
	expect_qp_state(2, "RTS");
	expect_qp_state(3, "RTS");
	probe(2);
}

/* The group the scenario uses and one nobody joins, from the target's address (so
 * that runs on the host's loopback, one per slot, do not meet). */
static void groups(uint8_t g[4], uint8_t other[4], char *g_s, char *other_s, size_t cap)
{
	g[0] = other[0] = 239;
	g[1] = 77;
	other[1] = 78;
	g[2] = other[2] = A.taddr[2];
	g[3] = other[3] = A.taddr[3];
	snprintf(g_s, cap, "%u.%u.%u.%u", g[0], g[1], g[2], g[3]);
	snprintf(other_s, cap, "%u.%u.%u.%u", other[0], other[1], other[2], other[3]);
}

/* The completions of one datagram to the group: exactly one for each QP in want[]
 * (true), none for the others, each landed in that QP's next receive. */
static void expect_fanout(const bool want[4], const uint8_t *g, size_t udp, uint32_t sqpn,
			  const uint8_t *data, uint32_t len, const char *what)
{
	struct dwc w[16];
	int n = wcs(w, 16), nwant = 0;
	char each[96];

	for (int qi = 1; qi < 4; qi++) {
		int k = wc_of(w, n, qi), again = k >= 0 ? wc_of(w + k + 1, n - k - 1, qi) : -1;

		nwant += want[qi];
		snprintf(each, sizeof(each), "%s: QP %d", what, qi);
		if (!want[qi]) {
			EXPECT(k < 0, "%s: it was not to receive it, and did (wr_id 0x%llx)", each,
			       k >= 0 ? w[k].wr_id : 0);
			if (k >= 0)
				next_slot(qi);
			continue;
		}
		EXPECT(again < 0, "%s: two completions", each);
		expect_ud_landed(qi, k >= 0 ? &w[k] : NULL, A.addr, g, PEER_TOS, MCAST_TTL, udp,
				 sqpn, data, len, each);
	}
	EXPECT(n == nwant, "%s: %d completions, expected %d", what, n, nwant);
}

/* Multicast (ibv_attach_mcast(3); rxe_rcv_mcast_pkt): UD QPs 1 and 2 attached to a
 * group (QP 1 twice), QP 3 not, all three with the group's Q_Key. A datagram to the
 * group (DestQP 0xFFFFFF) reaches QPs 1 and 2 once each; one to a group nobody joined
 * reaches nothing, and one with DestQP 0xFFFFFF to the target's own address is
 * dropped (drop_unknown_qp); wrong and controlled Q_Keys are refused by each
 * member (IBTA 10.2.4). After QP 2 detaches
 * only QP 1 receives; after QP 1 detaches, the target has left the group; QP 3 then
 * attaches and receives. QP 0 is RC (the probe). */
void sc_mcast(void)
{
	struct topts o = ud_topts(4, 3);
	static uint8_t data[256], buf[PKT_MAX];
	char g_s[32], other_s[32];
	uint8_t g[4], other[4];
	const uint32_t qg = 0x22220000u;
	uint32_t bad_qkey[3] = { qg ^ 1, qg | 0x80000000u, 0 };
	struct urnic_ctrfile s;
	struct dwc w[16];
	size_t udp;
	int n;

	start_target(&o);
	set_peer_ttl();
	groups(g, other, g_s, other_s, sizeof(g_s));
	bad_qkey[2] = hostile_qkey(1); /* QP 1's own before it took the group's */
	for (int qi = 1; qi < 4; qi++)
		tcmd("qkey %d %x", qi, qg);
	tcmd("attach 1 %s", g_s);
	tcmd("attach 1 %s", g_s);
	tcmd("attach 2 %s", g_s);
	say("group %s: QPs 1 (twice) and 2 attached, QP 3 not; Q_Key 0x%x", g_s, qg);

	snap(&s);
	fill(data, 200, 1);
	udp = ud_send(MCAST_QPN, qg, 0x000400, g, data, 200, true);
	settle();
	expect_fanout((const bool[4]){ false, true, true, false }, g, udp, 0x400, data, 200,
		      "a datagram to the group");
	EXPECT_CTR(s, "rx_packets", 1);

	/* Groups the target is not in: the kernel has no member for the other one (the
	 * device joins a group when a QP attaches); DestQP 0xFFFFFF on the target's own
	 * address names no group, and no QP: the address's steering drops it before the
	 * engine (transport/share.h: the QPN names the process), as a QP not there. */
	snap(&s);
	ud_send(MCAST_QPN, qg, 0x000401, other, data, 64, false);
	ud_send(MCAST_QPN, qg, 0x000401, A.taddr, data, 64, false);
	EXPECT(wait_ctr("drop_unknown_qp", snap_of(&s, "drop_unknown_qp") + 1) ==
		       snap_of(&s, "drop_unknown_qp") + 1,
	       "DestQP 0xFFFFFF on the target's address: not counted as drop_unknown_qp");
	sleep_ms(SILENCE_MS);
	expect_silent_drop(&s, "datagrams to groups the target is not in");
	EXPECT_CTR(s, "rx_packets", 0);
	EXPECT_CTR(s, "drop_mcast_no_group", 0);
	n = wcs(w, 16);
	EXPECT(n == 0, "%d completions for groups the target is not in", n);

	/* Q_Keys not the group's: refused by each of the two members. */
	snap(&s);
	for (int i = 0; i < 3; i++)
		ud_send(MCAST_QPN, bad_qkey[i], 0x000402, g, data, 64, true);
	expect_silent_drop(&s, "datagrams to the group with other Q_Keys");
	EXPECT_CTR(s, "drop_bad_qkey", 6);
	n = wcs(w, 16);
	EXPECT(n == 0, "%d completions for datagrams with other Q_Keys", n);

	/* QP 2 leaves: only QP 1 receives. QP 1 leaves: nobody is in the group. */
	tcmd("detach 2 %s", g_s);
	fill(data, 128, 2);
	udp = ud_send(MCAST_QPN, qg, 0x000404, g, data, 128, true);
	settle();
	expect_fanout((const bool[4]){ false, true, false, false }, g, udp, 0x404, data, 128,
		      "a datagram to the group after QP 2 left");
	tcmd("detach 1 %s", g_s);
	snap(&s);
	ud_send(MCAST_QPN, qg, 0x000405, g, data, 64, false);
	sleep_ms(SILENCE_MS);
	expect_silent_drop(&s, "a datagram to the group after its last member left");
	EXPECT_CTR(s, "rx_packets", 0);
	n = wcs(w, 16);
	EXPECT(n == 0, "%d completions after the group's last member left", n);

	/* QP 3 joins: it receives; QP 1 still receives what is sent to it. */
	tcmd("attach 3 %s", g_s);
	fill(data, 256, 3);
	udp = ud_send(MCAST_QPN, qg, 0x000406, g, data, 256, true);
	settle();
	expect_fanout((const bool[4]){ false, false, false, true }, g, udp, 0x406, data, 256,
		      "a datagram to the group after QP 3 joined");
	udp = ud_build(A.qp[1].qpn, qg, 0x000407, A.taddr, false, data, 100, buf, sizeof(buf));
	send_to(buf, udp, A.taddr, false, true);
	settle();
	n = wcs(w, 16);
	EXPECT(n == 1, "a unicast datagram to QP 1 afterwards: %d completions", n);
	expect_ud_landed(1, n ? &w[0] : NULL, A.addr, A.taddr, PEER_TOS, PEER_TTL, udp, 0x407, data,
			 100, "a unicast datagram to QP 1 afterwards");
	probe(0);
}

/* The drops of every kind since snapshot s: whatever a device names them. */
static uint64_t drops_since(const struct urnic_ctrfile *s)
{
	struct urnic_ctrfile now;
	uint64_t n = 0;

	snap(&now);
	for (int i = 0; i < URNIC_CTRFILE_COUNT; i++)
		if (strncmp(urnic_ctrfile_names[i], "drop_", 5) == 0)
			n += snap_of(&now, urnic_ctrfile_names[i]) -
			     snap_of(s, urnic_ctrfile_names[i]);
	return n;
}

/* A unicast DestQP on a multicast group's address (IBTA 10.5 and Annex A17.4: a packet
 * to a group carries DestQP 0xFFFFFF and goes to the group's members, UD QPs that
 * attached to it with ibv_attach_mcast(3)): UD QP 1 attached to the group, UD QP 3
 * not, RC QP 0 (connected to us). A datagram to QP 1's and to QP 3's number, and an RC
 * WRITE to QP 0's, each sent to the group's address, must reach no one: no completion,
 * nothing written, no reply, each dropped (under whatever name). The group then still
 * delivers a datagram with DestQP 0xFFFFFF to QP 1 only. */
void sc_mcast_unicast_qpn(void)
{
	struct topts o = ud_topts(4, 3);
	static uint8_t data[256];
	char g_s[32], other_s[32];
	uint8_t g[4], other[4], wdata[32];
	const uint32_t qg = 0x22220000u;
	struct urnic_ctrfile s;
	struct urnic_pkt h;
	static uint8_t buf[PKT_MAX];
	struct urnic_icrc_flow flow;
	struct urnic_frag frag;
	struct dwc w[16];
	size_t udp, len;
	uint64_t dropped;
	int n;

	start_target(&o);
	set_peer_ttl();
	groups(g, other, g_s, other_s, sizeof(g_s));
	for (int qi = 1; qi < 4; qi++)
		tcmd("qkey %d %x", qi, qg);
	tcmd("attach 1 %s", g_s);

	snap(&s);
	fill(data, 64, 1);
	ud_send(A.qp[1].qpn, qg, 0x000500, g, data, 64, true);
	ud_send(A.qp[3].qpn, qg, 0x000501, g, data, 64, true);
	/* The RC WRITE, its ICRC over the group's address. */
	h = write32(0, 512, wdata);
	len = build(&h, wdata, 32, 0, buf, sizeof(buf)) - 4;
	memset(&flow, 0, sizeof(flow));
	memcpy(flow.src, A.addr, 4);
	memcpy(flow.dst, g, 4);
	flow.sport = URNIC_ROCE_UDP_PORT;
	flow.dport = URNIC_ROCE_UDP_PORT;
	frag = (struct urnic_frag){ buf, len };
	urnic_put_le32(buf + len, urnic_icrc_flow(&flow, &frag, 1, len));
	send_to(buf, len + 4, g, false, true);
	expect_silent_drop(&s, "a unicast DestQP on the group's address");
	dropped = drops_since(&s);
	EXPECT(dropped == 3, "3 packets with a unicast DestQP on the group's address: %llu dropped",
	       (unsigned long long)dropped);
	n = wcs(w, 16);
	EXPECT(n == 0, "%d completions for datagrams with a unicast DestQP on the group's address",
	       n);
	for (int k = 0; k < n; k++)
		say("  a completion on QP %d (%s), byte_len %u", w[k].qp,
		    w[k].qp == 1 ? "attached to the group" : "not attached to the group",
		    w[k].byte_len);
	/* What was wrongly taken is reported above; the checks below go on from it. */
	for (int k = 0; k < n; k++) {
		uint32_t slot;

		if (w[k].qp <= 0)
			continue;
		slot = next_slot(w[k].qp);
		read_bytes(slot, HOSTILE_RECV_SLOT, A.shadow[HR_RECV] + slot);
	}
	if (n)
		tcmd("post 1 2");
	if (ctr("ack_sent") != snap_of(&s, "ack_sent")) {
		say("the RC WRITE to the group's address was executed and ACKed");
		memcpy(A.shadow[HR_RW] + 512, wdata, sizeof(wdata));
		A.qp[0].msn++;
		A.qp[0].epsn = urnic_psn_add(A.qp[0].epsn, 1);
	}

	/* The group still delivers, to its member only. */
	fill(data, 128, 2);
	udp = ud_send(MCAST_QPN, qg, 0x000502, g, data, 128, true);
	settle();
	expect_fanout((const bool[4]){ false, true, false, false }, g, udp, 0x502, data, 128,
		      "a datagram to the group");
	probe(0);
}
