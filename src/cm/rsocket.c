/* SPDX-License-Identifier: MIT */
/*
 * rsocket.c - rsockets' socket table and lifetime: rsocket, rbind, rlisten, raccept,
 * rconnect, rshutdown, rclose, the names and rfcntl (rsocket(7)). An rsocket's number is
 * an fd of its own (its event channel's, or its UDP socket's) so that rpoll tells it from
 * the application's fds. Connection setup: rsocket_conn.c; data: rsocket_data.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cm/rsocket.h"

#define EXPORT __attribute__((visibility("default")))

__thread int urnic_rs_inside;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct urnic_rs **table;
static int table_size;

int urnic_rs_err(int e)
{
	errno = e;
	return -1;
}

struct urnic_rs *urnic_rs_get(int index)
{
	struct urnic_rs *rs = NULL;

	pthread_mutex_lock(&table_lock);
	if (index >= 0 && index < table_size)
		rs = table[index];
	pthread_mutex_unlock(&table_lock);
	return rs;
}

int urnic_rs_insert(struct urnic_rs *rs, int index)
{
	pthread_mutex_lock(&table_lock);
	if (index >= table_size) {
		int n = index + 64;
		struct urnic_rs **t = realloc(table, n * sizeof(*t));

		if (!t) {
			pthread_mutex_unlock(&table_lock);
			return urnic_rs_err(ENOMEM);
		}
		memset(t + table_size, 0, (n - table_size) * sizeof(*t));
		table = t;
		table_size = n;
	}
	table[index] = rs;
	rs->index = index;
	pthread_mutex_unlock(&table_lock);
	return index;
}

void urnic_rs_remove(struct urnic_rs *rs)
{
	pthread_mutex_lock(&table_lock);
	if (rs->index >= 0 && rs->index < table_size && table[rs->index] == rs)
		table[rs->index] = NULL;
	pthread_mutex_unlock(&table_lock);
}

/* A new rsocket with the defaults of rsocket(7), or those of the listener it comes from. */
struct urnic_rs *urnic_rs_alloc(const struct urnic_rs *from, int type)
{
	struct urnic_rs *rs = calloc(1, sizeof(*rs));

	if (!rs)
		return NULL;
	rs->type = type;
	rs->index = -1;
	pthread_mutex_init(&rs->lock, NULL);
	if (from) {
		rs->sbuf_size = from->sbuf_size;
		rs->rbuf_size = from->rbuf_size;
		rs->sq_inline = from->sq_inline;
		rs->sq_size = from->sq_size;
		rs->rq_size = from->rq_size;
		rs->target_iomap_size = from->target_iomap_size;
		rs->ctrl_max_seqno = from->ctrl_max_seqno;
		rs->fd_flags = from->fd_flags & ~O_NONBLOCK;
	} else {
		rs->sbuf_size = URNIC_RS_DEF_MEM;
		rs->rbuf_size = URNIC_RS_DEF_MEM;
		rs->sq_inline = URNIC_RS_DEF_INLINE;
		rs->sq_size = URNIC_RS_DEF_QSIZE;
		rs->rq_size = URNIC_RS_DEF_QSIZE;
		rs->ctrl_max_seqno = URNIC_RS_QP_CTRL;
	}
	return rs;
}

void urnic_rs_free(struct urnic_rs *rs)
{
	if (rs->index >= 0)
		urnic_rs_remove(rs);
	if (rs->type == SOCK_DGRAM) {
		urnic_rs_dg_free(rs);
	} else {
		urnic_rs_free_iomaps(rs);
		urnic_rs_free_ep(rs);
		if (rs->cm_id)
			rdma_destroy_id(rs->cm_id);
		if (rs->ch)
			rdma_destroy_event_channel(rs->ch);
	}
	free(rs->route);
	pthread_mutex_destroy(&rs->lock);
	free(rs);
}

/* A stream rsocket's event channel is always non-blocking: every wait is a poll(2) of
 * ours, so that O_NONBLOCK is the rsocket's flag alone. */
static int stream_init(struct urnic_rs *rs, int domain)
{
	rs->ch = rdma_create_event_channel();
	if (!rs->ch)
		return -1;
	if (fcntl(rs->ch->fd, F_SETFL, fcntl(rs->ch->fd, F_GETFL) | O_NONBLOCK))
		return -1;
	if (rdma_create_id(rs->ch, &rs->cm_id, rs, RDMA_PS_TCP))
		return -1;
	rs->cm_id->route.addr.src_addr.sa_family = domain;
	return urnic_rs_insert(rs, rs->ch->fd) < 0 ? -1 : 0;
}

EXPORT int rsocket(int domain, int type, int protocol)
{
	int nonblock = type & SOCK_NONBLOCK;
	struct urnic_rs *rs;
	int rc;

	/* socket(2)'s type flags, which the preload library passes on (nc's sockets are
	 * SOCK_NONBLOCK); close-on-exec means nothing to an rsocket. */
	type &= ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (urnic_rs_inside)
		return urnic_rs_err(ENOTSUP);
	if ((domain != AF_INET && domain != AF_INET6) ||
	    (type != SOCK_STREAM && type != SOCK_DGRAM) ||
	    (type == SOCK_STREAM && protocol && protocol != IPPROTO_TCP) ||
	    (type == SOCK_DGRAM && protocol && protocol != IPPROTO_UDP))
		return urnic_rs_err(ENOTSUP);
	rs = urnic_rs_alloc(NULL, type);
	if (!rs)
		return urnic_rs_err(ENOMEM);
	rc = type == SOCK_STREAM ? stream_init(rs, domain) : urnic_rs_dg_init(rs, domain);
	if (rc) {
		int e = errno;

		urnic_rs_free(rs);
		return urnic_rs_err(e);
	}
	if (nonblock)
		rfcntl(rs->index, F_SETFL, O_NONBLOCK);
	return rs->index;
}

EXPORT int rbind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	struct urnic_rs *rs = urnic_rs_get(socket);
	int rc;

	if (!rs)
		return urnic_rs_err(EBADF);
	urnic_rs_inside++;
	if (rs->type == SOCK_DGRAM)
		rc = urnic_rs_dg_bind(rs, addr, addrlen);
	else
		rc = rdma_bind_addr(rs->cm_id, (struct sockaddr *)addr);
	urnic_rs_inside--;
	if (rs->type == SOCK_DGRAM)
		return rc;
	if (!rc)
		rs->state = URNIC_RS_BOUND;
	return rc;
}

EXPORT int rlisten(int socket, int backlog)
{
	struct urnic_rs *rs = urnic_rs_get(socket);
	int rc;

	if (!rs)
		return urnic_rs_err(EBADF);
	if (rs->type != SOCK_STREAM)
		return urnic_rs_err(EOPNOTSUPP);
	if (rs->state == URNIC_RS_LISTENING)
		return 0;
	urnic_rs_inside++;
	rc = rdma_listen(rs->cm_id, backlog);
	urnic_rs_inside--;
	if (rc)
		return -1;
	rs->state = URNIC_RS_LISTENING;
	return 0;
}

EXPORT int raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	struct urnic_rs *rs = urnic_rs_get(socket);
	int index;

	if (!rs)
		return urnic_rs_err(EBADF);
	if (rs->state != URNIC_RS_LISTENING)
		return urnic_rs_err(EBADF);
	index = urnic_rs_accept_one(rs, !(rs->fd_flags & O_NONBLOCK));
	if (index >= 0 && addr && addrlen)
		rgetpeername(index, addr, addrlen);
	return index;
}

EXPORT int rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	struct urnic_rs *rs = urnic_rs_get(socket);
	int rc;

	if (!rs)
		return urnic_rs_err(EBADF);
	if (rs->type == SOCK_DGRAM)
		return urnic_rs_dg_connect(rs, addr, addrlen);
	if (addrlen > sizeof(rs->cm_id->route.addr.dst_storage))
		return urnic_rs_err(EINVAL);
	pthread_mutex_lock(&rs->lock);
	if (rs->state == URNIC_RS_INIT || rs->state == URNIC_RS_BOUND)
		memcpy(&rs->cm_id->route.addr.dst_addr, addr, addrlen);
	rc = urnic_rs_do_connect(rs, !(rs->fd_flags & O_NONBLOCK));
	pthread_mutex_unlock(&rs->lock);
	return rc;
}

/* The control message a shutdown sends, or -1 for none (rsocket.c's rshutdown). */
static int shutdown_ctrl(struct urnic_rs *rs, int how)
{
	if (how == SHUT_RDWR) {
		rs->state &= ~(URNIC_RS_READABLE | URNIC_RS_WRITABLE);
		return URNIC_RS_CTRL_DISCONNECT;
	}
	if (how == SHUT_WR) {
		rs->state &= ~URNIC_RS_WRITABLE;
		return (rs->state & URNIC_RS_READABLE) ? URNIC_RS_CTRL_SHUTDOWN
						       : URNIC_RS_CTRL_DISCONNECT;
	}
	rs->state &= ~URNIC_RS_READABLE;
	return (rs->state & URNIC_RS_WRITABLE) ? -1 : URNIC_RS_CTRL_DISCONNECT;
}

static bool can_send_ctrl(struct urnic_rs *rs)
{
	return urnic_rs_ctrl_avail(rs) || !(rs->state & URNIC_RS_CONNECTED);
}

/* A graceful shutdown tells the peer and waits for the sends in flight, unless the peer
 * has already gone (rsocket(7)). */
static int stream_shutdown(struct urnic_rs *rs, int how)
{
	int rc = 0, ctrl;

	if (!(rs->state & URNIC_RS_CONNECTED))
		return (rs->state & URNIC_RS_DISCONNECTED) ? 0 : urnic_rs_err(ENOTCONN);
	ctrl = shutdown_ctrl(rs, how);
	if (ctrl >= 0) {
		if (!urnic_rs_ctrl_avail(rs))
			rc = urnic_rs_process(rs, false, can_send_ctrl);
		if (!rc && (rs->state & URNIC_RS_CONNECTED) && urnic_rs_ctrl_avail(rs)) {
			rs->ctrl_seqno++;
			rc = urnic_rs_post_msg(rs, urnic_rs_msg(URNIC_RS_OP_CTRL, ctrl));
		}
	}
	if (rs->state & URNIC_RS_CONNECTED)
		urnic_rs_process(rs, false, urnic_rs_all_sends_done);
	if ((rs->state & URNIC_RS_DISCONNECTED) && rs->cm_id->qp) {
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

		/* The flushed receives wake any rpoll on the rsocket. */
		ibv_modify_qp(rs->cm_id->qp, &a, IBV_QP_STATE);
	}
	return rc;
}

EXPORT int rshutdown(int socket, int how)
{
	struct urnic_rs *rs = urnic_rs_get(socket);
	int rc;

	if (!rs)
		return urnic_rs_err(EBADF);
	if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR)
		return urnic_rs_err(EINVAL);
	if (rs->type == SOCK_DGRAM)
		return 0;
	pthread_mutex_lock(&rs->lock);
	rc = stream_shutdown(rs, how);
	pthread_mutex_unlock(&rs->lock);
	return rc;
}

EXPORT int rclose(int socket)
{
	struct urnic_rs *rs = urnic_rs_get(socket);

	if (!rs)
		return urnic_rs_err(EBADF);
	urnic_rs_remove(rs);
	if (rs->type == SOCK_STREAM) {
		pthread_mutex_lock(&rs->lock);
		if (rs->state & URNIC_RS_CONNECTED)
			stream_shutdown(rs, SHUT_RDWR);
		if (rs->state & (URNIC_RS_CONNECTED | URNIC_RS_DISCONNECTED))
			rdma_disconnect(rs->cm_id);
		pthread_mutex_unlock(&rs->lock);
	}
	urnic_rs_free(rs);
	return 0;
}

static void copy_addr(struct sockaddr *dst, const struct sockaddr *src, socklen_t *len)
{
	socklen_t size = src->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						    : sizeof(struct sockaddr_in);

	memcpy(dst, src, *len < size ? *len : size);
	*len = size;
}

EXPORT int rgetpeername(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	struct urnic_rs *rs = urnic_rs_get(socket);

	if (!rs)
		return urnic_rs_err(EBADF);
	if (!addr || !addrlen)
		return urnic_rs_err(EFAULT);
	if (rs->type == SOCK_DGRAM)
		return getpeername(rs->index, addr, addrlen);
	if (!(rs->state & (URNIC_RS_CONNECTED | URNIC_RS_DISCONNECTED)))
		return urnic_rs_err(ENOTCONN);
	copy_addr(addr, rdma_get_peer_addr(rs->cm_id), addrlen);
	return 0;
}

EXPORT int rgetsockname(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	struct urnic_rs *rs = urnic_rs_get(socket);

	if (!rs)
		return urnic_rs_err(EBADF);
	if (!addr || !addrlen)
		return urnic_rs_err(EFAULT);
	if (rs->type == SOCK_DGRAM)
		return getsockname(rs->index, addr, addrlen);
	copy_addr(addr, rdma_get_local_addr(rs->cm_id), addrlen);
	return 0;
}

EXPORT int rfcntl(int socket, int cmd, ... /* arg */)
{
	struct urnic_rs *rs = urnic_rs_get(socket);
	va_list args;
	int arg, rc = 0;

	if (!rs)
		return urnic_rs_err(EBADF);
	switch (cmd) {
	case F_GETFL:
		return rs->fd_flags;
	case F_SETFL:
		va_start(args, cmd);
		arg = va_arg(args, int);
		va_end(args);
		if (rs->type == SOCK_DGRAM)
			rc = urnic_rs_dg_set_nonblock(rs, arg & O_NONBLOCK);
		if (!rc)
			rs->fd_flags = arg;
		return rc;
	default:
		return urnic_rs_err(ENOTSUP);
	}
}
