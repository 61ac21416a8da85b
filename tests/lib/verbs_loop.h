/* SPDX-License-Identifier: MIT */
/*
 * verbs_loop.h - two RC QPs of one device connected to each other over its own address
 * (GID 1), for verbs tests that need a completion from real traffic (test_parent_domain.c,
 * test_cq_timestamp.c, test_import.c, test_restate.c; test_handover_live.c connects two
 * devices with loop_connect_to): the QPs, their connection, one READ or atomic in flight,
 * and bounded waits for one completion. Header-only, like check.h.
 */
#ifndef URNIC_TESTS_VERBS_LOOP_H
#define URNIC_TESTS_VERBS_LOOP_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "check.h"

/* INIT, then RTR and RTS towards QP qpn at GID dgid (IBTA 10.3.1 table 91's attributes
 * for RC). */
static inline void loop_connect_to(struct ibv_qp *qp, const union ibv_gid *dgid, uint32_t qpn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
				 .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	CHECK(ibv_modify_qp(qp, &a,
			    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) ==
	      0);
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = qpn,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 1,
		.ah_attr = { .is_global = 1,
			     .port_num = 1,
			     .grh = { .dgid = *dgid, .sgid_index = 1, .hop_limit = 64 } }
	};
	CHECK(ibv_modify_qp(qp, &a,
			    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER) == 0);
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS,
				  .timeout = 14,
				  .retry_cnt = 7,
				  .rnr_retry = 7,
				  .max_rd_atomic = 1 };
	CHECK(ibv_modify_qp(qp, &a,
			    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) == 0);
}

/* The same towards QP qpn at this device's own GID 1. */
static inline void loop_connect(struct ibv_qp *qp, uint32_t qpn)
{
	union ibv_gid gid;

	CHECK(ibv_query_gid(qp->context, 1, 1, &gid) == 0);
	loop_connect_to(qp, &gid, qpn);
}

/* An RC QP of pd, both queues completing on cq, eight WRs of one SGE each way. */
static inline struct ibv_qp *loop_new_rc(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	CHECK(qp);
	return qp;
}

/* The next completion of cq, waiting up to ms milliseconds for it. */
static inline struct ibv_wc loop_next_wc_within(struct ibv_cq *cq, int ms)
{
	struct ibv_wc wc;

	for (int i = 0; i <= ms; i++) {
		int n = ibv_poll_cq(cq, 1, &wc);

		CHECK(n >= 0);
		if (n)
			return wc;
		usleep(1000);
	}
	fprintf(stderr, "no completion within %d ms\n", ms);
	exit(1);
}

/* The next completion of cq, waiting up to 2 s for it. */
static inline struct ibv_wc loop_next_wc(struct ibv_cq *cq)
{
	return loop_next_wc_within(cq, 2000);
}

/* Starts an extended poll that found a completion, waiting up to 10 s for one. The
 * caller reads it and calls ibv_end_poll. */
static inline void loop_start_poll(struct ibv_cq_ex *cq)
{
	struct ibv_poll_cq_attr pa = { .comp_mask = 0 };
	time_t end = time(NULL) + 10;
	int ret;

	while ((ret = ibv_start_poll(cq, &pa)) == ENOENT)
		CHECK(time(NULL) < end);
	CHECK_EQ(ret, 0);
}

#endif
