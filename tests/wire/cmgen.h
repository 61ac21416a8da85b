/* SPDX-License-Identifier: MIT */
/*
 * cmgen.h - test helpers for CM MADs (src/wire/cm.h): the field table of cm.def seen from
 * the outside, random messages, field-by-field comparison.
 *
 * The table here is built from cm.def and the public structs (offsetof), not from the
 * codec's own table, so the tests read the layout independently of cm.c's copy of it.
 */
#ifndef URNIC_TESTS_WIRE_CMGEN_H
#define URNIC_TESTS_WIRE_CMGEN_H

#include <stddef.h>
#include <stdint.h>

#include "pktgen.h"
#include "wire/cm.h"

struct wire_cm_field {
	const char *msg;  /* "req", ... */
	const char *name; /* the member, "primary.flow_label" */
	uint16_t attr_id;
	unsigned byte, bit, width; /* as in cm.def */
	size_t off, size;	   /* the member in its message struct */
};

extern const struct wire_cm_field wire_cm_fields[];
extern const size_t wire_cm_nfields;
/* The attribute IDs of cm.def, in its order. */
extern const uint16_t wire_cm_attrs[];
extern const size_t wire_cm_nattrs;

/* A scalar field's value in m (width <= 64), or set it. */
uint64_t wire_cm_get(const struct urnic_cm_mad *m, const struct wire_cm_field *f);
void wire_cm_set(struct urnic_cm_mad *m, const struct wire_cm_field *f, uint64_t v);

/* A message of attr with every field random and valid (reserved codes avoided), and a
 * random transaction ID, status, class-specific word and attribute modifier. */
void wire_cm_random(struct urnic_cm_mad *m, uint16_t attr, struct wire_rng *r);

/* NULL when a and b hold the same header and the same value in every field of their
 * message, else the name of the first that differs. */
const char *wire_cm_diff(const struct urnic_cm_mad *a, const struct urnic_cm_mad *b);

#endif
