// SPDX-License-Identifier: MIT
/*
 * state.c - the CM connection states by name, and the table of the changes between them
 * (state.def, IBTA Vol.1 12.9 and 12.11). conn.c's urnic_cm_set_state() asks the table
 * before every change; the tests run every path and check that no change fell outside.
 */
#include "engine/cm/core.h"

static const char *const state_names[] = {
#define URNIC_CM_STATE(name) #name,
#include "engine/cm/state.def"
#undef URNIC_CM_STATE
};
_Static_assert(sizeof(state_names) / sizeof(state_names[0]) == URNIC_CM_STATE_COUNT,
	       "state.def and enum urnic_cm_state disagree");

static const bool transitions[URNIC_CM_STATE_COUNT][URNIC_CM_STATE_COUNT] = {
#define URNIC_CM_TRANSITION(from, to, why) [URNIC_CM_##from][URNIC_CM_##to] = true,
#include "engine/cm/state.def"
#undef URNIC_CM_TRANSITION
};

const char *urnic_cm_state_name(enum urnic_cm_state s)
{
	return (unsigned)s < URNIC_CM_STATE_COUNT ? state_names[s] : "?";
}

bool urnic_cm_transition_ok(enum urnic_cm_state from, enum urnic_cm_state to)
{
	if ((unsigned)from >= URNIC_CM_STATE_COUNT || (unsigned)to >= URNIC_CM_STATE_COUNT)
		return false;
	return transitions[from][to];
}
