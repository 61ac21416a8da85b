/* SPDX-License-Identifier: MIT */
/*
 * rsocket_conn.c - a stream rsocket's connection setup over rdma_cm: rconnect's address
 * and route resolution and REQ, one step per event so that a non-blocking rconnect
 * returns EINPROGRESS and rpoll/rsend drive the rest (rsocket(7)); raccept's answer to a
 * CONNECT_REQUEST, on an id moved to a channel of its own that numbers the new rsocket.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "cm/rsocket.h"

enum { RS_RESOLVE_MS = 2000 };

/* The next event on CH: 0, or -1 with errno EAGAIN when none waits and WAIT is false. */
static int next_event(struct rdma_event_channel *ch, bool wait, struct rdma_cm_event **ev)
{
	for (;;) {
		struct pollfd p = { .fd = ch->fd, .events = POLLIN };

		if (!rdma_get_cm_event(ch, ev))
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		if (!wait)
			return -1;
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return -1;
	}
}

/* rdma-core's ucma_complete: the errno of a failed step. */
static int event_errno(const struct rdma_cm_event *ev)
{
	if (ev->event == RDMA_CM_EVENT_REJECTED)
		return ECONNREFUSED;
	if (ev->status < 0)
		return -ev->status;
	return ev->status ? ev->status : ECONNREFUSED;
}

static int send_req(struct urnic_rs *rs)
{
	struct rdma_conn_param p = { 0 };
	uint8_t cdata[URNIC_RS_CONN_DATA_LEN];

	if (urnic_rs_create_ep(rs))
		return -1;
	urnic_rs_format_conn(rs, cdata);
	p.private_data = cdata;
	p.private_data_len = sizeof(cdata);
	p.flow_control = 1;
	p.retry_count = 7;
	p.rnr_retry_count = 7;
	p.responder_resources = 1;
	p.initiator_depth = 1;
	if (rdma_connect(rs->cm_id, &p))
		return -1;
	rs->state = URNIC_RS_CONNECTING;
	return 0;
}

static int resolve_route(struct urnic_rs *rs)
{
	rs->state = URNIC_RS_RESOLVING_ROUTE;
	if (rs->route && !rdma_set_option(rs->cm_id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, rs->route,
					  rs->route_len))
		return 0;
	return rdma_resolve_route(rs->cm_id, RS_RESOLVE_MS);
}

/* One event of an opening rsocket: 0 to go on, -1 with errno on failure. */
static int connect_step(struct urnic_rs *rs, struct rdma_cm_event *ev)
{
	int want = rs->state == URNIC_RS_RESOLVING_ADDR	   ? RDMA_CM_EVENT_ADDR_RESOLVED
		   : rs->state == URNIC_RS_RESOLVING_ROUTE ? RDMA_CM_EVENT_ROUTE_RESOLVED
							   : RDMA_CM_EVENT_ESTABLISHED;
	int rc = 0;

	if ((int)ev->event != want || ev->status) {
		if (rs->state == URNIC_RS_CONNECTING &&
		    ev->event == RDMA_CM_EVENT_CONNECT_RESPONSE && !ev->status)
			rc = 0; /* not expected with a QP: the ESTABLISHED follows */
		else
			rc = urnic_rs_err(event_errno(ev));
	} else if (want == RDMA_CM_EVENT_ADDR_RESOLVED) {
		rc = resolve_route(rs);
	} else if (want == RDMA_CM_EVENT_ROUTE_RESOLVED) {
		rc = send_req(rs);
	} else if (urnic_rs_save_conn(rs, ev->param.conn.private_data,
				      ev->param.conn.private_data_len)) {
		rc = -1;
	} else {
		rs->state = URNIC_RS_RDWR;
	}
	{
		int e = errno;

		rdma_ack_cm_event(ev);
		errno = e;
	}
	return rc;
}

/* Drives the connection as far as it goes now (all the way when WAIT): 0 once
 * connected, -1 with EINPROGRESS while under way, or the failure's errno (kept for
 * SO_ERROR). Called with rs->lock held. */
static int do_connect(struct urnic_rs *rs, bool wait);

int urnic_rs_do_connect(struct urnic_rs *rs, bool wait)
{
	int rc;

	urnic_rs_inside++;
	rc = do_connect(rs, wait);
	urnic_rs_inside--;
	return rc;
}

static int do_connect(struct urnic_rs *rs, bool wait)
{
	struct rdma_cm_event *ev;

	if (rs->state & URNIC_RS_CONNECTED)
		return 0;
	if (rs->state & (URNIC_RS_CONNECT_ERROR | URNIC_RS_DISCONNECTED | URNIC_RS_ERROR))
		return urnic_rs_err(ENOTCONN);
	if (rs->state == URNIC_RS_LISTENING)
		return urnic_rs_err(EINVAL);
	if (rs->state == URNIC_RS_INIT || rs->state == URNIC_RS_BOUND) {
		rs->state = URNIC_RS_RESOLVING_ADDR;
		if (rdma_resolve_addr(rs->cm_id, NULL, &rs->cm_id->route.addr.dst_addr,
				      RS_RESOLVE_MS))
			goto fail;
	}
	while (rs->state & URNIC_RS_OPENING) {
		if (next_event(rs->ch, wait, &ev)) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return urnic_rs_err(EINPROGRESS);
			goto fail;
		}
		if (connect_step(rs, ev))
			goto fail;
	}
	return 0;
fail:
	rs->err = errno;
	rs->state = URNIC_RS_CONNECT_ERROR;
	return -1;
}

/* Whether an opening or listening rsocket has an event to take (rpoll). */
int urnic_rs_cm_fd_ready(struct urnic_rs *rs)
{
	struct pollfd p = { .fd = rs->ch->fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

/* The new rsocket of a CONNECT_REQUEST: its own channel, QP and buffers, the peer's
 * buffer from the request, ours in the reply. */
static int accept_req(struct urnic_rs *ls, struct rdma_cm_id *id, struct rdma_conn_param *p,
		      const uint8_t *pdata, size_t plen)
{
	uint8_t cresp[URNIC_RS_CONN_DATA_LEN];
	struct urnic_rs *rs = urnic_rs_alloc(ls, SOCK_STREAM);

	if (!rs)
		goto reject;
	rs->ch = rdma_create_event_channel();
	if (!rs->ch || fcntl(rs->ch->fd, F_SETFL, fcntl(rs->ch->fd, F_GETFL) | O_NONBLOCK))
		goto reject;
	if (rdma_migrate_id(id, rs->ch))
		goto reject;
	rs->cm_id = id;
	id->context = rs;
	if (urnic_rs_create_ep(rs) || urnic_rs_save_conn(rs, pdata, plen))
		goto reject;
	urnic_rs_format_conn(rs, cresp);
	p->private_data = cresp;
	p->private_data_len = sizeof(cresp);
	if (rdma_accept(id, p))
		goto reject;
	rs->state = URNIC_RS_RDWR;
	if (urnic_rs_insert(rs, rs->ch->fd) < 0)
		goto fail;
	return rs->index;
reject:
	rdma_reject(id, NULL, 0);
fail:
	if (rs) {
		if (!rs->cm_id)
			rdma_destroy_id(id);
		urnic_rs_free(rs);
	} else {
		rdma_destroy_id(id);
	}
	return -1;
}

/* raccept's work: the next connection request of listener LS accepted, its rsocket's
 * number; -1 with EAGAIN when none waits and WAIT is false. */
static int accept_one(struct urnic_rs *ls, bool wait);

int urnic_rs_accept_one(struct urnic_rs *ls, bool wait)
{
	int rc;

	urnic_rs_inside++;
	rc = accept_one(ls, wait);
	urnic_rs_inside--;
	return rc;
}

static int accept_one(struct urnic_rs *ls, bool wait)
{
	for (;;) {
		struct rdma_cm_event *ev;
		struct rdma_conn_param p;
		uint8_t pdata[256];
		size_t plen;
		struct rdma_cm_id *id;
		int index;

		if (next_event(ls->ch, wait, &ev))
			return -1;
		if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
			rdma_ack_cm_event(ev);
			continue;
		}
		id = ev->id;
		p = ev->param.conn;
		plen = p.private_data_len; /* a uint8_t: fits */
		memcpy(pdata, p.private_data, plen);
		rdma_ack_cm_event(ev);
		index = accept_req(ls, id, &p, pdata, plen);
		if (index >= 0)
			return index;
		/* A request refused (bad private data, no memory): wait for the next. */
		if (!wait)
			return urnic_rs_err(EAGAIN);
	}
}
