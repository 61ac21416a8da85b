/* SPDX-License-Identifier: MIT */
/*
 * sysfs_tree.h - the sysfs view of urnic's devices that `urnic run` mounts, for tools
 * that look for RDMA devices and their network interfaces under /sys/class/infiniband
 * (pyverbs' rdma_cm tests, UCX, scripts reading GID tables).
 */
#ifndef URNIC_TOOLS_SYSFS_TREE_H
#define URNIC_TOOLS_SYSFS_TREE_H

/* Mounts /sys/class/infiniband, /sys/class/infiniband_verbs and /dev/infiniband (in
 * the namespace of urnic_mounts_enter) holding every device urnic's library lists, as
 * its verbs describe them. Says what failed on stderr; returns 0 or -errno. */
int urnic_sysfs_tree_mount(void);

#endif
