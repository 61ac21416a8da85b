/* SPDX-License-Identifier: MIT */
/*
 * verbs_ud_srq.c - the UD, address handle and SRQ verbs as an application calls them,
 * over the drop-in libibverbs, with two urnic devices in one process:
 *
 *   urnic0 (URNIC_ADDR's first address) UD QP q0 --- RoCEv2 over lo ---> urnic1 q1, q2
 *
 * q0 (ibv_create_qp_ex, ibv_wr_* with ibv_wr_set_ud_addr) sends a datagram to q1 by an
 * AH built with ibv_create_ah; q1 answers through ibv_create_ah_from_wc(), which must
 * find the sender in the GRH area the engine wrote (ibv_init_ah_from_wc is checked
 * field by field, down to the AH's traffic class, carried in the IP header both ways). q2 takes its
 * receives from an SRQ: ibv_query_srq / ibv_modify_srq, the limit event
 * (IBV_EVENT_SRQ_LIMIT_REACHED once), IBV_EVENT_QP_LAST_WQE_REACHED on ibv_modify_qp to ERR, EBUSY
 * from ibv_destroy_srq while a QP uses it, EINVAL from ibv_post_recv on that QP. Posting an RDMA
 * WRITE on UD or a READ on UC is EINVAL. Prints "ok NAME" per step; exits 1 on the first failure.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "check.h"
#include "verbs_side.h"

#define QKEY 0x11111111u
/* DSCP 26 with ECT(0): the AH's traffic class must reach the IP header's TOS. */
#define TCLASS 0x6a
#define MSG 1000

static struct ibv_qp *ud_qp(struct side *s, struct ibv_srq *srq, bool ex)
{
	struct ibv_qp_init_attr_ex init = {
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.srq = srq,
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = 16,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_UD,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = s->pd,
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY };
	struct ibv_qp *qp;

	if (ex) {
		init.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		init.send_ops_flags = IBV_QP_EX_WITH_SEND;
	}
	qp = ibv_create_qp_ex(s->ctx, &init);
	CHECK(qp);
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY) ==
	      0);
	a.qp_state = IBV_QPS_RTR;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == 0);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x123;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) == 0);
	return qp;
}

static struct ibv_ah *ah_to(struct side *from, const struct side *to)
{
	struct ibv_ah_attr a = { .is_global = 1, .port_num = 1 };

	a.grh.dgid = to->gid;
	a.grh.sgid_index = 1;
	a.grh.hop_limit = 64;
	a.grh.traffic_class = TCLASS;
	return ibv_create_ah(from->pd, &a);
}

static void post_recv(struct ibv_qp *qp, struct ibv_srq *srq, struct side *s, uint64_t id,
		      uint32_t off)
{
	struct ibv_sge sge = { (uintptr_t)(s->buf + off), 40 + MSG, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	CHECK((srq ? ibv_post_srq_recv(srq, &wr, &bad) : ibv_post_recv(qp, &wr, &bad)) == 0);
}

static void send_ud(struct ibv_qp *qp, struct side *s, struct ibv_ah *ah, uint32_t qpn, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)(s->buf + 32768), MSG, s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = QKEY;
	CHECK(ibv_post_send(qp, &wr, &bad) == 0);
}

static void poll1(struct ibv_cq *cq, struct ibv_wc *wc)
{
	time_t end = time(NULL) + 10;
	int n;

	while ((n = ibv_poll_cq(cq, 1, wc)) == 0)
		CHECK(time(NULL) < end);
	CHECK(n == 1);
}

/* A receive completion on cq, skipping send completions. */
static void poll_recv(struct ibv_cq *cq, struct ibv_wc *wc)
{
	do
		poll1(cq, wc);
	while (wc->opcode == IBV_WC_SEND);
	CHECK(wc->status == IBV_WC_SUCCESS);
}

static void async_event(struct ibv_context *ctx, enum ibv_event_type type, void *element)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	CHECK(poll(&p, 1, 10000) == 1);
	CHECK(ibv_get_async_event(ctx, &ev) == 0);
	CHECK(ev.event_type == type);
	CHECK(type == IBV_EVENT_SRQ_LIMIT_REACHED ? (void *)ev.element.srq == element
						  : (void *)ev.element.qp == element);
	ibv_ack_async_event(&ev);
}

static void no_async_event(struct ibv_context *ctx)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };

	CHECK(poll(&p, 1, 200) == 0);
}

int main(void)
{
	struct side s0, s1;
	struct ibv_device **list;
	struct ibv_device_attr da;
	struct ibv_qp *q0, *q1, *q2;
	struct ibv_ah *ah01, *ah10;
	struct ibv_ah_attr aa;
	struct ibv_wc wc;
	struct ibv_srq *srq;
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq_attr sa;
	struct ibv_qp_ex *x;
	int n;

	list = ibv_get_device_list(&n);
	CHECK(list && n >= 2);
	side_open(&s0, list[0], 64, 65536, IBV_ACCESS_LOCAL_WRITE);
	side_open(&s1, list[1], 64, 65536, IBV_ACCESS_LOCAL_WRITE);
	CHECK(ibv_query_device(s1.ctx, &da) == 0);
	CHECK(da.max_srq > 0 && da.max_srq_wr > 0 && da.max_srq_sge > 0 && da.max_ah > 0);
	printf("ok query_device max_srq %d max_srq_wr %d max_srq_sge %d\n", da.max_srq,
	       da.max_srq_wr, da.max_srq_sge);

	/* q0 -> q1 with the ibv_wr_* API and an AH from ibv_create_ah. */
	q0 = ud_qp(&s0, NULL, true);
	q1 = ud_qp(&s1, NULL, false);
	ah01 = ah_to(&s0, &s1);
	CHECK(ah01);
	memset(s0.buf + 32768, 0x5a, MSG);
	post_recv(q1, NULL, &s1, 1, 0);
	x = ibv_qp_to_qp_ex(q0);
	CHECK(x);
	ibv_wr_start(x);
	x->wr_id = 7;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_ud_addr(x, ah01, q1->qp_num, QKEY);
	ibv_wr_set_sge(x, s0.mr->lkey, (uintptr_t)(s0.buf + 32768), MSG);
	CHECK(ibv_wr_complete(x) == 0);
	poll_recv(s1.cq, &wc);
	CHECK(wc.wr_id == 1 && wc.opcode == IBV_WC_RECV && wc.byte_len == 40 + MSG);
	CHECK((wc.wc_flags & IBV_WC_GRH) && wc.src_qp == q0->qp_num && wc.qp_num == q1->qp_num);
	CHECK(s1.buf[40] == 0x5a && s1.buf[40 + MSG - 1] == 0x5a);
	/* The packet type in the SL bits, as mlx5 reports it and UCX's UD transport reads
	 * it to find the destination address in the GRH area: RoCEv2 (bit 3) over IPv4 (2),
	 * the IPv4 destination in the area's last 4 bytes. */
	if (IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)&s1.gid))
		CHECK(wc.sl == 0xa && memcmp(s1.buf + 36, (uint8_t *)&s1.gid + 12, 4) == 0);
	else /* IPv6 (1): the whole GRH's DGID */
		CHECK(wc.sl == 0x9 && memcmp(s1.buf + 24, &s1.gid, 16) == 0);
	printf("ok ud send with ibv_wr_set_ud_addr: %u bytes from QPN %#x\n", wc.byte_len,
	       wc.src_qp);

	/* The reply goes back where the GRH says it came from. */
	CHECK(ibv_init_ah_from_wc(s1.ctx, 1, &wc, (struct ibv_grh *)s1.buf, &aa) == 0);
	CHECK(aa.is_global == 1 && aa.port_num == 1 && aa.grh.sgid_index == 1);
	CHECK(memcmp(&aa.grh.dgid, &s0.gid, 16) == 0);
	CHECK(aa.grh.hop_limit == 64);
	CHECK(aa.grh.traffic_class == TCLASS); /* the AH's, in the IP header and the GRH */
	ah10 = ibv_create_ah_from_wc(s1.pd, &wc, (struct ibv_grh *)s1.buf, 1);
	CHECK(ah10);
	post_recv(q0, NULL, &s0, 2, 0);
	memset(s1.buf + 32768, 0xa5, MSG);
	send_ud(q1, &s1, ah10, wc.src_qp, 8);
	poll_recv(s0.cq, &wc);
	CHECK(wc.wr_id == 2 && wc.src_qp == q1->qp_num && s0.buf[40] == 0xa5);
	CHECK(ibv_init_ah_from_wc(s0.ctx, 1, &wc, (struct ibv_grh *)s0.buf, &aa) == 0);
	CHECK(aa.grh.traffic_class == TCLASS && aa.grh.hop_limit == 64);
	printf("ok reply through ibv_create_ah_from_wc, traffic class %#x both ways\n", TCLASS);

	/* What a UD QP cannot carry. */
	{
		struct ibv_sge sge = { (uintptr_t)s0.buf, 8, s0.mr->lkey };
		struct ibv_send_wr wr = { .sg_list = &sge,
					  .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE },
				   *bad;

		wr.wr.ud.ah = ah01;
		CHECK(ibv_post_send(q0, &wr, &bad) == EINVAL && bad == &wr);
		wr.opcode = IBV_WR_SEND;
		wr.wr.ud.ah = NULL;
		CHECK(ibv_post_send(q0, &wr, &bad) == EINVAL);
	}
	{
		struct ibv_qp_init_attr init = {
			.send_cq = s0.cq,
			.recv_cq = s0.cq,
			.qp_type = IBV_QPT_UC,
			.cap = { .max_send_wr = 4,
				 .max_recv_wr = 4,
				 .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};
		struct ibv_qp *uc = ibv_create_qp(s0.pd, &init);

		CHECK(uc && uc->qp_type == IBV_QPT_UC);
		CHECK(ibv_destroy_qp(uc) == 0);
	}
	printf("ok EINVAL for RDMA WRITE on UD and for a UD WR without AH; UC QP created\n");

	/* q2 on an SRQ; the limit event once. */
	srq = ibv_create_srq(s1.pd, &si);
	CHECK(srq);
	q2 = ud_qp(&s1, srq, false);
	CHECK(q2->srq == srq);
	{
		struct ibv_sge sge = { (uintptr_t)s1.buf, 8, s1.mr->lkey };
		struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

		CHECK(ibv_post_recv(q2, &wr, &bad) == EINVAL);
	}
	for (int i = 0; i < 8; i++)
		post_recv(q2, srq, &s1, 100 + (uint64_t)i, 2048u * (uint32_t)(i + 1));
	CHECK(ibv_query_srq(srq, &sa) == 0 && sa.max_wr == 8 && sa.max_sge == 1 &&
	      sa.srq_limit == 0);
	sa.srq_limit = 9;
	CHECK(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT) == EINVAL);
	sa.srq_limit = 6;
	CHECK(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT) == 0);
	CHECK(ibv_query_srq(srq, &sa) == 0 && sa.srq_limit == 6);
	for (int i = 0; i < 2; i++) {
		send_ud(q0, &s0, ah01, q2->qp_num, 20 + (uint64_t)i);
		poll_recv(s1.cq, &wc);
		CHECK(wc.qp_num == q2->qp_num && wc.wr_id == 100 + (uint64_t)i);
	}
	no_async_event(s1.ctx); /* 6 left: not below the limit */
	send_ud(q0, &s0, ah01, q2->qp_num, 22);
	poll_recv(s1.cq, &wc);
	async_event(s1.ctx, IBV_EVENT_SRQ_LIMIT_REACHED, srq);
	send_ud(q0, &s0, ah01, q2->qp_num, 23);
	poll_recv(s1.cq, &wc);
	no_async_event(s1.ctx); /* once: the limit disarmed itself */
	CHECK(ibv_query_srq(srq, &sa) == 0 && sa.srq_limit == 0);
	printf("ok SRQ limit event once (4 of 8 WQEs left)\n");

	/* Error: Last WQE Reached; the SRQ cannot go while q2 uses it. */
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

		CHECK(ibv_modify_qp(q2, &a, IBV_QP_STATE) == 0);
	}
	async_event(s1.ctx, IBV_EVENT_QP_LAST_WQE_REACHED, q2);
	CHECK(ibv_destroy_srq(srq) == EBUSY);
	CHECK(ibv_destroy_qp(q2) == 0);
	CHECK(ibv_destroy_srq(srq) == 0);
	printf("ok last WQE reached on error; destroy_srq EBUSY while in use\n");

	while (ibv_poll_cq(s0.cq, 1, &wc) > 0)
		;
	while (ibv_poll_cq(s1.cq, 1, &wc) > 0)
		;
	CHECK(ibv_destroy_qp(q0) == 0);
	CHECK(ibv_destroy_qp(q1) == 0);
	CHECK(ibv_destroy_ah(ah01) == 0);
	CHECK(ibv_destroy_ah(ah10) == 0);
	side_close(&s0);
	side_close(&s1);
	ibv_free_device_list(list);
	printf("ok\n");
	return 0;
}
