/* SPDX-License-Identifier: MIT */
/*
 * env_names.c - the environment variables the library reads, and the misspelt ones.
 *
 * A variable whose name is one or two edits (insert, delete, change or swap two
 * neighbours) away from one of these is taken for a misspelling: config.c then fails
 * the device open as for a bad value, since the job would otherwise run on defaults
 * nobody asked for. Names further from every variable (a script's own URNIC_TOP, say)
 * are not the library's business and pass.
 */
#include "dev/config.h"

#include <stdbool.h>
#include <string.h>

/* README "Configuration" and urnic(7) document each. */
static const char *const names[] = {
	"URNIC_ADDR",	       "URNIC_CONFIG",	    "URNIC_FAULT",	    "URNIC_LIMITS",
	"URNIC_COUNTERS_MODE", "URNIC_SPIN_US",	    "URNIC_POST_BATCH",	    "URNIC_ACK_HOLD_US",
	"URNIC_RING",	       "URNIC_LOCAL",	    "URNIC_LOCAL_DIRECT",   "URNIC_NO_GSO",
	"URNIC_NO_GRO",	       "URNIC_ICRC_STRICT", "URNIC_PRINT_COUNTERS", "URNIC_STUB_TRACE",
	"URNIC_PCAP",	       "URNIC_IW_HOLD_US",  "URNIC_CONGESTION",
};

enum { NEAR = 2, NAME_MAX_LEN = 64 };

/* Optimal string alignment distance (Levenshtein with swaps of neighbours), capped:
 * anything over NEAR is reported as NEAR + 1. */
static int distance(const char *a, size_t la, const char *b, size_t lb)
{
	static __thread int d[NAME_MAX_LEN + 1][NAME_MAX_LEN + 1];

	if (la > NAME_MAX_LEN || lb > NAME_MAX_LEN || (la > lb ? la - lb : lb - la) > NEAR)
		return NEAR + 1;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			int cost = a[i - 1] != b[j - 1];
			int v = d[i - 1][j - 1] + cost;

			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb] > NEAR ? NEAR + 1 : d[la][lb];
}

const char *urnic_env_misspelt(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0)
			return NULL;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (distance(name, len, names[i], strlen(names[i])) <= NEAR)
			return names[i];
	return NULL;
}
