/* SPDX-License-Identifier: MIT */
/*
 * counters_shm.h - the layout of a device's counters file, /dev/shm/urnic.<pid>.<dev>,
 * which `urnic counters` reads while the process runs. Written only by the engine
 * thread; readers may see a counter one update behind, never a torn file header.
 */
#ifndef URNIC_DEV_COUNTERS_SHM_H
#define URNIC_DEV_COUNTERS_SHM_H

#include <stdint.h>

#define URNIC_SHM_MAGIC "URNICCT2"
#define URNIC_SHM_PREFIX "urnic."

/*
 * The file: this header, uint64_t counters[ncounters] for the device, then qp_slots
 * per-QP slots of qp_slot_bytes each (struct urnic_qp_counters, src/engine/engine.h):
 * uint32_t qpn (0: unused), uint8_t type (enum ibv_qp_type), uint8_t state (enum
 * ibv_qp_state), uint16_t reserved, uint64_t counters[ncounters]. The engine writes the
 * slots in place; slots at and past qp_end are unused.
 */
struct urnic_shm_header {
	char magic[8];
	uint32_t pid;
	uint32_t ncounters;
	char dev[32];
	char addr[64];
	uint32_t qp_slots;
	uint32_t qp_slot_bytes;
	uint32_t qp_end; /* updated by the engine thread with the device counters */
	uint32_t reserved;
};

#endif
