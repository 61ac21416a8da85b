/* SPDX-License-Identifier: MIT */
/*
 * iw_rtr.c - RFC 6581 3's ready-to-receive message of a peer-to-peer connection in the
 * engine. The MPA Responder's QP is connected as soon as its Reply went, holding its
 * FPDUs (RFC 5044 7.1.2) until the RTR, the Initiator's first FPDU, is in: it checks it
 * is the RTR setup chose (mpa_rtr.h, as siw's siw_qp_mpa_rts() sends it), answers a Read
 * with a zero-length Read Response, and counts the RTR in its untagged queue's MSNs
 * (RFC 5041 5.1: siw sends and takes the RTR as an ordinary message). The Initiator,
 * whose RTR MPA setup sent, takes that zero-length Read Response.
 */
#include "engine/iwarp/iw.h"
#include "engine/iwarp/mpa_rtr.h"

bool urnic_iw_rtr_head(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_iw_qp *iw = qp->iw;
	const struct urnic_ddp_hdr *h = &iw->rx_stream.hdr;

	if (!urnic_mpa_rtr_is(iw->rtr_in, h, iw->rx_stream.payload_len)) {
		urnic_iw_fail(e, qp, URNIC_IW_TERM_MPA_NO_MATCHING_RTR, URNIC_CTR_iw_refused_rtr,
			      0);
		return false;
	}
	iw->rx.seg = URNIC_IW_SEG_RTR;
	return true;
}

void urnic_iw_rtr_end(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_iw_qp *iw = qp->iw;
	const struct urnic_ddp_hdr *h = &iw->rx_stream.hdr;
	/* RFC 5040 4.5: the Read Response goes to the Read Request's sink, here no bytes. */
	struct urnic_ddp_hdr resp = { .tagged = true,
				      .last = true,
				      .opcode = URNIC_RDMAP_READ_RESP,
				      .stag = h->rreq.sink_stag,
				      .to = h->rreq.sink_to };

	if (iw->rtr_in == URNIC_MPA_RTR_READ) {
		iw->rx.msn[URNIC_DDP_QN_READ_REQ]++;
		/* The ring is empty: nothing is framed before the first FPDU. */
		if (urnic_iw_frame(e, qp, &resp, 0, NULL, 0, NULL) <= 0) {
			urnic_iw_fail(e, qp, URNIC_IW_TERM_RDMAP_LOCAL_CATASTROPHIC,
				      URNIC_CTR_iw_refused_rtr, 0);
			return;
		}
	} else if (iw->rtr_in == URNIC_MPA_RTR_SEND) {
		iw->rx.msn[URNIC_DDP_QN_SEND]++; /* no receive WQE: the Send carries nothing */
	}
	iw->rtr_in = URNIC_MPA_RTR_NONE;
}

bool urnic_iw_rtr_rresp(const struct urnic_qp *qp)
{
	const struct urnic_iw_qp *iw = qp->iw;
	const struct urnic_ddp_hdr *h = &iw->rx_stream.hdr;
	struct urnic_ddp_hdr rtr;

	if (!iw->rtr_rresp_due || h->opcode != URNIC_RDMAP_READ_RESP)
		return false;
	urnic_mpa_rtr_hdr(URNIC_MPA_RTR_READ, &rtr);
	return h->tagged && h->last && iw->rx_stream.payload_len == 0 &&
	       h->stag == rtr.rreq.sink_stag && h->to == rtr.rreq.sink_to;
}
