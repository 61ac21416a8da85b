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

/* 0, or -EINVAL when a variable or the config file held a bad value (said when it was
 * read): then no device opens. */
int urnic_dev_config_check(void);

/* The process's settings from the variables of README "Configuration". */
struct urnic_dev_settings {
	uint32_t spin_ns;    /* URNIC_SPIN_US */
	long ack_hold_us;    /* URNIC_ACK_HOLD_US, -1: the engine's default */
	long iw_hold_us;     /* URNIC_IW_HOLD_US, -1: the engine's default */
	bool post_batch;     /* not URNIC_POST_BATCH=0 */
	bool ring;	     /* URNIC_RING=1 */
	bool local;	     /* URNIC_LOCAL (default 1) */
	bool local_direct;   /* URNIC_LOCAL_DIRECT (default 1) */
	bool gso, gro;	     /* not URNIC_NO_GSO=1, URNIC_NO_GRO=1 */
	bool icrc_strict;    /* URNIC_ICRC_STRICT=1 */
	bool print_counters; /* URNIC_PRINT_COUNTERS=1 */
	bool stub_trace;     /* URNIC_STUB_TRACE=1 (and the stubs read it, abi_stubs.c) */
	const char *pcap;    /* URNIC_PCAP or the file's `pcap`: the capture's path, NULL: none */
};
const struct urnic_dev_settings *urnic_dev_settings(void);

/* The mode of the counters files (URNIC_COUNTERS_MODE, default 0600). */
mode_t urnic_dev_counters_mode(void);

/* Says what is wrong with the configuration (on stderr, naming where it was read) and
 * fails every device open (config.c). */
void urnic_config_bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Congestion control per device (config_cc.c): a list from `from` (URNIC_CONGESTION or a
 * file's line), kept; then applied to the devices, in the order read. */
void urnic_config_cc_list(const char *list, const char *from);
void urnic_config_cc_apply(struct urnic_dev *const *devices, int ndevices);

/* The library variable that the variable name (len bytes, no '=') misspells, or NULL
 * when it is one, or not near any (env_names.c). */
const char *urnic_env_misspelt(const char *name, size_t len);

/* A new device's lock, hand-over (stopped) and list of due channels (device.c). */
void urnic_dev_init(struct urnic_dev *d);

#endif
