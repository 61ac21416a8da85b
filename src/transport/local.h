/* SPDX-License-Identifier: MIT */
/*
 * local.h - RoCEv2 packets to a urnic process on this host through shared memory
 * (URNIC_LOCAL): a lane per sending device and receiving process, instead of the
 * kernel's UDP path. On loopback the kernel spends two copies, a system call on each
 * side and the receiver's empty polls on every packet; a lane is one copy in and the
 * receiver's "did anything arrive?" is a load of the producer's position.
 *
 * The packets are the ones the socket would carry (BTH .. ICRC, the ICRC set for the
 * IPv4 IDs a GSO send would give them), with the envelope a socket reports (source
 * address and port, TOS, TTL) and the GSO segment size: the receiver hands them to its
 * engine as it hands a GRO datagram, and captures show them as they would have left.
 *
 * Finding a peer: every device listens on the abstract unix seqpacket socket
 * "urnic.lane.<address in hex>.<share slot>" (share.h), which the kernel releases when
 * the process dies and which only processes of the same network namespace can reach.
 * A sender that has a packet for such a name connects, checks that the listener is a
 * process of its own user (SO_PEERCRED), and passes a sealed memfd: the lane, a
 * single-producer single-consumer ring of records. Until the receiver has mapped it
 * and said so in the lane's header, packets go by UDP. The connection stays open: its
 * hang-up ends the lane on either side, and a byte on it wakes a receiver that sleeps
 * (the lane's `waiting` word says when one is needed). A name that nobody holds, or
 * another user's, is tried again after URNIC_LOCAL_RETRY_NS.
 *
 * Trust: only processes of the same user (who may already read and write each other's
 * memory through ptrace) share lanes. A record's framing is read once into private
 * variables and bounds-checked against the mapping, so a corrupt lane costs its
 * packets (drop_local_bad), never a read outside it; the memfd is sealed against
 * shrinking, so a peer cannot make our reads fault.
 * Context: the device's passes, under the device lock, except urnic_local_arm and
 * urnic_local_disarm (the engine thread, around its sleep).
 */
#ifndef URNIC_TRANSPORT_LOCAL_H
#define URNIC_TRANSPORT_LOCAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/addr.h"

enum {
	URNIC_LOCAL_IN = 16,  /* lanes a device receives from */
	URNIC_LOCAL_OUT = 16, /* lanes a device sends into */
	/* A lane's ring: four requester windows of 256 MTU-sized packets. */
	URNIC_LOCAL_RING_BYTES = 4 << 20,
	URNIC_LOCAL_REC_HDR = 32,
	URNIC_LOCAL_REC_MAX = 65536, /* one GSO send */
	URNIC_LOCAL_RX_BUDGET = 64,  /* records taken from one lane per receive */
};

/* How long a peer that did not take a lane is left to UDP before it is asked again. */
#define URNIC_LOCAL_RETRY_NS 1000000000ull
/* How long a send waits for room in a full lane before it drops the record: longer
 * than a receiver's usual time off a busy 2-vCPU machine (at 2 ms, perftest's UC
 * ib_send_bw, which has no retransmission, lost 8 of 1000 messages beside a test run). */
#define URNIC_LOCAL_FULL_WAIT_NS 10000000ull
/* A lane this new may hold packets sent after ones still queued on the socket (the
 * sender's first packets to a peer go by UDP until the lane is taken). */
#define URNIC_LOCAL_FRESH_NS 10000000ull

/* One record as the receiver sees it: a packet or a GSO run of packets. */
struct urnic_local_rec {
	const uint8_t *src; /* 4 or 16 bytes */
	uint16_t sport;
	uint16_t seg; /* GSO segment size; 0: one packet */
	uint8_t tos, ttl;
	uint8_t *pkt;
	uint32_t len;
	/* A one-packet record's direct placement note (wire/addr.h), copied out of the
	 * lane and checked, its pid the sender's; NULL when the record has none. */
	const struct urnic_direct_note *direct;
};

/* The envelope of a send (what the socket would have put around it), and for a lone
 * packet its direct placement flags and segments (wire/addr.h), which only a lane
 * carries. */
struct urnic_local_env {
	uint16_t sport;
	uint16_t seg;
	uint8_t tos, ttl;
	uint8_t direct_flags;
	uint8_t direct_nseg;
	const struct urnic_direct_seg *direct_seg;
};

/*
 * The lane in the memfd, as both processes map it: written by the sender, but for
 * tail, waiting and state. Records start on URNIC_LOCAL_REC_ALIGN boundaries; a
 * header whose len is URNIC_LOCAL_REC_WRAP says the next record is at the ring's start.
 */
#define URNIC_LOCAL_MAGIC 0x6e6c7275u /* "urln" */
#define URNIC_LOCAL_VERSION 2u
#define URNIC_LOCAL_REC_ALIGN 64u
#define URNIC_LOCAL_REC_WRAP 0xffffffffu

enum { URNIC_LOCAL_LANE_OFFERED = 1, URNIC_LOCAL_LANE_TAKEN = 2 };

struct urnic_local_lane {
	uint32_t magic, version, ring_bytes;
	uint8_t src[16];
	_Atomic uint32_t state;
	/* Set by the receiver: it takes direct placement notes (wire/addr.h); a sender
	 * sends none otherwise. Cleared if it stops (the kernel refused it). */
	_Atomic uint32_t accepts;
	_Alignas(64) _Atomic uint64_t head;    /* producer: bytes written in all */
	_Alignas(64) _Atomic uint64_t tail;    /* consumer: bytes taken in all */
	_Alignas(64) _Atomic uint32_t waiting; /* the consumer sleeps: ring */
	_Alignas(64) uint8_t ring[];
};

/* A record's header, as laid out in the ring. The packet follows it; then, from the
 * next 8-byte boundary, nseg direct placement segments (struct urnic_direct_seg). */
struct urnic_local_rec_hdr {
	uint32_t len; /* packet bytes, or URNIC_LOCAL_REC_WRAP */
	uint16_t seg;
	uint16_t sport;
	uint8_t tos, ttl;
	uint8_t direct_flags; /* URNIC_DIRECT_* */
	uint8_t direct_nseg;
	uint8_t pad[20];
};

/* The memfd's size, which the receiver insists on. */
#define URNIC_LOCAL_LANE_BYTES (sizeof(struct urnic_local_lane) + URNIC_LOCAL_RING_BYTES)

struct urnic_local_in {
	int fd;	   /* the accepted connection; -1: none (free when lane is NULL too) */
	bool gone; /* the sender left: the lane is freed once empty */
	struct urnic_local_lane *lane;
	/* lane, for urnic_local_arm, which runs outside the device lock: set when the lane
	 * is taken, cleared before it is unmapped */
	_Atomic(struct urnic_local_lane *) armable;
	uint8_t src[16]; /* the sender's address, fixed when the lane was taken */
	uint64_t tail;	 /* our copy of the consumer position */
	uint64_t taken_ns;
	uint32_t pid; /* the sender's process (SO_PEERCRED when it connected) */
};

enum urnic_local_out_state {
	URNIC_LOCAL_OUT_FREE,
	URNIC_LOCAL_OUT_OFFERED, /* passed, not yet mapped by the receiver: UDP */
	URNIC_LOCAL_OUT_REFUSED, /* nobody there, or not our user: UDP until retry_ns */
};

struct urnic_local_out {
	enum urnic_local_out_state state;
	uint8_t ip[16];
	uint32_t slot;
	int fd;
	struct urnic_local_lane *lane;
	uint64_t head; /* our copy of the producer position */
	uint64_t retry_ns;
	bool stalled; /* the last wait for room ran out: drop at once until it moves */
	uint32_t pid; /* the receiver's process (SO_PEERCRED when we connected) */
};

struct urnic_local {
	bool on;
	bool ipv6;
	uint8_t addr[16];
	uint32_t uid;
	uint32_t holder_uid; /* after -EADDRINUSE: whose process holds our name (or UINT32_MAX) */
	int listen_fd;
	int ep_fd;	    /* the listener and every lane's connection */
	_Atomic int arming; /* urnic_local_arm or _disarm is reading the lanes */
	struct urnic_local_in in[URNIC_LOCAL_IN];
	struct urnic_local_out out[URNIC_LOCAL_OUT];
	uint32_t last_out; /* the entry the last send used */
	/* Direct placement (urnic_local_direct_write) is used: not after URNIC_LOCAL_DIRECT=0
	 * or a refusal by the kernel (no right to write other processes' memory). */
	bool direct;
	struct urnic_direct_note rx_note; /* the record being received's */
};

/* Listens for lanes to (addr, slot). Returns 0 or -errno (-EADDRINUSE: another process
 * holds the name, l->holder_uid says whose); l->on says whether it is in use (false
 * after an error or before open). */
int urnic_local_open(struct urnic_local *l, bool ipv6, const uint8_t *addr, uint32_t slot);
void urnic_local_close(struct urnic_local *l);

/* The fd that is readable when the lanes need urnic_local_service: a lane offered or
 * gone, or a sender ringing a sleeping receiver. */
static inline int urnic_local_fd(const struct urnic_local *l)
{
	return l->on ? l->ep_fd : -1;
}

/* Takes offered lanes, ends the ones whose peer left, drains the wake-up bytes. Returns
 * whether a lane was taken, refused or ended. */
bool urnic_local_service(struct urnic_local *l, uint64_t now_ns, uint64_t *counters);

/*
 * Sends one record to the process of (dst_ip, slot) if a lane to it is open: returns 1,
 * or 0 when there is none (yet: the first call offers one), and the caller sends by
 * UDP. A full lane is waited on, as a full socket is (the receiver woken), for up to
 * URNIC_LOCAL_FULL_WAIT_NS; then the record is dropped, counted, and 1 returned (the
 * reliable transport recovers), and so are the next ones at once until the receiver
 * takes some. len is at most URNIC_LOCAL_REC_MAX. now_ns: the time, or 0 to have the
 * clock read only if it is needed (an offer, a refused peer asked again).
 */
int urnic_local_send(struct urnic_local *l, const uint8_t *dst_ip, uint32_t slot,
		     const struct urnic_local_env *env, const uint8_t *pkt, uint32_t len,
		     uint64_t now_ns, uint64_t *counters);

/*
 * Direct placement (wire/addr.h): writes len bytes from src into the memory of process
 * pid at the segments it named, if a lane to (dst_ip, slot) is taken by that very
 * process, so that the response saying so reaches it through the lane. Returns 0 when
 * every byte is there; -ENOENT without such a lane; another -errno when the kernel
 * refused (direct placement is then off for good: -EPERM, -ENOSYS) or the segments
 * are not that process's writable memory (-EFAULT): the caller sends packets instead.
 */
int urnic_local_direct_write(struct urnic_local *l, const uint8_t *dst_ip, uint32_t slot,
			     const struct urnic_direct_note *d, const uint8_t *src, uint64_t len,
			     uint64_t *counters);

/* Direct placement's other half: reads the segments note d names, in the memory of
 * process d->pid, into ours at to (nto segments of the same total length), with the
 * answers of urnic_local_direct_write; by_lane: only under its lane rule (the word that
 * it is done must go back through the lane: a READ's tail), else whenever lanes and
 * direct placement are on (a WRITE's data, answered by a plain ACK). */
int urnic_local_direct_read(struct urnic_local *l, const uint8_t *dst_ip, uint32_t slot,
			    const struct urnic_direct_note *d, const struct urnic_direct_seg *to,
			    uint32_t nto, bool by_lane, uint64_t *counters);
/* Whether a record to (dst_ip, slot) goes through a taken lane that carries notes. */
bool urnic_local_direct_ready(struct urnic_local *l, const uint8_t *dst_ip, uint32_t slot);

/* Hands each waiting record to rx (at most URNIC_LOCAL_RX_BUDGET per lane) and frees
 * its room once rx returns; with hold_fresh, not those of lanes taken within
 * URNIC_LOCAL_FRESH_NS (the caller has not emptied the socket they may follow). Returns
 * the number of records. */
uint32_t urnic_local_recv(struct urnic_local *l,
			  void (*rx)(void *ctx, const struct urnic_local_rec *r), void *ctx,
			  uint64_t now_ns, bool hold_fresh, uint64_t *counters);

/* Before the engine thread sleeps on urnic_local_fd: asks senders to ring. Returns
 * true if a record is already waiting (then do not sleep). urnic_local_disarm after
 * the sleep. Both without the device lock (a lane is unmapped only once neither runs);
 * one thread at a time. */
bool urnic_local_arm(struct urnic_local *l);
void urnic_local_disarm(struct urnic_local *l);

#endif
