/* SPDX-License-Identifier: MIT */
/*
 * cq.c - completion queues and completion channels.
 *
 * ibv_create_cq(3), ibv_resize_cq(3), ibv_get_cq_event(3), ibv_req_notify_cq(3): a
 * channel is a pipe the engine writes a CQ pointer into when an armed CQ gets a
 * completion (IBTA 11.4.2.2), so its fd works with poll/epoll and O_NONBLOCK as
 * applications expect.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs/verbs.h"

URNIC_EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct urnic_vchannel *v = calloc(1, sizeof(*v));
	int fds[2];

	if (!v) {
		errno = ENOMEM;
		return NULL;
	}
	if (pipe2(fds, O_CLOEXEC) < 0) {
		free(v);
		return NULL;
	}
	/* The engine must never block on a slow consumer. */
	fcntl(fds[1], F_SETFL, O_NONBLOCK);
	v->ibch.context = context;
	v->ibch.fd = fds[0];
	v->ibch.refcnt = 0;
	v->write_fd = fds[1];
	return &v->ibch;
}

URNIC_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct urnic_vchannel *v = urnic_container_of(channel, struct urnic_vchannel, ibch);

	if (v->users)
		return EBUSY;
	close(v->ibch.fd);
	close(v->write_fd);
	free(v);
	return 0;
}

struct urnic_vcq *urnic_cq_create(struct ibv_context *context, int cqe, void *cq_context,
				  struct ibv_comp_channel *channel, int comp_vector,
				  const struct urnic_ring_mem *mem, bool timestamps)
{
	struct urnic_dev *d = urnic_ctx_dev(context);
	struct urnic_vcq *v;

	if (cqe < 1 || (uint32_t)cqe > d->lim.max_cqe || comp_vector < 0 ||
	    comp_vector >= context->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	/* The device's max_cq (dev/limits.def): ENOMEM, "not enough resources". */
	if (urnic_dev_res_get(d, URNIC_RES_CQ)) {
		errno = ENOMEM;
		return NULL;
	}
	v = calloc(1, sizeof(*v));
	if (!v || urnic_dev_cq_create(d, &v->cq, (uint32_t)cqe, mem, timestamps)) {
		free(v);
		urnic_dev_res_put(d, URNIC_RES_CQ);
		errno = ENOMEM;
		return NULL;
	}
	v->ibcq.context = context;
	v->ibcq.channel = channel;
	v->ibcq.cq_context = cq_context;
	v->ibcq.cqe = cqe;
	pthread_mutex_init(&v->ibcq.mutex, NULL);
	pthread_cond_init(&v->ibcq.cond, NULL);
	if (channel) {
		v->vch = urnic_container_of(channel, struct urnic_vchannel, ibch);
		v->vch->users++;
		v->cq.event_fd = v->vch->write_fd;
		v->cq.event_cookie = &v->ibcq;
	}
	return v;
}

URNIC_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
					  struct ibv_comp_channel *channel, int comp_vector)
{
	struct urnic_vcq *v =
		urnic_cq_create(context, cqe, cq_context, channel, comp_vector, NULL, false);

	return v ? &v->ibcq : NULL;
}

URNIC_EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct urnic_vcq *v = to_vcq(cq);
	struct urnic_dev *d = urnic_ctx_dev(cq->context);

	if (v->users)
		return EBUSY;
	urnic_dev_cq_destroy(d, &v->cq); /* no event to its channel after this */
	if (v->parent)
		urnic_parent_release(v->parent); /* its ring went back through it */
	if (v->vch)
		v->vch->users--;
	pthread_cond_destroy(&cq->cond);
	pthread_mutex_destroy(&cq->mutex);
	free(v);
	urnic_dev_res_put(d, URNIC_RES_CQ);
	return 0;
}

/* ibv_resize_cq(3): 0 or an errno; cq->cqe becomes the new capacity. Like rxe, a CQ
 * may also shrink, down to the completions not yet polled. */
URNIC_EXPORT int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	struct urnic_vcq *v = to_vcq(cq);
	struct urnic_dev *d = urnic_ctx_dev(cq->context);
	int rc;

	if (cqe < 1 || (uint32_t)cqe > d->lim.max_cqe)
		return EINVAL;
	rc = urnic_dev_cq_resize(d, &v->cq, (uint32_t)cqe);
	/* The ABI's copy for the application: nothing in urnic reads it. */
	if (rc == 0)
		cq->cqe = cqe;
	return -rc;
}

URNIC_EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
				  void **cq_context)
{
	struct ibv_cq *got;

	urnic_dev_app_sleeps(); /* on its CPU, an engine thread may poll on */
	if (read(channel->fd, &got, sizeof(got)) != sizeof(got))
		return -1;
	*cq = got;
	*cq_context = got->cq_context;
	return 0;
}

URNIC_EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

int urnic_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	struct urnic_vcq *v = to_vcq(cq);

	urnic_cq_arm(&v->cq, solicited_only);
	urnic_dev_app_idle(urnic_ctx_dev(cq->context));
	return 0;
}

_Static_assert((int)IBV_WC_SUCCESS == (int)URNIC_WC_SUCCESS &&
		       (int)IBV_WC_GENERAL_ERR == (int)URNIC_WC_GENERAL_ERR,
	       "completion status values");
_Static_assert((int)IBV_WC_RECV == (int)URNIC_WC_RECV &&
		       (int)IBV_WC_RECV_RDMA_WITH_IMM == (int)URNIC_WC_RECV_RDMA_WITH_IMM &&
		       (int)IBV_WC_FETCH_ADD == (int)URNIC_WC_FETCH_ADD,
	       "completion opcode values");
_Static_assert((int)IBV_WC_WITH_IMM == (int)URNIC_WC_WITH_IMM &&
		       (int)IBV_WC_WITH_INV == (int)URNIC_WC_WITH_INV,
	       "completion flags");
_Static_assert((int)IBV_WC_GRH == (int)URNIC_WC_WITH_GRH, "completion flags: UD's GRH");

static int poll_ring(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct urnic_cq *cq = &to_vcq(ibcq)->cq;
	uint32_t cons, prod;
	int got = 0;

	pthread_spin_lock(&cq->poll_lock);
	cons = atomic_load_explicit(&cq->cons, memory_order_relaxed);
	prod = atomic_load_explicit(&cq->prod, memory_order_acquire);
	while (got < num_entries && cons != prod) {
		const struct urnic_cqe *c = &cq->ring[cons & (cq->depth - 1)];
		struct ibv_wc *w = &wc[got++];

		memset(w, 0, sizeof(*w));
		w->wr_id = c->wr_id;
		w->status = (enum ibv_wc_status)c->status;
		w->opcode = (enum ibv_wc_opcode)c->opcode;
		w->vendor_err = c->vendor_err;
		w->byte_len = c->byte_len;
		w->imm_data = c->imm_be;
		w->qp_num = c->qp_num;
		w->src_qp = c->src_qp;
		w->wc_flags = c->wc_flags;
		w->sl = c->sl;
		cons++;
	}
	atomic_store_explicit(&cq->cons, cons, memory_order_release);
	pthread_spin_unlock(&cq->poll_lock);
	return got;
}

/* Empty polls in a row after which a polling thread yields its CPU once: a peer
 * process or the engine thread may need that very CPU to produce the completion
 * (two spinning pingpong processes pinned to one CPU: 8 ms/iter without it). */
#define EMPTY_POLLS_BEFORE_YIELD 64

int urnic_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	static __thread unsigned int empty_polls;
	int got;

	/* A poll ends a streak of posts: the next post sends at once (pipeline.c). */
	urnic_dev_polled(urnic_ctx_dev(ibcq->context));
	got = poll_ring(ibcq, num_entries, wc);

	if (got)
		goto found;
	/* Nothing yet: drive the pipeline from this thread and look again. */
	if (urnic_dev_progress(urnic_ctx_dev(ibcq->context),
			       atomic_load(&to_vcq(ibcq)->cq.arm) == URNIC_CQ_DISARMED)) {
		got = poll_ring(ibcq, num_entries, wc);
		if (got)
			goto found;
	}
	if (++empty_polls % EMPTY_POLLS_BEFORE_YIELD == 0)
		sched_yield();
	return 0;
found:
	empty_polls = 0;
	return got;
}
