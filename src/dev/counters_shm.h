/* SPDX-License-Identifier: MIT */
/*
 * counters_shm.h - the layout of a device's counters file, /dev/shm/urnic.<pid>.<dev>,
 * which `urnic counters` reads while the process runs. Written only by the engine
 * thread; readers may see a counter one update behind, never a torn file header.
 */
#ifndef URNIC_DEV_COUNTERS_SHM_H
#define URNIC_DEV_COUNTERS_SHM_H

#include <stdint.h>

#define URNIC_SHM_MAGIC "URNICCT1"
#define URNIC_SHM_PREFIX "urnic."

struct urnic_shm_header {
	char magic[8];
	uint32_t pid;
	uint32_t ncounters;
	char dev[32];
	char addr[64];
};

#endif
