/* SPDX-License-Identifier: MIT */
/*
 * odp.h - the on-demand paging verbs (odp.c): registration rules for
 * IBV_ACCESS_ON_DEMAND, the ODP capabilities of ibv_query_device_ex(3), and
 * ibv_advise_mr(3) (the verbs_context op behind the inline wrapper).
 */
#ifndef URNIC_VERBS_ODP_H
#define URNIC_VERBS_ODP_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

/* Whether [addr, addr + length) at iova may be registered on demand: 0, EOPNOTSUPP (no
 * on-demand paging in this process), or EINVAL (an empty or wrapping range; an implicit
 * region, addr NULL and length SIZE_MAX, at an IOVA other than 0). Nothing is checked
 * against the mapping. */
int urnic_odp_reg_check(const void *addr, size_t length, uint64_t iova);

/* struct ibv_device_attr_ex.odp_caps: zero without on-demand paging. */
void urnic_odp_query_caps(struct ibv_odp_caps *caps);

int urnic_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
		    struct ibv_sge *sg_list, uint32_t num_sge);

#endif
