/* SPDX-License-Identifier: MIT */
/*
 * client.c - the client host: runs every operation twice, for bandwidth (a window of
 * DEMO_WINDOW work requests in flight) and for latency (one at a time, each timed),
 * checks what comes back, and sends one table row per operation to the parent.
 *
 * Latency is measured as perftest does: SEND and RDMA WRITE as a ping-pong with the
 * server, reported as half the round trip; READ and the atomics as the round trip of
 * one work request, which is what they cost.
 */
#include "demo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pattern.h"

struct runner {
	struct demo_host *h;
	enum demo_op op;
	uint32_t run;
	uint32_t iters;
	uint32_t size;		      /* bytes per work request */
	uint32_t remote_slots;	      /* READ/WRITE: message i uses the server's slot i % this */
	uint64_t *lat_ns;	      /* latency runs: one sample per iteration */
	uint64_t expect[DEMO_WINDOW]; /* atomics: what the op in each slot must return */
	uint64_t target;	      /* atomics: the target's value after the ops posted so far */
	uint64_t checked_bytes;
	uint64_t checked_results;
};

static uint8_t *local(struct runner *r, uint32_t i)
{
	const struct demo_layout *l = &r->h->lay;
	uint32_t slot = i % DEMO_WINDOW;

	if (demo_op_atomic(r->op))
		return r->h->buf + l->atomic_off + slot * sizeof(uint64_t);
	return r->h->buf + l->slots_off + (size_t)slot * r->size;
}

static void build(struct runner *r, uint32_t i, struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	struct demo_host *h = r->h;
	const struct demo_layout *pl = &h->peer_lay;
	uint64_t seed = demo_pattern_seed(r->run, i);
	uint8_t *buf = local(r, i);
	uint64_t *result = (uint64_t *)(void *)buf;

	*sge = (struct ibv_sge){ (uintptr_t)buf, r->size, h->mr->lkey };
	*wr = (struct ibv_send_wr){
		.wr_id = i, .sg_list = sge, .num_sge = 1, .send_flags = IBV_SEND_SIGNALED
	};
	wr->wr.rdma.rkey = h->remote.rkey;
	wr->wr.rdma.remote_addr =
		h->remote.addr + pl->bulk_off + (uint64_t)(i % r->remote_slots) * r->size;
	switch (r->op) {
	case DEMO_SEND:
		demo_pattern_fill(buf, r->size, seed);
		wr->opcode = IBV_WR_SEND;
		break;
	case DEMO_WRITE:
		demo_pattern_fill(buf, r->size, seed);
		wr->opcode = IBV_WR_RDMA_WRITE;
		break;
	case DEMO_READ:
		memset(buf, 0, r->size); /* what was there must not pass for what is read */
		wr->opcode = IBV_WR_RDMA_READ;
		break;
	case DEMO_FETCH_ADD:
	case DEMO_CMP_SWAP:
		r->expect[i % DEMO_WINDOW] = r->target;
		*result = ~r->target;
		wr->opcode = r->op == DEMO_CMP_SWAP ? IBV_WR_ATOMIC_CMP_AND_SWP
						    : IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr->wr.atomic.rkey = h->remote.rkey;
		wr->wr.atomic.remote_addr = h->remote.addr + pl->atomic_off +
					    (r->op == DEMO_CMP_SWAP ? DEMO_CAS_OFF : 0);
		r->target = demo_atomic_step(r->op == DEMO_CMP_SWAP, r->run, i, r->target,
					     &wr->wr.atomic.compare_add, &wr->wr.atomic.swap);
		break;
	case DEMO_NOPS:
		break;
	}
}

/* Work request i completed: check what it brought back. */
static int check(struct runner *r, uint32_t i, const struct ibv_wc *wc)
{
	struct demo_host *h = r->h;
	const uint8_t *buf = local(r, i);
	uint64_t got;
	size_t bad;

	/* A send queue completes its work requests in the order they were posted. */
	if (wc->wr_id != i)
		return demo_fail(h, "completion of work request %llu where %u was next",
				 (unsigned long long)wc->wr_id, i);
	if (r->op == DEMO_READ) {
		bad = demo_pattern_check(buf, r->size,
					 demo_pattern_seed(r->run, i % r->remote_slots));
		if (bad != r->size)
			return demo_fail(h, "RDMA READ %u: data differs from byte %zu on", i, bad);
		r->checked_bytes += r->size;
	} else if (demo_op_atomic(r->op)) {
		memcpy(&got, buf, sizeof(got));
		if (got != r->expect[i % DEMO_WINDOW])
			return demo_fail(h, "%s %u returned 0x%016llx, expected 0x%016llx",
					 demo_op_names[r->op], i, (unsigned long long)got,
					 (unsigned long long)r->expect[i % DEMO_WINDOW]);
		r->checked_results++;
	}
	return 0;
}

/* Keeps `window` work requests in flight until all are done. With a window of one,
 * each is timed. */
static int run_window(struct runner *r, uint32_t window)
{
	struct ibv_send_wr wr[DEMO_WINDOW];
	struct ibv_sge sge[DEMO_WINDOW];
	struct ibv_wc wc[DEMO_WINDOW];
	uint32_t posted = 0, done = 0;
	uint64_t t0 = 0;

	while (done < r->iters) {
		uint32_t n = 0;

		while (posted < r->iters && posted - done < window) {
			build(r, posted, &wr[n], &sge[n]);
			if (n)
				wr[n - 1].next = &wr[n];
			n++;
			posted++;
		}
		if (n) {
			t0 = demo_now_ns();
			if (demo_post_send(r->h, wr))
				return -EIO;
		}
		int got = demo_poll(r->h, r->h->send_cq, wc, DEMO_WINDOW);

		if (got < 0)
			return -EIO;
		if (r->lat_ns)
			r->lat_ns[done] = demo_now_ns() - t0;
		for (int k = 0; k < got; k++, done++)
			if (check(r, done, &wc[k]))
				return -EIO;
	}
	return 0;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double median_us(uint64_t *ns, uint32_t n)
{
	qsort(ns, n, sizeof(*ns), by_value);
	return n ? (double)ns[n / 2] / 1000.0 : 0.0;
}

/* The measured part of a run, between the server's READY and the client's DONE. */
static int measure(struct runner *r, enum demo_phase phase, struct demo_row *row)
{
	bool ping_pong = phase == DEMO_LAT && (r->op == DEMO_SEND || r->op == DEMO_WRITE);
	uint64_t t0 = demo_now_ns(), ns;
	int ret;

	if (ping_pong)
		ret = demo_pingpong(r->h, r->op, r->run, r->iters, r->lat_ns, &r->checked_bytes);
	else
		ret = run_window(r, phase == DEMO_BW ? DEMO_WINDOW : 1);
	ns = demo_now_ns() - t0;
	if (ret)
		return ret;
	if (phase == DEMO_BW) {
		row->bw_bits_per_s = (double)r->iters * r->size * 8 * 1e9 / (double)ns;
		row->ops_per_s = (double)r->iters * 1e9 / (double)ns;
	} else {
		row->lat_us = median_us(r->lat_ns, r->iters) / (ping_pong ? 2 : 1);
	}
	return 0;
}

static int run(struct demo_host *h, enum demo_op op, enum demo_phase phase, struct demo_row *row)
{
	const struct demo_opts *o = h->o;
	struct runner r = {
		.h = h,
		.op = op,
		.run = demo_run_id(op, phase),
		.iters = demo_run_iters(o, op, phase),
		.size = demo_op_atomic(op)  ? 8
			: phase == DEMO_LAT ? DEMO_LAT_BYTES
					    : o->size,
		.remote_slots =
			phase == DEMO_LAT ? demo_run_iters(o, op, phase) : h->peer_lay.bulk_slots,
		.target = demo_atomic_start(op == DEMO_CMP_SWAP, demo_run_id(op, phase)),
	};
	struct demo_msg m = { .type = DEMO_MSG_START, .op = op, .phase = phase };
	int ret = -EIO;

	if (phase == DEMO_LAT) {
		r.lat_ns = calloc(r.iters, sizeof(*r.lat_ns));
		if (!r.lat_ns)
			return demo_fail(h, "out of memory");
	}
	if (demo_send_msg(h, &m) || demo_recv_msg(h, &m)) {
		free(r.lat_ns);
		return -EPIPE;
	}
	if (m.type == DEMO_MSG_READY && m.ok)
		ret = measure(&r, phase, row);
	free(r.lat_ns);
	m = (struct demo_msg){ .type = DEMO_MSG_DONE, .ok = ret == 0 };
	if (demo_send_msg(h, &m) || demo_recv_msg(h, &m))
		return -EPIPE;
	if (m.type != DEMO_MSG_RESULT)
		return demo_fail(h, "protocol: expected the server's RESULT, got message %u",
				 m.type);
	if (!m.ok) {
		size_t len = strlen(h->err);

		if (!len)
			return demo_fail(h, "server: %s", m.text);
		snprintf(h->err + len, sizeof(h->err) - len, "; server: %s", m.text);
		return -EIO;
	}
	row->checked_bytes += r.checked_bytes + m.checked_bytes;
	row->checked_results += r.checked_results;
	return ret;
}

int demo_client_main(struct demo_host *h)
{
	struct demo_msg quit = { .type = DEMO_MSG_QUIT };
	int ret = 0;

	for (enum demo_op op = 0; op < DEMO_NOPS && !ret; op++) {
		struct demo_row row = {
			.op = op,
			.size = demo_op_atomic(op) ? 8 : h->o->size,
			.iters = demo_run_iters(h->o, op, DEMO_BW),
			.lat_iters = h->o->lat_iters,
		};
		struct demo_record rec = { .type = DEMO_REC_ROW, .role = DEMO_CLIENT };

		ret = run(h, op, DEMO_BW, &row);
		if (!ret)
			ret = run(h, op, DEMO_LAT, &row);
		row.ok = ret == 0;
		if (ret == -EPIPE)
			snprintf(row.text, sizeof(row.text), "the server stopped");
		else if (ret)
			snprintf(row.text, sizeof(row.text), "%s", h->err);
		h->err_told = ret != 0;
		rec.row = row;
		if (write(h->report, &rec, sizeof(rec)) != (ssize_t)sizeof(rec))
			return -EPIPE;
	}
	if (ret != -EPIPE && demo_send_msg(h, &quit))
		ret = -EPIPE;
	return ret;
}
