/* SPDX-License-Identifier: MIT */
/*
 * addrinfo.c - the convenience calls over the rest: rdma_getaddrinfo(3) (getaddrinfo
 * with the RAI_ flags and the port space's QP type), rdma_create_ep(3) and
 * rdma_destroy_ep, rdma_get_request(3), rdma_migrate_id(3), rdma_event_str(3) with
 * librdmacm's strings. Multicast joins: mcast.c; rsockets: rsocket*.c.
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "cm/rdmacm.h"

#define EXPORT __attribute__((visibility("default")))

static int gai_errno(int rc)
{
	switch (rc) {
	case EAI_MEMORY:
		return ENOMEM;
	case EAI_FAMILY:
		return EAFNOSUPPORT;
	case EAI_SYSTEM:
		return errno;
	default:
		return ENODEV;
	}
}

static struct sockaddr *dup_sa(const struct sockaddr *sa, socklen_t len)
{
	struct sockaddr *p = malloc(len);

	if (p)
		memcpy(p, sa, len);
	return p;
}

/* One rdma_addrinfo from one getaddrinfo result (ucma_convert_to_rai). */
static struct rdma_addrinfo *convert(const struct addrinfo *ai, const struct rdma_addrinfo *hints)
{
	struct rdma_addrinfo *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->ai_flags = hints ? hints->ai_flags : 0;
	r->ai_family = ai->ai_family;
	r->ai_port_space = hints && hints->ai_port_space ? hints->ai_port_space : RDMA_PS_TCP;
	r->ai_qp_type = hints && hints->ai_qp_type	  ? hints->ai_qp_type
			: r->ai_port_space == RDMA_PS_UDP ? IBV_QPT_UD
							  : IBV_QPT_RC;
	if (r->ai_flags & RAI_PASSIVE) {
		r->ai_src_addr = dup_sa(ai->ai_addr, ai->ai_addrlen);
		r->ai_src_len = ai->ai_addrlen;
	} else {
		r->ai_dst_addr = dup_sa(ai->ai_addr, ai->ai_addrlen);
		r->ai_dst_len = ai->ai_addrlen;
		if (hints && hints->ai_src_addr && hints->ai_src_len) {
			r->ai_src_addr = dup_sa(hints->ai_src_addr, hints->ai_src_len);
			r->ai_src_len = hints->ai_src_len;
		}
	}
	if (ai->ai_canonname) {
		char **name =
			r->ai_flags & RAI_PASSIVE ? &r->ai_src_canonname : &r->ai_dst_canonname;

		*name = strdup(ai->ai_canonname);
	}
	return r;
}

/* Neither node nor service: one rdma_addrinfo made of the hints' own addresses and
 * fields, as rdma-core's rdma_getaddrinfo does (pyverbs' AddrInfo(src=...) asks so for a
 * multicast group's address). */
static int hints_only(const struct rdma_addrinfo *hints, struct rdma_addrinfo **res)
{
	struct rdma_addrinfo *r = calloc(1, sizeof(*r));

	if (!r)
		goto nomem;
	*r = (struct rdma_addrinfo){ .ai_flags = hints->ai_flags,
				     .ai_family = hints->ai_family,
				     .ai_qp_type = hints->ai_qp_type,
				     .ai_port_space = hints->ai_port_space };
	if (hints->ai_dst_addr && hints->ai_dst_len) {
		if (!(r->ai_dst_addr = dup_sa(hints->ai_dst_addr, hints->ai_dst_len)))
			goto nomem;
		r->ai_dst_len = hints->ai_dst_len;
	}
	if (hints->ai_src_addr && hints->ai_src_len) {
		if (!(r->ai_src_addr = dup_sa(hints->ai_src_addr, hints->ai_src_len)))
			goto nomem;
		r->ai_src_len = hints->ai_src_len;
	}
	*res = r;
	return 0;
nomem:
	rdma_freeaddrinfo(r);
	errno = ENOMEM;
	return -1;
}

EXPORT int rdma_getaddrinfo(const char *node, const char *service,
			    const struct rdma_addrinfo *hints, struct rdma_addrinfo **res)
{
	struct addrinfo h, *ai, *p;
	struct rdma_addrinfo *head = NULL, **tail = &head;
	int rc;

	if (!res || (!node && !service && !hints)) {
		errno = EINVAL;
		return -1;
	}
	if (!node && !service)
		return hints_only(hints, res);
	memset(&h, 0, sizeof(h));
	if (hints) {
		if (hints->ai_flags & RAI_PASSIVE)
			h.ai_flags |= AI_PASSIVE;
		if (hints->ai_flags & RAI_NUMERICHOST)
			h.ai_flags |= AI_NUMERICHOST;
		if (hints->ai_family == AF_INET || hints->ai_family == AF_INET6)
			h.ai_family = hints->ai_family;
	}
	h.ai_socktype = hints && hints->ai_port_space == RDMA_PS_UDP ? SOCK_DGRAM : SOCK_STREAM;
	rc = getaddrinfo(node, service, &h, &ai);
	if (rc) {
		errno = gai_errno(rc);
		return -1;
	}
	for (p = ai; p; p = p->ai_next) {
		if (p->ai_family != AF_INET && p->ai_family != AF_INET6)
			continue;
		*tail = convert(p, hints);
		if (!*tail) {
			freeaddrinfo(ai);
			rdma_freeaddrinfo(head);
			errno = ENOMEM;
			return -1;
		}
		tail = &(*tail)->ai_next;
	}
	freeaddrinfo(ai);
	if (!head) {
		errno = ENODEV;
		return -1;
	}
	*res = head;
	return 0;
}

EXPORT void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res) {
		struct rdma_addrinfo *next = res->ai_next;

		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
		res = next;
	}
}

/* A synchronous id, bound (passive) or resolved to the route, with a QP if asked. */
EXPORT int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
			  struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cid;

	if (!id || !res) {
		errno = EINVAL;
		return -1;
	}
	if (rdma_create_id(NULL, &cid, NULL, (enum rdma_port_space)res->ai_port_space))
		return -1;
	cid->pd = pd;
	if (res->ai_flags & RAI_PASSIVE) {
		if (rdma_bind_addr(cid, res->ai_src_addr))
			goto fail;
		if (qp_init_attr) {
			struct urnic_rdma_id *p = urnic_rdma_id_of(cid);

			p->ep_qp_attr = malloc(sizeof(*qp_init_attr));
			if (!p->ep_qp_attr) {
				errno = ENOMEM;
				goto fail;
			}
			*p->ep_qp_attr = *qp_init_attr;
		}
		*id = cid;
		return 0;
	} else if (rdma_resolve_addr(cid, res->ai_src_addr, res->ai_dst_addr, 2000) ||
		   rdma_resolve_route(cid, 2000)) {
		goto fail;
	}
	if (qp_init_attr) {
		qp_init_attr->qp_type = (enum ibv_qp_type)res->ai_qp_type;
		if (rdma_create_qp(cid, pd, qp_init_attr))
			goto fail;
	}
	*id = cid;
	return 0;
fail : {
	int e = errno;

	rdma_destroy_id(cid);
	errno = e;
	return -1;
}
}

EXPORT void rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (!id)
		return;
	if (id->qp)
		rdma_destroy_qp(id);
	if (id->srq)
		rdma_destroy_srq(id);
	rdma_destroy_id(id);
}

/* The next connection request of a synchronous listener: a synchronous id. */
EXPORT int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct urnic_rdma_id *l;
	struct rdma_cm_event *ev;
	struct urnic_rdma_id *child;

	if (!listen || !id) {
		errno = EINVAL;
		return -1;
	}
	l = urnic_rdma_id_of(listen);
	if (!l->sync) {
		errno = EINVAL;
		return -1;
	}
	if (rdma_get_cm_event(listen->channel, &ev))
		return -1;
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST || ev->status) {
		int e = ev->status ? -ev->status : EINVAL;

		rdma_ack_cm_event(ev);
		errno = e > 0 ? e : EINVAL;
		return -1;
	}
	child = urnic_rdma_id_of(ev->id);
	if (rdma_migrate_id(ev->id, NULL)) {
		rdma_ack_cm_event(ev);
		return -1;
	}
	child->sync = true;
	ev->id->event = ev;
	if (l->ep_qp_attr) {
		struct ibv_qp_init_attr a = *l->ep_qp_attr;

		a.qp_type = listen->qp_type;
		if (listen->pd && listen->pd->context == ev->id->verbs)
			ev->id->pd = listen->pd;
		if (rdma_create_qp(ev->id, ev->id->pd, &a)) {
			int e = errno;

			rdma_destroy_id(ev->id);
			errno = e;
			return -1;
		}
	}
	*id = ev->id;
	return 0;
}

/* Moves the id to another channel (NULL: its own, synchronous), with the events
 * still queued for it (rdma_migrate_id(3)). */
EXPORT int rdma_migrate_id(struct rdma_cm_id *cid, struct rdma_event_channel *channel)
{
	struct urnic_rdma_id *id;
	struct rdma_event_channel *old;
	bool sync = !channel;

	if (!cid) {
		errno = EINVAL;
		return -1;
	}
	id = urnic_rdma_id_of(cid);
	if (sync && !(channel = rdma_create_event_channel()))
		return -1;
	/* A synchronous id's last event is acked here, as librdmacm's cma.c does: the
	 * application never sees it, and rdma_destroy_id(3) waits for every event's ack. */
	if (id->sync && cid->event) {
		rdma_ack_cm_event(cid->event);
		cid->event = NULL;
	}
	old = cid->channel;
	pthread_mutex_lock(&urnic_rdma_lock);
	cid->channel = channel;
	pthread_mutex_unlock(&urnic_rdma_lock);
	urnic_rdma_move(urnic_rdma_channel_of(old), urnic_rdma_channel_of(channel), id);
	if (id->sync && !sync)
		rdma_destroy_event_channel(old);
	id->sync = sync;
	return 0;
}

EXPORT const char *rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	if ((unsigned int)event < sizeof(names) / sizeof(names[0]) && names[event])
		return names[event];
	return "UNKNOWN EVENT";
}
