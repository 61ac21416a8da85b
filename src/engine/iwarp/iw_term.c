/* SPDX-License-Identifier: MIT */
/*
 * iw_term.c - the Terminate message (RFC 5040 4.8, 5.4.2): sent on a peer's error with
 * the layer, error type and code of RFC 5040 7, RFC 5041 7 or RFC 5044 8 and, where siw
 * sends them (siw_send_terminate), the failed segment's DDP Segment Length and headers;
 * received, it puts the QP in error (RFC 5040 6.3: no Terminate answers a Terminate).
 * In both cases the work still posted completes as siw completes it: the message that
 * failed here with its status, the rest with FLUSH_ERR; and the QP raises the async
 * event siw raises (none for a Terminate received).
 */
#include <string.h>

#include "engine/iwarp/iw.h"
#include "engine/roce/rc.h"

/* The copied header's first two bytes: DDP control (T, RFC 5041 4.2) and RDMAP control
 * (opcode, RFC 5040 4.2). */
enum {
	COPIED_DDP_T = 0x80,
	COPIED_RDMAP_OPCODE = 0x0f,
};

/* siw_send_terminate: no headers for catastrophic errors, for a version or opcode it
 * could not parse, or for the LLP; RDMAP protection errors add the RDMAP header (R). */
static bool copies_header(struct urnic_iw_term_code c)
{
	switch (c.layer) {
	case URNIC_IW_LAYER_RDMAP:
		return c.etype == 1 || (c.etype == 2 && c.code != 0x05 && c.code != 0x06);
	case URNIC_IW_LAYER_DDP:
		return c.etype != 0 && !(c.etype == 1 && c.code == 0x04) &&
		       !(c.etype == 2 && c.code == 0x06);
	default:
		return false;
	}
}

static int fill_body(struct urnic_engine *e, struct urnic_qp *qp, uint8_t *dst, uint32_t off,
		     uint32_t len, const void *arg)
{
	(void)e;
	(void)qp;
	memcpy(dst, (const uint8_t *)arg + off, len);
	return 0;
}

/* hdr: the failed segment's headers as received (NULL: none could be decoded). */
static void queue_term(struct urnic_engine *e, struct urnic_qp *qp, enum urnic_iw_term t,
		       const uint8_t *hdr, uint16_t seg_len)
{
	struct urnic_iw_qp *iw = qp->iw;
	struct urnic_iw_term_code c = urnic_iw_term_code(t);
	struct urnic_rdmap_term term = { .layer = c.layer, .etype = c.etype, .code = c.code };
	struct urnic_ddp_hdr h = {
		.last = true,
		.opcode = URNIC_RDMAP_TERMINATE,
		.qn = URNIC_DDP_QN_TERMINATE,
		.msn = iw->tx_msn[URNIC_DDP_QN_TERMINATE],
	};
	uint8_t body[URNIC_IW_TERM_BODY_MAX];
	ssize_t n;

	if (hdr && copies_header(c)) {
		bool tagged = hdr[0] & COPIED_DDP_T;

		term.m = term.d = true;
		term.r = c.layer == URNIC_IW_LAYER_RDMAP && c.etype == 1;
		term.seg_len = seg_len;
		term.copied = hdr;
		term.copied_bytes = tagged ? URNIC_DDP_TAGGED_BYTES : URNIC_DDP_UNTAGGED_BYTES;
		if (term.r && !tagged && (hdr[1] & COPIED_RDMAP_OPCODE) == URNIC_RDMAP_READ_REQ)
			term.copied_bytes += URNIC_RDMAP_READ_REQ_BYTES;
	}
	n = urnic_rdmap_term_encode(&term, body, sizeof(body));
	if (n < 0 || urnic_iw_frame(e, qp, &h, (uint32_t)n, fill_body, 0, body) <= 0)
		return;
	iw->tx_msn[URNIC_DDP_QN_TERMINATE]++;
	iw->term_sent = true;
	urnic_count(e, URNIC_CTR_iw_term_sent);
}

/* The send WQE or receive WQE the failed segment belonged to completes with status. */
static void fail_wqe(struct urnic_qp *qp, struct urnic_engine *e, uint8_t status)
{
	struct urnic_iw_qp *iw = qp->iw;
	bool decoded = iw->rx_stream.state != URNIC_FPDU_RX_DEAD;
	uint8_t op = iw->rx_stream.hdr.opcode;
	bool rresp = decoded ? op == URNIC_RDMAP_READ_RESP : iw->rx.seg == URNIC_IW_SEG_RRESP;

	if (!status)
		return;
	if (rresp && iw->orq_count) {
		struct urnic_send_wqe *w = rc_swqe(qp, iw->orq[iw->orq_head]);

		w->done = true;
		w->status = status;
	} else if (!rresp) {
		urnic_iw_fail_rwqe(e, qp, status);
	}
}

void urnic_iw_fail(struct urnic_engine *e, struct urnic_qp *qp, enum urnic_iw_term t,
		   enum urnic_counter c, uint8_t status)
{
	urnic_iw_fail_event(e, qp, t, c, status, URNIC_QP_EV_FATAL);
}

void urnic_iw_fail_event(struct urnic_engine *e, struct urnic_qp *qp, enum urnic_iw_term t,
			 enum urnic_counter c, uint8_t status, enum urnic_qp_event ev)
{
	struct urnic_iw_qp *iw = qp->iw;
	bool decoded = iw->rx_stream.state != URNIC_FPDU_RX_DEAD;

	urnic_count(e, c);
	if (iw->dead)
		return;
	iw->dead = true;
	fail_wqe(qp, e, status);
	queue_term(e, qp, t, decoded ? iw->rx_stream.hdr_buf : NULL,
		   (uint16_t)iw->rx_stream.payload_len);
	if (qp->state != URNIC_QPS_ERR)
		urnic_qp_to_error_event(e, qp, ev);
}

void urnic_iw_fail_rreq(struct urnic_engine *e, struct urnic_qp *qp,
			const struct urnic_iw_rresp *rr, enum urnic_iw_term t, enum urnic_counter c)
{
	struct urnic_iw_qp *iw = qp->iw;

	urnic_count(e, c);
	if (iw->dead)
		return;
	iw->dead = true;
	/* siw (in_tx): the request's own header, its DDP Segment Length 0; a Read Response
	 * that cannot be made raises IBV_EVENT_QP_REQ_ERR (siw_qp_sq_process). */
	queue_term(e, qp, t, rr->hdr, 0);
	if (qp->state != URNIC_QPS_ERR)
		urnic_qp_to_error_event(e, qp, URNIC_QP_EV_REQ_ERR);
}

/* Linux siw writes the Terminate control through bitfields of a __be32 (iwarp.h): on a
 * little-endian host the layer lands in the low nibble of the first byte, the error type
 * in the high one, and M, D, R in the low three bits of the third, where RFC 5040 4.8
 * puts the layer high and the bits high. Seen from siw 6.1 in the lab: 10 00 07 00 for
 * RDMAP, remote protection, invalid STag with M, D and R. A control that the RFC refuses
 * and that reads in that order is put in the RFC's and decoded again. */
static bool decode_siw_order(struct urnic_rdmap_term *t, const uint8_t *b, size_t len)
{
	uint8_t rfc[URNIC_IW_TERM_BODY_MAX];

	if (len < 4 || len > sizeof(rfc) || (b[2] & 0xf8) || b[3])
		return false;
	memcpy(rfc, b, len);
	rfc[0] = (uint8_t)((b[0] & 0x0f) << 4 | b[0] >> 4);
	rfc[2] = (uint8_t)((b[2] & 1 ? 0x80 : 0) | (b[2] & 2 ? 0x40 : 0) | (b[2] & 4 ? 0x20 : 0));
	return urnic_rdmap_term_decode(t, rfc, len) == URNIC_IW_R_OK;
}

void urnic_iw_rx_term_end(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_iw_qp *iw = qp->iw;
	const struct urnic_ddp_hdr *h = &iw->rx_stream.hdr;
	struct urnic_rdmap_term t;
	size_t len = iw->rx.term_len < sizeof(iw->rx.term) ? iw->rx.term_len : sizeof(iw->rx.term);
	bool bogus;

	urnic_count(e, URNIC_CTR_iw_term_rcvd);
	/* siw_proc_terminate: QN 2, the expected MSN, MO 0; a bogus one resets all the same. */
	bogus = h->msn != iw->rx.msn[URNIC_DDP_QN_TERMINATE] || h->mo != 0 ||
		iw->rx.term_len > sizeof(iw->rx.term);
	if (!bogus && urnic_rdmap_term_decode(&t, iw->rx.term, len) != URNIC_IW_R_OK) {
		bogus = !decode_siw_order(&t, iw->rx.term, len);
		if (!bogus)
			urnic_count(e, URNIC_CTR_iw_term_rcvd_siw_order);
	}
	if (bogus)
		urnic_count(e, URNIC_CTR_iw_term_rcvd_bogus);
	iw->rx.msn[URNIC_DDP_QN_TERMINATE]++;
	iw->dead = true;
	/* siw_proc_terminate raises no event: the QP's state and DISCONNECTED tell. */
	if (qp->state != URNIC_QPS_ERR)
		urnic_qp_to_error_event(e, qp, URNIC_QP_EV_NONE);
}
