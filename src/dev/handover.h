/* SPDX-License-Identifier: MIT */
/*
 * handover.h - the hand-over of a device's NIC pipeline between application threads
 * (ibv_poll_cq, ibv_post_send: latency mode) and the device's engine thread, as two
 * state machines with named states (handover.def): who runs the passes (pipe), and where
 * the engine thread is (eng), which says whether a doorbell must wake it. handover.c
 * draws both and gives each transition's memory order.
 *
 * Two words, not one: an application's pass runs while the engine thread sleeps, so the
 * two are independent; their product would be a dozen states. Out of scope: what a pass
 * does and who asks for one (pipeline.c), how long the engine thread sleeps
 * (engine_thread.c). The device lock still excludes control verbs; the pipe state says
 * which thread takes it for a pass.
 */
#ifndef URNIC_DEV_HANDOVER_H
#define URNIC_DEV_HANDOVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

enum urnic_pipe_state {
#define URNIC_PIPE_STATE(name, meaning) URNIC_PIPE_##name,
#include "dev/handover.def"
	URNIC_PIPE_NSTATES
};

enum urnic_eng_state {
#define URNIC_ENG_STATE(name, meaning) URNIC_ENG_##name,
#include "dev/handover.def"
	URNIC_ENG_NSTATES
};

extern const char *const urnic_pipe_state_names[URNIC_PIPE_NSTATES];
extern const char *const urnic_eng_state_names[URNIC_ENG_NSTATES];

/* A state's name ("APP_ARMED"), or "?" for a value that is none. */
const char *urnic_pipe_state_name(int s);
const char *urnic_eng_state_name(int s);

struct urnic_handover {
	_Atomic int pipe; /* enum urnic_pipe_state */
	_Atomic int eng;  /* enum urnic_eng_state */
	/* When the engine thread wakes by itself from the sleep it chose; UINT64_MAX:
	 * never, or not chosen yet. Kept beside the state because it is a time. */
	_Atomic uint64_t wake_ns;
	/* An application's pass asks the engine thread to watch the sockets from its next
	 * sleep on (pipeline.c). A request, not a state: it outlives the engine thread's
	 * transitions until that thread next chooses how to sleep. */
	_Atomic bool watch_due;
};

/* What urnic_handover_claim gave the caller. */
enum urnic_pipe_claim {
	URNIC_CLAIM_RUN,    /* the caller runs passes: it takes the device lock, then leaves */
	URNIC_CLAIM_HANDED, /* the thread in a pass runs one more for the caller */
	URNIC_CLAIM_BUSY,   /* another thread is in a pass and the caller did not insist */
	URNIC_CLAIM_OFF,    /* stopped or stopping: no pass */
};

/* Both machines stopped (STOPPED, OFF). Context: device setup, no other thread. */
void urnic_handover_init(struct urnic_handover *h);

/*
 * Generic transitions, checked against the diagrams' tables: 0, -EINVAL for one the
 * diagram does not have (refused: nothing changes), -EAGAIN when the state is not
 * `from`. The named transitions below are made of these; tests drive them directly.
 */
bool urnic_pipe_legal(int from, int to);
bool urnic_eng_legal(int from, int to);
int urnic_handover_pipe_move(struct urnic_handover *h, int from, int to);
int urnic_handover_eng_move(struct urnic_handover *h, int from, int to);

/* ---- start and stop. Context: the device's open lock (device.c). ---- */

/* STOPPED -> IDLE and OFF -> AWAKE, before the engine thread is created. 0 or -EAGAIN
 * when not stopped. */
int urnic_handover_start(struct urnic_handover *h);
/* Any engine state but OFF -> STOPPING; the caller then rings the doorbell and joins. */
void urnic_handover_stop_engine(struct urnic_handover *h);
/* STOPPING -> OFF, once the engine thread has been joined. */
int urnic_handover_engine_gone(struct urnic_handover *h);
/* IDLE -> STOPPED (true), or a pass's owner state -> DRAINING (false: call again once
 * its owner has left). true when already STOPPED. */
bool urnic_handover_drain(struct urnic_handover *h);
/* Whether passes may run (not STOPPED). */
bool urnic_handover_started(struct urnic_handover *h);

/* ---- the pipe. Context: any thread; leave only by the thread that claimed. ---- */

/* A thread that wants a pass: engine, whether it is the engine thread; must, whether the
 * pass has to run (a doorbell, the engine thread) or is only tried (an application
 * polling an empty CQ). */
enum urnic_pipe_claim urnic_handover_claim(struct urnic_handover *h, bool engine, bool must);
/* The owner, after a pass and after unlocking: 1 when a pass was asked for meanwhile
 * (it runs one more, and the state stays its own), 0 when it left, -EINVAL when the
 * caller owns no pass (refused). */
int urnic_handover_leave(struct urnic_handover *h);

/* ---- the engine thread's sleep. Context: the engine thread. ---- */

/* AWAKE -> DROWSY: it will sleep and looks for work once more after this. 0, or
 * -EAGAIN when it is STOPPING. */
int urnic_handover_doze(struct urnic_handover *h);
/* DROWSY -> AWAKE: that last look found work. */
int urnic_handover_rouse(struct urnic_handover *h);
/* DROWSY -> ASLEEP, or -> NAPPING when blind; NAPPING -> ASLEEP at once if an
 * application asked it to watch the sockets (urnic_handover_ask_watch). Returns the
 * state it sleeps in, or URNIC_ENG_STOPPING. */
enum urnic_eng_state urnic_handover_settle(struct urnic_handover *h, bool blind);
/* Publishes when it wakes by itself (0: never), once the sleep is settled. */
void urnic_handover_sleeps_until(struct urnic_handover *h, uint64_t wake_ns);
/* ASLEEP or NAPPING -> AWAKE after ppoll; the wake time goes back to unknown. 0, or
 * -EAGAIN when it is STOPPING. */
int urnic_handover_wake(struct urnic_handover *h);
bool urnic_handover_stopping(struct urnic_handover *h);

/* ---- readers. Context: any thread, no lock. ---- */

static inline bool urnic_eng_waits(int s)
{
	return s == URNIC_ENG_DROWSY || s == URNIC_ENG_ASLEEP || s == URNIC_ENG_NAPPING;
}

/*
 * Whether the engine thread waits for a doorbell (DROWSY, ASLEEP, NAPPING), after the
 * caller published work (a release store of a ring's prod, a doorbell bit), and until
 * when it sleeps by itself (*wake_ns, UINT64_MAX: never or not known yet). The seq_cst
 * fence orders the caller's store before the load of the state and pairs with the fence
 * in urnic_handover_doze (the store-buffering pattern): of two seq_cst fences one comes
 * first, and what was stored before it is seen after the other (C11 7.17.3p6), so either
 * the engine thread's last look after DROWSY finds the work, or this finds it waiting.
 * The load is acquire so that the wake time read after it is not older than the state.
 */
static inline bool urnic_handover_must_ring(struct urnic_handover *h, uint64_t *wake_ns)
{
	int s;

	atomic_thread_fence(memory_order_seq_cst);
	s = atomic_load_explicit(&h->eng, memory_order_acquire);
	if (!urnic_eng_waits(s))
		return false;
	if (wake_ns)
		*wake_ns = atomic_load_explicit(&h->wake_ns, memory_order_acquire);
	return true;
}

/*
 * The same without the fence, for a thread that has just left a pass: the engine
 * thread's DROWSY came before its last pass, which this thread's pass followed on the
 * pipe word (a seq_cst RMW chain), so the plain seq_cst load cannot miss it. Used after
 * every pass of a polling application, where the fence would cost a few percent of a
 * polling turn.
 */
static inline bool urnic_handover_sleeping(struct urnic_handover *h, uint64_t *wake_ns)
{
	int s = atomic_load(&h->eng);

	if (!urnic_eng_waits(s))
		return false;
	*wake_ns = atomic_load(&h->wake_ns);
	return true;
}

/* An application's pass asks the engine thread to watch the sockets from its next sleep
 * on. Returns true if it naps blind now: the caller rings the doorbell. */
bool urnic_handover_ask_watch(struct urnic_handover *h);

#endif
