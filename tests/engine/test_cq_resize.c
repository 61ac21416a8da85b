/* SPDX-License-Identifier: MIT */
/*
 * test_cq_resize.c - a completion queue resized while completions wait in it
 * (urnic_cq_resize, behind ibv_resize_cq(3)).
 *
 * The completions not yet polled move to the new ring in order, wherever the ring's
 * free-running indices stand; a size below their number is -EINVAL and changes
 * nothing; after growing, more completions than the old capacity arrive without an
 * overrun (IBTA 11.4.2.1 would put the QP in error); a CQ shrinks down to what it holds.
 * Out of scope: the verbs wrapper's locking and errno (tests/verbs/test_errno.c).
 */
#include <errno.h>
#include <string.h>

#include "fabric.h"

enum { LEN = 64, OLD_CQE = 4, NEW_CQE = 64, MORE = 40 };

/* Pushes n receive completions with wr_ids from id on. */
static void push(struct urnic_cq *cq, uint64_t id, int n)
{
	for (int i = 0; i < n; i++) {
		struct urnic_cqe c = { .wr_id = id + (uint64_t)i,
				       .status = URNIC_WC_SUCCESS,
				       .opcode = URNIC_WC_RECV };

		CHECK(urnic_cq_push(cq, &c, false));
	}
}

static void expect_ids(struct urnic_cq *cq, uint64_t id, int n)
{
	struct urnic_cqe c;

	for (int i = 0; i < n; i++) {
		CHECK_EQ(urnic_cq_poll(cq, &c, 1), 1);
		CHECK_EQ(c.wr_id, id + (uint64_t)i);
	}
	CHECK_EQ(urnic_cq_poll(cq, &c, 1), 0);
}

static void ring_keeps_order_across_wrapped_indices(void)
{
	struct urnic_cq cq;

	CHECK_EQ(urnic_cq_init(&cq, OLD_CQE), 0);
	/* Move the indices round the ring a few times, then leave 3 unpolled that
	 * straddle the old ring's end. */
	for (int i = 0; i < 5; i++) {
		push(&cq, 1000, 3);
		expect_ids(&cq, 1000, 3);
	}
	push(&cq, 1, 3);
	CHECK_EQ(urnic_cq_resize(&cq, 2), -EINVAL);
	CHECK_EQ(cq.cqe, OLD_CQE);
	CHECK_EQ(urnic_cq_resize(&cq, NEW_CQE), 0);
	CHECK_EQ(cq.cqe, NEW_CQE);
	push(&cq, 4, NEW_CQE - 3);
	CHECK(!urnic_cq_has_room(&cq));
	expect_ids(&cq, 1, NEW_CQE);
	/* Shrink to exactly what it holds. */
	push(&cq, 100, 3);
	CHECK_EQ(urnic_cq_resize(&cq, 3), 0);
	CHECK(!urnic_cq_has_room(&cq));
	expect_ids(&cq, 100, 3);
	urnic_cq_fini(&cq);
}

/* Over the fabric: 3 SENDs wait in a receive CQ of 4, it grows to 64, 40 more arrive
 * (10 times the old capacity) and the QP stays in RTS. */
static void grown_cq_takes_traffic_past_its_old_size(void)
{
	struct fab_pair p;
	struct fab_conn c = fab_conn_default();
	struct fab_buf la, ra;
	struct urnic_cqe sc[MORE];

	fab_pair_open(&p, &c, 21);
	fab_buf_new(p.f, &la, 0, &p.pd[0], 4096, FAB_ALL_ACCESS);
	fab_buf_new(p.f, &ra, 1, &p.pd[1], 4096, FAB_ALL_ACCESS);
	urnic_cq_fini(&p.b->rcq);
	CHECK_EQ(urnic_cq_init(&p.b->rcq, OLD_CQE), 0);
	for (int round = 0; round < 2; round++) {
		int n = round ? MORE : 3;

		for (int i = 0; i < n; i++) {
			uint64_t id = (uint64_t)(round * 100 + i);
			struct urnic_sge rs = fab_sge(ra.mr, 0, LEN);

			CHECK_EQ(fab_post_recv(p.b, id, &rs, 1), 0);
			CHECK_EQ(fab_post_send(p.a,
					       &(struct fab_send_wr){
						       .wr_id = id,
						       .opcode = URNIC_WR_SEND,
						       .num_sge = 1,
						       .sge = { fab_sge(la.mr, 0, LEN) } }),
				 0);
		}
		fab_wait_cqes(p.f, &p.a->scq, sc, n);
		fabric_settle(p.f);
		for (int i = 0; i < n; i++)
			CHECK_EQ(sc[i].status, URNIC_WC_SUCCESS);
		if (!round) {
			CHECK_EQ(urnic_cq_resize(&p.b->rcq, 2), -EINVAL);
			CHECK_EQ(urnic_cq_resize(&p.b->rcq, NEW_CQE), 0);
		}
	}
	CHECK_EQ(fab_ctr(p.f, 1, URNIC_CTR_cq_overflow), 0);
	CHECK_EQ(p.b->qp.state, URNIC_QPS_RTS);
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < (round ? MORE : 3); i++) {
			struct urnic_cqe rc;

			CHECK_EQ(fab_poll(&p.b->rcq, &rc, 1), 1);
			CHECK_CQE(rc, (uint64_t)(round * 100 + i), URNIC_WC_SUCCESS, URNIC_WC_RECV,
				  LEN);
		}
	}
	fab_buf_free(p.f, &la);
	fab_buf_free(p.f, &ra);
	fab_pair_close(&p);
}

int main(void)
{
	RUN(ring_keeps_order_across_wrapped_indices);
	RUN(grown_cq_takes_traffic_past_its_old_size);
	return 0;
}
