/* SPDX-License-Identifier: MIT */
/*
 * misc.c - libibverbs helpers that need no device: fork support and static-rate conversion.
 *
 * Fork: rdma-core marks registered memory MADV_DONTFORK so that copy-on-write after fork()
 * cannot move a page under a DMA-ing NIC. urnic's NIC is an engine thread of the same
 * process that reads and writes registered memory through its virtual address, which
 * fork() does not change, so there is nothing to protect: we answer as rdma-core does on a
 * kernel with copy-on-fork support (IBV_FORK_UNNEEDED, every call succeeds).
 * Rates: the IBV_RATE_* <-> multiple of 2.5 Gb/s <-> Mb/s tables of rdma-core v44
 * libibverbs/verbs.c, same values.
 */
#include <stddef.h>

#include <infiniband/verbs.h>

#include "export.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* rdma-core driver.h prototypes (IBVERBS_1.1, used by the real libmlx5); not installed. */
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);

URNIC_EXPORT int ibv_fork_init(void)
{
	return 0;
}

URNIC_EXPORT enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

URNIC_EXPORT int ibv_dontfork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

URNIC_EXPORT int ibv_dofork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

/* Indexed by enum ibv_rate; holes (IBV_RATE_MAX = 0, and 1) are all zero. */
struct rate_row {
	int mult; /* of 2.5 Gb/s; 0: rdma-core gives this rate no multiple */
	int mbps;
};

/* clang-format off */
static const struct rate_row rates[] = {
	[IBV_RATE_2_5_GBPS] = { 1, 2500 },
	[IBV_RATE_5_GBPS] = { 2, 5000 },
	[IBV_RATE_10_GBPS] = { 4, 10000 },
	[IBV_RATE_20_GBPS] = { 8, 20000 },
	[IBV_RATE_30_GBPS] = { 12, 30000 },
	[IBV_RATE_40_GBPS] = { 16, 40000 },
	[IBV_RATE_60_GBPS] = { 24, 60000 },
	[IBV_RATE_80_GBPS] = { 32, 80000 },
	[IBV_RATE_120_GBPS] = { 48, 120000 },
	[IBV_RATE_14_GBPS] = { 0, 14062 },
	[IBV_RATE_56_GBPS] = { 0, 56250 },
	[IBV_RATE_112_GBPS] = { 0, 112500 },
	[IBV_RATE_168_GBPS] = { 0, 168750 },
	[IBV_RATE_25_GBPS] = { 0, 25781 },
	[IBV_RATE_100_GBPS] = { 0, 103125 },
	[IBV_RATE_200_GBPS] = { 0, 206250 },
	[IBV_RATE_300_GBPS] = { 0, 309375 },
	[IBV_RATE_28_GBPS] = { 11, 28125 },
	[IBV_RATE_50_GBPS] = { 20, 53125 },
	[IBV_RATE_400_GBPS] = { 160, 425000 },
	[IBV_RATE_600_GBPS] = { 240, 637500 },
	[IBV_RATE_800_GBPS] = { 320, 850000 },
	[IBV_RATE_1200_GBPS] = { 480, 1275000 },
};
/* clang-format on */
_Static_assert(ARRAY_SIZE(rates) == IBV_RATE_1200_GBPS + 1, "rates");

/* NULL for IBV_RATE_MAX, holes and values outside the enum. */
static const struct rate_row *find_rate(enum ibv_rate rate)
{
	size_t i = (size_t)(unsigned int)rate;

	return i < ARRAY_SIZE(rates) && rates[i].mbps ? &rates[i] : NULL;
}

URNIC_EXPORT int ibv_rate_to_mult(enum ibv_rate rate)
{
	const struct rate_row *r = find_rate(rate);

	return r && r->mult ? r->mult : -1;
}

URNIC_EXPORT enum ibv_rate mult_to_ibv_rate(int mult)
{
	for (size_t i = 0; i < ARRAY_SIZE(rates); i++)
		if (rates[i].mult && rates[i].mult == mult)
			return (enum ibv_rate)i;
	return IBV_RATE_MAX;
}

URNIC_EXPORT int ibv_rate_to_mbps(enum ibv_rate rate)
{
	const struct rate_row *r = find_rate(rate);

	return r ? r->mbps : -1;
}

URNIC_EXPORT enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	for (size_t i = 0; i < ARRAY_SIZE(rates); i++)
		if (rates[i].mbps && rates[i].mbps == mbps)
			return (enum ibv_rate)i;
	return IBV_RATE_MAX;
}
