/* SPDX-License-Identifier: MIT */
/*
 * iw_tx.c - an iWARP QP's send queue (RFC 5040 5.1, 5.3): Sends (with solicited event,
 * with invalidate) on untagged queue 0 with MSN and MO (RFC 5041 5.1), RDMA Writes as
 * tagged segments, RDMA Reads as Read Requests on queue 1 within ORD and behind a fence,
 * and the local operations (bind, invalidate) the RoCE requester shares. Messages are
 * cut into FPDUs as siw cuts them (fpdu_tx.h). A Send or Write completes when the socket
 * has taken its last byte, a Read when its last Read Response came, in post order.
 * RFC 5040 has no immediate data and no atomics: such WQEs fail with LOC_QP_OP_ERR.
 */
#include <errno.h>
#include <string.h>

#include "engine/iwarp/iw.h"
#include "engine/roce/rc.h"
#include "mem/sge.h"

/* What RFC 5040 can carry, as siw's siw_post_send accepts. */
static bool iw_wr_supported(uint32_t opcode)
{
	switch (opcode) {
	case URNIC_WR_SEND:
	case URNIC_WR_SEND_WITH_INV:
	case URNIC_WR_RDMA_WRITE:
	case URNIC_WR_RDMA_READ:
	case URNIC_WR_LOCAL_INV:
	case URNIC_WR_BIND_MW:
		return true;
	default:
		return false;
	}
}

static uint8_t validate(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_send_wqe *w)
{
	if (!iw_wr_supported(w->opcode))
		return URNIC_WC_LOC_QP_OP_ERR;
	/* ORD 0 (MPA setup, RFC 6581 3): no Read Request may ever be outstanding. */
	if (w->opcode == URNIC_WR_RDMA_READ && !qp->iw->ord)
		return URNIC_WC_LOC_QP_OP_ERR;
	return urnic_roce_validate_swqe(e, qp, w);
}

static int fill_wqe(struct urnic_engine *e, struct urnic_qp *qp, uint8_t *dst, uint32_t off,
		    uint32_t len, const void *arg)
{
	const struct urnic_send_wqe *w = arg;
	struct urnic_frag f[URNIC_MAX_SGE];
	int n;

	if (w->flags & URNIC_SEND_INLINE) {
		memcpy(dst, w->inline_data + off, len);
		return 0;
	}
	/* Resolved again for every FPDU: a region deregistered under the WQE is not read. */
	n = urnic_sge_gather(&e->mrs, qp->pd, w->sge, w->num_sge, off, len, 0, f, URNIC_MAX_SGE,
			     e->odp_bounce, sizeof(e->odp_bounce));
	if (n == -ENXIO)
		urnic_count(e, URNIC_CTR_odp_fault_local);
	if (n < 0)
		return -EFAULT;
	for (int i = 0; i < n; i++) {
		memcpy(dst, f[i].base, f[i].len);
		dst += f[i].len;
	}
	return 0;
}

static uint8_t send_opcode(const struct urnic_send_wqe *w)
{
	bool se = w->flags & URNIC_SEND_SOLICITED;

	if (w->opcode == URNIC_WR_SEND_WITH_INV)
		return se ? URNIC_RDMAP_SEND_SE_INV : URNIC_RDMAP_SEND_INV;
	return se ? URNIC_RDMAP_SEND_SE : URNIC_RDMAP_SEND;
}

/* Frames the WQE's next segments from req.off_bytes. 1: all framed; 0: the ring is
 * full; -EFAULT: an SGE no longer resolves. */
static int send_data(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_send_wqe *w)
{
	struct urnic_iw_qp *iw = qp->iw;
	bool tagged = w->opcode == URNIC_WR_RDMA_WRITE;

	for (;;) {
		uint32_t off = qp->req.off_bytes;
		struct urnic_ddp_hdr h = { .tagged = tagged };
		size_t hb = tagged ? URNIC_DDP_TAGGED_BYTES : URNIC_DDP_UNTAGGED_BYTES;
		bool last;
		uint32_t n = (uint32_t)urnic_fpdu_tx_fit(iw->mulpdu, hb, w->length - off, &last);
		ssize_t r;

		h.last = last;
		if (tagged) {
			h.opcode = URNIC_RDMAP_WRITE;
			h.stag = w->rkey;
			h.to = w->remote_addr + off;
		} else {
			h.opcode = send_opcode(w);
			h.inv_stag = w->opcode == URNIC_WR_SEND_WITH_INV ? w->rkey : 0;
			h.qn = URNIC_DDP_QN_SEND;
			h.msn = iw->tx_msn[URNIC_DDP_QN_SEND];
			h.mo = off;
		}
		r = urnic_iw_frame(e, qp, &h, n, fill_wqe, off, w);
		if (r <= 0)
			return r < 0 ? -EFAULT : 0;
		qp->req.off_bytes = off + n;
		if (last) {
			if (!tagged)
				iw->tx_msn[URNIC_DDP_QN_SEND]++;
			return 1;
		}
	}
}

/* Whether the WQE may start: a READ within ORD, anything fenced after the READs before
 * it (IBTA 10.8.3.3, siw's orq_fence). */
static bool may_start(const struct urnic_qp *qp, const struct urnic_send_wqe *w)
{
	const struct urnic_iw_qp *iw = qp->iw;

	if ((w->flags & URNIC_SEND_FENCE) && iw->orq_count)
		return false;
	return w->opcode != URNIC_WR_RDMA_READ || iw->orq_count < iw->ord;
}

/* One WQE at req.idx: 1 done with it, 0 blocked (ring full, ORD, fence), or a
 * completion status > 1 to fail it with. */
static int sq_one(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_send_wqe *w)
{
	int r;

	if (!w->started) {
		uint8_t st = validate(e, qp, w);

		if (st != URNIC_WC_SUCCESS)
			return 2 + st;
		if (!may_start(qp, w))
			return 0;
		w->started = true;
		w->done = false;
		w->status = URNIC_WC_SUCCESS;
	}
	switch (w->opcode) {
	case URNIC_WR_BIND_MW:
	case URNIC_WR_LOCAL_INV: {
		uint8_t st = urnic_roce_local_op(e, qp, w);

		if (st != URNIC_WC_SUCCESS)
			return 2 + st;
		w->done = true;
		return 1;
	}
	case URNIC_WR_RDMA_READ:
		return urnic_iw_send_rreq(e, qp, w) ? 0 : 1;
	default:
		r = send_data(e, qp, w);
		return r < 0 ? 2 + URNIC_WC_LOC_PROT_ERR : r;
	}
}

bool urnic_iw_sq_progress(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_iw_qp *iw = qp->iw;
	bool did = false;

	while (qp->state == URNIC_QPS_RTS && !iw->term_sent) {
		uint32_t prod = atomic_load_explicit(&qp->sq.prod, memory_order_acquire);
		struct urnic_send_wqe *w;
		int r;

		if (qp->req.idx == prod)
			break;
		w = rc_swqe(qp, qp->req.idx);
		r = sq_one(e, qp, w);
		if (r == 0)
			break;
		did = true;
		if (r > 1) {
			/* IBTA 10.8.3.1: a local error completes the WQE with its status, the
			 * QP enters error and flushes the rest. */
			urnic_iw_complete_sq(e, qp);
			urnic_roce_fail_swqe(e, qp, w, (uint8_t)(r - 2));
			return true;
		}
		iw->wqe_end[qp->req.idx & iw->wqe_mask] = iw->out.queued;
		qp->req.idx++;
		qp->req.off_bytes = 0;
	}
	urnic_iw_complete_sq(e, qp);
	return did;
}
