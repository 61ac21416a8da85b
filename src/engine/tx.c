/* SPDX-License-Identifier: MIT */
/*
 * tx.c - the engine's transmit batch: packets are built in place in a urnic_txbatch
 * (wire/txbatch.h) and sent by the driver's flush hook when the batch is full or the
 * pass ends.
 */
#include "engine/core.h"

struct urnic_txpkt *urnic_tx_begin(struct urnic_engine *e, const struct urnic_qp *qp)
{
	if (urnic_txbatch_full(&e->tx))
		e->hooks.flush(e);
	return urnic_txbatch_next(&e->tx, &qp->attr.peer);
}

void urnic_tx_commit(struct urnic_engine *e, struct urnic_txpkt *p)
{
	int ret = e->cfg.uet ? urnic_txbatch_commit_plain(&e->tx, p)
			     : urnic_txbatch_commit(&e->tx, p, e->cfg.ipv6, e->cfg.local_ip);

	if (ret < 0) {
		urnic_count(e, URNIC_CTR_drop_tx_failed);
		return;
	}
	urnic_count(e, URNIC_CTR_tx_packets);
	urnic_count_n(e, URNIC_CTR_tx_bytes, urnic_txpkt_bytes(p));
}
