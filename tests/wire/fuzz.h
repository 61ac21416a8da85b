/* SPDX-License-Identifier: MIT */
/*
 * fuzz.h - the libFuzzer entry point of the wire fuzz target (fuzz_pkt.c), declared for
 * the plain replay driver (fuzz_replay.c) that runs it under any compiler in CTest.
 */
#ifndef URNIC_TESTS_WIRE_FUZZ_H
#define URNIC_TESTS_WIRE_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
