/* SPDX-License-Identifier: MIT */
/*
 * rsocket_iomap.c - riomap, riounmap and riowrite (rsocket(7)): placeholder.
 */
#include <errno.h>

#include "cm/rsocket.h"

#define EXPORT __attribute__((visibility("default")))

int urnic_rs_send_iomaps(struct urnic_rs *rs, bool nonblock)
{
	(void)nonblock;
	rs->iomap_pending = false;
	return 0;
}

void urnic_rs_free_iomaps(struct urnic_rs *rs)
{
	(void)rs;
}

EXPORT off_t riomap(int socket, void *buf, size_t len, int prot, int flags, off_t offset)
{
	(void)socket, (void)buf, (void)len, (void)prot, (void)flags, (void)offset;
	return urnic_rs_err(ENOSYS);
}

EXPORT int riounmap(int socket, void *buf, size_t len)
{
	(void)socket, (void)buf, (void)len;
	return urnic_rs_err(ENOSYS);
}

EXPORT size_t riowrite(int socket, const void *buf, size_t count, off_t offset, int flags)
{
	(void)socket, (void)buf, (void)count, (void)offset, (void)flags;
	return (size_t)urnic_rs_err(ENOSYS);
}
