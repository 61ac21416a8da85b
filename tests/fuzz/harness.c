/* SPDX-License-Identifier: MIT */
/*
 * harness.c - the live engine the fuzz targets feed (see harness.h for the input).
 *
 * After every record it checks, and aborts when one fails:
 *   - memory: every region sits inside a larger buffer whose guard bytes must keep their
 *     pattern, and every byte no granted operation may write (a read-only region, the
 *     gaps between receive SGEs, Q's buffers outside its READ/atomic targets) too;
 *   - transmit: every packet the engine sends decodes to the length it claims, goes to
 *     the peer, and its payload comes from a registered region (READ responses: from one
 *     granting remote read) or from a WQE's inline data - never from anywhere else;
 *   - completions: status and opcode in range and right for the queue, each posted WQE
 *     completes at most once, in the order posted (IBTA 10.8.3: an RC QP completes in
 *     order), a successful receive no longer than its buffer;
 *   - engine state: work queue indexes in order, the responder's count of resources
 *     still replying equal to the resources marked so, the QPs in RTS or ERR.
 * Everything is freed at the end of an input (ASan's leak check sees the rest).
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "wire/byteorder.h"
#include "wire/psn.h"

enum {
	GUARD = 64,
	REGION_BYTES = 8192,
	SQ_DEPTH = 32,
	RQ_DEPTH = 16,
	CQ_DEPTH = 256,
	PEER_SPORT = 0xc0de,
	PEER_QPN_R = 0x000123, /* the peer's QP that R talks to */
	PEER_QPN_Q = 0x000456,
	END_PASSES = 24, /* clock jumps after the last record: retries and RNR waits run */
};

static const uint8_t local_ip[16] = { 10, 0, 0, 1 };
static const uint8_t peer_ip[16] = { 10, 0, 0, 2 };

const struct fuzz_wqe_plan fuzz_plan[] = {
	{ URNIC_WR_SEND, 100, 0, 0 },
	{ URNIC_WR_SEND, 3000, 0, 0 },
	{ URNIC_WR_RDMA_WRITE, 2048, 0, 0 },
	{ URNIC_WR_RDMA_READ, 3000, 0, 0 },
	{ URNIC_WR_ATOMIC_CMP_AND_SWP, 8, 3008, 0 },
	{ URNIC_WR_ATOMIC_FETCH_AND_ADD, 8, 3016, 0 },
	{ URNIC_WR_SEND_WITH_IMM, 0, 0, 0 },
	{ URNIC_WR_RDMA_READ, 0, 0, 0 },
	{ URNIC_WR_RDMA_WRITE_WITH_IMM, 10, 0, 0 },
	{ URNIC_WR_SEND, 16, 0, URNIC_SEND_INLINE },
};
const unsigned fuzz_plan_len = sizeof(fuzz_plan) / sizeof(fuzz_plan[0]);

const uint64_t fuzz_clock_step_ns[8] = { 0,	   1000,      100000,	  1000000,
					 10000000, 100000000, 1000000000, 10000000000ull };

/* R's receive WQEs, posted round robin; the 4th has an SGE without local write (the
 * read-only region), so a SEND reaching it is a local protection error. */
static const struct {
	uint32_t nsge;
	struct {
		enum fuzz_region r;
		uint32_t off, len;
	} sge[3];
} recv_tmpl[] = {
	{ 1, { { FR_RECV, 0, 3072 } } },
	{ 2, { { FR_RECV, 3088, 1000 }, { FR_RECV, 4104, 1048 } } },
	{ 1, { { FR_RECV, 5168, 16 } } },
	{ 3, { { FR_RECV, 5200, 512 }, { FR_RO, 0, 512 }, { FR_RECV, 5728, 512 } } },
};
enum { RECV_TMPLS = sizeof(recv_tmpl) / sizeof(recv_tmpl[0]) };

struct region {
	uint8_t *buf; /* GUARD | body | GUARD, filled from region_template() */
	uint8_t *body;
	uint32_t len;
	struct urnic_mr *mr;
};

/* The rights of each region (enum fuzz_region order). FR_DEAD has every right, but its
 * key is stale: nothing may touch it. */
static const uint32_t region_access[FR_COUNT] = {
	[FR_RW] = URNIC_ACCESS_LOCAL_WRITE | URNIC_ACCESS_REMOTE_WRITE,
	[FR_RO] = URNIC_ACCESS_REMOTE_READ,
	[FR_ATOMIC] = URNIC_ACCESS_LOCAL_WRITE | URNIC_ACCESS_REMOTE_ATOMIC,
	[FR_RECV] = URNIC_ACCESS_LOCAL_WRITE,
	[FR_SRC] = 0,
	[FR_DST] = URNIC_ACCESS_LOCAL_WRITE,
	[FR_DEAD] = URNIC_ACCESS_LOCAL_WRITE | URNIC_ACCESS_REMOTE_WRITE |
		    URNIC_ACCESS_REMOTE_READ | URNIC_ACCESS_REMOTE_ATOMIC,
};

struct qpx {
	struct urnic_qp qp;
	struct urnic_cq scq, rcq;
	uint64_t send_posted, send_done; /* wr_ids are sequence numbers */
	uint64_t recv_posted, recv_done;
	uint64_t send_ok, recv_ok;   /* completions with status success */
	uint32_t recv_len[RQ_DEPTH]; /* by recv wr_id % RQ_DEPTH */
	uint32_t send_op[SQ_DEPTH];  /* by send wr_id % SQ_DEPTH */
};

struct harness {
	struct urnic_engine e;
	struct urnic_pd pd;
	struct region reg[FR_COUNT];
	struct qpx r, q;
	unsigned plan_next, recv_next;
};

#define FUZZ_CHECK(cond)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: fuzz invariant broken: %s\n", __FILE__, __LINE__,  \
				#cond);                                                            \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n, sz);

	FUZZ_CHECK(p != NULL);
	return p;
}

static uint8_t pattern(unsigned r, size_t i)
{
	return (uint8_t)((i * 131 + r * 29 + (i >> 7)) ^ 0x5a);
}

/* ---- regions ---- */

/* What every region holds at start, and the runs of its bytes that no granted operation
 * may write: computed once, the same for every input (a per-byte loop per input would be
 * most of an input's run time under coverage instrumentation). Writable: all of a region
 * with remote write or atomic rights (FR_DEAD aside), R's receive SGEs in FR_RECV, Q's
 * READ and atomic targets in FR_DST. */
static struct {
	uint8_t tmpl[REGION_BYTES + 2 * GUARD];
	uint32_t nruns;
	struct {
		uint32_t off, len;
	} runs[16];
} layout[FR_COUNT];

static void may_write(uint8_t *w, uint32_t off, uint32_t len)
{
	memset(w + off, 1, len);
}

static void layout_once(void)
{
	static bool ready;
	static uint8_t w[FR_COUNT][REGION_BYTES];

	if (ready)
		return;
	for (unsigned t = 0; t < RECV_TMPLS; t++)
		for (uint32_t i = 0; i < recv_tmpl[t].nsge; i++)
			if (recv_tmpl[t].sge[i].r == FR_RECV)
				may_write(w[FR_RECV], recv_tmpl[t].sge[i].off,
					  recv_tmpl[t].sge[i].len);
	for (unsigned k = 0; k < fuzz_plan_len; k++)
		if (fuzz_plan[k].opcode == URNIC_WR_RDMA_READ ||
		    fuzz_plan[k].opcode == URNIC_WR_ATOMIC_CMP_AND_SWP ||
		    fuzz_plan[k].opcode == URNIC_WR_ATOMIC_FETCH_AND_ADD)
			may_write(w[FR_DST], fuzz_plan[k].dst_off, fuzz_plan[k].length);
	for (int r = 0; r < FR_COUNT; r++) {
		if (r != FR_DEAD &&
		    (region_access[r] & (URNIC_ACCESS_REMOTE_WRITE | URNIC_ACCESS_REMOTE_ATOMIC)))
			may_write(w[r], 0, REGION_BYTES);
		for (size_t i = 0; i < sizeof(layout[r].tmpl); i++)
			layout[r].tmpl[i] = pattern((unsigned)r, i);
		for (uint32_t i = 0, j; i < REGION_BYTES; i = j) {
			for (j = i; j < REGION_BYTES && w[r][j] == w[r][i]; j++)
				;
			if (w[r][i])
				continue;
			FUZZ_CHECK(layout[r].nruns <
				   sizeof(layout[r].runs) / sizeof(layout[r].runs[0]));
			layout[r].runs[layout[r].nruns].off = i;
			layout[r].runs[layout[r].nruns].len = j - i;
			layout[r].nruns++;
		}
	}
	ready = true;
}

static void region_new(struct harness *h, enum fuzz_region r)
{
	struct region *g = &h->reg[r];

	g->buf = malloc(sizeof(layout[r].tmpl));
	FUZZ_CHECK(g->buf != NULL);
	memcpy(g->buf, layout[r].tmpl, sizeof(layout[r].tmpl));
	g->body = g->buf + GUARD;
	g->len = REGION_BYTES;
	/* As src/verbs/memory.c: the iova is the process address. */
	FUZZ_CHECK(urnic_mr_register(&h->e.mrs, &h->pd, g->body, (uint64_t)(uintptr_t)g->body,
				     g->len, region_access[r], (uint16_t)urnic_engine_random(&h->e),
				     &g->mr) == 0);
}

static void region_free(struct harness *h, enum fuzz_region r)
{
	struct region *g = &h->reg[r];

	if (g->mr)
		urnic_mr_deregister(&h->e.mrs, g->mr);
	free(g->buf);
}

static void check_memory(struct harness *h)
{
	for (int r = 0; r < FR_COUNT; r++) {
		const struct region *g = &h->reg[r];
		const uint8_t *ref = layout[r].tmpl;

		FUZZ_CHECK(memcmp(g->buf, ref, GUARD) == 0);
		FUZZ_CHECK(memcmp(g->body + g->len, ref + GUARD + g->len, GUARD) == 0);
		for (uint32_t k = 0; k < layout[r].nruns; k++)
			FUZZ_CHECK(memcmp(g->body + layout[r].runs[k].off,
					  ref + GUARD + layout[r].runs[k].off,
					  layout[r].runs[k].len) == 0);
	}
}

/* ---- transmit ---- */

static bool inside(const void *p, size_t len, const void *base, size_t base_len)
{
	uintptr_t a = (uintptr_t)p, b = (uintptr_t)base;

	return a >= b && len <= base_len && a - b <= base_len - len;
}

static bool in_inline_data(const struct qpx *x, const void *p, size_t len)
{
	for (uint32_t i = 0; i < x->qp.sq.depth; i++) {
		const struct urnic_send_wqe *w = urnic_wq_slot(&x->qp.sq, i);

		if (inside(p, len, w->inline_data, sizeof(w->inline_data)))
			return true;
	}
	return false;
}

static void check_tx(struct harness *h, const struct urnic_txpkt *p)
{
	uint32_t total = 0, len;
	struct urnic_pkt pkt;
	uint8_t *buf;
	bool read_resp;
	ssize_t n;

	FUZZ_CHECK(p->hdr_bytes >= URNIC_BTH_BYTES && p->hdr_bytes <= URNIC_TX_HDR_MAX);
	FUZZ_CHECK(p->nfrags <= URNIC_MAX_SGE);
	FUZZ_CHECK(p->payload_bytes <= FUZZ_MTU);
	FUZZ_CHECK(p->trailer_bytes == ((4 - (p->payload_bytes & 3)) & 3) + URNIC_ICRC_BYTES);
	FUZZ_CHECK(memcmp(p->dst.ip, peer_ip, 4) == 0);
	read_resp = (urnic_opcode_info(p->hdr[0])->flags & (URNIC_OPF_READ | URNIC_OPF_RESP)) ==
		    (URNIC_OPF_READ | URNIC_OPF_RESP);
	for (uint32_t i = 0; i < p->nfrags; i++) {
		const struct urnic_frag *f = &p->frags[i];
		bool ok = false;

		total += (uint32_t)f->len;
		for (int r = 0; r < FR_COUNT && !ok; r++) {
			const struct region *g = &h->reg[r];

			/* A READ response reads only where the peer may read. */
			if (r == FR_DEAD ||
			    (read_resp && !(region_access[r] & URNIC_ACCESS_REMOTE_READ)))
				continue;
			ok = inside(f->base, f->len, g->body, g->len);
		}
		if (!ok && !read_resp)
			ok = in_inline_data(&h->q, f->base, f->len) ||
			     in_inline_data(&h->r, f->base, f->len);
		FUZZ_CHECK(ok);
	}
	FUZZ_CHECK(total == p->payload_bytes);
	/* The packet as it would leave: it must decode to what it claims. Decoded from a
	 * copy of its exact size, so that ASan sees a read past its end (tx_wire goes on). */
	len = urnic_txpkt_bytes(p);
	buf = xcalloc(1, len);
	memcpy(buf, p->wire, len);
	n = urnic_pkt_decode(&pkt, buf, len);
	FUZZ_CHECK(n == (ssize_t)p->hdr_bytes);
	FUZZ_CHECK(pkt.payload_bytes == p->payload_bytes);
	FUZZ_CHECK(pkt.bth.dqpn == PEER_QPN_R || pkt.bth.dqpn == PEER_QPN_Q);
	free(buf);
}

static void flush_cb(struct urnic_engine *e)
{
	struct harness *h = e->io;

	for (uint32_t i = 0; i < e->ntx; i++)
		check_tx(h, &e->tx[i]);
	e->ntx = 0;
}

/* ---- QPs and work ---- */

static int modify(struct harness *h, struct qpx *x, const struct urnic_qp_attr *a,
		  enum urnic_qp_state next, uint32_t mask)
{
	int ret = urnic_qp_check_modify(&x->qp, a, x->qp.state, next, mask);

	if (ret == 0)
		urnic_engine_qp_apply(&h->e, &x->qp, a, next, mask);
	return ret;
}

static void qp_new(struct harness *h, struct qpx *x, uint32_t peer_qpn, uint32_t sq_psn,
		   uint32_t rq_psn, uint8_t rnr_retry)
{
	struct urnic_qp_attr a;

	/* As src/verbs/qp.c ibv_create_qp and tests/engine/fabric.c. */
	FUZZ_CHECK(urnic_wq_init(&x->qp.sq, SQ_DEPTH, sizeof(struct urnic_send_wqe)) == 0);
	FUZZ_CHECK(urnic_wq_init(&x->qp.rq, RQ_DEPTH, sizeof(struct urnic_recv_wqe)) == 0);
	FUZZ_CHECK(urnic_cq_init(&x->scq, CQ_DEPTH) == 0);
	FUZZ_CHECK(urnic_cq_init(&x->rcq, CQ_DEPTH) == 0);
	x->qp.sq.max_sge = URNIC_MAX_SGE;
	x->qp.rq.max_sge = URNIC_MAX_SGE;
	x->qp.sq.max_inline = URNIC_MAX_INLINE;
	x->qp.type = URNIC_QPT_RC;
	x->qp.state = URNIC_QPS_RESET;
	x->qp.sq_sig_all = true;
	x->qp.pd = &h->pd;
	x->qp.send_cq = &x->scq;
	x->qp.recv_cq = &x->rcq;
	x->qp.attr.path_mtu = 256;
	FUZZ_CHECK(urnic_engine_qp_add(&h->e, &x->qp) == 0);

	a = x->qp.attr;
	a.port_num = 1;
	a.access = URNIC_ACCESS_LOCAL_WRITE | URNIC_ACCESS_REMOTE_WRITE | URNIC_ACCESS_REMOTE_READ |
		   URNIC_ACCESS_REMOTE_ATOMIC;
	FUZZ_CHECK(modify(h, x, &a, URNIC_QPS_INIT,
			  URNIC_QP_STATE | URNIC_QP_PKEY_INDEX | URNIC_QP_PORT |
			      URNIC_QP_ACCESS_FLAGS) == 0);
	memset(&a.peer, 0, sizeof(a.peer));
	memcpy(a.peer.ip, peer_ip, 4);
	a.peer.sport = 0xc001;
	a.peer.hop_limit = 64;
	a.path_mtu = FUZZ_MTU;
	a.dest_qp_num = peer_qpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	FUZZ_CHECK(modify(h, x, &a, URNIC_QPS_RTR,
			  URNIC_QP_STATE | URNIC_QP_AV | URNIC_QP_PATH_MTU | URNIC_QP_DEST_QPN |
			      URNIC_QP_RQ_PSN | URNIC_QP_MAX_DEST_RD_ATOMIC |
			      URNIC_QP_MIN_RNR_TIMER) == 0);
	a.sq_psn = sq_psn;
	a.timeout = 14;
	a.retry_cnt = 3;
	a.rnr_retry = rnr_retry;
	a.max_rd_atomic = 4;
	FUZZ_CHECK(modify(h, x, &a, URNIC_QPS_RTS,
			  URNIC_QP_STATE | URNIC_QP_SQ_PSN | URNIC_QP_TIMEOUT | URNIC_QP_RETRY_CNT |
			      URNIC_QP_RNR_RETRY | URNIC_QP_MAX_QP_RD_ATOMIC) == 0);
	FUZZ_CHECK(x->qp.state == URNIC_QPS_RTS);
}

static void qp_free(struct harness *h, struct qpx *x)
{
	urnic_engine_qp_remove(&h->e, &x->qp);
	urnic_wq_fini(&x->qp.sq);
	urnic_wq_fini(&x->qp.rq);
	urnic_cq_fini(&x->scq);
	urnic_cq_fini(&x->rcq);
}

static struct urnic_sge sge_of(struct harness *h, enum fuzz_region r, uint32_t off, uint32_t len)
{
	return (struct urnic_sge){ h->reg[r].mr->iova + off, len, h->reg[r].mr->key };
}

/* As src/verbs/post.c ibv_post_recv. */
static void post_recv(struct harness *h)
{
	struct urnic_wq *rq = &h->r.qp.rq;
	uint32_t prod = atomic_load_explicit(&rq->prod, memory_order_relaxed);
	uint32_t cons = atomic_load_explicit(&rq->cons, memory_order_acquire);
	unsigned t = h->recv_next++ % RECV_TMPLS;
	struct urnic_recv_wqe *w;
	uint32_t total = 0;

	if (prod - cons >= rq->max_wr)
		return;
	w = urnic_wq_slot(rq, prod);
	w->wr_id = h->r.recv_posted;
	w->num_sge = recv_tmpl[t].nsge;
	for (uint32_t i = 0; i < w->num_sge; i++) {
		w->sge[i] = sge_of(h, recv_tmpl[t].sge[i].r, recv_tmpl[t].sge[i].off,
				   recv_tmpl[t].sge[i].len);
		total += recv_tmpl[t].sge[i].len;
	}
	w->length = total;
	h->r.recv_len[h->r.recv_posted % RQ_DEPTH] = total;
	h->r.recv_posted++;
	atomic_store_explicit(&rq->prod, prod + 1, memory_order_release);
	urnic_engine_doorbell(&h->e, h->r.qp.qpn);
}

/* As src/verbs/post.c ibv_post_send: Q's next planned WQE. */
static void post_send(struct harness *h)
{
	struct urnic_wq *sq = &h->q.qp.sq;
	uint32_t prod = atomic_load_explicit(&sq->prod, memory_order_relaxed);
	uint32_t cons = atomic_load_explicit(&sq->cons, memory_order_acquire);
	unsigned k = h->plan_next++ % fuzz_plan_len;
	const struct fuzz_wqe_plan *pl = &fuzz_plan[k];
	struct urnic_send_wqe *w;
	bool to_dst = pl->opcode == URNIC_WR_RDMA_READ ||
		      pl->opcode == URNIC_WR_ATOMIC_CMP_AND_SWP ||
		      pl->opcode == URNIC_WR_ATOMIC_FETCH_AND_ADD;

	if (prod - cons >= sq->max_wr)
		return;
	w = urnic_wq_slot(sq, prod);
	memset(w, 0, sizeof(*w));
	w->wr_id = h->q.send_posted;
	w->opcode = pl->opcode;
	w->flags = pl->flags;
	w->imm_be = 0x11223344;
	w->length = pl->length;
	w->remote_addr = 0x100000 + (uint64_t)k * 0x1000;
	w->rkey = 0x4321;
	w->compare_add = 7;
	w->swap = 9;
	w->status = URNIC_WC_SUCCESS;
	if (pl->flags & URNIC_SEND_INLINE) {
		memcpy(w->inline_data, h->reg[FR_SRC].body, pl->length);
	} else if (pl->length) {
		w->num_sge = 1;
		w->sge[0] = to_dst ? sge_of(h, FR_DST, pl->dst_off, pl->length)
				   : sge_of(h, FR_SRC, 0, pl->length);
	}
	h->q.send_op[h->q.send_posted % SQ_DEPTH] = pl->opcode;
	h->q.send_posted++;
	atomic_store_explicit(&sq->prod, prod + 1, memory_order_release);
	urnic_engine_doorbell(&h->e, h->q.qp.qpn);
}

/* ---- completions and engine state ---- */

static uint16_t wc_opcode_of(uint32_t wr_opcode)
{
	switch (wr_opcode) {
	case URNIC_WR_RDMA_WRITE:
	case URNIC_WR_RDMA_WRITE_WITH_IMM:
		return URNIC_WC_RDMA_WRITE;
	case URNIC_WR_RDMA_READ:
		return URNIC_WC_RDMA_READ;
	case URNIC_WR_ATOMIC_CMP_AND_SWP:
		return URNIC_WC_COMP_SWAP;
	case URNIC_WR_ATOMIC_FETCH_AND_ADD:
		return URNIC_WC_FETCH_ADD;
	default:
		return URNIC_WC_SEND;
	}
}

static void check_cqs(struct qpx *x)
{
	struct urnic_cqe c[32];
	int n;

	while ((n = urnic_cq_poll(&x->scq, c, 32)) > 0) {
		for (int i = 0; i < n; i++) {
			FUZZ_CHECK(c[i].status <= URNIC_WC_GENERAL_ERR);
			FUZZ_CHECK(c[i].qp_num == x->qp.qpn);
			FUZZ_CHECK(x->send_done < x->send_posted);
			FUZZ_CHECK(c[i].wr_id == x->send_done); /* once each, in post order */
			FUZZ_CHECK(c[i].opcode ==
				   wc_opcode_of(x->send_op[x->send_done % SQ_DEPTH]));
			x->send_ok += c[i].status == URNIC_WC_SUCCESS;
			x->send_done++;
		}
	}
	while ((n = urnic_cq_poll(&x->rcq, c, 32)) > 0) {
		for (int i = 0; i < n; i++) {
			FUZZ_CHECK(c[i].status <= URNIC_WC_GENERAL_ERR);
			FUZZ_CHECK(c[i].qp_num == x->qp.qpn);
			FUZZ_CHECK(x->recv_done < x->recv_posted);
			FUZZ_CHECK(c[i].wr_id == x->recv_done);
			FUZZ_CHECK(c[i].opcode == URNIC_WC_RECV ||
				   c[i].opcode == URNIC_WC_RECV_RDMA_WITH_IMM);
			x->recv_ok += c[i].status == URNIC_WC_SUCCESS;
			if (c[i].status == URNIC_WC_SUCCESS && c[i].opcode == URNIC_WC_RECV)
				FUZZ_CHECK(c[i].byte_len <= x->recv_len[x->recv_done % RQ_DEPTH]);
			x->recv_done++;
		}
	}
}

static void check_qp(const struct qpx *x)
{
	const struct urnic_qp *qp = &x->qp;
	uint32_t prod = atomic_load(&qp->sq.prod), replying = 0;

	FUZZ_CHECK(qp->state == URNIC_QPS_RTS || qp->state == URNIC_QPS_ERR);
	FUZZ_CHECK(prod - qp->comp.idx <= qp->sq.depth);
	FUZZ_CHECK(qp->req.idx - qp->comp.idx <= prod - qp->comp.idx);
	FUZZ_CHECK(atomic_load(&qp->rq.prod) - atomic_load(&qp->rq.cons) <= qp->rq.depth);
	FUZZ_CHECK(qp->resp.res_count <= URNIC_MAX_RD_ATOMIC);
	if (qp->state == URNIC_QPS_ERR)
		return; /* the error state forgets the responses owed (urnic_qp_to_error) */
	for (uint32_t i = 0; i < qp->resp.res_count; i++)
		replying += qp->resp.res[i].replying;
	FUZZ_CHECK(qp->resp.replying == replying);
}

static void check_all(struct harness *h)
{
	check_cqs(&h->r);
	check_cqs(&h->q);
	check_qp(&h->r);
	check_qp(&h->q);
	check_memory(h);
	FUZZ_CHECK(h->e.ntx == 0);
}

/* One pass of src/dev/device.c: urnic_engine_pass, then the flush. Returns the next
 * timer deadline. */
static uint64_t pass(struct harness *h)
{
	uint64_t next;

	urnic_engine_pass(&h->e, &next);
	if (h->e.ntx)
		flush_cb(&h->e);
	check_all(h);
	return next;
}

/* ---- setup ---- */

static struct harness *harness_new(void)
{
	struct harness *h = xcalloc(1, sizeof(*h));

	layout_once();
	FUZZ_CHECK(urnic_engine_init(&h->e, false, local_ip, flush_cb, h, 0x5eed) == 0);
	h->e.skip_icrc_check = true; /* the fuzz build bypasses the ICRC, as lwIP's switch */
	h->e.now_ns = 1000000000ull;
	h->e.audit_idle = true; /* a QP left out of the active set aborts the run */
	h->pd.handle = 1;
	for (int r = 0; r < FR_COUNT; r++)
		region_new(h, (enum fuzz_region)r);
	urnic_mr_deregister(&h->e.mrs, h->reg[FR_DEAD].mr); /* its key stays in the table, stale */

	qp_new(h, &h->r, PEER_QPN_R, 0x000100, FUZZ_R_RQ_PSN, 7);
	qp_new(h, &h->q, PEER_QPN_Q, FUZZ_Q_SQ_PSN, 0x000200, 3);
	for (unsigned t = 0; t < RECV_TMPLS; t++)
		post_recv(h);
	for (unsigned k = 0; k < fuzz_plan_len; k++)
		post_send(h);
	(void)pass(h); /* Q sends its requests: its completer now waits for answers */
	return h;
}

/* URNIC_FUZZ_TRACE=1: what an input did (to check that seeds reach what they aim at). */
static void trace(const struct harness *h)
{
	fprintf(stderr,
		"fuzz: R %s, receives %llu ok/%llu done/%llu posted; Q %s, sends %llu ok/"
		"%llu done/%llu posted;",
		urnic_qp_state_name(h->r.qp.state), (unsigned long long)h->r.recv_ok,
		(unsigned long long)h->r.recv_done, (unsigned long long)h->r.recv_posted,
		urnic_qp_state_name(h->q.qp.state), (unsigned long long)h->q.send_ok,
		(unsigned long long)h->q.send_done, (unsigned long long)h->q.send_posted);
	for (int i = 0; i < URNIC_CTR_COUNT; i++)
		if (h->e.counters[i])
			fprintf(stderr, " %s=%llu", urnic_counter_names[i],
				(unsigned long long)h->e.counters[i]);
	fprintf(stderr, "\n");
}

static void harness_free(struct harness *h)
{
	if (getenv("URNIC_FUZZ_TRACE"))
		trace(h);
	/* The last deadline pass left nothing batched; destroy as src/verbs does. */
	qp_free(h, &h->r);
	qp_free(h, &h->q);
	h->reg[FR_DEAD].mr = NULL; /* deregistered at start; its slot kept the stale key */
	for (int r = 0; r < FR_COUNT; r++)
		region_free(h, (enum fuzz_region)r);
	FUZZ_CHECK(h->e.mrs.nlive == 0);
	urnic_engine_fini(&h->e);
	free(h);
}

/* ---- one record ---- */

/* Points the packet at the chosen QP, rebases its PSN and maps R_Key selectors. */
static void rewrite(struct harness *h, uint8_t *buf, size_t len, uint8_t ctl, enum fuzz_role role)
{
	unsigned sel = ctl & FUZZ_CTL_QP_MASK;
	struct qpx *x = (role == FUZZ_RESPONDER) == (sel != FUZZ_CTL_QP_OTHER) ? &h->r : &h->q;
	struct urnic_pkt p;
	uint32_t flags;
	ssize_t n;

	n = urnic_pkt_decode(&p, buf, len);
	if (n < 0)
		return; /* the engine drops it as it is */
	flags = urnic_opcode_info(p.bth.opcode)->flags;
	if (sel != FUZZ_CTL_QP_RAW) {
		p.bth.dqpn = x->qp.qpn;
		if (!(ctl & FUZZ_CTL_PSN_RAW))
			p.bth.psn =
			    urnic_psn_add(p.bth.psn, (flags & URNIC_OPF_REQ) ? x->qp.attr.rq_psn
									     : x->qp.attr.sq_psn);
	}
	/* Selector k names region k (FR_DEAD: its stale key); the address is an offset. */
	if ((flags & URNIC_OPF_RETH) && p.reth.rkey < FR_COUNT) {
		p.reth.va += h->reg[p.reth.rkey].mr->iova;
		p.reth.rkey = h->reg[p.reth.rkey].mr->key;
	}
	if ((flags & URNIC_OPF_ATMETH) && p.atmeth.rkey < FR_COUNT) {
		p.atmeth.va += h->reg[p.atmeth.rkey].mr->iova;
		p.atmeth.rkey = h->reg[p.atmeth.rkey].mr->key;
	}
	FUZZ_CHECK(urnic_pkt_encode_hdr(&p, buf, (size_t)n) == n);
}

int fuzz_rc_one(const uint8_t *data, size_t size, enum fuzz_role role)
{
	struct harness *h = harness_new();
	size_t off = 0;
	uint64_t next;

	for (unsigned rec = 0; rec < FUZZ_MAX_RECORDS && size - off >= FUZZ_REC_HDR; rec++) {
		uint8_t ctl = data[off];
		size_t len = urnic_get_be16(data + off + 1);
		uint8_t *buf;

		off += FUZZ_REC_HDR;
		if (len > size - off)
			len = size - off;
		/* A heap copy of exactly len bytes: ASan sees any read past the datagram. */
		buf = malloc(len ? len : 1);
		FUZZ_CHECK(buf != NULL);
		memcpy(buf, data + off, len);
		off += len;
		if (ctl & FUZZ_CTL_POST) {
			if (role == FUZZ_RESPONDER)
				post_recv(h);
			else
				post_send(h);
		}
		rewrite(h, buf, len, ctl, role);
		h->e.now_ns += fuzz_clock_step_ns[(ctl >> FUZZ_CTL_CLOCK_SHIFT) & 7];
		urnic_engine_rx(&h->e, peer_ip, PEER_SPORT, local_ip, buf, len);
		free(buf);
		if (!(ctl & FUZZ_CTL_NO_PASS))
			(void)pass(h);
	}
	/* Let the timers run out: retransmissions, RNR waits, retry exhaustion. */
	next = pass(h);
	for (int k = 0; k < END_PASSES && next; k++) {
		if (next > h->e.now_ns)
			h->e.now_ns = next;
		next = pass(h);
	}
	harness_free(h);
	return 0;
}
