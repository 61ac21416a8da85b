/* SPDX-License-Identifier: MIT */
/*
 * mcast.c - the multicast group table (mcast.h has the why): a small array, looked
 * up by address; attaching twice is a no-op and detaching what is not attached is
 * -EINVAL, as rxe_mcast.c.
 */
#include <errno.h>
#include <string.h>

#include "engine/mcast.h"

static bool same(bool ipv6, const uint8_t *a, const uint8_t *b)
{
	return memcmp(a, b, ipv6 ? 16 : 4) == 0;
}

static struct urnic_mcast_group *lookup(struct urnic_mcast_table *t, bool ipv6, const uint8_t *ip)
{
	for (int i = 0; i < URNIC_MAX_MCAST_GRP; i++)
		if (t->grp[i].nqp && same(ipv6, t->grp[i].ip, ip))
			return &t->grp[i];
	return NULL;
}

const struct urnic_mcast_group *urnic_mcast_find(const struct urnic_mcast_table *t, bool ipv6,
						 const uint8_t *ip)
{
	return lookup((struct urnic_mcast_table *)t, ipv6, ip);
}

int urnic_mcast_attach(struct urnic_mcast_table *t, bool ipv6, const uint8_t *ip, uint32_t qpn,
		       bool *joined)
{
	struct urnic_mcast_group *g = lookup(t, ipv6, ip);

	*joined = false;
	if (!g) {
		for (int i = 0; i < URNIC_MAX_MCAST_GRP && !g; i++)
			if (!t->grp[i].nqp)
				g = &t->grp[i];
		if (!g)
			return -ENOMEM;
		memset(g, 0, sizeof(*g));
		memcpy(g->ip, ip, ipv6 ? 16 : 4);
		*joined = true;
	}
	for (uint32_t i = 0; i < g->nqp; i++)
		if (g->qpn[i] == qpn)
			return 0;
	if (g->nqp == URNIC_MAX_MCAST_QP_ATTACH)
		return -ENOMEM;
	g->qpn[g->nqp++] = qpn;
	return 1;
}

int urnic_mcast_detach(struct urnic_mcast_table *t, bool ipv6, const uint8_t *ip, uint32_t qpn,
		       bool *left)
{
	struct urnic_mcast_group *g = lookup(t, ipv6, ip);

	*left = false;
	if (!g)
		return -EINVAL;
	for (uint32_t i = 0; i < g->nqp; i++) {
		if (g->qpn[i] != qpn)
			continue;
		g->qpn[i] = g->qpn[--g->nqp];
		*left = g->nqp == 0;
		return 0;
	}
	return -EINVAL;
}
