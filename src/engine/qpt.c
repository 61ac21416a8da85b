/* SPDX-License-Identifier: MIT */
/*
 * qpt.c - the engine's services every part uses: finding a QP by its QPN, waking it
 * for the next pass, selecting whose counters move, random bits. They call nothing
 * else, so every engine file may call them without closing a circle.
 */
#include "engine/slots.h"

struct urnic_qp *urnic_engine_qp_find(struct urnic_engine *e, uint32_t qpn)
{
	struct urnic_qp *qp = e->qpt.qps[slot_index(qpn)];

	return qp && qp->qpn == qpn ? qp : NULL;
}

void urnic_engine_qp_wake(struct urnic_engine *e, const struct urnic_qp *qp)
{
	uint32_t i = slot_index(qp->qpn);

	slot_set(e->qpt.active, i);
	slot_set(e->qpt.awaiting, i);
}

void urnic_engine_serve(struct urnic_engine *e, const struct urnic_qp *qp)
{
	e->stats.cur_qp = qp && e->stats.qp ? e->stats.qp[slot_index(qp->qpn)].c : NULL;
}

uint32_t urnic_engine_random(struct urnic_engine *e)
{
	/* xorshift64*: unpredictable enough for key bits once seeded from getrandom(). */
	e->rng ^= e->rng >> 12;
	e->rng ^= e->rng << 25;
	e->rng ^= e->rng >> 27;
	return (uint32_t)((e->rng * 0x2545f4914f6cdd1dull) >> 32);
}
