/* SPDX-License-Identifier: MIT */
/*
 * rsocket_io.c - rsend/rrecv and their read, write, vector, msg and to/from forms
 * (rsocket(7)). A stream send copies into the send buffer and RDMA-writes it with
 * immediate into the peer's granted buffer, in transfers that grow from 2 KiB to 64 KiB
 * as rdma-core's do; a receive copies out of the receive buffer in arrival order and
 * frees its space, which credit updates hand back to the peer (rsocket_data.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "cm/rsocket.h"

#define EXPORT __attribute__((visibility("default")))

bool urnic_rs_nonblocking(const struct urnic_rs *rs, int flags)
{
	return (rs->fd_flags & O_NONBLOCK) || (flags & MSG_DONTWAIT);
}

/* A stream not yet connected: a non-blocking call drives its rconnect, EAGAIN while
 * that is under way. Called with rs->lock held. */
int urnic_rs_ready(struct urnic_rs *rs, int flags)
{
	if (rs->state & URNIC_RS_OPENING) {
		if (urnic_rs_do_connect(rs, !urnic_rs_nonblocking(rs, flags)) &&
		    errno == EINPROGRESS)
			errno = EAGAIN;
		return (rs->state & URNIC_RS_CONNECTED) ? 0 : -1;
	}
	/* Never connected (unbound, bound, listening, a failed connect): no QP to use. */
	if (!rs->cq)
		return urnic_rs_err(ENOTCONN);
	return 0;
}

static void copy_iov(uint8_t *dst, const struct iovec **iov, size_t *off, size_t len)
{
	while (len) {
		size_t n = (*iov)->iov_len - *off;

		if (n > len)
			n = len;
		memcpy(dst, (uint8_t *)(*iov)->iov_base + *off, n);
		dst += n;
		len -= n;
		*off += n;
		if (*off == (*iov)->iov_len) {
			(*iov)++;
			*off = 0;
		}
	}
}

static uint32_t sbuf_left(const struct urnic_rs *rs)
{
	return (uint32_t)((uintptr_t)(rs->sbuf + rs->sbuf_size) - rs->ssgl[0].addr);
}

/* LEN bytes of the vector copied into the send buffer at rs->ssgl, wrapping at its end:
 * how many of rs->ssgl hold them. */
int urnic_rs_stage(struct urnic_rs *rs, const struct iovec **iov, size_t *off, uint32_t len)
{
	if (len <= sbuf_left(rs)) {
		copy_iov((uint8_t *)(uintptr_t)rs->ssgl[0].addr, iov, off, len);
		rs->ssgl[0].length = len;
		return 1;
	}
	rs->ssgl[0].length = sbuf_left(rs);
	copy_iov((uint8_t *)(uintptr_t)rs->ssgl[0].addr, iov, off, rs->ssgl[0].length);
	rs->ssgl[1].length = len - rs->ssgl[0].length;
	copy_iov(rs->sbuf, iov, off, rs->ssgl[1].length);
	return 2;
}

/* The send buffer's next free byte once a staged write of LEN bytes is posted. */
void urnic_rs_staged(struct urnic_rs *rs, int nsge, uint32_t len)
{
	if (nsge == 2)
		rs->ssgl[0].addr = (uintptr_t)rs->sbuf + rs->ssgl[1].length;
	else if (len < sbuf_left(rs))
		rs->ssgl[0].addr += len;
	else
		rs->ssgl[0].addr = (uintptr_t)rs->sbuf;
}

/* One transfer of LEN bytes from the vector into the peer's current target. */
static int write_data(struct urnic_rs *rs, const struct iovec **iov, size_t *off, uint32_t len)
{
	volatile struct urnic_rs_sge *t = &rs->target_sgl[rs->target_sge];
	int flags = len <= rs->sq_inline ? IBV_SEND_INLINE : 0;
	int nsge = urnic_rs_stage(rs, iov, off, len);
	uint64_t addr = t->addr;
	uint32_t rkey = t->key;

	rs->sseq_no++;
	rs->sqe_avail -= urnic_rs_msg_wrs(rs);
	rs->sbuf_bytes_avail -= len;
	t->addr = addr + len;
	t->length = t->length - len;
	if (!t->length && ++rs->target_sge == URNIC_RS_SGL_SIZE)
		rs->target_sge = 0;
	if (urnic_rs_post_write(rs, rs->ssgl, nsge, urnic_rs_msg(URNIC_RS_OP_DATA, len), flags,
				addr, rkey, true))
		return -1;
	urnic_rs_staged(rs, nsge, len);
	return 0;
}

/* Room to send one more transfer, as far as FLAGS let the call wait: 0, or -1 with
 * EWOULDBLOCK, or ECONNRESET once the stream can no longer send. */
int urnic_rs_wait_send(struct urnic_rs *rs, int flags)
{
	if (urnic_rs_can_send(rs))
		return 0;
	if (urnic_rs_process(rs, urnic_rs_nonblocking(rs, flags), urnic_rs_conn_can_send))
		return -1;
	if (!(rs->state & URNIC_RS_WRITABLE))
		return urnic_rs_err(ECONNRESET);
	return 0;
}

static ssize_t stream_sendv(struct urnic_rs *rs, const struct iovec *iov, int iovcnt, int flags)
{
	size_t len = 0, left, off = 0;
	uint32_t olen = URNIC_RS_OLAP_START, xfer;
	int rc = 0;

	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	if (urnic_rs_ready(rs, flags))
		return -1;
	if (rs->iomap_pending && urnic_rs_send_iomaps(rs, flags))
		return -1;
	/* Our own shutdown: EPIPE, as send(2); the peer's: ECONNRESET, as rsocket.c. */
	if (!(rs->state & URNIC_RS_WRITABLE))
		return urnic_rs_err((rs->state & URNIC_RS_ERROR)       ? rs->err
				    : (rs->state & URNIC_RS_CONNECTED) ? EPIPE
								       : ECONNRESET);
	for (left = len; left; left -= xfer) {
		rc = urnic_rs_wait_send(rs, flags);
		if (rc)
			break;
		xfer = urnic_rs_next_xfer(rs, &olen, left);
		if (xfer > rs->target_sgl[rs->target_sge].length)
			xfer = rs->target_sgl[rs->target_sge].length;
		rc = write_data(rs, &iov, &off, xfer);
		if (rc)
			break;
	}
	return (rc && left == len) ? rc : (ssize_t)(len - left);
}

/* Copies up to LEN bytes of the messages waiting; consumes them unless PEEK. */
static size_t copy_out(struct urnic_rs *rs, uint8_t *buf, size_t len, bool peek)
{
	int head = rs->rmsg_head, offset = rs->rbuf_offset;
	size_t left = len;

	while (left && head != rs->rmsg_tail) {
		uint32_t n = rs->rmsg[head].data, end;

		if (left < n) {
			n = (uint32_t)left;
			if (!peek)
				rs->rmsg[head].data -= n;
		} else {
			if (!peek)
				rs->rseq_no++;
			if (++head == rs->rq_size + 1)
				head = 0;
		}
		left -= n;
		end = rs->rbuf_size - offset;
		if (n > end) {
			memcpy(buf, rs->rbuf + offset, end);
			buf += end;
			n -= end;
			offset = 0;
			if (!peek)
				rs->rbuf_bytes_avail += end;
		}
		memcpy(buf, rs->rbuf + offset, n);
		buf += n;
		offset += n;
		if (!peek)
			rs->rbuf_bytes_avail += n;
	}
	if (!peek) {
		rs->rmsg_head = head;
		rs->rbuf_offset = offset;
	}
	return len - left;
}

/* Data already received is read even after the peer has closed; 0 at its end. */
static ssize_t stream_recv(struct urnic_rs *rs, void *buf, size_t len, int flags)
{
	size_t got = 0;
	int rc = 0;

	if (urnic_rs_ready(rs, flags))
		return -1;
	do {
		if (!urnic_rs_have_rdata(rs)) {
			rc = urnic_rs_process(rs,
					      urnic_rs_nonblocking(rs, flags) ||
						      (got && !(flags & MSG_WAITALL)),
					      urnic_rs_conn_have_rdata);
			if (rc)
				break;
			if (!urnic_rs_have_rdata(rs)) {
				if (rs->state & URNIC_RS_ERROR)
					rc = urnic_rs_err(rs->err ? rs->err : ECONNRESET);
				break;
			}
		}
		if (flags & MSG_PEEK)
			return (ssize_t)copy_out(rs, buf, len, true);
		got += copy_out(rs, (uint8_t *)buf + got, len - got, false);
	} while (got < len && (flags & MSG_WAITALL) && (rs->state & URNIC_RS_READABLE));
	if (rc && !got)
		return rc;
	urnic_rs_process(rs, true, urnic_rs_conn_have_rdata); /* credits for what was read */
	return (ssize_t)got;
}

EXPORT ssize_t rrecv(int socket, void *buf, size_t len, int flags)
{
	struct urnic_rs *rs = urnic_rs_get(socket);
	ssize_t n;
	int e;

	if (!rs)
		return urnic_rs_err(EBADF);
	if (rs->type == SOCK_DGRAM)
		return urnic_rs_dg_recvfrom(rs, buf, len, flags, NULL, NULL);
	pthread_mutex_lock(&rs->lock);
	n = stream_recv(rs, buf, len, flags);
	e = errno;
	pthread_mutex_unlock(&rs->lock);
	errno = e;
	return n;
}

EXPORT ssize_t rrecvfrom(int socket, void *buf, size_t len, int flags, struct sockaddr *src_addr,
			 socklen_t *addrlen)
{
	struct urnic_rs *rs = urnic_rs_get(socket);
	ssize_t n;

	if (!rs)
		return urnic_rs_err(EBADF);
	if (rs->type == SOCK_DGRAM)
		return urnic_rs_dg_recvfrom(rs, buf, len, flags, src_addr, addrlen);
	n = rrecv(socket, buf, len, flags);
	if (n > 0 && src_addr && addrlen)
		rgetpeername(socket, src_addr, addrlen);
	return n;
}

/* The vector filled in order: waits for the first byte only, as a socket's readv. */
static ssize_t recvv(int socket, const struct iovec *iov, int iovcnt, int flags)
{
	ssize_t total = 0;

	for (int i = 0; i < iovcnt; i++) {
		ssize_t n;

		if (!iov[i].iov_len)
			continue;
		n = rrecv(socket, iov[i].iov_base, iov[i].iov_len,
			  total ? flags | MSG_DONTWAIT : flags);
		if (n < 0)
			return total ? total : n;
		total += n;
		if ((size_t)n < iov[i].iov_len)
			break;
	}
	return total;
}

EXPORT ssize_t rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	struct urnic_rs *rs = urnic_rs_get(socket);

	if (!rs)
		return urnic_rs_err(EBADF);
	if (msg->msg_control && msg->msg_controllen)
		return urnic_rs_err(ENOTSUP);
	if (rs->type == SOCK_DGRAM)
		return urnic_rs_dg_recvfrom(rs, msg->msg_iov[0].iov_base, msg->msg_iov[0].iov_len,
					    flags, msg->msg_name, &msg->msg_namelen);
	return recvv(socket, msg->msg_iov, (int)msg->msg_iovlen, flags);
}

EXPORT ssize_t rread(int socket, void *buf, size_t count)
{
	return rrecv(socket, buf, count, 0);
}

EXPORT ssize_t rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	return recvv(socket, iov, iovcnt, 0);
}

static ssize_t sendv(int socket, const struct iovec *iov, int iovcnt, int flags,
		     const struct sockaddr *to, socklen_t tolen)
{
	struct urnic_rs *rs = urnic_rs_get(socket);
	ssize_t n;
	int e;

	if (!rs)
		return urnic_rs_err(EBADF);
	if (rs->type == SOCK_DGRAM)
		return urnic_rs_dg_sendto(rs, iov, iovcnt, flags, to, tolen);
	if (to)
		return urnic_rs_err(EISCONN);
	pthread_mutex_lock(&rs->lock);
	n = stream_sendv(rs, iov, iovcnt, flags);
	e = errno;
	pthread_mutex_unlock(&rs->lock);
	errno = e;
	return n;
}

EXPORT ssize_t rsend(int socket, const void *buf, size_t len, int flags)
{
	struct iovec v = { (void *)buf, len };

	return sendv(socket, &v, 1, flags, NULL, 0);
}

EXPORT ssize_t rsendto(int socket, const void *buf, size_t len, int flags,
		       const struct sockaddr *dest_addr, socklen_t addrlen)
{
	struct iovec v = { (void *)buf, len };
	struct urnic_rs *rs = urnic_rs_get(socket);

	/* A stream ignores the address, as rdma-core's does. */
	if (rs && rs->type == SOCK_STREAM)
		dest_addr = NULL;
	return sendv(socket, &v, 1, flags, dest_addr, addrlen);
}

EXPORT ssize_t rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	struct urnic_rs *rs = urnic_rs_get(socket);

	if (msg->msg_control && msg->msg_controllen)
		return urnic_rs_err(ENOTSUP);
	return sendv(socket, msg->msg_iov, (int)msg->msg_iovlen, flags,
		     rs && rs->type == SOCK_DGRAM ? msg->msg_name : NULL, msg->msg_namelen);
}

EXPORT ssize_t rwrite(int socket, const void *buf, size_t count)
{
	return rsend(socket, buf, count, 0);
}

EXPORT ssize_t rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	return sendv(socket, iov, iovcnt, 0, NULL, 0);
}
