/* SPDX-License-Identifier: MIT */
/*
 * frames.c - hostile scenarios made of whole Ethernet frames, for a target that
 * receives from packet rings (URNIC_RING=1, src/transport/ring.h). A ring sees a frame
 * before the kernel's IP and UDP layers do, so urnic must make their checks itself
 * (src/wire/frame.h); here they are sent from an AF_PACKET socket on lo, which the
 * loopback hands back in as received frames, to the rings and to the IP layer alike.
 */
#include <errno.h>
#include <net/if.h>
#include <linux/if_packet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "attacker.h"
#include "wire/byteorder.h"
#include "wire/frame.h"

enum { IP = URNIC_ETH_HDR, UDP = IP + URNIC_IPV4_HDR, PAY = URNIC_FRAME_UDP_PAYLOAD };

static int raw_fd = -1;

static void raw_open(void)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };

	raw_fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	REQUIRE(raw_fd >= 0, "AF_PACKET socket: %s", strerror(errno));
	sll.sll_ifindex = (int)if_nametoindex("lo");
	REQUIRE(sll.sll_ifindex > 0, "no lo");
	REQUIRE(bind(raw_fd, (struct sockaddr *)&sll, sizeof(sll)) == 0, "bind to lo: %s",
		strerror(errno));
}

static void ip_csum(uint8_t *ip)
{
	urnic_put_be16(ip + 10, urnic_ipv4_hdr_csum(ip));
}

/* The frame a RoCEv2 sender on our address would put on lo for the UDP payload roce:
 * IPv4 ID 0 with DF (what build() computed the ICRC for), UDP checksum 0 (IBTA A17.3.3
 * allows it). Returns its length. */
static size_t frame(uint8_t *f, const uint8_t *roce, size_t len)
{
	memset(f, 0, PAY);
	urnic_put_be16(f + 12, URNIC_ETH_P_IPV4);
	f[IP] = 0x45;
	urnic_put_be16(f + IP + 2, (uint16_t)(URNIC_IPV4_HDR + URNIC_UDP_HDR + len));
	urnic_put_be16(f + IP + 6, 0x4000); /* DF */
	f[IP + 8] = 64;
	f[IP + 9] = 17;
	memcpy(f + IP + 12, A.addr, 4);
	memcpy(f + IP + 16, A.taddr, 4);
	ip_csum(f + IP);
	urnic_put_be16(f + UDP, URNIC_ROCE_UDP_PORT);
	urnic_put_be16(f + UDP + 2, URNIC_ROCE_UDP_PORT);
	urnic_put_be16(f + UDP + 4, (uint16_t)(URNIC_UDP_HDR + len));
	memcpy(f + PAY, roce, len);
	return PAY + len;
}

static void send_frame(const uint8_t *f, size_t len)
{
	ssize_t n = send(raw_fd, f, len, 0);

	REQUIRE(n == (ssize_t)len, "send on AF_PACKET: %s", strerror(errno));
}

/* Frames whose IPv4 or UDP header breaks a rule the kernel would enforce before a UDP
 * socket saw the datagram (RFC 791 §3.1, RFC 768): each is counted in drop_bad_header
 * and dropped without a reply or a byte written; the same WRITE in an intact frame from
 * the same socket is ACKed and lands. */
void sc_ring_frames(void)
{
	struct topts o = topts_default(1);
	struct qpinfo *q = &A.qp[0];
	struct urnic_ctrfile s;
	uint8_t data[32], roce[128], f[256];
	struct urnic_pkt h;
	size_t rlen, flen;

	REQUIRE(setenv("URNIC_RING", "1", 1) == 0, "setenv");
	start_target(&o);
	probe(0);
	settle();
	REQUIRE(ctr("rx_ring") > 0, "the target does not receive from packet rings");
	raw_open();
	snap(&s);
	h = write32(0, 64, data);
	rlen = build(&h, data, 32, 0, roce, sizeof(roce));

	flen = frame(f, roce, rlen);
	f[IP + 10] ^= 0x01; /* a header checksum one bit off */
	send_frame(f, flen);
	flen = frame(f, roce, rlen);
	urnic_put_be16(f + UDP + 4, (uint16_t)(urnic_get_be16(f + UDP + 4) - 4));
	send_frame(f, flen); /* a UDP length short of the IP payload */
	flen = frame(f, roce, rlen);
	urnic_put_be16(f + IP + 2, (uint16_t)(urnic_get_be16(f + IP + 2) + 8));
	urnic_put_be16(f + UDP + 4, (uint16_t)(urnic_get_be16(f + UDP + 4) + 8));
	ip_csum(f + IP);
	send_frame(f, flen); /* lengths that agree but run 8 bytes past the frame */

	wait_ctr("drop_bad_header", snap_of(&s, "drop_bad_header") + 3);
	EXPECT_CTR(s, "drop_bad_header", 3);
	expect_silent_drop(&s, "frames with broken IPv4/UDP headers");
	EXPECT_CTR(s, "rx_packets", 0);

	flen = frame(f, roce, rlen);
	send_frame(f, flen);
	q->msn++;
	if (expect_reply(0, URNIC_OP_RC_ACKNOWLEDGE, q->epsn, -1, q->msn,
			 "the WRITE in an intact frame"))
		memcpy(A.shadow[HR_RW] + 64, data, 32);
	q->epsn = urnic_psn_add(q->epsn, 1);
	A.rx_sent++;
	settle();
	EXPECT_CTR(s, "drop_bad_header", 3);
	probe(0);
	close(raw_fd);
}
