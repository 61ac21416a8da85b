/* SPDX-License-Identifier: MIT */
/*
 * test_iwarp_hostile.c - FPDUs built by hand and fed to a connected iWARP QP (host 1)
 * as its peer's stream, in random splits:
 *
 *   test (hostile peer) --- bytes ---> host 1: iWARP engine, RC QP, target region
 *                                      [canary | registered target | canary]
 *
 * Each refusal (bad STag, STag without the right, TO out of range, wrong MSN, Send with
 * no receive posted, message longer than the WQE, Read Request beyond IRD or to an STag
 * without read, a CRC error) queues exactly the Terminate RFC 5040 7 / RFC 5041 7 /
 * RFC 5044 8 prescribe, laid out as siw lays it out (checked byte for byte), moves its
 * counter, completes what siw completes, and leaves every byte of the region unchanged.
 * A forged Terminate puts the QP in error with no Terminate in answer. The async event
 * each side raises is siw's: none for a Terminate received or a Write to an STag that
 * names nothing, an access error for a Write the region refuses, a request error for a
 * Read Request that cannot be answered.
 */
#include <string.h>

#include "iw_link.h"
#include "wire/byteorder.h"
#include "wire/fpdu.h"

#define SIDE 4096 /* canary bytes each side of the target */
#define TLEN 8192

static const struct urnic_iw_conn_params conn = { .crc = false, .mss = 1460, .ird = 1, .ord = 8 };

struct env {
	struct iwl l;
	uint8_t *mem; /* SIDE | TLEN | SIDE */
	uint8_t *copy;
	struct urnic_mr *mr;
	struct fab_buf rbuf; /* receive buffers, 64 bytes each, canaried by the rest */
	uint8_t rcopy[4096];
	bool crc;
};

/* The async events each host raised (engine hooks.qp_error), by kind. */
static struct fabric *event_fab;
static unsigned int events[2][URNIC_QP_EV_NONE];

static void on_qp_error(struct urnic_engine *e, struct urnic_qp *qp, enum urnic_qp_event ev)
{
	(void)qp;
	CHECK(ev < URNIC_QP_EV_NONE);
	for (int i = 0; i < 2; i++)
		if (event_fab->hosts[i].e == e)
			events[i][ev]++;
}

/* Host side raised exactly ev (URNIC_QP_EV_NONE: nothing). */
static void expect_event(int side, enum urnic_qp_event ev)
{
	for (int k = 0; k < URNIC_QP_EV_NONE; k++)
		CHECK_EQ(events[side][k], k == (int)ev ? 1u : 0u);
}

static void env_open(struct env *v, uint64_t seed, uint32_t access, bool crc)
{
	struct urnic_iw_conn_params p = conn;

	p.crc = crc;
	v->crc = crc;
	iwl_open(&v->l, seed, &p);
	event_fab = v->l.f;
	memset(events, 0, sizeof(events));
	for (int i = 0; i < 2; i++)
		v->l.f->hosts[i].e->hooks.qp_error = on_qp_error;
	v->l.hold[1] = true; /* host 1's Terminate stays to be read */
	v->mem = malloc(2 * SIDE + TLEN);
	v->copy = malloc(2 * SIDE + TLEN);
	CHECK(v->mem && v->copy);
	fab_fill(v->mem, 2 * SIDE + TLEN, (uint32_t)seed);
	memcpy(v->copy, v->mem, 2 * SIDE + TLEN);
	v->mr = fab_reg(v->l.f, 1, &v->l.pd[1], v->mem + SIDE, TLEN, access);
	fab_buf_new(v->l.f, &v->rbuf, 1, &v->l.pd[1], 4096, FAB_ALL_ACCESS);
	fab_fill(v->rbuf.p, 4096, 3);
	memcpy(v->rcopy, v->rbuf.p, 4096);
}

static void env_close(struct env *v)
{
	CHECK(memcmp(v->mem, v->copy, 2 * SIDE + TLEN) == 0);
	fab_dereg(v->l.f, 1, v->mr);
	fab_buf_free(v->l.f, &v->rbuf);
	free(v->mem);
	free(v->copy);
	iwl_close(&v->l);
}

static void post_recv(struct fab_qp *q, uint64_t wr_id, struct urnic_sge sge)
{
	CHECK_EQ(fab_post_recv(q, wr_id, &sge, 1), 0);
}

/* Feeds one FPDU to host 1; it must take up to where the stream failed. */
static void inject(struct env *v, const struct urnic_ddp_hdr *h, const void *p, size_t n)
{
	uint8_t f[2048];
	size_t len = iwl_fpdu(f, sizeof(f), h, p, n, v->crc);

	iwl_inject(&v->l, 1, f, len);
}

/* Host 1's queued bytes must be exactly the Terminate with this body (RFC 5040 4.8). */
static void expect_term(struct env *v, const uint8_t *body, size_t n, bool crc)
{
	struct urnic_ddp_hdr t = {
		.last = true, .opcode = URNIC_RDMAP_TERMINATE, .qn = 2, .msn = 1
	};
	uint8_t want[256], got[256];
	size_t wn = iwl_fpdu(want, sizeof(want), &t, body, n, crc);

	CHECK_EQ(iwl_peek(&v->l, 1, got, sizeof(got)), wn);
	CHECK(memcmp(want, got, wn) == 0);
	CHECK_EQ(v->l.q[1]->qp.state, URNIC_QPS_ERR);
	CHECK(urnic_iw_close_due(&v->l.q[1]->qp));
	/* The Terminate reaches host 0, which enters error too. */
	v->l.hold[1] = false;
	iwl_settle(&v->l);
	CHECK_EQ(v->l.q[0]->qp.state, URNIC_QPS_ERR);
	expect_event(0, URNIC_QP_EV_NONE); /* siw_proc_terminate */
	CHECK_EQ(iwl_ctr(&v->l, 0, URNIC_CTR_iw_term_rcvd), 1);
	CHECK_EQ(iwl_ctr(&v->l, 0, URNIC_CTR_iw_term_sent), 0);
}

/* The Terminate body: layer/etype, code, M D R, DDP Segment Length, copied header. */
static size_t body(uint8_t *b, uint8_t le, uint8_t code, uint16_t mdr, uint16_t seg_len,
		   const struct urnic_ddp_hdr *h)
{
	size_t n = 4;

	b[0] = le;
	b[1] = code;
	urnic_put_be16(b + 2, mdr);
	if (h) {
		urnic_put_be16(b + 4, seg_len);
		n = 6 + (size_t)urnic_ddp_encode(h, b + 6, 64);
		if (!(mdr & 0x2000) && h->opcode == URNIC_RDMAP_READ_REQ)
			n -= URNIC_RDMAP_READ_REQ_BYTES; /* no R: the DDP header alone */
	}
	return n;
}

static void write_refused(uint32_t access, uint32_t stag_xor, uint64_t to_off, uint32_t len,
			  uint8_t code, enum urnic_counter c, enum urnic_qp_event ev)
{
	struct env v;
	uint8_t data[1024], b[64];
	struct urnic_ddp_hdr h;

	env_open(&v, 100 + code, access, false);
	memset(data, 0xee, sizeof(data));
	h = (struct urnic_ddp_hdr){ .tagged = true,
				    .last = true,
				    .opcode = URNIC_RDMAP_WRITE,
				    .stag = v.mr->key ^ stag_xor,
				    .to = v.mr->iova + to_off };
	inject(&v, &h, data, len);
	CHECK_EQ(iwl_ctr(&v.l, 1, c), 1);
	CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_term_sent), 1);
	/* RFC 5041 7.1 (tagged buffer, etype 1), siw: M and D, the DDP header. */
	expect_term(&v, b, body(b, 0x11, code, 0xc000, (uint16_t)len, &h), false);
	expect_event(1, ev);
	env_close(&v);
}

static void test_write_bad_stag(void)
{
	/* siw_proc_write: an STag that names no region raises nothing. */
	write_refused(FAB_ALL_ACCESS, 0x00010000, 0, 100, 0x00, URNIC_CTR_iw_refused_stag,
		      URNIC_QP_EV_NONE);
}

static void test_write_without_remote_write(void)
{
	write_refused(URNIC_ACCESS_LOCAL_WRITE | URNIC_ACCESS_REMOTE_READ, 0, 0, 100, 0x00,
		      URNIC_CTR_iw_refused_rights, URNIC_QP_EV_ACCESS_ERR);
}

static void test_write_out_of_range(void)
{
	write_refused(FAB_ALL_ACCESS, 0, TLEN - 50, 100, 0x01, URNIC_CTR_iw_refused_bounds,
		      URNIC_QP_EV_ACCESS_ERR);
}

/* A Send segment to host 1 with MSN msn, MO mo, n bytes. */
static void send_seg(struct env *v, uint32_t msn, uint32_t mo, size_t n, struct urnic_ddp_hdr *h)
{
	static uint8_t data[1024];

	*h = (struct urnic_ddp_hdr){
		.last = true, .opcode = URNIC_RDMAP_SEND, .qn = 0, .msn = msn, .mo = mo
	};
	inject(v, h, data, n);
}

static void send_refused(bool post, uint32_t msn, uint32_t mo, size_t n, uint8_t code,
			 enum urnic_counter c, uint8_t status)
{
	struct env v;
	struct urnic_ddp_hdr h;
	struct urnic_cqe cqe[2];
	uint8_t b[64];

	env_open(&v, 200 + code, FAB_ALL_ACCESS, false);
	if (post)
		post_recv(v.l.q[1], 0x77, fab_sge(v.rbuf.mr, 64, 64));
	send_seg(&v, msn, mo, n, &h);
	CHECK_EQ(iwl_ctr(&v.l, 1, c), 1);
	/* RFC 5041 7.2 (untagged buffer, etype 2): M and D, the DDP header. */
	expect_term(&v, b, body(b, 0x12, code, 0xc000, (uint16_t)n, &h), false);
	CHECK_EQ(fab_poll(&v.l.q[1]->rcq, cqe, 2), post ? 1 : 0);
	if (post)
		CHECK_CQE(cqe[0], 0x77, status, URNIC_WC_RECV, 0);
	CHECK(memcmp(v.rbuf.p, v.rcopy, 4096) == 0); /* nothing placed */
	env_close(&v);
}

static void test_send_wrong_msn(void)
{
	send_refused(true, 5, 0, 10, 0x03, URNIC_CTR_iw_refused_msn, URNIC_WC_GENERAL_ERR);
}

static void test_send_wrong_mo(void)
{
	send_refused(true, 1, 8, 10, 0x04, URNIC_CTR_iw_refused_mo, URNIC_WC_GENERAL_ERR);
}

static void test_send_with_no_receive(void)
{
	send_refused(false, 1, 0, 10, 0x02, URNIC_CTR_iw_refused_no_rwqe, 0);
}

static void test_send_longer_than_wqe(void)
{
	send_refused(true, 1, 0, 65, 0x05, URNIC_CTR_iw_refused_too_long, URNIC_WC_LOC_LEN_ERR);
}

static struct urnic_ddp_hdr rreq(uint32_t msn, uint32_t key, uint64_t to, uint32_t size)
{
	return (struct urnic_ddp_hdr){
		.last = true,
		.opcode = URNIC_RDMAP_READ_REQ,
		.qn = 1,
		.msn = msn,
		.rreq = { .sink_stag = 0x1234,
			  .sink_to = 0x5000,
			  .size = size,
			  .src_stag = key,
			  .src_to = to },
	};
}

static void test_read_request_beyond_ird(void)
{
	struct env v;
	struct urnic_ddp_hdr h1, h2;
	uint8_t b[64];

	env_open(&v, 300, FAB_ALL_ACCESS, false);
	h1 = rreq(1, v.mr->key, v.mr->iova, 16);
	h2 = rreq(2, v.mr->key, v.mr->iova, 16);
	inject(&v, &h1, NULL, 0);
	inject(&v, &h2, NULL, 0); /* IRD 1: the first is not answered yet */
	CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_refused_ird), 1);
	/* siw_init_rresp: RDMAP remote operation (etype 2), catastrophic to the stream
	 * (code 7), M and D, the untagged DDP header without the Read Request's. */
	expect_term(&v, b, body(b, 0x02, 0x07, 0xc000, 0, &h2), false);
	env_close(&v);
}

static void test_read_request_without_remote_read(void)
{
	struct env v;
	struct urnic_ddp_hdr h;
	uint8_t b[80];

	env_open(&v, 301, URNIC_ACCESS_LOCAL_WRITE | URNIC_ACCESS_REMOTE_WRITE, false);
	h = rreq(1, v.mr->key, v.mr->iova, 16);
	inject(&v, &h, NULL, 0);
	CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_refused_read_rights), 1);
	/* RFC 5040 7 remote protection (etype 1) access rights (2): M, D, R and the whole
	 * Read Request header, as siw copies it. */
	expect_term(&v, b, body(b, 0x01, 0x02, 0xe000, 0, &h), false);
	expect_event(1, URNIC_QP_EV_REQ_ERR);
	env_close(&v);
}

static void test_read_request_bad_stag_and_bounds(void)
{
	for (int k = 0; k < 2; k++) {
		struct env v;
		struct urnic_ddp_hdr h;
		uint8_t b[80];

		env_open(&v, 302 + (uint64_t)k, FAB_ALL_ACCESS, false);
		h = rreq(1, k ? v.mr->key : v.mr->key ^ 0x100, v.mr->iova + TLEN - 8, 16);
		inject(&v, &h, NULL, 0);
		CHECK_EQ(iwl_ctr(&v.l, 1,
				 k ? URNIC_CTR_iw_refused_read_bounds
				   : URNIC_CTR_iw_refused_read_stag),
			 1);
		expect_term(&v, b, body(b, 0x01, k ? 0x01 : 0x00, 0xe000, 0, &h), false);
		expect_event(1, URNIC_QP_EV_REQ_ERR);
		env_close(&v);
	}
}

static void test_crc_error_terminates_llp(void)
{
	struct env v;
	uint8_t f[256], b[8];
	struct urnic_ddp_hdr h = { .last = true, .opcode = URNIC_RDMAP_SEND, .qn = 0, .msn = 1 };
	size_t n;

	env_open(&v, 400, FAB_ALL_ACCESS, true);
	post_recv(v.l.q[1], 0x77, fab_sge(v.rbuf.mr, 64, 64));
	n = iwl_fpdu(f, sizeof(f), &h, "0123456789", 10, true);
	f[n - 1] ^= 1;
	iwl_inject(&v.l, 1, f, n);
	CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_refused_framing), 1);
	/* RFC 5044 8: LLP (layer 2), MPA CRC error (code 2), no header. */
	expect_term(&v, b, body(b, 0x20, 0x02, 0, 0, NULL), true);
	env_close(&v);
}

static void test_forged_terminate_errors_without_answer(void)
{
	struct env v;
	struct urnic_cqe c[2];
	uint8_t b[8];
	struct urnic_ddp_hdr h = {
		.last = true, .opcode = URNIC_RDMAP_TERMINATE, .qn = 2, .msn = 1
	};

	env_open(&v, 500, FAB_ALL_ACCESS, false);
	post_recv(v.l.q[1], 0x77, fab_sge(v.rbuf.mr, 64, 64));
	inject(&v, &h, b, body(b, 0x00, 0x00, 0, 0, NULL));
	CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_term_rcvd), 1);
	CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_term_rcvd_bogus), 0);
	CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_term_sent), 0);
	CHECK_EQ(v.l.q[1]->qp.state, URNIC_QPS_ERR);
	CHECK(!urnic_iw_tx_pending(&v.l.q[1]->qp) && urnic_iw_close_due(&v.l.q[1]->qp));
	iwl_settle(&v.l);
	CHECK_EQ(fab_poll(&v.l.q[1]->rcq, c, 2), 1);
	CHECK_CQE(c[0], 0x77, URNIC_WC_WR_FLUSH_ERR, URNIC_WC_RECV, 0);
	/* Bytes after it are not taken. */
	CHECK_EQ(urnic_iw_rx(v.l.f->hosts[1].e, &v.l.q[1]->qp, b, 4, v.l.f->now_ns), 0);
	env_close(&v);
}

/* Linux siw's Terminate for a Read Request's invalid source STag, as siw 6.1 sent it in
 * the lab: control 10 00 07 00 (its bitfields on a little-endian host: layer and type
 * nibbles swapped, M, D, R in the low bits), then the DDP Segment Length and the Read
 * Request. Read in that order, it is no bogus Terminate; the QP enters error, silently. */
static void test_terminate_in_siw_order_is_understood(void)
{
	struct env v;
	struct urnic_ddp_hdr h = {
		.last = true, .opcode = URNIC_RDMAP_TERMINATE, .qn = 2, .msn = 1
	};
	struct urnic_ddp_hdr rr = rreq(1, 0x789e6900, 0x561cae006d50, 64);
	uint8_t b[80];
	size_t n;

	env_open(&v, 501, FAB_ALL_ACCESS, false);
	n = body(b, 0x01, 0x00, 0xe000, 0, &rr);
	b[0] = 0x10;
	b[2] = 0x07;
	inject(&v, &h, b, n);
	CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_term_rcvd), 1);
	CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_term_rcvd_siw_order), 1);
	CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_term_rcvd_bogus), 0);
	CHECK_EQ(v.l.q[1]->qp.state, URNIC_QPS_ERR);
	expect_event(1, URNIC_QP_EV_NONE);
	/* Reserved bits beyond siw's three are bogus in either order. */
	iwl_settle(&v.l);
	env_close(&v);
	env_open(&v, 502, FAB_ALL_ACCESS, false);
	b[2] = 0x0f;
	inject(&v, &h, b, n);
	CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_term_rcvd_siw_order), 0);
	CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_term_rcvd_bogus), 1);
	iwl_settle(&v.l);
	env_close(&v);
}

static void test_send_with_invalidate_of_a_region_key(void)
{
	struct env v;
	struct urnic_ddp_hdr h;
	struct urnic_cqe c;
	uint8_t b[64];

	env_open(&v, 600, FAB_ALL_ACCESS, false);
	post_recv(v.l.q[1], 0x77, fab_sge(v.rbuf.mr, 64, 64));
	h = (struct urnic_ddp_hdr){ .last = true,
				    .opcode = URNIC_RDMAP_SEND_INV,
				    .inv_stag = v.mr->key,
				    .qn = 0,
				    .msn = 1 };
	inject(&v, &h, "abcd", 4);
	CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_refused_invalidate), 1);
	CHECK_EQ(fab_poll(&v.l.q[1]->rcq, &c, 1), 1);
	CHECK_CQE(c, 0x77, URNIC_WC_REM_INV_REQ_ERR, URNIC_WC_RECV, 4);
	/* RFC 5040 7 remote operation (etype 2), cannot invalidate (9): M, D, DDP header. */
	expect_term(&v, b, body(b, 0x02, 0x09, 0xc000, 4, &h), false);
	env_close(&v);
}

static void test_read_response_without_read(void)
{
	struct env v;
	struct urnic_ddp_hdr h = { .tagged = true,
				   .last = true,
				   .opcode = URNIC_RDMAP_READ_RESP,
				   .stag = 0x1234,
				   .to = 0 };
	uint8_t b[8];

	env_open(&v, 601, FAB_ALL_ACCESS, false);
	inject(&v, &h, "xy", 2);
	CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_refused_rresp), 1);
	/* siw_proc_rresp "ORQ empty": DDP local catastrophic, no header. */
	expect_term(&v, b, body(b, 0x10, 0x00, 0, 0, NULL), false);
	env_close(&v);
}

static void test_write_grant_changed_inside_message(void)
{
	struct env v;
	struct urnic_ddp_hdr h1, h2;
	uint8_t data[512], b[64];

	env_open(&v, 602, FAB_ALL_ACCESS, false);
	memset(data, 0x5a, sizeof(data));
	h1 = (struct urnic_ddp_hdr){
		.tagged = true, .opcode = URNIC_RDMAP_WRITE, .stag = v.mr->key, .to = v.mr->iova
	};
	h2 = h1;
	h2.last = true;
	h2.to += 512;
	inject(&v, &h1, data, 512);
	CHECK(memcmp(v.mem + SIDE, data, 512) == 0);
	memcpy(v.copy + SIDE, data, 512); /* placed before the grant changed */
	/* Reregistered in place: same key, another grant (mr.h gen). */
	CHECK_EQ(urnic_mr_reregister(v.mr, URNIC_MR_REREG_ACCESS, NULL, NULL, 0, FAB_ALL_ACCESS),
		 0);
	inject(&v, &h2, data, 512);
	CHECK_EQ(iwl_ctr(&v.l, 1, URNIC_CTR_iw_write_key_revoked), 1);
	expect_term(&v, b, body(b, 0x11, 0x00, 0xc000, 512, &h2), false);
	env_close(&v);
}

int main(void)
{
	RUN(test_write_bad_stag);
	RUN(test_write_without_remote_write);
	RUN(test_write_out_of_range);
	RUN(test_send_wrong_msn);
	RUN(test_send_wrong_mo);
	RUN(test_send_with_no_receive);
	RUN(test_send_longer_than_wqe);
	RUN(test_read_request_beyond_ird);
	RUN(test_read_request_without_remote_read);
	RUN(test_read_request_bad_stag_and_bounds);
	RUN(test_crc_error_terminates_llp);
	RUN(test_forged_terminate_errors_without_answer);
	RUN(test_terminate_in_siw_order_is_understood);
	RUN(test_send_with_invalidate_of_a_region_key);
	RUN(test_read_response_without_read);
	RUN(test_write_grant_changed_inside_message);
	return 0;
}
