/* SPDX-License-Identifier: MIT */
/*
 * rsocket_iomap.c - riomap, riounmap and riowrite (rsocket(7)): a buffer mapped with
 * PROT_WRITE is registered for remote write and announced to the peer in a slot of the
 * iomap table it granted at connection (an RDMA WRITE with immediate IOMAP_SGL|slot,
 * before the next data); riowrite RDMA-writes straight into the peer's mapping that
 * covers an offset, with no message, as rdma-core's does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cm/rsocket.h"

#define EXPORT __attribute__((visibility("default")))

static int free_slot(struct urnic_rs *rs)
{
	for (uint32_t i = 0; i < rs->remote_iomap.length; i++) {
		struct urnic_rs_iomr *m = rs->iomaps;

		while (m && m->index != (int)i)
			m = m->next;
		if (!m)
			return (int)i;
	}
	return -1;
}

/* The iomap entry of M into the peer's slot: inline, or staged in the send buffer. */
static int write_iomap(struct urnic_rs *rs, struct urnic_rs_iomr *m)
{
	struct urnic_rs_iomap iom;
	struct iovec v = { &iom, sizeof(iom) };
	const struct iovec *vp = &v;
	struct ibv_sge inl = { (uintptr_t)&iom, sizeof(iom), 0 };
	uint64_t addr = rs->remote_iomap.addr + (uint64_t)m->index * sizeof(iom);
	uint32_t msg = urnic_rs_msg(URNIC_RS_OP_IOMAP_SGL, (uint32_t)m->index);
	size_t off = 0;
	int nsge, rc;

	iom.offset = m->offset;
	iom.sge.addr = (uintptr_t)m->mr->addr;
	iom.sge.key = m->mr->rkey;
	iom.sge.length = (uint32_t)m->mr->length;
	if (rs->swap_sgl) {
		iom.offset = __builtin_bswap64(iom.offset);
		iom.sge.addr = __builtin_bswap64(iom.sge.addr);
		iom.sge.key = __builtin_bswap32(iom.sge.key);
		iom.sge.length = __builtin_bswap32(iom.sge.length);
	}
	rs->sseq_no++;
	rs->sqe_avail -= urnic_rs_msg_wrs(rs);
	rs->sbuf_bytes_avail -= sizeof(iom);
	if (rs->sq_inline >= sizeof(iom))
		return urnic_rs_post_write(rs, &inl, 1, msg, IBV_SEND_INLINE, addr,
					   rs->remote_iomap.key, true);
	nsge = urnic_rs_stage(rs, &vp, &off, sizeof(iom));
	rc = urnic_rs_post_write(rs, rs->ssgl, nsge, msg, 0, addr, rs->remote_iomap.key, true);
	if (!rc)
		urnic_rs_staged(rs, nsge, sizeof(iom));
	return rc;
}

/* Announces every mapping not yet announced, in the order they were made. */
int urnic_rs_send_iomaps(struct urnic_rs *rs, int flags)
{
	for (struct urnic_rs_iomr *m = rs->iomaps; m; m = m->next) {
		if (!m->pending)
			continue;
		if (urnic_rs_wait_send(rs, flags) || write_iomap(rs, m))
			return -1;
		m->pending = false;
	}
	rs->iomap_pending = false;
	return 0;
}

void urnic_rs_free_iomaps(struct urnic_rs *rs)
{
	while (rs->iomaps) {
		struct urnic_rs_iomr *m = rs->iomaps;

		rs->iomaps = m->next;
		ibv_dereg_mr(m->mr);
		free(m);
	}
}

static off_t do_map(struct urnic_rs *rs, void *buf, size_t len, int prot, off_t offset)
{
	struct urnic_rs_iomr *m, **tail;
	int access = IBV_ACCESS_LOCAL_WRITE;

	if (!rs->cm_id || !rs->cm_id->qp || (prot & ~(PROT_WRITE | PROT_NONE)))
		return urnic_rs_err(EINVAL);
	m = calloc(1, sizeof(*m));
	if (!m)
		return urnic_rs_err(ENOMEM);
	m->index = -1;
	if (prot & PROT_WRITE) {
		m->index = free_slot(rs);
		if (m->index < 0) {
			free(m);
			return urnic_rs_err(ENOMEM);
		}
		access |= IBV_ACCESS_REMOTE_WRITE;
	}
	m->mr = ibv_reg_mr(rs->cm_id->qp->pd, buf, len, access);
	if (!m->mr) {
		free(m);
		return -1;
	}
	m->offset = offset == -1 ? (uint64_t)(uintptr_t)buf : (uint64_t)offset;
	m->pending = m->index >= 0;
	rs->iomap_pending |= m->pending;
	for (tail = &rs->iomaps; *tail; tail = &(*tail)->next)
		;
	*tail = m;
	return (off_t)m->offset;
}

/* An OFFSET of -1 maps at the buffer's address (rsocket(7)). */
EXPORT off_t riomap(int socket, void *buf, size_t len, int prot, int flags, off_t offset)
{
	struct urnic_rs *rs = urnic_rs_get(socket);
	off_t rc;
	int e;

	(void)flags;
	if (!rs || rs->type != SOCK_STREAM)
		return urnic_rs_err(rs ? ENOTSUP : EBADF);
	pthread_mutex_lock(&rs->lock);
	rc = do_map(rs, buf, len, prot, offset);
	e = errno;
	pthread_mutex_unlock(&rs->lock);
	errno = e;
	return rc;
}

EXPORT int riounmap(int socket, void *buf, size_t len)
{
	struct urnic_rs *rs = urnic_rs_get(socket);
	struct urnic_rs_iomr **p;

	if (!rs || rs->type != SOCK_STREAM)
		return urnic_rs_err(rs ? ENOTSUP : EBADF);
	pthread_mutex_lock(&rs->lock);
	for (p = &rs->iomaps; *p; p = &(*p)->next) {
		struct urnic_rs_iomr *m = *p;

		if (m->mr->addr == buf && m->mr->length == len) {
			*p = m->next;
			ibv_dereg_mr(m->mr);
			free(m);
			pthread_mutex_unlock(&rs->lock);
			return 0;
		}
	}
	pthread_mutex_unlock(&rs->lock);
	return urnic_rs_err(EINVAL);
}

/* The peer's mapping that covers OFFSET, copied out of the table it writes. */
static bool find_iomap(struct urnic_rs *rs, uint64_t offset, struct urnic_rs_iomap *out)
{
	for (int i = 0; i < rs->target_iomap_size; i++) {
		out->offset = rs->target_iomap[i].offset;
		out->sge.addr = rs->target_iomap[i].sge.addr;
		out->sge.key = rs->target_iomap[i].sge.key;
		out->sge.length = rs->target_iomap[i].sge.length;
		if (out->sge.length && offset >= out->offset &&
		    offset < out->offset + out->sge.length)
			return true;
	}
	return false;
}

static ssize_t do_write(struct urnic_rs *rs, const void *buf, size_t count, uint64_t offset,
			int flags)
{
	struct iovec v = { (void *)buf, count };
	const struct iovec *vp = &v;
	struct urnic_rs_iomap iom;
	uint32_t olen = URNIC_RS_OLAP_START, xfer;
	size_t left, off = 0;
	int rc = 0;

	if (urnic_rs_ready(rs, flags))
		return -1;
	if (rs->iomap_pending && urnic_rs_send_iomaps(rs, flags))
		return -1;
	for (left = count; left; left -= xfer, offset += xfer) {
		int nsge;

		if (!find_iomap(rs, offset, &iom))
			break;
		rc = urnic_rs_wait_send(rs, flags);
		if (rc)
			break;
		xfer = urnic_rs_next_xfer(rs, &olen, left);
		if (xfer > iom.offset + iom.sge.length - offset)
			xfer = (uint32_t)(iom.offset + iom.sge.length - offset);
		nsge = urnic_rs_stage(rs, &vp, &off, xfer);
		rs->sqe_avail--;
		rs->sbuf_bytes_avail -= xfer;
		rc = urnic_rs_post_write(rs, rs->ssgl, nsge, urnic_rs_msg(URNIC_RS_OP_WRITE, xfer),
					 xfer <= rs->sq_inline ? IBV_SEND_INLINE : 0,
					 iom.sge.addr + offset - iom.offset, iom.sge.key, false);
		if (rc)
			break;
		urnic_rs_staged(rs, nsge, xfer);
	}
	return (rc && left == count) ? rc : (ssize_t)(count - left);
}

EXPORT size_t riowrite(int socket, const void *buf, size_t count, off_t offset, int flags)
{
	struct urnic_rs *rs = urnic_rs_get(socket);
	ssize_t n;
	int e;

	if (!rs || rs->type != SOCK_STREAM)
		return (size_t)urnic_rs_err(rs ? ENOTSUP : EBADF);
	pthread_mutex_lock(&rs->lock);
	n = do_write(rs, buf, count, (uint64_t)offset, flags);
	e = errno;
	pthread_mutex_unlock(&rs->lock);
	errno = e;
	return (size_t)n;
}
