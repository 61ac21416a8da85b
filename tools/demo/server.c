/* SPDX-License-Identifier: MIT */
/*
 * server.c - the server host: prepares each run the client asks for, takes part where
 * the operation needs it (SEND receives, ping-pong replies) and checks what arrived.
 * For RDMA WRITE, READ and the atomics it does nothing during the run: the device
 * moves the data, as an RNIC would, and the server looks at its memory afterwards.
 */
#include "demo.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pattern.h"

struct serve {
	struct demo_host *h;
	enum demo_op op;
	enum demo_phase phase;
	uint32_t iters;
	uint32_t run;
	uint64_t checked_bytes;
};

static uint8_t *bulk(struct serve *s, uint32_t k, size_t size)
{
	return s->h->buf + s->h->lay.bulk_off + (size_t)k * size;
}

static uint64_t *atomic_target(struct serve *s)
{
	size_t off = s->h->lay.atomic_off + (s->op == DEMO_CMP_SWAP ? DEMO_CAS_OFF : 0);

	return (uint64_t *)(void *)(s->h->buf + off);
}

/* Makes memory and receive queue ready for the run, before the client starts it. */
static int prepare(struct serve *s)
{
	struct demo_host *h = s->h;
	const struct demo_layout *l = &h->lay;

	switch (s->op) {
	case DEMO_SEND:
		if (s->phase == DEMO_LAT)
			return demo_post_recv(h, 0, l->ping_off + DEMO_PING_RX, DEMO_LAT_BYTES);
		/* Touch the pages before the clock starts, as the WRITE run does. */
		memset(bulk(s, 0, h->o->size), 0, (size_t)l->bulk_slots * h->o->size);
		for (uint32_t k = 0; k < h->recv_slots && k < s->iters; k++)
			if (demo_post_recv(h, k, l->bulk_off + (size_t)k * h->o->size, h->o->size))
				return -EIO;
		return 0;
	case DEMO_WRITE:
		/* Zeroes first: a WRITE that never lands cannot pass for one that did. */
		if (s->phase == DEMO_LAT)
			memset(h->buf + l->ping_off, 0, 4096);
		else
			memset(bulk(s, 0, h->o->size), 0, (size_t)l->bulk_slots * h->o->size);
		return 0;
	case DEMO_READ:
		if (s->phase == DEMO_LAT)
			for (uint32_t j = 0; j < s->iters; j++)
				demo_pattern_fill(bulk(s, j, DEMO_LAT_BYTES), DEMO_LAT_BYTES,
						  demo_pattern_seed(s->run, j));
		else
			for (uint32_t k = 0; k < l->bulk_slots; k++)
				demo_pattern_fill(bulk(s, k, h->o->size), h->o->size,
						  demo_pattern_seed(s->run, k));
		return 0;
	case DEMO_FETCH_ADD:
	case DEMO_CMP_SWAP:
		__atomic_store_n(atomic_target(s),
				 demo_atomic_start(s->op == DEMO_CMP_SWAP, s->run),
				 __ATOMIC_RELEASE);
		return 0;
	case DEMO_NOPS:
		break;
	}
	return demo_fail(h, "protocol: no operation %u", s->op);
}

/* SEND bandwidth: every message, in order, byte for byte; receives reposted while
 * more messages are to come than are posted. */
static int receive_all(struct serve *s)
{
	struct demo_host *h = s->h;
	uint32_t size = h->o->size;
	uint32_t posted = s->iters < h->recv_slots ? s->iters : h->recv_slots;
	struct ibv_wc wc[DEMO_WINDOW];

	for (uint32_t got = 0; got < s->iters;) {
		int n = demo_poll(h, h->recv_cq, wc, DEMO_WINDOW);

		if (n < 0)
			return n;
		for (int i = 0; i < n; i++, got++) {
			uint32_t k = (uint32_t)wc[i].wr_id;
			size_t bad;

			if (wc[i].opcode != IBV_WC_RECV || wc[i].byte_len != size)
				return demo_fail(h,
						 "SEND %u arrived as opcode %d, %u bytes (expected "
						 "a %u-byte receive)",
						 got, wc[i].opcode, wc[i].byte_len, size);
			bad = demo_pattern_check(bulk(s, k, size), size,
						 demo_pattern_seed(s->run, got));
			if (bad != size)
				return demo_fail(h, "SEND %u: data differs from byte %zu on", got,
						 bad);
			s->checked_bytes += size;
			if (posted < s->iters) {
				if (demo_post_recv(h, k, h->lay.bulk_off + (size_t)k * size, size))
					return -EIO;
				posted++;
			}
		}
	}
	return 0;
}

static int take_part(struct serve *s)
{
	if (s->op == DEMO_SEND && s->phase == DEMO_BW)
		return receive_all(s);
	if ((s->op == DEMO_SEND || s->op == DEMO_WRITE) && s->phase == DEMO_LAT)
		return demo_pingpong(s->h, s->op, s->run, s->iters, NULL, &s->checked_bytes);
	return 0;
}

/* After the run: what one-sided operations left in memory. */
static int check_memory(struct serve *s)
{
	struct demo_host *h = s->h;
	uint32_t size = h->o->size, slots = h->lay.bulk_slots;

	if (s->op == DEMO_WRITE && s->phase == DEMO_BW) {
		/* Slot k holds the last message that went there, when they wrapped. */
		for (uint32_t k = 0; k < slots && k < s->iters; k++) {
			uint32_t last = k + (s->iters - 1 - k) / slots * slots;
			size_t bad = demo_pattern_check(bulk(s, k, size), size,
							demo_pattern_seed(s->run, last));

			if (bad != size)
				return demo_fail(h, "RDMA WRITE %u: data differs from byte %zu on",
						 last, bad);
			s->checked_bytes += size;
		}
	} else if (demo_op_atomic(s->op)) {
		bool cas = s->op == DEMO_CMP_SWAP;
		uint64_t want = demo_atomic_start(cas, s->run), operand, swap;
		uint64_t got = __atomic_load_n(atomic_target(s), __ATOMIC_ACQUIRE);

		for (uint32_t i = 0; i < s->iters; i++)
			want = demo_atomic_step(cas, s->run, i, want, &operand, &swap);
		if (got != want)
			return demo_fail(h,
					 "%s target holds 0x%016llx after %u operations, expected "
					 "0x%016llx",
					 demo_op_names[s->op], (unsigned long long)got, s->iters,
					 (unsigned long long)want);
	}
	return 0;
}

static int serve_run(struct demo_host *h, const struct demo_msg *start)
{
	struct serve s = {
		.h = h,
		.op = (enum demo_op)start->op,
		.phase = (enum demo_phase)start->phase,
	};
	struct demo_msg m = { .type = DEMO_MSG_READY };
	int ret;

	if (s.op >= DEMO_NOPS || s.phase > DEMO_LAT) {
		demo_fail(h, "protocol: no run (op %u, phase %u)", start->op, start->phase);
	} else {
		s.iters = demo_run_iters(h->o, s.op, s.phase);
		s.run = demo_run_id(s.op, s.phase);
		prepare(&s);
	}
	m.ok = !h->err[0];
	if (demo_send_msg(h, &m))
		return -EPIPE;
	if (m.ok)
		take_part(&s);
	if (demo_recv_msg(h, &m))
		return -EPIPE;
	if (m.type != DEMO_MSG_DONE)
		demo_fail(h, "protocol: expected DONE, got message %u", m.type);
	else if (m.ok)
		check_memory(&s);
	m = (struct demo_msg){ .type = DEMO_MSG_RESULT,
			       .ok = !h->err[0],
			       .checked_bytes = s.checked_bytes };
	snprintf(m.text, sizeof(m.text), "%s", h->err);
	h->err_told = h->err[0] != 0;
	ret = demo_send_msg(h, &m);
	return ret ? ret : h->err[0] ? -EIO : 0;
}

int demo_server_main(struct demo_host *h)
{
	struct demo_msg m;
	int ret;

	for (;;) {
		if (demo_recv_msg(h, &m))
			return -EPIPE;
		if (m.type == DEMO_MSG_QUIT)
			return 0;
		if (m.type != DEMO_MSG_START)
			return demo_fail(h, "protocol: expected START, got message %u", m.type);
		ret = serve_run(h, &m);
		if (ret)
			return ret;
	}
}
