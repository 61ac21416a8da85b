/* SPDX-License-Identifier: MIT */
/*
 * share.c - slots, steering and forwarding for processes sharing an address. See
 * share.h.
 */
#include "transport/share.h"

#include <errno.h>
#include <linux/filter.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "wire/byteorder.h"

/* BTH bytes 5..7 are the destination QP (IBTA 9.2, the BTH layout). */
#define BTH_DQPN_OFFSET 5

static void slot_name(struct urnic_share *s, const char *addr_str, uint32_t slot)
{
	struct sockaddr_un *un = &s->names[slot];
	int n;

	memset(un, 0, sizeof(*un));
	un->sun_family = AF_UNIX;
	/* Abstract namespace: sun_path[0] == 0, no file, scoped to the network namespace. */
	n = snprintf(un->sun_path + 1, sizeof(un->sun_path) - 1, "urnic.%s.%u", addr_str, slot);
	s->name_lens[slot] = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

int urnic_share_lock(const char *addr_str)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	int n = snprintf(un.sun_path + 1, sizeof(un.sun_path) - 1, "urnic.%s.join", addr_str);
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);

	/* An abstract name is a mutex the kernel releases if its holder dies. At most
	 * ~1 s: a process stuck between the two binds must not stop the others. */
	for (int tries = 0; tries < 10000; tries++) {
		struct timespec pause = { 0, 100000 };
		int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		if (fd < 0)
			return -1;
		if (bind(fd, (struct sockaddr *)&un, len) == 0)
			return fd;
		close(fd);
		if (errno != EADDRINUSE)
			return -1;
		nanosleep(&pause, NULL);
	}
	return -1;
}

void urnic_share_unlock(int lock_fd)
{
	if (lock_fd >= 0)
		close(lock_fd);
}

int urnic_share_join(struct urnic_share *s, const char *addr_str)
{
	int bufsz = 4 << 20;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	for (uint32_t slot = 0; slot < URNIC_SHARE_SLOTS; slot++)
		slot_name(s, addr_str, slot);
	for (uint32_t slot = 0; slot < URNIC_SHARE_SLOTS; slot++) {
		int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

		if (fd < 0)
			return -errno;
		if (bind(fd, (struct sockaddr *)&s->names[slot], s->name_lens[slot]) == 0) {
			int one = 1;

			if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bufsz, sizeof(bufsz)) < 0)
				setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof(bufsz));
			/* Every datagram then carries its sender's credentials. */
			if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0) {
				close(fd);
				return -errno;
			}
			s->fd = fd;
			s->slot = slot;
			s->uid = (uint32_t)geteuid();
			return 0;
		}
		close(fd);
	}
	return -EADDRINUSE;
}

void urnic_share_leave(struct urnic_share *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

int urnic_share_attach_steering(int udp_fd)
{
	/* A = UDP payload bytes 4..7 (BTH: FECN/BECN/resv, destination QP);
	 * return (A >> 20) & 15: the owner slot, used as the group's socket index. */
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 4),
		BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, URNIC_QPN_OWNER_SHIFT),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, URNIC_QPN_OWNERS - 1),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };

	if (setsockopt(udp_fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof(prog)) < 0)
		return -errno;
	return 0;
}

int urnic_share_owner(const uint8_t *payload, size_t len)
{
	if (len < BTH_DQPN_OFFSET + 3)
		return -1;
	return (int)(urnic_get_be24(payload + BTH_DQPN_OFFSET) >> URNIC_QPN_OWNER_SHIFT) &
	       (URNIC_QPN_OWNERS - 1);
}

bool urnic_share_fits(const struct urnic_share *s, uint32_t slot, const struct urnic_share_rec *r)
{
	return !s->batch_n || (s->batch_slot == slot &&
			       s->batch_bytes + URNIC_SHARE_REC_HDR + r->len <= URNIC_SHARE_BATCH);
}

void urnic_share_add(struct urnic_share *s, uint32_t slot, const struct urnic_share_rec *r)
{
	uint8_t *h = s->batch + s->batch_bytes;

	if (!s->batch_n)
		s->batch_slot = slot;
	memcpy(h, r->src, 16);
	urnic_put_be16(h + 16, r->sport);
	urnic_put_be16(h + 18, (uint16_t)r->len);
	urnic_put_be16(h + 20, r->ip_id_hint);
	h[22] = r->tos;
	h[23] = r->ttl;
	memcpy(h + URNIC_SHARE_REC_HDR, r->pkt, r->len);
	s->batch_bytes += URNIC_SHARE_REC_HDR + r->len;
	s->batch_n++;
}

int urnic_share_flush(struct urnic_share *s)
{
	uint32_t slot = s->batch_slot;
	ssize_t ret = 0;

	if (!s->batch_n)
		return 0;
	/* A full queue: give the owner up to ~200 us to drain it, never block. */
	for (int tries = 0; tries < 20; tries++) {
		struct timespec pause = { 0, 10000 };

		ret = sendto(s->fd, s->batch, s->batch_bytes, MSG_DONTWAIT,
			     (const struct sockaddr *)&s->names[slot], s->name_lens[slot]);
		if (ret >= 0 || errno != EAGAIN)
			break;
		nanosleep(&pause, NULL);
	}
	s->batch_n = 0;
	s->batch_bytes = 0;
	return ret >= 0 ? 0 : -errno;
}

bool urnic_share_trusted(const struct urnic_share *s, const struct msghdr *m)
{
	bool trusted = false, rights = false;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR((struct msghdr *)m, c)) {
		struct ucred cred;

		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (c->cmsg_type == SCM_RIGHTS) {
			/* Descriptors a sender passed are ours now: close them, or any
			 * process could fill our descriptor table. */
			size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (size_t i = 0; i < n; i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
				close(fd);
			}
			rights = true; /* no forwarder sends any: not one of ours */
			continue;
		}
		if (c->cmsg_type == SCM_CREDENTIALS && c->cmsg_len >= CMSG_LEN(sizeof(cred))) {
			memcpy(&cred, CMSG_DATA(c), sizeof(cred));
			trusted = cred.uid == s->uid;
		}
	}
	/* A truncated control area may have dropped descriptors (the kernel closes those)
	 * or the credentials: not a datagram the kernel vouched for in full. */
	return trusted && !rights && !(m->msg_flags & MSG_CTRUNC);
}

int urnic_share_next(const uint8_t *batch, uint32_t len, uint32_t *off, struct urnic_share_rec *r)
{
	const uint8_t *h = batch + *off;
	uint32_t left = len - *off, n;

	if (!left)
		return 0;
	if (left < URNIC_SHARE_REC_HDR)
		return -EBADMSG;
	n = urnic_get_be16(h + 18);
	if (n > left - URNIC_SHARE_REC_HDR)
		return -EBADMSG;
	memcpy(r->src, h, 16);
	r->sport = urnic_get_be16(h + 16);
	r->ip_id_hint = urnic_get_be16(h + 20);
	r->tos = h[22];
	r->ttl = h[23];
	r->pkt = h + URNIC_SHARE_REC_HDR;
	r->len = n;
	*off += URNIC_SHARE_REC_HDR + n;
	return 1;
}
