/* SPDX-License-Identifier: MIT */
/*
 * handover.c - the two state machines of handover.h: who runs a device's passes, and
 * where its engine thread is.
 *
 * Who runs the pipeline (pipe), like rxe's task states (rxe_task.c: IDLE, BUSY, ARMED,
 * DRAINING, DRAINED) with the owner named, since the engine thread sleeps differently
 * when an application holds the pipeline:
 *
 *   STOPPED --start--> IDLE --claim--> ENGINE --ask--> ENGINE_ARMED --ask--> itself
 *                       ^                |                  |
 *                       +-----leave------+                  |
 *                                        ^------again-------+
 *
 *                      IDLE --claim--> APP ------ask--> APP_ARMED ------ask--> itself
 *                       ^                |                  |
 *                       +-----leave------+                  |
 *                                        ^------again-------+
 *
 *   IDLE --drain--> STOPPED
 *   ENGINE, APP, ENGINE_ARMED, APP_ARMED --drain--> DRAINING --last--> STOPPED
 *
 * Passes are combined, never waited for: a thread that must have one run (a doorbell,
 * the engine thread) and finds another in a pass asks it (-> *_ARMED), and the owner runs
 * one more before it leaves (again). No thread sleeps on the device lock for another's
 * pass: an engine thread blocked behind a polling application cost the ib_write_bw
 * client 0.9 futex calls per 64 KiB message and a sixth of its CPU (37.8 -> 31.1 us per
 * message once combined). The owner still takes the device lock for its pass, against
 * control verbs only.
 *
 * Where the engine thread is (eng); only the engine thread moves it, but for start and
 * stop (the device's open lock):
 *
 *   OFF --start--> AWAKE --doze--> DROWSY --settle--> ASLEEP --wake--> AWAKE
 *                    ^                |  |                 ^
 *                    +-----rouse------+  |                 | watch
 *                                        |                 |
 *                                        +--settle------> NAPPING --wake--> AWAKE
 *                                           (blind)
 *
 *   AWAKE, DROWSY, ASLEEP, NAPPING --stop--> STOPPING --gone--> OFF
 *
 * A doorbell rings (an eventfd write) in DROWSY, ASLEEP and NAPPING. DROWSY is the
 * announcement before the engine thread's last look for work: a poster that published
 * its work and then finds AWAKE knows that look is still to come.
 *
 * Every transition is a compare-and-swap on the state word (seq_cst): one that does not
 * start where it expects (a STOPPING that came in between) is refused, and the RMWs on a
 * word form one release sequence, so a thread that reads a state synchronizes with every
 * thread that wrote it before (C11 5.1.2.4p10-11). That is what carries a poster's
 * work to the pass that an ask hands it to.
 */
#include "dev/handover.h"

#include <errno.h>

const char *const urnic_pipe_state_names[URNIC_PIPE_NSTATES] = {
#define URNIC_PIPE_STATE(name, meaning) [URNIC_PIPE_##name] = #name,
#include "dev/handover.def"
};

const char *const urnic_eng_state_names[URNIC_ENG_NSTATES] = {
#define URNIC_ENG_STATE(name, meaning) [URNIC_ENG_##name] = #name,
#include "dev/handover.def"
};

#define P(s) (1u << URNIC_PIPE_##s)
#define OWNED (P(ENGINE) | P(APP) | P(ENGINE_ARMED) | P(APP_ARMED))

/* The pipe diagram: the states each state may move to. */
static const uint32_t pipe_next[URNIC_PIPE_NSTATES] = {
	[URNIC_PIPE_STOPPED] = P(IDLE),
	[URNIC_PIPE_IDLE] = P(ENGINE) | P(APP) | P(STOPPED),
	[URNIC_PIPE_ENGINE] = P(IDLE) | P(ENGINE_ARMED) | P(DRAINING),
	[URNIC_PIPE_APP] = P(IDLE) | P(APP_ARMED) | P(DRAINING),
	[URNIC_PIPE_ENGINE_ARMED] = P(ENGINE) | P(ENGINE_ARMED) | P(DRAINING),
	[URNIC_PIPE_APP_ARMED] = P(APP) | P(APP_ARMED) | P(DRAINING),
	[URNIC_PIPE_DRAINING] = P(STOPPED),
};

#define E(s) (1u << URNIC_ENG_##s)

/* The eng diagram. */
static const uint32_t eng_next[URNIC_ENG_NSTATES] = {
	[URNIC_ENG_OFF] = E(AWAKE),
	[URNIC_ENG_AWAKE] = E(DROWSY) | E(STOPPING),
	[URNIC_ENG_DROWSY] = E(AWAKE) | E(ASLEEP) | E(NAPPING) | E(STOPPING),
	[URNIC_ENG_ASLEEP] = E(AWAKE) | E(STOPPING),
	[URNIC_ENG_NAPPING] = E(ASLEEP) | E(AWAKE) | E(STOPPING),
	[URNIC_ENG_STOPPING] = E(OFF),
};

_Static_assert(URNIC_PIPE_NSTATES <= 32 && URNIC_ENG_NSTATES <= 32,
	       "the transition tables are bit masks of 32 states");

const char *urnic_pipe_state_name(int s)
{
	return s >= 0 && s < URNIC_PIPE_NSTATES ? urnic_pipe_state_names[s] : "?";
}

const char *urnic_eng_state_name(int s)
{
	return s >= 0 && s < URNIC_ENG_NSTATES ? urnic_eng_state_names[s] : "?";
}

void urnic_handover_init(struct urnic_handover *h)
{
	atomic_init(&h->pipe, URNIC_PIPE_STOPPED);
	atomic_init(&h->eng, URNIC_ENG_OFF);
	atomic_init(&h->wake_ns, UINT64_MAX);
	atomic_init(&h->watch_due, false);
}

static bool legal(const uint32_t *next, int n, int from, int to)
{
	return from >= 0 && from < n && to >= 0 && to < n && (next[from] & (1u << to));
}

bool urnic_pipe_legal(int from, int to)
{
	return legal(pipe_next, URNIC_PIPE_NSTATES, from, to);
}

bool urnic_eng_legal(int from, int to)
{
	return legal(eng_next, URNIC_ENG_NSTATES, from, to);
}

/* One transition: a seq_cst compare-and-swap from `from`, if the diagram has it. */
static int move(_Atomic int *word, const uint32_t *next, int n, int from, int to)
{
	if (!legal(next, n, from, to))
		return -EINVAL;
	return atomic_compare_exchange_strong(word, &from, to) ? 0 : -EAGAIN;
}

int urnic_handover_pipe_move(struct urnic_handover *h, int from, int to)
{
	return move(&h->pipe, pipe_next, URNIC_PIPE_NSTATES, from, to);
}

int urnic_handover_eng_move(struct urnic_handover *h, int from, int to)
{
	return move(&h->eng, eng_next, URNIC_ENG_NSTATES, from, to);
}

/* ---- start and stop ---- */

int urnic_handover_start(struct urnic_handover *h)
{
	int ret = urnic_handover_pipe_move(h, URNIC_PIPE_STOPPED, URNIC_PIPE_IDLE);

	if (ret)
		return ret;
	atomic_store(&h->wake_ns, UINT64_MAX);
	atomic_store(&h->watch_due, false);
	return urnic_handover_eng_move(h, URNIC_ENG_OFF, URNIC_ENG_AWAKE);
}

void urnic_handover_stop_engine(struct urnic_handover *h)
{
	int s = atomic_load(&h->eng);

	/* Retried while the engine thread moves between its own states. */
	while (s != URNIC_ENG_OFF && s != URNIC_ENG_STOPPING &&
	       urnic_handover_eng_move(h, s, URNIC_ENG_STOPPING))
		s = atomic_load(&h->eng);
}

int urnic_handover_engine_gone(struct urnic_handover *h)
{
	return urnic_handover_eng_move(h, URNIC_ENG_STOPPING, URNIC_ENG_OFF);
}

/* The step drain takes from s: STOPPED, or DRAINING for the owner to finish (last). */
static int drain_step(int s)
{
	if (s == URNIC_PIPE_IDLE)
		return URNIC_PIPE_STOPPED;
	if ((1u << s) & OWNED)
		return URNIC_PIPE_DRAINING;
	return -1; /* STOPPED, or DRAINING already */
}

bool urnic_handover_drain(struct urnic_handover *h)
{
	for (;;) {
		int s = atomic_load(&h->pipe);
		int to = drain_step(s);

		if (to < 0)
			return s == URNIC_PIPE_STOPPED;
		if (!urnic_handover_pipe_move(h, s, to))
			return to == URNIC_PIPE_STOPPED;
	}
}

bool urnic_handover_started(struct urnic_handover *h)
{
	return atomic_load(&h->pipe) != URNIC_PIPE_STOPPED;
}

/* ---- the pipe ---- */

/*
 * The step claim takes from s, or -1 to stay out: IDLE is taken (the caller runs), an
 * owner's state is asked (-> *_ARMED), an armed one asked again (ARMED -> ARMED: still a
 * write, so that the owner's `again` reads this thread's RMW and sees its work). A caller
 * that need not have the pass stays out of another's.
 */
static int claim_step(int s, bool engine, bool must)
{
	switch (s) {
	case URNIC_PIPE_IDLE:
		return engine ? URNIC_PIPE_ENGINE : URNIC_PIPE_APP;
	case URNIC_PIPE_ENGINE:
		return must ? URNIC_PIPE_ENGINE_ARMED : -1;
	case URNIC_PIPE_APP:
		return must ? URNIC_PIPE_APP_ARMED : -1;
	case URNIC_PIPE_ENGINE_ARMED:
	case URNIC_PIPE_APP_ARMED:
		return must ? s : -1;
	default:
		return -1; /* STOPPED, DRAINING */
	}
}

enum urnic_pipe_claim urnic_handover_claim(struct urnic_handover *h, bool engine, bool must)
{
	int s = atomic_load_explicit(&h->pipe, memory_order_relaxed);

	for (;;) {
		int to = claim_step(s, engine, must);

		if (to < 0)
			return (1u << s) & OWNED ? URNIC_CLAIM_BUSY : URNIC_CLAIM_OFF;
		/* seq_cst RMW: a claim acquires what the last owner released when it left; an
		 * ask releases the caller's work to the owner's `again`. */
		if (atomic_compare_exchange_weak(&h->pipe, &s, to))
			return s == URNIC_PIPE_IDLE ? URNIC_CLAIM_RUN : URNIC_CLAIM_HANDED;
	}
}

/* The step leave takes from an owner's state: IDLE, or the owner's own state again when
 * asked (one more pass), or STOPPED from DRAINING (last); -1 from a state nobody owns. */
static int leave_step(int s)
{
	switch (s) {
	case URNIC_PIPE_ENGINE:
	case URNIC_PIPE_APP:
		return URNIC_PIPE_IDLE;
	case URNIC_PIPE_ENGINE_ARMED:
		return URNIC_PIPE_ENGINE;
	case URNIC_PIPE_APP_ARMED:
		return URNIC_PIPE_APP;
	case URNIC_PIPE_DRAINING:
		return URNIC_PIPE_STOPPED;
	default:
		return -1;
	}
}

int urnic_handover_leave(struct urnic_handover *h)
{
	int s = atomic_load_explicit(&h->pipe, memory_order_relaxed);

	for (;;) {
		int to = leave_step(s);

		if (to < 0)
			return -EINVAL;
		/* seq_cst RMW: reading an ask's *_ARMED synchronizes with the asker, whose
		 * work the next pass then sees; -> IDLE releases this pass to the next
		 * claimer. The caller unlocked first, so a new owner never blocks on the
		 * device lock behind this one. */
		if (atomic_compare_exchange_weak(&h->pipe, &s, to))
			return to == URNIC_PIPE_ENGINE || to == URNIC_PIPE_APP;
	}
}

/* ---- the engine thread's sleep ---- */

int urnic_handover_doze(struct urnic_handover *h)
{
	int ret = urnic_handover_eng_move(h, URNIC_ENG_AWAKE, URNIC_ENG_DROWSY);

	/* Pairs with the fence of urnic_handover_must_ring: the last look for work that
	 * follows reads what a poster published before it found us AWAKE. */
	if (!ret)
		atomic_thread_fence(memory_order_seq_cst);
	return ret;
}

int urnic_handover_rouse(struct urnic_handover *h)
{
	return urnic_handover_eng_move(h, URNIC_ENG_DROWSY, URNIC_ENG_AWAKE);
}

/*
 * NAPPING, then the watch request: both seq_cst, as are the application's store of
 * watch_due and load of the state (urnic_handover_ask_watch). In the total order one
 * of the two pairs comes first, so either this finds the request and watches, or the
 * application finds NAPPING and rings the doorbell.
 */
enum urnic_eng_state urnic_handover_settle(struct urnic_handover *h, bool blind)
{
	if (urnic_handover_eng_move(h, URNIC_ENG_DROWSY,
				    blind ? URNIC_ENG_NAPPING : URNIC_ENG_ASLEEP))
		return URNIC_ENG_STOPPING;
	if (!blind)
		return URNIC_ENG_ASLEEP;
	if (!atomic_exchange(&h->watch_due, false))
		return URNIC_ENG_NAPPING;
	if (urnic_handover_eng_move(h, URNIC_ENG_NAPPING, URNIC_ENG_ASLEEP))
		return URNIC_ENG_STOPPING;
	return URNIC_ENG_ASLEEP;
}

/* After the state: a reader that sees ASLEEP or NAPPING reads this or UINT64_MAX (not
 * chosen yet), never the last sleep's time, which urnic_handover_wake replaced before. */
void urnic_handover_sleeps_until(struct urnic_handover *h, uint64_t wake_ns)
{
	atomic_store(&h->wake_ns, wake_ns ? wake_ns : UINT64_MAX);
}

int urnic_handover_wake(struct urnic_handover *h)
{
	int s = atomic_load(&h->eng);

	atomic_store(&h->wake_ns, UINT64_MAX); /* the next sleep's: not chosen yet */
	if (s != URNIC_ENG_ASLEEP && s != URNIC_ENG_NAPPING)
		return -EAGAIN;
	return urnic_handover_eng_move(h, s, URNIC_ENG_AWAKE);
}

bool urnic_handover_stopping(struct urnic_handover *h)
{
	return atomic_load_explicit(&h->eng, memory_order_relaxed) == URNIC_ENG_STOPPING;
}

bool urnic_handover_ask_watch(struct urnic_handover *h)
{
	atomic_store(&h->watch_due, true);
	return atomic_load(&h->eng) == URNIC_ENG_NAPPING;
}
