/* SPDX-License-Identifier: MIT */
/*
 * odp.h - how the core moves the bytes of on-demand regions (IBV_ACCESS_ON_DEMAND).
 *
 * An on-demand region may name memory the application has not mapped yet, and an implicit
 * one names the whole address space: an access through it, a peer's or a local SGE's, may
 * meet a page that is not mapped or lacks the right. An RNIC ends such an access as a
 * protection error (NAK remote access error, IBTA 9.7.5.2.4; IBV_WC_LOC_PROT_ERR); a
 * plain load or store here would end the process. So the bytes of an on-demand region
 * move only through these calls, which fail where a plain access would fault. The driver
 * provides them (mem/ and engine/ make no system calls); ordinary regions keep plain
 * copies. A page not populated yet is faulted in by the kernel either way.
 */
#ifndef URNIC_MEM_ODP_H
#define URNIC_MEM_ODP_H

#include <errno.h>
#include <stddef.h>

struct urnic_odp_ops {
	/* Copy len bytes from src, inside an on-demand region, to dst: 0, or -EFAULT when
	 * a byte of src is not mapped readable. */
	int (*read)(void *dst, const void *src, size_t len);
	/* Copy len bytes from src to dst, inside an on-demand region: 0, or -EFAULT when
	 * a byte of dst is not mapped writable; the bytes before it may have been written. */
	int (*write)(void *dst, const void *src, size_t len);
	/* Make the 8 bytes at p present and writable for an atomic executed on them right
	 * after: 0 or -EFAULT. No system call makes a fault-safe compare-and-swap, so this
	 * checks first: memory another thread of the application unmaps in between still
	 * faults. NULL when the kernel cannot tell (atomics on on-demand regions fail). */
	int (*atomic_ready)(void *p);
};

/* The calls with no driver behind them (ops NULL, an engine test that set none): every
 * access to an on-demand region fails. */
static inline int urnic_odp_read(const struct urnic_odp_ops *ops, void *dst, const void *src,
				 size_t len)
{
	return ops ? ops->read(dst, src, len) : -EFAULT;
}

static inline int urnic_odp_write(const struct urnic_odp_ops *ops, void *dst, const void *src,
				  size_t len)
{
	return ops ? ops->write(dst, src, len) : -EFAULT;
}

static inline int urnic_odp_atomic_ready(const struct urnic_odp_ops *ops, void *p)
{
	return ops && ops->atomic_ready ? ops->atomic_ready(p) : -EFAULT;
}

#endif
