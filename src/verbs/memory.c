/* SPDX-License-Identifier: MIT */
/*
 * memory.c - protection domains and memory registration verbs.
 *
 * ibv_alloc_pd(3), ibv_reg_mr(3): remote write or remote atomic access requires local
 * write (IBTA 10.6.3.1, and the man page: EINVAL otherwise); unknown
 * access bits are refused, the "optional" range (IBV_ACCESS_OPTIONAL_RANGE, e.g.
 * relaxed ordering from perftest) is accepted and ignored. Keys carry 16 random bits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/verbs.h"

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

_Static_assert((int)IBV_ACCESS_LOCAL_WRITE == (int)URNIC_ACCESS_LOCAL_WRITE, "access flags");
_Static_assert((int)IBV_ACCESS_REMOTE_WRITE == (int)URNIC_ACCESS_REMOTE_WRITE, "access flags");
_Static_assert((int)IBV_ACCESS_REMOTE_READ == (int)URNIC_ACCESS_REMOTE_READ, "access flags");
_Static_assert((int)IBV_ACCESS_REMOTE_ATOMIC == (int)URNIC_ACCESS_REMOTE_ATOMIC, "access flags");
_Static_assert((int)IBV_ACCESS_MW_BIND == (int)URNIC_ACCESS_MW_BIND, "access flags");

URNIC_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	static _Atomic uint32_t next_handle = 1;
	struct urnic_vpd *v = calloc(1, sizeof(*v));

	if (!v) {
		errno = ENOMEM;
		return NULL;
	}
	v->ibpd.context = context;
	v->ibpd.handle = atomic_fetch_add(&next_handle, 1);
	v->pd.handle = v->ibpd.handle;
	return &v->ibpd;
}

URNIC_EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct urnic_vpd *v = to_vpd(pd);

	if (v->users)
		return EBUSY;
	free(v);
	return 0;
}

URNIC_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
					     uint64_t iova, unsigned int access)
{
	const unsigned int known = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
				   IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED |
				   IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB;
	struct urnic_dev *d = urnic_ctx_dev(pd->context);
	struct urnic_vpd *vpd = to_vpd(pd);
	struct urnic_vmr *v;
	int ret;

	access &= ~(unsigned int)IBV_ACCESS_OPTIONAL_RANGE;
	if ((access & ~known) ||
	    ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	     !(access & IBV_ACCESS_LOCAL_WRITE)) ||
	    (length && !addr)) {
		errno = EINVAL;
		return NULL;
	}
	v = calloc(1, sizeof(*v));
	if (!v) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&d->lock);
	ret = urnic_mr_register(&d->eng->mrs, &vpd->pd, addr, iova, length, access,
				(uint16_t)urnic_engine_random(d->eng), &v->mr);
	pthread_mutex_unlock(&d->lock);
	if (ret) {
		free(v);
		errno = -ret;
		return NULL;
	}
	vpd->users++;
	v->vpd = vpd;
	v->ibmr.context = pd->context;
	v->ibmr.pd = pd;
	v->ibmr.addr = addr;
	v->ibmr.length = length;
	v->ibmr.handle = v->mr->key;
	v->ibmr.lkey = v->mr->key;
	v->ibmr.rkey = v->mr->key;
	return &v->ibmr;
}

URNIC_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, (unsigned int)access);
}

URNIC_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,
					    uint64_t iova, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

URNIC_EXPORT int ibv_dereg_mr(struct ibv_mr *ibmr)
{
	struct urnic_vmr *v = urnic_container_of(ibmr, struct urnic_vmr, ibmr);
	struct urnic_dev *d = urnic_ctx_dev(ibmr->context);

	/* Under the device lock: once this returns the engine will never touch the
	 * memory again (a READ in progress fails with a remote access error). */
	pthread_mutex_lock(&d->lock);
	urnic_mr_deregister(&d->eng->mrs, v->mr);
	pthread_mutex_unlock(&d->lock);
	v->vpd->users--;
	free(v);
	return 0;
}
