/* SPDX-License-Identifier: MIT */
/*
 * iw_calls.c - the rdma_cm calls on an id of an iWARP device, as cma.c does them over
 * iw_cm (cma_connect_iw, cma_accept_iw, cma_iw_listen, cma_iw_handler,
 * iw_conn_req_handler) and siw_cm.c under it: the port is a TCP port bound on the
 * device's address (SO_REUSEADDR, as siw binds), or on the wildcard for a listener; the
 * private data goes in the MPA frames with no rdma_cm header; IRD is the responder
 * resources and ORD the initiator depth; the library moves no QP past INIT (the device
 * puts it in RTS at the hand-over, as iw_cm does). Out of scope: MPA's peer-to-peer mode
 * as initiator (siw's default is off).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cm/iw_cm.h"

/* siw_cm.c's MPAREQ_TIMEOUT and MPAREP_TIMEOUT; a TCP connect waits as long. */
#define MPA_TIMEOUT_NS (10ull * 1000000000ull)

static socklen_t sa_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

static uint16_t sa_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return ntohs(((const struct sockaddr_in *)sa)->sin_port);
}

/* rdma_bind_addr on an iWARP device: the TCP port on its address (0: the host's
 * ephemeral choice), written back to the source address. */
int urnic_rdma_iw_bind(struct urnic_rdma_id *id)
{
	struct sockaddr *src = &id->id.route.addr.src_addr;
	struct sockaddr_storage got;
	socklen_t len = sizeof(got);
	struct urnic_rdma_iw *w;
	int one = 1, rc;

	rc = urnic_rdma_iw_sink(id->dev);
	if (rc)
		return rc;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = socket(src->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (w->fd < 0) {
		rc = -errno;
		goto free_w;
	}
	setsockopt(w->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(w->fd, src, sa_len(src)) || getsockname(w->fd, (struct sockaddr *)&got, &len)) {
		rc = -errno;
		goto close_fd;
	}
	memcpy(&id->id.route.addr.src_storage, &got, len);
	w->number = id->number;
	w->dev = id->dev;
	w->owned = true;
	w->phase = URNIC_RDMA_IW_BOUND;
	id->port = sa_port(src);
	id->iw = w;
	id->state = URNIC_RDMA_ADDR_BOUND;
	return 0;
close_fd:
	close(w->fd);
free_w:
	free(w);
	return rc;
}

int urnic_rdma_iw_listen(struct urnic_rdma_id *id, int backlog)
{
	struct urnic_rdma_iw *w = id->iw;
	int rc = 0;

	pthread_mutex_lock(&urnic_rdma_iw_lock);
	if (w->phase != URNIC_RDMA_IW_BOUND)
		rc = -EINVAL;
	else if (listen(w->fd, backlog))
		rc = -errno;
	else
		rc = urnic_rdma_iw_watch(w, EPOLLIN);
	if (!rc) {
		w->phase = URNIC_RDMA_IW_LISTEN;
		w->mpa.cfg.timeout_ns = MPA_TIMEOUT_NS;
		id->state = URNIC_RDMA_LISTEN;
	}
	pthread_mutex_unlock(&urnic_rdma_iw_lock);
	return rc;
}

/* rdma_listen on the wildcard (or a loopback address no device holds, which cma.c takes
 * as the wildcard): one TCP listener on the family's wildcard address and the id's port
 * serves every iWARP device of the process (cma_listen_on_all); an accepted connection
 * belongs to the device of its local address (iw_cm.c). Nothing without iWARP devices. */
int urnic_rdma_iw_listen_any(struct urnic_rdma_id *id, int backlog)
{
	struct sockaddr_storage any = { .ss_family = id->id.route.addr.src_addr.sa_family };
	struct urnic_rdma_dev *all;
	struct urnic_rdma_iw *w;
	int n = urnic_rdma_devs(&all), one = 1, found = 0, rc;

	for (int i = 0; i < n; i++) {
		if (!urnic_rdma_dev_iwarp(&all[i]))
			continue;
		rc = urnic_rdma_iw_sink(&all[i]);
		if (rc)
			return rc;
		found++;
	}
	if (!found)
		return 0;
	if (any.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&any)->sin6_port = htons(id->port);
	else
		((struct sockaddr_in *)&any)->sin_port = htons(id->port);
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = socket(any.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (w->fd < 0) {
		free(w);
		return -errno;
	}
	setsockopt(w->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	w->number = id->number;
	w->owned = true;
	w->mpa.cfg.timeout_ns = MPA_TIMEOUT_NS;
	pthread_mutex_lock(&urnic_rdma_iw_lock);
	if (bind(w->fd, (struct sockaddr *)&any, sa_len((struct sockaddr *)&any)) ||
	    listen(w->fd, backlog))
		rc = -errno;
	else
		rc = urnic_rdma_iw_watch(w, EPOLLIN);
	if (rc) {
		close(w->fd);
		free(w);
	} else {
		w->phase = URNIC_RDMA_IW_LISTEN;
		id->iw = w;
	}
	pthread_mutex_unlock(&urnic_rdma_iw_lock);
	return rc;
}

/* The device's limit for IRD and ORD. */
static uint16_t rd_max(struct urnic_rdma_id *id)
{
	struct ibv_device_attr a;

	if (!ibv_query_device(id->id.verbs, &a) && a.max_qp_rd_atom >= 0 &&
	    a.max_qp_rd_atom <= URNIC_MPA_IRD_ORD_MAX)
		return (uint16_t)a.max_qp_rd_atom;
	return 16;
}

/* want, or the device's limit for RDMA_MAX_RESP_RES / _INIT_DEPTH or more. */
static uint16_t rd_atom(struct urnic_rdma_id *id, uint8_t want, uint8_t max_marker)
{
	uint16_t max = rd_max(id);

	return want == max_marker || want > max ? max : want;
}

/* siw_accept's relaxed IRD negotiation: ORD down to the initiator's IRD, IRD up to its
 * ORD (as far as the device goes); an IRD or ORD over the device's limit is -EINVAL. */
static int negotiate(struct urnic_rdma_id *id, const struct urnic_mpa_params *p, uint16_t *ird,
		     uint16_t *ord)
{
	uint16_t max = rd_max(id);

	if (*ird > max || *ord > max)
		return -EINVAL;
	if (!p->enhanced)
		return 0;
	if (*ord > p->peer_ird)
		*ord = p->peer_ird;
	if (*ird < p->peer_ord)
		*ird = p->peer_ord < max ? p->peer_ord : max;
	return 0;
}

static uint32_t qpn_of(struct urnic_rdma_id *id, const struct rdma_conn_param *p)
{
	return id->id.qp ? id->id.qp->qp_num : (p ? p->qp_num : 0);
}

/* cma_connect_iw: a non-blocking TCP connect from the bound port, the Request queued
 * (revision 2, enhanced, IRD = responder resources, ORD = initiator depth). */
int urnic_rdma_iw_connect(struct urnic_rdma_id *id, const struct rdma_conn_param *p)
{
	struct urnic_rdma_iw *w = id->iw;
	struct urnic_mpa_cfg cfg = { .timeout_ns = MPA_TIMEOUT_NS };
	const struct sockaddr *dst = &id->id.route.addr.dst_addr;
	int rc;

	cfg.ird = rd_atom(id, p ? p->responder_resources : RDMA_MAX_RESP_RES, RDMA_MAX_RESP_RES);
	cfg.ord = rd_atom(id, p ? p->initiator_depth : RDMA_MAX_INIT_DEPTH, RDMA_MAX_INIT_DEPTH);
	cfg.ird_max = rd_max(id);
	/* No RFC 6581 peer-to-peer mode, as siw's Initiator (peer_to_peer off): urnic's
	 * Responder serves a server that speaks first after its bounded hold (iw_qp.h,
	 * URNIC_IW_AWAIT_FIRST_NS), and an RTR sent as the Reply arrives is lost by siw 6.1's
	 * Responder, which reads the socket only on its next data (siw_accept installs the
	 * RTR upcall after sending the Reply): no ESTABLISHED, the connection stalls
	 * (docs/interop.md). The Responder still takes a peer's RTR (iw_rtr.c). */
	cfg.p2p = false;
	cfg.pd = p ? p->private_data : NULL;
	cfg.pd_len = p && p->private_data ? p->private_data_len : 0;
	pthread_mutex_lock(&urnic_rdma_iw_lock);
	rc = w->phase == URNIC_RDMA_IW_BOUND ? 0 : -EISCONN;
	if (!rc)
		rc = urnic_mpa_conn_init(&w->mpa, &cfg, true, urnic_rdma_iw_now_ns());
	if (rc)
		goto unlock;
	w->qpn = qpn_of(id, p);
	w->phase = URNIC_RDMA_IW_TCP;
	w->connect_ns = urnic_rdma_iw_now_ns();
	w->deadline_ns = w->connect_ns + MPA_TIMEOUT_NS;
	w->dst_len = sa_len(dst);
	memcpy(&w->dst, dst, w->dst_len);
	urnic_rdma_iw_count(w->dev, URNIC_RDMA_IW_C_connect);
	/* Refused later, the CM thread reports it (EPOLLOUT | EPOLLERR); refused at once,
	 * the event is queued here, as the call itself succeeded. */
	if (connect(w->fd, dst, sa_len(dst)) && errno != EINPROGRESS) {
		rc = -errno;
		if (rc == -ECONNREFUSED || rc == -ECONNRESET || rc == -ETIMEDOUT ||
		    rc == -ENETUNREACH || rc == -EHOSTUNREACH) {
			urnic_rdma_iw_tcp_failed(w, -rc);
			rc = 0;
		} else {
			w->phase = URNIC_RDMA_IW_BOUND;
		}
		goto unlock;
	}
	rc = urnic_rdma_iw_watch(w, EPOLLOUT);
	if (rc)
		w->phase = URNIC_RDMA_IW_BOUND;
unlock:
	pthread_mutex_unlock(&urnic_rdma_iw_lock);
	return rc;
}

/* cma_accept_iw: the Reply with IRD = responder resources and ORD = initiator depth (the
 * Request's, from CONNECT_REQUEST, when the application leaves them at the maximum) as
 * siw_accept negotiates them, then the hand-over and ESTABLISHED. In peer-to-peer mode
 * too: the QP awaits the RTR itself (iw_dev.c), so that work the application posts once
 * rdma_accept returned is taken (an rsocket's first credits), and held until then. */
int urnic_rdma_iw_accept(struct urnic_rdma_id *id, const struct rdma_conn_param *p)
{
	struct urnic_rdma_iw *w = id->iw;
	enum urnic_mpa_conn_event ev = URNIC_MPA_EV_NONE;
	uint16_t ird = id->resp_res, ord = id->init_depth;
	int rc;

	if (p && p->responder_resources != RDMA_MAX_RESP_RES)
		ird = p->responder_resources;
	if (p && p->initiator_depth != RDMA_MAX_INIT_DEPTH)
		ord = p->initiator_depth;
	pthread_mutex_lock(&urnic_rdma_iw_lock);
	if (w->phase != URNIC_RDMA_IW_DECIDE) {
		rc = w->phase == URNIC_RDMA_IW_DOWN ? -ECONNRESET : -EINVAL;
		goto unlock;
	}
	w->qpn = qpn_of(id, p);
	rc = negotiate(id, &w->mpa.params, &ird, &ord);
	if (!rc)
		rc = urnic_mpa_conn_accept(&w->mpa, ird, ord, p ? p->private_data : NULL,
					   p && p->private_data ? p->private_data_len : 0, &ev,
					   urnic_rdma_iw_now_ns());
	if (rc)
		goto unlock;
	rc = urnic_rdma_iw_flush(w);
	if (rc) {
		urnic_rdma_iw_end(w);
		goto unlock;
	}
	(void)ev; /* CONNECTED, or NONE: the RTR is the QP's to take */
	w->phase = URNIC_RDMA_IW_MPA;
	rc = urnic_rdma_iw_hand_over(w, NULL, 0);
	if (rc) {
		urnic_rdma_iw_count(w->dev, URNIC_RDMA_IW_C_attach_failed);
		urnic_rdma_iw_end(w);
		goto unlock;
	}
	urnic_rdma_iw_post(w, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, 0, ird, ord);
unlock:
	pthread_mutex_unlock(&urnic_rdma_iw_lock);
	return rc;
}

/* The Reply with R and the application's private data, then the close (siw_reject). */
static int reject_locked(struct urnic_rdma_iw *w, const void *pd, uint8_t len)
{
	int rc;

	if (w->phase != URNIC_RDMA_IW_DECIDE)
		return w->phase == URNIC_RDMA_IW_DOWN ? -ECONNRESET : -EINVAL;
	rc = urnic_mpa_conn_reject(&w->mpa, pd, pd ? len : 0);
	if (!rc)
		rc = urnic_rdma_iw_flush(w);
	if (w->fd >= 0)
		shutdown(w->fd, SHUT_WR);
	urnic_rdma_iw_end(w);
	return rc;
}

int urnic_rdma_iw_reject(struct urnic_rdma_id *id, const void *pd, uint8_t len)
{
	int rc;

	pthread_mutex_lock(&urnic_rdma_iw_lock);
	rc = reject_locked(id->iw, pd, len);
	if (!rc)
		urnic_rdma_iw_count(id->iw->dev, URNIC_RDMA_IW_C_rejected_out);
	pthread_mutex_unlock(&urnic_rdma_iw_lock);
	return rc;
}

/* iw_cm_disconnect: the device sends what is queued, then FIN; a connection still in
 * setup is closed. */
static void disconnect_locked(struct urnic_rdma_iw *w)
{
	if (w->phase == URNIC_RDMA_IW_UP) {
		struct urnic_qp *qp = urnic_dev_iw_qp(w->dev->d, w->qpn);

		if (qp)
			urnic_dev_iw_disconnect(w->dev->d, qp);
		return;
	}
	if (w->phase != URNIC_RDMA_IW_LISTEN && w->phase != URNIC_RDMA_IW_BOUND)
		urnic_rdma_iw_end(w);
}

/* rdma_disconnect. The local side hears DISCONNECTED at once, as siw's close upcall
 * gives it (iw_cm_disconnect's SQD drops the connection, IW_CM_EVENT_CLOSE): programs
 * destroy the QP right after (cmtime), and the device reports nothing for a destroyed
 * QP; the device's own report later is the same event, given once (event.c). */
int urnic_rdma_iw_disconnect(struct urnic_rdma_id *id)
{
	struct urnic_rdma_iw *w = id->iw;
	int rc = 0;

	pthread_mutex_lock(&urnic_rdma_iw_lock);
	if (w->phase == URNIC_RDMA_IW_LISTEN || w->phase == URNIC_RDMA_IW_BOUND) {
		rc = -EINVAL;
	} else {
		if (w->phase == URNIC_RDMA_IW_UP)
			urnic_rdma_iw_post(w, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0, 0, 0);
		disconnect_locked(w);
	}
	pthread_mutex_unlock(&urnic_rdma_iw_lock);
	if (!rc)
		id->state = URNIC_RDMA_DISCONNECT;
	return rc;
}

/* rdma_destroy_id: a Request not answered is rejected (cma.c destroys the iw_cm id,
 * which rejects), a connection is disconnected, the socket closed. */
void urnic_rdma_iw_destroy(struct urnic_rdma_id *id)
{
	struct urnic_rdma_iw *w = id->iw;

	if (!w)
		return;
	pthread_mutex_lock(&urnic_rdma_iw_lock);
	if (w->phase == URNIC_RDMA_IW_DECIDE) {
		urnic_rdma_iw_count(w->dev, URNIC_RDMA_IW_C_orphan_reject);
		reject_locked(w, NULL, 0);
	}
	disconnect_locked(w);
	urnic_rdma_iw_end(w);
	id->iw = NULL;
	free(w);
	pthread_mutex_unlock(&urnic_rdma_iw_lock);
}

/* An iWARP item as the application receives it (cma_iw_handler: status and private data
 * for every event, IRD as initiator depth and ORD as responder resources). 1: drop. */
int urnic_rdma_iw_translate(struct urnic_rdma_item *it, struct urnic_rdma_event *e)
{
	struct urnic_rdma_id *id = it->id;
	struct rdma_conn_param *c = &e->ev.param.conn;

	e->ev.event = it->type;
	e->ev.status = it->status;
	memcpy(e->pdata, it->iw.pd, it->iw.pd_len);
	c->private_data = it->iw.pd_len ? e->pdata : NULL;
	c->private_data_len = it->iw.pd_len;
	c->initiator_depth = (uint8_t)(it->iw.ird > 255 ? 255 : it->iw.ird);
	c->responder_resources = (uint8_t)(it->iw.ord > 255 ? 255 : it->iw.ord);
	switch (it->type) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		e->ev.listen_id = &id->listen_id->id;
		/* rdma_accept's defaults (librdmacm's ucma_process_conn_req keeps them). */
		id->resp_res = c->responder_resources;
		id->init_depth = c->initiator_depth;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		id->state = URNIC_RDMA_CONNECTED;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (id->disconnected)
			return 1;
		id->disconnected = true;
		id->state = URNIC_RDMA_DISCONNECT;
		break;
	default:
		break;
	}
	return 0;
}
