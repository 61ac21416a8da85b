/* SPDX-License-Identifier: MIT */
/*
 * uet.c - the UET PDS and SES header codec (uet.h). The PDS prologue packs type (5 bits),
 * next header or control type (4) and flags (7) into 16 bits; each type's length, flags
 * and allowed next headers come from uet_type.def. Checks run in a fixed order, the
 * first broken rule naming the refusal: length of the prologue, type known, type
 * supported, length of the type's header, reserved flags, next header (or control type),
 * then the type's own codes and reserved fields. The SES checks: length, version,
 * reserved bits, opcode (responses: list, opcode, return code), reserved length bits.
 */
#include <errno.h>
#include <string.h>

#include "wire/byteorder.h"
#include "wire/uet.h"

enum {
	TYPES = 32,
	PRO_TYPE_SHIFT = 11,
	PRO_NEXT_SHIFT = 7,
	PRO_NEXT = 0x0f,
	PRO_FLAGS = 0x7f,
	ACK_REQ_BOTH = URNIC_UET_F_REQ_CLEAR | URNIC_UET_F_REQ_CLOSE,
	SYN_PDC_RESERVED = 0xe000, /* pdc_info's three reserved bits */
	SYN_USE_RSV_PDC = 0x1000,
	CC_TYPE_SHIFT = 4,
	CC_FLAGS = 0x0f,
	CREDIT_RESERVED = 0x000000ffffff0000ull, /* between credit and ooo_count */
	SES_VER_SHIFT = 6,
	SES_LOW6 = 0x3f,
	SES_TOP2 = 0xc0,
	SES_ID12_RESERVED = 0xf0, /* the four bits above pid_on_fep and resource_index */
	SES_ID12 = 0x0fff,
	SES_REQ_COMMON = 12,
	SES_RSP_COMMON = 8,
};
_Static_assert((URNIC_UET_F_EPSN | URNIC_UET_F_M | URNIC_UET_F_RETX | URNIC_UET_F_P |
		ACK_REQ_BOTH) == 0x7e,
	       "ACK flags leave only bit 0 reserved");
_Static_assert(URNIC_UET_NEXT_COUNT <= PRO_NEXT + 1 && URNIC_UET_CTRL_COUNT <= PRO_NEXT + 1,
	       "next header and control type fit the prologue's 4 bits");

struct pds_type {
	const char *name;
	uint8_t bytes;
	uint8_t flags;
	uint8_t nexts;
};

#define URNIC_UET_TYPE(name, code, bytes, flags, nexts)                                            \
	_Static_assert((code) > 0 && (code) < TYPES && (bytes) <= URNIC_UET_PDS_MAX_BYTES &&       \
			       ((flags) & ~PRO_FLAGS) == 0 &&                                      \
			       ((nexts) >> URNIC_UET_NEXT_COUNT) == 0,                             \
		       #name ": code, length, flags, next headers");
#include "wire/uet_type.def"
#undef URNIC_UET_TYPE

static const struct pds_type types[TYPES] = {
#define URNIC_UET_TYPE(n, code, b, f, x)                                                           \
	[code] = { .name = #n, .bytes = (b), .flags = (f), .nexts = (x) },
#include "wire/uet_type.def"
#undef URNIC_UET_TYPE
};

static const uint8_t ses_len[URNIC_UET_NEXT_COUNT] = {
	[URNIC_UET_NEXT_REQ_SMALL] = 20, [URNIC_UET_NEXT_REQ_MEDIUM] = 32,
	[URNIC_UET_NEXT_REQ_STD] = 44,	 [URNIC_UET_NEXT_RSP] = 12,
	[URNIC_UET_NEXT_RSP_DATA] = 20,	 [URNIC_UET_NEXT_RSP_DATA_SMALL] = 12,
};
_Static_assert(URNIC_UET_SES_MAX_BYTES == 44, "REQ_STD is the longest SES header");

static const char *const reason_names[URNIC_UET_R_COUNT] = {
#define URNIC_UET_R(name, text) [URNIC_UET_R_##name] = #name,
#include "wire/uet_reason.def"
#undef URNIC_UET_R
};

const char *urnic_uet_reason_name(enum urnic_uet_reason r)
{
	return (unsigned)r < URNIC_UET_R_COUNT ? reason_names[r] : "?";
}

const char *urnic_uet_type_name(uint8_t type)
{
	return type < TYPES && types[type].name ? types[type].name : "?";
}

static bool is_request(uint8_t type)
{
	return type == URNIC_UET_RUD_REQ || type == URNIC_UET_ROD_REQ ||
	       type == URNIC_UET_RUD_CC_REQ || type == URNIC_UET_ROD_CC_REQ;
}

static bool is_ack(uint8_t type)
{
	return type == URNIC_UET_ACK || type == URNIC_UET_ACK_CC;
}

static bool is_rudi(uint8_t type)
{
	return type == URNIC_UET_RUDI_REQ || type == URNIC_UET_RUDI_RESP;
}

/* A request with SYN, or a CTRL with SYN: the dpdcid slot is pdc_info and psn_offset. */
static bool has_syn(uint8_t type, uint8_t flags)
{
	return (is_request(type) || type == URNIC_UET_CTRL) && (flags & URNIC_UET_F_SYN);
}

/* UE 1.0 PDS, NACK codes: 0, 0x0c and 0x1b-0xfc are reserved. */
static bool nack_code_known(uint8_t code)
{
	return (code >= URNIC_UET_NACK_TRIMMED && code <= URNIC_UET_NACK_RCVR_INFER_LOSS &&
		code != 0x0c) ||
	       code >= URNIC_UET_NACK_EXP_NORMAL;
}

size_t urnic_uet_pds_bytes(uint8_t type, uint8_t flags)
{
	if (type >= TYPES || !types[type].bytes)
		return 0;
	if (type == URNIC_UET_ACK && (flags & URNIC_UET_F_EPSN))
		return URNIC_UET_ACK_EPSN_BYTES;
	return types[type].bytes;
}

size_t urnic_uet_ses_bytes(uint8_t next)
{
	return next < URNIC_UET_NEXT_COUNT ? ses_len[next] : 0;
}

/* The type's own codes and reserved fields, once length, flags and next are good. */
static enum urnic_uet_reason type_check(uint8_t type, uint8_t flags, uint8_t next, const uint8_t *p)
{
	if (has_syn(type, flags) && (urnic_get_be16(p + 10) & SYN_PDC_RESERVED))
		return URNIC_UET_R_RESERVED;
	switch (type) {
	case URNIC_UET_ACK:
	case URNIC_UET_ACK_CC:
		if ((flags & ACK_REQ_BOTH) == ACK_REQ_BOTH)
			return URNIC_UET_R_ACK_REQ;
		if (type == URNIC_UET_ACK)
			return URNIC_UET_R_OK;
		if (p[12] >> CC_TYPE_SHIFT > URNIC_UET_CC_CREDIT)
			return URNIC_UET_R_CC_TYPE;
		if (p[12] & CC_FLAGS)
			return URNIC_UET_R_RESERVED;
		if (p[12] >> CC_TYPE_SHIFT == URNIC_UET_CC_CREDIT &&
		    (urnic_get_be64(p + 24) & CREDIT_RESERVED))
			return URNIC_UET_R_RESERVED;
		return URNIC_UET_R_OK;
	case URNIC_UET_NACK:
		if (!nack_code_known(p[2]))
			return URNIC_UET_R_NACK_CODE;
		/* A RUDI NACK names a packet, not a PDC: both PDC IDs are zero. */
		if ((flags & URNIC_UET_F_NT) && urnic_get_be32(p + 8) != 0)
			return URNIC_UET_R_RESERVED;
		return URNIC_UET_R_OK;
	case URNIC_UET_CTRL:
		if (next != URNIC_UET_CTRL_PROBE && urnic_get_be16(p + 2) != 0)
			return URNIC_UET_R_RESERVED;
		return URNIC_UET_R_OK;
	case URNIC_UET_RUDI_REQ:
	case URNIC_UET_RUDI_RESP:
	case URNIC_UET_UUD_REQ:
		return urnic_get_be16(p + 2) ? URNIC_UET_R_RESERVED : URNIC_UET_R_OK;
	default:
		return URNIC_UET_R_OK;
	}
}

static enum urnic_uet_reason pds_check(const uint8_t *p, size_t len)
{
	uint16_t pro;
	uint8_t type, next, flags;
	const struct pds_type *t;

	if (len < URNIC_UET_PROLOGUE_BYTES)
		return URNIC_UET_R_TRUNCATED;
	pro = urnic_get_be16(p);
	type = (uint8_t)(pro >> PRO_TYPE_SHIFT);
	next = (uint8_t)(pro >> PRO_NEXT_SHIFT & PRO_NEXT);
	flags = (uint8_t)(pro & PRO_FLAGS);
	t = &types[type];
	if (!t->name)
		return URNIC_UET_R_TYPE;
	if (!t->bytes)
		return URNIC_UET_R_UNSUPPORTED;
	if (len < urnic_uet_pds_bytes(type, flags))
		return URNIC_UET_R_TRUNCATED;
	if (flags & ~t->flags)
		return URNIC_UET_R_RESERVED;
	if (type == URNIC_UET_CTRL) {
		if (next >= URNIC_UET_CTRL_COUNT)
			return URNIC_UET_R_CTRL_TYPE;
	} else if (!(t->nexts >> next & 1)) {
		return URNIC_UET_R_NEXT_HDR;
	}
	return type_check(type, flags, next, p);
}

enum urnic_uet_reason urnic_uet_pds_decode(struct urnic_uet_pds *h, size_t *hdr_bytes,
					   const uint8_t *p, size_t len)
{
	enum urnic_uet_reason r = pds_check(p, len);
	struct urnic_uet_pds o = { 0 };
	uint16_t pro;

	if (r != URNIC_UET_R_OK)
		return r;
	pro = urnic_get_be16(p);
	o.type = (uint8_t)(pro >> PRO_TYPE_SHIFT);
	o.next = (uint8_t)(pro >> PRO_NEXT_SHIFT & PRO_NEXT);
	o.flags = (uint8_t)(pro & PRO_FLAGS);
	if (is_request(o.type) || o.type == URNIC_UET_CTRL) {
		if (o.type == URNIC_UET_CTRL)
			o.probe_opaque = urnic_get_be16(p + 2);
		else
			o.clear_psn_offset = (int16_t)urnic_get_be16(p + 2);
		o.psn = urnic_get_be32(p + 4);
		o.spdcid = urnic_get_be16(p + 8);
		if (o.flags & URNIC_UET_F_SYN) {
			o.use_rsv_pdc = (urnic_get_be16(p + 10) & SYN_USE_RSV_PDC) != 0;
			o.psn_offset = urnic_get_be16(p + 10) & URNIC_UET_PSN_OFFSET_MAX;
		} else {
			o.dpdcid = urnic_get_be16(p + 10);
		}
		if (o.type == URNIC_UET_RUD_CC_REQ || o.type == URNIC_UET_ROD_CC_REQ) {
			o.ccc_id = p[12];
			o.credit_target = urnic_get_be24(p + 13);
		}
		if (o.type == URNIC_UET_CTRL)
			o.payload = urnic_get_be32(p + 12);
	} else if (is_ack(o.type)) {
		if (o.flags & URNIC_UET_F_P)
			o.probe_opaque = urnic_get_be16(p + 2);
		else
			o.ack_psn_offset = (int16_t)urnic_get_be16(p + 2);
		o.cack_psn = urnic_get_be32(p + 4);
		o.spdcid = urnic_get_be16(p + 8);
		o.dpdcid = urnic_get_be16(p + 10);
		if (o.flags & URNIC_UET_F_EPSN)
			o.payload = urnic_get_be32(p + 12);
		if (o.type == URNIC_UET_ACK_CC) {
			o.cc_type = p[12] >> CC_TYPE_SHIFT;
			o.mpr = p[13];
			o.sack_psn_offset = (int16_t)urnic_get_be16(p + 14);
			o.sack_bitmap = urnic_get_be64(p + 16);
			o.ack_cc_state = urnic_get_be64(p + 24);
		}
	} else if (o.type == URNIC_UET_NACK) {
		o.nack_code = p[2];
		o.vendor_code = p[3];
		o.nack_psn = urnic_get_be32(p + 4);
		o.spdcid = urnic_get_be16(p + 8);
		o.dpdcid = urnic_get_be16(p + 10);
		o.payload = urnic_get_be32(p + 12);
	} else if (is_rudi(o.type)) {
		o.pkt_id = urnic_get_be32(p + 4);
	}
	*hdr_bytes = urnic_uet_pds_bytes(o.type, o.flags);
	*h = o;
	return URNIC_UET_R_OK;
}

/* What the decoder would refuse, from the host-order fields. */
static bool pds_encode_ok(const struct urnic_uet_pds *h)
{
	const struct pds_type *t;

	if (h->type >= TYPES || !types[h->type].bytes)
		return false;
	t = &types[h->type];
	if (h->flags & ~t->flags)
		return false;
	if (h->type == URNIC_UET_CTRL
		    ? h->next >= URNIC_UET_CTRL_COUNT
		    : h->next >= URNIC_UET_NEXT_COUNT || !(t->nexts >> h->next & 1))
		return false;
	if (has_syn(h->type, h->flags) && h->psn_offset > URNIC_UET_PSN_OFFSET_MAX)
		return false;
	if ((h->type == URNIC_UET_RUD_CC_REQ || h->type == URNIC_UET_ROD_CC_REQ) &&
	    h->credit_target > 0xffffff)
		return false;
	if (is_ack(h->type) && (h->flags & ACK_REQ_BOTH) == ACK_REQ_BOTH)
		return false;
	if (h->type == URNIC_UET_ACK_CC &&
	    (h->cc_type > URNIC_UET_CC_CREDIT ||
	     (h->cc_type == URNIC_UET_CC_CREDIT && (h->ack_cc_state & CREDIT_RESERVED))))
		return false;
	if (h->type == URNIC_UET_NACK &&
	    (!nack_code_known(h->nack_code) ||
	     ((h->flags & URNIC_UET_F_NT) && (h->spdcid || h->dpdcid))))
		return false;
	return true;
}

ssize_t urnic_uet_pds_encode(const struct urnic_uet_pds *h, uint8_t *buf, size_t cap)
{
	size_t bytes;
	uint16_t slot;

	if (!pds_encode_ok(h))
		return -EINVAL;
	bytes = urnic_uet_pds_bytes(h->type, h->flags);
	if (cap < bytes)
		return -ENOBUFS;
	memset(buf, 0, bytes);
	urnic_put_be16(
		buf, (uint16_t)(h->type << PRO_TYPE_SHIFT | h->next << PRO_NEXT_SHIFT | h->flags));
	if (is_request(h->type) || h->type == URNIC_UET_CTRL) {
		if (h->type != URNIC_UET_CTRL)
			urnic_put_be16(buf + 2, (uint16_t)h->clear_psn_offset);
		else if (h->next == URNIC_UET_CTRL_PROBE)
			urnic_put_be16(buf + 2, h->probe_opaque);
		urnic_put_be32(buf + 4, h->psn);
		urnic_put_be16(buf + 8, h->spdcid);
		slot = h->flags & URNIC_UET_F_SYN
			       ? (uint16_t)((h->use_rsv_pdc ? SYN_USE_RSV_PDC : 0) | h->psn_offset)
			       : h->dpdcid;
		urnic_put_be16(buf + 10, slot);
		if (h->type == URNIC_UET_RUD_CC_REQ || h->type == URNIC_UET_ROD_CC_REQ) {
			buf[12] = h->ccc_id;
			urnic_put_be24(buf + 13, h->credit_target);
		}
		if (h->type == URNIC_UET_CTRL)
			urnic_put_be32(buf + 12, h->payload);
	} else if (is_ack(h->type)) {
		urnic_put_be16(buf + 2, h->flags & URNIC_UET_F_P ? h->probe_opaque
								 : (uint16_t)h->ack_psn_offset);
		urnic_put_be32(buf + 4, h->cack_psn);
		urnic_put_be16(buf + 8, h->spdcid);
		urnic_put_be16(buf + 10, h->dpdcid);
		if (h->flags & URNIC_UET_F_EPSN)
			urnic_put_be32(buf + 12, h->payload);
		if (h->type == URNIC_UET_ACK_CC) {
			buf[12] = (uint8_t)(h->cc_type << CC_TYPE_SHIFT);
			buf[13] = h->mpr;
			urnic_put_be16(buf + 14, (uint16_t)h->sack_psn_offset);
			urnic_put_be64(buf + 16, h->sack_bitmap);
			urnic_put_be64(buf + 24, h->ack_cc_state);
		}
	} else if (h->type == URNIC_UET_NACK) {
		buf[2] = h->nack_code;
		buf[3] = h->vendor_code;
		urnic_put_be32(buf + 4, h->nack_psn);
		urnic_put_be16(buf + 8, h->spdcid);
		urnic_put_be16(buf + 10, h->dpdcid);
		urnic_put_be32(buf + 12, h->payload);
	} else if (is_rudi(h->type)) {
		urnic_put_be32(buf + 4, h->pkt_id);
	}
	return (ssize_t)bytes;
}

static bool ses_is_request(uint8_t next)
{
	return next >= URNIC_UET_NEXT_REQ_SMALL && next <= URNIC_UET_NEXT_REQ_STD;
}

static enum urnic_uet_reason ses_check(uint8_t next, const uint8_t *p, size_t len)
{
	size_t bytes = urnic_uet_ses_bytes(next);

	if (!bytes)
		return URNIC_UET_R_NEXT_HDR;
	if (len < bytes)
		return URNIC_UET_R_SES_TRUNCATED;
	if (p[1] >> SES_VER_SHIFT != URNIC_UET_SES_VERSION)
		return URNIC_UET_R_SES_VERSION;
	if (ses_is_request(next)) {
		if ((p[0] & SES_TOP2) || (p[8] & SES_ID12_RESERVED) ||
		    (p[10] & SES_ID12_RESERVED) ||
		    (next != URNIC_UET_NEXT_REQ_STD && (p[2] & SES_TOP2)))
			return URNIC_UET_R_SES_RESERVED;
		if ((p[0] & SES_LOW6) > URNIC_UET_SES_OPCODE_MAX)
			return URNIC_UET_R_SES_OPCODE;
		return URNIC_UET_R_OK;
	}
	if (p[0] >> SES_VER_SHIFT > URNIC_UET_LIST_OVERFLOW)
		return URNIC_UET_R_SES_LIST;
	if ((p[0] & SES_LOW6) > URNIC_UET_RSP_NONE)
		return URNIC_UET_R_SES_OPCODE;
	if ((p[1] & SES_LOW6) > URNIC_UET_RC_MAX)
		return URNIC_UET_R_SES_RETURN_CODE;
	if ((next == URNIC_UET_NEXT_RSP_DATA_SMALL && (p[2] & SES_TOP2)) ||
	    (next == URNIC_UET_NEXT_RSP_DATA && (p[10] & SES_TOP2)))
		return URNIC_UET_R_SES_RESERVED;
	return URNIC_UET_R_OK;
}

enum urnic_uet_reason urnic_uet_ses_decode(struct urnic_uet_ses *s, size_t *hdr_bytes, uint8_t next,
					   const uint8_t *p, size_t len)
{
	enum urnic_uet_reason r = ses_check(next, p, len);
	struct urnic_uet_ses o = { .next = next };

	if (r != URNIC_UET_R_OK)
		return r;
	o.ri_generation = p[4];
	o.job_id = urnic_get_be24(p + 5);
	if (ses_is_request(next)) {
		o.opcode = p[0] & SES_LOW6;
		o.flags = p[1] & SES_LOW6;
		if (next == URNIC_UET_NEXT_REQ_STD)
			o.msg_id = urnic_get_be16(p + 2);
		else
			o.length14 = urnic_get_be16(p + 2);
		o.pid_on_fep = urnic_get_be16(p + 8) & SES_ID12;
		o.resource_index = urnic_get_be16(p + 10) & SES_ID12;
		if (next == URNIC_UET_NEXT_REQ_SMALL || next == URNIC_UET_NEXT_REQ_STD)
			o.buffer_offset = urnic_get_be64(p + SES_REQ_COMMON);
		if (next == URNIC_UET_NEXT_REQ_MEDIUM)
			o.header_data = urnic_get_be64(p + SES_REQ_COMMON);
		if (next != URNIC_UET_NEXT_REQ_SMALL) {
			o.initiator = urnic_get_be32(p + 20);
			o.mem_key = urnic_get_be64(p + 24);
		}
		if (next == URNIC_UET_NEXT_REQ_STD) {
			o.header_data = urnic_get_be64(p + 32);
			o.request_length = urnic_get_be32(p + 40);
		}
	} else {
		o.list = p[0] >> SES_VER_SHIFT;
		o.rsp_opcode = p[0] & SES_LOW6;
		o.return_code = p[1] & SES_LOW6;
		if (next == URNIC_UET_NEXT_RSP_DATA_SMALL)
			o.length14 = urnic_get_be16(p + 2);
		else
			o.msg_id = urnic_get_be16(p + 2);
		if (next == URNIC_UET_NEXT_RSP)
			o.mod_len = urnic_get_be32(p + SES_RSP_COMMON);
		if (next == URNIC_UET_NEXT_RSP_DATA) {
			o.read_msg_id = urnic_get_be16(p + 8);
			o.length14 = urnic_get_be16(p + 10);
			o.mod_len = urnic_get_be32(p + 12);
			o.msg_offset = urnic_get_be32(p + 16);
		}
		if (next == URNIC_UET_NEXT_RSP_DATA_SMALL)
			o.orig_req_psn = urnic_get_be32(p + SES_RSP_COMMON);
	}
	*hdr_bytes = urnic_uet_ses_bytes(next);
	*s = o;
	return URNIC_UET_R_OK;
}

static bool ses_encode_ok(const struct urnic_uet_ses *s)
{
	if (!urnic_uet_ses_bytes(s->next) || s->job_id > 0xffffff)
		return false;
	if (ses_is_request(s->next))
		return s->opcode <= URNIC_UET_SES_OPCODE_MAX && s->flags <= SES_LOW6 &&
		       s->pid_on_fep <= SES_ID12 && s->resource_index <= SES_ID12 &&
		       (s->next == URNIC_UET_NEXT_REQ_STD || s->length14 <= URNIC_UET_LEN14_MAX);
	return s->list <= URNIC_UET_LIST_OVERFLOW && s->rsp_opcode <= URNIC_UET_RSP_NONE &&
	       s->return_code <= URNIC_UET_RC_MAX && s->length14 <= URNIC_UET_LEN14_MAX;
}

ssize_t urnic_uet_ses_encode(const struct urnic_uet_ses *s, uint8_t *buf, size_t cap)
{
	size_t bytes;

	if (!ses_encode_ok(s))
		return -EINVAL;
	bytes = urnic_uet_ses_bytes(s->next);
	if (cap < bytes)
		return -ENOBUFS;
	memset(buf, 0, bytes);
	buf[4] = s->ri_generation;
	urnic_put_be24(buf + 5, s->job_id);
	if (ses_is_request(s->next)) {
		buf[0] = s->opcode;
		buf[1] = (uint8_t)(URNIC_UET_SES_VERSION << SES_VER_SHIFT | s->flags);
		urnic_put_be16(buf + 2,
			       s->next == URNIC_UET_NEXT_REQ_STD ? s->msg_id : s->length14);
		urnic_put_be16(buf + 8, s->pid_on_fep);
		urnic_put_be16(buf + 10, s->resource_index);
		if (s->next == URNIC_UET_NEXT_REQ_SMALL || s->next == URNIC_UET_NEXT_REQ_STD)
			urnic_put_be64(buf + SES_REQ_COMMON, s->buffer_offset);
		if (s->next == URNIC_UET_NEXT_REQ_MEDIUM)
			urnic_put_be64(buf + SES_REQ_COMMON, s->header_data);
		if (s->next != URNIC_UET_NEXT_REQ_SMALL) {
			urnic_put_be32(buf + 20, s->initiator);
			urnic_put_be64(buf + 24, s->mem_key);
		}
		if (s->next == URNIC_UET_NEXT_REQ_STD) {
			urnic_put_be64(buf + 32, s->header_data);
			urnic_put_be32(buf + 40, s->request_length);
		}
		return (ssize_t)bytes;
	}
	buf[0] = (uint8_t)(s->list << SES_VER_SHIFT | s->rsp_opcode);
	buf[1] = (uint8_t)(URNIC_UET_SES_VERSION << SES_VER_SHIFT | s->return_code);
	urnic_put_be16(buf + 2, s->next == URNIC_UET_NEXT_RSP_DATA_SMALL ? s->length14 : s->msg_id);
	if (s->next == URNIC_UET_NEXT_RSP)
		urnic_put_be32(buf + SES_RSP_COMMON, s->mod_len);
	if (s->next == URNIC_UET_NEXT_RSP_DATA) {
		urnic_put_be16(buf + 8, s->read_msg_id);
		urnic_put_be16(buf + 10, s->length14);
		urnic_put_be32(buf + 12, s->mod_len);
		urnic_put_be32(buf + 16, s->msg_offset);
	}
	if (s->next == URNIC_UET_NEXT_RSP_DATA_SMALL)
		urnic_put_be32(buf + SES_RSP_COMMON, s->orig_req_psn);
	return (ssize_t)bytes;
}

enum urnic_uet_reason urnic_uet_decode(struct urnic_uet_pkt *pkt, const uint8_t *p, size_t len)
{
	struct urnic_uet_pkt o = { 0 };
	size_t pds_bytes = 0, ses_bytes = 0;
	enum urnic_uet_reason r = urnic_uet_pds_decode(&o.pds, &pds_bytes, p, len);

	if (r != URNIC_UET_R_OK)
		return r;
	if (o.pds.type != URNIC_UET_CTRL && o.pds.next != URNIC_UET_NEXT_NONE) {
		r = urnic_uet_ses_decode(&o.ses, &ses_bytes, o.pds.next, p + pds_bytes,
					 len - pds_bytes);
		if (r != URNIC_UET_R_OK)
			return r;
	}
	o.payload = p + pds_bytes + ses_bytes;
	o.payload_bytes = len - pds_bytes - ses_bytes;
	*pkt = o;
	return URNIC_UET_R_OK;
}
