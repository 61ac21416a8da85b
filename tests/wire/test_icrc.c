/* SPDX-License-Identifier: MIT */
/*
 * test_icrc.c - the ICRC covers what it must, masks what it must, and does not care how
 * the payload is split into fragments.
 *
 * IBTA Annex A17.3.3 / reference 2.4: a CRC detects every single-bit error, so flipping
 * any covered bit of a golden rxe packet changes the ICRC, while IPv4 TOS, TTL and
 * header checksum, UDP checksum and BTH byte 4 are masked. Both urnic_icrc_* are also
 * compared with a naive bit-at-a-time CRC-32 over an explicitly built masked copy.
 * urnic_icrc_ipv4_id() must find the IPv4 ID of every packet rxe sent, and of synthetic
 * packets of every length up to 64 KiB, and refuse nearly every corruption.
 * Usage: test_icrc GOLDEN_DIR.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pcap.h"
#include "pktgen.h"
#include "wire/byteorder.h"

/* A captured packet, copied out of the pcap: IP header, UDP header, UDP payload. */
struct golden {
	uint8_t ip[60];
	size_t ip_bytes;
	uint8_t udp[8];
	uint8_t payload[2048];
	size_t payload_bytes; /* including the ICRC */
};

static const char *golden_dir;

/* The first IPv4 RoCEv2 packet with this opcode in the capture. */
static void load(struct golden *g, const char *file, uint8_t opcode)
{
	struct wire_pcap pc;
	struct wire_frame fr;
	struct wire_udp u;
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", golden_dir, file);
	CHECK_EQ(wire_pcap_open(&pc, path), 0);
	while (wire_pcap_next(&pc, &fr) == 1) {
		if (!wire_frame_udp(&fr, &u) || u.dport != URNIC_ROCE_UDP_PORT || u.ipv6 ||
		    u.payload_bytes < URNIC_BTH_BYTES || u.payload[0] != opcode)
			continue;
		CHECK(u.ip_bytes <= sizeof(g->ip) && u.payload_bytes <= sizeof(g->payload));
		memcpy(g->ip, u.ip, u.ip_bytes);
		g->ip_bytes = u.ip_bytes;
		memcpy(g->udp, u.udp, 8);
		memcpy(g->payload, u.payload, u.payload_bytes);
		g->payload_bytes = u.payload_bytes;
		wire_pcap_close(&pc);
		return;
	}
	fprintf(stderr, "%s: no opcode 0x%02x\n", path, opcode);
	CHECK(0);
}

static size_t covered(const struct golden *g)
{
	return g->payload_bytes - URNIC_ICRC_BYTES;
}

static uint32_t raw(const struct golden *g)
{
	return urnic_icrc_raw(g->ip, g->ip_bytes, g->udp, g->payload, covered(g));
}

static uint32_t on_wire(const struct golden *g)
{
	return urnic_get_le32(g->payload + covered(g));
}

/* CRC-32 (IEEE 802.3, reflected), one bit at a time: the model, not the implementation. */
static uint32_t naive_crc32(uint32_t crc, const uint8_t *p, size_t len)
{
	size_t i;
	int k;

	crc = ~crc;
	for (i = 0; i < len; i++) {
		crc ^= p[i];
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
	}
	return ~crc;
}

/* Reference 2.4 step by step: 8 x 0xff, masked IP, masked UDP, masked BTH, the rest. */
static uint32_t naive_icrc(const uint8_t *ip, size_t ip_bytes, const uint8_t *udp,
			   const uint8_t *payload, size_t payload_bytes)
{
	static uint8_t s[8 + 60 + 8 + 4096];
	size_t n = 0;

	CHECK(ip_bytes <= 60 && payload_bytes <= 4096);
	memset(s, 0xff, 8);
	n = 8;
	memcpy(s + n, ip, ip_bytes);
	if ((ip[0] >> 4) == 4) {
		s[n + 1] = 0xff;
		s[n + 8] = 0xff;
		s[n + 10] = s[n + 11] = 0xff;
	} else {
		s[n] |= 0x0f;
		s[n + 1] = s[n + 2] = s[n + 3] = 0xff;
		s[n + 7] = 0xff;
	}
	n += ip_bytes;
	memcpy(s + n, udp, 8);
	s[n + 6] = s[n + 7] = 0xff;
	n += 8;
	memcpy(s + n, payload, payload_bytes);
	s[n + 4] = 0xff;
	n += payload_bytes;
	return naive_crc32(0, s, n);
}

static void seed_is_eight_ones_bytes(void)
{
	static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	/* rxe_icrc.c's seed 0xdebb20e3 is the uninverted register after 8 x 0xff. */
	CHECK_EQ(~naive_crc32(0, ones, 8), 0xdebb20e3u);
}

static void golden_icrc_matches_naive_model(void)
{
	static const struct {
		const char *file;
		uint8_t opcode;
	} picks[] = {
		{ "rxe_rc_write.pcap", URNIC_OP_RC_RDMA_WRITE_FIRST },
		{ "rxe_rc_read.pcap", URNIC_OP_RC_RDMA_READ_RESPONSE_MIDDLE },
		{ "rxe_rc_atomic.pcap", URNIC_OP_RC_ATOMIC_ACKNOWLEDGE },
		{ "rxe_ud_send.pcap", URNIC_OP_UD_SEND_ONLY },
		{ "rxe_rc_send.pcap", URNIC_OP_RC_ACKNOWLEDGE },
	};
	static struct golden g;
	size_t i;

	for (i = 0; i < sizeof(picks) / sizeof(picks[0]); i++) {
		load(&g, picks[i].file, picks[i].opcode);
		CHECK_EQ(raw(&g), on_wire(&g));
		CHECK_EQ(naive_icrc(g.ip, g.ip_bytes, g.udp, g.payload, covered(&g)), on_wire(&g));
	}
}

static bool is_masked(size_t region, size_t off)
{
	switch (region) {
	case 0: /* IPv4: TOS, TTL, header checksum */
		return off == 1 || off == 8 || off == 10 || off == 11;
	case 1: /* UDP checksum */
		return off == 6 || off == 7;
	default: /* BTH byte 4: FECN, BECN, Resv6 */
		return off == 4;
	}
}

static void every_covered_bit_flip_changes_icrc(void)
{
	static struct golden g;
	uint8_t *regions[3];
	size_t sizes[3], r, off, changed = 0, masked = 0;
	uint32_t base;
	int b;

	load(&g, "rxe_rc_write.pcap", URNIC_OP_RC_RDMA_WRITE_FIRST);
	base = raw(&g);
	CHECK_EQ(base, on_wire(&g));
	regions[0] = g.ip;
	sizes[0] = g.ip_bytes;
	regions[1] = g.udp;
	sizes[1] = 8;
	regions[2] = g.payload;
	sizes[2] = covered(&g);
	for (r = 0; r < 3; r++) {
		for (off = 0; off < sizes[r]; off++) {
			for (b = 0; b < 8; b++) {
				regions[r][off] ^= (uint8_t)(1u << b);
				if (is_masked(r, off)) {
					CHECK_EQ(raw(&g), base);
					masked++;
				} else {
					CHECK(raw(&g) != base);
					changed++;
				}
				regions[r][off] ^= (uint8_t)(1u << b);
			}
		}
	}
	CHECK_EQ(raw(&g), base);
	CHECK_EQ(masked, 8 * 7);
	printf("    %zu covered bit flips changed the ICRC, %zu masked ones did not\n", changed,
	       masked);
}

static void flow_from(struct urnic_icrc_flow *flow, const struct golden *g)
{
	memset(flow, 0, sizeof(*flow));
	flow->ip_id = urnic_get_be16(g->ip + 4);
	memcpy(flow->src, g->ip + 12, 4);
	memcpy(flow->dst, g->ip + 16, 4);
	flow->sport = urnic_get_be16(g->udp);
	flow->dport = urnic_get_be16(g->udp + 2);
}

/* A packet of any size split anywhere: a WRITE_FIRST, fed in pieces, and an ACK,
 * which urnic_icrc_flow gathers whole into one CRC call (ICRC_GATHER_BYTES). */
static void split_anywhere(int opcode)
{
	static struct golden g;
	struct urnic_icrc_flow flow;
	struct urnic_frag f[5];
	struct wire_rng rng = { 7 };
	size_t len, i, j, round;

	load(&g, "rxe_rc_write.pcap", opcode);
	flow_from(&flow, &g);
	len = covered(&g);
	f[0].base = g.payload;
	f[0].len = len;
	CHECK_EQ(urnic_icrc_flow(&flow, f, 1, len), on_wire(&g));

	/* Two pieces, every split point (inside the BTH too). */
	for (i = 0; i <= len; i++) {
		f[0].len = i;
		f[1].base = g.payload + i;
		f[1].len = len - i;
		CHECK_EQ(urnic_icrc_flow(&flow, f, 2, len), on_wire(&g));
	}
	/* Three pieces, every pair of split points in the first 64 bytes. */
	for (i = 0; i <= 64 && i <= len; i++) {
		for (j = i; j <= 64 && j <= len; j++) {
			f[0].len = i;
			f[1].base = g.payload + i;
			f[1].len = j - i;
			f[2].base = g.payload + j;
			f[2].len = len - j;
			CHECK_EQ(urnic_icrc_flow(&flow, f, 3, len), on_wire(&g));
		}
	}
	/* Five pieces at random points, some empty, as scatter/gather lists give. */
	for (round = 0; round < 2000; round++) {
		size_t cuts[6] = { 0, 0, 0, 0, 0, len }, k, t;

		for (k = 1; k < 5; k++)
			cuts[k] = wire_rng_below(&rng, (uint32_t)len + 1);
		for (k = 1; k < 5; k++) /* insertion sort */
			for (t = k; t > 0 && cuts[t - 1] > cuts[t]; t--) {
				size_t tmp = cuts[t];

				cuts[t] = cuts[t - 1];
				cuts[t - 1] = tmp;
			}
		for (k = 0; k < 5; k++) {
			f[k].base = cuts[k + 1] > cuts[k] ? g.payload + cuts[k] : NULL;
			f[k].len = cuts[k + 1] - cuts[k];
		}
		CHECK_EQ(urnic_icrc_flow(&flow, f, 5, len), on_wire(&g));
	}
}

static void fragments_split_anywhere_give_one_icrc(void)
{
	split_anywhere(URNIC_OP_RC_RDMA_WRITE_FIRST);
	split_anywhere(URNIC_OP_RC_ACKNOWLEDGE);
}

/* The flow has no TOS/TTL: a golden packet with them changed still matches. */
static void flow_icrc_ignores_masked_ipv4_fields(void)
{
	static struct golden g;
	struct urnic_icrc_flow flow;
	struct urnic_frag f;

	load(&g, "rxe_rc_atomic.pcap", URNIC_OP_RC_COMPARE_SWAP);
	flow_from(&flow, &g);
	f.base = g.payload;
	f.len = covered(&g);
	g.ip[1] = 0xb8; /* DSCP EF + ECT(0)... */
	g.ip[8] = 3;	/* ...after a few hops */
	g.udp[6] = 0x12;
	g.udp[7] = 0x34;
	g.payload[4] = 0x80; /* a switch marked FECN */
	CHECK_EQ(raw(&g), on_wire(&g));
	CHECK_EQ(urnic_icrc_flow(&flow, &f, 1, f.len), on_wire(&g));
	/* ...but the IP ID is covered: a sender must use the ID its kernel will. */
	flow.ip_id ^= 1;
	CHECK(urnic_icrc_flow(&flow, &f, 1, f.len) != on_wire(&g));
}

/* No IPv6 capture exists: check flow against raw against the model on built packets. */
static void ipv6_flow_matches_raw_and_model(void)
{
	struct wire_rng rng = { 0x6 };
	struct urnic_icrc_flow flow;
	struct urnic_pkt pkt;
	uint8_t ip[40], udp[8], buf[512];
	struct urnic_frag f;
	size_t len, i, round;
	uint32_t r;

	for (round = 0; round < 200; round++) {
		wire_pkt_random(&pkt, URNIC_OP_RC_SEND_ONLY, &rng);
		len = wire_pkt_build(&pkt, NULL, wire_rng_below(&rng, 256), buf, sizeof(buf));
		CHECK(len > 0);
		len -= URNIC_ICRC_BYTES;
		memset(&flow, 0, sizeof(flow));
		flow.ipv6 = true;
		for (i = 0; i < 16; i++) {
			flow.src[i] = (uint8_t)wire_rng_u32(&rng);
			flow.dst[i] = (uint8_t)wire_rng_u32(&rng);
		}
		flow.sport = (uint16_t)(0xc000 | wire_rng_u32(&rng));
		flow.dport = URNIC_ROCE_UDP_PORT;

		/* What the kernel would emit: any traffic class, flow label, hop limit. */
		r = wire_rng_u32(&rng);
		ip[0] = (uint8_t)(0x60 | (r & 0x0f));
		ip[1] = (uint8_t)(r >> 4);
		ip[2] = (uint8_t)(r >> 12);
		ip[3] = (uint8_t)(r >> 20);
		urnic_put_be16(ip + 4, (uint16_t)(8 + len + URNIC_ICRC_BYTES));
		ip[6] = 17;
		ip[7] = (uint8_t)(r >> 24);
		memcpy(ip + 8, flow.src, 16);
		memcpy(ip + 24, flow.dst, 16);
		urnic_put_be16(udp, flow.sport);
		urnic_put_be16(udp + 2, flow.dport);
		urnic_put_be16(udp + 4, (uint16_t)(8 + len + URNIC_ICRC_BYTES));
		urnic_put_be16(udp + 6, (uint16_t)wire_rng_u32(&rng));

		f.base = buf;
		f.len = len;
		CHECK_EQ(urnic_icrc_flow(&flow, &f, 1, len), urnic_icrc_raw(ip, 40, udp, buf, len));
		CHECK_EQ(urnic_icrc_raw(ip, 40, udp, buf, len), naive_icrc(ip, 40, udp, buf, len));
	}
}

/* rxe counts the IPv4 ID; recovering it from the ICRC must give back what it sent. */
static void ipv4_id_recovered_from_every_golden_packet(void)
{
	unsigned packets = 0, nonzero = 0;
	struct dirent *de;
	DIR *d = opendir(golden_dir);

	CHECK(d != NULL);
	while ((de = readdir(d)) != NULL) {
		struct wire_pcap pc;
		struct wire_frame fr;
		struct wire_udp u;
		char path[4096];
		size_t n = strlen(de->d_name);

		if (n < 5 || strcmp(de->d_name + n - 5, ".pcap"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", golden_dir, de->d_name);
		CHECK_EQ(wire_pcap_open(&pc, path), 0);
		while (wire_pcap_next(&pc, &fr) == 1) {
			uint8_t ip[60];
			size_t cov;
			uint32_t rx;
			uint16_t id = 0xdead;

			if (!wire_frame_udp(&fr, &u) || u.dport != URNIC_ROCE_UDP_PORT || u.ipv6 ||
			    u.ip_bytes != 20 ||
			    u.payload_bytes < URNIC_BTH_BYTES + URNIC_ICRC_BYTES)
				continue;
			cov = u.payload_bytes - URNIC_ICRC_BYTES;
			rx = urnic_get_le32(u.payload + cov);
			if (urnic_icrc_raw(u.ip, 20, u.udp, u.payload, cov) != rx)
				continue; /* the deliberately corrupted packet */
			memcpy(ip, u.ip, 20);
			ip[4] = ip[5] = 0;
			CHECK_EQ(urnic_icrc_ipv4_id(urnic_icrc_raw(ip, 20, u.udp, u.payload, cov),
						    rx, cov, &id),
				 0);
			CHECK_EQ(id, urnic_get_be16(u.ip + 4));
			packets++;
			nonzero += id != 0;
		}
		wire_pcap_close(&pc);
	}
	closedir(d);
	printf("  %u packets, %u with a non-zero IPv4 ID, every ID recovered\n", packets, nonzero);
	CHECK(packets > 200 && nonzero > 200);
}

/* Every length up to 64 KiB exercises every power of x^-1 in the table. */
static void ipv4_id_recovered_at_every_length(void)
{
	static uint8_t buf[65000];
	struct urnic_icrc_flow flow = { 0 };
	size_t len;
	unsigned seed = 7;

	for (len = 0; len < sizeof(buf); len++)
		buf[len] = (uint8_t)rand_r(&seed);
	flow.src[0] = 10, flow.dst[0] = 10, flow.dst[3] = 11;
	flow.sport = 0xc000, flow.dport = URNIC_ROCE_UDP_PORT;
	for (len = URNIC_BTH_BYTES; len < sizeof(buf); len += 1 + len / 7) {
		struct urnic_frag f = { buf, len };
		uint16_t want = (uint16_t)rand_r(&seed), got = 0;
		uint32_t id0, sent;

		flow.ip_id = 0;
		id0 = urnic_icrc_flow(&flow, &f, 1, len);
		flow.ip_id = want;
		sent = urnic_icrc_flow(&flow, &f, 1, len);
		CHECK_EQ(urnic_icrc_ipv4_id(id0, sent, len, &got), 0);
		CHECK_EQ(got, want);
	}
}

/* A corruption anywhere else is not an ID: at most about one flip in 65536 passes. */
static void ipv4_id_recovery_refuses_corruption(void)
{
	struct golden g;
	unsigned flips = 0, accepted = 0;
	size_t bit;

	load(&g, "rxe_rc_write.pcap", URNIC_OP_RC_RDMA_WRITE_FIRST);
	for (bit = 0; bit < covered(&g) * 8; bit++) {
		uint8_t ip[60];
		uint16_t id;

		if (bit / 8 == 4) /* BTH byte 4 is masked */
			continue;
		g.payload[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		memcpy(ip, g.ip, 20);
		ip[4] = ip[5] = 0;
		flips++;
		accepted +=
			urnic_icrc_ipv4_id(urnic_icrc_raw(ip, 20, g.udp, g.payload, covered(&g)),
					   on_wire(&g), covered(&g), &id) == 0;
		g.payload[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	printf("  %u payload bit flips, %u taken for an IPv4 ID\n", flips, accepted);
	CHECK(flips > 8000 && accepted <= 2);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s GOLDEN_DIR\n", argv[0]);
		return 2;
	}
	golden_dir = argv[1];
	RUN(seed_is_eight_ones_bytes);
	RUN(golden_icrc_matches_naive_model);
	RUN(every_covered_bit_flip_changes_icrc);
	RUN(fragments_split_anywhere_give_one_icrc);
	RUN(flow_icrc_ignores_masked_ipv4_fields);
	RUN(ipv6_flow_matches_raw_and_model);
	RUN(ipv4_id_recovered_from_every_golden_packet);
	RUN(ipv4_id_recovered_at_every_length);
	RUN(ipv4_id_recovery_refuses_corruption);
	return 0;
}
