/* SPDX-License-Identifier: MIT */
/*
 * test_flow.c - flow steering (wire/flow.h): the fields parsed from frames built as
 * rdma-core's tests build them (tests/utils.py gen_packet: Ethernet, IPv4 or IPv6, UDP
 * or TCP, with or without a VLAN tag), each spec type under its masks, rule types and
 * priorities as ibv_create_flow(3) documents them, and every truncated frame parsed
 * without reading past its end.
 */
#include <string.h>

#include "check.h"
#include "wire/byteorder.h"
#include "wire/flow.h"

static const uint8_t dst_mac[6] = { 0x01, 0x50, 0x56, 0x19, 0x20, 0xa7 };
static const uint8_t src_mac[6] = { 0x24, 0x8a, 0x07, 0xa5, 0x28, 0xc8 };
static const uint8_t src_ip6[16] = { 0xa0, 0xa1, [10] = 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7 };

/* Eth | (VLAN) | IPv4 or IPv6 | UDP or TCP, as gen_packet: 1.1.1.1 -> 2.2.2.2 or the
 * IPv6 pair, ports 1234 -> 5678. Returns the frame's length. */
static size_t frame(uint8_t *f, int l3, bool tcp, bool vlan)
{
	size_t o = 12;

	memset(f, 0, 128);
	memcpy(f, dst_mac, 6);
	memcpy(f + 6, src_mac, 6);
	if (vlan) {
		urnic_put_be16(f + o, 0x8100);
		urnic_put_be16(f + o + 2, 5 << 13 | 1 << 12 | 0xc0c);
		o += 4;
	}
	urnic_put_be16(f + o, l3 == 4 ? 0x0800 : 0x86dd);
	o += 2;
	if (l3 == 4) {
		f[o] = 0x45;
		urnic_put_be16(f + o + 6, 2 << 13); /* DF */
		f[o + 8] = 64;
		f[o + 9] = tcp ? 6 : 17;
		urnic_put_be32(f + o + 12, 0x01010101);
		urnic_put_be32(f + o + 16, 0x02020202);
		o += 20;
	} else {
		urnic_put_be32(f + o, 6u << 28 | 0x12345);
		f[o + 6] = tcp ? 6 : 17;
		f[o + 7] = 64;
		memcpy(f + o + 8, src_ip6, 16);
		f[o + 24] = 0xb0;
		o += 40;
	}
	urnic_put_be16(f + o, 1234);
	urnic_put_be16(f + o + 2, 5678);
	return o + (tcp ? 20 : 8) + 16;
}

static struct urnic_flow_keys keys_of(int l3, bool tcp, bool vlan)
{
	uint8_t f[128];
	struct urnic_flow_keys k;

	CHECK_EQ(urnic_flow_parse(f, frame(f, l3, tcp, vlan), &k), 0);
	return k;
}

static void parses_what_the_tests_send(void)
{
	struct urnic_flow_keys k = keys_of(4, false, false);

	CHECK_EQ(k.layers, URNIC_FLOW_L_ETH | URNIC_FLOW_L_IPV4 | URNIC_FLOW_L_UDP);
	CHECK(!memcmp(k.dst_mac, dst_mac, 6) && !memcmp(k.src_mac, src_mac, 6));
	CHECK_EQ(k.ether_type, 0x0800);
	CHECK_EQ(k.src_ip4, 0x01010101);
	CHECK_EQ(k.dst_ip4, 0x02020202);
	CHECK_EQ(k.proto, 17);
	CHECK_EQ(k.ttl, 64);
	CHECK_EQ(k.ip4_flags, 2);
	CHECK_EQ(k.src_port, 1234);
	CHECK_EQ(k.dst_port, 5678);

	k = keys_of(6, true, true);
	CHECK_EQ(k.layers, URNIC_FLOW_L_ETH | URNIC_FLOW_L_IPV6 | URNIC_FLOW_L_TCP);
	CHECK_EQ(k.ether_type, 0x86dd);
	CHECK_EQ(k.vlan_tag, 5 << 13 | 1 << 12 | 0xc0c);
	CHECK_EQ(k.flow_label, 0x12345);
	CHECK(!memcmp(k.src_ip6, src_ip6, 16));
	CHECK_EQ(k.dst_ip6[0], 0xb0);
	CHECK_EQ(k.proto, 6);
	CHECK_EQ(k.dst_port, 5678);
}

static void truncated_frames_lose_layers_not_bounds(void)
{
	uint8_t f[128];
	size_t len = frame(f, 6, false, true);
	struct urnic_flow_keys k;

	for (size_t n = 0; n <= len; n++) {
		uint8_t *copy = malloc(n ? n : 1);

		memcpy(copy, f, n);
		if (n < 14) {
			CHECK_EQ(urnic_flow_parse(copy, n, &k), -EBADMSG);
		} else {
			CHECK_EQ(urnic_flow_parse(copy, n, &k), 0);
			CHECK_EQ(!!(k.layers & URNIC_FLOW_L_IPV6), n >= 18 + 40);
			CHECK_EQ(!!(k.layers & URNIC_FLOW_L_UDP), n >= 18 + 40 + 4);
		}
		free(copy);
	}
}

static struct urnic_flow_rule rule(uint32_t qpn, uint16_t prio)
{
	struct urnic_flow_rule r;

	memset(&r, 0, sizeof(r));
	r.qpn = qpn;
	r.priority = prio;
	return r;
}

static void each_spec_matches_under_its_mask(void)
{
	struct urnic_flow_keys v4 = keys_of(4, false, false), v6 = keys_of(6, true, false);
	struct urnic_flow_rule r = rule(1, 0);

	/* ETH: destination and source MAC, ether type (test_flow.py create_eth_spec). */
	r.need = URNIC_FLOW_L_ETH;
	memcpy(r.val.dst_mac, dst_mac, 6);
	memset(r.mask.dst_mac, 0xff, 6);
	memcpy(r.val.src_mac, src_mac, 6);
	memset(r.mask.src_mac, 0xff, 6);
	r.val.ether_type = 0x0800;
	r.mask.ether_type = 0xffff;
	CHECK(urnic_flow_match(&r, &v4));
	CHECK(!urnic_flow_match(&r, &v6));
	r.val.src_mac[5] ^= 1;
	CHECK(!urnic_flow_match(&r, &v4));
	r.mask.src_mac[5] = 0xfe; /* the differing bit is masked out */
	CHECK(urnic_flow_match(&r, &v4));

	/* IPv4 (extended): addresses and protocol; needs the layer itself. */
	r = rule(1, 0);
	r.need = URNIC_FLOW_L_IPV4;
	r.val.src_ip4 = 0x01010101;
	r.val.dst_ip4 = 0x02020202;
	r.mask.src_ip4 = r.mask.dst_ip4 = 0xffffffff;
	r.val.proto = 17;
	r.mask.proto = 0xff;
	CHECK(urnic_flow_match(&r, &v4));
	CHECK(!urnic_flow_match(&r, &v6));
	r.val.proto = 6;
	CHECK(!urnic_flow_match(&r, &v4));
	r.mask.dst_ip4 = 0xffffff00; /* a prefix */
	r.val.proto = 17;
	r.val.dst_ip4 = 0x020202ff;
	CHECK(urnic_flow_match(&r, &v4));

	/* IPv6 and TCP. */
	r = rule(1, 0);
	r.need = URNIC_FLOW_L_IPV6 | URNIC_FLOW_L_TCP;
	memcpy(r.val.src_ip6, src_ip6, 16);
	memset(r.mask.src_ip6, 0xff, 16);
	r.val.dst_port = 5678;
	r.mask.dst_port = 0xffff;
	CHECK(urnic_flow_match(&r, &v6));
	CHECK(!urnic_flow_match(&r, &v4));
	r.val.src_ip6[15] = 1;
	CHECK(!urnic_flow_match(&r, &v6));

	/* UDP alone, and UDP where the frame has TCP. */
	r = rule(1, 0);
	r.need = URNIC_FLOW_L_UDP;
	r.val.src_port = 1234;
	r.mask.src_port = 0xffff;
	CHECK(urnic_flow_match(&r, &v4));
	CHECK(!urnic_flow_match(&r, &v6));
}

static void best_priority_takes_the_frame(void)
{
	struct urnic_flow_keys k = keys_of(4, false, false);
	struct urnic_flow_rule rules[6];
	uint32_t out[6], n;

	rules[0] = rule(10, 5); /* matches everything with Ethernet, priority 5 */
	rules[0].need = URNIC_FLOW_L_ETH;
	rules[1] = rule(11, 1); /* UDP, priority 1: wins */
	rules[1].need = URNIC_FLOW_L_UDP;
	rules[2] = rule(12, 1); /* same priority: takes it too */
	rules[2].need = URNIC_FLOW_L_IPV4;
	rules[3] = rule(13, 0); /* TCP: does not match */
	rules[3].need = URNIC_FLOW_L_TCP;
	rules[4] = rule(14, 0);
	rules[4].type = URNIC_FLOW_ALL_DEFAULT;
	rules[5] = rule(15, 9);
	rules[5].type = URNIC_FLOW_SNIFFER;
	n = urnic_flow_select(rules, 6, &k, out, 6);
	CHECK_EQ(n, 3);
	CHECK_EQ(out[0], 1);
	CHECK_EQ(out[1], 2);
	CHECK_EQ(out[2], 5);

	/* DONT_TRAP at a better priority: a copy, and the trapping rules still take it. */
	rules[3].need = URNIC_FLOW_L_ETH;
	rules[3].dont_trap = true;
	n = urnic_flow_select(rules, 6, &k, out, 6);
	CHECK_EQ(n, 4);
	CHECK_EQ(out[0], 1);
	CHECK_EQ(out[2], 3);

	/* A drop rule at the best priority: nobody below it, the sniffer still sees it. */
	rules[3].dont_trap = false;
	rules[3].drop = true;
	n = urnic_flow_select(rules, 6, &k, out, 6);
	CHECK_EQ(n, 1);
	CHECK_EQ(out[0], 5);
}

static void defaults_take_what_no_rule_took(void)
{
	struct urnic_flow_keys k = keys_of(6, true, false);
	struct urnic_flow_rule rules[3];
	uint32_t out[3], n;

	rules[0] = rule(10, 0);
	rules[0].need = URNIC_FLOW_L_UDP; /* no match: TCP frame */
	rules[1] = rule(11, 0);
	rules[1].type = URNIC_FLOW_MC_DEFAULT;
	rules[2] = rule(12, 0);
	rules[2].type = URNIC_FLOW_ALL_DEFAULT;
	n = urnic_flow_select(rules, 3, &k, out, 3);
	CHECK_EQ(n, 2); /* the destination MAC is multicast */
	CHECK_EQ(out[0], 1);
	CHECK_EQ(out[1], 2);
	k.dst_mac[0] = 0x02; /* unicast: not for MC_DEFAULT */
	n = urnic_flow_select(rules, 3, &k, out, 3);
	CHECK_EQ(n, 1);
	CHECK_EQ(out[0], 2);
	rules[0].need = URNIC_FLOW_L_TCP; /* a NORMAL rule takes it: no defaults */
	n = urnic_flow_select(rules, 3, &k, out, 3);
	CHECK_EQ(n, 1);
	CHECK_EQ(out[0], 0);
}

/* The Microsoft RSS verification vectors ("Verifying the RSS Hash Calculation"):
 * 66.9.149.187:2794 -> 161.142.100.80:1766 under the standard key. */
static void rss_hash_is_toeplitz(void)
{
	static const uint8_t key[40] = {
		0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
		0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
		0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
	};
	struct urnic_rss c = { .fields = URNIC_RSS_SRC_IPV4 | URNIC_RSS_DST_IPV4, .key_len = 40 };
	struct urnic_flow_keys k = { 0 };

	memcpy(c.key, key, 40);
	k.layers = URNIC_FLOW_L_ETH | URNIC_FLOW_L_IPV4 | URNIC_FLOW_L_TCP;
	k.src_ip4 = 66u << 24 | 9 << 16 | 149 << 8 | 187;
	k.dst_ip4 = 161u << 24 | 142 << 16 | 100 << 8 | 80;
	k.src_port = 2794;
	k.dst_port = 1766;
	CHECK_EQ(urnic_flow_rss_hash(&c, &k), 0x323e8fc2);
	c.fields |= URNIC_RSS_SRC_PORT_TCP | URNIC_RSS_DST_PORT_TCP;
	CHECK_EQ(urnic_flow_rss_hash(&c, &k), 0x51ccc178);
	/* UDP port fields do not apply to a TCP frame. */
	c.fields = URNIC_RSS_SRC_IPV4 | URNIC_RSS_DST_IPV4 | URNIC_RSS_SRC_PORT_UDP;
	CHECK_EQ(urnic_flow_rss_hash(&c, &k), 0x323e8fc2);
}

int main(void)
{
	RUN(parses_what_the_tests_send);
	RUN(truncated_frames_lose_layers_not_bounds);
	RUN(each_spec_matches_under_its_mask);
	RUN(best_priority_takes_the_frame);
	RUN(defaults_take_what_no_rule_took);
	RUN(rss_hash_is_toeplitz);
	return 0;
}
