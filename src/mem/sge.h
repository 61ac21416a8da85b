/* SPDX-License-Identifier: MIT */
/*
 * sge.h - scatter/gather lists against the region table.
 *
 * IBTA 10.7.2.1 / 11.4.1.1: each SGE names local memory by L_Key; the engine resolves
 * every entry through the region table (key, PD, bounds, local rights) at the moment it
 * reads or writes, so a region deregistered under an outstanding WR is never touched.
 * Entries in on-demand regions are read and written through the table's odp calls
 * (odp.h): memory not mapped with the right is an error (-ENXIO), not a fault.
 */
#ifndef URNIC_MEM_SGE_H
#define URNIC_MEM_SGE_H

#include <stddef.h>
#include <stdint.h>

#include "mem/mr.h"
#include "queue/wq.h"
#include "wire/addr.h"
#include "wire/pkt.h"

/* Points frags at bytes [off, off+len) of the list, without copying. At most
 * max_frags fragments. Returns the number of fragments, -EFAULT when an entry does
 * not resolve with the rights in need (or more fragments are needed), or -EMSGSIZE
 * when the list is shorter than off + len.
 * Entries in on-demand regions: with a bounce buffer (bounce_len bytes, at least len),
 * their bytes are read into it, at their offset in the range, and their fragments point
 * there (-ENXIO when that memory cannot be read, -EMSGSIZE when len does not fit);
 * without one (a check only: NULL) they are resolved and not read. */
int urnic_sge_gather(const struct urnic_mr_table *t, const struct urnic_pd *pd,
		     const struct urnic_sge *sge, uint32_t nsge, uint32_t off, uint32_t len,
		     uint32_t need, struct urnic_frag *frags, uint32_t max_frags, uint8_t *bounce,
		     uint32_t bounce_len);

/* Where bytes [off, off+len) of the list lie in this process, resolved as
 * urnic_sge_gather resolves them with the rights in need, for another process to write
 * there, or for a copy from another process (direct placement, wire/addr.h): at most
 * URNIC_MAX_SGE segments. Returns their number, -EFAULT or -EMSGSIZE as
 * urnic_sge_gather, or -ENXIO when an entry is on demand (its memory is reached only
 * through the table's odp calls). */
int urnic_sge_host_segs(const struct urnic_mr_table *t, const struct urnic_pd *pd,
			const struct urnic_sge *sge, uint32_t nsge, uint32_t off, uint32_t len,
			uint32_t need, struct urnic_direct_seg *segs);

/* Copies len bytes of data to offset off of the list (needs LOCAL_WRITE), writing
 * nothing unless every entry resolves. Returns 0, -EFAULT (an entry does not resolve),
 * -EMSGSIZE (the list is too short) or -ENXIO (an entry's on-demand memory is not mapped
 * writable: what came before it may have been written, as an RNIC may have placed part
 * of a message it completes in error). nsge is at most URNIC_MAX_SGE. */
int urnic_sge_scatter(const struct urnic_mr_table *t, const struct urnic_pd *pd,
		      const struct urnic_sge *sge, uint32_t nsge, uint32_t off, const uint8_t *data,
		      uint32_t len);

#endif
