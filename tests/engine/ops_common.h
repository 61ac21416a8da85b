/* SPDX-License-Identifier: MIT */
/*
 * ops_common.h - the setup the RC operation tests share (test_ops.c, test_atomics.c,
 * test_ordering.c): one connected pair on a clean fabric with a BIG buffer on each
 * side, and a close that checks nothing was retransmitted, dropped or NAKed.
 */
#ifndef URNIC_TESTS_ENGINE_OPS_COMMON_H
#define URNIC_TESTS_ENGINE_OPS_COMMON_H

#include "fabric.h"

#define BIG 8192

struct env {
	struct fab_pair p;
	struct fab_buf la, ra; /* local on host 0, remote on host 1 */
};

/* A pair with path MTU mtu; la filled with pattern 1, ra with pattern 2. */
void env_open(struct env *v, uint32_t mtu);
/* Checks the run was clean and both QPs are still in RTS, then frees everything. */
void env_close(struct env *v);

#endif
