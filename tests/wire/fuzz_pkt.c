/* SPDX-License-Identifier: MIT */
/*
 * fuzz_pkt.c - libFuzzer target for urnic_pkt_decode (pkt.h) and its inverse.
 *
 * Any input either fails to decode, or decodes to headers that urnic_pkt_encode_hdr
 * writes back byte for byte (every BTH/ETH bit is a field or a must-be-zero reserved
 * bit, IBTA 9.2-9.3), and the re-encoded packet decodes to the same fields. The ICRC
 * (Annex A17.3.3) is computed over the input to exercise it on odd lengths.
 * Build: clang only (-fsanitize=fuzzer); fuzz_replay.c runs it everywhere.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "pktgen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct urnic_pkt a, b;
	uint8_t hdr[64];
	struct urnic_frag frag = { data, size };
	uint8_t *again;
	ssize_t n, m;

	(void)urnic_icrc_flow(&wire_test_flow, &frag, 1, size);
	n = urnic_pkt_decode(&a, data, size);
	if (n < 0)
		return 0;
	if (a.payload != data + n || (size_t)n + a.payload_bytes + a.bth.pad + 4 != size)
		abort();

	m = urnic_pkt_encode_hdr(&a, hdr, sizeof(hdr));
	if (m != n || memcmp(hdr, data, (size_t)n))
		abort();

	again = malloc(size);
	if (!again)
		abort();
	memcpy(again, hdr, (size_t)n);
	memcpy(again + n, data + n, size - (size_t)n);
	m = urnic_pkt_decode(&b, again, size);
	if (m != n || wire_pkt_diff(&a, &b) || b.payload != again + n)
		abort();
	if (size >= 28) /* the input read as IP (20) + UDP (8) + the rest */
		(void)urnic_icrc_raw(data, 20, data + 20, data + 28, size - 28);
	free(again);
	return 0;
}
