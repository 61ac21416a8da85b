/* SPDX-License-Identifier: MIT */
/*
 * xrc.c - XRC (IBTA Annex A14) verbs: ibv_open_xrcd / ibv_close_xrcd, XRC SRQs
 * (ibv_create_srq_ex with IBV_SRQT_XRC, ibv_get_srq_num), XRC receive QPs
 * (ibv_create_qp_ex with IBV_QP_INIT_ATTR_XRCD, ibv_open_qp, their destruction).
 *
 * ibv_open_xrcd(3): a domain is found by the inode of fd, per device, as the kernel's
 * uverbs keeps them; O_CREAT makes one if there is none (else EAGAIN), O_EXCL refuses
 * one that exists (EINVAL); fd -1 makes a domain of its own. Each call returns a handle;
 * the domain lives while a handle is open, and the last handle is not closed (EBUSY)
 * while SRQs or receive QPs use it. A domain is this process's: another process
 * opening the same file gets its own, because a request's data goes to memory of the
 * process whose engine owns the receive QP, and an SRQ of another process is not
 * memory this one can write (docs/differences-from-rxe.md, "XRC"). A receive QP has no
 * PD, CQ or queue (the kernel's XRC target QPs neither); it lives while a handle to it
 * is open: ibv_open_qp gives one more, ibv_destroy_qp closes one. Its async events name
 * the handle that created it while that one is open, and no handle after.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "verbs/verbs.h"

_Static_assert((int)IBV_QPT_XRC_SEND == (int)URNIC_QPT_XRC_SEND &&
		       (int)IBV_QPT_XRC_RECV == (int)URNIC_QPT_XRC_RECV,
	       "XRC QP types");

struct urnic_vxrc_domain {
	struct urnic_xrcd xrcd; /* the engine's view: its address is the identity */
	struct urnic_dev *dev;
	bool has_inode;
	dev_t st_dev;
	ino_t st_ino;
	int handles;		    /* ibv_open_xrcd handles open */
	int users;		    /* XRC SRQs and receive QPs */
	struct urnic_vqp *recv_qps; /* its receive QPs, for ibv_open_qp */
	struct urnic_vxrc_domain *next;
};

/* What ibv_open_xrcd returns: a handle on a domain. */
struct urnic_vxrcd {
	struct ibv_xrcd ibxrcd;
	struct urnic_vxrc_domain *dom;
};

/* The process's domains, their handles, users and receive QPs. */
static pthread_mutex_t xrc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct urnic_vxrc_domain *domains;

static struct urnic_vxrcd *to_vxrcd(struct ibv_xrcd *x)
{
	return urnic_container_of(x, struct urnic_vxrcd, ibxrcd);
}

static struct urnic_vxrc_domain *find_domain(const struct urnic_dev *d, const struct stat *st)
{
	for (struct urnic_vxrc_domain *x = domains; x; x = x->next)
		if (x->dev == d && x->has_inode && x->st_dev == st->st_dev &&
		    x->st_ino == st->st_ino)
			return x;
	return NULL;
}

/* The domain for this open, found or made, with a handle taken. Returns NULL with
 * errno set. Context: xrc_lock. */
static struct urnic_vxrc_domain *take_domain(struct urnic_dev *d, int fd, int oflags)
{
	struct urnic_vxrc_domain *x = NULL;
	struct stat st;

	if (fd != -1) {
		if (fstat(fd, &st))
			return NULL; /* EBADF, as the kernel's fdget */
		x = find_domain(d, &st);
		if (!x && !(oflags & O_CREAT)) {
			errno = EAGAIN; /* ib_uverbs_open_xrcd: none yet, and no O_CREAT */
			return NULL;
		}
		if (x && (oflags & O_EXCL)) {
			errno = EINVAL;
			return NULL;
		}
	}
	if (!x) {
		x = calloc(1, sizeof(*x));
		if (!x) {
			errno = ENOMEM;
			return NULL;
		}
		x->xrcd.owner = x;
		x->dev = d;
		x->has_inode = fd != -1;
		if (x->has_inode) {
			x->st_dev = st.st_dev;
			x->st_ino = st.st_ino;
		}
		x->next = domains;
		domains = x;
	}
	x->handles++;
	return x;
}

/* The domain's last handle is gone and nothing uses it. Context: xrc_lock. */
static void drop_domain(struct urnic_vxrc_domain *x)
{
	struct urnic_vxrc_domain **p = &domains;

	while (*p != x)
		p = &(*p)->next;
	*p = x->next;
	free(x);
}

struct ibv_xrcd *urnic_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *attr)
{
	const uint32_t both = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	struct urnic_vxrcd *h;

	/* As ibv_cmd_open_xrcd: unknown bits are not supported, fd and oflags are required. */
	if (attr->comp_mask >= IBV_XRCD_INIT_ATTR_RESERVED) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((attr->comp_mask & both) != both) {
		errno = EINVAL;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&xrc_lock);
	h->dom = take_domain(urnic_ctx_dev(context), attr->fd, attr->oflags);
	pthread_mutex_unlock(&xrc_lock);
	if (!h->dom) {
		free(h);
		return NULL;
	}
	h->ibxrcd.context = context;
	return &h->ibxrcd;
}

int urnic_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct urnic_vxrcd *h = to_vxrcd(ibxrcd);
	struct urnic_vxrc_domain *x = h->dom;

	pthread_mutex_lock(&xrc_lock);
	if (x->handles == 1 && x->users) {
		pthread_mutex_unlock(&xrc_lock);
		return EBUSY; /* its SRQs and receive QPs go first */
	}
	if (--x->handles == 0)
		drop_domain(x);
	pthread_mutex_unlock(&xrc_lock);
	free(h);
	return 0;
}

/* The domain of an XRC handle the application passed with this context: NULL unless it
 * is one of the same device. */
static struct urnic_vxrc_domain *domain_of(struct ibv_context *context, struct ibv_xrcd *x)
{
	if (!x || urnic_ctx_dev(x->context) != urnic_ctx_dev(context))
		return NULL;
	return to_vxrcd(x)->dom;
}

/* ibv_create_srq_ex(3) with IBV_SRQT_XRC: its domain and CQ are required (the kernel's
 * ib_create_srq_user), and it gets its number. */
int urnic_xrc_srq_attach(struct urnic_vsrq *v, const struct ibv_srq_init_attr_ex *ex)
{
	const uint32_t need = IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	struct urnic_vxrc_domain *x = domain_of(v->ibsrq.context, ex->xrcd);
	struct urnic_vcq *vcq;
	int ret;

	if ((ex->comp_mask & need) != need || !x || !ex->cq ||
	    urnic_ctx_dev(ex->cq->context) != v->dev)
		return EINVAL;
	vcq = to_vcq(ex->cq);
	v->srq.xrcd = &x->xrcd;
	v->srq.cq = &vcq->cq;
	ret = urnic_dev_xrc_srq_add(v->dev, &v->srq);
	if (ret)
		return -ret;
	pthread_mutex_lock(&xrc_lock);
	x->users++;
	pthread_mutex_unlock(&xrc_lock);
	vcq->users++;
	v->xdom = x;
	v->xcq = vcq;
	return 0;
}

void urnic_xrc_srq_detach(struct urnic_vsrq *v)
{
	urnic_dev_xrc_srq_remove(v->dev, &v->srq);
	pthread_mutex_lock(&xrc_lock);
	v->xdom->users--;
	pthread_mutex_unlock(&xrc_lock);
	v->xcq->users--;
	v->xdom = NULL;
	v->xcq = NULL;
}

/* ibv_get_srq_num(3): the number senders name the SRQ by; a basic SRQ has none. */
int urnic_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct urnic_vsrq *v = to_vsrq(ibsrq);

	if (!v->xdom)
		return EINVAL;
	*srq_num = v->srq.srqn;
	return 0;
}

/* The public half of a handle on a receive QP. */
static void fill_handle(struct urnic_vqp *v, struct ibv_context *context, void *qp_context,
			const struct urnic_vqp *real)
{
	v->ibqp.context = context;
	v->ibqp.qp_context = qp_context;
	v->ibqp.handle = real->qp.qpn;
	v->ibqp.qp_num = real->qp.qpn;
	v->ibqp.state = real->ibqp.state;
	v->ibqp.qp_type = IBV_QPT_XRC_RECV;
	pthread_mutex_init(&v->ibqp.mutex, NULL);
	pthread_cond_init(&v->ibqp.cond, NULL);
}

/* ibv_create_qp_ex(3) of an IBV_QPT_XRC_RECV QP: an XRC domain, nothing else (PD, CQs,
 * SRQ and capabilities are ignored, as for the kernel's XRC target QPs; the granted
 * capabilities are all 0). */
struct ibv_qp *urnic_xrc_create_recv_qp(struct ibv_context *context, struct ibv_qp_init_attr_ex *ex)
{
	struct urnic_vxrc_domain *x = NULL;
	struct urnic_dev *d = urnic_ctx_dev(context);
	struct urnic_vqp *v;
	int ret;

	if (ex->comp_mask & IBV_QP_INIT_ATTR_XRCD)
		x = domain_of(context, ex->xrcd);
	if (!x) {
		errno = EINVAL;
		return NULL;
	}
	ret = urnic_dev_start_io(d); /* the first QP takes the address's UDP port */
	if (ret) {
		errno = -ret;
		return NULL;
	}
	v = urnic_vqp_new(d);
	if (!v)
		return NULL;
	v->qp.type = URNIC_QPT_XRC_RECV;
	v->qp.xrcd = &x->xrcd;
	v->qp.owner = &v->ibqp;
	v->dev = d;
	ret = urnic_dev_qp_create(d, &v->qp, NULL, 0, 0, 0, 0);
	if (ret) {
		free(v);
		urnic_dev_res_put(d, URNIC_RES_QP);
		errno = -ret;
		return NULL;
	}
	memset(&ex->cap, 0, sizeof(ex->cap));
	v->ibqp.state = IBV_QPS_RESET;
	fill_handle(v, context, ex->qp_context, v);
	v->xrc.dom = x;
	v->xrc.handles = 1;
	pthread_mutex_lock(&xrc_lock);
	x->users++;
	v->xrc.next = x->recv_qps;
	x->recv_qps = v;
	pthread_mutex_unlock(&xrc_lock);
	return &v->ibqp;
}

/* ibv_open_qp(3): another handle on a receive QP of the domain, by its number (the
 * kernel's ib_open_qp: IBV_QPT_XRC_RECV only, EINVAL for anything else). */
struct ibv_qp *urnic_open_qp(struct ibv_context *context, struct ibv_qp_open_attr *attr)
{
	const uint32_t need = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
	struct urnic_vxrc_domain *x;
	struct urnic_vqp *real = NULL, *v;

	if (attr->comp_mask >= IBV_QP_OPEN_ATTR_RESERVED) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	x = domain_of(context, attr->xrcd);
	if ((attr->comp_mask & need) != need || attr->qp_type != IBV_QPT_XRC_RECV || !x) {
		errno = EINVAL;
		return NULL;
	}
	v = calloc(1, sizeof(*v));
	if (!v) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&xrc_lock);
	for (real = x->recv_qps; real && real->qp.qpn != attr->qp_num; real = real->xrc.next)
		;
	if (real)
		real->xrc.handles++;
	pthread_mutex_unlock(&xrc_lock);
	if (!real) {
		free(v);
		errno = EINVAL;
		return NULL;
	}
	v->dev = real->dev;
	v->xrc.real = real;
	v->xrc.dom = x;
	fill_handle(v, context,
		    (attr->comp_mask & IBV_QP_OPEN_ATTR_CONTEXT) ? attr->qp_context : NULL, real);
	return &v->ibqp;
}

static void free_handle(struct urnic_vqp *v)
{
	pthread_cond_destroy(&v->ibqp.cond);
	pthread_mutex_destroy(&v->ibqp.mutex);
	free(v);
}

/* ibv_destroy_qp(3) of a receive QP handle: the QP goes with its last handle (the one
 * that created it may go first; its memory holds the QP until then). */
int urnic_xrc_destroy_recv_qp(struct urnic_vqp *v)
{
	struct urnic_vqp *real = urnic_vqp_real(v), **p;
	struct urnic_vxrc_domain *x = real->xrc.dom;
	bool last;

	pthread_mutex_lock(&xrc_lock);
	last = --real->xrc.handles == 0;
	if (last) {
		for (p = &x->recv_qps; *p != real; p = &(*p)->xrc.next)
			;
		*p = real->xrc.next;
	}
	pthread_mutex_unlock(&xrc_lock);
	if (v != real)
		free_handle(v);
	else if (!last)
		urnic_dev_qp_set_owner(real->dev, &real->qp, NULL); /* its handle is gone */
	if (!last)
		return 0;
	urnic_dev_qp_destroy(real->dev, &real->qp);
	urnic_dev_res_put(real->dev, URNIC_RES_QP);
	pthread_mutex_lock(&xrc_lock);
	x->users--;
	pthread_mutex_unlock(&xrc_lock);
	free_handle(real);
	return 0;
}
