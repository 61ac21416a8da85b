/* SPDX-License-Identifier: MIT */
/*
 * pcap.c - classic pcap reading and Ethernet/IP/UDP peeling for the wire tests.
 *
 * File format: libpcap's savefile (global header 24 bytes, record header 16 bytes,
 * magic 0xa1b2c3d4 or 0xa1b23c4d, link type 1 = Ethernet), or pcapng
 * (draft-ietf-opsawg-pcapng: blocks of type, length, body, length; sections,
 * interfaces and enhanced packet blocks read, others skipped). IPv4 per RFC 791, IPv6
 * per RFC 8200, UDP per RFC 768. Only what tests need; every length is bounds-checked.
 */
#include "pcap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/byteorder.h"

#define PCAP_MAGIC_US 0xa1b2c3d4u
#define PCAP_MAGIC_NS 0xa1b23c4du
#define PCAP_GLOBAL_BYTES 24
#define PCAP_RECORD_BYTES 16
#define LINKTYPE_ETHERNET 1
#define ETH_HDR_BYTES 14
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86dd
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88a8
#define IPPROTO_UDP_NUM 17

#define PCAPNG_SHB 0x0a0d0d0au
#define PCAPNG_IDB 1u
#define PCAPNG_EPB 6u
#define PCAPNG_BOM 0x1a2b3c4du
#define PCAPNG_OPT_COMMENT 1
#define PCAPNG_EPB_FLAGS 2

static uint32_t rd32(const struct wire_pcap *pc, const uint8_t *p)
{
	return pc->swap ? urnic_get_be32(p) : urnic_get_le32(p);
}

static uint16_t rd16(const struct wire_pcap *pc, const uint8_t *p)
{
	return pc->swap ? urnic_get_be16(p) : (uint16_t)(p[0] | p[1] << 8);
}

/* A section header at p (len bytes left): its byte order. */
static bool ng_section(struct wire_pcap *pc, const uint8_t *p, size_t len)
{
	if (len < 28)
		return false;
	if (urnic_get_le32(p + 8) == PCAPNG_BOM)
		pc->swap = false;
	else if (urnic_get_be32(p + 8) == PCAPNG_BOM)
		pc->swap = true;
	else
		return false;
	return true;
}

/* The options of an enhanced packet block, opt[0 .. len), into fr. */
static void ng_options(const struct wire_pcap *pc, const uint8_t *opt, size_t len,
		       struct wire_frame *fr)
{
	while (len >= 4) {
		uint16_t code = rd16(pc, opt), olen = rd16(pc, opt + 2);
		size_t step = 4 + (((size_t)olen + 3) & ~(size_t)3);

		if (code == 0 || step > len)
			return;
		if (code == PCAPNG_OPT_COMMENT) {
			fr->comment = (const char *)opt + 4;
			fr->comment_len = olen;
		} else if (code == PCAPNG_EPB_FLAGS && olen == 4) {
			fr->flags = rd32(pc, opt + 4);
		}
		opt += step;
		len -= step;
	}
}

/* The next enhanced packet block of a pcapng file: 1, 0 at the end, -EBADMSG. */
static int ng_next(struct wire_pcap *pc, struct wire_frame *fr)
{
	while (pc->off < pc->len) {
		const uint8_t *b = pc->data + pc->off;
		size_t left = pc->len - pc->off;
		uint32_t type, blen, caplen;

		if (left < 12)
			return -EBADMSG;
		type = urnic_get_le32(b); /* the SHB's type reads the same both ways */
		if (type == PCAPNG_SHB && !ng_section(pc, b, left))
			return -EBADMSG;
		type = rd32(pc, b);
		blen = rd32(pc, b + 4);
		if (blen < 12 || blen % 4 || blen > left || rd32(pc, b + blen - 4) != blen)
			return -EBADMSG;
		pc->off += blen;
		if (type == PCAPNG_IDB && (blen < 20 || rd16(pc, b + 8) != LINKTYPE_ETHERNET))
			return -EBADMSG;
		if (type != PCAPNG_EPB)
			continue;
		if (blen < 32)
			return -EBADMSG;
		caplen = rd32(pc, b + 20);
		if (caplen > blen - 32)
			return -EBADMSG;
		memset(fr, 0, sizeof(*fr));
		fr->frame_no = ++pc->frame_no;
		fr->ifid = rd32(pc, b + 8);
		fr->data = b + 28;
		fr->len = caplen;
		caplen = (caplen + 3) & ~3u;
		if (caplen <= blen - 32)
			ng_options(pc, b + 28 + caplen, blen - 32 - caplen, fr);
		return 1;
	}
	return 0;
}

int wire_pcap_open(struct wire_pcap *pc, const char *path)
{
	FILE *f;
	long size;
	uint32_t magic;

	memset(pc, 0, sizeof(*pc));
	f = fopen(path, "rb");
	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		goto err_close;
	pc->len = (size_t)size;
	pc->data = malloc(pc->len ? pc->len : 1);
	if (!pc->data)
		goto err_close;
	if (fread(pc->data, 1, pc->len, f) != pc->len)
		goto err_free;
	fclose(f);

	if (pc->len >= 12 && urnic_get_le32(pc->data) == PCAPNG_SHB) {
		if (!ng_section(pc, pc->data, pc->len))
			goto err_format;
		pc->ng = true;
		return 0;
	}
	if (pc->len < PCAP_GLOBAL_BYTES)
		goto err_format;
	magic = urnic_get_le32(pc->data);
	if (magic == PCAP_MAGIC_US || magic == PCAP_MAGIC_NS)
		pc->swap = false;
	else if (urnic_get_be32(pc->data) == PCAP_MAGIC_US ||
		 urnic_get_be32(pc->data) == PCAP_MAGIC_NS)
		pc->swap = true;
	else
		goto err_format;
	if (rd32(pc, pc->data + 20) != LINKTYPE_ETHERNET)
		goto err_format;
	pc->off = PCAP_GLOBAL_BYTES;
	return 0;

err_format:
	wire_pcap_close(pc);
	return -EINVAL;
err_free:
	free(pc->data);
	pc->data = NULL;
err_close:
	fclose(f);
	return -EIO;
}

int wire_pcap_next(struct wire_pcap *pc, struct wire_frame *fr)
{
	uint32_t incl;

	if (pc->ng)
		return ng_next(pc, fr);
	if (pc->off == pc->len)
		return 0;
	if (pc->len - pc->off < PCAP_RECORD_BYTES)
		return -EBADMSG;
	incl = rd32(pc, pc->data + pc->off + 8);
	pc->off += PCAP_RECORD_BYTES;
	if (pc->len - pc->off < incl)
		return -EBADMSG;
	memset(fr, 0, sizeof(*fr));
	fr->frame_no = ++pc->frame_no;
	fr->data = pc->data + pc->off;
	fr->len = incl;
	pc->off += incl;
	return 1;
}

void wire_pcap_close(struct wire_pcap *pc)
{
	free(pc->data);
	memset(pc, 0, sizeof(*pc));
}

static bool udp_peel(const uint8_t *p, size_t len, struct wire_udp *u)
{
	uint16_t ulen;

	if (len < 8)
		return false;
	ulen = urnic_get_be16(p + 4);
	if (ulen < 8 || ulen > len)
		return false;
	u->udp = p;
	u->sport = urnic_get_be16(p);
	u->dport = urnic_get_be16(p + 2);
	u->payload = p + 8;
	u->payload_bytes = ulen - 8u;
	return true;
}

bool wire_frame_udp(const struct wire_frame *fr, struct wire_udp *u)
{
	const uint8_t *p = fr->data;
	size_t len = fr->len, ihl, tot;
	uint16_t type;

	memset(u, 0, sizeof(*u));
	if (len < ETH_HDR_BYTES)
		return false;
	type = urnic_get_be16(p + 12);
	p += ETH_HDR_BYTES;
	len -= ETH_HDR_BYTES;
	while (type == ETH_P_8021Q || type == ETH_P_8021AD) {
		if (len < 4)
			return false;
		type = urnic_get_be16(p + 2);
		p += 4;
		len -= 4;
	}

	if (type == ETH_P_IP) {
		if (len < 20 || (p[0] >> 4) != 4)
			return false;
		ihl = (size_t)(p[0] & 0x0f) * 4;
		tot = urnic_get_be16(p + 2);
		if (ihl < 20 || tot < ihl || tot > len || p[9] != IPPROTO_UDP_NUM)
			return false;
		if (urnic_get_be16(p + 6) & 0x3fff) /* MF or a fragment offset */
			return false;
		u->ipv6 = false;
		u->ip = p;
		u->ip_bytes = ihl;
		return udp_peel(p + ihl, tot - ihl, u);
	}
	if (type == ETH_P_IPV6) {
		if (len < 40 || (p[0] >> 4) != 6 || p[6] != IPPROTO_UDP_NUM)
			return false;
		tot = 40 + (size_t)urnic_get_be16(p + 4);
		if (tot > len)
			return false;
		u->ipv6 = true;
		u->ip = p;
		u->ip_bytes = 40;
		return udp_peel(p + 40, tot - 40, u);
	}
	return false;
}
