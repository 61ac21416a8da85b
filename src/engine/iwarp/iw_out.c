/* SPDX-License-Identifier: MIT */
/*
 * iw_out.c - an iWARP QP's output ring (iw.h, struct urnic_iw_out) and the framing of
 * one DDP segment into it as an FPDU (RFC 5044 4: length, headers, payload, pad, CRC).
 *
 * Payload is copied into the ring when its FPDU is framed, not handed to the socket as
 * iovecs into registered memory: the CRC covers header, payload and pad of each FPDU,
 * and a region may be deregistered while its bytes wait for the socket, which must then
 * not read it. One ring of many FPDUs also lets one sendmsg carry a batch.
 */
#include <errno.h>

#include "engine/iwarp/iw.h"
#include "engine/slots.h"

uint8_t *urnic_iw_out_reserve(struct urnic_iw_out *o, size_t bytes, bool term)
{
	size_t need = bytes + (term ? 0 : URNIC_IW_TERM_SLACK);

	if (!o->wrapped && o->rd == o->wr)
		o->rd = o->wr = 0; /* empty: start over at the front */
	if (o->wrapped)
		return o->rd - o->wr >= need ? o->buf + o->wr : NULL;
	if (o->cap - o->wr >= need)
		return o->buf + o->wr;
	if (o->rd < need)
		return NULL;
	o->wrap = o->wr; /* an FPDU never wraps: the rest goes to the front */
	o->wr = 0;
	o->wrapped = true;
	return o->buf;
}

void urnic_iw_out_commit(struct urnic_engine *e, struct urnic_qp *qp, size_t bytes)
{
	struct urnic_iw_out *o = &qp->iw->out;

	o->wr += bytes;
	o->queued += bytes;
	slot_set(e->qpt.iw_tx, slot_index(qp->qpn));
}

size_t urnic_iw_out_pending(const struct urnic_iw_out *o)
{
	return o->wrapped ? o->wrap - o->rd + o->wr : o->wr - o->rd;
}

void urnic_iw_out_consume(struct urnic_iw_out *o, size_t n)
{
	while (n) {
		size_t end = o->wrapped ? o->wrap : o->wr;
		size_t k = end - o->rd < n ? end - o->rd : n;

		o->rd += k;
		o->sent += k;
		n -= k;
		if (o->wrapped && o->rd == o->wrap) {
			o->rd = 0;
			o->wrapped = false;
		} else if (!k) {
			break; /* more than was offered: ignored */
		}
	}
}

static size_t ddp_hdr_bytes(const struct urnic_ddp_hdr *h)
{
	if (h->tagged)
		return URNIC_DDP_TAGGED_BYTES;
	return URNIC_DDP_UNTAGGED_BYTES +
	       (h->opcode == URNIC_RDMAP_READ_REQ ? URNIC_RDMAP_READ_REQ_BYTES : 0);
}

ssize_t urnic_iw_frame(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_ddp_hdr *h,
		       uint32_t payload, urnic_iw_fill_fn fill, uint32_t off, const void *arg)
{
	struct urnic_iw_qp *iw = qp->iw;
	size_t hb = ddp_hdr_bytes(h), bytes = urnic_fpdu_bytes(hb + payload);
	uint8_t *at = urnic_iw_out_reserve(&iw->out, bytes, h->opcode == URNIC_RDMAP_TERMINATE);
	ssize_t n;

	if (!at)
		return 0;
	if (urnic_ddp_encode(h, at + URNIC_FPDU_LEN_BYTES, hb) != (ssize_t)hb)
		return -EINVAL;
	for (uint32_t done = 0; done < payload;) {
		uint32_t k =
			payload - done < URNIC_IW_COPY_CHUNK ? payload - done : URNIC_IW_COPY_CHUNK;

		if (fill(e, qp, at + URNIC_FPDU_LEN_BYTES + hb + done, off + done, k, arg))
			return -EFAULT;
		done += k;
	}
	n = urnic_fpdu_encode(at, bytes, at + URNIC_FPDU_LEN_BYTES, hb + payload, iw->flags);
	if (n < 0)
		return n;
	urnic_iw_out_commit(e, qp, (size_t)n);
	return n;
}
