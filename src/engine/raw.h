/* SPDX-License-Identifier: MIT */
/*
 * raw.h - raw packet QPs (IBV_QPT_RAW_PACKET) and the flow rules that steer received
 * Ethernet frames to them (ibv_create_flow(3)), as the driver sees them.
 *
 * A send WR of a raw QP carries a whole frame, L2 header onwards, which the engine
 * copies into its raw tx batch for the driver to put on the port's wire (hooks.flush
 * sends it with the RoCE batch); the WR completes once its frame is in the batch. A
 * received frame is offered to urnic_engine_raw_rx, which lets the flow rules choose
 * the QPs that take it (wire/flow.h) and places it whole in each one's next receive
 * WQE. Context: the device lock, like the rest of the engine.
 */
#ifndef URNIC_ENGINE_RAW_H
#define URNIC_ENGINE_RAW_H

#include <stddef.h>
#include <stdint.h>

#include "engine/core.h"
#include "wire/flow.h"

enum {
	/* The longest frame a raw QP sends or receives: a 9000-byte jumbo MTU with its
	 * Ethernet header and a VLAN tag, rounded up. Longer send WRs complete with
	 * IBV_WC_LOC_LEN_ERR; longer received frames are dropped (counted). */
	URNIC_RAW_FRAME_MAX = 9216,
	URNIC_RAW_TX_FRAMES = 16,  /* frames per send system call */
	URNIC_RAW_MAX_FLOWS = 256, /* flow rules per device */
};

/* Frames waiting to be sent, in post order. */
struct urnic_raw_tx {
	uint32_t n;
	uint32_t len[URNIC_RAW_TX_FRAMES];
	uint8_t frame[URNIC_RAW_TX_FRAMES][URNIC_RAW_FRAME_MAX];
};

struct urnic_raw {
	struct urnic_raw_tx tx;
	uint32_t
		frame_max; /* the port's longest frame (driver: MTU + headers), at most the above */
	uint32_t nrules;
	uint32_t next_id;
	struct urnic_flow_rule rules[URNIC_RAW_MAX_FLOWS];
};

extern const struct urnic_qp_ops urnic_raw_ops;

/* Adds rule r (its qpn a raw QP's) and returns its id in *id. 0, -EINVAL (no such raw
 * QP) or -ENOMEM (URNIC_RAW_MAX_FLOWS reached, or no memory for the raw part). */
int urnic_engine_flow_add(struct urnic_engine *e, const struct urnic_flow_rule *r, uint32_t *id);
/* Removes the rule; -ENOENT if there is none with this id. */
int urnic_engine_flow_del(struct urnic_engine *e, uint32_t id);
/* Removes every rule of QP qpn (the QP goes away). */
void urnic_engine_flow_del_qp(struct urnic_engine *e, uint32_t qpn);

/* A frame of len bytes from the port's wire, at now_ns: delivered whole to each raw QP
 * whose rule takes it. Returns the number of QPs it reached. */
uint32_t urnic_engine_raw_rx(struct urnic_engine *e, const uint8_t *frame, size_t len,
			     uint64_t now_ns);

/* Whether frames wait in the raw tx batch. */
static inline bool urnic_engine_raw_pending(const struct urnic_engine *e)
{
	return e->raw && e->raw->tx.n;
}

/* Makes the raw part (the first raw QP, the driver's first flow): 0 or -ENOMEM. */
int urnic_engine_raw_init(struct urnic_engine *e, uint32_t frame_max);

#endif
