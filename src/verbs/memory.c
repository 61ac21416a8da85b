/* SPDX-License-Identifier: MIT */
/*
 * memory.c - protection domains, memory registration and memory window verbs.
 *
 * ibv_alloc_pd(3), ibv_reg_mr(3): remote write or remote atomic access requires local
 * write (IBTA 10.6.3.1, and the man page: EINVAL otherwise); unknown
 * access bits are refused, the "optional" range (IBV_ACCESS_OPTIONAL_RANGE, e.g.
 * relaxed ordering from perftest) is accepted and ignored. Keys are made of 32 bits
 * from getrandom(2) (mem/mr.h).
 * IBV_ACCESS_FLUSH_GLOBAL (rdma-core 45+) is accepted; FLUSH_PERSISTENT is refused with
 * EOPNOTSUPP, as the kernel does on a device without persistent placement (urnic cannot
 * tell persistent memory from any other). A region with windows bound cannot be
 * deregistered (EINVAL, as rxe_dereg_mr). ibv_rereg_mr(3) changes a region in place.
 * Memory the kernel could not pin for an RNIC is refused as the kernel refuses it
 * (mapping.h: unmapped, PROT_NONE or read-only under a right that writes: EFAULT; an
 * end that wraps, no pages: EINVAL), as the engine would fault on it. An on-demand
 * region (IBV_ACCESS_ON_DEMAND, implicit too) is not pinned and not checked (odp.h).
 * ibv_alloc_mw(3), ibv_bind_mw(3), ibv_dealloc_mw(3): windows of type 1 and 2 (mem/mw.h);
 * ibv_bind_mw posts a BIND_MW work request with the window's next R_Key, as rdma-core's
 * rxe provider does, and hands the new key to the window once it is posted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "verbs/mapping.h"
#include "verbs/odp.h"
#include "verbs/verbs.h"

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

_Static_assert((int)IBV_ACCESS_LOCAL_WRITE == (int)URNIC_ACCESS_LOCAL_WRITE, "access flags");
_Static_assert((int)IBV_ACCESS_REMOTE_WRITE == (int)URNIC_ACCESS_REMOTE_WRITE, "access flags");
_Static_assert((int)IBV_ACCESS_REMOTE_READ == (int)URNIC_ACCESS_REMOTE_READ, "access flags");
_Static_assert((int)IBV_ACCESS_REMOTE_ATOMIC == (int)URNIC_ACCESS_REMOTE_ATOMIC, "access flags");
_Static_assert((int)IBV_ACCESS_MW_BIND == (int)URNIC_ACCESS_MW_BIND, "access flags");
_Static_assert((int)IBV_ACCESS_ZERO_BASED == (int)URNIC_ACCESS_ZERO_BASED, "access flags");
_Static_assert(URNIC_IBV_ACCESS_FLUSH_GLOBAL == (int)URNIC_ACCESS_FLUSH_GLOBAL, "access flags");
_Static_assert(URNIC_IBV_ACCESS_FLUSH_PERSISTENT == (int)URNIC_ACCESS_FLUSH_PERSISTENT,
	       "access flags");
_Static_assert((int)IBV_MW_TYPE_1 == (int)URNIC_KEY_MW1 && (int)IBV_MW_TYPE_2 == (int)URNIC_KEY_MW2,
	       "window types");

URNIC_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct urnic_vpd *v = calloc(1, sizeof(*v));

	if (!v) {
		errno = ENOMEM;
		return NULL;
	}
	v->ibpd.context = context;
	urnic_import_offer_pd(v); /* its handle, by which ibv_import_pd finds it */
	v->pd.handle = v->ibpd.handle;
	return &v->ibpd;
}

URNIC_EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct urnic_vpd *v = to_vpd(pd);

	if (urnic_pd_is_parent(pd))
		return urnic_dealloc_parent_domain(pd); /* pd_ext.c */
	if (v->users)
		return EBUSY;
	urnic_import_release_pd(pd);
	return 0;
}

/* The 32 random bits a new key is made of (mem/mr.h), from the kernel's CSPRNG: a
 * peer that has seen any number of keys must not predict the next one, as it could
 * from a PRNG's output. Returns 0 or an errno. */
static int key_random(uint32_t *out)
{
	ssize_t n = getrandom(out, sizeof(*out), 0);

	if (n == (ssize_t)sizeof(*out))
		return 0;
	return n < 0 ? errno : EAGAIN;
}

void *urnic_key_calloc(size_t size, uint32_t *key_rand)
{
	int ret = key_random(key_rand);
	void *v;

	if (ret) {
		errno = ret;
		return NULL;
	}
	v = calloc(1, size);
	if (!v)
		errno = ENOMEM;
	return v;
}

/* Access flags for a region (ib_check_mr_access): 0 or an errno. The optional range
 * (IBV_ACCESS_OPTIONAL_RANGE) is dropped from *access. */
static int check_access(unsigned int *access)
{
	const unsigned int known =
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED |
		IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB | URNIC_IBV_ACCESS_FLUSH_GLOBAL;

	*access &= ~(unsigned int)IBV_ACCESS_OPTIONAL_RANGE;
	if (*access & URNIC_IBV_ACCESS_FLUSH_PERSISTENT)
		return EOPNOTSUPP; /* no IBV_DEVICE_FLUSH_PERSISTENT (ib_check_mr_access) */
	if ((*access & ~known) ||
	    ((*access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	     !(*access & IBV_ACCESS_LOCAL_WRITE)))
		return EINVAL;
	return 0;
}

/* The rights that make the kernel pin for writing (ib_access_writable): a window bound
 * to the region may grant writes too. */
static bool access_writes(unsigned int access)
{
	return access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND);
}

/* What the kernel checks of the memory: pinned pages for a region, the range alone for
 * an on-demand one (verbs/odp.h). 0 or an errno. */
static int map_check(const void *addr, size_t length, uint64_t iova, unsigned int access)
{
	if (access & IBV_ACCESS_ON_DEMAND)
		return urnic_odp_reg_check(addr, length, iova);
	return -urnic_mapping_check((uintptr_t)addr, length, access_writes(access));
}

URNIC_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
					     uint64_t iova, unsigned int access)
{
	struct urnic_dev *d = urnic_ctx_dev(pd->context);
	struct urnic_vpd *vpd = to_vpd(pd);
	struct urnic_vmr *v;
	uint32_t key_rand;
	int ret = check_access(&access);

	if (!ret)
		ret = map_check(addr, length, iova, access);
	if (ret) {
		errno = ret;
		return NULL;
	}
	v = urnic_key_calloc(sizeof(*v), &key_rand);
	if (!v)
		return NULL;
	ret = urnic_dev_mr_register(d, &vpd->pd, addr, iova, length, access, key_rand, &v->mr);
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
	urnic_import_offer_mr(v); /* its handle, by which ibv_import_mr finds it */
	v->ibmr.lkey = urnic_dev_mr_key(v->mr);
	v->ibmr.rkey = urnic_dev_mr_key(v->mr);
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

/*
 * ibv_rereg_mr(3): what libibverbs refuses before asking the device (unknown flags, a
 * translation without address or length, access without IBV_REREG_MR_CHANGE_ACCESS) is
 * IBV_REREG_MR_ERR_INPUT; what the device refuses (no flag, access as for ibv_reg_mr, a
 * PD of another device, windows bound: EBUSY) is IBV_REREG_MR_ERR_CMD, errno set. The
 * region keeps its keys, as rxe_rereg_user_mr (which offers only PD and access); urnic
 * also moves the translation, the IOVA becoming the new address as with ibv_reg_mr. A
 * new translation or new rights are checked against the mapping as ibv_reg_mr checks
 * them (a driver that moves the translation pins the new range): rights that write
 * cannot be added to read-only memory.
 */
URNIC_EXPORT int ibv_rereg_mr(struct ibv_mr *ibmr, int flags, struct ibv_pd *pd, void *addr,
			      size_t length, int access)
{
	struct urnic_vmr *v = to_vmr(ibmr);
	struct urnic_dev *d = urnic_ctx_dev(ibmr->context);
	struct urnic_vpd *new_vpd = v->vpd;
	unsigned int acc = (unsigned int)access;
	int ret = 0;

	if ((flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) ||
	    ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (!addr || !length)) ||
	    (access && !(flags & IBV_REREG_MR_CHANGE_ACCESS))) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (!flags || v->dm)
		ret = EINVAL; /* a region on device memory stays as it is (ib_uverbs_rereg_mr) */
	if (!ret && (flags & IBV_REREG_MR_CHANGE_ACCESS))
		ret = check_access(&acc);
	if (!ret && (flags & IBV_REREG_MR_CHANGE_PD)) {
		if (!pd || pd->context != ibmr->context)
			ret = EINVAL;
		else
			new_vpd = to_vpd(pd);
	}
	if (!ret && (flags & (IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS))) {
		void *to = ibmr->addr;
		size_t to_len = ibmr->length;
		unsigned int to_acc = urnic_dev_mr_access(v->mr);

		if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
			to = addr;
			to_len = length;
		}
		if (flags & IBV_REREG_MR_CHANGE_ACCESS)
			to_acc = acc;
		ret = map_check(to, to_len, (uintptr_t)to, to_acc);
	}
	if (!ret)
		ret = -urnic_dev_mr_reregister(d, v->mr, (uint32_t)flags, &new_vpd->pd, addr,
					       length, acc);
	if (ret) {
		errno = ret;
		return IBV_REREG_MR_ERR_CMD;
	}
	if (new_vpd != v->vpd) {
		v->vpd->users--;
		new_vpd->users++;
		v->vpd = new_vpd;
		ibmr->pd = pd;
	}
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		ibmr->addr = addr;
		ibmr->length = length;
	}
	return 0;
}

_Static_assert((int)IBV_REREG_MR_CHANGE_TRANSLATION == (int)URNIC_MR_REREG_TRANSLATION &&
		       (int)IBV_REREG_MR_CHANGE_PD == (int)URNIC_MR_REREG_PD &&
		       (int)IBV_REREG_MR_CHANGE_ACCESS == (int)URNIC_MR_REREG_ACCESS,
	       "rereg flags");

URNIC_EXPORT int ibv_dereg_mr(struct ibv_mr *ibmr)
{
	struct urnic_vmr *v = to_vmr(ibmr);
	struct urnic_dev *d = urnic_ctx_dev(ibmr->context);
	int ret;

	/* Once this returns the engine will never touch the memory again (a READ in
	 * progress fails with a remote access error). */
	ret = v->dm ? urnic_dev_dm_mr_deregister(d, v->dm, v->mr)
		    : urnic_dev_mr_deregister(d, v->mr);
	if (ret)
		return EINVAL; /* windows are bound to it (rxe_dereg_mr) */
	v->vpd->users--;
	urnic_import_release_mr(ibmr);
	return 0;
}

/* ---- memory windows ---- */

struct ibv_mw *urnic_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct urnic_dev *d = urnic_ctx_dev(pd->context);
	struct urnic_vpd *vpd = to_vpd(pd);
	struct urnic_vmw *v;
	uint32_t key_rand;
	int ret;

	/* ibv_alloc_mw(3): type 1 or 2 (urnic's type 2 windows are type 2B). */
	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	v = urnic_key_calloc(sizeof(*v), &key_rand);
	if (!v)
		return NULL;
	ret = urnic_dev_mw_alloc(d, &vpd->pd, (enum urnic_key_kind)type, key_rand, &v->mw);
	if (ret) {
		free(v);
		errno = -ret;
		return NULL;
	}
	vpd->users++;
	v->vpd = vpd;
	v->dev = d;
	v->ibmw.context = pd->context;
	v->ibmw.pd = pd;
	v->ibmw.rkey = urnic_dev_mr_key(v->mw);
	v->ibmw.handle = urnic_dev_mr_key(v->mw);
	v->ibmw.type = type;
	return &v->ibmw;
}

int urnic_dealloc_mw(struct ibv_mw *ibmw)
{
	struct urnic_vmw *v = urnic_container_of(ibmw, struct urnic_vmw, ibmw);

	/* A bound window goes too, its binding released (rxe_dealloc_mw); from then on
	 * its R_Key validates nothing. */
	urnic_dev_mw_dealloc(v->dev, v->mw);
	v->vpd->users--;
	free(v);
	return 0;
}

/* The next R_Key of a window: its consumer key (low 8 bits) plus one, as rdma-core's
 * ibv_inc_rkey() and the rxe provider's next_rkey(). */
static uint32_t next_rkey(uint32_t rkey)
{
	return (rkey & 0xffffff00u) | ((rkey + 1) & 0xffu);
}

int urnic_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	const struct ibv_mw_bind_info *info = &mw_bind->bind_info;
	struct ibv_send_wr wr, *bad;
	int ret;

	/* ibv_bind_mw(3), checked again for callers of the context op itself (the inline
	 * wrapper checks the same): type 1, a range only with a region, of the window's
	 * PD (EPERM); o10-36.2.2: not zero-based (rxe provider). */
	if (mw->type != IBV_MW_TYPE_1 || (!info->mr && (info->addr || info->length)) ||
	    (info->mw_access_flags & IBV_ACCESS_ZERO_BASED))
		return EINVAL;
	if (info->mr && to_vpd(info->mr->pd) != to_vpd(mw->pd))
		return EPERM;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = mw_bind->wr_id;
	wr.send_flags = mw_bind->send_flags;
	wr.opcode = IBV_WR_BIND_MW;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = next_rkey(mw->rkey);
	wr.bind_mw.bind_info = *info;
	ret = urnic_post_send(qp, &wr, &bad);
	if (ret)
		return ret;
	/* The key the window has once the bind executes; if it completes in error the
	 * application owns restoring it (as with rxe). */
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}
