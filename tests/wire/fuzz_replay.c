/* SPDX-License-Identifier: MIT */
/*
 * fuzz_replay.c - runs the fuzz target (fuzz_pkt.c) over fixed inputs, under any compiler.
 *
 * Inputs: every RoCEv2 UDP payload in GOLDEN_DIR/rxe_*.pcap, each of its prefixes and
 * single-bit flips of its headers, a generated packet per opcode (IBTA 9.2.1 table), and
 * every file named on the command line (the libFuzzer corpus, crash reproducers).
 * Usage: wire_fuzz_replay GOLDEN_DIR [FILE...]. A failing input aborts.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fuzz.h"
#include "pcap.h"
#include "pktgen.h"

static unsigned long runs;

static void run(const uint8_t *data, size_t size)
{
	/* A heap copy of exactly size bytes, so ASan sees any over-read. */
	uint8_t *copy = malloc(size ? size : 1);

	CHECK(copy != NULL);
	if (size)
		memcpy(copy, data, size);
	LLVMFuzzerTestOneInput(copy, size);
	free(copy);
	runs++;
}

static void run_mutations(const uint8_t *p, size_t len)
{
	uint8_t buf[4096];
	size_t i, hdr = len < 64 ? len : 64;
	int b;

	for (i = 0; i <= len; i++)
		run(p, i);
	if (len > sizeof(buf))
		return;
	memcpy(buf, p, len);
	for (i = 0; i < hdr; i++)
		for (b = 0; b < 8; b++) {
			buf[i] ^= (uint8_t)(1u << b);
			run(buf, len);
			buf[i] ^= (uint8_t)(1u << b);
		}
}

static int is_rxe_pcap(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return !strncmp(d->d_name, "rxe_", 4) && n > 5 && !strcmp(d->d_name + n - 5, ".pcap");
}

static unsigned replay_golden(const char *dir)
{
	struct dirent **names;
	unsigned packets = 0;
	char path[4096];
	int i, n;

	n = scandir(dir, &names, is_rxe_pcap, alphasort);
	CHECK(n > 0);
	for (i = 0; i < n; i++) {
		struct wire_pcap pc;
		struct wire_frame fr;
		struct wire_udp u;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		CHECK_EQ(wire_pcap_open(&pc, path), 0);
		while (wire_pcap_next(&pc, &fr) == 1) {
			if (!wire_frame_udp(&fr, &u) || u.dport != URNIC_ROCE_UDP_PORT)
				continue;
			run_mutations(u.payload, u.payload_bytes);
			packets++;
		}
		wire_pcap_close(&pc);
		free(names[i]);
	}
	free(names);
	return packets;
}

static void replay_generated(void)
{
	struct wire_rng rng = { 0xf022 };
	struct urnic_pkt pkt;
	uint8_t buf[256];
	unsigned op;
	size_t len;

	for (op = 0; op < 256; op++) {
		if (!urnic_opcode_table[op].name)
			continue;
		wire_pkt_random(&pkt, (uint8_t)op, &rng);
		len = wire_pkt_build(&pkt, NULL, 8, buf, sizeof(buf));
		CHECK(len > 0);
		run_mutations(buf, len);
	}
}

static void replay_file(const char *path)
{
	static uint8_t buf[1 << 16];
	FILE *f = fopen(path, "rb");
	size_t len;

	if (!f)
		perror(path);
	CHECK(f != NULL);
	len = fread(buf, 1, sizeof(buf), f);
	CHECK(!ferror(f));
	fclose(f);
	run(buf, len);
}

int main(int argc, char **argv)
{
	unsigned packets;
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: %s GOLDEN_DIR [FILE...]\n", argv[0]);
		return 2;
	}
	packets = replay_golden(argv[1]);
	CHECK(packets > 0);
	replay_generated();
	for (i = 2; i < argc; i++)
		replay_file(argv[i]);
	printf("ok fuzz_replay: %u golden packets, %d files, %lu inputs\n", packets, argc - 2,
	       runs);
	return 0;
}
