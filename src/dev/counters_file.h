/* SPDX-License-Identifier: MIT */
/*
 * counters_file.h - a device's counters file under /dev/shm (layout: counters_shm.h),
 * which `urnic counters` reads while the process runs. Between counters_file.c and
 * device.c.
 */
#ifndef URNIC_DEV_COUNTERS_FILE_H
#define URNIC_DEV_COUNTERS_FILE_H

#include <sys/types.h>

#include "dev/device.h"

/* Creates and maps d's counters file with mode, and points the engine's per-QP
 * counters into it; without a file (said on stderr) the device works all the same.
 * Context: the open lock, before the engine thread starts; takes the device lock. */
void urnic_dev_counters_open(struct urnic_dev *d, mode_t mode);
/* Unmaps and removes it. Context: the open lock, the engine thread joined. */
void urnic_dev_counters_close(struct urnic_dev *d);
/* Removes the counters files that processes of this user left when they died (see
 * counters_file.c for which). Context: the open lock, at a device's first open. */
void urnic_dev_counters_sweep(void);

#endif
