/* SPDX-License-Identifier: MIT */
/*
 * ports.h - the rdma_cm ports taken per (address, port space), as the kernel's cma.c
 * keeps its bind lists: an ephemeral port from 32768-60999 (Linux's default
 * ip_local_port_range) for port 0, EADDRINUSE on a conflict unless both ids asked for
 * REUSEADDR. Within the process for now, behind this interface so that it can move to
 * shared memory.
 */
#ifndef URNIC_CM_PORTS_H
#define URNIC_CM_PORTS_H

#include <stdbool.h>
#include <stdint.h>

enum { URNIC_RDMA_PORT_LO = 32768, URNIC_RDMA_PORT_HI = 60999 };

/* Takes *port (host order; 0: an ephemeral one, written back) of addr (16 bytes, IPv4
 * as ::ffff:a.b.c.d, all zero for any) in port space ps. A port taken on "any" conflicts
 * with every address, and the reverse (-EADDRNOTAVAIL); the same address, -EADDRINUSE.
 * 0, or those, or -ENOMEM. */
int urnic_rdma_port_take(const uint8_t addr[16], int ps, uint16_t *port, bool reuse);
/* The port's holder listens: no id may share it any more, and it may not be shared
 * now (-EADDRINUSE), as cma.c rechecks a REUSEADDR port on rdma_listen. */
int urnic_rdma_port_listen(const uint8_t addr[16], int ps, uint16_t port);
void urnic_rdma_port_drop(const uint8_t addr[16], int ps, uint16_t port);

#endif
