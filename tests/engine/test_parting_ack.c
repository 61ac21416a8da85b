/* SPDX-License-Identifier: MIT */
/*
 * test_parting_ack.c - a QP that goes away sends its last ACK once more
 * (src/engine/roce/responder.c, urnic_rc_parting_ack).
 *
 * RC has no closing handshake. An application that destroys its QP right after its own
 * work completed (ibv_rc_pingpong) leaves a peer whose last request's ACK was lost
 * retrying against nobody, to "transport retry counter exceeded". The parting ACK turns
 * that into a failure only when both copies are lost. It is repeated only when the peer
 * may still be waiting: the last ACK covers everything executed and left within the
 * QP's timeout (IBTA 9.7.6.1.3); a READ answered last, an old ACK or a QP in error
 * send nothing more.
 */
#include <string.h>

#include "fabric.h"

struct env {
	struct fab_pair p;
	struct fab_buf la, ra;
	uint64_t rto;
};

static void env_open(struct env *v, uint8_t timeout)
{
	struct fab_conn c = fab_conn_default();

	c.timeout = timeout;
	fab_pair_open(&v->p, &c, 71);
	fab_buf_new(v->p.f, &v->la, 0, &v->p.pd[0], 8192, FAB_ALL_ACCESS);
	fab_buf_new(v->p.f, &v->ra, 1, &v->p.pd[1], 8192, FAB_ALL_ACCESS);
	fab_fill(v->la.p, 8192, 5);
	fab_fill(v->ra.p, 8192, 6);
	v->rto = urnic_qp_rto_ns(timeout);
}

/* Destroys b's QP (the application at host 1 exits), as ibv_destroy_qp does: at the
 * fabric's time (fab_qp_free). */
static void b_exits(struct env *v)
{
	fab_qp_free(v->p.b);
	v->p.b = NULL;
}

static void env_close(struct env *v)
{
	fab_buf_free(v->p.f, &v->la);
	fab_buf_free(v->p.f, &v->ra);
	fab_qp_free(v->p.a);
	if (v->p.b)
		fab_qp_free(v->p.b);
	fabric_free(v->p.f);
}

static void post(struct env *v, uint64_t wr_id, uint32_t opcode)
{
	CHECK_EQ(fab_post_send(v->p.a,
			       &(struct fab_send_wr){ .wr_id = wr_id,
						      .opcode = opcode,
						      .remote_addr = v->ra.mr->iova,
						      .rkey = v->ra.mr->key,
						      .num_sge = 1,
						      .sge = { fab_sge(v->la.mr, 0, 2000) } }),
		 0);
}

static uint32_t acks_from_b(const struct fabric *f)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < f->ntrace; i++)
		n += f->trace[i].src == 1 && f->trace[i].opcode == URNIC_OP_RC_ACKNOWLEDGE;
	return n;
}

static bool b_executed(struct fabric *f, void *arg)
{
	const struct fab_rule *r = arg;

	(void)f;
	return r->hits == 1;
}

/* The ACK of the last WRITE is lost and the responder's QP goes away right after:
 * the parting ACK completes the WRITE, with no retry. */
static void test_lost_last_ack_repeated(void)
{
	struct env v;
	struct urnic_cqe c;
	struct fab_rule *lost;

	env_open(&v, 14);
	lost = fab_add_rule(v.p.f, &(struct fab_rule){ .match = FAB_M_SRC | FAB_M_OPCODE,
						       .src = 1,
						       .opcode = URNIC_OP_RC_ACKNOWLEDGE,
						       .count = 1,
						       .action = FAB_DROP });
	post(&v, 1, URNIC_WR_RDMA_WRITE);
	CHECK(fabric_run(v.p.f, b_executed, lost, 1000));
	CHECK_EQ(memcmp(v.ra.p, v.la.p, 2000), 0);
	CHECK_EQ(fab_poll(&v.p.a->scq, &c, 1), 0);
	b_exits(&v);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_ack_parting), 1);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	CHECK_EQ(c.wr_id, 1);
	CHECK_EQ(c.status, URNIC_WC_SUCCESS);
	fabric_settle(v.p.f);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retry_timeout), 0);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retransmit_pkts), 0);
	CHECK_EQ(acks_from_b(v.p.f), 2);
	env_close(&v);
}

/* The ACK arrived: the copy is a duplicate the requester takes without a drop. */
static void test_duplicate_is_harmless(void)
{
	struct env v;
	struct urnic_cqe c;

	env_open(&v, 14);
	post(&v, 1, URNIC_WR_RDMA_WRITE);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	CHECK_EQ(c.status, URNIC_WC_SUCCESS);
	fabric_settle(v.p.f);
	b_exits(&v);
	fabric_settle(v.p.f);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_ack_parting), 1);
	CHECK_EQ(acks_from_b(v.p.f), 2);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_ack_rcvd), 2);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_drop_stale_response), 0);
	CHECK_EQ(fab_poll(&v.p.a->scq, &c, 1), 0);
	CHECK_EQ(v.p.a->qp.state, URNIC_QPS_RTS);
	env_close(&v);
}

/* A timeout after the last ACK the peer has had it or retried: nothing is repeated.
 * With timeout 0 the peer never retries: always repeated. */
static void test_only_within_timeout(void)
{
	struct env v;
	struct urnic_cqe c;

	env_open(&v, 14);
	post(&v, 1, URNIC_WR_RDMA_WRITE);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	fabric_settle(v.p.f);
	v.p.f->now_ns += v.rto;
	b_exits(&v);
	fabric_settle(v.p.f);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_ack_parting), 0);
	CHECK_EQ(acks_from_b(v.p.f), 1);
	env_close(&v);

	env_open(&v, 0);
	post(&v, 1, URNIC_WR_RDMA_WRITE);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	fabric_settle(v.p.f);
	v.p.f->now_ns += 60ull * 1000000000ull;
	b_exits(&v);
	fabric_settle(v.p.f);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_ack_parting), 1);
	CHECK_EQ(acks_from_b(v.p.f), 2);
	env_close(&v);
}

/* The last request was a READ (its response is its acknowledgement, and an ACK with
 * its PSN would claim it was answered without data), or the QP was moved to error by
 * its application: no parting ACK. */
static void test_not_after_read_or_error(void)
{
	struct env v;
	struct urnic_cqe c;

	env_open(&v, 14);
	post(&v, 1, URNIC_WR_RDMA_WRITE);
	post(&v, 2, URNIC_WR_RDMA_READ);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	CHECK_EQ(c.wr_id, 2);
	fabric_settle(v.p.f);
	b_exits(&v);
	fabric_settle(v.p.f);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_ack_parting), 0);
	env_close(&v);

	env_open(&v, 14);
	post(&v, 1, URNIC_WR_RDMA_WRITE);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	fabric_settle(v.p.f);
	CHECK_EQ(fab_modify(v.p.b, &(struct urnic_qp_attr){ 0 }, URNIC_QPS_ERR, URNIC_QP_STATE), 0);
	b_exits(&v);
	fabric_settle(v.p.f);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_ack_parting), 0);
	CHECK_EQ(acks_from_b(v.p.f), 1);
	env_close(&v);
}

int main(void)
{
	RUN(test_lost_last_ack_repeated);
	RUN(test_duplicate_is_harmless);
	RUN(test_only_within_timeout);
	RUN(test_not_after_read_or_error);
	return 0;
}
