/* SPDX-License-Identifier: MIT */
/*
 * pcap.h - the capture file of URNIC_PCAP: every RoCEv2 (or UET) packet a device sends or
 * receives, each as its own Ethernet frame as it is on the wire (a GSO send or a GRO
 * receive cut into its segments, each with its own IP and UDP headers and IPv4 ID), in
 * pcapng (draft-ietf-opsawg-pcapng: a section header, an interface description per
 * device, an enhanced packet block per frame). pcapng and not classic pcap: a packet
 * the receive path refused carries the name of the counter it was counted in as the
 * frame's comment (opt_comment, Wireshark's frame.comment), each frame its direction
 * (epb_flags, frame.packet_flags_direction), and several devices share one file as
 * interfaces of their own. Records are buffered and written by a thread of the file
 * every URNIC_PCAP_FLUSH_MS, when the buffer fills and at urnic_pcap_flush: a process
 * killed by SIGKILL leaves the file as of the last write, perhaps ending in part of a
 * record (the kernel cuts a write short for a fatal signal), which readers report
 * after reading every whole one.
 * Context: any thread; each file has its own lock.
 */
#ifndef URNIC_TRANSPORT_PCAP_H
#define URNIC_TRANSPORT_PCAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	URNIC_PCAP_BUF = 1 << 20, /* bytes of records held before a write */
	URNIC_PCAP_FLUSH_MS = 100,
	URNIC_PCAP_COMMENT_MAX = 256, /* a drop's comment, longer ones cut */
};

struct urnic_pcap;

/* A device in a file: the interface its frames are recorded on, and its address (the
 * source of what it sends, the destination of what it receives). */
struct urnic_pcap_if {
	struct urnic_pcap *file;
	uint32_t id; /* the interface's index in the file */
	bool ipv6;
	uint8_t addr[16];
};

/* One datagram, or a GSO/GRO super-datagram, sent (out) or received. Addresses have 4
 * or 16 bytes as the interface. */
struct urnic_pcap_dgram {
	bool out;
	const uint8_t *src, *dst;
	uint16_t sport, dport;
	uint8_t tos, ttl;
	uint16_t ip_id;	    /* IPv4: the first segment's; segment k leaves as ip_id + k */
	const char *reason; /* refused: the counter's name (counters.def), else NULL */
};

/* Creates (or truncates) path, mode 0600 (a capture holds the packets' payloads), and
 * writes the section header. Returns 0 or -errno. */
int urnic_pcap_open(struct urnic_pcap **out, const char *path);

/* Adds an interface named name (a device: "urnic0") with address addr to the file and
 * fills i; its description names the protocol it carries, proto ("RoCEv2, UDP 4791",
 * "UET, UDP 4793"). Returns 0 or -ENOSPC (2^32 interfaces). */
int urnic_pcap_add_if(struct urnic_pcap *p, struct urnic_pcap_if *i, const char *name, bool ipv6,
		      const uint8_t *addr, const char *proto);

/*
 * Records the len bytes at buf (UDP payloads back to back: each seg bytes but the last;
 * seg 0 or >= len: one) as one frame per segment, with the headers of frame.h:
 * Ethernet with the MACs of urnic_frame_mac, IP and UDP lengths of the segment and both
 * checksums. Past URNIC_FRAME_MAX_PAYLOAD a segment is cut (a truncated receive).
 */
void urnic_pcap_write(const struct urnic_pcap_if *i, const struct urnic_pcap_dgram *d,
		      const uint8_t *buf, uint32_t len, uint32_t seg);

/* Records a whole Ethernet frame as it was received (a packet ring's frame the device
 * refused before it could be read as a datagram), with reason as its comment. */
void urnic_pcap_write_frame(const struct urnic_pcap_if *i, const uint8_t *frame, uint32_t len,
			    const char *reason);

/* Writes what is buffered. A write error is said on stderr once; the records are lost. */
void urnic_pcap_flush(struct urnic_pcap *p);

/* Flushes, stops the file's thread and closes it. */
void urnic_pcap_close(struct urnic_pcap *p);

#endif
