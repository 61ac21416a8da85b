/* SPDX-License-Identifier: MIT */
/*
 * test_parent_domain.c - thread domains and parent domains through the verbs
 * (ibv_alloc_td(3), ibv_alloc_parent_domain(3)).
 *
 * A parent domain with allocators must have them called for the rings of the QPs, CQs
 * and SRQs made through it, with the parent domain, its pd_context, the ring's size
 * (its depth of slots, src/queue/wq.h), a page alignment and the resource type pd_ext.c
 * documents, and every ring given back through its free, once (a CQ's old ring too
 * when it is resized). The allocator here hands out dirty memory, as a posix_memalign
 * one does. The parent stands for its PD: an MR of either serves a QP of the other.
 * The reference counts (EBUSY) and the argument checks (EINVAL) are checked too.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "check.h"
#include "verbs_open.h"
#include "queue/wq.h"
#include "verbs_loop.h"

#define CHECK_NULL_ERRNO(expr, err)                                                                \
	do {                                                                                       \
		errno = 0;                                                                         \
		CHECK((expr) == NULL);                                                             \
		CHECK_EQ(errno, err);                                                              \
	} while (0)

/* The resource types pd_ext.c passes (RDMA_DRIVER_UNKNOWN << 32 | mlx5dv.h's codes). */
enum { RES_QP = 1, RES_SRQ = 4, RES_CQ = 5 };

enum { MAX_BUFS = 32 };

/* What the allocator was asked and gave, and how it is to answer. */
struct allocs {
	struct ibv_pd *parent;
	enum { GIVE, USE_DEFAULT, FAIL } mode;
	int n, freed, foreign_frees, bad_calls;
	struct buf {
		void *ptr;
		size_t size;
		size_t align;
		uint64_t type;
		bool freed;
	} b[MAX_BUFS];
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;

static void *rec_alloc(struct ibv_pd *p, void *pd_context, size_t size, size_t align, uint64_t type)
{
	struct allocs *a = pd_context;
	struct buf *b;

	if (p != a->parent || a->n == MAX_BUFS)
		a->bad_calls++;
	if (a->mode == USE_DEFAULT)
		return IBV_ALLOCATOR_USE_DEFAULT;
	if (a->mode == FAIL || a->n == MAX_BUFS)
		return NULL;
	b = &a->b[a->n++];
	CHECK(posix_memalign(&b->ptr, align, size) == 0);
	memset(b->ptr, 0xa5, size);
	b->size = size;
	b->align = align;
	b->type = type;
	return b->ptr;
}

static void rec_free(struct ibv_pd *p, void *pd_context, void *ptr, uint64_t type)
{
	struct allocs *a = pd_context;

	if (p != a->parent)
		a->bad_calls++;
	for (int i = 0; i < a->n; i++) {
		if (a->b[i].ptr != ptr || a->b[i].freed)
			continue;
		CHECK_EQ(a->b[i].type, type);
		a->b[i].freed = true;
		a->freed++;
		free(ptr);
		return;
	}
	a->foreign_frees++;
}

static struct ibv_pd *parent_with(struct allocs *a, struct ibv_td *td)
{
	struct ibv_parent_domain_init_attr pa = {
		.pd = pd,
		.td = td,
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.alloc = rec_alloc,
		.free = rec_free,
		.pd_context = a,
	};

	a->parent = ibv_alloc_parent_domain(ctx, &pa);
	CHECK(a->parent);
	CHECK(a->parent->context == ctx && a->parent->handle == pd->handle);
	return a->parent;
}

static size_t pow2(size_t n)
{
	size_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* The allocation made i-th: of this type and size, page aligned, not yet freed. */
static void check_buf(const struct allocs *a, int i, uint64_t type, size_t size)
{
	CHECK(i < a->n);
	CHECK_EQ(a->b[i].type, type);
	CHECK_EQ(a->b[i].size, size);
	CHECK_EQ(a->b[i].align, 4096);
	CHECK(!a->b[i].freed);
}

static struct ibv_cq_ex *cq_in(struct ibv_pd *parent, uint32_t cqe)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = cqe,
					  .wc_flags = IBV_WC_STANDARD_FLAGS,
					  .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
					  .parent_domain = parent };

	return ibv_create_cq_ex(ctx, &ca);
}

static struct ibv_qp *rc_qp(struct ibv_pd *p, struct ibv_cq *cq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = { .send_cq = cq,
				       .recv_cq = cq,
				       .srq = srq,
				       .cap = { .max_send_wr = 10,
						.max_recv_wr = 20,
						.max_send_sge = 1,
						.max_recv_sge = 1 },
				       .qp_type = IBV_QPT_RC };

	return ibv_create_qp(p, &ia);
}

static void td_and_parent_domain_arguments(void)
{
	struct ibv_td_init_attr ta = { .comp_mask = 1 };
	struct ibv_parent_domain_init_attr pa = { .pd = NULL };
	struct ibv_td *td;
	struct ibv_pd *parent;

	CHECK_NULL_ERRNO(ibv_alloc_td(ctx, &ta), EINVAL);
	ta.comp_mask = 0;
	td = ibv_alloc_td(ctx, &ta);
	CHECK(td && td->context == ctx);
	CHECK_NULL_ERRNO(ibv_alloc_parent_domain(ctx, &pa), EINVAL);
	pa.pd = pd;
	pa.comp_mask = 1 << 7;
	CHECK_NULL_ERRNO(ibv_alloc_parent_domain(ctx, &pa), EINVAL);
	pa.comp_mask = 0;
	pa.td = td;
	parent = ibv_alloc_parent_domain(ctx, &pa);
	CHECK(parent);
	/* Each holds the other's maker: the TD and the PD outlive the parent domain. */
	CHECK_EQ(ibv_dealloc_td(td), EBUSY);
	CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);
	/* A parent domain without allocators: QPs on it as on its PD. */
	{
		struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
		struct ibv_qp *qp;

		CHECK(cq);
		qp = rc_qp(parent, cq, NULL);
		CHECK(qp && qp->pd == parent);
		CHECK_EQ(ibv_dealloc_pd(parent), EBUSY);
		CHECK_EQ(ibv_destroy_qp(qp), 0);
		CHECK_EQ(ibv_destroy_cq(cq), 0);
	}
	/* IBV_CQ_INIT_ATTR_MASK_PD names a parent domain, not a PD. */
	CHECK_NULL_ERRNO(cq_in(pd, 4), EINVAL);
	CHECK_EQ(ibv_dealloc_pd(parent), 0);
	CHECK_EQ(ibv_dealloc_td(td), 0);
}

/* One SEND from qa to qb over the loop, its completions polled from cqa and cqb. */
static void send_one(struct ibv_qp *qa, struct ibv_mr *ma, struct ibv_cq_ex *cqa, struct ibv_qp *qb,
		     struct ibv_mr *mb, struct ibv_cq_ex *cqb)
{
	struct ibv_sge sa = { (uintptr_t)ma->addr, 64, ma->lkey };
	struct ibv_sge sb = { (uintptr_t)mb->addr, 64, mb->lkey };
	struct ibv_send_wr swr = { .wr_id = 1,
				   .sg_list = &sa,
				   .num_sge = 1,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED };
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &sb, .num_sge = 1 };
	struct ibv_send_wr *sbad;
	struct ibv_recv_wr *rbad;

	memset(ma->addr, 0x3c, 64);
	CHECK_EQ(ibv_post_recv(qb, &rwr, &rbad), 0);
	CHECK_EQ(ibv_post_send(qa, &swr, &sbad), 0);
	loop_start_poll(cqa);
	CHECK(cqa->wr_id == 1 && cqa->status == IBV_WC_SUCCESS);
	ibv_end_poll(cqa);
	loop_start_poll(cqb);
	CHECK(cqb->wr_id == 2 && cqb->status == IBV_WC_SUCCESS);
	CHECK_EQ(ibv_wc_read_byte_len(cqb), 64);
	ibv_end_poll(cqb);
	CHECK(((uint8_t *)mb->addr)[63] == 0x3c);
}

static void allocator_gets_every_ring(void)
{
	static uint8_t buf_a[4096], buf_b[4096];
	struct allocs a = { .mode = GIVE };
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 30, .max_sge = 1 } };
	struct ibv_pd *parent = parent_with(&a, NULL);
	struct ibv_cq_ex *cqa, *cqb;
	struct ibv_qp *qa, *qb;
	struct ibv_srq *srq;
	struct ibv_mr *ma, *mb;

	cqa = cq_in(parent, 100);
	CHECK(cqa);
	check_buf(&a, 0, RES_CQ, pow2(101) * sizeof(struct urnic_cqe));
	qa = rc_qp(parent, ibv_cq_ex_to_cq(cqa), NULL);
	CHECK(qa && qa->pd == parent);
	check_buf(&a, 1, RES_QP, pow2(10) * sizeof(struct urnic_send_wqe));
	check_buf(&a, 2, RES_QP, pow2(20) * sizeof(struct urnic_recv_wqe));
	srq = ibv_create_srq(parent, &si);
	CHECK(srq);
	check_buf(&a, 3, RES_SRQ, pow2(30) * sizeof(struct urnic_recv_wqe));
	CHECK_EQ(a.n, 4);
	CHECK_EQ(ibv_dealloc_pd(parent), EBUSY); /* its rings are in use */

	/* The parent domain is its PD: an MR of the PD serves the parent's QP, and the
	 * other way round; the rings it handed out carry the traffic. */
	{
		struct ibv_cq_init_attr_ex ca = { .cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS };

		cqb = ibv_create_cq_ex(ctx, &ca);
		CHECK(cqb);
	}
	qb = rc_qp(pd, ibv_cq_ex_to_cq(cqb), NULL);
	CHECK(qb);
	ma = ibv_reg_mr(pd, buf_a, sizeof(buf_a), IBV_ACCESS_LOCAL_WRITE);
	mb = ibv_reg_mr(parent, buf_b, sizeof(buf_b), IBV_ACCESS_LOCAL_WRITE);
	CHECK(ma && mb && mb->pd == parent);
	loop_connect(qa, qb->qp_num);
	loop_connect(qb, qa->qp_num);
	for (int i = 0; i < 3; i++)
		send_one(qa, ma, cqa, qb, mb, cqb);
	CHECK_EQ(a.n, 4);

	/* A resize asks for a new ring and gives the old one back. */
	CHECK_EQ(ibv_resize_cq(ibv_cq_ex_to_cq(cqa), 500), 0);
	check_buf(&a, 4, RES_CQ, pow2(501) * sizeof(struct urnic_cqe));
	CHECK(a.b[0].freed && a.freed == 1);
	send_one(qa, ma, cqa, qb, mb, cqb);

	CHECK_EQ(ibv_destroy_qp(qa), 0);
	CHECK(a.b[1].freed && a.b[2].freed && a.freed == 3);
	CHECK_EQ(ibv_destroy_srq(srq), 0);
	CHECK(a.b[3].freed);
	CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cqa)), 0);
	CHECK_EQ(a.freed, a.n);
	CHECK_EQ(a.foreign_frees + a.bad_calls, 0);
	CHECK_EQ(ibv_destroy_qp(qb), 0);
	CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cqb)), 0);
	CHECK_EQ(ibv_dereg_mr(mb), 0);
	CHECK_EQ(ibv_dereg_mr(ma), 0);
	CHECK_EQ(ibv_dealloc_pd(parent), 0);
}

/* IBV_ALLOCATOR_USE_DEFAULT: urnic allocates, and never calls free for it. */
static void default_answer_uses_own_memory(void)
{
	struct allocs a = { .mode = USE_DEFAULT };
	struct ibv_pd *parent = parent_with(&a, NULL);
	struct ibv_cq_ex *cq = cq_in(parent, 8);
	struct ibv_qp *qp;

	CHECK(cq);
	qp = rc_qp(parent, ibv_cq_ex_to_cq(cq), NULL);
	CHECK(qp);
	CHECK_EQ(ibv_resize_cq(ibv_cq_ex_to_cq(cq), 64), 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
	CHECK_EQ(a.n + a.freed + a.foreign_frees + a.bad_calls, 0);
	CHECK_EQ(ibv_dealloc_pd(parent), 0);
}

/* An allocator that fails: ENOMEM, nothing left held or allocated. */
static void failing_allocator_is_enomem(void)
{
	struct allocs a = { .mode = FAIL };
	struct ibv_pd *parent = parent_with(&a, NULL);
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);

	CHECK(cq);
	CHECK_NULL_ERRNO(cq_in(parent, 8), ENOMEM);
	CHECK_NULL_ERRNO(rc_qp(parent, cq, NULL), ENOMEM);
	CHECK_NULL_ERRNO(ibv_create_srq(parent, &si), ENOMEM);
	CHECK_EQ(ibv_dealloc_pd(parent), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
}

int main(void)
{
	ctx = verbs_open_first("127.0.5.7");
	pd = ibv_alloc_pd(ctx);
	CHECK(pd);
	RUN(td_and_parent_domain_arguments);
	RUN(allocator_gets_every_ring);
	RUN(default_answer_uses_own_memory);
	RUN(failing_allocator_is_enomem);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	return 0;
}
