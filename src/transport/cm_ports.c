/* SPDX-License-Identifier: MIT */
/*
 * cm_ports.c - rdma_cm's port spaces shared by the processes on an address, held as
 * abstract unix names (cm_ports.h), and the steering of CM MADs to their process.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "transport/cm_ports.h"
#include "transport/share.h"
#include "wire/cm.h"
#include "wire/cma.h"
#include "wire/mad.h"

enum { EPHEMERAL_TRIES = 64 };

/* The abstract name of a port (slot < 0) or of its holder's slot. */
static socklen_t port_name(struct sockaddr_un *un, const char *addr_str, uint16_t ps, uint16_t port,
			   int slot)
{
	int n;

	memset(un, 0, sizeof(*un));
	un->sun_family = AF_UNIX;
	if (slot < 0)
		n = snprintf(un->sun_path + 1, sizeof(un->sun_path) - 1, "urnic.%s.cm.%u.%u",
			     addr_str, ps, port);
	else
		n = snprintf(un->sun_path + 1, sizeof(un->sun_path) - 1, "urnic.%s.cm.%u.%u.s%d",
			     addr_str, ps, port, slot);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static int bind_name(const struct sockaddr_un *un, socklen_t len)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (bind(fd, (const struct sockaddr *)un, len) < 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	return fd;
}

static int hold_one(struct urnic_cm_port *p, const char *addr_str, uint32_t slot, uint16_t ps,
		    uint16_t port)
{
	struct sockaddr_un un;
	socklen_t len = port_name(&un, addr_str, ps, port, -1);
	int fd = bind_name(&un, len);

	if (fd < 0)
		return fd;
	len = port_name(&un, addr_str, ps, port, (int)slot);
	p->slot_fd = bind_name(&un, len);
	if (p->slot_fd < 0) {
		/* A name of ours held by another socket: another user's squatting it. */
		close(fd);
		return -EADDRINUSE;
	}
	p->fd = fd;
	return 0;
}

int urnic_cm_port_hold(struct urnic_cm_port *p, const char *addr_str, uint32_t slot, uint16_t ps,
		       uint16_t *port)
{
	const uint32_t span = URNIC_CM_PORT_EPHEMERAL_HI - URNIC_CM_PORT_EPHEMERAL_LO + 1;
	uint32_t r;
	int ret;

	p->fd = p->slot_fd = -1;
	if (*port)
		return hold_one(p, addr_str, slot, ps, *port);
	/* cma.c's cma_alloc_any_port: a random start, then the next ports. */
	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (uint32_t)getpid();
	for (uint32_t i = 0; i < EPHEMERAL_TRIES; i++) {
		uint16_t cand = (uint16_t)(URNIC_CM_PORT_EPHEMERAL_LO + (r + i) % span);

		ret = hold_one(p, addr_str, slot, ps, cand);
		if (ret == 0) {
			*port = cand;
			return 0;
		}
		if (ret != -EADDRINUSE)
			return ret;
	}
	return -EADDRNOTAVAIL;
}

void urnic_cm_port_release(struct urnic_cm_port *p)
{
	if (p->fd >= 0)
		close(p->fd);
	if (p->slot_fd >= 0)
		close(p->slot_fd);
	p->fd = p->slot_fd = -1;
}

/* The slot whose name for the port is bound, or -1. connect() on a datagram socket
 * succeeds only for a bound name. */
static int port_holder(const char *addr_str, uint16_t ps, uint16_t port)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), found = -1;
	struct sockaddr_un un;

	if (fd < 0)
		return -1;
	for (int slot = 0; slot < URNIC_SHARE_SLOTS && found < 0; slot++) {
		socklen_t len = port_name(&un, addr_str, ps, port, slot);

		if (connect(fd, (struct sockaddr *)&un, len) == 0)
			found = slot;
	}
	close(fd);
	return found;
}

/* The comm ID a CM message names as the receiver's (IBTA 12.6: the remote comm ID of
 * MRA, REJ, REP, RTU, DREQ and DREP; a SIDR_REP's request ID is the requester's). */
static uint32_t our_comm_id(const struct urnic_cm_mad *mad)
{
	switch (mad->hdr.attr_id) {
	case URNIC_CM_ATTR_MRA:
		return mad->msg.mra.remote_comm_id;
	case URNIC_CM_ATTR_REJ:
		return mad->msg.rej.remote_comm_id;
	case URNIC_CM_ATTR_REP:
		return mad->msg.rep.remote_comm_id;
	case URNIC_CM_ATTR_RTU:
		return mad->msg.rtu.remote_comm_id;
	case URNIC_CM_ATTR_DREQ:
		return mad->msg.dreq.remote_comm_id;
	case URNIC_CM_ATTR_DREP:
		return mad->msg.drep.remote_comm_id;
	case URNIC_CM_ATTR_SIDR_REP:
		return mad->msg.sidr_rep.request_id;
	default:
		return 0;
	}
}

int urnic_cm_port_steer(const char *addr_str, const uint8_t *payload, size_t len)
{
	struct urnic_cm_mad mad;
	struct urnic_pkt pkt;
	enum urnic_rdma_ps ps;
	uint64_t service_id;
	uint32_t id;
	uint16_t port;
	int holder;

	if (urnic_pkt_decode(&pkt, payload, len) < 0 || urnic_cm_decode_pkt(&mad, &pkt, NULL) < 0)
		return -1;
	if (mad.hdr.attr_id == URNIC_CM_ATTR_REQ || mad.hdr.attr_id == URNIC_CM_ATTR_SIDR_REQ) {
		service_id = mad.hdr.attr_id == URNIC_CM_ATTR_REQ ? mad.msg.req.service_id
								  : mad.msg.sidr_req.service_id;
		if (urnic_cma_service_id_decode(service_id, &ps, &port, NULL) < 0)
			return -1;
		holder = port_holder(addr_str, (uint16_t)ps, port);
		if (holder < 0 && mad.hdr.attr_id == URNIC_CM_ATTR_REQ)
			return URNIC_CM_PORT_UNHELD;
		return holder;
	}
	id = our_comm_id(&mad);
	/* A REJ 'timeout' for a REQ names no comm ID of ours: the receiver looks it up. */
	if (!id)
		return -1;
	return (int)(id >> 24) < URNIC_SHARE_SLOTS ? (int)(id >> 24) : -1;
}

int urnic_cm_port_req_key(const uint8_t *payload, size_t len, uint32_t *comm_id, uint64_t *ca_guid)
{
	struct urnic_cm_mad mad;
	struct urnic_pkt pkt;

	if (urnic_pkt_decode(&pkt, payload, len) < 0 || urnic_cm_decode_pkt(&mad, &pkt, NULL) < 0 ||
	    mad.hdr.attr_id != URNIC_CM_ATTR_REQ)
		return -EINVAL;
	*comm_id = mad.msg.req.local_comm_id;
	*ca_guid = mad.msg.req.local_ca_guid;
	return 0;
}
