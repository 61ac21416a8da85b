/* SPDX-License-Identifier: MIT */
/*
 * local.c - shared memory lanes between urnic processes on one host (local.h): the
 * offer and acceptance over an abstract unix seqpacket connection, the lanes' ends;
 * local_ring.c has the records.
 */
#include "transport/local.h"
#include "transport/local_int.h"

#include "stats/counters.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

enum { EV_LISTEN, EV_IN, EV_OUT };

_Static_assert(sizeof(struct urnic_local_rec_hdr) == URNIC_LOCAL_REC_HDR, "record header layout");
_Static_assert(URNIC_LOCAL_REC_HDR <= URNIC_LOCAL_REC_ALIGN, "a wrap record fits any aligned gap");
_Static_assert(URNIC_LOCAL_RING_BYTES % URNIC_LOCAL_REC_ALIGN == 0,
	       "records never straddle the end");
_Static_assert(URNIC_LOCAL_REC_MAX + URNIC_LOCAL_REC_HDR < URNIC_LOCAL_RING_BYTES / 2,
	       "a record and a wrap gap fit");

static uint64_t ev_data(uint32_t kind, uint32_t i)
{
	return (uint64_t)kind << 32 | i;
}

/* "urnic.lane.<address in hex>.<slot>" as an abstract name; returns its length. */
static socklen_t lane_name(struct sockaddr_un *sun, bool ipv6, const uint8_t *ip, uint32_t slot)
{
	char hex[33];
	int n;

	for (int i = 0; i < (ipv6 ? 16 : 4); i++)
		snprintf(hex + 2 * i, 3, "%02x", ip[i]);
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	n = snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1, "urnic.lane.%s.%u", hex, slot);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static int ep_add(struct urnic_local *l, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = { .events = events, .data.u64 = data };

	return epoll_ctl(l->ep_fd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/* The user of the process that listens on an abstract name, or UINT32_MAX. */
static uint32_t holder_uid(const struct sockaddr_un *sun, socklen_t len)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	uint32_t uid = UINT32_MAX;

	if (fd >= 0 && !connect(fd, (const struct sockaddr *)sun, len) &&
	    !getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen))
		uid = (uint32_t)cred.uid;
	if (fd >= 0)
		close(fd);
	return uid;
}

int urnic_local_open(struct urnic_local *l, bool ipv6, const uint8_t *addr, uint32_t slot)
{
	struct sockaddr_un sun;
	socklen_t len = lane_name(&sun, ipv6, addr, slot);
	int ret;

	memset(l, 0, sizeof(*l));
	l->ipv6 = ipv6;
	memcpy(l->addr, addr, ipv6 ? 16 : 4);
	l->uid = (uint32_t)geteuid();
	l->holder_uid = UINT32_MAX;
	for (int i = 0; i < URNIC_LOCAL_IN; i++)
		l->in[i].fd = -1;
	for (int i = 0; i < URNIC_LOCAL_OUT; i++)
		l->out[i].fd = -1;
	l->ep_fd = epoll_create1(EPOLL_CLOEXEC);
	l->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (l->ep_fd < 0 || l->listen_fd < 0)
		goto fail;
	if (bind(l->listen_fd, (struct sockaddr *)&sun, len) || listen(l->listen_fd, 64)) {
		if (errno == EADDRINUSE)
			l->holder_uid = holder_uid(&sun, len);
		errno = EADDRINUSE;
		goto fail;
	}
	ret = ep_add(l, l->listen_fd, EPOLLIN, ev_data(EV_LISTEN, 0));
	if (ret) {
		errno = -ret;
		goto fail;
	}
	l->on = true;
	l->direct = true;
	return 0;
fail:
	ret = -errno;
	if (l->listen_fd >= 0)
		close(l->listen_fd);
	if (l->ep_fd >= 0)
		close(l->ep_fd);
	l->listen_fd = l->ep_fd = -1;
	return ret;
}

/* Unmaps a lane once the engine thread cannot be arming it (urnic_local_arm runs
 * without the device lock): each side publishes, fences and looks at the other's word. */
void urnic_local_in_free(struct urnic_local *l, struct urnic_local_in *e)
{
	if (e->fd >= 0)
		close(e->fd); /* leaves the epoll set with it */
	if (e->lane) {
		atomic_store(&e->armable, NULL);
		while (atomic_load(&l->arming))
			sched_yield();
		munmap(e->lane, URNIC_LOCAL_LANE_BYTES);
	}
	e->fd = -1;
	e->lane = NULL;
	e->gone = false;
}

static void out_free(struct urnic_local_out *e, uint64_t retry_ns)
{
	if (e->fd >= 0)
		close(e->fd);
	if (e->lane)
		munmap(e->lane, URNIC_LOCAL_LANE_BYTES);
	e->fd = -1;
	e->lane = NULL;
	e->state = URNIC_LOCAL_OUT_REFUSED;
	e->retry_ns = retry_ns;
}

void urnic_local_close(struct urnic_local *l)
{
	if (!l->on)
		return;
	for (int i = 0; i < URNIC_LOCAL_IN; i++)
		urnic_local_in_free(l, &l->in[i]);
	for (int i = 0; i < URNIC_LOCAL_OUT; i++)
		out_free(&l->out[i], 0);
	close(l->listen_fd);
	close(l->ep_fd);
	l->on = false;
}

/* ---- the sending side ---- */

/* A new lane in a sealed memfd: the receiver maps exactly URNIC_LOCAL_LANE_BYTES and
 * relies on the file never shrinking under it. Returns the memfd or -1. */
static int lane_create(const struct urnic_local *l, struct urnic_local_lane **lane)
{
	int mfd = memfd_create("urnic-lane", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	void *map;

	if (mfd < 0)
		return -1;
	if (ftruncate(mfd, (off_t)URNIC_LOCAL_LANE_BYTES) ||
	    fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		goto fail;
	map = mmap(NULL, URNIC_LOCAL_LANE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	if (map == MAP_FAILED)
		goto fail;
	*lane = map;
	(*lane)->magic = URNIC_LOCAL_MAGIC;
	(*lane)->version = URNIC_LOCAL_VERSION;
	(*lane)->ring_bytes = URNIC_LOCAL_RING_BYTES;
	memcpy((*lane)->src, l->addr, sizeof(l->addr));
	atomic_store(&(*lane)->state, URNIC_LOCAL_LANE_OFFERED);
	return mfd;
fail:
	close(mfd);
	return -1;
}

/* Passes mfd over fd with one byte (SCM_RIGHTS). */
static int pass_fd(int fd, int mfd)
{
	char byte = 'L';
	struct iovec iov = { &byte, 1 };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctrl;
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctrl.buf,
			    .msg_controllen = sizeof(ctrl.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &mfd, sizeof(int));
	return sendmsg(fd, &m, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

/* Offers a lane to the listener of (ip, slot), if it is a process of our user. */
static void offer(struct urnic_local *l, struct urnic_local_out *e, uint32_t idx, uint64_t now_ns)
{
	struct sockaddr_un sun;
	socklen_t len = lane_name(&sun, l->ipv6, e->ip, e->slot);
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	int mfd;

	e->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (e->fd < 0 || connect(e->fd, (struct sockaddr *)&sun, len) ||
	    getsockopt(e->fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) || cred.uid != l->uid)
		goto refused;
	e->pid = (uint32_t)cred.pid;
	mfd = lane_create(l, &e->lane);
	if (mfd < 0)
		goto refused;
	if (pass_fd(e->fd, mfd) || ep_add(l, e->fd, EPOLLRDHUP, ev_data(EV_OUT, idx))) {
		close(mfd);
		goto refused;
	}
	close(mfd);
	e->head = 0;
	e->state = URNIC_LOCAL_OUT_OFFERED;
	return;
refused:
	out_free(e, now_ns + URNIC_LOCAL_RETRY_NS);
}

/* now_ns, or the monotonic clock's time when it is 0: a send reads the clock only when
 * it offers a lane or asks a refused peer again, not for every record. */
static uint64_t time_of(uint64_t now_ns)
{
	struct timespec ts;

	if (now_ns)
		return now_ns;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The lane entry for (ip, slot), or NULL. */
static struct urnic_local_out *out_lookup(struct urnic_local *l, const uint8_t *ip, uint32_t slot)
{
	size_t alen = l->ipv6 ? 16 : 4;

	for (uint32_t i = 0; i < URNIC_LOCAL_OUT; i++) {
		struct urnic_local_out *e = &l->out[(l->last_out + i) % URNIC_LOCAL_OUT];

		if (e->state != URNIC_LOCAL_OUT_FREE && e->slot == slot && !memcmp(e->ip, ip, alen))
			return e;
	}
	return NULL;
}

/* The lane entry for (ip, slot): found, or a new one offered; NULL when none is free. */
static struct urnic_local_out *out_find(struct urnic_local *l, const uint8_t *ip, uint32_t slot,
					uint64_t now_ns)
{
	size_t alen = l->ipv6 ? 16 : 4;
	struct urnic_local_out *e = out_lookup(l, ip, slot), *free_e = NULL;

	if (e) {
		l->last_out = (uint32_t)(e - l->out);
		return e;
	}
	for (uint32_t i = 0; !free_e && i < URNIC_LOCAL_OUT; i++)
		if (l->out[i].state == URNIC_LOCAL_OUT_FREE)
			free_e = &l->out[i];
	/* Full: a peer refused long enough ago makes room (remote peers, which never take a
	 * lane, would otherwise keep every entry for good). */
	now_ns = time_of(now_ns);
	for (uint32_t i = 0; !free_e && i < URNIC_LOCAL_OUT; i++)
		if (l->out[i].state == URNIC_LOCAL_OUT_REFUSED && now_ns >= l->out[i].retry_ns)
			free_e = &l->out[i];
	if (!free_e)
		return NULL;
	memset(free_e->ip, 0, sizeof(free_e->ip));
	memcpy(free_e->ip, ip, alen);
	free_e->slot = slot;
	l->last_out = (uint32_t)(free_e - l->out);
	offer(l, free_e, l->last_out, now_ns);
	return NULL; /* this packet goes by UDP: the receiver has not mapped it yet */
}

int urnic_local_send(struct urnic_local *l, const uint8_t *dst_ip, uint32_t slot,
		     const struct urnic_local_env *env, const uint8_t *pkt, uint32_t len,
		     uint64_t now_ns, uint64_t *counters)
{
	struct urnic_local_out *e = out_find(l, dst_ip, slot, now_ns);

	if (!e)
		return 0;
	if (e->state == URNIC_LOCAL_OUT_REFUSED) {
		now_ns = time_of(now_ns);
		if (now_ns < e->retry_ns)
			return 0;
		e->state = URNIC_LOCAL_OUT_FREE;
		offer(l, e, (uint32_t)(e - l->out), now_ns);
		return 0;
	}
	if (atomic_load_explicit(&e->lane->state, memory_order_acquire) != URNIC_LOCAL_LANE_TAKEN ||
	    len > URNIC_LOCAL_REC_MAX)
		return 0;
	urnic_local_put(e, env, pkt, len, counters);
	return 1;
}

/* Whether direct placement is on and the lane to (dst_ip, slot) is taken by process pid
 * (0: by any) and takes notes: the packet that tells of a direct write or read must
 * reach that very process, and only a lane carries that word. */
static bool direct_lane(struct urnic_local *l, const uint8_t *dst_ip, uint32_t slot, uint32_t pid)
{
	struct urnic_local_out *e;

	if (!l->on || !l->direct)
		return false;
	e = out_lookup(l, dst_ip, slot);
	return e && e->state == URNIC_LOCAL_OUT_OFFERED && (!pid || e->pid == pid) &&
	       atomic_load_explicit(&e->lane->state, memory_order_acquire) ==
		       URNIC_LOCAL_LANE_TAKEN &&
	       atomic_load_explicit(&e->lane->accepts, memory_order_relaxed);
}

bool urnic_local_direct_ready(struct urnic_local *l, const uint8_t *dst_ip, uint32_t slot)
{
	return direct_lane(l, dst_ip, slot, 0);
}

/* segs as an iovec; -EINVAL unless they add up to len. */
static int to_iov(const struct urnic_direct_seg *seg, uint32_t n, uint64_t len, struct iovec *iov)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < n; i++) {
		iov[i] = (struct iovec){ (void *)(uintptr_t)seg[i].addr, seg[i].len };
		sum += seg[i].len;
		if (sum < seg[i].len)
			return -EINVAL;
	}
	return sum == len ? 0 : -EINVAL;
}

/* What a process_vm_* call that moved n of len bytes means; a kernel that refuses
 * (a seccomp filter, a hardened ptrace policy) is not asked again. */
static int direct_done(struct urnic_local *l, ssize_t n, uint64_t len, uint64_t *counters)
{
	if (n == (ssize_t)len)
		return 0;
	counters[URNIC_CTR_direct_failed]++;
	if (n >= 0)
		return -EFAULT;
	if (errno == EPERM || errno == ENOSYS) {
		int err = errno;

		l->direct = false;
		for (int i = 0; i < URNIC_LOCAL_IN; i++)
			if (l->in[i].lane)
				atomic_store(&l->in[i].lane->accepts, 0);
		return -err;
	}
	return -errno;
}

int urnic_local_direct_write(struct urnic_local *l, const uint8_t *dst_ip, uint32_t slot,
			     const struct urnic_direct_note *d, const uint8_t *src, uint64_t len,
			     uint64_t *counters)
{
	struct iovec local = { (void *)src, len }, remote[URNIC_DIRECT_MAX_SEGS];

	if (!d->nseg || d->nseg > URNIC_DIRECT_MAX_SEGS || !direct_lane(l, dst_ip, slot, d->pid))
		return -ENOENT;
	if (to_iov(d->seg, d->nseg, len, remote))
		return -EINVAL;
	return direct_done(l, process_vm_writev((pid_t)d->pid, &local, 1, remote, d->nseg, 0), len,
			   counters);
}

int urnic_local_direct_read(struct urnic_local *l, const uint8_t *dst_ip, uint32_t slot,
			    const struct urnic_direct_note *d, const struct urnic_direct_seg *to,
			    uint32_t nto, bool by_lane, uint64_t *counters)
{
	struct iovec local[URNIC_DIRECT_MAX_SEGS], remote[URNIC_DIRECT_MAX_SEGS];
	uint64_t len = 0;

	if (!l->on || !l->direct || !d->pid || !d->nseg || d->nseg > URNIC_DIRECT_MAX_SEGS ||
	    !nto || nto > URNIC_DIRECT_MAX_SEGS ||
	    (by_lane && !direct_lane(l, dst_ip, slot, d->pid)))
		return -ENOENT;
	for (uint32_t i = 0; i < nto; i++)
		len += to[i].len;
	if (to_iov(d->seg, d->nseg, len, remote) || to_iov(to, nto, len, local))
		return -EINVAL;
	return direct_done(l, process_vm_readv((pid_t)d->pid, local, nto, remote, d->nseg, 0), len,
			   counters);
}

/* ---- the receiving side ---- */

/* Maps the lane a sender passed on e->fd and tells it so; false when it is not one
 * (then the connection is closed). */
static bool take_lane(struct urnic_local *l, struct urnic_local_in *e)
{
	char byte;
	struct iovec iov = { &byte, 1 };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(4 * sizeof(int))];
	} ctrl;
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctrl.buf,
			    .msg_controllen = sizeof(ctrl.buf) };
	int mfd = -1, nfds = 0, seals;
	struct stat st;
	void *map;
	ssize_t got = recvmsg(e->fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	/* Not here yet: wait for it. 0: the sender hung up without an offer. */
	if (got != 1)
		return got < 0 && errno == EAGAIN;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t k = 0; k < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); k++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + k * sizeof(int), sizeof(int));
			if (nfds++ == 0)
				mfd = fd;
			else
				close(fd);
		}
	}
	/* An offer is one lane: anything else is not our sender's. */
	if (nfds != 1 || (m.msg_flags & MSG_CTRUNC) || fstat(mfd, &st) ||
	    (size_t)st.st_size != URNIC_LOCAL_LANE_BYTES || (seals = fcntl(mfd, F_GET_SEALS)) < 0 ||
	    !(seals & F_SEAL_SHRINK))
		goto bad;
	map = mmap(NULL, URNIC_LOCAL_LANE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	if (map == MAP_FAILED)
		goto bad;
	close(mfd);
	e->lane = map;
	if (e->lane->magic != URNIC_LOCAL_MAGIC || e->lane->version != URNIC_LOCAL_VERSION ||
	    e->lane->ring_bytes != URNIC_LOCAL_RING_BYTES)
		return false;
	memcpy(e->src, e->lane->src, sizeof(e->src));
	e->tail = atomic_load(&e->lane->tail);
	if (e->tail % URNIC_LOCAL_REC_ALIGN)
		return false;
	/* Asleep until the engine thread arms it: the first record rings. */
	atomic_store(&e->lane->waiting, 1);
	atomic_store(&e->lane->accepts, l->direct);
	atomic_store(&e->armable, e->lane);
	atomic_store_explicit(&e->lane->state, URNIC_LOCAL_LANE_TAKEN, memory_order_release);
	return true;
bad:
	if (mfd >= 0)
		close(mfd);
	return false;
}

static void accept_all(struct urnic_local *l, uint64_t *counters)
{
	for (;;) {
		int fd = accept4(l->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct ucred cred;
		socklen_t clen = sizeof(cred);
		int i;

		if (fd < 0)
			return;
		for (i = 0; i < URNIC_LOCAL_IN && (l->in[i].fd >= 0 || l->in[i].lane); i++)
			;
		/* Another user's process may connect to an abstract name: refused. */
		if (i == URNIC_LOCAL_IN || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) ||
		    cred.uid != l->uid ||
		    ep_add(l, fd, EPOLLIN | EPOLLRDHUP, ev_data(EV_IN, (uint32_t)i))) {
			counters[URNIC_CTR_local_refused]++;
			close(fd);
			continue;
		}
		l->in[i].fd = fd;
		l->in[i].lane = NULL;
		l->in[i].pid = (uint32_t)cred.pid;
	}
}

/* A lane's connection is readable: its offer, wake-up bytes, or its end. */
static bool in_event(struct urnic_local *l, struct urnic_local_in *e, uint32_t events,
		     uint64_t now_ns, uint64_t *counters)
{
	char buf[64];
	ssize_t n;
	bool took = false;

	if (e->fd < 0)
		return false;
	if (!e->lane) {
		if (!take_lane(l, e)) {
			counters[URNIC_CTR_local_refused]++;
			urnic_local_in_free(l, e);
			return true;
		}
		if (!e->lane)
			return false; /* the offer is not here yet: draining would lose its memfd */
		e->taken_ns = now_ns;
		took = true;
	}
	while ((n = recv(e->fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		;
	if (n == 0 || (events & (EPOLLHUP | EPOLLRDHUP | EPOLLERR))) {
		/* The sender left: what it wrote is still taken (urnic_local_recv frees
		 * the lane once it is empty). */
		close(e->fd);
		e->fd = -1;
		e->gone = true;
		return true;
	}
	return took;
}

bool urnic_local_service(struct urnic_local *l, uint64_t now_ns, uint64_t *counters)
{
	struct epoll_event ev[32];
	bool changed = false;
	int n;

	if (!l->on)
		return false;
	n = epoll_wait(l->ep_fd, ev, 32, 0);
	for (int i = 0; i < n; i++) {
		uint32_t kind = (uint32_t)(ev[i].data.u64 >> 32), idx = (uint32_t)ev[i].data.u64;

		if (kind == EV_LISTEN) {
			accept_all(l, counters);
			changed = true;
		} else if (kind == EV_IN && idx < URNIC_LOCAL_IN) {
			changed |= in_event(l, &l->in[idx], ev[i].events, now_ns, counters);
		} else if (kind == EV_OUT && idx < URNIC_LOCAL_OUT) {
			/* The receiver left (its device closed, or it died). */
			out_free(&l->out[idx], now_ns + URNIC_LOCAL_RETRY_NS);
			changed = true;
		}
	}
	return changed;
}
