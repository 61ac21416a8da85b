/* SPDX-License-Identifier: MIT */
/*
 * mcast.h - multicast groups: which UD QPs of this device are attached to which group
 * (ibv_attach_mcast(3)), for delivering a datagram sent to a group to each of them.
 *
 * ibv_attach_mcast(3) and rxe (rxe_mcast.c, rxe_rcv_mcast_pkt): a multicast UD packet
 * carries the IBTA's multicast DestQP 0xFFFFFF (IB_MULTICAST_QPN) and goes to every QP
 * attached to its destination GID, each receiving it once however often it attached;
 * RoCEv2 (Annex A17.4): the group GID is an IP multicast address, IPv4 224/4 as
 * ::ffff:a.b.c.d or IPv6 ff00::/8. Limits as ibv_query_device reports them; rxe's are
 * larger (8192 groups): each group here is a socket of the transport.
 * Context: the engine's, under the device lock. Out of scope: multicast LIDs (no
 * subnet manager on Ethernet), IGMP/MLD beyond the kernel's own join.
 */
#ifndef URNIC_ENGINE_MCAST_H
#define URNIC_ENGINE_MCAST_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/addr.h"

#define URNIC_MCAST_QPN 0xffffffu /* the DestQP of a multicast packet (IB_MULTICAST_QPN) */

enum {
	URNIC_MAX_MCAST_GRP = 16,	/* groups per device (transport sockets) */
	URNIC_MAX_MCAST_QP_ATTACH = 56, /* QPs per group, as rxe */
};

struct urnic_mcast_group {
	uint8_t ip[16]; /* the group address as struct urnic_peer keeps one; nqp 0: free */
	uint32_t nqp;
	uint32_t qpn[URNIC_MAX_MCAST_QP_ATTACH];
};

struct urnic_mcast_table {
	struct urnic_mcast_group grp[URNIC_MAX_MCAST_GRP];
};

/* Attaches qpn to the group at ip (4 bytes for IPv4, else 16). 1, or 0 when it already
 * was (a no-op: rxe), -ENOMEM (no free group or the group is full). *joined: the group
 * is new (the transport must join it). */
int urnic_mcast_attach(struct urnic_mcast_table *t, bool ipv6, const uint8_t *ip, uint32_t qpn,
		       bool *joined);

/* Detaches qpn. 0, -EINVAL (not attached: rxe). *left: the group is now empty (the
 * transport leaves it). */
int urnic_mcast_detach(struct urnic_mcast_table *t, bool ipv6, const uint8_t *ip, uint32_t qpn,
		       bool *left);

/* The group at ip, or NULL. */
const struct urnic_mcast_group *urnic_mcast_find(const struct urnic_mcast_table *t, bool ipv6,
						 const uint8_t *ip);

#endif
