/* SPDX-License-Identifier: MIT */
/*
 * share.h - several processes on one address: UDP 4791 shared with SO_REUSEPORT,
 * packets steered to the process that owns the destination QP.
 *
 * A kernel peer always sends to <address>:4791, so every process using the address
 * binds that port in one reuseport group (same user), and each claims a slot 0..15 by
 * binding the abstract unix socket "urnic.<address>.<slot>" (released by the kernel
 * when the process dies). QPNs carry the slot in bits 23..20 (engine.h). A classic BPF
 * program attached to the group returns the slot as the group's socket index; while
 * processes joined in slot order and none left, that is exactly the owner's socket.
 * Otherwise a packet lands with another member, which forwards it to the owner's unix
 * socket with its source address and port (needed for the ICRC and the address check).
 * Unprivileged: no eBPF, no CAP_NET_RAW (reference/verbs-abi-dropin.md §5.4).
 * Context: the engine thread, under the device lock.
 */
#ifndef URNIC_TRANSPORT_SHARE_H
#define URNIC_TRANSPORT_SHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

enum {
	URNIC_SHARE_SLOTS = 16,
	URNIC_SHARE_HDR = 18, /* forwarded packet: source IP (16), source port (2), payload */
};

struct urnic_share {
	int fd; /* our slot's unix datagram socket, or -1 */
	uint32_t slot;
	struct sockaddr_un names[URNIC_SHARE_SLOTS];
	socklen_t name_lens[URNIC_SHARE_SLOTS];
};

/* Serialises joining across processes: between urnic_share_lock and _unlock a process
 * claims its slot and binds the reuseport socket, so that processes starting at the
 * same moment enter the group in slot order (else every packet is steered to the other
 * one and forwarded: session 4 saw a sanitizer run lose packets that way). Returns the
 * lock's fd, or -1 (then join without it). */
int urnic_share_lock(const char *addr_str);
void urnic_share_unlock(int lock_fd);

/* Claims the lowest free slot for addr_str. Returns 0 or -EADDRINUSE (all taken). */
int urnic_share_join(struct urnic_share *s, const char *addr_str);
void urnic_share_leave(struct urnic_share *s);

/* Attaches the steering program to a socket of the reuseport group. */
int urnic_share_attach_steering(int udp_fd);

/* Slot that owns the destination QP of a RoCEv2 UDP payload, or -1 if too short. */
int urnic_share_owner(const uint8_t *payload, size_t len);

/* Hands a packet that arrived here to the slot that owns it. Returns 0 or -errno
 * (-ECONNREFUSED: no process has that slot). */
int urnic_share_forward(const struct urnic_share *s, uint32_t slot, const uint8_t *src_ip,
			uint16_t sport, const uint8_t *payload, size_t len);

#endif
