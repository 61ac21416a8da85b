/* SPDX-License-Identifier: MIT */
/*
 * flow.c - ibv_create_flow(3) and ibv_destroy_flow(3): steering received Ethernet
 * frames to a raw packet QP (verbs_context's ibv_create_flow / ibv_destroy_flow).
 *
 * struct ibv_flow_attr and the specs behind it become a host-order rule (wire/flow.h):
 * ETH, IPV4, IPV4_EXT, IPV6, TCP and UDP specs (values under masks) and the DROP
 * action; rule types NORMAL, ALL_DEFAULT, MC_DEFAULT and SNIFFER; the DONT_TRAP flag.
 * Errors as the man page gives them: EINVAL for a malformed attribute (comp_mask, type,
 * port, a spec's size), EOPNOTSUPP for what is not supported (inner headers, tunnels,
 * ESP, MPLS, tag, handle and counter actions, EGRESS, a QP that is not raw packet),
 * ENOMEM past the device's rules. A QP's rules go when it is destroyed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dev/raw_port.h"
#include "verbs/verbs.h"

_Static_assert((int)IBV_FLOW_ATTR_NORMAL == (int)URNIC_FLOW_NORMAL &&
		       (int)IBV_FLOW_ATTR_ALL_DEFAULT == (int)URNIC_FLOW_ALL_DEFAULT &&
		       (int)IBV_FLOW_ATTR_MC_DEFAULT == (int)URNIC_FLOW_MC_DEFAULT &&
		       (int)IBV_FLOW_ATTR_SNIFFER == (int)URNIC_FLOW_SNIFFER,
	       "flow attribute types");

struct urnic_vflow {
	struct ibv_flow ibflow;
	struct urnic_dev *dev;
	uint32_t id;
};

static int eth_spec(const struct ibv_flow_spec_eth *s, struct urnic_flow_rule *r)
{
	const struct ibv_flow_eth_filter *f[2] = { &s->val, &s->mask };
	struct urnic_flow_keys *k[2] = { &r->val, &r->mask };

	for (int i = 0; i < 2; i++) {
		memcpy(k[i]->dst_mac, f[i]->dst_mac, 6);
		memcpy(k[i]->src_mac, f[i]->src_mac, 6);
		k[i]->ether_type = ntohs(f[i]->ether_type);
		k[i]->vlan_tag = ntohs(f[i]->vlan_tag);
	}
	r->need |= URNIC_FLOW_L_ETH;
	return 0;
}

static int ipv4_spec(const struct ibv_flow_spec *s, bool ext, struct urnic_flow_rule *r)
{
	struct urnic_flow_keys *k[2] = { &r->val, &r->mask };

	for (int i = 0; i < 2; i++) {
		const struct ibv_flow_ipv4_ext_filter *f = i ? &s->ipv4_ext.mask : &s->ipv4_ext.val;
		const struct ibv_flow_ipv4_filter *p = i ? &s->ipv4.mask : &s->ipv4.val;

		if (!ext) {
			k[i]->src_ip4 = ntohl(p->src_ip);
			k[i]->dst_ip4 = ntohl(p->dst_ip);
			continue;
		}
		k[i]->src_ip4 = ntohl(f->src_ip);
		k[i]->dst_ip4 = ntohl(f->dst_ip);
		k[i]->proto = f->proto;
		k[i]->tos = f->tos;
		k[i]->ttl = f->ttl;
		k[i]->ip4_flags = f->flags;
	}
	r->need |= URNIC_FLOW_L_IPV4;
	return 0;
}

static int ipv6_spec(const struct ibv_flow_spec_ipv6 *s, struct urnic_flow_rule *r)
{
	const struct ibv_flow_ipv6_filter *f[2] = { &s->val, &s->mask };
	struct urnic_flow_keys *k[2] = { &r->val, &r->mask };

	for (int i = 0; i < 2; i++) {
		memcpy(k[i]->src_ip6, f[i]->src_ip, 16);
		memcpy(k[i]->dst_ip6, f[i]->dst_ip, 16);
		k[i]->flow_label = ntohl(f[i]->flow_label) & 0xfffff;
		k[i]->proto = f[i]->next_hdr;
		k[i]->tos = f[i]->traffic_class;
		k[i]->ttl = f[i]->hop_limit;
	}
	r->need |= URNIC_FLOW_L_IPV6;
	return 0;
}

static int l4_spec(const struct ibv_flow_spec_tcp_udp *s, bool tcp, struct urnic_flow_rule *r)
{
	r->val.src_port = ntohs(s->val.src_port);
	r->val.dst_port = ntohs(s->val.dst_port);
	r->mask.src_port = ntohs(s->mask.src_port);
	r->mask.dst_port = ntohs(s->mask.dst_port);
	r->need |= tcp ? URNIC_FLOW_L_TCP : URNIC_FLOW_L_UDP;
	return 0;
}

/* The size each spec type must have at least, and what a spec of that type does. */
static int one_spec(const struct ibv_flow_spec *s, struct urnic_flow_rule *r)
{
	size_t need;

	switch ((uint32_t)s->hdr.type) {
	case IBV_FLOW_SPEC_ETH:
		need = sizeof(struct ibv_flow_spec_eth);
		break;
	case IBV_FLOW_SPEC_IPV4:
		need = sizeof(struct ibv_flow_spec_ipv4);
		break;
	case IBV_FLOW_SPEC_IPV4_EXT:
		need = sizeof(struct ibv_flow_spec_ipv4_ext);
		break;
	case IBV_FLOW_SPEC_IPV6:
		need = sizeof(struct ibv_flow_spec_ipv6);
		break;
	case IBV_FLOW_SPEC_TCP:
	case IBV_FLOW_SPEC_UDP:
		need = sizeof(struct ibv_flow_spec_tcp_udp);
		break;
	case IBV_FLOW_SPEC_ACTION_DROP:
		need = sizeof(struct ibv_flow_spec_action_drop);
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (s->hdr.size < need)
		return -EINVAL;
	switch ((uint32_t)s->hdr.type) {
	case IBV_FLOW_SPEC_ETH:
		return eth_spec(&s->eth, r);
	case IBV_FLOW_SPEC_IPV4:
		return ipv4_spec(s, false, r);
	case IBV_FLOW_SPEC_IPV4_EXT:
		return ipv4_spec(s, true, r);
	case IBV_FLOW_SPEC_IPV6:
		return ipv6_spec(&s->ipv6, r);
	case IBV_FLOW_SPEC_TCP:
	case IBV_FLOW_SPEC_UDP:
		return l4_spec(&s->tcp_udp, s->hdr.type == IBV_FLOW_SPEC_TCP, r);
	default:
		r->drop = true;
		return 0;
	}
}

static int to_rule(const struct ibv_flow_attr *a, struct urnic_flow_rule *r)
{
	const uint8_t *p = (const uint8_t *)(a + 1);
	int ret;

	if (a->comp_mask || (uint32_t)a->type > IBV_FLOW_ATTR_SNIFFER || a->port != 1)
		return -EINVAL;
	if (a->flags & ~(uint32_t)IBV_FLOW_ATTR_FLAGS_DONT_TRAP)
		return -EOPNOTSUPP;
	memset(r, 0, sizeof(*r));
	r->type = (uint8_t)a->type;
	r->priority = a->priority;
	r->dont_trap = a->flags & IBV_FLOW_ATTR_FLAGS_DONT_TRAP;
	for (int i = 0; i < a->num_of_specs; i++) {
		/* The specs follow the attribute packed, each at its predecessor's size: one
		 * need not be aligned for struct ibv_flow_spec (its IPv6 and counter members
		 * want 8 bytes after a 20-byte ibv_flow_attr), so it is copied out. */
		struct ibv_flow_spec s;
		uint16_t size;

		memcpy(&size, p + offsetof(struct ibv_flow_spec_eth, size), sizeof(size));
		if (!size) /* attr->size is not read: libibverbs sums the specs itself */
			return -EINVAL;
		memset(&s, 0, sizeof(s));
		memcpy(&s, p, size < sizeof(s) ? size : sizeof(s));
		ret = one_spec(&s, r);
		if (ret)
			return ret;
		p += size;
	}
	return 0;
}

struct ibv_flow *urnic_create_flow(struct ibv_qp *qp, struct ibv_flow_attr *attr)
{
	struct urnic_vqp *v = to_vqp(qp);
	struct urnic_flow_rule r;
	struct urnic_vflow *f;
	int ret;

	if (qp->qp_type != IBV_QPT_RAW_PACKET) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	ret = to_rule(attr, &r);
	if (ret) {
		errno = -ret;
		return NULL;
	}
	r.qpn = v->qp.qpn;
	f = calloc(1, sizeof(*f));
	if (!f) {
		errno = ENOMEM;
		return NULL;
	}
	ret = urnic_dev_flow_add(v->dev, &r, &f->id);
	if (ret) {
		free(f);
		errno = -ret;
		return NULL;
	}
	f->dev = v->dev;
	f->ibflow.context = qp->context;
	f->ibflow.handle = f->id;
	return &f->ibflow;
}

int urnic_destroy_flow(struct ibv_flow *flow)
{
	struct urnic_vflow *f = urnic_container_of(flow, struct urnic_vflow, ibflow);

	/* -ENOENT: its QP was destroyed first and took the rule with it. */
	(void)urnic_dev_flow_del(f->dev, f->id);
	free(f);
	return 0;
}
