/* SPDX-License-Identifier: MIT */
/*
 * local_int.h - what local.c and local_ring.c share and nobody else uses: not part of
 * local.h's API.
 */
#ifndef URNIC_TRANSPORT_LOCAL_INT_H
#define URNIC_TRANSPORT_LOCAL_INT_H

#include "transport/local.h"

/* Where a record's direct placement segments start, after its len packet bytes. */
static inline uint32_t urnic_local_seg_off(uint32_t len)
{
	return (URNIC_LOCAL_REC_HDR + len + 7u) & ~7u;
}

/* The ring bytes a record of len packet bytes and nseg direct placement segments
 * takes: header, packet, segments, padding. */
static inline uint32_t urnic_local_rec_bytes(uint32_t len, uint32_t nseg)
{
	uint32_t end = nseg ? urnic_local_seg_off(len) + nseg * 16u : URNIC_LOCAL_REC_HDR + len;

	return (end + URNIC_LOCAL_REC_ALIGN - 1) & ~(URNIC_LOCAL_REC_ALIGN - 1);
}

/* Writes one record into e's lane (taken by its receiver), waiting for room as
 * urnic_local_send says, and wakes the receiver if it asked. */
void urnic_local_put(struct urnic_local_out *e, const struct urnic_local_env *env,
		     const uint8_t *pkt, uint32_t len, uint64_t *counters);

/* Closes an incoming lane's connection and unmaps the lane (local.c). */
void urnic_local_in_free(struct urnic_local *l, struct urnic_local_in *e);

#endif
