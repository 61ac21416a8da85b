// SPDX-License-Identifier: MIT
/*
 * counter.c - the CM's counters by name (stats/cm_counters.def): every MAD refused or ignored
 * counts under its reason, as every packet drop of the engine does.
 */
#include "engine/cm/core.h"

static const char *const counter_names[] = {
#define URNIC_CM_COUNTER(name, text) #name,
#include "stats/cm_counters.def"
#undef URNIC_CM_COUNTER
};
_Static_assert(sizeof(counter_names) / sizeof(counter_names[0]) == URNIC_CM_C_COUNT,
	       "cm_counters.def and enum urnic_cm_counter disagree");

const char *urnic_cm_counter_name(enum urnic_cm_counter c)
{
	return (unsigned)c < URNIC_CM_C_COUNT ? counter_names[c] : "?";
}

uint64_t urnic_cm_counter(const struct urnic_cm *cm, enum urnic_cm_counter c)
{
	return (unsigned)c < URNIC_CM_C_COUNT ? cm->counters[c] : 0;
}
