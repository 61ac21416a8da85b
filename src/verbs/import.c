/* SPDX-License-Identifier: MIT */
/*
 * import.c - ibv_import_device(3), ibv_import_pd(3), ibv_import_mr(3) and unimport.
 * As a dup of a kernel uverbs fd, a dup of a context's cmd_fd (a memfd here) imported is
 * another context over the same objects (struct urnic_uctx, found by the fd's inode),
 * reaching its PDs and MRs by handle. An imported PD or MR names the original (to_vpd,
 * to_vmr), which lives until the last import of it is gone. Within one process only:
 * urnic's objects live in the process that made them, and the fd of another process's
 * context is refused with EOPNOTSUPP.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "verbs/verbs.h"

/* What a context's memfd holds, so that an fd can be told for one of another process. */
struct record {
	char magic[16];
	uint32_t pid;
	int32_t device; /* ibv_get_device_index */
};

static const char record_magic[16] = "urnic context";

struct urnic_uctx {
	struct urnic_uctx *next; /* the process's list */
	dev_t st_dev;		 /* the memfd's inode: the uctx's name */
	ino_t st_ino;
	struct ibv_device *device;
	int refs;			   /* contexts and offered objects */
	struct urnic_import_link pds, mrs; /* list heads */
};

/* The list of uctxs, their refs and lists, every offered object's link. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct urnic_uctx *uctxs;
static uint32_t next_handle = 1;

static void list_init(struct urnic_import_link *head)
{
	head->prev = head->next = head;
}

/* Context: the lock. */
static void uctx_put(struct urnic_uctx *u)
{
	if (--u->refs)
		return;
	for (struct urnic_uctx **pp = &uctxs; *pp; pp = &(*pp)->next) {
		if (*pp == u) {
			*pp = u->next;
			break;
		}
	}
	free(u);
}

/* A new uctx named by the inode of fd. Context: the lock. */
static struct urnic_uctx *uctx_new(int fd, struct ibv_device *device)
{
	struct urnic_uctx *u;
	struct stat st;

	if (fstat(fd, &st) < 0)
		return NULL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->st_dev = st.st_dev;
	u->st_ino = st.st_ino;
	u->device = device;
	u->refs = 1;
	list_init(&u->pds);
	list_init(&u->mrs);
	u->next = uctxs;
	uctxs = u;
	return u;
}

int urnic_import_open(struct urnic_vcontext *c)
{
	struct ibv_context *ctx = &c->vctx.context;
	struct record r = { .pid = (uint32_t)getpid() };
	int fd = memfd_create("urnic-context", MFD_CLOEXEC);
	int ret;

	if (fd < 0)
		return errno;
	memcpy(r.magic, record_magic, sizeof(r.magic));
	r.device = ibv_get_device_index(ctx->device);
	if (pwrite(fd, &r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		ret = errno ? errno : EIO;
		close(fd);
		return ret;
	}
	pthread_mutex_lock(&lock);
	c->uctx = uctx_new(fd, ctx->device);
	pthread_mutex_unlock(&lock);
	if (!c->uctx) {
		close(fd);
		return ENOMEM;
	}
	ctx->cmd_fd = fd;
	return 0;
}

void urnic_import_close(struct urnic_vcontext *c)
{
	if (!c->uctx)
		return;
	close(c->vctx.context.cmd_fd);
	pthread_mutex_lock(&lock);
	uctx_put(c->uctx);
	pthread_mutex_unlock(&lock);
	c->uctx = NULL;
}

static struct urnic_uctx *uctx_of(struct ibv_context *ctx)
{
	return urnic_container_of(ctx, struct urnic_vcontext, vctx.context)->uctx;
}

/* Context: the lock. */
static void link_add(struct urnic_uctx *u, struct urnic_import_link *head,
		     struct urnic_import_link *l)
{
	l->uctx = u;
	l->handle = next_handle++;
	if (!l->handle) /* 0 after a wrap: handles are never 0 */
		l->handle = next_handle++;
	l->next = head->next;
	l->prev = head;
	head->next->prev = l;
	head->next = l;
	u->refs++;
}

/* Context: the lock. */
static void link_del(struct urnic_import_link *l)
{
	if (!l->uctx)
		return;
	l->prev->next = l->next;
	l->next->prev = l->prev;
	uctx_put(l->uctx);
	l->uctx = NULL;
}

/* Context: the lock. */
static struct urnic_import_link *link_find(struct urnic_import_link *head, uint32_t handle)
{
	for (struct urnic_import_link *l = head->next; l != head; l = l->next)
		if (l->handle == handle)
			return l;
	return NULL;
}

void urnic_import_offer_pd(struct urnic_vpd *v)
{
	struct urnic_uctx *u = uctx_of(v->ibpd.context);

	pthread_mutex_lock(&lock);
	if (u)
		link_add(u, &u->pds, &v->link);
	pthread_mutex_unlock(&lock);
	v->ibpd.handle = v->link.handle;
}

void urnic_import_offer_mr(struct urnic_vmr *v)
{
	struct urnic_uctx *u = uctx_of(v->ibmr.context);

	pthread_mutex_lock(&lock);
	if (u)
		link_add(u, &u->mrs, &v->link);
	pthread_mutex_unlock(&lock);
	v->ibmr.handle = v->link.handle;
}

/*
 * An original PD or MR ends with its deallocation (the kernel destroys the object, its
 * handle imports nothing more); an imported one with ibv_unimport_* or a deallocation
 * through it, which ends the original too. The memory of the original goes with the
 * last of them: imports left behind still name it.
 */
/*
 * What a PD and an MR share on their way out: under the lock, an import (w, of original
 * v) lets go of its original, an original (w == v) is marked dead; withdraw also ends the
 * original's offer. Then the import's memory goes, and the original's if it was the last.
 */
static void let_go(void *w, void *v, struct urnic_import_link *link, int *imports, bool *dead,
		   bool withdraw)
{
	bool last;

	pthread_mutex_lock(&lock);
	if (withdraw)
		link_del(link);
	if (w != v)
		(*imports)--;
	else
		*dead = true;
	last = *dead && !*imports;
	pthread_mutex_unlock(&lock);
	if (w != v)
		free(w);
	if (last)
		free(v);
}

void urnic_import_release_pd(struct ibv_pd *pd)
{
	struct urnic_vpd *v = to_vpd(pd);

	let_go(urnic_container_of(pd, struct urnic_vpd, ibpd), v, &v->link, &v->imports, &v->dead,
	       true);
}

void urnic_import_release_mr(struct ibv_mr *mr)
{
	struct urnic_vmr *v = to_vmr(mr);

	let_go(urnic_container_of(mr, struct urnic_vmr, ibmr), v, &v->link, &v->imports, &v->dead,
	       true);
}

/* The uctx an fd names, a reference taken, and its device; or an errno: EINVAL for an
 * fd that is no context's (rdma-core: not a uverbs device), EOPNOTSUPP for a context
 * of another process. A context of this process all of whose contexts and objects are
 * gone is made anew, empty, as the kernel keeps a uverbs file while a dup is open. */
static int uctx_of_fd(int fd, struct urnic_uctx **out)
{
	struct record r;
	struct stat st;
	struct ibv_device **list;
	int n, ret = 0;

	if (fstat(fd, &st) < 0)
		return EINVAL;
	pthread_mutex_lock(&lock);
	for (*out = uctxs; *out; *out = (*out)->next)
		if ((*out)->st_dev == st.st_dev && (*out)->st_ino == st.st_ino)
			break;
	if (*out)
		(*out)->refs++;
	pthread_mutex_unlock(&lock);
	if (*out)
		return 0;
	if (pread(fd, &r, sizeof(r), 0) != (ssize_t)sizeof(r) ||
	    memcmp(r.magic, record_magic, sizeof(r.magic)) != 0)
		return EINVAL;
	if (r.pid != (uint32_t)getpid())
		return EOPNOTSUPP;
	list = ibv_get_device_list(&n);
	if (!list)
		return errno;
	if (r.device < 0 || r.device >= n)
		ret = ENODEV;
	if (!ret) {
		pthread_mutex_lock(&lock);
		*out = uctx_new(fd, list[r.device]);
		pthread_mutex_unlock(&lock);
		ret = *out ? 0 : ENOMEM;
	}
	ibv_free_device_list(list);
	return ret;
}

URNIC_EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	struct urnic_uctx *u;
	struct urnic_vcontext *c;
	struct ibv_context *ctx;
	int ret = uctx_of_fd(cmd_fd, &u);

	if (ret) {
		errno = ret;
		return NULL;
	}
	/* A context as ibv_open_device makes one, then the imported fd and uctx for the
	 * ones it came with. */
	ctx = ibv_open_device(u->device);
	if (!ctx) {
		ret = errno;
		pthread_mutex_lock(&lock);
		uctx_put(u);
		pthread_mutex_unlock(&lock);
		errno = ret;
		return NULL;
	}
	c = urnic_container_of(ctx, struct urnic_vcontext, vctx.context);
	urnic_import_close(c);
	c->uctx = u;
	ctx->cmd_fd = cmd_fd; /* the context owns it: ibv_close_device closes it */
	return ctx;
}

/* ibv_import_pd(3): ENOENT for a handle no PD of the context has (the kernel's lookup
 * of an unknown object). */
URNIC_EXPORT struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	struct urnic_uctx *u = uctx_of(context);
	struct urnic_vpd *w = calloc(1, sizeof(*w));
	struct urnic_import_link *l = NULL;

	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&lock);
	if (u)
		l = link_find(&u->pds, pd_handle);
	if (l) {
		w->shared = urnic_container_of(l, struct urnic_vpd, link);
		w->shared->imports++;
	}
	pthread_mutex_unlock(&lock);
	if (!l) {
		free(w);
		errno = ENOENT;
		return NULL;
	}
	w->ibpd.context = context;
	w->ibpd.handle = pd_handle;
	return &w->ibpd;
}

/* Only an imported PD is let go of; ibv_unimport_pd of an original does nothing. */
URNIC_EXPORT void ibv_unimport_pd(struct ibv_pd *pd)
{
	struct urnic_vpd *w = urnic_container_of(pd, struct urnic_vpd, ibpd);

	/* The import alone goes; the original stays as it is. */
	if (w->shared)
		let_go(w, w->shared, &w->shared->link, &w->shared->imports, &w->shared->dead,
		       false);
}

/* ibv_import_mr(3): as rdma-core's ibv_cmd_query_mr fills it, keys, length and handle,
 * the address unknown (NULL); ENOENT for a handle no MR of the context has. */
URNIC_EXPORT struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	struct urnic_uctx *u = uctx_of(pd->context);
	struct urnic_vmr *w = calloc(1, sizeof(*w));
	struct urnic_import_link *l = NULL;

	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&lock);
	if (u)
		l = link_find(&u->mrs, mr_handle);
	if (l) {
		w->shared = urnic_container_of(l, struct urnic_vmr, link);
		w->shared->imports++;
		w->ibmr.lkey = w->shared->ibmr.lkey;
		w->ibmr.rkey = w->shared->ibmr.rkey;
		w->ibmr.length = w->shared->ibmr.length;
	}
	pthread_mutex_unlock(&lock);
	if (!l) {
		free(w);
		errno = ENOENT;
		return NULL;
	}
	w->ibmr.context = pd->context;
	w->ibmr.pd = pd;
	w->ibmr.handle = mr_handle;
	return &w->ibmr;
}

URNIC_EXPORT void ibv_unimport_mr(struct ibv_mr *mr)
{
	struct urnic_vmr *w = urnic_container_of(mr, struct urnic_vmr, ibmr);

	if (w->shared)
		let_go(w, w->shared, &w->shared->link, &w->shared->imports, &w->shared->dead,
		       false);
}
