/* SPDX-License-Identifier: MIT */
/*
 * tcpflow.h - TCP byte streams of a capture (tests only): each direction of each IPv4
 * TCP connection reassembled in sequence order from its first data byte, retransmitted
 * bytes skipped, no gap allowed (the golden siw captures are complete).
 */
#ifndef URNIC_TESTS_WIRE_TCPFLOW_H
#define URNIC_TESTS_WIRE_TCPFLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pcap.h"

#define TCP_MAX_FLOWS 16
#define TCP_MAX_SEGS 512

struct tcp_seg {
	uint32_t seq;
	const uint8_t *data;
	size_t len;
};

/* One direction of one TCP connection. */
struct tcp_flow {
	uint8_t src[4], dst[4];
	uint16_t sport, dport;
	bool have_isn;
	uint32_t isn; /* the sequence number of the first data byte */
	struct tcp_seg segs[TCP_MAX_SEGS];
	unsigned nsegs;
	uint16_t mss; /* from the SYN's MSS option, 0 if none */
	uint8_t *stream;
	size_t len;
};

struct tcp_flows {
	struct wire_pcap pc;
	struct tcp_flow flows[TCP_MAX_FLOWS];
	unsigned n;
};

/* Reads the capture and assembles every flow (CHECKs on malformed input). */
void tcp_flows_read(struct tcp_flows *t, const char *path);
/* The reverse direction of f, or NULL. */
struct tcp_flow *tcp_flows_peer(struct tcp_flows *t, const struct tcp_flow *f);
void tcp_flows_free(struct tcp_flows *t);

#endif
