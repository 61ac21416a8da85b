/* SPDX-License-Identifier: MIT */
/*
 * pcap_icrc.c - verify the ICRC of every RoCEv2 packet in classic pcap captures.
 *
 * A RoCEv2 packet is a UDP datagram to port 4791 (IBTA Annex A17.2); its last four
 * bytes are the ICRC (Annex A17.3.3), recomputed here with urnic_icrc_raw() over the
 * captured IP and UDP headers. Tshark 4.0 shows the ICRC but does not check it.
 * Out of scope: pcapng, link types other than Ethernet (capture with `-F pcap`).
 * Usage: pcap_icrc [--expect-bad N] FILE.pcap...
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcap.h"
#include "wire/byteorder.h"
#include "wire/pkt.h"

struct tally {
	unsigned long packets;
	unsigned long ok;
	unsigned long bad;
};

static void report_bad(const char *path, const struct wire_frame *fr, const struct wire_udp *u,
		       const char *why, uint32_t on_wire, uint32_t computed)
{
	const struct urnic_opcode_info *op = urnic_opcode_info(u->payload[0]);

	fprintf(stderr, "%s: frame %u: opcode 0x%02x (%s) dqpn 0x%06x psn 0x%06x: %s", path,
		fr->frame_no, u->payload[0], op->name ? op->name : "unknown",
		urnic_get_be32(u->payload + 4) & 0xffffffu,
		urnic_get_be32(u->payload + 8) & 0xffffffu, why);
	if (computed != on_wire)
		fprintf(stderr, " (on the wire 0x%08x, computed 0x%08x)", on_wire, computed);
	fputc('\n', stderr);
}

/* One RoCEv2 datagram: true when its ICRC matches. */
static bool check_one(const char *path, const struct wire_frame *fr, const struct wire_udp *u)
{
	size_t covered;
	uint32_t on_wire, computed;

	if (u->payload_bytes < URNIC_BTH_BYTES + URNIC_ICRC_BYTES) {
		fprintf(stderr, "%s: frame %u: %zu-byte UDP payload is shorter than BTH + ICRC\n",
			path, fr->frame_no, u->payload_bytes);
		return false;
	}
	covered = u->payload_bytes - URNIC_ICRC_BYTES;
	on_wire = urnic_get_le32(u->payload + covered);
	computed = urnic_icrc_raw(u->ip, u->ip_bytes, u->udp, u->payload, covered);
	if (on_wire == computed)
		return true;
	report_bad(path, fr, u, "bad ICRC", on_wire, computed);
	return false;
}

/* 0, or -errno when the file cannot be read as an Ethernet classic pcap. */
static int check_file(const char *path, struct tally *t)
{
	struct wire_pcap pc;
	struct wire_frame fr;
	struct wire_udp u;
	unsigned last_frame;
	int ret;

	ret = wire_pcap_open(&pc, path);
	if (ret == -EINVAL) {
		fprintf(stderr,
			"%s: not a classic pcap with the Ethernet link type "
			"(write it with `tshark -F pcap` from an Ethernet or loopback "
			"interface)\n",
			path);
		return ret;
	}
	if (ret) {
		fprintf(stderr, "%s: %s\n", path, strerror(-ret));
		return ret;
	}
	while ((ret = wire_pcap_next(&pc, &fr)) == 1) {
		if (!wire_frame_udp(&fr, &u) || u.dport != URNIC_ROCE_UDP_PORT)
			continue;
		t->packets++;
		if (check_one(path, &fr, &u))
			t->ok++;
		else
			t->bad++;
	}
	last_frame = pc.frame_no;
	wire_pcap_close(&pc);
	if (ret < 0) {
		fprintf(stderr, "%s: truncated record after frame %u\n", path, last_frame);
		return ret;
	}
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: pcap_icrc [--expect-bad N] FILE.pcap...\n"
			"  exits 0 when every file holds RoCEv2 packets and exactly N of them\n"
			"  (default 0, over all files) have a bad ICRC\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct tally all = { 0 };
	unsigned long expect_bad = 0;
	bool failed = false;
	int i = 1;

	if (argc > 2 && strcmp(argv[1], "--expect-bad") == 0) {
		char *end;

		expect_bad = strtoul(argv[2], &end, 10);
		if (*argv[2] == '\0' || *end != '\0')
			return usage();
		i = 3;
	}
	if (i >= argc)
		return usage();

	for (; i < argc; i++) {
		struct tally t = { 0 };

		if (check_file(argv[i], &t) < 0) {
			failed = true;
			continue;
		}
		printf("%s: %lu RoCEv2 packets, ICRC ok %lu, bad %lu\n", argv[i], t.packets, t.ok,
		       t.bad);
		if (t.packets == 0) {
			fprintf(stderr, "%s: no RoCEv2 (UDP port %d) packets at all\n", argv[i],
				URNIC_ROCE_UDP_PORT);
			failed = true;
		}
		all.packets += t.packets;
		all.ok += t.ok;
		all.bad += t.bad;
	}
	printf("%lu RoCEv2 packets, ICRC ok %lu, bad %lu\n", all.packets, all.ok, all.bad);
	if (all.bad != expect_bad) {
		fprintf(stderr, "FAIL: %lu packets with a bad ICRC, expected %lu\n", all.bad,
			expect_bad);
		failed = true;
	}
	return failed ? 1 : 0;
}
