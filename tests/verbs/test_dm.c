/* SPDX-License-Identifier: MIT */
/*
 * test_dm.c - device memory through the verbs (ibv_alloc_dm(3), ibv_reg_dm_mr,
 * ibv_memcpy_to_dm / ibv_memcpy_from_dm, ibv_import_dm(3)), with two urnic devices in
 * one process (URNIC_ADDR, two addresses of 127.0.31.0/24 on lo):
 *
 *   urnic0 QP a, host memory  --- RoCEv2 over lo --->  urnic1 QP b, a zero-based region
 *                             <---                     on device memory
 *
 * The budget is URNIC_LIMITS' max_dm_size=65536: reported by ibv_query_device_ex, more
 * than it EINVAL, more than is left ENOMEM, freed bytes usable again. Copies are checked
 * (outside: EFAULT; not in 4-byte granules: EINVAL); regions need ZERO_BASED and must
 * lie inside the allocation; ibv_free_dm with a region on it is EBUSY; an import shares
 * the bytes and keeps them (and the budget they take) after ibv_free_dm. Over the wire
 * a peer WRITEs, READs and fetch-adds at offsets of the region, the region's own SGEs
 * send from it, and an access past its end is a remote access error that leaves the
 * device memory beyond it untouched.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "check.h"
#include "verbs_side.h"

enum { BUDGET = 65536, HOST_LEN = 4096, DM_LEN = 4096, REG_OFF = 1024, REG_LEN = 2048 };

#define FAILS_WITH(call, err)                                                                      \
	do {                                                                                       \
		errno = 0;                                                                         \
		CHECK((call) == NULL);                                                             \
		CHECK_EQ(errno, err);                                                              \
	} while (0)

static struct ibv_device **devs;

static struct ibv_dm *dm_alloc(struct ibv_context *ctx, size_t len, uint32_t log_align,
			       uint32_t comp_mask)
{
	struct ibv_alloc_dm_attr attr = { .length = len,
					  .log_align_req = log_align,
					  .comp_mask = comp_mask };

	return ibv_alloc_dm(ctx, &attr);
}

static void budget_is_reported_and_enforced(void)
{
	struct ibv_context *ctx = ibv_open_device(devs[0]);
	struct ibv_device_attr_ex dx;
	struct ibv_dm *a, *b;

	CHECK(ctx);
	CHECK_EQ(ibv_query_device_ex(ctx, NULL, &dx), 0);
	CHECK_EQ(dx.max_dm_size, BUDGET);
	FAILS_WITH(dm_alloc(ctx, BUDGET + 1, 0, 0), EINVAL);
	FAILS_WITH(dm_alloc(ctx, 0, 0, 0), EINVAL);
	FAILS_WITH(dm_alloc(ctx, 64, 0, 1), EINVAL); /* no comp_mask field is defined */
	FAILS_WITH(dm_alloc(ctx, 64, 13, 0), EINVAL);
	a = dm_alloc(ctx, 40000, 12, 0);
	CHECK(a);
	CHECK(a->handle != 0 && a->context == ctx);
	FAILS_WITH(dm_alloc(ctx, 30000, 0, 0), ENOMEM);
	b = dm_alloc(ctx, BUDGET - 40000, 6, 0);
	CHECK(b);
	CHECK(b->handle != a->handle);
	CHECK_EQ(ibv_free_dm(a), 0);
	a = dm_alloc(ctx, 30000, 0, 0);
	CHECK(a);
	CHECK_EQ(ibv_free_dm(a), 0);
	CHECK_EQ(ibv_free_dm(b), 0);
	a = dm_alloc(ctx, BUDGET, 0, 0);
	CHECK(a);
	CHECK_EQ(ibv_free_dm(a), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
}

static void copies_are_bounded(void)
{
	struct ibv_context *ctx = ibv_open_device(devs[0]);
	uint8_t in[64], out[64], zero[64] = { 0 };
	struct ibv_dm *dm;

	CHECK(ctx);
	dm = dm_alloc(ctx, 256, 0, 0);
	CHECK(dm);
	memset(out, 0xee, sizeof(out));
	CHECK_EQ(ibv_memcpy_from_dm(out, dm, 192, 64), 0);
	CHECK(memcmp(out, zero, 64) == 0); /* a new allocation reads as zeros */
	for (int i = 0; i < 64; i++)
		in[i] = (uint8_t)(i * 13 + 1);
	CHECK_EQ(ibv_memcpy_to_dm(dm, 8, in, 64), 0);
	CHECK_EQ(ibv_memcpy_from_dm(out, dm, 8, 64), 0);
	CHECK(memcmp(in, out, 64) == 0);
	CHECK_EQ(ibv_memcpy_to_dm(dm, 2, in, 4), EINVAL);
	CHECK_EQ(ibv_memcpy_from_dm(out, dm, 4, 6), EINVAL);
	CHECK_EQ(ibv_memcpy_to_dm(dm, 256, in, 4), EFAULT);
	CHECK_EQ(ibv_memcpy_from_dm(out, dm, 252, 8), EFAULT);
	CHECK_EQ(ibv_memcpy_to_dm(dm, UINT64_MAX - 3, in, 8), EFAULT); /* no wrap-around */
	CHECK_EQ(ibv_memcpy_to_dm(dm, 256, in, 0), 0);
	CHECK_EQ(ibv_memcpy_from_dm(out, dm, 8, 64), 0);
	CHECK(memcmp(in, out, 64) == 0); /* the refused copies wrote nothing */
	CHECK_EQ(ibv_free_dm(dm), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
}

static void regions_on_device_memory(void)
{
	const unsigned int zb = IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE;
	struct ibv_context *ctx = ibv_open_device(devs[0]);
	struct ibv_pd *pd;
	struct ibv_dm *dm;
	struct ibv_mr *mr, *empty;

	CHECK(ctx);
	pd = ibv_alloc_pd(ctx);
	CHECK(pd);
	dm = dm_alloc(ctx, 256, 0, 0);
	CHECK(dm);
	FAILS_WITH(ibv_reg_dm_mr(pd, dm, 0, 256, IBV_ACCESS_LOCAL_WRITE), EINVAL);
	FAILS_WITH(ibv_reg_dm_mr(pd, dm, 0, 256, zb | IBV_ACCESS_MW_BIND), EINVAL);
	FAILS_WITH(ibv_reg_dm_mr(pd, dm, 0, 256, IBV_ACCESS_ZERO_BASED | IBV_ACCESS_REMOTE_WRITE),
		   EINVAL);
	FAILS_WITH(ibv_reg_dm_mr(pd, dm, 200, 100, zb), EINVAL);
	FAILS_WITH(ibv_reg_dm_mr(pd, dm, 260, 0, zb), EINVAL);
	empty = ibv_reg_dm_mr(pd, dm, 256, 0, zb);
	CHECK(empty);
	mr = ibv_reg_dm_mr(pd, dm, 64, 192, zb | IBV_ACCESS_REMOTE_READ);
	CHECK(mr);
	CHECK(mr->addr == NULL && mr->length == 192 && mr->lkey == mr->rkey && mr->pd == pd);
	CHECK_EQ(ibv_free_dm(dm), EBUSY);
	CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);
	errno = 0;
	CHECK_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, zb),
		 IBV_REREG_MR_ERR_CMD);
	CHECK_EQ(errno, EINVAL);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_free_dm(dm), EBUSY); /* the empty region is on it too */
	CHECK_EQ(ibv_dereg_mr(empty), 0);
	CHECK_EQ(ibv_free_dm(dm), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
}

static void imports_share_the_memory(void)
{
	struct ibv_context *c1 = ibv_open_device(devs[0]), *c2 = ibv_open_device(devs[0]);
	uint8_t in[16], out[16];
	struct ibv_dm *dm, *imp;
	uint32_t handle;

	CHECK(c1 && c2);
	dm = dm_alloc(c1, BUDGET, 0, 0);
	CHECK(dm);
	handle = dm->handle;
	FAILS_WITH(ibv_import_dm(c2, handle + 1), ENOENT);
	imp = ibv_import_dm(c2, handle);
	CHECK(imp);
	CHECK(imp->context == c2 && imp->handle == handle);
	memset(in, 0x5a, sizeof(in));
	CHECK_EQ(ibv_memcpy_to_dm(dm, 32, in, 16), 0);
	CHECK_EQ(ibv_memcpy_from_dm(out, imp, 32, 16), 0);
	CHECK(memcmp(in, out, 16) == 0);
	/* Freed through c1, the bytes stay the import's until it lets go: they still
	 * count against the budget, and the handle imports nothing more. */
	CHECK_EQ(ibv_free_dm(dm), 0);
	FAILS_WITH(ibv_import_dm(c2, handle), ENOENT);
	FAILS_WITH(dm_alloc(c1, 4, 0, 0), ENOMEM);
	CHECK_EQ(ibv_memcpy_from_dm(out, imp, 32, 16), 0);
	CHECK(memcmp(in, out, 16) == 0);
	ibv_unimport_dm(imp);
	dm = dm_alloc(c1, BUDGET, 0, 0);
	CHECK(dm);
	CHECK_EQ(ibv_free_dm(dm), 0);
	CHECK_EQ(ibv_close_device(c2), 0);
	CHECK_EQ(ibv_close_device(c1), 0);
}

/* ---- RDMA into device memory ---- */

static struct ibv_qp *rc_qp(struct side *s)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC
	};
	struct ibv_qp *qp = ibv_create_qp(s->pd, &ia);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
				 .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ |
						    IBV_ACCESS_REMOTE_ATOMIC };

	CHECK(qp);
	CHECK_EQ(
		ibv_modify_qp(qp, &a,
			      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
		0);
	return qp;
}

static void qp_connect(struct ibv_qp *qp, const union ibv_gid *gid, uint32_t qpn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = qpn,
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = 1,
		.ah_attr = { .is_global = 1,
			     .port_num = 1,
			     .grh = { .sgid_index = 1, .hop_limit = 64 } },
	};

	a.ah_attr.grh.dgid = *gid;
	CHECK_EQ(ibv_modify_qp(qp, &a,
			       IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				       IBV_QP_MIN_RNR_TIMER),
		 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	CHECK_EQ(ibv_modify_qp(qp, &a,
			       IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				       IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC),
		 0);
}

/* Posts one signaled request and returns its completion status. */
static enum ibv_wc_status run(struct side *s, struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	time_t t0 = time(NULL);
	int n;

	wr->send_flags = IBV_SEND_SIGNALED;
	CHECK_EQ(ibv_post_send(qp, wr, &bad), 0);
	while ((n = ibv_poll_cq(s->cq, 1, &wc)) == 0)
		CHECK(time(NULL) - t0 < 10);
	CHECK_EQ(n, 1);
	return wc.status;
}

static void rdma_reaches_device_memory(void)
{
	const unsigned int rights = IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_ATOMIC;
	struct side s0, s1;
	struct ibv_qp *a, *b;
	struct ibv_dm *dm;
	struct ibv_mr *dmr;
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	uint8_t got[64], beyond[DM_LEN - REG_OFF - REG_LEN], zero[sizeof(beyond)] = { 0 };
	uint64_t word = 100;

	side_open(&s0, devs[0], 16, HOST_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	side_open(&s1, devs[1], 16, HOST_LEN, IBV_ACCESS_LOCAL_WRITE);
	dm = dm_alloc(s1.ctx, DM_LEN, 3, 0);
	CHECK(dm);
	dmr = ibv_reg_dm_mr(s1.pd, dm, REG_OFF, REG_LEN, rights);
	CHECK(dmr);
	a = rc_qp(&s0);
	b = rc_qp(&s1);
	qp_connect(a, &s1.gid, b->qp_num);
	qp_connect(b, &s0.gid, a->qp_num);
	for (int i = 0; i < HOST_LEN; i++)
		s0.buf[i] = (uint8_t)(i * 7 + 3);

	/* WRITE 64 bytes to offset 16 of the region: device memory offset REG_OFF + 16. */
	sge = (struct ibv_sge){ (uintptr_t)s0.buf, 64, s0.mr->lkey };
	wr = (struct ibv_send_wr){ .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE };
	wr.wr.rdma.remote_addr = 16;
	wr.wr.rdma.rkey = dmr->rkey;
	CHECK_EQ(run(&s0, a, &wr), IBV_WC_SUCCESS);
	CHECK_EQ(ibv_memcpy_from_dm(got, dm, REG_OFF + 16, 64), 0);
	CHECK(memcmp(got, s0.buf, 64) == 0);

	/* READ them back into host memory at 512. */
	sge = (struct ibv_sge){ (uintptr_t)s0.buf + 512, 64, s0.mr->lkey };
	wr.opcode = IBV_WR_RDMA_READ;
	CHECK_EQ(run(&s0, a, &wr), IBV_WC_SUCCESS);
	CHECK(memcmp(s0.buf + 512, s0.buf, 64) == 0);

	/* Fetch-and-add on the 8 bytes at offset 8. */
	CHECK_EQ(ibv_memcpy_to_dm(dm, REG_OFF + 8, &word, 8), 0);
	sge = (struct ibv_sge){ (uintptr_t)s0.buf + 1024, 8, s0.mr->lkey };
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.remote_addr = 8;
	wr.wr.atomic.rkey = dmr->rkey;
	wr.wr.atomic.compare_add = 5;
	CHECK_EQ(run(&s0, a, &wr), IBV_WC_SUCCESS);
	memcpy(&word, s0.buf + 1024, 8);
	CHECK_EQ(word, 100);
	CHECK_EQ(ibv_memcpy_from_dm(&word, dm, REG_OFF + 8, 8), 0);
	CHECK_EQ(word, 105);

	/* b sends from the region itself: its SGE names offset 16 with the region's L_Key. */
	sge = (struct ibv_sge){ 16, 64, dmr->lkey };
	wr = (struct ibv_send_wr){ .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE };
	wr.wr.rdma.remote_addr = (uintptr_t)s0.buf + 2048;
	wr.wr.rdma.rkey = s0.mr->rkey;
	CHECK_EQ(run(&s1, b, &wr), IBV_WC_SUCCESS);
	CHECK(memcmp(s0.buf + 2048, s0.buf, 64) == 0);

	/* Past the region's end: refused, and the device memory after it untouched. */
	sge = (struct ibv_sge){ (uintptr_t)s0.buf, 16, s0.mr->lkey };
	wr = (struct ibv_send_wr){ .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE };
	wr.wr.rdma.remote_addr = REG_LEN - 8;
	wr.wr.rdma.rkey = dmr->rkey;
	CHECK_EQ(run(&s0, a, &wr), IBV_WC_REM_ACCESS_ERR);
	CHECK_EQ(ibv_memcpy_from_dm(beyond, dm, REG_OFF + REG_LEN, sizeof(beyond)), 0);
	CHECK(memcmp(beyond, zero, sizeof(beyond)) == 0);

	CHECK_EQ(ibv_free_dm(dm), EBUSY);
	CHECK_EQ(ibv_destroy_qp(a), 0);
	CHECK_EQ(ibv_destroy_qp(b), 0);
	CHECK_EQ(ibv_dereg_mr(dmr), 0);
	CHECK_EQ(ibv_free_dm(dm), 0);
	side_close(&s1);
	side_close(&s0);
}

int main(void)
{
	int n;

	devs = ibv_get_device_list(&n);
	CHECK(devs && n >= 2);
	RUN(budget_is_reported_and_enforced);
	RUN(copies_are_bounded);
	RUN(regions_on_device_memory);
	RUN(imports_share_the_memory);
	RUN(rdma_reaches_device_memory);
	ibv_free_device_list(devs);
	return 0;
}
