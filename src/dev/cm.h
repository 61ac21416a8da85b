/* SPDX-License-Identifier: MIT */
/*
 * cm.h - a device's IB Communication Manager (engine/cm/cm.h) on its QP 1, for the
 * drop-in librdmacm (src/cm/).
 *
 * CM MADs travel as UD SEND_ONLY packets between QP 1s under the GSI Q_Key 0x80010000
 * (IBTA 13.5.1, 13.4.2), on the device's UDP port 4791 as Linux's rdma_cm over rxe sends
 * them. The engine hands MADs for QP 1 to the CM (engine/gsi.c) and sends what the CM
 * queues; the CM's timers run in the device's passes; its events go to one sink per
 * process. The caller drives the CM between urnic_dev_cm_begin() and urnic_dev_cm_end(),
 * which hold the device lock. Context: any application thread.
 */
#ifndef URNIC_DEV_CM_H
#define URNIC_DEV_CM_H

#include <stdint.h>

#include "dev/device.h"
#include "engine/cm/cm.h"
#include "wire/cma.h"
#include "transport/cm_ports.h"

/* The drop-in librdmacm calls these across the library boundary (libibverbs.map,
 * URNIC_PRIVATE_1.0): it is a library of its own that must share this one's devices. */
#define URNIC_DEV_CM_EXPORT __attribute__((visibility("default")))

/* How often REQs kept for a port nobody held look for its holder (transport/udp.h). */
#define URNIC_CM_RESTEER_NS 1000000ull

/*
 * Opens device d's CM for this process: a reference on the device (urnic_dev_get), its
 * port bound and its engine thread started (urnic_dev_start_io), the CM created on first
 * open (owner: the process's slot on the address, as QPNs carry it; CA GUID: the
 * device's). Every open names the same sink. Returns 0 or -errno (-EADDRINUSE: the
 * address is taken, -EINVAL: another sink, -EPROTONOSUPPORT: an iWARP device, which has
 * no IB CM and no rdma_cm port space; nothing is held then). close drops the reference;
 * the last close frees the CM and what it still holds, sending nothing (destroy
 * connections first).
 */
URNIC_DEV_CM_EXPORT int urnic_dev_cm_open(struct urnic_dev *d,
					  const struct urnic_dev_cm_sink *sink);
URNIC_DEV_CM_EXPORT void urnic_dev_cm_close(struct urnic_dev *d);

/* Takes the device lock and returns the CM (NULL, lock not taken, if not open) and in
 * *now_ns the device clock's time to pass to it. end sends what the CM queued, delivers
 * its events to the sink, arms the engine's timer for its next deadline and unlocks. */
URNIC_DEV_CM_EXPORT struct urnic_cm *urnic_dev_cm_begin(struct urnic_dev *d, uint64_t *now_ns);
URNIC_DEV_CM_EXPORT void urnic_dev_cm_end(struct urnic_dev *d);

/* Holds port *port (0: an ephemeral one, written back) of rdma_cm port space ps (the
 * RDMA_PS_* value) on d's address, one port space for all the processes on it
 * (transport/cm_ports.h: a REQ for the port is steered to the holder). The CM must be
 * open. Returns 0 or -errno: -EADDRINUSE, -EADDRNOTAVAIL (no ephemeral port), -ENODEV
 * (CM not open). release lets it go (any thread, no lock). */
URNIC_DEV_CM_EXPORT int urnic_dev_cm_port_hold(struct urnic_dev *d, uint16_t ps, uint16_t *port,
					       struct urnic_cm_port *held);
URNIC_DEV_CM_EXPORT void urnic_dev_cm_port_release(struct urnic_cm_port *held);

/* The process's devices (urnic_dev_list), for librdmacm to find the one that holds an
 * address. */
URNIC_DEV_CM_EXPORT int urnic_dev_cm_devices(struct urnic_dev ***out);

#endif
