/* SPDX-License-Identifier: MIT */
/*
 * iw_setup.h - what the drop-in librdmacm (src/cm/iw_*.c) needs of the device to set up an
 * iWARP connection before it hands the socket over (iw_conn.h): the MPA setup machine it
 * runs on the socket (engine/iwarp/mpa_conn.h, sans-I/O, linked into the CM library) and
 * the device's QP behind a verbs QP number, for urnic_dev_iw_attach. Context: any
 * application thread.
 */
#ifndef URNIC_DEV_IW_SETUP_H
#define URNIC_DEV_IW_SETUP_H

#include <stdint.h>

#include "dev/cm.h"
#include "dev/iw_conn.h"
#include "engine/iwarp/mpa_conn.h"

/* The QP numbered qpn on d, or NULL. The pointer stays valid while the application keeps
 * the QP (the CM passes it to attach and disconnect only while its id holds the QP). */
URNIC_DEV_CM_EXPORT struct urnic_qp *urnic_dev_iw_qp(struct urnic_dev *d, uint32_t qpn);

/* The MPA refusal's identifier (OK, FRAME, TIMEOUT, ...), for counter names. */
static inline const char *urnic_dev_iw_mpa_reason_id(enum urnic_mpa_conn_reason r)
{
	static const char *const ids[] = {
#define URNIC_MPA_CONN_REASON(name, text) #name,
#include "engine/iwarp/mpa_conn_reason.def"
#undef URNIC_MPA_CONN_REASON
	};

	return r < URNIC_MPA_CONN_R_COUNT ? ids[r] : "?";
}

#endif
