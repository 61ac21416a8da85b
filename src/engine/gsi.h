/* SPDX-License-Identifier: MIT */
/*
 * gsi.h - QP 1, the General Services Interface of a device (IBTA 13.5.1): what reaches it
 * and what leaves it are CM MADs, carried to and from the device's connection manager
 * (engine/cm/cm.h) when the driver has given the engine one (e->cm).
 */
#ifndef URNIC_ENGINE_GSI_H
#define URNIC_ENGINE_GSI_H

#include <stdint.h>

#include "engine/core.h"
#include "wire/pkt.h"

/* A packet to QP 1 that passed the header and ICRC checks: a UD SEND_ONLY of one MAD
 * under the GSI Q_Key goes to the CM; anything else is dropped and counted. */
void urnic_gsi_rx(struct urnic_engine *e, const struct urnic_pkt *pkt,
		  const struct urnic_rx_meta *m);

/* Puts the MADs the CM has queued into the tx batch, one UD SEND_ONLY from QP 1 to QP 1
 * each. Returns how many. */
uint32_t urnic_gsi_send(struct urnic_engine *e);

/* The UDP source port of QP 1's packets, rxe's for any QPN (0xc000 + hash_32(qpn, 14)):
 * 55410, as in rxe's captures. */
enum { URNIC_GSI_UDP_SPORT = 0xd872 };

#endif
