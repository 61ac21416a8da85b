/* SPDX-License-Identifier: MIT */
/*
 * fuzz_tm.c - libFuzzer target: arbitrary packets and application actions to an RC QP
 * (QP R of harness.h) on a tag-matching SRQ (IBV_SRQT_TM, ibv_post_srq_ops(3)): eager
 * and rendezvous messages with TMHs, tags added and removed by actions. The invariants
 * are the harness's, with: a tagged buffer is written only while its tag is posted or
 * its rendezvous reads, and a rendezvous READ asks only for what an RVH named.
 * Build: clang only; replay.c runs the same entry point over the corpus under any
 * compiler.
 */
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_one(data, size, FUZZ_MODE_TM, FUZZ_RESPONDER);
}
