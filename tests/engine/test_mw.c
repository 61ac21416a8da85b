/* SPDX-License-Identifier: MIT */
/*
 * test_mw.c - memory windows, local and remote invalidation (IBTA 10.6.7, 9.4.1.2).
 *
 *   host 0 (requester a) ---- RC ---- host 1 (responder b: the region, its windows)
 *
 * Host 1 registers a region that grants no remote right itself (MW_BIND and local
 * write only) and opens parts of it through windows. A window bound through b's QP
 * (BIND_MW work request, completion IBV_WC_BIND_MW) lets a WRITE, READ and atomics in
 * through its R_Key, inside its range and with its rights only; outside of them a
 * remote access NAK (IBV_WC_REM_ACCESS_ERR at a) and nothing touched. LOCAL_INV and a
 * SEND with Invalidate from a make the key worthless again; the receive completion says
 * IBV_WC_WITH_INV and names the key. Type 2 windows serve only the QP they were bound
 * through, type 1 windows every QP of the PD. Binds that break a rule complete with
 * IBV_WC_MW_BIND_ERR and put the QP in error, with each rule also checked at the table.
 */
#include <errno.h>
#include <string.h>

#include "fabric.h"
#include "mem/mw.h"

#define RLEN 16384
#define WOFF 4096 /* the window: rb[WOFF, WOFF + WLEN) */
#define WLEN 4096

struct env {
	struct fab_pair p;
	struct fab_buf la; /* host 0 */
	struct fab_buf rb; /* host 1: MW_BIND | LOCAL_WRITE, no remote right */
	uint8_t before[RLEN];
};

static void env_open(struct env *v, uint32_t rb_access, uint64_t seed)
{
	struct fab_conn c = fab_conn_default();

	fab_pair_open(&v->p, &c, seed);
	fab_buf_new(v->p.f, &v->la, 0, &v->p.pd[0], 65536, FAB_ALL_ACCESS);
	fab_fill(v->la.p, 65536, (uint32_t)seed);
	fab_buf_new(v->p.f, &v->rb, 1, &v->p.pd[1], RLEN, rb_access);
	fab_fill(v->rb.p, RLEN, (uint32_t)seed + 3);
	memcpy(v->before, v->rb.p, RLEN);
}

static void env_close(struct env *v)
{
	fab_buf_free(v->p.f, &v->rb);
	fab_buf_free(v->p.f, &v->la);
	fab_pair_close(&v->p);
}

static struct urnic_mr *mw_new(struct env *v, enum urnic_key_kind kind)
{
	struct urnic_mr *mw = NULL;

	CHECK_EQ(urnic_mw_alloc(&fab_engine(v->p.f, 1)->mrs, &v->p.pd[1], kind,
				(uint16_t)fab_random(v->p.f), &mw),
		 0);
	CHECK_EQ(mw->mw_state, URNIC_MW_FREE);
	return mw;
}

static void mw_free(struct env *v, struct urnic_mr *mw)
{
	urnic_mw_dealloc(&fab_engine(v->p.f, 1)->mrs, mw);
}

/* b binds mw to rb[off, off+len) with rights, new consumer key ckey; returns the
 * completion's status (the QP is left as the bind left it). */
static uint8_t bind_via(struct env *v, struct fab_qp *q, struct urnic_mr *mw, uint32_t mr_lkey,
			uint64_t off, uint64_t len, uint32_t rights, uint8_t ckey)
{
	struct urnic_cqe c;

	CHECK_EQ(fab_post_send(q, &(struct fab_send_wr){ .wr_id = 0xb1,
							 .opcode = URNIC_WR_BIND_MW,
							 .mw_rkey = mw->key,
							 .rkey = (mw->key & ~0xffu) | ckey,
							 .mr_lkey = mr_lkey,
							 .remote_addr = v->rb.mr->iova + off,
							 .remote_len = len,
							 .mw_access = rights }),
		 0);
	fab_wait_cqes(v->p.f, &q->scq, &c, 1);
	CHECK_EQ(c.wr_id, 0xb1);
	if (c.status == URNIC_WC_SUCCESS)
		CHECK_EQ(c.opcode, URNIC_WC_BIND_MW);
	return c.status;
}

static uint8_t bind(struct env *v, struct urnic_mr *mw, uint64_t off, uint64_t len, uint32_t rights,
		    uint8_t ckey)
{
	return bind_via(v, v->p.b, mw, v->rb.mr->key, off, len, rights, ckey);
}

/* a posts one RDMA op of len bytes at la[0] <-> raddr under rkey; returns its status. */
static uint8_t remote_op(struct env *v, struct fab_qp *q, uint32_t op, uint64_t raddr,
			 uint32_t rkey, uint32_t len)
{
	struct urnic_cqe c;

	CHECK_EQ(fab_post_send(q, &(struct fab_send_wr){ .wr_id = 0xa1,
							 .opcode = op,
							 .remote_addr = raddr,
							 .rkey = rkey,
							 .compare_add = 5,
							 .num_sge = 1,
							 .sge = { fab_sge(v->la.mr, 0, len) } }),
		 0);
	fab_wait_cqes(v->p.f, &q->scq, &c, 1);
	CHECK_EQ(c.wr_id, 0xa1);
	fabric_settle(v->p.f);
	return c.status;
}

static uint64_t win(const struct env *v, uint64_t off)
{
	return v->rb.mr->iova + off;
}

static void test_type2_window_serves_write_read_atomic(void)
{
	struct env v;
	struct urnic_mr *mw;
	uint64_t orig;

	env_open(&v, URNIC_ACCESS_MW_BIND | URNIC_ACCESS_LOCAL_WRITE, 1);
	mw = mw_new(&v, URNIC_KEY_MW2);
	CHECK_EQ(bind(&v, mw, WOFF, WLEN,
		      URNIC_ACCESS_REMOTE_WRITE | URNIC_ACCESS_REMOTE_READ |
			      URNIC_ACCESS_REMOTE_ATOMIC,
		      0x42),
		 URNIC_WC_SUCCESS);
	/* IBTA 10.6.7.3: the binder's consumer key is the low byte of the new R_Key. */
	CHECK_EQ(mw->key & 0xff, 0x42);
	CHECK_EQ(mw->mw_state, URNIC_MW_VALID);
	CHECK_EQ(v.rb.mr->nwindows, 1);

	/* The region's own key grants nothing remote. */
	CHECK_EQ(remote_op(&v, v.p.a, URNIC_WR_RDMA_WRITE, win(&v, WOFF), v.rb.mr->key, 64),
		 URNIC_WC_REM_ACCESS_ERR);
	CHECK(memcmp(v.rb.p, v.before, RLEN) == 0);
	mw_free(&v, mw);
	env_close(&v);

	env_open(&v, URNIC_ACCESS_MW_BIND | URNIC_ACCESS_LOCAL_WRITE, 2);
	mw = mw_new(&v, URNIC_KEY_MW2);
	CHECK_EQ(bind(&v, mw, WOFF, WLEN,
		      URNIC_ACCESS_REMOTE_WRITE | URNIC_ACCESS_REMOTE_READ |
			      URNIC_ACCESS_REMOTE_ATOMIC,
		      7),
		 URNIC_WC_SUCCESS);
	/* A 3000-byte WRITE (three packets) into the window, read back elsewhere. */
	CHECK_EQ(remote_op(&v, v.p.a, URNIC_WR_RDMA_WRITE, win(&v, WOFF + 100), mw->key, 3000),
		 URNIC_WC_SUCCESS);
	CHECK(memcmp(v.rb.p + WOFF + 100, v.la.p, 3000) == 0);
	CHECK(memcmp(v.rb.p, v.before, WOFF + 100) == 0);
	CHECK(memcmp(v.rb.p + WOFF + 3100, v.before + WOFF + 3100, RLEN - WOFF - 3100) == 0);
	memset(v.la.p, 0, 4096);
	CHECK_EQ(remote_op(&v, v.p.a, URNIC_WR_RDMA_READ, win(&v, WOFF), mw->key, WLEN),
		 URNIC_WC_SUCCESS);
	CHECK(memcmp(v.la.p, v.rb.p + WOFF, WLEN) == 0);
	/* FETCH_ADD 5 at the last 8 bytes of the window. */
	memcpy(&orig, v.rb.p + WOFF + WLEN - 8, 8);
	CHECK_EQ(remote_op(&v, v.p.a, URNIC_WR_ATOMIC_FETCH_AND_ADD, win(&v, WOFF + WLEN - 8),
			   mw->key, 8),
		 URNIC_WC_SUCCESS);
	{
		uint64_t now, got;

		memcpy(&now, v.rb.p + WOFF + WLEN - 8, 8);
		memcpy(&got, v.la.p, 8);
		CHECK_EQ(now, orig + 5);
		CHECK_EQ(got, orig);
	}
	CHECK_EQ(v.p.a->qp.state, URNIC_QPS_RTS);
	CHECK_EQ(v.p.b->qp.state, URNIC_QPS_RTS);
	/* Windows keep their region registered (rxe_dereg_mr: EINVAL). */
	CHECK_EQ(urnic_mr_deregister(&fab_engine(v.p.f, 1)->mrs, v.rb.mr), -EBUSY);
	mw_free(&v, mw);
	CHECK_EQ(v.rb.mr->nwindows, 0);
	env_close(&v);
}

/* One byte outside the window but inside the region, or a right the window lacks:
 * NAK remote access error, memory untouched (C10-78..80). */
static void test_window_bounds_and_rights(void)
{
	static const struct {
		uint32_t op;
		uint64_t off;
		uint32_t len;
		uint32_t rights;
	} cases[] = {
		{ URNIC_WR_RDMA_WRITE, WOFF - 1, 16, URNIC_ACCESS_REMOTE_WRITE },
		{ URNIC_WR_RDMA_WRITE, WOFF + WLEN - 15, 16, URNIC_ACCESS_REMOTE_WRITE },
		{ URNIC_WR_RDMA_READ, WOFF + WLEN, 1, URNIC_ACCESS_REMOTE_READ },
		{ URNIC_WR_RDMA_WRITE, WOFF, 16, URNIC_ACCESS_REMOTE_READ },
		{ URNIC_WR_RDMA_READ, WOFF, 16, URNIC_ACCESS_REMOTE_WRITE },
		{ URNIC_WR_ATOMIC_FETCH_AND_ADD, WOFF, 8,
		  URNIC_ACCESS_REMOTE_READ | URNIC_ACCESS_REMOTE_WRITE },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct env v;
		struct urnic_mr *mw;

		env_open(&v, URNIC_ACCESS_MW_BIND | URNIC_ACCESS_LOCAL_WRITE, 10 + i);
		mw = mw_new(&v, URNIC_KEY_MW2);
		CHECK_EQ(bind(&v, mw, WOFF, WLEN, cases[i].rights, 1), URNIC_WC_SUCCESS);
		CHECK_EQ(remote_op(&v, v.p.a, cases[i].op, win(&v, cases[i].off), mw->key,
				   cases[i].len),
			 URNIC_WC_REM_ACCESS_ERR);
		CHECK(memcmp(v.rb.p, v.before, RLEN) == 0);
		CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_nak_rem_access_sent), 1);
		CHECK_EQ(v.p.b->qp.state, URNIC_QPS_ERR);
		mw_free(&v, mw);
		env_close(&v);
	}
}

/* Zero-based type 2 window (IBTA 10.6.3.6): the VA is the offset into the window. */
static void test_zero_based_window(void)
{
	struct env v;
	struct urnic_mr *mw;

	env_open(&v, URNIC_ACCESS_MW_BIND | URNIC_ACCESS_LOCAL_WRITE, 20);
	mw = mw_new(&v, URNIC_KEY_MW2);
	CHECK_EQ(bind(&v, mw, WOFF, WLEN, URNIC_ACCESS_REMOTE_WRITE | URNIC_ACCESS_ZERO_BASED, 2),
		 URNIC_WC_SUCCESS);
	CHECK_EQ(remote_op(&v, v.p.a, URNIC_WR_RDMA_WRITE, 16, mw->key, 32), URNIC_WC_SUCCESS);
	CHECK(memcmp(v.rb.p + WOFF + 16, v.la.p, 32) == 0);
	CHECK_EQ(remote_op(&v, v.p.a, URNIC_WR_RDMA_WRITE, WLEN - 8, mw->key, 16),
		 URNIC_WC_REM_ACCESS_ERR);
	CHECK(memcmp(v.rb.p + WOFF + WLEN - 8, v.before + WOFF + WLEN - 8, 16) == 0);
	mw_free(&v, mw);
	env_close(&v);
}

/* LOCAL_INV (IBTA 10.6.7.2.4): completion IBV_WC_LOCAL_INV; the key then fails, and the
 * window can be bound again. A type 1 window cannot be invalidated (o10-37.2.26). */
static void test_local_invalidate(void)
{
	struct env v;
	struct urnic_mr *mw, *mw1;
	struct urnic_cqe c;
	uint32_t old;

	env_open(&v, URNIC_ACCESS_MW_BIND | URNIC_ACCESS_LOCAL_WRITE, 30);
	mw = mw_new(&v, URNIC_KEY_MW2);
	CHECK_EQ(bind(&v, mw, WOFF, WLEN, URNIC_ACCESS_REMOTE_WRITE, 3), URNIC_WC_SUCCESS);
	old = mw->key;
	CHECK_EQ(fab_post_send(v.p.b, &(struct fab_send_wr){ .wr_id = 0x11,
							     .opcode = URNIC_WR_LOCAL_INV,
							     .rkey = old }),
		 0);
	fab_wait_cqes(v.p.f, &v.p.b->scq, &c, 1);
	CHECK_CQE(c, 0x11, URNIC_WC_SUCCESS, URNIC_WC_LOCAL_INV, 0);
	CHECK_EQ(mw->mw_state, URNIC_MW_FREE);
	CHECK_EQ(v.rb.mr->nwindows, 0);
	/* Bound again with the next consumer key: the old key stays dead. */
	CHECK_EQ(bind(&v, mw, 0, WLEN, URNIC_ACCESS_REMOTE_WRITE, 4), URNIC_WC_SUCCESS);
	CHECK(mw->key != old);
	CHECK_EQ(remote_op(&v, v.p.a, URNIC_WR_RDMA_WRITE, win(&v, 0), mw->key, 8),
		 URNIC_WC_SUCCESS);
	CHECK_EQ(remote_op(&v, v.p.a, URNIC_WR_RDMA_WRITE, win(&v, 0), old, 8),
		 URNIC_WC_REM_ACCESS_ERR);
	mw_free(&v, mw);
	env_close(&v);

	/* Type 1: LOCAL_INV fails with LOC_QP_OP_ERR (rxe) and the QP goes to error. */
	env_open(&v, URNIC_ACCESS_MW_BIND | URNIC_ACCESS_LOCAL_WRITE, 31);
	mw1 = mw_new(&v, URNIC_KEY_MW1);
	CHECK_EQ(bind(&v, mw1, WOFF, WLEN, URNIC_ACCESS_REMOTE_READ, 1), URNIC_WC_SUCCESS);
	CHECK_EQ(fab_post_send(v.p.b, &(struct fab_send_wr){ .wr_id = 0x12,
							     .opcode = URNIC_WR_LOCAL_INV,
							     .rkey = mw1->key }),
		 0);
	fab_wait_cqes(v.p.f, &v.p.b->scq, &c, 1);
	CHECK_EQ(c.status, URNIC_WC_LOC_QP_OP_ERR);
	CHECK_EQ(v.p.b->qp.state, URNIC_QPS_ERR);
	CHECK_EQ(mw1->mw_state, URNIC_MW_VALID);
	/* A region's key cannot be invalidated either (no fast-register regions). */
	CHECK_EQ(urnic_mw_invalidate(&fab_engine(v.p.f, 1)->mrs, &v.p.pd[1], v.p.b->qp.qpn,
				     v.rb.mr->key),
		 URNIC_MR_BAD_KEY);
	mw_free(&v, mw1);
	env_close(&v);
}

/* SEND with Invalidate (IBTA 9.4.1.2): the receive completes with IBV_WC_WITH_INV and
 * the key; the window is free and the key refused from then on. */
static void test_send_with_invalidate(void)
{
	struct env v;
	struct urnic_mr *mw;
	struct urnic_cqe sc, rc;
	uint32_t key;

	env_open(&v, URNIC_ACCESS_MW_BIND | URNIC_ACCESS_LOCAL_WRITE, 40);
	mw = mw_new(&v, URNIC_KEY_MW2);
	CHECK_EQ(bind(&v, mw, WOFF, WLEN, URNIC_ACCESS_REMOTE_WRITE, 9), URNIC_WC_SUCCESS);
	key = mw->key;
	CHECK_EQ(remote_op(&v, v.p.a, URNIC_WR_RDMA_WRITE, win(&v, WOFF), key, 100),
		 URNIC_WC_SUCCESS);
	CHECK_EQ(fab_post_recv(v.p.b, 0x77, (struct urnic_sge[]){ fab_sge(v.rb.mr, 0, 2048) }, 1),
		 0);
	/* 1500 bytes: SEND FIRST, SEND LAST WITH INVALIDATE. */
	CHECK_EQ(
		fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 0x21,
							    .opcode = URNIC_WR_SEND_WITH_INV,
							    .rkey = key,
							    .num_sge = 1,
							    .sge = { fab_sge(v.la.mr, 0, 1500) } }),
		0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, &rc, 1);
	CHECK_CQE(sc, 0x21, URNIC_WC_SUCCESS, URNIC_WC_SEND, 1500);
	CHECK_CQE(rc, 0x77, URNIC_WC_SUCCESS, URNIC_WC_RECV, 1500);
	CHECK(rc.wc_flags & URNIC_WC_WITH_INV);
	CHECK(!(rc.wc_flags & URNIC_WC_WITH_IMM));
	CHECK_EQ(rc.imm_be, key); /* ibv_wc.invalidated_rkey, host order */
	CHECK_EQ(mw->mw_state, URNIC_MW_FREE);
	{
		bool seen = false;

		for (uint32_t i = 0; i < v.p.f->ntrace; i++)
			seen |= v.p.f->trace[i].opcode == URNIC_OP_RC_SEND_LAST_WITH_INVALIDATE;
		CHECK(seen);
	}
	CHECK_EQ(remote_op(&v, v.p.a, URNIC_WR_RDMA_WRITE, win(&v, WOFF), key, 100),
		 URNIC_WC_REM_ACCESS_ERR);
	mw_free(&v, mw);
	env_close(&v);
}

/* A SEND with Invalidate of a key that is no bound type 2 window of this QP (class J,
 * rxe RESPST_ERR_INVALIDATE_RKEY): the SEND is acknowledged, the receive completes with
 * REM_INV_REQ_ERR and the responder's QP goes to error. */
static void test_send_with_invalidate_of_bad_key(void)
{
	struct env v;
	struct urnic_mr *mw1;
	struct urnic_cqe sc, rc;

	env_open(&v, URNIC_ACCESS_MW_BIND | URNIC_ACCESS_LOCAL_WRITE, 41);
	mw1 = mw_new(&v, URNIC_KEY_MW1); /* type 1: not remotely invalidated */
	CHECK_EQ(bind(&v, mw1, WOFF, WLEN, URNIC_ACCESS_REMOTE_WRITE, 9), URNIC_WC_SUCCESS);
	CHECK_EQ(fab_post_recv(v.p.b, 0x78, (struct urnic_sge[]){ fab_sge(v.rb.mr, 0, 64) }, 1), 0);
	CHECK_EQ(fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 0x22,
							     .opcode = URNIC_WR_SEND_WITH_INV,
							     .rkey = mw1->key,
							     .num_sge = 1,
							     .sge = { fab_sge(v.la.mr, 0, 64) } }),
		 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, &rc, 1);
	fabric_settle(v.p.f);
	CHECK_EQ(sc.status, URNIC_WC_SUCCESS);
	CHECK_EQ(rc.wr_id, 0x78);
	CHECK_EQ(rc.status, URNIC_WC_REM_INV_REQ_ERR);
	CHECK_EQ(v.p.b->qp.state, URNIC_QPS_ERR);
	CHECK_EQ(mw1->mw_state, URNIC_MW_VALID);
	mw_free(&v, mw1);
	env_close(&v);
}

/* Type 2B windows serve only the QP they were bound through (o10-37.2.36); type 1
 * windows every QP of the PD. A second connection between the same hosts tries both. */
static void test_type2_serves_its_qp_only_type1_every_qp(void)
{
	struct env v;
	struct fab_conn c = fab_conn_default();
	struct fab_qp *a2, *b2;
	struct urnic_mr *mw2, *mw1;

	env_open(&v, URNIC_ACCESS_MW_BIND | URNIC_ACCESS_LOCAL_WRITE, 50);
	a2 = fab_qp_new(v.p.f, 0, &v.p.pd[0], 64, 64, true);
	b2 = fab_qp_new(v.p.f, 1, &v.p.pd[1], 64, 64, true);
	fab_connect(a2, b2, &c);
	mw2 = mw_new(&v, URNIC_KEY_MW2);
	mw1 = mw_new(&v, URNIC_KEY_MW1);
	CHECK_EQ(bind(&v, mw2, 0, WLEN, URNIC_ACCESS_REMOTE_WRITE, 1), URNIC_WC_SUCCESS);
	/* Type 1 bound through b2: still any QP's. */
	CHECK_EQ(bind_via(&v, b2, mw1, v.rb.mr->key, WLEN, WLEN, URNIC_ACCESS_REMOTE_WRITE, 1),
		 URNIC_WC_SUCCESS);
	CHECK_EQ(remote_op(&v, v.p.a, URNIC_WR_RDMA_WRITE, win(&v, 0), mw2->key, 8),
		 URNIC_WC_SUCCESS);
	CHECK_EQ(remote_op(&v, v.p.a, URNIC_WR_RDMA_WRITE, win(&v, WLEN), mw1->key, 8),
		 URNIC_WC_SUCCESS);
	CHECK_EQ(remote_op(&v, a2, URNIC_WR_RDMA_WRITE, win(&v, WLEN + 8), mw1->key, 8),
		 URNIC_WC_SUCCESS);
	CHECK_EQ(remote_op(&v, a2, URNIC_WR_RDMA_WRITE, win(&v, 8), mw2->key, 8),
		 URNIC_WC_REM_ACCESS_ERR);
	CHECK(memcmp(v.rb.p + 8, v.before + 8, 8) == 0);
	CHECK_EQ(b2->qp.state, URNIC_QPS_ERR);
	CHECK_EQ(v.p.b->qp.state, URNIC_QPS_RTS);
	/* Nor can the other connection revoke it. */
	CHECK_EQ(urnic_mw_invalidate(&fab_engine(v.p.f, 1)->mrs, &v.p.pd[1], b2->qp.qpn, mw2->key),
		 URNIC_MR_BAD_QP);
	/* A type 1 window is bound again in place (new key) or unbound by length 0. */
	{
		uint32_t k1 = mw1->key;

		CHECK_EQ(bind(&v, mw1, 0, 64, URNIC_ACCESS_REMOTE_WRITE, (uint8_t)(k1 + 1)),
			 URNIC_WC_SUCCESS);
		CHECK_EQ(remote_op(&v, v.p.a, URNIC_WR_RDMA_WRITE, win(&v, 0), k1, 8),
			 URNIC_WC_REM_ACCESS_ERR);
	}
	mw_free(&v, mw2);
	mw_free(&v, mw1);
	fab_qp_free(a2);
	fab_qp_free(b2);
	env_close(&v);

	env_open(&v, URNIC_ACCESS_MW_BIND | URNIC_ACCESS_LOCAL_WRITE, 51);
	mw1 = mw_new(&v, URNIC_KEY_MW1);
	CHECK_EQ(bind(&v, mw1, 0, 64, URNIC_ACCESS_REMOTE_WRITE, 1), URNIC_WC_SUCCESS);
	CHECK_EQ(bind_via(&v, v.p.b, mw1, 0, 0, 0, 0, 2), URNIC_WC_SUCCESS); /* unbind */
	CHECK_EQ(mw1->mw_state, URNIC_MW_FREE);
	CHECK_EQ(v.rb.mr->nwindows, 0);
	CHECK_EQ(remote_op(&v, v.p.a, URNIC_WR_RDMA_WRITE, win(&v, 0), mw1->key, 8),
		 URNIC_WC_REM_ACCESS_ERR);
	mw_free(&v, mw1);
	env_close(&v);
}

/* Every bind rule, at the table: nothing changes when one fails. */
static void test_bind_rules(void)
{
	struct env v;
	struct urnic_mr_table *t;
	struct urnic_mr *mw2, *mw1, *ro, *nobind;
	struct urnic_pd other = { .handle = 9 };
	struct urnic_mw_bind b;
	uint32_t qpn;

	env_open(&v, URNIC_ACCESS_MW_BIND | URNIC_ACCESS_LOCAL_WRITE, 60);
	t = &fab_engine(v.p.f, 1)->mrs;
	qpn = v.p.b->qp.qpn;
	mw2 = mw_new(&v, URNIC_KEY_MW2);
	mw1 = mw_new(&v, URNIC_KEY_MW1);
	ro = fab_reg(v.p.f, 1, &v.p.pd[1], v.rb.p, 4096, URNIC_ACCESS_MW_BIND);
	nobind = fab_reg(v.p.f, 1, &v.p.pd[1], v.rb.p, 4096, URNIC_ACCESS_LOCAL_WRITE);
#define B(mw_, mr_, off_, len_, acc_)                                                              \
	(b = (struct urnic_mw_bind){ (mw_)->key, 5, (mr_)->key, (mr_)->iova + (off_), (len_),      \
				     (acc_) })
	B(mw2, v.rb.mr, 0, 64, URNIC_ACCESS_REMOTE_WRITE);
	b.mw_rkey ^= 0x100;
	CHECK_EQ(urnic_mw_bind(t, &v.p.pd[1], qpn, &b), URNIC_MW_BIND_BAD_WINDOW);
	B(mw2, v.rb.mr, 0, 64, URNIC_ACCESS_REMOTE_WRITE);
	b.mw_rkey = v.rb.mr->key; /* a region is not a window */
	CHECK_EQ(urnic_mw_bind(t, &v.p.pd[1], qpn, &b), URNIC_MW_BIND_BAD_WINDOW);
	B(mw2, v.rb.mr, 0, 64, URNIC_ACCESS_REMOTE_WRITE);
	b.mr_lkey = mw1->key; /* a window is not a region */
	CHECK_EQ(urnic_mw_bind(t, &v.p.pd[1], qpn, &b), URNIC_MW_BIND_BAD_REGION);
	B(mw2, v.rb.mr, 0, 64, URNIC_ACCESS_REMOTE_READ | URNIC_ACCESS_MW_BIND);
	CHECK_EQ(urnic_mw_bind(t, &v.p.pd[1], qpn, &b), URNIC_MW_BIND_BAD_ACCESS);
	B(mw2, v.rb.mr, 0, 64, URNIC_ACCESS_REMOTE_READ | URNIC_ACCESS_HUGETLB);
	CHECK_EQ(urnic_mw_bind(t, &v.p.pd[1], qpn, &b), URNIC_MW_BIND_BAD_ACCESS);
	B(mw1, v.rb.mr, 0, 64, URNIC_ACCESS_REMOTE_READ | URNIC_ACCESS_ZERO_BASED);
	CHECK_EQ(urnic_mw_bind(t, &v.p.pd[1], qpn, &b), URNIC_MW_BIND_BAD_ACCESS); /* o10-36.2.2 */
	B(mw2, v.rb.mr, 0, 64, URNIC_ACCESS_REMOTE_WRITE);
	CHECK_EQ(urnic_mw_bind(t, &other, qpn, &b), URNIC_MW_BIND_BAD_PD); /* C10-72 */
	B(mw2, v.rb.mr, 0, 0, URNIC_ACCESS_REMOTE_WRITE);
	CHECK_EQ(urnic_mw_bind(t, &v.p.pd[1], qpn, &b), URNIC_MW_BIND_NO_REGION); /* o10-37.2.40 */
	B(mw2, nobind, 0, 64, URNIC_ACCESS_REMOTE_READ);
	CHECK_EQ(urnic_mw_bind(t, &v.p.pd[1], qpn, &b), URNIC_MW_BIND_NOT_BINDABLE); /* C10-73 */
	B(mw2, ro, 0, 64, URNIC_ACCESS_REMOTE_WRITE);
	CHECK_EQ(urnic_mw_bind(t, &v.p.pd[1], qpn, &b), URNIC_MW_BIND_NO_LOCAL_WRITE); /* C10-74 */
	B(mw2, ro, 0, 64, URNIC_ACCESS_REMOTE_ATOMIC);
	CHECK_EQ(urnic_mw_bind(t, &v.p.pd[1], qpn, &b), URNIC_MW_BIND_NO_LOCAL_WRITE);
	B(mw2, v.rb.mr, RLEN - 63, 64, URNIC_ACCESS_REMOTE_WRITE);
	CHECK_EQ(urnic_mw_bind(t, &v.p.pd[1], qpn, &b), URNIC_MW_BIND_OUT_OF_RANGE); /* C10-75 */
	B(mw2, v.rb.mr, 0, 64, URNIC_ACCESS_REMOTE_WRITE);
	b.addr = v.rb.mr->iova - 1;
	CHECK_EQ(urnic_mw_bind(t, &v.p.pd[1], qpn, &b), URNIC_MW_BIND_OUT_OF_RANGE);
	CHECK_EQ(mw2->mw_state, URNIC_MW_FREE);
	CHECK_EQ(v.rb.mr->nwindows, 0);
	/* A read-only window on a read-only region is fine; bound, it cannot be bound
	 * again (o10-37.2.30). */
	B(mw2, ro, 0, 64, URNIC_ACCESS_REMOTE_READ);
	CHECK_EQ(urnic_mw_bind(t, &v.p.pd[1], qpn, &b), URNIC_MW_BIND_OK);
	b.mw_rkey = mw2->key;
	CHECK_EQ(urnic_mw_bind(t, &v.p.pd[1], qpn, &b), URNIC_MW_BIND_BAD_STATE);
	CHECK_EQ(ro->nwindows, 1);
	CHECK_EQ(urnic_mr_deregister(t, ro), -EBUSY);
	mw_free(&v, mw2);
	mw_free(&v, mw1);
	CHECK_EQ(urnic_mr_deregister(t, ro), 0);
	fab_dereg(v.p.f, 1, nobind);
	CHECK(strcmp(urnic_mw_bind_check_name(URNIC_MW_BIND_OUT_OF_RANGE), "?") != 0);
	env_close(&v);
#undef B
}

/* Local write asked of a window (rdma-core's MWTest binds REMOTE_WRITE | LOCAL_WRITE):
 * accepted and dropped, the window granting its remote rights only; it asks nothing of
 * the region either (a read-only region takes a read window with local write). */
static void test_local_write_on_a_window_is_dropped(void)
{
	struct env v;
	struct urnic_mr_table *t;
	struct urnic_mr *mw2, *mw1, *ro;
	struct urnic_mw_bind b;

	env_open(&v, URNIC_ACCESS_MW_BIND | URNIC_ACCESS_LOCAL_WRITE, 65);
	t = &fab_engine(v.p.f, 1)->mrs;
	mw2 = mw_new(&v, URNIC_KEY_MW2);
	CHECK_EQ(bind(&v, mw2, WOFF, WLEN, URNIC_ACCESS_REMOTE_WRITE | URNIC_ACCESS_LOCAL_WRITE, 3),
		 URNIC_WC_SUCCESS);
	CHECK_EQ(mw2->access, URNIC_ACCESS_REMOTE_WRITE);
	CHECK_EQ(remote_op(&v, v.p.a, URNIC_WR_RDMA_WRITE, win(&v, WOFF), mw2->key, 256),
		 URNIC_WC_SUCCESS);
	CHECK(memcmp(v.rb.p + WOFF, v.la.p, 256) == 0);
	CHECK_EQ(remote_op(&v, v.p.a, URNIC_WR_RDMA_READ, win(&v, WOFF), mw2->key, 64),
		 URNIC_WC_REM_ACCESS_ERR);
	mw_free(&v, mw2);
	env_close(&v);

	env_open(&v, URNIC_ACCESS_MW_BIND | URNIC_ACCESS_LOCAL_WRITE, 66);
	t = &fab_engine(v.p.f, 1)->mrs;
	mw1 = mw_new(&v, URNIC_KEY_MW1);
	ro = fab_reg(v.p.f, 1, &v.p.pd[1], v.rb.p, 4096, URNIC_ACCESS_MW_BIND);
	b = (struct urnic_mw_bind){ mw1->key, 9,
				    ro->key,  ro->iova,
				    64,	      URNIC_ACCESS_REMOTE_READ | URNIC_ACCESS_LOCAL_WRITE };
	CHECK_EQ(urnic_mw_bind(t, &v.p.pd[1], v.p.b->qp.qpn, &b), URNIC_MW_BIND_OK);
	CHECK_EQ(mw1->access, URNIC_ACCESS_REMOTE_READ);
	mw_free(&v, mw1);
	fab_dereg(v.p.f, 1, ro);
	env_close(&v);
}

/* A failed bind as a work request: IBV_WC_MW_BIND_ERR, the QP in error, the WRs behind
 * it flushed (rxe rxe_do_local_ops). Window keys never name local memory. */
static void test_failed_bind_completes_mw_bind_err(void)
{
	struct env v;
	struct urnic_mr *mw;
	struct urnic_cqe c[2];
	struct urnic_mr_at at;

	env_open(&v, URNIC_ACCESS_LOCAL_WRITE, 70); /* no MW_BIND */
	mw = mw_new(&v, URNIC_KEY_MW2);
	CHECK_EQ(fab_post_send(v.p.b,
			       &(struct fab_send_wr){ .wr_id = 0xb2,
						      .opcode = URNIC_WR_BIND_MW,
						      .mw_rkey = mw->key,
						      .rkey = mw->key + 1,
						      .mr_lkey = v.rb.mr->key,
						      .remote_addr = win(&v, 0),
						      .remote_len = 64,
						      .mw_access = URNIC_ACCESS_REMOTE_READ }),
		 0);
	CHECK_EQ(fab_post_send(v.p.b, &(struct fab_send_wr){ .wr_id = 0xb3,
							     .opcode = URNIC_WR_SEND,
							     .num_sge = 1,
							     .sge = { fab_sge(v.rb.mr, 0, 8) } }),
		 0);
	fab_wait_cqes(v.p.f, &v.p.b->scq, c, 2);
	CHECK_EQ(c[0].wr_id, 0xb2);
	CHECK_EQ(c[0].status, URNIC_WC_MW_BIND_ERR);
	CHECK_EQ(c[1].status, URNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(v.p.b->qp.state, URNIC_QPS_ERR);
	CHECK_EQ(mw->mw_state, URNIC_MW_FREE);
	CHECK(urnic_mr_resolve(&fab_engine(v.p.f, 1)->mrs, &v.p.pd[1], mw->key, 0, 0, 0, &at) ==
	      URNIC_MR_BAD_KEY);
	mw_free(&v, mw);
	env_close(&v);
}

/* A bind posted behind a WRITE completes after it, in post order, and a WRITE from the
 * peer after the bind's completion finds the window (local operations, IBTA 10.8.3). */
static void test_bind_completes_in_order(void)
{
	struct env v;
	struct urnic_mr *mw;
	struct urnic_cqe c[3];

	env_open(&v, URNIC_ACCESS_MW_BIND | URNIC_ACCESS_LOCAL_WRITE, 80);
	mw = mw_new(&v, URNIC_KEY_MW2);
	for (int i = 0; i < 3; i++) {
		struct fab_send_wr w = { .wr_id = 100 + (uint64_t)i,
					 .opcode = URNIC_WR_RDMA_WRITE,
					 .remote_addr = v.la.mr->iova,
					 .rkey = v.la.mr->key,
					 .num_sge = 1,
					 .sge = { fab_sge(v.rb.mr, 0, 2000) } };

		if (i == 1)
			w = (struct fab_send_wr){ .wr_id = 101,
						  .opcode = URNIC_WR_BIND_MW,
						  .mw_rkey = mw->key,
						  .rkey = mw->key + 1,
						  .mr_lkey = v.rb.mr->key,
						  .remote_addr = win(&v, 0),
						  .remote_len = 128,
						  .mw_access = URNIC_ACCESS_REMOTE_READ };
		CHECK_EQ(fab_post_send(v.p.b, &w), 0);
	}
	fab_wait_cqes(v.p.f, &v.p.b->scq, c, 3);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(c[i].wr_id, 100 + i);
		CHECK_EQ(c[i].status, URNIC_WC_SUCCESS);
	}
	CHECK_EQ(c[1].opcode, URNIC_WC_BIND_MW);
	CHECK_EQ(remote_op(&v, v.p.a, URNIC_WR_RDMA_READ, win(&v, 0), mw->key, 128),
		 URNIC_WC_SUCCESS);
	CHECK(memcmp(v.la.p, v.rb.p, 128) == 0);
	mw_free(&v, mw);
	env_close(&v);
}

/* A window bound on a UC QP (rxe allows BIND_MW there) completes like a send. */
static void test_bind_on_uc(void)
{
	struct fabric *f = fabric_new(2, 90);
	struct urnic_pd pd = { .handle = 1 };
	struct fab_qp *a = fab_qp_new_type(f, 0, &pd, URNIC_QPT_UC, NULL, 16, 16, true);
	struct fab_qp *b = fab_qp_new_type(f, 1, &pd, URNIC_QPT_UC, NULL, 16, 16, true);
	struct fab_conn c = fab_conn_default();
	struct fab_buf rb;
	struct urnic_mr *mw = NULL;
	struct urnic_cqe cqe;

	fab_connect(a, b, &c);
	fab_buf_new(f, &rb, 1, &pd, 4096, URNIC_ACCESS_MW_BIND | URNIC_ACCESS_LOCAL_WRITE);
	CHECK_EQ(urnic_mw_alloc(&fab_engine(f, 1)->mrs, &pd, URNIC_KEY_MW1, 7, &mw), 0);
	CHECK_EQ(fab_post_send(b, &(struct fab_send_wr){ .wr_id = 5,
							 .opcode = URNIC_WR_BIND_MW,
							 .mw_rkey = mw->key,
							 .rkey = mw->key + 1,
							 .mr_lkey = rb.mr->key,
							 .remote_addr = rb.mr->iova,
							 .remote_len = 4096,
							 .mw_access = URNIC_ACCESS_REMOTE_WRITE }),
		 0);
	fab_wait_cqes(f, &b->scq, &cqe, 1);
	CHECK_CQE(cqe, 5, URNIC_WC_SUCCESS, URNIC_WC_BIND_MW, 0);
	CHECK_EQ(mw->mw_state, URNIC_MW_VALID);
	urnic_mw_dealloc(&fab_engine(f, 1)->mrs, mw);
	fab_buf_free(f, &rb);
	fab_qp_free(a);
	fab_qp_free(b);
	fabric_free(f);
}

int main(void)
{
	RUN(test_type2_window_serves_write_read_atomic);
	RUN(test_window_bounds_and_rights);
	RUN(test_zero_based_window);
	RUN(test_local_invalidate);
	RUN(test_send_with_invalidate);
	RUN(test_send_with_invalidate_of_bad_key);
	RUN(test_type2_serves_its_qp_only_type1_every_qp);
	RUN(test_bind_rules);
	RUN(test_local_write_on_a_window_is_dropped);
	RUN(test_failed_bind_completes_mw_bind_err);
	RUN(test_bind_completes_in_order);
	RUN(test_bind_on_uc);
	return 0;
}
