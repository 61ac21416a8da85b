/* SPDX-License-Identifier: MIT */
/*
 * fuzz_uc.c - libFuzzer target: arbitrary packets and application actions to a live UC
 * responder (QP R of harness.h) beside a UC requester (QP Q) whose sends go out unanswered
 * (IBTA 9.8: no ACKs; a broken message is dropped up to the next FIRST or ONLY).
 * The invariants are the harness's. Build: clang only; replay.c runs the same entry
 * point over the corpus under any compiler.
 */
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_one(data, size, FUZZ_MODE_UC, FUZZ_RESPONDER);
}
