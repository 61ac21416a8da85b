/* SPDX-License-Identifier: MIT */
/*
 * test_local_errors.c - errors of the local application (IBTA 10.8.3.1, 9.7.5.1.6).
 *
 * Send side: an SGE whose L_Key does not resolve (bad key, other PD, out of bounds, or
 * a READ/atomic landing in a region without LOCAL_WRITE) completes IBV_WC_LOC_PROT_ERR
 * (4) without a packet on the wire; a malformed atomic (misaligned, not 8 bytes) is
 * IBV_WC_LOC_QP_OP_ERR (2). Either way the QP goes to error and the rest is flushed.
 * Receive side: a SEND longer than the receive buffer completes the receive with
 * IBV_WC_LOC_LEN_ERR (1) and NAKs invalid request, so the sender gets
 * IBV_WC_REM_INV_REQ_ERR (9); a receive SGE that does not resolve completes
 * IBV_WC_LOC_PROT_ERR at the responder and NAK remote operational error at the sender
 * (IBV_WC_REM_OP_ERR, 11).
 */
#include <string.h>

#include "fabric.h"

struct env {
	struct fab_pair p;
	struct fab_buf la, ra;
	struct urnic_pd other_pd;
};

static void env_open(struct env *v, uint64_t seed)
{
	struct fab_conn c = fab_conn_default();

	fab_pair_open(&v->p, &c, seed);
	fab_buf_new(v->p.f, &v->la, 0, &v->p.pd[0], 65536, FAB_ALL_ACCESS);
	fab_buf_new(v->p.f, &v->ra, 1, &v->p.pd[1], 65536, FAB_ALL_ACCESS);
	fab_fill(v->la.p, 65536, (uint32_t)seed);
	v->other_pd.handle = 9;
}

static void env_close(struct env *v)
{
	fab_buf_free(v->p.f, &v->la);
	fab_buf_free(v->p.f, &v->ra);
	fab_pair_close(&v->p);
}

static uint32_t packets_from(struct fabric *f, int host)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < f->ntrace; i++)
		n += f->trace[i].src == host;
	return n;
}

/* Posts wr then a good SEND behind it; expects wr to fail with status locally. */
static void expect_local(struct env *v, const struct fab_send_wr *wr, uint8_t status)
{
	struct urnic_cqe sc[2];

	CHECK_EQ(fab_post_send(v->p.a, wr), 0);
	CHECK_EQ(
		fab_post_send(v->p.a, &(struct fab_send_wr){ .wr_id = 99,
							     .opcode = URNIC_WR_SEND,
							     .num_sge = 1,
							     .sge = { fab_sge(v->la.mr, 0, 10) } }),
		0);
	fab_wait_cqes(v->p.f, &v->p.a->scq, sc, 2);
	fabric_settle(v->p.f);
	CHECK_EQ(sc[0].wr_id, wr->wr_id);
	CHECK_EQ(sc[0].status, status);
	CHECK_EQ(sc[1].wr_id, 99);
	CHECK_EQ(sc[1].status, URNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(v->p.a->qp.state, URNIC_QPS_ERR);
	CHECK_EQ(v->p.b->qp.state, URNIC_QPS_RTS);
	CHECK_EQ(packets_from(v->p.f, 0), 0); /* nothing went on the wire */
	CHECK_EQ(fab_poll(&v->p.a->scq, sc, 1), 0);
}

static void test_bad_lkey_is_loc_prot_err(void)
{
	struct env v;
	struct fab_send_wr wr = { .wr_id = 1, .opcode = URNIC_WR_SEND, .num_sge = 2 };

	env_open(&v, 1);
	wr.sge[0] = fab_sge(v.la.mr, 0, 100);
	wr.sge[1] = fab_sge(v.la.mr, 100, 100);
	wr.sge[1].lkey ^= 0x5a; /* the second SGE is the bad one */
	expect_local(&v, &wr, URNIC_WC_LOC_PROT_ERR);
	env_close(&v);
}

static void test_sge_out_of_bounds_is_loc_prot_err(void)
{
	struct env v;

	env_open(&v, 2);
	expect_local(&v,
		     &(struct fab_send_wr){ .wr_id = 2,
					    .opcode = URNIC_WR_RDMA_WRITE,
					    .remote_addr = v.ra.mr->iova,
					    .rkey = v.ra.mr->key,
					    .num_sge = 1,
					    .sge = { fab_sge(v.la.mr, 65000, 1000) } },
		     URNIC_WC_LOC_PROT_ERR);
	env_close(&v);
}

static void test_sge_of_other_pd_is_loc_prot_err(void)
{
	struct env v;
	struct urnic_mr *mr;

	env_open(&v, 3);
	mr = fab_reg(v.p.f, 0, &v.other_pd, v.la.p, 4096, FAB_ALL_ACCESS);
	expect_local(&v,
		     &(struct fab_send_wr){ .wr_id = 3,
					    .opcode = URNIC_WR_SEND,
					    .num_sge = 1,
					    .sge = { fab_sge(mr, 0, 100) } },
		     URNIC_WC_LOC_PROT_ERR);
	fab_dereg(v.p.f, 0, mr);
	env_close(&v);
}

/* READ data and atomic results are written locally: the region needs LOCAL_WRITE. */
static void test_read_into_readonly_region_is_loc_prot_err(void)
{
	struct env v;
	struct urnic_mr *ro;

	env_open(&v, 4);
	ro = fab_reg(v.p.f, 0, &v.p.pd[0], v.la.p + 8192, 4096, URNIC_ACCESS_REMOTE_READ);
	expect_local(&v,
		     &(struct fab_send_wr){ .wr_id = 4,
					    .opcode = URNIC_WR_RDMA_READ,
					    .remote_addr = v.ra.mr->iova,
					    .rkey = v.ra.mr->key,
					    .num_sge = 1,
					    .sge = { fab_sge(ro, 0, 100) } },
		     URNIC_WC_LOC_PROT_ERR);
	fab_dereg(v.p.f, 0, ro);
	env_close(&v);

	env_open(&v, 5);
	ro = fab_reg(v.p.f, 0, &v.p.pd[0], v.la.p + 8192, 4096, 0);
	expect_local(&v,
		     &(struct fab_send_wr){ .wr_id = 5,
					    .opcode = URNIC_WR_ATOMIC_FETCH_AND_ADD,
					    .remote_addr = v.ra.mr->iova,
					    .rkey = v.ra.mr->key,
					    .num_sge = 1,
					    .sge = { fab_sge(ro, 0, 8) } },
		     URNIC_WC_LOC_PROT_ERR);
	fab_dereg(v.p.f, 0, ro);
	env_close(&v);
}

/* A SEND may gather from a region without LOCAL_WRITE: reading needs no right. */
static void test_send_from_readonly_region_is_fine(void)
{
	struct env v;
	struct urnic_mr *ro;
	struct urnic_cqe sc, rc;
	struct urnic_sge rs;

	env_open(&v, 6);
	ro = fab_reg(v.p.f, 0, &v.p.pd[0], v.la.p + 8192, 4096, 0);
	rs = fab_sge(v.ra.mr, 0, 4096);
	CHECK_EQ(fab_post_recv(v.p.b, 1, &rs, 1), 0);
	CHECK_EQ(fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 6,
							     .opcode = URNIC_WR_SEND,
							     .num_sge = 1,
							     .sge = { fab_sge(ro, 0, 4096) } }),
		 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, &rc, 1);
	CHECK_CQE(sc, 6, URNIC_WC_SUCCESS, URNIC_WC_SEND, 4096);
	CHECK(memcmp(v.ra.p, v.la.p + 8192, 4096) == 0);
	fabric_settle(v.p.f);
	fab_dereg(v.p.f, 0, ro);
	env_close(&v);
}

static void test_malformed_atomic_is_loc_qp_op_err(void)
{
	struct env v;

	env_open(&v, 7);
	/* IBTA 9.4.5: 8 bytes at an 8-byte aligned address. */
	expect_local(&v,
		     &(struct fab_send_wr){ .wr_id = 7,
					    .opcode = URNIC_WR_ATOMIC_CMP_AND_SWP,
					    .remote_addr = v.ra.mr->iova + 4,
					    .rkey = v.ra.mr->key,
					    .num_sge = 1,
					    .sge = { fab_sge(v.la.mr, 0, 8) } },
		     URNIC_WC_LOC_QP_OP_ERR);
	env_close(&v);
	env_open(&v, 8);
	expect_local(&v,
		     &(struct fab_send_wr){ .wr_id = 8,
					    .opcode = URNIC_WR_ATOMIC_FETCH_AND_ADD,
					    .remote_addr = v.ra.mr->iova,
					    .rkey = v.ra.mr->key,
					    .num_sge = 1,
					    .sge = { fab_sge(v.la.mr, 0, 4) } },
		     URNIC_WC_LOC_QP_OP_ERR);
	env_close(&v);
}

/* Opcodes the RC requester does not carry out (here IBV_WR_TSO, 10, a raw packet QP's)
 * complete LOC_QP_OP_ERR. (A bind of no window is MW_BIND_ERR: test_mw.c.) */
static void test_unsupported_opcode_is_loc_qp_op_err(void)
{
	struct env v;

	env_open(&v, 9);
	expect_local(&v, &(struct fab_send_wr){ .wr_id = 9, .opcode = 10 }, URNIC_WC_LOC_QP_OP_ERR);
	env_close(&v);
}

/* A SEND longer than the receive buffer: LOC_LEN_ERR at the responder, NAK invalid
 * request, REM_INV_REQ_ERR at the requester; bytes past the buffer untouched. */
static void test_receive_buffer_too_small(void)
{
	struct env v;
	struct urnic_cqe sc[2], rc;
	struct urnic_sge rs;
	uint8_t before[4096];

	env_open(&v, 10);
	memcpy(before, v.ra.p, sizeof(before));
	rs = fab_sge(v.ra.mr, 0, 1500);
	CHECK_EQ(fab_post_recv(v.p.b, 1, &rs, 1), 0);
	CHECK_EQ(fab_post_recv(v.p.b, 2, &rs, 1), 0);
	CHECK_EQ(
		fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 10,
							    .opcode = URNIC_WR_SEND,
							    .num_sge = 1,
							    .sge = { fab_sge(v.la.mr, 0, 3000) } }),
		0);
	CHECK_EQ(fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 11,
							     .opcode = URNIC_WR_SEND,
							     .num_sge = 1,
							     .sge = { fab_sge(v.la.mr, 0, 10) } }),
		 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 2);
	fabric_settle(v.p.f);
	CHECK_EQ(sc[0].wr_id, 10);
	CHECK_EQ(sc[0].status, URNIC_WC_REM_INV_REQ_ERR);
	CHECK_EQ(sc[1].wr_id, 11);
	CHECK_EQ(sc[1].status, URNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(fab_poll(&v.p.b->rcq, &rc, 1), 1);
	CHECK_EQ(rc.wr_id, 1);
	CHECK_EQ(rc.status, URNIC_WC_LOC_LEN_ERR);
	CHECK_EQ(rc.status, 1);
	CHECK_EQ(fab_poll(&v.p.b->rcq, &rc, 1), 1);
	CHECK_EQ(rc.wr_id, 2);
	CHECK_EQ(rc.status, URNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(v.p.a->qp.state, URNIC_QPS_ERR);
	CHECK_EQ(v.p.b->qp.state, URNIC_QPS_ERR);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_nak_inv_req_sent), 1);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_nak_inv_req_rcvd), 1);
	/* The first packet fit and was placed; nothing past the 1500-byte buffer. */
	CHECK(memcmp(v.ra.p + 1500, before + 1500, sizeof(before) - 1500) == 0);
	env_close(&v);
}

/* A receive SGE that does not resolve: the responder's own protection error. */
static void test_receive_sge_bad_lkey(void)
{
	struct env v;
	struct urnic_cqe sc, rc;
	struct urnic_sge rs;

	env_open(&v, 11);
	rs = fab_sge(v.ra.mr, 0, 1000);
	rs.lkey ^= 0x11;
	CHECK_EQ(fab_post_recv(v.p.b, 1, &rs, 1), 0);
	CHECK_EQ(fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 12,
							     .opcode = URNIC_WR_SEND,
							     .num_sge = 1,
							     .sge = { fab_sge(v.la.mr, 0, 100) } }),
		 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	fabric_settle(v.p.f);
	CHECK_EQ(sc.wr_id, 12);
	CHECK_EQ(sc.status, URNIC_WC_REM_OP_ERR);
	CHECK_EQ(fab_poll(&v.p.b->rcq, &rc, 1), 1);
	CHECK_EQ(rc.wr_id, 1);
	CHECK_EQ(rc.status, URNIC_WC_LOC_PROT_ERR);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_nak_rem_op_sent), 1);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_nak_rem_op_rcvd), 1);
	CHECK_EQ(v.p.b->qp.state, URNIC_QPS_ERR);
	env_close(&v);
}

/* ibv_post_send's own checks (as src/verbs/post.c): too many SGEs, too much inline,
 * a full queue, a QP not in RTS. */
static void test_post_checks(void)
{
	struct env v;
	struct fab_send_wr wr = { .opcode = URNIC_WR_RDMA_WRITE }; /* zero bytes: no receive */
	int posted = 0;

	env_open(&v, 12);
	wr.num_sge = URNIC_MAX_SGE + 1;
	CHECK_EQ(fab_post_send(v.p.a, &wr), 22);
	wr.num_sge = 0;
	/* Fill the SQ (depth 1024) without running the engine. */
	while (fab_post_send(v.p.a, &wr) == 0)
		posted++;
	CHECK_EQ(posted, 1024);
	CHECK_EQ(fab_post_send(v.p.a, &wr), 12 /* ENOMEM */);
	fabric_settle(v.p.f);
	CHECK_EQ(fab_post_send(v.p.a, &wr), 0);
	fabric_settle(v.p.f);
	{
		struct urnic_qp_attr a = v.p.a->qp.attr;

		CHECK_EQ(fab_modify(v.p.a, &a, URNIC_QPS_RESET, URNIC_QP_STATE), 0);
		CHECK_EQ(fab_post_send(v.p.a, &wr), 22);
		CHECK_EQ(fab_post_recv(v.p.a, 1, NULL, 0), 22);
	}
	env_close(&v);
}

int main(void)
{
	RUN(test_bad_lkey_is_loc_prot_err);
	RUN(test_sge_out_of_bounds_is_loc_prot_err);
	RUN(test_sge_of_other_pd_is_loc_prot_err);
	RUN(test_read_into_readonly_region_is_loc_prot_err);
	RUN(test_send_from_readonly_region_is_fine);
	RUN(test_malformed_atomic_is_loc_qp_op_err);
	RUN(test_unsupported_opcode_is_loc_qp_op_err);
	RUN(test_receive_buffer_too_small);
	RUN(test_receive_sge_bad_lkey);
	RUN(test_post_checks);
	return 0;
}
