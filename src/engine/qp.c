/* SPDX-License-Identifier: MIT */
/*
 * qp.c - the QP state machine's transition table and attribute checks.
 *
 * IBTA 10.3.1 figure 124 (QP state diagram) and table 91 (attributes required and
 * allowed per transition and transport), the same table the kernel keeps in
 * ib_modify_qp_is_ok(), with its XRC columns (IBTA Annex A14): an XRC send QP has no
 * responder attributes, an XRC receive QP no requester ones beyond its timeout. Anything
 * outside it is refused with -EINVAL, which is what libibverbs documents for
 * ibv_modify_qp.
 */
#include "engine/qp.h"

#include <errno.h>
#include <stddef.h>

const char *urnic_qp_state_name(enum urnic_qp_state s)
{
	static const char *const names[] = {
#define X(n) [URNIC_QPS_##n] = #n,
		URNIC_QP_STATES(X)
#undef X
	};

	return (unsigned)s < URNIC_QPS_COUNT ? names[s] : "?";
}

struct transition {
	bool valid;
	uint32_t required[6]; /* indexed by transport: RC, UC, UD, XRC send, XRC receive, RAW */
	uint32_t optional[6];
};

#define RC 0
#define UC 1
#define UD 2
#define XI 3 /* XRC send: the initiator */
#define XT 4 /* XRC receive: the target */
/* Raw packet QPs: the kernel's ib_modify_qp_is_ok column (a port to INIT, nothing else). */
#define RAW 5

enum {
	ANY_STATE = URNIC_QP_STATE,
	INIT_RC = URNIC_QP_PKEY_INDEX | URNIC_QP_PORT | URNIC_QP_ACCESS_FLAGS,
	RTR_REQ_UC = URNIC_QP_AV | URNIC_QP_PATH_MTU | URNIC_QP_DEST_QPN | URNIC_QP_RQ_PSN,
	RTR_REQ_RC = RTR_REQ_UC | URNIC_QP_MAX_DEST_RD_ATOMIC | URNIC_QP_MIN_RNR_TIMER,
	RTR_OPT_RC = URNIC_QP_ALT_PATH | URNIC_QP_ACCESS_FLAGS | URNIC_QP_PKEY_INDEX,
	RTS_REQ_RC = URNIC_QP_SQ_PSN | URNIC_QP_TIMEOUT | URNIC_QP_RETRY_CNT | URNIC_QP_RNR_RETRY |
		     URNIC_QP_MAX_QP_RD_ATOMIC,
	RTS_OPT_UC = URNIC_QP_CUR_STATE | URNIC_QP_ALT_PATH | URNIC_QP_ACCESS_FLAGS |
		     URNIC_QP_PATH_MIG_STATE,
	RTS_OPT_RC = RTS_OPT_UC | URNIC_QP_MIN_RNR_TIMER,
};

/* IBTA 10.3.1 table 91 (the RC, UC and UD columns) and Annex A14 (XRC). */
static const struct transition table[URNIC_QPS_COUNT][URNIC_QPS_COUNT] = {
	[URNIC_QPS_RESET] = {
		[URNIC_QPS_RESET] = { .valid = true },
		[URNIC_QPS_INIT] = {
			.valid = true,
			.required = {
				[RC] = INIT_RC,
				[UC] = INIT_RC,
				[UD] = URNIC_QP_PKEY_INDEX | URNIC_QP_PORT | URNIC_QP_QKEY,
				[XI] = INIT_RC,
				[XT] = INIT_RC,
				[RAW] = URNIC_QP_PORT,
			},
		},
	},
	[URNIC_QPS_INIT] = {
		[URNIC_QPS_INIT] = {
			.valid = true,
			.optional = {
				[RC] = INIT_RC,
				[UC] = INIT_RC,
				[UD] = URNIC_QP_PKEY_INDEX | URNIC_QP_PORT | URNIC_QP_QKEY,
				[XI] = INIT_RC,
				[XT] = INIT_RC,
				[RAW] = URNIC_QP_PORT,
			},
		},
		[URNIC_QPS_RTR] = {
			.valid = true,
			.required = {
				[RC] = RTR_REQ_RC,
				[UC] = RTR_REQ_UC,
				[XI] = RTR_REQ_UC,
				[XT] = RTR_REQ_RC,
			},
			.optional = {
				[RC] = RTR_OPT_RC,
				[UC] = RTR_OPT_RC,
				[UD] = URNIC_QP_PKEY_INDEX | URNIC_QP_QKEY,
				[XI] = RTR_OPT_RC,
				[XT] = RTR_OPT_RC,
			},
		},
	},
	[URNIC_QPS_RTR] = {
		[URNIC_QPS_RTS] = {
			.valid = true,
			.required = {
				[RC] = RTS_REQ_RC,
				[UC] = URNIC_QP_SQ_PSN,
				[UD] = URNIC_QP_SQ_PSN,
				[XI] = RTS_REQ_RC,
				[XT] = URNIC_QP_SQ_PSN | URNIC_QP_TIMEOUT,
			},
			.optional = {
				[RC] = RTS_OPT_RC,
				[UC] = RTS_OPT_UC,
				[UD] = URNIC_QP_CUR_STATE | URNIC_QP_QKEY,
				[XI] = RTS_OPT_UC,
				[XT] = RTS_OPT_RC,
			},
		},
	},
	[URNIC_QPS_RTS] = {
		[URNIC_QPS_RTS] = {
			.valid = true,
			.optional = {
				[RC] = RTS_OPT_RC,
				[UC] = RTS_OPT_UC,
				[UD] = URNIC_QP_CUR_STATE | URNIC_QP_QKEY,
				[XI] = RTS_OPT_UC,
				[XT] = RTS_OPT_RC,
			},
		},
	},
	[URNIC_QPS_SQE] = {
		[URNIC_QPS_RTS] = {
			.valid = true,
			.optional = {
				[UC] = URNIC_QP_CUR_STATE | URNIC_QP_ACCESS_FLAGS,
				[UD] = URNIC_QP_CUR_STATE | URNIC_QP_QKEY,
			},
		},
	},
};

static int transport_column(enum urnic_qp_type t)
{
	switch (t) {
	case URNIC_QPT_RC:
		return RC;
	case URNIC_QPT_UC:
		return UC;
	case URNIC_QPT_UD:
		return UD;
	case URNIC_QPT_XRC_SEND:
		return XI;
	case URNIC_QPT_XRC_RECV:
		return XT;
	case URNIC_QPT_RAW_PACKET:
		return RAW;
	}
	return -1;
}

int urnic_qp_check_modify(const struct urnic_qp *qp, const struct urnic_qp_attr *attr,
			  enum urnic_qp_state cur, enum urnic_qp_state next, uint32_t mask)
{
	int col = transport_column(qp->type);
	const struct transition *t;

	if (col < 0 || (unsigned)cur >= URNIC_QPS_COUNT || (unsigned)next >= URNIC_QPS_COUNT)
		return -EINVAL;
	/* IBTA 10.3.1: any state may go to RESET or ERR without further attributes. */
	if (next == URNIC_QPS_RESET || next == URNIC_QPS_ERR) {
		if (mask & ~(uint32_t)(URNIC_QP_STATE | URNIC_QP_CUR_STATE))
			return -EINVAL;
		return 0;
	}
	t = &table[cur][next];
	if (!t->valid)
		return -EINVAL;
	if ((mask & t->required[col]) != t->required[col])
		return -EINVAL;
	if (mask & ~(t->required[col] | t->optional[col] | ANY_STATE))
		return -EINVAL;

	/* Ranges (IBTA 10.3.1 and the ibv_modify_qp man page). */
	if ((mask & URNIC_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & URNIC_QP_PKEY_INDEX) && attr->pkey_index != 0)
		return -EINVAL;
	if ((mask & URNIC_QP_PATH_MTU) && attr->path_mtu == 0)
		return -EINVAL;
	if ((mask & URNIC_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & URNIC_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & URNIC_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & URNIC_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & URNIC_QP_MAX_QP_RD_ATOMIC) && attr->max_rd_atomic > URNIC_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & URNIC_QP_MAX_DEST_RD_ATOMIC) && attr->max_dest_rd_atomic > URNIC_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & URNIC_QP_DEST_QPN) && attr->dest_qp_num > 0xffffff)
		return -EINVAL;
	/* ON_DEMAND says nothing of a QP, but applications pass their regions' flags
	 * (rdma-core's ODP tests do): mlx5 and rxe ignore it there. */
	if ((mask & URNIC_QP_ACCESS_FLAGS) &&
	    (attr->access & ~(uint32_t)(URNIC_ACCESS_LOCAL_WRITE | URNIC_ACCESS_REMOTE_WRITE |
					URNIC_ACCESS_REMOTE_READ | URNIC_ACCESS_REMOTE_ATOMIC |
					URNIC_ACCESS_MW_BIND | URNIC_ACCESS_FLUSH_GLOBAL |
					URNIC_ACCESS_FLUSH_PERSISTENT | URNIC_ACCESS_ON_DEMAND)))
		return -EINVAL;
	return 0;
}

uint64_t urnic_qp_rto_ns(uint8_t timeout)
{
	/* IBTA 9.7.6.1.3: local ACK timeout = 4.096 us * 2^timeout; 0 disables it. */
	if (timeout == 0)
		return 0;
	return 4096ull << timeout;
}

uint32_t urnic_mtu_bytes(int ib_mtu)
{
	return ib_mtu >= 1 && ib_mtu <= 5 ? 128u << ib_mtu : 0;
}
