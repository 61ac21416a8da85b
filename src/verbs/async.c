/* SPDX-License-Identifier: MIT */
/*
 * async.c - asynchronous events: ibv_get_async_event and ibv_ack_async_event.
 *
 * ibv_get_async_event(3): the context's async_fd is the read end of a pipe carrying
 * struct ibv_async_event records, so it blocks, or returns EAGAIN when the application
 * made it non-blocking, and works with poll/epoll. Events raised today: QP fatal when a
 * QP falls into error by itself (IBTA 11.6.3.1; as rxe raises IB_EVENT_QP_FATAL), or for
 * an iWARP QP the event siw raises for that error (request or access error, or none), Last
 * WQE Reached when a QP on an SRQ enters error, SRQ limit reached when an armed SRQ
 * falls below its limit (IBTA 10.2.9, 11.6.3). As with the kernel's uverbs, the
 * destroy of a QP or SRQ drops its records the application has not read and waits
 * until those it read are acknowledged (ibv_get_async_event(3)): an event never names
 * freed memory, and an acknowledgement never reaches it.
 *
 * Port events, as rxe raises them from its netdev (rxe_net.c rxe_notify: NETDEV_UP,
 * NETDEV_DOWN, NETDEV_CHANGE -> rxe_port_up/down): the port is ACTIVE while an
 * interface that is up and running (IFF_UP, IFF_RUNNING: carrier) holds the device's
 * address (any 127/8 address belongs to an up loopback interface holding 127/8);
 * each change raises IBV_EVENT_PORT_ERR or IBV_EVENT_PORT_ACTIVE in every open
 * context of the device, and ibv_query_port reports it. A watch thread, started
 * with the first context and stopped with the last, sleeps on a NETLINK_ROUTE socket
 * (link and address groups) and looks again only when the kernel reports a change:
 * no work while nothing happens. Without netlink the port keeps its state at open.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "verbs/verbs.h"

static struct urnic_vcontext *vctx_of(struct ibv_context *context)
{
	return urnic_container_of(context, struct urnic_vcontext, vctx.context);
}

/* The entry of element, under async_lock: the live one, or (dead) the oldest entry of
 * a destroyed object at that address whose records are still in the pipe. NULL if
 * none; with add, a new live entry (NULL when out of memory). */
static struct urnic_async_track *track_of(struct urnic_vcontext *c, const void *element, bool dead,
					  bool add)
{
	for (size_t i = 0; i < c->ntrack; i++)
		if (c->track[i].element == element && c->track[i].dead == dead &&
		    (!dead || c->track[i].dead_unread))
			return &c->track[i];
	if (!add)
		return NULL;
	if (c->ntrack == c->track_cap) {
		size_t cap = c->track_cap ? 2 * c->track_cap : 8;
		struct urnic_async_track *t = realloc(c->track, cap * sizeof(*t));

		if (!t)
			return NULL;
		c->track = t;
		c->track_cap = cap;
	}
	c->track[c->ntrack] = (struct urnic_async_track){ .element = element };
	return &c->track[c->ntrack++];
}

static void track_drop(struct urnic_vcontext *c, struct urnic_async_track *t)
{
	*t = c->track[--c->ntrack];
}

static bool has_element(enum ibv_event_type type)
{
	return type != IBV_EVENT_PORT_ACTIVE && type != IBV_EVENT_PORT_ERR &&
	       type != IBV_EVENT_DEVICE_FATAL && type != IBV_EVENT_LID_CHANGE &&
	       type != IBV_EVENT_PKEY_CHANGE && type != IBV_EVENT_SM_CHANGE &&
	       type != IBV_EVENT_CLIENT_REREGISTER && type != IBV_EVENT_GID_CHANGE;
}

void urnic_async_event(struct ibv_context *context, enum ibv_event_type type, void *element)
{
	struct urnic_vcontext *c = vctx_of(context);
	struct ibv_async_event ev = { .event_type = type };
	struct urnic_async_track *t = NULL;
	ssize_t n;

	switch (type) {
	case IBV_EVENT_CQ_ERR:
		ev.element.cq = element;
		break;
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
		ev.element.port_num = 1;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		ev.element.srq = element;
		break;
	default:
		ev.element.qp = element;
		break;
	}
	pthread_mutex_lock(&c->async_lock);
	if (has_element(type)) {
		t = track_of(c, element, false, true);
		if (!t) { /* no memory to follow it: not raised, as a full queue */
			pthread_mutex_unlock(&c->async_lock);
			return;
		}
	}
	/* A full pipe means the application is not reading its events: drop, as a full
	 * event queue on a real device overflows. */
	n = write(c->async_write_fd, &ev, sizeof(ev));
	if (t && n == (ssize_t)sizeof(ev))
		t->raised++;
	else if (t && !t->raised)
		track_drop(c, t);
	pthread_mutex_unlock(&c->async_lock);
}

/* A record read from the pipe: false when it belongs to an object destroyed since it
 * was written (the kernel drops those too: ib_uverbs_release_uevent). */
static bool deliver(struct urnic_vcontext *c, const struct ibv_async_event *ev)
{
	const void *element = ev->element.qp; /* the union's pointer members alias */
	struct urnic_async_track *t;
	bool ok = true;

	if (!has_element(ev->event_type))
		return true;
	pthread_mutex_lock(&c->async_lock);
	t = track_of(c, element, true, false);
	if (t) {
		ok = false;
		if (--t->dead_unread == 0)
			track_drop(c, t);
	} else {
		t = track_of(c, element, false, false);
		if (t)
			t->read++;
	}
	pthread_mutex_unlock(&c->async_lock);
	return ok;
}

uint32_t urnic_async_forget(struct ibv_context *context, const void *element)
{
	struct urnic_vcontext *c = vctx_of(context);
	struct urnic_async_track *t;
	uint32_t read = 0;

	pthread_mutex_lock(&c->async_lock);
	t = track_of(c, element, false, false);
	if (t) {
		read = t->read;
		t->dead = true;
		t->dead_unread = t->raised - t->read;
		if (!t->dead_unread)
			track_drop(c, t);
	}
	pthread_mutex_unlock(&c->async_lock);
	return read;
}

void urnic_async_wait_acked(pthread_mutex_t *mutex, pthread_cond_t *cond, const uint32_t *completed,
			    uint32_t read)
{
	pthread_mutex_lock(mutex);
	while (*completed != read)
		pthread_cond_wait(cond, mutex);
	pthread_mutex_unlock(mutex);
}

void urnic_async_fini(struct urnic_vcontext *c)
{
	free(c->track);
	pthread_mutex_destroy(&c->async_lock);
}

URNIC_EXPORT int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	do {
		if (read(context->async_fd, event, sizeof(*event)) != sizeof(*event))
			return -1;
	} while (!deliver(vctx_of(context), event));
	return 0;
}

URNIC_EXPORT void ibv_ack_async_event(struct ibv_async_event *event)
{
	switch (event->event_type) {
	case IBV_EVENT_CQ_ERR: {
		struct ibv_cq *cq = event->element.cq;

		pthread_mutex_lock(&cq->mutex);
		cq->async_events_completed++;
		pthread_cond_signal(&cq->cond);
		pthread_mutex_unlock(&cq->mutex);
		break;
	}
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED: {
		struct ibv_srq *srq = event->element.srq;

		pthread_mutex_lock(&srq->mutex);
		srq->events_completed++;
		pthread_cond_signal(&srq->cond);
		pthread_mutex_unlock(&srq->mutex);
		break;
	}
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED: {
		struct ibv_qp *qp = event->element.qp;

		pthread_mutex_lock(&qp->mutex);
		qp->events_completed++;
		pthread_cond_signal(&qp->cond);
		pthread_mutex_unlock(&qp->mutex);
		break;
	}
	default:
		break;
	}
}

/* The engine's events (dev/verbs_qp.h), under the device lock. */
static void qp_error(struct urnic_qp *qp, enum urnic_qp_event ev)
{
	struct ibv_qp *ibqp = qp->owner;

	if (ibqp)
		urnic_async_event(ibqp->context,
				  ev == URNIC_QP_EV_REQ_ERR	 ? IBV_EVENT_QP_REQ_ERR
				  : ev == URNIC_QP_EV_ACCESS_ERR ? IBV_EVENT_QP_ACCESS_ERR
								 : IBV_EVENT_QP_FATAL,
				  ibqp);
}

static void qp_last_wqe(struct urnic_qp *qp)
{
	struct ibv_qp *ibqp = qp->owner;

	if (ibqp)
		urnic_async_event(ibqp->context, IBV_EVENT_QP_LAST_WQE_REACHED, ibqp);
}

static void srq_limit(struct urnic_srq *srq)
{
	struct ibv_srq *ibsrq = srq->owner;

	if (ibsrq)
		urnic_async_event(ibsrq->context, IBV_EVENT_SRQ_LIMIT_REACHED, ibsrq);
}

const struct urnic_dev_events urnic_verbs_events = {
	.qp_error = qp_error,
	.qp_last_wqe = qp_last_wqe,
	.srq_limit = srq_limit,
};

/* ---- port state: the watch thread ---- */

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ibv_context **watched; /* open contexts, under watch_lock */
static size_t nwatched, watched_cap;
static pthread_t watch_thread;
static bool watch_running;
static int watch_nl = -1;	       /* the netlink socket */
static int watch_stop[2] = { -1, -1 }; /* a pipe: a byte asks the thread to end */

/* Per device, the state last reported; guarded by watch_lock. */
static struct {
	const struct urnic_dev *dev;
	enum ibv_port_state state;
	uint8_t phys_state;
} ports[URNIC_MAX_DEVICES];

static bool in_prefix(const uint8_t *a, const uint8_t *b, const uint8_t *mask, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((a[i] ^ b[i]) & mask[i])
			return false;
	return true;
}

static const uint8_t *in4_bytes(const struct sockaddr *sa)
{
	return (const uint8_t *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr;
}

/* The state of d's address now: ACTIVE on an interface up and running, else DOWN with
 * the physical state rxe_query_port gives (POLLING: up without carrier; DISABLED:
 * down, or no interface holds the address). *ifindex (if not NULL): that interface,
 * the one up and running if several hold the address, 0 if none does. */
static enum ibv_port_state probe(const struct urnic_dev *d, uint8_t *phys_state,
				 unsigned int *ifindex)
{
	enum ibv_port_state state = IBV_PORT_DOWN;
	struct ifaddrs *ifs, *i;
	const char *holder = NULL;
	int fam = d->ipv6 ? AF_INET6 : AF_INET;

	*phys_state = 3; /* Disabled */
	if (ifindex)
		*ifindex = 0;
	if (getifaddrs(&ifs) < 0) {
		*phys_state = 5;
		return IBV_PORT_ACTIVE; /* nothing to go by: as before the watch */
	}
	for (i = ifs; i; i = i->ifa_next) {
		const uint8_t *a, *m;
		bool held;

		if (!i->ifa_addr || i->ifa_addr->sa_family != fam)
			continue;
		if (fam == AF_INET) {
			a = in4_bytes(i->ifa_addr);
			m = i->ifa_netmask ? in4_bytes(i->ifa_netmask) : NULL;
			held = memcmp(a, d->addr, 4) == 0 ||
			       ((i->ifa_flags & IFF_LOOPBACK) && m && d->addr[0] == 127 &&
				in_prefix(a, d->addr, m, 4));
		} else {
			a = ((struct sockaddr_in6 *)(void *)i->ifa_addr)->sin6_addr.s6_addr;
			held = memcmp(a, d->addr, 16) == 0;
		}
		if (!held)
			continue;
		if (!holder)
			holder = i->ifa_name;
		if ((i->ifa_flags & IFF_UP) && (i->ifa_flags & IFF_RUNNING)) {
			state = IBV_PORT_ACTIVE;
			*phys_state = 5; /* LinkUp */
			holder = i->ifa_name;
			break;
		}
		if (i->ifa_flags & IFF_UP)
			*phys_state = 2; /* Polling */
	}
	if (ifindex && holder)
		*ifindex = if_nametoindex(holder);
	freeifaddrs(ifs);
	return state;
}

/* Context: watch_lock held. */
static int port_slot(const struct urnic_dev *d)
{
	for (int i = 0; i < URNIC_MAX_DEVICES; i++)
		if (ports[i].dev == d)
			return i;
	for (int i = 0; i < URNIC_MAX_DEVICES; i++)
		if (!ports[i].dev) {
			ports[i].dev = d;
			ports[i].state = probe(d, &ports[i].phys_state, NULL);
			return i;
		}
	return -1;
}

/* Looks at every watched device again; a change goes to each of its contexts.
 * Context: the watch thread, watch_lock held. */
static void rescan(void)
{
	for (int p = 0; p < URNIC_MAX_DEVICES; p++) {
		enum ibv_port_state now;
		uint8_t phys;

		if (!ports[p].dev)
			continue;
		now = probe(ports[p].dev, &phys, NULL);
		ports[p].phys_state = phys;
		if (now == ports[p].state)
			continue;
		ports[p].state = now;
		for (size_t i = 0; i < nwatched; i++)
			if (urnic_ctx_dev(watched[i]) == ports[p].dev)
				urnic_async_event(watched[i],
						  now == IBV_PORT_ACTIVE ? IBV_EVENT_PORT_ACTIVE
									 : IBV_EVENT_PORT_ERR,
						  NULL);
	}
}

/* arg: malloc'd {netlink socket, read end of the stop pipe}, this thread's own (a
 * later thread gets its own); freed here. */
static void *watch_main(void *arg)
{
	int *fds = arg;
	struct pollfd pf[2] = { { .fd = fds[0], .events = POLLIN },
				{ .fd = fds[1], .events = POLLIN } };
	char msg[8192];

	free(fds);
	for (;;) {
		bool changed = false;

		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[1].revents)
			break;
		/* Drain everything queued, then look once: a burst of messages (an
		 * interface going down drops its routes and addresses) is one change.
		 * ENOBUFS (messages lost) also means "look again". */
		while (recv(pf[0].fd, msg, sizeof(msg), MSG_DONTWAIT) > 0 || errno == ENOBUFS)
			changed = true;
		if (changed) {
			pthread_mutex_lock(&watch_lock);
			rescan();
			pthread_mutex_unlock(&watch_lock);
		}
	}
	return NULL;
}

/* Context: watch_lock held. Returns 0 or -errno; the port then stays as probed. */
static int watch_start(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK,
				  .nl_groups =
					  RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR };
	sigset_t all, old;
	int *fds;
	int ret;

	watch_nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (watch_nl < 0)
		return -errno;
	if (bind(watch_nl, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto close_nl;
	if (pipe2(watch_stop, O_CLOEXEC) < 0)
		goto close_nl;
	fds = malloc(2 * sizeof(*fds));
	if (!fds)
		goto close_pipe;
	fds[0] = watch_nl;
	fds[1] = watch_stop[0];
	/* The application's signals are not for this thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&watch_thread, NULL, watch_main, fds);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		free(fds);
		errno = ret;
		goto close_pipe;
	}
	watch_running = true;
	return 0;

close_pipe:
	close(watch_stop[0]);
	close(watch_stop[1]);
	watch_stop[0] = watch_stop[1] = -1;
close_nl:
	ret = -errno;
	close(watch_nl);
	watch_nl = -1;
	return ret;
}

/* Context: watch_lock held; the thread is joined without it (it may be waiting for
 * the lock), so what it used is taken out of the globals first: an open meanwhile
 * starts a thread of its own. */
static void watch_stop_thread(void)
{
	pthread_t t = watch_thread;
	int nl = watch_nl, s0 = watch_stop[0], s1 = watch_stop[1];
	char one = 1;
	ssize_t n;

	if (!watch_running)
		return;
	watch_running = false;
	watch_stop[0] = watch_stop[1] = watch_nl = -1;
	n = write(s1, &one, 1);
	(void)n;
	pthread_mutex_unlock(&watch_lock);
	pthread_join(t, NULL);
	pthread_mutex_lock(&watch_lock);
	close(s0);
	close(s1);
	close(nl);
}

void urnic_async_watch(struct ibv_context *context)
{
	pthread_mutex_lock(&watch_lock);
	if (nwatched == watched_cap) {
		size_t cap = watched_cap ? 2 * watched_cap : 8;
		struct ibv_context **n = realloc(watched, cap * sizeof(*n));

		if (!n)
			goto unlock; /* no port events for this context */
		watched = n;
		watched_cap = cap;
	}
	watched[nwatched++] = context;
	/* Listen first, then look: a change in between is not lost. */
	if (!watch_running)
		watch_start();
	port_slot(urnic_ctx_dev(context));
unlock:
	pthread_mutex_unlock(&watch_lock);
}

void urnic_async_unwatch(struct ibv_context *context)
{
	pthread_mutex_lock(&watch_lock);
	for (size_t i = 0; i < nwatched; i++)
		if (watched[i] == context) {
			watched[i] = watched[--nwatched];
			break;
		}
	if (nwatched == 0) {
		watch_stop_thread();
		/* The next open probes afresh. */
		memset(ports, 0, sizeof(ports));
		free(watched);
		watched = NULL;
		watched_cap = 0;
	}
	pthread_mutex_unlock(&watch_lock);
}

enum ibv_port_state urnic_port_state(const struct urnic_dev *d, uint8_t *phys_state)
{
	enum ibv_port_state state;
	int p;

	pthread_mutex_lock(&watch_lock);
	p = port_slot(d);
	if (p >= 0) {
		state = ports[p].state;
		*phys_state = ports[p].phys_state;
	} else {
		state = probe(d, phys_state, NULL);
	}
	pthread_mutex_unlock(&watch_lock);
	return state;
}

unsigned int urnic_port_ifindex(const struct urnic_dev *d)
{
	unsigned int ifindex;
	uint8_t phys_state;

	probe(d, &phys_state, &ifindex);
	return ifindex;
}
