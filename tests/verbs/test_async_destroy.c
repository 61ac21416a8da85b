/* SPDX-License-Identifier: MIT */
/*
 * test_async_destroy.c - async events and the destroy of their QP, as
 * ibv_get_async_event(3) requires: ibv_destroy_qp waits until every event the
 * application got for the QP is acknowledged (UCX acknowledges from its async thread
 * while its main thread destroys), and an event still unread when its QP goes is not
 * delivered (its element would point to freed memory; the kernel drops it too).
 * QPs on an SRQ raise IBV_EVENT_QP_LAST_WQE_REACHED when moved to ERR (IBTA 11.6.3.1).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "check.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_srq *srq;

static struct ibv_qp *qp_on_srq_in_error(void)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	CHECK(qp);
	CHECK_EQ(
		ibv_modify_qp(qp, &a,
			      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
		0);
	a.qp_state = IBV_QPS_ERR;
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	return qp;
}

/* Waits up to 2 s for the async fd to have something to read. */
static int readable(void)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };

	return poll(&p, 1, 2000);
}

static atomic_bool destroyed;

static void *destroy_thread(void *qp)
{
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	atomic_store(&destroyed, true);
	return NULL;
}

int main(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_async_event ev;
	struct ibv_qp *qp;
	pthread_t th;

	CHECK(list && list[0]);
	ctx = ibv_open_device(list[0]);
	CHECK(ctx);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	srq = ibv_create_srq(pd, &sa);
	CHECK(pd && cq && srq);

	/* Raised, unread, its QP destroyed: never delivered. */
	qp = qp_on_srq_in_error();
	CHECK_EQ(readable(), 1);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(fcntl(ctx->async_fd, F_SETFL, O_NONBLOCK), 0);
	errno = 0;
	CHECK_EQ(ibv_get_async_event(ctx, &ev), -1);
	CHECK_EQ(errno, EAGAIN);
	printf("ok an unread event of a destroyed QP is not delivered\n");

	/* Read, not acknowledged: the destroy waits for the acknowledgement. */
	CHECK_EQ(fcntl(ctx->async_fd, F_SETFL, 0), 0);
	qp = qp_on_srq_in_error();
	CHECK_EQ(ibv_get_async_event(ctx, &ev), 0);
	CHECK(ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED && ev.element.qp == qp);
	CHECK_EQ(pthread_create(&th, NULL, destroy_thread, qp), 0);
	usleep(200000);
	CHECK(!atomic_load(&destroyed));
	ibv_ack_async_event(&ev);
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK(atomic_load(&destroyed));
	printf("ok ibv_destroy_qp waited for ibv_ack_async_event\n");

	/* The next QP, perhaps at the freed one's address, gets its own events. */
	qp = qp_on_srq_in_error();
	CHECK_EQ(ibv_get_async_event(ctx, &ev), 0);
	CHECK(ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED && ev.element.qp == qp);
	ibv_ack_async_event(&ev);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	printf("ok a new QP's event arrives and is acknowledged\n");

	CHECK_EQ(ibv_destroy_srq(srq), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	ibv_free_device_list(list);
	return 0;
}
