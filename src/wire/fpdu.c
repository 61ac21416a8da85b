/* SPDX-License-Identifier: MIT */
/*
 * fpdu.c - the FPDU codec (fpdu.h): RFC 5044 4's length, pad and CRC32c, the CRC computed
 * with ISA-L's crc32_iscsi.
 *
 * ISA-L's crc32_iscsi neither pre- nor post-inverts in the way RFC 3385 states the CRC,
 * so the seed is all ones and the result is complemented; siw (through the kernel's
 * crc32c) puts the value on the wire least significant byte first (the golden siw
 * captures hold it so).
 */
#include <errno.h>
#include <string.h>

#include <isa-l/crc.h>

#include "wire/byteorder.h"
#include "wire/fpdu.h"

_Static_assert(URNIC_FPDU_ULPDU_MAX == UINT16_MAX, "the length field is 16 bits");

uint32_t urnic_fpdu_crc(const uint8_t *p, size_t n)
{
	return ~crc32_iscsi((unsigned char *)(uintptr_t)p, (int)n, URNIC_FPDU_CRC_SEED);
}

uint32_t urnic_fpdu_crc_step(uint32_t reg, const uint8_t *p, size_t n)
{
	return n ? crc32_iscsi((unsigned char *)(uintptr_t)p, (int)n, reg) : reg;
}

enum urnic_iw_reason urnic_fpdu_decode(struct urnic_fpdu *f, const uint8_t *buf, size_t len,
				       unsigned flags)
{
	uint16_t ulpdu_len;
	size_t bytes, covered;
	uint32_t crc;

	if (flags & URNIC_FPDU_MARKERS)
		return URNIC_IW_R_FPDU_MARKERS;
	if (len < URNIC_FPDU_LEN_BYTES)
		return URNIC_IW_R_FPDU_TRUNCATED;
	ulpdu_len = urnic_get_be16(buf);
	bytes = urnic_fpdu_bytes(ulpdu_len);
	if (len < bytes)
		return URNIC_IW_R_FPDU_TRUNCATED;
	if (ulpdu_len < URNIC_FPDU_ULPDU_MIN)
		return URNIC_IW_R_FPDU_SHORT_ULPDU;
	covered = bytes - URNIC_FPDU_CRC_BYTES;
	crc = urnic_get_le32(buf + covered);
	if ((flags & URNIC_FPDU_CRC) && crc != urnic_fpdu_crc(buf, covered))
		return URNIC_IW_R_FPDU_CRC;
	f->ulpdu = buf + URNIC_FPDU_LEN_BYTES;
	f->ulpdu_len = ulpdu_len;
	f->pad = (uint8_t)(covered - URNIC_FPDU_LEN_BYTES - ulpdu_len);
	f->crc = crc;
	f->bytes = bytes;
	return URNIC_IW_R_OK;
}

ssize_t urnic_fpdu_encode(uint8_t *buf, size_t cap, const uint8_t *ulpdu, size_t ulpdu_len,
			  unsigned flags)
{
	size_t bytes = urnic_fpdu_bytes(ulpdu_len), covered;

	if (flags & URNIC_FPDU_MARKERS)
		return -EOPNOTSUPP;
	if (ulpdu_len > URNIC_FPDU_ULPDU_MAX)
		return -EMSGSIZE;
	if (cap < bytes)
		return -ENOBUFS;
	covered = bytes - URNIC_FPDU_CRC_BYTES;
	memmove(buf + URNIC_FPDU_LEN_BYTES, ulpdu, ulpdu_len);
	urnic_put_be16(buf, (uint16_t)ulpdu_len);
	memset(buf + URNIC_FPDU_LEN_BYTES + ulpdu_len, 0,
	       covered - URNIC_FPDU_LEN_BYTES - ulpdu_len);
	urnic_put_le32(buf + covered, (flags & URNIC_FPDU_CRC) ? urnic_fpdu_crc(buf, covered) : 0);
	return (ssize_t)bytes;
}
