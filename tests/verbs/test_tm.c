/* SPDX-License-Identifier: MIT */
/*
 * test_tm.c - tag matching through the verbs (ibv_create_srq_ex(3) IBV_SRQT_TM,
 * ibv_post_srq_ops(3), ibv_create_cq_ex(3) IBV_WC_EX_WITH_TM_INFO), as an MPI library
 * would use it: one device sends to itself, a client QP with its own RQ to a server QP
 * on a tag-matching SRQ whose QP asks for no send queue at all.
 *
 * tm_caps says RC; what lies outside them, a non-RC QP on the SRQ, list operations on a
 * basic SRQ or with a bad opcode or handle fail with their errno and *bad_wr. An eager
 * message lands in its tagged buffer without its TMH (ibv_wc_read_tm_info: its tag and
 * app_ctx); a rendezvous completes twice on the SRQ's CQ around the device's READ of
 * the client's buffer, and the client receives the FIN.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/tm_types.h>
#include <infiniband/verbs.h>

#include "check.h"
#include "verbs_loop.h"

enum { BUF = 65536, TAGS = 16 };

static struct ibv_context *ctx;
static struct ibv_pd *pd;

struct side {
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp;
	uint8_t *buf;
	struct ibv_mr *mr;
};

static struct ibv_cq_ex *tm_cq(void)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 64,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO,
	};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &a);

	CHECK(cq);
	return cq;
}

static struct ibv_srq *tm_srq(struct ibv_cq_ex *cq, uint32_t tags)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 16, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ |
			     IBV_SRQ_INIT_ATTR_TM,
		.srq_type = IBV_SRQT_TM,
		.pd = pd,
		.cq = ibv_cq_ex_to_cq(cq),
		.tm_cap = { .max_num_tags = tags, .max_ops = 8 },
	};

	return ibv_create_srq_ex(ctx, &a);
}

static struct ibv_qp *qp_on(struct ibv_cq_ex *cq, struct ibv_srq *srq, enum ibv_qp_type t,
			    uint32_t send_wr)
{
	struct ibv_qp_init_attr a = {
		.send_cq = ibv_cq_ex_to_cq(cq),
		.recv_cq = ibv_cq_ex_to_cq(cq),
		.srq = srq,
		.qp_type = t,
		.cap = { .max_send_wr = send_wr,
			 .max_send_sge = 1,
			 .max_recv_wr = 8,
			 .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &a);
}

/* RESET -> RTS towards qpn at the device's own GID, with READs both ways. */
static void connect(struct ibv_qp *qp, uint32_t qpn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
				 .port_num = 1,
				 .qp_access_flags =
					 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ };

	CHECK_EQ(
		ibv_modify_qp(qp, &a,
			      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
		0);
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR,
				  .path_mtu = IBV_MTU_1024,
				  .dest_qp_num = qpn,
				  .min_rnr_timer = 1,
				  .max_dest_rd_atomic = 4,
				  .ah_attr = { .is_global = 1,
					       .port_num = 1,
					       .grh = { .sgid_index = 1, .hop_limit = 64 } } };
	CHECK_EQ(ibv_query_gid(ctx, 1, 1, &a.ah_attr.grh.dgid), 0);
	CHECK_EQ(ibv_modify_qp(qp, &a,
			       IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				       IBV_QP_MIN_RNR_TIMER),
		 0);
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS,
				  .timeout = 14,
				  .retry_cnt = 7,
				  .rnr_retry = 7,
				  .max_rd_atomic = 4 };
	CHECK_EQ(ibv_modify_qp(qp, &a,
			       IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				       IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC),
		 0);
}

static void side_open(struct side *s, struct ibv_srq *srq, struct ibv_cq_ex *cq)
{
	s->cq = cq;
	s->buf = calloc(1, BUF);
	CHECK(s->buf);
	s->mr = ibv_reg_mr(pd, s->buf, BUF,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE);
	CHECK(s->mr);
	s->qp = qp_on(cq, srq, IBV_QPT_RC, srq ? 0 : 8);
	CHECK(s->qp);
}

static void side_close(struct side *s)
{
	CHECK_EQ(ibv_destroy_qp(s->qp), 0);
	CHECK_EQ(ibv_dereg_mr(s->mr), 0);
	free(s->buf);
}

static void caps_and_refusals(void)
{
	struct ibv_device_attr_ex attr;
	struct ibv_cq_ex *cq = tm_cq();
	struct ibv_srq_init_attr basic_attr = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq *srq, *basic;
	struct ibv_ops_wr op = { .wr_id = 1, .opcode = IBV_WR_TAG_SYNC, .flags = IBV_OPS_SIGNALED };
	struct ibv_ops_wr *bad = NULL;
	struct ibv_ops_wr op2 = { .wr_id = 2, .opcode = IBV_WR_TAG_DEL };

	CHECK_EQ(ibv_query_device_ex(ctx, NULL, &attr), 0);
	CHECK_EQ(attr.tm_caps.flags, IBV_TM_CAP_RC);
	CHECK(attr.tm_caps.max_num_tags >= TAGS && attr.tm_caps.max_ops > 0);
	CHECK(attr.tm_caps.max_sge >= 1);
	CHECK(attr.tm_caps.max_rndv_hdr_size >= sizeof(struct ibv_tmh) + sizeof(struct ibv_rvh));
	errno = 0;
	CHECK(tm_srq(cq, attr.tm_caps.max_num_tags + 1) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(tm_srq(cq, 0) == NULL && errno == EINVAL);
	srq = tm_srq(cq, TAGS);
	CHECK(srq);
	errno = 0;
	CHECK(qp_on(cq, srq, IBV_QPT_UC, 1) == NULL && errno == EINVAL);
	basic = ibv_create_srq(pd, &basic_attr);
	CHECK(basic);
	CHECK_EQ(ibv_post_srq_ops(basic, &op, &bad), EINVAL);
	CHECK(bad == &op);
	/* A chain stops at its first bad operation: the SYNC ran, the DEL did not. */
	op.next = &op2;
	op2.tm.handle = TAGS;
	bad = NULL;
	CHECK_EQ(ibv_post_srq_ops(srq, &op, &bad), EINVAL);
	CHECK(bad == &op2);
	loop_start_poll(cq);
	CHECK_EQ(cq->wr_id, 1);
	CHECK_EQ(ibv_wc_read_opcode(cq), IBV_WC_TM_SYNC);
	ibv_end_poll(cq);
	op2.opcode = (enum ibv_ops_wr_opcode)7;
	op2.tm.handle = 0;
	CHECK_EQ(ibv_post_srq_ops(srq, &op2, &bad), EINVAL);
	CHECK_EQ(ibv_destroy_srq(basic), 0);
	CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), EBUSY); /* the SRQ's */
	CHECK_EQ(ibv_destroy_srq(srq), 0);
	CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
}

static uint32_t add_tag(struct ibv_srq *srq, struct side *s, uint64_t tag, uint32_t off)
{
	struct ibv_sge sge = { (uintptr_t)(s->buf + off), 8192, s->mr->lkey };
	struct ibv_ops_wr op = {
		.wr_id = 100 + tag,
		.opcode = IBV_WR_TAG_ADD,
		.flags = IBV_OPS_SIGNALED,
		.tm.add = { .recv_wr_id = tag,
			    .sg_list = &sge,
			    .num_sge = 1,
			    .tag = tag,
			    .mask = ~0ull },
	};
	struct ibv_ops_wr *bad;

	CHECK_EQ(ibv_post_srq_ops(srq, &op, &bad), 0);
	loop_start_poll(s->cq);
	CHECK_EQ(s->cq->status, IBV_WC_SUCCESS);
	CHECK_EQ(s->cq->wr_id, 100 + tag);
	CHECK_EQ(ibv_wc_read_opcode(s->cq), IBV_WC_TM_ADD);
	ibv_end_poll(s->cq);
	return op.tm.handle;
}

static void send_from(struct side *c, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)c->buf, len, c->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 5,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	CHECK_EQ(ibv_post_send(c->qp, &wr, &bad), 0);
	loop_start_poll(c->cq);
	CHECK_EQ(c->cq->status, IBV_WC_SUCCESS);
	CHECK_EQ(ibv_wc_read_opcode(c->cq), IBV_WC_SEND);
	ibv_end_poll(c->cq);
}

/* The next completion on the server's CQ: a tagged receive's. */
static void expect_tm_recv(struct side *s, uint64_t wr_id, unsigned int flags, uint32_t len,
			   uint64_t tag)
{
	struct ibv_wc_tm_info info;

	loop_start_poll(s->cq);
	CHECK_EQ(s->cq->status, IBV_WC_SUCCESS);
	CHECK_EQ(s->cq->wr_id, wr_id);
	CHECK_EQ(ibv_wc_read_opcode(s->cq), IBV_WC_TM_RECV);
	CHECK_EQ(ibv_wc_read_wc_flags(s->cq) & ~IBV_WC_TM_SYNC_REQ, flags);
	CHECK_EQ(ibv_wc_read_byte_len(s->cq), len);
	ibv_wc_read_tm_info(s->cq, &info);
	CHECK_EQ(info.tag, tag);
	CHECK_EQ(info.priv, tag ? 0xabcdef : 0);
	ibv_end_poll(s->cq);
}

static void eager_and_rendezvous(void)
{
	struct ibv_cq_ex *ccq = tm_cq(), *scq = tm_cq();
	struct ibv_srq *srq = tm_srq(scq, TAGS);
	struct side c, s;
	struct ibv_tmh tmh = { .app_ctx = htobe32(0xabcdef) };
	struct ibv_rvh rvh;
	struct ibv_sge fin_sge;
	struct ibv_recv_wr rwr = { .wr_id = 9, .sg_list = &fin_sge, .num_sge = 1 }, *rbad;

	CHECK(srq);
	side_open(&c, NULL, ccq);
	side_open(&s, srq, scq);
	connect(c.qp, s.qp->qp_num);
	connect(s.qp, c.qp->qp_num);
	for (int i = 0; i < BUF; i++)
		c.buf[i] = (uint8_t)(i * 7 + 1);

	add_tag(srq, &s, 1, 0);
	add_tag(srq, &s, 2, 16384);
	tmh.opcode = IBV_TMH_EAGER;
	tmh.tag = htobe64(2);
	memcpy(c.buf, &tmh, sizeof(tmh));
	send_from(&c, 2000);
	expect_tm_recv(&s, 2, IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, 2000 - sizeof(tmh), 2);
	CHECK(memcmp(s.buf + 16384, c.buf + sizeof(tmh), 2000 - sizeof(tmh)) == 0);

	fin_sge = (struct ibv_sge){ (uintptr_t)(c.buf + 60000), 64, c.mr->lkey };
	CHECK_EQ(ibv_post_recv(c.qp, &rwr, &rbad), 0);
	tmh.opcode = IBV_TMH_RNDV;
	tmh.tag = htobe64(1);
	rvh = (struct ibv_rvh){ htobe64((uintptr_t)(c.buf + 4096)), htobe32(c.mr->rkey),
				htobe32(6000) };
	memcpy(c.buf, &tmh, sizeof(tmh));
	memcpy(c.buf + sizeof(tmh), &rvh, sizeof(rvh));
	send_from(&c, sizeof(tmh) + sizeof(rvh));
	expect_tm_recv(&s, 1, IBV_WC_TM_MATCH, 0, 1);
	expect_tm_recv(&s, 1, IBV_WC_TM_DATA_VALID, 6000, 0);
	CHECK(memcmp(s.buf, c.buf + 4096, 6000) == 0);
	loop_start_poll(ccq);
	CHECK_EQ(ccq->wr_id, 9);
	CHECK_EQ(ibv_wc_read_opcode(ccq), IBV_WC_RECV);
	CHECK_EQ(ibv_wc_read_byte_len(ccq), sizeof(tmh));
	ibv_end_poll(ccq);
	CHECK_EQ(c.buf[60000], IBV_TMH_FIN);

	side_close(&c);
	side_close(&s);
	CHECK_EQ(ibv_destroy_srq(srq), 0);
	CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(ccq)), 0);
	CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(scq)), 0);
}

int main(void)
{
	struct ibv_device **list;
	int n;

	if (!getenv("URNIC_ADDR"))
		setenv("URNIC_ADDR", "127.0.5.40", 1);
	list = ibv_get_device_list(&n);
	CHECK(list && n >= 1);
	ctx = ibv_open_device(list[0]);
	CHECK(ctx);
	ibv_free_device_list(list);
	pd = ibv_alloc_pd(ctx);
	CHECK(pd);
	RUN(caps_and_refusals);
	RUN(eager_and_rendezvous);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	return 0;
}
