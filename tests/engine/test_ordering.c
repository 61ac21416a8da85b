/* SPDX-License-Identifier: MIT */
/*
 * test_ordering.c - the order RC keeps between requests, on a clean fabric.
 *
 * The responder answers in PSN order, a READ's response before the ACKs of the SENDs
 * and atomic behind it (IBTA 9.7.5.1.1); a fenced WRITE waits for the READ before it
 * (10.8.3.3); with max_rd_atomic = 1 READs and atomics go one at a time while SENDs
 * flow. Not here: order under loss (test_loss.c), the responder's READ/atomic resource
 * limit (test_resources.c).
 */
#include <string.h>

#include "ops_common.h"

/* A READ followed at once by SENDs and an atomic: the responder must answer in PSN
 * order (READ response before the later ACKs, IBTA 9.7.5.1.1), so nothing is retried. */
static void test_read_then_send_in_order(void)
{
	struct env v;
	struct urnic_cqe sc[4], rc[2];
	struct urnic_sge rs[2];

	env_open(&v, 1024);
	rs[0] = fab_sge(v.ra.mr, 6000, 1000);
	rs[1] = fab_sge(v.ra.mr, 7000, 1000);
	CHECK_EQ(fab_post_recv(v.p.b, 80, &rs[0], 1), 0);
	CHECK_EQ(fab_post_recv(v.p.b, 81, &rs[1], 1), 0);
	CHECK_EQ(
		fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 1,
							    .opcode = URNIC_WR_RDMA_READ,
							    .remote_addr = v.ra.mr->iova,
							    .rkey = v.ra.mr->key,
							    .num_sge = 1,
							    .sge = { fab_sge(v.la.mr, 0, 4000) } }),
		0);
	CHECK_EQ(fab_post_send(v.p.a,
			       &(struct fab_send_wr){ .wr_id = 2,
						      .opcode = URNIC_WR_SEND,
						      .num_sge = 1,
						      .sge = { fab_sge(v.la.mr, 5000, 10) } }),
		 0);
	CHECK_EQ(
		fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 3,
							    .opcode = URNIC_WR_ATOMIC_FETCH_AND_ADD,
							    .remote_addr = v.ra.mr->iova + 5000,
							    .rkey = v.ra.mr->key,
							    .compare_add = 1,
							    .num_sge = 1,
							    .sge = { fab_sge(v.la.mr, 5100, 8) } }),
		0);
	CHECK_EQ(fab_post_send(v.p.a,
			       &(struct fab_send_wr){ .wr_id = 4,
						      .opcode = URNIC_WR_SEND,
						      .num_sge = 1,
						      .sge = { fab_sge(v.la.mr, 5200, 10) } }),
		 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 4);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, rc, 2);
	fabric_settle(v.p.f);
	CHECK_CQE(sc[0], 1, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 4000);
	CHECK_CQE(sc[1], 2, URNIC_WC_SUCCESS, URNIC_WC_SEND, 10);
	CHECK_CQE(sc[2], 3, URNIC_WC_SUCCESS, URNIC_WC_FETCH_ADD, 8);
	CHECK_CQE(sc[3], 4, URNIC_WC_SUCCESS, URNIC_WC_SEND, 10);
	CHECK_CQE(rc[0], 80, URNIC_WC_SUCCESS, URNIC_WC_RECV, 10);
	CHECK_CQE(rc[1], 81, URNIC_WC_SUCCESS, URNIC_WC_RECV, 10);
	/* Responses left host 1 in PSN order. */
	{
		uint32_t last = 0;
		bool any = false;

		for (uint32_t i = 0; i < v.p.f->ntrace; i++) {
			const struct fab_pktinfo *pi = &v.p.f->trace[i];

			if (pi->src != 1)
				continue;
			if (any)
				CHECK(!urnic_psn_before(pi->psn, last));
			last = pi->psn;
			any = true;
		}
	}
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_atomic_executed), 1);
	env_close(&v);
}

/* A READ then a fenced WRITE to the same remote bytes: the WRITE waits until the READ
 * completed (IBTA 10.8.3.3), so the READ returns the old contents. */
static void test_fence_orders_write_after_read(void)
{
	struct env v;
	struct urnic_cqe sc[2];
	uint8_t old[4096];
	uint32_t read_req = 0, write_first = 0, last_resp = 0;

	env_open(&v, 1024);
	memcpy(old, v.ra.p, sizeof(old));
	CHECK_EQ(fab_post_send(v.p.a,
			       &(struct fab_send_wr){ .wr_id = 1,
						      .opcode = URNIC_WR_RDMA_READ,
						      .remote_addr = v.ra.mr->iova,
						      .rkey = v.ra.mr->key,
						      .num_sge = 1,
						      .sge = { fab_sge(v.la.mr, 4096, 4096) } }),
		 0);
	CHECK_EQ(
		fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 2,
							    .opcode = URNIC_WR_RDMA_WRITE,
							    .flags = URNIC_SEND_FENCE,
							    .remote_addr = v.ra.mr->iova,
							    .rkey = v.ra.mr->key,
							    .num_sge = 1,
							    .sge = { fab_sge(v.la.mr, 0, 4096) } }),
		0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 2);
	fabric_settle(v.p.f);
	CHECK_CQE(sc[0], 1, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 4096);
	CHECK_CQE(sc[1], 2, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 4096);
	CHECK(memcmp(v.la.p + 4096, old, 4096) == 0);
	CHECK(memcmp(v.ra.p, v.la.p, 4096) == 0);
	/* On the wire: the WRITE left after the last READ response came back. */
	for (uint32_t i = 0; i < v.p.f->ntrace; i++) {
		const struct fab_pktinfo *pi = &v.p.f->trace[i];

		if (pi->src == 0 && pi->opcode == URNIC_OP_RC_RDMA_READ_REQUEST)
			read_req = i + 1;
		if (pi->src == 1 && pi->opcode == URNIC_OP_RC_RDMA_READ_RESPONSE_LAST)
			last_resp = i + 1;
		if (pi->src == 0 && pi->opcode == URNIC_OP_RC_RDMA_WRITE_FIRST && !write_first)
			write_first = i + 1;
	}
	CHECK(read_req && last_resp && write_first);
	CHECK(read_req < last_resp && last_resp < write_first);
	env_close(&v);
}

/* max_rd_atomic = 1: READs and atomics go one at a time, the SENDs between them flow;
 * everything completes in order. */
static void test_rd_atomic_depth_one(void)
{
	struct fab_conn c = fab_conn_default();
	struct fab_pair p;
	struct fab_buf la, ra;
	struct urnic_cqe sc[24], rc[8];
	uint32_t outstanding = 0, most = 0;

	c.max_rd_atomic = 1;
	c.max_dest_rd_atomic = 1;
	fab_pair_open(&p, &c, 5);
	fab_buf_new(p.f, &la, 0, &p.pd[0], 65536, FAB_ALL_ACCESS);
	fab_buf_new(p.f, &ra, 1, &p.pd[1], 65536, FAB_ALL_ACCESS);
	fab_fill(ra.p, 65536, 8);
	for (int i = 0; i < 8; i++) {
		struct urnic_sge rs = fab_sge(ra.mr, 44000 + 1500 * (uint64_t)i, 1500);

		CHECK_EQ(fab_post_recv(p.b, (uint64_t)i, &rs, 1), 0);
	}
	for (int i = 0; i < 24; i++) {
		uint32_t op = i % 3 == 0   ? URNIC_WR_RDMA_READ
			      : i % 3 == 1 ? URNIC_WR_ATOMIC_FETCH_AND_ADD
					   : URNIC_WR_SEND;

		CHECK_EQ(fab_post_send(
				 p.a,
				 &(struct fab_send_wr){
					 .wr_id = (uint64_t)i,
					 .opcode = op,
					 .remote_addr = ra.mr->iova + (op == URNIC_WR_RDMA_READ
									       ? 2000 * (uint64_t)i
									       : 64000),
					 .rkey = ra.mr->key,
					 .compare_add = 1,
					 .num_sge = 1,
					 .sge = { fab_sge(la.mr, 2000 * (uint64_t)i,
							  op == URNIC_WR_ATOMIC_FETCH_AND_ADD
								  ? 8
								  : 1500) } }),
			 0);
	}
	fab_wait_cqes(p.f, &p.a->scq, sc, 24);
	fab_wait_cqes(p.f, &p.b->rcq, rc, 8);
	fabric_settle(p.f);
	for (int i = 0; i < 24; i++) {
		CHECK_EQ(sc[i].wr_id, (uint64_t)i);
		CHECK_EQ(sc[i].status, URNIC_WC_SUCCESS);
		if (i % 3 == 0)
			CHECK(memcmp(la.p + 2000 * i, ra.p + 2000 * i, 1500) == 0);
	}
	/* Never two READ/atomic requests out at once. */
	for (uint32_t i = 0; i < p.f->ntrace; i++) {
		const struct fab_pktinfo *pi = &p.f->trace[i];

		if (pi->src == 0 && (pi->opcode == URNIC_OP_RC_RDMA_READ_REQUEST ||
				     pi->opcode == URNIC_OP_RC_FETCH_ADD))
			outstanding++;
		if (pi->src == 1 && (pi->opcode == URNIC_OP_RC_RDMA_READ_RESPONSE_LAST ||
				     pi->opcode == URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY ||
				     pi->opcode == URNIC_OP_RC_ATOMIC_ACKNOWLEDGE))
			outstanding--;
		if (outstanding > most)
			most = outstanding;
	}
	CHECK_EQ(most, 1);
	CHECK_EQ(fab_ctr(p.f, 0, URNIC_CTR_retransmit_pkts), 0);
	fab_buf_free(p.f, &la);
	fab_buf_free(p.f, &ra);
	fab_pair_close(&p);
}

int main(void)
{
	RUN(test_read_then_send_in_order);
	RUN(test_fence_orders_write_after_read);
	RUN(test_rd_atomic_depth_one);
	return 0;
}
