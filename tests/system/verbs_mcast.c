/* SPDX-License-Identifier: MIT */
/*
 * verbs_mcast.c - UD multicast as an application uses it (ibv_attach_mcast(3)), over the
 * drop-in libibverbs, with two urnic devices in one process (verbs_prog.sh --mcast: lo
 * with multicast on and a route for 224.0.0.0/4; with --ipv6, a veth pair):
 *
 *   urnic0 UD QP q0 --- datagram to the group, DestQP 0xFFFFFF ---> urnic1: q1, q2 (attached)
 *                                                                     q3 (not attached)
 *
 * The group is 239.1.2.3 on IPv4 devices, ff0e::239:1:2:3 on IPv6 ones (--ipv6).
 *
 * The device reports its multicast limits. The documented errors: an RC QP or a unicast
 * GID is EINVAL, detaching what is not attached is EINVAL, destroying an attached QP is
 * EBUSY; attaching twice is a no-op (rxe). One SEND to the group reaches q1 and q2, each
 * with its own completion (the sender's QPN, the GRH naming the group and carrying the
 * AH's hop limit as TTL), not q3; a second
 * after q2 is detached reaches q1 only; one with the wrong Q_Key reaches no one. Prints
 * "ok NAME" per step; exits 1 on the first failure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "check.h"

#define QKEY 0x22222222u
#define MSG 512
#define HOPS 3 /* a multicast datagram's TTL is the AH's hop limit (the socket's: 1) */

struct rq {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
};

static struct ibv_pd *pd[2];
static struct ibv_mr *mr[2];
static uint8_t *buf[2];

static struct rq ud(struct ibv_context *ctx, int side, enum ibv_qp_type type)
{
	struct rq r;
	struct ibv_qp_init_attr init = {
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = type
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY };

	r.cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	CHECK(r.cq);
	init.send_cq = init.recv_cq = r.cq;
	r.qp = ibv_create_qp(pd[side], &init);
	CHECK(r.qp);
	if (type == IBV_QPT_UD) {
		CHECK(ibv_modify_qp(r.qp, &a,
				    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY) ==
		      0);
		a.qp_state = IBV_QPS_RTR;
		CHECK(ibv_modify_qp(r.qp, &a, IBV_QP_STATE) == 0);
		a.qp_state = IBV_QPS_RTS;
		CHECK(ibv_modify_qp(r.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) == 0);
	}
	return r;
}

static void post_recv(struct rq *r, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)(buf[1] + id * 4096), 40 + MSG, mr[1]->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	CHECK(ibv_post_recv(r->qp, &wr, &bad) == 0);
}

/* A completion within 5 s, or none within 300 ms when want_none. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc, int want_none)
{
	struct timespec t0, t;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		CHECK(n >= 0);
		if (n)
			return 1;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >
		    (want_none ? 300 : 5000))
			return 0;
	}
}

static void send_group(struct rq *q0, struct ibv_ah *ah, uint32_t qkey, uint8_t fill)
{
	struct ibv_sge sge = { (uintptr_t)buf[0], MSG, mr[0]->lkey };
	struct ibv_send_wr wr = { .wr_id = fill,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct ibv_wc wc;

	memset(buf[0], fill, MSG);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 0xffffff; /* IBTA: the multicast DestQP */
	wr.wr.ud.remote_qkey = qkey;
	CHECK(ibv_post_send(q0->qp, &wr, &bad) == 0);
	CHECK(poll_one(q0->cq, &wc, 0) && wc.status == IBV_WC_SUCCESS && wc.wr_id == fill);
}

/* A RoCEv2 GID holding an IPv4 address (::ffff:a.b.c.d). */
static int is_ipv4(const union ibv_gid *g)
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(g->raw, prefix, sizeof(prefix)) == 0;
}

/* r got the datagram filled with `fill` into receive id, from q0, GRH naming the group. */
static void expect_recv(struct rq *r, uint64_t id, uint8_t fill, uint32_t src_qp,
			const union ibv_gid *group)
{
	struct ibv_wc wc;
	const uint8_t *p = buf[1] + id * 4096;

	CHECK(poll_one(r->cq, &wc, 0));
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == id && wc.opcode == IBV_WC_RECV);
	CHECK(wc.byte_len == 40 + MSG && wc.src_qp == src_qp && (wc.wc_flags & IBV_WC_GRH));
	CHECK(p[40] == fill && p[40 + MSG - 1] == fill);
	if (is_ipv4(group)) {
		CHECK(memcmp(p + 20 + 16, group->raw + 12, 4) == 0); /* IPv4 header: destination */
		CHECK(p[20 + 8] == HOPS);			     /* and TTL */
	} else {
		CHECK(memcmp(p + 24, group->raw, 16) == 0); /* IPv6 header: destination */
		CHECK(p[7] == HOPS);			    /* and hop limit */
	}
}

int main(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx[2];
	struct ibv_device_attr da;
	union ibv_gid group4 = { .raw = { [10] = 0xff, [11] = 0xff, 239, 1, 2, 3 } };
	union ibv_gid group6 = {
		.raw = { 0xff, 0x0e, [8] = 0x02, [9] = 0x39, [11] = 1, [13] = 2, [15] = 3 }
	};
	union ibv_gid group, gid1;
	struct rq q0, q1, q2, q3, rc;
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	struct ibv_ah *ah;
	struct ibv_wc wc;
	int n;

	list = ibv_get_device_list(&n);
	CHECK(list && n >= 2);
	for (int s = 0; s < 2; s++) {
		ctx[s] = ibv_open_device(list[s]);
		CHECK(ctx[s]);
		pd[s] = ibv_alloc_pd(ctx[s]);
		CHECK(pd[s]);
		buf[s] = aligned_alloc(4096, 8 * 4096);
		CHECK(buf[s]);
		mr[s] = ibv_reg_mr(pd[s], buf[s], 8 * 4096, IBV_ACCESS_LOCAL_WRITE);
		CHECK(mr[s]);
	}
	CHECK(ibv_query_device(ctx[1], &da) == 0);
	CHECK(da.max_mcast_grp > 0 && da.max_mcast_qp_attach >= 2 &&
	      da.max_total_mcast_qp_attach >= da.max_mcast_qp_attach);
	printf("ok query_device max_mcast_grp %d max_mcast_qp_attach %d\n", da.max_mcast_grp,
	       da.max_mcast_qp_attach);

	q0 = ud(ctx[0], 0, IBV_QPT_UD);
	q1 = ud(ctx[1], 1, IBV_QPT_UD);
	q2 = ud(ctx[1], 1, IBV_QPT_UD);
	q3 = ud(ctx[1], 1, IBV_QPT_UD);
	rc = ud(ctx[1], 1, IBV_QPT_RC);
	CHECK(ibv_query_gid(ctx[1], 1, 1, &gid1) == 0);
	group = is_ipv4(&gid1) ? group4 : group6;

	CHECK(ibv_attach_mcast(rc.qp, &group, 0) == EINVAL); /* not UD */
	CHECK(ibv_attach_mcast(q1.qp, &gid1, 0) == EINVAL);  /* not multicast */
	CHECK(ibv_detach_mcast(q1.qp, &group, 0) == EINVAL); /* not attached */
	CHECK(ibv_attach_mcast(q1.qp, &group, 0) == 0);
	CHECK(ibv_attach_mcast(q1.qp, &group, 0) == 0); /* again: a no-op */
	CHECK(ibv_attach_mcast(q2.qp, &group, 0) == 0);
	CHECK(ibv_destroy_qp(q2.qp) == EBUSY);
	printf("ok attach_mcast: EINVAL for RC and unicast, EBUSY to destroy while attached\n");

	for (int i = 0; i < 2; i++) {
		post_recv(&q1, (uint64_t)i);
		post_recv(&q2, 2 + (uint64_t)i);
		post_recv(&q3, 4 + (uint64_t)i);
	}
	aa.grh.dgid = group;
	aa.grh.sgid_index = 1;
	aa.grh.hop_limit = HOPS;
	ah = ibv_create_ah(pd[0], &aa);
	CHECK(ah);
	send_group(&q0, ah, QKEY, 0x31);
	expect_recv(&q1, 0, 0x31, q0.qp->qp_num, &group);
	expect_recv(&q2, 2, 0x31, q0.qp->qp_num, &group);
	CHECK(!poll_one(q3.cq, &wc, 1));
	printf("ok one SEND to %s reached both attached QPs, not the third\n",
	       is_ipv4(&group) ? "239.1.2.3" : "ff0e::239:1:2:3");

	CHECK(ibv_detach_mcast(q2.qp, &group, 0) == 0);
	send_group(&q0, ah, QKEY, 0x32);
	expect_recv(&q1, 1, 0x32, q0.qp->qp_num, &group);
	CHECK(!poll_one(q2.cq, &wc, 1) && !poll_one(q3.cq, &wc, 1));
	send_group(&q0, ah, QKEY ^ 1, 0x33); /* IBTA 10.2.5: the Q_Key still decides */
	CHECK(!poll_one(q1.cq, &wc, 1));
	printf("ok after detach only q1 receives; a wrong Q_Key reaches no one\n");

	CHECK(ibv_detach_mcast(q1.qp, &group, 0) == 0);
	CHECK(ibv_destroy_ah(ah) == 0);
	for (struct rq *r = &q0; r; r = r == &q0   ? &q1
					: r == &q1 ? &q2
					: r == &q2 ? &q3
					: r == &q3 ? &rc
						   : NULL) {
		CHECK(ibv_destroy_qp(r->qp) == 0);
		CHECK(ibv_destroy_cq(r->cq) == 0);
	}
	for (int s = 0; s < 2; s++) {
		CHECK(ibv_dereg_mr(mr[s]) == 0);
		CHECK(ibv_dealloc_pd(pd[s]) == 0);
		CHECK(ibv_close_device(ctx[s]) == 0);
		free(buf[s]);
	}
	ibv_free_device_list(list);
	printf("ok cleanup\n");
	return 0;
}
