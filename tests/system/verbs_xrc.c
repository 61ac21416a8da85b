/* SPDX-License-Identifier: MIT */
/*
 * verbs_xrc.c - XRC (IBTA Annex A14) between two urnic devices in one process, over the
 * drop-in libibverbs, as an application calls it:
 *
 *   urnic0 (first URNIC_ADDR): XRC send QP s --- RoCEv2 over lo ---> urnic1: XRC receive
 *                                                 QP t of domain D (a file's), SRQ A (PD
 *                                                 pa, CQ ca) and SRQ B (PD pb, CQ cb) of D
 *
 * s names the SRQ of each request: SEND (three packets) to A, SEND with immediate to B,
 * RDMA WRITE into B's PD's memory, WRITE with immediate into A's (taking a WQE of A),
 * READ from A's, FETCH_ADD on A's and CMP_SWAP on B's; every byte and completion is
 * checked, receives on the CQ of the SRQ named. Last, a SEND naming a number that is no
 * SRQ of D completes IBV_WC_REM_INV_REQ_ERR. Prints "ok NAME" per step, and the SRQ
 * numbers ("ok srqs A 0x.. B 0x.. none 0x..") for tests/system/capture.sh's XRCETH check;
 * exits 1 on the first failure.
 */
#include <endian.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "check.h"
#include "verbs_xrc.h"

#define BUF 65536
#define NO_SRQ 0x00abcd /* no SRQ of D has this number: slot 0xbcd, generation 0xa */

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	uint8_t *buf;
	struct ibv_mr *mr;
	union ibv_gid gid;
};

static void side_open(struct side *s, struct ibv_device *dev)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		     IBV_ACCESS_REMOTE_ATOMIC;

	if (!s->ctx) {
		s->ctx = ibv_open_device(dev);
		CHECK(s->ctx);
	}
	s->pd = ibv_alloc_pd(s->ctx);
	CHECK(s->pd);
	s->cq = ibv_create_cq(s->ctx, 64, NULL, NULL, 0);
	CHECK(s->cq);
	s->buf = aligned_alloc(4096, BUF);
	CHECK(s->buf);
	for (int i = 0; i < BUF; i++)
		s->buf[i] = (uint8_t)(i * 7 + (uintptr_t)s);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF, access);
	CHECK(s->mr);
	CHECK(ibv_query_gid(s->ctx, 1, 1, &s->gid) == 0);
}

static void side_close(struct side *s, bool device)
{
	CHECK(ibv_dereg_mr(s->mr) == 0);
	CHECK(ibv_destroy_cq(s->cq) == 0);
	CHECK(ibv_dealloc_pd(s->pd) == 0);
	if (device)
		CHECK(ibv_close_device(s->ctx) == 0);
	free(s->buf);
}

static void post(struct ibv_qp *qp, struct side *c, enum ibv_wr_opcode op, uint64_t id,
		 uint32_t srqn, uint32_t off, uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)(c->buf + off), len, c->mr->lkey };

	CHECK(xrc_post(qp, op, id, srqn, &sge, raddr, rkey) == 0);
}

static struct ibv_srq *xrc_srq(struct side *t, struct ibv_xrcd *x)
{
	struct ibv_srq *srq = xrc_srq_create(t->ctx, x, t->pd, t->cq, 8);

	CHECK(srq);
	return srq;
}

int main(void)
{
	struct side c = { 0 }, ta = { 0 }, tb = { 0 }; /* ta, tb: urnic1, SRQ A's and B's */
	struct ibv_device **list;
	char path[] = "/tmp/urnic-verbs-xrc-XXXXXX";
	struct ibv_xrcd_init_attr xa = { .comp_mask =
						 IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
					 .oflags = O_CREAT };
	struct ibv_qp_init_attr_ex sa = { .cap = { .max_send_wr = 16, .max_send_sge = 1 },
					  .qp_type = IBV_QPT_XRC_SEND,
					  .comp_mask = IBV_QP_INIT_ATTR_PD };
	struct ibv_qp_init_attr_ex ra = { .qp_type = IBV_QPT_XRC_RECV,
					  .comp_mask = IBV_QP_INIT_ATTR_XRCD };
	struct ibv_device_attr da;
	struct ibv_xrcd *x;
	struct ibv_srq *srq_a, *srq_b;
	struct ibv_qp *s, *t;
	uint32_t na, nb;
	struct ibv_wc wc;
	uint64_t v, before;
	int n;

	list = ibv_get_device_list(&n);
	CHECK(list && n >= 2);
	side_open(&c, list[0]);
	side_open(&ta, list[1]);
	tb.ctx = ta.ctx;
	side_open(&tb, list[1]);
	CHECK(ibv_query_device(ta.ctx, &da) == 0 && (da.device_cap_flags & IBV_DEVICE_XRC));

	xa.fd = mkstemp(path);
	CHECK(xa.fd >= 0);
	x = ibv_open_xrcd(ta.ctx, &xa);
	CHECK(x);
	srq_a = xrc_srq(&ta, x);
	srq_b = xrc_srq(&tb, x);
	CHECK(ibv_get_srq_num(srq_a, &na) == 0 && ibv_get_srq_num(srq_b, &nb) == 0);
	CHECK(na != nb && na != NO_SRQ && nb != NO_SRQ);
	printf("ok srqs A 0x%06x B 0x%06x none 0x%06x\n", na, nb, NO_SRQ);
	sa.send_cq = c.cq;
	sa.pd = c.pd;
	s = ibv_create_qp_ex(c.ctx, &sa);
	ra.xrcd = x;
	t = ibv_create_qp_ex(ta.ctx, &ra);
	CHECK(s && t);
	xrc_connect(t, &c.gid, s->qp_num, 0x100, 0x100);
	xrc_connect(s, &ta.gid, t->qp_num, 0x100, 0x100);
	printf("ok connect send qp 0x%x -> receive qp 0x%x\n", s->qp_num, t->qp_num);

	xrc_post_srq(srq_a, 100, ta.buf, 4096, ta.mr);
	xrc_post_srq(srq_a, 101, ta.buf + 4096, 4096, ta.mr);
	xrc_post_srq(srq_b, 200, tb.buf, 4096, tb.mr);
	post(s, &c, IBV_WR_SEND, 1, na, 0, 3000, 0, 0);
	xrc_expect(c.cq, 1, IBV_WC_SUCCESS);
	wc = xrc_expect(ta.cq, 100, IBV_WC_SUCCESS);
	CHECK(wc.opcode == IBV_WC_RECV && wc.byte_len == 3000 && wc.qp_num == t->qp_num);
	CHECK(memcmp(ta.buf, c.buf, 3000) == 0);
	post(s, &c, IBV_WR_SEND_WITH_IMM, 2, nb, 5000, 100, 0, 0);
	xrc_expect(c.cq, 2, IBV_WC_SUCCESS);
	wc = xrc_expect(tb.cq, 200, IBV_WC_SUCCESS);
	CHECK(wc.byte_len == 100 && (wc.wc_flags & IBV_WC_WITH_IMM) &&
	      wc.imm_data == htobe32(XRC_IMM));
	CHECK(memcmp(tb.buf, c.buf + 5000, 100) == 0);
	printf("ok send to A (3 packets), send with immediate to B\n");

	post(s, &c, IBV_WR_RDMA_WRITE, 3, nb, 8000, 2000, (uintptr_t)tb.buf + 20000, tb.mr->rkey);
	xrc_expect(c.cq, 3, IBV_WC_SUCCESS);
	CHECK(memcmp(tb.buf + 20000, c.buf + 8000, 2000) == 0);
	post(s, &c, IBV_WR_RDMA_WRITE_WITH_IMM, 4, na, 11000, 300, (uintptr_t)ta.buf + 30000,
	     ta.mr->rkey);
	xrc_expect(c.cq, 4, IBV_WC_SUCCESS);
	wc = xrc_expect(ta.cq, 101, IBV_WC_SUCCESS);
	CHECK(wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && wc.byte_len == 300);
	CHECK(memcmp(ta.buf + 30000, c.buf + 11000, 300) == 0);
	post(s, &c, IBV_WR_RDMA_READ, 5, na, 40000, 2500, (uintptr_t)ta.buf + 12000, ta.mr->rkey);
	xrc_expect(c.cq, 5, IBV_WC_SUCCESS);
	CHECK(memcmp(c.buf + 40000, ta.buf + 12000, 2500) == 0);
	printf("ok write in B's PD, write with immediate in A's, read from A's\n");

	memcpy(&before, ta.buf + 50000, 8);
	post(s, &c, IBV_WR_ATOMIC_FETCH_AND_ADD, 6, na, 50000, 8, (uintptr_t)ta.buf + 50000,
	     ta.mr->rkey);
	xrc_expect(c.cq, 6, IBV_WC_SUCCESS);
	memcpy(&v, ta.buf + 50000, 8);
	CHECK(v == before + XRC_ADD);
	memcpy(&v, c.buf + 50000, 8);
	CHECK(v == before);
	v = XRC_ADD;
	memcpy(tb.buf + 50000, &v, 8);
	post(s, &c, IBV_WR_ATOMIC_CMP_AND_SWP, 7, nb, 50008, 8, (uintptr_t)tb.buf + 50000,
	     tb.mr->rkey);
	xrc_expect(c.cq, 7, IBV_WC_SUCCESS);
	memcpy(&v, tb.buf + 50000, 8);
	CHECK(v == XRC_SWAP);
	printf("ok fetch and add on A's, compare and swap on B's\n");

	/* No SRQ of the domain: NAK invalid request, the QPs end in error. */
	post(s, &c, IBV_WR_SEND, 8, NO_SRQ, 0, 64, 0, 0);
	xrc_expect(c.cq, 8, IBV_WC_REM_INV_REQ_ERR);
	CHECK(ibv_poll_cq(ta.cq, 1, &wc) == 0 && ibv_poll_cq(tb.cq, 1, &wc) == 0);
	printf("ok a number of no SRQ refused\n");

	CHECK(ibv_destroy_qp(s) == 0);
	CHECK(ibv_destroy_qp(t) == 0);
	CHECK(ibv_destroy_srq(srq_a) == 0);
	CHECK(ibv_destroy_srq(srq_b) == 0);
	CHECK(ibv_close_xrcd(x) == 0);
	close(xa.fd);
	unlink(path);
	side_close(&tb, false);
	side_close(&ta, true);
	side_close(&c, true);
	ibv_free_device_list(list);
	printf("ok\n");
	return 0;
}
