/* SPDX-License-Identifier: MIT */
/*
 * roce.h - RoCEv2 (IBTA Annex A17) in the engine: the receive entry point a driver
 * feeds UDP payloads to, and the ops tables of the RC, UC and UD QP types that the core
 * gives each QP (engine.c).
 */
#ifndef URNIC_ENGINE_ROCE_ROCE_H
#define URNIC_ENGINE_ROCE_ROCE_H

#include <stddef.h>
#include <stdint.h>

#include "engine/core.h"

/* A received UDP payload (BTH .. ICRC) with its envelope m (m->now_ns: the time).
 * Validated (headers, ICRC, destination QP, state, transport, P_Key, source) before
 * the QP's type sees it. Context: the device lock. */
void urnic_roce_rx(struct urnic_engine *e, const struct urnic_rx_meta *m, const uint8_t *buf,
		   size_t len);

extern const struct urnic_qp_ops urnic_roce_rc_ops;
extern const struct urnic_qp_ops urnic_roce_uc_ops;
extern const struct urnic_qp_ops urnic_roce_ud_ops;
extern const struct urnic_qp_ops urnic_roce_xrc_send_ops;
extern const struct urnic_qp_ops urnic_roce_xrc_recv_ops;

#endif
