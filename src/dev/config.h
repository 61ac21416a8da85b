/* SPDX-License-Identifier: MIT */
/*
 * config.h - between config.c and the rest of src/dev/: the settings read once per
 * process (the device list, the faulty wire, the counters files' mode), and the
 * device's own initialisation that config.c calls for each device it adds.
 */
#ifndef URNIC_DEV_CONFIG_H
#define URNIC_DEV_CONFIG_H

#include <sys/types.h>

#include "dev/device.h"

/* The faulty wire from URNIC_FAULT or the config file (transport/fault.h), or NULL
 * when there is none. Valid once urnic_dev_list has run. */
const struct urnic_fault_conf *urnic_dev_fault_conf(void);

/* The mode of the counters files (URNIC_COUNTERS_MODE, default 0600) in *mode; -EINVAL
 * when the variable was bad (said when it was read): then no device opens. */
int urnic_dev_counters_mode(mode_t *mode);

/* A new device's lock, hand-over (stopped) and list of due channels (device.c). */
void urnic_dev_init(struct urnic_dev *d);

#endif
