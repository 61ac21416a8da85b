/* SPDX-License-Identifier: MIT */
/*
 * test_lifetime.c - a grant that ends inside a message ends for the rest of it
 * (docs/security.md; IBTA 9.7.5.1.7: the R_Key, bounds and rights of a WRITE are
 * checked for the memory each packet touches; 10.6.7: a revoked window validates
 * nothing).
 *
 *   host 0 (requester a) ---- RC or UC, MTU 256 ---- host 1 (responder b: rb)
 *
 * a writes 768 bytes (FIRST, MIDDLE, LAST) into rb. The fabric lets the FIRST through
 * and keeps the MIDDLE and the LAST; host 1's application then deregisters the region,
 * reregisters it, or revokes the window the WRITE came through (LOCAL_INV, dealloc,
 * rebind); then the two packets arrive. The FIRST's 256 bytes are in place; not one
 * byte after them changes, in the old memory or the new: RC answers NAK remote access
 * error (a completes IBV_WC_REM_ACCESS_ERR, both QPs go to error), UC drops the rest of
 * the message; write_key_revoked counts it either way.
 * A READ answered in turns stops the same way between them (read_key_revoked).
 * The same for QPs: a type 2B window goes with the QP it was bound through, and QP
 * numbers do not come back soon, so nothing that named an old QP reaches a new one.
 */
#include <string.h>

#include "fabric.h"
#include "mem/mw.h"

#define RLEN 32768
#define WOFF 512  /* where the WRITE lands in rb */
#define WLEN 768  /* three packets at MTU 256 */
#define FIRST 256 /* bytes of the FIRST packet */

struct env {
	struct fab_pair p;
	bool uc;
	struct fab_buf la;    /* host 0: the source */
	struct fab_buf rb;    /* host 1: the target */
	uint8_t *other;	      /* host 1: where a reregistration moves rb */
	uint8_t before[RLEN]; /* rb at start */
	uint8_t other_before[RLEN];
	struct urnic_mr *mw;	  /* the window the WRITE goes through, if any */
	struct fab_rule *keep[2]; /* the MIDDLE and the LAST, dropped and captured */
};

static void env_open(struct env *v, bool uc, uint32_t rb_access, uint64_t seed)
{
	struct fab_conn c = fab_conn_default();
	enum urnic_qp_type t = uc ? URNIC_QPT_UC : URNIC_QPT_RC;

	memset(v, 0, sizeof(*v));
	v->uc = uc;
	c.mtu = 256;
	v->p.f = fabric_new(2, seed);
	v->p.pd[0].handle = 1;
	v->p.pd[1].handle = 1;
	v->p.a = fab_qp_new_type(v->p.f, 0, &v->p.pd[0], t, NULL, 64, 64, true);
	v->p.b = fab_qp_new_type(v->p.f, 1, &v->p.pd[1], t, NULL, 64, 64, true);
	fab_connect(v->p.a, v->p.b, &c);
	fab_buf_new(v->p.f, &v->la, 0, &v->p.pd[0], RLEN, FAB_ALL_ACCESS);
	fab_fill(v->la.p, RLEN, (uint32_t)seed);
	fab_buf_new(v->p.f, &v->rb, 1, &v->p.pd[1], RLEN, rb_access);
	fab_fill(v->rb.p, RLEN, (uint32_t)seed + 3);
	memcpy(v->before, v->rb.p, RLEN);
	v->other = calloc(1, RLEN);
	CHECK(v->other);
	fab_fill(v->other, RLEN, (uint32_t)seed + 5);
	memcpy(v->other_before, v->other, RLEN);
}

static void env_close(struct env *v)
{
	if (v->mw)
		urnic_mw_dealloc(&fab_engine(v->p.f, 1)->mrs, v->mw);
	if (v->rb.mr)
		fab_buf_free(v->p.f, &v->rb);
	else
		free(v->rb.p);
	free(v->other);
	fab_buf_free(v->p.f, &v->la);
	fab_pair_close(&v->p);
}

static uint8_t op_middle(const struct env *v)
{
	return (uint8_t)((v->uc ? URNIC_OP_UC_RDMA_WRITE_FIRST : URNIC_OP_RC_RDMA_WRITE_FIRST) + 1);
}

static bool first_arrived(struct fabric *f, void *arg)
{
	return fab_ctr(f, 1, URNIC_CTR_rx_packets) >= 1;
}

/* Posts the WRITE through rkey at raddr and runs until its FIRST has landed; the
 * MIDDLE and LAST are captured, not delivered. */
static void start_write(struct env *v, uint32_t rkey, uint64_t raddr)
{
	for (int k = 0; k < 2; k++)
		v->keep[k] = fab_add_rule(v->p.f, &(struct fab_rule){
							  .match = FAB_M_SRC | FAB_M_OPCODE,
							  .src = 0,
							  .opcode = (uint8_t)(op_middle(v) + k),
							  .count = 1,
							  .action = FAB_DROP,
							  .capture = true,
						  });
	CHECK_EQ(fab_post_send(v->p.a,
			       &(struct fab_send_wr){ .wr_id = 0xa1,
						      .opcode = URNIC_WR_RDMA_WRITE,
						      .remote_addr = raddr,
						      .rkey = rkey,
						      .num_sge = 1,
						      .sge = { fab_sge(v->la.mr, 0, WLEN) } }),
		 0);
	CHECK(fabric_run(v->p.f, first_arrived, NULL, 1000));
	/* Let a send what it has batched: the MIDDLE and LAST meet the rules. */
	fab_flush(v->p.f);
	CHECK_EQ(v->keep[0]->hits, 1);
	CHECK_EQ(v->keep[1]->hits, 1);
	CHECK(memcmp(v->rb.p + WOFF, v->la.p, FIRST) == 0);
}

/* Delivers the two kept packets now and runs until a's completion and quiet. */
static void deliver_kept(struct env *v, struct urnic_cqe *c)
{
	for (int k = 0; k < 2; k++)
		fab_inject(v->p.f, v->p.f->hosts[0].ip, 1, v->keep[k]->cap_info.sport,
			   v->keep[k]->cap, v->keep[k]->cap_len, false);
	fab_clear_rules(v->p.f);
	fab_wait_cqes(v->p.f, &v->p.a->scq, c, 1);
	fabric_settle(v->p.f);
}

/* Delivers the kept MIDDLE and LAST now, runs to the end, checks the outcome. */
static void finish_write(struct env *v)
{
	struct urnic_cqe c;

	deliver_kept(v, &c);
	/* The FIRST landed before the grant ended; nothing after it, anywhere. */
	CHECK(memcmp(v->rb.p, v->before, WOFF) == 0);
	CHECK(memcmp(v->rb.p + WOFF, v->la.p, FIRST) == 0);
	CHECK(memcmp(v->rb.p + WOFF + FIRST, v->before + WOFF + FIRST, RLEN - WOFF - FIRST) == 0);
	CHECK(memcmp(v->other, v->other_before, RLEN) == 0);
	CHECK_EQ(c.wr_id, 0xa1);
	CHECK_EQ(fab_ctr(v->p.f, 1, URNIC_CTR_write_key_revoked), 1);
	if (v->uc) {
		/* UC: no NAK (IBTA 9.8); the message is dropped from here on. */
		CHECK_EQ(c.status, URNIC_WC_SUCCESS);
		CHECK_EQ(fab_ctr(v->p.f, 1, URNIC_CTR_drop_uc_invalid), 1);
		CHECK_EQ(v->p.b->qp.state, URNIC_QPS_RTS);
	} else {
		CHECK_EQ(c.status, URNIC_WC_REM_ACCESS_ERR);
		CHECK_EQ(fab_ctr(v->p.f, 1, URNIC_CTR_nak_rem_access_sent), 1);
		CHECK_EQ(v->p.b->qp.state, URNIC_QPS_ERR);
	}
}

/* ibv_dereg_mr between the FIRST and the rest (the memory stays allocated here so that
 * a write into it shows; in an application it may be unmapped or reused). */
static void dereg_mid_write(bool uc)
{
	struct env v;

	env_open(&v, uc, FAB_ALL_ACCESS, uc ? 2 : 1);
	start_write(&v, v.rb.mr->key, v.rb.mr->iova + WOFF);
	fab_dereg(v.p.f, 1, v.rb.mr);
	v.rb.mr = NULL;
	finish_write(&v);
	env_close(&v);
}

static void test_rc_write_after_dereg(void)
{
	dereg_mid_write(false);
}

static void test_uc_write_after_dereg(void)
{
	dereg_mid_write(true);
}

/* ibv_rereg_mr: the key now names other memory, or the same memory under a grant made
 * anew: the WRITE begun under the old registration is not finished under the new one. */
static void rereg_mid_write(uint32_t what)
{
	struct env v;

	env_open(&v, false, FAB_ALL_ACCESS, 3 + what);
	start_write(&v, v.rb.mr->key, v.rb.mr->iova + WOFF);
	CHECK_EQ(urnic_mr_reregister(v.rb.mr, what, &v.p.pd[1], v.other, RLEN, FAB_ALL_ACCESS), 0);
	finish_write(&v);
	env_close(&v);
}

static void test_write_after_rereg_translation(void)
{
	rereg_mid_write(URNIC_MR_REREG_TRANSLATION);
}

static void test_write_after_rereg_same_access(void)
{
	rereg_mid_write(URNIC_MR_REREG_ACCESS);
}

/* A window over rb[0, RLEN) the WRITE goes through; rb grants no remote right itself. */
static void window_open(struct env *v, enum urnic_key_kind kind, uint64_t seed)
{
	struct urnic_cqe c;

	env_open(v, false, URNIC_ACCESS_LOCAL_WRITE | URNIC_ACCESS_MW_BIND, seed);
	CHECK_EQ(urnic_mw_alloc(&fab_engine(v->p.f, 1)->mrs, &v->p.pd[1], kind,
				(uint16_t)fab_random(v->p.f), &v->mw),
		 0);
	CHECK_EQ(fab_post_send(v->p.b,
			       &(struct fab_send_wr){ .wr_id = 0xb1,
						      .opcode = URNIC_WR_BIND_MW,
						      .mw_rkey = v->mw->key,
						      .rkey = v->mw->key,
						      .mr_lkey = v->rb.mr->key,
						      .remote_addr = v->rb.mr->iova,
						      .remote_len = RLEN,
						      .mw_access = URNIC_ACCESS_REMOTE_WRITE }),
		 0);
	fab_wait_cqes(v->p.f, &v->p.b->scq, &c, 1);
	CHECK_CQE(c, 0xb1, URNIC_WC_SUCCESS, URNIC_WC_BIND_MW, 0);
}

/* IBV_WR_LOCAL_INV of a type 2B window (IBTA 10.6.7.2.4) between the FIRST and the
 * rest. */
static void test_write_after_local_invalidate(void)
{
	struct env v;
	struct urnic_cqe c;

	window_open(&v, URNIC_KEY_MW2, 11);
	start_write(&v, v.mw->key, v.rb.mr->iova + WOFF);
	CHECK_EQ(fab_post_send(v.p.b, &(struct fab_send_wr){ .wr_id = 0xb2,
							     .opcode = URNIC_WR_LOCAL_INV,
							     .rkey = v.mw->key }),
		 0);
	fab_wait_cqes(v.p.f, &v.p.b->scq, &c, 1);
	CHECK_CQE(c, 0xb2, URNIC_WC_SUCCESS, URNIC_WC_LOCAL_INV, 0);
	finish_write(&v);
	env_close(&v);
}

/* ibv_dealloc_mw of a bound type 1 window. */
static void test_write_after_dealloc_mw(void)
{
	struct env v;

	window_open(&v, URNIC_KEY_MW1, 12);
	start_write(&v, v.mw->key, v.rb.mr->iova + WOFF);
	urnic_mw_dealloc(&fab_engine(v.p.f, 1)->mrs, v.mw);
	v.mw = NULL;
	finish_write(&v);
	env_close(&v);
}

/* A type 1 window bound again, to the same range under the same R_Key (the binder
 * chooses the consumer key, IBTA 10.6.7.3): a new grant, not the one the FIRST used. */
static void test_write_after_rebind_same_key(void)
{
	struct env v;
	struct urnic_mw_bind b;

	window_open(&v, URNIC_KEY_MW1, 13);
	start_write(&v, v.mw->key, v.rb.mr->iova + WOFF);
	b = (struct urnic_mw_bind){ .mw_rkey = v.mw->key,
				    .new_rkey = v.mw->key,
				    .mr_lkey = v.rb.mr->key,
				    .addr = v.rb.mr->iova,
				    .length = RLEN,
				    .access = URNIC_ACCESS_REMOTE_WRITE };
	CHECK_EQ(urnic_mw_bind(&fab_engine(v.p.f, 1)->mrs, &v.p.pd[1], v.p.b->qp.qpn, &b),
		 URNIC_MW_BIND_OK);
	finish_write(&v);
	env_close(&v);
}

/* Nothing in between: the same WRITE, held and delivered the same way, lands whole. */
static void test_write_with_grant_intact_lands(void)
{
	struct env v;
	struct urnic_cqe c;

	env_open(&v, false, FAB_ALL_ACCESS, 21);
	start_write(&v, v.rb.mr->key, v.rb.mr->iova + WOFF);
	deliver_kept(&v, &c);
	CHECK_CQE(c, 0xa1, URNIC_WC_SUCCESS, URNIC_WC_RDMA_WRITE, WLEN);
	CHECK(memcmp(v.rb.p + WOFF, v.la.p, WLEN) == 0);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_write_key_revoked), 0);
	env_close(&v);
}

/* ibv_modify_qp to the error state between the FIRST and the rest: b takes no more of
 * the message (IBTA 10.3.1: a QP in error processes no incoming packets); a's WRITE is
 * never acknowledged and ends with a retry error. */
static void test_write_after_modify_to_error(void)
{
	struct env v;
	struct urnic_qp_attr none = { 0 };
	struct urnic_cqe c;

	env_open(&v, false, FAB_ALL_ACCESS, 61);
	start_write(&v, v.rb.mr->key, v.rb.mr->iova + WOFF);
	CHECK_EQ(fab_modify(v.p.b, &none, URNIC_QPS_ERR, URNIC_QP_STATE), 0);
	deliver_kept(&v, &c);
	CHECK(memcmp(v.rb.p + WOFF + FIRST, v.before + WOFF + FIRST, RLEN - WOFF - FIRST) == 0);
	CHECK_EQ(c.wr_id, 0xa1);
	CHECK(c.status != URNIC_WC_SUCCESS);
	CHECK(fab_ctr(v.p.f, 1, URNIC_CTR_drop_qp_error) >= 2);
	env_close(&v);
}

/* The receive buffer's region deregistered between the FIRST and the rest of a SEND:
 * the rest is not placed; the receive completes with a local protection error and a
 * gets NAK remote operational error (IBTA 9.9.3.1, as rxe). */
static void test_send_after_receive_buffer_dereg(void)
{
	struct env v;
	struct urnic_cqe c, rc;

	env_open(&v, false, FAB_ALL_ACCESS, 62);
	CHECK_EQ(fab_post_recv(v.p.b, 0xb7,
			       &(struct urnic_sge){ v.rb.mr->iova + WOFF, WLEN, v.rb.mr->key }, 1),
		 0);
	for (int k = 0; k < 2; k++)
		v.keep[k] = fab_add_rule(
			v.p.f, &(struct fab_rule){
				       .match = FAB_M_SRC | FAB_M_OPCODE,
				       .src = 0,
				       .opcode = (uint8_t)(URNIC_OP_RC_SEND_FIRST + 1 + k),
				       .count = 1,
				       .action = FAB_DROP,
				       .capture = true,
			       });
	CHECK_EQ(
		fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 0xa3,
							    .opcode = URNIC_WR_SEND,
							    .num_sge = 1,
							    .sge = { fab_sge(v.la.mr, 0, WLEN) } }),
		0);
	CHECK(fabric_run(v.p.f, first_arrived, NULL, 1000));
	fab_flush(v.p.f);
	CHECK(memcmp(v.rb.p + WOFF, v.la.p, FIRST) == 0);
	fab_dereg(v.p.f, 1, v.rb.mr);
	v.rb.mr = NULL;
	deliver_kept(&v, &c);
	CHECK(memcmp(v.rb.p + WOFF + FIRST, v.before + WOFF + FIRST, RLEN - WOFF - FIRST) == 0);
	CHECK_EQ(c.wr_id, 0xa3);
	CHECK_EQ(c.status, URNIC_WC_REM_OP_ERR);
	CHECK_EQ(fab_poll(&v.p.b->rcq, &rc, 1), 1);
	CHECK_EQ(rc.wr_id, 0xb7);
	CHECK_EQ(rc.status, URNIC_WC_LOC_PROT_ERR);
	env_close(&v);
}

static bool responses_sent(struct fabric *f, void *arg)
{
	return fab_ctr(f, 1, URNIC_CTR_read_resp_sent) >= *(const uint64_t *)arg;
}

/* b answers a READ of 80 packets in turns of 64 per pass (resources.c, read_reply);
 * between them its application deregisters or reregisters the region: the rest of the
 * response is not sent, the READ fails with a remote access error. */
static void grant_ends_mid_read(bool dereg)
{
	enum { RPKTS = 80 };
	struct env v;
	struct urnic_cqe c;
	uint64_t first_turn = 64;

	env_open(&v, false, FAB_ALL_ACCESS, dereg ? 51 : 52);
	CHECK_EQ(fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 0xa2,
							     .opcode = URNIC_WR_RDMA_READ,
							     .remote_addr = v.rb.mr->iova,
							     .rkey = v.rb.mr->key,
							     .num_sge = 1,
							     .sge = { fab_sge(v.la.mr, 0,
									      RPKTS * 256) } }),
		 0);
	CHECK(fabric_run(v.p.f, responses_sent, &first_turn, 1000));
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_read_resp_sent), 64);
	if (dereg) {
		fab_dereg(v.p.f, 1, v.rb.mr);
		v.rb.mr = NULL;
	} else {
		CHECK_EQ(urnic_mr_reregister(v.rb.mr, URNIC_MR_REREG_ACCESS, &v.p.pd[1], NULL, 0,
					     FAB_ALL_ACCESS),
			 0);
	}
	fab_wait_cqes(v.p.f, &v.p.a->scq, &c, 1);
	fabric_settle(v.p.f);
	CHECK_EQ(c.wr_id, 0xa2);
	CHECK_EQ(c.status, URNIC_WC_REM_ACCESS_ERR);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_read_resp_sent), 64);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_read_key_revoked), 1);
	CHECK_EQ(v.p.b->qp.state, URNIC_QPS_ERR);
	env_close(&v);
}

static void test_read_after_dereg(void)
{
	grant_ends_mid_read(true);
}

static void test_read_after_rereg(void)
{
	grant_ends_mid_read(false);
}

/* A type 2B window bound through b is freed when b is destroyed (IBTA o10-37.2.36: it
 * served b only), so no later QP that carries b's number can use it. */
static void test_type2_window_freed_with_its_qp(void)
{
	struct env v;
	struct urnic_engine *e;
	struct urnic_mr_at at;
	uint32_t qpn;

	window_open(&v, URNIC_KEY_MW2, 31);
	e = fab_engine(v.p.f, 1);
	qpn = v.p.b->qp.qpn;
	CHECK_EQ(urnic_mr_resolve_remote(&e->mrs, &v.p.pd[1], qpn, v.mw->key, v.rb.mr->iova, 8,
					 URNIC_ACCESS_REMOTE_WRITE, &at),
		 URNIC_MR_OK);
	CHECK_EQ(e->mrs.mw2_bound, 1);
	fab_qp_free(v.p.b);
	CHECK_EQ(v.mw->mw_state, URNIC_MW_FREE);
	CHECK_EQ(e->mrs.mw2_bound, 0);
	CHECK_EQ(urnic_mr_resolve_remote(&e->mrs, &v.p.pd[1], qpn, v.mw->key, v.rb.mr->iova, 8,
					 URNIC_ACCESS_REMOTE_WRITE, &at),
		 URNIC_MR_BAD_KEY);
	/* Its region can go now: no window holds it. */
	CHECK_EQ(v.rb.mr->nwindows, 0);
	v.p.b = fab_qp_new(v.p.f, 1, &v.p.pd[1], 64, 64, true);
	env_close(&v);
}

/* QPNs do not come back soon: 20,000 QPs created and destroyed one after the other on
 * one device (each free to take the slot the last one left) all have distinct numbers,
 * and so do QPs created while others stay. */
static void test_qpns_do_not_recur(void)
{
	enum { N = 20000, KEEP = 100 };
	struct fabric *f = fabric_new(1, 41);
	struct urnic_pd pd = { .handle = 1 };
	static uint8_t seen[1 << 24];
	struct fab_qp *keep[KEEP];

	memset(seen, 0, sizeof(seen));
	for (int k = 0; k < KEEP; k++) {
		keep[k] = fab_qp_new(f, 0, &pd, 4, 4, true);
		CHECK(!seen[keep[k]->qp.qpn]);
		seen[keep[k]->qp.qpn] = 1;
	}
	for (int n = 0; n < N; n++) {
		struct fab_qp *q = fab_qp_new(f, 0, &pd, 4, 4, true);

		CHECK(!seen[q->qp.qpn]);
		seen[q->qp.qpn] = 1;
		fab_qp_free(q);
		if (n % 97 == 0) { /* and now and then one of those that stayed */
			fab_qp_free(keep[n % KEEP]);
			keep[n % KEEP] = fab_qp_new(f, 0, &pd, 4, 4, true);
			CHECK(!seen[keep[n % KEEP]->qp.qpn]);
			seen[keep[n % KEEP]->qp.qpn] = 1;
		}
	}
	for (int k = 0; k < KEEP; k++)
		fab_qp_free(keep[k]);
	fabric_free(f);
}

int main(void)
{
	RUN(test_write_with_grant_intact_lands);
	RUN(test_rc_write_after_dereg);
	RUN(test_uc_write_after_dereg);
	RUN(test_write_after_rereg_translation);
	RUN(test_write_after_rereg_same_access);
	RUN(test_write_after_local_invalidate);
	RUN(test_write_after_dealloc_mw);
	RUN(test_write_after_rebind_same_key);
	RUN(test_write_after_modify_to_error);
	RUN(test_send_after_receive_buffer_dereg);
	RUN(test_read_after_dereg);
	RUN(test_read_after_rereg);
	RUN(test_type2_window_freed_with_its_qp);
	RUN(test_qpns_do_not_recur);
	return 0;
}
