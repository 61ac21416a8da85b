/* SPDX-License-Identifier: MIT */
/*
 * rsocket_poll.c - rpoll and rselect over rsockets and ordinary fds together
 * (rsocket(7)). An rsocket is checked by processing its completions and connection
 * events; to sleep, poll(2) waits on what wakes it instead: its armed CQ's completion
 * channel once connected, its event channel while listening or connecting, its UDP and
 * CQ fds as a datagram socket. Each wake re-checks every rsocket, as rdma-core's rpoll.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>

#include "cm/rsocket.h"

#define EXPORT __attribute__((visibility("default")))

static bool always(struct urnic_rs *rs)
{
	(void)rs;
	return true;
}

static short stream_revents(struct urnic_rs *rs, short events)
{
	short rev = 0;

	if (rs->state & URNIC_RS_OPENING) {
		urnic_rs_do_connect(rs, false);
		if (rs->state & URNIC_RS_OPENING)
			return 0;
	}
	if (rs->state == URNIC_RS_LISTENING)
		return urnic_rs_cm_fd_ready(rs) ? (events & POLLIN) : 0;
	if (rs->state & (URNIC_RS_CONNECTED | URNIC_RS_DISCONNECTED | URNIC_RS_ERROR)) {
		if (rs->cq)
			urnic_rs_process(rs, true, always);
		if ((events & POLLIN) && urnic_rs_conn_have_rdata(rs))
			rev |= POLLIN;
		if ((events & POLLOUT) && urnic_rs_can_send(rs))
			rev |= POLLOUT;
		/* The hang-up waits for the data before it to be read: a reader that stops at
		 * POLLHUP (rstream's async mode) gets the last bytes the peer sent first. */
		if (!(rs->state & URNIC_RS_CONNECTED) && !urnic_rs_have_rdata(rs))
			rev |= (rs->state & URNIC_RS_DISCONNECTED) ? POLLHUP : POLLERR;
		return rev;
	}
	if (rs->state == URNIC_RS_CONNECT_ERROR)
		return (events & (POLLIN | POLLOUT)) | POLLERR;
	return 0;
}

/* The rsocket's events now, and in *wait_fd what poll(2) should wait on for more. */
static short rs_revents(struct urnic_rs *rs, short events, int *wait_fd)
{
	short rev;

	if (rs->type == SOCK_DGRAM)
		return (short)urnic_rs_dg_poll(rs, events, wait_fd);
	pthread_mutex_lock(&rs->lock);
	rev = stream_revents(rs, events);
	if (!rev && wait_fd) {
		if (rs->cq && (rs->state & (URNIC_RS_CONNECTED | URNIC_RS_DISCONNECTED))) {
			urnic_rs_arm(rs);
			rev = stream_revents(rs, events); /* what came before the arm */
			*wait_fd = rs->cc->fd;
		} else {
			*wait_fd = rs->ch->fd;
		}
	}
	pthread_mutex_unlock(&rs->lock);
	return rev;
}

static void rs_take(struct urnic_rs *rs)
{
	if (rs->type == SOCK_DGRAM) {
		urnic_rs_dg_take_events(rs);
		return;
	}
	pthread_mutex_lock(&rs->lock);
	urnic_rs_take_cq_event(rs);
	pthread_mutex_unlock(&rs->lock);
}

/* One pass: every entry's events now; with RFDS, the fds to sleep on instead. */
static int check(struct pollfd *fds, nfds_t nfds, struct pollfd *rfds)
{
	int cnt = 0;

	for (nfds_t i = 0; i < nfds; i++) {
		struct urnic_rs *rs = urnic_rs_get(fds[i].fd);

		if (rs) {
			int fd = -1;

			fds[i].revents = rs_revents(rs, fds[i].events, rfds ? &fd : NULL);
			if (rfds) {
				rfds[i].fd = fd;
				rfds[i].events = POLLIN;
			}
		} else {
			fds[i].revents = 0;
			if (fds[i].fd >= 0)
				poll(&fds[i], 1, 0);
			if (rfds) {
				rfds[i].fd = fds[i].fd;
				rfds[i].events = fds[i].events;
			}
		}
		if (fds[i].revents)
			cnt++;
	}
	return cnt;
}

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

EXPORT int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	long end = timeout > 0 ? now_ms() + timeout : 0;
	struct pollfd *rfds;
	int cnt;

	cnt = check(fds, nfds, NULL);
	if (cnt || !timeout)
		return cnt;
	rfds = calloc(nfds ? nfds : 1, sizeof(*rfds));
	if (!rfds)
		return urnic_rs_err(ENOMEM);
	for (;;) {
		int wait = 1000, rc;

		cnt = check(fds, nfds, rfds);
		if (cnt)
			break;
		if (timeout > 0) {
			long left = end - now_ms();

			if (left <= 0)
				break;
			if (left < wait)
				wait = (int)left;
		}
		rc = poll(rfds, nfds, wait);
		if (rc < 0) {
			cnt = -1;
			break;
		}
		for (nfds_t i = 0; i < nfds; i++) {
			struct urnic_rs *rs = urnic_rs_get(fds[i].fd);

			if (rs && rfds[i].revents)
				rs_take(rs);
		}
	}
	{
		int e = errno;

		free(rfds);
		errno = e;
	}
	return cnt;
}

static struct pollfd *select_to_poll(int *nfds, fd_set *r, fd_set *w, fd_set *x)
{
	struct pollfd *fds = calloc(*nfds ? *nfds : 1, sizeof(*fds));
	int n = 0;

	if (!fds)
		return NULL;
	for (int fd = 0; fd < *nfds; fd++) {
		short ev = 0;
		bool any = false;

		if (r && FD_ISSET(fd, r)) {
			ev |= POLLIN;
			any = true;
		}
		if (w && FD_ISSET(fd, w)) {
			ev |= POLLOUT;
			any = true;
		}
		if (x && FD_ISSET(fd, x)) {
			ev |= POLLPRI;
			any = true;
		}
		if (any) {
			fds[n].fd = fd;
			fds[n].events = ev;
			n++;
		}
	}
	*nfds = n;
	return fds;
}

EXPORT int rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
		   struct timeval *timeout)
{
	int to = timeout ? (int)(timeout->tv_sec * 1000 + timeout->tv_usec / 1000) : -1;
	struct pollfd *fds = select_to_poll(&nfds, readfds, writefds, exceptfds);
	int rc, cnt = 0;

	if (!fds)
		return urnic_rs_err(ENOMEM);
	rc = rpoll(fds, nfds, to);
	if (readfds)
		FD_ZERO(readfds);
	if (writefds)
		FD_ZERO(writefds);
	if (exceptfds)
		FD_ZERO(exceptfds);
	for (int i = 0; rc > 0 && i < nfds; i++) {
		if (readfds && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
			FD_SET(fds[i].fd, readfds);
			cnt++;
		}
		if (writefds && (fds[i].revents & (POLLOUT | POLLERR))) {
			FD_SET(fds[i].fd, writefds);
			cnt++;
		}
		if (exceptfds && (fds[i].revents & POLLPRI)) {
			FD_SET(fds[i].fd, exceptfds);
			cnt++;
		}
	}
	free(fds);
	return rc > 0 ? cnt : rc;
}
