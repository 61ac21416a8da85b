/* SPDX-License-Identifier: MIT */
/*
 * harness.h - a live RC engine for the fuzz targets: what an input is made of, and what
 * the seed generator (seeds.c) must know to write inputs that go deep.
 *
 * Each input builds a fresh engine (src/engine, sans-I/O, ICRC check off as lwIP's
 * checksum switch) with two RC QPs in RTS towards a fake peer: QP R, a responder with
 * posted receives and regions of every kind of remote right, and QP Q, a requester with
 * SEND/WRITE/READ/atomic work outstanding so its completer is live. The input is a
 * sequence of records, each one packet from the peer (urnic_engine_rx), after which the
 * harness runs a device pass (progress, timers, progress, flush) on a fake clock and
 * checks its invariants (harness.c). Out of scope: UC, UD, SRQ, the ICRC itself (the
 * wire fuzz target covers the codecs).
 *
 * Record: ctl (1 byte), length (2 bytes, big-endian), that many packet bytes (BTH ..
 * ICRC), clipped to what is left of the input. ctl:
 *   bits 0-1  the QP the packet goes to: 0 or 3 the target's own (R for the responder
 *             target, Q for the completer target), 1 the other one, 2 the DestQP as sent
 *   bit 2     the PSN as sent; otherwise it is relative: the harness adds the initial
 *             PSN of the stream it belongs to (the QP's rq_psn for requests, its sq_psn
 *             for responses), so a seed's PSN 0 is the first PSN of the connection
 *   bits 3-5  the fake clock advances by fuzz_clock_step_ns[] first (timers fire)
 *   bit 6     no device pass after this packet (the next one arrives in the same batch)
 *   bit 7     post more work first: a receive on R, or the next planned WQE on Q
 * An R_Key (RETH or AtomicETH) below FR_COUNT selects region k of enum fuzz_region (its
 * real key; FR_DEAD's is stale) and the address is taken as an offset into it; any
 * other R_Key is used as it is.
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

enum {
	FUZZ_REC_HDR = 3,
	FUZZ_CTL_QP_MASK = 0x03,
	FUZZ_CTL_QP_OTHER = 0x01,
	FUZZ_CTL_QP_RAW = 0x02,
	FUZZ_CTL_PSN_RAW = 0x04,
	FUZZ_CTL_CLOCK_SHIFT = 3,
	FUZZ_CTL_NO_PASS = 0x40,
	FUZZ_CTL_POST = 0x80,
	FUZZ_MAX_RECORDS = 512,
	FUZZ_MTU = 1024,
	FUZZ_R_RQ_PSN = 0xffff00, /* R's requests: 256 PSNs to the 24-bit wrap */
	FUZZ_Q_SQ_PSN = 0xfffff8, /* Q's requests wrap after 8 PSNs */
};

/* Regions an R_Key selector names, in this order. */
enum fuzz_region {
	FR_RW,	   /* remote write */
	FR_RO,	   /* remote read */
	FR_ATOMIC, /* remote atomic */
	FR_RECV,   /* R's receive buffers: local write only */
	FR_SRC,	   /* Q's SEND/WRITE source: no right at all */
	FR_DST,	   /* Q's READ and atomic results: local write only */
	FR_DEAD,   /* registered, then deregistered: its key is stale */
	FR_COUNT
};

/* Q's work, posted in this order at start (and again, one by one, by ctl bit 7). */
struct fuzz_wqe_plan {
	uint32_t opcode; /* enum urnic_wr_opcode */
	uint32_t length;
	uint32_t dst_off; /* READ/atomic: where in FR_DST the result goes */
	uint32_t flags;	  /* enum urnic_send_flag */
};

extern const struct fuzz_wqe_plan fuzz_plan[];
extern const unsigned fuzz_plan_len;
extern const uint64_t fuzz_clock_step_ns[8];

/* Runs one input; aborts (a crash for libFuzzer) when an invariant breaks. */
int fuzz_rc_one(const uint8_t *data, size_t size, enum fuzz_role role);

/* The libFuzzer entry point of each target (fuzz_responder.c, fuzz_completer.c). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
