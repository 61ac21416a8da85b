/* SPDX-License-Identifier: MIT */
/*
 * id.c - rdma_cm_ids: creation and destruction, the registry the device sink finds them
 * in (by connection handle or number), binding to an address and a port, and address and
 * route resolution (rdma_create_id(3), rdma_bind_addr(3), rdma_resolve_addr(3),
 * rdma_resolve_route(3)). A RoCEv2 address resolves locally: the source is the bound
 * address or the one the host's routing picks, and it must be a urnic device's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cm/ports.h"
#include "cm/iw_cm.h"

#define EXPORT __attribute__((visibility("default")))

static struct urnic_rdma_id *registry;
static uint64_t next_number = 1;

/* Caller holds urnic_rdma_lock. */
void urnic_rdma_register(struct urnic_rdma_id *id)
{
	id->number = next_number++;
	id->next = registry;
	registry = id;
}

void urnic_rdma_unregister(struct urnic_rdma_id *id)
{
	for (struct urnic_rdma_id **pp = &registry; *pp; pp = &(*pp)->next)
		if (*pp == id) {
			*pp = id->next;
			return;
		}
}

struct urnic_rdma_id *urnic_rdma_find_conn(struct urnic_dev *d, uint32_t conn)
{
	for (struct urnic_rdma_id *id = registry; id; id = id->next)
		if (id->has_conn && id->conn == conn && id->dev && id->dev->d == d)
			return id;
	return NULL;
}

struct urnic_rdma_id *urnic_rdma_find_number(uint64_t number)
{
	for (struct urnic_rdma_id *id = registry; id; id = id->next)
		if (id->number == number)
			return id;
	return NULL;
}

/* A new id, not registered. Context: the sink too (no call into a device). */
struct urnic_rdma_id *urnic_rdma_id_new(struct rdma_event_channel *ch, void *context,
					enum rdma_port_space ps, enum ibv_qp_type qp_type)
{
	struct urnic_rdma_id *id = calloc(1, sizeof(*id));

	if (!id)
		return NULL;
	id->id.channel = ch;
	id->id.context = context;
	id->id.ps = ps;
	id->id.qp_type = qp_type;
	id->id.port_num = 1;
	id->qkey = RDMA_UDP_QKEY;
	id->afonly = -1;
	/* cma.c __rdma_create_id: a random 24-bit PSN, the QP's receive PSN. */
	if (getrandom(&id->seq_num, sizeof(id->seq_num), GRND_NONBLOCK) != sizeof(id->seq_num))
		id->seq_num = (uint32_t)random();
	id->seq_num &= 0xffffff;
	return id;
}

EXPORT int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
			  enum rdma_port_space ps)
{
	enum ibv_qp_type qpt;
	struct urnic_rdma_id *p;
	bool sync = !channel;

	if (!id) {
		errno = EINVAL;
		return -1;
	}
	switch (ps) {
	case RDMA_PS_TCP:
	case RDMA_PS_IB:
		qpt = IBV_QPT_RC;
		break;
	case RDMA_PS_UDP:
	case RDMA_PS_IPOIB:
		qpt = IBV_QPT_UD;
		break;
	default:
		errno = EINVAL;
		return -1;
	}
	if (sync && !(channel = rdma_create_event_channel()))
		return -1;
	p = urnic_rdma_id_new(channel, context, ps, qpt);
	if (!p) {
		if (sync)
			rdma_destroy_event_channel(channel);
		errno = ENOMEM;
		return -1;
	}
	p->sync = sync;
	pthread_mutex_lock(&urnic_rdma_lock);
	urnic_rdma_register(p);
	pthread_mutex_unlock(&urnic_rdma_lock);
	*id = &p->id;
	return 0;
}

static void addr_gid(const struct sockaddr *sa, uint8_t gid[16])
{
	memset(gid, 0, 16);
	if (sa->sa_family == AF_INET) {
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		memcpy(gid, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	}
}

static void set_port(struct sockaddr *sa, uint16_t port)
{
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)sa)->sin_port = htons(port);
	else if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
}

static uint16_t get_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return 0;
}

static socklen_t sa_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

static bool sa_is_any(const struct sockaddr *sa)
{
	uint8_t g[16];
	static const uint8_t zero[16];
	static const uint8_t v4any[16] = { [10] = 0xff, [11] = 0xff };

	addr_gid(sa, g);
	return !memcmp(g, zero, 16) || !memcmp(g, v4any, 16);
}

/* The id's device: its verbs context, the device's PD unless the application gave one
 * (librdmacm's ucma_get_device sets id->pd: pyverbs makes its PD object of it), and the
 * route's source GID. */
int urnic_rdma_set_dev(struct urnic_rdma_id *id, struct urnic_rdma_dev *rd)
{
	int rc = urnic_rdma_dev_iwarp(rd) ? 0 : urnic_rdma_dev_open_cm(rd);

	if (rc)
		return rc;
	id->dev = rd;
	id->id.verbs = rd->ctx;
	if (!id->id.pd)
		id->id.pd = rd->pd;
	/* iWARP: the device's one GID (siw's MAC-based gid[0]). */
	memcpy(&id->id.route.addr.addr.ibaddr.sgid, rd->d->gid[urnic_rdma_dev_iwarp(rd) ? 0 : 1],
	       16);
	id->id.route.addr.addr.ibaddr.pkey = 0xffff;
	return 0;
}

/* Whether the host holds the address (a UDP socket binds to it): a host address with no
 * urnic device is ENODEV, as cma.c finds no RDMA device for it; any other EADDRNOTAVAIL. */
static bool host_has(const struct sockaddr *sa)
{
	struct sockaddr_storage s;
	int fd = socket(sa->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0)
		return false;
	memcpy(&s, sa, sa_len(sa));
	set_port((struct sockaddr *)&s, 0);
	ok = bind(fd, (struct sockaddr *)&s, sa_len(sa)) == 0;
	close(fd);
	return ok;
}

static bool is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	return sa->sa_family == AF_INET6 &&
	       IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

/* Binds the id's source address (already in route.addr.src_addr) and port. A loopback
 * address no device holds binds as the wildcard does, with no device: cma.c's
 * cma_any_addr() counts 127.0.0.0/8 and ::1 as "any" (rdma_bind_addr(3) then leaves
 * id->verbs NULL), and the port is taken as on the wildcard. */
static int bind_src(struct urnic_rdma_id *id)
{
	struct sockaddr *src = &id->id.route.addr.src_addr;
	uint8_t g[16];
	uint16_t port = get_port(src);
	bool any = sa_is_any(src);
	int rc;

	if (!any) {
		struct urnic_rdma_dev *rd = urnic_rdma_dev_by_addr(src);

		if (!rd && !is_loopback(src))
			return host_has(src) ? -ENODEV : -EADDRNOTAVAIL;
		any = !rd;
		rc = rd ? urnic_rdma_set_dev(id, rd) : 0;
		if (rc)
			return rc;
		/* iWARP: the rdma_cm port is the TCP port (iw_cm.h). */
		if (urnic_rdma_dev_iwarp(rd)) {
			rc = urnic_rdma_iw_bind(id);
			if (rc) {
				id->dev = NULL;
				id->id.verbs = NULL;
			}
			return rc;
		}
	}
	addr_gid(src, g);
	if (any) {
		/* taken on the family's wildcard, ::ffff:0.0.0.0 or :: */
		memset(g + 12, 0, 4);
		if (src->sa_family == AF_INET6)
			memset(g, 0, 16);
	}
	rc = urnic_rdma_port_take(id->dev ? id->dev->d : NULL, g, id->id.ps, &port, id->reuseaddr);
	if (rc) {
		/* cma.c releases the device of a failed bind: the id is idle again. */
		if (!any) {
			id->dev = NULL;
			id->id.verbs = NULL;
		}
		return rc;
	}
	id->port = port;
	id->port_held = true;
	memcpy(id->port_addr, g, 16);
	set_port(src, port);
	id->state = URNIC_RDMA_ADDR_BOUND;
	return 0;
}

EXPORT int rdma_bind_addr(struct rdma_cm_id *cid, struct sockaddr *addr)
{
	struct urnic_rdma_id *id;

	if (!cid || !addr || (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)) {
		errno = EINVAL;
		return -1;
	}
	id = urnic_rdma_id_of(cid);
	if (id->state != URNIC_RDMA_IDLE) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&cid->route.addr.src_storage, addr, sa_len(addr));
	return urnic_rdma_ret(bind_src(id));
}

/* The source address the host's routing picks for dst (a connected UDP socket's). */
static int route_src(const struct sockaddr *dst, struct sockaddr_storage *src)
{
	struct sockaddr_storage tmp;
	socklen_t len = sizeof(*src);
	int fd = socket(dst->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int rc = 0;

	if (fd < 0)
		return -errno;
	memcpy(&tmp, dst, sa_len(dst));
	set_port((struct sockaddr *)&tmp, 4791);
	if (connect(fd, (struct sockaddr *)&tmp, sa_len(dst)) ||
	    getsockname(fd, (struct sockaddr *)src, &len))
		rc = -errno;
	close(fd);
	set_port((struct sockaddr *)src, 0);
	return rc;
}

/* Whether a RoCEv2 device receives on sa: its UDP port 4791 is held (urnic's devices
 * share it through SO_REUSEPORT, which this probe does not ask for). */
static bool roce_bound(const struct sockaddr *sa)
{
	struct sockaddr_storage s;
	int fd = socket(sa->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool held;

	if (fd < 0)
		return false;
	memcpy(&s, sa, sa_len(sa));
	set_port((struct sockaddr *)&s, 4791);
	held = bind(fd, (struct sockaddr *)&s, sa_len(sa)) != 0 && errno == EADDRINUSE;
	close(fd);
	return held;
}

/* The source for dst: the routing's choice, except that a destination on this host is
 * reached through lo, from 127.0.0.1 or from the destination address itself, which no
 * device of this process holds; then the process's first device sends, from its own
 * address, as a second host on the same wire would. */
static int pick_src(const struct sockaddr *dst, struct sockaddr_storage *s)
{
	struct urnic_rdma_dev *all;
	struct urnic_dev *d;
	int rc = route_src(dst, s);

	if (rc || urnic_rdma_dev_by_addr((struct sockaddr *)s) ||
	    !(is_loopback((struct sockaddr *)s) || host_has(dst)) || urnic_rdma_devs(&all) < 1)
		return rc;
	d = all[0].d;
	memset(s, 0, sizeof(*s));
	if (d->ipv6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)s;

		s6->sin6_family = AF_INET6;
		memcpy(&s6->sin6_addr, d->addr, 16);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)s;

		s4->sin_family = AF_INET;
		memcpy(&s4->sin_addr, d->addr, 4);
	}
	return 0;
}

/* ADDR_ERROR: no device holds the source the routing picks (cma.c finds no RDMA device
 * for it). */
static int addr_error(struct urnic_rdma_id *id, const struct sockaddr *dst)
{
	memcpy(&id->id.route.addr.dst_storage, dst, sa_len(dst));
	return urnic_rdma_queue_local(id, RDMA_CM_EVENT_ADDR_ERROR, -ENODEV);
}

static int resolve_addr(struct urnic_rdma_id *id, struct sockaddr *src, struct sockaddr *dst)
{
	struct rdma_addr *ra = &id->id.route.addr;
	struct sockaddr_storage s;
	int rc;

	if (id->state == URNIC_RDMA_IDLE) {
		if (src) {
			memcpy(&s, src, sa_len(src));
		} else {
			rc = pick_src(dst, &s);
			if (rc)
				return rc;
			if (!urnic_rdma_dev_by_addr((struct sockaddr *)&s))
				return addr_error(id, dst);
		}
		memcpy(&ra->src_storage, &s, sa_len((struct sockaddr *)&s));
		rc = bind_src(id);
		if (rc)
			return rc;
	} else if (id->state != URNIC_RDMA_ADDR_BOUND) {
		return -EINVAL;
	}
	if (!id->dev) {
		struct urnic_rdma_dev *rd;

		rc = pick_src(dst, &s);
		if (rc)
			return rc;
		rd = urnic_rdma_dev_by_addr((struct sockaddr *)&s);
		if (!rd || urnic_rdma_set_dev(id, rd))
			return addr_error(id, dst);
		memcpy(&ra->src_storage, &s, sa_len((struct sockaddr *)&s));
		set_port(&ra->src_addr, id->port);
		/* iWARP: the port bound on the wildcard becomes a TCP port of the device. */
		rc = urnic_rdma_dev_iwarp(rd) ? urnic_rdma_iw_bind(id) : 0;
		if (rc)
			return rc;
	}
	memcpy(&ra->dst_storage, dst, sa_len(dst));
	/* cma.c cma_resolve_loopback: a loopback destination is the source device itself,
	 * its GID the destination GID, unless a device (another host) is on it. */
	if (is_loopback(dst) && !urnic_rdma_dev_by_addr(dst) && !roce_bound(dst))
		ra->addr.ibaddr.dgid = ra->addr.ibaddr.sgid;
	else
		addr_gid(dst, (uint8_t *)&ra->addr.ibaddr.dgid);
	id->state = URNIC_RDMA_ADDR_RESOLVED;
	return urnic_rdma_queue_local(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
}

EXPORT int rdma_resolve_addr(struct rdma_cm_id *cid, struct sockaddr *src_addr,
			     struct sockaddr *dst_addr, int timeout_ms)
{
	struct urnic_rdma_id *id;
	int rc;

	(void)timeout_ms;
	if (!cid || !dst_addr ||
	    (dst_addr->sa_family != AF_INET && dst_addr->sa_family != AF_INET6)) {
		errno = EINVAL;
		return -1;
	}
	id = urnic_rdma_id_of(cid);
	rc = resolve_addr(id, src_addr, dst_addr);
	if (rc)
		return urnic_rdma_ret(rc);
	return urnic_rdma_wait_event(id, RDMA_CM_EVENT_ADDR_RESOLVED);
}

/* The path record rdma-core's ucma_query_route fills for RoCE (ibv_sa_path_rec). */
static void fill_path(struct urnic_rdma_id *id)
{
	struct ibv_sa_path_rec *p = &id->path;

	memset(p, 0, sizeof(*p));
	p->sgid = id->id.route.addr.addr.ibaddr.sgid;
	p->dgid = id->id.route.addr.addr.ibaddr.dgid;
	p->pkey = htons(0xffff);
	p->mtu = (uint8_t)id->dev->d->active_mtu;
	p->mtu_selector = 2; /* exactly */
	p->hop_limit = 64;
	p->traffic_class = id->tos;
	p->reversible = 1;
	p->numb_path = 1;
	p->packet_life_time = URNIC_CM_RDMA_PACKET_LIFETIME;
	p->packet_life_time_selector = 2;
	p->rate = 3; /* 10 Gb/s: rxe's */
	p->rate_selector = 2;
	id->id.route.num_paths = 1;
	id->id.route.path_rec = p;
}

EXPORT int rdma_resolve_route(struct rdma_cm_id *cid, int timeout_ms)
{
	struct urnic_rdma_id *id;
	int rc;

	(void)timeout_ms;
	if (!cid) {
		errno = EINVAL;
		return -1;
	}
	id = urnic_rdma_id_of(cid);
	if (id->state != URNIC_RDMA_ADDR_RESOLVED || !id->dev) {
		errno = EINVAL;
		return -1;
	}
	fill_path(id);
	id->state = URNIC_RDMA_ROUTE_RESOLVED;
	rc = urnic_rdma_queue_local(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	if (rc)
		return urnic_rdma_ret(rc);
	return urnic_rdma_wait_event(id, RDMA_CM_EVENT_ROUTE_RESOLVED);
}

EXPORT int rdma_destroy_id(struct rdma_cm_id *cid)
{
	struct urnic_rdma_id *id;

	if (!cid) {
		errno = EINVAL;
		return -1;
	}
	id = urnic_rdma_id_of(cid);
	if (id->sync && cid->event) {
		rdma_ack_cm_event(cid->event);
		cid->event = NULL;
	}
	pthread_mutex_lock(&urnic_rdma_lock);
	id->destroying = true;
	pthread_mutex_unlock(&urnic_rdma_lock);
	urnic_rdma_cm_destroy(id);
	urnic_rdma_mc_leave_all(id);
	pthread_mutex_lock(&urnic_rdma_lock);
	urnic_rdma_unregister(id);
	while (id->events_out > 0)
		pthread_cond_wait(&urnic_rdma_cond, &urnic_rdma_lock);
	pthread_mutex_unlock(&urnic_rdma_lock);
	urnic_rdma_purge(urnic_rdma_channel_of(cid->channel), id);
	if (id->port_held)
		urnic_rdma_port_drop(id->port_addr, cid->ps, id->port);
	if (id->sync)
		rdma_destroy_event_channel(cid->channel);
	free(id->ep_qp_attr);
	free(id);
	return 0;
}

EXPORT __be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	return htons(get_port(&id->route.addr.src_addr));
}

EXPORT __be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return htons(get_port(&id->route.addr.dst_addr));
}
