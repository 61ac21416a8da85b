/* SPDX-License-Identifier: MIT */
/*
 * iw_counters.c - the iWARP CM's counters (stats/iwcm_counters.def) and its MPA refusals
 * per reason (engine/iwarp/mpa_conn_reason.def), per process, printed at exit with
 * URNIC_PRINT_COUNTERS=1 as the devices print theirs; the counters also on the device
 * a connection is on (urnic_dev_iw_count), for `urnic counters`. Context: any thread
 * (atomics).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/iw_cm.h"

static uint64_t counters[URNIC_RDMA_IW_C_COUNT];
static uint64_t refusals[URNIC_MPA_CONN_R_COUNT];

void urnic_rdma_iw_count(struct urnic_rdma_dev *rd, enum urnic_rdma_iw_counter c)
{
	__atomic_fetch_add(&counters[c], 1, __ATOMIC_RELAXED);
	if (rd)
		urnic_dev_iw_count(rd->d, c);
}

uint64_t urnic_rdma_iw_counter(enum urnic_rdma_iw_counter c, const char **name)
{
	if (name)
		*name = urnic_dev_iw_counter_name(c);
	return __atomic_load_n(&counters[c], __ATOMIC_RELAXED);
}

void urnic_rdma_iw_count_refusal(enum urnic_mpa_conn_reason r)
{
	__atomic_fetch_add(&refusals[r], 1, __ATOMIC_RELAXED);
}

uint64_t urnic_rdma_iw_refusals(enum urnic_mpa_conn_reason r)
{
	return __atomic_load_n(&refusals[r], __ATOMIC_RELAXED);
}

/* At exit with URNIC_PRINT_COUNTERS=1, as the devices print theirs: the counters that
 * moved, as iwcm_<name>, and the MPA refusals per reason as iwcm_mpa_<reason>. */
__attribute__((destructor)) static void print_counters(void)
{
	const char *v = secure_getenv("URNIC_PRINT_COUNTERS");
	bool header = false;

	if (!v || !strcmp(v, "0") || !*v)
		return;
	for (int i = 0; i < URNIC_RDMA_IW_C_COUNT + URNIC_MPA_CONN_R_COUNT; i++) {
		bool mpa = i >= URNIC_RDMA_IW_C_COUNT;
		int k = mpa ? i - URNIC_RDMA_IW_C_COUNT : i;
		uint64_t n = mpa ? urnic_rdma_iw_refusals((enum urnic_mpa_conn_reason)k)
				 : urnic_rdma_iw_counter((enum urnic_rdma_iw_counter)k, NULL);
		char name[48];

		if (!n)
			continue;
		if (!header)
			fprintf(stderr, "urnic: iWARP CM counters\n");
		header = true;
		if (mpa)
			snprintf(name, sizeof(name), "iwcm_mpa_%s",
				 urnic_dev_iw_mpa_reason_id((enum urnic_mpa_conn_reason)k));
		else
			snprintf(name, sizeof(name), "iwcm_%s",
				 urnic_dev_iw_counter_name((enum urnic_rdma_iw_counter)k));
		for (char *c = name; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		fprintf(stderr, "  %-24s %llu\n", name, (unsigned long long)n);
	}
}
