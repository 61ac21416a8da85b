/* SPDX-License-Identifier: MIT */
/*
 * rsocket_dgram.c - datagram rsockets: placeholder.
 */
#include <errno.h>

#include "cm/rsocket.h"

int urnic_rs_dg_init(struct urnic_rs *rs, int domain)
{
	(void)rs, (void)domain;
	return urnic_rs_err(ENOTSUP);
}

void urnic_rs_dg_free(struct urnic_rs *rs)
{
	(void)rs;
}

int urnic_rs_dg_bind(struct urnic_rs *rs, const struct sockaddr *a, socklen_t len)
{
	(void)rs, (void)a, (void)len;
	return urnic_rs_err(ENOTSUP);
}

int urnic_rs_dg_connect(struct urnic_rs *rs, const struct sockaddr *a, socklen_t len)
{
	(void)rs, (void)a, (void)len;
	return urnic_rs_err(ENOTSUP);
}

ssize_t urnic_rs_dg_recvfrom(struct urnic_rs *rs, void *buf, size_t len, int flags,
			     struct sockaddr *src, socklen_t *srclen)
{
	(void)rs, (void)buf, (void)len, (void)flags, (void)src, (void)srclen;
	return urnic_rs_err(ENOTSUP);
}

ssize_t urnic_rs_dg_sendto(struct urnic_rs *rs, const struct iovec *iov, int iovcnt, int flags,
			   const struct sockaddr *dst, socklen_t dstlen)
{
	(void)rs, (void)iov, (void)iovcnt, (void)flags, (void)dst, (void)dstlen;
	return urnic_rs_err(ENOTSUP);
}

int urnic_rs_dg_poll(struct urnic_rs *rs, short events, int *fd)
{
	(void)rs, (void)events;
	if (fd)
		*fd = -1;
	return 0;
}

void urnic_rs_dg_take_events(struct urnic_rs *rs)
{
	(void)rs;
}

int urnic_rs_dg_set_nonblock(struct urnic_rs *rs, bool on)
{
	(void)rs, (void)on;
	return 0;
}
