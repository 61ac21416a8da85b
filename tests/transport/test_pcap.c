/* SPDX-License-Identifier: MIT */
/*
 * test_pcap.c - the capture file of URNIC_PCAP (src/transport/pcap.c), read back with
 * the tests' own pcap reader (tests/wire/pcap.c): a GSO super-datagram of three full
 * segments and a short tail is recorded as four frames, each with the IP and UDP
 * lengths of its segment, a right IPv4 header checksum, a right UDP checksum (summed
 * here, RFC 1071, not with the writer's code), the segment's IPv4 ID (the first one's
 * plus its index) and so an ICRC that checks; the same over IPv6; a single datagram
 * stays one frame; the direction flag and a drop's comment come through; a whole
 * frame is kept as given; the file's thread writes records without a flush, within
 * URNIC_PCAP_FLUSH_MS; the file is the owner's alone (0600).
 */
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "pcap.h"
#include "transport/pcap.h"
#include "wire/byteorder.h"
#include "wire/frame.h"
#include "wire/pkt.h"

enum { SEG = 1036, TAIL = 500, NSEG = 3, ID0 = 7 }; /* SEG: BTH, 1020 bytes, ICRC */

static const uint8_t v4_src[4] = { 127, 0, 9, 1 }, v4_dst[4] = { 127, 0, 9, 2 };
static const uint8_t v6_src[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
static const uint8_t v6_dst[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 };
static uint8_t super[NSEG * SEG + TAIL];
static char path[64];

/* Packet k of the super-datagram at p, len bytes: a BTH, a pattern, the ICRC Linux's
 * segment k would need (IPv4 ID ID0 + k). */
static void build_pkt(uint8_t *p, uint32_t len, uint32_t k, bool ipv6)
{
	struct urnic_icrc_flow f = { .ipv6 = ipv6, .sport = 49152, .dport = 4791 };
	struct urnic_frag frag = { p, len - URNIC_ICRC_BYTES };

	memcpy(f.src, ipv6 ? v6_src : v4_src, ipv6 ? 16 : 4);
	memcpy(f.dst, ipv6 ? v6_dst : v4_dst, ipv6 ? 16 : 4);
	f.ip_id = (uint16_t)(ipv6 ? 0 : ID0 + k);
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + k);
	p[0] = 0x01;			  /* RC SEND_MIDDLE */
	p[1] = 0;			  /* no pad: the lengths are multiples of 4 */
	urnic_put_be16(p + 2, 0xffff);	  /* P_Key */
	urnic_put_be32(p + 4, 0x000011);  /* DestQP */
	urnic_put_be32(p + 8, 0x100 + k); /* PSN */
	urnic_put_le32(p + frag.len, urnic_icrc_flow(&f, &frag, 1, frag.len));
}

static void build_super(bool ipv6)
{
	for (uint32_t k = 0; k < NSEG; k++)
		build_pkt(super + k * SEG, SEG, k, ipv6);
	build_pkt(super + NSEG * SEG, TAIL, NSEG, ipv6);
}

/* RFC 1071 over the pseudo-header, the UDP header and payload, its checksum included:
 * 0xffff when the checksum is right. */
static uint16_t udp_sum(const struct wire_udp *u)
{
	size_t alen = u->ipv6 ? 16 : 4, ulen = 8 + u->payload_bytes;
	const uint8_t *srcdst = u->ip + (u->ipv6 ? 8 : 12);
	uint32_t sum = 17 + (uint32_t)ulen;

	for (size_t i = 0; i < 2 * alen; i += 2)
		sum += urnic_get_be16(srcdst + i);
	for (size_t i = 0; i < ulen; i += 2) {
		const uint8_t *b = i < 8 ? u->udp + i : u->payload + i - 8;

		sum += i + 1 < ulen ? urnic_get_be16(b) : (uint32_t)b[0] << 8;
	}
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* Frame fr is segment k of the super-datagram, as it left (out) or arrived. */
static void check_segment(const struct wire_frame *fr, uint32_t k, bool ipv6, bool out)
{
	uint32_t len = k < NSEG ? SEG : TAIL;
	struct wire_udp u;

	CHECK(wire_frame_udp(fr, &u));
	CHECK_EQ(u.ipv6, ipv6);
	CHECK_EQ(fr->flags & 3, out ? 2 : 1);
	CHECK_EQ(u.sport, 49152);
	CHECK_EQ(u.dport, 4791);
	CHECK_EQ(u.payload_bytes, len);
	CHECK_EQ(urnic_get_be16(u.udp + 4), 8 + len);
	CHECK(memcmp(u.payload, super + k * SEG, len) == 0);
	CHECK_EQ(udp_sum(&u), 0xffff);
	CHECK(urnic_get_be16(u.udp + 6) != 0);
	if (ipv6) {
		CHECK_EQ(fr->len, 14 + 40 + 8 + len);
		CHECK_EQ(urnic_get_be16(u.ip + 4), 8 + len);
		CHECK(memcmp(u.ip + 8, v6_src, 16) == 0);
		CHECK(memcmp(u.ip + 24, v6_dst, 16) == 0);
	} else {
		CHECK_EQ(fr->len, 14 + 20 + 8 + len);
		CHECK_EQ(urnic_get_be16(u.ip + 2), 20 + 8 + len);
		CHECK_EQ(urnic_get_be16(u.ip + 4), ID0 + k);
		CHECK_EQ(urnic_get_be16(u.ip + 6), 0x4000); /* DF */
		CHECK_EQ(urnic_get_be16(u.ip + 10), urnic_ipv4_hdr_csum(u.ip));
		CHECK(memcmp(u.ip + 12, v4_src, 4) == 0);
		CHECK(memcmp(u.ip + 16, v4_dst, 4) == 0);
		/* The MACs made up from the addresses: 02:75 and the IPv4 address. */
		CHECK(fr->data[0] == 0x02 && fr->data[1] == 0x75 &&
		      memcmp(fr->data + 2, v4_dst, 4) == 0);
		CHECK(fr->data[6] == 0x02 && memcmp(fr->data + 8, v4_src, 4) == 0);
	}
	CHECK_EQ(urnic_get_le32(u.payload + len - 4),
		 urnic_icrc_raw(u.ip, u.ip_bytes, u.udp, u.payload, len - 4));
}

static struct urnic_pcap *open_file(struct urnic_pcap_if *i, bool ipv6)
{
	struct urnic_pcap *p;

	snprintf(path, sizeof(path), "/tmp/urnic-test-pcap.%ld.pcapng", (long)getpid());
	CHECK_EQ(urnic_pcap_open(&p, path), 0);
	CHECK_EQ(
		urnic_pcap_add_if(p, i, "urnic0", ipv6, ipv6 ? v6_src : v4_src, "RoCEv2, UDP 4791"),
		0);
	return p;
}

/* The super-datagram as sent (out) and received, dir in that order, then read back. */
static void gso_run(bool ipv6)
{
	struct urnic_pcap_if i;
	struct urnic_pcap *p = open_file(&i, ipv6);
	struct urnic_pcap_dgram g = {
		.out = true,
		.src = ipv6 ? v6_src : v4_src,
		.dst = ipv6 ? v6_dst : v4_dst,
		.sport = 49152,
		.dport = 4791,
		.ttl = 64,
		.ip_id = ID0,
	};
	struct wire_pcap pc;
	struct wire_frame fr;

	build_super(ipv6);
	urnic_pcap_write(&i, &g, super, sizeof(super), SEG);
	g.out = false;
	urnic_pcap_write(&i, &g, super, sizeof(super), SEG);
	urnic_pcap_close(p);

	CHECK_EQ(wire_pcap_open(&pc, path), 0);
	for (uint32_t n = 0; n < 2 * (NSEG + 1); n++) {
		CHECK_EQ(wire_pcap_next(&pc, &fr), 1);
		CHECK_EQ(fr.ifid, 0);
		CHECK(fr.comment == NULL);
		check_segment(&fr, n % (NSEG + 1), ipv6, n <= NSEG);
	}
	CHECK_EQ(wire_pcap_next(&pc, &fr), 0);
	wire_pcap_close(&pc);
	unlink(path);
}

static void gso_ipv4_as_segments(void)
{
	gso_run(false);
}

static void gso_ipv6_as_segments(void)
{
	gso_run(true);
}

/* One datagram (seg 0) is one frame, with a drop's comment; a whole frame stays as it
 * was; the file is 0600. */
static void single_drop_and_frame(void)
{
	struct urnic_pcap_if i;
	struct urnic_pcap *p = open_file(&i, false);
	struct urnic_pcap_dgram g = {
		.src = v4_src,
		.dst = v4_dst,
		.sport = 49152,
		.dport = 4791,
		.ip_id = ID0 + NSEG,
		.reason = "drop_bad_icrc",
	};
	uint8_t raw[60] = { 0x02, 0x75, 1, 2, 3, 4 };
	struct wire_pcap pc;
	struct wire_frame fr;
	struct wire_udp u;
	struct stat st;

	build_super(false);
	/* The tail, received alone: ID ID0 + NSEG, as its ICRC wants. */
	urnic_pcap_write(&i, &g, super + NSEG * SEG, TAIL, 0);
	urnic_pcap_write_frame(&i, raw, sizeof(raw), "drop_ring_otherhost");
	urnic_pcap_close(p);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0600);

	CHECK_EQ(wire_pcap_open(&pc, path), 0);
	CHECK_EQ(wire_pcap_next(&pc, &fr), 1);
	CHECK(wire_frame_udp(&fr, &u));
	CHECK_EQ(u.payload_bytes, TAIL);
	CHECK_EQ(urnic_get_be16(u.ip + 4), ID0 + NSEG);
	CHECK_EQ(fr.flags & 3, 1);
	CHECK_EQ(fr.comment_len, strlen("drop_bad_icrc"));
	CHECK(memcmp(fr.comment, "drop_bad_icrc", fr.comment_len) == 0);
	CHECK_EQ(udp_sum(&u), 0xffff);
	CHECK_EQ(urnic_get_le32(u.payload + TAIL - 4),
		 urnic_icrc_raw(u.ip, u.ip_bytes, u.udp, u.payload, TAIL - 4));
	CHECK_EQ(wire_pcap_next(&pc, &fr), 1);
	CHECK_EQ(fr.len, sizeof(raw));
	CHECK(memcmp(fr.data, raw, sizeof(raw)) == 0);
	CHECK_EQ(fr.comment_len, strlen("drop_ring_otherhost"));
	CHECK_EQ(wire_pcap_next(&pc, &fr), 0);
	wire_pcap_close(&pc);
	unlink(path);
}

/* Without a flush, the file's thread writes the record within URNIC_PCAP_FLUSH_MS (a
 * process killed later loses nothing before it). */
static void thread_writes_in_time(void)
{
	struct urnic_pcap_if i;
	struct urnic_pcap *p = open_file(&i, false);
	struct urnic_pcap_dgram g = { .out = true, .src = v4_src, .dst = v4_dst, .dport = 4791 };
	struct timespec ts = { 0, 3 * URNIC_PCAP_FLUSH_MS * 1000000L };
	struct stat before, after;

	CHECK_EQ(stat(path, &before), 0);
	CHECK(before.st_size > 0); /* the section header, written at once */
	build_super(false);
	urnic_pcap_write(&i, &g, super, SEG, 0);
	nanosleep(&ts, NULL);
	CHECK_EQ(stat(path, &after), 0);
	CHECK(after.st_size > before.st_size + SEG);
	urnic_pcap_close(p);
	unlink(path);
}

int main(void)
{
	RUN(gso_ipv4_as_segments);
	RUN(gso_ipv6_as_segments);
	RUN(single_drop_and_frame);
	RUN(thread_writes_in_time);
	return 0;
}
