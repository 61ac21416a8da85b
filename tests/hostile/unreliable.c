/* SPDX-License-Identifier: MIT */
/*
 * unreliable.c - hostile scenarios on UC (IBTA 9.8): requests get no NAK, a refused one
 * does not break the QP, and the responder resynchronises on any FIRST/ONLY whatever its
 * PSN, so a peer may send anything, as often as it likes, and learns nothing from the
 * answer. R_Keys guessed in bulk (IBTA 10.6: an R_Key is all that names a region);
 * forged sequences, keys, bounds and lengths, each dropped without a byte written.
 * Out of scope: grants that end inside a message (lifetime.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "attacker.h"
#include "wire/byteorder.h"

enum {
	GUESS_BYTES = 16,     /* payload of one guess: a marker and the key it tried */
	GUESS_BATCH = 256,    /* datagrams per sendmmsg */
	GUESS_WINDOW = 2048,  /* guesses sent and not yet taken in by the target */
	GUESS_TIME_MS = 20000 /* the whole spray, so the scenario stays within its budget */
};

static const uint8_t guess_marker[12] = "urnic-guess:";

/* UC WRITE_ONLY of GUESS_BYTES to va with R_Keys idx << 16 | 0 .. 0xffff, in sendmmsg
 * batches. Returns the guesses sent (fewer if the deadline came first). */
static uint32_t spray_index(int qi, uint64_t va, uint32_t idx, uint64_t deadline)
{
	static uint8_t pkt[GUESS_BATCH][128];
	struct mmsghdr msg[GUESS_BATCH];
	struct iovec iov[GUESS_BATCH];
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(URNIC_ROCE_UDP_PORT) };
	uint32_t k = 0;

	memcpy(&to.sin_addr, A.taddr, 4);
	while (k < 0x10000 && now_ms() < deadline) {
		uint32_t n = 0;

		for (; n < GUESS_BATCH && k < 0x10000; n++, k++) {
			/* The PSN is anything: a UC ONLY resynchronises (IBTA 9.8). */
			struct urnic_pkt h = hdr(qi, URNIC_OP_UC_RDMA_WRITE_ONLY, k * 7919u);
			uint8_t data[GUESS_BYTES];
			uint32_t rkey = idx << 16 | k;

			h.bth.ackreq = false;
			h.reth = (struct urnic_reth){ va, rkey, GUESS_BYTES };
			memcpy(data, guess_marker, sizeof(guess_marker));
			urnic_put_be32(data + 12, rkey);
			iov[n].iov_base = pkt[n];
			iov[n].iov_len = build(&h, data, GUESS_BYTES, 0, pkt[n], sizeof(pkt[n]));
			memset(&msg[n], 0, sizeof(msg[n]));
			msg[n].msg_hdr.msg_name = &to;
			msg[n].msg_hdr.msg_namelen = sizeof(to);
			msg[n].msg_hdr.msg_iov = &iov[n];
			msg[n].msg_hdr.msg_iovlen = 1;
		}
		send_all(msg, n);
		A.rx_sent += n;
		keep_up(GUESS_WINDOW);
	}
	return k;
}

/* Whether a guess landed in region r: the first GUESS_BYTES are then the marker and the
 * key that worked (*key). */
static bool guess_landed(int r, uint32_t *key)
{
	uint8_t got[GUESS_BYTES];
	const char *hex;

	settle();
	tcmd("read %s 0 %d", A.rname[r], GUESS_BYTES);
	REQUIRE(A.nans == 1 && strncmp(A.ans[0], "data ", 5) == 0, "read %s", A.rname[r]);
	hex = A.ans[0] + 5;
	for (int i = 0; i < GUESS_BYTES; i++) {
		unsigned v;

		REQUIRE(sscanf(hex + 2 * i, "%2x", &v) == 1, "read %s: '%s'", A.rname[r], hex);
		got[i] = (uint8_t)v;
	}
	if (memcmp(got, guess_marker, sizeof(guess_marker)) != 0)
		return false;
	*key = urnic_get_be32(got + 12);
	return true;
}

/* Sprays the three indexes after hi for region r's key (3 x 65,536 guesses, within
 * deadline); true and *key if one landed. */
static bool guess_region(int r, uint32_t hi, uint64_t deadline, uint32_t *sent, uint32_t *key)
{
	uint64_t t0 = now_ms();
	uint32_t n = 0;
	bool landed = false;

	for (uint32_t c = 1; c <= 3 && !landed && now_ms() < deadline; c++) {
		n += spray_index(1, A.mr[r].addr, hi + c, deadline);
		landed = guess_landed(r, key);
	}
	say("region %s: %u guesses at indexes 0x%x..0x%x in %llu ms: %s", A.rname[r], n, hi + 1,
	    hi + 3, (unsigned long long)(now_ms() - t0),
	    landed	      ? "one landed"
	    : n < 3 * 0x10000 ? "none landed (stopped at the time limit)"
			      : "none landed");
	*sent += n;
	return landed;
}

/* A region registered while the peer is connected, its address told but not its key
 * (target `reg secret 4096 w`). The peer knows the six start-up keys; if keys were a
 * table index that grows by one and 16 random bits, the new key's index would be the
 * highest known plus one and 65,536 UC WRITEs would find it, in silence, the QP still
 * in RTS. Keys with an unpredictable index (and 16 more random bits) leave the spray
 * 3 / 65,535 to hit the index at all: nothing lands, each guess is drop_uc_invalid. A
 * hit may be that chance, so a second region is guessed the same way: two hits in a
 * row (odds 1 in 4.8e8 with random indexes) are no luck. */
void sc_uc_key_guess(void)
{
	struct topts o = topts_default(2);
	struct urnic_ctrfile s;
	uint32_t hi = 0, sent = 0, key = 0, hits = 0;
	uint64_t deadline;
	int r;

	o.recv = 0;
	o.uc = 1;
	start_target(&o);
	for (int i = 0; i < HR_COUNT; i++)
		if (A.mr[i].rkey >> 16 > hi)
			hi = A.mr[i].rkey >> 16;
	snap(&s);
	deadline = now_ms() + GUESS_TIME_MS;
	r = add_region("secret", 4096, "w");
	if (guess_region(r, hi, deadline, &sent, &key)) {
		hits++;
		say("R_Key 0x%x of region secret guessed; once more, with a new region", key);
		memcpy(A.shadow[r], guess_marker, sizeof(guess_marker));
		urnic_put_be32(A.shadow[r] + 12, key);
		if (key >> 16 > hi)
			hi = key >> 16;
		r = add_region("secret2", 4096, "w");
		if (guess_region(r, hi, deadline + GUESS_TIME_MS / 2, &sent, &key))
			hits++;
	}
	EXPECT(hits < 2,
	       "R_Keys of two regions registered in turn guessed from the keys before them (the "
	       "second 0x%x), %u guesses in all",
	       key, sent);
	settle();
	EXPECT_CTR(s, "drop_uc_invalid", sent - hits);
	EXPECT_CTR(s, "drop_socket_overflow", 0);
	EXPECT_CTR(s, "tx_packets", 0);
	expect_qp_state(1, "RTS");
	good_uc_write(1, HR_RW, 2048, 64, 3, 0x5a5a5a, "a good WRITE on the UC QP afterwards");
	probe(0);
}

/* The receive buffer at slot of region recv after a SEND of n bytes (sent) that
 * followed one too long for it (its first 2 MTUs filled with seed 21): the first n
 * bytes are the SEND's; the rest may hold what the refused SEND placed before it was
 * found too long (the buffer was the peer's to fill, IBTA 9.8), or what was there. */
static void check_recv_slot(uint32_t slot, const uint8_t *sent, uint32_t n)
{
	static uint8_t got[HOSTILE_RECV_SLOT], refused[HOSTILE_RECV_SLOT];
	const uint8_t *before = A.shadow[HR_RECV] + slot;

	fill(refused, sizeof(refused), 21);
	tcmd("read recv %u %d", slot, HOSTILE_RECV_SLOT);
	REQUIRE(A.nans == 1 && strncmp(A.ans[0], "data ", 5) == 0, "read recv");
	for (uint32_t i = 0; i < HOSTILE_RECV_SLOT; i++) {
		unsigned v = 0;

		sscanf(A.ans[0] + 5 + 2 * i, "%2x", &v);
		got[i] = (uint8_t)v;
	}
	EXPECT(memcmp(got, sent, n) == 0, "the SEND did not land in receive buffer %u", slot);
	EXPECT(memcmp(got + n, before + n, sizeof(got) - n) == 0 ||
		       memcmp(got + n, refused + n, sizeof(got) - n) == 0,
	       "receive buffer %u holds bytes neither SEND sent", slot);
	memcpy(A.shadow[HR_RECV] + slot, got, sizeof(got));
}

/* A UC packet of opcode op on QP qi at psn; RETH for FIRST/ONLY WRITEs. */
static void uc_pkt(int qi, uint8_t op, uint32_t psn, uint64_t va, uint32_t rkey, uint32_t len,
		   const uint8_t *data, uint32_t n)
{
	struct urnic_pkt h = hdr(qi, op, psn);

	h.bth.ackreq = false;
	if (urnic_opcode_info(op)->flags & URNIC_OPF_RETH)
		h.reth = (struct urnic_reth){ va, rkey, len };
	xmit(&h, data, n, 0);
}

/* UC requests with arbitrary PSNs (IBTA 9.8): a good ONLY lands; MIDDLE/LAST without a
 * FIRST, WRITEs with a bad R_Key, out of bounds, to regions without remote write, one
 * longer than max_msg_sz (URNIC_LIMITS; C9-94), a SEND longer than the posted receive:
 * each dropped in silence and counted, nothing written; the QP stays in RTS and takes a
 * good WRITE and SEND afterwards. QP 0 is RC (the liveness probe), QP 1 UC. */
void sc_uc_injection(void)
{
	struct topts o = topts_default(2);
	const struct mrinfo *rw, *ro, *no;
	static uint8_t data[4 * MTU], big_data[65536];
	struct urnic_ctrfile s;
	struct wcx w[16];
	uint32_t slot, psn;
	int big, n;

	o.recv = 2;
	o.uc = 1;
	o.env = "URNIC_LIMITS=max_msg_sz=65536";
	start_target(&o);
	big = add_region("big", 131072, "wk");
	rw = &A.mr[HR_RW];
	ro = &A.mr[HR_RO];
	no = &A.mr[HR_NONE];
	fill(data, sizeof(data), 21);

	good_uc_write(1, HR_RW, 256, 64, 4, 0x123456, "a WRITE_ONLY at an arbitrary PSN");

	/* MIDDLE/LAST without FIRST: at the expected PSN (after the ONLY, the WRITE's data
	 * would go on at rw + 320), then anywhere. */
	snap(&s);
	uc_pkt(1, URNIC_OP_UC_RDMA_WRITE_MIDDLE, A.qp[1].epsn, 0, 0, 0, data, MTU);
	uc_pkt(1, URNIC_OP_UC_RDMA_WRITE_MIDDLE, 0x000777, 0, 0, 0, data, MTU);
	uc_pkt(1, URNIC_OP_UC_RDMA_WRITE_LAST, 0x7abcde, 0, 0, 0, data, 100);
	expect_silent_drop(&s, "MIDDLE/LAST without a FIRST");
	EXPECT_CTR(s, "drop_uc_seq", 3);

	/* Not granted: R_Keys, bounds, rights; a FIRST refused takes its message with it. */
	snap(&s);
	uc_pkt(1, URNIC_OP_UC_RDMA_WRITE_ONLY, 0x2222, rw->addr, rw->rkey ^ 0x5a, 16, data, 16);
	uc_pkt(1, URNIC_OP_UC_RDMA_WRITE_ONLY, 0x0101, rw->addr, rw->rkey ^ 0x00a50000, 16, data,
	       16);
	uc_pkt(1, URNIC_OP_UC_RDMA_WRITE_ONLY, 0x3333, rw->addr + rw->len - 8, rw->rkey, 16, data,
	       16);
	uc_pkt(1, URNIC_OP_UC_RDMA_WRITE_ONLY, 0x4444, rw->addr - 16, rw->rkey, 16, data, 16);
	uc_pkt(1, URNIC_OP_UC_RDMA_WRITE_ONLY, 0x5555, ro->addr, ro->rkey, 16, data, 16);
	uc_pkt(1, URNIC_OP_UC_RDMA_WRITE_ONLY, 0x6666, no->addr, no->rkey, 16, data, 16);
	psn = 0xfffffe; /* the message wraps the PSN space: no matter */
	uc_pkt(1, URNIC_OP_UC_RDMA_WRITE_FIRST, psn, rw->addr, rw->rkey ^ 1, 3 * MTU, data, MTU);
	uc_pkt(1, URNIC_OP_UC_RDMA_WRITE_MIDDLE, urnic_psn_add(psn, 1), 0, 0, 0, data + MTU, MTU);
	uc_pkt(1, URNIC_OP_UC_RDMA_WRITE_LAST, urnic_psn_add(psn, 2), 0, 0, 0, data + 2 * MTU, MTU);
	expect_silent_drop(&s, "WRITEs not granted");
	EXPECT_CTR(s, "drop_uc_invalid", 7);
	EXPECT_CTR(s, "drop_uc_seq", 2);

	/* max_msg_sz 65536: a WRITE of 65536 bytes lands, one of 65537 does not, though the
	 * region grants it (128 KiB). */
	fill(big_data, sizeof(big_data), 22);
	psn = 0x0abcde;
	for (uint32_t k = 0; k < 64; k++)
		uc_pkt(1,
		       k == 0	 ? URNIC_OP_UC_RDMA_WRITE_FIRST
		       : k == 63 ? URNIC_OP_UC_RDMA_WRITE_LAST
				 : URNIC_OP_UC_RDMA_WRITE_MIDDLE,
		       urnic_psn_add(psn, k), A.mr[big].addr, A.mr[big].rkey, sizeof(big_data),
		       big_data + k * MTU, MTU);
	expect_silence("a UC WRITE of max_msg_sz bytes");
	memcpy(A.shadow[big], big_data, sizeof(big_data));
	snap(&s);
	fill(big_data, MTU, 23);
	uc_pkt(1, URNIC_OP_UC_RDMA_WRITE_FIRST, 0x0c0c0c, A.mr[big].addr + 32768, A.mr[big].rkey,
	       65537, big_data, MTU);
	uc_pkt(1, URNIC_OP_UC_RDMA_WRITE_MIDDLE, 0x0c0c0d, 0, 0, 0, big_data, MTU);
	expect_silent_drop(&s, "a UC WRITE_FIRST of max_msg_sz + 1 bytes");
	EXPECT_CTR(s, "drop_uc_invalid", 1);
	EXPECT_CTR(s, "drop_uc_seq", 1);

	/* A SEND of 2056 bytes into a 2048-byte receive buffer. */
	snap(&s);
	psn = 0x600000;
	uc_pkt(1, URNIC_OP_UC_SEND_FIRST, psn, 0, 0, 0, data, MTU);
	uc_pkt(1, URNIC_OP_UC_SEND_MIDDLE, urnic_psn_add(psn, 1), 0, 0, 0, data + MTU, MTU);
	uc_pkt(1, URNIC_OP_UC_SEND_LAST, urnic_psn_add(psn, 2), 0, 0, 0, data + 2 * MTU, 8);
	expect_silent_drop(&s, "a SEND longer than the receive buffer");
	EXPECT_CTR(s, "drop_recv_too_long", 1);
	n = target_wcs(w, 16);
	EXPECT(n == 0, "%d completions after the SEND that did not fit", n);

	/* Still in RTS, still served. */
	expect_qp_state(1, "RTS");
	good_uc_write(1, HR_RW, 4096, 128, 5, 0x0f0f0f, "a WRITE on the UC QP afterwards");
	slot = A.qp[1].rq_off[A.qp[1].rq_head %
			      (sizeof(A.qp[1].rq_off) / sizeof(A.qp[1].rq_off[0]))];
	fill(data, 100, 24);
	uc_pkt(1, URNIC_OP_UC_SEND_ONLY, 0x700000, 0, 0, 0, data, 100);
	expect_silence("a SEND on the UC QP afterwards");
	n = target_wcs(w, 16);
	EXPECT(n == 1 && w[0].qp == 1 && w[0].status == 0 && w[0].byte_len == 100,
	       "the SEND afterwards: %d completions (qp %d status %d byte_len %u)", n,
	       n ? w[0].qp : -1, n ? w[0].status : -1, n ? w[0].byte_len : 0);
	if (n == 1)
		check_recv_slot(slot, data, 100);
	A.qp[1].rq_head++;
	probe(0);
}
