/* SPDX-License-Identifier: MIT */
/*
 * uet_rc.h - RC queue pairs carried by the Ultra Ethernet transport (UE 1.0) on a device
 * of kind `uet`: each connected QP pair is one packet delivery context (PDS RUD, pds.h)
 * whose requests carry SES standard headers, sprayed over entropy values (reps.h) at
 * the pace of NSCC (cc/nscc.h). Verbs semantics stay RC's: completions in order, READ,
 * RNR, remote errors; a WRITE's packets are placed as they arrive, in any order.
 *
 * The driver feeds every UDP payload that arrived on port 4793 to urnic_uet_rx and sends
 * what the tx batch holds (no ICRC: the UET datagram is PDS header, SES header, payload)
 * from the UDP source port each packet names (p->dst.sport, the entropy value) to port
 * 4793 of its peer, with the IP TOS p->dst.traffic_class (ECT(0) on every packet).
 * Context: the device lock, as every engine entry point.
 */
#ifndef URNIC_ENGINE_UET_UET_RC_H
#define URNIC_ENGINE_UET_UET_RC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/core.h"

enum {
	/* The entropy values a device's packets take: UDP source ports
	 * URNIC_UET_EV_BASE .. URNIC_UET_EV_BASE + URNIC_UET_EVS - 1, so that the driver
	 * binds a bounded set of sending sockets. 32 values spread over a handful of ECMP
	 * paths with few collisions left unused. */
	URNIC_UET_EV_BASE = 0xd000,
	URNIC_UET_EVS = 32,
};

/* A received UDP payload (from port 4793) with its envelope m (m->sport: the entropy
 * value; m->tos: ECN). Validated before it changes state; refusals are counted. */
void urnic_uet_rx(struct urnic_engine *e, const struct urnic_rx_meta *m, const uint8_t *buf,
		  size_t len);

/* The RC ops of a UET device's QPs (engine.c gives them to every RC QP there). */
extern const struct urnic_qp_ops urnic_uet_rc_ops;

/* The QP (RC, on a UET device) entered state s: RTR sets up its delivery context (the QP
 * errs if it cannot be allocated), RTS its sending side. */
void urnic_uet_qp_enter(struct urnic_engine *e, struct urnic_qp *qp, enum urnic_qp_state s);

/* Frees the QP's UET state (RESET, removal); nothing if it has none. */
void urnic_uet_qp_free(struct urnic_qp *qp);

#endif
