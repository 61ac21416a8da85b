/* SPDX-License-Identifier: MIT */
/*
 * iw_conn.c - an iWARP device's TCP connections (iw_conn.h, iw_dev.h): the table of the
 * QPs' sockets (one slot per QP slot of the engine), an epoll set the engine thread
 * sleeps on, and the passes' I/O: each pass reads the sockets epoll says are ready into
 * the device's buffer and gives the bytes to their QPs (engine/iwarp/iw_qp.h) before the
 * engine runs, and writes every QP the engine left bytes or a close on after it, many
 * FPDUs per sendmsg (transport/tcp.h). A socket that is full waits for EPOLLOUT. The
 * engine thread serves the connections itself, so a peer's WRITE or READ completes
 * without the target's application calling anything.
 *
 * Ends (RFC 5040 6.2, the LLP's close): the peer's FIN, a reset or a socket error ends
 * the connection at once (urnic_iw_llp_closed: the QP enters error, its work flushed),
 * the socket is closed and the sink hears err 0, ECONNRESET or the errno. This side
 * ends it when urnic_dev_iw_disconnect asked or the QP's close is due (a Terminate, the
 * QP leaving RTS): once the queued bytes went, FIN, then the peer's FIN (or
 * CLOSE_TIMEOUT_NS) closes the socket and the sink hears 0 after a disconnect, else
 * EPROTO (or ETIMEDOUT when the peer never closed).
 */
#include "dev/iw_conn.h"
#include "dev/device.h"
#include "dev/iw_dev.h"
#include "transport/tcp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

/* The bytes one read takes: rx takes them all before the next read (iw_qp.h), so one
 * buffer serves every connection of the device. */
#define RBUF_BYTES (256u * 1024)
/* The bytes a connection may read, or write, in one pass, so that one busy connection
 * leaves the others and the engine their turn; the rest waits for the next pass. */
#define PASS_BUDGET_BYTES (4u * 1024 * 1024)
/* The iovecs one write offers: as many FPDUs in one sendmsg. */
#define WRITE_IOVS 64
/* A read shorter than this ends the connection's turn (read_conn). */
#define SMALL_READ_BYTES (16u * 1024)
/* How many ready sockets one epoll_wait reports. */
#define EPOLL_BATCH 64
/* How long after this side's FIN the peer has to close its side. */
#define CLOSE_TIMEOUT_NS 3000000000ull

struct iw_conn {
	struct urnic_qp *qp; /* NULL: a free slot */
	void *user;
	int fd;
	uint32_t gen;	/* this slot's connections so far: stale epoll events are known */
	bool out_armed; /* EPOLLOUT asked for: the socket was full */
	bool leaving;	/* urnic_dev_iw_disconnect: FIN once the queued bytes went */
	bool shut;	/* FIN sent: waiting for the peer's */
	bool rx_dead;	/* the QP's stream failed: what is read is of no use */
	uint64_t shut_ns;
};

struct urnic_dev_iw {
	int epfd;
	uint32_t closing; /* connections leaving or shut: the timers to look at */
	uint8_t *rbuf;
	struct iw_conn conns[URNIC_MAX_QP];
};

static uint64_t *ctr(struct urnic_dev *d)
{
	return d->eng->stats.counters;
}

int urnic_dev_iw_init(struct urnic_dev *d)
{
	struct urnic_dev_iw *iw = calloc(1, sizeof(*iw));

	if (!iw)
		return -ENOMEM;
	iw->rbuf = malloc(RBUF_BYTES);
	iw->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!iw->rbuf || iw->epfd < 0) {
		int ret = iw->rbuf ? -errno : -ENOMEM;

		if (iw->epfd >= 0)
			close(iw->epfd);
		free(iw->rbuf);
		free(iw);
		return ret;
	}
	d->iw = iw;
	return 0;
}

void urnic_dev_iw_fini(struct urnic_dev *d)
{
	struct urnic_dev_iw *iw = d->iw;

	if (!iw)
		return;
	for (uint32_t i = 0; i < URNIC_MAX_QP; i++)
		if (iw->conns[i].qp)
			close(iw->conns[i].fd);
	close(iw->epfd);
	free(iw->rbuf);
	free(iw);
	d->iw = NULL;
}

int urnic_dev_iw_fd(const struct urnic_dev *d)
{
	return d->iw ? d->iw->epfd : -1;
}

void urnic_dev_iw_set_sink(struct urnic_dev *d, const struct urnic_dev_iw_sink *sink)
{
	pthread_mutex_lock(&d->lock);
	d->iw_sink = sink ? *sink : (struct urnic_dev_iw_sink){ 0 };
	pthread_mutex_unlock(&d->lock);
}

static struct iw_conn *conn_of(struct urnic_dev_iw *iw, const struct urnic_qp *qp)
{
	struct iw_conn *c = &iw->conns[qp->qpn & (URNIC_MAX_QP - 1)];

	return c->qp == qp ? c : NULL;
}

static uint64_t ev_data(const struct urnic_dev_iw *iw, const struct iw_conn *c)
{
	return (uint64_t)c->gen << 32 | (uint64_t)(c - iw->conns);
}

static void watch(struct urnic_dev_iw *iw, struct iw_conn *c, bool out)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | (out ? EPOLLOUT : 0),
				  .data.u64 = ev_data(iw, c) };

	if (epoll_ctl(iw->epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
		c->out_armed = out;
}

/* The connection is over: the QP hears it (unless it is being reset or destroyed), the
 * socket closes, the slot frees, and the sink hears err (say: the sink's word). */
static void end_conn(struct urnic_dev *d, struct iw_conn *c, int err, bool say, uint64_t now)
{
	struct urnic_dev_iw *iw = d->iw;
	void *user = c->user;

	if (say)
		urnic_iw_llp_closed(d->eng, c->qp, err, now);
	epoll_ctl(iw->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (c->leaving || c->shut)
		iw->closing--;
	*c = (struct iw_conn){ .gen = c->gen + 1, .fd = -1 };
	if (say && d->iw_sink.closed)
		d->iw_sink.closed(d->iw_sink.ctx, d, user, err);
}

/* A socket error's errno as the sink hears it: a write to a peer gone is a reset. */
static int sock_err(struct urnic_dev *d, ssize_t r)
{
	int err = r == -EPIPE ? ECONNRESET : (int)-r;

	ctr(d)[err == ECONNRESET ? URNIC_CTR_tcp_reset : URNIC_CTR_tcp_error]++;
	return err;
}

/* What the sink hears when the peer closes after this side did: 0 after a disconnect,
 * EPROTO when the QP ended the stream (a Terminate, or it left RTS). */
static int own_close_err(const struct iw_conn *c)
{
	return c->leaving ? 0 : EPROTO;
}

int urnic_dev_iw_attach(struct urnic_dev *d, struct urnic_qp *qp, int fd,
			const struct urnic_iw_conn_params *p, const uint8_t *rest, size_t n,
			void *user)
{
	uint64_t now = urnic_dev_now_ns();
	struct urnic_iw_conn_params q;
	struct urnic_dev_iw *iw;
	struct epoll_event ev;
	struct iw_conn *c;
	uint32_t mss;
	int ret;

	ret = urnic_tcp_setup(fd, NULL, &mss);
	pthread_mutex_lock(&d->lock);
	iw = d->iw;
	if (!iw || !d->eng) {
		ret = -ENODEV; /* not an iWARP device, or not open */
		goto unlock;
	}
	c = &iw->conns[qp->qpn & (URNIC_MAX_QP - 1)];
	if (ret == 0 && (c->qp || d->eng->qpt.qps[qp->qpn & (URNIC_MAX_QP - 1)] != qp))
		ret = c->qp == qp ? -EISCONN : -EINVAL;
	if (ret)
		goto refused;
	ev = (struct epoll_event){ .events = EPOLLIN | EPOLLRDHUP, .data.u64 = ev_data(iw, c) };
	if (epoll_ctl(iw->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		ret = -errno;
		goto refused;
	}
	q = *p;
	if (!q.mss)
		q.mss = mss; /* the socket's own: the largest FPDU a segment carries */
	ret = urnic_iw_qp_connect(d->eng, qp, &q, now);
	if (ret) {
		epoll_ctl(iw->epfd, EPOLL_CTL_DEL, fd, NULL);
		goto refused;
	}
	*c = (struct iw_conn){ .qp = qp, .user = user, .fd = fd, .gen = c->gen };
	ctr(d)[URNIC_CTR_tcp_conn_attached]++;
	if (n) {
		ctr(d)[URNIC_CTR_tcp_rx_bytes] += n;
		c->rx_dead = urnic_iw_rx(d->eng, qp, rest, n, now) < n;
	}
	urnic_dev_notify_cqs(d);
	pthread_mutex_unlock(&d->lock);
	urnic_dev_kick(d); /* what the QP has to say goes out from the engine thread */
	return 0;

refused:
	ctr(d)[URNIC_CTR_tcp_attach_refused]++;
unlock:
	pthread_mutex_unlock(&d->lock);
	return ret;
}

void urnic_dev_iw_disconnect(struct urnic_dev *d, struct urnic_qp *qp)
{
	struct iw_conn *c;

	pthread_mutex_lock(&d->lock);
	c = d->iw ? conn_of(d->iw, qp) : NULL;
	if (c && !c->leaving) {
		if (!c->shut)
			d->iw->closing++;
		c->leaving = true;
	}
	pthread_mutex_unlock(&d->lock);
	if (c)
		urnic_dev_kick(d); /* the next pass sends what is queued, then the FIN */
}

void urnic_dev_iw_forget(struct urnic_dev *d, struct urnic_qp *qp)
{
	struct iw_conn *c = d->iw ? conn_of(d->iw, qp) : NULL;

	if (c)
		end_conn(d, c, 0, false, 0);
}

/* Reads what the socket holds, up to the pass's budget, into the QP. */
static bool read_conn(struct urnic_dev *d, struct iw_conn *c, uint64_t now)
{
	struct urnic_dev_iw *iw = d->iw;
	size_t budget = PASS_BUDGET_BYTES;
	bool did = false;

	while (budget) {
		ssize_t r = urnic_tcp_read(c->fd, iw->rbuf, RBUF_BYTES);

		if (r == -EAGAIN)
			break;
		did = true;
		if (r == 0) { /* the peer's FIN */
			if (c->shut) {
				end_conn(d, c, own_close_err(c), true, now);
			} else {
				ctr(d)[URNIC_CTR_tcp_closed_by_peer]++;
				end_conn(d, c, 0, true, now);
			}
			break;
		}
		if (r < 0) {
			end_conn(d, c, sock_err(d, r), true, now);
			break;
		}
		budget -= (size_t)r < budget ? (size_t)r : budget;
		if (c->rx_dead || c->shut) {
			ctr(d)[URNIC_CTR_tcp_rx_discarded] += (uint64_t)r;
			continue;
		}
		ctr(d)[URNIC_CTR_tcp_rx_bytes] += (uint64_t)r;
		if (urnic_iw_rx(d->eng, c->qp, iw->rbuf, (size_t)r, now) < (size_t)r)
			c->rx_dead = true; /* a Terminate is queued; the close follows it */
		/* A small read drained the socket (tcp(7) reads what is queued, up to cap):
		 * a ping-pong's message. What comes later, or the FIN, is the next
		 * epoll_wait's (level-triggered); the read that would only say EAGAIN was a
		 * third of such a message's calls. A bulk stream's reader reads on, as
		 * before: the sender refills meanwhile (docs/performance.md, iWARP). */
		if ((size_t)r < SMALL_READ_BYTES)
			break;
	}
	return did;
}

bool urnic_dev_iw_rx(struct urnic_dev *d, uint64_t now_ns)
{
	struct urnic_dev_iw *iw = d->iw;
	struct epoll_event ev[EPOLL_BATCH];
	bool did = false;
	int n;

	n = epoll_wait(iw->epfd, ev, EPOLL_BATCH, 0);
	for (int i = 0; i < n; i++) {
		struct iw_conn *c = &iw->conns[(uint32_t)ev[i].data.u64 % URNIC_MAX_QP];

		if (!c->qp || c->gen != (uint32_t)(ev[i].data.u64 >> 32))
			continue; /* ended earlier in this pass */
		if ((ev[i].events & EPOLLOUT) && c->out_armed)
			watch(iw, c, false); /* room again: this pass's writes use it */
		if (ev[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
			did |= read_conn(d, c, now_ns);
	}
	return did;
}

/* This side's FIN, once the queued bytes went; after a disconnect the QP enters error
 * (its work flushed), as rdma_disconnect moves it. */
static void shut_conn(struct urnic_dev *d, struct iw_conn *c, uint64_t now)
{
	int ret = urnic_tcp_shutdown(c->fd);

	if (ret) {
		end_conn(d, c, sock_err(d, ret), true, now);
		return;
	}
	if (!c->leaving)
		d->iw->closing++;
	c->shut = true;
	c->shut_ns = now;
	ctr(d)[URNIC_CTR_tcp_closed_by_qp]++;
	if (c->leaving && c->qp->state != URNIC_QPS_ERR)
		urnic_engine_qp_apply(d->eng, c->qp, &c->qp->attr, URNIC_QPS_ERR, URNIC_QP_STATE,
				      now);
}

/* Writes what the QP has queued, up to the pass's budget; a full socket waits for
 * room. Then the FIN if the close is due and nothing is left. */
static bool write_conn(struct urnic_dev *d, struct iw_conn *c, uint64_t now)
{
	size_t budget = PASS_BUDGET_BYTES;
	struct iovec iov[WRITE_IOVS];
	bool did = false;

	while (!c->out_armed && !c->shut && budget) {
		unsigned n = urnic_iw_tx_peek(c->qp, iov, WRITE_IOVS);
		ssize_t r;

		if (!n)
			break;
		r = urnic_tcp_write(c->fd, iov, n);
		if (r == -EAGAIN) {
			ctr(d)[URNIC_CTR_tcp_tx_full]++;
			watch(d->iw, c, true);
			break;
		}
		if (r < 0) {
			end_conn(d, c, sock_err(d, r), true, now);
			return true;
		}
		ctr(d)[URNIC_CTR_tcp_tx_bytes] += (uint64_t)r;
		urnic_iw_tx_done(d->eng, c->qp, (size_t)r);
		budget -= (size_t)r < budget ? (size_t)r : budget;
		did = true;
	}
	if (!c->shut && !urnic_iw_tx_pending(c->qp) && (c->leaving || urnic_iw_close_due(c->qp))) {
		shut_conn(d, c, now);
		did = true;
	}
	return did;
}

/* Disconnects whose QP had nothing queued (urnic_iw_tx_ready does not name it), and
 * peers that did not close in time. */
static bool closing_conns(struct urnic_dev *d, uint64_t now, uint64_t *deadline)
{
	struct urnic_dev_iw *iw = d->iw;
	bool did = false;

	/* Slots past the engine's last QP hold no connection. */
	for (uint32_t i = 0; i < d->eng->qpt.end && iw->closing; i++) {
		struct iw_conn *c = &iw->conns[i];
		uint64_t due;

		if (!c->qp || !(c->leaving || c->shut))
			continue;
		if (!c->shut)
			did |= write_conn(d, c, now);
		if (!c->qp || !c->shut)
			continue;
		due = c->shut_ns + CLOSE_TIMEOUT_NS;
		if (now >= due) {
			ctr(d)[URNIC_CTR_tcp_close_timeout]++;
			end_conn(d, c, c->leaving ? 0 : ETIMEDOUT, true, now);
			did = true;
		} else if (!*deadline || due < *deadline) {
			*deadline = due;
		}
	}
	return did;
}

bool urnic_dev_iw_tx(struct urnic_dev *d, uint64_t now_ns, uint64_t *deadline)
{
	struct urnic_dev_iw *iw = d->iw;
	struct urnic_qp *qp;
	uint32_t cursor = 0;
	bool did = false;

	while ((qp = urnic_iw_tx_ready(d->eng, &cursor))) {
		struct iw_conn *c = conn_of(iw, qp);

		if (c)
			did |= write_conn(d, c, now_ns);
	}
	if (iw->closing)
		did |= closing_conns(d, now_ns, deadline);
	return did;
}

/* The device's iwcm_<name> counters are the CM's table, in the same order. */
_Static_assert(URNIC_CTR_iwcm_disconnected - URNIC_CTR_iwcm_connect + 1 == URNIC_RDMA_IW_C_COUNT,
	       "a device counter per CM counter");

void urnic_dev_iw_count(struct urnic_dev *d, enum urnic_rdma_iw_counter cm)
{
	unsigned int c = URNIC_CTR_iwcm_connect + (unsigned int)cm;

	if (cm >= URNIC_RDMA_IW_C_COUNT)
		return;
	/* The next publish copies the engine's value, which has this one in it too. */
	__atomic_fetch_add(&d->eng->stats.counters[c], 1, __ATOMIC_RELAXED);
	if (d->shm_counters)
		__atomic_fetch_add(&d->shm_counters[c], 1, __ATOMIC_RELAXED);
}
