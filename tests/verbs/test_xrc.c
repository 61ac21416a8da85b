/* SPDX-License-Identifier: MIT */
/*
 * test_xrc.c - the XRC verbs (IBTA Annex A14) as their rdma-core man pages describe them:
 * ibv_open_xrcd(3) / ibv_close_xrcd, ibv_create_srq_ex(3) with IBV_SRQT_XRC,
 * ibv_get_srq_num(3), ibv_create_qp_ex(3) with IBV_QP_INIT_ATTR_XRCD, ibv_open_qp(3),
 * and posting on XRC QPs, with the errors the man pages and the kernel give. Traffic
 * runs on one device, to itself:
 *
 *   URNIC_ADDR (127.0.5.1): XRC send QP --- lo ---> XRC receive QP, domain D (the file's)
 *                                                    SRQ A (PD pa), SRQ B (PD pb) of D
 *
 * A domain opened twice through one file is one domain (an SRQ made through one handle
 * serves a receive QP made through the other); fd -1 makes a domain apart.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "check.h"
#include "verbs_xrc.h"

enum { BUF = 65536 };

static struct ibv_context *ctx;
static struct ibv_pd *pa, *pb;
static struct ibv_cq *cq, *ca, *cb; /* sends; SRQ A's; SRQ B's */
static uint8_t *la, *ra, *rb;
static struct ibv_mr *lmr, *amr, *bmr;
static union ibv_gid gid;
static char path[] = "/tmp/urnic-xrc-XXXXXX";

static struct ibv_xrcd *open_xrcd(int fd, int oflags)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd,
		.oflags = oflags,
	};

	return ibv_open_xrcd(ctx, &a);
}

static struct ibv_srq *xrc_srq(struct ibv_xrcd *x, struct ibv_pd *pd, struct ibv_cq *scq)
{
	return xrc_srq_create(ctx, x, pd, scq, 16);
}

static struct ibv_qp *recv_qp(struct ibv_xrcd *x)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = x,
		.cap = { .max_recv_wr = 8, .max_send_wr = 8 }, /* ignored */
	};
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &a);

	if (qp)
		CHECK(a.cap.max_recv_wr == 0 && a.cap.max_send_wr == 0);
	return qp;
}

static struct ibv_qp *send_qp(void)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = cq,
		.cap = { .max_send_wr = 16, .max_send_sge = 1, .max_recv_wr = 4 },
		.qp_type = IBV_QPT_XRC_SEND,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pa,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &a);

	CHECK(qp);
	CHECK(a.cap.max_recv_wr == 0); /* no receive side */
	return qp;
}

static uint32_t srq_num(struct ibv_srq *srq)
{
	uint32_t n = 0;

	CHECK(ibv_get_srq_num(srq, &n) == 0);
	CHECK(n != 0 && n <= 0xffffff);
	return n;
}

/* RESET -> RTS towards the peer QP on this device. */
static void connect(struct ibv_qp *qp, uint32_t dest, uint32_t psn_out, uint32_t psn_in)
{
	xrc_connect(qp, &gid, dest, psn_out, psn_in);
}

static void expect(struct ibv_cq *c, uint64_t id, enum ibv_wc_status st, uint32_t len)
{
	struct ibv_wc wc = xrc_expect(c, id, st);

	if (st == IBV_WC_SUCCESS && len != UINT32_MAX)
		CHECK(wc.byte_len == len);
}

static int post(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t id, uint32_t srqn, uint32_t off,
		uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)(la + off), len, lmr->lkey };

	return xrc_post(qp, op, id, srqn, &sge, raddr, rkey);
}

static void test_device_says_xrc(void)
{
	struct ibv_device_attr a;

	CHECK(ibv_query_device(ctx, &a) == 0);
	CHECK(a.device_cap_flags & IBV_DEVICE_XRC);
}

static void test_open_xrcd_by_file(void)
{
	struct ibv_xrcd_init_attr a = { .comp_mask = IBV_XRCD_INIT_ATTR_FD, .fd = -1 };
	int fd = mkstemp(path);
	struct ibv_xrcd *x1, *x2, *anon1, *anon2;

	CHECK(fd >= 0);
	errno = 0;
	CHECK(!ibv_open_xrcd(ctx, &a) && errno == EINVAL); /* oflags missing */
	a.comp_mask =
		IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS | IBV_XRCD_INIT_ATTR_RESERVED;
	errno = 0;
	CHECK(!ibv_open_xrcd(ctx, &a) && errno == EOPNOTSUPP);
	errno = 0;
	CHECK(!open_xrcd(fd, 0) && errno == EAGAIN); /* none for the file, no O_CREAT */
	errno = 0;
	CHECK(!open_xrcd(987654, O_CREAT) && errno == EBADF);
	x1 = open_xrcd(fd, O_CREAT);
	CHECK(x1 && x1->context == ctx);
	errno = 0;
	CHECK(!open_xrcd(fd, O_CREAT | O_EXCL) && errno == EINVAL); /* it exists */
	x2 = open_xrcd(fd, 0);
	CHECK(x2 && x2 != x1);
	anon1 = open_xrcd(-1, O_CREAT);
	anon2 = open_xrcd(-1, 0);
	CHECK(anon1 && anon2);
	CHECK(ibv_close_xrcd(anon1) == 0);
	CHECK(ibv_close_xrcd(anon2) == 0);
	CHECK(ibv_close_xrcd(x2) == 0);
	CHECK(ibv_close_xrcd(x1) == 0);
	/* Closed: the file has no domain any more. */
	errno = 0;
	CHECK(!open_xrcd(fd, 0) && errno == EAGAIN);
	close(fd);
}

static void test_xrc_srq_and_qp_arguments(void)
{
	int fd = open(path, O_RDONLY);
	struct ibv_xrcd *x = open_xrcd(fd, O_CREAT);
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD,
		.srq_type = IBV_SRQT_XRC,
		.pd = pa,
		.xrcd = x,
	};
	struct ibv_qp_init_attr_ex qa = { .qp_type = IBV_QPT_XRC_RECV };
	struct ibv_srq_init_attr basic = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq *srq, *bsrq;
	struct ibv_qp *t, *s;
	struct ibv_recv_wr rwr = { .wr_id = 1 }, *rbad;
	uint32_t n;

	CHECK(x);
	errno = 0;
	CHECK(!ibv_create_srq_ex(ctx, &sa) && errno == EINVAL); /* no CQ */
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ;
	sa.cq = ca;
	errno = 0;
	CHECK(!ibv_create_srq_ex(ctx, &sa) && errno == EINVAL); /* no domain */
	srq = xrc_srq(x, pa, ca);
	CHECK(srq);
	bsrq = ibv_create_srq(pa, &basic);
	CHECK(bsrq);
	CHECK(ibv_get_srq_num(bsrq, &n) == EINVAL); /* a basic SRQ has no number */
	CHECK(ibv_destroy_srq(bsrq) == 0);
	(void)srq_num(srq);
	errno = 0;
	CHECK(!ibv_create_qp_ex(ctx, &qa) && errno == EINVAL); /* no domain */
	t = recv_qp(x);
	CHECK(t && t->qp_type == IBV_QPT_XRC_RECV && !t->pd && !t->send_cq && !t->recv_cq);
	CHECK(ibv_close_xrcd(x) == EBUSY); /* the SRQ and the QP use it */
	s = send_qp();
	/* Neither XRC QP has a receive queue; a receive QP no send queue. */
	CHECK(ibv_post_recv(t, &rwr, &rbad) == EINVAL && rbad == &rwr);
	CHECK(ibv_post_recv(s, &rwr, &rbad) == EINVAL);
	connect(t, s->qp_num, 0x10, 0x20);
	connect(s, t->qp_num, 0x20, 0x10);
	CHECK(post(t, IBV_WR_SEND, 1, srq_num(srq), 0, 8, 0, 0) == EINVAL);
	/* A send QP carries SEND, WRITE, READ and atomics (msg.c). */
	CHECK(post(s, IBV_WR_SEND_WITH_INV, 1, srq_num(srq), 0, 8, 0, 0) == EINVAL);
	CHECK(post(s, IBV_WR_LOCAL_INV, 1, srq_num(srq), 0, 8, 0, 0) == EINVAL);
	CHECK(ibv_destroy_qp(s) == 0);
	CHECK(ibv_destroy_qp(t) == 0);
	CHECK(ibv_destroy_srq(srq) == 0);
	CHECK(ibv_close_xrcd(x) == 0);
	close(fd);
}

/* SEND to each SRQ, WRITE and READ in each SRQ's PD, atomics; through two handles of
 * the domain and an ibv_open_qp handle of the receive QP. */
static void test_xrc_traffic_to_two_srqs(void)
{
	int fd = open(path, O_RDONLY);
	struct ibv_xrcd *x1 = open_xrcd(fd, O_CREAT), *x2 = open_xrcd(fd, 0);
	struct ibv_srq *sa, *sb;
	struct ibv_qp *t, *t2, *s;
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE,
		.xrcd = x2,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	struct ibv_qp_attr qattr;
	struct ibv_qp_init_attr qinit;
	uint64_t v;

	CHECK(x1 && x2);
	sa = xrc_srq(x1, pa, ca);
	sb = xrc_srq(x1, pb, cb);
	CHECK(sa && sb && srq_num(sa) != srq_num(sb));
	t = recv_qp(x2); /* the other handle: the same domain */
	CHECK(t);
	oa.qp_num = t->qp_num ^ 1;
	errno = 0;
	CHECK(!ibv_open_qp(ctx, &oa) && errno == EINVAL); /* no such receive QP */
	oa.qp_num = t->qp_num;
	oa.qp_type = IBV_QPT_RC;
	errno = 0;
	CHECK(!ibv_open_qp(ctx, &oa) && errno == EINVAL);
	oa.qp_type = IBV_QPT_XRC_RECV;
	t2 = ibv_open_qp(ctx, &oa);
	CHECK(t2 && t2 != t && t2->qp_num == t->qp_num);
	s = send_qp();
	/* Connected through the opened handle; the creator's sees the same QP. */
	connect(t2, s->qp_num, 0x30, 0x40);
	connect(s, t->qp_num, 0x40, 0x30);
	CHECK(ibv_query_qp(t, &qattr, IBV_QP_STATE, &qinit) == 0 && qattr.qp_state == IBV_QPS_RTS);
	CHECK(qinit.qp_type == IBV_QPT_XRC_RECV);
	CHECK(ibv_destroy_qp(t) == 0); /* the QP stays: t2 holds it */

	for (int i = 0; i < BUF; i++)
		la[i] = (uint8_t)(i * 13 + 1);
	xrc_post_srq(sa, 100, ra, 8192, amr);
	xrc_post_srq(sb, 200, rb, 8192, bmr);
	CHECK(post(s, IBV_WR_SEND, 1, srq_num(sa), 0, 3000, 0, 0) == 0);
	expect(cq, 1, IBV_WC_SUCCESS, UINT32_MAX);
	expect(ca, 100, IBV_WC_SUCCESS, 3000);
	CHECK(memcmp(ra, la, 3000) == 0);
	CHECK(post(s, IBV_WR_SEND_WITH_IMM, 2, srq_num(sb), 100, 500, 0, 0) == 0);
	expect(cq, 2, IBV_WC_SUCCESS, UINT32_MAX);
	expect(cb, 200, IBV_WC_SUCCESS, 500);
	CHECK(memcmp(rb, la + 100, 500) == 0);
	CHECK(post(s, IBV_WR_RDMA_WRITE, 3, srq_num(sb), 1000, 2000, (uintptr_t)rb + 10000,
		   bmr->rkey) == 0);
	expect(cq, 3, IBV_WC_SUCCESS, UINT32_MAX);
	CHECK(memcmp(rb + 10000, la + 1000, 2000) == 0);
	CHECK(post(s, IBV_WR_RDMA_READ, 4, srq_num(sa), 20000, 2500, (uintptr_t)ra + 100,
		   amr->rkey) == 0);
	expect(cq, 4, IBV_WC_SUCCESS, UINT32_MAX);
	CHECK(memcmp(la + 20000, ra + 100, 2500) == 0);
	memset(ra + 30000, 0, 8);
	CHECK(post(s, IBV_WR_ATOMIC_FETCH_AND_ADD, 5, srq_num(sa), 30000, 8, (uintptr_t)ra + 30000,
		   amr->rkey) == 0);
	expect(cq, 5, IBV_WC_SUCCESS, UINT32_MAX);
	memcpy(&v, ra + 30000, 8);
	CHECK(v == XRC_ADD);
	/* B's PD does not hold A's R_Key: remote access error (the QPs go to error). */
	CHECK(post(s, IBV_WR_RDMA_WRITE, 6, srq_num(sb), 0, 64, (uintptr_t)ra, amr->rkey) == 0);
	expect(cq, 6, IBV_WC_REM_ACCESS_ERR, 0);
	CHECK(ibv_query_qp(t2, &qattr, IBV_QP_STATE, &qinit) == 0 && qattr.qp_state == IBV_QPS_ERR);

	CHECK(ibv_destroy_qp(s) == 0);
	CHECK(ibv_destroy_qp(t2) == 0);
	CHECK(ibv_destroy_srq(sa) == 0);
	CHECK(ibv_destroy_srq(sb) == 0);
	CHECK(ibv_close_xrcd(x2) == 0);
	CHECK(ibv_close_xrcd(x1) == 0);
	close(fd);
}

/* A domain of its own (fd -1): its receive QP refuses an SRQ of another domain. */
static void test_xrc_srq_of_another_domain_is_refused(void)
{
	struct ibv_xrcd *x = open_xrcd(-1, O_CREAT), *y = open_xrcd(-1, O_CREAT);
	struct ibv_srq *sy;
	struct ibv_qp *t, *s;
	struct ibv_wc wc;

	CHECK(x && y);
	sy = xrc_srq(y, pa, ca);
	CHECK(sy);
	xrc_post_srq(sy, 300, ra, 8192, amr);
	t = recv_qp(x);
	CHECK(t);
	s = send_qp();
	connect(t, s->qp_num, 0x50, 0x60);
	connect(s, t->qp_num, 0x60, 0x50);
	CHECK(post(s, IBV_WR_SEND, 7, srq_num(sy), 0, 64, 0, 0) == 0);
	expect(cq, 7, IBV_WC_REM_INV_REQ_ERR, 0);
	CHECK(ibv_poll_cq(ca, 1, &wc) == 0); /* y's SRQ kept its WQE */
	CHECK(ibv_destroy_qp(s) == 0);
	CHECK(ibv_destroy_qp(t) == 0);
	CHECK(ibv_destroy_srq(sy) == 0);
	CHECK(ibv_close_xrcd(x) == 0);
	CHECK(ibv_close_xrcd(y) == 0);
}

int main(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		     IBV_ACCESS_REMOTE_ATOMIC;

	CHECK(list && list[0]);
	ctx = ibv_open_device(list[0]);
	CHECK(ctx);
	CHECK(ibv_query_gid(ctx, 1, 1, &gid) == 0);
	pa = ibv_alloc_pd(ctx);
	pb = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	ca = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	cb = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	la = aligned_alloc(4096, BUF);
	ra = aligned_alloc(4096, BUF);
	rb = aligned_alloc(4096, BUF);
	CHECK(pa && pb && cq && ca && cb && la && ra && rb);
	lmr = ibv_reg_mr(pa, la, BUF, access);
	amr = ibv_reg_mr(pa, ra, BUF, access);
	bmr = ibv_reg_mr(pb, rb, BUF, access);
	CHECK(lmr && amr && bmr);

	RUN(test_device_says_xrc);
	RUN(test_open_xrcd_by_file);
	RUN(test_xrc_srq_and_qp_arguments);
	RUN(test_xrc_traffic_to_two_srqs);
	RUN(test_xrc_srq_of_another_domain_is_refused);

	CHECK(ibv_dereg_mr(lmr) == 0 && ibv_dereg_mr(amr) == 0 && ibv_dereg_mr(bmr) == 0);
	CHECK(ibv_destroy_cq(cq) == 0 && ibv_destroy_cq(ca) == 0 && ibv_destroy_cq(cb) == 0);
	CHECK(ibv_dealloc_pd(pa) == 0 && ibv_dealloc_pd(pb) == 0);
	CHECK(ibv_close_device(ctx) == 0);
	ibv_free_device_list(list);
	unlink(path);
	free(la);
	free(ra);
	free(rb);
	return 0;
}
