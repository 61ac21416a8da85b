/* SPDX-License-Identifier: MIT */
/*
 * fuzz_completer.c - libFuzzer target: arbitrary responses (ACK, NAK, READ responses,
 * atomic ACKs, or anything else) to a live RC completer (QP Q of harness.h, with SEND,
 * WRITE, READ and atomic work outstanding), unless a record sends them elsewhere. The
 * invariants are the harness's. Build: clang only; replay.c runs the same entry point
 * over the corpus under any compiler.
 */
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_rc_one(data, size, FUZZ_COMPLETER);
}
