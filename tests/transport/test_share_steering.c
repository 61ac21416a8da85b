/* SPDX-License-Identifier: MIT */
/*
 * test_share_steering.c - the reuseport steering program of a shared address
 * (src/transport/share.c): in a group of three sockets on 127.0.49.1, a packet for a QP
 * reaches the socket of its owner slot, a CM MAD to QP 1 that names a comm ID of ours
 * (REJ, DREQ, SIDR_REP) the socket of that comm ID's slot, and a REQ the first socket,
 * which finds its port's holder. Before, every CM MAD went to the first socket, and
 * was lost when that process exited before reading it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "transport/share.h"
#include "wire/byteorder.h"
#include "wire/cm.h"
#include "wire/mad.h"
#include "wire/pkt.h"

enum { NSOCK = 3, MAD_AT = URNIC_BTH_BYTES + URNIC_DETH_BYTES };

static int socks[NSOCK], tx = -1;
static struct sockaddr_in group;

static void setup(void)
{
	socklen_t len = sizeof(group);
	int one = 1;

	group = (struct sockaddr_in){ .sin_family = AF_INET };
	CHECK(inet_pton(AF_INET, "127.0.49.1", &group.sin_addr) == 1);
	for (int i = 0; i < NSOCK; i++) {
		socks[i] = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
		CHECK(socks[i] >= 0);
		CHECK_EQ(setsockopt(socks[i], SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)), 0);
		CHECK_EQ(bind(socks[i], (struct sockaddr *)&group, sizeof(group)), 0);
		if (i == 0)
			CHECK_EQ(getsockname(socks[0], (struct sockaddr *)&group, &len), 0);
	}
	CHECK_EQ(urnic_share_attach_steering(socks[0]), 0);
	tx = socket(AF_INET, SOCK_DGRAM, 0);
	CHECK(tx >= 0);
}

/* Sends the payload and returns the index of the one socket that received it. */
static int landed(const uint8_t *payload, size_t len)
{
	uint8_t buf[512];
	int got = -1;

	CHECK_EQ(sendto(tx, payload, len, 0, (struct sockaddr *)&group, sizeof(group)),
		 (ssize_t)len);
	for (int tries = 0; tries < 100 && got < 0; tries++) {
		for (int i = 0; i < NSOCK; i++)
			if (recv(socks[i], buf, sizeof(buf), 0) == (ssize_t)len)
				got = i;
		if (got < 0)
			poll(NULL, 0, 10);
	}
	for (int i = 0; i < NSOCK; i++) /* nothing else arrived */
		CHECK(recv(socks[i], buf, sizeof(buf), 0) < 0 && errno == EAGAIN);
	return got;
}

/* A UD SEND to dqpn; for QP 1 a CM MAD of attribute attr with id at byte id_at of its
 * data. */
static size_t packet(uint8_t *p, uint32_t dqpn, uint16_t attr, size_t id_at, uint32_t id)
{
	memset(p, 0, MAD_AT + URNIC_MAD_BYTES);
	p[0] = 0x64; /* UD SEND_ONLY */
	urnic_put_be32(p + 4, dqpn);
	if (dqpn != URNIC_GSI_QPN)
		return MAD_AT + 64;
	p[MAD_AT] = 1;	   /* base version */
	p[MAD_AT + 1] = 7; /* CM class */
	p[MAD_AT + 2] = 2;
	p[MAD_AT + 3] = 3; /* Send */
	urnic_put_be16(p + MAD_AT + 16, attr);
	urnic_put_be32(p + MAD_AT + URNIC_MAD_HDR_BYTES + id_at, id);
	return MAD_AT + URNIC_MAD_BYTES;
}

static void test_steering(void)
{
	uint8_t p[MAD_AT + URNIC_MAD_BYTES];

	setup();
	CHECK_EQ(landed(p, packet(p, 0x200005, 0, 0, 0)), 2);
	CHECK_EQ(landed(p, packet(p, 0x100007, 0, 0, 0)), 1);
	/* The comm ID of ours in a REJ, DREQ, REP, MRA: the remote one, at byte 4. */
	CHECK_EQ(landed(p, packet(p, URNIC_GSI_QPN, URNIC_CM_ATTR_REJ, 4, 0x02abcdef)), 2);
	CHECK_EQ(landed(p, packet(p, URNIC_GSI_QPN, URNIC_CM_ATTR_DREQ, 4, 0x01000001)), 1);
	CHECK_EQ(landed(p, packet(p, URNIC_GSI_QPN, URNIC_CM_ATTR_REP, 4, 0x02000042)), 2);
	CHECK_EQ(landed(p, packet(p, URNIC_GSI_QPN, URNIC_CM_ATTR_MRA, 4, 0x01000042)), 1);
	/* A SIDR_REP's request ID, at byte 0. */
	CHECK_EQ(landed(p, packet(p, URNIC_GSI_QPN, URNIC_CM_ATTR_SIDR_REP, 0, 0x02000009)), 2);
	/* A REQ and a SIDR_REQ name no process: the first member finds the port's holder. */
	CHECK_EQ(landed(p, packet(p, URNIC_GSI_QPN, URNIC_CM_ATTR_REQ, 4, 0x02000000)), 0);
	CHECK_EQ(landed(p, packet(p, URNIC_GSI_QPN, URNIC_CM_ATTR_SIDR_REQ, 0, 0x02000000)), 0);
	for (int i = 0; i < NSOCK; i++)
		close(socks[i]);
	close(tx);
}

int main(void)
{
	RUN(test_steering);
	return 0;
}
