/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ud.c - libFuzzer target: arbitrary datagrams and application actions to live UD QPs
 * (harness.h): Q_Key checks (IBTA 10.2.5), the GRH area of every receive, and multicast:
 * QPs attached to groups by actions, datagrams to DestQP 0xFFFFFF.
 * The invariants are the harness's. Build: clang only; replay.c runs the same entry
 * point over the corpus under any compiler.
 */
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_one(data, size, FUZZ_MODE_UD, FUZZ_RESPONDER);
}
