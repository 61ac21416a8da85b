/* SPDX-License-Identifier: MIT */
/*
 * rsocket_dgram_qp.c - a datagram rsocket's UD QPs and destinations: one QP per local
 * address the UDP socket sends from (rsocket.c's ds_get_qp), bound to that address's
 * device, or to the route's device when the address is loopback or any; one destination
 * per peer address, whose AH waits for the peer's QPN from its UDP bootstrap message.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "cm/rsocket_dgram.h"

socklen_t urnic_ds_addrlen(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

bool urnic_ds_same_addr(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

	return x->sin6_port == y->sin6_port && !memcmp(&x->sin6_addr, &y->sin6_addr, 16);
}

static bool any_or_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		uint32_t a = ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);

		return a == INADDR_ANY || (a >> 24) == 127;
	}
	const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

	return IN6_IS_ADDR_UNSPECIFIED(a) || IN6_IS_ADDR_LOOPBACK(a);
}

/* The address the UDP socket sends to DST from: its own, or the kernel's route's when
 * it is bound to any address (rsocket.c's ds_get_src_addr). */
static int src_addr(struct urnic_rs *rs, const struct sockaddr *dst, struct sockaddr_storage *src)
{
	socklen_t len = sizeof(*src);
	uint16_t port;
	int s, rc;

	if (getsockname(rs->dg->udp, (struct sockaddr *)src, &len))
		return -1;
	if (src->ss_family == AF_INET && ((struct sockaddr_in *)src)->sin_addr.s_addr)
		return 0;
	if (src->ss_family == AF_INET6 &&
	    !IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)src)->sin6_addr))
		return 0;
	port = ((struct sockaddr_in *)src)->sin_port; /* the same offset in both */
	s = socket(dst->sa_family, SOCK_DGRAM, 0);
	if (s < 0)
		return -1;
	rc = connect(s, dst, urnic_ds_addrlen(dst));
	len = sizeof(*src);
	if (!rc)
		rc = getsockname(s, (struct sockaddr *)src, &len);
	close(s);
	((struct sockaddr_in *)src)->sin_port = port;
	return rc;
}

/* ds_header: version, length, the UDP port and address the receiver answers. */
static void format_hdr(struct urnic_ds_qp *qp)
{
	memset(qp->hdr, 0, sizeof(qp->hdr));
	if (qp->local.ss_family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&qp->local;

		qp->hdr[0] = 4;
		qp->hdr_len = URNIC_DS_HDR4;
		memcpy(qp->hdr + 2, &a->sin_port, 2);
		memcpy(qp->hdr + 4, &a->sin_addr, 4);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&qp->local;

		qp->hdr[0] = 6;
		qp->hdr_len = URNIC_DS_HDR6;
		memcpy(qp->hdr + 2, &a->sin6_port, 2);
		memcpy(qp->hdr + 4, &a->sin6_flowinfo, 4);
		memcpy(qp->hdr + 8, &a->sin6_addr, 16);
	}
	qp->hdr[1] = qp->hdr_len;
}

int urnic_ds_post_recv(struct urnic_rs *rs, struct urnic_ds_qp *qp, uint32_t offset)
{
	struct ibv_sge sge[2] = {
		{ (uintptr_t)qp->rbuf + rs->rbuf_size, URNIC_DS_GRH, qp->rmr->lkey },
		{ (uintptr_t)qp->rbuf + offset, URNIC_RS_SNDLOWAT, qp->rmr->lkey },
	};
	struct ibv_recv_wr wr = { .wr_id = URNIC_RS_WR_RECV | offset,
				  .sg_list = sge,
				  .num_sge = 2 };
	struct ibv_recv_wr *bad;
	int rc = ibv_post_recv(qp->id->qp, &wr, &bad);

	return rc ? urnic_rs_err(rc) : 0;
}

/* The id on the local address's device: bound to it, or, for loopback or any, to the
 * device the route to DST takes. */
static int bind_id(struct urnic_ds_qp *qp, const struct sockaddr *dst)
{
	struct sockaddr_storage a = qp->local;

	((struct sockaddr_in *)&a)->sin_port = 0;
	if (!any_or_loopback((struct sockaddr *)&a) &&
	    !rdma_bind_addr(qp->id, (struct sockaddr *)&a))
		return 0;
	return rdma_resolve_addr(qp->id, NULL, (struct sockaddr *)dst, 2000);
}

static int create_qp(struct urnic_rs *rs, const struct sockaddr_storage *local,
		     const struct sockaddr *dst, struct urnic_ds_qp **out)
{
	struct urnic_ds_qp *qp = calloc(1, sizeof(*qp));
	struct ibv_qp_init_attr a = { 0 };
	struct epoll_event ev = { .events = EPOLLIN };

	if (!qp)
		return urnic_rs_err(ENOMEM);
	qp->local = *local;
	format_hdr(qp);
	qp->next = rs->dg->qps;
	rs->dg->qps = qp; /* freed with the rsocket on failure */
	if (rdma_create_id(NULL, &qp->id, qp, RDMA_PS_UDP) || bind_id(qp, dst))
		return -1;
	qp->cc = ibv_create_comp_channel(qp->id->verbs);
	if (!qp->cc || fcntl(qp->cc->fd, F_SETFL, fcntl(qp->cc->fd, F_GETFL) | O_NONBLOCK))
		return -1;
	qp->cq = ibv_create_cq(qp->id->verbs, rs->sq_size + rs->rq_size, qp, qp->cc, 0);
	if (!qp->cq)
		return -1;
	a.qp_context = qp;
	a.send_cq = a.recv_cq = qp->cq;
	a.qp_type = IBV_QPT_UD;
	a.sq_sig_all = 1;
	a.cap.max_send_wr = rs->sq_size;
	a.cap.max_recv_wr = rs->rq_size;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 2;
	a.cap.max_inline_data = rs->sq_inline;
	if (rdma_create_qp(qp->id, NULL, &a))
		return -1;
	rs->sq_inline = a.cap.max_inline_data;
	qp->rbuf = calloc(1, rs->rbuf_size + URNIC_DS_GRH);
	if (!qp->rbuf)
		return urnic_rs_err(ENOMEM);
	qp->smr = ibv_reg_mr(qp->id->qp->pd, rs->dg->sbuf, rs->sbuf_size, IBV_ACCESS_LOCAL_WRITE);
	qp->rmr = ibv_reg_mr(qp->id->qp->pd, qp->rbuf, rs->rbuf_size + URNIC_DS_GRH,
			     IBV_ACCESS_LOCAL_WRITE);
	if (!qp->smr || !qp->rmr)
		return -1;
	ev.data.ptr = qp;
	if (epoll_ctl(rs->dg->epfd, EPOLL_CTL_ADD, qp->cc->fd, &ev))
		return -1;
	for (uint32_t i = 0; i < rs->rq_size; i++)
		if (urnic_ds_post_recv(rs, qp, i * URNIC_RS_SNDLOWAT))
			return -1;
	ibv_req_notify_cq(qp->cq, 0);
	qp->armed = true;
	*out = qp;
	return 0;
}

void urnic_ds_free_qp(struct urnic_rs *rs, struct urnic_ds_qp *qp)
{
	if (qp->cc)
		epoll_ctl(rs->dg->epfd, EPOLL_CTL_DEL, qp->cc->fd, NULL);
	if (qp->id && qp->id->qp)
		rdma_destroy_qp(qp->id);
	if (qp->smr)
		ibv_dereg_mr(qp->smr);
	if (qp->rmr)
		ibv_dereg_mr(qp->rmr);
	if (qp->cq)
		ibv_destroy_cq(qp->cq);
	if (qp->cc)
		ibv_destroy_comp_channel(qp->cc);
	if (qp->id)
		rdma_destroy_id(qp->id);
	free(qp->rbuf);
	free(qp);
}

/* The destination ADDR, made with the QP of the local address it is reached from. */
int urnic_ds_get_dest(struct urnic_rs *rs, const struct sockaddr *addr, socklen_t len,
		      struct urnic_ds_dest **out)
{
	struct sockaddr_storage local;
	struct urnic_ds_dest *d;
	struct urnic_ds_qp *qp;
	int rc;

	if (!addr || len < urnic_ds_addrlen(addr) || addr->sa_family != rs->cm_domain)
		return urnic_rs_err(EINVAL);
	for (d = rs->dg->dests; d; d = d->next)
		if (urnic_ds_same_addr((struct sockaddr *)&d->addr, addr)) {
			*out = d;
			return 0;
		}
	urnic_rs_inside++;
	rc = src_addr(rs, addr, &local);
	for (qp = rs->dg->qps; !rc && qp; qp = qp->next)
		if (urnic_ds_same_addr((struct sockaddr *)&qp->local, (struct sockaddr *)&local))
			break;
	if (!rc && !qp)
		rc = create_qp(rs, &local, addr, &qp);
	urnic_rs_inside--;
	if (rc)
		return -1;
	d = calloc(1, sizeof(*d));
	if (!d)
		return urnic_rs_err(ENOMEM);
	memcpy(&d->addr, addr, urnic_ds_addrlen(addr));
	d->qp = qp;
	d->next = rs->dg->dests;
	rs->dg->dests = d;
	*out = d;
	return 0;
}

/* The AH to the peer's QP QPN on the device of address GID_IP (the address its UDP
 * bootstrap names): RoCEv2, the GID ::ffff:<IPv4> or the IPv6 address. */
int urnic_ds_make_ah(struct urnic_ds_dest *d, const uint8_t *gid_ip, int family, uint32_t qpn)
{
	struct ibv_ah_attr a = { 0 };
	union ibv_gid g;

	if (family == AF_INET) {
		memset(a.grh.dgid.raw, 0, 10);
		a.grh.dgid.raw[10] = a.grh.dgid.raw[11] = 0xff;
		memcpy(a.grh.dgid.raw + 12, gid_ip, 4);
	} else {
		memcpy(a.grh.dgid.raw, gid_ip, 16);
	}
	a.is_global = 1;
	a.grh.hop_limit = 64;
	a.grh.sgid_index = 1;
	a.port_num = d->qp->id->port_num ? d->qp->id->port_num : 1;
	/* The GID of the QP's own address: index 1 on urnic, else the first that matches. */
	for (int i = 0; i < 16; i++) {
		if (ibv_query_gid(d->qp->id->verbs, a.port_num, i, &g))
			break;
		if (family == AF_INET && !memcmp(g.raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) &&
		    !memcmp(g.raw + 12,
			    &((struct sockaddr_in *)rdma_get_local_addr(d->qp->id))->sin_addr, 4)) {
			a.grh.sgid_index = (uint8_t)i;
			break;
		}
	}
	if (d->ah)
		ibv_destroy_ah(d->ah);
	d->ah = ibv_create_ah(d->qp->id->qp->pd, &a);
	d->qpn = qpn;
	return d->ah ? 0 : -1;
}
