/* SPDX-License-Identifier: MIT */
/*
 * test_create_qp_ex.c - ibv_create_qp_ex(3) takes what a software RNIC honours, as
 * rdma-core's QPTest asks for it: a PD, the create-flags bit with no flag set, and the
 * ibv_wr_* operations of the QP's transport; flags and operations it cannot honour are
 * EOPNOTSUPP (as rxe's provider answers).
 * No traffic: one device (URNIC_ADDR, 127.0.5.4).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "check.h"
#include "verbs_open.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;

static struct ibv_qp_init_attr_ex attr_ex(enum ibv_qp_type t, uint32_t mask)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = t,
		.comp_mask = IBV_QP_INIT_ATTR_PD | mask,
		.pd = pd,
	};

	return a;
}

/* Created in RESET, then destroyed. */
static void creates(struct ibv_qp_init_attr_ex *a)
{
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, a);

	CHECK(qp);
	CHECK_EQ(qp->state, IBV_QPS_RESET);
	CHECK_EQ(qp->qp_type, a->qp_type);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

static void refused(struct ibv_qp_init_attr_ex *a, int e)
{
	errno = 0;
	CHECK(ibv_create_qp_ex(ctx, a) == NULL);
	CHECK_EQ(errno, e);
}

/* QPTest's random_qp_create_mask sets IBV_QP_INIT_ATTR_CREATE_FLAGS with flags 0 on a
 * device that is not Mellanox's: nothing to honour. */
static void create_flags_bit_without_flags_is_taken(void)
{
	enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };

	for (int i = 0; i < 3; i++) {
		struct ibv_qp_init_attr_ex a = attr_ex(types[i], IBV_QP_INIT_ATTR_CREATE_FLAGS);

		creates(&a);
		a.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
		refused(&a, EOPNOTSUPP);
		a.create_flags = IBV_QP_CREATE_SCATTER_FCS;
		refused(&a, EOPNOTSUPP);
	}
}

/* The operations of each transport (IBTA 9.8: UD only SEND, UC SEND and WRITE). */
static void send_ops_are_those_of_the_transport(void)
{
	const uint64_t ud = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	const uint64_t uc = ud | IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			    IBV_QP_EX_WITH_BIND_MW;
	const uint64_t rc = uc | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			    IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV |
			    IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_ATOMIC_WRITE;
	struct ibv_qp_init_attr_ex a;

	a = attr_ex(IBV_QPT_RC, IBV_QP_INIT_ATTR_SEND_OPS_FLAGS | IBV_QP_INIT_ATTR_CREATE_FLAGS);
	a.send_ops_flags = rc;
	creates(&a);
	a.send_ops_flags = rc | IBV_QP_EX_WITH_TSO;
	refused(&a, EOPNOTSUPP);
	a = attr_ex(IBV_QPT_UC, IBV_QP_INIT_ATTR_SEND_OPS_FLAGS);
	a.send_ops_flags = uc;
	creates(&a);
	a.send_ops_flags = uc | IBV_QP_EX_WITH_RDMA_READ;
	refused(&a, EOPNOTSUPP);
	a = attr_ex(IBV_QPT_UD, IBV_QP_INIT_ATTR_SEND_OPS_FLAGS);
	a.send_ops_flags = ud;
	creates(&a);
	a.send_ops_flags = ud | IBV_QP_EX_WITH_RDMA_WRITE;
	refused(&a, EOPNOTSUPP);
}

/* ibv_create_qp_ex(3): a QP needs a PD (or an XRC domain). */
static void no_pd_is_einval(void)
{
	struct ibv_qp_init_attr_ex a = attr_ex(IBV_QPT_RC, 0);

	a.comp_mask = 0;
	refused(&a, EINVAL);
}

int main(void)
{
	ctx = verbs_open_first("127.0.5.4");
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	CHECK(pd && cq);

	RUN(create_flags_bit_without_flags_is_taken);
	RUN(send_ops_are_those_of_the_transport);
	RUN(no_pd_is_einval);

	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	return 0;
}
