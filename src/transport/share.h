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
 * Unprivileged: no eBPF, no CAP_NET_RAW, so it works for any user in any container.
 *
 * Any user may bind an abstract name (unix(7)), so a slot's name may be held by another
 * user's socket: a batch goes only to a socket whose owner is our user (checked with
 * sock_diag(7) once per connection, since a datagram peer has no SO_PEERCRED), and one
 * is taken only from a sender of our user (SCM_CREDENTIALS). A name held by another
 * user is reported when joining.
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
	/* A forwarded packet's record: source IP (16), source port (2), length (2), the
	 * IPv4 ID hint (2: its segment number in a GRO datagram, icrc_gso.h), TOS (1),
	 * TTL (1), then the packet. One unix datagram carries a batch of records for one
	 * owner: a queue holds net.unix.max_dgram_qlen (10) datagrams whatever their size,
	 * so one per packet overflowed with a single GRO datagram's worth. */
	URNIC_SHARE_REC_HDR = 24,
	URNIC_SHARE_BATCH = 65536,
};

/* One packet handed to another process, or received from one. */
struct urnic_share_rec {
	uint8_t src[16];
	uint16_t sport;
	uint16_t ip_id_hint;
	uint8_t tos, ttl;
	const uint8_t *pkt;
	uint32_t len;
};

struct urnic_share {
	char addr_str[64]; /* the address, as the names say it */
	int fd;		   /* our slot's unix datagram socket, or -1 */
	uint32_t slot;
	uint32_t uid; /* ours: only batches from processes of this user are taken */
	struct sockaddr_un names[URNIC_SHARE_SLOTS];
	socklen_t name_lens[URNIC_SHARE_SLOTS];
	/* Per slot: a socket connected to its owner once that was found to be our user
	 * (else -1); the uid that held it when it was refused (UINT32_MAX: none), said once;
	 * and when to look again (CLOCK_MONOTONIC ns), the holder may have left. */
	int peer_fd[URNIC_SHARE_SLOTS];
	uint32_t refused_uid[URNIC_SHARE_SLOTS];
	uint64_t refused_until_ns[URNIC_SHARE_SLOTS];
	/* The batch being gathered for one owner (urnic_share_add/flush). */
	uint32_t batch_slot;
	uint32_t batch_n;
	uint32_t batch_bytes;
	uint8_t batch[URNIC_SHARE_BATCH];
};

/* Serialises joining across processes: between urnic_share_lock and _unlock a process
 * claims its slot and binds the reuseport socket, so that processes starting at the
 * same moment enter the group in slot order (else every packet is steered to the other
 * one and forwarded, and a slow sanitizer run lost packets that way). Returns the
 * lock's fd, or -1 (then join without it). */
int urnic_share_lock(const char *addr_str);
void urnic_share_unlock(int lock_fd);

/* Claims the lowest free slot for addr_str, saying which names other users hold.
 * Returns 0 or -EADDRINUSE (all taken). */
int urnic_share_join(struct urnic_share *s, const char *addr_str);
void urnic_share_leave(struct urnic_share *s);

/* Attaches the steering program to a socket of the reuseport group. */
int urnic_share_attach_steering(int udp_fd);

/* Slot that owns the destination QP of a RoCEv2 UDP payload, or -1 if too short. For
 * QP 1, the process a CM MAD is for (cm_ports.h), or -1 (ours to answer). */
int urnic_share_owner(const struct urnic_share *s, const uint8_t *payload, size_t len);

/* Whether r can join the batch for slot without a flush first (same owner, room). */
bool urnic_share_fits(const struct urnic_share *s, uint32_t slot, const struct urnic_share_rec *r);
/* Adds r to the batch (a new one for slot if it is empty); the caller flushes first
 * when urnic_share_fits says no. */
void urnic_share_add(struct urnic_share *s, uint32_t slot, const struct urnic_share_rec *r);
/* Hands the batch to the process of its slot and empties it. Returns 0 or -errno
 * (-ECONNREFUSED: no process has that slot; -EAGAIN: its queue stayed full; -EPERM:
 * the slot's name is held by another user's socket, or its owner could not be
 * checked: the batch is not sent). */
int urnic_share_flush(struct urnic_share *s);

/* Whether a batch received on s->fd (with SO_PASSCRED: the kernel's SCM_CREDENTIALS in
 * m's control data) comes from a process of our own user. An abstract unix name can be
 * reached by any process in the network namespace; only our user's may speak for a
 * peer's address (the reuseport group admits no other user either). Closes any
 * descriptors the sender passed (SCM_RIGHTS), which no forwarder does. */
bool urnic_share_trusted(const struct urnic_share *s, const struct msghdr *m);

/* Reads record *off of a received batch into r and advances *off. Returns 1, 0 at the
 * end of the batch, -EBADMSG if what is left is not a whole record. */
int urnic_share_next(const uint8_t *batch, uint32_t len, uint32_t *off, struct urnic_share_rec *r);

/* The uid of the process that created the unix socket fd is connected to, from the
 * kernel's sock_diag (UNIX_DIAG_PEER, then UNIX_DIAG_UID of the peer; Linux 5.3).
 * Returns 0 or -errno. */
int urnic_share_peer_uid(int fd, uint32_t *uid);

#endif
