/* SPDX-License-Identifier: MIT */
/*
 * cm.c - the CM MAD codec (cm.h): header rules, then the message's fields moved by the
 * table in cm.def between the MAD's data and the message's struct.
 *
 * A field is width bits at (byte, bit) of the 232 data bytes, most significant bit first
 * (IBTA Vol.1 12.6 tables, as Linux's ibta_vol1_c12.h gives them). Every data bit is a
 * field or reserved, and reserved bits are refused when set, so encode(decode(bytes)) ==
 * bytes. Decoding validates the whole MAD before it writes the caller's struct.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "wire/cm.h"

/* The messages, numbered in cm.def order. */
enum cm_msg_index {
#define URNIC_CM_MSG(msg, NAME, attr_id) MSG_##msg,
#define URNIC_CM_FIELD(msg, member, byte, bit, width)
#include "wire/cm.def"
#undef URNIC_CM_FIELD
#undef URNIC_CM_MSG
	MSG_COUNT
};
_Static_assert(MSG_COUNT == 9, "cm.def: REQ, MRA, REJ, REP, RTU, DREQ, DREP, SIDR_REQ, SIDR_REP");

struct cm_msg {
	const char *name;
	uint16_t attr_id;
};

static const struct cm_msg msgs[MSG_COUNT] = {
#define URNIC_CM_MSG(msg, NAME, attr) [MSG_##msg] = { .name = #NAME, .attr_id = (attr) },
#define URNIC_CM_FIELD(msg, member, byte, bit, width)
#include "wire/cm.def"
#undef URNIC_CM_FIELD
#undef URNIC_CM_MSG
};

/* The member's type as a bit count: 8..64 for an unsigned scalar, 0 for a byte array; any
 * other type matches no association and does not compile. */
#define MEMBER(msg, member) (((struct urnic_cm_##msg *)0)->member)
#define MEMBER_KIND(msg, member)                                                                   \
	_Generic(MEMBER(msg, member), uint8_t : 8, uint16_t : 16, uint32_t : 32, uint64_t : 64,    \
		 uint8_t * : 0)
#define SCALAR_BITS(width) ((width) <= 8 ? 8 : (width) <= 16 ? 16 : (width) <= 32 ? 32 : 64)

/* Per-field checks, at compile time: inside the data, and a member that holds exactly
 * the field: the smallest unsigned type for up to 64 bits, else a byte array whose size is
 * the field's, starting on a byte. */
#define URNIC_CM_MSG(msg, NAME, attr_id)
#define URNIC_CM_FIELD(msg, member, byte, bit, width)                                              \
	_Static_assert((bit) < 8 && (width) > 0, #msg "." #member ": bit offset, width");          \
	_Static_assert((byte)*8 + (bit) + (width) <= URNIC_MAD_DATA_BYTES * 8,                     \
		       #msg "." #member ": past the MAD data");                                    \
	_Static_assert((width) > 64 || ((bit) + (width) <= 64 &&                                   \
					MEMBER_KIND(msg, member) == SCALAR_BITS(width)),           \
		       #msg "." #member ": member type does not fit the field");                   \
	_Static_assert((width) <= 64 ||                                                            \
			       ((bit) == 0 && (width) % 8 == 0 && MEMBER_KIND(msg, member) == 0 && \
				sizeof(MEMBER(msg, member)) * 8 == (width)),                       \
		       #msg "." #member ": byte array of the field's size");
#include "wire/cm.def"
#undef URNIC_CM_FIELD
#undef URNIC_CM_MSG

struct cm_field {
	uint8_t msg;	/* enum cm_msg_index */
	uint8_t byte;	/* offset in the MAD data */
	uint8_t bit;	/* bits below the byte's most significant one */
	uint16_t width; /* bits */
	uint16_t off;	/* offsetof the member in the message's struct */
	uint16_t size;	/* sizeof the member */
};

static const struct cm_field fields[] = {
#define URNIC_CM_MSG(msg, NAME, attr_id)
#define URNIC_CM_FIELD(f_msg, member, f_byte, f_bit, f_width)                                      \
	{ .msg = MSG_##f_msg,                                                                      \
	  .byte = (f_byte),                                                                        \
	  .bit = (f_bit),                                                                          \
	  .width = (f_width),                                                                      \
	  .off = (uint16_t)offsetof(struct urnic_cm_##f_msg, member),                              \
	  .size = (uint16_t)sizeof(MEMBER(f_msg, member)) },
#include "wire/cm.def"
#undef URNIC_CM_FIELD
#undef URNIC_CM_MSG
};

#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

static const char *const reason_names[] = {
#define URNIC_CM_REASON(name, text) [URNIC_CM_R_##name] = (text),
#include "wire/cm_reason.def"
#undef URNIC_CM_REASON
};
_Static_assert(sizeof(reason_names) / sizeof(reason_names[0]) == URNIC_CM_R_COUNT,
	       "a text for every reason");

/* The width bits at bit offset bit of p, most significant first: the bytes they touch
 * read big-endian, shifted down and masked (bit + width <= 64, checked above). */
static uint64_t bits_get(const uint8_t *p, unsigned bit, unsigned width)
{
	unsigned nbytes = (bit + width + 7) / 8, i;
	uint64_t v = 0;

	for (i = 0; i < nbytes; i++)
		v = v << 8 | p[i];
	v >>= nbytes * 8 - bit - width;
	return width == 64 ? v : v & ((UINT64_C(1) << width) - 1);
}

/* The inverse: only the field's bits of the bytes it touches change. */
static void bits_put(uint8_t *p, unsigned bit, unsigned width, uint64_t v)
{
	unsigned nbytes = (bit + width + 7) / 8, shift = nbytes * 8 - bit - width, i;
	uint64_t mask = (width == 64 ? UINT64_MAX : (UINT64_C(1) << width) - 1) << shift;

	v <<= shift;
	for (i = 0; i < nbytes; i++) {
		unsigned s = (nbytes - 1 - i) * 8;
		uint8_t m = (uint8_t)(mask >> s);

		p[i] = (uint8_t)((p[i] & ~m) | ((uint8_t)(v >> s) & m));
	}
}

/* A scalar member of the message struct at msg, by its size. */
static uint64_t member_get(const uint8_t *msg, const struct cm_field *f)
{
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (f->size) {
	case 1:
		memcpy(&v8, msg + f->off, 1);
		return v8;
	case 2:
		memcpy(&v16, msg + f->off, 2);
		return v16;
	case 4:
		memcpy(&v32, msg + f->off, 4);
		return v32;
	default:
		memcpy(&v64, msg + f->off, 8);
		return v64;
	}
}

static void member_put(uint8_t *msg, const struct cm_field *f, uint64_t v)
{
	uint8_t v8 = (uint8_t)v;
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	switch (f->size) {
	case 1:
		memcpy(msg + f->off, &v8, 1);
		break;
	case 2:
		memcpy(msg + f->off, &v16, 2);
		break;
	case 4:
		memcpy(msg + f->off, &v32, 4);
		break;
	default:
		memcpy(msg + f->off, &v, 8);
		break;
	}
}

static bool is_array(const struct cm_field *f)
{
	return f->width > 64;
}

static int msg_by_attr(uint16_t attr_id)
{
	int i;

	for (i = 0; i < MSG_COUNT; i++)
		if (msgs[i].attr_id == attr_id)
			return i;
	return -1;
}

/* IBTA 13.4.2 and 12.6: a CM MAD is base version 1, class ComMgt version 2, method Send
 * (the only one Linux's cm.c registers for: CM messages are never responses); its
 * attribute is a CM message. */
static enum urnic_cm_reason hdr_check(const struct urnic_mad_hdr *h, int *msg)
{
	if (h->base_version != URNIC_MAD_BASE_VERSION)
		return URNIC_CM_R_BASE_VERSION;
	if (h->mgmt_class != URNIC_MGMT_CLASS_CM)
		return URNIC_CM_R_MGMT_CLASS;
	if (h->class_version != URNIC_CM_CLASS_VERSION)
		return URNIC_CM_R_CLASS_VERSION;
	if (h->method != URNIC_MAD_METHOD_SEND)
		return URNIC_CM_R_METHOD;
	*msg = msg_by_attr(h->attr_id);
	if (*msg >= 0)
		return URNIC_CM_R_OK;
	/* Alternate path migration needs a second path, which RoCE on one
	 * address does not have: refused by name rather than as unknown. */
	if (h->attr_id == URNIC_CM_ATTR_LAP || h->attr_id == URNIC_CM_ATTR_APR)
		return URNIC_CM_R_ATTR_UNSUPPORTED;
	return URNIC_CM_R_ATTR_UNKNOWN;
}

/* Field values with reserved codes (IBTA 12.6 tables 106-108, 120; Annex A14). */
static enum urnic_cm_reason values_check(int msg, const struct urnic_cm_mad *m)
{
	const struct urnic_cm_req *req = &m->msg.req;

	switch (msg) {
	case MSG_req:
		/* Transport 3 defers to the extended type, which is XRC or reserved; any
		 * other transport leaves the extended type 0. RD decodes: refusing it is the
		 * state machine's choice, not a wire rule. */
		if (req->transport_type == URNIC_CM_TRANSPORT_EXT
			    ? req->ext_transport_type != URNIC_CM_EXT_TRANSPORT_XRC
			    : req->ext_transport_type != 0)
			return URNIC_CM_R_TRANSPORT_RESERVED;
		/* The path MTU codes of verbs' enum ibv_mtu: 1-5 are 256-4096 bytes. */
		if (req->path_mtu < 1 || req->path_mtu > 5)
			return URNIC_CM_R_MTU_RESERVED;
		return URNIC_CM_R_OK;
	case MSG_mra:
		if (m->msg.mra.message_mraed == 3)
			return URNIC_CM_R_MSG_CODE_RESERVED;
		return URNIC_CM_R_OK;
	case MSG_rej:
		if (m->msg.rej.message_rejected == 3)
			return URNIC_CM_R_MSG_CODE_RESERVED;
		if (m->msg.rej.ari_length > URNIC_CM_ARI_BYTES)
			return URNIC_CM_R_INFO_LENGTH;
		return URNIC_CM_R_OK;
	case MSG_sidr_rep:
		if (m->msg.sidr_rep.add_info_length > URNIC_CM_SIDR_INFO_BYTES)
			return URNIC_CM_R_INFO_LENGTH;
		return URNIC_CM_R_OK;
	default:
		return URNIC_CM_R_OK;
	}
}

/* Whether every data bit that no field of msg covers is zero. */
static bool reserved_clear(int msg, const uint8_t *data)
{
	uint8_t used[URNIC_MAD_DATA_BYTES];
	const struct cm_field *f;
	size_t i;

	memset(used, 0, sizeof(used));
	for (f = fields; f < fields + NFIELDS; f++) {
		if (f->msg != msg)
			continue;
		if (is_array(f))
			memset(used + f->byte, 0xff, f->width / 8u);
		else
			bits_put(used + f->byte, f->bit, f->width, UINT64_MAX);
	}
	for (i = 0; i < sizeof(used); i++)
		if (data[i] & ~used[i])
			return false;
	return true;
}

static void fields_get(int msg, uint8_t *out, const uint8_t *data)
{
	const struct cm_field *f;

	for (f = fields; f < fields + NFIELDS; f++) {
		if (f->msg != msg)
			continue;
		if (is_array(f))
			memcpy(out + f->off, data + f->byte, f->size);
		else
			member_put(out, f, bits_get(data + f->byte, f->bit, f->width));
	}
}

static void fields_put(int msg, const uint8_t *in, uint8_t *data)
{
	const struct cm_field *f;

	for (f = fields; f < fields + NFIELDS; f++) {
		if (f->msg != msg)
			continue;
		if (is_array(f))
			memcpy(data + f->byte, in + f->off, f->size);
		else
			bits_put(data + f->byte, f->bit, f->width, member_get(in, f));
	}
}

/* Whether every scalar of msg fits its field's width (encode would cut it). */
static bool widths_ok(int msg, const uint8_t *in)
{
	const struct cm_field *f;

	for (f = fields; f < fields + NFIELDS; f++)
		if (f->msg == msg && !is_array(f) && f->width < 64 && member_get(in, f) >> f->width)
			return false;
	return true;
}

static enum urnic_cm_reason decode(struct urnic_cm_mad *m, const uint8_t *buf, size_t len)
{
	enum urnic_cm_reason r;
	int msg = -1;

	/* IBTA 13.4: a MAD is exactly 256 bytes; as a UD payload nothing follows it. */
	if (len < URNIC_MAD_BYTES)
		return URNIC_CM_R_TRUNCATED;
	if (len > URNIC_MAD_BYTES)
		return URNIC_CM_R_OVERLONG;
	if (urnic_mad_hdr_decode(&m->hdr, buf, len) < 0)
		return URNIC_CM_R_RESERVED_SET;
	r = hdr_check(&m->hdr, &msg);
	if (r != URNIC_CM_R_OK)
		return r;
	if (!reserved_clear(msg, buf + URNIC_MAD_HDR_BYTES))
		return URNIC_CM_R_RESERVED_SET;
	fields_get(msg, (uint8_t *)&m->msg, buf + URNIC_MAD_HDR_BYTES);
	return values_check(msg, m);
}

ssize_t urnic_cm_decode(struct urnic_cm_mad *mad, const uint8_t *buf, size_t len,
			enum urnic_cm_reason *why)
{
	struct urnic_cm_mad m;
	enum urnic_cm_reason r;

	memset(&m, 0, sizeof(m));
	r = decode(&m, buf, len);
	if (why)
		*why = r;
	if (r != URNIC_CM_R_OK)
		return -EBADMSG;
	*mad = m;
	return URNIC_MAD_BYTES;
}

ssize_t urnic_cm_decode_pkt(struct urnic_cm_mad *mad, const struct urnic_pkt *pkt,
			    enum urnic_cm_reason *why)
{
	/* IBTA 13.5: general services MADs go to QP 1 under its well-known Q_Key. */
	if (pkt->bth.opcode != URNIC_OP_UD_SEND_ONLY || pkt->bth.dqpn != URNIC_GSI_QPN ||
	    pkt->deth.qkey != URNIC_GSI_QKEY) {
		if (why)
			*why = URNIC_CM_R_NOT_GSI;
		return -EBADMSG;
	}
	return urnic_cm_decode(mad, pkt->payload, pkt->payload_bytes, why);
}

enum urnic_cm_reason urnic_cm_check(const struct urnic_cm_mad *mad)
{
	enum urnic_cm_reason r;
	int msg = -1;

	r = hdr_check(&mad->hdr, &msg);
	if (r != URNIC_CM_R_OK)
		return r;
	if (!widths_ok(msg, (const uint8_t *)&mad->msg))
		return URNIC_CM_R_FIELD_WIDTH;
	return values_check(msg, mad);
}

ssize_t urnic_cm_encode(const struct urnic_cm_mad *mad, uint8_t *buf, size_t cap)
{
	int msg;

	if (cap < URNIC_MAD_BYTES)
		return -ENOBUFS;
	if (urnic_cm_check(mad) != URNIC_CM_R_OK)
		return -EINVAL;
	msg = msg_by_attr(mad->hdr.attr_id);
	memset(buf, 0, URNIC_MAD_BYTES);
	(void)urnic_mad_hdr_encode(&mad->hdr, buf, cap);
	fields_put(msg, (const uint8_t *)&mad->msg, buf + URNIC_MAD_HDR_BYTES);
	return URNIC_MAD_BYTES;
}

void urnic_cm_mad_init(struct urnic_cm_mad *mad, enum urnic_cm_attr attr_id, uint64_t tid)
{
	memset(mad, 0, sizeof(*mad));
	mad->hdr.base_version = URNIC_MAD_BASE_VERSION;
	mad->hdr.mgmt_class = URNIC_MGMT_CLASS_CM;
	mad->hdr.class_version = URNIC_CM_CLASS_VERSION;
	mad->hdr.method = URNIC_MAD_METHOD_SEND;
	mad->hdr.attr_id = (uint16_t)attr_id;
	mad->hdr.tid = tid;
}

const char *urnic_cm_attr_name(uint16_t attr_id)
{
	int msg = msg_by_attr(attr_id);

	return msg < 0 ? NULL : msgs[msg].name;
}

const char *urnic_cm_reason_name(enum urnic_cm_reason r)
{
	return (unsigned)r < URNIC_CM_R_COUNT ? reason_names[r] : "?";
}
