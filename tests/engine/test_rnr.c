/* SPDX-License-Identifier: MIT */
/*
 * test_rnr.c - Receiver Not Ready (IBTA 9.7.5.1.5, 9.7.5.2.8).
 *
 * A SEND (or WRITE with immediate) that finds no receive WQE gets an RNR NAK carrying
 * the responder's min_rnr_timer; the requester waits that long (table 45: code 12 =
 * 640 us) on the fake clock and resends from the NAKed PSN. rnr_retry counts the
 * retries: N retries then IBV_WC_RNR_RETRY_EXC_ERR, the QP in error and the WRs behind
 * flushed; 7 means retry forever. The packets behind an RNR-NAKed one draw a sequence
 * NAK; that is not a transport error and must not use up retry_cnt.
 */
#include <string.h>

#include "fabric.h"

struct env {
	struct fab_pair p;
	struct fab_buf la, ra;
	struct fab_conn c;
};

static void env_open(struct env *v, uint8_t rnr_retry, uint8_t retry_cnt, uint8_t timer,
		     uint64_t seed)
{
	v->c = fab_conn_default();
	v->c.rnr_retry = rnr_retry;
	v->c.retry_cnt = retry_cnt;
	v->c.min_rnr_timer = timer;
	v->c.timeout = 18; /* 1.07 s: longer than any RNR wait here */
	fab_pair_open(&v->p, &v->c, seed);
	fab_buf_new(v->p.f, &v->la, 0, &v->p.pd[0], 65536, FAB_ALL_ACCESS);
	fab_buf_new(v->p.f, &v->ra, 1, &v->p.pd[1], 65536, FAB_ALL_ACCESS);
	fab_fill(v->la.p, 65536, (uint32_t)seed);
}

static void env_close(struct env *v)
{
	fab_buf_free(v->p.f, &v->la);
	fab_buf_free(v->p.f, &v->ra);
	fab_pair_close(&v->p);
}

struct ctr_at_least {
	int host;
	enum urnic_counter c;
	uint64_t n;
};

static bool ctr_reached(struct fabric *f, void *arg)
{
	struct ctr_at_least *w = arg;

	return fab_ctr(f, w->host, w->c) >= w->n;
}

static void run_until_ctr(struct fabric *f, int host, enum urnic_counter c, uint64_t n)
{
	struct ctr_at_least w = { host, c, n };

	CHECK(fabric_run(f, ctr_reached, &w, 1000000));
	fab_flush(f);
}

/* Times at which host 1 sent RNR NAKs and host 0 sent the first packet of the SEND. */
static uint32_t rnr_naks(struct fabric *f, uint64_t *t, uint32_t max)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < f->ntrace && n < max; i++)
		if (f->trace[i].src == 1 && f->trace[i].has_aeth &&
		    (f->trace[i].syndrome & URNIC_AETH_TYPE_MASK) == URNIC_AETH_RNR_NAK)
			t[n++] = f->trace[i].t_ns;
	return n;
}

static void post_sends(struct env *v, int n, uint32_t len)
{
	for (int i = 0; i < n; i++)
		CHECK_EQ(fab_post_send(
				 v->p.a,
				 &(struct fab_send_wr){
					 .wr_id = (uint64_t)i,
					 .opcode = URNIC_WR_SEND,
					 .num_sge = 1,
					 .sge = { fab_sge(v->la.mr, 4096 * (uint64_t)i, len) } }),
			 0);
}

static void test_rnr_waits_timer_then_succeeds(void)
{
	struct env v;
	struct urnic_cqe sc[2], rc[2];
	uint64_t t[8];
	uint32_t retry_psn = 0;
	uint64_t t_retry = 0;

	env_open(&v, 7, 7, 12, 1);
	post_sends(&v, 2, 3000); /* 3 packets each, MTU 1024 */
	run_until_ctr(v.p.f, 0, URNIC_CTR_rnr_nak_rcvd, 1);
	/* The NAK: RNR, timer code 12, the SEND's first PSN (IBTA 9.7.5.2.8). */
	for (uint32_t i = 0; i < v.p.f->ntrace; i++) {
		const struct fab_pktinfo *pi = &v.p.f->trace[i];

		if (pi->src == 1) {
			CHECK_EQ(pi->opcode, URNIC_OP_RC_ACKNOWLEDGE);
			CHECK_EQ(pi->syndrome, URNIC_AETH_RNR_NAK | 12);
			CHECK_EQ(pi->psn, v.c.psn_a);
			retry_psn = pi->psn;
			break;
		}
	}
	/* Wait for the resend and the second NAK. */
	run_until_ctr(v.p.f, 1, URNIC_CTR_rnr_nak_sent, 2);
	CHECK_EQ(rnr_naks(v.p.f, t, 8), 2);
	CHECK_EQ(t[1] - t[0], 640000); /* table 45, code 12: 640 us */
	for (uint32_t i = 0; i < v.p.f->ntrace; i++)
		if (v.p.f->trace[i].src == 0 && v.p.f->trace[i].psn == retry_psn &&
		    v.p.f->trace[i].t_ns > t[0])
			t_retry = v.p.f->trace[i].t_ns;
	CHECK_EQ(t_retry - t[0], 640000);
	/* The receiver gets ready. */
	for (int i = 0; i < 2; i++) {
		struct urnic_sge rs = fab_sge(v.ra.mr, 4096 * (uint64_t)i, 4096);

		CHECK_EQ(fab_post_recv(v.p.b, 10 + (uint64_t)i, &rs, 1), 0);
	}
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 2);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, rc, 2);
	fabric_settle(v.p.f);
	for (int i = 0; i < 2; i++) {
		CHECK_CQE(sc[i], (uint64_t)i, URNIC_WC_SUCCESS, URNIC_WC_SEND, 3000);
		CHECK_CQE(rc[i], 10 + (uint64_t)i, URNIC_WC_SUCCESS, URNIC_WC_RECV, 3000);
		CHECK(memcmp(v.ra.p + 4096 * i, v.la.p + 4096 * i, 3000) == 0);
	}
	CHECK(fab_ctr(v.p.f, 1, URNIC_CTR_rnr_nak_sent) >= 2);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_rnr_nak_rcvd),
		 fab_ctr(v.p.f, 1, URNIC_CTR_rnr_nak_sent));
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retry_timeout), 0);
	CHECK_EQ(v.p.a->qp.state, URNIC_QPS_RTS);
	env_close(&v);
}

/* The timer codes at both ends of table 45 and one in the middle. */
static void test_rnr_timer_codes(void)
{
	static const struct {
		uint8_t code;
		uint64_t ns;
	} cases[] = { { 1, 10000 }, { 0, 655360000 }, { 31, 491520000 }, { 18, 5120000 } };

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct env v;
		uint64_t t[4];

		env_open(&v, 7, 7, cases[k].code, 2 + k);
		v.p.a->qp.attr.timeout = 0; /* no ACK timer: only the RNR timer runs */
		post_sends(&v, 1, 100);
		run_until_ctr(v.p.f, 1, URNIC_CTR_rnr_nak_sent, 3);
		CHECK_EQ(rnr_naks(v.p.f, t, 4), 3);
		CHECK_EQ(t[1] - t[0], cases[k].ns);
		CHECK_EQ(t[2] - t[1], cases[k].ns);
		{
			struct urnic_sge rs = fab_sge(v.ra.mr, 0, 100);
			struct urnic_cqe sc;

			CHECK_EQ(fab_post_recv(v.p.b, 1, &rs, 1), 0);
			fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
			CHECK_CQE(sc, 0, URNIC_WC_SUCCESS, URNIC_WC_SEND, 100);
		}
		fabric_settle(v.p.f);
		env_close(&v);
	}
}

/* rnr_retry = N: N retries, then RNR_RETRY_EXC_ERR, QP to error, the rest flushed. The
 * sequence NAKs the packets behind the NAKed one draw do not count against retry_cnt
 * (here 1, so two of them would end the QP with RETRY_EXC_ERR instead). */
static void test_rnr_retry_exhausted(void)
{
	for (uint8_t n = 0; n <= 6; n++) {
		struct env v;
		struct urnic_cqe sc[3];
		uint64_t t[8], t_start;

		env_open(&v, n, 1, 12, 10 + n);
		t_start = v.p.f->now_ns;
		post_sends(&v, 3, 2500);
		fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 3);
		fabric_settle(v.p.f);
		CHECK_EQ(sc[0].wr_id, 0);
		CHECK_EQ(sc[0].status, URNIC_WC_RNR_RETRY_EXC_ERR);
		CHECK_EQ(sc[0].status, 13);
		for (int i = 1; i < 3; i++) {
			CHECK_EQ(sc[i].wr_id, (uint64_t)i);
			CHECK_EQ(sc[i].status, URNIC_WC_WR_FLUSH_ERR);
			CHECK_EQ(sc[i].status, 5);
		}
		CHECK_EQ(fab_poll(&v.p.a->scq, sc, 1), 0);
		CHECK_EQ(v.p.a->qp.state, URNIC_QPS_ERR);
		CHECK_EQ(v.p.b->qp.state, URNIC_QPS_RTS); /* RNR is not the responder's error */
		CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_rnr_nak_sent), n + 1u);
		CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_rnr_nak_rcvd), n + 1u);
		CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_rnr_retry_exceeded), 1);
		CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retry_exceeded), 0);
		CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retry_timeout), 0);
		/* n waits of 640 us between the first and the last NAK, no more. */
		CHECK_EQ(rnr_naks(v.p.f, t, 8), n + 1u);
		CHECK_EQ(t[n] - t[0], 640000ull * n);
		CHECK_EQ(t[0], t_start);
		/* Nothing was delivered on the receive side. */
		CHECK_EQ(atomic_load(&v.p.b->qp.rq.cons), 0);
		env_close(&v);
	}
}

/* rnr_retry = 7: retry for as long as it takes (here 40 NAKs), then succeed. */
static void test_rnr_retry_7_is_infinite(void)
{
	struct env v;
	struct urnic_cqe sc[2], rc[2];
	uint64_t t0;

	env_open(&v, 7, 1, 1, 20);
	t0 = v.p.f->now_ns;
	post_sends(&v, 2, 5000);
	run_until_ctr(v.p.f, 1, URNIC_CTR_rnr_nak_sent, 40);
	CHECK_EQ(v.p.a->qp.state, URNIC_QPS_RTS);
	CHECK_EQ(v.p.f->now_ns - t0, 39 * 10000ull); /* 39 waits of 10 us (code 1) */
	for (int i = 0; i < 2; i++) {
		struct urnic_sge rs = fab_sge(v.ra.mr, 8192 * (uint64_t)i, 8192);

		CHECK_EQ(fab_post_recv(v.p.b, 10 + (uint64_t)i, &rs, 1), 0);
	}
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 2);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, rc, 2);
	fabric_settle(v.p.f);
	for (int i = 0; i < 2; i++) {
		CHECK_CQE(sc[i], (uint64_t)i, URNIC_WC_SUCCESS, URNIC_WC_SEND, 5000);
		CHECK_CQE(rc[i], 10 + (uint64_t)i, URNIC_WC_SUCCESS, URNIC_WC_RECV, 5000);
	}
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retry_exceeded), 0);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_rnr_retry_exceeded), 0);
	env_close(&v);
}

/* WRITE with immediate needs a receive only at its last packet: the data before it is
 * placed, the last packet is RNR-NAKed and resent alone, the completion covers it all. */
static void test_rnr_on_write_with_imm_last_packet(void)
{
	struct env v;
	struct urnic_cqe sc, rc;
	uint32_t last_sent = 0;

	env_open(&v, 7, 7, 12, 30);
	CHECK_EQ(
		fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 5,
							    .opcode = URNIC_WR_RDMA_WRITE_WITH_IMM,
							    .imm_be = 0xabcdef01,
							    .remote_addr = v.ra.mr->iova + 100,
							    .rkey = v.ra.mr->key,
							    .num_sge = 1,
							    .sge = { fab_sge(v.la.mr, 0, 5000) } }),
		0);
	run_until_ctr(v.p.f, 1, URNIC_CTR_rnr_nak_sent, 3);
	CHECK_EQ(fab_post_recv(v.p.b, 9, NULL, 0), 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, &rc, 1);
	fabric_settle(v.p.f);
	CHECK_CQE(sc, 5, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 5000);
	CHECK_CQE(rc, 9, URNIC_WC_SUCCESS, URNIC_WC_RECV_RDMA_WITH_IMM, 5000);
	CHECK_EQ(rc.imm_be, 0xabcdef01);
	CHECK(memcmp(v.ra.p + 100, v.la.p, 5000) == 0);
	for (uint32_t i = 0; i < v.p.f->ntrace; i++)
		last_sent += v.p.f->trace[i].src == 0 &&
			     v.p.f->trace[i].opcode == URNIC_OP_RC_RDMA_WRITE_FIRST;
	CHECK_EQ(last_sent, 1); /* only the last packet was resent */
	env_close(&v);
}

int main(void)
{
	RUN(test_rnr_waits_timer_then_succeeds);
	RUN(test_rnr_timer_codes);
	RUN(test_rnr_retry_exhausted);
	RUN(test_rnr_retry_7_is_infinite);
	RUN(test_rnr_on_write_with_imm_last_packet);
	return 0;
}
