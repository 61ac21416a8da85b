/* SPDX-License-Identifier: MIT */
/*
 * harness.h - a live engine for the fuzz targets: what an input is made of, and what
 * the seed generator (seeds.c) must know to write inputs that go deep.
 *
 * Each input builds a fresh engine (src/engine, sans-I/O, ICRC check off as lwIP's
 * checksum switch) with two QPs in RTS towards a fake peer: QP R, a responder with
 * posted receives and regions of every kind of remote right, and QP Q, a requester with
 * work outstanding so its completer is live. The mode (one per target) says what they
 * are: RC, UC (no ACKs), UD (Q_Keys, multicast groups), RC with both QPs taking
 * their receives from one SRQ, R an XRC receive QP whose requests name XRC SRQs, or R
 * an RC QP on a tag-matching SRQ. The input is a sequence of records, each one packet from
 * the peer (urnic_engine_rx) or one action of the application (deregister, rebind,
 * destroy a QP...), after which the harness runs a device pass (progress, timers,
 * progress, flush) on a fake clock and checks its invariants (harness.c). Out of scope:
 * the ICRC itself (the wire fuzz target covers the codecs).
 *
 * Record: ctl (1 byte), length (2 bytes, big-endian), that many bytes, clipped to what
 * is left of the input. ctl:
 *   bits 0-1  the QP the packet goes to: 0 the target's own (R for the responder
 *             targets, Q for the completer target), 1 the other one, 2 the DestQP as
 *             sent; 3: the record is an application action (below), not a packet
 *   bit 2     packets: the PSN as sent; otherwise it is relative: the harness adds the
 *             initial PSN of the stream it belongs to (the QP's rq_psn for requests,
 *             its sq_psn for responses), so a seed's PSN 0 is the first PSN of the
 *             connection. Actions: the action is the other QP's (Q for the responder
 *             targets)
 *   bits 3-5  the fake clock advances by fuzz_clock_step_ns[] first (timers fire)
 *   bit 6     no device pass after this record (the next packet arrives in the same
 *             batch)
 *   bit 7     post more work first: a receive on R (RC responder, SRQ: on the SRQ), the
 *             next planned WQE on Q (RC completer), both (UC, UD)
 * A packet's bytes are a RoCEv2 UDP payload (BTH .. ICRC). An R_Key (RETH, AtomicETH)
 * below FR_COUNT selects region k of enum fuzz_region (its current key; a stale one
 * once deregistered) and the address is taken as an offset into it; FR_COUNT + w
 * selects window slot w (the R_Key the application last gave it) with the address an
 * offset into the region it was last bound to; an IETH R_Key is mapped the same way.
 * Any other R_Key is used as it is. A DETH Q_Key of 0 is the receiving QP's Q_Key. A
 * packet whose DestQP is 0xFFFFFF (multicast, after the above) is addressed to group
 * (PSN & 1). The device runs DCQCN: a packet whose BTH FECN bit is set arrives with
 * ECN CE in its IP header, and CNPs (BTH opcode 0x81) cut the QP's rate.
 * An action's bytes: the action (enum fuzz_action, modulo FA_COUNT) and its arguments,
 * missing ones 0, as the comments of enum fuzz_action say. An action that the verbs
 * layer would refuse before reaching the engine (a window not allocated, a QP
 * destroyed, a rereg with no change) does nothing.
 */
#ifndef URNIC_TESTS_FUZZ_HARNESS_H
#define URNIC_TESTS_FUZZ_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "queue/wq.h"

enum fuzz_role {
	FUZZ_RESPONDER, /* records go to QP R unless they say otherwise */
	FUZZ_COMPLETER, /* records go to QP Q unless they say otherwise */
};

/* What R and Q are: one mode per target. */
enum fuzz_mode {
	FUZZ_MODE_RC,  /* fuzz_responder, fuzz_completer */
	FUZZ_MODE_UC,  /* fuzz_uc: R a UC responder, Q a UC requester */
	FUZZ_MODE_UD,  /* fuzz_ud: UD QPs, Q_Key FUZZ_QKEY, two multicast groups */
	FUZZ_MODE_SRQ, /* fuzz_srq: RC, both QPs take their receives from one SRQ */
	FUZZ_MODE_XRC, /* fuzz_xrc: R an XRC receive QP, its SRQs named by each request */
	FUZZ_MODE_TM,  /* fuzz_tm: R an RC QP on a tag-matching SRQ (IBV_SRQT_TM) */
	FUZZ_MODE_COUNT
};

enum {
	FUZZ_REC_HDR = 3,
	FUZZ_CTL_QP_MASK = 0x03,
	FUZZ_CTL_QP_OTHER = 0x01,
	FUZZ_CTL_QP_RAW = 0x02,
	FUZZ_CTL_ACTION = 0x03,
	FUZZ_CTL_PSN_RAW = 0x04,
	FUZZ_CTL_ACT_OTHER = 0x04,
	FUZZ_CTL_CLOCK_SHIFT = 3,
	FUZZ_CTL_NO_PASS = 0x40,
	FUZZ_CTL_POST = 0x80,
	FUZZ_MAX_RECORDS = 512,
	FUZZ_MTU = 1024,
	FUZZ_R_RQ_PSN = 0xffff00, /* R's requests: 256 PSNs to the 24-bit wrap */
	FUZZ_Q_SQ_PSN = 0xfffff8, /* Q's requests wrap after 8 PSNs */
	FUZZ_MW_SLOTS = 4,	  /* memory windows the application may hold */
	FUZZ_MCAST_GROUPS = 2,
	FUZZ_QKEY = 0x11111111, /* R's and Q's Q_Key (UD), the one the rxe capture uses */
	FUZZ_SRQ_DEPTH = 16,
	/* XRC SRQ slots (FUZZ_MODE_XRC): 0 and 1 in R's domain (1 with the other PD), 2 in
	 * another domain. An XRCETH SRQ number below this selects a slot's number (the last
	 * one it had: stale once destroyed); any other is used as it is. */
	FUZZ_XSRQ_SLOTS = 3,
	FUZZ_XSRQ_FOREIGN = 2,
	/* Tag slots (FUZZ_MODE_TM): a tagged buffer each, at FUZZ_TM_BUF_OFF + slot *
	 * FUZZ_TM_BUF_MAX in region FR_WIN, which nothing else writes but windows. */
	FUZZ_TM_SLOTS = 4,
	FUZZ_TM_BUF_OFF = 4096,
	FUZZ_TM_BUF_MAX = 1024,
	/* A QPN carries an 8-bit generation that skips 0: a slot reused at once would give
	 * out the same QPN after this many creations. engine.c takes slots in turn, so it
	 * does not; the seeds churn this many QPs to look for a new QP under an old number. */
	FUZZ_QPN_PERIOD = 255,
};

/* Regions an R_Key selector names, in this order. */
enum fuzz_region {
	FR_RW,	   /* remote write (and window binding) */
	FR_RO,	   /* remote read (and window binding) */
	FR_ATOMIC, /* remote atomic */
	FR_RECV,   /* R's receive buffers: local write only */
	FR_SRC,	   /* Q's SEND/WRITE source: no right at all */
	FR_DST,	   /* Q's READ and atomic results: local write only */
	FR_DEAD,   /* registered, then deregistered: its key is stale */
	FR_WIN,	   /* local write and window binding: reachable only through windows */
	FR_COUNT
};

/* Application actions (ctl bits 0-1 = 3). a0, a1... are the bytes after the action's;
 * "the QP" is R, or Q with ctl bit 2. As src/verbs does each, on the engine's objects. */
enum fuzz_action {
	FA_DEREG,	 /* a0 region: ibv_dereg_mr (EBUSY while windows are bound) */
	FA_REG,		 /* a0 region: registered again (new key) where it maps now */
	FA_REREG,	 /* a0 region, a1 what (bit 0 translation: to its other buffer, bit 1
			  * PD: to the other PD, bit 2 access: a2 & 0x1f): ibv_rereg_mr */
	FA_MW_ALLOC,	 /* a0 slot, a1 bit 0: type 1 (0) or 2 (1): ibv_alloc_mw */
	FA_MW_DEALLOC,	 /* a0 slot: ibv_dealloc_mw (bound or not) */
	FA_BIND,	 /* a0 slot, a1 region, a2-a3 offset, a4-a5 length (big-endian), a6
			  * rights: a BIND_MW work request posted on the QP (length 0: a type 1
			  * window is unbound) */
	FA_INVALIDATE,	 /* a0 slot: a LOCAL_INV work request of its R_Key on the QP */
	FA_MODIFY_ERR,	 /* the QP to the error state (ibv_modify_qp) */
	FA_DESTROY,	 /* ibv_destroy_qp (EBUSY while attached to a group) */
	FA_CREATE,	 /* a destroyed QP made again in RTS, after a0 other QPs were created
			  * and destroyed (a0 = FUZZ_QPN_PERIOD - 2: R's old QPN would come back
			  * if slots were reused at once) */
	FA_MCAST_ATTACH, /* a0 group: ibv_attach_mcast (UD only) */
	FA_MCAST_DETACH, /* a0 group: ibv_detach_mcast */
	FA_SRQ_ARM,	 /* a0 limit (modulo FUZZ_SRQ_DEPTH + 1): ibv_modify_srq IBV_SRQ_LIMIT */
	FA_XSRQ_CREATE,	 /* a0 slot: ibv_create_srq_ex IBV_SRQT_XRC, its receives posted (XRC) */
	FA_XSRQ_DESTROY, /* a0 slot: ibv_destroy_srq, its CQ with it (XRC) */
	FA_XSRQ_POST,	 /* a0 slot: ibv_post_srq_recv of the next receive template (XRC) */
	FA_TM_ADD,	 /* a0 slot, a1 tag, a2 bit 0: mask 0 (any tag), a3 length (64 << a3 %
			  * 5): IBV_WR_TAG_ADD of the slot's buffer, signaled (TM) */
	FA_TM_DEL,	 /* a0 slot: IBV_WR_TAG_DEL of its handle, signaled (TM) */
	FA_TM_SYNC,	 /* IBV_WR_TAG_SYNC with the unexpected messages polled so far (TM) */
	FA_COUNT
};

/* Q's work, posted in this order at start (and again, one by one, by ctl bit 7). */
struct fuzz_wqe_plan {
	uint32_t opcode; /* enum urnic_wr_opcode */
	uint32_t length;
	uint32_t dst_off; /* READ/atomic: where in FR_DST the result goes */
	uint32_t flags;	  /* enum urnic_send_flag */
};

/* The RC plan (fuzz_plan_of(FUZZ_MODE_RC)), which the completer's seeds answer. */
extern const struct fuzz_wqe_plan fuzz_plan[];
extern const unsigned fuzz_plan_len;
extern const uint64_t fuzz_clock_step_ns[8];

/* Q's plan in a mode: UC posts SENDs and WRITEs, UD SENDs only. */
const struct fuzz_wqe_plan *fuzz_plan_of(enum fuzz_mode mode, unsigned *len);

/* Runs one input; aborts (a crash for libFuzzer) when an invariant breaks. */
int fuzz_one(const uint8_t *data, size_t size, enum fuzz_mode mode, enum fuzz_role role);
int fuzz_rc_one(const uint8_t *data, size_t size, enum fuzz_role role);

/* The libFuzzer entry point of each target (fuzz_<target>.c). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
