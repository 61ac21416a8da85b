/* SPDX-License-Identifier: MIT */
/*
 * raw_port.h - the device's port as raw packet QPs see it: the packet socket of
 * transport/packet.h on the address's interface, opened with the device's first raw QP
 * and closed with its last, fed to and from the engine's raw part (engine/raw.h) in
 * each pass, and the flow rules the verbs layer adds (ibv_create_flow(3)).
 * Context: the functions marked "lock held" run under the device lock; the others take it.
 */
#ifndef URNIC_DEV_RAW_PORT_H
#define URNIC_DEV_RAW_PORT_H

#include <stdint.h>

#include "dev/device.h"
#include "wire/flow.h"

/* One more raw QP (lock held): the first opens the socket. 0, -EPERM without
 * CAP_NET_RAW (ibv_create_qp(3) on a raw packet QP, as the kernel answers), -ENOMEM. */
int urnic_dev_raw_get(struct urnic_dev *d);
/* One raw QP less (lock held): the last closes the socket. */
void urnic_dev_raw_put(struct urnic_dev *d);

/* The frames waiting on the socket into the engine (lock held, a pass's receive). */
void urnic_dev_raw_recv(struct urnic_dev *d, uint64_t now_ns);
/* The engine's raw tx batch onto the wire (lock held, the flush hook). */
void urnic_dev_raw_send(struct urnic_dev *d);

/* The socket's fd for a sleeping engine thread to watch, or -1. Context: any thread. */
static inline int urnic_dev_raw_fd(struct urnic_dev *d)
{
	return atomic_load_explicit(&d->raw_fd, memory_order_relaxed);
}

/* Adds a flow rule (its qpn a raw QP's) under the device lock; *id names it for
 * urnic_dev_flow_del. 0, -EINVAL or -ENOMEM (engine/raw.h). */
int urnic_dev_flow_add(struct urnic_dev *d, const struct urnic_flow_rule *r, uint32_t *id);
int urnic_dev_flow_del(struct urnic_dev *d, uint32_t id);

#endif
