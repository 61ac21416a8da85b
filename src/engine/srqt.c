/* SPDX-License-Identifier: MIT */
/*
 * srqt.c - the XRC SRQ table (IBTA Annex A14): the number an XRC SRQ gets, which a
 * sender puts in the XRCETH of its requests, and the SRQ a received number names. An
 * SRQ that goes away takes its place among the target QPs serving a message into it
 * with it (roce/xrc.c binds them). Basic SRQs have no number: QPs name them at creation.
 */
#include <errno.h>

#include "engine/engine.h"

_Static_assert((URNIC_MAX_XRC_SRQ & (URNIC_MAX_XRC_SRQ - 1)) == 0 &&
		       URNIC_MAX_XRC_SRQ <= 1u << URNIC_QPN_INDEX_BITS,
	       "an SRQ number is a slot index below a generation, as a QPN is");

static uint32_t srq_slot(uint32_t srqn)
{
	return srqn & (URNIC_MAX_XRC_SRQ - 1);
}

struct urnic_srq *urnic_engine_srq_find(struct urnic_engine *e, uint32_t srqn)
{
	struct urnic_srq *srq = e->srqt.srqs[srq_slot(srqn)];

	return srq && srq->srqn == srqn ? srq : NULL;
}

int urnic_engine_srq_add(struct urnic_engine *e, struct urnic_srq *srq)
{
	struct urnic_srq_table *t = &e->srqt;

	/* Taken in turn with a generation per slot, as QPNs are (engine.c): a number a
	 * sender still holds names no new SRQ until the slot has served 255 others. */
	for (uint32_t n = 0; n < URNIC_MAX_XRC_SRQ; n++) {
		uint32_t i = (t->next + n) % URNIC_MAX_XRC_SRQ;

		if (t->srqs[i])
			continue;
		t->next = i + 1;
		t->gen[i] = (uint8_t)(t->gen[i] + 1);
		if (!t->gen[i])
			t->gen[i] = 1; /* never 0: a number is never a bare index */
		srq->srqn = (uint32_t)t->gen[i] << URNIC_QPN_INDEX_BITS | i;
		t->srqs[i] = srq;
		return 0;
	}
	return -ENOMEM;
}

void urnic_engine_srq_remove(struct urnic_engine *e, struct urnic_srq *srq)
{
	struct urnic_qp_table *qpt = &e->qpt;
	uint32_t i = srq_slot(srq->srqn);

	if (e->srqt.srqs[i] == srq)
		e->srqt.srqs[i] = NULL;
	/* A receive QP keeps the SRQ, PD and CQ of the last request it executed: those that
	 * named this SRQ forget them. A message half-received into it ends here; its next
	 * packet names an SRQ that no longer exists and is refused (roce/xrc.c). */
	for (uint32_t k = 2; k < qpt->end; k++) {
		struct urnic_qp *qp = qpt->qps[k];

		if (!qp || qp->type != URNIC_QPT_XRC_RECV || qp->srq != srq)
			continue;
		qp->srq = NULL;
		qp->pd = NULL;
		qp->recv_cq = NULL;
		qp->resp.have_rwqe = false;
		qp->resp.in_send = false;
		qp->resp.in_write = false;
		urnic_engine_qp_wake(e, qp);
	}
}
