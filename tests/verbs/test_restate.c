/* SPDX-License-Identifier: MIT */
/*
 * test_restate.c - a QP brought back from the error state, and a region changed under
 * it (ibv_rereg_mr(3)), carry traffic again: what rdma-core's MRTest.test_mr_rereg_*
 * do. Moving a QP to RESET removes the completions it left unpolled (IBTA 10.3.1: the
 * QP starts over; the mlx4/mlx5 providers clean their CQs the same way), so the first
 * poll after the restart sees the new work, not the old flushed one.
 * Two RC QPs of one device (URNIC_ADDR, 127.0.5.2) talk to each other.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "check.h"
#include "verbs_open.h"
#include "verbs_loop.h"

enum { MSG = 64 };

static struct ibv_context *ctx;

struct end {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t buf[4096];
};

static void set_state(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };

	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
}

static void open_end(struct end *e)
{
	e->pd = ibv_alloc_pd(ctx);
	CHECK(e->pd);
	e->cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	CHECK(e->cq);
	e->qp = loop_new_rc(e->pd, e->cq);
	e->mr = ibv_reg_mr(e->pd, e->buf, sizeof(e->buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(e->mr);
}

static void close_end(struct end *e)
{
	CHECK_EQ(ibv_destroy_qp(e->qp), 0);
	CHECK_EQ(ibv_dereg_mr(e->mr), 0);
	CHECK_EQ(ibv_destroy_cq(e->cq), 0);
	CHECK_EQ(ibv_dealloc_pd(e->pd), 0);
}

static void connect_ends(struct end *a, struct end *b)
{
	loop_connect(a->qp, b->qp->qp_num);
	loop_connect(b->qp, a->qp->qp_num);
}

/* No completion shows up within 20 ms. */
static void check_empty(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	for (int i = 0; i < 20; i++) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n)
			fprintf(stderr, "unexpected completion: qp %u status %d opcode %d\n",
				wc.qp_num, wc.status, wc.opcode);
		CHECK_EQ(n, 0);
		usleep(1000);
	}
}

static void post_recv(struct ibv_qp *qp, void *addr, uint32_t lkey, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)addr, MSG, lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	CHECK_EQ(ibv_post_recv(qp, &wr, &bad), 0);
}

static void post_send(struct end *e, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)e->buf, MSG, e->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	CHECK_EQ(ibv_post_send(e->qp, &wr, &bad), 0);
}

/* The restart of rdma-core's MRTest.restate_qps: both QPs to RESET, then to RTS. */
static void restate(struct end *a, struct end *b)
{
	set_state(a->qp, IBV_QPS_RESET);
	set_state(b->qp, IBV_QPS_RESET);
	connect_ends(a, b);
}

/* a sends a message b receives at addr/lkey: both complete well, the bytes arrive. */
static void send_ok(struct end *a, struct end *b, uint8_t *addr, uint32_t lkey, uint8_t fill)
{
	struct ibv_wc wc;

	memset(a->buf, fill, MSG);
	memset(addr, 0, MSG);
	post_recv(b->qp, addr, lkey, 7);
	post_send(a, 8);
	wc = loop_next_wc(a->cq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, 8);
	wc = loop_next_wc(b->cq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, 7);
	CHECK_EQ(wc.opcode, IBV_WC_RECV);
	for (int i = 0; i < MSG; i++)
		CHECK_EQ(addr[i], fill);
}

/* A send that b's receive cannot take (its SGE names memory its region no longer
 * grants): the sender sees a remote operation error, b a local protection error, and
 * both QPs are in error with their other receives flushed and not polled. */
static void send_fails(struct end *a, struct end *b, uint8_t *addr, uint32_t lkey)
{
	struct ibv_wc wc;

	post_recv(b->qp, addr, lkey, 1);
	post_recv(b->qp, b->buf, b->mr->lkey, 2);
	post_recv(a->qp, a->buf, a->mr->lkey, 3);
	post_send(a, 4);
	wc = loop_next_wc(a->cq);
	CHECK_EQ(wc.wr_id, 4);
	CHECK_EQ(wc.status, IBV_WC_REM_OP_ERR);
	wc = loop_next_wc(b->cq);
	CHECK_EQ(wc.wr_id, 1);
	CHECK_EQ(wc.status, IBV_WC_LOC_PROT_ERR);
	usleep(20000); /* the flushes of wr 2 and 3 are in the CQs, unpolled */
}

/* A QP taken to RESET leaves none of its completions behind; those of another QP on
 * the same CQ stay, in order. */
static void reset_discards_the_qps_unpolled_completions(void)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	struct ibv_qp *mine, *other;
	struct ibv_mr *mr;
	static uint8_t buf[MSG];
	struct ibv_wc wc;

	CHECK(pd && cq);
	mine = loop_new_rc(pd, cq);
	other = loop_new_rc(pd, cq);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr);
	loop_connect(mine, 0xabcde);
	loop_connect(other, 0xabcdf);
	post_recv(other, buf, mr->lkey, 10);
	post_recv(mine, buf, mr->lkey, 20);
	post_recv(mine, buf, mr->lkey, 21);
	post_recv(other, buf, mr->lkey, 11);
	set_state(mine, IBV_QPS_ERR);
	set_state(other, IBV_QPS_ERR);
	usleep(20000); /* four flushed receives in the CQ */
	set_state(mine, IBV_QPS_RESET);
	wc = loop_next_wc(cq);
	CHECK_EQ(wc.qp_num, other->qp_num);
	CHECK_EQ(wc.wr_id, 10);
	CHECK_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
	wc = loop_next_wc(cq);
	CHECK_EQ(wc.qp_num, other->qp_num);
	CHECK_EQ(wc.wr_id, 11);
	check_empty(cq);
	CHECK_EQ(ibv_destroy_qp(mine), 0);
	CHECK_EQ(ibv_destroy_qp(other), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

/* MRTest.test_mr_rereg_addr: the region moves to another buffer; a receive posted on
 * the old address fails, and once the QPs restart the region serves the new one. */
static void rereg_translation_then_restart_carries_traffic(void)
{
	struct end a, b;
	uint8_t *moved = aligned_alloc(4096, 4096);

	CHECK(moved);
	open_end(&a);
	open_end(&b);
	connect_ends(&a, &b);
	send_ok(&a, &b, b.buf, b.mr->lkey, 0x11);
	CHECK_EQ(ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, moved, 4096, 0), 0);
	send_fails(&a, &b, b.buf, b.mr->lkey);
	restate(&a, &b);
	send_ok(&a, &b, moved, b.mr->lkey, 0x22);
	close_end(&a);
	close_end(&b);
	free(moved);
}

/* MRTest.test_mr_rereg_pd: the region moves to another PD, which the QP's receives
 * cannot use; moved back after the restart, it serves them again. */
static void rereg_pd_then_restart_carries_traffic(void)
{
	struct end a, b;
	struct ibv_pd *other;

	open_end(&a);
	open_end(&b);
	other = ibv_alloc_pd(ctx);
	CHECK(other);
	connect_ends(&a, &b);
	send_ok(&a, &b, b.buf, b.mr->lkey, 0x44);
	CHECK_EQ(ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_PD, other, NULL, 0, 0), 0);
	CHECK(b.mr->pd == other);
	send_fails(&a, &b, b.buf, b.mr->lkey);
	restate(&a, &b);
	CHECK_EQ(ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_PD, b.pd, NULL, 0, 0), 0);
	send_ok(&a, &b, b.buf, b.mr->lkey, 0x55);
	/* A PD whose region went back to its first PD is free to go. */
	CHECK_EQ(ibv_dealloc_pd(other), 0);
	close_end(&a);
	close_end(&b);
}

int main(void)
{
	ctx = verbs_open_first("127.0.5.2");

	RUN(reset_discards_the_qps_unpolled_completions);
	RUN(rereg_translation_then_restart_carries_traffic);
	RUN(rereg_pd_then_restart_carries_traffic);

	CHECK_EQ(ibv_close_device(ctx), 0);
	return 0;
}
