/* SPDX-License-Identifier: MIT */
/*
 * cmgen.c - CM MAD test helpers (cmgen.h): cm.def read through the public structs.
 */
#include "cmgen.h"

#include <string.h>

const struct wire_cm_field wire_cm_fields[] = {
#define URNIC_CM_MSG(msg, NAME, attr_id)
#define URNIC_CM_FIELD(f_msg, member, f_byte, f_bit, f_width)                                      \
	{ .msg = #f_msg,                                                                           \
	  .name = #member,                                                                         \
	  .attr_id = URNIC_CM_ATTR_##f_msg,                                                        \
	  .byte = (f_byte),                                                                        \
	  .bit = (f_bit),                                                                          \
	  .width = (f_width),                                                                      \
	  .off = offsetof(struct urnic_cm_##f_msg, member),                                        \
	  .size = sizeof(((struct urnic_cm_##f_msg *)0)->member) },
/* The attribute enum is in upper case; these map cm.def's lower-case message names. */
#define URNIC_CM_ATTR_req URNIC_CM_ATTR_REQ
#define URNIC_CM_ATTR_mra URNIC_CM_ATTR_MRA
#define URNIC_CM_ATTR_rej URNIC_CM_ATTR_REJ
#define URNIC_CM_ATTR_rep URNIC_CM_ATTR_REP
#define URNIC_CM_ATTR_rtu URNIC_CM_ATTR_RTU
#define URNIC_CM_ATTR_dreq URNIC_CM_ATTR_DREQ
#define URNIC_CM_ATTR_drep URNIC_CM_ATTR_DREP
#define URNIC_CM_ATTR_sidr_req URNIC_CM_ATTR_SIDR_REQ
#define URNIC_CM_ATTR_sidr_rep URNIC_CM_ATTR_SIDR_REP
#include "wire/cm.def"
#undef URNIC_CM_FIELD
#undef URNIC_CM_MSG
};
const size_t wire_cm_nfields = sizeof(wire_cm_fields) / sizeof(wire_cm_fields[0]);

const uint16_t wire_cm_attrs[] = {
#define URNIC_CM_MSG(msg, NAME, attr_id) (attr_id),
#define URNIC_CM_FIELD(msg, member, byte, bit, width)
#include "wire/cm.def"
#undef URNIC_CM_FIELD
#undef URNIC_CM_MSG
};
const size_t wire_cm_nattrs = sizeof(wire_cm_attrs) / sizeof(wire_cm_attrs[0]);

uint64_t wire_cm_get(const struct urnic_cm_mad *m, const struct wire_cm_field *f)
{
	const uint8_t *p = (const uint8_t *)&m->msg + f->off;
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (f->size) {
	case 1:
		memcpy(&v8, p, 1);
		return v8;
	case 2:
		memcpy(&v16, p, 2);
		return v16;
	case 4:
		memcpy(&v32, p, 4);
		return v32;
	default:
		memcpy(&v64, p, 8);
		return v64;
	}
}

void wire_cm_set(struct urnic_cm_mad *m, const struct wire_cm_field *f, uint64_t v)
{
	uint8_t *p = (uint8_t *)&m->msg + f->off;
	uint8_t v8 = (uint8_t)v;
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	switch (f->size) {
	case 1:
		memcpy(p, &v8, 1);
		break;
	case 2:
		memcpy(p, &v16, 2);
		break;
	case 4:
		memcpy(p, &v32, 4);
		break;
	default:
		memcpy(p, &v, 8);
		break;
	}
}

/* Values with reserved codes drawn again among the defined ones (cm.c values_check). */
static void make_valid(struct urnic_cm_mad *m, struct wire_rng *r)
{
	struct urnic_cm_req *req = &m->msg.req;

	switch (m->hdr.attr_id) {
	case URNIC_CM_ATTR_REQ:
		req->ext_transport_type = req->transport_type == URNIC_CM_TRANSPORT_EXT
						  ? URNIC_CM_EXT_TRANSPORT_XRC
						  : 0;
		req->path_mtu = (uint8_t)(1 + wire_rng_below(r, 5));
		break;
	case URNIC_CM_ATTR_MRA:
		m->msg.mra.message_mraed = (uint8_t)wire_rng_below(r, 3);
		break;
	case URNIC_CM_ATTR_REJ:
		m->msg.rej.message_rejected = (uint8_t)wire_rng_below(r, 3);
		m->msg.rej.ari_length = (uint8_t)wire_rng_below(r, URNIC_CM_ARI_BYTES + 1);
		break;
	case URNIC_CM_ATTR_SIDR_REP:
		m->msg.sidr_rep.add_info_length =
			(uint8_t)wire_rng_below(r, URNIC_CM_SIDR_INFO_BYTES + 1);
		break;
	default:
		break;
	}
}

void wire_cm_random(struct urnic_cm_mad *m, uint16_t attr, struct wire_rng *r)
{
	size_t i, k;

	urnic_cm_mad_init(m, attr, wire_rng_u64(r));
	m->hdr.status = (uint16_t)wire_rng_u32(r);
	m->hdr.class_specific = (uint16_t)wire_rng_u32(r);
	m->hdr.attr_mod = wire_rng_u32(r);
	for (i = 0; i < wire_cm_nfields; i++) {
		const struct wire_cm_field *f = &wire_cm_fields[i];

		if (f->attr_id != attr)
			continue;
		if (f->width > 64) {
			for (k = 0; k < f->size; k++)
				((uint8_t *)&m->msg)[f->off + k] = (uint8_t)wire_rng_u32(r);
			continue;
		}
		wire_cm_set(m, f,
			    f->width == 64 ? wire_rng_u64(r)
					   : wire_rng_u64(r) & ((UINT64_C(1) << f->width) - 1));
	}
	make_valid(m, r);
}

const char *wire_cm_diff(const struct urnic_cm_mad *a, const struct urnic_cm_mad *b)
{
	size_t i;

	if (a->hdr.base_version != b->hdr.base_version || a->hdr.mgmt_class != b->hdr.mgmt_class ||
	    a->hdr.class_version != b->hdr.class_version || a->hdr.method != b->hdr.method ||
	    a->hdr.status != b->hdr.status || a->hdr.class_specific != b->hdr.class_specific ||
	    a->hdr.tid != b->hdr.tid || a->hdr.attr_id != b->hdr.attr_id ||
	    a->hdr.attr_mod != b->hdr.attr_mod)
		return "MAD header";
	for (i = 0; i < wire_cm_nfields; i++) {
		const struct wire_cm_field *f = &wire_cm_fields[i];

		if (f->attr_id != a->hdr.attr_id)
			continue;
		if (memcmp((const uint8_t *)&a->msg + f->off, (const uint8_t *)&b->msg + f->off,
			   f->size))
			return f->name;
	}
	return NULL;
}
