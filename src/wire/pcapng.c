/* SPDX-License-Identifier: MIT */
/*
 * pcapng.c - pcapng blocks (pcapng.h): every block is its type, its total length, the
 * body, options as code, length, value padded to 32 bits, and the total length again
 * (draft-ietf-opsawg-pcapng §3.1, §3.5).
 */
#include <string.h>

#include "wire/byteorder.h"
#include "wire/pcapng.h"

static size_t pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

static size_t str_len(const char *s)
{
	size_t n = strlen(s);

	return n > URNIC_PCAPNG_STR_MAX ? URNIC_PCAPNG_STR_MAX : n;
}

/* An option at p: code, length, value, zero padding. Returns its bytes. */
static size_t put_opt(uint8_t *p, uint16_t code, const void *val, size_t len)
{
	urnic_put_le16(p, code);
	urnic_put_le16(p + 2, (uint16_t)len);
	memcpy(p + 4, val, len);
	memset(p + 4 + len, 0, pad4(len) - len);
	return 4 + pad4(len);
}

/* Ends the block that starts at buf and whose options end at p: opt_endofopt and the
 * trailing total length, the leading one filled in. Returns the block's bytes. */
static size_t end_block(uint8_t *buf, uint8_t *p)
{
	size_t total;

	urnic_put_le32(p, URNIC_PCAPNG_OPT_END); /* code 0, length 0 */
	p += 4;
	total = (size_t)(p - buf) + 4;
	urnic_put_le32(buf + 4, (uint32_t)total);
	urnic_put_le32(p, (uint32_t)total);
	return total;
}

size_t urnic_pcapng_shb(uint8_t *buf, const char *app)
{
	uint8_t *p = buf + 24;

	urnic_put_le32(buf, URNIC_PCAPNG_BT_SHB);
	urnic_put_le32(buf + 8, URNIC_PCAPNG_BOM);
	urnic_put_le16(buf + 12, 1); /* version 1.0 */
	urnic_put_le16(buf + 14, 0);
	memset(buf + 16, 0xff, 8); /* section length -1: not given */
	p += put_opt(p, URNIC_PCAPNG_SHB_USERAPPL, app, str_len(app));
	return end_block(buf, p);
}

size_t urnic_pcapng_idb(uint8_t *buf, const char *name, const char *desc)
{
	static const uint8_t tsresol = 9; /* 10^-9 s */
	uint8_t *p = buf + 16;

	urnic_put_le32(buf, URNIC_PCAPNG_BT_IDB);
	urnic_put_le16(buf + 8, URNIC_PCAPNG_LINKTYPE_ETHERNET);
	urnic_put_le16(buf + 10, 0);
	urnic_put_le32(buf + 12, 0); /* SnapLen 0: no limit */
	p += put_opt(p, URNIC_PCAPNG_IF_NAME, name, str_len(name));
	p += put_opt(p, URNIC_PCAPNG_IF_DESCRIPTION, desc, str_len(desc));
	p += put_opt(p, URNIC_PCAPNG_IF_TSRESOL, &tsresol, 1);
	return end_block(buf, p);
}

size_t urnic_pcapng_epb_bytes(uint32_t caplen, size_t comment_len)
{
	if (comment_len > URNIC_PCAPNG_STR_MAX)
		comment_len = URNIC_PCAPNG_STR_MAX;
	/* header 28, the frame, epb_flags 8, a comment, opt_endofopt 4, total length 4 */
	return 28 + pad4(caplen) + 8 + (comment_len ? 4 + pad4(comment_len) : 0) + 8;
}

size_t urnic_pcapng_epb(uint8_t *buf, uint32_t ifid, uint64_t ts_ns, const uint8_t *hdr,
			uint32_t hlen, const uint8_t *data, uint32_t dlen, uint32_t dir,
			const char *comment)
{
	uint32_t caplen = hlen + dlen;
	uint8_t flags[4], *p = buf + 28;

	urnic_put_le32(buf, URNIC_PCAPNG_BT_EPB);
	urnic_put_le32(buf + 8, ifid);
	urnic_put_le32(buf + 12, (uint32_t)(ts_ns >> 32));
	urnic_put_le32(buf + 16, (uint32_t)ts_ns);
	urnic_put_le32(buf + 20, caplen);
	urnic_put_le32(buf + 24, caplen);
	memcpy(p, hdr, hlen);
	if (dlen)
		memcpy(p + hlen, data, dlen);
	memset(p + caplen, 0, pad4(caplen) - caplen);
	p += pad4(caplen);
	urnic_put_le32(flags, dir);
	p += put_opt(p, URNIC_PCAPNG_EPB_FLAGS, flags, 4);
	if (comment && *comment)
		p += put_opt(p, URNIC_PCAPNG_OPT_COMMENT, comment, str_len(comment));
	return end_block(buf, p);
}
