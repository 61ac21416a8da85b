/* SPDX-License-Identifier: MIT */
/*
 * udp.h - RoCEv2 (and UET) over kernel UDP sockets: one socket bound to <address>:4791
 * (UET: 4793) that receives, and sending sockets bound to the per-flow source ports.
 *
 * RoCEv2 (IBTA Annex A17.2): destination port 4791; the source port carries flow
 * entropy, computed as the kernel's rdma_get_udp_sport() does (see engine/qp.h). Sends
 * and receives are batched with sendmmsg/recvmmsg, and runs of equal-sized packets to
 * one peer leave as a single UDP GSO send (UDP_SEGMENT: the kernel cuts it into the
 * very datagrams we would have sent one by one); received GRO super-packets
 * (UDP_GRO) are cut back into RoCE packets at the segment size. DF is set (IP_PMTUDISC_DO) so
 * that Linux emits IP ID 0, which is what the ICRC is computed over; the segments of an
 * IPv4 GSO send get IDs 0, 1, 2, ... and their ICRCs are set for those (icrc_gso.h).
 *
 * A UET device's transport (URNIC_UDP_UET: UE 1.0 on UDP 4793, engine/uet/uet_rc.h) is
 * the same sockets, batching, GSO, GRO, TOS, captures and faulty wire, without what is
 * RoCE's: its packets carry no ICRC (no per-segment fix-up), they have no BTH to steer
 * by (no share group: one process per address, share.h), and there are no shared
 * memory lanes, packet rings or multicast groups. The source ports are the engine's
 * entropy values, a fixed range bound at the device's start.
 * Context: the device's engine thread, under the device lock.
 */
#ifndef URNIC_TRANSPORT_UDP_H
#define URNIC_TRANSPORT_UDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "stats/counters.h"
#include "wire/addr.h"
#include "wire/txbatch.h"
#include "transport/fault.h"
#include "transport/local.h"
#include "transport/pcap.h"
#include "transport/ring.h"
#include "transport/share.h"

enum {
	URNIC_UDP_RX_BATCH = 32,
	URNIC_UDP_RX_BUF = 65536, /* a GRO super-packet: up to 64 KiB of RoCE packets */
	URNIC_UDP_MAX_SPORTS = 256,
	URNIC_UDP_GSO_MAX_SEGS = 64,	 /* UDP_MAX_SEGMENTS in Linux 6.1 */
	URNIC_UDP_GSO_MAX_BYTES = 65000, /* one UDP datagram before segmentation */
	URNIC_UDP_MAX_GROUPS = 16,	 /* multicast group sockets */
	URNIC_UDP_UNHELD = 16,		 /* REQs kept for a port nobody held (udp_unheld.c) */
	URNIC_UDP_UNHELD_BYTES = 288,	 /* BTH, DETH, a MAD and the ICRC: 280 */
};

/* How long such a REQ is kept: past the CM's own wait for a listener (engine/cm). */
#define URNIC_UDP_UNHELD_NS 60000000ull

/* With packet rings, how often the socket is read for what they leave to it. */
#define URNIC_UDP_RING_SOCKET_NS 50000ull
/* How recent a record from a local lane must be for the socket to be read as rarely. */
#define URNIC_UDP_LOCAL_BUSY_NS 1000000ull

/* The protocol a transport carries: its port and what of the above applies. */
enum urnic_udp_proto {
	URNIC_UDP_ROCE, /* RoCEv2, UDP 4791 (IBTA Annex A17) */
	URNIC_UDP_UET,	/* UE 1.0 PDS and SES, UDP 4793 (wire/uet.h) */
};

struct urnic_udp_sport {
	uint16_t port;
	int fd;
};

/* A REQ to an rdma_cm port that no process on the address held when it came: the
 * receiving process's CM parks it, and it is handed to the process that holds the port
 * if one does before the CM gives up (udp_unheld.c). */
struct urnic_udp_unheld {
	bool used;
	uint64_t until;
	struct urnic_share_rec rec; /* rec.pkt points at pkt */
	uint8_t pkt[URNIC_UDP_UNHELD_BYTES];
};

/* A multicast group joined for the engine's attached QPs (engine/mcast.h): a socket
 * bound to the group's address and port 4791. fd -1: free. The engine thread reads fd
 * without the lock to sleep on it; it changes under the device lock only. */
struct urnic_udp_group {
	uint8_t ip[16];
	_Atomic int fd;
};

struct urnic_udp {
	int fd;
	/* The port the address's socket is bound to and every packet is sent to (4791 or
	 * 4793), and whether the packets are RoCEv2's (ICRC, BTH steering, lanes, rings,
	 * groups). Set at open. */
	uint16_t port;
	bool roce;
	bool ipv6;
	uint8_t addr[16];
	unsigned int ifindex; /* the address's interface: multicast joins and sends */
	uint32_t last_ovfl;
	struct urnic_share share;  /* the other processes on this address */
	struct urnic_fault *fault; /* the faulty wire (fault.h), or NULL */
	/* The capture (URNIC_PCAP, pcap.h), or NULL: what is sent, and what the transport
	 * refuses itself; the device's sink records what reaches the engine. The device
	 * sets it after open and clears it before close. */
	const struct urnic_pcap_if *pcap;
	bool ring_on;	       /* our unicast IPv4 packets come from the packet rings (ring.h) */
	uint64_t sock_read_ns; /* then: when the socket was last read */
	struct urnic_ring ring;
	/* Lanes to and from urnic processes on this host (URNIC_LOCAL, local.h); while
	 * they carry the traffic (a record within URNIC_UDP_LOCAL_BUSY_NS and the last
	 * read of the socket found nothing), a polling application's passes read the
	 * socket every URNIC_UDP_RING_SOCKET_NS only, as with the rings. */
	struct urnic_local local;
	uint64_t local_rx_ns;
	bool sock_empty;
	bool sock_backlog; /* the last read of the socket filled its batch */
	uint32_t nsports;
	struct urnic_udp_sport sports[URNIC_UDP_MAX_SPORTS];
	struct urnic_udp_group groups[URNIC_UDP_MAX_GROUPS];
	uint32_t nunheld;
	struct urnic_udp_unheld unheld[URNIC_UDP_UNHELD];
	/* rx_msgs are set up for the address's and groups' sockets (recv_batch), and the
	 * last recvmmsg filled the first rx_used of them: only those need their lengths
	 * reset. The share socket's batch (recv_forwarded) sets them up its own way. */
	bool rx_set;
	uint32_t rx_used;
	struct mmsghdr rx_msgs[URNIC_UDP_RX_BATCH];
	struct iovec rx_iov[URNIC_UDP_RX_BATCH];
	struct sockaddr_storage rx_from[URNIC_UDP_RX_BATCH];
	_Alignas(struct cmsghdr) char rx_ctrl[URNIC_UDP_RX_BATCH][128]; /* OVFL, GRO, TOS, TTL */
	uint8_t rx_buf[URNIC_UDP_RX_BATCH][URNIC_UDP_RX_BUF];
	bool gso; /* UDP_SEGMENT works: runs of equal-sized packets leave as one send */
	bool gro; /* UDP_GRO is on: a received datagram may hold several packets */
	struct mmsghdr tx_msgs[URNIC_TX_BATCH];
	int tx_fd[URNIC_TX_BATCH];
	uint32_t tx_first_pkt[URNIC_TX_BATCH]; /* the batch packet each message starts at */
	struct iovec tx_iov[URNIC_TX_BATCH];   /* message i's bytes in the batch's wire buffer */
	struct sockaddr_storage tx_to[URNIC_TX_BATCH];
	_Alignas(struct cmsghdr) char tx_ctrl[URNIC_TX_BATCH][64]; /* UDP_SEGMENT, TOS */
	bool tx_gso[URNIC_TX_BATCH];				   /* message i is a GSO run */
	/* IPv4 GSO: the ID each batch packet's ICRC is set for (its segment index, see
	 * icrc_gso.h), and the length factors last used (the MTU-sized segment, a tail),
	 * each with the ICRC terms of the IDs 0 .. URNIC_TX_BATCH - 1 computed so far (bit
	 * i of id_delta_known: id_delta[slot][i] is set). */
	uint16_t tx_ip_id[URNIC_TX_BATCH];
	uint32_t id_factor_len[2];
	uint32_t id_factor[2];
	uint64_t id_delta_known[2];
	uint32_t id_delta[2][URNIC_TX_BATCH];
};

/* Joins the address's processes (share.h) and binds the receiving socket to port 4791;
 * for URNIC_UDP_UET binds port 4793 alone, joining no group. Returns 0 or -errno
 * (-EADDRINUSE: the port is held outside the group, e.g. by another user or all 16
 * slots are taken, or for UET by any other socket, said on stderr; -EADDRNOTAVAIL: not
 * a local address). u->share.slot is the slot the engine's QPNs must carry (UET: 0). */
int urnic_udp_open(struct urnic_udp *u, bool ipv6, const uint8_t *addr, const char *addr_str,
		   enum urnic_udp_proto proto);

/* Turns UDP GSO (runs of packets in one send) or GRO (several packets in one receive)
 * off when false; urnic_udp_open turns on both that the kernel has. */
void urnic_udp_offloads(struct urnic_udp *u, bool gso, bool gro);
void urnic_udp_close(struct urnic_udp *u);

/* Receives from packet rings from now on (ring.h), if it can: RoCEv2, IPv4 only,
 * CAP_NET_RAW, Linux 6.2 or later (virtio-net headers for UDP GSO). Returns 0 or -errno; on error
 * the socket receives as before. Call after urnic_udp_open. */
int urnic_udp_use_ring(struct urnic_udp *u);

/* Sends to and receives from urnic processes on this host through shared memory
 * lanes (local.h) from now on, where the peer takes one: RoCEv2 only (a lane is found
 * by the BTH's QPN). Returns 0 or -errno (then everything goes by the socket). Call
 * after urnic_udp_open. */
int urnic_udp_use_local(struct urnic_udp *u);

/* The fds that signal a received packet, the main one first, for sleeping on: the
 * address's socket, the rings when they are on, the lanes' fd when they are.
 * Returns how many (at most URNIC_UDP_RX_FDS). */
enum { URNIC_UDP_RX_FDS = 4 };
int urnic_udp_rx_fds(const struct urnic_udp *u, int fds[URNIC_UDP_RX_FDS]);

/* Puts the faulty wire of fault.h on the receive path (after open). seed is used when
 * c names none; counters are the engine's. Returns 0 or -ENOMEM. */
int urnic_udp_set_fault(struct urnic_udp *u, const struct urnic_fault_conf *c, uint64_t seed,
			uint64_t *counters);

/* When the transport next has something to deliver by itself (a delayed packet), 0:
 * never. The engine thread must not sleep past it. */
uint64_t urnic_udp_deadline(const struct urnic_udp *u);

/* Makes sure a sending socket exists for source port sport. Returns the port that
 * will really be used: sport, or u->port (4791, 4793) when it cannot be bound. */
uint16_t urnic_udp_prepare_sport(struct urnic_udp *u, uint16_t sport);

/* Where received packets go: rx (the device points it at the engine's receive entry
 * point) with each RoCE packet (BTH .. ICRC) and its envelope, and the counters
 * (URNIC_CTR_COUNT of them, stats/counters.h) the transport's own drops are counted in. */
struct urnic_udp_sink {
	void (*rx)(void *ctx, const struct urnic_rx_meta *m, const uint8_t *buf, size_t len);
	void *ctx;
	uint64_t *counters;
};

/* Receives one batch without blocking and hands each datagram to the sink, after the
 * held packets of the faulty wire that are due at now_ns; with `forwarded`, also the
 * packets other processes on this address forwarded here (share.h: a second recvmmsg,
 * on the share socket). Returns the number received and released. */
int urnic_udp_recv(struct urnic_udp *u, const struct urnic_udp_sink *s, uint64_t now_ns,
		   bool forwarded);

/* Joins the multicast group at ip (4 or 16 bytes as u->ipv6) on this address's
 * interface: a socket bound to the group and port 4791 that urnic_udp_recv reads too.
 * Returns 0 or -errno (-ENOMEM: no free slot; the kernel's join errors, e.g. -ENODEV
 * when the interface has no multicast route; -EOPNOTSUPP: UET, which has no
 * multicast). urnic_udp_leave closes it. Context: the device lock. */
int urnic_udp_join(struct urnic_udp *u, const uint8_t *ip);
void urnic_udp_leave(struct urnic_udp *u, const uint8_t *ip);

/* Sends the batch and empties it; counts sends and failures in counters. */
void urnic_udp_send(struct urnic_udp *u, struct urnic_txbatch *b, uint64_t *counters);

/* Direct placement (wire/addr.h, local.h urnic_local_direct_write) into the process
 * that owns QP dqpn at dst_ip, through its lane; -ENOENT without a lane, or with
 * direct placement off (as the device keeps it beside a capture or the faulty wire,
 * which would not show it). Context: the device lock. */
int urnic_udp_direct_write(struct urnic_udp *u, const uint8_t *dst_ip, uint32_t dqpn,
			   const struct urnic_direct_note *d, const uint8_t *src, uint64_t len,
			   uint64_t *counters);
/* Its other half (local.h urnic_local_direct_read), under the same rules. */
int urnic_udp_direct_read(struct urnic_udp *u, const uint8_t *dst_ip, uint32_t dqpn,
			  const struct urnic_direct_note *d, const struct urnic_direct_seg *to,
			  uint32_t nto, bool by_lane, uint64_t *counters);
/* Whether a packet to QP dqpn at dst_ip goes through a lane that carries notes now. */
bool urnic_udp_direct_ready(struct urnic_udp *u, const uint8_t *dst_ip, uint32_t dqpn);

/* Keeps a copy of a received REQ to a port nobody held (urnic_share_owner said
 * URNIC_CM_PORT_UNHELD), if it fits and a place is free. */
void urnic_udp_unheld_keep(struct urnic_udp *u, const struct urnic_share_rec *r, uint64_t now_ns);
static inline bool urnic_udp_unheld_pending(const struct urnic_udp *u)
{
	return u->nunheld != 0;
}
/* Looks again for the holders of the kept REQs' ports. A REQ whose port another process
 * holds now goes to it if take(ctx, its comm ID, its CA GUID) says our CM still had it
 * parked (and so let it go); one our process holds, one the CM no longer has, and one
 * kept past URNIC_UDP_UNHELD_NS are forgotten. Forwards are counted in counters. */
void urnic_udp_unheld_resteer(struct urnic_udp *u, uint64_t now_ns,
			      bool (*take)(void *ctx, uint32_t comm_id, uint64_t ca_guid),
			      void *ctx, uint64_t *counters);
/* The counter a urnic_share_flush result moves for each packet of the batch. */
enum urnic_counter urnic_udp_forward_counter(int flush_ret);

/* The kernel's RoCEv2 UDP source port for a flow (rdma_get_udp_sport). */
uint16_t urnic_udp_roce_sport(uint32_t flow_label, uint32_t lqpn, uint32_t rqpn);

#endif
