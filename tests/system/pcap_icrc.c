/* SPDX-License-Identifier: MIT */
/*
 * pcap_icrc.c - verify the ICRC of every RoCEv2 packet in classic pcap and pcapng
 * captures.
 *
 * A RoCEv2 packet is a UDP datagram to port 4791 (IBTA Annex A17.2); its last four
 * bytes are the ICRC (Annex A17.3.3), recomputed here with urnic_icrc_raw() over the
 * captured IP and UDP headers. Tshark 4.0 shows the ICRC but does not check it.
 * With --drops, for URNIC_PCAP's captures: a frame whose comment names a drop counter
 * (drop_*) is one the device refused; every bad ICRC must be on such a frame and every
 * frame marked drop_bad_icrc must have one, and --expect-bad counts the others only.
 * Out of scope: link types other than Ethernet (capture with `-F pcap` or pcapng).
 * Usage: pcap_icrc [--drops] [--expect-bad N] FILE...
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
	unsigned long dropped; /* --drops: frames marked refused */
	unsigned long mismarked;
};

static bool drops_mode;

/* Whether the frame's comment names counter c (among the names it lists). */
static bool marked(const struct wire_frame *fr, const char *c)
{
	size_t n = strlen(c);

	for (size_t i = 0; i + n <= fr->comment_len; i++)
		if ((i == 0 || fr->comment[i - 1] == ' ') && strncmp(fr->comment + i, c, n) == 0 &&
		    (i + n == fr->comment_len || fr->comment[i + n] == ' '))
			return true;
	return false;
}

/* --drops: a frame the device refused; a bad ICRC anywhere else, or a frame refused
 * for its ICRC whose ICRC is right, is mismarked. */
static void judge_drop(const char *path, const struct wire_frame *fr, bool icrc_ok, struct tally *t)
{
	bool refused = fr->comment_len >= 5 && strncmp(fr->comment, "drop_", 5) == 0;

	if (refused)
		t->dropped++;
	if ((!icrc_ok && !refused) || (icrc_ok && marked(fr, "drop_bad_icrc"))) {
		fprintf(stderr, "%s: frame %u: ICRC %s, comment '%.*s'\n", path, fr->frame_no,
			icrc_ok ? "right" : "bad", (int)fr->comment_len,
			fr->comment ? fr->comment : "");
		t->mismarked++;
	}
}

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

/* One RoCEv2 datagram: true when its ICRC matches. A mismatch is said unless quiet. */
static bool check_one(const char *path, const struct wire_frame *fr, const struct wire_udp *u,
		      bool quiet)
{
	size_t covered;
	uint32_t on_wire, computed;

	if (u->payload_bytes < URNIC_BTH_BYTES + URNIC_ICRC_BYTES) {
		if (quiet)
			return false;
		fprintf(stderr, "%s: frame %u: %zu-byte UDP payload is shorter than BTH + ICRC\n",
			path, fr->frame_no, u->payload_bytes);
		return false;
	}
	covered = u->payload_bytes - URNIC_ICRC_BYTES;
	on_wire = urnic_get_le32(u->payload + covered);
	computed = urnic_icrc_raw(u->ip, u->ip_bytes, u->udp, u->payload, covered);
	if (on_wire == computed)
		return true;
	if (!quiet)
		report_bad(path, fr, u, "bad ICRC", on_wire, computed);
	return false;
}

/* 0, or -errno when the file cannot be read as an Ethernet classic pcap or pcapng. */
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
			"%s: not a classic pcap or pcapng with the Ethernet link type "
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
		bool refused =
			drops_mode && fr.comment_len >= 5 && strncmp(fr.comment, "drop_", 5) == 0;
		bool ok = check_one(path, &fr, &u, refused);

		t->packets++;
		if (drops_mode)
			judge_drop(path, &fr, ok, t);
		if (ok)
			t->ok++;
		else if (!refused)
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
	fprintf(stderr, "usage: pcap_icrc [--drops] [--expect-bad N] FILE...\n"
			"  exits 0 when every file holds RoCEv2 packets and exactly N of them\n"
			"  (default 0, over all files) have a bad ICRC; --drops: frames commented\n"
			"  drop_* are refused ones, which may have a bad ICRC (and with\n"
			"  drop_bad_icrc must), and are not counted in N\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct tally all = { 0 };
	unsigned long expect_bad = 0;
	bool failed = false;
	int i = 1;

	for (;;) {
		char *end;

		if (i < argc && strcmp(argv[i], "--drops") == 0) {
			drops_mode = true;
			i++;
		} else if (i + 1 < argc && strcmp(argv[i], "--expect-bad") == 0) {
			expect_bad = strtoul(argv[i + 1], &end, 10);
			if (*argv[i + 1] == '\0' || *end != '\0')
				return usage();
			i += 2;
		} else {
			break;
		}
	}
	if (i >= argc)
		return usage();

	for (; i < argc; i++) {
		struct tally t = { 0 };

		if (check_file(argv[i], &t) < 0) {
			failed = true;
			continue;
		}
		printf("%s: %lu RoCEv2 packets, ICRC ok %lu, bad %lu", argv[i], t.packets, t.ok,
		       t.bad);
		if (drops_mode)
			printf(", marked refused %lu (mismarked %lu)", t.dropped, t.mismarked);
		printf("\n");
		if (t.packets == 0) {
			fprintf(stderr, "%s: no RoCEv2 (UDP port %d) packets at all\n", argv[i],
				URNIC_ROCE_UDP_PORT);
			failed = true;
		}
		all.packets += t.packets;
		all.ok += t.ok;
		all.bad += t.bad;
		all.mismarked += t.mismarked;
	}
	printf("%lu RoCEv2 packets, ICRC ok %lu, bad %lu\n", all.packets, all.ok, all.bad);
	if (all.bad != expect_bad) {
		fprintf(stderr, "FAIL: %lu packets with a bad ICRC, expected %lu\n", all.bad,
			expect_bad);
		failed = true;
	}
	if (all.mismarked) {
		fprintf(stderr, "FAIL: %lu frames whose ICRC and drop comment disagree\n",
			all.mismarked);
		failed = true;
	}
	return failed ? 1 : 0;
}
