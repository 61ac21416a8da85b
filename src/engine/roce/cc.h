/* SPDX-License-Identifier: MIT */
/*
 * cc.h - DCQCN in the RoCEv2 engine (cc/dcqcn.h has the algorithm, sans I/O): ECN-capable
 * packets out, a CNP back for CE-marked ones in, a connected QP's sends paced at the rate
 * its CNPs leave it. On a device with cfg.dcqcn only; without it CNPs are counted and
 * ignored, as by a NIC whose reaction point is off.
 */
#ifndef URNIC_ENGINE_ROCE_CC_H
#define URNIC_ENGINE_ROCE_CC_H

#include "engine/core.h"

/* RFC 3168 §5: the ECN field, the two low bits of the IPv4 TOS / IPv6 traffic class. */
enum {
	URNIC_ECN_MASK = 0x03,
	URNIC_ECN_ECT0 = 0x02,
	URNIC_ECN_CE = 0x03,
};

/* The bytes of a READ response around its payload: BTH, AETH, ICRC. */
enum { URNIC_CC_READ_RESP_HDR_BYTES = 20 };

/* The slow paths of the inline functions below (cc.c). */
void urnic_roce_cc_rx_ce(struct urnic_engine *e, struct urnic_qp *qp);
bool urnic_roce_cc_pace_wqe(struct urnic_engine *e, struct urnic_qp *qp,
			    const struct urnic_send_wqe *w);
bool urnic_roce_cc_pace(struct urnic_engine *e, struct urnic_qp *qp, uint32_t bytes);
void urnic_roce_cc_wake(struct urnic_engine *e, struct urnic_qp *qp, uint64_t *next);

/* The packet p of QP qp is about to be built: ECN-capable (ECT(0)) when DCQCN runs on
 * the QP, unless the address vector's traffic class already names an ECN codepoint.
 * Inline, as the checks below: every packet passes here, and DCQCN is off by default. */
static inline void urnic_roce_cc_mark(const struct urnic_engine *e, const struct urnic_qp *qp,
				      struct urnic_txpkt *p)
{
	if (e->cfg.dcqcn && qp->ops->connected && !(p->dst.traffic_class & URNIC_ECN_MASK))
		p->dst.traffic_class |= URNIC_ECN_ECT0;
}

/* A packet that passed its QP's checks arrived with IP TOS tos: CE is counted, and on a
 * connected QP of a DCQCN device gets a CNP to the peer's QP, at most one per interval. */
static inline void urnic_roce_cc_rx_tos(struct urnic_engine *e, struct urnic_qp *qp, uint8_t tos)
{
	if ((tos & URNIC_ECN_MASK) == URNIC_ECN_CE)
		urnic_roce_cc_rx_ce(e, qp);
}

/* A CNP for qp that passed the checks of any packet to a connected QP (rx.c): the QP's
 * reaction point takes it. Runs with the QP's counters selected. */
void urnic_roce_cc_rx_cnp(struct urnic_engine *e, struct urnic_qp *qp);

/* Whether the requester may send the next packet of w now (its rate, if cut). If not,
 * the QP waits, and urnic_roce_cc_timers wakes it. */
static inline bool urnic_roce_cc_may_send(struct urnic_engine *e, struct urnic_qp *qp,
					  const struct urnic_send_wqe *w)
{
	return !qp->cc.rp_on || urnic_roce_cc_pace_wqe(e, qp, w);
}

/* The same for a READ response of payload bytes, which the responder sends at the QP's
 * rate too: a NIC's rate limiter holds all that its QP sends. */
static inline bool urnic_roce_cc_may_respond(struct urnic_engine *e, struct urnic_qp *qp,
					     uint32_t payload)
{
	return !qp->cc.rp_on || urnic_roce_cc_pace(e, qp, URNIC_CC_READ_RESP_HDR_BYTES + payload);
}

/* A paced QP: fires when its wait is over or its rate is due to rise, else lowers
 * *next to that. */
static inline void urnic_roce_cc_timers(struct urnic_engine *e, struct urnic_qp *qp, uint64_t *next)
{
	if (qp->cc.paced)
		urnic_roce_cc_wake(e, qp, next);
}

#endif
