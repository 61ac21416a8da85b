/* SPDX-License-Identifier: MIT */
/*
 * test_uet_rc.c - RC queue pairs carried by the UET transport (engine/uet/uet_int.h)
 * between two engines of UET devices on the in-process fabric.
 *
 * SEND (with immediate, zero length), RDMA WRITE (with immediate), RDMA READ, end to
 * end with every byte checked; the same under random loss, duplication and reordering
 * (what was lost is resent, nothing twice placed, completions in post order); a receive
 * completion only once the WRITEs before it are in memory; a READ that reads what an
 * earlier WRITE wrote; remote access errors (REM_ACCESS_ERR, both QPs in error); a SEND
 * that finds no receive WQE (NACK, parked, sent again once one is posted; with
 * rnr_retry 0, RNR_RETRY_EXC_ERR); a dead network (RETRY_EXC_ERR); atomics refused
 * locally; an SRQ refused at creation.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"
#include "engine/uet/pds.h"
#include "engine/uet/uet_rc.h"
#include "wire/uet.h"

enum { BIG = 1 << 20 };

struct uenv {
	struct fabric *f;
	struct urnic_pd pd[2];
	struct fab_qp *a, *b;
	struct fab_buf la, ra; /* host 0's and host 1's buffers */
};

static void uenv_open(struct uenv *v, const struct fab_conn *c, uint64_t seed)
{
	memset(v, 0, sizeof(*v));
	v->f = fabric_new(2, seed);
	fab_uet(v->f);
	v->pd[0].handle = 1;
	v->pd[1].handle = 1;
	v->a = fab_qp_new(v->f, 0, &v->pd[0], 1024, 1024, true);
	v->b = fab_qp_new(v->f, 1, &v->pd[1], 1024, 1024, true);
	fab_connect(v->a, v->b, c);
	fab_buf_new(v->f, &v->la, 0, &v->pd[0], BIG, FAB_ALL_ACCESS);
	fab_buf_new(v->f, &v->ra, 1, &v->pd[1], BIG, FAB_ALL_ACCESS);
	fab_fill(v->la.p, BIG, 1);
	fab_fill(v->ra.p, BIG, 2);
}

static void uenv_close(struct uenv *v)
{
	fabric_settle(v->f);
	fab_buf_free(v->f, &v->la);
	fab_buf_free(v->f, &v->ra);
	fab_qp_free(v->a);
	fab_qp_free(v->b);
	fabric_free(v->f);
}

static struct fab_conn conn_4k(void)
{
	struct fab_conn c = fab_conn_default();

	c.mtu = 4096;
	return c;
}

static void post(struct fab_qp *q, uint64_t id, uint32_t opcode, struct urnic_sge sge,
		 uint64_t raddr, uint32_t rkey)
{
	CHECK_EQ(fab_post_send(q, &(struct fab_send_wr){ .wr_id = id,
							 .opcode = opcode,
							 .imm_be = 0xc0ffee00u + (uint32_t)id,
							 .remote_addr = raddr,
							 .rkey = rkey,
							 .num_sge = 1,
							 .sge = { sge } }),
		 0);
}

/* Each operation once, every byte checked, and the wire's packets all UET. */
static void ops_round(struct uenv *v, uint32_t seed)
{
	struct urnic_cqe sc[5], rc[3];
	struct urnic_sge rs;

	fab_fill(v->la.p, BIG, seed);
	memset(v->ra.p, 0, BIG);
	/* Two receives: a SEND of 10000 bytes and a WRITE with immediate. */
	rs = fab_sge(v->ra.mr, 900000, 20000);
	CHECK_EQ(fab_post_recv(v->b, 101, &rs, 1), 0);
	rs = fab_sge(v->ra.mr, 950000, 16);
	CHECK_EQ(fab_post_recv(v->b, 102, &rs, 1), 0);
	CHECK_EQ(fab_post_recv(v->b, 103, &rs, 1), 0);
	post(v->a, 1, URNIC_WR_RDMA_WRITE, fab_sge(v->la.mr, 0, 300000), v->ra.mr->iova + 7,
	     v->ra.mr->key);
	post(v->a, 2, URNIC_WR_SEND_WITH_IMM, fab_sge(v->la.mr, 400000, 10000), 0, 0);
	post(v->a, 3, URNIC_WR_RDMA_WRITE_WITH_IMM, fab_sge(v->la.mr, 500000, 50000),
	     v->ra.mr->iova + 500000, v->ra.mr->key);
	/* READ back what the first WRITE wrote: the READ runs after it (IBTA 9.5). */
	post(v->a, 4, URNIC_WR_RDMA_READ, fab_sge(v->la.mr, 600000, 120000), v->ra.mr->iova + 1007,
	     v->ra.mr->key);
	post(v->a, 5, URNIC_WR_SEND, fab_sge(v->la.mr, 0, 0), 0, 0);
	fab_wait_cqes(v->f, &v->b->rcq, rc, 3);
	fab_wait_cqes(v->f, &v->a->scq, sc, 5);
	CHECK_CQE(sc[0], 1, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 300000);
	CHECK_CQE(sc[1], 2, URNIC_WC_SUCCESS, URNIC_WC_SEND, 10000);
	CHECK_CQE(sc[2], 3, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 50000);
	CHECK_CQE(sc[3], 4, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 120000);
	CHECK_CQE(sc[4], 5, URNIC_WC_SUCCESS, URNIC_WC_SEND, 0);
	CHECK_CQE(rc[0], 101, URNIC_WC_SUCCESS, URNIC_WC_RECV, 10000);
	CHECK(rc[0].wc_flags & URNIC_WC_WITH_IMM);
	CHECK_EQ(rc[0].imm_be, 0xc0ffee02u);
	CHECK_EQ(rc[0].src_qp, v->a->qp.qpn);
	CHECK_CQE(rc[1], 102, URNIC_WC_SUCCESS, URNIC_WC_RECV_RDMA_WITH_IMM, 50000);
	CHECK_EQ(rc[1].imm_be, 0xc0ffee03u);
	CHECK_CQE(rc[2], 103, URNIC_WC_SUCCESS, URNIC_WC_RECV, 0);
	CHECK(memcmp(v->ra.p + 7, v->la.p, 300000) == 0);
	CHECK_EQ(v->ra.p[6], 0);
	CHECK_EQ(v->ra.p[7 + 300000], 0);
	CHECK(memcmp(v->ra.p + 900000, v->la.p + 400000, 10000) == 0);
	CHECK(memcmp(v->ra.p + 500000, v->la.p + 500000, 50000) == 0);
	CHECK(memcmp(v->la.p + 600000, v->la.p + 1000, 120000) == 0);
}

static void test_ops_clean(void)
{
	struct fab_conn c = conn_4k();
	struct uenv v;

	uenv_open(&v, &c, 1);
	ops_round(&v, 11);
	ops_round(&v, 12);
	fabric_settle(v.f);
	CHECK_EQ(fab_ctr(v.f, 0, URNIC_CTR_uet_tx_resent), 0);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_uet_tx_resent), 0);
	CHECK(fab_ctr(v.f, 1, URNIC_CTR_uet_acks_sent) > 0);
	CHECK(fab_ctr(v.f, 0, URNIC_CTR_uet_acks_rcvd) > 0);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_uet_drop_bad_header), 0);
	/* Every request went on an entropy value of the device's range. */
	for (uint32_t i = 0; i < v.f->ntrace; i++) {
		CHECK(v.f->trace[i].sport >= URNIC_UET_EV_BASE);
		CHECK(v.f->trace[i].sport < URNIC_UET_EV_BASE + URNIC_UET_EVS);
	}
	uenv_close(&v);
}

/* Loss, duplication and reordering both ways: the same data, nothing placed twice. */
static void test_ops_lossy(void)
{
	struct fab_conn c = conn_4k();
	struct uenv v;

	uenv_open(&v, &c, 2);
	v.f->drop_ppm = 20000;
	v.f->dup_ppm = 10000;
	v.f->reorder_ppm = 100000;
	for (uint32_t r = 0; r < 4; r++)
		ops_round(&v, 20 + r);
	CHECK(fab_ctr(v.f, 0, URNIC_CTR_uet_tx_resent) > 0);
	CHECK(fab_ctr(v.f, 1, URNIC_CTR_uet_rx_duplicate) > 0);
	v.f->drop_ppm = v.f->dup_ppm = v.f->reorder_ppm = 0;
	uenv_close(&v);
}

/* The last packet of a WRITE held back: the SEND behind it arrives whole first, yet its
 * receive completes only once the WRITE's data is in memory. */
static bool write_tail(const struct fab_pktinfo *pi, void *arg)
{
	(void)arg;
	return pi->src == 0 && pi->opcode == URNIC_UET_RUD_REQ && pi->payload_bytes == 1000;
}

static void test_receive_waits_for_earlier_write(void)
{
	struct fab_conn c = conn_4k();
	struct uenv v;
	struct urnic_cqe sc[2], rc;
	struct urnic_sge rs;
	struct fab_rule *hold;

	uenv_open(&v, &c, 3);
	memset(v.ra.p, 0, BIG);
	hold = fab_add_rule(v.f, &(struct fab_rule){ .match = FAB_M_PRED,
						     .pred = write_tail,
						     .count = 1,
						     .action = FAB_HOLD,
						     .hold = 3 });
	rs = fab_sge(v.ra.mr, 500000, 100);
	CHECK_EQ(fab_post_recv(v.b, 7, &rs, 1), 0);
	post(v.a, 1, URNIC_WR_RDMA_WRITE, fab_sge(v.la.mr, 0, 3 * 4096 + 1000), v.ra.mr->iova,
	     v.ra.mr->key);
	post(v.a, 2, URNIC_WR_SEND, fab_sge(v.la.mr, 200000, 100), 0, 0);
	fab_wait_cqes(v.f, &v.b->rcq, &rc, 1);
	CHECK_EQ(hold->hits, 1);
	CHECK_CQE(rc, 7, URNIC_WC_SUCCESS, URNIC_WC_RECV, 100);
	CHECK(memcmp(v.ra.p, v.la.p, 3 * 4096 + 1000) == 0);
	fab_wait_cqes(v.f, &v.a->scq, sc, 2);
	uenv_close(&v);
}

static void test_remote_access_error(void)
{
	struct fab_conn c = conn_4k();
	struct uenv v;
	struct urnic_cqe sc[2];

	uenv_open(&v, &c, 4);
	post(v.a, 1, URNIC_WR_RDMA_WRITE, fab_sge(v.la.mr, 0, 100), v.ra.mr->iova, v.ra.mr->key);
	post(v.a, 2, URNIC_WR_RDMA_WRITE, fab_sge(v.la.mr, 0, 100), v.ra.mr->iova,
	     v.ra.mr->key ^ 0x100);
	fab_wait_cqes(v.f, &v.a->scq, sc, 2);
	CHECK_CQE(sc[0], 1, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 100);
	CHECK_EQ(sc[1].wr_id, 2);
	CHECK_EQ(sc[1].status, URNIC_WC_REM_ACCESS_ERR);
	CHECK_EQ(v.a->qp.state, URNIC_QPS_ERR);
	CHECK_EQ(v.b->qp.state, URNIC_QPS_ERR);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_uet_remote_errors_sent), 1);
	CHECK_EQ(fab_ctr(v.f, 0, URNIC_CTR_uet_remote_errors_rcvd), 1);

	/* A READ beyond its region: the same, and nothing read. */
	uenv_close(&v);
	uenv_open(&v, &c, 5);
	post(v.a, 1, URNIC_WR_RDMA_READ, fab_sge(v.la.mr, 0, 100), v.ra.mr->iova + BIG - 50,
	     v.ra.mr->key);
	fab_wait_cqes(v.f, &v.a->scq, sc, 1);
	CHECK_EQ(sc[0].status, URNIC_WC_REM_ACCESS_ERR);
	uenv_close(&v);
}

static void test_rnr(void)
{
	struct fab_conn c = conn_4k();
	struct uenv v;
	struct urnic_cqe sc, rc;
	struct urnic_sge rs;

	/* rnr_retry 7: waits for ever; the receive posted later takes the message. */
	uenv_open(&v, &c, 6);
	post(v.a, 1, URNIC_WR_SEND, fab_sge(v.la.mr, 0, 9000), 0, 0);
	for (int i = 0; i < 2000; i++)
		fabric_run(v.f, NULL, NULL, 1);
	CHECK(fab_ctr(v.f, 1, URNIC_CTR_uet_rnr_nacks_sent) > 0);
	CHECK_EQ(fab_poll(&v.a->scq, &sc, 1), 0);
	rs = fab_sge(v.ra.mr, 0, 9000);
	CHECK_EQ(fab_post_recv(v.b, 5, &rs, 1), 0);
	fab_wait_cqes(v.f, &v.b->rcq, &rc, 1);
	fab_wait_cqes(v.f, &v.a->scq, &sc, 1);
	CHECK_CQE(rc, 5, URNIC_WC_SUCCESS, URNIC_WC_RECV, 9000);
	CHECK_CQE(sc, 1, URNIC_WC_SUCCESS, URNIC_WC_SEND, 9000);
	CHECK(memcmp(v.ra.p, v.la.p, 9000) == 0);
	uenv_close(&v);

	/* rnr_retry 0: the first NACK fails the SEND. */
	c.rnr_retry = 0;
	uenv_open(&v, &c, 7);
	post(v.a, 1, URNIC_WR_SEND, fab_sge(v.la.mr, 0, 100), 0, 0);
	fab_wait_cqes(v.f, &v.a->scq, &sc, 1);
	CHECK_EQ(sc.status, URNIC_WC_RNR_RETRY_EXC_ERR);
	CHECK_EQ(v.a->qp.state, URNIC_QPS_ERR);
	uenv_close(&v);
}

static void test_dead_network(void)
{
	struct fab_conn c = conn_4k();
	struct uenv v;
	struct urnic_cqe sc[2];

	c.retry_cnt = 3;
	uenv_open(&v, &c, 8);
	v.f->drop_ppm = 1000000;
	post(v.a, 1, URNIC_WR_RDMA_WRITE, fab_sge(v.la.mr, 0, 20000), v.ra.mr->iova, v.ra.mr->key);
	post(v.a, 2, URNIC_WR_SEND, fab_sge(v.la.mr, 0, 10), 0, 0);
	fab_wait_cqes(v.f, &v.a->scq, sc, 2);
	CHECK_EQ(sc[0].status, URNIC_WC_RETRY_EXC_ERR);
	CHECK_EQ(sc[1].status, URNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(fab_ctr(v.f, 0, URNIC_CTR_uet_failed), 1);
	CHECK_EQ(fab_ctr(v.f, 0, URNIC_CTR_uet_timeouts), 4);
	v.f->drop_ppm = 0;
	uenv_close(&v);
}

static void test_refused_locally(void)
{
	struct fab_conn c = conn_4k();
	struct uenv v;
	struct urnic_cqe sc;
	struct fab_qp *q;
	struct urnic_srq *srq;

	uenv_open(&v, &c, 9);
	CHECK_EQ(fab_post_send(v.a, &(struct fab_send_wr){ .wr_id = 3,
							   .opcode = URNIC_WR_ATOMIC_FETCH_AND_ADD,
							   .remote_addr = v.ra.mr->iova,
							   .rkey = v.ra.mr->key,
							   .compare_add = 1,
							   .num_sge = 1,
							   .sge = { fab_sge(v.la.mr, 0, 8) } }),
		 0);
	fab_wait_cqes(v.f, &v.a->scq, &sc, 1);
	CHECK_EQ(sc.status, URNIC_WC_LOC_QP_OP_ERR);
	uenv_close(&v);

	/* UD and SRQs are not offered on a UET device. */
	v.f = fabric_new(2, 10);
	fab_uet(v.f);
	v.pd[0].handle = 1;
	srq = fab_srq_new(&v.pd[0], 16);
	q = calloc(1, sizeof(*q));
	CHECK(q);
	q->qp.type = URNIC_QPT_UD;
	CHECK_EQ(urnic_engine_qp_add(fab_engine(v.f, 0), &q->qp), -EOPNOTSUPP);
	q->qp.type = URNIC_QPT_RC;
	q->qp.srq = srq;
	CHECK_EQ(urnic_engine_qp_add(fab_engine(v.f, 0), &q->qp), -EOPNOTSUPP);
	free(q);
	fab_srq_free(srq);
	fabric_free(v.f);
}

/* A request of A's to B as a peer would build it: RUD, SES standard, payload. */
static uint32_t forge(uint8_t *buf, const struct uenv *v, uint16_t spdcid, uint32_t psn,
		      uint8_t opcode, uint64_t addr, uint32_t rkey, uint32_t n)
{
	struct urnic_uet_pds h = { .type = URNIC_UET_RUD_REQ,
				   .next = URNIC_UET_NEXT_REQ_STD,
				   .psn = psn,
				   .spdcid = spdcid,
				   .dpdcid = (uint16_t)v->b->qp.qpn };
	struct urnic_uet_ses s = { .next = URNIC_UET_NEXT_REQ_STD,
				   .opcode = opcode,
				   .flags = URNIC_UET_SES_F_SOM | URNIC_UET_SES_F_EOM,
				   .buffer_offset = addr,
				   .mem_key = rkey,
				   .request_length = n };
	ssize_t a = urnic_uet_pds_encode(&h, buf, 64), b;

	CHECK(a > 0);
	b = urnic_uet_ses_encode(&s, buf + a, 64);
	CHECK(b > 0);
	memset(buf + a + b, 0x5a, n);
	return (uint32_t)(a + b) + n;
}

/* Packets only a forger sends: each dropped and counted, no byte of B's memory touched,
 * the connection unharmed. */
static void test_hostile(void)
{
	struct fab_conn c = conn_4k();
	struct uenv v;
	struct urnic_cqe sc;
	uint8_t buf[256], stranger[4] = { 10, 9, 9, 9 };
	uint16_t apdc;
	uint32_t len;

	uenv_open(&v, &c, 11);
	/* A first WRITE: B learns A's start PSN from its SYN (uet_int.h). */
	post(v.a, 1, URNIC_WR_RDMA_WRITE, fab_sge(v.la.mr, 0, 5000), v.ra.mr->iova, v.ra.mr->key);
	fab_wait_cqes(v.f, &v.a->scq, &sc, 1);
	fabric_settle(v.f);
	memset(v.ra.p, 0, BIG);
	apdc = (uint16_t)v.a->qp.qpn;
	/* From another address: no PDC of B's has that peer. */
	len = forge(buf, &v, apdc, c.psn_a, URNIC_UET_SES_WRITE, v.ra.mr->iova, v.ra.mr->key, 64);
	fab_inject(v.f, stranger, 1, URNIC_UET_EV_BASE, buf, len, false);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_uet_drop_unknown_pdc), 1);
	/* From A's address, another SPDCID. */
	len = forge(buf, &v, (uint16_t)(apdc + 1), c.psn_a, URNIC_UET_SES_WRITE, v.ra.mr->iova,
		    v.ra.mr->key, 64);
	fab_inject(v.f, fab_engine(v.f, 0)->cfg.local_ip, 1, URNIC_UET_EV_BASE, buf, len, false);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_uet_drop_unknown_pdc), 2);
	/* Beyond the receive window: NACKed, not taken. */
	len = forge(buf, &v, apdc, c.psn_a + URNIC_PDS_WINDOW + 5, URNIC_UET_SES_WRITE,
		    v.ra.mr->iova, v.ra.mr->key, 64);
	fab_inject(v.f, fab_engine(v.f, 0)->cfg.local_ip, 1, URNIC_UET_EV_BASE, buf, len, false);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_uet_drop_out_of_window), 1);
	/* Cut short, and an unknown PDS type. */
	fab_inject(v.f, fab_engine(v.f, 0)->cfg.local_ip, 1, URNIC_UET_EV_BASE, buf, 20, false);
	buf[0] = (uint8_t)(URNIC_UET_UUD_REQ << 3);
	fab_inject(v.f, fab_engine(v.f, 0)->cfg.local_ip, 1, URNIC_UET_EV_BASE, buf, len, false);
	CHECK_EQ(fab_ctr(v.f, 1, URNIC_CTR_uet_drop_bad_header), 2);
	/* A READ response nobody asked for: taken (so not asked again), placed nowhere. */
	{
		struct urnic_uet_pds h = { .type = URNIC_UET_RUD_REQ,
					   .next = URNIC_UET_NEXT_RSP_DATA,
					   .flags = URNIC_UET_F_SYN,
					   .psn = c.psn_b,
					   .spdcid = (uint16_t)v.b->qp.qpn };
		struct urnic_uet_ses s = { .next = URNIC_UET_NEXT_RSP_DATA,
					   .rsp_opcode = URNIC_UET_RSP_WITH_DATA,
					   .return_code = URNIC_UET_RC_OK,
					   .msg_id = 77,
					   .read_msg_id = 77,
					   .mod_len = 64,
					   .length14 = 64 };
		ssize_t a = urnic_uet_pds_encode(&h, buf, 64), b;

		CHECK(a > 0);
		b = urnic_uet_ses_encode(&s, buf + a, 64);
		CHECK(b > 0);
		fab_inject(v.f, fab_engine(v.f, 1)->cfg.local_ip, 0, URNIC_UET_EV_BASE, buf,
			   (uint32_t)(a + b) + 64, false);
		CHECK_EQ(fab_ctr(v.f, 0, URNIC_CTR_uet_drop_bad_ses), 1);
	}
	for (uint32_t i = 0; i < BIG; i++)
		CHECK_EQ(v.ra.p[i], 0);
	/* The connection goes on. */
	post(v.a, 2, URNIC_WR_RDMA_WRITE, fab_sge(v.la.mr, 0, 5000), v.ra.mr->iova, v.ra.mr->key);
	fab_wait_cqes(v.f, &v.a->scq, &sc, 1);
	CHECK_CQE(sc, 2, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, 5000);
	CHECK(memcmp(v.ra.p, v.la.p, 5000) == 0);
	uenv_close(&v);
}

/* perftest's READ server stays in RTR: it answers from there, in a PSN space its peer
 * learns from the responses' SYN (it set no sq_psn, so the peer's rq_psn is not it). */
static void test_read_from_rtr_responder(void)
{
	struct fab_conn c = conn_4k();
	struct fabric *f = fabric_new(2, 12);
	struct urnic_pd pd[2] = { { .handle = 1 }, { .handle = 1 } };
	struct fab_qp *a, *b;
	struct fab_buf la, rb;
	struct urnic_cqe sc;
	struct urnic_qp_attr at = { 0 };

	fab_uet(f);
	a = fab_qp_new(f, 0, &pd[0], 64, 64, true);
	b = fab_qp_new(f, 1, &pd[1], 64, 64, true);
	fab_buf_new(f, &la, 0, &pd[0], BIG, FAB_ALL_ACCESS);
	fab_buf_new(f, &rb, 1, &pd[1], BIG, FAB_ALL_ACCESS);
	fab_fill(rb.p, BIG, 5);
	fab_connect_one(a, b, &c, c.psn_a, 0x777);
	/* b: INIT -> RTR only. */
	at.port_num = 1;
	at.access = FAB_ALL_ACCESS;
	CHECK_EQ(fab_modify(b, &at, URNIC_QPS_INIT,
			    URNIC_QP_STATE | URNIC_QP_PKEY_INDEX | URNIC_QP_PORT |
				    URNIC_QP_ACCESS_FLAGS),
		 0);
	at.peer = fab_peer(f, 0);
	at.path_mtu = c.mtu;
	at.dest_qp_num = a->qp.qpn;
	at.rq_psn = c.psn_a;
	at.max_dest_rd_atomic = 16;
	at.min_rnr_timer = 12;
	CHECK_EQ(fab_modify(b, &at, URNIC_QPS_RTR,
			    URNIC_QP_STATE | URNIC_QP_AV | URNIC_QP_PATH_MTU | URNIC_QP_DEST_QPN |
				    URNIC_QP_RQ_PSN | URNIC_QP_MAX_DEST_RD_ATOMIC |
				    URNIC_QP_MIN_RNR_TIMER),
		 0);
	for (int i = 0; i < 20; i++)
		post(a, (uint64_t)i, URNIC_WR_RDMA_READ, fab_sge(la.mr, (uint64_t)i * 40000, 40000),
		     rb.mr->iova + (uint64_t)i * 40000, rb.mr->key);
	for (int i = 0; i < 20; i++) {
		fab_wait_cqes(f, &a->scq, &sc, 1);
		CHECK_CQE(sc, (uint64_t)i, URNIC_WC_SUCCESS, URNIC_WC_RDMA_READ, 40000);
	}
	CHECK(memcmp(la.p, rb.p, 20 * 40000) == 0);
	CHECK_EQ(b->qp.state, URNIC_QPS_RTR);
	fabric_settle(f);
	fab_buf_free(f, &la);
	fab_buf_free(f, &rb);
	fab_qp_free(a);
	fab_qp_free(b);
	fabric_free(f);
}

int main(void)
{
	test_ops_clean();
	test_ops_lossy();
	test_receive_waits_for_earlier_write();
	test_remote_access_error();
	test_rnr();
	test_dead_network();
	test_refused_locally();
	test_hostile();
	test_read_from_rtr_responder();
	return 0;
}
