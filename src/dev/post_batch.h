/* SPDX-License-Identifier: MIT */
/*
 * post_batch.h - post batching: which posts send at once and which leave their work to
 * the next pass, so that a streak of posts between two polls goes out together. The
 * policy and its counters only; the device (pipeline.c) asks urnic_post_batch_defers()
 * on each doorbell, tells it of polls and passes, and adds what only it knows (whether
 * a sleeping engine thread would be woken too late). Context: any thread, no lock: every
 * field is a relaxed atomic, a hint whose staleness costs at most one early send.
 */
#ifndef URNIC_DEV_POST_BATCH_H
#define URNIC_DEV_POST_BATCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * Posts in a row are sent together. An application that fills its send queue between
 * two polls (ib_write_bw: ~100 posts after each completion it reaps) paid a pass, and
 * a sendmmsg of ~5 us, per message: 0.18 Mpps of 8-byte WRITEs. A post of a small
 * request (a few packets: post.c) now leaves it in the send queue for the next pass
 * when it is in the middle of such a streak: it follows another post by less than
 * URNIC_POST_STREAK_NS with no ibv_poll_cq between, the streak before this one was at least
 * URNIC_POST_STREAK_MIN posts long, and this one is not among the last URNIC_POST_STREAK_TAIL
 * posts the streak before predicts. The post after URNIC_POST_BATCH_MAX such posts, the
 * streak's tail, the next empty poll or a pass of the engine thread sends them
 * together, GSO runs of equal packets (~1.1 Mpps). A ping-pong, whose streaks are one
 * post long, always sends at once, and so does an application that posts a few
 * requests and then waits on memory without polling. Should a streak stop short of
 * what the last one predicted and the application then only watch memory, the rest
 * leaves with the engine thread's next pass: it sleeps at most URNIC_APP_NAP_MAX_NS
 * after the application polled (~60 us more here, tests/system/verbs_post_streak.c),
 * and a post that finds it asleep for longer sends at once instead (nothing answers
 * UC or UD, so no ACK would wake it).
 */
enum {
	URNIC_POST_STREAK_NS = 5000,
	URNIC_POST_STREAK_MIN = 8,
	URNIC_POST_STREAK_TAIL = 2,
	URNIC_POST_BATCH_MAX = 32,
};

struct urnic_post_batch {
	bool on; /* posts in a row may be sent together (URNIC_POST_BATCH) */
	/* A post came since the last ibv_poll_cq; how many, and in the streak before
	 * (between the two polls before); when the last one returned; how many left their
	 * work to the next pass. */
	_Atomic bool posting;
	_Atomic uint32_t streak, last_streak;
	_Atomic uint64_t last_post_ns;
	_Atomic uint32_t deferred;
};

/* A post: returns how many posts there have been since the last poll, this one too. */
static inline uint32_t urnic_post_batch_post(struct urnic_post_batch *b)
{
	uint32_t n = atomic_load_explicit(&b->streak, memory_order_relaxed) + 1;

	atomic_store_explicit(&b->streak, n, memory_order_relaxed);
	atomic_store_explicit(&b->posting, true, memory_order_relaxed);
	return n;
}

/* Whether the post that makes n posts since the last poll may leave its work to the next
 * pass at time now (engine_started: an engine thread will run one). Counts it as left
 * when it may; the caller may still send it (urnic_post_batch_post_done either way). */
static inline bool urnic_post_batch_defers(struct urnic_post_batch *b, uint32_t n, uint64_t now,
					   bool engine_started)
{
	uint32_t before = atomic_load_explicit(&b->last_streak, memory_order_relaxed);

	return b->on && n >= 2 && before >= URNIC_POST_STREAK_MIN &&
	       n + URNIC_POST_STREAK_TAIL <= before &&
	       now - atomic_load_explicit(&b->last_post_ns, memory_order_relaxed) <
		       URNIC_POST_STREAK_NS &&
	       engine_started &&
	       atomic_fetch_add_explicit(&b->deferred, 1, memory_order_relaxed) + 1 <
		       URNIC_POST_BATCH_MAX;
}

/* The post returns at time now. */
static inline void urnic_post_batch_post_done(struct urnic_post_batch *b, uint64_t now)
{
	atomic_store_explicit(&b->last_post_ns, now, memory_order_relaxed);
}

/* A pass runs: it sends what posts left to it. */
static inline void urnic_post_batch_pass(struct urnic_post_batch *b)
{
	if (atomic_load_explicit(&b->deferred, memory_order_relaxed))
		atomic_store_explicit(&b->deferred, 0, memory_order_relaxed);
}

/* ibv_poll_cq was called, whatever it found: a streak of posts ends. */
static inline void urnic_post_batch_polled(struct urnic_post_batch *b)
{
	if (atomic_load_explicit(&b->posting, memory_order_relaxed)) {
		atomic_store_explicit(&b->posting, false, memory_order_relaxed);
		atomic_store_explicit(&b->last_streak,
				      atomic_load_explicit(&b->streak, memory_order_relaxed),
				      memory_order_relaxed);
		atomic_store_explicit(&b->streak, 0, memory_order_relaxed);
	}
}

#endif
