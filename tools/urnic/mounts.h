/* SPDX-License-Identifier: MIT */
/*
 * mounts.h - the private mount namespace of `urnic run` and the mounts made in it: an
 * empty tmpfs on a directory (added to its parent when the host has none), a device
 * node bound onto a file, and at the end every tmpfs made read-only. Each function says
 * what failed on stderr and returns 0 or -errno. Nothing here changes the host's view.
 */
#ifndef URNIC_TOOLS_MOUNTS_H
#define URNIC_TOOLS_MOUNTS_H

/* Enters a mount namespace of its own whose mounts do not propagate back: as root just
 * that; otherwise inside a new user namespace that maps the caller's uid and gid to
 * themselves. Must be called while the process has one thread. */
int urnic_mounts_enter(void);

/* Mounts an empty tmpfs (mode 0755) on dir. If dir does not exist, its parent is first
 * covered by a tmpfs holding what the parent held (each entry bound back, symbolic
 * links copied), in which dir is made: sysfs and devtmpfs cannot be written to. */
int urnic_mounts_tmpfs(const char *dir);

/* Binds the device node dev onto a new file path (in a tmpfs of urnic_mounts_tmpfs). */
int urnic_mounts_bind(const char *dev, const char *path);

/* Makes every tmpfs mounted above read-only, as sysfs is to its readers. */
int urnic_mounts_seal(void);

#endif
