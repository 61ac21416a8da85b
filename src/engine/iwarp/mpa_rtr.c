/* SPDX-License-Identifier: MIT */
/*
 * mpa_rtr.c - the RTR and LLP Terminate FPDUs of MPA setup (mpa_rtr.h). The responder
 * gathers at most URNIC_MPA_RTR_FPDU_MAX bytes: an FPDU announcing more cannot be an RTR
 * and is refused from its length field, before its body arrives.
 */
#include <errno.h>
#include <string.h>

#include "engine/iwarp/mpa_rtr.h"
#include "wire/fpdu.h"

_Static_assert(URNIC_MPA_RTR_FPDU_MAX == URNIC_FPDU_LEN_BYTES + URNIC_DDP_UNTAGGED_BYTES +
						 URNIC_RDMAP_READ_REQ_BYTES + URNIC_FPDU_CRC_BYTES,
	       "a Read Request RTR is the largest");

void urnic_mpa_rtr_hdr(uint8_t rtr, struct urnic_ddp_hdr *h)
{
	memset(h, 0, sizeof(*h));
	h->last = true;
	switch (rtr) {
	case URNIC_MPA_RTR_WRITE:
		h->tagged = true;
		h->opcode = URNIC_RDMAP_WRITE;
		h->stag = URNIC_MPA_RTR_STAG;
		break;
	case URNIC_MPA_RTR_READ:
		/* RFC 5041 5.3: each untagged queue's first MSN is 1. */
		h->opcode = URNIC_RDMAP_READ_REQ;
		h->qn = URNIC_DDP_QN_READ_REQ;
		h->msn = 1;
		h->rreq.src_stag = URNIC_MPA_RTR_STAG;
		break;
	default:
		h->opcode = URNIC_RDMAP_SEND;
		h->qn = URNIC_DDP_QN_SEND;
		h->msn = 1;
		break;
	}
}

bool urnic_mpa_rtr_is(uint8_t rtr, const struct urnic_ddp_hdr *h, size_t payload)
{
	if (payload != 0 || !h->last)
		return false;
	switch (rtr) {
	case URNIC_MPA_RTR_WRITE:
		return h->opcode == URNIC_RDMAP_WRITE;
	case URNIC_MPA_RTR_READ:
		return h->opcode == URNIC_RDMAP_READ_REQ && h->rreq.size == 0 && h->msn == 1;
	case URNIC_MPA_RTR_SEND:
		return h->opcode == URNIC_RDMAP_SEND && h->msn == 1 && h->mo == 0;
	default:
		return false;
	}
}

static ssize_t frame(const struct urnic_ddp_hdr *h, const uint8_t *body, size_t body_len, bool crc,
		     uint8_t *buf, size_t cap)
{
	uint8_t ulpdu[URNIC_DDP_UNTAGGED_BYTES + URNIC_RDMAP_READ_REQ_BYTES + 64];
	ssize_t n = urnic_ddp_encode(h, ulpdu, sizeof(ulpdu));

	if (n < 0)
		return n;
	if (body_len > sizeof(ulpdu) - (size_t)n)
		return -ENOBUFS;
	if (body_len) /* a zero-length RTR has no body, and body may be NULL */
		memcpy(ulpdu + n, body, body_len);
	return urnic_fpdu_encode(buf, cap, ulpdu, (size_t)n + body_len, crc ? URNIC_FPDU_CRC : 0);
}

ssize_t urnic_mpa_rtr_fpdu(uint8_t rtr, bool crc, uint8_t *buf, size_t cap)
{
	struct urnic_ddp_hdr h;

	if (rtr == URNIC_MPA_RTR_NONE || rtr > URNIC_MPA_RTR_SEND)
		return -EINVAL;
	urnic_mpa_rtr_hdr(rtr, &h);
	return frame(&h, NULL, 0, crc, buf, cap);
}

ssize_t urnic_mpa_term_fpdu(enum urnic_iw_term t, bool crc, uint8_t *buf, size_t cap)
{
	struct urnic_iw_term_code tc = urnic_iw_term_code(t);
	struct urnic_rdmap_term term = { .layer = tc.layer, .etype = tc.etype, .code = tc.code };
	struct urnic_ddp_hdr h = { .last = true,
				   .opcode = URNIC_RDMAP_TERMINATE,
				   .qn = URNIC_DDP_QN_TERMINATE,
				   .msn = 1 };
	uint8_t body[URNIC_RDMAP_TERM_HDR_BYTES];
	ssize_t n = urnic_rdmap_term_encode(&term, body, sizeof(body));

	if (n < 0)
		return n;
	return frame(&h, body, (size_t)n, crc, buf, cap);
}

static enum urnic_mpa_conn_event rtr_bad(struct urnic_mpa_conn *c, enum urnic_iw_reason r)
{
	c->state = URNIC_MPA_CONN_FAILED;
	c->reason = URNIC_MPA_CONN_R_RTR_BAD;
	c->wire_reason = r;
	c->refusals[URNIC_MPA_CONN_R_RTR_BAD]++;
	return URNIC_MPA_EV_ERROR;
}

/* The RTR is whole in c->rtr_in: decode, match, and answer a Read. */
static enum urnic_mpa_conn_event rtr_check(struct urnic_mpa_conn *c)
{
	struct urnic_fpdu f;
	struct urnic_ddp_hdr h, resp = { .tagged = true, .last = true };
	size_t hb = 0;
	enum urnic_iw_reason r;
	ssize_t n;

	r = urnic_fpdu_decode(&f, c->rtr_in, c->rtr_len, c->params.crc ? URNIC_FPDU_CRC : 0);
	if (r == URNIC_IW_R_OK)
		r = urnic_ddp_decode(&h, &hb, f.ulpdu, f.ulpdu_len);
	if (r != URNIC_IW_R_OK)
		return rtr_bad(c, r);
	if (!urnic_mpa_rtr_is(c->params.rtr, &h, f.ulpdu_len - hb))
		return rtr_bad(c, URNIC_IW_R_OK);
	if (h.opcode == URNIC_RDMAP_READ_REQ) {
		/* RFC 5040 4.5: a Read Response to the sink buffer, here of no bytes. */
		resp.opcode = URNIC_RDMAP_READ_RESP;
		resp.stag = h.rreq.sink_stag;
		resp.to = h.rreq.sink_to;
		n = frame(&resp, NULL, 0, c->params.crc, c->out + c->out_len,
			  sizeof(c->out) - c->out_len);
		if (n < 0)
			return rtr_bad(c, URNIC_IW_R_OK);
		c->out_len += (size_t)n;
	}
	c->state = URNIC_MPA_CONN_CONNECTED;
	return URNIC_MPA_EV_CONNECTED;
}

enum urnic_mpa_conn_event urnic_mpa_rtr_input(struct urnic_mpa_conn *c, const uint8_t *buf,
					      size_t len, size_t *used)
{
	size_t need, n;

	for (;;) {
		need = URNIC_FPDU_LEN_BYTES;
		if (c->rtr_len >= URNIC_FPDU_LEN_BYTES)
			need = urnic_fpdu_bytes((size_t)c->rtr_in[0] << 8 | c->rtr_in[1]);
		if (need > URNIC_MPA_RTR_FPDU_MAX)
			return rtr_bad(c, URNIC_IW_R_OK);
		if (c->rtr_len == need && need > URNIC_FPDU_LEN_BYTES)
			return rtr_check(c);
		if (*used == len)
			return URNIC_MPA_EV_NONE;
		n = need - c->rtr_len < len - *used ? need - c->rtr_len : len - *used;
		memcpy(c->rtr_in + c->rtr_len, buf + *used, n);
		c->rtr_len += n;
		*used += n;
	}
}
