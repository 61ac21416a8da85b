/* SPDX-License-Identifier: MIT */
/*
 * share.c - slots, steering and forwarding for processes sharing an address. See
 * share.h.
 */
#include "transport/cm_ports.h"
#include "transport/share.h"
#include "wire/mad.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "wire/addr.h"
#include "wire/byteorder.h"
#include "wire/cm.h"
#include "wire/pkt.h"

/* A slot refused for its holder's user is looked at again after this long: the holder
 * may have left and one of our processes taken the slot. */
#define REFUSED_RECHECK_NS 100000000ull

/* Attribute `attr` (a u32) of unix socket ino, asked with flag `show` (sock_diag(7),
 * <linux/unix_diag.h>: an exact request by inode, no cookie). Returns it, or -errno
 * (-ENOENT: the socket has no such attribute, e.g. no peer). */
static int64_t diag_u32(uint32_t ino, uint32_t show, uint16_t attr)
{
	struct {
		struct nlmsghdr h;
		struct unix_diag_req r;
	} q = {
		.h = { .nlmsg_len = sizeof(q),
		       .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		       .nlmsg_flags = NLM_F_REQUEST },
		.r = { .sdiag_family = AF_UNIX,
		       .udiag_states = ~0u,
		       .udiag_ino = ino,
		       .udiag_show = show,
		       .udiag_cookie = { ~0u, ~0u } },
	};
	union {
		struct nlmsghdr h;
		uint8_t b[1024];
	} a;
	int64_t ret = -ENOENT;
	ssize_t n;
	int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);

	if (nl < 0)
		return -errno;
	if (send(nl, &q, sizeof(q), 0) < 0 || (n = recv(nl, &a, sizeof(a), 0)) < 0) {
		ret = -errno;
		close(nl);
		return ret;
	}
	close(nl);
	if (!NLMSG_OK(&a.h, (size_t)n))
		return -EBADMSG;
	if (a.h.nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(&a.h);

		return a.h.nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error ? e->error : -EBADMSG;
	}
	if (a.h.nlmsg_type != SOCK_DIAG_BY_FAMILY ||
	    a.h.nlmsg_len < NLMSG_LENGTH(sizeof(struct unix_diag_msg)))
		return -EBADMSG;
	{
		const struct unix_diag_msg *m = NLMSG_DATA(&a.h);
		const struct rtattr *rta = (const struct rtattr *)(m + 1);
		unsigned int left = a.h.nlmsg_len - NLMSG_LENGTH(sizeof(*m));

		if (m->udiag_ino != ino)
			return -EBADMSG;
		for (; RTA_OK(rta, left); rta = RTA_NEXT(rta, left)) {
			uint32_t v;

			if (rta->rta_type != attr || RTA_PAYLOAD(rta) < sizeof(v))
				continue;
			memcpy(&v, RTA_DATA(rta), sizeof(v));
			ret = v;
		}
	}
	return ret;
}

int urnic_share_peer_uid(int fd, uint32_t *uid)
{
	struct stat st;
	int64_t peer, u;

	if (fstat(fd, &st) < 0)
		return -errno;
	peer = diag_u32((uint32_t)st.st_ino, UDIAG_SHOW_PEER, UNIX_DIAG_PEER);
	if (peer < 0)
		return (int)peer;
	u = diag_u32((uint32_t)peer, UDIAG_SHOW_UID, UNIX_DIAG_UID);
	if (u < 0)
		return (int)u;
	*uid = (uint32_t)u;
	return 0;
}

/* A socket connected to the abstract name un and the uid of its holder, checked on the
 * connection itself: what is sent on it reaches that socket and no later holder of the
 * name. Returns the fd, or -errno (-ECONNREFUSED: no one holds the name). */
static int connect_name(const struct sockaddr_un *un, socklen_t len, uint32_t *uid)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), ret;

	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)un, len) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	ret = urnic_share_peer_uid(fd, uid);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

/* The abstract name un (its text after the leading 0 byte). */
static const char *name_of(const struct sockaddr_un *un)
{
	return un->sun_path + 1;
}

/* Whether the name that bind found taken is held by another user; says so (`what`: what
 * it costs us). */
static bool held_by_other_user(const struct sockaddr_un *un, socklen_t len, const char *what)
{
	uint32_t uid;
	int fd = connect_name(un, len, &uid);

	if (fd < 0)
		return false;
	close(fd);
	if (uid == (uint32_t)geteuid())
		return false;
	fprintf(stderr,
		"urnic: the abstract unix socket %s is held by another user's socket "
		"(uid %u): %s\n",
		name_of(un), uid, what);
	return true;
}

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
		/* Not a process of ours: it would hold the lock for as long as it likes. */
		if (tries == 0 && held_by_other_user(&un, len, "joining the address without it"))
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

	uint32_t foreign = 0;

	memset(s, 0, sizeof(*s));
	snprintf(s->addr_str, sizeof(s->addr_str), "%s", addr_str);
	s->fd = -1;
	s->uid = (uint32_t)geteuid();
	for (uint32_t slot = 0; slot < URNIC_SHARE_SLOTS; slot++) {
		slot_name(s, addr_str, slot);
		s->peer_fd[slot] = -1;
		s->refused_uid[slot] = UINT32_MAX;
	}
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
			return 0;
		}
		close(fd);
		if (errno == EADDRINUSE &&
		    held_by_other_user(&s->names[slot], s->name_lens[slot],
				       "its slot is skipped and nothing is forwarded to it"))
			foreign++;
	}
	fprintf(stderr,
		"urnic: %s: all %d slots of the shared address are taken (%u by other "
		"users' sockets)\n",
		addr_str, URNIC_SHARE_SLOTS, foreign);
	return -EADDRINUSE;
}

void urnic_share_leave(struct urnic_share *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	for (uint32_t slot = 0; slot < URNIC_SHARE_SLOTS; slot++) {
		if (s->peer_fd[slot] >= 0)
			close(s->peer_fd[slot]);
		s->peer_fd[slot] = -1;
	}
}

/* Where a CM MAD sits in a UDP payload (BTH, DETH, then the MAD): its attribute ID, and
 * the first byte of the comm ID it names as the receiver's, whose top byte is that
 * process's slot (cm_ports.h; IBTA 12.6: the remote comm ID at byte 4 of MRA, REJ, REP,
 * RTU, DREQ and DREP, the request ID at byte 0 of a SIDR_REP). */
enum {
	STEER_MAD = URNIC_BTH_BYTES + URNIC_DETH_BYTES,
	STEER_ATTR = STEER_MAD + 16,
	STEER_REMOTE_ID = STEER_MAD + URNIC_MAD_HDR_BYTES + 4,
	STEER_REQUEST_ID = STEER_MAD + URNIC_MAD_HDR_BYTES,
};
_Static_assert(URNIC_CM_ATTR_DREP - URNIC_CM_ATTR_MRA == 5 &&
		       URNIC_CM_ATTR_SIDR_REP == URNIC_CM_ATTR_SIDR_REQ + 1,
	       "MRA..DREP are contiguous attribute IDs (IBTA 12.6, table 96)");

int urnic_share_attach_steering(int udp_fd)
{
	/* A = UDP payload bytes 4..7 (BTH: FECN/BECN/resv, destination QP); return
	 * (A >> 20) & 15: the owner slot, used as the group's socket index. A CM MAD to
	 * QP 1 goes to the slot its comm ID names, so that it reaches its process even when
	 * the first member, which answers the rest (REQs: their port's holder is looked up
	 * there), has just exited with it unread: pyverbs' passive side returns right
	 * after rdma_reject or rdma_disconnect. An index past the group's end is hashed by
	 * the kernel, and that member forwards (urnic_share_owner). */
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 4),
		BPF_STMT(BPF_MISC | BPF_TAX, 0),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xffffff),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, URNIC_GSI_QPN, 0, 9),
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, STEER_ATTR),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, URNIC_CM_ATTR_SIDR_REP, 0, 2),
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, STEER_REQUEST_ID),
		BPF_STMT(BPF_RET | BPF_A, 0),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, URNIC_CM_ATTR_MRA, 0, 3),
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, URNIC_CM_ATTR_DREP, 2, 0),
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, STEER_REMOTE_ID),
		BPF_STMT(BPF_RET | BPF_A, 0),
		BPF_STMT(BPF_RET | BPF_K, 0),
		BPF_STMT(BPF_MISC | BPF_TXA, 0),
		BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, URNIC_QPN_OWNER_SHIFT),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, URNIC_QPN_OWNERS - 1),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };

	if (setsockopt(udp_fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof(prog)) < 0)
		return -errno;
	return 0;
}

int urnic_share_owner(const struct urnic_share *s, const uint8_t *payload, size_t len)
{
	uint32_t dqpn;

	if (len < URNIC_BTH_DQPN_OFFSET + 3)
		return -1;
	dqpn = urnic_get_be24(payload + URNIC_BTH_DQPN_OFFSET);
	if (dqpn == URNIC_GSI_QPN)
		return urnic_cm_port_steer(s->addr_str, payload, len);
	return (int)urnic_qpn_owner(dqpn);
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

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Makes s->peer_fd[slot] a socket connected to the slot's owner, if that is a process
 * of our user. Returns 0, -ECONNREFUSED (no owner) or -EPERM (another user's socket,
 * or one whose owner the kernel would not tell: refused for REFUSED_RECHECK_NS). */
static int peer_connect(struct urnic_share *s, uint32_t slot)
{
	uint64_t now;
	uint32_t uid = UINT32_MAX;
	int fd;

	if (s->peer_fd[slot] >= 0)
		return 0;
	now = now_ns();
	if (now < s->refused_until_ns[slot])
		return -EPERM;
	fd = connect_name(&s->names[slot], s->name_lens[slot], &uid);
	if (fd == -ECONNREFUSED)
		return fd;
	if (fd >= 0 && uid == s->uid) {
		s->peer_fd[slot] = fd;
		s->refused_uid[slot] = UINT32_MAX;
		return 0;
	}
	if (fd >= 0)
		close(fd);
	if (uid != s->refused_uid[slot]) {
		if (fd >= 0)
			fprintf(stderr,
				"urnic: the abstract unix socket %s is held by another "
				"user's socket (uid %u): packets for its QPs are not forwarded "
				"(drop_forward_foreign_owner)\n",
				name_of(&s->names[slot]), uid);
		else
			fprintf(stderr,
				"urnic: cannot tell who holds the abstract unix socket %s "
				"(sock_diag: %s): packets for its QPs are not forwarded "
				"(drop_forward_foreign_owner)\n",
				name_of(&s->names[slot]), strerror(-fd));
		s->refused_uid[slot] = uid;
	}
	s->refused_until_ns[slot] = now + REFUSED_RECHECK_NS;
	return -EPERM;
}

/* Sends the batch on the slot's checked connection. Returns 0 or -errno. */
static int send_batch(struct urnic_share *s, uint32_t slot)
{
	ssize_t ret = 0;

	/* A full queue: give the owner up to ~200 us to drain it, never block. */
	for (int tries = 0; tries < 20; tries++) {
		struct timespec pause = { 0, 10000 };

		ret = send(s->peer_fd[slot], s->batch, s->batch_bytes, MSG_DONTWAIT);
		if (ret >= 0 || errno != EAGAIN)
			break;
		nanosleep(&pause, NULL);
	}
	return ret >= 0 ? 0 : -errno;
}

int urnic_share_flush(struct urnic_share *s)
{
	uint32_t slot = s->batch_slot;
	int ret;

	if (!s->batch_n)
		return 0;
	ret = peer_connect(s, slot);
	if (!ret) {
		ret = send_batch(s, slot);
		if (ret == -ECONNREFUSED) {
			/* The owner we checked has left: whoever holds the slot now is
			 * checked before anything is sent to it. */
			close(s->peer_fd[slot]);
			s->peer_fd[slot] = -1;
			ret = peer_connect(s, slot);
			if (!ret)
				ret = send_batch(s, slot);
		}
	}
	s->batch_n = 0;
	s->batch_bytes = 0;
	return ret;
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
