/* SPDX-License-Identifier: MIT */
/*
 * ddp.c - the DDP/RDMAP header codec (ddp.h): control bytes, tagged and untagged
 * headers, the Read Request and the Terminate message, each validated before the caller's
 * struct is written. Reserved bits and fields are refused when set (RFC 5041 4.2 and
 * RFC 5040 4.2 have the sender zero them), so encode(decode(bytes)) == bytes.
 */
#include <errno.h>
#include <string.h>

#include "wire/byteorder.h"
#include "wire/ddp.h"

enum {
	DDP_T = 0x80,
	DDP_L = 0x40,
	DDP_RESERVED = 0x3c,
	DDP_DV = 0x03,
	RDMAP_RV = 0xc0,
	RDMAP_RESERVED = 0x30,
	RDMAP_OPCODE = 0x0f,
	RDMAP_RV_SHIFT = 6,
	TERM_M = 0x8000,
	TERM_D = 0x4000,
	TERM_R = 0x2000,
	TERM_RESERVED = 0x1fff,
	OPCODES = 16,
};
_Static_assert((DDP_T | DDP_L | DDP_RESERVED | DDP_DV) == 0xff, "DDP control byte");
_Static_assert((RDMAP_RV | RDMAP_RESERVED | RDMAP_OPCODE) == 0xff, "RDMAP control byte");

/* What each opcode's segments look like (rdmap_opcode.def); known is 0 for 8..15. */
struct rdmap_op {
	uint8_t known;
	uint8_t tagged;
	uint8_t qn;
};

#define URNIC_RDMAP_OP(name, code, tagged, qn)                                                     \
	_Static_assert((code) < 8 && (qn) <= URNIC_DDP_QN_TERMINATE &&                             \
			       ((tagged) == 0 || (qn) == 0),                                       \
		       #name ": code, queue");
#include "wire/rdmap_opcode.def"
#undef URNIC_RDMAP_OP

static const struct rdmap_op ops[OPCODES] = {
#define URNIC_RDMAP_OP(name, code, t, q) [code] = { .known = 1, .tagged = (t), .qn = (q) },
#include "wire/rdmap_opcode.def"
#undef URNIC_RDMAP_OP
};

static bool op_invalidates(uint8_t opcode)
{
	return opcode == URNIC_RDMAP_SEND_INV || opcode == URNIC_RDMAP_SEND_SE_INV;
}

/* RFC 5041 4.2-4.4 and RFC 5040 4.2-4.4: the rules for the segment at p. */
static enum urnic_iw_reason hdr_check(const uint8_t *p, size_t len)
{
	const struct rdmap_op *op;
	bool tagged;

	if (len < 2)
		return URNIC_IW_R_DDP_TRUNCATED;
	tagged = (p[0] & DDP_T) != 0;
	if (len < (tagged ? URNIC_DDP_TAGGED_BYTES : URNIC_DDP_UNTAGGED_BYTES))
		return URNIC_IW_R_DDP_TRUNCATED;
	if ((p[0] & DDP_DV) != URNIC_DDP_VERSION)
		return URNIC_IW_R_DDP_VERSION;
	if (p[0] & DDP_RESERVED)
		return URNIC_IW_R_DDP_RESERVED;
	if ((p[1] & RDMAP_RV) >> RDMAP_RV_SHIFT != URNIC_RDMAP_VERSION)
		return URNIC_IW_R_RDMAP_VERSION;
	if (p[1] & RDMAP_RESERVED)
		return URNIC_IW_R_RDMAP_RESERVED;
	op = &ops[p[1] & RDMAP_OPCODE];
	if (!op->known)
		return URNIC_IW_R_RDMAP_OPCODE;
	if (op->tagged != tagged)
		return URNIC_IW_R_RDMAP_MODEL;
	if (tagged)
		return URNIC_IW_R_OK;
	if (urnic_get_be32(p + 6) != op->qn)
		return URNIC_IW_R_RDMAP_QN;
	if (!op_invalidates(p[1] & RDMAP_OPCODE) && urnic_get_be32(p + 2) != 0)
		return URNIC_IW_R_RDMAP_RESERVED;
	/* RFC 5040 4.4: a Read Request is one segment holding just its header. */
	if ((p[1] & RDMAP_OPCODE) == URNIC_RDMAP_READ_REQ &&
	    (len != URNIC_DDP_UNTAGGED_BYTES + URNIC_RDMAP_READ_REQ_BYTES || !(p[0] & DDP_L) ||
	     urnic_get_be32(p + 14) != 0))
		return URNIC_IW_R_RDMAP_READ_REQ_LENGTH;
	return URNIC_IW_R_OK;
}

enum urnic_iw_reason urnic_ddp_decode(struct urnic_ddp_hdr *h, size_t *hdr_bytes,
				      const uint8_t *ulpdu, size_t len)
{
	enum urnic_iw_reason r = hdr_check(ulpdu, len);
	struct urnic_ddp_hdr out = { 0 };
	const uint8_t *rr = ulpdu + URNIC_DDP_UNTAGGED_BYTES;

	if (r != URNIC_IW_R_OK)
		return r;
	out.tagged = (ulpdu[0] & DDP_T) != 0;
	out.last = (ulpdu[0] & DDP_L) != 0;
	out.opcode = ulpdu[1] & RDMAP_OPCODE;
	if (out.tagged) {
		out.stag = urnic_get_be32(ulpdu + 2);
		out.to = urnic_get_be64(ulpdu + 6);
		*hdr_bytes = URNIC_DDP_TAGGED_BYTES;
		*h = out;
		return URNIC_IW_R_OK;
	}
	out.inv_stag = urnic_get_be32(ulpdu + 2);
	out.qn = urnic_get_be32(ulpdu + 6);
	out.msn = urnic_get_be32(ulpdu + 10);
	out.mo = urnic_get_be32(ulpdu + 14);
	*hdr_bytes = URNIC_DDP_UNTAGGED_BYTES;
	if (out.opcode == URNIC_RDMAP_READ_REQ) {
		out.rreq.sink_stag = urnic_get_be32(rr);
		out.rreq.sink_to = urnic_get_be64(rr + 4);
		out.rreq.size = urnic_get_be32(rr + 12);
		out.rreq.src_stag = urnic_get_be32(rr + 16);
		out.rreq.src_to = urnic_get_be64(rr + 20);
		*hdr_bytes += URNIC_RDMAP_READ_REQ_BYTES;
	}
	*h = out;
	return URNIC_IW_R_OK;
}

static bool encode_ok(const struct urnic_ddp_hdr *h)
{
	const struct rdmap_op *op;

	if (h->opcode >= OPCODES || !ops[h->opcode].known)
		return false;
	op = &ops[h->opcode];
	if (op->tagged != h->tagged)
		return false;
	if (h->tagged)
		return true;
	if (h->qn != op->qn || (!op_invalidates(h->opcode) && h->inv_stag != 0))
		return false;
	return h->opcode != URNIC_RDMAP_READ_REQ || (h->last && h->mo == 0);
}

ssize_t urnic_ddp_encode(const struct urnic_ddp_hdr *h, uint8_t *buf, size_t cap)
{
	size_t bytes = h->tagged ? URNIC_DDP_TAGGED_BYTES : URNIC_DDP_UNTAGGED_BYTES;
	uint8_t *rr = buf + URNIC_DDP_UNTAGGED_BYTES;

	if (!encode_ok(h))
		return -EINVAL;
	if (h->opcode == URNIC_RDMAP_READ_REQ)
		bytes += URNIC_RDMAP_READ_REQ_BYTES;
	if (cap < bytes)
		return -ENOBUFS;
	buf[0] = (uint8_t)((h->tagged ? DDP_T : 0) | (h->last ? DDP_L : 0) | URNIC_DDP_VERSION);
	buf[1] = (uint8_t)(URNIC_RDMAP_VERSION << RDMAP_RV_SHIFT | h->opcode);
	if (h->tagged) {
		urnic_put_be32(buf + 2, h->stag);
		urnic_put_be64(buf + 6, h->to);
		return (ssize_t)bytes;
	}
	urnic_put_be32(buf + 2, h->inv_stag);
	urnic_put_be32(buf + 6, h->qn);
	urnic_put_be32(buf + 10, h->msn);
	urnic_put_be32(buf + 14, h->mo);
	if (h->opcode == URNIC_RDMAP_READ_REQ) {
		urnic_put_be32(rr, h->rreq.sink_stag);
		urnic_put_be64(rr + 4, h->rreq.sink_to);
		urnic_put_be32(rr + 12, h->rreq.size);
		urnic_put_be32(rr + 16, h->rreq.src_stag);
		urnic_put_be64(rr + 20, h->rreq.src_to);
	}
	return (ssize_t)bytes;
}

/* The length of the headers a Terminate copies (RFC 5040 4.8): the DDP header, by its T
 * bit, and with R the Read Request header when the copied segment is a Read Request. The
 * other opcodes have no RDMAP header outside the DDP one: siw sets R on a failed Send and
 * copies its 18-byte header only. 0: p cannot be such a header. */
static size_t copied_len(const uint8_t *p, size_t len, bool r)
{
	size_t n;

	if (len < 2)
		return 0;
	n = (p[0] & DDP_T) ? URNIC_DDP_TAGGED_BYTES : URNIC_DDP_UNTAGGED_BYTES;
	if (r && !(p[0] & DDP_T) && (p[1] & RDMAP_OPCODE) == URNIC_RDMAP_READ_REQ)
		n += URNIC_RDMAP_READ_REQ_BYTES;
	return n;
}

static enum urnic_iw_reason term_check(const uint8_t *p, size_t len)
{
	uint16_t ctl;
	size_t off = URNIC_RDMAP_TERM_HDR_BYTES, n = 0;

	if (len < URNIC_RDMAP_TERM_HDR_BYTES)
		return URNIC_IW_R_TERM_TRUNCATED;
	if (p[0] >> 4 > URNIC_IW_LAYER_LLP)
		return URNIC_IW_R_TERM_LAYER;
	ctl = urnic_get_be16(p + 2);
	if ((ctl & TERM_RESERVED) || ((ctl & (TERM_M | TERM_R)) && !(ctl & TERM_D)))
		return URNIC_IW_R_TERM_RESERVED;
	if (ctl & TERM_D) {
		off += 2; /* the DDP Segment Length comes with the DDP header */
		if (len < off)
			return URNIC_IW_R_TERM_TRUNCATED;
		n = copied_len(p + off, len - off, (ctl & TERM_R) != 0);
		if (n == 0 || len - off < n)
			return URNIC_IW_R_TERM_TRUNCATED;
	}
	if (len != off + n)
		return URNIC_IW_R_TERM_LENGTH;
	return URNIC_IW_R_OK;
}

enum urnic_iw_reason urnic_rdmap_term_decode(struct urnic_rdmap_term *t, const uint8_t *p,
					     size_t len)
{
	enum urnic_iw_reason r = term_check(p, len);
	struct urnic_rdmap_term out = { 0 };
	uint16_t ctl;
	size_t off = URNIC_RDMAP_TERM_HDR_BYTES;

	if (r != URNIC_IW_R_OK)
		return r;
	ctl = urnic_get_be16(p + 2);
	out.layer = p[0] >> 4;
	out.etype = p[0] & 0x0f;
	out.code = p[1];
	out.m = (ctl & TERM_M) != 0;
	out.d = (ctl & TERM_D) != 0;
	out.r = (ctl & TERM_R) != 0;
	if (out.d) {
		out.seg_len = urnic_get_be16(p + off);
		off += 2;
		out.copied = p + off;
		out.copied_bytes = (uint16_t)(len - off);
	}
	*t = out;
	return URNIC_IW_R_OK;
}

ssize_t urnic_rdmap_term_encode(const struct urnic_rdmap_term *t, uint8_t *buf, size_t cap)
{
	size_t bytes = URNIC_RDMAP_TERM_HDR_BYTES + (t->d ? 2 : 0);
	size_t want = t->d ? copied_len(t->copied, t->copied_bytes, t->r) : 0;

	if (t->layer > URNIC_IW_LAYER_LLP || t->etype > 0x0f || ((t->m || t->r) && !t->d))
		return -EINVAL;
	if (t->d ? (want == 0 || want != t->copied_bytes) : t->copied_bytes != 0)
		return -EINVAL;
	bytes += want;
	if (cap < bytes)
		return -ENOBUFS;
	buf[0] = (uint8_t)(t->layer << 4 | t->etype);
	buf[1] = t->code;
	urnic_put_be16(buf + 2,
		       (uint16_t)((t->m ? TERM_M : 0) | (t->d ? TERM_D : 0) | (t->r ? TERM_R : 0)));
	if (t->d)
		urnic_put_be16(buf + 4, t->seg_len);
	if (want)
		memmove(buf + bytes - want, t->copied, want);
	return (ssize_t)bytes;
}
