/* SPDX-License-Identifier: MIT */
/*
 * fuzz_xrc.c - libFuzzer target: arbitrary packets and application actions to an XRC
 * receive QP (QP R of harness.h, IBTA Annex A14) whose requests name XRC SRQs by their
 * XRCETH: two of its domain (one with another PD), one of another domain, created,
 * destroyed and posted to by actions. The invariants are the harness's, with: a request
 * reaches only the SRQs of R's domain, and completes on the SRQ's CQ.
 * Build: clang only; replay.c runs the same entry point over the corpus under any
 * compiler.
 */
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_one(data, size, FUZZ_MODE_XRC, FUZZ_RESPONDER);
}
