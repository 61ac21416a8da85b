/* SPDX-License-Identifier: MIT */
/*
 * test_import.c - a context imported from a dup of another's cmd_fd reaches its PDs and
 * MRs by handle (ibv_import_device(3), ibv_import_pd(3), ibv_import_mr(3)), as
 * rdma-core's SharedPDTestCase does: a QP on the imported PD moves data through the
 * imported MR, and the objects go in that test's order (unimport the MR, unimport the
 * PD, destroy the QP, then the originals). Importing the fd of another process's
 * context is EOPNOTSUPP, an fd of no context EINVAL, an unknown handle ENOENT. Run
 * under the sanitizer build, nothing is leaked or touched after it is freed.
 * Traffic between two QPs of one device (URNIC_ADDR, 127.0.5.5).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "check.h"
#include "verbs_loop.h"

enum { LEN = 4096, MSG = 256 };

static struct ibv_device *dev;

/* qp posts one signaled WRITE of MSG bytes from laddr/lkey to raddr/rkey: success. */
static void write_ok(struct ibv_qp *qp, struct ibv_cq *cq, void *laddr, uint32_t lkey,
		     uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)laddr, MSG, lkey };
	struct ibv_send_wr wr = { .wr_id = 5,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct ibv_wc wc;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	CHECK_EQ(ibv_post_send(qp, &wr, &bad), 0);
	wc = loop_next_wc(cq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, 5);
}

/* Every context has its own cmd_fd, which a dup of names again. */
static void each_context_has_a_cmd_fd(void)
{
	struct ibv_context *a = ibv_open_device(dev), *b = ibv_open_device(dev);
	struct stat sa, sb;

	CHECK(a && b);
	CHECK(a->cmd_fd >= 0 && b->cmd_fd >= 0);
	CHECK(fstat(a->cmd_fd, &sa) == 0 && fstat(b->cmd_fd, &sb) == 0);
	CHECK(sa.st_ino != sb.st_ino || sa.st_dev != sb.st_dev);
	CHECK_EQ(ibv_close_device(a), 0);
	CHECK_EQ(ibv_close_device(b), 0);
}

/* SharedPDTestCase.test_imported_rc_ex_rdma_write, in C. */
static void imported_pd_and_mr_carry_traffic(void)
{
	struct ibv_context *ctx = ibv_open_device(dev), *imp;
	struct ibv_pd *pd, *ipd, *peer_pd;
	struct ibv_mr *mr, *imr, *peer_mr;
	struct ibv_cq *cq, *icq;
	struct ibv_qp *qp, *iqp;
	uint8_t *buf = calloc(1, LEN), *peer_buf = calloc(1, LEN);

	CHECK(ctx && buf && peer_buf);
	pd = ibv_alloc_pd(ctx);
	peer_pd = ibv_alloc_pd(ctx);
	CHECK(pd && peer_pd);
	CHECK(pd->handle != peer_pd->handle);
	mr = ibv_reg_mr(pd, buf, LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	peer_mr = ibv_reg_mr(peer_pd, peer_buf, LEN,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(mr && peer_mr);
	CHECK(mr->handle != peer_mr->handle);

	imp = ibv_import_device(dup(ctx->cmd_fd));
	CHECK(imp);
	CHECK(imp != ctx && imp->device == ctx->device);
	ipd = ibv_import_pd(imp, pd->handle);
	CHECK(ipd);
	CHECK(ipd->context == imp);
	CHECK_EQ(ipd->handle, pd->handle);
	imr = ibv_import_mr(ipd, mr->handle);
	CHECK(imr);
	CHECK(imr->context == imp && imr->pd == ipd);
	CHECK_EQ(imr->lkey, mr->lkey);
	CHECK_EQ(imr->rkey, mr->rkey);
	CHECK_EQ(imr->length, mr->length);
	CHECK_EQ(imr->handle, mr->handle);
	CHECK(imr->addr == NULL); /* as rdma-core's ibv_cmd_query_mr leaves it */
	errno = 0;
	CHECK(ibv_import_pd(imp, pd->handle + 1000) == NULL && errno == ENOENT);
	errno = 0;
	CHECK(ibv_import_mr(ipd, peer_mr->handle + 1000) == NULL && errno == ENOENT);

	/* A QP of the imported context on the imported PD, its peer on the original. */
	icq = ibv_create_cq(imp, 16, NULL, NULL, 0);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	CHECK(icq && cq);
	iqp = loop_new_rc(ipd, icq);
	qp = loop_new_rc(peer_pd, cq);
	loop_connect(iqp, qp->qp_num);
	loop_connect(qp, iqp->qp_num);
	/* The peer writes into the region through the imported MR's R_Key... */
	memset(peer_buf, 0x5a, MSG);
	write_ok(qp, cq, peer_buf, peer_mr->lkey, (uintptr_t)buf, imr->rkey);
	CHECK(memcmp(buf, peer_buf, MSG) == 0);
	/* ...and the imported side sends from it with the imported L_Key: the imported PD
	 * is the region's PD. */
	memset(buf + MSG, 0xc3, MSG);
	write_ok(iqp, icq, buf + MSG, imr->lkey, (uintptr_t)peer_buf + MSG, peer_mr->rkey);
	CHECK(memcmp(peer_buf + MSG, buf + MSG, MSG) == 0);

	/* The original PD has users through the import: EBUSY. */
	CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);
	/* SharedPDTestCase's order: unimport the MR and the PD, then destroy the QP made
	 * on the imported PD, then the originals. */
	ibv_unimport_mr(imr);
	ibv_unimport_pd(ipd);
	CHECK_EQ(ibv_destroy_qp(iqp), 0);
	CHECK_EQ(ibv_destroy_cq(icq), 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_dereg_mr(peer_mr), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_dealloc_pd(peer_pd), 0);
	CHECK_EQ(ibv_close_device(imp), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	free(buf);
	free(peer_buf);
}

/* The originals may go first: imports still name them until they are let go of, and a
 * deallocated PD or deregistered MR imports nothing more. The original context may
 * close before its import, which goes on as a context of its own. */
static void originals_may_go_before_their_imports(void)
{
	struct ibv_context *ctx = ibv_open_device(dev), *imp;
	struct ibv_pd *pd, *ipd;
	struct ibv_mr *mr, *imr;
	uint8_t *buf = calloc(1, LEN);
	uint32_t pd_handle, mr_handle;

	CHECK(ctx && buf);
	pd = ibv_alloc_pd(ctx);
	CHECK(pd);
	mr = ibv_reg_mr(pd, buf, LEN, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr);
	pd_handle = pd->handle;
	mr_handle = mr->handle;
	imp = ibv_import_device(dup(ctx->cmd_fd));
	CHECK(imp);
	ipd = ibv_import_pd(imp, pd_handle);
	CHECK(ipd);
	imr = ibv_import_mr(ipd, mr_handle);
	CHECK(imr);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	errno = 0;
	CHECK(ibv_import_pd(imp, pd_handle) == NULL && errno == ENOENT);
	errno = 0;
	CHECK(ibv_import_mr(ipd, mr_handle) == NULL && errno == ENOENT);
	CHECK_EQ(ibv_close_device(ctx), 0);
	ibv_unimport_mr(imr);
	ibv_unimport_pd(ipd);
	/* What the import makes now is its own, and offered by handle as any. */
	pd = ibv_alloc_pd(imp);
	CHECK(pd);
	ipd = ibv_import_pd(imp, pd->handle);
	CHECK(ipd);
	ibv_unimport_pd(ipd);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(imp), 0);
	free(buf);
}

/* Unimporting a PD frees only the application's handle (ibv_unimport_pd(3)): QPs and
 * SRQs made on it are destroyed afterwards, as pyverbs' SharedPDTestCase does, without
 * reading the handle (the sanitizer build checks that). */
static void objects_made_on_an_import_outlive_it(void)
{
	struct ibv_context *ctx = ibv_open_device(dev), *imp;
	struct ibv_pd *pd, *ipd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_srq *srq;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };

	CHECK(ctx);
	pd = ibv_alloc_pd(ctx);
	CHECK(pd);
	imp = ibv_import_device(dup(ctx->cmd_fd));
	CHECK(imp);
	ipd = ibv_import_pd(imp, pd->handle);
	CHECK(ipd);
	cq = ibv_create_cq(imp, 4, NULL, NULL, 0);
	CHECK(cq);
	srq = ibv_create_srq(ipd, &sa);
	CHECK(srq);
	struct ibv_qp_init_attr qa = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC
	};
	qp = ibv_create_qp(ipd, &qa);
	CHECK(qp);
	ibv_unimport_pd(ipd);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_srq(srq), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(imp), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
}

/* A PD may be deallocated through its import (ibv_dealloc_pd destroys the object, as
 * in the kernel); the original's memory stays for the original's own deallocation. */
static void dealloc_through_an_import(void)
{
	struct ibv_context *ctx = ibv_open_device(dev), *imp;
	struct ibv_pd *pd, *ipd;

	CHECK(ctx);
	pd = ibv_alloc_pd(ctx);
	CHECK(pd);
	imp = ibv_import_device(dup(ctx->cmd_fd));
	CHECK(imp);
	ipd = ibv_import_pd(imp, pd->handle);
	CHECK(ipd);
	CHECK_EQ(ibv_dealloc_pd(ipd), 0);
	errno = 0;
	CHECK(ibv_import_pd(imp, pd->handle) == NULL && errno == ENOENT);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(imp), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
}

/* An fd of no context: EINVAL (rdma-core: not a uverbs device). The fd of a context of
 * another process, passed over a socket: EOPNOTSUPP, urnic's objects live in the
 * process that made them. Refused, the fd stays the caller's. */
static void fds_that_cannot_be_imported(void)
{
	int sv[2], p[2], fd = -1, status;
	char byte = 0;
	pid_t child;

	CHECK(pipe(p) == 0);
	errno = 0;
	CHECK(ibv_import_device(p[0]) == NULL && errno == EINVAL);
	CHECK(close(p[0]) == 0 && close(p[1]) == 0);
	errno = 0;
	CHECK(ibv_import_device(-1) == NULL && errno == EINVAL);

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		struct ibv_context *c = ibv_open_device(dev);
		char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
		struct iovec iov = { &byte, 1 };
		struct msghdr m = { .msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

		if (!c)
			_exit(2);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &c->cmd_fd, sizeof(int));
		if (sendmsg(sv[1], &m, 0) != 1)
			_exit(3);
		/* Hold the context until the parent is done with the fd. */
		if (read(sv[1], &byte, 1) != 1)
			_exit(4);
		ibv_close_device(c);
		_exit(0);
	}
	{
		char cbuf[CMSG_SPACE(sizeof(int))];
		struct iovec iov = { &byte, 1 };
		struct msghdr m = { .msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm;

		CHECK(recvmsg(sv[0], &m, 0) == 1);
		cm = CMSG_FIRSTHDR(&m);
		CHECK(cm && cm->cmsg_type == SCM_RIGHTS);
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	}
	errno = 0;
	CHECK(ibv_import_device(fd) == NULL && errno == EOPNOTSUPP);
	CHECK(close(fd) == 0);
	CHECK(write(sv[0], &byte, 1) == 1);
	CHECK(waitpid(child, &status, 0) == child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	struct ibv_device **list;
	int n;

	if (!getenv("URNIC_ADDR"))
		setenv("URNIC_ADDR", "127.0.5.5", 1);
	list = ibv_get_device_list(&n);
	CHECK(list && n >= 1);
	dev = list[0];

	RUN(each_context_has_a_cmd_fd);
	RUN(imported_pd_and_mr_carry_traffic);
	RUN(originals_may_go_before_their_imports);
	RUN(objects_made_on_an_import_outlive_it);
	RUN(dealloc_through_an_import);
	RUN(fds_that_cannot_be_imported);

	ibv_free_device_list(list);
	return 0;
}
