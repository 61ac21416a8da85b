/* SPDX-License-Identifier: MIT */
/*
 * pcapng.h - the blocks of a pcapng capture file (draft-ietf-opsawg-pcapng, "PCAP Next
 * Generation Dump File Format"): a section header (§4.1), an interface description per
 * device (§4.2) and an enhanced packet block per frame (§4.3), with the options a
 * capture of urnic needs: the application, the interface's name, description and
 * nanosecond timestamps, the frame's direction (epb_flags) and a comment. Written in
 * little-endian order, which the byte-order magic tells readers. Out of scope: reading,
 * other block types, per-section byte orders.
 */
#ifndef URNIC_WIRE_PCAPNG_H
#define URNIC_WIRE_PCAPNG_H

#include <stddef.h>
#include <stdint.h>

enum {
	URNIC_PCAPNG_BT_SHB = 0x0a0d0d0a,
	URNIC_PCAPNG_BT_IDB = 1,
	URNIC_PCAPNG_BT_EPB = 6,
	URNIC_PCAPNG_BOM = 0x1a2b3c4d,
	URNIC_PCAPNG_LINKTYPE_ETHERNET = 1, /* LINKTYPE_ETHERNET, tcpdump.org link types */
	/* Option codes (§3.5, §4.1-4.3). */
	URNIC_PCAPNG_OPT_END = 0,
	URNIC_PCAPNG_OPT_COMMENT = 1,
	URNIC_PCAPNG_SHB_USERAPPL = 4,
	URNIC_PCAPNG_IF_NAME = 2,
	URNIC_PCAPNG_IF_DESCRIPTION = 3,
	URNIC_PCAPNG_IF_TSRESOL = 9,
	URNIC_PCAPNG_EPB_FLAGS = 2,
	/* epb_flags bits 0-1 (§4.3.1): the direction. */
	URNIC_PCAPNG_INBOUND = 1,
	URNIC_PCAPNG_OUTBOUND = 2,
	/* Strings longer than this are cut (an option's length is 16 bits; these are
	 * names, descriptions and counter names). */
	URNIC_PCAPNG_STR_MAX = 255,
	/* The most bytes urnic_pcapng_shb or urnic_pcapng_idb writes. */
	URNIC_PCAPNG_HDR_BLOCK_MAX = 32 + 2 * (4 + URNIC_PCAPNG_STR_MAX + 3) + 8 + 4,
};

/* The section header, with shb_userappl app. Returns the bytes written to buf (at most
 * URNIC_PCAPNG_HDR_BLOCK_MAX). */
size_t urnic_pcapng_shb(uint8_t *buf, const char *app);

/* An Ethernet interface named name, described desc, with nanosecond timestamps and no
 * snapshot limit. Returns the bytes written (at most URNIC_PCAPNG_HDR_BLOCK_MAX). */
size_t urnic_pcapng_idb(uint8_t *buf, const char *name, const char *desc);

/* The bytes of an enhanced packet block of caplen captured bytes with a comment of
 * comment_len bytes (0: none). */
size_t urnic_pcapng_epb_bytes(uint32_t caplen, size_t comment_len);

/* A frame on interface ifid at ts_ns (nanoseconds since the epoch): the hlen bytes at
 * hdr, then the dlen at data; dir URNIC_PCAPNG_INBOUND or _OUTBOUND; comment or NULL.
 * buf has urnic_pcapng_epb_bytes of room. Returns the bytes written. */
size_t urnic_pcapng_epb(uint8_t *buf, uint32_t ifid, uint64_t ts_ns, const uint8_t *hdr,
			uint32_t hlen, const uint8_t *data, uint32_t dlen, uint32_t dir,
			const char *comment);

#endif
