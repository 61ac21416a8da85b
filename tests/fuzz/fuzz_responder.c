/* SPDX-License-Identifier: MIT */
/*
 * fuzz_responder.c - libFuzzer target: arbitrary packets to a live RC responder (QP R of
 * harness.h: posted receives, regions of every right), unless a record sends them
 * elsewhere. The invariants are the harness's. Build: clang only; replay.c runs the
 * same entry point over the corpus under any compiler.
 */
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_rc_one(data, size, FUZZ_RESPONDER);
}
