/* SPDX-License-Identifier: MIT */
/*
 * uet.c - the verbs of a UET device (URNIC_ADDR=uet:<ip>): RC queue pairs carried by UE
 * 1.0's packet delivery (PDS RUD) and semantic (SES) sublayers on UDP 4793
 * (engine/uet/uet_rc.h). To an application it is a RoCEv2 device (transport
 * InfiniBand, Ethernet link layer, the address's GIDs) with less: RC QPs without SRQs
 * only, no atomics (UE 1.0's atomic extension header is not carried), no ATOMIC_WRITE,
 * FLUSH or SEND with invalidate (the engine completes a posted one with LOC_QP_OP_ERR:
 * docs/design-notes.md), no XRC, tag matching, multicast or rdma_cm (dev/cm.c).
 */
#include "verbs/verbs.h"

bool urnic_uet_dev(const struct urnic_dev *d)
{
	return d->kind == URNIC_KIND_UET;
}

/* Over the RoCEv2 attributes: what the device lacks, and its part ID, by which a
 * program that sees only the verbs API (`urnic devices`) tells the kind. */
void urnic_uet_device_attr(struct ibv_device_attr *a)
{
	a->vendor_part_id = URNIC_UET_VENDOR_PART_ID;
	a->atomic_cap = IBV_ATOMIC_NONE;
	a->device_cap_flags &= ~(unsigned int)IBV_DEVICE_XRC;
	a->max_srq = 0; /* a QP's receives are its own RQ's (engine/uet/uet_int.h) */
	a->max_srq_wr = 0;
	a->max_srq_sge = 0;
	a->max_mcast_grp = 0;
	a->max_mcast_qp_attach = 0;
	a->max_total_mcast_qp_attach = 0;
}

/* The ibv_wr_* operations a QP made with ibv_create_qp_ex may not ask for: those UET
 * does not carry (EOPNOTSUPP at creation, as for an operation the QP type lacks). */
uint64_t urnic_uet_no_send_ops(void)
{
	return IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
	       IBV_QP_EX_WITH_ATOMIC_WRITE | URNIC_IBV_QP_EX_WITH_FLUSH |
	       IBV_QP_EX_WITH_SEND_WITH_INV;
}
