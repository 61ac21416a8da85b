/* SPDX-License-Identifier: MIT */
/*
 * tm.h - the receive side of tag matching (rdma-core Documentation/tag_matching.md) on
 * an RC QP attached to a tag-matching SRQ: each SEND's first packet is classified by
 * its TMH, matched against the SRQ's tag list, and completed on the SRQ's CQ; a matched
 * rendezvous is read by the QP's own requester. Context: the engine, device lock.
 */
#ifndef URNIC_ENGINE_ROCE_TM_H
#define URNIC_ENGINE_ROCE_TM_H

#include "engine/core.h"

/* Whether the QP's receives go through tag matching. */
static inline bool urnic_roce_tm_qp(const struct urnic_qp *qp)
{
	return qp->srq && qp->srq->tm;
}

/* A SEND packet needs its receive: on its first packet, classifies the message and
 * takes a tag's buffer or a plain WQE (qp->resp.tm says which). False: not now (no
 * plain WQE, or no send queue room for a rendezvous): the caller answers RNR. */
bool urnic_roce_tm_take(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt);

/* Where a SEND packet's data goes in the receive: *skip bytes of its payload are not
 * placed (the TMH of a matched eager message; all of a matched rendezvous request). */
uint32_t urnic_roce_tm_skip(const struct urnic_qp *qp, const struct urnic_pkt *pkt, uint32_t flags);

/* The receive completion of a message on a tag-matching QP: its opcode, flags and tag
 * information, and the CQ it goes to (the SRQ's). */
struct urnic_cq *urnic_roce_tm_cqe(struct urnic_qp *qp, struct urnic_cqe *cqe);

/* An engine-posted send WQE (w->role) completed with status: a rendezvous READ
 * completes its tagged receive; a FIN completes silently. */
void urnic_roce_tm_swqe_done(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_send_wqe *w,
			     uint8_t status);

#endif
