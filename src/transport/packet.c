/* SPDX-License-Identifier: MIT */
/*
 * packet.c - the raw frames' socket of packet.h: opening it with its filter, sending
 * and receiving batches of frames.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "transport/packet.h"

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23 /* Linux 4.20 */
#endif

enum { RCVBUF_BYTES = 4 << 20, ROCE_PORT = 4791 };

/* Every frame but IPv4 and IPv6 UDP datagrams to port 4791 (first fragments, no IPv6
 * extension headers): jump offsets count the instructions skipped. */
static struct sock_filter not_roce[] = {
	BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),			 /* 0: ether type */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IP, 0, 7),	 /* 1: else to 9 */
	BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 23),			 /* 2: IPv4 protocol */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 0, 10), /* 3: else accept */
	BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 20),			 /* 4: fragment offset */
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x1fff, 8, 0),	 /* 5: later fragment */
	BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 14),		 /* 6: X = IPv4 header length */
	BPF_STMT(BPF_LD | BPF_H | BPF_IND, 16),			 /* 7: UDP destination port */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ROCE_PORT, 6, 5),	 /* 8: drop or accept */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IPV6, 0, 4),	 /* 9: else accept */
	BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 20),			 /* 10: next header */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 0, 2),	 /* 11: else accept */
	BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 56),			 /* 12: UDP destination port */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ROCE_PORT, 1, 0),	 /* 13: drop or accept */
	BPF_STMT(BPF_RET | BPF_K, 0x40000),			 /* 14: accept */
	BPF_STMT(BPF_RET | BPF_K, 0),				 /* 15: drop */
};

static uint32_t if_mtu(int fd, unsigned int ifindex)
{
	struct ifreq ifr = { 0 };

	if (!if_indextoname(ifindex, ifr.ifr_name) || ioctl(fd, SIOCGIFMTU, &ifr) < 0)
		return 1500;
	return (uint32_t)ifr.ifr_mtu;
}

int urnic_packet_open(struct urnic_packet *p, unsigned int ifindex)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
		.sll_ifindex = (int)ifindex,
	};
	struct sock_fprog prog = { .len = sizeof(not_roce) / sizeof(not_roce[0]),
				   .filter = not_roce };
	int one = 1, rcvbuf = RCVBUF_BYTES, ret;

	memset(p, 0, sizeof(*p));
	p->fd = -1;
	p->rxbuf = malloc((size_t)URNIC_PACKET_RX_BATCH * URNIC_PACKET_FRAME_MAX);
	if (!p->rxbuf)
		return -ENOMEM;
	/* Protocol 0 first: nothing is queued before the filter is in place (packet(7)). */
	p->fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (p->fd < 0)
		goto fail;
	if (setsockopt(p->fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) < 0 ||
	    setsockopt(p->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) < 0 ||
	    bind(p->fd, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		goto fail;
	/* A larger buffer for bursts; the default is the kernel's if this is refused. */
	(void)setsockopt(p->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	p->ifindex = ifindex;
	p->mtu = if_mtu(p->fd, ifindex);
	return 0;

fail:
	ret = -errno;
	urnic_packet_close(p);
	return ret;
}

void urnic_packet_close(struct urnic_packet *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	free(p->rxbuf);
	p->rxbuf = NULL;
}

uint32_t urnic_packet_send(struct urnic_packet *p, const uint8_t (*frames)[URNIC_PACKET_FRAME_MAX],
			   const uint32_t *lens, uint32_t n)
{
	struct mmsghdr msgs[URNIC_PACKET_RX_BATCH];
	struct iovec iov[URNIC_PACKET_RX_BATCH];
	uint32_t refused = 0, done = 0;

	while (done < n) {
		uint32_t k = n - done < URNIC_PACKET_RX_BATCH ? n - done : URNIC_PACKET_RX_BATCH;
		int sent;

		for (uint32_t i = 0; i < k; i++) {
			iov[i] = (struct iovec){ (void *)frames[done + i], lens[done + i] };
			msgs[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i],
								 .msg_iovlen = 1 } };
		}
		sent = sendmmsg(p->fd, msgs, k, 0);
		if (sent == -1 && errno == EINTR)
			continue;
		/* The first frame not sent is refused (too long for the MTU, no buffer
		 * space): skipped, the rest tried again. */
		if (sent <= 0) {
			refused++;
			sent = 1;
		}
		done += (uint32_t)sent;
	}
	return refused;
}

uint32_t urnic_packet_recv(struct urnic_packet *p, urnic_packet_sink sink, void *ctx,
			   uint32_t max_frames)
{
	struct mmsghdr msgs[URNIC_PACKET_RX_BATCH];
	struct iovec iov[URNIC_PACKET_RX_BATCH];
	uint32_t total = 0;

	while (total < max_frames) {
		uint32_t k = URNIC_PACKET_RX_BATCH;
		int got;

		for (uint32_t i = 0; i < k; i++) {
			iov[i] = (struct iovec){ p->rxbuf + (size_t)i * URNIC_PACKET_FRAME_MAX,
						 URNIC_PACKET_FRAME_MAX };
			msgs[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i],
								 .msg_iovlen = 1 } };
		}
		/* MSG_TRUNC: msg_len is the frame's whole length (packet(7)). */
		got = recvmmsg(p->fd, msgs, k, MSG_TRUNC, NULL);
		if (got <= 0)
			break;
		for (int i = 0; i < got; i++) {
			size_t wire = msgs[i].msg_len;
			size_t cap = wire < URNIC_PACKET_FRAME_MAX ? wire : URNIC_PACKET_FRAME_MAX;

			sink(ctx, p->rxbuf + (size_t)i * URNIC_PACKET_FRAME_MAX, cap, wire);
		}
		total += (uint32_t)got;
		if ((uint32_t)got < k)
			break;
	}
	return total;
}
