/* SPDX-License-Identifier: MIT */
/*
 * test_handover.c - the hand-over's two state machines (src/dev/handover.c), one thread:
 * every transition of the diagrams is taken, every other one refused and leaves the
 * state as it was; each named transition (claim, leave, drain, doze, settle, wake...)
 * from every state gives the diagram's next state or is refused; the readers a
 * doorbell uses (must_ring, sleeping, ask_watch) answer per state; states print by name.
 *
 * The legal transitions are written out here again, from the diagrams in handover.c's
 * header, so that a change of the tables shows up as a difference with them.
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "dev/handover.h"

enum { NP = URNIC_PIPE_NSTATES, NE = URNIC_ENG_NSTATES };

#define PS(x) URNIC_PIPE_##x
#define ES(x) URNIC_ENG_##x

/* The pipe diagram, edge by edge. */
static const int pipe_edges[][2] = {
	{ PS(STOPPED), PS(IDLE) },		/* start */
	{ PS(IDLE), PS(ENGINE) },		/* claim by the engine thread */
	{ PS(IDLE), PS(APP) },			/* claim by an application */
	{ PS(IDLE), PS(STOPPED) },		/* drain */
	{ PS(ENGINE), PS(IDLE) },		/* leave */
	{ PS(APP), PS(IDLE) },			/* leave */
	{ PS(ENGINE), PS(ENGINE_ARMED) },	/* ask */
	{ PS(APP), PS(APP_ARMED) },		/* ask */
	{ PS(ENGINE_ARMED), PS(ENGINE_ARMED) }, /* ask again */
	{ PS(APP_ARMED), PS(APP_ARMED) },	/* ask again */
	{ PS(ENGINE_ARMED), PS(ENGINE) },	/* again */
	{ PS(APP_ARMED), PS(APP) },		/* again */
	{ PS(ENGINE), PS(DRAINING) },		/* drain */
	{ PS(APP), PS(DRAINING) },
	{ PS(ENGINE_ARMED), PS(DRAINING) },
	{ PS(APP_ARMED), PS(DRAINING) },
	{ PS(DRAINING), PS(STOPPED) }, /* last */
};

/* The eng diagram. */
static const int eng_edges[][2] = {
	{ ES(OFF), ES(AWAKE) },	     /* start */
	{ ES(AWAKE), ES(DROWSY) },   /* doze */
	{ ES(DROWSY), ES(AWAKE) },   /* rouse */
	{ ES(DROWSY), ES(ASLEEP) },  /* settle */
	{ ES(DROWSY), ES(NAPPING) }, /* settle blind */
	{ ES(NAPPING), ES(ASLEEP) }, /* watch */
	{ ES(ASLEEP), ES(AWAKE) },   /* wake */
	{ ES(NAPPING), ES(AWAKE) },  /* wake */
	{ ES(AWAKE), ES(STOPPING) }, /* stop */
	{ ES(DROWSY), ES(STOPPING) },  { ES(ASLEEP), ES(STOPPING) },
	{ ES(NAPPING), ES(STOPPING) }, { ES(STOPPING), ES(OFF) }, /* gone */
};

static bool in_edges(const int (*edges)[2], size_t n, int from, int to)
{
	for (size_t i = 0; i < n; i++)
		if (edges[i][0] == from && edges[i][1] == to)
			return true;
	return false;
}

static void set(struct urnic_handover *h, int pipe, int eng)
{
	urnic_handover_init(h);
	atomic_store(&h->pipe, pipe);
	atomic_store(&h->eng, eng);
}

/* Each (from, to) of the pipe: taken exactly when the diagram has it; refused with
 * -EINVAL otherwise and nothing changes. */
static void every_pipe_transition_is_taken_or_refused(void)
{
	struct urnic_handover h;
	int taken = 0;

	for (int from = 0; from < NP; from++) {
		for (int to = 0; to < NP; to++) {
			bool edge = in_edges(pipe_edges, sizeof(pipe_edges) / sizeof(pipe_edges[0]),
					     from, to);

			set(&h, from, ES(AWAKE));
			CHECK_EQ(urnic_pipe_legal(from, to), edge);
			if (edge) {
				CHECK_EQ(urnic_handover_pipe_move(&h, from, to), 0);
				CHECK_EQ(atomic_load(&h.pipe), to);
				taken++;
			} else {
				CHECK_EQ(urnic_handover_pipe_move(&h, from, to), -EINVAL);
				CHECK_EQ(atomic_load(&h.pipe), from);
			}
		}
	}
	CHECK_EQ(taken, sizeof(pipe_edges) / sizeof(pipe_edges[0]));
}

static void every_eng_transition_is_taken_or_refused(void)
{
	struct urnic_handover h;
	int taken = 0;

	for (int from = 0; from < NE; from++) {
		for (int to = 0; to < NE; to++) {
			bool edge = in_edges(eng_edges, sizeof(eng_edges) / sizeof(eng_edges[0]),
					     from, to);

			set(&h, PS(IDLE), from);
			CHECK_EQ(urnic_eng_legal(from, to), edge);
			if (edge) {
				CHECK_EQ(urnic_handover_eng_move(&h, from, to), 0);
				CHECK_EQ(atomic_load(&h.eng), to);
				taken++;
			} else {
				CHECK_EQ(urnic_handover_eng_move(&h, from, to), -EINVAL);
				CHECK_EQ(atomic_load(&h.eng), from);
			}
		}
	}
	CHECK_EQ(taken, sizeof(eng_edges) / sizeof(eng_edges[0]));
}

/* A legal transition from a state the word is not in: -EAGAIN, nothing changes. */
static void a_move_from_the_wrong_state_is_refused(void)
{
	struct urnic_handover h;

	set(&h, PS(APP), ES(STOPPING));
	CHECK_EQ(urnic_handover_pipe_move(&h, PS(IDLE), PS(ENGINE)), -EAGAIN);
	CHECK_EQ(atomic_load(&h.pipe), PS(APP));
	CHECK_EQ(urnic_handover_eng_move(&h, ES(AWAKE), ES(DROWSY)), -EAGAIN);
	CHECK_EQ(atomic_load(&h.eng), ES(STOPPING));
	CHECK_EQ(urnic_handover_pipe_move(&h, -1, PS(IDLE)), -EINVAL);
	CHECK_EQ(urnic_handover_pipe_move(&h, PS(APP), NP), -EINVAL);
	CHECK_EQ(urnic_handover_eng_move(&h, ES(STOPPING), 99), -EINVAL);
}

/* claim from each pipe state, for the engine thread and an application, insisting or
 * not: what the caller got and where the state went. */
static void claim_from_every_state(void)
{
	static const struct {
		int from;
		bool engine, must;
		enum urnic_pipe_claim got;
		int to;
	} cases[] = {
		{ PS(STOPPED), true, true, URNIC_CLAIM_OFF, PS(STOPPED) },
		{ PS(STOPPED), false, false, URNIC_CLAIM_OFF, PS(STOPPED) },
		{ PS(IDLE), true, true, URNIC_CLAIM_RUN, PS(ENGINE) },
		{ PS(IDLE), false, true, URNIC_CLAIM_RUN, PS(APP) },
		{ PS(IDLE), false, false, URNIC_CLAIM_RUN, PS(APP) },
		{ PS(ENGINE), false, true, URNIC_CLAIM_HANDED, PS(ENGINE_ARMED) },
		{ PS(ENGINE), false, false, URNIC_CLAIM_BUSY, PS(ENGINE) },
		{ PS(APP), true, true, URNIC_CLAIM_HANDED, PS(APP_ARMED) },
		{ PS(APP), false, true, URNIC_CLAIM_HANDED, PS(APP_ARMED) },
		{ PS(APP), false, false, URNIC_CLAIM_BUSY, PS(APP) },
		{ PS(ENGINE_ARMED), false, true, URNIC_CLAIM_HANDED, PS(ENGINE_ARMED) },
		{ PS(ENGINE_ARMED), false, false, URNIC_CLAIM_BUSY, PS(ENGINE_ARMED) },
		{ PS(APP_ARMED), true, true, URNIC_CLAIM_HANDED, PS(APP_ARMED) },
		{ PS(APP_ARMED), false, false, URNIC_CLAIM_BUSY, PS(APP_ARMED) },
		{ PS(DRAINING), true, true, URNIC_CLAIM_OFF, PS(DRAINING) },
		{ PS(DRAINING), false, false, URNIC_CLAIM_OFF, PS(DRAINING) },
	};
	struct urnic_handover h;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		set(&h, cases[i].from, ES(AWAKE));
		CHECK_EQ(urnic_handover_claim(&h, cases[i].engine, cases[i].must), cases[i].got);
		CHECK_EQ(atomic_load(&h.pipe), cases[i].to);
	}
}

/* leave from each pipe state: 1 (one more pass, still the owner's), 0 (left), or
 * refused for a state nobody owns. */
static void leave_from_every_state(void)
{
	static const struct {
		int from, ret, to;
	} cases[] = {
		{ PS(STOPPED), -EINVAL, PS(STOPPED) }, { PS(IDLE), -EINVAL, PS(IDLE) },
		{ PS(ENGINE), 0, PS(IDLE) },	       { PS(APP), 0, PS(IDLE) },
		{ PS(ENGINE_ARMED), 1, PS(ENGINE) },   { PS(APP_ARMED), 1, PS(APP) },
		{ PS(DRAINING), 0, PS(STOPPED) },
	};
	struct urnic_handover h;

	CHECK_EQ(sizeof(cases) / sizeof(cases[0]), NP);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		set(&h, cases[i].from, ES(AWAKE));
		CHECK_EQ(urnic_handover_leave(&h), cases[i].ret);
		CHECK_EQ(atomic_load(&h.pipe), cases[i].to);
	}
}

/* An ask while the owner is in its pass is never lost: the owner's leave finds it and
 * runs one more pass, however many asked; the next leave leaves. */
static void an_ask_makes_the_owner_run_once_more(void)
{
	struct urnic_handover h;

	set(&h, PS(IDLE), ES(AWAKE));
	CHECK_EQ(urnic_handover_claim(&h, false, false), URNIC_CLAIM_RUN);
	CHECK_EQ(urnic_handover_claim(&h, true, true), URNIC_CLAIM_HANDED);
	CHECK_EQ(urnic_handover_claim(&h, false, true), URNIC_CLAIM_HANDED);
	CHECK_EQ(urnic_handover_leave(&h), 1);
	CHECK_EQ(atomic_load(&h.pipe), PS(APP));
	CHECK_EQ(urnic_handover_claim(&h, true, false), URNIC_CLAIM_BUSY);
	CHECK_EQ(urnic_handover_leave(&h), 0);
	CHECK_EQ(atomic_load(&h.pipe), PS(IDLE));
	CHECK_EQ(urnic_handover_leave(&h), -EINVAL);
}

/* drain: IDLE stops at once; a pass's owner state drains and its leave stops it, the
 * ask it had dropped; nothing claims in between. */
static void drain_from_every_state(void)
{
	struct urnic_handover h;

	for (int s = 0; s < NP; s++) {
		bool now = s == PS(IDLE) || s == PS(STOPPED);

		set(&h, s, ES(OFF));
		CHECK_EQ(urnic_handover_drain(&h), now);
		CHECK_EQ(atomic_load(&h.pipe), now ? PS(STOPPED) : PS(DRAINING));
		CHECK_EQ(urnic_handover_started(&h), !now);
		if (now)
			continue;
		CHECK_EQ(urnic_handover_claim(&h, false, true), URNIC_CLAIM_OFF);
		CHECK_EQ(urnic_handover_leave(&h), 0);
		CHECK_EQ(atomic_load(&h.pipe), PS(STOPPED));
		CHECK(urnic_handover_drain(&h));
	}
}

/* start only from both machines stopped; the stop sequence brings them back. */
static void start_and_stop(void)
{
	struct urnic_handover h;

	urnic_handover_init(&h);
	CHECK(!urnic_handover_started(&h));
	CHECK_EQ(urnic_handover_start(&h), 0);
	CHECK_EQ(atomic_load(&h.pipe), PS(IDLE));
	CHECK_EQ(atomic_load(&h.eng), ES(AWAKE));
	CHECK(urnic_handover_started(&h));
	CHECK_EQ(urnic_handover_start(&h), -EAGAIN);
	for (int s = ES(AWAKE); s <= ES(NAPPING); s++) {
		atomic_store(&h.eng, s);
		urnic_handover_stop_engine(&h);
		CHECK_EQ(atomic_load(&h.eng), ES(STOPPING));
		CHECK(urnic_handover_stopping(&h));
	}
	urnic_handover_stop_engine(&h); /* twice: stays STOPPING */
	CHECK_EQ(atomic_load(&h.eng), ES(STOPPING));
	CHECK_EQ(urnic_handover_engine_gone(&h), 0);
	CHECK_EQ(atomic_load(&h.eng), ES(OFF));
	CHECK_EQ(urnic_handover_engine_gone(&h), -EAGAIN); /* not STOPPING */
	urnic_handover_stop_engine(&h);			   /* OFF stays OFF */
	CHECK_EQ(atomic_load(&h.eng), ES(OFF));
	CHECK(urnic_handover_drain(&h));
	CHECK_EQ(urnic_handover_start(&h), 0);
}

/* The engine thread's sleep, from each state: only the diagram's step is taken, and
 * any other refused with the state unchanged. */
static void engine_steps_from_every_state(void)
{
	struct urnic_handover h;

	for (int s = 0; s < NE; s++) {
		set(&h, PS(IDLE), s);
		CHECK_EQ(urnic_handover_doze(&h) == 0, s == ES(AWAKE));
		CHECK_EQ(atomic_load(&h.eng), s == ES(AWAKE) ? ES(DROWSY) : s);

		set(&h, PS(IDLE), s);
		CHECK_EQ(urnic_handover_rouse(&h) == 0, s == ES(DROWSY));
		CHECK_EQ(atomic_load(&h.eng), s == ES(DROWSY) ? ES(AWAKE) : s);

		set(&h, PS(IDLE), s);
		CHECK_EQ(urnic_handover_wake(&h) == 0, s == ES(ASLEEP) || s == ES(NAPPING));
		CHECK_EQ(atomic_load(&h.eng), s == ES(ASLEEP) || s == ES(NAPPING) ? ES(AWAKE) : s);
		CHECK(atomic_load(&h.wake_ns) == UINT64_MAX);

		for (int blind = 0; blind <= 1; blind++) {
			enum urnic_eng_state got;

			set(&h, PS(IDLE), s);
			got = urnic_handover_settle(&h, blind);
			if (s == ES(DROWSY)) {
				CHECK_EQ(got, blind ? ES(NAPPING) : ES(ASLEEP));
				CHECK_EQ(atomic_load(&h.eng), got);
			} else {
				CHECK_EQ(got, ES(STOPPING)); /* refused: not DROWSY */
				CHECK_EQ(atomic_load(&h.eng), s);
			}
		}
	}
}

/* The watch request: a blind settle that finds it watches instead (NAPPING -> ASLEEP)
 * and takes it; one that does not see it leaves NAPPING, and then the asker is told to
 * ring. A settle that is not blind leaves the request for a later blind one. */
static void a_watch_request_is_seen_or_rung(void)
{
	struct urnic_handover h;

	set(&h, PS(IDLE), ES(DROWSY));
	CHECK(!urnic_handover_ask_watch(&h)); /* not napping: no ring needed */
	CHECK_EQ(urnic_handover_settle(&h, true), ES(ASLEEP));
	CHECK(!atomic_load(&h.watch_due));

	set(&h, PS(IDLE), ES(DROWSY));
	CHECK_EQ(urnic_handover_settle(&h, true), ES(NAPPING));
	CHECK(urnic_handover_ask_watch(&h)); /* napping: ring it */

	set(&h, PS(IDLE), ES(DROWSY));
	CHECK(!urnic_handover_ask_watch(&h));
	CHECK_EQ(urnic_handover_settle(&h, false), ES(ASLEEP));
	CHECK(atomic_load(&h.watch_due)); /* still asked for */
	CHECK_EQ(urnic_handover_wake(&h), 0);
	CHECK_EQ(urnic_handover_doze(&h), 0);
	CHECK_EQ(urnic_handover_settle(&h, true), ES(ASLEEP));
	CHECK(!atomic_load(&h.watch_due));
}

/* Who must ring the doorbell: only while the engine thread waits for one (DROWSY,
 * ASLEEP, NAPPING), and until when it sleeps by itself. */
static void the_doorbell_rings_only_for_a_waiting_engine_thread(void)
{
	struct urnic_handover h;
	uint64_t wake;

	for (int s = 0; s < NE; s++) {
		bool waits = s == ES(DROWSY) || s == ES(ASLEEP) || s == ES(NAPPING);

		set(&h, PS(IDLE), s);
		wake = 7;
		CHECK_EQ(urnic_handover_must_ring(&h, &wake), waits);
		CHECK(wake == (waits ? UINT64_MAX : 7));
		CHECK_EQ(urnic_handover_must_ring(&h, NULL), waits);
		wake = 7;
		CHECK_EQ(urnic_handover_sleeping(&h, &wake), waits);
		CHECK(wake == (waits ? UINT64_MAX : 7));
	}
	/* The time is published after the settle, and forgotten at the wake-up. */
	set(&h, PS(IDLE), ES(DROWSY));
	CHECK_EQ(urnic_handover_settle(&h, false), ES(ASLEEP));
	urnic_handover_sleeps_until(&h, 12345);
	CHECK(urnic_handover_must_ring(&h, &wake) && wake == 12345);
	urnic_handover_sleeps_until(&h, 0); /* never */
	CHECK(urnic_handover_sleeping(&h, &wake) && wake == UINT64_MAX);
	urnic_handover_sleeps_until(&h, 12345);
	CHECK_EQ(urnic_handover_wake(&h), 0);
	CHECK(!urnic_handover_must_ring(&h, &wake));
	CHECK(atomic_load(&h.wake_ns) == UINT64_MAX);
}

static void states_print_by_name(void)
{
	static const char *const pipe[] = { "STOPPED",	    "IDLE",	 "ENGINE",  "APP",
					    "ENGINE_ARMED", "APP_ARMED", "DRAINING" };
	static const char *const eng[] = {
		"OFF", "AWAKE", "DROWSY", "ASLEEP", "NAPPING", "STOPPING"
	};

	CHECK_EQ(sizeof(pipe) / sizeof(pipe[0]), NP);
	CHECK_EQ(sizeof(eng) / sizeof(eng[0]), NE);
	for (int s = 0; s < NP; s++)
		CHECK(strcmp(urnic_pipe_state_name(s), pipe[s]) == 0);
	for (int s = 0; s < NE; s++)
		CHECK(strcmp(urnic_eng_state_name(s), eng[s]) == 0);
	CHECK(strcmp(urnic_pipe_state_name(NP), "?") == 0);
	CHECK(strcmp(urnic_eng_state_name(-1), "?") == 0);
}

int main(void)
{
	RUN(every_pipe_transition_is_taken_or_refused);
	RUN(every_eng_transition_is_taken_or_refused);
	RUN(a_move_from_the_wrong_state_is_refused);
	RUN(claim_from_every_state);
	RUN(leave_from_every_state);
	RUN(an_ask_makes_the_owner_run_once_more);
	RUN(drain_from_every_state);
	RUN(start_and_stop);
	RUN(engine_steps_from_every_state);
	RUN(a_watch_request_is_seen_or_rung);
	RUN(the_doorbell_rings_only_for_a_waiting_engine_thread);
	RUN(states_print_by_name);
	return 0;
}
