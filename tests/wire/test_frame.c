/* SPDX-License-Identifier: MIT */
/*
 * test_frame.c - urnic_frame_decode (src/wire/frame.c), the checks a packet ring's frame
 * gets in place of the kernel's IP and UDP layers: a RoCEv2 frame as Linux sends it
 * decodes to its addresses, ports, ID, TOS and TTL; every prefix of it fails cleanly;
 * each header rule (version and IHL, protocol, fragments, the header checksum, the IP
 * and UDP lengths) rejects a frame that breaks it; Ethernet padding is allowed. Every
 * IPv4 RoCEv2 frame of the golden rxe captures (argv[1]) decodes to what the capture
 * reader (tests/wire/pcap.c) finds in it, and carries the header checksum
 * urnic_ipv4_hdr_csum computes for it.
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "pcap.h"
#include "wire/byteorder.h"
#include "wire/frame.h"

enum { PAYLOAD = 40 };

static uint8_t frame[URNIC_FRAME_UDP_PAYLOAD + PAYLOAD + 16];

static void set_csum(uint8_t *ip)
{
	urnic_put_be16(ip + 10, urnic_ipv4_hdr_csum(ip));
}

/* 127.0.9.1:49152 -> 127.0.9.2:4791, ID 7, TOS 0x68, TTL 64, DF, 40 payload bytes. */
static void build(void)
{
	uint8_t *ip = frame + URNIC_ETH_HDR, *udp = ip + URNIC_IPV4_HDR;

	memset(frame, 0, sizeof(frame));
	urnic_put_be16(frame + 12, URNIC_ETH_P_IPV4);
	ip[0] = 0x45;
	ip[1] = 0x68;
	urnic_put_be16(ip + 2, URNIC_IPV4_HDR + URNIC_UDP_HDR + PAYLOAD);
	urnic_put_be16(ip + 4, 7);
	urnic_put_be16(ip + 6, 0x4000); /* DF */
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, (const uint8_t[]){ 127, 0, 9, 1 }, 4);
	memcpy(ip + 16, (const uint8_t[]){ 127, 0, 9, 2 }, 4);
	set_csum(ip);
	urnic_put_be16(udp, 49152);
	urnic_put_be16(udp + 2, 4791);
	urnic_put_be16(udp + 4, URNIC_UDP_HDR + PAYLOAD);
	for (int i = 0; i < PAYLOAD; i++)
		udp[URNIC_UDP_HDR + i] = (uint8_t)i;
}

static const size_t frame_len = URNIC_FRAME_UDP_PAYLOAD + PAYLOAD;

static void test_decodes_linux_frame(void)
{
	struct urnic_frame f;

	build();
	CHECK_EQ(urnic_frame_decode(frame, frame_len, &f), 0);
	CHECK(memcmp(f.src, (const uint8_t[]){ 127, 0, 9, 1 }, 4) == 0);
	CHECK(memcmp(f.dst, (const uint8_t[]){ 127, 0, 9, 2 }, 4) == 0);
	CHECK_EQ(f.sport, 49152);
	CHECK_EQ(f.dport, 4791);
	CHECK_EQ(f.ip_id, 7);
	CHECK_EQ(f.tos, 0x68);
	CHECK_EQ(f.ttl, 64);
	CHECK_EQ(f.payload_off, URNIC_FRAME_UDP_PAYLOAD);
	CHECK_EQ(f.payload_len, PAYLOAD);
	CHECK_EQ(frame[f.payload_off + 5], 5);
}

static void test_padding_allowed(void)
{
	struct urnic_frame f;

	build();
	CHECK_EQ(urnic_frame_decode(frame, sizeof(frame), &f), 0);
	CHECK_EQ(f.payload_len, PAYLOAD);
}

static void test_every_prefix_fails(void)
{
	struct urnic_frame f;

	build();
	for (size_t n = 0; n < frame_len; n++)
		CHECK_EQ(urnic_frame_decode(frame, n, &f), -EBADMSG);
}

/* Changes one header field (and fixes the checksum unless told not to): rejected. */
static void expect_rejected(size_t off, uint8_t value, int fix_csum)
{
	struct urnic_frame f;

	build();
	frame[off] = value;
	if (fix_csum)
		set_csum(frame + URNIC_ETH_HDR);
	CHECK_EQ(urnic_frame_decode(frame, frame_len, &f), -EBADMSG);
}

static void test_header_rules(void)
{
	const size_t ip = URNIC_ETH_HDR, udp = ip + URNIC_IPV4_HDR;

	expect_rejected(12, 0x86, 1);	   /* Ethertype IPv6 */
	expect_rejected(ip, 0x46, 1);	   /* IP options */
	expect_rejected(ip, 0x65, 1);	   /* version 6 */
	expect_rejected(ip + 9, 6, 1);	   /* TCP */
	expect_rejected(ip + 6, 0x20, 1);  /* MF: a first fragment */
	expect_rejected(ip + 7, 0x01, 1);  /* a fragment offset */
	expect_rejected(ip + 10, 0x00, 0); /* header checksum */
	expect_rejected(ip + 8, 63, 0);	   /* TTL changed, checksum not */
	expect_rejected(ip + 3, 0xff, 1);  /* IP length past the frame */
	expect_rejected(ip + 3, 27, 1);	   /* IP length shorter than IP + UDP */
	expect_rejected(ip + 3, 60, 1);	   /* IP length shorter than UDP's */
	expect_rejected(udp + 5, 60, 1);   /* UDP length longer than IP's */
	expect_rejected(udp + 5, 7, 1);	   /* UDP length shorter than its header */
}

static const char *golden_dir;

static void test_golden_rxe_frames(void)
{
	static const char *const files[] = { "rxe_rc_write.pcap", "rxe_rc_send.pcap",
					     "rxe_rc_read.pcap", "rxe_rc_atomic.pcap" };
	unsigned int decoded = 0;

	for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
		struct wire_pcap pc;
		struct wire_frame fr;
		char path[512];

		snprintf(path, sizeof(path), "%s/%s", golden_dir, files[k]);
		CHECK_EQ(wire_pcap_open(&pc, path), 0);
		while (wire_pcap_next(&pc, &fr) == 1) {
			struct wire_udp w;
			struct urnic_frame f;

			if (!wire_frame_udp(&fr, &w) || w.ipv6 || w.dport != 4791)
				continue;
			CHECK_EQ(urnic_frame_decode(fr.data, fr.len, &f), 0);
			CHECK_EQ(f.sport, w.sport);
			CHECK_EQ(f.dport, 4791);
			CHECK_EQ(f.payload_len, w.payload_bytes);
			CHECK(fr.data + f.payload_off == w.payload);
			CHECK(memcmp(f.src, w.ip + 12, 4) == 0 && memcmp(f.dst, w.ip + 16, 4) == 0);
			CHECK_EQ(f.ip_id, urnic_get_be16(w.ip + 4));
			/* The encoder side: the checksum Linux wrote. */
			CHECK_EQ(urnic_ipv4_hdr_csum(w.ip), urnic_get_be16(w.ip + 10));
			decoded++;
		}
		wire_pcap_close(&pc);
	}
	CHECK(decoded >= 90); /* 92 in these four captures */
}

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	golden_dir = argv[1];
	RUN(test_golden_rxe_frames);
	RUN(test_decodes_linux_frame);
	RUN(test_padding_allowed);
	RUN(test_every_prefix_fails);
	RUN(test_header_rules);
	return 0;
}
