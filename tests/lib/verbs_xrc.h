/* SPDX-License-Identifier: MIT */
/*
 * verbs_xrc.h - what the XRC verbs tests (IBTA Annex A14) share, tests/verbs/test_xrc.c on
 * one device and tests/system/verbs_xrc.c between two: an XRC SRQ of a domain, a send or
 * receive QP brought to RTS with the masks of the kernel's XRC columns, a request naming
 * the SRQ it is for, a receive on an SRQ, and a bounded wait for one completion.
 * Header-only, like check.h.
 */
#ifndef URNIC_TESTS_VERBS_XRC_H
#define URNIC_TESTS_VERBS_XRC_H

#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "check.h"

/* The operands xrc_post gives: FETCH_ADD adds XRC_ADD, CMP_SWAP compares with XRC_ADD and
 * swaps in XRC_SWAP; sends with immediate carry XRC_IMM. */
#define XRC_ADD 5
#define XRC_SWAP 0x0102030405060708ull
#define XRC_IMM 0x1234

/* An XRC SRQ of domain x, its receives in PD pd and completing on cq; NULL on failure. */
static inline struct ibv_srq *xrc_srq_create(struct ibv_context *ctx, struct ibv_xrcd *x,
					     struct ibv_pd *pd, struct ibv_cq *cq, uint32_t max_wr)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = max_wr, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
		.pd = pd,
		.xrcd = x,
		.cq = cq,
	};

	return ibv_create_srq_ex(ctx, &a);
}

/* RESET -> RTS towards QP dest at GID dgid, with the masks of the kernel's XRC columns. */
static inline void xrc_connect(struct ibv_qp *qp, const union ibv_gid *dgid, uint32_t dest,
			       uint32_t psn_out, uint32_t psn_in)
{
	bool recv = qp->qp_type == IBV_QPT_XRC_RECV;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = recv ? IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
						   IBV_ACCESS_REMOTE_ATOMIC
					: 0,
	};

	CHECK(ibv_modify_qp(qp, &a,
			    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) ==
	      0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.rq_psn = psn_in;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = *dgid;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.grh.hop_limit = 64;
	/* A send QP has no responder attributes at RTR (IBTA A14, ib_modify_qp_is_ok). */
	CHECK(ibv_modify_qp(
		      qp, &a,
		      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			      (recv ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0)) == 0);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = psn_out;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	/* A receive QP has no requester attributes but its timeout. */
	CHECK(ibv_modify_qp(qp, &a,
			    IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				    (recv ? 0
					  : IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
						     IBV_QP_MAX_QP_RD_ATOMIC)) == 0);
	CHECK(qp->state == IBV_QPS_RTS);
}

/* Waits up to 10 s for one completion on cq and checks it is request id with status st. */
static inline struct ibv_wc xrc_expect(struct ibv_cq *cq, uint64_t id, enum ibv_wc_status st)
{
	time_t end = time(NULL) + 10;
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0)
		CHECK(time(NULL) < end);
	CHECK(n == 1);
	if (wc.wr_id != id || wc.status != st)
		fprintf(stderr, "completion %llu: %s\n", (unsigned long long)wc.wr_id,
			ibv_wc_status_str(wc.status));
	CHECK(wc.wr_id == id && wc.status == st);
	return wc;
}

/* Posts one signaled request of sge for the SRQ numbered srqn; ibv_post_send's result. */
static inline int xrc_post(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t id, uint32_t srqn,
			   struct ibv_sge *sge, uint64_t raddr, uint32_t rkey)
{
	struct ibv_send_wr wr = { .wr_id = id,
				  .sg_list = sge,
				  .num_sge = 1,
				  .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htobe32(XRC_IMM) },
			   *bad = NULL;

	wr.qp_type.xrc.remote_srqn = srqn;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = XRC_ADD;
		wr.wr.atomic.swap = XRC_SWAP;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(qp, &wr, &bad);
}

/* Posts one receive of len bytes at buf (in mr) on srq. */
static inline void xrc_post_srq(struct ibv_srq *srq, uint64_t id, uint8_t *buf, uint32_t len,
				struct ibv_mr *mr)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	CHECK(ibv_post_srq_recv(srq, &wr, &bad) == 0);
}

#endif
