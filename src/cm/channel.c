/* SPDX-License-Identifier: MIT */
/*
 * channel.c - event channels: a queue of events and an eventfd that counts them
 * (EFD_SEMAPHORE: readable while events wait, one read per event), so that poll() on
 * channel->fd and a nonblocking fd behave as librdmacm's (rdma_create_event_channel(3),
 * rdma_get_cm_event(3)). The device's sink only queues here; rdma_get_cm_event turns the
 * oldest item into the application's event (event.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cm/rdmacm.h"

#define EXPORT __attribute__((visibility("default")))

pthread_mutex_t urnic_rdma_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t urnic_rdma_cond = PTHREAD_COND_INITIALIZER;

EXPORT struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct urnic_rdma_dev *all;
	struct urnic_rdma_channel *c;

	/* librdmacm's ucma_init: no RDMA device, no channel (ENODEV). */
	if (urnic_rdma_devs(&all) < 1) {
		errno = ENODEV;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->ch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (c->ch.fd < 0) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	atomic_init(&c->refs, 1);
	return &c->ch;
}

/*
 * Destroyed channels whose last reader has gone are kept, dead, for a reader that comes
 * after the destruction: rping's CM thread, between acking an event and asking for the
 * next, while its main thread destroys the channel. That reader sleeps on, as one that
 * already waited does, instead of touching freed memory and a closed (or reused) fd.
 * The oldest grave is emptied when a newer channel needs it, if no reader holds it (one
 * that does sleeps for ever: the channel is left to it).
 */
enum { CHANNEL_GRAVES = 8 };
static struct urnic_rdma_channel *graves[CHANNEL_GRAVES];
static unsigned graves_next;
static pthread_mutex_t graves_lock = PTHREAD_MUTEX_INITIALIZER;

static void channel_free(struct urnic_rdma_channel *c)
{
	close(c->ch.fd);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* Drops a reference; with the last, the destroyed channel is buried. */
static void channel_put(struct urnic_rdma_channel *c)
{
	struct urnic_rdma_channel *old = NULL;

	if (atomic_fetch_sub(&c->refs, 1) != 1)
		return;
	pthread_mutex_lock(&graves_lock);
	if (!c->buried) {
		c->buried = true;
		old = graves[graves_next];
		graves[graves_next] = c;
		graves_next = (graves_next + 1) % CHANNEL_GRAVES;
	}
	pthread_mutex_unlock(&graves_lock);
	if (old && !atomic_load(&old->refs))
		channel_free(old);
}

/*
 * rdma_destroy_event_channel(3) wants its ids destroyed and its events acked first, but
 * programs (rping) destroy it while a thread of theirs still waits in rdma_get_cm_event:
 * over Linux that thread stays asleep in read(2) for ever (the rdma_cm file is released
 * only when the read returns), and rping's thread would exit(-1) on an error. Here too
 * it sleeps on, and the channel's memory and fd stay for it (the reference it holds).
 */
EXPORT void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct urnic_rdma_channel *c = urnic_rdma_channel_of(channel);
	struct urnic_rdma_item *left;

	pthread_mutex_lock(&c->lock);
	atomic_store(&c->dead, true);
	left = c->head;
	c->head = c->tail = NULL;
	pthread_mutex_unlock(&c->lock);
	while (left) {
		struct urnic_rdma_item *it = left;

		left = it->next;
		/* A request never handed out: its id is the library's to end (a REJ). */
		if (!it->local && it->ev.type == URNIC_CM_EVENT_CONNECT_REQUEST &&
		    it->id->listen_id) {
			it->id->listen_id = NULL;
			rdma_destroy_id(&it->id->id);
		}
		free(it);
	}
	channel_put(c);
}

/* Appends it and wakes the channel's fd. Context: any thread, the sink's included. */
void urnic_rdma_queue(struct urnic_rdma_channel *c, struct urnic_rdma_item *it)
{
	uint64_t one = 1;

	it->next = NULL;
	pthread_mutex_lock(&c->lock);
	if (c->tail)
		c->tail->next = it;
	else
		c->head = it;
	c->tail = it;
	pthread_mutex_unlock(&c->lock);
	if (write(c->ch.fd, &one, sizeof(one)) != sizeof(one))
		abort(); /* an eventfd write fails only at a count of 2^64 - 1 */
}

/* An event this library makes itself: address and route resolution. */
int urnic_rdma_queue_local(struct urnic_rdma_id *id, enum rdma_cm_event_type type, int status)
{
	struct urnic_rdma_item *it = calloc(1, sizeof(*it));

	if (!it)
		return -ENOMEM;
	it->id = id;
	it->local = true;
	it->type = type;
	it->status = status;
	urnic_rdma_queue(urnic_rdma_channel_of(id->id.channel), it);
	return 0;
}

/* Drops the events still queued for id (rdma_destroy_id, rdma_migrate_id), and for a
 * listener the connection requests not yet taken: their ids are destroyed, which
 * rejects them (ucma_cleanup_ctx_events). The fd's count may then exceed the queue: a
 * read that finds nothing reads again. */
void urnic_rdma_purge(struct urnic_rdma_channel *c, struct urnic_rdma_id *id)
{
	struct urnic_rdma_item **pp, *it, *orphans = NULL;

	pthread_mutex_lock(&c->lock);
	c->tail = NULL;
	for (pp = &c->head; (it = *pp);) {
		bool request = !it->local && it->ev.type == URNIC_CM_EVENT_CONNECT_REQUEST &&
			       it->id->listen_id == id;

		if (it->id == id || request) {
			*pp = it->next;
			if (request) {
				it->next = orphans;
				orphans = it;
			} else {
				free(it);
			}
			continue;
		}
		c->tail = it;
		pp = &it->next;
	}
	pthread_mutex_unlock(&c->lock);
	while ((it = orphans)) {
		orphans = it->next;
		it->id->listen_id = NULL;
		rdma_destroy_id(&it->id->id);
		free(it);
	}
}

/* Moves the events queued for id from channel `from` to channel `to`, in order
 * (rdma_migrate_id(3), as the kernel's ucma_migrate_id moves them). */
void urnic_rdma_move(struct urnic_rdma_channel *from, struct urnic_rdma_channel *to,
		     struct urnic_rdma_id *id)
{
	struct urnic_rdma_item **pp, *it, *moved = NULL, **tail = &moved;

	pthread_mutex_lock(&from->lock);
	from->tail = NULL;
	for (pp = &from->head; (it = *pp);) {
		if (it->id == id) {
			*pp = it->next;
			it->next = NULL;
			*tail = it;
			tail = &it->next;
			continue;
		}
		from->tail = it;
		pp = &it->next;
	}
	pthread_mutex_unlock(&from->lock);
	while ((it = moved)) {
		moved = it->next;
		urnic_rdma_queue(to, it);
	}
}

/*
 * The device CM's sink (dev/cm.h): under the device lock, so it only finds the id and
 * queues a copy. A connection's events name its handle; a CONNECT_REQUEST names the
 * listener's user value (the id's number) and makes the passive id here, so that events
 * for the new connection that follow before the application sees it find it.
 */
bool urnic_rdma_sink_event(void *ctx, struct urnic_dev *d, const struct urnic_cm_event *ev)
{
	struct urnic_rdma_item *it = calloc(1, sizeof(*it));
	struct urnic_rdma_id *id, *child = NULL;
	struct urnic_rdma_channel *ch;

	(void)ctx;
	if (!it)
		return ev->type != URNIC_CM_EVENT_CONNECT_REQUEST;
	pthread_mutex_lock(&urnic_rdma_lock);
	id = urnic_rdma_find_conn(d, ev->conn);
	if (!id && ev->type == URNIC_CM_EVENT_CONNECT_REQUEST) {
		struct urnic_rdma_id *l = urnic_rdma_find_number(ev->user);

		if (l && !l->destroying) {
			child = urnic_rdma_id_new(l->id.channel, l->id.context, l->id.ps,
						  l->id.qp_type);
			if (child) {
				child->listen_id = l;
				child->has_conn = true;
				child->conn = ev->conn;
				child->dev = urnic_rdma_dev_by_urnic(d);
				child->state = URNIC_RDMA_CONNECT;
				child->sync = false;
				urnic_rdma_register(child);
				id = child;
			}
		}
	}
	if (!id && ev->type != URNIC_CM_EVENT_CONNECT_REQUEST)
		id = urnic_rdma_find_number(ev->user);
	if (!id || (id->destroying && !child)) {
		pthread_mutex_unlock(&urnic_rdma_lock);
		free(it);
		/* A request for a listener that is going: the device rejects it. */
		return ev->type != URNIC_CM_EVENT_CONNECT_REQUEST;
	}
	it->id = id;
	it->ev = *ev;
	it->dev = urnic_rdma_dev_by_urnic(d);
	ch = urnic_rdma_channel_of(id->id.channel); /* rdma_migrate_id changes it */
	/* Queued under the lock: rdma_destroy_id marks the id, then purges its channel of
	 * its events before it frees it; an item queued after that purge would name a freed
	 * id (perftest's ib_read_lat -R died of it one run in two, the id's memory reused). */
	urnic_rdma_queue(ch, it);
	pthread_mutex_unlock(&urnic_rdma_lock);
	return true;
}

/* Takes the oldest item, waiting on the fd as its flags say: 0, or -errno. */
static int channel_pop(struct urnic_rdma_channel *c, struct urnic_rdma_item **out)
{
	for (;;) {
		uint64_t v;
		ssize_t n = read(c->ch.fd, &v, sizeof(v));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (atomic_load(&c->dead))
			continue; /* destroyed under or before this reader: it sleeps on */
		pthread_mutex_lock(&c->lock);
		*out = c->head;
		if (*out) {
			c->head = (*out)->next;
			if (!c->head)
				c->tail = NULL;
		}
		pthread_mutex_unlock(&c->lock);
		if (*out)
			return 0;
	}
}

/* rdma_get_cm_event's work, with a reference on the channel held. */
static int next_event(struct urnic_rdma_channel *c, struct rdma_cm_event **event)
{
	for (;;) {
		struct urnic_rdma_item *it;
		struct urnic_rdma_event *e;
		int rc = channel_pop(c, &it);

		if (rc)
			return urnic_rdma_ret(rc);
		e = calloc(1, sizeof(*e));
		if (!e) {
			free(it);
			errno = ENOMEM;
			return -1;
		}
		e->id = it->id;
		if (urnic_rdma_translate(it, e)) {
			free(it);
			free(e);
			continue;
		}
		free(it);
		pthread_mutex_lock(&urnic_rdma_lock);
		e->id->events_out++;
		if (e->ev.listen_id)
			urnic_rdma_id_of(e->ev.listen_id)->events_out++;
		pthread_mutex_unlock(&urnic_rdma_lock);
		e->ev.id->event = &e->ev;
		*event = &e->ev;
		return 0;
	}
}

EXPORT int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct urnic_rdma_channel *c;
	int rc;

	if (!channel || !event) {
		errno = EINVAL;
		return -1;
	}
	c = urnic_rdma_channel_of(channel);
	atomic_fetch_add(&c->refs, 1);
	rc = next_event(c, event);
	channel_put(c);
	return rc;
}

EXPORT int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct urnic_rdma_event *e = (struct urnic_rdma_event *)event;

	if (!event) {
		errno = EINVAL;
		return -1;
	}
	/* The id may go as soon as its count drops (rdma_destroy_id waits for it). */
	if (event->id->event == event)
		event->id->event = NULL;
	pthread_mutex_lock(&urnic_rdma_lock);
	e->id->events_out--;
	if (e->ev.listen_id)
		urnic_rdma_id_of(e->ev.listen_id)->events_out--;
	pthread_cond_broadcast(&urnic_rdma_cond);
	pthread_mutex_unlock(&urnic_rdma_lock);
	free(e);
	return 0;
}

/*
 * A synchronous id (created without a channel) waits for the event its call causes
 * (librdmacm's ucma_complete): 0 when it is want with status 0, else -1 with errno from
 * its status (ECONNREFUSED for a reject). The event stays in id->event until the next.
 */
int urnic_rdma_wait_event(struct urnic_rdma_id *id, enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev;

	if (!id->sync)
		return 0;
	if (id->id.event) {
		rdma_ack_cm_event(id->id.event);
		id->id.event = NULL;
	}
	if (rdma_get_cm_event(id->id.channel, &ev))
		return -1;
	id->id.event = ev;
	if (ev->event == want && ev->status == 0)
		return 0;
	if (ev->event == RDMA_CM_EVENT_REJECTED)
		errno = ECONNREFUSED;
	else
		errno = ev->status < 0 ? -ev->status : ev->status ? ev->status : ECONNABORTED;
	return -1;
}
