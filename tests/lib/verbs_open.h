/* SPDX-License-Identifier: MIT */
/*
 * verbs_open.h - the device a one-device verbs test runs on: the first the drop-in
 * library lists, on the test's own address unless URNIC_ADDR names one (each program
 * has an address of its own, so that ctest may run them side by side). Header-only,
 * like check.h.
 */
#ifndef URNIC_TESTS_VERBS_OPEN_H
#define URNIC_TESTS_VERBS_OPEN_H

#include <stdlib.h>

#include <infiniband/verbs.h>

#include "check.h"

static inline struct ibv_context *verbs_open_first(const char *addr)
{
	struct ibv_context *ctx;
	struct ibv_device **list;
	int n;

	if (!getenv("URNIC_ADDR"))
		setenv("URNIC_ADDR", addr, 1);
	list = ibv_get_device_list(&n);
	CHECK(list && n >= 1);
	ctx = ibv_open_device(list[0]);
	CHECK(ctx);
	ibv_free_device_list(list);
	return ctx;
}

#endif
