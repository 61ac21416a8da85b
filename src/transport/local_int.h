/* SPDX-License-Identifier: MIT */
/*
 * local_int.h - what local.c and local_ring.c share and nobody else uses: not part of
 * local.h's API.
 */
#ifndef URNIC_TRANSPORT_LOCAL_INT_H
#define URNIC_TRANSPORT_LOCAL_INT_H

#include "transport/local.h"

/* The ring bytes a record of len packet bytes takes: header, packet, padding. */
static inline uint32_t urnic_local_rec_bytes(uint32_t len)
{
	return (URNIC_LOCAL_REC_HDR + len + URNIC_LOCAL_REC_ALIGN - 1) &
	       ~(URNIC_LOCAL_REC_ALIGN - 1);
}

/* Writes one record into e's lane (taken by its receiver), waiting for room as
 * urnic_local_send says, and wakes the receiver if it asked. */
void urnic_local_put(struct urnic_local_out *e, const struct urnic_local_env *env,
		     const uint8_t *pkt, uint32_t len, uint64_t *counters);

/* Closes an incoming lane's connection and unmaps the lane (local.c). */
void urnic_local_in_free(struct urnic_local *l, struct urnic_local_in *e);

#endif
