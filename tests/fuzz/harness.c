/* SPDX-License-Identifier: MIT */
/*
 * harness.c - the live engine the fuzz targets feed (see harness.h for the input).
 *
 * After every record it checks, and aborts when one fails:
 *   - memory: every region's buffer has guard bytes that must keep their pattern, and
 *     every byte that no live grant lets anyone write must keep its value. The grants
 *     follow the application's actions and the key table: a registered region with
 *     remote write or atomic rights (all of it), one with local write (the receive SGEs
 *     and READ/atomic targets posted in it), a bound window with remote write or atomic
 *     rights (its range; a type 2 window only while the QP that bound it lives). Bytes
 *     that lose their last grant (deregistered, moved, invalidated, unbound) are frozen
 *     as they are at that moment;
 *   - transmit: every packet the engine sends decodes to the length it claims, goes to
 *     the peer, and its payload comes from a registered region as it maps now (READ
 *     responses: one granting remote read, or a window granting it) or from a WQE's
 *     inline data - never from anywhere else;
 *   - completions: status and opcode in range and right for the queue, each posted WQE
 *     completes at most once, in the order posted (IBTA 10.8.3), a successful receive
 *     no longer than its buffer (UD: with the GRH flag, and a GRH from the peer); with an
 *     SRQ each of its WQEs completes once, on one QP, in the order that QP took them;
 *   - engine state: work queue indexes in order, the responder's count of resources
 *     still replying equal to the resources marked so, the QPs in RTS or ERR, each
 *     region's count of bound windows equal to the windows bound to it, the SRQ limit
 *     event only below the armed limit, Last WQE Reached once per QP that fails.
 * Everything is freed at the end of an input (ASan's leak check sees the rest).
 */
#include "harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/roce/cc.h"
#include "engine/roce/roce.h"
#include "mem/mw.h"
#include "queue/tm.h"
#include "wire/byteorder.h"
#include "wire/psn.h"
#include "wire/tmh.h"

enum {
	GUARD = 64,
	REGION_BYTES = 8192,
	BUF_BYTES = REGION_BYTES + 2 * GUARD,
	NBUFS = 2 * FR_COUNT, /* each region's own buffer, and the one a rereg moves it to */
	MAX_RUNS = 64,
	SQ_DEPTH = 32,
	RQ_DEPTH = 16,
	CQ_DEPTH = 256,
	MAX_SRQ_IDS = 2048, /* SRQ receives tracked; no more are posted */
	PEER_SPORT = 0xc0de,
	PEER_QPN_R = 0x000123, /* the peer's QP that R talks to */
	PEER_QPN_Q = 0x000456,
	END_PASSES = 24,    /* clock jumps after the last record: retries and RNR waits run */
	MAX_XSRQ_IDS = 256, /* receives tracked per XRC SRQ; no more are posted */
	TM_MAX_TAGS = 2 * FUZZ_TM_SLOTS,
	RVH_SEEN = 16, /* the rendezvous headers last sent to R */
};

/* wr_ids on a tag-matching SRQ's CQ: plain receives count from 0, tagged buffers and
 * list operations are told apart by these bits. */
#define TM_TAG_ID (1ull << 62)
#define TM_OP_ID (1ull << 61)

static const uint8_t local_ip[16] = { 10, 0, 0, 1 };
static const uint8_t peer_ip[16] = { 10, 0, 0, 2 };
/* The GRH area of a UD receive (IBTA 11.4.1.2). */
enum { FUZZ_GRH_BYTES = 40 };
static const uint8_t group_ip[FUZZ_MCAST_GROUPS][16] = { { 239, 1, 1, 1 }, { 239, 1, 1, 2 } };

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

static const struct fuzz_wqe_plan plan_uc[] = {
	{ URNIC_WR_SEND, 100, 0, 0 },
	{ URNIC_WR_SEND, 3000, 0, 0 },
	{ URNIC_WR_RDMA_WRITE, 2048, 0, 0 },
	{ URNIC_WR_SEND_WITH_IMM, 0, 0, 0 },
	{ URNIC_WR_RDMA_WRITE_WITH_IMM, 10, 0, 0 },
	{ URNIC_WR_SEND, 16, 0, URNIC_SEND_INLINE },
};

/* The 3000-byte SEND is longer than the UD MTU: completed, nothing sent (C10-93.1.1). */
static const struct fuzz_wqe_plan plan_ud[] = {
	{ URNIC_WR_SEND, 100, 0, 0 },
	{ URNIC_WR_SEND, 1000, 0, 0 },
	{ URNIC_WR_SEND_WITH_IMM, 0, 0, 0 },
	{ URNIC_WR_SEND, 3000, 0, 0 },
	{ URNIC_WR_SEND, 16, 0, URNIC_SEND_INLINE },
};

const struct fuzz_wqe_plan *fuzz_plan_of(enum fuzz_mode mode, unsigned *len)
{
	switch (mode) {
	case FUZZ_MODE_UC:
		*len = sizeof(plan_uc) / sizeof(plan_uc[0]);
		return plan_uc;
	case FUZZ_MODE_UD:
		*len = sizeof(plan_ud) / sizeof(plan_ud[0]);
		return plan_ud;
	default:
		*len = fuzz_plan_len;
		return fuzz_plan;
	}
}

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

/* The rights each region is registered with (enum fuzz_region order). FR_DEAD has
 * every right, but its key is stale: nothing may touch it. */
static const uint32_t region_access[FR_COUNT] = {
	[FR_RW] = URNIC_ACCESS_LOCAL_WRITE | URNIC_ACCESS_REMOTE_WRITE | URNIC_ACCESS_MW_BIND,
	[FR_RO] = URNIC_ACCESS_REMOTE_READ | URNIC_ACCESS_MW_BIND,
	[FR_ATOMIC] = URNIC_ACCESS_LOCAL_WRITE | URNIC_ACCESS_REMOTE_ATOMIC,
	[FR_RECV] = URNIC_ACCESS_LOCAL_WRITE,
	[FR_SRC] = 0,
	[FR_DST] = URNIC_ACCESS_LOCAL_WRITE,
	[FR_DEAD] = URNIC_ACCESS_LOCAL_WRITE | URNIC_ACCESS_REMOTE_WRITE |
		    URNIC_ACCESS_REMOTE_READ | URNIC_ACCESS_REMOTE_ATOMIC,
	[FR_WIN] = URNIC_ACCESS_LOCAL_WRITE | URNIC_ACCESS_MW_BIND,
};

struct run {
	uint32_t off, len;
};

/* A buffer a region may map: region r's own is buffer r, the one a rereg moves it to
 * buffer FR_COUNT + r (allocated when first used). */
struct fbuf {
	uint8_t *mem; /* GUARD | body | GUARD */
	uint8_t *ref; /* what its frozen bytes must hold; NULL: still the template */
	uint32_t nruns;
	struct run runs[MAX_RUNS]; /* the frozen bytes: no live grant covers them */
};

struct region {
	struct urnic_mr *mr; /* NULL while deregistered */
	uint32_t key;	     /* the last key it had: a selector names it even when stale */
	uint64_t iova;	     /* likewise the last address */
	unsigned buf;	     /* the buffer it maps */
};

struct mw_slot {
	struct urnic_mr *mw;	 /* NULL: not allocated */
	uint32_t key;		 /* the R_Key the application knows (ibv_mw.rkey) */
	enum fuzz_region region; /* of its last bind: selector addresses are offsets into it */
	uint64_t bind_seq;	 /* harness.qp_seq when its binding was first seen */
};

/* What the grants depend on, compared after every pass to see whether they moved. */
struct grant_sig {
	struct {
		const void *host;
		const void *pd;
		uint64_t length;
		uint32_t access, key;
	} r[FR_COUNT];
	struct {
		const void *mr;
		uint64_t iova, length;
		uint32_t key, access, qpn;
		uint8_t state;
	} w[FUZZ_MW_SLOTS];
	struct {
		uint32_t state, len;
	} t[FUZZ_TM_SLOTS];
};

/* An XRC SRQ slot (FUZZ_MODE_XRC): heap objects, so that a use after destroy is ASan's. */
struct xsrq {
	struct urnic_srq *srq; /* NULL: not created */
	struct urnic_cq *cq;
	uint32_t srqn;	       /* the number it last had: a selector names it when stale */
	uint64_t posted, next; /* wr_ids posted; the lowest one that may complete next */
	uint32_t len[MAX_XSRQ_IDS];
};

/* Where a tagged buffer is in the application's view (FUZZ_MODE_TM). */
enum tag_state {
	TS_FREE,   /* not posted: the buffer is the application's */
	TS_POSTED, /* added, not matched, not removed */
	TS_RNDV,   /* matched by a rendezvous: its READ may still write the buffer */
};

struct tag_slot {
	uint8_t state; /* enum tag_state */
	uint32_t handle;
	uint64_t wr_id;
	uint32_t len;
};

struct qpx {
	struct urnic_qp qp;
	struct urnic_cq scq, rcq;
	bool live;
	bool is_r;
	uint64_t created_seq;		 /* harness.qp_seq when it was created */
	uint64_t send_posted, send_done; /* wr_ids are sequence numbers */
	uint64_t recv_posted, recv_done;
	uint64_t send_ok, recv_ok;    /* completions with status success */
	uint64_t srq_next;	      /* SRQ: completions come with wr_ids from here up */
	uint32_t recv_len[RQ_DEPTH];  /* by recv wr_id % RQ_DEPTH */
	uint64_t recv_addr[RQ_DEPTH]; /* where its first SGE starts (iova = address) */
	uint32_t send_op[SQ_DEPTH];   /* by send wr_id % SQ_DEPTH */
	unsigned last_wqe_events;
	bool attached[FUZZ_MCAST_GROUPS];
};

struct harness {
	struct urnic_engine e;
	uint64_t now_ns; /* the clock the engine is given */
	enum fuzz_mode mode;
	enum fuzz_role role;
	struct urnic_pd pd, pd2;
	struct fbuf buf[NBUFS];
	struct region reg[FR_COUNT];
	struct mw_slot mw[FUZZ_MW_SLOTS];
	struct grant_sig sig;
	struct qpx r, q;
	struct urnic_srq srq;
	uint64_t srq_posted;
	uint32_t srq_len[MAX_SRQ_IDS];
	uint8_t srq_done[MAX_SRQ_IDS];
	uint32_t srq_armed; /* the limit last armed, 0 once the event fired */
	unsigned srq_events;
	/* XRC: R's domain and another one, the SRQ slots */
	struct urnic_xrcd xrcd, xrcd_other;
	struct xsrq xs[FUZZ_XSRQ_SLOTS];
	unsigned xpost_next;
	/* TM: h->srq's tag list and CQ, the tagged buffers, the RVHs R was sent */
	struct urnic_tm_list tml;
	struct urnic_cq tmcq;
	struct tag_slot tag[FUZZ_TM_SLOTS];
	uint64_t tm_seq;
	uint32_t tm_unexp_seen;
	struct urnic_rvh rvh[RVH_SEEN];
	unsigned nrvh;
	uint64_t qp_seq;
	const struct fuzz_wqe_plan *plan;
	unsigned plan_len, plan_next, recv_next;
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

static uint8_t pattern(unsigned b, size_t i)
{
	return (uint8_t)((i * 131 + b * 29 + (i >> 7)) ^ 0x5a);
}

/* ---- buffers and grants ---- */

/* What every buffer holds at start, computed once. */
static uint8_t tmpl[NBUFS][BUF_BYTES];

/* The frozen runs right after setup, the same for every input of a mode: computing
 * them per input would be most of its run time under coverage instrumentation. */
static struct {
	bool ready;
	uint32_t nruns[NBUFS];
	struct run runs[NBUFS][MAX_RUNS];
} first_runs[FUZZ_MODE_COUNT];

static void tmpl_once(void)
{
	static bool ready;

	if (ready)
		return;
	for (unsigned b = 0; b < NBUFS; b++)
		for (size_t i = 0; i < BUF_BYTES; i++)
			tmpl[b][i] = pattern(b, i);
	ready = true;
}

static uint8_t *buf_body(struct harness *h, unsigned b)
{
	struct fbuf *f = &h->buf[b];

	if (!f->mem) {
		f->mem = malloc(BUF_BYTES);
		FUZZ_CHECK(f->mem != NULL);
		memcpy(f->mem, tmpl[b], BUF_BYTES);
		f->nruns = 1; /* nothing grants a byte of it yet */
		f->runs[0] = (struct run){ 0, REGION_BYTES };
	}
	return f->mem + GUARD;
}

static const uint8_t *buf_ref(const struct harness *h, unsigned b)
{
	return h->buf[b].ref ? h->buf[b].ref : tmpl[b];
}

static void mark(uint8_t *w, uint64_t off, uint64_t len)
{
	if (off >= REGION_BYTES)
		return;
	if (len > REGION_BYTES - off)
		len = REGION_BYTES - off;
	memset(w + off, 1, (size_t)len);
}

/* The bytes of region r that posted work may write with local write: receive SGEs and
 * Q's READ/atomic targets, at their offsets in it. */
static void mark_local(const struct harness *h, uint8_t *w, enum fuzz_region r)
{
	for (unsigned t = 0; t < RECV_TMPLS; t++)
		for (uint32_t i = 0; i < recv_tmpl[t].nsge; i++)
			if (recv_tmpl[t].sge[i].r == r)
				mark(w, recv_tmpl[t].sge[i].off, recv_tmpl[t].sge[i].len);
	if (r == FR_WIN && h->mode == FUZZ_MODE_TM)
		for (unsigned k = 0; k < FUZZ_TM_SLOTS; k++)
			if (h->tag[k].state != TS_FREE)
				mark(w, FUZZ_TM_BUF_OFF + k * FUZZ_TM_BUF_MAX, h->tag[k].len);
	if (r != FR_DST)
		return;
	for (unsigned k = 0; k < h->plan_len; k++)
		if (h->plan[k].opcode == URNIC_WR_RDMA_READ ||
		    h->plan[k].opcode == URNIC_WR_ATOMIC_CMP_AND_SWP ||
		    h->plan[k].opcode == URNIC_WR_ATOMIC_FETCH_AND_ADD)
			mark(w, h->plan[k].dst_off, h->plan[k].length);
}

static int region_of(const struct harness *h, const struct urnic_mr *mr)
{
	for (int r = 0; r < FR_COUNT; r++)
		if (h->reg[r].mr && h->reg[r].mr == mr)
			return r;
	return -1;
}

/* Whether window slot s grants anything now: bound, and for type 2 the QP that bound it
 * still lives (a new QP that got its QPN is another QP, o10-37.2.36). */
static bool window_grants(const struct harness *h, const struct mw_slot *s)
{
	const struct urnic_mr *mw = s->mw;

	if (!mw || !mw->live || mw->mw_state != URNIC_MW_VALID || !mw->mw_mr ||
	    region_of(h, mw->mw_mr) < 0)
		return false;
	if (mw->kind != URNIC_KEY_MW2)
		return true;
	for (const struct qpx *x = &h->r; x; x = x == &h->r ? &h->q : NULL)
		if (x->live && x->qp.qpn == mw->mw_qpn && x->created_seq <= s->bind_seq)
			return true;
	return false;
}

static void freeze_runs(struct fbuf *f, const uint8_t *w)
{
	f->nruns = 0;
	for (uint32_t i = 0, j; i < REGION_BYTES; i = j) {
		for (j = i; j < REGION_BYTES && w[j] == w[i]; j++)
			;
		if (w[i])
			continue;
		FUZZ_CHECK(f->nruns < MAX_RUNS);
		f->runs[f->nruns++] = (struct run){ i, j - i };
	}
}

/* The grants moved: from now on the bytes outside them must keep what they hold now. */
static void regrant(struct harness *h)
{
	static uint8_t w[NBUFS][REGION_BYTES];

	memset(w, 0, sizeof(w));
	for (int r = 0; r < FR_COUNT; r++) {
		const struct urnic_mr *mr = h->reg[r].mr;

		if (!mr)
			continue;
		if (mr->access & (URNIC_ACCESS_REMOTE_WRITE | URNIC_ACCESS_REMOTE_ATOMIC))
			mark(w[h->reg[r].buf], 0, REGION_BYTES);
		if (mr->access & URNIC_ACCESS_LOCAL_WRITE)
			mark_local(h, w[h->reg[r].buf], (enum fuzz_region)r);
	}
	for (int k = 0; k < FUZZ_MW_SLOTS; k++) {
		const struct urnic_mr *mw = h->mw[k].mw;
		int r;

		if (!window_grants(h, &h->mw[k]) ||
		    !(mw->access & (URNIC_ACCESS_REMOTE_WRITE | URNIC_ACCESS_REMOTE_ATOMIC)))
			continue;
		r = region_of(h, mw->mw_mr);
		mark(w[h->reg[r].buf], mw->iova - mw->mw_mr->iova, mw->length);
	}
	for (unsigned b = 0; b < NBUFS; b++) {
		struct fbuf *f = &h->buf[b];

		if (!f->mem)
			continue;
		if (!f->ref) {
			f->ref = malloc(BUF_BYTES);
			FUZZ_CHECK(f->ref != NULL);
		}
		memcpy(f->ref, f->mem, BUF_BYTES);
		freeze_runs(f, w[b]);
	}
}

static void sig_take(const struct harness *h, struct grant_sig *s)
{
	memset(s, 0, sizeof(*s));
	for (int r = 0; r < FR_COUNT; r++) {
		const struct urnic_mr *mr = h->reg[r].mr;

		if (!mr)
			continue;
		s->r[r].host = mr->host;
		s->r[r].pd = mr->pd;
		s->r[r].length = mr->length;
		s->r[r].access = mr->access;
		s->r[r].key = mr->key;
	}
	for (int k = 0; k < FUZZ_MW_SLOTS; k++) {
		const struct urnic_mr *mw = h->mw[k].mw;

		if (!mw)
			continue;
		s->w[k].mr = mw->mw_mr;
		s->w[k].iova = mw->iova;
		s->w[k].length = mw->length;
		s->w[k].key = mw->key;
		s->w[k].access = mw->access;
		s->w[k].qpn = mw->mw_qpn;
		s->w[k].state = mw->mw_state;
	}
	for (int k = 0; k < FUZZ_TM_SLOTS; k++) {
		s->t[k].state = h->tag[k].state;
		s->t[k].len = h->tag[k].state != TS_FREE ? h->tag[k].len : 0;
	}
}

/* After a pass or an action: a window newly bound dates its binding now, and if any
 * grant moved the frozen bytes are taken again. force: an action may have changed
 * what the table does not show (a QP destroyed). */
static void grants_update(struct harness *h, bool force)
{
	struct grant_sig now;

	sig_take(h, &now);
	if (!force && memcmp(&now, &h->sig, sizeof(now)) == 0)
		return;
	for (int k = 0; k < FUZZ_MW_SLOTS; k++)
		if (memcmp(&now.w[k], &h->sig.w[k], sizeof(now.w[k])) != 0 &&
		    now.w[k].state == URNIC_MW_VALID)
			h->mw[k].bind_seq = h->qp_seq;
	h->sig = now;
	regrant(h);
}

static void check_memory(struct harness *h)
{
	for (unsigned b = 0; b < NBUFS; b++) {
		const struct fbuf *f = &h->buf[b];
		const uint8_t *ref = buf_ref(h, b);

		if (!f->mem)
			continue;
		FUZZ_CHECK(memcmp(f->mem, ref, GUARD) == 0);
		FUZZ_CHECK(memcmp(f->mem + GUARD + REGION_BYTES, ref + GUARD + REGION_BYTES,
				  GUARD) == 0);
		for (uint32_t k = 0; k < f->nruns; k++) {
			const uint8_t *m = f->mem + GUARD + f->runs[k].off;
			const uint8_t *want = ref + GUARD + f->runs[k].off;

			if (memcmp(m, want, f->runs[k].len) == 0)
				continue;
			for (uint32_t i = 0; i < f->runs[k].len; i++) {
				if (m[i] == want[i])
					continue;
				fprintf(stderr,
					"fuzz: %s buffer of region %u changed at offset %u, which "
					"no live grant may write\n",
					b < FR_COUNT ? "first" : "second", b % FR_COUNT,
					f->runs[k].off + i);
				break;
			}
			FUZZ_CHECK(memcmp(m, want, f->runs[k].len) == 0);
		}
	}
}

/* The key table agrees with itself: each region counts the windows bound to it. */
static void check_table(const struct harness *h)
{
	for (int r = 0; r < FR_COUNT; r++) {
		uint32_t n = 0;

		if (!h->reg[r].mr)
			continue;
		for (int k = 0; k < FUZZ_MW_SLOTS; k++)
			n += h->mw[k].mw && h->mw[k].mw->mw_state == URNIC_MW_VALID &&
			     h->mw[k].mw->mw_mr == h->reg[r].mr;
		FUZZ_CHECK(h->reg[r].mr->nwindows == n);
		FUZZ_CHECK(h->reg[r].mr->live);
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
	if (!x->live)
		return false;
	for (uint32_t i = 0; i < x->qp.sq.depth; i++) {
		const struct urnic_send_wqe *w = urnic_wq_slot(&x->qp.sq, i);

		if (inside(p, len, w->inline_data, sizeof(w->inline_data)))
			return true;
	}
	return false;
}

/* Whether [p, p+len) may go into a packet: inside a registered region as it maps now
 * (a READ response: one granting remote read, or the range of a window granting it). */
static bool readable(const struct harness *h, const void *p, size_t len, bool read_resp)
{
	for (int r = 0; r < FR_COUNT; r++) {
		const struct urnic_mr *mr = h->reg[r].mr;

		if (!mr || (read_resp && !(mr->access & URNIC_ACCESS_REMOTE_READ)))
			continue;
		if (inside(p, len, mr->host, mr->length))
			return true;
	}
	for (int k = 0; read_resp && k < FUZZ_MW_SLOTS; k++) {
		const struct urnic_mr *mw = h->mw[k].mw;

		if (!window_grants(h, &h->mw[k]) || !(mw->access & URNIC_ACCESS_REMOTE_READ))
			continue;
		if (inside(p, len, mw->mw_mr->host + (mw->iova - mw->mw_mr->iova), mw->length))
			return true;
	}
	return false;
}

/* R posts no READ of its own in TM mode: each is a rendezvous's, and reads only from
 * the buffer (R_Key, range) an RVH sent to R named (tag_matching.md). A retry may ask
 * for the rest of it. */
static void check_rndv_read(const struct harness *h, const struct urnic_pkt *pkt)
{
	unsigned n = h->nrvh < RVH_SEEN ? h->nrvh : RVH_SEEN;

	for (unsigned i = 0; i < n; i++) {
		const struct urnic_rvh *v = &h->rvh[i];

		if (v->rkey == pkt->reth.rkey && pkt->reth.va >= v->va &&
		    pkt->reth.va - v->va <= v->len &&
		    pkt->reth.len <= v->len - (pkt->reth.va - v->va))
			return;
	}
	fprintf(stderr, "fuzz: R reads va %#llx rkey %#x len %u, which no RVH named\n",
		(unsigned long long)pkt->reth.va, pkt->reth.rkey, pkt->reth.len);
	FUZZ_CHECK(!"a rendezvous READ from what the RVH named");
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
		bool ok = readable(h, f->base, f->len, read_resp);

		total += (uint32_t)f->len;
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
	if (h->mode == FUZZ_MODE_TM && pkt.bth.dqpn == PEER_QPN_R &&
	    (urnic_opcode_info(pkt.bth.opcode)->flags & (URNIC_OPF_READ | URNIC_OPF_REQ)) ==
		    (URNIC_OPF_READ | URNIC_OPF_REQ))
		check_rndv_read(h, &pkt);
	free(buf);
}

static void flush_cb(struct urnic_engine *e)
{
	struct harness *h = e->hooks.io;

	for (uint32_t i = 0; i < e->tx.n; i++)
		check_tx(h, &e->tx.pkts[i]);
	e->tx.n = 0;
}

/* ---- engine events ---- */

static void srq_limit_cb(struct urnic_engine *e, struct urnic_srq *srq)
{
	struct harness *h = e->hooks.io;

	/* IBTA 10.2.9: once per arming, when fewer WQEs than the limit are left. */
	FUZZ_CHECK(srq == &h->srq);
	FUZZ_CHECK(h->srq_armed && urnic_srq_count(srq) < h->srq_armed);
	FUZZ_CHECK(srq->limit == 0);
	h->srq_armed = 0;
	h->srq_events++;
}

static void last_wqe_cb(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct harness *h = e->hooks.io;
	struct qpx *x = qp == &h->r.qp ? &h->r : &h->q;

	FUZZ_CHECK(qp == &h->r.qp || qp == &h->q.qp);
	FUZZ_CHECK(h->mode == FUZZ_MODE_XRC || qp->srq == &h->srq);
	FUZZ_CHECK(qp->state == URNIC_QPS_ERR);
	FUZZ_CHECK(++x->last_wqe_events == 1);
}

/* ---- QPs and work ---- */

static int modify(struct harness *h, struct qpx *x, const struct urnic_qp_attr *a,
		  enum urnic_qp_state next, uint32_t mask)
{
	int ret = urnic_qp_check_modify(&x->qp, a, x->qp.state, next, mask);

	if (ret == 0)
		urnic_engine_qp_apply(&h->e, &x->qp, a, next, mask, h->now_ns);
	return ret;
}

static enum urnic_qp_type qp_type(const struct harness *h, const struct qpx *x)
{
	if (h->mode == FUZZ_MODE_XRC && x->is_r)
		return URNIC_QPT_XRC_RECV;
	return h->mode == FUZZ_MODE_UC	 ? URNIC_QPT_UC
	       : h->mode == FUZZ_MODE_UD ? URNIC_QPT_UD
					 : URNIC_QPT_RC;
}

/* The QPs whose receives come from h->srq: both in SRQ mode, R on the tag-matching one. */
static bool on_srq(const struct harness *h, const struct qpx *x)
{
	return h->mode == FUZZ_MODE_SRQ || (h->mode == FUZZ_MODE_TM && x->is_r);
}

/* As src/verbs/qp.c ibv_create_qp + ibv_modify_qp to RTS, and tests/engine/fabric.c. */
static void qp_new(struct harness *h, struct qpx *x)
{
	enum urnic_qp_type t = qp_type(h, x);
	uint32_t state = URNIC_QP_STATE;
	struct urnic_qp_attr a;

	memset(&x->qp, 0, sizeof(x->qp));
	FUZZ_CHECK(urnic_wq_init(&x->qp.sq, SQ_DEPTH, sizeof(struct urnic_send_wqe)) == 0);
	FUZZ_CHECK(urnic_wq_init(&x->qp.rq, RQ_DEPTH, sizeof(struct urnic_recv_wqe)) == 0);
	FUZZ_CHECK(urnic_cq_init(&x->scq, CQ_DEPTH) == 0);
	FUZZ_CHECK(urnic_cq_init(&x->rcq, CQ_DEPTH) == 0);
	x->qp.sq.max_sge = URNIC_MAX_SGE;
	x->qp.rq.max_sge = URNIC_MAX_SGE;
	x->qp.sq.max_inline = URNIC_MAX_INLINE;
	x->qp.type = t;
	x->qp.state = URNIC_QPS_RESET;
	x->qp.sq_sig_all = true;
	x->qp.pd = &h->pd;
	x->qp.send_cq = &x->scq;
	x->qp.recv_cq = &x->rcq;
	x->qp.srq = on_srq(h, x) ? &h->srq : NULL;
	if (t == URNIC_QPT_XRC_RECV) {
		/* IBTA A14: no PD, CQ or queue of its own; each request names an SRQ. */
		x->qp.pd = NULL;
		x->qp.send_cq = x->qp.recv_cq = NULL;
		x->qp.xrcd = &h->xrcd;
	}
	if (h->mode == FUZZ_MODE_TM && x->is_r) /* src/verbs/qp.c: rendezvous slots */
		x->qp.sq.max_wr = SQ_DEPTH - URNIC_TM_SQ_RESERVE;
	x->qp.attr.path_mtu = t == URNIC_QPT_UD ? FUZZ_MTU : 256;
	FUZZ_CHECK(urnic_engine_qp_add(&h->e, &x->qp) == 0);
	x->live = true;
	x->created_seq = ++h->qp_seq;
	x->send_posted = x->send_done = x->send_ok = 0;
	x->recv_posted = x->recv_done = x->recv_ok = 0;
	x->srq_next = 0;
	x->last_wqe_events = 0;

	a = x->qp.attr;
	a.port_num = 1;
	a.qkey = FUZZ_QKEY;
	a.access = URNIC_ACCESS_LOCAL_WRITE | URNIC_ACCESS_REMOTE_WRITE | URNIC_ACCESS_REMOTE_READ |
		   URNIC_ACCESS_REMOTE_ATOMIC;
	if (t == URNIC_QPT_UD) {
		/* As src/verbs/qp.c: a UD QP's source port is fixed at creation. */
		x->qp.attr.peer.sport = (uint16_t)(0xc000 | ((x->qp.qpn * 0x61c88647u) >> 18));
		FUZZ_CHECK(modify(h, x, &a, URNIC_QPS_INIT,
				  state | URNIC_QP_PKEY_INDEX | URNIC_QP_PORT | URNIC_QP_QKEY) ==
			   0);
		FUZZ_CHECK(modify(h, x, &a, URNIC_QPS_RTR, state) == 0);
		a.sq_psn = x->is_r ? 0x000100 : FUZZ_Q_SQ_PSN;
		FUZZ_CHECK(modify(h, x, &a, URNIC_QPS_RTS, state | URNIC_QP_SQ_PSN) == 0);
		FUZZ_CHECK(x->qp.state == URNIC_QPS_RTS);
		return;
	}
	FUZZ_CHECK(modify(h, x, &a, URNIC_QPS_INIT,
			  state | URNIC_QP_PKEY_INDEX | URNIC_QP_PORT | URNIC_QP_ACCESS_FLAGS) ==
		   0);
	memset(&a.peer, 0, sizeof(a.peer));
	memcpy(a.peer.ip, peer_ip, 4);
	a.peer.sport = 0xc001;
	a.peer.hop_limit = 64;
	a.path_mtu = FUZZ_MTU;
	a.dest_qp_num = x->is_r ? PEER_QPN_R : PEER_QPN_Q;
	a.rq_psn = x->is_r ? FUZZ_R_RQ_PSN : 0x000200;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.sq_psn = x->is_r ? 0x000100 : FUZZ_Q_SQ_PSN;
	a.timeout = 14;
	a.retry_cnt = 3;
	a.rnr_retry = x->is_r ? 7 : 3;
	a.max_rd_atomic = 4;
	if (t == URNIC_QPT_UC) {
		FUZZ_CHECK(modify(h, x, &a, URNIC_QPS_RTR,
				  state | URNIC_QP_AV | URNIC_QP_PATH_MTU | URNIC_QP_DEST_QPN |
					  URNIC_QP_RQ_PSN) == 0);
		FUZZ_CHECK(modify(h, x, &a, URNIC_QPS_RTS, state | URNIC_QP_SQ_PSN) == 0);
	} else if (t == URNIC_QPT_XRC_RECV) {
		FUZZ_CHECK(modify(h, x, &a, URNIC_QPS_RTR,
				  state | URNIC_QP_AV | URNIC_QP_PATH_MTU | URNIC_QP_DEST_QPN |
					  URNIC_QP_RQ_PSN | URNIC_QP_MAX_DEST_RD_ATOMIC |
					  URNIC_QP_MIN_RNR_TIMER) == 0);
		FUZZ_CHECK(modify(h, x, &a, URNIC_QPS_RTS,
				  state | URNIC_QP_SQ_PSN | URNIC_QP_TIMEOUT) == 0);
	} else {
		FUZZ_CHECK(modify(h, x, &a, URNIC_QPS_RTR,
				  state | URNIC_QP_AV | URNIC_QP_PATH_MTU | URNIC_QP_DEST_QPN |
					  URNIC_QP_RQ_PSN | URNIC_QP_MAX_DEST_RD_ATOMIC |
					  URNIC_QP_MIN_RNR_TIMER) == 0);
		FUZZ_CHECK(modify(h, x, &a, URNIC_QPS_RTS,
				  state | URNIC_QP_SQ_PSN | URNIC_QP_TIMEOUT | URNIC_QP_RETRY_CNT |
					  URNIC_QP_RNR_RETRY | URNIC_QP_MAX_QP_RD_ATOMIC) == 0);
	}
	FUZZ_CHECK(x->qp.state == URNIC_QPS_RTS);
}

static struct urnic_sge sge_of(struct harness *h, enum fuzz_region r, uint32_t off, uint32_t len)
{
	return (struct urnic_sge){ h->reg[r].iova + off, len, h->reg[r].key };
}

/* As src/verbs/post.c ibv_post_recv (ibv_post_srq_recv in SRQ mode): the next template. */
static void xsrq_post(struct harness *h, unsigned k)
{
	struct xsrq *s = &h->xs[k];
	struct urnic_wq *rq;
	uint32_t prod, cons, total = 0;
	unsigned t = h->recv_next++ % RECV_TMPLS;
	struct urnic_recv_wqe *w;

	if (!s->srq)
		return;
	rq = &s->srq->rq;
	prod = atomic_load_explicit(&rq->prod, memory_order_relaxed);
	cons = atomic_load_explicit(&rq->cons, memory_order_acquire);
	if (prod - cons >= rq->max_wr || s->posted >= MAX_XSRQ_IDS)
		return;
	w = urnic_wq_slot(rq, prod);
	w->wr_id = s->posted;
	w->num_sge = recv_tmpl[t].nsge;
	for (uint32_t i = 0; i < w->num_sge; i++) {
		w->sge[i] = sge_of(h, recv_tmpl[t].sge[i].r, recv_tmpl[t].sge[i].off,
				   recv_tmpl[t].sge[i].len);
		total += recv_tmpl[t].sge[i].len;
	}
	w->length = total;
	s->len[s->posted++] = total;
	atomic_store_explicit(&rq->prod, prod + 1, memory_order_release);
}

static void post_recv(struct harness *h, struct qpx *x)
{
	bool srq = on_srq(h, x);
	struct urnic_wq *rq = srq ? &h->srq.rq : &x->qp.rq;
	uint32_t prod = atomic_load_explicit(&rq->prod, memory_order_relaxed);
	uint32_t cons = atomic_load_explicit(&rq->cons, memory_order_acquire);
	unsigned t = h->recv_next++ % RECV_TMPLS;
	struct urnic_recv_wqe *w;
	uint32_t total = 0;

	if (h->mode == FUZZ_MODE_XRC) { /* R has no queue: ibv_post_srq_recv to a slot */
		xsrq_post(h, h->xpost_next++ % FUZZ_XSRQ_SLOTS);
		return;
	}
	if (prod - cons >= rq->max_wr || (srq ? h->srq_posted >= MAX_SRQ_IDS : !x->live))
		return;
	w = urnic_wq_slot(rq, prod);
	w->wr_id = srq ? h->srq_posted : x->recv_posted;
	w->num_sge = recv_tmpl[t].nsge;
	for (uint32_t i = 0; i < w->num_sge; i++) {
		w->sge[i] = sge_of(h, recv_tmpl[t].sge[i].r, recv_tmpl[t].sge[i].off,
				   recv_tmpl[t].sge[i].len);
		total += recv_tmpl[t].sge[i].len;
	}
	w->length = total;
	if (srq) {
		h->srq_len[h->srq_posted++] = total;
	} else {
		x->recv_len[x->recv_posted % RQ_DEPTH] = total;
		x->recv_addr[x->recv_posted % RQ_DEPTH] = w->sge[0].addr;
		x->recv_posted++;
	}
	atomic_store_explicit(&rq->prod, prod + 1, memory_order_release);
	if (!srq)
		urnic_engine_doorbell(&h->e, x->qp.qpn);
}

/* As src/verbs/post.c ibv_post_send: w's fields, the rest the harness's. */
static void post_wqe(struct harness *h, struct qpx *x, const struct urnic_send_wqe *tw)
{
	struct urnic_wq *sq = &x->qp.sq;
	uint32_t prod = atomic_load_explicit(&sq->prod, memory_order_relaxed);
	uint32_t cons = atomic_load_explicit(&sq->cons, memory_order_acquire);
	struct urnic_send_wqe *w;

	if (!x->live || prod - cons >= sq->max_wr || x->qp.type == URNIC_QPT_XRC_RECV)
		return; /* an XRC receive QP has no send queue (IBTA A14) */
	w = urnic_wq_slot(sq, prod);
	*w = *tw;
	w->wr_id = x->send_posted;
	w->status = URNIC_WC_SUCCESS;
	x->send_op[x->send_posted % SQ_DEPTH] = w->opcode;
	x->send_posted++;
	atomic_store_explicit(&sq->prod, prod + 1, memory_order_release);
	urnic_engine_doorbell(&h->e, x->qp.qpn);
}

/* Q's next planned WQE. */
static void post_send(struct harness *h)
{
	unsigned k = h->plan_next++ % h->plan_len;
	const struct fuzz_wqe_plan *pl = &h->plan[k];
	bool to_dst = pl->opcode == URNIC_WR_RDMA_READ ||
		      pl->opcode == URNIC_WR_ATOMIC_CMP_AND_SWP ||
		      pl->opcode == URNIC_WR_ATOMIC_FETCH_AND_ADD;
	struct urnic_send_wqe w;

	memset(&w, 0, sizeof(w));
	w.opcode = pl->opcode;
	w.flags = pl->flags;
	w.imm_be = 0x11223344;
	w.length = pl->length;
	w.remote_addr = 0x100000 + (uint64_t)k * 0x1000;
	w.rkey = 0x4321;
	w.compare_add = 7;
	w.swap = 9;
	memcpy(w.ud_dst.ip, peer_ip, 4);
	w.ud_dst.hop_limit = 64;
	w.ud_remote_qpn = PEER_QPN_Q;
	w.ud_remote_qkey = FUZZ_QKEY;
	if (pl->flags & URNIC_SEND_INLINE) {
		if (h->reg[FR_SRC].mr)
			memcpy(w.inline_data, h->reg[FR_SRC].mr->host, pl->length);
	} else if (pl->length) {
		w.num_sge = 1;
		w.sge[0] = to_dst ? sge_of(h, FR_DST, pl->dst_off, pl->length)
				  : sge_of(h, FR_SRC, 0, pl->length);
	}
	post_wqe(h, &h->q, &w);
}

/* What a new QP gets: R its receives (its own RQ only: the SRQ keeps its WQEs), Q its
 * planned work, and in UD receives too, for the datagrams of the groups it joins. */
static void qp_fill(struct harness *h, struct qpx *x)
{
	if ((x->is_r && h->mode != FUZZ_MODE_XRC) || h->mode == FUZZ_MODE_UD) {
		if (!on_srq(h, x) || h->srq_posted == 0)
			for (unsigned t = 0; t < RECV_TMPLS; t++)
				post_recv(h, x);
	}
	if (!x->is_r)
		for (unsigned k = 0; k < h->plan_len; k++)
			post_send(h);
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
	case URNIC_WR_BIND_MW:
		return URNIC_WC_BIND_MW;
	case URNIC_WR_LOCAL_INV:
		return URNIC_WC_LOCAL_INV;
	default:
		return URNIC_WC_SEND;
	}
}

/* The GRH area of a UD receive (ud.c build_grh, IPv4): 20 zero bytes, then an IPv4
 * header from the peer to us or to a group, with a valid checksum (rdma-core's
 * ibv_init_ah_from_wc tells IPv4 from IPv6 by it). A later datagram of the same batch
 * may have rewritten the area since, but only with another such header. The first SGE
 * of every receive template holds all 40 bytes, and it resolved: the address is ours. */
static void check_grh(const uint8_t *grh)
{
	static const uint8_t zero[20];
	const uint8_t *ip = grh + 20;
	uint32_t sum = 0;

	FUZZ_CHECK(memcmp(grh, zero, sizeof(zero)) == 0);
	FUZZ_CHECK(ip[0] == 0x45 && ip[9] == 17);
	FUZZ_CHECK(memcmp(ip + 12, peer_ip, 4) == 0);
	FUZZ_CHECK(memcmp(ip + 16, local_ip, 4) == 0 || memcmp(ip + 16, group_ip[0], 4) == 0 ||
		   memcmp(ip + 16, group_ip[1], 4) == 0);
	for (int i = 0; i < 20; i += 2)
		sum += urnic_get_be16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	FUZZ_CHECK(sum == 0xffff);
}

static void check_recv(struct harness *h, struct qpx *x, const struct urnic_cqe *c)
{
	uint64_t addr = 0;
	uint32_t len;

	FUZZ_CHECK(c->opcode == URNIC_WC_RECV || c->opcode == URNIC_WC_RECV_RDMA_WITH_IMM);
	if (h->mode == FUZZ_MODE_SRQ) {
		/* Each SRQ WQE once, on one QP, in the order this QP took them. */
		FUZZ_CHECK(c->wr_id < h->srq_posted && c->wr_id >= x->srq_next);
		FUZZ_CHECK(!h->srq_done[c->wr_id]);
		h->srq_done[c->wr_id] = 1;
		x->srq_next = c->wr_id + 1;
		len = h->srq_len[c->wr_id];
	} else {
		FUZZ_CHECK(x->recv_done < x->recv_posted);
		FUZZ_CHECK(c->wr_id == x->recv_done);
		len = x->recv_len[x->recv_done % RQ_DEPTH];
		addr = x->recv_addr[x->recv_done % RQ_DEPTH];
	}
	x->recv_ok += c->status == URNIC_WC_SUCCESS;
	x->recv_done++;
	if (c->status != URNIC_WC_SUCCESS)
		return;
	if (c->opcode == URNIC_WC_RECV)
		FUZZ_CHECK(c->byte_len <= len);
	if (h->mode == FUZZ_MODE_UD) {
		/* IBTA 11.4.2.1: the GRH area comes first, and the completion says so. */
		FUZZ_CHECK(c->opcode == URNIC_WC_RECV);
		FUZZ_CHECK((c->wc_flags & URNIC_WC_WITH_GRH) && c->byte_len >= FUZZ_GRH_BYTES);
		check_grh((const uint8_t *)(uintptr_t)addr);
	}
}

static void check_xsrq(struct harness *h, unsigned k);
static void check_tm(struct harness *h);

static void check_cqs(struct harness *h, struct qpx *x)
{
	struct urnic_cqe c[32];
	int n;

	if (!x->live)
		return;
	if (x->is_r && h->mode == FUZZ_MODE_XRC)
		for (unsigned k = 0; k < FUZZ_XSRQ_SLOTS; k++)
			check_xsrq(h, k);
	if (x->is_r && h->mode == FUZZ_MODE_TM)
		check_tm(h);
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
			check_recv(h, x, &c[i]);
		}
	}
}

/* An XRC SRQ's CQ: receives of R only, each once, in the order R took them; the SRQ of
 * another domain is never reached (IBTA A14: a request reaches the SRQs of the receive
 * QP's domain only). */
static void check_xsrq(struct harness *h, unsigned k)
{
	struct xsrq *s = &h->xs[k];
	struct urnic_cqe c[32];
	int n;

	if (!s->srq)
		return;
	if (k == FUZZ_XSRQ_FOREIGN)
		FUZZ_CHECK(atomic_load(&s->srq->rq.cons) == 0);
	while ((n = urnic_cq_poll(s->cq, c, 32)) > 0) {
		for (int i = 0; i < n; i++) {
			FUZZ_CHECK(k != FUZZ_XSRQ_FOREIGN);
			FUZZ_CHECK(c[i].status <= URNIC_WC_GENERAL_ERR);
			FUZZ_CHECK(h->r.live && c[i].qp_num == h->r.qp.qpn);
			FUZZ_CHECK(c[i].opcode == URNIC_WC_RECV ||
				   c[i].opcode == URNIC_WC_RECV_RDMA_WITH_IMM);
			FUZZ_CHECK(c[i].wr_id < s->posted && c[i].wr_id >= s->next);
			s->next = c[i].wr_id + 1;
			if (c[i].status == URNIC_WC_SUCCESS && c[i].opcode == URNIC_WC_RECV)
				FUZZ_CHECK(c[i].byte_len <= s->len[c[i].wr_id]);
		}
	}
}

/* A completion of a tagged buffer: only while the application has it posted (added, not
 * removed, not completed), its matched message no longer than the buffer. */
static void tm_tag_done(struct harness *h, const struct urnic_cqe *c)
{
	bool ok = c->status == URNIC_WC_SUCCESS;
	struct tag_slot *t = NULL;

	for (unsigned k = 0; k < FUZZ_TM_SLOTS; k++)
		if (h->tag[k].state != TS_FREE && h->tag[k].wr_id == c->wr_id)
			t = &h->tag[k];
	FUZZ_CHECK(t != NULL);
	FUZZ_CHECK(c->opcode == URNIC_WC_TM_RECV);
	if (ok && (c->wc_flags & URNIC_WC_TM_MATCH) && !(c->wc_flags & URNIC_WC_TM_DATA_VALID)) {
		FUZZ_CHECK(t->state == TS_POSTED); /* a rendezvous matched: its READ follows */
		t->state = TS_RNDV;
		return;
	}
	if (ok && (c->wc_flags & URNIC_WC_TM_MATCH))
		FUZZ_CHECK(t->state == TS_POSTED); /* an eager message, whole */
	else if (ok)
		FUZZ_CHECK(t->state == TS_RNDV && (c->wc_flags & URNIC_WC_TM_DATA_VALID));
	if (ok)
		FUZZ_CHECK(c->byte_len <= t->len);
	t->state = TS_FREE;
}

/* The tag-matching SRQ's CQ: R's receives (plain WQEs in order, tagged buffers), the
 * list operations' completions. */
static void check_tm(struct harness *h)
{
	struct urnic_cqe c[32];
	int n;

	while ((n = urnic_cq_poll(&h->tmcq, c, 32)) > 0) {
		for (int i = 0; i < n; i++) {
			const struct urnic_cqe *e = &c[i];

			FUZZ_CHECK(e->status <= URNIC_WC_TM_RNDV_INCOMPLETE);
			if (e->opcode == URNIC_WC_TM_ADD || e->opcode == URNIC_WC_TM_DEL ||
			    e->opcode == URNIC_WC_TM_SYNC) {
				FUZZ_CHECK(e->wr_id & TM_OP_ID);
				continue;
			}
			FUZZ_CHECK(e->opcode == URNIC_WC_RECV ||
				   e->opcode == URNIC_WC_RECV_RDMA_WITH_IMM ||
				   e->opcode == URNIC_WC_TM_RECV ||
				   e->opcode == URNIC_WC_TM_NO_TAG);
			if (e->wr_id & TM_TAG_ID) {
				tm_tag_done(h, e);
				continue;
			}
			/* A plain WQE: once, in the order R took them; an unexpected message
			 * whole, TMH included. */
			FUZZ_CHECK(!(e->wc_flags & URNIC_WC_TM_MATCH));
			FUZZ_CHECK(e->wr_id < h->srq_posted && e->wr_id >= h->r.srq_next);
			FUZZ_CHECK(!h->srq_done[e->wr_id]);
			h->srq_done[e->wr_id] = 1;
			h->r.srq_next = e->wr_id + 1;
			if (e->status != URNIC_WC_SUCCESS)
				continue;
			if (e->opcode != URNIC_WC_RECV_RDMA_WITH_IMM)
				FUZZ_CHECK(e->byte_len <= h->srq_len[e->wr_id]);
			h->tm_unexp_seen += e->opcode == URNIC_WC_TM_RECV;
		}
	}
}

static void check_qp(const struct qpx *x)
{
	const struct urnic_qp *qp = &x->qp;
	uint32_t prod = atomic_load(&qp->sq.prod), replying = 0;

	if (!x->live)
		return;
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
	check_cqs(h, &h->r);
	check_cqs(h, &h->q);
	check_qp(&h->r);
	check_qp(&h->q);
	check_table(h);
	check_memory(h);
	FUZZ_CHECK(h->e.tx.n == 0);
	if (h->mode == FUZZ_MODE_SRQ || h->mode == FUZZ_MODE_TM)
		FUZZ_CHECK(urnic_srq_count(&h->srq) <= h->srq.rq.depth);
	if (h->mode == FUZZ_MODE_XRC)
		for (unsigned k = 0; k < FUZZ_XSRQ_SLOTS; k++)
			check_xsrq(h, k);
	if (h->mode == FUZZ_MODE_TM)
		check_tm(h);
}

/* One pass of src/dev/device.c: urnic_engine_pass, then the flush. Returns the next
 * timer deadline. */
static uint64_t pass(struct harness *h)
{
	uint64_t next;

	urnic_engine_pass(&h->e, h->now_ns, &next);
	if (h->e.tx.n)
		flush_cb(&h->e);
	check_all(h);
	grants_update(h, false);
	return next;
}

/* ---- regions and windows ---- */

static void region_new(struct harness *h, enum fuzz_region r)
{
	struct region *g = &h->reg[r];
	uint8_t *body = buf_body(h, g->buf);

	/* As src/verbs/memory.c: the iova is the process address. */
	FUZZ_CHECK(urnic_mr_register(&h->e.mrs, &h->pd, body, (uint64_t)(uintptr_t)body,
				     REGION_BYTES, region_access[r],
				     (uint16_t)urnic_engine_random(&h->e), &g->mr) == 0);
	g->key = g->mr->key;
	g->iova = g->mr->iova;
}

/* ibv_dereg_mr: refused while windows are bound to the region (rxe_dereg_mr). */
static void region_dereg(struct harness *h, enum fuzz_region r)
{
	struct region *g = &h->reg[r];
	uint32_t nwindows;
	int ret;

	if (!g->mr)
		return;
	nwindows = g->mr->nwindows;
	ret = urnic_mr_deregister(&h->e.mrs, g->mr);
	FUZZ_CHECK(ret == (nwindows ? -EBUSY : 0));
	if (ret == 0)
		g->mr = NULL;
}

/* ibv_rereg_mr, with what libibverbs and the verbs layer refuse first left out. */
static void region_rereg(struct harness *h, enum fuzz_region r, uint32_t what, uint32_t access)
{
	struct region *g = &h->reg[r];
	unsigned nbuf = g->buf < FR_COUNT ? g->buf + FR_COUNT : g->buf - FR_COUNT;
	struct urnic_pd *pd;
	uint8_t *host;
	uint32_t nwindows;
	int ret;

	what &= URNIC_MR_REREG_TRANSLATION | URNIC_MR_REREG_PD | URNIC_MR_REREG_ACCESS;
	access &= URNIC_ACCESS_LOCAL_WRITE | URNIC_ACCESS_REMOTE_WRITE | URNIC_ACCESS_REMOTE_READ |
		  URNIC_ACCESS_REMOTE_ATOMIC | URNIC_ACCESS_MW_BIND;
	if (!g->mr || !what ||
	    ((what & URNIC_MR_REREG_ACCESS) &&
	     (access & (URNIC_ACCESS_REMOTE_WRITE | URNIC_ACCESS_REMOTE_ATOMIC)) &&
	     !(access & URNIC_ACCESS_LOCAL_WRITE)))
		return; /* verbs: EINVAL, nothing reaches the table */
	host = (what & URNIC_MR_REREG_TRANSLATION) ? buf_body(h, nbuf) : NULL;
	pd = g->mr->pd == &h->pd ? &h->pd2 : &h->pd;
	nwindows = g->mr->nwindows;
	ret = urnic_mr_reregister(g->mr, what, pd, host, REGION_BYTES, access);
	FUZZ_CHECK(ret == (nwindows ? -EBUSY : 0));
	if (ret == 0 && (what & URNIC_MR_REREG_TRANSLATION)) {
		g->buf = nbuf;
		g->iova = g->mr->iova;
		FUZZ_CHECK(g->mr->host == host);
	}
}

/* The R_Key of a window's next binding: its consumer key plus one (verbs/memory.c). */
static uint32_t next_rkey(uint32_t rkey)
{
	return (rkey & 0xffffff00u) | ((rkey + 1) & 0xffu);
}

static void window_bind(struct harness *h, struct qpx *x, const uint8_t *a)
{
	struct mw_slot *s = &h->mw[a[0] % FUZZ_MW_SLOTS];
	enum fuzz_region r = (enum fuzz_region)(a[1] % FR_COUNT);
	uint32_t off = urnic_get_be16(a + 2), len = urnic_get_be16(a + 4);
	uint32_t access = a[6] & (URNIC_ACCESS_REMOTE_WRITE | URNIC_ACCESS_REMOTE_READ |
				  URNIC_ACCESS_REMOTE_ATOMIC | URNIC_ACCESS_ZERO_BASED);
	struct urnic_send_wqe w;

	if (!s->mw || !x->live)
		return;
	/* ibv_bind_mw(3) refuses a zero-based type 1 window before posting anything. */
	if (s->mw->kind == URNIC_KEY_MW1 && (access & URNIC_ACCESS_ZERO_BASED))
		return;
	memset(&w, 0, sizeof(w));
	w.opcode = URNIC_WR_BIND_MW;
	w.mw_rkey = s->key;
	w.rkey = next_rkey(s->key);
	if (len) {
		w.mr_lkey = h->reg[r].key;
		w.remote_addr = h->reg[r].iova + off;
		w.remote_len = len;
	}
	w.mw_access = access;
	s->key = w.rkey; /* the application's view, as ibv_bind_mw leaves it */
	s->region = r;
	post_wqe(h, x, &w);
}

static void window_invalidate(struct harness *h, struct qpx *x, const uint8_t *a)
{
	struct urnic_send_wqe w;

	memset(&w, 0, sizeof(w));
	w.opcode = URNIC_WR_LOCAL_INV;
	w.rkey = h->mw[a[0] % FUZZ_MW_SLOTS].key;
	post_wqe(h, x, &w);
}

/* ---- QP life ---- */

/* ibv_destroy_qp: refused while attached to a group; its work is gone without
 * completions, what its CQs already hold is checked first. */
static void qp_destroy(struct harness *h, struct qpx *x)
{
	if (!x->live)
		return;
	for (int g = 0; g < FUZZ_MCAST_GROUPS; g++)
		if (x->attached[g])
			return;
	check_cqs(h, x);
	urnic_engine_qp_remove(&h->e, &x->qp, h->now_ns);
	if (h->e.tx.n)
		flush_cb(&h->e);
	check_cqs(h, x);
	urnic_wq_fini(&x->qp.sq);
	urnic_wq_fini(&x->qp.rq);
	urnic_cq_fini(&x->scq);
	urnic_cq_fini(&x->rcq);
	x->live = false;
}

/* A destroyed QP made again, after `churn` other QPs came and went (a busy device's
 * QPNs move on; harness.h, FUZZ_QPN_PERIOD). */
static void qp_create(struct harness *h, struct qpx *x, unsigned churn)
{
	if (x->live)
		return;
	for (unsigned i = 0; i < churn; i++) {
		struct urnic_qp tmp;

		memset(&tmp, 0, sizeof(tmp));
		tmp.type = URNIC_QPT_RC;
		tmp.state = URNIC_QPS_RESET;
		FUZZ_CHECK(urnic_engine_qp_add(&h->e, &tmp) == 0);
		urnic_engine_qp_remove(&h->e, &tmp, h->now_ns);
	}
	qp_new(h, x);
	qp_fill(h, x);
}

/* ---- XRC SRQs and tags ---- */

/* ibv_create_srq_ex(IBV_SRQT_XRC): slot 1 with the other PD, FUZZ_XSRQ_FOREIGN in
 * another domain; its receives posted. */
static void xsrq_create(struct harness *h, unsigned k)
{
	struct xsrq *s = &h->xs[k];

	if (s->srq)
		return;
	s->srq = xcalloc(1, sizeof(*s->srq));
	s->cq = xcalloc(1, sizeof(*s->cq));
	FUZZ_CHECK(urnic_srq_init(s->srq, FUZZ_SRQ_DEPTH, URNIC_MAX_SGE) == 0);
	FUZZ_CHECK(urnic_cq_init(s->cq, CQ_DEPTH) == 0);
	s->srq->pd = k == 1 ? &h->pd2 : &h->pd;
	s->srq->xrcd = k == FUZZ_XSRQ_FOREIGN ? &h->xrcd_other : &h->xrcd;
	s->srq->cq = s->cq;
	FUZZ_CHECK(urnic_engine_srq_add(&h->e, s->srq) == 0);
	s->srqn = s->srq->srqn;
	s->posted = s->next = 0;
	for (unsigned t = 0; t < RECV_TMPLS; t++)
		xsrq_post(h, k);
}

/* ibv_destroy_srq, then ibv_destroy_cq of its CQ: what it holds is checked first. */
static void xsrq_destroy(struct harness *h, unsigned k)
{
	struct xsrq *s = &h->xs[k];

	if (!s->srq)
		return;
	check_xsrq(h, k);
	urnic_engine_srq_remove(&h->e, s->srq);
	check_xsrq(h, k);
	urnic_srq_fini(s->srq);
	urnic_cq_fini(s->cq);
	free(s->srq);
	free(s->cq);
	s->srq = NULL;
	s->cq = NULL;
}

/* ibv_post_srq_ops: 0, or -ENOMEM (its CQ full: nothing changed). */
static int tm_op(struct harness *h, struct urnic_tm_op *op)
{
	int ret;

	op->wr_id = TM_OP_ID | ++h->tm_seq;
	op->flags |= URNIC_TM_OP_SIGNALED;
	ret = urnic_engine_tm_op(&h->e, &h->srq, op);
	FUZZ_CHECK(ret == 0 || ret == -ENOMEM);
	return ret;
}

/* IBV_WR_TAG_ADD of slot a[0]'s buffer in FR_WIN, tag a[1], a[2] bit 0: any tag. */
static void tm_add(struct harness *h, const uint8_t *a)
{
	struct tag_slot *t = &h->tag[a[0] % FUZZ_TM_SLOTS];
	uint32_t off = FUZZ_TM_BUF_OFF + (uint32_t)(t - h->tag) * FUZZ_TM_BUF_MAX;
	uint32_t len = 64u << (a[3] % 5);
	struct urnic_tm_op op;

	if (t->state != TS_FREE || h->tml.posted == h->tml.max_tags)
		return; /* the application's buffer is still posted; or ENOMEM */
	memset(&op, 0, sizeof(op));
	op.opcode = URNIC_TM_OP_ADD;
	op.tag = a[1];
	op.mask = a[2] & 1 ? 0 : ~0ull;
	op.wqe.wr_id = TM_TAG_ID | ++h->tm_seq;
	op.wqe.num_sge = 1;
	op.wqe.sge[0] = sge_of(h, FR_WIN, off, len);
	op.wqe.length = len;
	if (tm_op(h, &op))
		return;
	t->state = TS_POSTED;
	t->handle = op.handle;
	t->wr_id = op.wqe.wr_id;
	t->len = len;
}

/* IBV_WR_TAG_DEL: the buffer is the application's again if the tag was still posted;
 * one a message took stays the message's (ibv_post_srq_ops(3): IBV_WC_TM_ERR). */
static void tm_del(struct harness *h, const uint8_t *a)
{
	struct tag_slot *t = &h->tag[a[0] % FUZZ_TM_SLOTS];
	struct urnic_tm_op op;
	bool was_posted;

	if (t->state == TS_FREE)
		return;
	was_posted = h->tml.tags[t->handle].state == URNIC_TM_TAG_POSTED &&
		     h->tml.tags[t->handle].wqe.wr_id == t->wr_id;
	memset(&op, 0, sizeof(op));
	op.opcode = URNIC_TM_OP_DEL;
	op.handle = t->handle;
	if (tm_op(h, &op))
		return;
	if (was_posted) {
		FUZZ_CHECK(h->tml.tags[t->handle].state == URNIC_TM_TAG_FREE);
		t->state = TS_FREE;
	}
}

static void tm_sync(struct harness *h)
{
	struct urnic_tm_op op;

	memset(&op, 0, sizeof(op));
	op.opcode = URNIC_TM_OP_SYNC;
	op.flags = URNIC_TM_OP_SYNC_CNT;
	op.unexpected_cnt = h->tm_unexp_seen;
	(void)tm_op(h, &op);
}

static void mcast(struct harness *h, struct qpx *x, unsigned g, bool attach)
{
	bool changed;
	int ret;

	/* ibv_attach_mcast: EINVAL for a QP that is not UD, nothing reaches the engine. */
	if (!x->live || x->qp.type != URNIC_QPT_UD)
		return;
	if (attach) {
		ret = urnic_mcast_attach(&h->e.mcast, false, group_ip[g], x->qp.qpn, &changed);
		FUZZ_CHECK(ret == (x->attached[g] ? 0 : 1));
		x->attached[g] = true;
	} else {
		ret = urnic_mcast_detach(&h->e.mcast, false, group_ip[g], x->qp.qpn, &changed);
		FUZZ_CHECK(ret == (x->attached[g] ? 0 : -EINVAL));
		x->attached[g] = false;
	}
}

static void act(struct harness *h, struct qpx *x, const uint8_t *p, size_t len)
{
	uint8_t a[8] = { 0 };
	enum fuzz_action what;
	struct mw_slot *s;

	memcpy(a, p, len < sizeof(a) ? len : sizeof(a));
	what = (enum fuzz_action)(a[0] % FA_COUNT);
	/* What the engine built before the action leaves first, and memory is checked
	 * against the grants as they were. */
	if (h->e.tx.n)
		flush_cb(&h->e);
	check_memory(h);
	s = &h->mw[a[1] % FUZZ_MW_SLOTS];
	switch (what) {
	case FA_DEREG:
		region_dereg(h, (enum fuzz_region)(a[1] % FR_COUNT));
		break;
	case FA_REG:
		if (!h->reg[a[1] % FR_COUNT].mr)
			region_new(h, (enum fuzz_region)(a[1] % FR_COUNT));
		break;
	case FA_REREG:
		region_rereg(h, (enum fuzz_region)(a[1] % FR_COUNT), a[2], a[3]);
		break;
	case FA_MW_ALLOC:
		if (!s->mw) {
			FUZZ_CHECK(urnic_mw_alloc(&h->e.mrs, &h->pd,
						  a[2] & 1 ? URNIC_KEY_MW2 : URNIC_KEY_MW1,
						  (uint16_t)urnic_engine_random(&h->e),
						  &s->mw) == 0);
			s->key = s->mw->key;
		}
		break;
	case FA_MW_DEALLOC:
		if (s->mw)
			urnic_mw_dealloc(&h->e.mrs, s->mw);
		s->mw = NULL;
		break;
	case FA_BIND:
		window_bind(h, x, a + 1);
		break;
	case FA_INVALIDATE:
		window_invalidate(h, x, a + 1);
		break;
	case FA_MODIFY_ERR:
		if (x->live) {
			struct urnic_qp_attr attr = x->qp.attr;

			(void)modify(h, x, &attr, URNIC_QPS_ERR, URNIC_QP_STATE);
		}
		break;
	case FA_DESTROY:
		qp_destroy(h, x);
		break;
	case FA_CREATE:
		qp_create(h, x, a[1]);
		break;
	case FA_MCAST_ATTACH:
	case FA_MCAST_DETACH:
		mcast(h, x, a[1] % FUZZ_MCAST_GROUPS, what == FA_MCAST_ATTACH);
		break;
	case FA_SRQ_ARM:
		if (h->mode == FUZZ_MODE_SRQ) {
			h->srq.limit = a[1] % (FUZZ_SRQ_DEPTH + 1);
			h->srq_armed = h->srq.limit;
		}
		break;
	case FA_XSRQ_CREATE:
	case FA_XSRQ_DESTROY:
	case FA_XSRQ_POST:
		if (h->mode != FUZZ_MODE_XRC)
			break;
		if (what == FA_XSRQ_CREATE)
			xsrq_create(h, a[1] % FUZZ_XSRQ_SLOTS);
		else if (what == FA_XSRQ_DESTROY)
			xsrq_destroy(h, a[1] % FUZZ_XSRQ_SLOTS);
		else
			xsrq_post(h, a[1] % FUZZ_XSRQ_SLOTS);
		break;
	case FA_TM_ADD:
	case FA_TM_DEL:
	case FA_TM_SYNC:
		if (h->mode != FUZZ_MODE_TM)
			break;
		check_tm(h); /* the application has seen what the tags did */
		if (what == FA_TM_ADD)
			tm_add(h, a + 1);
		else if (what == FA_TM_DEL)
			tm_del(h, a + 1);
		else
			tm_sync(h);
		break;
	case FA_COUNT:
		break;
	}
	check_all(h);
	grants_update(h, true);
}

/* ---- setup ---- */

static struct harness *harness_new(enum fuzz_mode mode, enum fuzz_role role)
{
	struct harness *h = xcalloc(1, sizeof(*h));

	tmpl_once();
	h->mode = mode;
	h->role = role;
	h->plan = fuzz_plan_of(mode, &h->plan_len);
	FUZZ_CHECK(urnic_engine_init(&h->e, false, local_ip, flush_cb, h, 0x5eed) == 0);
	h->e.cfg.skip_icrc_check = true; /* the fuzz build bypasses the ICRC, as lwIP's switch */
	h->now_ns = 1000000000ull;
	h->e.cfg.audit_idle = true; /* a QP left out of the active set aborts the run */
	/* DCQCN on (roce/cc.c): packets from the peer may arrive marked CE (below), CNPs
	 * from it cut the QPs' rates and pace them. */
	h->e.cfg.dcqcn = true;
	urnic_dcqcn_defaults(&h->e.cfg.dcqcn_params, 100000000000ull);
	h->e.hooks.srq_limit = srq_limit_cb;
	h->e.hooks.qp_last_wqe = last_wqe_cb;
	h->pd.handle = 1;
	h->pd2.handle = 2;
	for (int r = 0; r < FR_COUNT; r++) {
		h->reg[r].buf = (unsigned)r;
		region_new(h, (enum fuzz_region)r);
	}
	urnic_mr_deregister(&h->e.mrs, h->reg[FR_DEAD].mr); /* its key stays in the table, stale */
	h->reg[FR_DEAD].mr = NULL;
	for (int k = 0; k < FUZZ_MW_SLOTS; k++)
		h->mw[k].region = FR_WIN;
	if (mode == FUZZ_MODE_SRQ || mode == FUZZ_MODE_TM) {
		FUZZ_CHECK(urnic_srq_init(&h->srq, FUZZ_SRQ_DEPTH, URNIC_MAX_SGE) == 0);
		h->srq.pd = &h->pd;
	}
	if (mode == FUZZ_MODE_TM) {
		/* ibv_create_srq_ex(IBV_SRQT_TM): its tag list, its CQ for everything. */
		FUZZ_CHECK(urnic_tm_list_init(&h->tml, TM_MAX_TAGS, URNIC_TM_MAX_OPS) == 0);
		FUZZ_CHECK(urnic_cq_init(&h->tmcq, CQ_DEPTH) == 0);
		h->srq.tm = &h->tml;
		h->srq.cq = &h->tmcq;
	}
	if (mode == FUZZ_MODE_XRC)
		for (unsigned k = 0; k < FUZZ_XSRQ_SLOTS; k++)
			xsrq_create(h, k);

	h->r.is_r = true;
	qp_new(h, &h->r);
	qp_new(h, &h->q);
	qp_fill(h, &h->r);
	qp_fill(h, &h->q);
	sig_take(h, &h->sig);
	if (first_runs[mode].ready) {
		for (unsigned b = 0; b < NBUFS; b++) {
			h->buf[b].nruns = first_runs[mode].nruns[b];
			memcpy(h->buf[b].runs, first_runs[mode].runs[b], sizeof(h->buf[b].runs));
		}
	} else {
		regrant(h);
		for (unsigned b = 0; b < NBUFS; b++) {
			first_runs[mode].nruns[b] = h->buf[b].nruns;
			memcpy(first_runs[mode].runs[b], h->buf[b].runs, sizeof(h->buf[b].runs));
		}
		first_runs[mode].ready = true;
	}
	(void)pass(h); /* Q sends its requests: its completer now waits for answers */
	return h;
}

/* URNIC_FUZZ_TRACE=1: what an input did (to check that seeds reach what they aim at). */
static void trace(const struct harness *h)
{
	fprintf(stderr,
		"fuzz: R %s%s, receives %llu ok/%llu done/%llu posted; Q %s%s, sends %llu ok/"
		"%llu done/%llu posted; R sends %llu ok/%llu done; srq events %u;",
		urnic_qp_state_name(h->r.qp.state), h->r.live ? "" : " (destroyed)",
		(unsigned long long)h->r.recv_ok, (unsigned long long)h->r.recv_done,
		(unsigned long long)h->r.recv_posted, urnic_qp_state_name(h->q.qp.state),
		h->q.live ? "" : " (destroyed)", (unsigned long long)h->q.send_ok,
		(unsigned long long)h->q.send_done, (unsigned long long)h->q.send_posted,
		(unsigned long long)h->r.send_ok, (unsigned long long)h->r.send_done,
		h->srq_events);
	for (int i = 0; i < URNIC_CTR_COUNT; i++)
		if (h->e.stats.counters[i])
			fprintf(stderr, " %s=%llu", urnic_counter_names[i],
				(unsigned long long)h->e.stats.counters[i]);
	fprintf(stderr, "\n");
}

static void harness_free(struct harness *h)
{
	if (getenv("URNIC_FUZZ_TRACE"))
		trace(h);
	/* The last deadline pass left nothing batched; destroy as src/verbs does: groups,
	 * QPs, windows, regions. */
	for (int g = 0; g < FUZZ_MCAST_GROUPS; g++) {
		mcast(h, &h->r, (unsigned)g, false);
		mcast(h, &h->q, (unsigned)g, false);
	}
	qp_destroy(h, &h->r);
	qp_destroy(h, &h->q);
	for (int k = 0; k < FUZZ_MW_SLOTS; k++)
		if (h->mw[k].mw)
			urnic_mw_dealloc(&h->e.mrs, h->mw[k].mw);
	for (int r = 0; r < FR_COUNT; r++)
		if (h->reg[r].mr)
			FUZZ_CHECK(urnic_mr_deregister(&h->e.mrs, h->reg[r].mr) == 0);
	FUZZ_CHECK(h->e.mrs.nlive == 0);
	for (unsigned k = 0; k < FUZZ_XSRQ_SLOTS; k++)
		xsrq_destroy(h, k);
	if (h->mode == FUZZ_MODE_TM) {
		check_tm(h);
		urnic_tm_list_fini(&h->tml);
		urnic_cq_fini(&h->tmcq);
	}
	if (h->mode == FUZZ_MODE_SRQ || h->mode == FUZZ_MODE_TM)
		urnic_srq_fini(&h->srq);
	for (unsigned b = 0; b < NBUFS; b++) {
		free(h->buf[b].mem);
		free(h->buf[b].ref);
	}
	urnic_engine_fini(&h->e);
	free(h);
}

/* ---- one record ---- */

/* Maps an R_Key selector (harness.h) to its key; *va, when given, from an offset. */
static void map_key(const struct harness *h, uint32_t *key, uint64_t *va)
{
	const struct region *g;

	if (*key < FR_COUNT) {
		g = &h->reg[*key];
		*key = g->key;
	} else if (*key < FR_COUNT + FUZZ_MW_SLOTS) {
		const struct mw_slot *s = &h->mw[*key - FR_COUNT];

		g = &h->reg[s->region];
		*key = s->key;
	} else {
		return;
	}
	if (va)
		*va += g->iova;
}

/* A datagram from src to dst, as the UDP transport hands it to the engine: TTL 64
 * (Linux's default), IPv4 ID hint 0, TOS 0 unless the BTH's FECN bit is set, which
 * stands for a CE mark on the way (harness.h). */
static void rx(struct harness *h, const uint8_t *src, const uint8_t *dst, const uint8_t *buf,
	       size_t len)
{
	struct urnic_rx_meta m = {
		.sport = PEER_SPORT,
		.tos = len > 4 && (buf[4] & 0x80) ? URNIC_ECN_CE : 0, /* BTH byte 4 bit 7: FECN */
		.ttl = URNIC_DEFAULT_TTL,
		.now_ns = h->now_ns,
	};

	memcpy(m.src_ip, src, 4);
	memcpy(m.dst_ip, dst, 4);
	urnic_roce_rx(&h->e, &m, buf, len);
}

/* Points the packet at the chosen QP, rebases its PSN and maps selectors. Returns the
 * address it is sent to: a multicast group's for DestQP 0xFFFFFF. */
static const uint8_t *rewrite(struct harness *h, uint8_t *buf, size_t len, uint8_t ctl)
{
	unsigned sel = ctl & FUZZ_CTL_QP_MASK;
	struct qpx *x = (h->role == FUZZ_RESPONDER) == (sel != FUZZ_CTL_QP_OTHER) ? &h->r : &h->q;
	struct urnic_pkt p;
	uint32_t flags;
	ssize_t n;

	n = urnic_pkt_decode(&p, buf, len);
	if (n < 0)
		return local_ip; /* the engine drops it as it is */
	flags = urnic_opcode_info(p.bth.opcode)->flags;
	if (sel != FUZZ_CTL_QP_RAW) {
		p.bth.dqpn = x->qp.qpn;
		if (!(ctl & FUZZ_CTL_PSN_RAW))
			p.bth.psn = urnic_psn_add(p.bth.psn, (flags & URNIC_OPF_REQ)
								     ? x->qp.attr.rq_psn
								     : x->qp.attr.sq_psn);
	}
	if (flags & URNIC_OPF_RETH)
		map_key(h, &p.reth.rkey, &p.reth.va);
	if (flags & URNIC_OPF_ATMETH)
		map_key(h, &p.atmeth.rkey, &p.atmeth.va);
	if (flags & URNIC_OPF_IETH)
		map_key(h, &p.ieth_rkey, NULL);
	if ((flags & URNIC_OPF_XRCETH) && p.xrc_srqn < FUZZ_XSRQ_SLOTS)
		p.xrc_srqn = h->xs[p.xrc_srqn].srqn;
	if (h->mode == FUZZ_MODE_TM && x == &h->r && (flags & URNIC_OPF_SEND) &&
	    (flags & URNIC_OPF_FIRST) && p.payload_bytes >= URNIC_TMH_BYTES + URNIC_RVH_BYTES &&
	    urnic_tmh_get(p.payload).op == URNIC_TMH_RNDV)
		h->rvh[h->nrvh++ % RVH_SEEN] = urnic_rvh_get(p.payload + URNIC_TMH_BYTES);
	if ((flags & URNIC_OPF_DETH) && p.deth.qkey == 0)
		p.deth.qkey = x->qp.attr.qkey;
	FUZZ_CHECK(urnic_pkt_encode_hdr(&p, buf, (size_t)n) == n);
	return p.bth.dqpn == URNIC_MCAST_QPN ? group_ip[p.bth.psn & 1] : local_ip;
}

int fuzz_one(const uint8_t *data, size_t size, enum fuzz_mode mode, enum fuzz_role role)
{
	struct harness *h = harness_new(mode, role);
	size_t off = 0;
	uint64_t next;

	for (unsigned rec = 0; rec < FUZZ_MAX_RECORDS && size - off >= FUZZ_REC_HDR; rec++) {
		uint8_t ctl = data[off];
		size_t len = urnic_get_be16(data + off + 1);
		const uint8_t *dst;
		uint8_t *buf;

		off += FUZZ_REC_HDR;
		if (len > size - off)
			len = size - off;
		if (ctl & FUZZ_CTL_POST) {
			if (mode != FUZZ_MODE_RC || role == FUZZ_RESPONDER)
				post_recv(h, &h->r);
			if (mode == FUZZ_MODE_UC || mode == FUZZ_MODE_UD || role == FUZZ_COMPLETER)
				post_send(h);
		}
		h->now_ns += fuzz_clock_step_ns[(ctl >> FUZZ_CTL_CLOCK_SHIFT) & 7];
		if ((ctl & FUZZ_CTL_QP_MASK) == FUZZ_CTL_ACTION) {
			bool other = ctl & FUZZ_CTL_ACT_OTHER;

			act(h, (role == FUZZ_RESPONDER) != other ? &h->r : &h->q, data + off, len);
			off += len;
		} else {
			/* A heap copy of exactly len bytes: ASan sees any read past the
			 * datagram. */
			buf = malloc(len ? len : 1);
			FUZZ_CHECK(buf != NULL);
			memcpy(buf, data + off, len);
			off += len;
			dst = rewrite(h, buf, len, ctl);
			rx(h, peer_ip, dst, buf, len);
			free(buf);
		}
		if (!(ctl & FUZZ_CTL_NO_PASS))
			(void)pass(h);
	}
	/* Let the timers run out: retransmissions, RNR waits, retry exhaustion. */
	next = pass(h);
	for (int k = 0; k < END_PASSES && next; k++) {
		if (next > h->now_ns)
			h->now_ns = next;
		next = pass(h);
	}
	harness_free(h);
	return 0;
}

int fuzz_rc_one(const uint8_t *data, size_t size, enum fuzz_role role)
{
	return fuzz_one(data, size, FUZZ_MODE_RC, role);
}
