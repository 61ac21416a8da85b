/* SPDX-License-Identifier: MIT */
/*
 * test_direct.c - direct placement of READs between processes of one host (wire/addr.h,
 * transport/local.h), over the fabric's lanes (fab_lanes): the requester names where its
 * data goes beside the READ's first request; the responder checks the R_Key as for any
 * READ, writes the data there and answers with one response at the READ's last PSN
 * that says so; the requester completes from it.
 *
 * Checked: the data (over three SGEs, one response in the trace, the counters); a READ
 * under URNIC_DIRECT_MIN_BYTES, a failed write, no lanes: response packets as ever; a
 * bad R_Key: NAK, nothing written; the placed response lost: the retry is answered in
 * packets; the local region deregistered before the response: local protection error;
 * a placed response that does not fit the READ: dropped as stale.
 *
 * A READ of URNIC_DIRECT_SPLIT_BYTES or more is split: its first response offers the
 * tail (PULL, the region held), the requester copies it and says so (PULLED, the hold
 * released), the responder writes the head and answers PLACED | SPLIT. Checked: the data
 * and the packets; two READs back to back, both split; a pull that fails: the READ is
 * retried and answered in packets, the hold released all the same; a PULLED lost: the
 * hold stays until the QP goes.
 *
 * A WRITE of URNIC_DIRECT_MIN_BYTES or more leaves as one WRITE ONLY without payload
 * beside the segments of its data, which the responder copies. Checked: the data, the
 * PSNs (a WRITE after it), the counters; a copy that fails: a sequence NAK, and the
 * retry in packets; a bad R_Key: NAK, nothing written; a short WRITE, a WRITE with
 * immediate: packets.
 *
 * Direct operations carry no packets, so the window of packets in flight
 * (URNIC_MAX_UNACKED_PSNS) does not hold them: four READs, then four WRITEs, of 256 PSNs
 * each, and a short READ in packets behind them, all leave before the first answer.
 * Their ACKs lost, the requester sends them again in packets, and the responder, which
 * placed them all, answers the duplicates with an ACK of the last: it completes them all.
 */
#include <string.h>

#include "engine/roce/rc.h"
#include "fabric.h"

#define BIG 262144

struct env {
	struct fab_pair p;
	struct fab_buf la, ra; /* host 0: the READ's destination; host 1: its source */
};

static void env_open(struct env *v, bool lanes, uint64_t seed)
{
	struct fab_conn c = fab_conn_default(); /* path MTU 1024 */

	fab_pair_open(&v->p, &c, seed);
	if (lanes)
		fab_lanes(v->p.f);
	fab_buf_new(v->p.f, &v->la, 0, &v->p.pd[0], BIG, FAB_ALL_ACCESS);
	fab_buf_new(v->p.f, &v->ra, 1, &v->p.pd[1], BIG, FAB_ALL_ACCESS);
	fab_fill(v->ra.p, BIG, (uint32_t)seed);
	memset(v->la.p, 0, BIG);
}

static void env_close(struct env *v)
{
	fab_buf_free(v->p.f, &v->la);
	fab_buf_free(v->p.f, &v->ra);
	fab_pair_close(&v->p);
}

/* A READ or WRITE of len bytes between la, over three SGEs (gaps between them), and
 * ra[100..]. */
static void post_op(struct env *v, uint64_t id, uint32_t op, uint32_t len, uint32_t rkey)
{
	uint32_t a = len / 3, b = len / 4;

	CHECK_EQ(fab_post_send(
			 v->p.a,
			 &(struct fab_send_wr){
				 .wr_id = id,
				 .opcode = op,
				 .remote_addr = v->ra.mr->iova + 100,
				 .rkey = rkey,
				 .imm_be = 0x01020304,
				 .num_sge = 3,
				 .sge = { fab_sge(v->la.mr, 0, a), fab_sge(v->la.mr, a + 64, b),
					  fab_sge(v->la.mr, a + b + 256, len - a - b) } }),
		 0);
}

static void post_read(struct env *v, uint64_t id, uint32_t len, uint32_t rkey)
{
	post_op(v, id, URNIC_WR_RDMA_READ, len, rkey);
}

/* la holds ra[100 .. 100 + len) where post_read put it. */
static void check_data(const struct env *v, uint32_t len)
{
	uint32_t a = len / 3, b = len / 4;

	CHECK(!memcmp(v->la.p, v->ra.p + 100, a));
	CHECK(!memcmp(v->la.p + a + 64, v->ra.p + 100 + a, b));
	CHECK(!memcmp(v->la.p + a + b + 256, v->ra.p + 100 + a + b, len - a - b));
}

/* READ response packets host 1 sent since the trace began, and how many said placed. */
static uint32_t responses(const struct fabric *f, uint32_t *placed)
{
	uint32_t n = 0;

	*placed = 0;
	for (uint32_t i = 0; i < f->ntrace; i++) {
		const struct fab_pktinfo *pi = &f->trace[i];

		if (pi->src != 1 || pi->opcode < URNIC_OP_RC_RDMA_READ_RESPONSE_FIRST ||
		    pi->opcode > URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY)
			continue;
		n++;
		if (pi->direct_flags & URNIC_DIRECT_PLACED) {
			(*placed)++;
			CHECK_EQ(pi->payload_bytes, 0);
		}
	}
	return n;
}

static void test_placed(void)
{
	struct urnic_cqe c;
	struct env v;
	uint32_t placed;

	env_open(&v, true, 11);
	post_read(&v, 1, 40000, v.ra.mr->key);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	CHECK_CQE(c, 1, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 40000);
	check_data(&v, 40000);
	CHECK_EQ(responses(v.p.f, &placed), 1);
	CHECK_EQ(placed, 1);
	CHECK_EQ(v.p.f->direct_writes, 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_read_direct), 1);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_read_direct_placed), 1);
	/* The next READ and a SEND after it complete in order on the same PSNs. */
	memset(v.la.p, 0, BIG);
	post_read(&v, 2, BIG - 1000, v.ra.mr->key);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	CHECK_CQE(c, 2, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, BIG - 1000);
	check_data(&v, BIG - 1000);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_read_direct_placed), 2);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_drop_stale_response), 0);
	env_close(&v);
}

/* Response packets, as without lanes: short READs, a write that failed, no lanes. */
static void in_packets(bool lanes, bool fail, uint32_t len, uint32_t writes)
{
	struct urnic_cqe c;
	struct env v;
	uint32_t placed;

	env_open(&v, lanes, 12);
	v.p.f->direct_fail = fail;
	post_read(&v, 1, len, v.ra.mr->key);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	CHECK_CQE(c, 1, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, len);
	check_data(&v, len);
	CHECK_EQ(responses(v.p.f, &placed), (len + 1023) / 1024);
	CHECK_EQ(placed, 0);
	CHECK_EQ(v.p.f->direct_writes, writes);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_read_direct), 0);
	env_close(&v);
}

static void test_in_packets(void)
{
	in_packets(true, false, URNIC_DIRECT_MIN_BYTES - 1, 0);
	in_packets(true, true, 40000, 0);
	in_packets(false, false, 40000, 0);
}

static void test_bad_rkey(void)
{
	struct urnic_cqe c;
	struct env v;

	env_open(&v, true, 13);
	post_read(&v, 1, 40000, v.ra.mr->key ^ 0x100);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	CHECK_EQ(c.status, URNIC_WC_REM_ACCESS_ERR);
	CHECK_EQ(v.p.f->direct_writes, 0);
	for (uint32_t i = 0; i < BIG; i++)
		CHECK_EQ(v.la.p[i], 0);
	fabric_settle(v.p.f);
	env_close(&v);
}

/* The placed response is lost: the timer asks again, and the responder answers the
 * duplicate from its resource in packets. */
static void test_placed_lost(void)
{
	struct fab_rule drop = { .match = FAB_M_SRC | FAB_M_OPCODE,
				 .src = 1,
				 .opcode = URNIC_OP_RC_RDMA_READ_RESPONSE_LAST,
				 .count = 1,
				 .action = FAB_DROP };
	struct urnic_cqe c;
	struct env v;
	uint32_t placed;

	env_open(&v, true, 14);
	fab_add_rule(v.p.f, &drop);
	post_read(&v, 1, 40000, v.ra.mr->key);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	CHECK_CQE(c, 1, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 40000);
	check_data(&v, 40000);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retry_timeout), 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request), 1);
	CHECK_EQ(responses(v.p.f, &placed), 1 + 40);
	CHECK_EQ(placed, 1);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_read_direct_placed), 0);
	env_close(&v);
}

/* The destination's region goes before the placed response arrives: the READ fails as
 * it would with response packets. */
static void test_local_region_gone(void)
{
	struct fab_rule hold = { .match = FAB_M_SRC | FAB_M_OPCODE,
				 .src = 1,
				 .opcode = URNIC_OP_RC_RDMA_READ_RESPONSE_LAST,
				 .count = 1,
				 .action = FAB_DELAY,
				 .delay_ns = 1000000 };
	struct urnic_cqe c;
	struct env v;

	env_open(&v, true, 15);
	fab_add_rule(v.p.f, &hold);
	post_read(&v, 1, 40000, v.ra.mr->key);
	fabric_run(v.p.f, NULL, NULL, 3); /* the request there, the response held */
	CHECK_EQ(v.p.f->direct_writes, 1);
	fab_dereg(v.p.f, 0, v.la.mr);
	v.la.mr = NULL;
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	CHECK_EQ(c.status, URNIC_WC_LOC_PROT_ERR);
	fabric_settle(v.p.f);
	v.la.mr = fab_reg(v.p.f, 0, &v.p.pd[0], v.la.p, BIG, FAB_ALL_ACCESS);
	env_close(&v);
}

/* A placed response must name the READ's last PSN: one at its first is stale. */
static void move_psn(uint8_t *buf, uint32_t len, void *arg)
{
	(void)len;
	(void)arg;
	buf[11] = (uint8_t)(buf[11] - 39); /* 40 PSNs: the last back to the first */
}

static void test_placed_misfit(void)
{
	struct fab_rule mut = { .match = FAB_M_SRC | FAB_M_OPCODE,
				.src = 1,
				.opcode = URNIC_OP_RC_RDMA_READ_RESPONSE_LAST,
				.count = 1,
				.action = FAB_MUTATE,
				.mutate = move_psn };
	struct urnic_cqe c;
	struct env v;

	env_open(&v, true, 16);
	fab_add_rule(v.p.f, &mut);
	post_read(&v, 1, 40000, v.ra.mr->key);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	CHECK_CQE(c, 1, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 40000);
	check_data(&v, 40000);
	CHECK(fab_ctr(v.p.f, 0, URNIC_CTR_drop_stale_response) >= 1);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_read_direct_placed), 0);
	env_close(&v);
}

/* Packets with these direct flags, from host src. */
static uint32_t flagged(const struct fabric *f, int src, uint8_t flags)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < f->ntrace; i++)
		n += f->trace[i].src == src && f->trace[i].direct_flags == flags;
	return n;
}

static void test_split(void)
{
	struct urnic_cqe c[2];
	struct env v;
	uint32_t placed;

	env_open(&v, true, 21);
	post_read(&v, 1, 200000, v.ra.mr->key);
	fab_wait_cqes(v.p.f, &v.p.a->scq, c, 1);
	CHECK_CQE(c[0], 1, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 200000);
	check_data(&v, 200000);
	fabric_settle(v.p.f);
	CHECK_EQ(flagged(v.p.f, 1, URNIC_DIRECT_PULL), 1);
	CHECK_EQ(flagged(v.p.f, 1, URNIC_DIRECT_PLACED | URNIC_DIRECT_SPLIT), 1);
	CHECK_EQ(flagged(v.p.f, 0, URNIC_DIRECT_PULLED), 1);
	CHECK_EQ(responses(v.p.f, &placed), 2);
	CHECK_EQ(v.p.f->direct_writes, 1);
	CHECK_EQ(v.p.f->direct_reads, 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_read_direct_split), 1);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_read_direct_pulled), 1);
	CHECK_EQ(v.ra.mr->pulls, 0);
	/* Two back to back: the first answered in the receive, the second split too. */
	memset(v.la.p, 0, BIG);
	post_read(&v, 2, 150000, v.ra.mr->key);
	post_read(&v, 3, 150000, v.ra.mr->key);
	fab_wait_cqes(v.p.f, &v.p.a->scq, c, 2);
	CHECK_CQE(c[0], 2, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 150000);
	CHECK_CQE(c[1], 3, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 150000);
	check_data(&v, 150000);
	fabric_settle(v.p.f);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_read_direct_split), 3);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_read_direct_pulled), 3);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_drop_stale_response), 0);
	CHECK_EQ(v.ra.mr->pulls, 0);
	env_close(&v);
}

static void test_split_pull_fails(void)
{
	struct urnic_cqe c;
	struct env v;

	env_open(&v, true, 22);
	v.p.f->pull_fail = true;
	post_read(&v, 1, 200000, v.ra.mr->key);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	CHECK_CQE(c, 1, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 200000);
	check_data(&v, 200000);
	fabric_settle(v.p.f);
	CHECK_EQ(flagged(v.p.f, 0, URNIC_DIRECT_PULLED), 1);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_read_direct_pulled), 0);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_read_direct_placed), 0);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retry_timeout), 1);
	CHECK_EQ(v.ra.mr->pulls, 0);
	env_close(&v);
}

static bool is_pulled(const struct fab_pktinfo *pi, void *arg)
{
	(void)arg;
	return pi->direct_flags == URNIC_DIRECT_PULLED;
}

static void test_pulled_lost(void)
{
	struct fab_rule drop = { .match = FAB_M_PRED, .pred = is_pulled, .action = FAB_DROP };
	struct urnic_cqe c;
	struct env v;

	env_open(&v, true, 23);
	fab_add_rule(v.p.f, &drop);
	post_read(&v, 1, 200000, v.ra.mr->key);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	CHECK_CQE(c, 1, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 200000);
	check_data(&v, 200000);
	fabric_settle(v.p.f);
	CHECK_EQ(v.ra.mr->pulls, 1);
	urnic_rc_release_pulls(fab_engine(v.p.f, 1), &v.p.b->qp);
	CHECK_EQ(v.ra.mr->pulls, 0);
	env_close(&v);
}

/* ra[100..] holds what post_op took from la. */
static void check_written(const struct env *v, uint32_t len)
{
	uint32_t a = len / 3, b = len / 4;

	CHECK(!memcmp(v->ra.p + 100, v->la.p, a));
	CHECK(!memcmp(v->ra.p + 100 + a, v->la.p + a + 64, b));
	CHECK(!memcmp(v->ra.p + 100 + a + b, v->la.p + a + b + 256, len - a - b));
}

static void env_open_write(struct env *v, bool lanes, uint64_t seed)
{
	env_open(v, lanes, seed);
	fab_fill(v->la.p, BIG, (uint32_t)seed + 1);
	memset(v->ra.p, 0, BIG);
}

static void test_write(void)
{
	struct urnic_cqe c[2];
	struct env v;

	env_open_write(&v, true, 31);
	post_op(&v, 1, URNIC_WR_RDMA_WRITE, 200000, v.ra.mr->key);
	post_op(&v, 2, URNIC_WR_RDMA_WRITE, 3000, v.ra.mr->key);
	fab_wait_cqes(v.p.f, &v.p.a->scq, c, 2);
	CHECK_CQE(c[0], 1, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 200000);
	CHECK_CQE(c[1], 2, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 3000);
	fabric_settle(v.p.f);
	CHECK(!memcmp(v.ra.p + 100, v.la.p, 1000)); /* the second, over the first's start */
	CHECK_EQ(flagged(v.p.f, 0, URNIC_DIRECT_WRITE), 1);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_write_direct), 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_write_direct_placed), 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_direct_bytes), 200000);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_nak_seq_sent), 0);
	/* The direct WRITE, the second's 3 packets, one or two ACKs: no data packets. */
	CHECK(v.p.f->ntrace == 5 || v.p.f->ntrace == 6);
	memset(v.ra.p, 0, BIG);
	post_op(&v, 3, URNIC_WR_RDMA_WRITE, BIG - 1000, v.ra.mr->key);
	fab_wait_cqes(v.p.f, &v.p.a->scq, c, 1);
	CHECK_CQE(c[0], 3, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, BIG - 1000);
	check_written(&v, BIG - 1000);
	env_close(&v);
}

static void test_write_copy_fails(void)
{
	struct urnic_cqe c;
	struct env v;

	env_open_write(&v, true, 32);
	v.p.f->pull_fail = true;
	post_op(&v, 1, URNIC_WR_RDMA_WRITE, 200000, v.ra.mr->key);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	CHECK_CQE(c, 1, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 200000);
	check_written(&v, 200000);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_nak_seq_sent), 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_write_direct_placed), 0);
	CHECK_EQ(flagged(v.p.f, 0, URNIC_DIRECT_WRITE), 1);
	env_close(&v);
}

/* Response packets, as without lanes: short, with immediate, a bad R_Key. */
static void test_write_in_packets(void)
{
	struct urnic_cqe c;
	struct env v;

	env_open_write(&v, true, 33);
	CHECK_EQ(fab_post_recv(v.p.b, 9, NULL, 0), 0);
	post_op(&v, 1, URNIC_WR_RDMA_WRITE, URNIC_DIRECT_MIN_BYTES - 1, v.ra.mr->key);
	post_op(&v, 2, URNIC_WR_RDMA_WRITE_WITH_IMM, 100000, v.ra.mr->key);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	CHECK_CQE(c, 2, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 100000);
	check_written(&v, 100000);
	CHECK_EQ(flagged(v.p.f, 0, URNIC_DIRECT_WRITE), 0);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, &c, 1);
	CHECK_EQ(c.byte_len, 100000);
	post_op(&v, 3, URNIC_WR_RDMA_WRITE, 100000, v.ra.mr->key ^ 0x100);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	CHECK_EQ(c.status, URNIC_WC_REM_ACCESS_ERR);
	CHECK_EQ(flagged(v.p.f, 0, URNIC_DIRECT_WRITE), 1);
	CHECK_EQ(v.p.f->direct_reads, 0);
	fabric_settle(v.p.f);
	env_close(&v);
}

/* Index in the trace of the n-th packet (from 1) host src sent that fits (opcode, flags);
 * opcode 0: any answer (READ response or ACK). UINT32_MAX: none. */
static uint32_t nth_sent(const struct fabric *f, int src, uint8_t opcode, uint8_t flags, uint32_t n)
{
	for (uint32_t i = 0; i < f->ntrace; i++) {
		const struct fab_pktinfo *pi = &f->trace[i];
		bool fits =
			opcode ? pi->opcode == opcode && pi->direct_flags == flags : pi->has_aeth;

		if (pi->src == src && fits && !--n)
			return i;
	}
	return UINT32_MAX;
}

static void test_window(void)
{
	struct urnic_cqe c[5];
	struct env v;
	uint32_t first_answer;

	env_open(&v, true, 41);
	for (uint64_t id = 1; id <= 4; id++)
		post_read(&v, id, BIG - 1000, v.ra.mr->key);
	post_read(&v, 5, 1000, v.ra.mr->key);
	fab_wait_cqes(v.p.f, &v.p.a->scq, c, 5);
	for (int i = 0; i < 5; i++)
		CHECK_CQE(c[i], (uint64_t)i + 1, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ,
			  i < 4 ? BIG - 1000 : 1000);
	CHECK(!memcmp(v.la.p, v.ra.p + 100, 1000 / 3)); /* where all five agree */
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_read_direct_split), 4);
	first_answer = nth_sent(v.p.f, 1, 0, 0, 1);
	CHECK(nth_sent(v.p.f, 0, URNIC_OP_RC_RDMA_READ_REQUEST, URNIC_DIRECT_CAN_PULL, 4) <
	      first_answer);
	CHECK(nth_sent(v.p.f, 0, URNIC_OP_RC_RDMA_READ_REQUEST, 0, 1) < first_answer);
	fabric_settle(v.p.f);
	CHECK_EQ(v.ra.mr->pulls, 0);
	env_close(&v);

	env_open_write(&v, true, 42);
	for (uint64_t id = 1; id <= 4; id++)
		post_op(&v, id, URNIC_WR_RDMA_WRITE, BIG - 1000, v.ra.mr->key);
	fab_wait_cqes(v.p.f, &v.p.a->scq, c, 4);
	for (int i = 0; i < 4; i++)
		CHECK_CQE(c[i], (uint64_t)i + 1, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, BIG - 1000);
	check_written(&v, BIG - 1000);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_write_direct_placed), 4);
	CHECK(nth_sent(v.p.f, 0, URNIC_OP_RC_RDMA_WRITE_ONLY, URNIC_DIRECT_WRITE, 4) <
	      nth_sent(v.p.f, 1, 0, 0, 1));
	fabric_settle(v.p.f);
	env_close(&v);
}

static void test_window_acks_lost(void)
{
	struct fab_rule drop = { .match = FAB_M_SRC | FAB_M_OPCODE,
				 .src = 1,
				 .opcode = URNIC_OP_RC_ACKNOWLEDGE,
				 .count = 2,
				 .action = FAB_DROP };
	struct urnic_cqe c[4];
	struct env v;

	env_open_write(&v, true, 43);
	fab_add_rule(v.p.f, &drop);
	for (uint64_t id = 1; id <= 4; id++)
		post_op(&v, id, URNIC_WR_RDMA_WRITE, BIG - 1000, v.ra.mr->key);
	fab_wait_cqes(v.p.f, &v.p.a->scq, c, 4);
	for (int i = 0; i < 4; i++)
		CHECK_CQE(c[i], (uint64_t)i + 1, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, BIG - 1000);
	check_written(&v, BIG - 1000);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retry_timeout), 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_write_direct_placed), 4);
	CHECK(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request) >= 1);
	fabric_settle(v.p.f);
	env_close(&v);
}

int main(void)
{
	RUN(test_placed);
	RUN(test_in_packets);
	RUN(test_bad_rkey);
	RUN(test_placed_lost);
	RUN(test_local_region_gone);
	RUN(test_placed_misfit);
	RUN(test_split);
	RUN(test_split_pull_fails);
	RUN(test_pulled_lost);
	RUN(test_write);
	RUN(test_write_copy_fails);
	RUN(test_write_in_packets);
	RUN(test_window);
	RUN(test_window_acks_lost);
	return 0;
}
