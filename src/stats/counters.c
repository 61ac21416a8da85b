/* SPDX-License-Identifier: MIT */
/*
 * counters.c - the counters' names and descriptions, from counters.def, for `urnic
 * counters` and the shared-memory mirror.
 */
#include "stats/counters.h"

const char *const urnic_counter_names[URNIC_CTR_COUNT] = {
#define URNIC_COUNTER(name, desc) [URNIC_CTR_##name] = #name,
#include "stats/counters.def"
#undef URNIC_COUNTER
};

const char *const urnic_counter_descs[URNIC_CTR_COUNT] = {
#define URNIC_COUNTER(name, desc) [URNIC_CTR_##name] = desc,
#include "stats/counters.def"
#undef URNIC_COUNTER
};
