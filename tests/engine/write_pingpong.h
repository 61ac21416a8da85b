/* SPDX-License-Identifier: MIT */
/*
 * write_pingpong.h - ib_write_lat's loop over the engine tests' fabric (fabric.h).
 *
 *   host 0 QP a <--- fabric ---> QP b host 1, RC or UC
 *
 * Each side WRITEs WPP_LEN bytes into the other's buffer, the first byte a tag, once
 * the peer's WRITE has put the tag it waits for into its own buffer (the application's
 * spin on memory), then waits for its own completion. Used by the tests of the holds
 * for the application's answer: the RC responder's ACK (test_ack_hold.c), the UC
 * requester's completion (test_uc_hold.c).
 */
#ifndef URNIC_TESTS_ENGINE_WRITE_PINGPONG_H
#define URNIC_TESTS_ENGINE_WRITE_PINGPONG_H

#include "fabric.h"

enum { WPP_LEN = 8 };

struct wpp {
	struct fab_pair p;
	struct fab_buf ba, bb; /* each side's buffer: [0, WPP_LEN) is written by the peer */
	struct fab_conn c;
	struct fabric *f; /* p.f */
};

/* Two QPs of type (URNIC_QPT_RC or URNIC_QPT_UC) connected with the given timeout
 * attribute, and their buffers. wpp_close frees it all. */
void wpp_open(struct wpp *v, enum urnic_qp_type type, uint8_t timeout, uint64_t seed);
void wpp_close(struct wpp *v);

/* The same, after rounds of the ping-pong (both sides seen to answer) and quiet. */
void wpp_open_answering(struct wpp *v, enum urnic_qp_type type, uint8_t timeout, uint64_t seed,
			int rounds);

/* WRITE of WPP_LEN bytes from the sender's buffer at 64 to the peer's at 0, the first
 * byte set to tag, signaled, wr_id tag. */
void wpp_write(struct wpp *v, bool from_a, uint8_t tag);

/* Runs until tag is in buffer b (the application's spin on memory), stopping right
 * after its delivery. */
void wpp_until_byte(struct wpp *v, const struct fab_buf *b, uint8_t tag);

/* wpp_until_byte, then on RC one pass: the pass that took the WRITE in decides about
 * its ACK before the answer is posted, as on the device (the receive and the ACK are one
 * pass there). UC has no ACK; a pass with nothing to do would let the fabric's clock
 * jump to the next deadline, a held completion's. */
void wpp_wait_byte(struct wpp *v, const struct fab_buf *b, uint8_t tag);

/* Waits for q's next send completion and checks it is the WRITE tag. */
void wpp_reap(struct wpp *v, struct fab_qp *q, uint8_t tag);

/* The loop, both sides interleaved as their threads would run; a starts with tag 2,
 * round r is a's 2r and b's 2r+1, and a does not answer b's last WRITE. Returns how many
 * of a's completions came with b's answer already in a's buffer. */
int wpp_run(struct wpp *v, int rounds);

#endif
