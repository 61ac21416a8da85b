/* SPDX-License-Identifier: MIT */
/*
 * conn.c - connecting: rdma_listen, rdma_connect, rdma_accept, rdma_reject,
 * rdma_establish, rdma_disconnect, rdma_notify, as the kernel's cma.c drives the IB CM
 * for them (cma_connect_ib, cma_resolve_ib_udp, cma_accept_ib, cma_ib_listen), here on
 * the device CM (dev/cm.h) between urnic_dev_cm_begin and _end; QP changes happen
 * outside that window, since verbs take the device lock.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cm/iw_cm.h"
#include "cm/ports.h"

#define EXPORT __attribute__((visibility("default")))

enum {
	REQ_PDATA = 92,
	SIDR_REQ_PDATA = 216,
	REP_PDATA = 196,
	REJ_PDATA = 148,
	DREQ_PDATA = 220,
	SIDR_REP_PDATA = 136
};

int urnic_rdma_query(struct urnic_rdma_id *id, struct urnic_cm_conn_info *info)
{
	uint64_t now;
	struct urnic_cm *cm;
	int rc;

	if (!id->dev || !id->has_conn)
		return -EINVAL;
	cm = urnic_dev_cm_begin(id->dev->d, &now);
	if (!cm)
		return -ENODEV;
	rc = urnic_cm_query(cm, id->conn, info);
	urnic_dev_cm_end(id->dev->d);
	return rc;
}

/* Ends what the id holds in the CM: its listens and its connection. */
void urnic_rdma_cm_destroy(struct urnic_rdma_id *id)
{
	urnic_rdma_iw_destroy(id);
	for (int i = 0; i < id->nlistens; i++) {
		struct urnic_rdma_listen *l = &id->listens[i];
		uint64_t now;
		struct urnic_cm *cm = urnic_dev_cm_begin(l->dev->d, &now);

		if (cm) {
			urnic_cm_unlisten(cm, l->handle);
			urnic_dev_cm_end(l->dev->d);
		}
	}
	id->nlistens = 0;
	if (id->has_conn && id->dev) {
		uint64_t now;
		struct urnic_cm *cm = urnic_dev_cm_begin(id->dev->d, &now);

		if (cm) {
			urnic_cm_destroy(cm, id->conn, now);
			urnic_dev_cm_end(id->dev->d);
		}
	}
}

static uint64_t service_id(struct urnic_rdma_id *id, uint16_t port)
{
	return urnic_cma_service_id((enum urnic_rdma_ps)id->id.ps, port);
}

static void sa_bytes(const struct sockaddr *sa, uint8_t out[16], uint16_t *port)
{
	memset(out, 0, 16);
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

		memcpy(out, &s6->sin6_addr, 16);
		*port = ntohs(s6->sin6_port);
	} else {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

		memcpy(out + 12, &s4->sin_addr, 4);
		*port = ntohs(s4->sin_port);
	}
}

/* The cma header and the application's data after it: the private data length, or
 * -EINVAL when the data does not fit in cap (rdma_connect(3): 56 bytes for RC). */
static int cma_pdata(struct urnic_rdma_id *id, const void *user, uint8_t user_len, uint8_t *buf,
		     size_t cap)
{
	struct urnic_cma_hdr h;
	uint16_t dport;

	if ((size_t)user_len + URNIC_CMA_HDR_BYTES > cap)
		return -EINVAL;
	memset(&h, 0, sizeof(h));
	h.ip_version = id->id.route.addr.src_addr.sa_family == AF_INET6 ? 6 : 4;
	sa_bytes(&id->id.route.addr.src_addr, h.src_addr, &h.src_port);
	sa_bytes(&id->id.route.addr.dst_addr, h.dst_addr, &dport);
	if (urnic_cma_hdr_encode(&h, buf, cap) != URNIC_CMA_HDR_BYTES)
		return -EINVAL;
	if (user_len)
		memcpy(buf + URNIC_CMA_HDR_BYTES, user, user_len);
	return URNIC_CMA_HDR_BYTES + user_len;
}

EXPORT int rdma_listen(struct rdma_cm_id *cid, int backlog)
{
	struct urnic_rdma_id *id;
	struct urnic_rdma_dev *all;
	int n, rc = 0;

	if (!cid) {
		errno = EINVAL;
		return -1;
	}
	id = urnic_rdma_id_of(cid);
	if (id->state == URNIC_RDMA_IDLE) {
		struct sockaddr_in any = { .sin_family = AF_INET };

		if (rdma_bind_addr(cid, (struct sockaddr *)&any))
			return -1;
	}
	if (id->state != URNIC_RDMA_ADDR_BOUND) {
		errno = EINVAL;
		return -1;
	}
	if (backlog <= 0 || backlog > 1024)
		backlog = 1024;
	if (id->iw)
		return urnic_rdma_ret(urnic_rdma_iw_listen(id, backlog));
	rc = urnic_rdma_port_listen(id->port_addr, cid->ps, id->port);
	if (rc)
		return urnic_rdma_ret(rc);
	n = urnic_rdma_devs(&all);
	for (int i = 0; i < n && !rc; i++) {
		struct urnic_rdma_dev *rd = &all[i];
		struct urnic_cm *cm;
		uint64_t now;
		uint32_t h;

		if ((id->dev && id->dev != rd) || urnic_rdma_dev_iwarp(rd) ||
		    (!id->dev && urnic_rdma_dev_uet(rd)))
			continue;
		rc = urnic_rdma_dev_open_cm(rd);
		if (rc)
			break;
		cm = urnic_dev_cm_begin(rd->d, &now);
		if (!cm) {
			rc = -ENODEV;
			break;
		}
		rc = urnic_cm_listen(cm, service_id(id, id->port), (uint32_t)backlog, id->number,
				     &h);
		urnic_dev_cm_end(rd->d);
		if (!rc) {
			id->listens[id->nlistens].dev = rd;
			id->listens[id->nlistens++].handle = h;
		}
	}
	if (!rc && !id->dev)
		rc = urnic_rdma_iw_listen_any(id, backlog);
	if (!id->dev && (id->nlistens || id->iw))
		cid->verbs = NULL;
	if (rc) {
		urnic_rdma_cm_destroy(id);
		return urnic_rdma_ret(rc);
	}
	id->state = URNIC_RDMA_LISTEN;
	return 0;
}

/* The device's limit for responder resources and initiator depth. */
static uint8_t max_rd_atom(struct urnic_rdma_id *id)
{
	struct ibv_device_attr a;

	if (ibv_query_device(id->id.verbs, &a) || a.max_qp_rd_atom > 255)
		return 16;
	return (uint8_t)a.max_qp_rd_atom;
}
/* The connection the CM made for the id, under the lock the sink finds ids by. */
static void hold_conn(struct urnic_rdma_id *id, uint32_t conn)
{
	pthread_mutex_lock(&urnic_rdma_lock);
	id->conn = conn;
	id->has_conn = true;
	pthread_mutex_unlock(&urnic_rdma_lock);
}

static int connect_ud(struct urnic_rdma_id *id, struct rdma_conn_param *p)
{
	struct urnic_cm_sidr_param sp;
	uint8_t pdata[SIDR_REQ_PDATA];
	struct urnic_cm *cm;
	uint64_t now;
	uint32_t conn;
	int len, rc;

	len = cma_pdata(id, p ? p->private_data : NULL, p ? p->private_data_len : 0, pdata,
			sizeof(pdata));
	if (len < 0)
		return len;
	memset(&sp, 0, sizeof(sp));
	sp.service_id = service_id(id, ntohs(rdma_get_dst_port(&id->id)));
	memcpy(sp.peer.gid, &id->id.route.addr.addr.ibaddr.dgid, 16);
	sp.pkey = 0xffff;
	sp.timeout_ms = 1u << (URNIC_CM_RDMA_RESPONSE_TIMEOUT - 8);
	sp.max_cm_retries = URNIC_CM_RDMA_MAX_RETRIES;
	sp.private_data = pdata;
	sp.private_data_len = (uint8_t)len;
	sp.user = id->number;
	cm = urnic_dev_cm_begin(id->dev->d, &now);
	if (!cm)
		return -ENODEV;
	rc = urnic_cm_sidr_request(cm, &sp, now, &conn);
	if (!rc)
		hold_conn(id, conn);
	urnic_dev_cm_end(id->dev->d);
	return rc;
}

static void req_param(struct urnic_rdma_id *id, struct rdma_conn_param *p,
		      struct urnic_cm_connect_param *cp)
{
	uint8_t max = max_rd_atom(id);

	memset(cp, 0, sizeof(*cp));
	cp->service_id = service_id(id, ntohs(rdma_get_dst_port(&id->id)));
	memcpy(cp->peer.gid, &id->id.route.addr.addr.ibaddr.dgid, 16);
	memcpy(cp->local_gid, &id->id.route.addr.addr.ibaddr.sgid, 16);
	cp->qpn = id->id.qp ? id->id.qp->qp_num : (p ? p->qp_num : 0);
	cp->starting_psn = id->seq_num;
	cp->transport = URNIC_CM_TRANSPORT_RC;
	id->conn_resp_res = p ? p->responder_resources : RDMA_MAX_RESP_RES;
	id->conn_init_depth = p ? p->initiator_depth : RDMA_MAX_INIT_DEPTH;
	cp->responder_resources = id->conn_resp_res == RDMA_MAX_RESP_RES ? max : id->conn_resp_res;
	cp->initiator_depth =
		id->conn_init_depth == RDMA_MAX_INIT_DEPTH ? max : id->conn_init_depth;
	cp->remote_cm_response_timeout = URNIC_CM_RDMA_RESPONSE_TIMEOUT;
	cp->local_cm_response_timeout = URNIC_CM_RDMA_RESPONSE_TIMEOUT;
	cp->packet_life_time = URNIC_CM_RDMA_PACKET_LIFETIME;
	cp->max_cm_retries = URNIC_CM_RDMA_MAX_RETRIES;
	cp->retry_count = p ? (p->retry_count > 7 ? 7 : p->retry_count) : 7;
	cp->rnr_retry_count = p ? (p->rnr_retry_count > 7 ? 7 : p->rnr_retry_count) : 7;
	cp->path_mtu = (uint8_t)id->dev->d->active_mtu;
	cp->srq = id->id.srq ? 1 : (p && !id->id.qp ? p->srq : 0);
	cp->flow_control = p ? p->flow_control : 0;
	cp->pkey = 0xffff;
	cp->traffic_class = id->tos;
	cp->hop_limit = 64;
	cp->user = id->number;
}

static int connect_rc(struct urnic_rdma_id *id, struct rdma_conn_param *p)
{
	struct urnic_cm_connect_param cp;
	uint8_t pdata[REQ_PDATA];
	struct urnic_cm *cm;
	uint64_t now;
	uint32_t conn;
	int len, rc;

	len = cma_pdata(id, p ? p->private_data : NULL, p ? p->private_data_len : 0, pdata,
			sizeof(pdata));
	if (len < 0)
		return len;
	req_param(id, p, &cp);
	cp.private_data = pdata;
	cp.private_data_len = (uint8_t)len;
	cm = urnic_dev_cm_begin(id->dev->d, &now);
	if (!cm)
		return -ENODEV;
	rc = urnic_cm_connect(cm, &cp, now, &conn);
	if (!rc)
		hold_conn(id, conn);
	urnic_dev_cm_end(id->dev->d);
	return rc;
}

EXPORT int rdma_connect(struct rdma_cm_id *cid, struct rdma_conn_param *conn_param)
{
	struct urnic_rdma_id *id;
	int rc;

	if (!cid) {
		errno = EINVAL;
		return -1;
	}
	id = urnic_rdma_id_of(cid);
	if (id->state != URNIC_RDMA_ROUTE_RESOLVED || id->has_conn) {
		errno = EINVAL;
		return -1;
	}
	if (id->iw)
		rc = urnic_rdma_iw_connect(id, conn_param);
	else if (cid->qp_type == IBV_QPT_UD)
		rc = connect_ud(id, conn_param);
	else
		rc = connect_rc(id, conn_param);
	if (rc)
		return urnic_rdma_ret(rc);
	id->state = URNIC_RDMA_CONNECT;
	return urnic_rdma_wait_event(id, RDMA_CM_EVENT_ESTABLISHED);
}
