/* SPDX-License-Identifier: MIT */
/*
 * test_ring_otherhost.c - what the packet rings (src/transport/ring.c, URNIC_RING=1) do
 * with a frame addressed to another host's MAC address: an interface in promiscuous
 * mode passes it to packet sockets marked PACKET_OTHERHOST (packet(7)), and the kernel's
 * IP layer drops it (ip_rcv_core); so must the device, counted as drop_ring_otherhost,
 * whatever the frame's IP destination says.
 *
 * No kernel ring: on lo every frame is PACKET_HOST, so the test lays two TPACKET_V2
 * frames out in memory as the kernel does (header, sockaddr_ll, virtio-net header,
 * Ethernet onwards) and hands that memory to urnic_udp_recv as the small ring: the same
 * RoCEv2 datagram to 127.0.0.2:4791, first for another host, then for this one. Only
 * the second reaches the engine (rx_ring). The counter is looked up by name.
 */
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <stdlib.h>
#include <string.h>

#include <stdatomic.h>

#include "check.h"
#include "transport/udp.h"
#include "wire/byteorder.h"
#include "wire/frame.h"

enum { MAC_OFF = 128, SMALL_BLOCK = 65536, BIG_FRAME = 69632 };

static struct urnic_udp u;
static uint64_t ctr[URNIC_CTR_COUNT];
static int delivered; /* packets the transport handed on */

static void sink_rx(void *ctx, const struct urnic_rx_meta *m, const uint8_t *buf, size_t len)
{
	(void)ctx, (void)m, (void)buf, (void)len;
	delivered++;
}

static int counter(const char *name)
{
	for (int i = 0; i < URNIC_CTR_COUNT; i++)
		if (strcmp(urnic_counter_names[i], name) == 0)
			return i;
	return -1;
}

/* Frame i of the small ring: a RoCEv2 SEND ONLY to QP 0x000123 from 127.0.0.3, handed
 * to user space with link-layer packet type pkttype. */
static void lay_frame(uint8_t *map, uint32_t i, uint8_t pkttype)
{
	uint8_t *fr = map + (size_t)i * URNIC_RING_SMALL_FRAME;
	struct tpacket2_hdr *h = (struct tpacket2_hdr *)(void *)fr;
	struct sockaddr_ll *sll = (struct sockaddr_ll *)(void *)(fr + TPACKET_ALIGN(sizeof(*h)));
	uint8_t *eth = fr + MAC_OFF, *ip = eth + URNIC_ETH_HDR, *udp = ip + URNIC_IPV4_HDR;
	uint8_t *bth = udp + URNIC_UDP_HDR;
	const uint32_t payload = 12 + 4; /* BTH and ICRC */
	const uint32_t len = URNIC_FRAME_UDP_PAYLOAD + payload;

	memset(fr, 0, URNIC_RING_SMALL_FRAME);
	memset(eth, 0x02, 6); /* someone else's MAC for OTHERHOST: the bytes do not matter */
	urnic_put_be16(eth + 12, URNIC_ETH_P_IPV4);
	ip[0] = 0x45;
	urnic_put_be16(ip + 2, (uint16_t)(URNIC_IPV4_HDR + URNIC_UDP_HDR + payload));
	urnic_put_be16(ip + 6, 0x4000); /* DF */
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, (const uint8_t[]){ 127, 0, 0, 3 }, 4);
	memcpy(ip + 16, (const uint8_t[]){ 127, 0, 0, 2 }, 4);
	urnic_put_be16(ip + 10, urnic_ipv4_hdr_csum(ip));
	urnic_put_be16(udp, 0xc001);
	urnic_put_be16(udp + 2, URNIC_ROCE_UDP_PORT);
	urnic_put_be16(udp + 4, (uint16_t)(URNIC_UDP_HDR + payload));
	bth[0] = 0x04; /* RC SEND ONLY */
	urnic_put_be16(bth + 2, 0xffff);
	urnic_put_be24(bth + 5, 0x000123);
	sll->sll_family = AF_PACKET;
	sll->sll_pkttype = pkttype;
	h->tp_mac = MAC_OFF;
	h->tp_net = MAC_OFF + URNIC_ETH_HDR;
	h->tp_len = h->tp_snaplen = len;
	h->tp_sec = 1;
	h->tp_nsec = i; /* arrival order */
	h->tp_status = TP_STATUS_USER;
}

static void test_other_host_frames_are_dropped(void)
{
	static _Alignas(4096) uint8_t small[SMALL_BLOCK], big[BIG_FRAME];
	const uint8_t local[4] = { 127, 0, 0, 2 };
	int otherhost = counter("drop_ring_otherhost");

	struct urnic_udp_sink sink = { sink_rx, NULL, ctr };

	memcpy(u.addr, local, 4);
	u.fd = -1;
	u.share.fd = -1;
	for (int g = 0; g < URNIC_UDP_MAX_GROUPS; g++)
		atomic_init(&u.groups[g].fd, -1);
	/* The rings as urnic_ring_open sizes them; the big one holds nothing. */
	u.ring.q[0] =
		(struct urnic_ring_q){ .fd = -1,
				       .map = small,
				       .map_len = sizeof(small),
				       .frame_size = URNIC_RING_SMALL_FRAME,
				       .frames_per_block = SMALL_BLOCK / URNIC_RING_SMALL_FRAME,
				       .block_size = SMALL_BLOCK,
				       .frame_nr = SMALL_BLOCK / URNIC_RING_SMALL_FRAME };
	u.ring.q[1] = (struct urnic_ring_q){ .fd = -1,
					     .map = big,
					     .map_len = sizeof(big),
					     .frame_size = BIG_FRAME,
					     .frames_per_block = 1,
					     .block_size = BIG_FRAME,
					     .frame_nr = 1 };
	u.ring.cur = -1;
	u.ring_on = true;
	lay_frame(small, 0, PACKET_OTHERHOST);
	lay_frame(small, 1, PACKET_HOST);

	urnic_udp_recv(&u, &sink, 1000000000ull, false);

	CHECK_EQ(ctr[URNIC_CTR_rx_ring], 1); /* the frame for this host */
	CHECK_EQ(delivered, 1);
	CHECK(otherhost >= 0);
	CHECK_EQ(ctr[otherhost], 1);
	CHECK_EQ(ctr[URNIC_CTR_drop_bad_header], 0);
	/* Both frames went back to the kernel. */
	CHECK_EQ(((struct tpacket2_hdr *)(void *)small)->tp_status, TP_STATUS_KERNEL);
	CHECK_EQ(((struct tpacket2_hdr *)(void *)(small + URNIC_RING_SMALL_FRAME))->tp_status,
		 TP_STATUS_KERNEL);
}

int main(void)
{
	RUN(test_other_host_frames_are_dropped);
	return 0;
}
