/* SPDX-License-Identifier: MIT */
/*
 * cm_ports.h - rdma_cm's port spaces on an address, one for all the processes using it
 * (as the kernel's cma.c keeps one per network namespace), and the owner of a CM MAD
 * among those processes (the steering of QP 1's packets, share.h).
 *
 * A port is held by binding two abstract unix names: "urnic.<address>.cm.<ps>.<port>",
 * which only one socket can hold (the port space's uniqueness), and the same with
 * ".s<slot>" after it, which says whose it is. The kernel releases both when the
 * process dies, so no port outlives its holder.
 */
#ifndef URNIC_TRANSPORT_CM_PORTS_H
#define URNIC_TRANSPORT_CM_PORTS_H

#include <stddef.h>
#include <stdint.h>

/* Linux's default net.ipv4.ip_local_port_range, which cma.c draws ephemeral ports from. */
enum { URNIC_CM_PORT_EPHEMERAL_LO = 32768, URNIC_CM_PORT_EPHEMERAL_HI = 60999 };

/* urnic_cm_port_steer's answer for a REQ to a port no process on the address holds. */
enum { URNIC_CM_PORT_UNHELD = -2 };

/* A held port: its two names' sockets. */
struct urnic_cm_port {
	int fd;
	int slot_fd;
};

/* Holds port *port (0: an ephemeral one, written back) of port space ps (the RDMA_PS_*
 * value) on addr_str for slot. Returns 0 or -errno: -EADDRINUSE (held, in this process
 * or another), -EADDRNOTAVAIL (no ephemeral port free after many tries). */
int urnic_cm_port_hold(struct urnic_cm_port *p, const char *addr_str, uint32_t slot, uint16_t ps,
		       uint16_t *port);
void urnic_cm_port_release(struct urnic_cm_port *p);

/* The slot of the process a packet to QP 1 (a RoCEv2 UDP payload) belongs to: for a REQ
 * or SIDR_REQ the holder of its service ID's port, for every other CM message the owner
 * bits of the comm ID it names as ours (engine/cm: owner << 24). -1 when no process can
 * be named (not a MAD, a SIDR_REQ to a port nobody holds), URNIC_CM_PORT_UNHELD for a
 * REQ to a port nobody holds: the receiving process's CM answers both. */
int urnic_cm_port_steer(const char *addr_str, const uint8_t *payload, size_t len);

/* The sender's comm ID and CA GUID of a REQ packet (the key its CM parks it under), or
 * -EINVAL if the packet is not a REQ. */
int urnic_cm_port_req_key(const uint8_t *payload, size_t len, uint32_t *comm_id, uint64_t *ca_guid);

#endif
