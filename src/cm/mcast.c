/* SPDX-License-Identifier: MIT */
/*
 * mcast.c - multicast joins of UD ids (rdma_join_multicast(3), rdma_join_multicast_ex,
 * rdma_leave_multicast(3)) as the kernel's cma.c makes them on RoCEv2 (cma_iboe_join_multicast:
 * the group's MGID is its IPv4-mapped address, or the IPv6 address itself) and as librdmacm
 * completes them (ucma_process_join: the id's QP is attached to the group when the
 * MULTICAST_JOIN event is read). The group is joined on the device's socket by the attach.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cm/rdmacm.h"

#define EXPORT __attribute__((visibility("default")))

static socklen_t mc_addrlen(const struct sockaddr *sa)
{
	if (!sa)
		return 0;
	if (sa->sa_family == AF_INET)
		return sizeof(struct sockaddr_in);
	if (sa->sa_family == AF_INET6)
		return sizeof(struct sockaddr_in6);
	return 0;
}

/* cma_iboe_set_mgid for a RoCEv2 GID: ::ffff:a.b.c.d, or the IPv6 group itself. */
static void mc_mgid(const struct sockaddr *sa, union ibv_gid *mgid)
{
	memset(mgid, 0, sizeof(*mgid));
	if (sa->sa_family == AF_INET6) {
		memcpy(mgid->raw, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		return;
	}
	mgid->raw[10] = mgid->raw[11] = 0xff;
	memcpy(mgid->raw + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
}

static bool mc_zero(const union ibv_gid *g)
{
	static const uint8_t v4any[16] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t zero[16];

	return !memcmp(g->raw, zero, 16) || !memcmp(g->raw, v4any, 16);
}

static bool mc_listed(struct urnic_rdma_id *id, const struct urnic_rdma_mc *mc)
{
	for (struct urnic_rdma_mc *p = id->mcs; p; p = p->next)
		if (p == mc)
			return true;
	return false;
}

/*
 * The join's event (cma_make_mc_event, ib_init_ah_from_mcmember for RoCE: no LID, the
 * GRH to the MGID from the RoCEv2 GID, hop limit 64 for RoCEv2; QPN 0xFFFFFF and the id's
 * Q_Key) with the join's context as private data (librdmacm). With a QP and not send-only,
 * the QP is attached here; a failed attach is MULTICAST_ERROR (ucma_process_join).
 */
void urnic_rdma_mc_event(struct urnic_rdma_item *it, struct urnic_rdma_event *e)
{
	struct urnic_rdma_id *id = it->id;
	struct ibv_ah_attr *ah = &e->ev.param.ud.ah_attr;
	struct urnic_rdma_mc mc;
	bool attach;
	int rc = 0;

	pthread_mutex_lock(&urnic_rdma_lock);
	if (!mc_listed(id, it->mc)) {
		/* Left before its event was read: the leave took it out of the queue, but
		 * this item was already taken; report the failure, not a stale group. */
		pthread_mutex_unlock(&urnic_rdma_lock);
		e->ev.event = RDMA_CM_EVENT_MULTICAST_ERROR;
		e->ev.status = -EADDRNOTAVAIL;
		return;
	}
	mc = *it->mc;
	pthread_mutex_unlock(&urnic_rdma_lock);
	e->ev.param.ud.private_data = mc.context;
	e->ev.status = it->status;
	if (it->status || it->type != RDMA_CM_EVENT_MULTICAST_JOIN) {
		e->ev.event = RDMA_CM_EVENT_MULTICAST_ERROR;
		return;
	}
	e->ev.event = RDMA_CM_EVENT_MULTICAST_JOIN;
	ah->is_global = 1;
	ah->grh.dgid = mc.mgid;
	ah->grh.sgid_index = 1;
	ah->grh.hop_limit = 64;
	ah->grh.traffic_class = 0;
	ah->dlid = 0;
	ah->sl = 0;
	ah->port_num = id->id.port_num ? id->id.port_num : 1;
	e->ev.param.ud.qp_num = 0xffffff;
	e->ev.param.ud.qkey = id->qkey;
	attach =
		id->id.qp && mc.join_flags != RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER && !mc.attached;
	if (attach)
		rc = ibv_attach_mcast(id->id.qp, &mc.mgid, 0);
	if (rc) {
		e->ev.event = RDMA_CM_EVENT_MULTICAST_ERROR;
		e->ev.status = -rc;
		return;
	}
	pthread_mutex_lock(&urnic_rdma_lock);
	if (attach && mc_listed(id, it->mc))
		it->mc->attached = true;
	pthread_mutex_unlock(&urnic_rdma_lock);
}

/* Drops the join's queued events (rdma-core's leave waits for them instead). */
static void mc_purge(struct urnic_rdma_id *id, struct urnic_rdma_mc *mc)
{
	struct urnic_rdma_channel *c = urnic_rdma_channel_of(id->id.channel);
	struct urnic_rdma_item **pp, *it;

	pthread_mutex_lock(&c->lock);
	c->tail = NULL;
	for (pp = &c->head; (it = *pp);) {
		if (it->mc == mc) {
			*pp = it->next;
			free(it);
			continue;
		}
		c->tail = it;
		pp = &it->next;
	}
	pthread_mutex_unlock(&c->lock);
}

static void mc_free(struct urnic_rdma_id *id, struct urnic_rdma_mc *mc)
{
	if (mc->attached && id->id.qp)
		ibv_detach_mcast(id->id.qp, &mc->mgid, 0);
	mc_purge(id, mc);
	free(mc);
}

static int mc_join(struct urnic_rdma_id *id, const struct sockaddr *addr, uint16_t flags,
		   void *context)
{
	socklen_t len = mc_addrlen(addr);
	struct urnic_rdma_mc *mc;
	struct urnic_rdma_item *it;

	if (!len)
		return -EINVAL;
	/* cma.c rdma_join_multicast: a UD id with a device, bound or address-resolved. */
	if (!id->dev || id->id.qp_type != IBV_QPT_UD ||
	    (id->state != URNIC_RDMA_ADDR_BOUND && id->state != URNIC_RDMA_ADDR_RESOLVED))
		return -EINVAL;
	mc = calloc(1, sizeof(*mc));
	it = calloc(1, sizeof(*it));
	if (!mc || !it) {
		free(mc);
		free(it);
		return -ENOMEM;
	}
	memcpy(&mc->addr, addr, len);
	mc->addrlen = len;
	mc->context = context;
	mc->join_flags = flags;
	mc_mgid(addr, &mc->mgid);
	/* cma_iboe_join_multicast: the zero address is no group (EINVAL, no event). */
	if (mc_zero(&mc->mgid)) {
		free(mc);
		free(it);
		return -EINVAL;
	}
	pthread_mutex_lock(&urnic_rdma_lock);
	mc->next = id->mcs;
	id->mcs = mc;
	pthread_mutex_unlock(&urnic_rdma_lock);
	it->id = id;
	it->mc = mc;
	it->local = true;
	it->type = RDMA_CM_EVENT_MULTICAST_JOIN;
	urnic_rdma_queue(urnic_rdma_channel_of(id->id.channel), it);
	return 0;
}

static int join(struct rdma_cm_id *cid, const struct sockaddr *addr, uint16_t flags, void *context)
{
	struct urnic_rdma_id *id;
	int rc;

	if (!cid) {
		errno = EINVAL;
		return -1;
	}
	id = urnic_rdma_id_of(cid);
	rc = mc_join(id, addr, flags, context);
	if (rc)
		return urnic_rdma_ret(rc);
	return urnic_rdma_wait_event(id, RDMA_CM_EVENT_MULTICAST_JOIN);
}

EXPORT int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	return join(id, addr, RDMA_MC_JOIN_FLAG_FULLMEMBER, context);
}

/* rdma_join_multicast_ex: unknown comp_mask bits are ENOTSUP; the address and the join
 * flags are required, and flags beyond the known ones are EINVAL (librdmacm). */
EXPORT int rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *attr,
				  void *context)
{
	if (!attr) {
		errno = EINVAL;
		return -1;
	}
	if (attr->comp_mask >= RDMA_CM_JOIN_MC_ATTR_RESERVED) {
		errno = ENOTSUP;
		return -1;
	}
	if (!(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_ADDRESS) ||
	    !(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS) ||
	    attr->join_flags >= RDMA_MC_JOIN_FLAG_RESERVED) {
		errno = EINVAL;
		return -1;
	}
	return join(id, attr->addr, (uint16_t)attr->join_flags, context);
}

/* rdma_leave_multicast(3): the join of exactly this address (EADDRNOTAVAIL if none),
 * its QP detached, its events not yet read dropped. */
EXPORT int rdma_leave_multicast(struct rdma_cm_id *cid, struct sockaddr *addr)
{
	socklen_t len = mc_addrlen(addr);
	struct urnic_rdma_id *id;
	struct urnic_rdma_mc **pp, *mc = NULL;

	if (!cid || !len) {
		errno = EINVAL;
		return -1;
	}
	id = urnic_rdma_id_of(cid);
	pthread_mutex_lock(&urnic_rdma_lock);
	for (pp = &id->mcs; *pp; pp = &(*pp)->next)
		if ((*pp)->addrlen == len && !memcmp(&(*pp)->addr, addr, len)) {
			mc = *pp;
			*pp = mc->next;
			break;
		}
	pthread_mutex_unlock(&urnic_rdma_lock);
	if (!mc) {
		errno = EADDRNOTAVAIL;
		return -1;
	}
	mc_free(id, mc);
	return 0;
}

/* rdma_destroy_qp: the QP leaves its groups first (a QP still attached cannot be
 * destroyed); the joins stay. */
void urnic_rdma_mc_detach_all(struct urnic_rdma_id *id)
{
	/* Not under urnic_rdma_lock: the device's sink takes it under the device lock. */
	for (struct urnic_rdma_mc *mc = id->mcs; mc; mc = mc->next)
		if (mc->attached && id->id.qp) {
			ibv_detach_mcast(id->id.qp, &mc->mgid, 0);
			mc->attached = false;
		}
}

void urnic_rdma_mc_leave_all(struct urnic_rdma_id *id)
{
	struct urnic_rdma_mc *mc;

	pthread_mutex_lock(&urnic_rdma_lock);
	mc = id->mcs;
	id->mcs = NULL;
	pthread_mutex_unlock(&urnic_rdma_lock);
	while (mc) {
		struct urnic_rdma_mc *next = mc->next;

		mc_free(id, mc);
		mc = next;
	}
}
