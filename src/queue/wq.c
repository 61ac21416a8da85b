/* SPDX-License-Identifier: MIT */
/*
 * wq.c - allocation of work queue and completion queue rings, and the CQ's push/poll.
 *
 * IBTA 11.4.2 (completion queues): completions are returned oldest first; an overrun
 * is reported to the producer. Completion events (IBTA 11.4.2.2, ibv_req_notify_cq):
 * once per arming, the CQ is put on its device's list of due channels, which the device
 * writes the CQ's cookie into (dev/): no system call here. Ring memory comes from calloc
 * or from the creator's allocator (struct urnic_ring_mem), zeroed either way.
 */
#include "queue/wq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* n zeroed elements of size bytes from mem (NULL: calloc); *from says which gave them. */
static void *ring_get(const struct urnic_ring_mem *mem, enum urnic_ring_kind kind, size_t n,
		      size_t size, const struct urnic_ring_mem **from)
{
	void *p;

	*from = NULL;
	if (mem) {
		p = mem->get(mem->arg, n * size, URNIC_RING_ALIGN, kind);
		if (p != URNIC_RING_MEM_DEFAULT) {
			if (p) {
				memset(p, 0, n * size);
				*from = mem;
			}
			return p;
		}
	}
	return calloc(n, size);
}

static void ring_put(const struct urnic_ring_mem *from, enum urnic_ring_kind kind, void *p)
{
	if (from)
		from->put(from->arg, p, kind);
	else
		free(p);
}

int urnic_wq_init_mem(struct urnic_wq *wq, uint32_t max_wr, uint32_t slot_bytes,
		      const struct urnic_ring_mem *mem, enum urnic_ring_kind kind)
{
	memset(wq, 0, sizeof(*wq));
	wq->max_wr = max_wr;
	wq->depth = pow2_at_least(max_wr ? max_wr : 1);
	wq->slot_bytes = slot_bytes;
	wq->kind = (uint8_t)kind;
	wq->slots = ring_get(mem, kind, wq->depth, slot_bytes, &wq->slots_from);
	if (!wq->slots)
		return -ENOMEM;
	pthread_spin_init(&wq->lock, PTHREAD_PROCESS_PRIVATE);
	return 0;
}

int urnic_wq_init(struct urnic_wq *wq, uint32_t max_wr, uint32_t slot_bytes)
{
	return urnic_wq_init_mem(wq, max_wr, slot_bytes, NULL, URNIC_RING_SQ);
}

void urnic_wq_fini(struct urnic_wq *wq)
{
	if (!wq->slots)
		return;
	pthread_spin_destroy(&wq->lock);
	ring_put(wq->slots_from, (enum urnic_ring_kind)wq->kind, wq->slots);
	wq->slots = NULL;
}

int urnic_cq_init_mem(struct urnic_cq *cq, uint32_t cqe, const struct urnic_ring_mem *mem)
{
	memset(cq, 0, sizeof(*cq));
	cq->cqe = cqe;
	cq->depth = pow2_at_least(cqe + 1);
	cq->mem = mem;
	cq->ring = ring_get(mem, URNIC_RING_CQ, cq->depth, sizeof(*cq->ring), &cq->ring_from);
	if (!cq->ring)
		return -ENOMEM;
	cq->event_fd = -1;
	pthread_spin_init(&cq->poll_lock, PTHREAD_PROCESS_PRIVATE);
	return 0;
}

int urnic_cq_init(struct urnic_cq *cq, uint32_t cqe)
{
	return urnic_cq_init_mem(cq, cqe, NULL);
}

int urnic_cq_ring_alloc(const struct urnic_cq *cq, uint32_t cqe, struct urnic_cq_ring *r)
{
	r->cqe = cqe;
	r->depth = pow2_at_least(cqe + 1);
	r->ring = ring_get(cq->mem, URNIC_RING_CQ, r->depth, sizeof(*r->ring), &r->from);
	return r->ring ? 0 : -ENOMEM;
}

int urnic_cq_ring_swap(struct urnic_cq *cq, struct urnic_cq_ring *r)
{
	uint32_t cons = atomic_load_explicit(&cq->cons, memory_order_relaxed);
	uint32_t prod = atomic_load_explicit(&cq->prod, memory_order_relaxed);
	struct urnic_cq_ring old = { cq->ring, cq->depth, cq->cqe, cq->ring_from };

	/* ibv_resize_cq(3): at least the completions not yet polled (rxe_cq_chk_attr). */
	if (prod - cons > r->cqe)
		return -EINVAL;
	/* Same indices, new ring: the completions keep their order and positions. */
	for (uint32_t i = cons; i != prod; i++)
		r->ring[i & (r->depth - 1)] = cq->ring[i & (cq->depth - 1)];
	cq->ring = r->ring;
	cq->depth = r->depth;
	cq->cqe = r->cqe;
	cq->ring_from = r->from;
	*r = old;
	return 0;
}

void urnic_cq_ring_free(struct urnic_cq_ring *r)
{
	ring_put(r->from, URNIC_RING_CQ, r->ring);
	r->ring = NULL;
}

int urnic_cq_resize(struct urnic_cq *cq, uint32_t cqe)
{
	struct urnic_cq_ring r;
	int ret = urnic_cq_ring_alloc(cq, cqe, &r);

	if (ret)
		return ret;
	ret = urnic_cq_ring_swap(cq, &r);
	urnic_cq_ring_free(&r); /* the old ring, or the new one refused */
	return ret;
}

void urnic_cq_fini(struct urnic_cq *cq)
{
	if (!cq->ring)
		return;
	pthread_spin_destroy(&cq->poll_lock);
	ring_put(cq->ring_from, URNIC_RING_CQ, cq->ring);
	cq->ring = NULL;
}

void urnic_cq_arm(struct urnic_cq *cq, bool solicited_only)
{
	atomic_store(&cq->arm, solicited_only ? URNIC_CQ_ARM_SOLICITED : URNIC_CQ_ARM_NEXT);
	/* Pairs with the fence of notify(): see there. */
	atomic_thread_fence(memory_order_seq_cst);
}

/*
 * The arming fired: one more event for the channel, and the CQ on its device's list
 * unless it is there already (re-armed before the device wrote the last one).
 * The completion was published (prod) before the arming is read: the store-buffering
 * pattern with urnic_cq_arm, whose caller polls after arming. Of the two seq_cst fences
 * one comes first, and what was stored before it is seen after the other (C11
 * 7.17.3p6): either this reads the arming, or that poll reads the completion. Without
 * the fence a load may pass the earlier store (x86 does), and both could miss: a
 * completion nobody polls and no event for it. Only CQs with a channel pay for it.
 */
static void notify(struct urnic_cq *cq, bool solicited)
{
	struct urnic_cq_due *l = cq->due;
	int arm;

	if (cq->event_fd >= 0 && l)
		atomic_thread_fence(memory_order_seq_cst);
	arm = atomic_load_explicit(&cq->arm, memory_order_acquire);
	/* A re-arming in between (NEXT after SOLICITED) is judged as it now stands. */
	do {
		if (arm == URNIC_CQ_DISARMED || (arm == URNIC_CQ_ARM_SOLICITED && !solicited))
			return;
	} while (!atomic_compare_exchange_weak(&cq->arm, &arm, URNIC_CQ_DISARMED));
	if (cq->event_fd < 0 || !l || cq->events_due++)
		return;
	cq->due_next = NULL;
	if (l->tail)
		l->tail->due_next = cq;
	else
		l->head = cq;
	l->tail = cq;
}

bool urnic_cq_push(struct urnic_cq *cq, const struct urnic_cqe *cqe, bool solicited)
{
	uint32_t prod = atomic_load_explicit(&cq->prod, memory_order_relaxed);
	uint32_t cons = atomic_load_explicit(&cq->cons, memory_order_acquire);

	if (prod - cons >= cq->cqe) {
		cq->overflows++;
		return false;
	}
	cq->ring[prod & (cq->depth - 1)] = *cqe;
	if (cq->clock_ns) {
		uint64_t ts = *cq->clock_ns;

		if (ts < cq->last_ts_ns)
			ts = cq->last_ts_ns;
		cq->last_ts_ns = ts;
		cq->ring[prod & (cq->depth - 1)].ts_ns = ts;
	}
	atomic_store_explicit(&cq->prod, prod + 1, memory_order_release);
	/* ibv_req_notify_cq(3), IBTA 11.4.2.2: an unsuccessful completion is solicited. */
	notify(cq, solicited || cqe->status != URNIC_WC_SUCCESS);
	return true;
}

int urnic_cq_poll(struct urnic_cq *cq, struct urnic_cqe *out, int n)
{
	uint32_t cons, prod;
	int got = 0;

	pthread_spin_lock(&cq->poll_lock);
	cons = atomic_load_explicit(&cq->cons, memory_order_relaxed);
	prod = atomic_load_explicit(&cq->prod, memory_order_acquire);
	while (got < n && cons != prod) {
		out[got++] = cq->ring[cons & (cq->depth - 1)];
		cons++;
	}
	atomic_store_explicit(&cq->cons, cons, memory_order_release);
	pthread_spin_unlock(&cq->poll_lock);
	return got;
}

uint32_t urnic_cq_discard_qp(struct urnic_cq *cq, uint32_t qpn, bool keep_recv)
{
	uint32_t cons = atomic_load_explicit(&cq->cons, memory_order_relaxed);
	uint32_t prod = atomic_load_explicit(&cq->prod, memory_order_relaxed);
	uint32_t mask = cq->depth - 1;
	uint32_t w = cons;

	/* Compacted towards the oldest: what is kept moves to lower indices only. */
	for (uint32_t r = cons; r != prod; r++) {
		const struct urnic_cqe *c = &cq->ring[r & mask];
		bool recv = c->opcode & URNIC_WC_RECV;

		if (c->qp_num == qpn && !(keep_recv && recv))
			continue;
		if (w != r)
			cq->ring[w & mask] = *c;
		w++;
	}
	atomic_store_explicit(&cq->prod, w, memory_order_release);
	return prod - w;
}

void urnic_cq_due_init(struct urnic_cq_due *l)
{
	l->head = l->tail = NULL;
}

struct urnic_cq *urnic_cq_due_pop(struct urnic_cq_due *l, uint32_t *n)
{
	struct urnic_cq *cq = l->head;

	if (!cq)
		return NULL;
	l->head = cq->due_next;
	if (!l->head)
		l->tail = NULL;
	cq->due_next = NULL;
	*n = cq->events_due;
	cq->events_due = 0;
	return cq;
}

void urnic_cq_detach_channel(struct urnic_cq *cq)
{
	struct urnic_cq_due *l = cq->due;
	struct urnic_cq *prev = NULL;

	cq->event_fd = -1;
	if (!l || !cq->events_due)
		return;
	for (struct urnic_cq *c = l->head; c; prev = c, c = c->due_next) {
		if (c != cq)
			continue;
		if (prev)
			prev->due_next = cq->due_next;
		else
			l->head = cq->due_next;
		if (l->tail == cq)
			l->tail = prev;
		break;
	}
	cq->due_next = NULL;
	cq->events_due = 0;
}
