/* SPDX-License-Identifier: MIT */
/*
 * ah.c - address handles: ibv_create_ah, ibv_destroy_ah, and the two helpers that
 * build an address vector from a UD completion (ibv_init_ah_from_wc,
 * ibv_create_ah_from_wc).
 *
 * On RoCE an address vector must carry a GRH (is_global): its DGID names the peer,
 * and RoCEv2 (IBTA Annex A17.4) makes a GID an IP address, ::ffff:a.b.c.d for IPv4.
 * An AH holds only the destination; the UDP source port belongs to the QP that sends
 * (rxe: a UD QP's port is chosen at its creation), so one AH serves many QPs.
 * ibv_init_ah_from_wc() reads the 40-byte GRH area the engine wrote at the start of
 * the receive buffer (src/engine/roce/ud.c) exactly as rdma-core's libibverbs/verbs.c
 * does: IPv4 when the first 20 bytes do not hold an IPv6 header (version 6) or when
 * the IPv4 header in the last 20 bytes has a valid checksum, else IPv6; the sender's
 * address becomes the DGID and our address's GID index the SGID index.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/verbs.h"

static const uint8_t v4_mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

int urnic_gid_to_ip(const struct urnic_dev *d, const uint8_t gid[16], uint8_t ip[16])
{
	bool v4 = memcmp(gid, v4_mapped_prefix, 12) == 0;

	if (v4 == d->ipv6)
		return -EINVAL;
	memset(ip, 0, 16);
	memcpy(ip, v4 ? gid + 12 : gid, v4 ? 4 : 16);
	return 0;
}

int urnic_peer_from_ah(const struct urnic_dev *d, const struct ibv_ah_attr *ah,
		       struct urnic_peer *peer)
{
	/* The port must exist, 0 included: uverbs create_ah and modify_qp (IB_QP_AV)
	 * check rdma_is_port_valid() before rxe sees the AV. */
	if (!ah->is_global || ah->port_num != 1 || ah->grh.sgid_index >= 2)
		return -EINVAL;
	memset(peer, 0, sizeof(*peer));
	if (urnic_gid_to_ip(d, ah->grh.dgid.raw, peer->ip))
		return -EINVAL;
	peer->ipv6 = d->ipv6;
	peer->hop_limit = ah->grh.hop_limit;
	peer->traffic_class = ah->grh.traffic_class;
	peer->flow_label = ah->grh.flow_label;
	return 0;
}

URNIC_EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct urnic_dev *d = urnic_ctx_dev(pd->context);
	struct urnic_vah *v;
	int ret;

	v = calloc(1, sizeof(*v));
	if (!v) {
		errno = ENOMEM;
		return NULL;
	}
	ret = urnic_peer_from_ah(d, attr, &v->peer);
	if (ret) {
		free(v);
		errno = -ret;
		return NULL;
	}
	v->vpd = to_vpd(pd);
	v->vpd->users++;
	v->ibah.context = pd->context;
	v->ibah.pd = pd;
	v->ibah.handle = 0;
	return &v->ibah;
}

URNIC_EXPORT int ibv_destroy_ah(struct ibv_ah *ah)
{
	struct urnic_vah *v = to_vah(ah);

	/* Queued work keeps its own copy of the destination (post.c). */
	v->vpd->users--;
	free(v);
	return 0;
}

/* The GID index of gid in our table, or -1. Both entries hold the address; index 1
 * is preferred, where rxe lists an IPv4 address's GID. */
static int gid_index(const struct urnic_dev *d, const uint8_t *gid)
{
	for (int i = 1; i >= 0; i--)
		if (memcmp(d->gid[i], gid, 16) == 0)
			return i;
	return -1;
}

static uint16_t ipv4_header_sum(const uint8_t *h)
{
	uint32_t sum = 0;

	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* 4 or 6 as rdma-core's get_grh_header_version(), or -1. */
static int grh_ip_version(const struct ibv_grh *grh)
{
	const uint8_t *ip4 = (const uint8_t *)grh + 20;

	if ((ntohl(grh->version_tclass_flow) >> 28) != 6)
		return (ip4[0] >> 4) == 4 ? 4 : -1;
	/* Version 6 up front: IPv4 only if the last 20 bytes are a valid IPv4 header. */
	if (ip4[0] != 0x45)
		return 6;
	return ipv4_header_sum(ip4) == 0xffff ? 4 : 6;
}

URNIC_EXPORT int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num,
				     struct ibv_wc *wc, struct ibv_grh *grh,
				     struct ibv_ah_attr *ah_attr)
{
	const struct urnic_dev *d = urnic_ctx_dev(context);
	int version, idx;

	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->grh.flow_label = ntohl(grh->version_tclass_flow) & 0xfffff;
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;
	ah_attr->is_global = 1;
	version = grh_ip_version(grh);
	if (version == 4) {
		const uint8_t *ip4 = (const uint8_t *)grh + 20;
		uint8_t gid[16];

		if ((ip4[16] >> 4) == 0xe) {
			errno = EINVAL; /* multicast destination: not in a GID table */
			return -1;
		}
		memcpy(gid, v4_mapped_prefix, 12);
		memcpy(gid + 12, ip4 + 16, 4); /* our address: the SGID */
		idx = gid_index(d, gid);
		memcpy(ah_attr->grh.dgid.raw, v4_mapped_prefix, 12);
		memcpy(ah_attr->grh.dgid.raw + 12, ip4 + 12, 4); /* the sender */
		ah_attr->grh.hop_limit = ip4[8];
		ah_attr->grh.traffic_class = ip4[1];
	} else if (version == 6) {
		if (grh->dgid.raw[0] == 0xff) {
			errno = EINVAL;
			return -1;
		}
		/* RoCEv2 carries UDP (next header 17); RoCEv1's 0x1b urnic does not speak. */
		if (grh->next_hdr != 17) {
			errno = EPROTONOSUPPORT;
			return -1;
		}
		idx = gid_index(d, grh->dgid.raw);
		ah_attr->grh.dgid = grh->sgid;
		ah_attr->grh.hop_limit = grh->hop_limit;
		ah_attr->grh.traffic_class = (uint8_t)(ntohl(grh->version_tclass_flow) >> 20);
	} else {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	if (idx < 0) {
		errno = EINVAL;
		return -1;
	}
	ah_attr->grh.sgid_index = (uint8_t)idx;
	return 0;
}

URNIC_EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
						  struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr attr;

	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr))
		return NULL;
	return ibv_create_ah(pd, &attr);
}
