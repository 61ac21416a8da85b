/* SPDX-License-Identifier: MIT */
/*
 * packet.h - the port's wire for raw packet QPs: an AF_PACKET socket (packet(7),
 * SOCK_RAW, ETH_P_ALL) bound to the interface that holds the device's address (lo for
 * 127.x), sending whole Ethernet frames with sendmmsg and receiving every frame that
 * interface receives, once: PACKET_IGNORE_OUTGOING keeps out the copies of frames sent
 * (on lo each frame is seen once going out and once coming in, and only the second is
 * what a NIC's receive would see). Frames the port itself sends come back only where
 * the interface loops them back (lo): the kernel is the switch, so two raw QPs of one
 * device on lo reach each other, as raw QPs on one RNIC port do through its loopback.
 *
 * RoCEv2 datagrams (UDP port 4791) stay out (a classic BPF filter): they are the RoCE
 * engine's, and every urnic process's RoCE traffic on lo would otherwise come here.
 * Needs CAP_NET_RAW (-EPERM, as the kernel gives it, without). Frames to other hosts'
 * MAC addresses reach it only on lo (no promiscuous mode is set). Context: under the
 * device lock.
 */
#ifndef URNIC_TRANSPORT_PACKET_H
#define URNIC_TRANSPORT_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	URNIC_PACKET_FRAME_MAX = 9216, /* the longest frame received whole */
	URNIC_PACKET_RX_BATCH = 16,    /* frames per recvmmsg */
};

struct urnic_packet {
	int fd;
	unsigned int ifindex;
	uint32_t mtu;	/* the interface's, for the longest frame it sends */
	uint8_t *rxbuf; /* URNIC_PACKET_RX_BATCH frames of URNIC_PACKET_FRAME_MAX */
};

/* A received frame: its captured bytes and, if longer, its length on the wire. */
typedef void (*urnic_packet_sink)(void *ctx, const uint8_t *frame, size_t len, size_t wire_len);

/* Opens the socket on interface ifindex. 0, -EPERM (no CAP_NET_RAW), -ENOMEM or the
 * kernel's error; on error nothing is left open. */
int urnic_packet_open(struct urnic_packet *p, unsigned int ifindex);
void urnic_packet_close(struct urnic_packet *p);

/* Sends n frames. Returns how many the kernel refused (each counted by the caller). */
uint32_t urnic_packet_send(struct urnic_packet *p, const uint8_t (*frames)[URNIC_PACKET_FRAME_MAX],
			   const uint32_t *lens, uint32_t n);

/* Receives what is waiting, at most max_frames, into sink. Returns the frames read. */
uint32_t urnic_packet_recv(struct urnic_packet *p, urnic_packet_sink sink, void *ctx,
			   uint32_t max_frames);

#endif
