/* SPDX-License-Identifier: MIT */
/*
 * test_dcqcn.c - DCQCN in the engine (roce/cc.c, IBTA Annex A17.9), over the fabric's
 * fake clock, which stands still while packets flow: a QP's sends take time only when
 * its rate makes them wait, so the clock measures the pacing exactly.
 *
 * Off (the default): nothing leaves ECN-capable, a CNP is counted and ignored. On: every
 * RC packet leaves ECT(0); a CE mark on one of them draws one CNP (opcode 0x81, DestQP
 * the sender's QP, DSCP 48, not ECN-capable), which cuts the sender's rate by alpha / 2
 * (to 50 Gb/s from the port's 100): the rest of the WRITE then takes at least its time at
 * the line rate and at most its time at the cut rate, and the byte counter brings the
 * rate back to the line. Marks that go on draw at most one CNP per 4 us, and each CNP at
 * most one cut per 4 us, the rate falling with each; paced, nothing is retransmitted.
 */
#include <stdio.h>
#include <string.h>

#include "engine/roce/cc.h"
#include "fabric.h"
#include "wire/byteorder.h"

enum {
	MTU = 4096,
	LINE_BPS_G = 100,   /* the port's rate, Gb/s (URNIC_PORT_RATE_BPS) */
	INTERVAL_NS = 4000, /* MIN_TIME_BETWEEN_CNPS, RATE_REDUCE_MONITOR_PERIOD */
};

struct env {
	struct fab_pair p;
	struct fab_buf la, ra;
};

/* DCQCN on every host, with ConnectX's parameters for the port's rate. */
static void dcqcn_on(struct fabric *f)
{
	for (int h = 0; h < f->nhosts; h++) {
		f->hosts[h].e->cfg.dcqcn = true;
		urnic_dcqcn_defaults(&f->hosts[h].e->cfg.dcqcn_params, LINE_BPS_G * 1000000000ull);
	}
}

static void env_open(struct env *v, bool dcqcn, uint64_t len)
{
	struct fab_conn c = fab_conn_default();

	c.mtu = MTU;
	fab_pair_open(&v->p, &c, 7);
	if (dcqcn)
		dcqcn_on(v->p.f);
	fab_buf_new(v->p.f, &v->la, 0, &v->p.pd[0], len, FAB_ALL_ACCESS);
	fab_buf_new(v->p.f, &v->ra, 1, &v->p.pd[1], len, FAB_ALL_ACCESS);
	fab_fill(v->la.p, len, 11);
}

static void env_close(struct env *v)
{
	fab_buf_free(v->p.f, &v->la);
	fab_buf_free(v->p.f, &v->ra);
	fab_pair_close(&v->p);
}

static void write_all(struct env *v, uint64_t len)
{
	struct urnic_cqe sc;

	CHECK_EQ(fab_post_send(v->p.a, &(struct fab_send_wr){ .wr_id = 1,
							      .opcode = URNIC_WR_RDMA_WRITE,
							      .remote_addr = v->ra.mr->iova,
							      .rkey = v->ra.mr->key,
							      .num_sge = 1,
							      .sge = { fab_sge(v->la.mr, 0,
									       (uint32_t)len) } }),
		 0);
	fab_wait_cqes(v->p.f, &v->p.a->scq, &sc, 1);
	fabric_settle(v->p.f);
	CHECK_EQ(sc.status, URNIC_WC_SUCCESS);
	CHECK(memcmp(v->la.p, v->ra.p, len) == 0);
}

static bool is_write(const struct fab_pktinfo *pi, void *arg)
{
	(void)arg;
	return pi->src == 0 && (urnic_opcode_info(pi->opcode)->flags & URNIC_OPF_WRITE);
}

static bool is_cnp(const struct fab_pktinfo *pi)
{
	return pi->opcode == URNIC_OP_CNP;
}

/* A CNP as A17.9.3 and ConnectX have it: from host 1 to host 0's QP, DSCP 48. */
static void check_cnp(const struct env *v, const struct fab_pktinfo *pi)
{
	CHECK_EQ(pi->src, 1);
	CHECK_EQ(pi->dst, 0);
	CHECK_EQ(pi->dqpn, v->p.a->qp.qpn);
	CHECK_EQ(pi->psn, 0);
	CHECK_EQ(pi->payload_bytes, 0);
	CHECK_EQ(pi->tos, 48 << 2);
}

/*
 * One cut, then paced until the byte counter's increases on host's QP qp (a stage per
 * RPG_BYTE_RESET bytes; the timer's 300 us never came) had the rate back at the line,
 * then unpaced: of the after bytes sent in the ns after the CNP, those took at least
 * their time at the line rate and at most their time at the cut rate (50 Gb/s), within
 * a packet (pkt bytes) of time; the QP ends back at the line rate, no longer limited.
 */
static void check_paced_then_recovered(struct fabric *f, int host, const struct urnic_qp *qp,
				       uint64_t ns, uint64_t after, uint64_t pkt, uint64_t len)
{
	const struct urnic_dcqcn_params *p = &f->hosts[host].e->cfg.dcqcn_params;
	uint64_t limited = fab_ctr(f, host, URNIC_CTR_cc_rate_increases) * p->byte_reset;

	CHECK(ns < p->time_reset_ns);
	CHECK(after > limited && limited > len / 8);
	CHECK((ns + 1) * LINE_BPS_G >= (limited - 2 * pkt) * 8);
	CHECK(ns * (LINE_BPS_G / 2) <= (limited + pkt) * 8);
	CHECK(!qp->cc.rp.limited);
	CHECK_EQ(qp->cc.rp.rate_bps, LINE_BPS_G * 1000000000ull);
}

static void off_marks_nothing_and_ignores_cnps(void)
{
	enum { LEN = 65536 };
	uint8_t cnp[32] = { URNIC_OP_CNP, 0, 0xff, 0xff, 0x40 };
	struct env v;
	struct fab_rule *mark;

	env_open(&v, false, LEN);
	mark = fab_add_rule(
		v.p.f,
		&(struct fab_rule){ .match = FAB_M_PRED, .pred = is_write, .action = FAB_MARK_CE });
	write_all(&v, LEN);
	CHECK_EQ(mark->hits, LEN / MTU);
	for (uint32_t i = 0; i < v.p.f->ntrace; i++) {
		CHECK_EQ(v.p.f->trace[i].tos & URNIC_ECN_MASK, 0); /* not ECN-capable */
		CHECK(v.p.f->trace[i].fate != FAB_FATE_MARKED);
	}
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_rx_ecn_ce), 0);
	/* A CNP from the peer to the QP: taken as any packet, then ignored. */
	urnic_put_be24(cnp + 5, v.p.a->qp.qpn);
	fab_inject(v.p.f, v.p.f->hosts[1].ip, 0, URNIC_ROCE_UDP_PORT, cnp, sizeof(cnp), true);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_rx_cnp_cc_off), 1);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_rx_cnp), 0);
	CHECK(!v.p.a->qp.cc.rp_on);
	/* From another address: refused as any packet to a connected QP is. */
	fab_inject(v.p.f, (const uint8_t[]){ 10, 0, 0, 9 }, 0, URNIC_ROCE_UDP_PORT, cnp,
		   sizeof(cnp), true);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_drop_addr_mismatch), 1);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_rx_cnp_cc_off), 1);
	/* A reserved byte set (A17.9.3): a malformed header, dropped before any QP. */
	cnp[12 + 7] = 1;
	fab_inject(v.p.f, v.p.f->hosts[1].ip, 0, URNIC_ROCE_UDP_PORT, cnp, sizeof(cnp), true);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_drop_bad_header), 1);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_rx_cnp_cc_off), 1);
	env_close(&v);
}

static void one_mark_one_cut_then_recovery(void)
{
	enum { LEN = 4 << 20 };
	struct env v;
	uint64_t t_cnp = 0, t_last = 0, after = 0, cnps = 0, pkt_bytes = 0;

	env_open(&v, true, LEN);
	fab_add_rule(v.p.f, &(struct fab_rule){ .match = FAB_M_PRED,
						.pred = is_write,
						.skip = 4,
						.count = 1,
						.action = FAB_MARK_CE });
	write_all(&v, LEN);
	for (uint32_t i = 0; i < v.p.f->ntrace; i++) {
		const struct fab_pktinfo *pi = &v.p.f->trace[i];

		if (is_cnp(pi)) {
			check_cnp(&v, pi);
			t_cnp = pi->t_ns;
			cnps++;
		} else if (pi->src == 0) {
			CHECK_EQ(pi->tos & URNIC_ECN_MASK, URNIC_ECN_ECT0);
		}
		if (cnps && is_write(pi, NULL)) {
			after += pi->len;
			pkt_bytes = pi->len;
			t_last = pi->t_ns;
		}
	}
	CHECK_EQ(cnps, 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_rx_ecn_ce), 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_tx_cnp), 1);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_rx_cnp), 1);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_cc_rate_cuts), 1);
	CHECK(fab_ctr(v.p.f, 0, URNIC_CTR_cc_paced) > 0);
	CHECK(fab_ctr(v.p.f, 0, URNIC_CTR_cc_rate_increases) > 0);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retransmit_pkts), 0);
	check_paced_then_recovered(v.p.f, 0, &v.p.a->qp, t_last - t_cnp, after, pkt_bytes, LEN);
	env_close(&v);
}

/* Marks every WRITE packet that leaves within ns of the first. */
struct window {
	uint64_t from, ns;
};

static bool write_in_window(const struct fab_pktinfo *pi, void *arg)
{
	struct window *w = arg;

	if (!is_write(pi, NULL))
		return false;
	if (!w->from)
		w->from = pi->t_ns;
	return pi->t_ns - w->from < w->ns;
}

static void marks_that_go_on(void)
{
	enum { LEN = 4 << 20, MAX_CNPS = 64 };
	struct window w = { 0, 40000 };
	uint64_t cnp_t[MAX_CNPS], ncnp = 0;
	struct fab_rule *mark;
	struct env v;

	env_open(&v, true, LEN);
	mark = fab_add_rule(v.p.f, &(struct fab_rule){ .match = FAB_M_PRED,
						       .pred = write_in_window,
						       .arg = &w,
						       .action = FAB_MARK_CE });
	write_all(&v, LEN);
	for (uint32_t i = 0; i < v.p.f->ntrace; i++) {
		const struct fab_pktinfo *pi = &v.p.f->trace[i];

		if (!is_cnp(pi))
			continue;
		check_cnp(&v, pi);
		CHECK(ncnp < MAX_CNPS);
		cnp_t[ncnp++] = pi->t_ns;
	}
	/* 40 us of marks: a CNP every interval at most, so some marks drew none. */
	CHECK(ncnp >= 3 && ncnp <= 40000 / INTERVAL_NS + 1 && ncnp < mark->hits);
	for (uint64_t i = 1; i < ncnp; i++)
		CHECK(cnp_t[i] - cnp_t[i - 1] >= INTERVAL_NS);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_rx_ecn_ce), mark->hits);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_tx_cnp), ncnp);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_rx_cnp), ncnp);
	/* Each CNP came an interval after the last: each one cut. */
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_cc_rate_cuts), ncnp);
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_retransmit_pkts), 0);
	env_close(&v);
}

static bool is_read_response(const struct fab_pktinfo *pi, void *arg)
{
	(void)arg;
	return pi->src == 1 && (urnic_opcode_info(pi->opcode)->flags & URNIC_OPF_READ) &&
	       (urnic_opcode_info(pi->opcode)->flags & URNIC_OPF_RESP);
}

/* A READ's responses are the responder QP's to pace: one marked draws a CNP from the
 * requester to the responder's QP, whose responses then wait for its rate. */
static void read_responses_are_paced(void)
{
	enum { LEN = 4 << 20 };
	struct urnic_cqe sc;
	struct env v;
	uint64_t t_cnp = 0, t_last = 0, after = 0;

	env_open(&v, true, LEN);
	fab_add_rule(v.p.f, &(struct fab_rule){ .match = FAB_M_PRED,
						.pred = is_read_response,
						.skip = 4,
						.count = 1,
						.action = FAB_MARK_CE });
	CHECK_EQ(fab_post_send(v.p.a, &(struct fab_send_wr){ .wr_id = 1,
							     .opcode = URNIC_WR_RDMA_READ,
							     .remote_addr = v.ra.mr->iova,
							     .rkey = v.ra.mr->key,
							     .num_sge = 1,
							     .sge = { fab_sge(v.la.mr, 0, LEN) } }),
		 0);
	fab_wait_cqes(v.p.f, &v.p.a->scq, &sc, 1);
	fabric_settle(v.p.f);
	CHECK_EQ(sc.status, URNIC_WC_SUCCESS);
	CHECK(memcmp(v.la.p, v.ra.p, LEN) == 0);
	for (uint32_t i = 0; i < v.p.f->ntrace; i++) {
		const struct fab_pktinfo *pi = &v.p.f->trace[i];

		if (is_cnp(pi)) {
			/* From the requester (host 0) to the responder's QP. */
			CHECK(pi->src == 0 && pi->dqpn == v.p.b->qp.qpn && pi->tos == 48 << 2);
			t_cnp = pi->t_ns;
		} else if (t_cnp && is_read_response(pi, NULL)) {
			after += pi->len;
			t_last = pi->t_ns;
		}
	}
	CHECK_EQ(fab_ctr(v.p.f, 0, URNIC_CTR_tx_cnp), 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_rx_cnp), 1);
	CHECK_EQ(fab_ctr(v.p.f, 1, URNIC_CTR_cc_rate_cuts), 1);
	CHECK(fab_ctr(v.p.f, 1, URNIC_CTR_cc_paced) > 0);
	/* Paced as the WRITE above, READ responses of MTU + 24 bytes on the wire. */
	check_paced_then_recovered(v.p.f, 1, &v.p.b->qp, t_last - t_cnp, after, MTU + 24, LEN);
	env_close(&v);
}

/*
 * Incast through a bottleneck: hosts 0 and 2 each WRITE LEN bytes to host 1, every NIC
 * at 100 Gb/s, host 1 behind a 10 Gb/s link with a 1 MiB buffer that marks as RED
 * (Kmin 5 KB, Kmax 200 KB, Pmax 1 %: the closed loop of tests/cc/test_dcqcn.c, with the
 * engines in it). Each QP may have 1 MiB in flight (URNIC_MAX_UNACKED_PSNS of 4 KiB), so
 * together they can overfill the buffer: without DCQCN they do, and go back N; with it
 * the queue stays below the buffer, nothing is lost, the link stays busy.
 */
struct incast {
	uint64_t ns, retransmits, cnps, cuts;
	uint64_t done_ns[2];
	struct fab_link link;
};

static void incast(bool dcqcn, struct incast *out)
{
	enum { LEN = 16 << 20 };
	struct fabric *f = fabric_new(3, 5);
	struct urnic_pd pd[3] = { { 1 }, { 1 }, { 1 } };
	struct fab_conn c = fab_conn_default();
	struct fab_qp *tx[2], *rx[2];
	struct fab_buf src[2], dst[2];
	struct urnic_cqe cqe;
	uint64_t t0 = f->now_ns;
	int done = 0;

	c.mtu = MTU;
	for (int i = 0; i < 2; i++) {
		int h = i ? 2 : 0;

		fab_buf_new(f, &src[i], h, &pd[h], LEN, FAB_ALL_ACCESS);
		fab_buf_new(f, &dst[i], 1, &pd[1], LEN, FAB_ALL_ACCESS);
		fab_fill(src[i].p, LEN, (uint32_t)i + 1);
		tx[i] = fab_qp_new(f, h, &pd[h], 16, 16, true);
		rx[i] = fab_qp_new(f, 1, &pd[1], 16, 16, true);
		fab_connect(tx[i], rx[i], &c);
	}
	if (dcqcn)
		dcqcn_on(f);
	fab_bottleneck(f, LINE_BPS_G * 1000000000ull,
		       &(struct fab_link){ .to = 1,
					   .rate_bps = 10000000000ull,
					   .kmin_bytes = 5000,
					   .kmax_bytes = 200000,
					   .pmax_ppm = 10000,
					   .limit_bytes = 4 << 20,
					   .late_from_ns = t0 + 5000000 });
	for (int i = 0; i < 2; i++)
		CHECK_EQ(fab_post_send(tx[i], &(struct fab_send_wr){ .wr_id = (uint64_t)i,
								     .opcode = URNIC_WR_RDMA_WRITE,
								     .remote_addr = dst[i].mr->iova,
								     .rkey = dst[i].mr->key,
								     .num_sge = 1,
								     .sge = { fab_sge(src[i].mr, 0,
										      LEN) } }),
			 0);
	while (done < 2) {
		CHECK(fabric_run(f, NULL, NULL, 1) || true);
		for (int i = 0; i < 2; i++)
			if (!out->done_ns[i] && fab_poll(&tx[i]->scq, &cqe, 1) == 1) {
				CHECK_EQ(cqe.status, URNIC_WC_SUCCESS);
				out->done_ns[i] = f->now_ns - t0;
				done++;
			}
		CHECK(f->now_ns - t0 < 1000000000ull); /* a second of fabric time */
	}
	fabric_settle(f);
	out->ns = out->done_ns[0] > out->done_ns[1] ? out->done_ns[0] : out->done_ns[1];
	out->link = f->link;
	for (int i = 0; i < 2; i++) {
		int h = i ? 2 : 0;

		CHECK(memcmp(src[i].p, dst[i].p, LEN) == 0);
		out->retransmits += fab_ctr(f, h, URNIC_CTR_retransmit_pkts);
		out->cuts += fab_ctr(f, h, URNIC_CTR_cc_rate_cuts);
		fab_buf_free(f, &src[i]);
		fab_buf_free(f, &dst[i]);
		fab_qp_free(tx[i]);
		fab_qp_free(rx[i]);
	}
	out->cnps = fab_ctr(f, 1, URNIC_CTR_tx_cnp);
	fabric_free(f);
	fprintf(stderr,
		"incast, DCQCN %s: %.1f Gb/s of the link's 10 (senders done at %llu and %llu us), "
		"queue up to %llu KB, mean %llu KB (after 5 ms: %llu, up to %llu), %llu marked, "
		"%llu dropped, %llu retransmitted, %llu CNPs, "
		"%llu cuts\n",
		dcqcn ? "on" : "off", 2.0 * LEN * 8 / (double)out->ns,
		(unsigned long long)out->done_ns[0] / 1000,
		(unsigned long long)out->done_ns[1] / 1000,
		(unsigned long long)out->link.max_queue_bytes / 1000,
		(unsigned long long)(out->link.queue_sum / out->link.arrivals / 1000),
		(unsigned long long)(out->link.late_queue_sum / (out->link.late_arrivals + 1) /
				     1000),
		(unsigned long long)out->link.late_max_queue_bytes / 1000,
		(unsigned long long)out->link.marked, (unsigned long long)out->link.dropped,
		(unsigned long long)out->retransmits, (unsigned long long)out->cnps,
		(unsigned long long)out->cuts);
}

static void incast_through_a_bottleneck(void)
{
	struct incast off = { 0 }, on = { 0 };

	incast(false, &off);
	incast(true, &on);
	/* Without: the link busy, its queue what the windows hold (2 x 1 MiB). */
	CHECK(off.ns * 95 <= 2ull * (16 << 20) * 8 * 10);
	CHECK(off.link.late_queue_sum / off.link.late_arrivals > 1500000);
	/* With: nothing lost, the link nearly as busy, the queue shorter, both QPs cut and
	 * done together. */
	CHECK_EQ(on.link.dropped + on.retransmits, 0);
	CHECK(on.ns * 90 <= 2ull * (16 << 20) * 8 * 10);
	CHECK(on.link.late_queue_sum * 100 / on.link.late_arrivals <=
	      off.link.late_queue_sum * 80 / off.link.late_arrivals);
	CHECK(on.cnps > 0 && on.cuts >= 2);
	CHECK(on.done_ns[0] * 10 <= on.done_ns[1] * 11 && on.done_ns[1] * 10 <= on.done_ns[0] * 11);
}

int main(void)
{
	RUN(off_marks_nothing_and_ignores_cnps);
	RUN(one_mark_one_cut_then_recovery);
	RUN(marks_that_go_on);
	RUN(read_responses_are_paced);
	RUN(incast_through_a_bottleneck);
	return 0;
}
