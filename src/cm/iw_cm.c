/* SPDX-License-Identifier: MIT */
/*
 * iw_cm.c - the process's iWARP CM thread: one epoll over the listening sockets and the
 * connections in setup, as the kernel's iw_cm work queue and siw's socket callbacks
 * drive them. It accepts TCP, runs MPA setup (engine/iwarp/mpa_conn.h) on each
 * connection, makes the passive id of a Request, hands set-up sockets to the device
 * (dev/iw_conn.h) and queues events into the ids' channels (urnic_rdma_queue), so
 * synchronous ids and channels work as on RoCE. A thread rather than the device's pass:
 * setup needs accept(2), connect(2) and blocking-free writes of up to 512 bytes that the
 * engine's pipeline has no place for, and one thread serves all the process's devices.
 * Timeouts (TCP connect, each MPA frame) are checked on every wake, at least every 100 ms.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cm/iw_cm.h"

enum { SLOTS = 1024, TICK_MS = 100, RX_BYTES = 4096, RETRY_MS = 2 };
#define REFUSED_RETRY_NS (50 * 1000000ull)

pthread_mutex_t urnic_rdma_iw_lock = PTHREAD_MUTEX_INITIALIZER;

static int epfd = -1;
static struct urnic_rdma_iw *slots[SLOTS];
static uint32_t gens[SLOTS];

bool urnic_rdma_dev_iwarp(const struct urnic_rdma_dev *rd)
{
	return rd && rd->ctx && rd->ctx->device->transport_type == IBV_TRANSPORT_IWARP;
}

uint64_t urnic_rdma_iw_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the passive side's new id, and the end of a connection ---- */

/* An iWARP event of w's id, not yet queued. */
static struct urnic_rdma_item *item(struct urnic_rdma_iw *w, enum rdma_cm_event_type type,
				    int status, const uint8_t *pd, size_t len, uint16_t ird,
				    uint16_t ord)
{
	struct urnic_rdma_item *it = calloc(1, sizeof(*it));

	if (!it)
		return NULL;
	it->type = type;
	it->status = status;
	it->dev = w->dev;
	it->ev.type = type == RDMA_CM_EVENT_CONNECT_REQUEST ? URNIC_CM_EVENT_CONNECT_REQUEST
							    : URNIC_CM_EVENT_COUNT;
	it->iw.set = true;
	it->iw.ird = ird;
	it->iw.ord = ord;
	if (len > sizeof(it->iw.pd))
		len = sizeof(it->iw.pd);
	if (len)
		memcpy(it->iw.pd, pd, len);
	it->iw.pd_len = (uint8_t)len;
	return it;
}

/* Queues an event for the id w belongs to (dropped if the id is going). The device may
 * report the end of a connection before its ESTABLISHED is queued (closed() below):
 * DISCONNECTED then follows ESTABLISHED. */
void urnic_rdma_iw_post(struct urnic_rdma_iw *w, enum rdma_cm_event_type type, int status,
			const uint8_t *pd, size_t len, uint16_t ird, uint16_t ord)
{
	struct urnic_rdma_item *it = item(w, type, status, pd, len, ird, ord), *end = NULL;
	bool down = type == RDMA_CM_EVENT_DISCONNECTED;
	struct urnic_rdma_id *id;

	if (!it)
		return;
	pthread_mutex_lock(&urnic_rdma_lock);
	id = urnic_rdma_find_number(w->number);
	/* DISCONNECTED once (cma.c): the local disconnect's and the device's are one. */
	if (!id || id->destroying || (down && id->iw && id->iw->down_posted)) {
		pthread_mutex_unlock(&urnic_rdma_lock);
		free(it);
		return;
	}
	if (down && id->iw)
		id->iw->down_posted = true;
	it->id = id;
	urnic_rdma_queue(urnic_rdma_channel_of(id->id.channel), it);
	if (type == RDMA_CM_EVENT_ESTABLISHED && id->iw == w) {
		w->up_posted = true;
		if (w->early_close && !w->down_posted)
			end = item(w, RDMA_CM_EVENT_DISCONNECTED, 1 - w->early_close, NULL, 0, 0,
				   0);
		if (end) {
			w->down_posted = true;
			end->id = id;
			urnic_rdma_queue(urnic_rdma_channel_of(id->id.channel), end);
		}
	}
	pthread_mutex_unlock(&urnic_rdma_lock);
}

/* Frees w, which no id holds. */
static void drop(struct urnic_rdma_iw *w)
{
	urnic_rdma_iw_end(w);
	free(w);
}

/* Closes w's socket and stops watching it; w stays (an id holds it). */
void urnic_rdma_iw_end(struct urnic_rdma_iw *w)
{
	urnic_rdma_iw_unwatch(w);
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	w->phase = URNIC_RDMA_IW_DOWN;
}

/* Writes what MPA queued (at most a frame and an RTR: the socket's buffer takes it). */
int urnic_rdma_iw_flush(struct urnic_rdma_iw *w)
{
	uint8_t buf[URNIC_MPA_OUT_MAX];
	size_t n = urnic_mpa_conn_output(&w->mpa, buf, sizeof(buf));
	size_t off = 0;

	while (off < n) {
		ssize_t k = send(w->fd, buf + off, n - off, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EPIPE;
		off += (size_t)k;
	}
	return 0;
}

/* The passive id of a Request (cma.c iw_conn_req_handler): the listener's channel,
 * context and port space, addresses from the socket. Caller holds urnic_rdma_lock. */
static struct urnic_rdma_id *new_conn_id(struct urnic_rdma_iw *w)
{
	struct urnic_rdma_id *l = urnic_rdma_find_number(w->number), *id;
	socklen_t len = sizeof(struct sockaddr_storage);

	if (!l || l->destroying || !l->iw || l->iw->phase != URNIC_RDMA_IW_LISTEN)
		return NULL;
	id = urnic_rdma_id_new(l->id.channel, l->id.context, l->id.ps, l->id.qp_type);
	if (!id)
		return NULL;
	id->listen_id = l;
	id->dev = w->dev;
	id->id.verbs = w->dev->ctx;
	id->id.pd = w->dev->pd;
	id->state = URNIC_RDMA_CONNECT;
	id->tos = l->tos;
	getsockname(w->fd, &id->id.route.addr.src_addr, &len);
	len = sizeof(struct sockaddr_storage);
	getpeername(w->fd, &id->id.route.addr.dst_addr, &len);
	memcpy(&id->id.route.addr.addr.ibaddr.sgid, w->dev->d->gid[0], 16);
	id->iw = w;
	urnic_rdma_register(id);
	w->number = id->number;
	w->owned = true;
	return id;
}

/* The Request is in: CONNECT_REQUEST on a new id with IRD and ORD as siw_cm_upcall gives
 * them (event.ird: the initiator's IRD, event.ord: its ORD), which cma_iw_handler makes
 * initiator depth and responder resources. */
static void on_request(struct urnic_rdma_iw *w)
{
	const struct urnic_mpa_params *p = &w->mpa.params;
	struct urnic_rdma_id *id;

	pthread_mutex_lock(&urnic_rdma_lock);
	id = new_conn_id(w);
	pthread_mutex_unlock(&urnic_rdma_lock);
	if (!id) {
		urnic_rdma_iw_count(w->dev, URNIC_RDMA_IW_C_no_listener);
		drop(w);
		return;
	}
	urnic_rdma_iw_count(w->dev, URNIC_RDMA_IW_C_requests);
	w->phase = URNIC_RDMA_IW_DECIDE;
	urnic_rdma_iw_post(w, RDMA_CM_EVENT_CONNECT_REQUEST, 0, w->mpa.peer_pd, w->mpa.peer_pd_len,
			   p->peer_ird, p->peer_ord);
}

/* Setup failed (cma_iw_handler's CONNECT_REPLY mapping for the active side: reset or
 * refused is REJECTED, a timeout UNREACHABLE, anything else CONNECT_ERROR). */
static void failed(struct urnic_rdma_iw *w, int err)
{
	enum rdma_cm_event_type t = RDMA_CM_EVENT_CONNECT_ERROR;
	bool accepted = w->phase == URNIC_RDMA_IW_MPA;

	if (err == -ECONNRESET || err == -ECONNREFUSED)
		t = RDMA_CM_EVENT_REJECTED;
	else if (err == -ETIMEDOUT)
		t = RDMA_CM_EVENT_UNREACHABLE;
	if (w->mpa.out_len)
		urnic_rdma_iw_flush(w); /* a Terminate or a Reply with R goes first */
	if (!w->owned) {
		drop(w);
		return;
	}
	urnic_rdma_iw_end(w);
	/* The passive id learns of it when it answers (rdma_accept: ECONNRESET). */
	if (!w->mpa.initiator && !accepted)
		return;
	urnic_rdma_iw_post(w, t, err, NULL, 0, 0, 0);
}

/* MPA ended in error: counted per reason; a timeout or close maps as TCP's would. */
static void mpa_error(struct urnic_rdma_iw *w)
{
	enum urnic_mpa_conn_reason r = w->mpa.reason;

	urnic_rdma_iw_count(w->dev, URNIC_RDMA_IW_C_mpa_failed);
	urnic_rdma_iw_count_refusal(r);
	/* siw_proc_mpareply: a close is -ECONNRESET, CRC or markers it will not use
	 * -ECONNREFUSED, any other failure -EINVAL; siw's MPA timer -ETIMEDOUT. */
	if (r == URNIC_MPA_CONN_R_TIMEOUT)
		failed(w, -ETIMEDOUT);
	else if (r == URNIC_MPA_CONN_R_CLOSED)
		failed(w, -ECONNRESET);
	else if (r == URNIC_MPA_CONN_R_CRC_POLICY || r == URNIC_MPA_CONN_R_MARKERS)
		failed(w, -ECONNREFUSED);
	else
		failed(w, -EINVAL);
}

/* Setup is done: the socket goes to the device, ESTABLISHED with what cma_iw_handler
 * reports (the active side: the peer's ORD and IRD as siw_proc_mpareply leaves them in
 * cep->ird/ord; the passive side: its own). */
static void on_connected(struct urnic_rdma_iw *w, const uint8_t *rest, size_t n)
{
	const struct urnic_mpa_params *p = &w->mpa.params;
	bool ini = w->mpa.initiator;
	int rc = urnic_rdma_iw_hand_over(w, rest, n);

	if (rc) {
		urnic_rdma_iw_count(w->dev, URNIC_RDMA_IW_C_attach_failed);
		urnic_rdma_iw_end(w);
		urnic_rdma_iw_post(w, RDMA_CM_EVENT_CONNECT_ERROR, rc, NULL, 0, 0, 0);
		return;
	}
	urnic_rdma_iw_post(w, RDMA_CM_EVENT_ESTABLISHED, 0, ini ? w->mpa.peer_pd : NULL,
			   ini ? w->mpa.peer_pd_len : 0, ini ? p->peer_ord : p->ird,
			   ini ? p->peer_ird : p->ord);
}

/* What an MPA event asks for; the bytes after the frames are rest. */
static void on_mpa_event(struct urnic_rdma_iw *w, enum urnic_mpa_conn_event ev, const uint8_t *rest,
			 size_t n)
{
	switch (ev) {
	case URNIC_MPA_EV_REQUEST:
		on_request(w);
		break;
	case URNIC_MPA_EV_CONNECTED:
		if (w->mpa.out_len && urnic_rdma_iw_flush(w)) {
			failed(w, -ECONNRESET);
			break;
		}
		on_connected(w, rest, n);
		break;
	case URNIC_MPA_EV_REJECTED:
		urnic_rdma_iw_count(w->dev, URNIC_RDMA_IW_C_rejected_in);
		urnic_rdma_iw_end(w);
		urnic_rdma_iw_post(w, RDMA_CM_EVENT_REJECTED, -ECONNREFUSED, w->mpa.peer_pd,
				   w->mpa.peer_pd_len, 0, 0);
		break;
	case URNIC_MPA_EV_ERROR:
		mpa_error(w);
		break;
	default:
		break;
	}
}

/* ---- sockets ---- */

static void on_readable(struct urnic_rdma_iw *w)
{
	uint8_t buf[RX_BYTES];
	ssize_t n = recv(w->fd, buf, sizeof(buf), 0);
	size_t off = 0;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		on_mpa_event(w, urnic_mpa_conn_closed(&w->mpa), NULL, 0);
		return;
	}
	while (off < (size_t)n) {
		size_t used = 0;
		enum urnic_mpa_conn_event ev = urnic_mpa_conn_input(
			&w->mpa, buf + off, (size_t)n - off, &used, urnic_rdma_iw_now_ns());

		off += used;
		if (ev != URNIC_MPA_EV_NONE) {
			on_mpa_event(w, ev, buf + off, (size_t)n - off);
			return;
		}
		if (!used)
			return;
	}
}

/* The TCP connect finished: the Request goes out, or the error is reported. */
static void on_connect_done(struct urnic_rdma_iw *w)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(w->fd, SOL_SOCKET, SO_ERROR, &err, &len))
		err = errno;
	if (!err) {
		w->phase = URNIC_RDMA_IW_MPA;
		w->deadline_ns = 0;
		/* The Request's timeout runs from now (siw: MPAREP_TIMEOUT after sending). */
		w->mpa.deadline_ns = urnic_rdma_iw_now_ns() + w->mpa.cfg.timeout_ns;
		err = -urnic_rdma_iw_flush(w);
		if (!err) {
			struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };

			ev.data.u64 = ((uint64_t)gens[w->slot - 1] << 32) | (w->slot - 1);
			epoll_ctl(epfd, EPOLL_CTL_MOD, w->fd, &ev);
			return;
		}
	}
	urnic_rdma_iw_tcp_failed(w, err);
}

/*
 * perftest's -R client connects again as soon as its parameter exchange ends, while its
 * server is still on its way to its second rdma_listen; over RoCE the IB CM's REQ waits
 * for a listener as long (engine/cm). A TCP refusal within REFUSED_RETRY_NS of
 * rdma_connect is tried again every RETRY_MS from a new socket on the same local address
 * and port (a refused socket cannot connect again). The connection stays in its slot,
 * its socket out of the epoll set until then: a closed socket reports EPOLLHUP at once.
 */
static bool retry_later(struct urnic_rdma_iw *w)
{
	uint64_t now = urnic_rdma_iw_now_ns();

	if (w->phase != URNIC_RDMA_IW_TCP || now - w->connect_ns >= REFUSED_RETRY_NS)
		return false;
	if (!w->slot && urnic_rdma_iw_watch(w, EPOLLOUT))
		return false;
	epoll_ctl(epfd, EPOLL_CTL_DEL, w->fd, NULL);
	w->retry_ns = now + RETRY_MS * 1000000ull;
	urnic_rdma_iw_count(w->dev, URNIC_RDMA_IW_C_tcp_retry);
	return true;
}

/* The retry of retry_later: the new socket's connect goes on as the first did. */
static void retry(struct urnic_rdma_iw *w)
{
	struct sockaddr_storage loc;
	socklen_t len = sizeof(loc);
	const struct sockaddr *dst = (const struct sockaddr *)&w->dst;
	struct epoll_event ev = { .events = EPOLLOUT };
	int one = 1, fd, err;

	w->retry_ns = 0;
	if (getsockname(w->fd, (struct sockaddr *)&loc, &len)) {
		urnic_rdma_iw_tcp_failed(w, errno);
		return;
	}
	fd = socket(loc.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		urnic_rdma_iw_tcp_failed(w, errno);
		return;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&loc, len) ||
	    (connect(fd, dst, w->dst_len) && errno != EINPROGRESS)) {
		err = errno;
		close(fd);
		urnic_rdma_iw_tcp_failed(w, err);
		return;
	}
	close(w->fd);
	w->fd = fd;
	ev.data.u64 = ((uint64_t)gens[w->slot - 1] << 32) | (w->slot - 1);
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev))
		urnic_rdma_iw_tcp_failed(w, errno);
}

/* The TCP connect failed with err (positive): counted, and reported as cma_iw_handler
 * maps it. */
void urnic_rdma_iw_tcp_failed(struct urnic_rdma_iw *w, int err)
{
	if (err == ECONNREFUSED && retry_later(w))
		return;
	urnic_rdma_iw_count(w->dev, err == ECONNREFUSED || err == ECONNRESET
					    ? URNIC_RDMA_IW_C_tcp_refused
				    : err == ETIMEDOUT ? URNIC_RDMA_IW_C_tcp_timeout
						       : URNIC_RDMA_IW_C_tcp_error);
	failed(w, -err);
}

/* The iWARP device a wildcard listener's connection reached: its local address's. */
static struct urnic_rdma_dev *local_dev(int fd)
{
	struct sockaddr_storage a;
	socklen_t len = sizeof(a);
	struct urnic_rdma_dev *rd;

	if (getsockname(fd, (struct sockaddr *)&a, &len))
		return NULL;
	rd = urnic_rdma_dev_by_addr((struct sockaddr *)&a);
	return urnic_rdma_dev_iwarp(rd) ? rd : NULL;
}

/* A listener's new connections: each awaits its Request, the CM thread's until then. */
static void on_accept(struct urnic_rdma_iw *l)
{
	for (;;) {
		int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct urnic_mpa_cfg cfg = { .timeout_ns = l->mpa.cfg.timeout_ns };
		struct urnic_rdma_iw *w;

		if (fd < 0)
			return;
		w = calloc(1, sizeof(*w));
		if (!w || urnic_mpa_conn_init(&w->mpa, &cfg, false, urnic_rdma_iw_now_ns())) {
			free(w);
			close(fd);
			continue;
		}
		w->fd = fd;
		w->number = l->number;
		w->dev = l->dev ? l->dev : local_dev(fd);
		urnic_rdma_iw_count(w->dev, URNIC_RDMA_IW_C_accepted_tcp);
		if (!w->dev) {
			urnic_rdma_iw_count(w->dev, URNIC_RDMA_IW_C_no_device);
			drop(w);
			continue;
		}
		w->phase = URNIC_RDMA_IW_MPA;
		if (urnic_rdma_iw_watch(w, EPOLLIN | EPOLLRDHUP))
			drop(w);
	}
}

static void on_ready(struct urnic_rdma_iw *w, uint32_t events)
{
	switch (w->phase) {
	case URNIC_RDMA_IW_LISTEN:
		on_accept(w);
		break;
	case URNIC_RDMA_IW_TCP:
		if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
			on_connect_done(w);
		break;
	case URNIC_RDMA_IW_MPA:
	case URNIC_RDMA_IW_DECIDE:
		on_readable(w);
		break;
	default:
		break;
	}
}

/* TCP connect and MPA frame timeouts. */
static bool tick(uint64_t now)
{
	bool retrying = false;

	for (uint32_t i = 0; i < SLOTS; i++) {
		struct urnic_rdma_iw *w = slots[i];

		if (!w)
			continue;
		if (w->phase == URNIC_RDMA_IW_TCP && w->retry_ns) {
			if (now >= w->retry_ns)
				retry(w);
			retrying |= w->phase == URNIC_RDMA_IW_TCP && w->retry_ns;
		} else if (w->phase == URNIC_RDMA_IW_TCP && w->deadline_ns &&
			   now >= w->deadline_ns) {
			urnic_rdma_iw_count(w->dev, URNIC_RDMA_IW_C_tcp_timeout);
			failed(w, -ETIMEDOUT);
		} else if (w->phase == URNIC_RDMA_IW_MPA) {
			enum urnic_mpa_conn_event ev = urnic_mpa_conn_tick(&w->mpa, now);

			if (ev != URNIC_MPA_EV_NONE)
				on_mpa_event(w, ev, NULL, 0);
		}
	}
	return retrying;
}

static void *cm_thread(void *arg)
{
	bool retrying = false;

	(void)arg;
	for (;;) {
		struct epoll_event evs[16];
		int n = epoll_wait(epfd, evs, 16, retrying ? RETRY_MS : TICK_MS);

		pthread_mutex_lock(&urnic_rdma_iw_lock);
		for (int i = 0; i < n; i++) {
			uint32_t s = (uint32_t)evs[i].data.u64;

			if (s < SLOTS && slots[s] && gens[s] == (uint32_t)(evs[i].data.u64 >> 32))
				on_ready(slots[s], evs[i].events);
		}
		retrying = tick(urnic_rdma_iw_now_ns());
		pthread_mutex_unlock(&urnic_rdma_iw_lock);
	}
	return NULL;
}

/* Watches w's socket from the CM thread, started on first use. */
int urnic_rdma_iw_watch(struct urnic_rdma_iw *w, uint32_t events)
{
	struct epoll_event ev = { .events = events };
	uint32_t s;

	if (epfd < 0) {
		pthread_t t;
		pthread_attr_t a;

		epfd = epoll_create1(EPOLL_CLOEXEC);
		if (epfd < 0)
			return -errno;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &a, cm_thread, NULL)) {
			pthread_attr_destroy(&a);
			close(epfd);
			epfd = -1;
			return -EAGAIN;
		}
		pthread_attr_destroy(&a);
	}
	for (s = 0; s < SLOTS && slots[s]; s++)
		;
	if (s == SLOTS)
		return -ENFILE;
	ev.data.u64 = ((uint64_t)++gens[s] << 32) | s;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, w->fd, &ev))
		return -errno;
	slots[s] = w;
	w->slot = s + 1;
	return 0;
}

void urnic_rdma_iw_unwatch(struct urnic_rdma_iw *w)
{
	if (!w->slot)
		return;
	if (w->fd >= 0)
		epoll_ctl(epfd, EPOLL_CTL_DEL, w->fd, NULL);
	slots[w->slot - 1] = NULL;
	gens[w->slot - 1]++;
	w->slot = 0;
}
