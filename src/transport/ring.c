/* SPDX-License-Identifier: MIT */
/*
 * ring.c - the packet rings of ring.h: two TPACKET_V2 receive rings and the classic BPF
 * filters that split the address's datagrams between them and the UDP socket.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wire/addr.h"
#include "wire/pkt.h"
#include "transport/ring.h"
#include "wire/frame.h"

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23 /* Linux 4.20 */
#endif
#ifndef VIRTIO_NET_HDR_GSO_UDP_L4
#define VIRTIO_NET_HDR_GSO_UDP_L4 5 /* Linux 6.2: what a UDP GSO datagram is marked */
#endif

/* A datagram up to this many bytes (Ethernet header onwards) goes to the small ring:
 * its frame minus the frame header and the virtio-net header the kernel puts in front
 * (tpacket_rcv's macoff: 44 bytes for TPACKET_V2), with room to spare; larger ones,
 * up to a 64 KiB GSO datagram, to the big ring. */
#define SMALL_MAX_BYTES (URNIC_RING_SMALL_FRAME - 64)

/* The destination QPN's top byte: BTH byte 5 (IBTA 9.2), behind Ethernet, IPv4, UDP.
 * Its high nibble is the share slot (share.h). */
#define QPN_HI_OFF (URNIC_FRAME_UDP_PAYLOAD + 5)
/* The least a datagram must carry to be steered by its QPN: the IP total length. */
#define MIN_IP_LEN (URNIC_IPV4_HDR + URNIC_UDP_HDR + 6)

enum { RING_SMALL, RING_BIG };

/* The ring's share of the address's traffic (cBPF on the packet socket; offsets from
 * the Ethernet header): IPv4 without options or fragments, UDP to addr:4791, long
 * enough to carry a QPN, of our slot, and small (or not, for the big ring). */
static int attach_ring_filter(int fd, const uint8_t addr[4], uint32_t slot, bool big)
{
	uint32_t dst = (uint32_t)addr[0] << 24 | (uint32_t)addr[1] << 16 | (uint32_t)addr[2] << 8 |
		       addr[3];
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, URNIC_ETH_P_IPV4, 0, 17),
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, URNIC_ETH_HDR),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x45, 0, 15),
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, URNIC_ETH_HDR + 9),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 17, 0, 13),
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, URNIC_ETH_HDR + 6),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x3fff, 11, 0),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, URNIC_ETH_HDR + 16),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, dst, 0, 9),
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, URNIC_ETH_HDR + URNIC_IPV4_HDR + 2),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, URNIC_ROCE_UDP_PORT, 0, 7),
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, URNIC_ETH_HDR + 2),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, MIN_IP_LEN, 0, 5),
		BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0),
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, SMALL_MAX_BYTES, big ? 0 : 3, big ? 3 : 0),
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, QPN_HI_OFF),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, slot << 4, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, 0),
		BPF_STMT(BPF_RET | BPF_K, 0x7fffffff), /* all of it (the frame caps it) */
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}

/* The UDP socket's complement (offsets from the UDP header, SKF_NET_OFF from the IP
 * one): drop what a ring takes, keep the rest. The socket is bound to addr:4791, and a
 * GSO datagram is judged by its first packet in both places. */
static int attach_socket_filter(int udp_fd, uint32_t slot)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, MIN_IP_LEN - URNIC_IPV4_HDR, 0, 7),
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, (uint32_t)SKF_NET_OFF),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x45, 0, 5),
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, (uint32_t)SKF_NET_OFF + 6),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x3fff, 3, 0),
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, URNIC_UDP_HDR + 5),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, slot << 4, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, 0xffffffff),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	return setsockopt(udp_fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}

static void q_close(struct urnic_ring_q *q)
{
	if (q->map && q->map != MAP_FAILED)
		munmap(q->map, q->map_len);
	if (q->fd >= 0)
		close(q->fd);
	q->map = NULL;
	q->fd = -1;
}

static int q_open(struct urnic_ring_q *q, unsigned int ifindex, const uint8_t addr[4],
		  uint32_t slot, bool big)
{
	int v2 = TPACKET_V2, one = 1;
	struct tpacket_req req;
	struct sockaddr_ll ll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_IP),
		.sll_ifindex = (int)ifindex,
	};

	memset(q, 0, sizeof(*q));
	q->frame_size = big ? URNIC_RING_BIG_FRAME : URNIC_RING_SMALL_FRAME;
	q->block_size = big ? URNIC_RING_BIG_FRAME : URNIC_RING_SMALL_BLOCK;
	q->frames_per_block = q->block_size / q->frame_size;
	q->frame_nr = big ? URNIC_RING_BIG_FRAMES : URNIC_RING_SMALL_BLOCKS * q->frames_per_block;
	req = (struct tpacket_req){
		.tp_block_size = q->block_size,
		.tp_block_nr = q->frame_nr / q->frames_per_block,
		.tp_frame_size = q->frame_size,
		.tp_frame_nr = q->frame_nr,
	};
	q->map_len = (size_t)q->block_size * req.tp_block_nr;
	/* Protocol 0: nothing is queued before the filter is in place and bind says
	 * which packets. */
	q->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (q->fd < 0)
		return -errno;
	/* The virtio-net header must be asked for before the ring exists. */
	if (setsockopt(q->fd, SOL_PACKET, PACKET_VERSION, &v2, sizeof(v2)) < 0 ||
	    setsockopt(q->fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) < 0 ||
	    /* On lo a datagram passes the taps twice, leaving and arriving. */
	    setsockopt(q->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) < 0 ||
	    attach_ring_filter(q->fd, addr, slot, big) < 0 ||
	    setsockopt(q->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) < 0)
		goto err;
	q->map =
		mmap(NULL, q->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, q->fd, 0);
	if (q->map == MAP_FAILED)
		goto err;
	/* Touch every page before the kernel may write any frame (all are still the
	 * kernel's, zero): MAP_POPULATE maps them, but on this VM the first access of
	 * each page from user space still faults into the hypervisor, and a packet per
	 * fault made the first lap through the ring, ~2000 packets of a ping-pong, twice
	 * as slow (ib_write_lat -n 2500: 10.5 us against 5-6; docs/performance.md,
	 * "Packet rings"). Writing zeros keeps them as they are. */
	for (size_t off = 0; off < q->map_len; off += 4096)
		((volatile uint8_t *)q->map)[off] = 0;
	if (bind(q->fd, (struct sockaddr *)&ll, sizeof(ll)) < 0)
		goto err;
	return 0;
err:
	v2 = -errno;
	q_close(q);
	return v2;
}

int urnic_ring_open(struct urnic_ring *r, unsigned int ifindex, const uint8_t addr[4],
		    uint32_t slot, int udp_fd)
{
	int ret;

	r->q[RING_SMALL].fd = r->q[RING_BIG].fd = -1;
	r->cur = -1;
	if (!ifindex || slot > 15)
		return -EINVAL;
	ret = q_open(&r->q[RING_SMALL], ifindex, addr, slot, false);
	if (!ret)
		ret = q_open(&r->q[RING_BIG], ifindex, addr, slot, true);
	/* Last: until the socket drops them, a datagram may come both ways (the QPs
	 * that could receive it do not exist yet). */
	if (!ret && attach_socket_filter(udp_fd, slot) < 0)
		ret = -errno;
	if (ret) {
		q_close(&r->q[RING_SMALL]);
		q_close(&r->q[RING_BIG]);
	}
	return ret;
}

void urnic_ring_close(struct urnic_ring *r, int udp_fd)
{
	int dummy = 0;

	if (r->q[RING_SMALL].fd < 0)
		return;
	if (udp_fd >= 0)
		setsockopt(udp_fd, SOL_SOCKET, SO_DETACH_FILTER, &dummy, sizeof(dummy));
	q_close(&r->q[RING_SMALL]);
	q_close(&r->q[RING_BIG]);
}

static struct tpacket2_hdr *q_frame(const struct urnic_ring_q *q, uint32_t i)
{
	uint32_t block = i / q->frames_per_block, in = i % q->frames_per_block;

	return (struct tpacket2_hdr *)(void *)(q->map + (size_t)block * q->block_size +
					       (size_t)in * q->frame_size);
}

/* The queue's next frame if the kernel has filled it, else NULL. */
static struct tpacket2_hdr *q_ready(const struct urnic_ring_q *q)
{
	struct tpacket2_hdr *h = q_frame(q, q->head);

	if (!(__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER))
		return NULL;
	return h;
}

static bool stamped_before(const struct tpacket2_hdr *a, const struct tpacket2_hdr *b)
{
	return a->tp_sec != b->tp_sec ? a->tp_sec < b->tp_sec : a->tp_nsec <= b->tp_nsec;
}

bool urnic_ring_next(struct urnic_ring *r, struct urnic_ring_frame *f)
{
	struct tpacket2_hdr *s = q_ready(&r->q[RING_SMALL]), *b = q_ready(&r->q[RING_BIG]), *h;
	const struct virtio_net_hdr *vh;
	const struct sockaddr_ll *sll;

	if (!s && !b)
		return false;
	if (s && (!b || stamped_before(s, b))) {
		h = s;
		r->cur = RING_SMALL;
	} else {
		h = b;
		r->cur = RING_BIG;
	}
	f->frame = (uint8_t *)h + h->tp_mac;
	f->len = h->tp_snaplen;
	f->wire_len = h->tp_len;
	f->lost_before = h->tp_status & TP_STATUS_LOSING;
	/* The frame's link-layer address follows the TPACKET_V2 header (packet(7)). */
	sll = (const struct sockaddr_ll *)(const void *)((const uint8_t *)h +
							 TPACKET_ALIGN(sizeof(*h)));
	f->other_host = sll->sll_pkttype == PACKET_OTHERHOST;
	vh = (const struct virtio_net_hdr *)(const void *)(f->frame - sizeof(*vh));
	f->gso_size = vh->gso_type == VIRTIO_NET_HDR_GSO_NONE ? 0 : le16toh(vh->gso_size);
	/* A GSO type other than UDP's cannot be cut here: not a RoCE sender's. */
	if (vh->gso_type != VIRTIO_NET_HDR_GSO_NONE && vh->gso_type != VIRTIO_NET_HDR_GSO_UDP_L4)
		f->gso_size = UINT32_MAX;
	return true;
}

void urnic_ring_release(struct urnic_ring *r)
{
	struct urnic_ring_q *q = &r->q[r->cur];

	__atomic_store_n(&q_frame(q, q->head)->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
	q->head = q->head + 1 == q->frame_nr ? 0 : q->head + 1;
	r->cur = -1;
}

uint32_t urnic_ring_drops(struct urnic_ring *r)
{
	uint32_t drops = 0;

	for (int i = 0; i < 2; i++) {
		struct tpacket_stats st;
		socklen_t len = sizeof(st);

		if (getsockopt(r->q[i].fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0)
			drops += st.tp_drops;
	}
	return drops;
}
