/* SPDX-License-Identifier: MIT */
/*
 * flow.h - flow steering of raw Ethernet frames (ibv_create_flow(3)): a frame's header
 * fields, the rules that match them under masks, and which rules take a frame.
 *
 * A rule is what struct ibv_flow_attr and its specs say, in host order: for each layer
 * a spec names (Ethernet, IPv4, IPv6, TCP, UDP) the frame must carry that layer, and
 * every field must equal the rule's value under the rule's mask. Rule types and
 * priorities as ibv_create_flow(3) documents them: NORMAL rules of the best (lowest)
 * matching priority take the frame; ALL_DEFAULT and MC_DEFAULT rules take what no
 * NORMAL rule took (MC_DEFAULT: multicast only); SNIFFER rules see every frame; a rule
 * with DONT_TRAP takes its copy and lets lower priorities match as well. Pure data.
 */
#ifndef URNIC_WIRE_FLOW_H
#define URNIC_WIRE_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Rule types, numerically equal to enum ibv_flow_attr_type. */
enum urnic_flow_type {
	URNIC_FLOW_NORMAL = 0,
	URNIC_FLOW_ALL_DEFAULT = 1,
	URNIC_FLOW_MC_DEFAULT = 2,
	URNIC_FLOW_SNIFFER = 3,
};

/* The layers a rule needs and a frame has. */
enum urnic_flow_layer {
	URNIC_FLOW_L_ETH = 1 << 0,
	URNIC_FLOW_L_IPV4 = 1 << 1,
	URNIC_FLOW_L_IPV6 = 1 << 2,
	URNIC_FLOW_L_TCP = 1 << 3,
	URNIC_FLOW_L_UDP = 1 << 4,
};

/* A frame's fields (host order), or a rule's values or masks for them. */
struct urnic_flow_keys {
	uint32_t layers; /* enum urnic_flow_layer (a frame's; unused in a rule's value) */
	uint8_t dst_mac[6], src_mac[6];
	uint16_t ether_type; /* after the VLAN tag, if any */
	uint16_t vlan_tag;   /* 802.1Q TCI: prio 3, cfi 1, vlan id 12 bits; 0 untagged */
	uint32_t src_ip4, dst_ip4;
	uint8_t src_ip6[16], dst_ip6[16];
	uint32_t flow_label;
	uint8_t proto; /* IPv4 protocol or IPv6 next header */
	uint8_t tos;   /* IPv4 TOS or IPv6 traffic class */
	uint8_t ttl;   /* IPv4 TTL or IPv6 hop limit */
	uint8_t ip4_flags;
	uint16_t src_port, dst_port;
};

struct urnic_flow_rule {
	uint32_t id;  /* the caller's name for it */
	uint32_t qpn; /* whose frames these are */
	uint8_t type; /* enum urnic_flow_type */
	bool dont_trap;
	bool drop; /* IBV_FLOW_SPEC_ACTION_DROP: matching frames go nowhere */
	uint16_t priority;
	uint32_t need; /* enum urnic_flow_layer */
	struct urnic_flow_keys val, mask;
};

/* The fields of the len captured bytes of an Ethernet frame. Layers that are cut short
 * are absent (a rule that needs them does not match). Returns 0, or -EBADMSG when the
 * frame is shorter than an Ethernet header. */
int urnic_flow_parse(const uint8_t *frame, size_t len, struct urnic_flow_keys *k);

/* Whether rule r's layers and fields match frame k. */
bool urnic_flow_match(const struct urnic_flow_rule *r, const struct urnic_flow_keys *k);

/* The rules of rules[0..n) that take frame k, as indexes into out (at most max, in
 * rules' order); a drop rule is never among them, though it keeps the frame from the
 * rules it outranks. Returns how many. */
uint32_t urnic_flow_select(const struct urnic_flow_rule *rules, uint32_t n,
			   const struct urnic_flow_keys *k, uint32_t *out, uint32_t max);

/* Receive-side scaling (ibv_create_qp_ex(3), IBV_QP_INIT_ATTR_RX_HASH): the Toeplitz hash
 * of the fields selected (values of enum ibv_rx_hash_fields) spreads an RSS QP's frames
 * over its indirection table's queues, entry hash % n. */
enum urnic_rss_field {
	URNIC_RSS_SRC_IPV4 = 1 << 0,
	URNIC_RSS_DST_IPV4 = 1 << 1,
	URNIC_RSS_SRC_IPV6 = 1 << 2,
	URNIC_RSS_DST_IPV6 = 1 << 3,
	URNIC_RSS_SRC_PORT_TCP = 1 << 4,
	URNIC_RSS_DST_PORT_TCP = 1 << 5,
	URNIC_RSS_SRC_PORT_UDP = 1 << 6,
	URNIC_RSS_DST_PORT_UDP = 1 << 7,
	URNIC_RSS_FIELDS = (1 << 8) - 1,
	URNIC_RSS_KEY_MAX = 40,
	URNIC_RSS_TABLE_MAX = 256,
};

struct urnic_rss {
	uint32_t fields; /* enum urnic_rss_field */
	uint32_t key_len;
	uint8_t key[URNIC_RSS_KEY_MAX];
	uint32_t n; /* table entries */
	uint32_t qpn[URNIC_RSS_TABLE_MAX];
};

/* The Toeplitz hash (Microsoft RSS) of frame k's fields that c selects and k carries,
 * in the order source address, destination address, source port, destination port. */
uint32_t urnic_flow_rss_hash(const struct urnic_rss *c, const struct urnic_flow_keys *k);

#endif
