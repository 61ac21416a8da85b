/* SPDX-License-Identifier: MIT */
/*
 * hold.h - the answer hold (hold.c): whether an RC QP's ACK or a UC QP's send
 * completions wait for the application's answer, so that they leave with it.
 */
#ifndef URNIC_ENGINE_ROCE_HOLD_H
#define URNIC_ENGINE_ROCE_HOLD_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/roce/msg.h"

enum {
	/* A UC QP holds once the peer's request came within this long of completions
	 * released without an answer (hold.c). */
	ROCE_UC_ANSWER_WINDOW_NS = 2000000,
};

/* The hold time, or 0 if `times` of it and the slack do not fit under a quarter of the
 * QP's retransmission timeout. */
uint64_t urnic_roce_hold_time(const struct urnic_engine *e, const struct urnic_qp *qp,
			      uint64_t times);

/* Whether the RC responder's pending ACK waits now (arming or extending the hold);
 * answered: the QP's requester sent in this pass, so the ACK can leave behind it. */
bool urnic_roce_hold_ack(struct urnic_engine *e, struct urnic_qp *qp, bool answered);

/* The RC requester just sent: an ACK that left alone shortly before could have been
 * carried, so the QP's ACKs are held from now on. */
void urnic_roce_hold_answered(struct urnic_engine *e, struct urnic_qp *qp);

/* Whether the UC send completions just due wait for the peer's answer (a roce_hold_fn
 * for urnic_roce_unreliable_send). */
bool urnic_roce_hold_uc_comp(struct urnic_engine *e, struct urnic_qp *qp);

#endif
