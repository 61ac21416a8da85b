/* SPDX-License-Identifier: MIT */
/*
 * rsocket_dgram.c - datagram rsockets on rdma-core 44's protocol: each datagram is a UD
 * SEND of ds_header (the sender's UDP address) and the data, Q_Key RDMA_UDP_QKEY. Until
 * a peer's QPN is known, a datagram goes over the UDP socket behind ds_udp_header (tag,
 * op, our QPN and address); the receiver answers with a control message carrying its
 * own, each side makes the AH from what it learnt, and the UDP datagram is delivered as
 * one received over UD. rdma-core's UDP service thread is replaced by the rsocket's own
 * calls: reading, sending and rpoll drain the UDP socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "cm/rsocket_dgram.h"

int urnic_rs_dg_init(struct urnic_rs *rs, int domain)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct urnic_rs_dgram *dg = calloc(1, sizeof(*dg));

	if (!dg)
		return urnic_rs_err(ENOMEM);
	rs->dg = dg;
	rs->cm_domain = domain;
	dg->epfd = -1;
	dg->udp = socket(domain, SOCK_DGRAM, 0);
	if (dg->udp < 0)
		return -1;
	dg->epfd = epoll_create1(EPOLL_CLOEXEC);
	ev.data.ptr = NULL;
	if (dg->epfd < 0 || epoll_ctl(dg->epfd, EPOLL_CTL_ADD, dg->udp, &ev))
		return -1;
	return urnic_rs_insert(rs, dg->udp) < 0 ? -1 : 0;
}

/* Buffers sized as rsocket.c's ds_set_qp_size: one 2 KiB slot per queue entry. */
static int init_ep(struct urnic_rs *rs)
{
	struct urnic_rs_dgram *dg = rs->dg;

	if (dg->ready)
		return 0;
	if (rs->rq_size > rs->rbuf_size / URNIC_RS_SNDLOWAT)
		rs->rq_size = (uint16_t)(rs->rbuf_size / URNIC_RS_SNDLOWAT);
	rs->rbuf_size = rs->rq_size * URNIC_RS_SNDLOWAT;
	if (rs->sq_size > rs->sbuf_size / URNIC_RS_SNDLOWAT)
		rs->sq_size = (uint16_t)(rs->sbuf_size / URNIC_RS_SNDLOWAT);
	rs->sbuf_size = rs->sq_size * URNIC_RS_SNDLOWAT;
	if (!rs->rq_size || !rs->sq_size)
		return urnic_rs_err(EINVAL);
	dg->sbuf = calloc(rs->sq_size, URNIC_RS_SNDLOWAT);
	dg->free_slots = calloc(rs->sq_size, sizeof(int));
	dg->rmsg = calloc(rs->rq_size + 1, sizeof(*dg->rmsg));
	if (!dg->sbuf || !dg->free_slots || !dg->rmsg)
		return urnic_rs_err(ENOMEM);
	for (int i = 0; i < rs->sq_size; i++)
		dg->free_slots[dg->nfree++] = i;
	dg->rqe_avail = rs->rq_size;
	rs->state = URNIC_RS_READABLE | URNIC_RS_WRITABLE;
	dg->ready = true;
	return 0;
}

void urnic_rs_dg_free(struct urnic_rs *rs)
{
	struct urnic_rs_dgram *dg = rs->dg;

	if (!dg)
		return;
	while (dg->dests) {
		struct urnic_ds_dest *d = dg->dests;

		dg->dests = d->next;
		if (d->ah)
			ibv_destroy_ah(d->ah);
		free(d);
	}
	while (dg->qps) {
		struct urnic_ds_qp *qp = dg->qps;

		dg->qps = qp->next;
		urnic_ds_free_qp(rs, qp);
	}
	for (int i = dg->head; dg->rmsg && i != dg->tail; i = (i + 1) % (rs->rq_size + 1))
		free(dg->rmsg[i].copy);
	if (dg->udp >= 0)
		close(dg->udp);
	if (dg->epfd >= 0)
		close(dg->epfd);
	free(dg->sbuf);
	free(dg->free_slots);
	free(dg->rmsg);
	free(dg);
	rs->dg = NULL;
}

int urnic_rs_dg_bind(struct urnic_rs *rs, const struct sockaddr *a, socklen_t len)
{
	if (init_ep(rs))
		return -1;
	return bind(rs->dg->udp, a, len);
}

int urnic_rs_dg_connect(struct urnic_rs *rs, const struct sockaddr *a, socklen_t len)
{
	if (init_ep(rs))
		return -1;
	if (connect(rs->dg->udp, a, len))
		return -1;
	return urnic_ds_get_dest(rs, a, len, &rs->dg->conn);
}

/* ds_udp_header: tag, version, op, length, reserved, our QPN, our QP's address. */
static ssize_t send_udp(struct urnic_rs *rs, struct urnic_ds_dest *d, const struct iovec *iov,
			int iovcnt, int flags, uint8_t op)
{
	uint8_t hdr[URNIC_DS_UDP_HDR6] = { 0 };
	uint32_t tag = htonl(URNIC_DS_UDP_TAG), qpn = htonl(d->qp->id->qp->qp_num & 0xffffff);
	const struct sockaddr *own = rdma_get_local_addr(d->qp->id);
	struct iovec v[9];
	struct msghdr m = { 0 };
	ssize_t n;

	if (iovcnt > 8)
		return urnic_rs_err(ENOTSUP);
	memcpy(hdr, &tag, 4);
	hdr[4] = d->qp->hdr[0];
	hdr[5] = op;
	hdr[6] = hdr[4] == 4 ? URNIC_DS_UDP_HDR4 : URNIC_DS_UDP_HDR6;
	memcpy(hdr + 8, &qpn, 4);
	if (hdr[4] == 4)
		memcpy(hdr + 12, &((const struct sockaddr_in *)own)->sin_addr, 4);
	else
		memcpy(hdr + 12, &((const struct sockaddr_in6 *)own)->sin6_addr, 16);
	v[0].iov_base = hdr;
	v[0].iov_len = hdr[6];
	for (int i = 0; i < iovcnt; i++)
		v[i + 1] = iov[i];
	m.msg_name = &d->addr;
	m.msg_namelen = urnic_ds_addrlen((struct sockaddr *)&d->addr);
	m.msg_iov = v;
	m.msg_iovlen = (size_t)iovcnt + 1;
	n = sendmsg(rs->dg->udp, &m, flags & MSG_DONTWAIT);
	return n > 0 ? n - hdr[6] : n;
}

static void queue_copy(struct urnic_rs *rs, const uint8_t *hdr, const uint8_t *data, size_t len)
{
	struct urnic_rs_dgram *dg = rs->dg;
	uint8_t *c;

	if (!dg->rqe_avail || !(c = malloc(hdr[1] + len)))
		return; /* no room: dropped, as a full socket buffer drops */
	memcpy(c, hdr, hdr[1]);
	memcpy(c + hdr[1], data, len);
	dg->rqe_avail--;
	dg->rmsg[dg->tail] = (struct urnic_ds_rmsg){ NULL, 0, (uint32_t)(hdr[1] + len), c };
	dg->tail = (dg->tail + 1) % (rs->rq_size + 1);
}

/* One UDP bootstrap message: answer a datagram with our QPN, make the AH to the
 * sender's QP, and deliver the datagram (rsocket.c's udp_svc_process_rs). */
static void udp_one(struct urnic_rs *rs, uint8_t *buf, ssize_t n, struct sockaddr_storage *from,
		    socklen_t flen)
{
	struct urnic_ds_dest *d;
	uint8_t src_hdr[URNIC_DS_HDR6] = { 0 };
	uint32_t qpn, tag;
	bool v4 = from->ss_family == AF_INET;

	if (n < URNIC_DS_UDP_HDR4)
		return;
	memcpy(&tag, buf, 4);
	if (ntohl(tag) != URNIC_DS_UDP_TAG || buf[4] != (v4 ? 4 : 6) ||
	    buf[6] != (v4 ? URNIC_DS_UDP_HDR4 : URNIC_DS_UDP_HDR6) || n < buf[6])
		return;
	memcpy(&qpn, buf + 8, 4);
	qpn = ntohl(qpn) & 0xffffff;
	if (urnic_ds_get_dest(rs, (struct sockaddr *)from, flen, &d))
		return;
	if (buf[5] == URNIC_RS_OP_DATA)
		send_udp(rs, d, NULL, 0, MSG_DONTWAIT, URNIC_RS_OP_CTRL);
	if (!d->ah || d->qpn != qpn)
		urnic_ds_make_ah(d, buf + 12, from->ss_family, qpn);
	if (buf[5] != URNIC_RS_OP_DATA)
		return;
	src_hdr[0] = v4 ? 4 : 6;
	src_hdr[1] = v4 ? URNIC_DS_HDR4 : URNIC_DS_HDR6;
	if (v4) {
		memcpy(src_hdr + 2, &((struct sockaddr_in *)from)->sin_port, 2);
		memcpy(src_hdr + 4, &((struct sockaddr_in *)from)->sin_addr, 4);
	} else {
		memcpy(src_hdr + 2, &((struct sockaddr_in6 *)from)->sin6_port, 2);
		memcpy(src_hdr + 8, &((struct sockaddr_in6 *)from)->sin6_addr, 16);
	}
	queue_copy(rs, src_hdr, buf + buf[6], (size_t)(n - buf[6]));
}

static void drain_udp(struct urnic_rs *rs)
{
	static __thread uint8_t buf[URNIC_RS_SNDLOWAT + URNIC_DS_UDP_HDR6];

	for (;;) {
		struct sockaddr_storage from;
		socklen_t flen = sizeof(from);
		ssize_t n = recvfrom(rs->dg->udp, buf, sizeof(buf), MSG_DONTWAIT,
				     (struct sockaddr *)&from, &flen);

		if (n < 0)
			return;
		udp_one(rs, buf, n, &from, flen);
	}
}

static bool valid_recv(struct urnic_ds_qp *qp, const struct ibv_wc *wc)
{
	const uint8_t *h = qp->rbuf + (uint32_t)wc->wr_id;

	return wc->byte_len >= URNIC_DS_GRH + URNIC_DS_HDR4 &&
	       ((h[0] == 4 && h[1] == URNIC_DS_HDR4) || (h[0] == 6 && h[1] == URNIC_DS_HDR6)) &&
	       wc->byte_len - URNIC_DS_GRH >= h[1];
}

static void poll_cqs(struct urnic_rs *rs)
{
	struct urnic_rs_dgram *dg = rs->dg;
	struct ibv_wc wc;

	for (struct urnic_ds_qp *qp = dg->qps; qp; qp = qp->next) {
		while (ibv_poll_cq(qp->cq, 1, &wc) > 0) {
			uint32_t off = (uint32_t)wc.wr_id;

			if (!(wc.wr_id & URNIC_RS_WR_RECV)) {
				dg->free_slots[dg->nfree++] = (int)(off / URNIC_RS_SNDLOWAT);
				continue;
			}
			if (!dg->rqe_avail || wc.status != IBV_WC_SUCCESS || !valid_recv(qp, &wc)) {
				urnic_ds_post_recv(rs, qp, off);
				continue;
			}
			dg->rqe_avail--;
			dg->rmsg[dg->tail] =
				(struct urnic_ds_rmsg){ qp, off, wc.byte_len - URNIC_DS_GRH, NULL };
			dg->tail = (dg->tail + 1) % (rs->rq_size + 1);
		}
	}
}

static void process(struct urnic_rs *rs)
{
	drain_udp(rs);
	poll_cqs(rs);
}

static void arm(struct urnic_rs *rs)
{
	for (struct urnic_ds_qp *qp = rs->dg->qps; qp; qp = qp->next)
		if (!qp->armed) {
			ibv_req_notify_cq(qp->cq, 0);
			qp->armed = true;
		}
}

void urnic_rs_dg_take_events(struct urnic_rs *rs)
{
	pthread_mutex_lock(&rs->lock);
	for (struct urnic_ds_qp *qp = rs->dg->qps; qp; qp = qp->next) {
		struct ibv_cq *cq;
		void *ctx;

		if (!ibv_get_cq_event(qp->cc, &cq, &ctx)) {
			ibv_ack_cq_events(cq, 1);
			qp->armed = false;
		}
	}
	pthread_mutex_unlock(&rs->lock);
}

/* Processes until TEST holds; EWOULDBLOCK when NONBLOCK. Waits with the lock released. */
static int wait_for(struct urnic_rs *rs, bool nonblock, bool (*test)(struct urnic_rs *rs))
{
	for (;;) {
		struct pollfd p = { .fd = rs->dg->epfd, .events = POLLIN };

		process(rs);
		if (test(rs))
			return 0;
		if (nonblock)
			return urnic_rs_err(EWOULDBLOCK);
		arm(rs);
		process(rs);
		if (test(rs))
			return 0;
		pthread_mutex_unlock(&rs->lock);
		poll(&p, 1, 100);
		urnic_rs_dg_take_events(rs);
		pthread_mutex_lock(&rs->lock);
	}
}

static bool have_rdata(struct urnic_rs *rs)
{
	return rs->dg->head != rs->dg->tail;
}

static bool can_send(struct urnic_rs *rs)
{
	return rs->dg->nfree > 0;
}

int urnic_rs_dg_poll(struct urnic_rs *rs, short events, int *fd)
{
	int rev = 0;

	pthread_mutex_lock(&rs->lock);
	if (rs->dg->ready) {
		process(rs);
		if (fd && !((events & POLLIN) && have_rdata(rs))) {
			arm(rs);
			process(rs);
		}
		if ((events & POLLIN) && have_rdata(rs))
			rev |= POLLIN;
		if ((events & POLLOUT) && can_send(rs))
			rev |= POLLOUT;
	} else {
		rev = events & POLLOUT;
	}
	if (fd)
		*fd = rs->dg->epfd;
	pthread_mutex_unlock(&rs->lock);
	return rev;
}

int urnic_rs_dg_set_nonblock(struct urnic_rs *rs, bool on)
{
	(void)rs, (void)on;
	return 0; /* every wait is ours: the flag is read from rs->fd_flags */
}

static void set_src(const uint8_t *h, struct sockaddr *src, socklen_t *srclen)
{
	struct sockaddr_storage a = { 0 };
	socklen_t n;

	if (h[0] == 4) {
		struct sockaddr_in *s = (struct sockaddr_in *)&a;

		s->sin_family = AF_INET;
		memcpy(&s->sin_port, h + 2, 2);
		memcpy(&s->sin_addr, h + 4, 4);
		n = sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&a;

		s->sin6_family = AF_INET6;
		memcpy(&s->sin6_port, h + 2, 2);
		memcpy(&s->sin6_flowinfo, h + 4, 4);
		memcpy(&s->sin6_addr, h + 8, 16);
		n = sizeof(*s);
	}
	memcpy(src, &a, *srclen < n ? *srclen : n);
	*srclen = n;
}

static ssize_t do_recv(struct urnic_rs *rs, void *buf, size_t len, int flags, struct sockaddr *src,
		       socklen_t *srclen)
{
	struct urnic_rs_dgram *dg = rs->dg;
	struct urnic_ds_rmsg *m;
	const uint8_t *h;
	size_t dlen;

	if (!dg->ready)
		return urnic_rs_err(EINVAL);
	if (!have_rdata(rs) && wait_for(rs, urnic_rs_nonblocking(rs, flags), have_rdata))
		return -1;
	m = &dg->rmsg[dg->head];
	h = m->copy ? m->copy : m->qp->rbuf + m->offset;
	dlen = m->length - h[1];
	if (len > dlen)
		len = dlen;
	memcpy(buf, h + h[1], len);
	if (src && srclen)
		set_src(h, src, srclen);
	if (!(flags & MSG_PEEK)) {
		if (m->copy)
			free(m->copy);
		else
			urnic_ds_post_recv(rs, m->qp, m->offset);
		dg->head = (dg->head + 1) % (rs->rq_size + 1);
		dg->rqe_avail++;
	}
	return (ssize_t)len;
}

ssize_t urnic_rs_dg_recvfrom(struct urnic_rs *rs, void *buf, size_t len, int flags,
			     struct sockaddr *src, socklen_t *srclen)
{
	ssize_t n;
	int e;

	pthread_mutex_lock(&rs->lock);
	n = do_recv(rs, buf, len, flags, src, srclen);
	e = errno;
	pthread_mutex_unlock(&rs->lock);
	errno = e;
	return n;
}

/* One datagram over UD: ds_header and the data in a send slot, to the peer's QP. */
static ssize_t send_ud(struct urnic_rs *rs, struct urnic_ds_dest *d, const struct iovec *iov,
		       int iovcnt, int flags)
{
	struct urnic_rs_dgram *dg = rs->dg;
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge;
	size_t len = 0, pos;
	uint8_t *msg;
	int slot, rc;

	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	if (len + d->qp->hdr_len > URNIC_RS_SNDLOWAT)
		return urnic_rs_err(EMSGSIZE);
	if (!can_send(rs) && wait_for(rs, urnic_rs_nonblocking(rs, flags), can_send))
		return -1;
	slot = dg->free_slots[--dg->nfree];
	msg = dg->sbuf + (size_t)slot * URNIC_RS_SNDLOWAT;
	memcpy(msg, d->qp->hdr, d->qp->hdr_len);
	pos = d->qp->hdr_len;
	for (int i = 0; i < iovcnt; i++) {
		memcpy(msg + pos, iov[i].iov_base, iov[i].iov_len);
		pos += iov[i].iov_len;
	}
	sge = (struct ibv_sge){ (uintptr_t)msg, (uint32_t)pos, d->qp->smr->lkey };
	wr.wr_id = (uint64_t)slot * URNIC_RS_SNDLOWAT;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = pos <= rs->sq_inline ? IBV_SEND_INLINE : 0;
	wr.wr.ud.ah = d->ah;
	wr.wr.ud.remote_qpn = d->qpn;
	wr.wr.ud.remote_qkey = URNIC_DS_QKEY;
	rc = ibv_post_send(d->qp->id->qp, &wr, &bad);
	if (rc) {
		dg->free_slots[dg->nfree++] = slot;
		return urnic_rs_err(rc);
	}
	return (ssize_t)len;
}

static ssize_t do_send(struct urnic_rs *rs, const struct iovec *iov, int iovcnt, int flags,
		       const struct sockaddr *dst, socklen_t dstlen)
{
	struct urnic_ds_dest *d = rs->dg->conn;

	if (init_ep(rs))
		return -1;
	if (dst && urnic_ds_get_dest(rs, dst, dstlen, &d))
		return -1;
	if (!d)
		return urnic_rs_err(EDESTADDRREQ);
	process(rs); /* a peer's answer may bring its QPN */
	if (!d->ah)
		return send_udp(rs, d, iov, iovcnt, flags, URNIC_RS_OP_DATA);
	return send_ud(rs, d, iov, iovcnt, flags);
}

ssize_t urnic_rs_dg_sendto(struct urnic_rs *rs, const struct iovec *iov, int iovcnt, int flags,
			   const struct sockaddr *dst, socklen_t dstlen)
{
	ssize_t n;
	int e;

	pthread_mutex_lock(&rs->lock);
	n = do_send(rs, iov, iovcnt, flags, dst, dstlen);
	e = errno;
	pthread_mutex_unlock(&rs->lock);
	errno = e;
	return n;
}
