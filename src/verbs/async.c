/* SPDX-License-Identifier: MIT */
/*
 * async.c - asynchronous events: ibv_get_async_event and ibv_ack_async_event.
 *
 * ibv_get_async_event(3): the context's async_fd is the read end of a pipe carrying
 * struct ibv_async_event records, so it blocks, or returns EAGAIN when the application
 * made it non-blocking, and works with poll/epoll. Events raised today: QP fatal when a
 * QP falls into error by itself (IBTA 11.6.3.1; as rxe raises IB_EVENT_QP_FATAL), Last
 * WQE Reached when a QP on an SRQ enters error, SRQ limit reached when an armed SRQ
 * falls below its limit (IBTA 10.2.9, 11.6.3).
 */
#include <errno.h>
#include <unistd.h>

#include "verbs/verbs.h"

void urnic_async_event(struct ibv_context *context, enum ibv_event_type type, void *element)
{
	struct urnic_vcontext *c = urnic_container_of(context, struct urnic_vcontext, vctx.context);
	struct ibv_async_event ev = { .event_type = type };
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
	/* A full pipe means the application is not reading its events: drop, as a full
	 * event queue on a real device overflows. */
	n = write(c->async_write_fd, &ev, sizeof(ev));
	(void)n;
}

URNIC_EXPORT int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	if (read(context->async_fd, event, sizeof(*event)) != sizeof(*event))
		return -1;
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

/* The engine's hook (engine.h qp_fatal), under the device lock. */
void urnic_verbs_qp_fatal(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct ibv_qp *ibqp = qp->owner;

	if (ibqp)
		urnic_async_event(ibqp->context, IBV_EVENT_QP_FATAL, ibqp);
}

/* The engine's hook (engine.h qp_last_wqe), under the device lock. */
void urnic_verbs_qp_last_wqe(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct ibv_qp *ibqp = qp->owner;

	if (ibqp)
		urnic_async_event(ibqp->context, IBV_EVENT_QP_LAST_WQE_REACHED, ibqp);
}

/* The engine's hook (engine.h srq_limit), under the device lock. */
void urnic_verbs_srq_limit(struct urnic_engine *e, struct urnic_srq *srq)
{
	struct ibv_srq *ibsrq = srq->owner;

	if (ibsrq)
		urnic_async_event(ibsrq->context, IBV_EVENT_SRQ_LIMIT_REACHED, ibsrq);
}
