/* SPDX-License-Identifier: MIT */
/*
 * mpa.c - the MPA Request/Reply codec (mpa.h): RFC 5044 7.1 frames with RFC 6581 3's
 * IRD/ORD word, validated whole before the caller's struct is written.
 *
 * The flags byte is M C R E then reserved bits; siw (drivers/infiniband/sw/siw/iwarp.h)
 * also uses 0x08 for an experimental GSO hint, which is decoded and kept. The other
 * reserved bits, and E in revision 1, are sent as zero and not checked on reception
 * (RFC 5044 7.1, "Res"), so encode(decode(frame)) gives back the frame with them clear.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "wire/byteorder.h"
#include "wire/mpa.h"

static const char key_req[URNIC_MPA_KEY_BYTES + 1] = "MPA ID Req Frame";
static const char key_rep[URNIC_MPA_KEY_BYTES + 1] = "MPA ID Rep Frame";
_Static_assert(sizeof(key_req) == URNIC_MPA_KEY_BYTES + 1, "a 16-byte key");

enum {
	MPA_FLAG_M = 0x80,
	MPA_FLAG_C = 0x40,
	MPA_FLAG_R = 0x20,
	MPA_FLAG_E = 0x10,
	MPA_FLAG_GSO = 0x08,
	MPA_FLAG_RESERVED = 0x07,
	MPA_V2_FLAG_HI = 0x8000, /* A in the IRD word, C in the ORD word */
	MPA_V2_FLAG_LO = 0x4000, /* B in the IRD word, D in the ORD word */
};
_Static_assert((MPA_FLAG_M | MPA_FLAG_C | MPA_FLAG_R | MPA_FLAG_E | MPA_FLAG_GSO |
		MPA_FLAG_RESERVED) == 0xff,
	       "every bit of the flags byte is named");
_Static_assert(((MPA_V2_FLAG_HI | MPA_V2_FLAG_LO) & URNIC_MPA_IRD_ORD_MAX) == 0,
	       "flags and the 14-bit depth share the word");

static int key_kind(const uint8_t *p)
{
	if (memcmp(p, key_req, URNIC_MPA_KEY_BYTES) == 0)
		return URNIC_MPA_REQ;
	if (memcmp(p, key_rep, URNIC_MPA_KEY_BYTES) == 0)
		return URNIC_MPA_REP;
	return 0;
}

/* E comes with enhanced setup, revision 2 (RFC 6581 3); revision 1 reserves the bit. */
static bool enhanced(uint8_t flags, uint8_t rev)
{
	return rev == 2 && (flags & MPA_FLAG_E);
}

/* RFC 5044 7.1: the header's rules, in the order a reader meets the fields. */
static enum urnic_iw_reason hdr_check(const uint8_t *buf, size_t len)
{
	uint8_t flags, rev;
	uint16_t pd_len;

	if (len < URNIC_MPA_HDR_BYTES)
		return URNIC_IW_R_MPA_TRUNCATED;
	if (!key_kind(buf))
		return URNIC_IW_R_MPA_KEY;
	flags = buf[16];
	rev = buf[17];
	pd_len = urnic_get_be16(buf + 18);
	if (flags & MPA_FLAG_M)
		return URNIC_IW_R_MPA_MARKERS;
	if (rev != 1 && rev != 2)
		return URNIC_IW_R_MPA_REVISION;
	if (pd_len > URNIC_MPA_PD_MAX)
		return URNIC_IW_R_MPA_PD_TOO_LONG;
	if (len - URNIC_MPA_HDR_BYTES < pd_len)
		return URNIC_IW_R_MPA_PD_TRUNCATED;
	if (enhanced(flags, rev) && pd_len < URNIC_MPA_V2_BYTES)
		return URNIC_IW_R_MPA_V2_SHORT;
	return URNIC_IW_R_OK;
}

enum urnic_iw_reason urnic_mpa_rr_decode(struct urnic_mpa_rr *rr, size_t *consumed,
					 const uint8_t *buf, size_t len)
{
	enum urnic_iw_reason r = hdr_check(buf, len);
	struct urnic_mpa_rr out = { 0 };
	uint16_t pd_len, ird, ord;
	const uint8_t *pd;

	if (r != URNIC_IW_R_OK)
		return r;
	out.kind = (uint8_t)key_kind(buf);
	out.crc = (buf[16] & MPA_FLAG_C) != 0;
	out.reject = (buf[16] & MPA_FLAG_R) != 0;
	out.enhanced = enhanced(buf[16], buf[17]);
	out.gso_exp = (buf[16] & MPA_FLAG_GSO) != 0;
	out.revision = buf[17];
	pd_len = urnic_get_be16(buf + 18);
	pd = buf + URNIC_MPA_HDR_BYTES;
	*consumed = URNIC_MPA_HDR_BYTES + (size_t)pd_len;
	if (out.enhanced) {
		ird = urnic_get_be16(pd);
		ord = urnic_get_be16(pd + 2);
		out.p2p = (ird & MPA_V2_FLAG_HI) != 0;
		out.rtr_send = (ird & MPA_V2_FLAG_LO) != 0;
		out.rtr_write = (ord & MPA_V2_FLAG_HI) != 0;
		out.rtr_read = (ord & MPA_V2_FLAG_LO) != 0;
		out.ird = ird & URNIC_MPA_IRD_ORD_MAX;
		out.ord = ord & URNIC_MPA_IRD_ORD_MAX;
		pd += URNIC_MPA_V2_BYTES;
		pd_len -= URNIC_MPA_V2_BYTES;
	}
	out.pd = pd_len ? pd : NULL;
	out.pd_len = pd_len;
	*rr = out;
	return URNIC_IW_R_OK;
}

static uint16_t v2_word(bool hi, bool lo, uint16_t depth)
{
	return (uint16_t)((hi ? MPA_V2_FLAG_HI : 0) | (lo ? MPA_V2_FLAG_LO : 0) | depth);
}

ssize_t urnic_mpa_rr_encode(const struct urnic_mpa_rr *rr, uint8_t *buf, size_t cap)
{
	size_t v2 = rr->enhanced ? URNIC_MPA_V2_BYTES : 0;
	size_t total = URNIC_MPA_HDR_BYTES + v2 + rr->pd_len;
	uint8_t flags;

	if (rr->kind != URNIC_MPA_REQ && rr->kind != URNIC_MPA_REP)
		return -EINVAL;
	if (rr->revision != 1 && rr->revision != 2)
		return -EINVAL;
	if (rr->enhanced && (rr->revision != 2 || rr->ird > URNIC_MPA_IRD_ORD_MAX ||
			     rr->ord > URNIC_MPA_IRD_ORD_MAX))
		return -EINVAL;
	if (rr->markers)
		return -EOPNOTSUPP;
	if (v2 + rr->pd_len > URNIC_MPA_PD_MAX)
		return -EMSGSIZE;
	if (rr->pd_len && !rr->pd)
		return -EINVAL;
	if (cap < total)
		return -ENOBUFS;
	memcpy(buf, rr->kind == URNIC_MPA_REQ ? key_req : key_rep, URNIC_MPA_KEY_BYTES);
	flags = (uint8_t)((rr->crc ? MPA_FLAG_C : 0) | (rr->reject ? MPA_FLAG_R : 0) |
			  (rr->enhanced ? MPA_FLAG_E : 0) | (rr->gso_exp ? MPA_FLAG_GSO : 0));
	buf[16] = flags;
	buf[17] = rr->revision;
	urnic_put_be16(buf + 18, (uint16_t)(v2 + rr->pd_len));
	if (v2) {
		urnic_put_be16(buf + 20, v2_word(rr->p2p, rr->rtr_send, rr->ird));
		urnic_put_be16(buf + 22, v2_word(rr->rtr_write, rr->rtr_read, rr->ord));
	}
	if (rr->pd_len)
		memmove(buf + URNIC_MPA_HDR_BYTES + v2, rr->pd, rr->pd_len);
	return (ssize_t)total;
}
