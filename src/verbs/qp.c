/* SPDX-License-Identifier: MIT */
/*
 * qp.c - queue pair verbs: create, modify, query, destroy.
 *
 * ibv_create_qp(3) and ibv_modify_qp(3): capabilities beyond the device's are refused
 * with EINVAL and the granted ones written back into cap; transitions and attributes
 * are checked against IBTA 10.3.1 table 91 (by the device, dev/verbs_qp.h); on RoCE the
 * address vector must carry a GRH (is_global), whose GID names the peer's IP address
 * (RoCEv2, IBTA Annex A17.4). The device chooses each QP's UDP source port as the
 * kernel does and gives a UD QP the port MTU (dev/verbs_qp.c). A QP created with an SRQ
 * takes its receives from it (its own receive queue is empty); RC, UC and UD QPs may
 * use one, as in rxe. An XRC send QP has no receive side (its receive CQ, SRQ and
 * capabilities are ignored, as the kernel does); XRC receive QPs are xrc.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev/raw_port.h"
#include "verbs/verbs.h"

_Static_assert((int)IBV_QPS_RESET == (int)URNIC_QPS_RESET && (int)IBV_QPS_ERR == (int)URNIC_QPS_ERR,
	       "QP state values");
_Static_assert((int)IBV_QPT_RC == (int)URNIC_QPT_RC && (int)IBV_QPT_UC == (int)URNIC_QPT_UC &&
		       (int)IBV_QPT_UD == (int)URNIC_QPT_UD &&
		       (int)IBV_QPT_RAW_PACKET == (int)URNIC_QPT_RAW_PACKET,
	       "QP types");
_Static_assert((int)IBV_QP_STATE == (int)URNIC_QP_STATE &&
		       (int)IBV_QP_CUR_STATE == (int)URNIC_QP_CUR_STATE &&
		       (int)IBV_QP_AV == (int)URNIC_QP_AV &&
		       (int)IBV_QP_DEST_QPN == (int)URNIC_QP_DEST_QPN &&
		       (int)IBV_QP_RATE_LIMIT == (int)URNIC_QP_RATE_LIMIT,
	       "attribute mask bits");

/* enum ibv_mtu (IBV_MTU_256 = 1 .. IBV_MTU_4096 = 5) in bytes, as the kernel's
 * ib_mtu_enum_to_int; 0 for any other value. */
static uint32_t mtu_bytes(int mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128u << mtu : 0;
}

/* The receive side a QP gets: none for an XRC send QP (the kernel's ib_create_qp drops
 * its receive CQ and SRQ), or an SRQ's, whose QPs' receive capabilities are ignored
 * (ibv_create_qp(3)), or its own. */
static void receive_side(struct ibv_qp_init_attr *init)
{
	if (init->qp_type == IBV_QPT_XRC_SEND) {
		init->recv_cq = NULL;
		init->srq = NULL;
	}
	if (init->srq || init->qp_type == IBV_QPT_XRC_SEND) {
		init->cap.max_recv_wr = 0;
		init->cap.max_recv_sge = 0;
	}
}

/* A QP on a tag-matching SRQ: RC only (tm_caps.flags IBV_TM_CAP_RC), else EINVAL; it
 * gets send slots for the engine's rendezvous READs and FINs (engine/roce/tm.c). */
static int tm_check(const struct ibv_qp_init_attr *init, uint32_t *reserve)
{
	*reserve = 0;
	if (!init->srq || !to_vsrq(init->srq)->srq.tm)
		return 0;
	if (init->qp_type != IBV_QPT_RC) {
		errno = EINVAL;
		return -1;
	}
	*reserve = URNIC_TM_SQ_RESERVE;
	return 0;
}

/* The device's max_qp (dev/limits.def): ENOMEM, "not enough resources". */
struct urnic_vqp *urnic_vqp_new(struct urnic_dev *d)
{
	int ret = urnic_dev_res_get(d, URNIC_RES_QP);
	struct urnic_vqp *v;

	if (ret) {
		errno = -ret;
		return NULL;
	}
	v = calloc(1, sizeof(*v));
	if (!v) {
		urnic_dev_res_put(d, URNIC_RES_QP);
		errno = ENOMEM;
	}
	return v;
}

/* The device could not start (urnic_dev_start_io's -errno ret): says where and why. */
static void say_no_start(const struct urnic_dev *d, int ret)
{
	fprintf(stderr, "urnic: %s cannot start on %s%s: %s%s\n", d->name, d->addr_str,
		urnic_iw_dev(d)	   ? ""
		: urnic_uet_dev(d) ? " UDP port 4793"
				   : " UDP port 4791",
		strerror(-ret),
		ret != -EADDRINUSE ? ""
		: urnic_uet_dev(d) ? " (held by another process: a UET address is one process's)"
				   : " (held by a program that is not urnic, by another user, or "
				     "by 16 urnic processes already)");
}

static struct ibv_qp *create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *init, bool qp_ex)
{
	struct urnic_dev *d = urnic_ctx_dev(pd->context);
	struct ibv_qp_cap *cap = &init->cap;
	uint32_t tm_reserve;
	struct urnic_vqp *v;
	int ret;

	if (init->qp_type != IBV_QPT_RC && init->qp_type != IBV_QPT_UC &&
	    init->qp_type != IBV_QPT_UD && init->qp_type != IBV_QPT_XRC_SEND &&
	    init->qp_type != IBV_QPT_RAW_PACKET) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* siw_create_qp: "only RC QP's supported"; UET carries RC only too (uet.c), and
	 * says so before the device takes its port. */
	if ((urnic_iw_dev(d) || urnic_uet_dev(d)) && init->qp_type != IBV_QPT_RC) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	receive_side(init);
	if (tm_check(init, &tm_reserve))
		return NULL;
	if (!init->send_cq || (init->srq && init->srq->context != pd->context) ||
	    (!init->recv_cq && init->qp_type != IBV_QPT_XRC_SEND) ||
	    cap->max_send_wr > d->lim.max_qp_wr || cap->max_recv_wr > d->lim.max_qp_wr ||
	    cap->max_send_sge > URNIC_MAX_SGE || cap->max_recv_sge > URNIC_MAX_SGE ||
	    cap->max_inline_data > URNIC_MAX_INLINE) {
		errno = EINVAL;
		return NULL;
	}
	/* The device takes its UDP port 4791 (UET: 4793; iWARP: no port, its CM's
	 * connections carry it), and opens its capture, with its first QP. */
	ret = urnic_dev_start_io(d);
	if (ret) {
		say_no_start(d, ret);
		errno = -ret;
		return NULL;
	}
	v = urnic_vqp_new(d);
	if (!v)
		return NULL;
	/* What we grant: the depths asked for, every SGE slot, the full inline area. */
	cap->max_inline_data = URNIC_MAX_INLINE;
	v->cap = *cap;
	v->qp.type = (enum urnic_qp_type)init->qp_type;
	v->qp.sq_sig_all = init->sq_sig_all;
	v->qp.pd = &to_vpd(pd)->pd;
	v->send_vcq = to_vcq(init->send_cq);
	v->recv_vcq = init->recv_cq ? to_vcq(init->recv_cq) : NULL;
	v->qp.send_cq = &v->send_vcq->cq;
	v->qp.recv_cq = v->recv_vcq ? &v->recv_vcq->cq : NULL;
	v->qp.owner = &v->ibqp;
	v->vpd = to_vpd(pd);
	if (init->srq) {
		v->vsrq = to_vsrq(init->srq);
		v->qp.srq = &v->vsrq->srq;
	}
	v->dev = d;
	v->iwarp = urnic_iw_dev(d);
	v->parent = urnic_pd_is_parent(pd) ? pd : NULL;
	/* Rings from a parent domain's allocator (pd_ext.c) or calloc. */
	ret = urnic_dev_qp_create(d, &v->qp, urnic_parent_hold(pd), cap->max_send_wr + tm_reserve,
				  cap->max_send_sge, cap->max_recv_wr, cap->max_recv_sge);
	if (ret) {
		urnic_parent_release(pd);
		goto free_qp;
	}
	v->qp.sq.max_wr = cap->max_send_wr; /* the tag-matching reserve is the engine's */
	v->send_vcq->users++;
	if (v->recv_vcq)
		v->recv_vcq->users++;
	v->vpd->users++;
	if (v->vsrq)
		v->vsrq->users++;

	v->ibqp.context = pd->context;
	v->ibqp.qp_context = init->qp_context;
	v->ibqp.pd = pd;
	v->ibqp.send_cq = init->send_cq;
	v->ibqp.recv_cq = init->recv_cq;
	v->ibqp.srq = init->srq;
	v->ibqp.handle = v->qp.qpn;
	v->ibqp.qp_num = v->qp.qpn;
	v->ibqp.state = IBV_QPS_RESET;
	v->ibqp.qp_type = init->qp_type;
	pthread_mutex_init(&v->ibqp.mutex, NULL);
	pthread_cond_init(&v->ibqp.cond, NULL);
	if (qp_ex)
		urnic_wr_ops_init(v);
	return &v->ibqp;

free_qp:
	free(v);
	urnic_dev_res_put(d, URNIC_RES_QP);
	errno = -ret;
	return NULL;
}

URNIC_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *init)
{
	return create_qp(pd, init, false);
}

/* The ibv_wr_* operations of each transport: the opcodes ibv_post_send takes on it
 * (post.c, as rxe's RXE_SUP_*_QP_SEND_OPS_FLAGS). */
enum {
	UD_SEND_OPS = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM,
	UC_SEND_OPS = UD_SEND_OPS | IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
		      IBV_QP_EX_WITH_BIND_MW,
	RC_SEND_OPS = UC_SEND_OPS | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
		      IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV |
		      IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_ATOMIC_WRITE |
		      URNIC_IBV_QP_EX_WITH_FLUSH,
	/* XRC send QPs (docs/differences-from-rxe.md, "XRC"): no window, invalidation,
	 * ATOMIC_WRITE or FLUSH. */
	XRC_SEND_OPS = UD_SEND_OPS | IBV_QP_EX_WITH_RDMA_WRITE |
		       IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
		       IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
};

static uint64_t send_ops_of(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC		 ? RC_SEND_OPS
	       : t == IBV_QPT_UC	 ? UC_SEND_OPS
	       : t == IBV_QPT_XRC_SEND	 ? XRC_SEND_OPS
	       : t == IBV_QPT_RAW_PACKET ? IBV_QP_EX_WITH_SEND
					 : UD_SEND_OPS;
}

/*
 * verbs_context.create_qp_ex: the inline ibv_create_qp_ex comes here for anything
 * beyond a plain PD (ibv_create_qp_ex(3)). Taken as rxe takes them: a PD, create flags
 * when there are none (rdma-core's tests set the mask with 0 flags), and the ibv_wr_*
 * operations the QP's transport has; the rest (flags such as BLOCK_SELF_MCAST_LB, TSO,
 * RSS tables, operations the transport lacks) is EOPNOTSUPP.
 */
_Static_assert((int)IBV_RX_HASH_SRC_IPV4 == (int)URNIC_RSS_SRC_IPV4 &&
		       (int)IBV_RX_HASH_DST_IPV6 == (int)URNIC_RSS_DST_IPV6 &&
		       (int)IBV_RX_HASH_SRC_PORT_TCP == (int)URNIC_RSS_SRC_PORT_TCP &&
		       (int)IBV_RX_HASH_DST_PORT_UDP == (int)URNIC_RSS_DST_PORT_UDP,
	       "RSS hash fields");

/* An RSS QP's table (wq.c) and hash, which the engine reads (wire/flow.h). */
struct urnic_vrss {
	struct urnic_rss rss;
	struct urnic_vind *tbl;
};

/*
 * A raw packet QP with IBV_QP_INIT_ATTR_RX_HASH and _IND_TABLE: receive only, its frames
 * spread over the table's WQs by the Toeplitz hash of the fields asked for (IPv4 and
 * IPv6 addresses, TCP and UDP ports; others, inner headers and other functions are
 * EOPNOTSUPP). It has no queues of its own, so its CQs are the first WQ's.
 */
static struct ibv_qp *create_rss_qp(struct ibv_qp_init_attr_ex *ex)
{
	const struct ibv_rx_hash_conf *h = &ex->rx_hash_conf;
	struct ibv_qp_init_attr init = { 0 };
	struct urnic_vrss *r;
	struct urnic_vind *t;
	struct ibv_qp *qp;

	if (ex->qp_type != IBV_QPT_RAW_PACKET || !(ex->comp_mask & IBV_QP_INIT_ATTR_IND_TABLE) ||
	    !ex->rwq_ind_tbl || !h->rx_hash_key || h->rx_hash_key_len < 4 ||
	    h->rx_hash_key_len > URNIC_RSS_KEY_MAX) {
		errno = EINVAL;
		return NULL;
	}
	if (h->rx_hash_function != IBV_RX_HASH_FUNC_TOEPLITZ ||
	    (h->rx_hash_fields_mask & ~(uint64_t)URNIC_RSS_FIELDS)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	t = to_vind(ex->rwq_ind_tbl);
	r = calloc(1, sizeof(*r));
	if (!r) {
		errno = ENOMEM;
		return NULL;
	}
	r->tbl = t;
	r->rss.fields = (uint32_t)h->rx_hash_fields_mask;
	r->rss.key_len = h->rx_hash_key_len;
	memcpy(r->rss.key, h->rx_hash_key, h->rx_hash_key_len);
	r->rss.n = t->n;
	memcpy(r->rss.qpn, t->qpn, t->n * sizeof(t->qpn[0]));
	init.qp_context = ex->qp_context;
	init.send_cq = init.recv_cq = t->wq[0]->cq;
	init.qp_type = IBV_QPT_RAW_PACKET;
	qp = create_qp(ex->pd, &init, false);
	if (!qp) {
		free(r);
		return NULL;
	}
	to_vqp(qp)->qp.rss = &r->rss;
	t->users++;
	memset(&ex->cap, 0, sizeof(ex->cap));
	return qp;
}

struct ibv_qp *urnic_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *ex)
{
	const uint32_t mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS |
			      IBV_QP_INIT_ATTR_SEND_OPS_FLAGS | IBV_QP_INIT_ATTR_XRCD;
	struct ibv_qp_init_attr init;
	struct ibv_qp *qp;

	if (ex->qp_type == IBV_QPT_XRC_RECV) {
		if (ex->comp_mask & ~mask) {
			errno = EOPNOTSUPP;
			return NULL;
		}
		return urnic_xrc_create_recv_qp(context, ex);
	}
	if (!(ex->comp_mask & IBV_QP_INIT_ATTR_PD) || !ex->pd || ex->pd->context != context) {
		errno = EINVAL;
		return NULL;
	}
	if ((ex->comp_mask & IBV_QP_INIT_ATTR_RX_HASH) &&
	    !(ex->comp_mask & ~(mask | IBV_QP_INIT_ATTR_RX_HASH | IBV_QP_INIT_ATTR_IND_TABLE)) &&
	    !((ex->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && ex->create_flags))
		return create_rss_qp(ex);
	if ((ex->comp_mask & ~mask) ||
	    ((ex->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && ex->create_flags) ||
	    ((ex->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	     (ex->send_ops_flags & ~send_ops_of(ex->qp_type) ||
	      (urnic_iw_dev(urnic_ctx_dev(context)) &&
	       (ex->send_ops_flags & ~urnic_iw_send_ops())) ||
	      (urnic_uet_dev(urnic_ctx_dev(context)) &&
	       (ex->send_ops_flags & urnic_uet_no_send_ops()))))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	memset(&init, 0, sizeof(init));
	init.qp_context = ex->qp_context;
	init.send_cq = ex->send_cq;
	init.recv_cq = ex->recv_cq;
	init.srq = ex->srq;
	init.cap = ex->cap;
	init.qp_type = ex->qp_type;
	init.sq_sig_all = ex->sq_sig_all;
	qp = create_qp(ex->pd, &init, ex->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS);
	if (qp)
		ex->cap = init.cap;
	return qp;
}

URNIC_EXPORT int ibv_destroy_qp(struct ibv_qp *ibqp)
{
	struct urnic_vqp *v = to_vqp(ibqp);

	if (ibqp->qp_type == IBV_QPT_XRC_RECV)
		return urnic_xrc_destroy_recv_qp(v);
	/* The kernel holds a QP attached to a multicast group (ib_attach_mcast takes a
	 * use count) and refuses to destroy it until it is detached. */
	if (v->mcast_attached)
		return EBUSY;
	urnic_dev_qp_destroy(v->dev, &v->qp); /* no event is raised for it after this */
	urnic_async_wait_acked(&ibqp->mutex, &ibqp->cond, &ibqp->events_completed,
			       urnic_async_forget(ibqp->context, ibqp));
	if (v->qp.rss) {
		struct urnic_vrss *r = urnic_container_of(v->qp.rss, struct urnic_vrss, rss);

		r->tbl->users--;
		free(r);
	}
	urnic_parent_release(v->parent);
	urnic_dev_res_put(v->dev, URNIC_RES_QP);
	v->send_vcq->users--;
	if (v->recv_vcq)
		v->recv_vcq->users--;
	v->vpd->users--;
	if (v->vsrq)
		v->vsrq->users--;
	pthread_cond_destroy(&ibqp->cond);
	pthread_mutex_destroy(&ibqp->mutex);
	free(v);
	return 0;
}

/* The address of a GID of this device's family, or -EINVAL (ib_attach_mcast: a UD QP
 * only; the device checks that the address is multicast, rdma_is_multicast_addr). */
static int mcast_ip(const struct urnic_vqp *v, const union ibv_gid *gid, uint8_t ip[16])
{
	if (v->ibqp.qp_type != IBV_QPT_UD || urnic_gid_to_ip(v->dev, gid->raw, ip))
		return -EINVAL;
	return 0;
}

/*
 * ibv_attach_mcast(3): 0 or an errno, as the kernel and rxe answer: EINVAL for a QP
 * that is not UD or a GID that is not multicast (the LID is ignored on Ethernet);
 * ENOMEM past max_mcast_grp or max_mcast_qp_attach; attaching twice is a no-op. The
 * first QP of a group joins it on the address's interface (transport/udp.h); the
 * kernel's errors for that (no multicast route: ENODEV) come back as they are.
 */
URNIC_EXPORT int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	struct urnic_vqp *v = to_vqp(qp);
	uint8_t ip[16];
	int ret = mcast_ip(v, gid, ip);

	(void)lid;
	if (!ret)
		ret = urnic_dev_mcast_attach(v->dev, v->qp.qpn, ip, &v->mcast_attached);
	return -ret;
}

/* ibv_detach_mcast(3): EINVAL if the QP is not attached to the group (rxe). The last
 * QP of a group leaves it. */
URNIC_EXPORT int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	struct urnic_vqp *v = to_vqp(qp);
	uint8_t ip[16];
	int ret = mcast_ip(v, gid, ip);

	(void)lid;
	if (!ret)
		ret = urnic_dev_mcast_detach(v->dev, v->qp.qpn, ip, &v->mcast_attached);
	return -ret;
}

URNIC_EXPORT int ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask_in)
{
	struct urnic_vqp *v = urnic_vqp_real(to_vqp(ibqp));
	struct urnic_dev *d = v->dev;
	uint32_t mask = (uint32_t)mask_in;
	struct urnic_qp_attr a = v->qp.attr;
	enum urnic_qp_state state;
	int ret;

	if (v->iwarp)
		return urnic_iw_modify_qp(v, attr, mask_in);
	if ((mask & IBV_QP_PATH_MTU)) {
		a.path_mtu = mtu_bytes(attr->path_mtu);
		if (a.path_mtu > 4096)
			a.path_mtu = 0;
	}
	if (mask & IBV_QP_AV) {
		ret = urnic_peer_from_ah(d, &attr->ah_attr, &a.peer);
		if (ret)
			return -ret;
		a.sgid_index = attr->ah_attr.grh.sgid_index;
	}
	a.qkey = attr->qkey;
	a.rq_psn = attr->rq_psn;
	a.sq_psn = attr->sq_psn;
	a.dest_qp_num = attr->dest_qp_num;
	a.access = attr->qp_access_flags;
	a.pkey_index = attr->pkey_index;
	a.port_num = attr->port_num;
	a.max_rd_atomic = attr->max_rd_atomic;
	a.max_dest_rd_atomic = attr->max_dest_rd_atomic;
	a.min_rnr_timer = attr->min_rnr_timer;
	a.timeout = attr->timeout;
	a.retry_cnt = attr->retry_cnt;
	a.rnr_retry = attr->rnr_retry;
	/* The configured limits (dev/limits.def): max_dest_rd_atomic is how many READ and
	 * atomic requests a peer may hold in our responder resources. */
	if (((mask & IBV_QP_MAX_QP_RD_ATOMIC) &&
	     attr->max_rd_atomic > d->lim.max_qp_init_rd_atom) ||
	    ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) &&
	     attr->max_dest_rd_atomic > d->lim.max_qp_rd_atom))
		return EINVAL;

	ret = urnic_dev_qp_modify(d, &v->qp, &a, (enum urnic_qp_state)attr->cur_qp_state,
				  (enum urnic_qp_state)attr->qp_state, mask, &state);
	/* The ABI's copy for the application, which reads it without a lock; libibverbs'
	 * own ibv_modify_qp also writes it after the provider's modify returns. */
	if (ret == 0) /* and the creating handle's copy, when ibqp came from ibv_open_qp */
		ibqp->state = v->ibqp.state = (enum ibv_qp_state)state;
	return -ret;
}

URNIC_EXPORT int ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask,
			      struct ibv_qp_init_attr *init)
{
	struct urnic_vqp *v = urnic_vqp_real(to_vqp(ibqp));
	struct urnic_qp_attr a;
	enum urnic_qp_state state;

	memset(attr, 0, sizeof(*attr));
	urnic_dev_qp_query(v->dev, &v->qp, &state, &a);
	attr->qp_state = (enum ibv_qp_state)state;
	attr->cur_qp_state = attr->qp_state;
	attr->path_mtu = IBV_MTU_256;
	for (int i = IBV_MTU_256; i <= IBV_MTU_4096; i++)
		if (mtu_bytes(i) == a.path_mtu)
			attr->path_mtu = (enum ibv_mtu)i;
	attr->path_mig_state = IBV_MIG_MIGRATED;
	attr->qkey = a.qkey;
	attr->rq_psn = a.rq_psn;
	attr->sq_psn = a.sq_psn;
	attr->dest_qp_num = a.dest_qp_num;
	attr->qp_access_flags = a.access;
	attr->cap = v->cap;
	attr->ah_attr.is_global = 1;
	attr->ah_attr.port_num = a.port_num;
	attr->ah_attr.grh.sgid_index = a.sgid_index;
	attr->ah_attr.grh.hop_limit = a.peer.hop_limit;
	attr->ah_attr.grh.traffic_class = a.peer.traffic_class;
	attr->ah_attr.grh.flow_label = a.peer.flow_label;
	if (a.peer.ipv6) {
		memcpy(attr->ah_attr.grh.dgid.raw, a.peer.ip, 16);
	} else {
		attr->ah_attr.grh.dgid.raw[10] = attr->ah_attr.grh.dgid.raw[11] = 0xff;
		memcpy(attr->ah_attr.grh.dgid.raw + 12, a.peer.ip, 4);
	}
	attr->pkey_index = a.pkey_index;
	attr->sq_draining = 0;
	attr->max_rd_atomic = a.max_rd_atomic;
	attr->max_dest_rd_atomic = a.max_dest_rd_atomic;
	attr->min_rnr_timer = a.min_rnr_timer;
	attr->port_num = a.port_num;
	attr->timeout = a.timeout;
	attr->retry_cnt = a.retry_cnt;
	attr->rnr_retry = a.rnr_retry;
	if (init) {
		memset(init, 0, sizeof(*init));
		init->qp_context = ibqp->qp_context;
		init->send_cq = ibqp->send_cq;
		init->recv_cq = ibqp->recv_cq;
		init->srq = ibqp->srq;
		init->cap = v->cap;
		init->qp_type = ibqp->qp_type;
		init->sq_sig_all = v->qp.sq_sig_all;
	}
	(void)mask;
	return 0;
}
