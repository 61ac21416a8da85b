/* SPDX-License-Identifier: MIT */
/*
 * mapping.h - whether a range of the process's memory could be registered: what the
 * kernel's pinning (ib_umem_get, drivers/infiniband/core/umem.c) refuses for an RNIC,
 * urnic refuses from the process's mappings (/proc/self/maps, one read per call).
 *
 * urnic does not pin: the engine reads and writes registered memory through the
 * process's own mapping. A range the kernel could not pin is one a remote peer's
 * access would fault in (unmapped, PROT_NONE, read-only under a right that writes),
 * taking the process down, so it is refused when it is registered. What the mapping
 * becomes afterwards is the application's to keep (README.md, "Registered memory").
 * Out of scope: RLIMIT_MEMLOCK (nothing is locked), the kernel's refusal of I/O and
 * PFN mappings other than [vvar], and of shared file mappings for long-term writes.
 */
#ifndef URNIC_VERBS_MAPPING_H
#define URNIC_VERBS_MAPPING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 0, or -EINVAL: the range's end wraps (also once rounded up to a page), or it spans no
 * page or more than UINT_MAX pages; -EFAULT: a page it touches is not mapped, not
 * readable, or not writable while `writable` (ib_access_writable) is asked. A range
 * found in no page is checked as the page holding addr, as the kernel pins it. Without
 * /proc/self/maps the mapping is not checked. */
int urnic_mapping_check(uintptr_t addr, size_t len, bool writable);

#endif
