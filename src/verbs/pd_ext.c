/* SPDX-License-Identifier: MIT */
/*
 * pd_ext.c - thread domains and parent domains: ibv_alloc_td(3), ibv_dealloc_td(3),
 * ibv_alloc_parent_domain(3) and ibv_dealloc_pd(3) of a parent domain.
 *
 * A parent domain stands for its protection domain wherever a PD is taken (to_vpd in
 * verbs.h): MRs, MWs, AHs, QPs and SRQs made through it belong to that PD. What it adds:
 * the rings of the QPs, CQs and SRQs made through it come from the application's
 * allocator when it gave one (alloc returning IBV_ALLOCATOR_USE_DEFAULT: from urnic's
 * own), and go back through its free. A thread domain is the application's promise to
 * serialize its use of the objects made under it; urnic takes the promise and keeps
 * its locks (a post or a poll takes one uncontended spinlock), as the man page allows:
 * "the exact behavior is provider dependent".
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "verbs/verbs.h"

/*
 * The resource_type the allocator is called with: the upper 32 bits are the driver's
 * enum rdma_driver_id, which has no entry for urnic (RDMA_DRIVER_UNKNOWN, 0), the lower
 * ones which ring it is, numbered as mlx5dv.h numbers the same buffers (MLX5DV_RES_TYPE_QP
 * 1 for a QP's send and receive queues, _SRQ 4, _CQ 5).
 */
enum urnic_alloc_res {
	URNIC_ALLOC_RES_QP = 1,
	URNIC_ALLOC_RES_SRQ = 4,
	URNIC_ALLOC_RES_CQ = 5,
};

struct urnic_vtd {
	struct ibv_td ibtd;
	_Atomic int users; /* parent domains: dealloc refuses with EBUSY while any exist */
};

struct urnic_vparent {
	struct urnic_vpd vpd; /* vpd.ibpd is the application's handle, vpd.base its PD */
	struct urnic_vtd *vtd;
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment,
		       uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t resource_type);
	void *pd_context;
	struct urnic_ring_mem mem; /* alloc and free as the rings ask for memory */
	_Atomic int users;	   /* QPs, CQs, SRQs made through it */
};

static struct urnic_vparent *to_vparent(struct ibv_pd *pd)
{
	return urnic_container_of(pd, struct urnic_vparent, vpd.ibpd);
}

struct ibv_td *urnic_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr)
{
	struct urnic_vtd *v;

	if (!attr || attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	v = calloc(1, sizeof(*v));
	if (!v) {
		errno = ENOMEM;
		return NULL;
	}
	v->ibtd.context = context;
	return &v->ibtd;
}

int urnic_dealloc_td(struct ibv_td *td)
{
	struct urnic_vtd *v = urnic_container_of(td, struct urnic_vtd, ibtd);

	if (atomic_load(&v->users))
		return EBUSY;
	free(v);
	return 0;
}

static uint64_t res_type(enum urnic_ring_kind kind)
{
	switch (kind) {
	case URNIC_RING_CQ:
		return URNIC_ALLOC_RES_CQ;
	case URNIC_RING_SRQ:
		return URNIC_ALLOC_RES_SRQ;
	default:
		return URNIC_ALLOC_RES_QP;
	}
}

static void *ring_alloc(void *arg, size_t size, size_t align, enum urnic_ring_kind kind)
{
	struct urnic_vparent *p = arg;
	void *ptr = p->alloc(&p->vpd.ibpd, p->pd_context, size, align, res_type(kind));

	return ptr == IBV_ALLOCATOR_USE_DEFAULT ? URNIC_RING_MEM_DEFAULT : ptr;
}

static void ring_free(void *arg, void *ptr, enum urnic_ring_kind kind)
{
	struct urnic_vparent *p = arg;

	p->free(&p->vpd.ibpd, p->pd_context, ptr, res_type(kind));
}

struct ibv_pd *urnic_alloc_parent_domain(struct ibv_context *context,
					 struct ibv_parent_domain_init_attr *attr)
{
	const uint32_t known =
		IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	struct urnic_vparent *p;
	struct urnic_vpd *base;

	/* The PD "can't be NULL" (ibv_alloc_parent_domain(3)); rdma-core's providers answer
	 * EINVAL to it and to a comp_mask they do not know. */
	if (!attr || !attr->pd || attr->pd->context != context || (attr->comp_mask & ~known) ||
	    (attr->td && attr->td->context != context)) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	base = to_vpd(attr->pd); /* a parent domain's is its PD's */
	p->vpd.ibpd.context = context;
	p->vpd.ibpd.handle = base->ibpd.handle;
	p->vpd.pd = base->pd;
	p->vpd.base = base;
	/* Custom allocation takes both callbacks (mlx5 uses neither without the other). */
	if ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) && attr->alloc &&
	    attr->free) {
		p->alloc = attr->alloc;
		p->free = attr->free;
		p->mem = (struct urnic_ring_mem){ ring_alloc, ring_free, p };
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		p->pd_context = attr->pd_context;
	if (attr->td) {
		p->vtd = urnic_container_of(attr->td, struct urnic_vtd, ibtd);
		atomic_fetch_add(&p->vtd->users, 1);
	}
	base->users++;
	return &p->vpd.ibpd;
}

int urnic_dealloc_parent_domain(struct ibv_pd *pd)
{
	struct urnic_vparent *p = to_vparent(pd);

	/* "All resources created with the parent domain should be destroyed prior to
	 * deallocating" it: their rings go back through its free. */
	if (atomic_load(&p->users))
		return EBUSY;
	p->vpd.base->users--;
	if (p->vtd)
		atomic_fetch_sub(&p->vtd->users, 1);
	free(p);
	return 0;
}

const struct urnic_ring_mem *urnic_parent_hold(struct ibv_pd *pd)
{
	struct urnic_vparent *p;

	if (!urnic_pd_is_parent(pd))
		return NULL;
	p = to_vparent(pd);
	atomic_fetch_add(&p->users, 1);
	return p->alloc ? &p->mem : NULL;
}

void urnic_parent_release(struct ibv_pd *pd)
{
	if (pd && urnic_pd_is_parent(pd))
		atomic_fetch_sub(&to_vparent(pd)->users, 1);
}
