/* SPDX-License-Identifier: MIT */
/*
 * iwarp.c - the names of the iWARP refusal reasons and Terminate error codes (iwarp.h),
 * built from iwarp_reason.def and iwarp_term.def.
 */
#include <stddef.h>

#include "wire/iwarp.h"

static const char *const reason_names[] = {
#define URNIC_IW_REASON(name, text) [URNIC_IW_R_##name] = (text),
#include "wire/iwarp_reason.def"
#undef URNIC_IW_REASON
};
_Static_assert(sizeof(reason_names) / sizeof(reason_names[0]) == URNIC_IW_R_COUNT,
	       "a text for every reason");

struct term_entry {
	struct urnic_iw_term_code code;
	const char *text;
};

/* Layer and EType are 4 bits, the code 8 (RFC 5040 4.8); the layer is one of three. */
#define URNIC_IW_TERM(name, layer, etype, code, text)                                              \
	_Static_assert((layer) <= URNIC_IW_LAYER_LLP && (etype) < 16 && (code) < 256,              \
		       #name ": layer, etype or code out of range");
#include "wire/iwarp_term.def"
#undef URNIC_IW_TERM

static const struct term_entry terms[URNIC_IW_TERM_COUNT] = {
#define URNIC_IW_TERM(name, layer, etype, code, text)                                              \
	[URNIC_IW_TERM_##name] = { { (layer), (etype), (code) }, (text) },
#include "wire/iwarp_term.def"
#undef URNIC_IW_TERM
};

const char *urnic_iw_reason_name(enum urnic_iw_reason r)
{
	if ((unsigned)r >= URNIC_IW_R_COUNT)
		return "unknown reason";
	return reason_names[r];
}

struct urnic_iw_term_code urnic_iw_term_code(enum urnic_iw_term t)
{
	struct urnic_iw_term_code none = { 0xff, 0xff, 0xff };

	if ((unsigned)t >= URNIC_IW_TERM_COUNT)
		return none;
	return terms[t].code;
}

const char *urnic_iw_term_name(uint8_t layer, uint8_t etype, uint8_t code)
{
	unsigned i;

	for (i = 0; i < URNIC_IW_TERM_COUNT; i++)
		if (terms[i].code.layer == layer && terms[i].code.etype == etype &&
		    terms[i].code.code == code)
			return terms[i].text;
	return NULL;
}
