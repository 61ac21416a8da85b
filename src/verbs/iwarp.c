/* SPDX-License-Identifier: MIT */
/*
 * iwarp.c - the verbs of an iWARP device (URNIC_ADDR=iwarp:<ip>) as Linux siw presents
 * itself (drivers/infiniband/sw/siw/siw_verbs.c, rdma-core providers/siw/siw.c): an RNIC
 * node on the iWARP transport, siw's device and port attributes within urnic's limits,
 * one GID (the MAC), RC QPs only, the operations of RFC 5040 only, and no user-driven
 * way to RTS: the connection manager hands a QP its TCP connection (dev/iw_conn.h).
 */
#include <errno.h>
#include <string.h>

#include "verbs/verbs.h"

/* siw.h's limits, where they are below urnic's own. */
enum {
	SIW_MAX_ORD_QP = 128,
	SIW_MAX_IRD_QP = 128,
	SIW_MAX_SGE = 6,    /* rdma/siw-abi.h */
	SIW_MAX_SGE_RD = 1, /* "iwarp limitation" */
	SIW_VENDOR_ID = 0x626d74,
	SIW_PAGE_SIZE = 4096,
};

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

bool urnic_iw_dev(const struct urnic_dev *d)
{
	return d->kind == URNIC_KIND_IWARP;
}

/* siw_query_device: no atomics (RFC 7306 is not supported), memory management
 * extensions only, one SGE for a READ's target, no windows, multicast or AHs. */
void urnic_iw_device_attr(const struct urnic_dev *d, struct ibv_device_attr *a)
{
	a->atomic_cap = IBV_ATOMIC_NONE;
	a->device_cap_flags = IBV_DEVICE_MEM_MGT_EXTENSIONS;
	a->vendor_id = SIW_VENDOR_ID;
	a->vendor_part_id = 0;
	a->page_size_cap = SIW_PAGE_SIZE;
	a->max_qp_init_rd_atom = (int)min_u32(d->lim.max_qp_init_rd_atom, SIW_MAX_IRD_QP);
	a->max_qp_rd_atom = (int)min_u32(d->lim.max_qp_rd_atom, SIW_MAX_ORD_QP);
	a->max_res_rd_atom = a->max_qp * a->max_qp_init_rd_atom;
	a->max_sge = SIW_MAX_SGE;
	a->max_sge_rd = SIW_MAX_SGE_RD;
	a->max_srq_sge = SIW_MAX_SGE;
	a->max_mw = 0;
	a->max_ah = 0;
	a->max_mcast_grp = 0;
	a->max_mcast_qp_attach = 0;
	a->max_total_mcast_qp_attach = 0;
	a->max_pkeys = 0;
	a->local_ca_ack_delay = 0;
}

/* siw_query_port, and what uverbs adds: one GID, messages of up to 2^32 - 1 bytes,
 * the netdev's MTU, CM and device management support, no P_Key table, Ethernet. */
void urnic_iw_port_attr(const struct urnic_dev *d, struct ibv_port_attr *p)
{
	p->gid_tbl_len = 1;
	p->max_msg_sz = UINT32_MAX;
	p->max_mtu = (enum ibv_mtu)d->active_mtu;
	p->port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_DEVICE_MGMT_SUP;
	p->pkey_tbl_len = 0;
	p->max_vl_num = 0;
	p->link_layer = IBV_LINK_LAYER_ETHERNET;
}

/* RFC 5040 4.x: Send (with or without Solicited Event), Send with Invalidate, RDMA Write
 * and RDMA Read; no immediate data, atomics, windows or local invalidation, which
 * libsiw's map_send_opcode[] refuses with EINVAL. */
bool urnic_iw_opcode_ok(uint32_t op)
{
	return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_INV || op == IBV_WR_RDMA_WRITE ||
	       op == IBV_WR_RDMA_READ;
}

/* The ibv_wr_* operations of an iWARP RC QP: urnic_iw_opcode_ok's. */
uint64_t urnic_iw_send_ops(void)
{
	return IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_RDMA_WRITE |
	       IBV_QP_EX_WITH_RDMA_READ;
}

/* IB_QP_ATTR_STANDARD_BITS: siw_verbs_modify_qp refuses others with EOPNOTSUPP. */
#define IW_STANDARD_BITS ((1u << 21) - 1)

/*
 * ibv_modify_qp on an iWARP QP, as siw_verbs_modify_qp and siw_qp_modify take it: only
 * the state and the access flags matter, other attributes are ignored; RESET and INIT
 * (siw's IDLE) and ERR may be asked for, RTS only through the connection manager
 * (siw_qp_nextstate_from_idle: "no socket", EINVAL); SQD of a QP in RTS is siw's
 * CLOSING, the graceful close librdmacm's rdma_disconnect asks an iWARP QP for
 * (ucma_modify_qp_sqd): queued bytes, FIN, then error (urnic_dev_iw_disconnect); RTR and
 * SQE are refused. The
 * engine is given the attributes IBTA's table wants for the move (port 1, P_Key 0).
 * Returns 0 or a positive errno.
 */
int urnic_iw_modify_qp(struct urnic_vqp *v, struct ibv_qp_attr *attr, int mask_in)
{
	uint32_t mask = (uint32_t)mask_in, emask = 0;
	struct urnic_qp_attr a = v->qp.attr;
	enum urnic_qp_state cur, next, state;
	struct urnic_qp_attr now;
	int ret;

	if (mask & ~IW_STANDARD_BITS)
		return EOPNOTSUPP;
	urnic_dev_qp_query(v->dev, &v->qp, &cur, &now);
	next = (mask & IBV_QP_STATE) ? (enum urnic_qp_state)attr->qp_state : cur;
	if ((mask & IBV_QP_CUR_STATE) && (enum urnic_qp_state)attr->cur_qp_state != cur)
		return EINVAL;
	if (mask & IBV_QP_ACCESS_FLAGS) {
		a.access = attr->qp_access_flags;
		emask |= URNIC_QP_ACCESS_FLAGS;
	}
	switch (next) {
	case URNIC_QPS_RESET:
	case URNIC_QPS_ERR:
		emask = 0; /* IBTA 10.3.1: no attributes with these */
		break;
	case URNIC_QPS_INIT:
		if (cur == URNIC_QPS_RESET) {
			a.port_num = 1;
			a.pkey_index = 0;
			emask |= URNIC_QP_PORT | URNIC_QP_PKEY_INDEX | URNIC_QP_ACCESS_FLAGS;
		} else if (cur != URNIC_QPS_INIT) {
			return EINVAL;
		}
		break;
	case URNIC_QPS_RTS:
		if (cur != URNIC_QPS_RTS)
			return EINVAL; /* the CM's attach makes RTS (dev/iw_conn.h) */
		break;
	case URNIC_QPS_SQD:
		if (cur != URNIC_QPS_RTS)
			return EINVAL;
		urnic_dev_iw_disconnect(v->dev, &v->qp);
		return 0;
	default:
		return EINVAL;
	}
	if (next == cur && !(mask & IBV_QP_STATE) && !emask)
		return 0;
	ret = urnic_dev_qp_modify(v->dev, &v->qp, &a, cur, next, emask | URNIC_QP_STATE, &state);
	if (ret == 0)
		v->ibqp.state = (enum ibv_qp_state)state;
	return -ret;
}
