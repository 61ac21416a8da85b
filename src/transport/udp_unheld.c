/* SPDX-License-Identifier: MIT */
/*
 * udp_unheld.c - REQs that reached the address before any process on it held their
 * rdma_cm port. QP 1's packets arrive at the address's first process; its CM parks
 * such a REQ for a moment (engine/cm/passive.c), but the listener may appear in
 * another process, whose CM never sees the parked copy. The transport keeps the packet
 * as it came and hands it on unchanged once the port's holder is known.
 */
#include <errno.h>
#include <string.h>

#include "transport/cm_ports.h"
#include "transport/udp.h"

void urnic_udp_unheld_keep(struct urnic_udp *u, const struct urnic_share_rec *r, uint64_t now_ns)
{
	if (r->len > URNIC_UDP_UNHELD_BYTES)
		return;
	for (uint32_t i = 0; i < URNIC_UDP_UNHELD; i++) {
		struct urnic_udp_unheld *k = &u->unheld[i];

		if (k->used)
			continue;
		k->used = true;
		k->until = now_ns + URNIC_UDP_UNHELD_NS;
		k->rec = *r;
		memcpy(k->pkt, r->pkt, r->len);
		k->rec.pkt = k->pkt;
		u->nunheld++;
		return;
	}
}

enum urnic_counter urnic_udp_forward_counter(int flush_ret)
{
	switch (flush_ret) {
	case 0:
		return URNIC_CTR_rx_forwarded;
	case -EAGAIN:
		return URNIC_CTR_drop_forward_full; /* the owner is not draining */
	case -EPERM:
		/* The slot's name is another user's: never hand it our peers' packets. */
		return URNIC_CTR_drop_forward_foreign_owner;
	default:
		return URNIC_CTR_drop_unknown_qp; /* no process owns that QPN */
	}
}

static void forget(struct urnic_udp *u, struct urnic_udp_unheld *k)
{
	k->used = false;
	u->nunheld--;
}

void urnic_udp_unheld_resteer(struct urnic_udp *u, uint64_t now_ns,
			      bool (*take)(void *ctx, uint32_t comm_id, uint64_t ca_guid),
			      void *ctx, uint64_t *counters)
{
	for (uint32_t i = 0; i < URNIC_UDP_UNHELD && u->nunheld; i++) {
		struct urnic_udp_unheld *k = &u->unheld[i];
		uint64_t guid;
		uint32_t id;
		int owner;

		if (!k->used)
			continue;
		if (now_ns >= k->until) {
			forget(u, k);
			continue;
		}
		owner = urnic_share_owner(&u->share, k->pkt, k->rec.len);
		if (owner == URNIC_CM_PORT_UNHELD)
			continue;
		if (owner >= 0 && (uint32_t)owner != u->share.slot &&
		    urnic_cm_port_req_key(k->pkt, k->rec.len, &id, &guid) == 0 &&
		    take(ctx, id, guid)) {
			urnic_share_add(&u->share, (uint32_t)owner, &k->rec);
			counters[urnic_udp_forward_counter(urnic_share_flush(&u->share))]++;
		}
		forget(u, k);
	}
}
