/* SPDX-License-Identifier: MIT */
/*
 * uet_rc.c - RC queue pairs over the UET transport (uet_rc.h).
 */
#include "engine/uet/uet_rc.h"

#include <stdlib.h>

void urnic_uet_rx(struct urnic_engine *e, const struct urnic_rx_meta *m, const uint8_t *buf,
		  size_t len)
{
	(void)m;
	(void)buf;
	(void)len;
	urnic_count(e, URNIC_CTR_uet_drop_unknown_pdc);
}

void urnic_uet_qp_free(struct urnic_qp *qp)
{
	free(qp->uet);
	qp->uet = NULL;
}

static void rx(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
	       const struct urnic_rx_meta *m)
{
	(void)e, (void)qp, (void)pkt, (void)m;
}

static bool progress(struct urnic_engine *e, struct urnic_qp *qp)
{
	(void)e, (void)qp;
	return false;
}

static void timers(struct urnic_engine *e, struct urnic_qp *qp, uint64_t *next, uint64_t *hold)
{
	(void)e, (void)qp, (void)next, (void)hold;
}

static void nop(struct urnic_engine *e, struct urnic_qp *qp)
{
	(void)e, (void)qp;
}

static void release_held(struct urnic_engine *e, struct urnic_qp *qp, bool parting)
{
	(void)e, (void)qp, (void)parting;
}

static void enter_error(struct urnic_engine *e, struct urnic_qp *qp, bool fatal)
{
	(void)e, (void)qp, (void)fatal;
}

const struct urnic_qp_ops urnic_uet_rc_ops = {
	.name = "UET RC",
	.connected = true,
	.rx = rx,
	.progress = progress,
	.timers = timers,
	.flush = nop,
	.release_held = release_held,
	.enter_error = enter_error,
};
