/* SPDX-License-Identifier: MIT */
/*
 * tcp.c - the TCP socket calls of an iWARP device's connections (tcp.h): setup, one
 * batched write, one read, the FIN. What to write, and what the bytes read mean, are the
 * engine's (engine/iwarp/iw_qp.h); when to call, the device's (dev/iw_conn.c).
 */
#include "transport/tcp.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

int urnic_tcp_setup(int fd, const struct urnic_tcp_opts *o, uint32_t *mss)
{
	int one = 1, fl = fcntl(fd, F_GETFL), fdfl = fcntl(fd, F_GETFD), seg = 0;
	socklen_t len = sizeof(seg);

	if (fl < 0 || fdfl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
	    fcntl(fd, F_SETFD, fdfl | FD_CLOEXEC) < 0)
		return -errno;
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		return -errno;
	if (o && o->sndbuf_bytes > 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &o->sndbuf_bytes, sizeof(int)) < 0)
		return -errno;
	if (o && o->rcvbuf_bytes > 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &o->rcvbuf_bytes, sizeof(int)) < 0)
		return -errno;
	if (getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &seg, &len) < 0)
		return -errno; /* also ENOTSOCK, EOPNOTSUPP: not a TCP socket */
	if (seg <= 0)
		return -ENOTCONN;
	*mss = (uint32_t)seg;
	return 0;
}

ssize_t urnic_tcp_write(int fd, const struct iovec *iov, unsigned n)
{
	struct msghdr m = { .msg_iov = (struct iovec *)iov, .msg_iovlen = n };
	ssize_t r;

	if (n > IOV_MAX)
		m.msg_iovlen = IOV_MAX; /* the rest goes in the next call */
	do
		r = sendmsg(fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return r;
}

ssize_t urnic_tcp_read(int fd, uint8_t *buf, size_t cap)
{
	ssize_t r;

	do
		r = recv(fd, buf, cap, MSG_DONTWAIT);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return r;
}

int urnic_tcp_shutdown(int fd)
{
	return shutdown(fd, SHUT_WR) < 0 ? -errno : 0;
}
