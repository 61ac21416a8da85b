/* SPDX-License-Identifier: MIT */
/*
 * rsocket_opt.c - rsetsockopt and rgetsockopt (rsocket(7)): the socket options rsockets
 * honour (buffer sizes, SO_REUSEADDR through rdma_cm, SO_ERROR), those recorded only
 * because an RC connection makes them moot (TCP_NODELAY, SO_LINGER, keepalive), and
 * SOL_RDMA's queue, inline and iomap sizes and route, settable before connecting. A
 * datagram rsocket's non-RDMA options are its UDP socket's.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rsocket.h>

#include "cm/rsocket.h"

#define EXPORT __attribute__((visibility("default")))

static int int_of(const void *v, socklen_t len, int *out)
{
	if (!v || len < sizeof(int))
		return urnic_rs_err(EINVAL);
	memcpy(out, v, sizeof(int));
	return 0;
}

/* rsocket.c's scale of the iomap size to 8 bits and back: the sizes it can carry. */
static int iomap_round(int v)
{
	int s = v <= 128 ? v : 128 | (v >> 8);

	s &= 0xff;
	return s <= 128 ? s : (s & ~128) << 8;
}

static int set_socket(struct urnic_rs *rs, int name, const void *v, socklen_t len, bool *on)
{
	int i = 0;

	if (name == SO_LINGER) {
		struct linger l;

		if (!v || len < sizeof(l))
			return urnic_rs_err(EINVAL);
		memcpy(&l, v, sizeof(l));
		*on = !l.l_onoff; /* inverted: the default, 0, is on */
		return 0;
	}
	if (int_of(v, len, &i))
		return -1;
	*on = i != 0;
	switch (name) {
	case SO_REUSEADDR:
		if (rdma_set_option(rs->cm_id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &i,
				    sizeof(i)) &&
		    errno != ENOSYS && rs->state == URNIC_RS_INIT)
			return -1;
		return 0;
	case SO_RCVBUF:
		if (!rs->rbuf)
			rs->rbuf_size = (uint32_t)i << 1;
		return 0;
	case SO_SNDBUF:
		if (!rs->sbuf)
			rs->sbuf_size = (uint32_t)i << 1;
		if (rs->sbuf_size < URNIC_RS_SNDLOWAT)
			rs->sbuf_size = URNIC_RS_SNDLOWAT << 1;
		return 0;
	case SO_KEEPALIVE:
		if (i && !rs->keepalive_time)
			rs->keepalive_time = 7200;
		return 0;
	case SO_OOBINLINE:
		return 0;
	default:
		return urnic_rs_err(ENOTSUP);
	}
}

static int set_rdma(struct urnic_rs *rs, int name, const void *v, socklen_t len)
{
	int i = 0;

	if (rs->state >= URNIC_RS_OPENING)
		return urnic_rs_err(EINVAL);
	if (name == RDMA_ROUTE) {
		void *p = malloc(len ? len : 1);

		if (!p)
			return urnic_rs_err(ENOMEM);
		memcpy(p, v, len);
		free(rs->route);
		rs->route = p;
		rs->route_len = len;
		return 0;
	}
	if (int_of(v, len, &i))
		return -1;
	switch (name) {
	case RDMA_SQSIZE:
		rs->sq_size = (uint32_t)i < URNIC_RS_QP_MAX ? (uint16_t)i : URNIC_RS_QP_MAX;
		return 0;
	case RDMA_RQSIZE:
		rs->rq_size = (uint32_t)i < URNIC_RS_QP_MAX ? (uint16_t)i : URNIC_RS_QP_MAX;
		return 0;
	case RDMA_INLINE:
		rs->sq_inline = (uint32_t)i < URNIC_RS_QP_MAX ? (uint16_t)i : URNIC_RS_QP_MAX;
		return 0;
	case RDMA_IOMAPSIZE:
		rs->target_iomap_size = iomap_round(i);
		return 0;
	default:
		return urnic_rs_err(ENOTSUP);
	}
}

EXPORT int rsetsockopt(int socket, int level, int optname, const void *optval, socklen_t optlen)
{
	struct urnic_rs *rs = urnic_rs_get(socket);
	uint64_t *opts = NULL;
	bool on = false;
	int rc, i = 0;

	if (!rs)
		return urnic_rs_err(EBADF);
	if (rs->type == SOCK_DGRAM && level != SOL_RDMA)
		return setsockopt(rs->index, level, optname, optval, optlen);
	switch (level) {
	case SOL_SOCKET:
		opts = &rs->so_opts;
		rc = set_socket(rs, optname, optval, optlen, &on);
		break;
	case IPPROTO_TCP:
		opts = &rs->tcp_opts;
		rc = int_of(optval, optlen, &i);
		if (rc)
			break;
		on = i != 0;
		if (optname == TCP_KEEPIDLE && i <= 0)
			rc = urnic_rs_err(EINVAL);
		else if (optname == TCP_KEEPIDLE)
			rs->keepalive_time = (unsigned int)i;
		else if (optname != TCP_NODELAY && optname != TCP_MAXSEG &&
			 optname != TCP_KEEPCNT && optname != TCP_KEEPINTVL)
			rc = urnic_rs_err(ENOTSUP);
		break;
	case IPPROTO_IPV6:
		opts = &rs->ipv6_opts;
		rc = int_of(optval, optlen, &i);
		if (!rc && optname != IPV6_V6ONLY)
			rc = urnic_rs_err(ENOTSUP);
		else if (!rc)
			rc = rdma_set_option(rs->cm_id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &i,
					     sizeof(i));
		on = !rc && i;
		break;
	case SOL_RDMA:
		rc = set_rdma(rs, optname, optval, optlen);
		break;
	default:
		rc = urnic_rs_err(ENOTSUP);
	}
	if (!rc && opts && optname < 64)
		*opts = on ? *opts | (1ULL << optname) : *opts & ~(1ULL << optname);
	return rc;
}

static int put_int(void *optval, socklen_t *optlen, int v)
{
	if (!optval || !optlen || *optlen < sizeof(int))
		return urnic_rs_err(EINVAL);
	memcpy(optval, &v, sizeof(v));
	*optlen = sizeof(int);
	return 0;
}

static int get_socket(struct urnic_rs *rs, int name, void *v, socklen_t *len)
{
	struct linger l = { 0 };
	int e;

	switch (name) {
	case SO_REUSEADDR:
	case SO_KEEPALIVE:
	case SO_OOBINLINE:
		return put_int(v, len, !!(rs->so_opts & (1ULL << name)));
	case SO_RCVBUF:
		return put_int(v, len, (int)rs->rbuf_size);
	case SO_SNDBUF:
		return put_int(v, len, (int)rs->sbuf_size);
	case SO_ERROR:
		e = rs->err;
		rs->err = 0;
		return put_int(v, len, e);
	case SO_LINGER:
		if (!v || !len || *len < sizeof(l))
			return urnic_rs_err(EINVAL);
		l.l_onoff = !(rs->so_opts & (1ULL << SO_LINGER));
		memcpy(v, &l, sizeof(l));
		*len = sizeof(l);
		return 0;
	default:
		return urnic_rs_err(ENOTSUP);
	}
}

static int get_tcp(struct urnic_rs *rs, int name, void *v, socklen_t *len)
{
	switch (name) {
	case TCP_KEEPCNT:
	case TCP_KEEPINTVL:
		return put_int(v, len, 1);
	case TCP_KEEPIDLE:
		return put_int(v, len, (int)rs->keepalive_time);
	case TCP_NODELAY:
		return put_int(v, len, !!(rs->tcp_opts & (1ULL << TCP_NODELAY)));
	case TCP_MAXSEG:
		if (rs->cm_id && rs->cm_id->route.num_paths && rs->cm_id->route.path_rec)
			return put_int(v, len, 1 << (7 + rs->cm_id->route.path_rec->mtu));
		return put_int(v, len, 2048);
	default:
		return urnic_rs_err(ENOTSUP);
	}
}

static int get_rdma(struct urnic_rs *rs, int name, void *v, socklen_t *len)
{
	switch (name) {
	case RDMA_SQSIZE:
		return put_int(v, len, rs->sq_size);
	case RDMA_RQSIZE:
		return put_int(v, len, rs->rq_size);
	case RDMA_INLINE:
		return put_int(v, len, rs->sq_inline);
	case RDMA_IOMAPSIZE:
		return put_int(v, len, rs->target_iomap_size);
	case RDMA_ROUTE:
		if (!rs->route || !len || *len < rs->route_len)
			return urnic_rs_err(rs->route ? EINVAL : ENOTSUP);
		memcpy(v, rs->route, rs->route_len);
		*len = (socklen_t)rs->route_len;
		return 0;
	default:
		return urnic_rs_err(ENOTSUP);
	}
}

EXPORT int rgetsockopt(int socket, int level, int optname, void *optval, socklen_t *optlen)
{
	struct urnic_rs *rs = urnic_rs_get(socket);

	if (!rs)
		return urnic_rs_err(EBADF);
	if (rs->type == SOCK_DGRAM && level != SOL_RDMA)
		return getsockopt(rs->index, level, optname, optval, optlen);
	switch (level) {
	case SOL_SOCKET:
		return get_socket(rs, optname, optval, optlen);
	case IPPROTO_TCP:
		return get_tcp(rs, optname, optval, optlen);
	case IPPROTO_IPV6:
		if (optname != IPV6_V6ONLY)
			return urnic_rs_err(ENOTSUP);
		return put_int(optval, optlen, !!(rs->ipv6_opts & (1ULL << IPV6_V6ONLY)));
	case SOL_RDMA:
		return get_rdma(rs, optname, optval, optlen);
	default:
		return urnic_rs_err(ENOTSUP);
	}
}
