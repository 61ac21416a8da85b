/* SPDX-License-Identifier: MIT */
/*
 * test_dlclose.c - the drop-in library dlopen()ed (RTLD_NOW | RTLD_LOCAL) and dlclose()d
 * 50 times, as Open MPI over libfabric unloads it: everything closed first; a device, CQ
 * and QP left open with the engine thread asleep in ppoll; RDMA WRITEs and SENDs still in
 * flight between two RC QPs of the device. After each dlclose a datagram to the device's
 * port wakes the engine thread, which would return into unmapped code if the library had
 * gone (src/CMakeLists.txt, -z nodelete). Last, a loaded copy still carries a message.
 * Links no verbs library: every verb comes from dlsym. Argument: the library's path.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "check.h"

enum { ROUNDS = 50, BUF = 16384, WRITES = 8, SENDS = 4, MSG = 2048 };

static const char *lib_path;
static const char *dev_addr; /* URNIC_ADDR: the device's (one) address */

/* The verbs of one loaded copy of the library. */
struct verbs {
	void *h;
	__typeof__(ibv_get_device_list) *get_device_list;
	__typeof__(ibv_free_device_list) *free_device_list;
	__typeof__(ibv_open_device) *open_device;
	__typeof__(ibv_close_device) *close_device;
	__typeof__(ibv_alloc_pd) *alloc_pd;
	__typeof__(ibv_dealloc_pd) *dealloc_pd;
	__typeof__(ibv_create_cq) *create_cq;
	__typeof__(ibv_destroy_cq) *destroy_cq;
	__typeof__(ibv_create_qp) *create_qp;
	__typeof__(ibv_destroy_qp) *destroy_qp;
	__typeof__(ibv_modify_qp) *modify_qp;
	__typeof__(ibv_reg_mr) *reg_mr;
	__typeof__(ibv_dereg_mr) *dereg_mr;
	__typeof__(ibv_query_gid) *query_gid;
};

/* What a round leaves open (modes "open" and "traffic"): kept reachable, for the
 * engine thread goes on using it and a leak checker should not call it lost. */
struct end {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t buf[BUF];
};

static struct ibv_context *kept_ctx[2 * ROUNDS + 1]; /* asleep, traffic, still_works */
static struct end kept_end[3 * ROUNDS];		     /* asleep: 1 a round, traffic: 2 */
static int nkept_ctx, nkept_end;

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p) {
		fprintf(stderr, "dlsym %s: %s\n", name, dlerror());
		exit(1);
	}
	return p;
}

static void load(struct verbs *v)
{
	v->h = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
	if (!v->h) {
		fprintf(stderr, "dlopen %s: %s\n", lib_path, dlerror());
		exit(1);
	}
	v->get_device_list = sym(v->h, "ibv_get_device_list");
	v->free_device_list = sym(v->h, "ibv_free_device_list");
	v->open_device = sym(v->h, "ibv_open_device");
	v->close_device = sym(v->h, "ibv_close_device");
	v->alloc_pd = sym(v->h, "ibv_alloc_pd");
	v->dealloc_pd = sym(v->h, "ibv_dealloc_pd");
	v->create_cq = sym(v->h, "ibv_create_cq");
	v->destroy_cq = sym(v->h, "ibv_destroy_cq");
	v->create_qp = sym(v->h, "ibv_create_qp");
	v->destroy_qp = sym(v->h, "ibv_destroy_qp");
	v->modify_qp = sym(v->h, "ibv_modify_qp");
	v->reg_mr = sym(v->h, "ibv_reg_mr");
	v->dereg_mr = sym(v->h, "ibv_dereg_mr");
	v->query_gid = sym(v->h, "ibv_query_gid");
}

static void unload(struct verbs *v)
{
	CHECK_EQ(dlclose(v->h), 0);
	memset(v, 0, sizeof(*v));
}

static struct ibv_context *open_first(struct verbs *v)
{
	int n = 0;
	struct ibv_device **list = v->get_device_list(&n);
	struct ibv_context *ctx;

	CHECK(list);
	CHECK(n >= 1);
	ctx = v->open_device(list[0]);
	CHECK(ctx);
	v->free_device_list(list);
	return ctx;
}

static void open_end(struct verbs *v, struct ibv_context *ctx, struct end *e)
{
	struct ibv_qp_init_attr init = {
		.cap = { .max_send_wr = 32,
			 .max_recv_wr = 32,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	e->pd = v->alloc_pd(ctx);
	CHECK(e->pd);
	e->cq = v->create_cq(ctx, 128, NULL, NULL, 0);
	CHECK(e->cq);
	init.send_cq = init.recv_cq = e->cq;
	e->qp = v->create_qp(e->pd, &init);
	CHECK(e->qp);
	e->mr = v->reg_mr(e->pd, e->buf, sizeof(e->buf),
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(e->mr);
}

/* RESET -> INIT -> RTR -> RTS towards QP dest of the device's own address. */
static void to_rts(struct verbs *v, struct ibv_context *ctx, struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
				 .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	CHECK_EQ(v->modify_qp(qp, &a,
			      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
		 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.grh.hop_limit = 64;
	CHECK_EQ(v->query_gid(ctx, 1, 1, &a.ah_attr.grh.dgid), 0);
	CHECK_EQ(v->modify_qp(qp, &a,
			      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				      IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				      IBV_QP_MIN_RNR_TIMER),
		 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	CHECK_EQ(v->modify_qp(qp, &a,
			      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				      IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC),
		 0);
}

static void post_recvs(struct end *e, int n)
{
	for (int i = 0; i < n; i++) {
		struct ibv_sge sge = { (uintptr_t)e->buf + (size_t)i * MSG, MSG, e->mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 };
		struct ibv_recv_wr *bad;

		CHECK_EQ(ibv_post_recv(e->qp, &wr, &bad), 0);
	}
}

/* WRITES RDMA WRITEs, then SENDS SENDs, from a to b, none waited for. */
static void post_traffic(struct end *a, struct end *b)
{
	for (int i = 0; i < WRITES + SENDS; i++) {
		struct ibv_sge sge = { (uintptr_t)a->buf, MSG, a->mr->lkey };
		struct ibv_send_wr wr = { .wr_id = (uint64_t)i,
					  .sg_list = &sge,
					  .num_sge = 1,
					  .opcode = i < WRITES ? IBV_WR_RDMA_WRITE : IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED };
		struct ibv_send_wr *bad;

		wr.wr.rdma.remote_addr = (uintptr_t)b->buf + (size_t)(i % (BUF / MSG)) * MSG;
		wr.wr.rdma.rkey = b->mr->rkey;
		CHECK_EQ(ibv_post_send(a->qp, &wr, &bad), 0);
	}
}

/* A datagram to the device's RoCE port: the engine thread, asleep in ppoll on the
 * socket, wakes and runs a pass in the library's code. */
static void poke(void)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(4791) };
	static const char junk[] = "wake up";
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	CHECK(fd >= 0);
	CHECK_EQ(inet_pton(AF_INET, dev_addr, &to.sin_addr), 1);
	CHECK_EQ(sendto(fd, junk, sizeof(junk), 0, (struct sockaddr *)&to, sizeof(to)),
		 (long long)sizeof(junk));
	close(fd);
}

/* After a dlclose: wake the engine thread and give it time to run (and, were the
 * library gone, to fault) before the next dlopen could map the code again. */
static void after_unload(void)
{
	poke();
	usleep(20000);
}

/* Everything opened is closed before the dlclose: the last close stops the engine
 * thread, and the library's exit handler (device.c, at_exit) is not run early. */
static void test_closed(void)
{
	for (int r = 0; r < ROUNDS; r++) {
		struct verbs v;
		struct ibv_context *ctx;
		static struct end e;

		load(&v);
		ctx = open_first(&v);
		open_end(&v, ctx, &e);
		CHECK_EQ(v.destroy_qp(e.qp), 0);
		CHECK_EQ(v.dereg_mr(e.mr), 0);
		CHECK_EQ(v.destroy_cq(e.cq), 0);
		CHECK_EQ(v.dealloc_pd(e.pd), 0);
		CHECK_EQ(v.close_device(ctx), 0);
		unload(&v);
		after_unload();
	}
}

/* A device with a CQ and a QP left open, its engine thread asleep in ppoll (it polls
 * on for at most 250 us after its last work, engine_thread.c), when the library is
 * closed. */
static void test_open_asleep(void)
{
	for (int r = 0; r < ROUNDS; r++) {
		struct verbs v;
		struct end *e = &kept_end[nkept_end++];

		load(&v);
		kept_ctx[nkept_ctx] = open_first(&v);
		open_end(&v, kept_ctx[nkept_ctx++], e);
		usleep(2000);
		unload(&v);
		after_unload();
	}
}

/* An RC pair of one device with WRITEs and SENDs in flight when the library is
 * closed; ACKs and retransmission timers then wake the engine thread too. */
static void test_traffic(void)
{
	for (int r = 0; r < ROUNDS; r++) {
		struct verbs v;
		struct ibv_context *ctx;
		struct end *a = &kept_end[nkept_end++], *b = &kept_end[nkept_end++];

		load(&v);
		ctx = kept_ctx[nkept_ctx++] = open_first(&v);
		open_end(&v, ctx, a);
		open_end(&v, ctx, b);
		to_rts(&v, ctx, a->qp, b->qp->qp_num);
		to_rts(&v, ctx, b->qp, a->qp->qp_num);
		post_recvs(b, SENDS);
		post_traffic(a, b);
		unload(&v);
		after_unload();
	}
}

/* The library still works after all that: a SEND between two new QPs completes. */
static void test_still_works(void)
{
	static struct end a, b;
	struct verbs v;
	struct ibv_context *ctx;
	struct ibv_wc wc;
	int got = 0;

	load(&v);
	ctx = open_first(&v);
	open_end(&v, ctx, &a);
	open_end(&v, ctx, &b);
	to_rts(&v, ctx, a.qp, b.qp->qp_num);
	to_rts(&v, ctx, b.qp, a.qp->qp_num);
	post_recvs(&b, 1);
	{
		struct ibv_sge sge = { (uintptr_t)a.buf, MSG, a.mr->lkey };
		struct ibv_send_wr wr = { .sg_list = &sge,
					  .num_sge = 1,
					  .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED };
		struct ibv_send_wr *bad;

		memset(a.buf, 0x5a, MSG);
		CHECK_EQ(ibv_post_send(a.qp, &wr, &bad), 0);
	}
	for (int i = 0; i < 2000 && !got; i++) {
		int n = ibv_poll_cq(b.cq, 1, &wc);

		CHECK(n >= 0);
		got = n;
		if (!n)
			usleep(1000);
	}
	CHECK_EQ(got, 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_RECV);
	CHECK_EQ(b.buf[MSG - 1], 0x5a);
	kept_ctx[nkept_ctx++] = ctx;
	unload(&v);
}

int main(int argc, char **argv)
{
	const char *only = argc > 2 ? argv[2] : NULL;

	if (argc < 2) {
		fprintf(stderr, "usage: %s <libibverbs.so.1> [closed|asleep|traffic]\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	lib_path = argv[1];
	dev_addr = getenv("URNIC_ADDR");
	CHECK(dev_addr && !strchr(dev_addr, ','));
	if (!only || strcmp(only, "closed") == 0)
		RUN(test_closed);
	if (!only || strcmp(only, "asleep") == 0)
		RUN(test_open_asleep);
	if (!only || strcmp(only, "traffic") == 0)
		RUN(test_traffic);
	RUN(test_still_works);
	return 0;
}
