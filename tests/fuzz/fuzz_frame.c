/* SPDX-License-Identifier: MIT */
/*
 * fuzz_frame.c - the packet ring's frame decoder (src/wire/frame.c,
 * urnic_frame_decode): arbitrary bytes as a captured Ethernet frame.
 *
 * The decoder is checked against a second, plainly written statement of the same rules
 * (frame.h), in both directions: every frame it accepts obeys each rule and decodes to
 * the bytes at the rule's offsets, with the payload inside the captured bytes; every
 * frame that obeys all the rules is accepted. The header checksum is summed here byte by
 * byte (RFC 1071 §2 (B): the sum is independent of byte order), not in 16-bit words as
 * frame.c does. A broken rule aborts; ASan sees any read past the frame.
 *
 * Input: one control byte, then the frame. With bit 0 of the control byte set, the
 * frame's IPv4 header checksum is made right before decoding, so that mutations reach
 * the rules behind the checksum (a flipped bit otherwise breaks it first).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "wire/frame.h"

static void must(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_frame: %s\n", what);
		abort();
	}
}

static unsigned be16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

/* RFC 1071: even bytes and odd bytes summed apart, folded, combined. */
static int csum_ok(const uint8_t *ip)
{
	uint32_t hi = 0, lo = 0, sum;

	for (int i = 0; i < 20; i += 2) {
		hi += ip[i];
		lo += ip[i + 1];
	}
	sum = (hi << 8) + lo;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

/* Whether the frame obeys every rule frame.h states. */
static int obeys(const uint8_t *d, size_t n)
{
	const uint8_t *ip = d + 14, *udp = d + 34;

	if (n < 42 || be16(d + 12) != 0x0800)
		return 0;
	if (ip[0] >> 4 != 4 || (ip[0] & 15) != 5 || ip[9] != 17)
		return 0;
	if ((ip[6] & 0x20) || (be16(ip + 6) & 0x1fff)) /* MF, fragment offset */
		return 0;
	if (be16(ip + 2) < 28 || be16(ip + 2) > n - 14 || !csum_ok(ip))
		return 0;
	return be16(udp + 4) == be16(ip + 2) - 20;
}

/* Writes the checksum that makes the header at ip sum right (frame.h's encoder side). */
static void csum_set(uint8_t *ip)
{
	uint16_t c = urnic_ipv4_hdr_csum(ip);

	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
}

int LLVMFuzzerTestOneInput(const uint8_t *input, size_t input_size)
{
	uint8_t *fixed = NULL;
	const uint8_t *data;
	struct urnic_frame f;
	size_t size;
	int ret;

	if (input_size < 1)
		return 0;
	data = input + 1;
	size = input_size - 1;
	if ((input[0] & 1) && size >= 34) {
		fixed = malloc(size); /* exactly size bytes: ASan sees a read past them */
		must(fixed != NULL, "out of memory");
		memcpy(fixed, data, size);
		csum_set(fixed + 14);
		data = fixed;
	}
	memset(&f, 0xa5, sizeof f);
	ret = urnic_frame_decode(data, size, &f);
	must(ret == 0 || ret == -EBADMSG, "an unknown result");
	must((ret == 0) == obeys(data, size), ret ? "a frame that obeys every rule was refused"
						  : "a frame that breaks a rule was accepted");
	if (ret) {
		free(fixed);
		return 0;
	}
	must(f.payload_off == 42 && f.payload_len == be16(data + 38) - 8u,
	     "the payload is not where the UDP header puts it");
	must((size_t)f.payload_off + f.payload_len <= size, "the payload runs past the frame");
	must(!memcmp(f.src, data + 26, 4) && !memcmp(f.dst, data + 30, 4), "wrong addresses");
	must(f.sport == be16(data + 34) && f.dport == be16(data + 36), "wrong ports");
	must(f.ip_id == be16(data + 18) && f.tos == data[15] && f.ttl == data[22],
	     "wrong IP identification, TOS or TTL");
	free(fixed);
	return 0;
}
