// SPDX-License-Identifier: MIT
/*
 * table.c - the connection table: a bounded array of connections, their local
 * communication IDs, and two indexes to find a connection by what its peer calls it.
 *
 * A local comm ID is owner << 24 | ((gen << idx_bits | index) ^ operand): the owner in the
 * top 8 bits (a router on a shared address steers MADs by it, as QPNs carry theirs), the
 * slot index for a lookup without search, random generation bits that change at every
 * reuse of the slot, all of the low 24 bits XORed with a random operand as cm.c does
 * (random_id_operand), and never 0 (IBTA 12.6.5: 0 is no comm ID). A slot is reused only
 * once its connection is out of TimeWait (IBTA 12.9.8.3), oldest freed first.
 * The indexes are hash chains: the remote comm ID with the peer's CA GUID (duplicate REQs
 * and REPs, cm.c's remote_id_table; for SIDR, the request ID with the requester's GID) and
 * the remote QPN with the CA GUID (stale connections, cm.c's remote_qp_table).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cm/core.h"
#include "wire/byteorder.h"

int urnic_cm_table_init(struct urnic_cm *cm)
{
	uint32_t n = cm->cfg.max_conns, buckets = 1;

	while ((1u << cm->idx_bits) < n)
		cm->idx_bits++;
	while (buckets < n)
		buckets <<= 1;
	cm->bucket_mask = buckets - 1;
	cm->operand = cm_random(cm) & 0xffffff;
	cm->conns = calloc(n, sizeof(*cm->conns));
	cm->free_ring = calloc(n, sizeof(*cm->free_ring));
	cm->rid_buckets = calloc(buckets, sizeof(*cm->rid_buckets));
	cm->qpn_buckets = calloc(buckets, sizeof(*cm->qpn_buckets));
	if (!cm->conns || !cm->free_ring || !cm->rid_buckets || !cm->qpn_buckets) {
		urnic_cm_table_fini(cm);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		cm->free_ring[i] = i;
	cm->free_count = n;
	return 0;
}

void urnic_cm_table_fini(struct urnic_cm *cm)
{
	free(cm->conns);
	free(cm->free_ring);
	free(cm->rid_buckets);
	free(cm->qpn_buckets);
	cm->conns = NULL;
	cm->free_ring = cm->rid_buckets = cm->qpn_buckets = NULL;
}

static uint32_t make_id(const struct urnic_cm *cm, uint32_t gen, uint32_t index)
{
	uint32_t low = ((gen << cm->idx_bits) | index) ^ cm->operand;

	return (uint32_t)cm->cfg.owner << 24 | (low & 0xffffff);
}

struct cm_conn *urnic_cm_conn_alloc(struct urnic_cm *cm)
{
	uint32_t gen_mask = (1u << (24 - cm->idx_bits)) - 1, index, gen, id;
	struct cm_conn *c;

	if (!cm->free_count)
		return NULL;
	index = cm->free_ring[cm->free_head];
	cm->free_head = (cm->free_head + 1) % cm->cfg.max_conns;
	cm->free_count--;
	c = &cm->conns[index];
	do {
		gen = cm_random(cm) & gen_mask;
		id = make_id(cm, gen, index);
	} while (gen == c->gen || !id);
	memset(c, 0, sizeof(*c));
	c->in_use = true;
	c->gen = gen;
	c->local_id = id;
	cm->in_use++;
	return c;
}

void urnic_cm_conn_release(struct urnic_cm *cm, struct cm_conn *c)
{
	uint32_t gen = c->gen;

	urnic_cm_unindex_rid(cm, c);
	urnic_cm_unindex_qpn(cm, c);
	urnic_cm_backlog_put(cm, c);
	memset(c, 0, sizeof(*c));
	c->gen = gen;
	cm->free_ring[(cm->free_head + cm->free_count) % cm->cfg.max_conns] = cm_index(cm, c);
	cm->free_count++;
	cm->in_use--;
}

struct cm_conn *urnic_cm_conn_find(const struct urnic_cm *cm, uint32_t local_id)
{
	uint32_t index = ((local_id & 0xffffff) ^ cm->operand) & ((1u << cm->idx_bits) - 1);
	struct cm_conn *c;

	if (!local_id || local_id >> 24 != cm->cfg.owner || index >= cm->cfg.max_conns)
		return NULL;
	c = &cm->conns[index];
	return c->in_use && c->local_id == local_id ? c : NULL;
}

uint64_t urnic_cm_gid_key(const uint8_t *gid)
{
	return urnic_get_be64(gid) * 0x9e3779b97f4a7c15ull ^ urnic_get_be64(gid + 8);
}

static uint32_t bucket(const struct urnic_cm *cm, uint32_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ b * 0xc2b2ae3d27d4eb4full;

	h ^= h >> 29;
	return (uint32_t)h & cm->bucket_mask;
}

struct cm_conn *urnic_cm_find_remote_id(const struct urnic_cm *cm, uint32_t remote_id,
					uint64_t guid, bool sidr)
{
	uint32_t i = cm->rid_buckets[bucket(cm, remote_id, guid)];

	for (; i; i = cm->conns[i - 1].rid_next) {
		struct cm_conn *c = &cm->conns[i - 1];

		if (c->remote_id == remote_id && c->remote_guid == guid && c->sidr == sidr)
			return c;
	}
	return NULL;
}

struct cm_conn *urnic_cm_find_remote_qpn(const struct urnic_cm *cm, uint32_t qpn, uint64_t guid)
{
	uint32_t i = cm->qpn_buckets[bucket(cm, qpn, guid)];

	for (; i; i = cm->conns[i - 1].qpn_next) {
		struct cm_conn *c = &cm->conns[i - 1];

		if (c->remote_qpn == qpn && c->remote_guid == guid)
			return c;
	}
	return NULL;
}

void urnic_cm_index_rid(struct urnic_cm *cm, struct cm_conn *c)
{
	uint32_t *head = &cm->rid_buckets[bucket(cm, c->remote_id, c->remote_guid)];

	if (c->in_rid)
		return;
	c->rid_next = *head;
	*head = cm_index(cm, c) + 1;
	c->in_rid = true;
}

void urnic_cm_index_qpn(struct urnic_cm *cm, struct cm_conn *c)
{
	uint32_t *head = &cm->qpn_buckets[bucket(cm, c->remote_qpn, c->remote_guid)];

	if (c->in_qpn)
		return;
	c->qpn_next = *head;
	*head = cm_index(cm, c) + 1;
	c->in_qpn = true;
}

/* Unlinks slot index + 1 from the chain starting at *link, next found by `next`. */
static void unlink_slot(struct urnic_cm *cm, uint32_t *link, uint32_t slot, bool qpn)
{
	while (*link && *link != slot) {
		struct cm_conn *c = &cm->conns[*link - 1];

		link = qpn ? &c->qpn_next : &c->rid_next;
	}
	if (*link)
		*link = qpn ? cm->conns[slot - 1].qpn_next : cm->conns[slot - 1].rid_next;
}

void urnic_cm_unindex_rid(struct urnic_cm *cm, struct cm_conn *c)
{
	if (!c->in_rid)
		return;
	unlink_slot(cm, &cm->rid_buckets[bucket(cm, c->remote_id, c->remote_guid)],
		    cm_index(cm, c) + 1, false);
	c->rid_next = 0;
	c->in_rid = false;
}

void urnic_cm_unindex_qpn(struct urnic_cm *cm, struct cm_conn *c)
{
	if (!c->in_qpn)
		return;
	unlink_slot(cm, &cm->qpn_buckets[bucket(cm, c->remote_qpn, c->remote_guid)],
		    cm_index(cm, c) + 1, true);
	c->qpn_next = 0;
	c->in_qpn = false;
}
