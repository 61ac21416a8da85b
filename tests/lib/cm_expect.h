/* SPDX-License-Identifier: MIT */
/*
 * cm_expect.h - rdma_cm test helpers: an IPv4 sockaddr from text, and the next event of
 * a channel, which must come within a time and be of one type (its name and status
 * printed otherwise). Header-only, like check.h.
 */
#ifndef URNIC_TESTS_CM_EXPECT_H
#define URNIC_TESTS_CM_EXPECT_H

#include <arpa/inet.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>

#include <rdma/rdma_cma.h>

#include "check.h"

static inline struct sockaddr_in sin_of(const char *ip, uint16_t port)
{
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons(port) };

	CHECK(inet_pton(AF_INET, ip, &s.sin_addr) == 1);
	return s;
}

static inline struct rdma_cm_event *expect_within(struct rdma_event_channel *ch,
						  enum rdma_cm_event_type want, int timeout_ms)
{
	struct rdma_cm_event *ev;
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };

	CHECK_EQ(poll(&p, 1, timeout_ms), 1);
	CHECK_EQ(rdma_get_cm_event(ch, &ev), 0);
	if (ev->event != want)
		fprintf(stderr, "got %s (status %d), want %s\n", rdma_event_str(ev->event),
			ev->status, rdma_event_str(want));
	CHECK_EQ(ev->event, want);
	return ev;
}

#endif
