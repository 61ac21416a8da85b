/* SPDX-License-Identifier: MIT */
/*
 * test_udp_send.c - what urnic_udp_send (src/transport/udp.c) hands the kernel: every
 * message of a batch is one buffer, the batch's packets laid out as they go on the wire
 * (headers, payload gathered from its fragments, pad and ICRC), whether the message is a
 * single packet or a GSO run. The kernel's gather of many small iovecs per message cost
 * more than the copy (docs/performance.md, "Tx batch and wire buffer").
 *
 * The packets are built as the protocol builds them (urnic_tx_begin, urnic_tx_commit,
 * which lay them out in the engine's tx batch). The test's own sendmmsg and sendmsg
 * (a run of one message) stand in front of libc's (the executable's symbols win) and
 * record each message's iovec count before passing the call on; a plain socket on
 * 127.0.9.2:4791 (loopback, without UDP_GRO, so GSO runs arrive cut into their
 * segments) receives what urnic sent from 127.0.9.1 and compares it byte for byte with
 * the packets, except the ICRC: the transport sets it for each GSO segment's IPv4 ID
 * (icrc_gso.h), which tests/wire/test_icrc_gso.c checks.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "engine/engine.h"
#include "transport/udp.h"

static unsigned int sends, msgs_seen, max_iovlen;

int sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags)
{
	static int (*real)(int, struct mmsghdr *, unsigned int, int);

	if (!real)
		real = (int (*)(int, struct mmsghdr *, unsigned int, int))dlsym(RTLD_NEXT,
										"sendmmsg");
	sends++;
	for (unsigned int i = 0; i < n; i++) {
		msgs_seen++;
		if (v[i].msg_hdr.msg_iovlen > max_iovlen)
			max_iovlen = (unsigned int)v[i].msg_hdr.msg_iovlen;
	}
	return real(fd, v, n, flags);
}

/* A run of one message leaves by sendmsg (udp.c): recorded the same way. */
ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
	static ssize_t (*real)(int, const struct msghdr *, int);

	if (!real)
		real = (ssize_t(*)(int, const struct msghdr *, int))dlsym(RTLD_NEXT, "sendmsg");
	sends++;
	msgs_seen++;
	if (m->msg_iovlen > max_iovlen)
		max_iovlen = (unsigned int)m->msg_iovlen;
	return real(fd, m, flags);
}

static struct urnic_udp u;
static struct urnic_engine e;
static struct urnic_qp qp; /* only its peer: 127.0.9.2, source port 4791 */
static uint8_t payload[3][4096];

/* Queues packet k as the protocol does (urnic_tx_begin, urnic_tx_commit): `hdr` header
 * bytes of pattern k, payload from up to three fragments of the payload buffers. */
static void queue(uint32_t hdr, const uint32_t *frag_len, uint32_t nfrags)
{
	uint8_t k = (uint8_t)e.tx.n;
	struct urnic_txpkt *p = urnic_tx_begin(&e, &qp);

	p->hdr_bytes = hdr;
	memset(p->hdr, 0xa0 + k, hdr);
	for (uint32_t f = 0; f < nfrags; f++) {
		p->frags[f] = (struct urnic_frag){ payload[f] + k, frag_len[f] };
		p->payload_bytes += frag_len[f];
	}
	p->nfrags = nfrags;
	urnic_tx_commit(&e, p);
}

/* The wire bytes of packet p, as expected: everything but the ICRC. */
static uint32_t expect(const struct urnic_txpkt *p, uint8_t *out)
{
	uint32_t n = 0;

	memcpy(out, p->hdr, p->hdr_bytes);
	n += p->hdr_bytes;
	for (uint32_t f = 0; f < p->nfrags; f++) {
		memcpy(out + n, p->frags[f].base, p->frags[f].len);
		n += (uint32_t)p->frags[f].len;
	}
	return n;
}

static void test_one_buffer_per_message(void)
{
	static const uint32_t mtu[1] = { 4096 }, three[3] = { 1000, 96, 3000 }, tiny[1] = { 8 },
			      tail[2] = { 2048, 1024 };
	static struct urnic_txpkt sent[URNIC_TX_BATCH];
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(URNIC_ROCE_UDP_PORT) };
	const uint8_t src[4] = { 127, 0, 9, 1 };
	struct timeval tv = { 2, 0 };
	int one = 1, bufsz = 4 << 20, rx;
	uint32_t npkts;

	for (int f = 0; f < 3; f++)
		for (int i = 0; i < 4096; i++)
			payload[f][i] = (uint8_t)(i * 7 + f);
	rx = socket(AF_INET, SOCK_DGRAM, 0);
	CHECK(rx >= 0);
	a.sin_addr.s_addr = htonl(0x7f000902);
	CHECK(setsockopt(rx, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0);
	CHECK(setsockopt(rx, SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof(bufsz)) == 0);
	CHECK(setsockopt(rx, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0);
	CHECK(bind(rx, (struct sockaddr *)&a, sizeof(a)) == 0);
	CHECK_EQ(urnic_udp_open(&u, false, src, "127.0.9.1", URNIC_UDP_ROCE), 0);
	CHECK(u.gso); /* loopback does UDP GSO: the runs below are runs */
	qp.attr.peer.ip[0] = 127;
	qp.attr.peer.ip[2] = 9;
	qp.attr.peer.ip[3] = 2;
	qp.attr.peer.sport = URNIC_ROCE_UDP_PORT;

	/* A 64 KiB WRITE's shape: a FIRST with a longer header and 15 MTU-sized packets,
	 * then a packet gathered from three fragments, an 8-byte WRITE ONLY and two more of
	 * decreasing size: GSO runs, each ended by a shorter packet or the size limit. */
	queue(28, mtu, 1);
	for (int i = 0; i < 15; i++)
		queue(12, mtu, 1);
	queue(12, three, 3);
	queue(28, tiny, 1);
	queue(12, tail, 1);
	queue(12, tail + 1, 1);
	npkts = e.tx.n;
	memcpy(sent, e.tx.pkts, sizeof(sent[0]) * npkts);
	urnic_udp_send(&u, &e.tx, e.stats.counters);
	CHECK_EQ(e.tx.n, 0);
	CHECK(sends >= 1);
	CHECK(msgs_seen < npkts); /* runs were formed */
	CHECK_EQ(max_iovlen, 1);

	for (uint32_t k = 0; k < npkts; k++) {
		static uint8_t got[8192], want[8192];
		ssize_t n = recv(rx, got, sizeof(got), 0);
		uint32_t w = expect(&sent[k], want);

		CHECK_EQ(n, w + sent[k].trailer_bytes);
		CHECK(memcmp(got, want, w) == 0);
	}
	urnic_udp_close(&u);
	close(rx);
}

/* The buffers the data path writes are resident from the start: no page faults in the
 * first packets of a stream (urnic_udp_open for the receive buffers, urnic_engine_init
 * for the send side's tx batch). */
static void test_buffers_resident(void)
{
	const uint8_t src[4] = { 127, 0, 9, 1 };
	long page = sysconf(_SC_PAGESIZE);
	struct urnic_udp *v = calloc(1, sizeof(*v)); /* fresh, untouched pages */
	struct urnic_engine *en = calloc(1, sizeof(*en));
	const struct {
		const uint8_t *p;
		size_t len;
	} bufs[2] = { { &v->rx_buf[0][0], sizeof(v->rx_buf) },
		      { en->tx.wire, sizeof(en->tx.wire) } };

	CHECK(v && en);
	CHECK_EQ(urnic_udp_open(v, false, src, "127.0.9.1", URNIC_UDP_ROCE), 0);
	CHECK_EQ(urnic_engine_init(en, false, src, NULL, NULL, 1), 0);
	for (int b = 0; b < 2; b++) {
		uintptr_t start =
			((uintptr_t)bufs[b].p + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
		uintptr_t end = ((uintptr_t)bufs[b].p + bufs[b].len) & ~(uintptr_t)(page - 1);
		size_t n = (end - start) / (size_t)page;
		unsigned char *vec = malloc(n);

		CHECK(vec);
		CHECK(mincore((void *)start, end - start, vec) == 0);
		for (size_t i = 0; i < n; i++)
			CHECK(vec[i] & 1);
		free(vec);
	}
	urnic_engine_fini(en);
	urnic_udp_close(v);
	free(en);
	free(v);
}

/* The tx batch has room for a batch of the largest packets the protocol builds (a path MTU
 * of payload): a packet larger than that is refused at commit and counted, not laid
 * out past its slot; the next packet takes the slot. */
static void test_oversize_packet_refused(void)
{
	static const uint32_t too_big[2] = { 4096, 4 }, fits[1] = { 4096 };
	uint64_t refused = e.stats.counters[URNIC_CTR_drop_tx_failed];

	e.tx.n = 0;
	queue(12, too_big, 2);
	CHECK_EQ(e.tx.n, 0);
	CHECK_EQ(e.stats.counters[URNIC_CTR_drop_tx_failed], refused + 1);
	queue(12, fits, 1);
	CHECK_EQ(e.tx.n, 1);
	CHECK(e.tx.pkts[0].wire == e.tx.wire);
	CHECK_EQ(urnic_txpkt_bytes(&e.tx.pkts[0]), 12 + 4096 + 4);
	e.tx.n = 0;
}

int main(void)
{
	RUN(test_one_buffer_per_message);
	RUN(test_buffers_resident);
	RUN(test_oversize_packet_refused);
	return 0;
}
