/* SPDX-License-Identifier: MIT */
/*
 * dm.c - device memory verbs: the context ops behind ibv_alloc_dm, ibv_free_dm and
 * ibv_reg_dm_mr (inline wrappers in <infiniband/verbs.h>), the ibv_dm copy ops behind
 * ibv_memcpy_to_dm / ibv_memcpy_from_dm (ibv_alloc_dm(3)), and ibv_import_dm(3) /
 * ibv_unimport_dm. The memory and its budget are the device's (dev/dm.h).
 * Errors as the kernel and mlx5, the one provider with device memory, answer them: an
 * unknown comp_mask, more than max_dm_size or a region outside the allocation EINVAL,
 * more than is left ENOMEM, a copy outside it EFAULT, a copy not in 4-byte granules
 * EINVAL, ibv_free_dm with a region on it EBUSY.
 */
#include <errno.h>
#include <stdlib.h>

#include "verbs/verbs.h"

struct urnic_vdm {
	struct ibv_dm ibdm;
	struct urnic_dm *dm;
};

static struct urnic_vdm *to_vdm(struct ibv_dm *dm)
{
	return urnic_container_of(dm, struct urnic_vdm, ibdm);
}

static int copy_to_dm(struct ibv_dm *dm, uint64_t dm_offset, const void *host_addr, size_t length)
{
	return -urnic_dev_dm_copy_to(to_vdm(dm)->dm, dm_offset, host_addr, length);
}

static int copy_from_dm(void *host_addr, struct ibv_dm *dm, uint64_t dm_offset, size_t length)
{
	return -urnic_dev_dm_copy_from(host_addr, to_vdm(dm)->dm, dm_offset, length);
}

/* The ibv_dm of an allocation or an import of it, in context. NULL (errno ENOMEM). */
static struct ibv_dm *vdm_new(struct ibv_context *context, struct urnic_dm *dm)
{
	struct urnic_vdm *v = calloc(1, sizeof(*v));

	if (!v) {
		errno = ENOMEM;
		return NULL;
	}
	v->dm = dm;
	v->ibdm.context = context;
	v->ibdm.memcpy_to_dm = copy_to_dm;
	v->ibdm.memcpy_from_dm = copy_from_dm;
	v->ibdm.comp_mask = IBV_DM_MASK_HANDLE;
	v->ibdm.handle = urnic_dev_dm_handle(dm);
	return &v->ibdm;
}

struct ibv_dm *urnic_alloc_dm(struct ibv_context *context, struct ibv_alloc_dm_attr *attr)
{
	struct urnic_dev *d = urnic_ctx_dev(context);
	struct urnic_dm *dm;
	struct ibv_dm *ibdm;
	int ret;

	if (attr->comp_mask) { /* no field beyond comp_mask is defined (mlx5_alloc_dm) */
		errno = EINVAL;
		return NULL;
	}
	ret = urnic_dev_dm_alloc(d, attr->length, attr->log_align_req, &dm);
	if (ret) {
		errno = -ret;
		return NULL;
	}
	ibdm = vdm_new(context, dm);
	if (!ibdm)
		urnic_dev_dm_free(d, dm);
	return ibdm;
}

int urnic_free_dm(struct ibv_dm *ibdm)
{
	struct urnic_vdm *v = to_vdm(ibdm);
	int ret = urnic_dev_dm_free(urnic_ctx_dev(ibdm->context), v->dm);

	if (ret)
		return -ret;
	free(v);
	return 0;
}

/* An import shares the allocation with every context of the device in the process: the
 * device, its memory and its handles are the process's, as a kernel object is the
 * uverbs file's that ibv_import_device(3) shares. */
URNIC_EXPORT struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	struct urnic_dev *d = urnic_ctx_dev(context);
	struct urnic_dm *dm;
	struct ibv_dm *ibdm;
	int ret = urnic_dev_dm_import(d, dm_handle, &dm);

	if (ret) {
		errno = -ret;
		return NULL;
	}
	ibdm = vdm_new(context, dm);
	if (!ibdm)
		urnic_dev_dm_unimport(d, dm);
	return ibdm;
}

URNIC_EXPORT void ibv_unimport_dm(struct ibv_dm *ibdm)
{
	struct urnic_vdm *v = to_vdm(ibdm);

	urnic_dev_dm_unimport(urnic_ctx_dev(ibdm->context), v->dm);
	free(v);
}

/* ibv_reg_dm_mr(3): the access a region on device memory may have. ZERO_BASED is
 * required ("For this type of registration, user must set the IBV_ACCESS_ZERO_BASED
 * flag"); windows cannot be bound to it and FLUSH is not offered, as mlx5's
 * MLX5_IB_DM_MEMIC_ALLOWED_ACCESS; the optional range is accepted and ignored, as by
 * ibv_reg_mr. Returns 0 or EINVAL. */
static int check_dm_access(unsigned int *access)
{
	const unsigned int allowed = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
				     IBV_ACCESS_ZERO_BASED;

	*access &= ~(unsigned int)IBV_ACCESS_OPTIONAL_RANGE;
	if ((*access & ~allowed) || !(*access & IBV_ACCESS_ZERO_BASED))
		return EINVAL;
	/* IBTA 10.6.3.1 (ib_check_mr_access): remote write or atomic needs local write. */
	if ((*access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(*access & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	return 0;
}

struct ibv_mr *urnic_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm, uint64_t dm_offset,
			       size_t length, unsigned int access)
{
	struct urnic_dev *d = urnic_ctx_dev(pd->context);
	struct urnic_vpd *vpd = to_vpd(pd);
	struct urnic_vdm *vdm = to_vdm(ibdm);
	struct urnic_vmr *v;
	uint32_t key_rand;
	int ret = check_dm_access(&access);

	if (!ret && urnic_ctx_dev(ibdm->context) != d)
		ret = EINVAL; /* memory of another device */
	if (ret) {
		errno = ret;
		return NULL;
	}
	v = urnic_key_calloc(sizeof(*v), &key_rand);
	if (!v)
		return NULL;
	ret = urnic_dev_dm_mr_register(d, &vpd->pd, vdm->dm, dm_offset, length, access, key_rand,
				       &v->mr);
	if (ret) {
		free(v);
		errno = -ret;
		return NULL;
	}
	vpd->users++;
	v->vpd = vpd;
	v->dm = vdm->dm;
	v->ibmr.context = pd->context;
	v->ibmr.pd = pd;
	v->ibmr.addr = NULL; /* zero-based: the device's addresses are not the application's */
	v->ibmr.length = length;
	v->ibmr.handle = urnic_dev_mr_key(v->mr);
	v->ibmr.lkey = urnic_dev_mr_key(v->mr);
	v->ibmr.rkey = urnic_dev_mr_key(v->mr);
	return &v->ibmr;
}
