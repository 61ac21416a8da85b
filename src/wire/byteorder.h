/* SPDX-License-Identifier: MIT */
/*
 * byteorder.h - big-endian loads and stores for wire codecs.
 *
 * Wire layouts never leave src/wire/: every field is read with urnic_get_beNN() into a
 * host-order struct and written back with urnic_put_beNN() (house style 4: no casts of
 * structs over packets, no bitfields). Unaligned access is fine: these go byte by byte.
 */
#ifndef URNIC_WIRE_BYTEORDER_H
#define URNIC_WIRE_BYTEORDER_H

#include <stdint.h>

static inline uint16_t urnic_get_be16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static inline uint32_t urnic_get_be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline uint32_t urnic_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t urnic_get_be64(const uint8_t *p)
{
	return (uint64_t)urnic_get_be32(p) << 32 | urnic_get_be32(p + 4);
}

static inline void urnic_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void urnic_put_be24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static inline void urnic_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void urnic_put_be64(uint8_t *p, uint64_t v)
{
	urnic_put_be32(p, (uint32_t)(v >> 32));
	urnic_put_be32(p + 4, (uint32_t)v);
}

static inline uint32_t urnic_get_le32(const uint8_t *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static inline uint16_t urnic_get_le16(const uint8_t *p)
{
	return (uint16_t)(p[1] << 8 | p[0]);
}

static inline void urnic_put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void urnic_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

#endif
