/* SPDX-License-Identifier: MIT */
/*
 * test_cq_timestamp.c - the extended CQ's fields through the verbs (ibv_create_cq_ex(3),
 * ibv_query_rt_values_ex(3)): completion timestamps, wall-clock ones, and the fields a
 * RoCE port reports.
 *
 * The device clock is read with ibv_query_rt_values_ex before and after the traffic:
 * every completion's timestamp must lie between the two readings and never go back
 * on its CQ, and tick at hca_core_clock (checked over a 20 ms sleep); wall-clock
 * timestamps must lie within the test's CLOCK_REALTIME window. Tag matching information
 * is offered beside them; an unknown ibv_query_rt_values_ex mask is EINVAL.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <endian.h>
#include <inttypes.h>

#include <infiniband/verbs.h>

#include "check.h"
#include "verbs_open.h"
#include "verbs_loop.h"

enum { MSGS = 200, IMM = 0x12345678 };

static struct ibv_context *ctx;
static struct ibv_pd *pd;

static uint64_t raw_clock(void)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };

	CHECK_EQ(ibv_query_rt_values_ex(ctx, &v), 0);
	CHECK(v.comp_mask & IBV_VALUES_MASK_RAW_CLOCK);
	return (uint64_t)v.raw_clock.tv_sec * 1000000000u + (uint64_t)v.raw_clock.tv_nsec;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void device_clock_ticks_at_hca_core_clock(void)
{
	struct ibv_device_attr_ex attr;
	struct ibv_values_ex v = { .comp_mask = 1 << 5 };
	struct timespec nap = { 0, 20 * 1000 * 1000 };
	uint64_t t0, t1, expect;

	CHECK_EQ(ibv_query_device_ex(ctx, NULL, &attr), 0);
	CHECK(attr.hca_core_clock > 0 && attr.completion_timestamp_mask != 0);
	CHECK_EQ(ibv_query_rt_values_ex(ctx, &v), EINVAL);
	t0 = raw_clock();
	nanosleep(&nap, NULL);
	t1 = raw_clock();
	/* 20 ms of kHz ticks; the sleep may last longer, never shorter. */
	expect = attr.hca_core_clock * 20;
	CHECK(t1 - t0 >= expect && t1 - t0 < expect * 50);
}

/* Tag matching information (test_tm.c exercises it) is offered with the timestamps. */
static void tag_matching_info_is_offered(void)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 4,
		.wc_flags = IBV_WC_EX_WITH_TM_INFO | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &ca);

	CHECK(cq != NULL);
	CHECK(cq->read_tm_info != NULL);
	CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
}

static struct ibv_cq_ex *cq_with(uint64_t wc_flags)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 2 * MSGS, .wc_flags = wc_flags };
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &ca);

	CHECK(cq);
	return cq;
}

static struct ibv_qp *rc_qp(struct ibv_cq_ex *cq)
{
	struct ibv_qp_init_attr ia = { .send_cq = ibv_cq_ex_to_cq(cq),
				       .recv_cq = ibv_cq_ex_to_cq(cq),
				       .cap = { .max_send_wr = MSGS,
						.max_recv_wr = MSGS,
						.max_send_sge = 1,
						.max_recv_sge = 1 },
				       .qp_type = IBV_QPT_RC };
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	CHECK(qp);
	return qp;
}

/* Takes n completions off cq: timestamps within [lo, hi] of the clock they count and
 * never going back; the RoCE fields as a RoCE port reports them. */
static void take(struct ibv_cq_ex *cq, int n, bool wall, uint64_t lo, uint64_t *last,
		 uint32_t recv_qpn, uint32_t send_qpn)
{
	for (int i = 0; i < n; i++) {
		uint64_t ts, hi;

		loop_start_poll(cq);
		hi = wall ? wall_ns() : raw_clock();
		CHECK_EQ(cq->status, IBV_WC_SUCCESS);
		ts = wall ? ibv_wc_read_completion_wallclock_ns(cq) : ibv_wc_read_completion_ts(cq);
		if (ts < lo || ts > hi || ts < *last) {
			fprintf(stderr,
				"timestamp %" PRIu64 " outside [%" PRIu64 ", %" PRIu64
				"] or before %" PRIu64 "\n",
				ts, lo, hi, *last);
			CHECK(0);
		}
		*last = ts;
		if (ibv_wc_read_opcode(cq) == IBV_WC_RECV) {
			CHECK_EQ(ibv_wc_read_byte_len(cq), 32);
			CHECK(ibv_wc_read_wc_flags(cq) & IBV_WC_WITH_IMM);
			CHECK_EQ(ibv_wc_read_imm_data(cq), htobe32(IMM));
			CHECK_EQ(ibv_wc_read_qp_num(cq), recv_qpn);
			CHECK_EQ(ibv_wc_read_src_qp(cq), send_qpn);
		} else {
			CHECK_EQ(ibv_wc_read_opcode(cq), IBV_WC_SEND);
			CHECK_EQ(ibv_wc_read_qp_num(cq), send_qpn);
		}
		CHECK_EQ(ibv_wc_read_slid(cq) + ibv_wc_read_sl(cq) +
				 ibv_wc_read_dlid_path_bits(cq) + ibv_wc_read_cvlan(cq) +
				 ibv_wc_read_flow_tag(cq),
			 0);
		ibv_end_poll(cq);
	}
}

/* MSGS SENDs with immediate from a to b, both on cq, one at a time. */
static void traffic(struct ibv_cq_ex *cq, bool wall)
{
	static uint8_t buf[4096];
	struct ibv_qp *a = rc_qp(cq), *b = rc_qp(cq);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge sa = { (uintptr_t)buf, 32, 0 }, sb = { (uintptr_t)buf + 2048, 32, 0 };
	uint64_t lo, last = 0;

	CHECK(mr);
	sa.lkey = sb.lkey = mr->lkey;
	/* Before the connection's ibv_modify_qp, which waits for a pass under way: no
	 * completion can come from a pass whose clock was read before lo. */
	lo = wall ? wall_ns() : raw_clock();
	loop_connect(a, b->qp_num);
	loop_connect(b, a->qp_num);
	for (int i = 0; i < MSGS; i++) {
		struct ibv_recv_wr rwr = { .wr_id = i, .sg_list = &sb, .num_sge = 1 }, *rbad;
		struct ibv_send_wr swr = { .wr_id = i,
					   .sg_list = &sa,
					   .num_sge = 1,
					   .opcode = IBV_WR_SEND_WITH_IMM,
					   .send_flags = IBV_SEND_SIGNALED,
					   .imm_data = htobe32(IMM) },
				   *sbad;

		CHECK_EQ(ibv_post_recv(b, &rwr, &rbad), 0);
		CHECK_EQ(ibv_post_send(a, &swr, &sbad), 0);
		take(cq, 2, wall, lo, &last, b->qp_num, a->qp_num);
	}
	CHECK_EQ(ibv_destroy_qp(a), 0);
	CHECK_EQ(ibv_destroy_qp(b), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
}

static void completion_timestamps_in_window_and_monotonic(void)
{
	traffic(cq_with(IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
			IBV_WC_EX_WITH_CVLAN | IBV_WC_EX_WITH_FLOW_TAG),
		false);
}

static void wallclock_timestamps_in_window_and_monotonic(void)
{
	traffic(cq_with(IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK),
		true);
}

int main(void)
{
	ctx = verbs_open_first("127.0.5.8");
	pd = ibv_alloc_pd(ctx);
	CHECK(pd);
	RUN(device_clock_ticks_at_hca_core_clock);
	RUN(tag_matching_info_is_offered);
	RUN(completion_timestamps_in_window_and_monotonic);
	RUN(wallclock_timestamps_in_window_and_monotonic);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	return 0;
}
