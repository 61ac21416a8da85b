/* SPDX-License-Identifier: MIT */
/*
 * test_a19.c - ATOMIC_WRITE and FLUSH, the IBTA 1.5 (Annex A19) operations, as rxe 6.2+.
 *
 *   host 0 (requester a) ---- RC ---- host 1 (responder b)
 *
 * ATOMIC_WRITE (opcode 0x1D, RETH + 8 bytes) stores its 8 bytes at an aligned address
 * under an R_Key with remote write; FLUSH (0x1C, FETH + RETH) needs the flush right of
 * its placement type on the QP and the R_Key. Both are answered by an RDMA READ
 * response ONLY without payload and complete IBV_WC_ATOMIC_WRITE / IBV_WC_FLUSH. A
 * misaligned ATOMIC_WRITE or a malformed FLUSH is NAK invalid request (REM_INV_REQ_ERR),
 * a bad key or a missing right NAK remote access error (REM_ACCESS_ERR). A retried
 * request whose response was lost is answered again, not executed again (oA19-14/15).
 */
#include <string.h>

#include "fabric.h"

struct env {
	struct fab_pair p;
	struct fab_buf la;
	struct fab_buf rb;
	uint8_t before[8192];
};

static void env_open(struct env *v, uint32_t rb_access, uint32_t qp_access, uint64_t seed)
{
	struct fab_conn c = fab_conn_default();

	fab_pair_open(&v->p, NULL, seed);
	fab_connect_one(v->p.a, v->p.b, &c, c.psn_a, c.psn_b);
	c.access = qp_access;
	fab_connect_one(v->p.b, v->p.a, &c, c.psn_b, c.psn_a);
	fab_buf_new(v->p.f, &v->la, 0, &v->p.pd[0], 8192, FAB_ALL_ACCESS);
	fab_fill(v->la.p, 8192, (uint32_t)seed);
	fab_buf_new(v->p.f, &v->rb, 1, &v->p.pd[1], 8192, rb_access);
	fab_fill(v->rb.p, 8192, (uint32_t)seed + 1);
	memcpy(v->before, v->rb.p, 8192);
}

static void env_close(struct env *v)
{
	fab_buf_free(v->p.f, &v->rb);
	fab_buf_free(v->p.f, &v->la);
	fab_pair_close(&v->p);
}

#define RB_ALL (FAB_ALL_ACCESS | URNIC_ACCESS_FLUSH_GLOBAL)
#define QP_ALL (FAB_ALL_ACCESS | URNIC_ACCESS_FLUSH_GLOBAL)

static struct fab_send_wr atomic_write(const struct env *v, uint64_t off, const void *value)
{
	struct fab_send_wr w = { .wr_id = 0xa7,
				 .opcode = URNIC_WR_ATOMIC_WRITE,
				 .flags = URNIC_SEND_INLINE,
				 .remote_addr = v->rb.mr->iova + off,
				 .rkey = v->rb.mr->key,
				 .num_sge = 1,
				 .sge = { { (uintptr_t)value, 8, 0 } } };

	return w;
}

static struct fab_send_wr flush(const struct env *v, uint64_t off, uint64_t len, uint8_t type,
				uint8_t level)
{
	return (struct fab_send_wr){ .wr_id = 0xf1,
				     .opcode = URNIC_WR_FLUSH,
				     .remote_addr = v->rb.mr->iova + off,
				     .rkey = v->rb.mr->key,
				     .remote_len = len,
				     .flush_type = type,
				     .flush_level = level };
}

static struct urnic_cqe run_one(struct env *v, const struct fab_send_wr *w)
{
	struct urnic_cqe c;

	CHECK_EQ(fab_post_send(v->p.a, w), 0);
	fab_wait_cqes(v->p.f, &v->p.a->scq, &c, 1);
	fabric_settle(v->p.f);
	CHECK_EQ(c.wr_id, w->wr_id);
	return c;
}

/* The responder's answers in the trace: every packet host 1 sent. */
static uint32_t count_from(const struct fabric *f, int host, uint8_t opcode, uint32_t payload)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < f->ntrace; i++)
		n += f->trace[i].src == host && f->trace[i].opcode == opcode &&
		     f->trace[i].payload_bytes == payload;
	return n;
}

static void test_atomic_write_stores_8_bytes(void)
{
	struct env v;
	const uint8_t value[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct fab_send_wr w;
	struct urnic_cqe c;

	env_open(&v, RB_ALL, QP_ALL, 1);
	w = atomic_write(&v, 64, value);
	c = run_one(&v, &w);
	CHECK_CQE(c, 0xa7, URNIC_WC_SUCCESS, URNIC_WC_ATOMIC_WRITE, 8);
	/* The bytes as they were given (rxe: no byte order applied), nothing around. */
	CHECK(memcmp(v.rb.p + 64, value, 8) == 0);
	CHECK(memcmp(v.rb.p, v.before, 64) == 0);
	CHECK(memcmp(v.rb.p + 72, v.before + 72, 8192 - 72) == 0);
	/* On the wire: one request with 8 bytes, one READ response ONLY without payload. */
	CHECK_EQ(count_from(v.p.f, 0, URNIC_OP_RC_ATOMIC_WRITE, 8), 1);
	CHECK_EQ(count_from(v.p.f, 1, URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY, 0), 1);
	CHECK_EQ(v.p.a->qp.state, URNIC_QPS_RTS);
	CHECK_EQ(v.p.b->qp.state, URNIC_QPS_RTS);

	/* From registered memory too (ibv_post_send form), and behind a READ. */
	memcpy(v.la.p + 256, "ABCDEFGH", 8);
	CHECK_EQ(fab_post_send(v.p.a,
			       &(struct fab_send_wr){ .wr_id = 1,
						      .opcode = URNIC_WR_RDMA_READ,
						      .remote_addr = v.rb.mr->iova,
						      .rkey = v.rb.mr->key,
						      .num_sge = 1,
						      .sge = { fab_sge(v.la.mr, 1024, 3000) } }),
		 0);
	w = atomic_write(&v, 4096, NULL);
	w.flags = 0;
	w.sge[0] = fab_sge(v.la.mr, 256, 8);
	CHECK_EQ(fab_post_send(v.p.a, &w), 0);
	{
		struct urnic_cqe two[2];

		fab_wait_cqes(v.p.f, &v.p.a->scq, two, 2);
		CHECK_EQ(two[0].status, URNIC_WC_SUCCESS);
		CHECK_EQ(two[1].status, URNIC_WC_SUCCESS);
		CHECK_EQ(two[1].opcode, URNIC_WC_ATOMIC_WRITE);
	}
	CHECK(memcmp(v.rb.p + 4096, "ABCDEFGH", 8) == 0);
	CHECK(memcmp(v.la.p + 1024, v.rb.p, 3000) == 0);
	env_close(&v);
}

static void test_atomic_write_errors(void)
{
	struct env v;
	const uint64_t value = 0x1122334455667788ull;
	struct fab_send_wr w;

	/* oA19-28 / rxe: a misaligned target is NAK invalid request. */
	env_open(&v, RB_ALL, QP_ALL, 2);
	w = atomic_write(&v, 68, &value);
	CHECK_EQ(run_one(&v, &w).status, URNIC_WC_REM_INV_REQ_ERR);
	CHECK(memcmp(v.rb.p, v.before, 8192) == 0);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_nak_inv_req_sent), 1);
	CHECK_EQ(v.p.b->qp.state, URNIC_QPS_ERR);
	env_close(&v);

	/* The region without remote write: NAK remote access error. */
	env_open(&v,
		 URNIC_ACCESS_LOCAL_WRITE | URNIC_ACCESS_REMOTE_READ | URNIC_ACCESS_REMOTE_ATOMIC,
		 QP_ALL, 3);
	w = atomic_write(&v, 64, &value);
	CHECK_EQ(run_one(&v, &w).status, URNIC_WC_REM_ACCESS_ERR);
	CHECK(memcmp(v.rb.p, v.before, 8192) == 0);
	env_close(&v);

	/* Past the end of the region. */
	env_open(&v, RB_ALL, QP_ALL, 4);
	w = atomic_write(&v, 8192, &value);
	CHECK_EQ(run_one(&v, &w).status, URNIC_WC_REM_ACCESS_ERR);
	env_close(&v);

	/* The QP does not grant remote write (rxe check_op_valid: ATOMIC_WRITE is a
	 * write): NAK invalid request. */
	env_open(&v, RB_ALL, URNIC_ACCESS_REMOTE_READ | URNIC_ACCESS_REMOTE_ATOMIC, 5);
	w = atomic_write(&v, 64, &value);
	CHECK_EQ(run_one(&v, &w).status, URNIC_WC_REM_INV_REQ_ERR);
	CHECK(memcmp(v.rb.p, v.before, 8192) == 0);
	env_close(&v);

	/* Not 8 bytes: refused locally (IBTA A19.4.2), nothing sent. */
	env_open(&v, RB_ALL, QP_ALL, 6);
	w = atomic_write(&v, 64, &value);
	w.sge[0].length = 4;
	CHECK_EQ(run_one(&v, &w).status, URNIC_WC_LOC_LEN_ERR);
	CHECK_EQ(count_from(v.p.f, 0, URNIC_OP_RC_ATOMIC_WRITE, 4), 0);
	env_close(&v);
}

static bool rule_hit(struct fabric *f, void *arg)
{
	(void)f;
	return ((const struct fab_rule *)arg)->hits > 0;
}

/* A lost response: the retried ATOMIC_WRITE is answered from the responder resource,
 * not stored again (a value written in between stays). */
static void test_atomic_write_retry_is_not_reexecuted(void)
{
	struct env v;
	const uint64_t value = 0xaaaaaaaaaaaaaaaaull, later = 0x5555555555555555ull;
	struct fab_send_wr w;
	struct fab_rule *r;
	struct urnic_cqe c;

	env_open(&v, RB_ALL, QP_ALL, 7);
	r = fab_add_rule(v.p.f, &(struct fab_rule){ .match = FAB_M_SRC | FAB_M_OPCODE,
						    .src = 1,
						    .opcode = URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY,
						    .count = 1,
						    .action = FAB_DROP });
	w = atomic_write(&v, 128, &value);
	CHECK_EQ(fab_post_send(v.p.a, &w), 0);
	/* Run until the response was dropped, then change the target under it. */
	CHECK(fabric_run(v.p.f, rule_hit, r, 1000000));
	CHECK(memcmp(v.rb.p + 128, &value, 8) == 0);
	memcpy(v.rb.p + 128, &later, 8);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	CHECK_CQE(c, 0xa7, URNIC_WC_SUCCESS, URNIC_WC_ATOMIC_WRITE, 8);
	CHECK(memcmp(v.rb.p + 128, &later, 8) == 0);
	CHECK(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request) >= 1);
	CHECK_EQ(count_from(v.p.f, 0, URNIC_OP_RC_ATOMIC_WRITE, 8), 2);
	env_close(&v);
}

static void test_flush(void)
{
	struct env v;
	struct fab_send_wr w;
	struct urnic_cqe c;

	/* A range, then the whole region (whose VA and length are not looked at). */
	env_open(&v, RB_ALL, QP_ALL, 10);
	w = flush(&v, 0, 4096, URNIC_FLUSH_GLOBAL, URNIC_FLUSH_LEVEL_RANGE);
	c = run_one(&v, &w);
	CHECK_CQE(c, 0xf1, URNIC_WC_SUCCESS, URNIC_WC_FLUSH, 0);
	w = flush(&v, 1u << 20, 0, URNIC_FLUSH_GLOBAL, URNIC_FLUSH_LEVEL_MR);
	CHECK_EQ(run_one(&v, &w).status, URNIC_WC_SUCCESS);
	CHECK_EQ(count_from(v.p.f, 0, URNIC_OP_RC_FLUSH, 0), 2);
	CHECK_EQ(count_from(v.p.f, 1, URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY, 0), 2);
	/* A WRITE then a FLUSH: the FLUSH completes after the WRITE's data is placed. */
	CHECK_EQ(
		fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 2,
							    .opcode = URNIC_WR_RDMA_WRITE,
							    .remote_addr = v.rb.mr->iova,
							    .rkey = v.rb.mr->key,
							    .num_sge = 1,
							    .sge = { fab_sge(v.la.mr, 0, 5000) } }),
		0);
	w = flush(&v, 0, 5000, URNIC_FLUSH_GLOBAL, URNIC_FLUSH_LEVEL_RANGE);
	CHECK_EQ(fab_post_send(v.p.a, &w), 0);
	{
		struct urnic_cqe two[2];

		fab_wait_cqes(v.p.f, &v.p.a->scq, two, 2);
		CHECK_EQ(two[0].opcode, URNIC_WC_RDMA_WRITE);
		CHECK_EQ(two[1].opcode, URNIC_WC_FLUSH);
		CHECK(memcmp(v.rb.p, v.la.p, 5000) == 0);
	}
	CHECK_EQ(v.p.b->qp.state, URNIC_QPS_RTS);
	env_close(&v);
}

/* FLUSHes refused, each on a fresh pair: the region's and the responder QP's rights,
 * the request (range, placement type, level, R_Key bits flipped) and its status. */
static void test_flush_errors(void)
{
	static const struct {
		uint32_t rb_access, qp_access;
		uint64_t off, len;
		uint8_t type, level;
		uint32_t rkey_flip;
		enum urnic_wc_status status;
	} cases[] = {
		/* The region lacks IBV_ACCESS_FLUSH_GLOBAL: NAK remote access error. */
		{ FAB_ALL_ACCESS, QP_ALL, 0, 64, URNIC_FLUSH_GLOBAL, URNIC_FLUSH_LEVEL_RANGE, 0,
		  URNIC_WC_REM_ACCESS_ERR },
		/* The QP lacks it: NAK invalid request (rxe check_qp_attr_access). */
		{ RB_ALL, FAB_ALL_ACCESS, 0, 64, URNIC_FLUSH_GLOBAL, URNIC_FLUSH_LEVEL_RANGE, 0,
		  URNIC_WC_REM_INV_REQ_ERR },
		/* Persistence is not offered: no region or QP can grant it. */
		{ RB_ALL, QP_ALL, 0, 64, URNIC_FLUSH_PERSISTENT, URNIC_FLUSH_LEVEL_RANGE, 0,
		  URNIC_WC_REM_INV_REQ_ERR },
		/* A range outside the region. */
		{ RB_ALL, QP_ALL, 8000, 4096, URNIC_FLUSH_GLOBAL, URNIC_FLUSH_LEVEL_RANGE, 0,
		  URNIC_WC_REM_ACCESS_ERR },
		/* A bad R_Key even for the whole region. */
		{ RB_ALL, QP_ALL, 0, 0, URNIC_FLUSH_GLOBAL, URNIC_FLUSH_LEVEL_MR, 0x10000,
		  URNIC_WC_REM_ACCESS_ERR },
		/* Reserved placement type or level: refused before anything is sent. */
		{ RB_ALL, QP_ALL, 0, 64, 4, URNIC_FLUSH_LEVEL_RANGE, 0, URNIC_WC_LOC_QP_OP_ERR },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct env v;
		struct fab_send_wr w;

		env_open(&v, cases[i].rb_access, cases[i].qp_access, 20 + i);
		w = flush(&v, cases[i].off, cases[i].len, cases[i].type, cases[i].level);
		w.rkey ^= cases[i].rkey_flip;
		CHECK_EQ(run_one(&v, &w).status, cases[i].status);
		if (cases[i].status == URNIC_WC_LOC_QP_OP_ERR)
			CHECK_EQ(count_from(v.p.f, 0, URNIC_OP_RC_FLUSH, 0), 0);
		env_close(&v);
	}
}

/* The responder's FETH checks, against a request made on the wire: a reserved
 * selectivity level is NAK invalid request. */
static void mutate_feth_sel(uint8_t *buf, uint32_t len, void *arg)
{
	(void)len;
	(void)arg;
	buf[URNIC_BTH_BYTES + 3] |= 0x20; /* SEL 2 (reserved) */
}

static void test_flush_reserved_level_on_the_wire(void)
{
	struct env v;
	struct fab_send_wr w;

	env_open(&v, RB_ALL, QP_ALL, 30);
	fab_add_rule(v.p.f, &(struct fab_rule){ .match = FAB_M_OPCODE,
						.opcode = URNIC_OP_RC_FLUSH,
						.action = FAB_MUTATE,
						.mutate = mutate_feth_sel });
	w = flush(&v, 0, 64, URNIC_FLUSH_GLOBAL, URNIC_FLUSH_LEVEL_RANGE);
	CHECK_EQ(run_one(&v, &w).status, URNIC_WC_REM_INV_REQ_ERR);
	env_close(&v);
}

int main(void)
{
	RUN(test_atomic_write_stores_8_bytes);
	RUN(test_atomic_write_errors);
	RUN(test_atomic_write_retry_is_not_reexecuted);
	RUN(test_flush);
	RUN(test_flush_errors);
	RUN(test_flush_reserved_level_on_the_wire);
	return 0;
}
