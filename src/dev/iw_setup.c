/* SPDX-License-Identifier: MIT */
/*
 * iw_setup.c - the device's QP behind a verbs QP number, for the CM's iWARP hand-off
 * (iw_setup.h): a look-up in the engine's QP table under the device lock.
 */
#include "dev/iw_setup.h"
#include "engine/core.h"

struct urnic_qp *urnic_dev_iw_qp(struct urnic_dev *d, uint32_t qpn)
{
	struct urnic_qp *qp;

	pthread_mutex_lock(&d->lock);
	qp = urnic_engine_qp_find(d->eng, qpn);
	pthread_mutex_unlock(&d->lock);
	return qp;
}
