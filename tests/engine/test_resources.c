/* SPDX-License-Identifier: MIT */
/*
 * test_resources.c - the responder's READ/atomic resources are bounded, and a requester
 * that exceeds them is refused (IBTA 9.7.5.1.3: the requester must not have more READ
 * and atomic requests outstanding than the responder's max_dest_rd_atomic).
 *
 * Host a's requester is allowed 4 outstanding READ/atomics, host b's responder grants 1.
 * Two READs arrive together: the first is executed, the second finds the only resource
 * still sending the first's response and is answered NAK Invalid Request; b's QP goes to
 * error, counted as refused_rd_atomic, and a's READs complete in error. Within the grant
 * nothing is refused. One READ draws at most max_msg_sz response bytes (limits.def):
 * a longer one is refused before a byte is sent (refused_read_len), and a's own work
 * requests longer than its max_msg_sz fail locally (IBV_WC_LOC_LEN_ERR).
 */
#include <string.h>

#include "fabric.h"

#define BUF (64 * 1024)

struct env {
	struct fab_pair p;
	struct fab_buf la, ra;
};

static void env_open(struct env *v, uint8_t requester_max, uint8_t responder_max)
{
	struct fab_conn c = fab_conn_default();

	c.max_rd_atomic = requester_max;
	c.max_dest_rd_atomic = responder_max;
	fab_pair_open(&v->p, &c, 5);
	fab_buf_new(v->p.f, &v->la, 0, &v->p.pd[0], BUF, FAB_ALL_ACCESS);
	fab_buf_new(v->p.f, &v->ra, 1, &v->p.pd[1], BUF, FAB_ALL_ACCESS);
	fab_fill(v->ra.p, BUF, 9);
}

static void env_close(struct env *v)
{
	fab_buf_free(v->p.f, &v->la);
	fab_buf_free(v->p.f, &v->ra);
	fab_pair_close(&v->p);
}

static void post_read(struct env *v, uint64_t wr_id, uint64_t off)
{
	CHECK_EQ(fab_post_send(v->p.a,
			       &(struct fab_send_wr){ .wr_id = wr_id,
						      .opcode = URNIC_WR_RDMA_READ,
						      .remote_addr = v->ra.mr->iova + off,
						      .rkey = v->ra.mr->key,
						      .num_sge = 1,
						      .sge = { fab_sge(v->la.mr, off, 4096) } }),
		 0);
}

static void test_reads_beyond_the_grant_get_nak_invalid_request(void)
{
	struct env v;
	struct urnic_cqe c[2];

	env_open(&v, 4, 1);
	post_read(&v, 1, 0);
	post_read(&v, 2, 4096);
	fab_wait_cqes(v.p.f, &v.p.a->scq, c, 2);
	CHECK_EQ(c[0].wr_id, 1);
	CHECK_EQ(c[0].status, URNIC_WC_REM_INV_REQ_ERR);
	CHECK_EQ(c[1].wr_id, 2);
	CHECK_EQ(c[1].status, URNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_refused_rd_atomic), 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_nak_inv_req_sent), 1);
	CHECK_EQ(v.p.b->qp.state, URNIC_QPS_ERR);
	CHECK_EQ(v.p.a->qp.state, URNIC_QPS_ERR);
	env_close(&v);
}

static void test_reads_within_the_grant_all_complete(void)
{
	struct env v;
	struct urnic_cqe c[4];

	env_open(&v, 4, 4);
	for (uint64_t k = 0; k < 4; k++)
		post_read(&v, 10 + k, k * 4096);
	fab_wait_cqes(v.p.f, &v.p.a->scq, c, 4);
	for (int k = 0; k < 4; k++)
		CHECK_CQE(c[k], 10u + (uint64_t)k, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 4096);
	CHECK(memcmp(v.la.p, v.ra.p, 4 * 4096) == 0);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_refused_rd_atomic), 0);
	CHECK_EQ(v.p.b->qp.state, URNIC_QPS_RTS);
	env_close(&v);
}

static void read_of(struct env *v, uint64_t wr_id, uint32_t len)
{
	CHECK_EQ(fab_post_send(v->p.a,
			       &(struct fab_send_wr){ .wr_id = wr_id,
						      .opcode = URNIC_WR_RDMA_READ,
						      .remote_addr = v->ra.mr->iova,
						      .rkey = v->ra.mr->key,
						      .num_sge = 1,
						      .sge = { fab_sge(v->la.mr, 0, len) } }),
		 0);
}

/* b allows messages of 8 KiB: a READ of 8 KiB is answered, one of 8 KiB + 1 is NAKed
 * invalid request without a response byte (IBTA C9-94). */
static void test_read_longer_than_max_msg_is_refused(void)
{
	struct env v;
	struct urnic_cqe c;

	env_open(&v, 4, 4);
	fab_engine(v.p.f, 1)->cfg.max_msg_bytes = 8192;
	read_of(&v, 1, 8192);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	CHECK_CQE(c, 1, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 8192);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_read_resp_sent), 8);
	read_of(&v, 2, 8193);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	CHECK_EQ(c.wr_id, 2);
	CHECK_EQ(c.status, URNIC_WC_REM_INV_REQ_ERR);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_refused_read_len), 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_read_resp_sent), 8);
	CHECK_EQ(v.p.b->qp.state, URNIC_QPS_ERR);
	env_close(&v);
}

/* a's own limit: a READ work request longer than it completes with LOC_LEN_ERR and
 * sends nothing. */
static void test_work_request_longer_than_max_msg_fails_locally(void)
{
	struct env v;
	struct urnic_cqe c;

	env_open(&v, 4, 4);
	fab_engine(v.p.f, 0)->cfg.max_msg_bytes = 4096;
	read_of(&v, 3, 4097);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	CHECK_EQ(c.wr_id, 3);
	CHECK_EQ(c.status, URNIC_WC_LOC_LEN_ERR);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_tx_packets), 0);
	env_close(&v);
}

int main(void)
{
	RUN(test_reads_beyond_the_grant_get_nak_invalid_request);
	RUN(test_reads_within_the_grant_all_complete);
	RUN(test_read_longer_than_max_msg_is_refused);
	RUN(test_work_request_longer_than_max_msg_fails_locally);
	return 0;
}
