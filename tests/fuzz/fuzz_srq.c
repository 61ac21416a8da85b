/* SPDX-License-Identifier: MIT */
/*
 * fuzz_srq.c - libFuzzer target: arbitrary packets and application actions to a live RC
 * responder (QP R of harness.h) whose receives, and Q's, come from one SRQ (IBTA 10.2.9):
 * WQEs taken by two QPs, the limit event armed by actions, Last WQE Reached.
 * The invariants are the harness's. Build: clang only; replay.c runs the same entry
 * point over the corpus under any compiler.
 */
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_one(data, size, FUZZ_MODE_SRQ, FUZZ_RESPONDER);
}
