/* SPDX-License-Identifier: MIT */
/*
 * test_iwarp_rdmap.c - the iWARP data path between two engines (RFC 5040 RDMAP over RFC
 * 5041 DDP over RFC 5044 FPDUs), over byte pipes split at random down to one byte:
 *
 *   host 0: iWARP engine, RC QP === TCP byte stream (iw_link.h) === host 1: the same
 *
 * Sends (plain, solicited, with Invalidate), Writes and Reads of 0, 1, MSS-crossing and
 * 1 MiB bytes arrive whole and complete; a batch of WQEs goes out in one ring; ORD
 * bounds the Reads outstanding and a fence waits for them; work requests RFC 5040 cannot
 * carry (immediate data, atomics) fail locally; the connection's end flushes the rest; a
 * ping-pong's WRITE completion waits for the peer's answer.
 */
#include <string.h>

#include "iw_link.h"
#include "mem/mw.h"
#include "wire/fpdu.h"

#define BIG (1u << 20)
#define MSS 1460

static const struct urnic_iw_conn_params conn = { .crc = false, .mss = MSS, .ird = 8, .ord = 8 };

struct env {
	struct iwl l;
	struct fab_buf src, dst; /* host 0, host 1 */
};

static void env_open(struct env *v, uint64_t seed, const struct urnic_iw_conn_params *p)
{
	iwl_open(&v->l, seed, p);
	fab_buf_new(v->l.f, &v->src, 0, &v->l.pd[0], BIG, FAB_ALL_ACCESS);
	fab_buf_new(v->l.f, &v->dst, 1, &v->l.pd[1], BIG, FAB_ALL_ACCESS | URNIC_ACCESS_MW_BIND);
	fab_fill(v->src.p, BIG, (uint32_t)seed);
	fab_fill(v->dst.p, BIG, (uint32_t)seed + 7);
}

static void env_close(struct env *v)
{
	fab_buf_free(v->l.f, &v->src);
	fab_buf_free(v->l.f, &v->dst);
	iwl_close(&v->l);
}

static void post(struct env *v, int side, const struct fab_send_wr *wr)
{
	CHECK_EQ(fab_post_send(v->l.q[side], wr), 0);
	urnic_engine_doorbell(v->l.f->hosts[side].e, v->l.q[side]->qp.qpn);
}

static void post_recv(struct fab_qp *q, uint64_t wr_id, struct urnic_sge sge)
{
	CHECK_EQ(fab_post_recv(q, wr_id, &sge, 1), 0);
}

static int poll_all(struct urnic_cq *cq, struct urnic_cqe *out, int n)
{
	return fab_poll(cq, out, n);
}

static const uint32_t sizes[] = { 0, 1, 3 * MSS + 7, BIG };

static void test_send_sizes_arrive_whole(void)
{
	for (uint64_t seed = 1; seed <= 4; seed++) {
		struct urnic_iw_conn_params p = conn;
		struct env v;
		struct urnic_cqe c[2];

		p.crc = seed & 1; /* RFC 5044 4.5: CRC negotiated or not */
		p.mss = seed < 3 ? MSS : 9000;
		env_open(&v, seed, &p);
		for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			uint32_t n = sizes[i];
			bool se = i & 1;

			post_recv(v.l.q[1], 100 + i, fab_sge(v.dst.mr, 0, BIG));
			post(&v, 0,
			     &(struct fab_send_wr){ .wr_id = i,
						    .opcode = URNIC_WR_SEND,
						    .flags = se ? URNIC_SEND_SOLICITED : 0,
						    .num_sge = 1,
						    .sge = { fab_sge(v.src.mr, 0, n) } });
			iwl_settle(&v.l);
			CHECK_EQ(poll_all(&v.l.q[0]->scq, c, 2), 1);
			CHECK_CQE(c[0], i, URNIC_WC_SUCCESS, URNIC_WC_SEND, n);
			CHECK_EQ(poll_all(&v.l.q[1]->rcq, c, 2), 1);
			CHECK_CQE(c[0], 100 + i, URNIC_WC_SUCCESS, URNIC_WC_RECV, n);
			CHECK_EQ(c[0].wc_flags, 0);
			CHECK(memcmp(v.src.p, v.dst.p, n) == 0);
		}
		CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_term_sent), 0);
		env_close(&v);
	}
}

static void test_solicited_send_wakes_solicited_arm(void)
{
	struct env v;
	struct urnic_cqe c;
	struct urnic_cq_due due;

	env_open(&v, 9, &conn);
	urnic_cq_due_init(&due);
	v.l.q[1]->rcq.due = &due;
	v.l.q[1]->rcq.event_fd = 99; /* never written: the device would */
	atomic_store(&v.l.q[1]->rcq.arm, URNIC_CQ_ARM_SOLICITED);
	for (int se = 0; se < 2; se++) {
		post_recv(v.l.q[1], 7, fab_sge(v.dst.mr, 0, 64));
		post(&v, 0,
		     &(struct fab_send_wr){ .wr_id = 1,
					    .opcode = URNIC_WR_SEND,
					    .flags = se ? URNIC_SEND_SOLICITED : 0,
					    .num_sge = 1,
					    .sge = { fab_sge(v.src.mr, 0, 64) } });
		iwl_settle(&v.l);
		CHECK_EQ(poll_all(&v.l.q[1]->rcq, &c, 1), 1);
		/* RFC 5040 4.3: only the Send with Solicited Event fires a solicited arm. */
		CHECK_EQ(v.l.q[1]->rcq.events_due, se);
	}
	v.l.q[1]->rcq.event_fd = -1;
	v.l.q[1]->rcq.due = NULL;
	env_close(&v);
}

static void test_write_then_read_back(void)
{
	for (uint64_t seed = 11; seed <= 13; seed++) {
		struct env v;
		struct urnic_cqe c[2];

		env_open(&v, seed, &conn);
		for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			uint32_t n = sizes[i];

			post(&v, 0,
			     &(struct fab_send_wr){ .wr_id = 1,
						    .opcode = URNIC_WR_RDMA_WRITE,
						    .remote_addr = v.dst.mr->iova,
						    .rkey = v.dst.mr->key,
						    .num_sge = 1,
						    .sge = { fab_sge(v.src.mr, 0, n) } });
			iwl_settle(&v.l);
			CHECK_EQ(poll_all(&v.l.q[0]->scq, c, 2), 1);
			CHECK_CQE(c[0], 1, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, n);
			CHECK(memcmp(v.src.p, v.dst.p, n) == 0);
			/* Change the target, read it back over the source. */
			fab_fill(v.dst.p, n, (uint32_t)(seed + i));
			post(&v, 0,
			     &(struct fab_send_wr){ .wr_id = 2,
						    .opcode = URNIC_WR_RDMA_READ,
						    .remote_addr = v.dst.mr->iova,
						    .rkey = v.dst.mr->key,
						    .num_sge = 1,
						    .sge = { fab_sge(v.src.mr, 0, n) } });
			iwl_settle(&v.l);
			CHECK_EQ(poll_all(&v.l.q[0]->scq, c, 2), 1);
			CHECK_CQE(c[0], 2, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, n);
			CHECK(memcmp(v.src.p, v.dst.p, n) == 0);
		}
		CHECK_EQ(poll_all(&v.l.q[1]->rcq, c, 2), 0); /* one-sided: nothing at the target */
		CHECK_EQ(iwl_ctr(&v.l, 0, URNIC_CTR_iw_term_sent) +
				 iwl_ctr(&v.l, 1, URNIC_CTR_iw_term_sent),
			 0);
		env_close(&v);
	}
}

static struct fab_send_wr write_wr(uint64_t id, const struct fab_buf *from,
				   const struct fab_buf *to)
{
	return (struct fab_send_wr){ .wr_id = id,
				     .opcode = URNIC_WR_RDMA_WRITE,
				     .remote_addr = to->mr->iova,
				     .rkey = to->mr->key,
				     .num_sge = 1,
				     .sge = { fab_sge(from->mr, 0, 8) } };
}

/* A ping-pong of WRITEs (ib_write_lat): once host 0 has seen host 1 answer, its WRITE's
 * completion waits for the next answer (iw_wqe.c) and comes once it is whole; one
 * that nothing answers comes when the hold expires. */
static void test_pingpong_write_completion_waits_for_the_answer(void)
{
	struct env v;
	struct urnic_cqe c[2];
	struct fab_send_wr to1, to0;

	env_open(&v, 21, &conn);
	to1 = write_wr(1, &v.src, &v.dst);
	to0 = write_wr(2, &v.dst, &v.src);
	post(&v, 0, &to1);
	iwl_settle(&v.l);
	CHECK_EQ(poll_all(&v.l.q[0]->scq, c, 2), 1); /* nothing learned yet: at once */
	post(&v, 1, &to0);
	iwl_settle(&v.l);
	CHECK_EQ(poll_all(&v.l.q[1]->scq, c, 2), 1);
	/* Answered: the next WRITE's completion is held until the answer comes. */
	post(&v, 0, &to1);
	iwl_settle(&v.l);
	CHECK_EQ(poll_all(&v.l.q[0]->scq, c, 2), 0);
	CHECK_EQ(iwl_ctr(&v.l, 0, URNIC_CTR_comp_held), 1);
	CHECK(memcmp(v.src.p, v.dst.p, 8) == 0); /* the data went all the same */
	post(&v, 1, &to0);
	iwl_settle(&v.l);
	CHECK_EQ(poll_all(&v.l.q[0]->scq, c, 2), 1);
	CHECK_CQE(c[0], 1, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 8);
	CHECK_EQ(poll_all(&v.l.q[1]->scq, c, 2), 0); /* host 1 learned it too: held */
	/* Unanswered: the hold expires. */
	v.l.f->now_ns += URNIC_ACK_HOLD_DEFAULT_NS;
	iwl_settle(&v.l);
	CHECK_EQ(poll_all(&v.l.q[1]->scq, c, 2), 1);
	CHECK_CQE(c[0], 2, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 8);
	CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_comp_hold_expired), 1);
	/* A Send is never held: its answer is a receive the application polls for. */
	post_recv(v.l.q[1], 5, fab_sge(v.dst.mr, 0, 8));
	post(&v, 0,
	     &(struct fab_send_wr){ .wr_id = 3,
				    .opcode = URNIC_WR_SEND,
				    .num_sge = 1,
				    .sge = { fab_sge(v.src.mr, 0, 8) } });
	iwl_settle(&v.l);
	CHECK_EQ(poll_all(&v.l.q[0]->scq, c, 2), 1);
	CHECK_CQE(c[0], 3, URNIC_WC_SUCCESS, URNIC_WC_SEND, 8);
	env_close(&v);
}

static void test_read_into_several_sges(void)
{
	struct env v;
	struct urnic_cqe c;

	env_open(&v, 21, &conn);
	post(&v, 0,
	     &(struct fab_send_wr){ .wr_id = 3,
				    .opcode = URNIC_WR_RDMA_READ,
				    .remote_addr = v.dst.mr->iova + 5,
				    .rkey = v.dst.mr->key,
				    .num_sge = 3,
				    .sge = { fab_sge(v.src.mr, 100, 10),
					     fab_sge(v.src.mr, 5000, 3000),
					     fab_sge(v.src.mr, 9000, 1) } });
	iwl_settle(&v.l);
	CHECK_EQ(poll_all(&v.l.q[0]->scq, &c, 1), 1);
	CHECK_CQE(c, 3, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 3011);
	CHECK(memcmp(v.src.p + 100, v.dst.p + 5, 10) == 0);
	CHECK(memcmp(v.src.p + 5000, v.dst.p + 15, 3000) == 0);
	CHECK_EQ(v.src.p[9000], v.dst.p[3015]);
	env_close(&v);
}

/* Counts the FPDUs of opcode op in side's queued bytes. */
static unsigned count_fpdus(struct env *v, int side, uint8_t op, size_t *bytes)
{
	static uint8_t buf[1 << 20];
	size_t n = iwl_peek(&v->l, side, buf, sizeof(buf)), off = 0;
	unsigned k = 0;

	*bytes = n;
	while (off < n) {
		struct urnic_fpdu f;
		struct urnic_ddp_hdr h;
		size_t hb;

		CHECK_EQ(urnic_fpdu_decode(&f, buf + off, n - off, 0), URNIC_IW_R_OK);
		CHECK_EQ(urnic_ddp_decode(&h, &hb, f.ulpdu, f.ulpdu_len), URNIC_IW_R_OK);
		k += h.opcode == op;
		off += f.bytes;
	}
	return k;
}

static void test_batch_goes_out_in_one_ring(void)
{
	struct env v;
	struct urnic_cqe c[256];
	uint64_t deadline;
	size_t bytes, want = 0;

	env_open(&v, 31, &conn);
	for (int i = 0; i < 100; i++)
		post_recv(v.l.q[1], (uint64_t)i, fab_sge(v.dst.mr, (uint64_t)i * 8192, 8192));
	for (int i = 0; i < 100; i++) {
		uint32_t n = 1 + (uint32_t)i * 61;

		post(&v, 0,
		     &(struct fab_send_wr){ .wr_id = (uint64_t)i,
					    .opcode = (i % 3) ? URNIC_WR_SEND : URNIC_WR_RDMA_WRITE,
					    .remote_addr = v.dst.mr->iova + 900000,
					    .rkey = v.dst.mr->key,
					    .num_sge = 1,
					    .sge = { fab_sge(v.src.mr, (uint64_t)i * 8192, n) } });
		want += n;
	}
	/* One pass frames every WQE: one write of the ring carries them all. */
	urnic_engine_pass(v.l.f->hosts[0].e, v.l.f->now_ns, &deadline);
	CHECK_EQ(count_fpdus(&v, 0, URNIC_RDMAP_SEND, &bytes) > 60, 1);
	CHECK(bytes > want);
	CHECK_EQ(poll_all(&v.l.q[0]->scq, c, 256), 0); /* nothing taken yet: nothing complete */
	iwl_settle(&v.l);
	CHECK_EQ(poll_all(&v.l.q[0]->scq, c, 256), 100);
	for (int i = 0; i < 100; i++)
		CHECK_EQ(c[i].wr_id, (uint64_t)i); /* in post order */
	CHECK_EQ(poll_all(&v.l.q[1]->rcq, c, 256), 66);
	for (int i = 0, r = 0; i < 100; i++) {
		if (!(i % 3))
			continue;
		CHECK_EQ(c[r].wr_id, (uint64_t)r);
		CHECK(memcmp(v.src.p + (uint64_t)i * 8192, v.dst.p + (uint64_t)r * 8192,
			     c[r].byte_len) == 0);
		r++;
	}
	env_close(&v);
}

static void test_ord_bounds_reads_and_fence_waits(void)
{
	struct urnic_iw_conn_params p = conn;
	struct env v;
	struct urnic_cqe c[8];
	uint64_t deadline;
	size_t bytes;

	p.ord = 2;
	env_open(&v, 41, &p);
	v.l.hold[0] = true;
	for (int i = 0; i < 4; i++)
		post(&v, 0,
		     &(struct fab_send_wr){ .wr_id = (uint64_t)i,
					    .opcode = URNIC_WR_RDMA_READ,
					    .remote_addr = v.dst.mr->iova,
					    .rkey = v.dst.mr->key,
					    .num_sge = 1,
					    .sge = { fab_sge(v.src.mr, (uint64_t)i * 100, 100) } });
	post_recv(v.l.q[1], 9, fab_sge(v.dst.mr, 4096, 64));
	post(&v, 0,
	     &(struct fab_send_wr){ .wr_id = 4,
				    .opcode = URNIC_WR_SEND,
				    .flags = URNIC_SEND_FENCE,
				    .num_sge = 1,
				    .sge = { fab_sge(v.src.mr, 0, 64) } });
	urnic_engine_pass(v.l.f->hosts[0].e, v.l.f->now_ns, &deadline);
	/* RFC 5040 6.4: no more than ORD Read Requests outstanding. */
	CHECK_EQ(count_fpdus(&v, 0, URNIC_RDMAP_READ_REQ, &bytes), 2);
	CHECK_EQ(count_fpdus(&v, 0, URNIC_RDMAP_SEND, &bytes), 0);
	v.l.hold[0] = false;
	iwl_settle(&v.l);
	CHECK_EQ(poll_all(&v.l.q[0]->scq, c, 8), 5);
	for (int i = 0; i < 5; i++)
		CHECK_CQE(c[i], (uint64_t)i, URNIC_WC_SUCCESS,
			  i < 4 ? URNIC_WC_RDMA_READ : URNIC_WC_SEND, i < 4 ? 100 : 64);
	CHECK_EQ(poll_all(&v.l.q[1]->rcq, c, 8), 1);
	env_close(&v);
}

static void test_send_with_invalidate_and_local_invalidate(void)
{
	struct env v;
	struct urnic_cqe c[2];
	struct urnic_mr *mw = NULL;
	uint32_t key;

	env_open(&v, 51, &conn);
	CHECK_EQ(urnic_mw_alloc(&v.l.f->hosts[1].e->mrs, &v.l.pd[1], URNIC_KEY_MW2, 0x1234, &mw),
		 0);
	key = (mw->key & ~0xffu) | 0x5a;
	post(&v, 1,
	     &(struct fab_send_wr){ .wr_id = 0xb1,
				    .opcode = URNIC_WR_BIND_MW,
				    .mw_rkey = mw->key,
				    .rkey = key,
				    .mr_lkey = v.dst.mr->key,
				    .remote_addr = v.dst.mr->iova,
				    .remote_len = 4096,
				    .mw_access = URNIC_ACCESS_REMOTE_WRITE });
	iwl_settle(&v.l);
	CHECK_EQ(poll_all(&v.l.q[1]->scq, c, 2), 1);
	CHECK_CQE(c[0], 0xb1, URNIC_WC_SUCCESS, URNIC_WC_BIND_MW, 0);
	CHECK_EQ(mw->mw_state, URNIC_MW_VALID);
	post_recv(v.l.q[1], 5, fab_sge(v.dst.mr, 8192, 64));
	post(&v, 0,
	     &(struct fab_send_wr){ .wr_id = 6,
				    .opcode = URNIC_WR_SEND_WITH_INV,
				    .rkey = key,
				    .num_sge = 1,
				    .sge = { fab_sge(v.src.mr, 0, 64) } });
	iwl_settle(&v.l);
	CHECK_EQ(poll_all(&v.l.q[1]->rcq, c, 2), 1);
	CHECK_CQE(c[0], 5, URNIC_WC_SUCCESS, URNIC_WC_RECV, 64);
	CHECK_EQ(c[0].wc_flags, URNIC_WC_WITH_INV);
	CHECK_EQ(c[0].imm_be, key);
	CHECK_EQ(mw->mw_state, URNIC_MW_FREE);
	/* Bound again, then invalidated locally. */
	post(&v, 1,
	     &(struct fab_send_wr){ .wr_id = 0xb2,
				    .opcode = URNIC_WR_BIND_MW,
				    .mw_rkey = key,
				    .rkey = key + 1,
				    .mr_lkey = v.dst.mr->key,
				    .remote_addr = v.dst.mr->iova,
				    .remote_len = 4096,
				    .mw_access = URNIC_ACCESS_REMOTE_WRITE });
	post(&v, 1,
	     &(struct fab_send_wr){ .wr_id = 0xb3, .opcode = URNIC_WR_LOCAL_INV, .rkey = key + 1 });
	iwl_settle(&v.l);
	CHECK_EQ(poll_all(&v.l.q[1]->scq, c, 2), 2);
	CHECK_CQE(c[0], 0xb2, URNIC_WC_SUCCESS, URNIC_WC_BIND_MW, 0);
	CHECK_CQE(c[1], 0xb3, URNIC_WC_SUCCESS, URNIC_WC_LOCAL_INV, 0);
	CHECK_EQ(mw->mw_state, URNIC_MW_FREE);
	urnic_mw_dealloc(&v.l.f->hosts[1].e->mrs, mw);
	env_close(&v);
}

static void test_immediate_and_atomics_fail_locally(void)
{
	static const uint32_t ops[] = { URNIC_WR_RDMA_WRITE_WITH_IMM, URNIC_WR_SEND_WITH_IMM,
					URNIC_WR_ATOMIC_FETCH_AND_ADD,
					URNIC_WR_ATOMIC_CMP_AND_SWP };

	for (unsigned i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		struct env v;
		struct urnic_cqe c[2];

		env_open(&v, 61 + i, &conn);
		post(&v, 0,
		     &(struct fab_send_wr){ .wr_id = 1,
					    .opcode = ops[i],
					    .remote_addr = v.dst.mr->iova,
					    .rkey = v.dst.mr->key,
					    .num_sge = 1,
					    .sge = { fab_sge(v.src.mr, 0, 8) } });
		post(&v, 0, &(struct fab_send_wr){ .wr_id = 2, .opcode = URNIC_WR_SEND });
		iwl_settle(&v.l);
		CHECK_EQ(poll_all(&v.l.q[0]->scq, c, 2), 2);
		CHECK_EQ(c[0].status, URNIC_WC_LOC_QP_OP_ERR);
		CHECK_EQ(c[1].status, URNIC_WC_WR_FLUSH_ERR);
		CHECK_EQ(v.l.q[0]->qp.state, URNIC_QPS_ERR);
		CHECK(v.l.closed[0] && v.l.closed[1]); /* the connection was closed after it */
		CHECK_EQ(v.l.q[1]->qp.state, URNIC_QPS_ERR);
		env_close(&v);
	}
}

static void test_connection_loss_flushes(void)
{
	struct env v;
	struct urnic_cqe c[4];

	env_open(&v, 71, &conn);
	v.l.hold[0] = true;
	post_recv(v.l.q[0], 1, fab_sge(v.src.mr, 0, 64));
	post(&v, 0,
	     &(struct fab_send_wr){ .wr_id = 2,
				    .opcode = URNIC_WR_RDMA_READ,
				    .remote_addr = v.dst.mr->iova,
				    .rkey = v.dst.mr->key,
				    .num_sge = 1,
				    .sge = { fab_sge(v.src.mr, 0, 8) } });
	post(&v, 0,
	     &(struct fab_send_wr){ .wr_id = 3,
				    .opcode = URNIC_WR_RDMA_WRITE,
				    .remote_addr = v.dst.mr->iova,
				    .rkey = v.dst.mr->key,
				    .num_sge = 1,
				    .sge = { fab_sge(v.src.mr, 0, 8) } });
	iwl_settle(&v.l);
	CHECK(urnic_iw_tx_pending(&v.l.q[0]->qp));
	urnic_iw_llp_closed(v.l.f->hosts[0].e, &v.l.q[0]->qp, -104, v.l.f->now_ns);
	CHECK_EQ(v.l.q[0]->qp.state, URNIC_QPS_ERR);
	CHECK(!urnic_iw_tx_pending(&v.l.q[0]->qp) && !urnic_iw_close_due(&v.l.q[0]->qp));
	iwl_settle(&v.l);
	/* IBTA 10.3.1 / siw_sq_flush: the READ and the WRITE never left: FLUSH_ERR. */
	CHECK_EQ(poll_all(&v.l.q[0]->scq, c, 4), 2);
	CHECK_CQE(c[0], 2, URNIC_WC_WR_FLUSH_ERR, URNIC_WC_RDMA_READ, 0);
	CHECK_CQE(c[1], 3, URNIC_WC_WR_FLUSH_ERR, URNIC_WC_RDMA_WRITE, 0);
	CHECK_EQ(poll_all(&v.l.q[0]->rcq, c, 4), 1);
	CHECK_EQ(c[0].status, URNIC_WC_WR_FLUSH_ERR);
	v.l.closed[0] = true;
	env_close(&v);
}

static struct urnic_srq *srq_of(struct urnic_pd *pd)
{
	return fab_srq_new(pd, 64);
}

static void test_sends_into_an_srq(void)
{
	struct env v;
	struct urnic_cqe c[4];

	iwl_open_srq(&v.l, 81, &conn, srq_of);
	fab_buf_new(v.l.f, &v.src, 0, &v.l.pd[0], BIG, FAB_ALL_ACCESS);
	fab_buf_new(v.l.f, &v.dst, 1, &v.l.pd[1], BIG, FAB_ALL_ACCESS);
	fab_fill(v.src.p, BIG, 81);
	for (int i = 0; i < 3; i++) {
		struct urnic_sge s = fab_sge(v.dst.mr, (uint64_t)i * 8192, 8192);

		CHECK_EQ(fab_post_srq_recv(v.l.srq, 40 + (uint64_t)i, &s, 1), 0);
		post(&v, 0,
		     &(struct fab_send_wr){ .wr_id = (uint64_t)i,
					    .opcode = URNIC_WR_SEND,
					    .num_sge = 1,
					    .sge = { fab_sge(v.src.mr, (uint64_t)i * 8192,
							     1000 + (uint32_t)i * 3000) } });
	}
	iwl_settle(&v.l);
	CHECK_EQ(poll_all(&v.l.q[1]->rcq, c, 4), 3);
	for (int i = 0; i < 3; i++) {
		CHECK_CQE(c[i], 40 + (uint64_t)i, URNIC_WC_SUCCESS, URNIC_WC_RECV,
			  1000 + (uint32_t)i * 3000);
		CHECK(memcmp(v.src.p + i * 8192, v.dst.p + i * 8192, c[i].byte_len) == 0);
	}
	env_close(&v);
}

static void test_non_rc_refused_on_iwarp_engine(void)
{
	struct fabric *f = fabric_new(1, 5);
	struct urnic_qp qp = { .type = URNIC_QPT_UD };

	f->hosts[0].e->cfg.iwarp = true;
	CHECK_EQ(urnic_engine_qp_add(f->hosts[0].e, &qp), -EOPNOTSUPP);
	qp.type = URNIC_QPT_UC;
	CHECK_EQ(urnic_engine_qp_add(f->hosts[0].e, &qp), -EOPNOTSUPP);
	fabric_free(f);
}

int main(void)
{
	RUN(test_send_sizes_arrive_whole);
	RUN(test_solicited_send_wakes_solicited_arm);
	RUN(test_write_then_read_back);
	RUN(test_pingpong_write_completion_waits_for_the_answer);
	RUN(test_read_into_several_sges);
	RUN(test_batch_goes_out_in_one_ring);
	RUN(test_ord_bounds_reads_and_fence_waits);
	RUN(test_send_with_invalidate_and_local_invalidate);
	RUN(test_immediate_and_atomics_fail_locally);
	RUN(test_connection_loss_flushes);
	RUN(test_sends_into_an_srq);
	RUN(test_non_rc_refused_on_iwarp_engine);
	return 0;
}
