/* SPDX-License-Identifier: MIT */
/*
 * ring.h - receiving RoCEv2 from a packet ring (AF_PACKET, TPACKET_V2) instead of the
 * UDP socket: the kernel copies each datagram for us into memory shared with it while it
 * delivers the packet, in the sender's context on loopback, and "did anything arrive?"
 * becomes a load of the next frame's status word instead of a recvmmsg. A polling
 * receiver saves the system call per receive that dominates a ping-pong on a VM
 * (docs/performance.md, "Packet rings"). Opt-in (URNIC_RING=1) and needs CAP_NET_RAW.
 *
 * Two rings, so that small packets do not each hold a 64 KiB frame: one for datagrams
 * of up to 1984 bytes, one for larger ones and UDP GSO super-packets, whose segment size the
 * virtio-net header in front of the frame gives (PACKET_VNET_HDR). A packet goes to
 * exactly one of them and the UDP socket drops it (a complementary socket filter), so it
 * is received once. The kernel stamps each frame when it copies it in; frames are taken
 * from the two rings in stamp order, which is the order one sender's packets arrived in.
 * Only IPv4 to this address, port 4791, for our share slot's QPNs (share.h), without IP
 * options or fragments; everything else (IPv6, multicast, another slot's) stays on the
 * sockets. Context: the engine thread or a polling application, under the device lock.
 *
 * A ring takes frames before the kernel's IP layer: netfilter's hooks (PREROUTING,
 * INPUT) do not apply, so a datagram the host firewall drops still reaches the device.
 * Frames addressed to another host's MAC (other_host) are dropped here, as IP does.
 */
#ifndef URNIC_TRANSPORT_RING_H
#define URNIC_TRANSPORT_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	/* The small ring's frames hold a datagram of up to 1984 bytes: ACKs, small
	 * messages and GSO runs of them. Two to a page, the 2048 frames (4 MiB) stay
	 * within the TLB's reach: a ping-pong's one-way trip was 0.15-0.2 us faster than
	 * with 2040 frames of 4352 bytes (one MTU-sized packet each, 8.5 MiB), 6 pairs of
	 * 6; a ring of 510 such frames was faster still but overflowed with 16 QPs of
	 * 1 KiB WRITEs. Larger datagrams, MTU-sized packets too, go to the big ring. */
	URNIC_RING_SMALL_FRAME = 2048,
	URNIC_RING_SMALL_BLOCK = 65536, /* 32 frames a block */
	URNIC_RING_SMALL_BLOCKS = 64,
	/* The big ring's hold a 64 KiB UDP GSO datagram; 512 of them, 34 MiB, about what
	 * the socket's 32 MiB buffer holds. With 256, ib_write_bw -s 65536 -q 16 lost
	 * 4070 datagrams to a full ring (85598 packets retransmitted); with 512, none at
	 * -q 16 or -q 64. */
	URNIC_RING_BIG_FRAME = 69632,
	URNIC_RING_BIG_FRAMES = 512,
};

struct urnic_ring_q {
	int fd;
	uint8_t *map;
	size_t map_len;
	uint32_t frame_size, frames_per_block, block_size, frame_nr;
	uint32_t head;
};

struct urnic_ring {
	struct urnic_ring_q q[2]; /* small, big */
	int cur;		  /* the queue of the frame urnic_ring_next returned */
};

/* One datagram from the ring: its frame (Ethernet onwards, len bytes captured of
 * wire_len), and the segment size of a GSO super-packet (0: one packet; UINT32_MAX: a
 * GSO type other than UDP's, which cannot be cut). */
struct urnic_ring_frame {
	uint8_t *frame; /* writable: the faulty wire (fault.h) corrupts in place */
	uint32_t len, wire_len;
	uint32_t gso_size;
	bool lost_before; /* the kernel dropped frames before this one: the ring was full */
	/* Sent to another host's MAC address (PACKET_OTHERHOST, packet(7)): a packet socket
	 * sees it on an interface in promiscuous mode, the kernel's IP layer drops it. */
	bool other_host;
};

/* Opens both rings on interface ifindex for IPv4 datagrams to addr:4791 whose
 * destination QPN carries share slot `slot`, and makes udp_fd (bound to addr:4791)
 * drop exactly those. Returns 0 or -errno (-EPERM without CAP_NET_RAW); on error
 * nothing is left changed. */
int urnic_ring_open(struct urnic_ring *r, unsigned int ifindex, const uint8_t addr[4],
		    uint32_t slot, int udp_fd);
/* Closes the rings and lets udp_fd receive everything again. */
void urnic_ring_close(struct urnic_ring *r, int udp_fd);

/* The next datagram in arrival order, or false if none. It stays in the ring until
 * urnic_ring_release. */
bool urnic_ring_next(struct urnic_ring *r, struct urnic_ring_frame *f);
/* Hands the frame urnic_ring_next returned back to the kernel. */
void urnic_ring_release(struct urnic_ring *r);

/* How many datagrams the kernel dropped because a ring was full since the last call
 * (PACKET_STATISTICS: a system call; call it when a frame says lost_before). */
uint32_t urnic_ring_drops(struct urnic_ring *r);

/* The rings' fds, for sleeping on (POLLIN when a frame is waiting). */
static inline int urnic_ring_fd(const struct urnic_ring *r, int i)
{
	return r->q[i].fd;
}

#endif
