/* SPDX-License-Identifier: MIT */
/*
 * iw_conn.h - the TCP connections of an iWARP device's QPs (URNIC_ADDR=iwarp:<ip>), between
 * the connection manager that sets them up and the device that carries FPDUs on them.
 *
 * rdma_cm over iWARP (src/cm) makes the TCP connection and runs MPA setup
 * (engine/iwarp/mpa_conn.h); once it is done the CM hands the socket to the device for
 * the QP, and from then on the engine thread (or an application thread driving the
 * pipeline) reads and writes it in batches: no system call per work request. When the
 * connection ends under the QP (peer FIN or reset, a Terminate), the device tells the
 * CM through the sink, so that rdma_cm reports RDMA_CM_EVENT_DISCONNECTED.
 */
#ifndef URNIC_DEV_IW_CONN_H
#define URNIC_DEV_IW_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "engine/iwarp/iw_qp.h"

struct urnic_dev;
struct urnic_qp;

/* The drop-in librdmacm calls these across the library boundary (urnic_private.map). */
#define URNIC_DEV_IW_EXPORT __attribute__((visibility("default")))

/* Where the device reports the end of a QP's connection: called under the device lock
 * with the user pointer given to attach; err 0 for an orderly close by the peer or by
 * urnic_dev_iw_disconnect, else a positive errno (ECONNRESET, ETIMEDOUT, EPROTO after a
 * Terminate). It must not call into the device. */
struct urnic_dev_iw_sink {
	void (*closed)(void *ctx, struct urnic_dev *d, void *user, int err);
	void *ctx;
};

/* Sets the sink (one per device; NULL closed: none). Context: any thread. */
URNIC_DEV_IW_EXPORT void urnic_dev_iw_set_sink(struct urnic_dev *d,
					       const struct urnic_dev_iw_sink *sink);

/* The CM hands the connected, MPA-ready socket fd to the device for qp (created on
 * this device, RC): the device owns fd from now on and closes it; the QP enters RTS
 * with p (urnic_iw_qp_connect); rest/n are bytes already read past the MPA frames,
 * fed to the QP first. Returns 0, or -errno with fd still the caller's. Context: any
 * application thread, not under the device lock. */
URNIC_DEV_IW_EXPORT int urnic_dev_iw_attach(struct urnic_dev *d, struct urnic_qp *qp, int fd,
					    const struct urnic_iw_conn_params *p,
					    const uint8_t *rest, size_t n, void *user);

/* rdma_disconnect: the QP's queued bytes go out, then the device shuts the connection
 * (FIN) and moves the QP to error; the sink hears of it once the peer closes too or a
 * timeout passes. Nothing if the QP has no connection. Context: as attach. */
URNIC_DEV_IW_EXPORT void urnic_dev_iw_disconnect(struct urnic_dev *d, struct urnic_qp *qp);

/* The CM's counters (stats/iwcm_counters.def), URNIC_RDMA_IW_C_<name>: the CM keeps
 * them per process, and counts them on the device a connection is on as iwcm_<name>. */
enum urnic_rdma_iw_counter {
#define URNIC_IWCM_COUNTER(name, text) URNIC_RDMA_IW_C_##name,
#include "stats/iwcm_counters.def"
#undef URNIC_IWCM_COUNTER
	URNIC_RDMA_IW_C_COUNT
};

static inline const char *urnic_dev_iw_counter_name(enum urnic_rdma_iw_counter c)
{
	static const char *const names[] = {
#define URNIC_IWCM_COUNTER(name, text) #name,
#include "stats/iwcm_counters.def"
#undef URNIC_IWCM_COUNTER
	};

	return c < URNIC_RDMA_IW_C_COUNT ? names[c] : "?";
}

/* Counts c on the device as iwcm_<name>, where `urnic counters` reads it at once. The
 * engine never writes those: the CM's threads add to them atomically, without the
 * device lock, so the sink may call it too. */
URNIC_DEV_IW_EXPORT void urnic_dev_iw_count(struct urnic_dev *d, enum urnic_rdma_iw_counter c);

#endif
