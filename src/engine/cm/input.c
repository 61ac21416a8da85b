// SPDX-License-Identifier: MIT
/*
 * input.c - a received CM MAD to the handler of its message (cm.c cm_recv_handler,
 * cm_work_handler). The MAD is checked whole first (the codec's rules, wire/cm.h), and
 * the queues must have room for the most one MAD can cause (a REJ and a DREQ, an event);
 * otherwise it is dropped and the peer's retransmission brings it back.
 */
#include <errno.h>

#include "engine/cm/core.h"

int urnic_cm_input(struct urnic_cm *cm, const struct urnic_cm_mad *mad,
		   const struct urnic_cm_addr *from, uint64_t now_ns)
{
	if (!mad || !from)
		return -EINVAL;
	cm_count(cm, URNIC_CM_C_rx_mads);
	if (urnic_cm_check(mad) != URNIC_CM_R_OK) {
		cm_count(cm, URNIC_CM_C_drop_decode);
		return -EBADMSG;
	}
	if (!cm_room(cm, 2, 1)) {
		cm_count(cm, URNIC_CM_C_drop_no_room);
		return -EAGAIN;
	}
	switch (mad->hdr.attr_id) {
	case URNIC_CM_ATTR_REQ:
		return urnic_cm_rx_req(cm, mad, from, now_ns);
	case URNIC_CM_ATTR_MRA:
		return urnic_cm_rx_mra(cm, mad, from, now_ns);
	case URNIC_CM_ATTR_REJ:
		return urnic_cm_rx_rej(cm, mad, from, now_ns);
	case URNIC_CM_ATTR_REP:
		return urnic_cm_rx_rep(cm, mad, from, now_ns);
	case URNIC_CM_ATTR_RTU:
		return urnic_cm_rx_rtu(cm, mad, from, now_ns);
	case URNIC_CM_ATTR_DREQ:
		return urnic_cm_rx_dreq(cm, mad, from, now_ns);
	case URNIC_CM_ATTR_DREP:
		return urnic_cm_rx_drep(cm, mad, from, now_ns);
	case URNIC_CM_ATTR_SIDR_REQ:
		return urnic_cm_rx_sidr_req(cm, mad, from, now_ns);
	case URNIC_CM_ATTR_SIDR_REP:
		return urnic_cm_rx_sidr_rep(cm, mad, from, now_ns);
	default:
		cm_count(cm, URNIC_CM_C_drop_decode);
		return -EBADMSG;
	}
}

int urnic_cm_input_bytes(struct urnic_cm *cm, const uint8_t *buf, size_t len,
			 const struct urnic_cm_addr *from, uint64_t now_ns)
{
	struct urnic_cm_mad mad;

	if (!buf || !from)
		return -EINVAL;
	if (urnic_cm_decode(&mad, buf, len, NULL) != URNIC_MAD_BYTES) {
		cm_count(cm, URNIC_CM_C_rx_mads);
		cm_count(cm, URNIC_CM_C_drop_decode);
		return -EBADMSG;
	}
	return urnic_cm_input(cm, &mad, from, now_ns);
}
