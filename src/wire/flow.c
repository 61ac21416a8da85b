/* SPDX-License-Identifier: MIT */
/*
 * flow.c - the flow steering of flow.h: parsing a frame's headers (IEEE 802.3, 802.1Q,
 * RFC 791, RFC 8200 without extension headers, RFC 768, RFC 9293) and choosing the
 * rules that take it.
 */
#include <errno.h>
#include <string.h>

#include "wire/byteorder.h"
#include "wire/flow.h"

enum {
	ETH_HDR = 14,
	VLAN_HDR = 4,
	ETH_P_IPV4 = 0x0800,
	ETH_P_IPV6 = 0x86dd,
	ETH_P_8021Q = 0x8100,
	IPV4_MIN_HDR = 20,
	IPV6_HDR = 40,
	L4_PORTS = 4, /* source and destination port: all a rule reads of TCP and UDP */
	PROTO_TCP = 6,
	PROTO_UDP = 17,
};

static void parse_l4(const uint8_t *p, size_t len, uint8_t proto, struct urnic_flow_keys *k)
{
	if (len < L4_PORTS || (proto != PROTO_TCP && proto != PROTO_UDP))
		return;
	k->layers |= proto == PROTO_TCP ? URNIC_FLOW_L_TCP : URNIC_FLOW_L_UDP;
	k->src_port = urnic_get_be16(p);
	k->dst_port = urnic_get_be16(p + 2);
}

static void parse_ipv4(const uint8_t *p, size_t len, struct urnic_flow_keys *k)
{
	size_t ihl;

	if (len < IPV4_MIN_HDR || p[0] >> 4 != 4)
		return;
	ihl = (size_t)(p[0] & 0xf) * 4;
	if (ihl < IPV4_MIN_HDR || ihl > len)
		return;
	k->layers |= URNIC_FLOW_L_IPV4;
	k->tos = p[1];
	k->ip4_flags = (uint8_t)(p[6] >> 5);
	k->ttl = p[8];
	k->proto = p[9];
	k->src_ip4 = urnic_get_be32(p + 12);
	k->dst_ip4 = urnic_get_be32(p + 16);
	/* Only the first fragment carries the ports (RFC 791 §3.1, fragment offset). */
	if ((urnic_get_be16(p + 6) & 0x1fff) == 0)
		parse_l4(p + ihl, len - ihl, k->proto, k);
}

static void parse_ipv6(const uint8_t *p, size_t len, struct urnic_flow_keys *k)
{
	uint32_t w;

	if (len < IPV6_HDR || p[0] >> 4 != 6)
		return;
	w = urnic_get_be32(p);
	k->layers |= URNIC_FLOW_L_IPV6;
	k->tos = (uint8_t)(w >> 20);
	k->flow_label = w & 0xfffff;
	k->proto = p[6];
	k->ttl = p[7];
	memcpy(k->src_ip6, p + 8, 16);
	memcpy(k->dst_ip6, p + 24, 16);
	parse_l4(p + IPV6_HDR, len - IPV6_HDR, k->proto, k);
}

int urnic_flow_parse(const uint8_t *frame, size_t len, struct urnic_flow_keys *k)
{
	size_t off = ETH_HDR;

	memset(k, 0, sizeof(*k));
	if (len < ETH_HDR)
		return -EBADMSG;
	k->layers = URNIC_FLOW_L_ETH;
	memcpy(k->dst_mac, frame, 6);
	memcpy(k->src_mac, frame + 6, 6);
	k->ether_type = urnic_get_be16(frame + 12);
	if (k->ether_type == ETH_P_8021Q && len >= ETH_HDR + VLAN_HDR) {
		k->vlan_tag = urnic_get_be16(frame + 14);
		k->ether_type = urnic_get_be16(frame + 16);
		off += VLAN_HDR;
	}
	if (k->ether_type == ETH_P_IPV4)
		parse_ipv4(frame + off, len - off, k);
	else if (k->ether_type == ETH_P_IPV6)
		parse_ipv6(frame + off, len - off, k);
	return 0;
}

static bool eq_bytes(const uint8_t *a, const uint8_t *b, const uint8_t *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((a[i] ^ b[i]) & m[i])
			return false;
	return true;
}

#define EQ(f) (((r->val.f ^ k->f) & r->mask.f) == 0)

bool urnic_flow_match(const struct urnic_flow_rule *r, const struct urnic_flow_keys *k)
{
	if ((k->layers & r->need) != r->need)
		return false;
	if (!eq_bytes(r->val.dst_mac, k->dst_mac, r->mask.dst_mac, 6) ||
	    !eq_bytes(r->val.src_mac, k->src_mac, r->mask.src_mac, 6) || !EQ(ether_type) ||
	    !EQ(vlan_tag))
		return false;
	if (!EQ(src_ip4) || !EQ(dst_ip4) || !EQ(flow_label) || !EQ(proto) || !EQ(tos) || !EQ(ttl) ||
	    !EQ(ip4_flags) || !EQ(src_port) || !EQ(dst_port))
		return false;
	return eq_bytes(r->val.src_ip6, k->src_ip6, r->mask.src_ip6, 16) &&
	       eq_bytes(r->val.dst_ip6, k->dst_ip6, r->mask.dst_ip6, 16);
}

#undef EQ

static bool multicast(const struct urnic_flow_keys *k)
{
	return k->dst_mac[0] & 1; /* IEEE 802.3 §3.2.3: the I/G bit, broadcast too */
}

uint32_t urnic_flow_select(const struct urnic_flow_rule *rules, uint32_t n,
			   const struct urnic_flow_keys *k, uint32_t *out, uint32_t max)
{
	uint32_t best = UINT32_MAX, cnt = 0;
	bool trapped;

	/* The best priority of a NORMAL rule that traps the frame. */
	for (uint32_t i = 0; i < n; i++)
		if (rules[i].type == URNIC_FLOW_NORMAL && !rules[i].dont_trap &&
		    rules[i].priority < best && urnic_flow_match(&rules[i], k))
			best = rules[i].priority;
	trapped = best != UINT32_MAX;
	for (uint32_t i = 0; i < n && cnt < max; i++) {
		const struct urnic_flow_rule *r = &rules[i];
		bool take;

		switch (r->type) {
		case URNIC_FLOW_NORMAL:
			/* DONT_TRAP rules of a priority at least as good as the trapping
			 * one's also see the frame. */
			take = r->priority <= best && (r->dont_trap || r->priority == best) &&
			       urnic_flow_match(r, k);
			break;
		case URNIC_FLOW_ALL_DEFAULT:
			take = !trapped;
			break;
		case URNIC_FLOW_MC_DEFAULT:
			take = !trapped && multicast(k);
			break;
		case URNIC_FLOW_SNIFFER:
			take = true;
			break;
		default:
			take = false;
			break;
		}
		if (take && !r->drop)
			out[cnt++] = i;
	}
	return cnt;
}

static uint32_t toeplitz(const uint8_t *key, uint32_t key_len, const uint8_t *in, size_t len)
{
	uint32_t hash = 0, window;
	size_t kbit = 32;

	if (key_len < 4)
		return 0;
	window = urnic_get_be32(key);
	for (size_t i = 0; i < len; i++) {
		for (int b = 7; b >= 0; b--) {
			uint32_t next;

			if (in[i] >> b & 1)
				hash ^= window;
			/* The key's next bit shifts into the window; past its end, zeros. */
			next = 0;
			if (kbit < (size_t)key_len * 8)
				next = (uint32_t)(key[kbit / 8] >>
						  (7u - (unsigned int)(kbit % 8))) &
				       1u;
			window = window << 1 | next;
			kbit++;
		}
	}
	return hash;
}

uint32_t urnic_flow_rss_hash(const struct urnic_rss *c, const struct urnic_flow_keys *k)
{
	uint8_t in[36];
	size_t n = 0;
	bool tcp = k->layers & URNIC_FLOW_L_TCP, udp = k->layers & URNIC_FLOW_L_UDP;

	if (k->layers & URNIC_FLOW_L_IPV4) {
		if (c->fields & URNIC_RSS_SRC_IPV4) {
			urnic_put_be32(in + n, k->src_ip4);
			n += 4;
		}
		if (c->fields & URNIC_RSS_DST_IPV4) {
			urnic_put_be32(in + n, k->dst_ip4);
			n += 4;
		}
	} else if (k->layers & URNIC_FLOW_L_IPV6) {
		if (c->fields & URNIC_RSS_SRC_IPV6) {
			memcpy(in + n, k->src_ip6, 16);
			n += 16;
		}
		if (c->fields & URNIC_RSS_DST_IPV6) {
			memcpy(in + n, k->dst_ip6, 16);
			n += 16;
		}
	}
	if ((tcp && (c->fields & URNIC_RSS_SRC_PORT_TCP)) ||
	    (udp && (c->fields & URNIC_RSS_SRC_PORT_UDP))) {
		urnic_put_be16(in + n, k->src_port);
		n += 2;
	}
	if ((tcp && (c->fields & URNIC_RSS_DST_PORT_TCP)) ||
	    (udp && (c->fields & URNIC_RSS_DST_PORT_UDP))) {
		urnic_put_be16(in + n, k->dst_port);
		n += 2;
	}
	return toeplitz(c->key, c->key_len, in, n);
}
