/* SPDX-License-Identifier: MIT */
/*
 * replay.c - runs a fuzz target's entry point (fuzz_<target>.c) over fixed inputs under
 * any compiler, so the corpus is a regression test everywhere.
 *
 * Every file named (or found in a directory named) runs as it is, then each of its
 * record prefixes, then -m N (default 64) deterministic mutations of it (bytes flipped,
 * overwritten, records cut short; a fixed-seed PRNG, so a failure replays exactly). Usage:
 * fuzz_replay_TARGET [-m N] [-v] [-w DIR] PATH... -v      name every input before running it -w DIR
 * write every mutated input to DIR first (after a crash the last one written is the culprit: run it
 * with the libFuzzer binary, or add it to the corpus) A broken invariant aborts (harness.c says
 * which).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

static unsigned long runs, files;
static unsigned mutations = 64;
static int verbose;
static const char *write_dir;

static void run(const uint8_t *data, size_t size, const char *name, int variant)
{
	/* A heap copy of exactly size bytes, so ASan sees any over-read. */
	uint8_t *copy = malloc(size ? size : 1);

	if (!copy)
		abort();
	if (size)
		memcpy(copy, data, size);
	if (verbose)
		fprintf(stderr, "replay %s #%d (%zu bytes)\n", name, variant, size);
	if (write_dir && variant > 0) {
		char path[4096];
		const char *base = strrchr(name, '/');
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s.m%d", write_dir, base ? base + 1 : name,
			 variant);
		f = fopen(path, "wb");
		if (f) {
			fwrite(copy, 1, size, f);
			fclose(f);
		}
	}
	LLVMFuzzerTestOneInput(copy, size);
	free(copy);
	runs++;
}

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t next_rand(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 0x2545f4914f6cdd1dull) >> 32);
}

static void run_variants(const uint8_t *data, size_t size, const char *name)
{
	uint8_t *buf;
	size_t off = 0;
	int variant = -1;

	run(data, size, name, 0);
	/* Record prefixes: the state after each packet is a start for the next. */
	while (size - off >= FUZZ_REC_HDR) {
		size_t len = (size_t)data[off + 1] << 8 | data[off + 2];

		off += FUZZ_REC_HDR + len;
		if (off >= size)
			break;
		run(data, off, name, variant--);
	}
	if (!size)
		return;
	buf = malloc(size);
	if (!buf)
		abort();
	for (unsigned m = 1; m <= mutations; m++) {
		size_t cut = size;

		memcpy(buf, data, size);
		for (unsigned k = 0, nk = 1 + next_rand() % 4; k < nk; k++) {
			size_t at = next_rand() % size;

			switch (next_rand() % 4) {
			case 0:
				buf[at] ^= (uint8_t)(1u << (next_rand() % 8));
				break;
			case 1:
				buf[at] = (uint8_t)next_rand();
				break;
			case 2:
				buf[at] = (uint8_t)(buf[at] + 1);
				break;
			default:
				cut = at;
				break;
			}
		}
		run(buf, cut, name, (int)m);
	}
	free(buf);
}

static void replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long len;

	if (!f) {
		perror(path);
		exit(1);
	}
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(len > 0 ? (size_t)len : 1);
	if (!buf || (len > 0 && fread(buf, 1, (size_t)len, f) != (size_t)len)) {
		fprintf(stderr, "%s: cannot read\n", path);
		exit(1);
	}
	fclose(f);
	run_variants(buf, (size_t)len, path);
	free(buf);
	files++;
}

static int not_dot(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

static void replay_path(const char *path)
{
	struct dirent **names;
	struct stat st;
	char sub[4096];
	int n;

	if (stat(path, &st) < 0) {
		perror(path);
		exit(1);
	}
	if (!S_ISDIR(st.st_mode)) {
		replay_file(path);
		return;
	}
	n = scandir(path, &names, not_dot, alphasort);
	for (int i = 0; i < n; i++) {
		snprintf(sub, sizeof(sub), "%s/%s", path, names[i]->d_name);
		if (stat(sub, &st) == 0 && S_ISREG(st.st_mode))
			replay_file(sub);
		free(names[i]);
	}
	free(names);
}

int main(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "m:vw:")) != -1) {
		switch (c) {
		case 'm':
			mutations = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'v':
			verbose = 1;
			break;
		case 'w':
			write_dir = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [-m N] [-v] [-w DIR] PATH...\n", argv[0]);
			return 2;
		}
	}
	if (optind == argc) {
		fprintf(stderr, "usage: %s [-m N] [-v] [-w DIR] PATH...\n", argv[0]);
		return 2;
	}
	/* The empty input and a lone truncated record run too. */
	run(NULL, 0, "(empty)", 0);
	run((const uint8_t *)"\x00\x00", 2, "(short)", 0);
	for (int i = optind; i < argc; i++)
		replay_path(argv[i]);
	if (files == 0) {
		fprintf(stderr, "no corpus files found\n");
		return 1;
	}
	printf("ok fuzz replay: %lu files, %lu inputs\n", files, runs);
	return 0;
}
