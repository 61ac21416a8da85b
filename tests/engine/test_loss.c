/* SPDX-License-Identifier: MIT */
/*
 * test_loss.c - recovery from lost, corrupted and reordered packets.
 *
 * IBTA 9.7.5.1.1 (a gap makes the responder send one NAK PSN sequence error), 9.7.4.1.5
 * (go-back-N from the oldest unacknowledged PSN), 9.7.6.1.3 (local ACK timeout), 9.7.5.2
 * (a response beyond an unanswered READ/atomic is an implicit NAK: retry it). Every case
 * ends with the data in place, each message executed once, one completion per WR, and
 * the counters that show which mechanism recovered. Then the same with random loss,
 * duplication, reordering and corruption over a long mixed stream, checked against a
 * model of what RC's in-order execution must produce.
 */
#include <string.h>

#include "fabric.h"

#define BUF (1u << 20)

struct env {
	struct fab_pair p;
	struct fab_buf la, ra;
	uint64_t rto_ns;
};

static void env_open(struct env *v, uint32_t mtu, uint64_t seed)
{
	struct fab_conn c = fab_conn_default();

	c.mtu = mtu;
	fab_pair_open(&v->p, &c, seed);
	fab_buf_new(v->p.f, &v->la, 0, &v->p.pd[0], BUF, FAB_ALL_ACCESS);
	fab_buf_new(v->p.f, &v->ra, 1, &v->p.pd[1], BUF, FAB_ALL_ACCESS);
	fab_fill(v->la.p, BUF, (uint32_t)seed);
	fab_fill(v->ra.p, BUF, (uint32_t)seed + 100);
	v->rto_ns = urnic_qp_rto_ns(c.timeout);
}

static void env_close(struct env *v)
{
	/* Both sides agree on where the PSN stream is. */
	CHECK_EQ(v->p.a->qp.req.psn, v->p.b->qp.resp.epsn);
	CHECK_EQ(v->p.a->qp.comp.psn, v->p.a->qp.req.psn);
	CHECK_EQ(v->p.b->qp.req.psn, v->p.a->qp.resp.epsn);
	fab_buf_free(v->p.f, &v->la);
	fab_buf_free(v->p.f, &v->ra);
	fab_pair_close(&v->p);
}

/* One packet of opcode from host src, the one after skip others of it, meets action. */
static struct fab_rule *fault(struct env *v, int src, uint8_t opcode, uint32_t skip,
			      enum fab_action action)
{
	return fab_add_rule(v->p.f, &(struct fab_rule){ .match = FAB_M_SRC | FAB_M_OPCODE,
							.src = src,
							.opcode = opcode,
							.skip = skip,
							.count = 1,
							.action = action });
}

static struct fab_rule *drop(struct env *v, int src, uint8_t opcode, uint32_t skip)
{
	return fault(v, src, opcode, skip, FAB_DROP);
}

/* Posts wr on a and runs until it completed and the fabric is quiet: it must have
 * succeeded as wc_opcode, with its one SGE's length. */
static void complete_one(struct env *v, const struct fab_send_wr *wr,
			 enum urnic_wc_opcode wc_opcode)
{
	struct urnic_cqe sc;

	CHECK_EQ(fab_post_send(v->p.a, wr), 0);
	fab_wait_cqes(v->p.f, &v->p.a->scq, &sc, 1);
	fabric_settle(v->p.f);
	CHECK_CQE(sc, wr->wr_id, URNIC_WC_SUCCESS, wc_opcode, wr->sge[0].length);
}

/* One SEND of len bytes with a receive posted; returns after both completions. */
static void send_and_check(struct env *v, uint64_t id, uint32_t len)
{
	struct urnic_cqe sc, rc;
	struct urnic_sge rs = fab_sge(v->ra.mr, 0, len);

	CHECK_EQ(fab_post_recv(v->p.b, id, &rs, 1), 0);
	CHECK_EQ(fab_post_send(v->p.a,
			       &(struct fab_send_wr){ .wr_id = id,
						      .opcode = URNIC_WR_SEND,
						      .num_sge = 1,
						      .sge = { fab_sge(v->la.mr, 0, len) } }),
		 0);
	fab_wait_cqes(v->p.f, &v->p.a->scq, &sc, 1);
	fab_wait_cqes(v->p.f, &v->p.b->rcq, &rc, 1);
	fabric_settle(v->p.f);
	CHECK_CQE(sc, id, URNIC_WC_SUCCESS, URNIC_WC_SEND, len);
	CHECK_CQE(rc, id, URNIC_WC_SUCCESS, URNIC_WC_RECV, len);
	CHECK(memcmp(v->ra.p, v->la.p, len) == 0);
	CHECK_EQ(fab_poll(&v->p.b->rcq, &rc, 1), 0);
	CHECK_EQ(fab_poll(&v->p.a->scq, &sc, 1), 0);
}

static void test_drop_first_packet_nak_seq(void)
{
	struct env v;

	env_open(&v, 1024, 1);
	drop(&v, 0, URNIC_OP_RC_SEND_FIRST, 0);
	send_and_check(&v, 1, 8000);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_nak_seq_sent), 1);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_nak_seq_rcvd), 1);
	/* The rest of the train is dropped silently after the one NAK (9.7.5.1.1). */
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_drop_psn_after_nak), 6);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retransmit_pkts), 8);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retry_timeout), 0);
	env_close(&v);
}

static void test_drop_middle_packet_nak_seq(void)
{
	struct env v;

	env_open(&v, 1024, 2);
	drop(&v, 0, URNIC_OP_RC_SEND_MIDDLE, 2); /* the 4th packet */
	send_and_check(&v, 1, 8000);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_nak_seq_sent), 1);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_nak_seq_rcvd), 1);
	/* Go-back-N from the lost PSN: 5 packets again, nothing older. */
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retransmit_pkts), 5);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request), 0);
	env_close(&v);
}

static void test_drop_last_packet_timeout(void)
{
	struct env v;
	uint64_t t0, t_retry = 0;
	uint32_t first_psn = 0x100;

	env_open(&v, 1024, 3);
	drop(&v, 0, URNIC_OP_RC_SEND_LAST, 0);
	t0 = v.p.f->now_ns;
	send_and_check(&v, 1, 8000);
	/* Nothing follows the lost packet, so only the timer finds out. */
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_nak_seq_sent), 0);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retry_timeout), 1);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retransmit_pkts), 8);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request), 7);
	for (uint32_t i = 0; i < v.p.f->ntrace; i++)
		if (v.p.f->trace[i].src == 0 && v.p.f->trace[i].psn == first_psn &&
		    v.p.f->trace[i].t_ns > t0) {
			t_retry = v.p.f->trace[i].t_ns;
			break;
		}
	/* Exactly one local ACK timeout later: 4.096 us * 2^14 (IBTA 9.7.6.1.3). */
	CHECK_EQ(t_retry - t0, v.rto_ns);
	CHECK_EQ(v.rto_ns, 4096ull << 14);
	env_close(&v);
}

static void test_drop_ack_timeout_reack(void)
{
	struct env v;
	struct urnic_cqe rc;
	struct urnic_sge rs;

	env_open(&v, 1024, 4);
	rs = fab_sge(v.ra.mr, 4096, 100);
	CHECK_EQ(fab_post_recv(v.p.b, 99, &rs, 1), 0);
	CHECK_EQ(fab_post_recv(v.p.b, 100, &rs, 1), 0); /* must stay posted */
	drop(&v, 1, URNIC_OP_RC_ACKNOWLEDGE, 0);
	complete_one(&v,
		     &(struct fab_send_wr){ .wr_id = 1,
					    .opcode = URNIC_WR_SEND,
					    .num_sge = 1,
					    .sge = { fab_sge(v.la.mr, 0, 100) } },
		     URNIC_WC_SEND);
	CHECK_EQ(fab_poll(&v.p.b->rcq, &rc, 1), 1);
	CHECK_CQE(rc, 99, URNIC_WC_SUCCESS, URNIC_WC_RECV, 100);
	CHECK_EQ(fab_poll(&v.p.b->rcq, &rc, 1), 0);
	CHECK(memcmp(v.ra.p + 4096, v.la.p, 100) == 0);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retry_timeout), 1);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retransmit_pkts), 1);
	/* The retried SEND is a duplicate: ACKed again, not delivered again (C9-105). */
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request), 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_ack_sent), 2);
	CHECK_EQ(atomic_load(&v.p.b->qp.rq.cons), 1);
	env_close(&v);
}

static void read_and_check(struct env *v, uint64_t id, uint32_t len)
{
	struct urnic_cqe sc;

	memset(v->la.p + 65536, 0, len);
	complete_one(v,
		     &(struct fab_send_wr){ .wr_id = id,
					    .opcode = URNIC_WR_RDMA_READ,
					    .remote_addr = v->ra.mr->iova + 1000,
					    .rkey = v->ra.mr->key,
					    .num_sge = 1,
					    .sge = { fab_sge(v->la.mr, 65536, len) } },
		     URNIC_WC_RDMA_READ);
	CHECK_EQ(fab_poll(&v->p.a->scq, &sc, 1), 0);
	CHECK(memcmp(v->la.p + 65536, v->ra.p + 1000, len) == 0);
}

static void test_drop_read_request(void)
{
	struct env v;

	env_open(&v, 1024, 5);
	drop(&v, 0, URNIC_OP_RC_RDMA_READ_REQUEST, 0);
	read_and_check(&v, 1, 8000);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retry_timeout), 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_read_resp_sent), 8);
	env_close(&v);
}

static void test_drop_read_response_middle(void)
{
	struct env v;
	uint32_t requests = 0;

	env_open(&v, 1024, 6);
	drop(&v, 1, URNIC_OP_RC_RDMA_READ_RESPONSE_MIDDLE, 2); /* the 4th response */
	read_and_check(&v, 1, 8000);
	/* Responses after the gap are refused; the READ is asked again for the rest only
	 * and the responder replays it from its saved resource (IBTA 9.7.5.1.3). */
	CHECK(fab_ctr(v.p.f, 0, URNIC_CTR_drop_stale_response) >= 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request), 1);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retry_timeout), 0);
	for (uint32_t i = 0; i < v.p.f->ntrace; i++) {
		const struct fab_pktinfo *pi = &v.p.f->trace[i];

		if (pi->src == 0 && pi->opcode == URNIC_OP_RC_RDMA_READ_REQUEST) {
			CHECK_EQ(pi->psn, requests ? 0x103u : 0x100u);
			requests++;
		}
	}
	CHECK_EQ(requests, 2);
	env_close(&v);
}

static void test_drop_read_response_first_and_last(void)
{
	struct env v;

	env_open(&v, 512, 7);
	drop(&v, 1, URNIC_OP_RC_RDMA_READ_RESPONSE_FIRST, 0);
	read_and_check(&v, 1, 5000);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request), 1);
	env_close(&v);

	env_open(&v, 512, 8);
	drop(&v, 1, URNIC_OP_RC_RDMA_READ_RESPONSE_LAST, 0);
	read_and_check(&v, 1, 5000);
	/* Nothing after the last response: the timer recovers it. */
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retry_timeout), 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request), 1);
	env_close(&v);
}

static void test_drop_atomic_ack_replayed(void)
{
	struct env v;
	uint64_t x = 40, got;

	env_open(&v, 1024, 9);
	memcpy(v.ra.p + 64, &x, 8);
	drop(&v, 1, URNIC_OP_RC_ATOMIC_ACKNOWLEDGE, 0);
	complete_one(&v,
		     &(struct fab_send_wr){ .wr_id = 1,
					    .opcode = URNIC_WR_ATOMIC_FETCH_AND_ADD,
					    .remote_addr = v.ra.mr->iova + 64,
					    .rkey = v.ra.mr->key,
					    .compare_add = 2,
					    .num_sge = 1,
					    .sge = { fab_sge(v.la.mr, 0, 8) } },
		     URNIC_WC_FETCH_ADD);
	memcpy(&got, v.la.p, 8);
	CHECK_EQ(got, 40);
	memcpy(&x, v.ra.p + 64, 8);
	CHECK_EQ(x, 42); /* added once */
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_atomic_executed), 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request), 1);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retry_timeout), 1);
	env_close(&v);
}

/* SENDs first..last, each 1000 bytes from la + 1000 * i and WR ID i. */
static void post_sends(struct env *v, int first, int last)
{
	for (int i = first; i <= last; i++)
		CHECK_EQ(fab_post_send(
				 v->p.a,
				 &(struct fab_send_wr){
					 .wr_id = (uint64_t)i,
					 .opcode = URNIC_WR_SEND,
					 .num_sge = 1,
					 .sge = { fab_sge(v->la.mr, 1000 * (uint64_t)i, 1000) } }),
			 0);
}

/*
 * A READ's response and the SEND after it are both lost; the NAK for the SEND reaches
 * the requester while the READ is unanswered. The completer must retry from the READ
 * without moving its oldest-unacknowledged PSN past it, or the two sides' PSNs drift
 * apart and a later SEND is taken for a duplicate and silently lost.
 */
static void test_lost_read_response_and_send_keep_psns_in_step(void)
{
	struct env v;
	struct urnic_cqe sc[8], rc[8];

	env_open(&v, 1024, 10);
	drop(&v, 1, URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY, 0);
	drop(&v, 0, URNIC_OP_RC_SEND_ONLY, 0);
	for (int i = 0; i < 6; i++) {
		struct urnic_sge rs = fab_sge(v.ra.mr, 100000 + 1000 * (uint64_t)i, 1000);

		CHECK_EQ(fab_post_recv(v.p.b, 10 + (uint64_t)i, &rs, 1), 0);
	}
	CHECK_EQ(fab_post_send(v.p.a,
			       &(struct fab_send_wr){ .wr_id = 0,
						      .opcode = URNIC_WR_RDMA_READ,
						      .remote_addr = v.ra.mr->iova,
						      .rkey = v.ra.mr->key,
						      .num_sge = 1,
						      .sge = { fab_sge(v.la.mr, 500000, 512) } }),
		 0);
	post_sends(&v, 1, 3);
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 4);
	fabric_settle(v.p.f);
	CHECK_CQE(sc[0], 0, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 512);
	for (int i = 1; i <= 3; i++)
		CHECK_CQE(sc[i], (uint64_t)i, URNIC_WC_SUCCESS, URNIC_WC_SEND, 1000);
	CHECK_EQ(v.p.a->qp.req.psn, v.p.b->qp.resp.epsn);
	CHECK_EQ(v.p.a->qp.comp.psn, v.p.a->qp.req.psn);
	/* Three more SENDs after the recovery: all must be delivered. */
	post_sends(&v, 4, 6);
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 3);
	fab_wait_cqes(v.p.f, &v.p.b->rcq, rc, 6);
	fabric_settle(v.p.f);
	for (int i = 0; i < 6; i++) {
		CHECK_CQE(rc[i], 10 + (uint64_t)i, URNIC_WC_SUCCESS, URNIC_WC_RECV, 1000);
		CHECK(memcmp(v.ra.p + 100000 + 1000 * i, v.la.p + 1000 * (i + 1), 1000) == 0);
	}
	CHECK(memcmp(v.la.p + 500000, v.ra.p, 512) == 0);
	env_close(&v);
}

/* A corrupted packet fails the ICRC (Annex A17.3.3), is counted and dropped; the gap
 * it leaves is recovered like a loss. */
static void test_corrupt_packet_dropped_and_recovered(void)
{
	struct env v;

	env_open(&v, 256, 11);
	fault(&v, 0, URNIC_OP_RC_SEND_MIDDLE, 5, FAB_CORRUPT);
	send_and_check(&v, 1, 5000);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_drop_bad_icrc), 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_nak_seq_sent), 1);
	env_close(&v);
}

/* A packet overtaken by the next two: the responder NAKs the gap; the late one is then
 * silently dropped (or a duplicate); the data arrives once. */
static void test_reordered_packet(void)
{
	struct env v;

	env_open(&v, 256, 12);
	fault(&v, 0, URNIC_OP_RC_SEND_MIDDLE, 3, FAB_HOLD)->hold = 2;
	send_and_check(&v, 1, 5000);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_nak_seq_sent), 1);
	env_close(&v);
}

/* The third packet sent from now on, whatever it is (drop by index). */
static void test_drop_by_index(void)
{
	struct env v;

	env_open(&v, 512, 13);
	fab_add_rule(v.p.f, &(struct fab_rule){ .match = FAB_M_INDEX,
						.index = v.p.f->npkts + 2,
						.action = FAB_DROP });
	complete_one(&v,
		     &(struct fab_send_wr){ .wr_id = 1,
					    .opcode = URNIC_WR_RDMA_WRITE,
					    .remote_addr = v.ra.mr->iova,
					    .rkey = v.ra.mr->key,
					    .num_sge = 1,
					    .sge = { fab_sge(v.la.mr, 0, 3000) } },
		     URNIC_WC_RDMA_WRITE);
	CHECK(memcmp(v.ra.p, v.la.p, 3000) == 0);
	CHECK_EQ(v.p.f->rules[0].hits, 1);
	CHECK_EQ(v.p.f->trace[2].opcode, URNIC_OP_RC_RDMA_WRITE_MIDDLE);
	CHECK_EQ(v.p.f->trace[2].fate, FAB_FATE_DROPPED);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_nak_seq_sent), 1);
	/* 6 packets: the lost one and the 3 after it again. */
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retransmit_pkts), 4);
	env_close(&v);
}

static bool retransmitted(struct fabric *f, void *arg)
{
	(void)arg;
	return fab_ctr(f, 0, URNIC_CTR_retransmit_pkts) > 0;
}

/* The requester's window (qp.h URNIC_MAX_UNACKED_PSNS): with every ACK lost it sends
 * 256 PSNs, no more, until the local ACK timeout; then go-back-N from the oldest
 * (9.7.4.1.5) delivers the rest. 512 packets are posted: 8 WRITEs of 64 KiB at MTU 1024. */
static void test_window_then_timeout(void)
{
	struct env v;
	struct urnic_cqe sc[8];
	struct fab_rule *acks;
	uint64_t t0;
	uint32_t sent = 0;

	env_open(&v, 1024, 15);
	acks = fab_add_rule(v.p.f,
			    &(struct fab_rule){ .match = FAB_M_SRC, .src = 1, .action = FAB_DROP });
	for (uint32_t i = 0; i < 8; i++)
		CHECK_EQ(fab_post_send(v.p.a,
				       &(struct fab_send_wr){
					       .wr_id = i,
					       .opcode = URNIC_WR_RDMA_WRITE,
					       .remote_addr = v.ra.mr->iova + i * 65536ull,
					       .rkey = v.ra.mr->key,
					       .num_sge = 1,
					       .sge = { fab_sge(v.la.mr, i * 65536ull, 65536) } }),
			 0);
	t0 = v.p.f->now_ns;
	CHECK(fabric_run(v.p.f, retransmitted, NULL, 1000000));
	/* Before the local ACK timeout: the window's worth of new PSNs, then nothing. */
	for (uint32_t t = 0; t < v.p.f->ntrace; t++)
		if (v.p.f->trace[t].src == 0 && v.p.f->trace[t].t_ns < t0 + v.rto_ns)
			sent++;
	CHECK_EQ(sent, 256);
	CHECK(v.p.f->now_ns >= t0 + v.rto_ns);
	CHECK(acks->hits > 0);
	fab_clear_rules(v.p.f);
	fab_wait_cqes(v.p.f, &v.p.a->scq, sc, 8);
	fabric_settle(v.p.f);
	for (uint32_t i = 0; i < 8; i++)
		CHECK_CQE(sc[i], i, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 65536);
	CHECK(memcmp(v.ra.p, v.la.p, 8 * 65536) == 0);
	env_close(&v);
}

/* A SEND held up in the network longer than the local ACK timeout: the retry gets
 * there first and is executed; the late original is then a duplicate (C9-105). */
static void test_delayed_past_timeout(void)
{
	struct env v;
	struct urnic_cqe rc;
	struct urnic_sge rs;

	env_open(&v, 1024, 14);
	rs = fab_sge(v.ra.mr, 0, 300);
	CHECK_EQ(fab_post_recv(v.p.b, 1, &rs, 1), 0);
	CHECK_EQ(fab_post_recv(v.p.b, 2, &rs, 1), 0);
	fab_add_rule(v.p.f, &(struct fab_rule){ .match = FAB_M_OPCODE,
						.opcode = URNIC_OP_RC_SEND_ONLY,
						.count = 1,
						.action = FAB_DELAY,
						.delay_ns = 2 * v.rto_ns });
	complete_one(&v,
		     &(struct fab_send_wr){ .wr_id = 3,
					    .opcode = URNIC_WR_SEND,
					    .num_sge = 1,
					    .sge = { fab_sge(v.la.mr, 0, 300) } },
		     URNIC_WC_SEND);
	CHECK_EQ(fab_poll(&v.p.b->rcq, &rc, 1), 1);
	CHECK_CQE(rc, 1, URNIC_WC_SUCCESS, URNIC_WC_RECV, 300);
	CHECK_EQ(fab_poll(&v.p.b->rcq, &rc, 1), 0);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retry_timeout), 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request), 1);
	env_close(&v);
}

/* Queues of 8 WRs carrying 300 messages under 5% loss: every slot is reused dozens of
 * times, and a slot is free again only once its WR completed (retransmissions still
 * read it until then). */
static bool some_cqe(struct fabric *f, void *arg)
{
	struct fab_qp **q = arg;

	(void)f;
	return atomic_load(&q[0]->scq.prod) != atomic_load(&q[0]->scq.cons) ||
	       atomic_load(&q[1]->rcq.prod) != atomic_load(&q[1]->rcq.cons);
}

static void test_small_queues_wrap_under_loss(void)
{
	enum { N = 300, DEPTH = 8, SLOT = 3000 };
	struct fabric *f = fabric_new(2, 15);
	struct urnic_pd pd[2] = { { 1 }, { 1 } };
	struct fab_conn c = fab_conn_default();
	struct fab_qp *q[2];
	struct fab_buf la, ra;
	uint32_t posted = 0, recvs = 0, sdone = 0, rdone = 0;

	c.mtu = 512;
	q[0] = fab_qp_new(f, 0, &pd[0], DEPTH, DEPTH, true);
	q[1] = fab_qp_new(f, 1, &pd[1], DEPTH, DEPTH, true);
	fab_connect(q[0], q[1], &c);
	fab_buf_new(f, &la, 0, &pd[0], N * SLOT, FAB_ALL_ACCESS);
	fab_buf_new(f, &ra, 1, &pd[1], N * SLOT, FAB_ALL_ACCESS);
	fab_fill(la.p, N * SLOT, 1);
	fab_fill(ra.p, N * SLOT, 2);
	f->drop_ppm = 50000;
	while (sdone < N || rdone < N / 3) {
		struct urnic_cqe cqe;

		/* Post as much as the queues take: SEND, WRITE, READ in turn. */
		while (recvs < N / 3) {
			struct urnic_sge rs = fab_sge(ra.mr, SLOT * (uint64_t)(3 * recvs), SLOT);

			if (fab_post_recv(q[1], recvs, &rs, 1))
				break;
			recvs++;
		}
		while (posted < N) {
			uint32_t op = posted % 3 == 0	? URNIC_WR_SEND
				      : posted % 3 == 1 ? URNIC_WR_RDMA_WRITE
							: URNIC_WR_RDMA_READ;
			int ret = fab_post_send(
				q[0], &(struct fab_send_wr){
					      .wr_id = posted,
					      .opcode = op,
					      .remote_addr = ra.mr->iova + SLOT * (uint64_t)posted,
					      .rkey = ra.mr->key,
					      .num_sge = 1,
					      .sge = { fab_sge(la.mr, SLOT * (uint64_t)posted,
							       SLOT - posted % 7) } });

			if (ret) {
				CHECK_EQ(ret, 12); /* ENOMEM: full */
				break;
			}
			posted++;
		}
		CHECK(fabric_run(f, some_cqe, q, 1000000));
		while (fab_poll(&q[0]->scq, &cqe, 1)) {
			CHECK_EQ(cqe.wr_id, sdone);
			CHECK_EQ(cqe.status, URNIC_WC_SUCCESS);
			CHECK_EQ(cqe.byte_len, SLOT - sdone % 7);
			sdone++;
		}
		while (fab_poll(&q[1]->rcq, &cqe, 1)) {
			CHECK_EQ(cqe.wr_id, rdone);
			CHECK_EQ(cqe.status, URNIC_WC_SUCCESS);
			CHECK_EQ(cqe.byte_len, SLOT - (3 * rdone) % 7);
			rdone++;
		}
		CHECK(posted - sdone <= DEPTH);
	}
	fabric_settle(f);
	for (uint32_t i = 0; i < N; i++) {
		uint32_t len = SLOT - i % 7;

		CHECK(memcmp(la.p + SLOT * i, ra.p + SLOT * i, len) == 0);
	}
	CHECK(fab_ctr(f, 0, URNIC_CTR_retransmit_pkts) > 0);
	CHECK(atomic_load(&q[0]->qp.sq.prod) == N);
	fab_qp_free(q[0]);
	fab_qp_free(q[1]);
	fab_buf_free(f, &la);
	fab_buf_free(f, &ra);
	fabric_free(f);
}

/* A 1 MiB READ at MTU 256 (4096 response PSNs, far beyond the 128-PSN request window)
 * with three responses lost: each gap is asked for again from where it is. */
static void test_big_read_with_losses(void)
{
	struct env v;

	env_open(&v, 256, 16);
	for (uint32_t k = 0; k < 3; k++)
		fab_add_rule(v.p.f, &(struct fab_rule){ .match = FAB_M_SRC | FAB_M_PSN,
							.src = 1,
							.psn = 0x100 + 700 + 1300 * k,
							.count = 1,
							.action = FAB_DROP });
	complete_one(&v,
		     &(struct fab_send_wr){ .wr_id = 1,
					    .opcode = URNIC_WR_RDMA_READ,
					    .remote_addr = v.ra.mr->iova,
					    .rkey = v.ra.mr->key,
					    .num_sge = 1,
					    .sge = { fab_sge(v.la.mr, 0, BUF) } },
		     URNIC_WC_RDMA_READ);
	CHECK(memcmp(v.la.p, v.ra.p, BUF) == 0);
	for (int k = 0; k < 3; k++)
		CHECK_EQ(v.p.f->rules[k].hits, 1);
	/* One retry per gap (rxe's started_retry): the later responses that show the same
	 * gap again do not restart the replay each time. */
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request), 3);
	CHECK(fab_ctr(v.p.f, 1, URNIC_CTR_read_resp_sent) < BUF / 256 * 5 / 4);
	env_close(&v);
}

/* ---- random faults over long mixed streams, against a model ---- */

enum { NMSG = 400, NCTR = 4, REGION = 8 << 20 };

struct msg {
	uint32_t op;
	uint32_t len;
	uint64_t loff, roff; /* regions in the local / remote buffer */
	uint64_t add, cmp, swap;
	int ctr;
	uint64_t want_orig;
	bool recv;
};

/* One direction of traffic: src posts to dst, dst's buffer holds the targets. */
struct dir {
	struct fab_qp *src, *dst;
	struct fab_buf lb, rb;
	struct msg m[NMSG];
	struct urnic_cqe sc[NMSG], rc[NMSG];
	uint64_t ctr[NCTR]; /* the model of dst's atomic counters */
	uint32_t nrecv;
};

static uint32_t pick_len(struct fabric *f, uint32_t mtu)
{
	switch (fab_random(f) % 6) {
	case 0:
		return 0;
	case 1:
		return 1 + fab_random(f) % 64;
	case 2:
		return mtu - 1 + fab_random(f) % 3;
	case 3:
		return 1 + fab_random(f) % (4 * mtu);
	case 4:
		return 1 + fab_random(f) % (12 * mtu);
	default:
		return 32768 + fab_random(f) % 32768;
	}
}

static void dir_post(struct fabric *f, struct dir *d, struct fab_qp *src, struct fab_qp *dst,
		     uint32_t mtu)
{
	static const uint32_t ops[] = { URNIC_WR_SEND,
					URNIC_WR_SEND_WITH_IMM,
					URNIC_WR_RDMA_WRITE,
					URNIC_WR_RDMA_WRITE_WITH_IMM,
					URNIC_WR_RDMA_READ,
					URNIC_WR_ATOMIC_CMP_AND_SWP,
					URNIC_WR_ATOMIC_FETCH_AND_ADD };
	uint64_t loff = 0, roff = 4096;

	d->src = src;
	d->dst = dst;
	fab_buf_new(f, &d->lb, src->h->idx, src->qp.pd, REGION, FAB_ALL_ACCESS);
	fab_buf_new(f, &d->rb, dst->h->idx, dst->qp.pd, REGION, FAB_ALL_ACCESS);
	fab_fill(d->lb.p, REGION, 5 + (uint32_t)src->h->idx);
	fab_fill(d->rb.p + 4096, REGION - 4096, 6 + (uint32_t)src->h->idx);
	memset(d->rb.p, 0, 4096); /* the atomic counters */
	for (int i = 0; i < NMSG; i++) {
		struct msg *x = &d->m[i];
		struct fab_send_wr wr = { .wr_id = (uint64_t)i, .num_sge = 1 };

		x->op = ops[fab_random(f) % 7];
		x->len = pick_len(f, mtu);
		if (x->op == URNIC_WR_ATOMIC_CMP_AND_SWP ||
		    x->op == URNIC_WR_ATOMIC_FETCH_AND_ADD) {
			x->len = 8;
			x->ctr = (int)(fab_random(f) % NCTR);
			x->roff = 8 * (uint64_t)x->ctr;
			x->add = fab_random(f);
			x->cmp = fab_random(f) % 2 ? d->ctr[x->ctr] : 12345;
			x->swap = fab_random(f);
			/* The model: RC executes in order (IBTA 9.5). */
			x->want_orig = d->ctr[x->ctr];
			if (x->op == URNIC_WR_ATOMIC_FETCH_AND_ADD)
				d->ctr[x->ctr] += x->add;
			else if (d->ctr[x->ctr] == x->cmp)
				d->ctr[x->ctr] = x->swap;
			wr.compare_add = x->op == URNIC_WR_ATOMIC_FETCH_AND_ADD ? x->add : x->cmp;
			wr.swap = x->swap;
		} else {
			x->roff = roff;
			roff += x->len + 8;
		}
		x->loff = loff;
		loff += (x->len + 15) & ~7ull;
		CHECK(loff < REGION && roff < REGION);
		x->recv = x->op == URNIC_WR_SEND || x->op == URNIC_WR_SEND_WITH_IMM ||
			  x->op == URNIC_WR_RDMA_WRITE_WITH_IMM;
		if (x->recv) {
			struct urnic_sge rs = fab_sge(d->rb.mr, x->roff, x->len);

			if (x->op == URNIC_WR_RDMA_WRITE_WITH_IMM)
				rs.length = 0;
			CHECK_EQ(fab_post_recv(dst, (uint64_t)i, &rs, 1), 0);
			d->nrecv++;
		}
		if (x->op == URNIC_WR_RDMA_READ)
			memset(d->lb.p + x->loff, 0, x->len);
		wr.opcode = x->op;
		wr.imm_be = (uint32_t)i * 7;
		wr.remote_addr = d->rb.mr->iova + x->roff;
		wr.rkey = d->rb.mr->key;
		wr.sge[0] = fab_sge(d->lb.mr, x->loff, x->len);
		CHECK_EQ(fab_post_send(src, &wr), 0);
	}
}

static void dir_check(struct fabric *f, struct dir *d)
{
	uint32_t k = 0;

	for (int i = 0; i < NMSG; i++) {
		struct msg *x = &d->m[i];
		const uint8_t *lp = d->lb.p + x->loff, *rp = d->rb.p + x->roff;

		CHECK_EQ(d->sc[i].wr_id, (uint64_t)i);
		CHECK_EQ(d->sc[i].status, URNIC_WC_SUCCESS);
		CHECK_EQ(d->sc[i].byte_len, x->len);
		switch (x->op) {
		case URNIC_WR_SEND:
		case URNIC_WR_SEND_WITH_IMM:
		case URNIC_WR_RDMA_WRITE:
		case URNIC_WR_RDMA_WRITE_WITH_IMM:
		case URNIC_WR_RDMA_READ:
			CHECK(memcmp(rp, lp, x->len) == 0);
			break;
		default: {
			uint64_t orig;

			memcpy(&orig, lp, 8);
			CHECK_EQ(orig, x->want_orig);
		}
		}
		if (x->recv) {
			const struct urnic_cqe *r = &d->rc[k++];

			CHECK_EQ(r->wr_id, (uint64_t)i);
			CHECK_EQ(r->status, URNIC_WC_SUCCESS);
			CHECK_EQ(r->byte_len, x->len);
			CHECK_EQ(r->opcode, x->op == URNIC_WR_RDMA_WRITE_WITH_IMM
						    ? URNIC_WC_RECV_RDMA_WITH_IMM
						    : URNIC_WC_RECV);
			if (x->op != URNIC_WR_SEND)
				CHECK_EQ(r->imm_be, (uint32_t)i * 7);
		}
	}
	CHECK_EQ(k, d->nrecv);
	for (int c = 0; c < NCTR; c++) {
		uint64_t got;

		memcpy(&got, d->rb.p + 8 * c, 8);
		CHECK_EQ(got, d->ctr[c]);
	}
	CHECK_EQ(fab_poll(&d->dst->rcq, d->rc, 1), 0);
	fab_buf_free(f, &d->lb);
	fab_buf_free(f, &d->rb);
}

/* NMSG random WRs from host 0 (and as many from host 1 when both), faults switched on
 * once everything is posted; every completion, byte and atomic result checked. */
static void random_stream(uint32_t mtu, uint64_t seed, uint32_t drop_ppm, uint32_t dup_ppm,
			  uint32_t reorder_ppm, uint32_t corrupt_ppm, bool both)
{
	struct dir *d = calloc(2, sizeof(*d));
	int ndir = both ? 2 : 1;
	struct env v;

	CHECK(d != NULL);
	env_open(&v, mtu, seed);
	dir_post(v.p.f, &d[0], v.p.a, v.p.b, mtu);
	if (both)
		dir_post(v.p.f, &d[1], v.p.b, v.p.a, mtu);
	v.p.f->drop_ppm = drop_ppm;
	v.p.f->dup_ppm = dup_ppm;
	v.p.f->reorder_ppm = reorder_ppm;
	v.p.f->corrupt_ppm = corrupt_ppm;
	for (int i = 0; i < ndir; i++) {
		fab_wait_cqes(v.p.f, &d[i].src->scq, d[i].sc, NMSG);
		fab_wait_cqes(v.p.f, &d[i].dst->rcq, d[i].rc, (int)d[i].nrecv);
	}
	fabric_settle(v.p.f);
	/* URNIC_TEST_DUMP=1: print the whole packet trace before failing. */
	for (int i = 0; i < ndir && getenv("URNIC_TEST_DUMP"); i++)
		for (int k = 0; k < NMSG; k++)
			if (d[i].sc[k].status) {
				fprintf(stderr, "direction %d WR %d: status %d\n", i, k,
					d[i].sc[k].status);
				fab_trace_dump(v.p.f, 0, v.p.f->ntrace);
				break;
			}
	for (int i = 0; i < ndir; i++)
		dir_check(v.p.f, &d[i]);
	CHECK_EQ(v.p.a->qp.state, URNIC_QPS_RTS);
	CHECK_EQ(v.p.b->qp.state, URNIC_QPS_RTS);
	if (drop_ppm)
		CHECK(fab_ctr(v.p.f, 0, URNIC_CTR_retransmit_pkts) > 0);
	if (corrupt_ppm)
		CHECK(fab_ctr(v.p.f, 0, URNIC_CTR_drop_bad_icrc) +
			      fab_ctr(v.p.f, 1, URNIC_CTR_drop_bad_icrc) >
		      0);
	if (dup_ppm)
		CHECK(fab_ctr(v.p.f, 1, URNIC_CTR_dup_request) > 0);
	free(d);
	env_close(&v);
}

static void test_random_loss_5pct_mixed_ops(void)
{
	random_stream(1024, 101, 50000, 0, 0, 0, false);
	random_stream(256, 102, 50000, 0, 0, 0, false);
	random_stream(4096, 103, 50000, 0, 0, 0, false);
}

/* Both QPs requester and responder at once: requests, ACKs, READ responses and NAKs
 * of the two directions share each packet stream. */
static void test_random_loss_both_directions(void)
{
	random_stream(512, 151, 50000, 0, 0, 0, true);
	random_stream(2048, 152, 50000, 0, 0, 0, true);
}

static void test_random_faults_all_kinds(void)
{
	random_stream(1024, 201, 20000, 20000, 20000, 10000, false);
	random_stream(512, 202, 30000, 10000, 30000, 10000, true);
}

/* `test_engine_loss stress N [PPM]`: the random streams with N more seeds each, and
 * PPM loss, duplication and reordering in the second (not in CTest). */
static void stress(int n, uint32_t ppm)
{
	static const uint32_t mtus[] = { 256, 512, 1024, 2048, 4096 };

	for (int i = 0; i < n; i++) {
		uint32_t mtu = mtus[i % 5];

		printf("seed %d mtu %u\n", 1000 + i, mtu);
		fflush(stdout);
		random_stream(mtu, 1000 + (uint64_t)i, 50000, 0, 0, 0, i % 2);
		random_stream(mtu, 5000 + (uint64_t)i, ppm, ppm, ppm, ppm / 3, i % 3 == 0);
	}
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "stress") == 0) {
		stress(atoi(argv[2]), argc > 3 ? (uint32_t)atoi(argv[3]) : 30000);
		return 0;
	}
	RUN(test_drop_first_packet_nak_seq);
	RUN(test_drop_middle_packet_nak_seq);
	RUN(test_drop_last_packet_timeout);
	RUN(test_drop_ack_timeout_reack);
	RUN(test_drop_read_request);
	RUN(test_drop_read_response_middle);
	RUN(test_drop_read_response_first_and_last);
	RUN(test_drop_atomic_ack_replayed);
	RUN(test_lost_read_response_and_send_keep_psns_in_step);
	RUN(test_corrupt_packet_dropped_and_recovered);
	RUN(test_reordered_packet);
	RUN(test_drop_by_index);
	RUN(test_window_then_timeout);
	RUN(test_delayed_past_timeout);
	RUN(test_small_queues_wrap_under_loss);
	RUN(test_big_read_with_losses);
	RUN(test_random_loss_5pct_mixed_ops);
	RUN(test_random_loss_both_directions);
	RUN(test_random_faults_all_kinds);
	return 0;
}
