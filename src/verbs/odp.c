/* SPDX-License-Identifier: MIT */
/*
 * odp.c - on-demand paging verbs (odp.h).
 *
 * An on-demand region is not checked against the process's mappings when it is
 * registered (the kernel pins nothing for it either): the engine reaches it through the
 * fault-safe copies of dev/odp.h, so memory mapped after registration is served and
 * memory that is not mapped with the right ends the access in error. An implicit one
 * (addr NULL, length SIZE_MAX, IOVA 0: the rule of mlx5 and rxe) spans the address
 * space. ibv_advise_mr(3) answers as mlx5_ib_advise_mr does where the man page allows
 * several errnos: an unknown advice EOPNOTSUPP, unknown flags or no SGE EINVAL, then per
 * SGE, in order, ENOENT, EINVAL, EPERM or EFAULT (dev/odp.h): each SGE is checked and
 * then prefetched, as mlx5's synchronous prefetch goes.
 */
#include "verbs/odp.h"

#include <errno.h>
#include <string.h>

#include "dev/odp.h"
#include "verbs/verbs.h"

_Static_assert((int)IBV_ADVISE_MR_ADVICE_PREFETCH == (int)URNIC_DEV_PREFETCH_READ &&
		       (int)IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE == (int)URNIC_DEV_PREFETCH_WRITE &&
		       (int)IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT ==
			       (int)URNIC_DEV_PREFETCH_NO_FAULT,
	       "advice values");
_Static_assert((int)IBV_ACCESS_ON_DEMAND == (int)URNIC_ACCESS_ON_DEMAND, "access flags");

int urnic_odp_reg_check(const void *addr, size_t length, uint64_t iova)
{
	if (!urnic_dev_odp_ops())
		return EOPNOTSUPP; /* ib_check_mr_access without IBK_ON_DEMAND_PAGING */
	if (!addr && length == SIZE_MAX)
		return iova ? EINVAL : 0;
	/* ib_umem_odp_get: the end may not wrap. */
	if (length == 0 || length - 1 > UINTPTR_MAX - (uintptr_t)addr ||
	    length - 1 > UINT64_MAX - iova)
		return EINVAL;
	return 0;
}

void urnic_odp_query_caps(struct ibv_odp_caps *caps)
{
	const struct urnic_odp_ops *ops = urnic_dev_odp_ops();
	uint32_t any = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_SRQ_RECV;

	memset(caps, 0, sizeof(*caps));
	if (!ops)
		return;
	caps->general_caps = IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT;
	/* What each transport carries (IBTA 9.8: UC has no READ or atomics, UD SENDs only);
	 * atomics need a target made writable first (dev/odp.h, Linux 5.14). */
	caps->per_transport_caps.rc_odp_caps = any | IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
					       (ops->atomic_ready ? IBV_ODP_SUPPORT_ATOMIC : 0);
	caps->per_transport_caps.uc_odp_caps = any | IBV_ODP_SUPPORT_WRITE;
	caps->per_transport_caps.ud_odp_caps = any;
}

int urnic_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
		    struct ibv_sge *sg_list, uint32_t num_sge)
{
	struct urnic_dev *d = urnic_ctx_dev(pd->context);
	struct urnic_vpd *vpd = to_vpd(pd);
	bool sync = flags & IBV_ADVISE_MR_FLAG_FLUSH;

	if ((unsigned int)advice > IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return EOPNOTSUPP;
	if ((flags & ~(uint32_t)IBV_ADVISE_MR_FLAG_FLUSH) || !sg_list || !num_sge)
		return EINVAL;
	for (uint32_t i = 0; i < num_sge; i++) {
		enum urnic_dev_prefetch a = (enum urnic_dev_prefetch)advice;
		void *host;
		int ret = urnic_dev_odp_check(d, &vpd->pd, sg_list[i].lkey, sg_list[i].addr,
					      sg_list[i].length, a, &host);

		/* Another thread may deregister the region now: what is prefetched then is
		 * only memory the application has mapped, and nothing else is touched. */
		if (!ret)
			ret = urnic_dev_odp_prefetch(host, sg_list[i].length, a, sync);
		if (ret)
			return -ret;
	}
	return 0;
}
