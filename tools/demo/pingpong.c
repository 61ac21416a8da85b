/* SPDX-License-Identifier: MIT */
/*
 * pingpong.c - the latency runs of SEND and RDMA WRITE, both sides: the client sends
 * message 2i and waits for 2i+1, the server waits for 2i and answers 2i+1, as
 * perftest's send_lat and write_lat do. A SEND is waited for on the receive CQ, a
 * WRITE by watching the memory it lands in. Messages are 8 bytes, inline.
 */
#include "demo.h"

#include <errno.h>
#include <string.h>

#include "pattern.h"

struct pingpong {
	struct demo_host *h;
	enum demo_op op;
	uint32_t run;
	uint8_t *tx;
	size_t rx_off;
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	uint32_t outstanding; /* sends not yet reaped */
};

static int post_recv(struct pingpong *p)
{
	return demo_post_recv(p->h, 0, p->rx_off, DEMO_LAT_BYTES);
}

static int send_msg(struct pingpong *p, uint32_t msg)
{
	demo_pattern_fill(p->tx, DEMO_LAT_BYTES, demo_pattern_seed(p->run, msg));
	p->wr.wr_id = msg;
	if (demo_post_send(p->h, &p->wr))
		return -EIO;
	p->outstanding++;
	return 0;
}

static int wait_msg(struct pingpong *p, uint32_t msg)
{
	struct demo_host *h = p->h;
	uint64_t seed = demo_pattern_seed(p->run, msg);
	struct ibv_wc wc;

	if (p->op == DEMO_WRITE)
		return demo_wait_word(h, p->rx_off, demo_pattern_word(seed), &p->outstanding);
	if (demo_poll(h, h->recv_cq, &wc, 1) < 0)
		return -EIO;
	if (wc.byte_len != DEMO_LAT_BYTES ||
	    demo_pattern_check(h->buf + p->rx_off, DEMO_LAT_BYTES, seed) != DEMO_LAT_BYTES)
		return demo_fail(h, "SEND %u of the ping-pong: %u bytes, not the ones sent", msg,
				 wc.byte_len);
	return 0;
}

int demo_pingpong(struct demo_host *h, enum demo_op op, uint32_t run, uint32_t iters,
		  uint64_t *lat_ns, uint64_t *checked_bytes)
{
	bool ping = h->role == DEMO_CLIENT, send = op == DEMO_SEND;
	struct pingpong p = {
		.h = h,
		.op = op,
		.run = run,
		.tx = h->buf + h->lay.ping_off,
		.rx_off = h->lay.ping_off + DEMO_PING_RX,
		.wr = {
			.num_sge = 1,
			.opcode = send ? IBV_WR_SEND : IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
			.wr.rdma = {
				.remote_addr = h->remote.addr + h->peer_lay.ping_off + DEMO_PING_RX,
				.rkey = h->remote.rkey,
			},
		},
	};

	p.sge = (struct ibv_sge){ (uintptr_t)p.tx, DEMO_LAT_BYTES, h->mr->lkey };
	p.wr.sg_list = &p.sge;
	for (uint32_t i = 0; i < iters; i++) {
		uint64_t t0 = demo_now_ns();

		/* A receive is posted before the message that makes the peer send. The
		 * server's first one was posted before the run began. */
		if (ping && ((send && post_recv(&p)) || send_msg(&p, 2 * i)))
			return -EIO;
		if (wait_msg(&p, ping ? 2 * i + 1 : 2 * i))
			return -EIO;
		if (lat_ns)
			lat_ns[i] = demo_now_ns() - t0;
		*checked_bytes += DEMO_LAT_BYTES;
		if (!ping && ((send && i + 1 < iters && post_recv(&p)) || send_msg(&p, 2 * i + 1)))
			return -EIO;
		/* Reap here too: when the next message is there at once, waiting for it
		 * reaps nothing, and the send CQ would overflow. */
		if (demo_reap_sends(h, &p.outstanding, DEMO_WINDOW))
			return -EIO;
	}
	return demo_reap_sends(h, &p.outstanding, 0);
}
