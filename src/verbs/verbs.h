/* SPDX-License-Identifier: MIT */
/*
 * verbs.h - the ABI shim's objects: each libibverbs object with urnic's own behind it.
 *
 * The public structs (ibv_context inside verbs_context, ibv_pd, ibv_mr, ibv_cq, ibv_qp,
 * ibv_comp_channel) come first in each wrapper, so the pointer an application holds
 * converts back with container_of. Layouts are Debian's <infiniband/verbs.h>, filled
 * as rdma-core's libibverbs and providers fill them (verbs_init_context(): a whole
 * verbs_context, abi_compat and sz set). This is the only place that
 * converts between urnic's conventions and libibverbs' (errno, NULL + errno).
 * urnic's side of each object is reached through the device (dev/verbs_qp.h,
 * dev/verbs_mem.h), which also brings the plain data the ABI is translated to and from:
 * src/verbs includes no engine/, mem/, queue/ or transport/ header itself.
 */
#ifndef URNIC_VERBS_VERBS_H
#define URNIC_VERBS_VERBS_H

#include <stddef.h>

#include <infiniband/verbs.h>

#include "dev/device.h"
#include "dev/verbs_mem.h"
#include "dev/tm.h"
#include "dev/verbs_qp.h"
#include "export.h"

#define urnic_container_of(ptr, type, member)                                                      \
	((type *)(void *)((char *)(ptr)-offsetof(type, member)))

struct urnic_vdevice {
	struct ibv_device ibdev;
	/* Where rdma-core's struct verbs_device keeps its provider's ops. The real
	 * provider libraries that perftest and UCX load beside us (libmlx5, libefa) tell
	 * their own devices by comparing this pointer with their ops table: NULL is no
	 * provider's, so their direct-verbs entry points leave our devices alone. */
	void *verbs_device_ops;
	struct urnic_dev *dev;
};

/* The async events of one QP, SRQ or CQ (async.c): raised and read; after its destroy,
 * how many of its records the pipe still holds (they are skipped, not delivered). */
struct urnic_async_track {
	const void *element;
	uint32_t raised, read, dead_unread;
	bool dead;
};

struct urnic_vcontext {
	struct verbs_context vctx;
	struct urnic_dev *dev;
	int async_write_fd;	    /* async events: context.async_fd is the read end */
	struct urnic_uctx *uctx;    /* what it shares with its imports (import.c) */
	pthread_mutex_t async_lock; /* guards track */
	struct urnic_async_track *track;
	size_t ntrack, track_cap;
};

/* A PD's or MR's place among the objects a context offers for import (import.c). */
struct urnic_import_link {
	struct urnic_import_link *prev, *next;
	struct urnic_uctx *uctx; /* NULL: not offered (never, or no more) */
	uint32_t handle;
};

struct urnic_vpd {
	struct ibv_pd ibpd;
	struct urnic_vpd *shared; /* an imported PD: the one it names (ibv_import_pd(3)) */
	struct urnic_import_link link;
	int imports; /* imported PDs naming this one: it is freed after the last */
	bool dead;   /* deallocated while imports remained */
	struct urnic_pd pd;
	int users; /* MRs and QPs: dealloc refuses with EBUSY while any exist */
	/* In a parent domain (pd_ext.c): the protection domain it stands for. NULL in a PD. */
	struct urnic_vpd *base;
};

struct urnic_vmr {
	struct ibv_mr ibmr;
	struct urnic_vmr *shared; /* an imported MR: the one it names (ibv_import_mr(3)) */
	struct urnic_import_link link;
	int imports;
	bool dead;
	struct urnic_mr *mr;
	struct urnic_vpd *vpd;
	struct urnic_dm *dm; /* the device memory it is registered on (dm.c), or NULL */
};

struct urnic_vmw {
	struct ibv_mw ibmw;
	struct urnic_mr *mw; /* its slot in the key table (mem/mw.h) */
	struct urnic_vpd *vpd;
	struct urnic_dev *dev;
};

/* rdma-core 45+ (IBTA 1.5 FLUSH), absent from Debian's rdma-core 44 headers: the values
 * applications built against newer headers pass. */
#define URNIC_IBV_ACCESS_FLUSH_GLOBAL (1 << 8)
#define URNIC_IBV_ACCESS_FLUSH_PERSISTENT (1 << 9)
#define URNIC_IBV_WR_FLUSH 14
#define URNIC_IBV_QP_EX_WITH_FLUSH (1 << 11)
#define URNIC_IBV_DEVICE_FLUSH_GLOBAL (1ULL << 38)     /* IB_UVERBS_DEVICE_FLUSH_GLOBAL */
#define URNIC_IBV_DEVICE_FLUSH_PERSISTENT (1ULL << 39) /* IB_UVERBS_DEVICE_FLUSH_PERSISTENT */
#define URNIC_IBV_DEVICE_ATOMIC_WRITE (1ULL << 40)     /* IB_UVERBS_DEVICE_ATOMIC_WRITE */

/* struct ibv_qp_ex as rdma-core 45+ lays it out: wr_flush right after wr_atomic_write,
 * the last member of Debian's (rdma-core 44) struct. */
struct urnic_qp_ex {
	struct ibv_qp_ex ex;
	void (*wr_flush)(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr, size_t len,
			 uint8_t type, uint8_t level);
};

struct urnic_vchannel {
	struct ibv_comp_channel ibch;
	int write_fd;
	int users;
};

struct urnic_vcq {
	union {
		struct ibv_cq ibcq;
		struct ibv_cq_ex ibcq_ex; /* ibv_create_cq_ex: starts with ibv_cq's fields */
	};
	struct urnic_cq cq;
	const struct urnic_cqe *cur; /* the extended poll API's current completion */
	uint32_t cur_cons;
	int64_t wall_offset_ns; /* CLOCK_REALTIME - the device clock (cq_ex.c) */
	uint64_t wall_read_ns;	/* when it was last read (device clock), 0: never */
	struct urnic_vchannel *vch;
	struct ibv_pd *parent; /* the parent domain it was created in (its rings), or NULL */
	int users;	       /* QPs */
};

/* An XRC domain (xrc.c): one per device and file (inode), or per ibv_open_xrcd with
 * fd -1, shared by the handles ibv_open_xrcd returns. */
struct urnic_vxrc_domain;

struct urnic_vsrq {
	struct ibv_srq ibsrq;
	struct urnic_srq srq;
	struct urnic_vpd *vpd;
	struct urnic_dev *dev;
	int users;	       /* QPs attached */
	struct ibv_pd *parent; /* as in struct urnic_vqp */
	/* An XRC SRQ's domain and CQ (xrc.c); NULL for a basic SRQ. */
	struct urnic_vxrc_domain *xdom;
	struct urnic_vcq *xcq;
	/* A tag-matching SRQ's CQ (tm.c); NULL for other SRQs. */
	struct urnic_vcq *tmcq;
};

struct urnic_vah {
	struct ibv_ah ibah;
	struct urnic_peer peer; /* the destination, sport left to the sending QP */
	struct urnic_vpd *vpd;
};

struct urnic_vqp {
	union {
		struct ibv_qp ibqp;
		struct ibv_qp_ex ibqp_ex; /* ibv_create_qp_ex: starts with ibv_qp */
		struct urnic_qp_ex ibqp_ex_flush;
	};
	bool has_qp_ex;
	/* The ibv_wr_* batch between wr_start and wr_complete: each WR is built as an
	 * ibv_send_wr and written to the ring when the next one starts or at complete. */
	uint32_t wr_prod;
	int wr_error;
	bool wr_have_pending;
	struct ibv_send_wr wr_pending;
	uint64_t wr_flush_len;	/* what ibv_send_wr has no room for: the FLUSH range, */
	uint8_t wr_flush_type;	/* placement type */
	uint8_t wr_flush_level; /* and selectivity */
	struct ibv_sge wr_sge[URNIC_MAX_SGE];
	uint8_t wr_inline[URNIC_MAX_INLINE];
	struct urnic_qp qp;
	struct urnic_vcq *send_vcq;
	struct urnic_vcq *recv_vcq;
	struct urnic_vpd *vpd;
	struct urnic_vsrq *vsrq; /* NULL without an SRQ */
	struct ibv_qp_cap cap;
	struct urnic_dev *dev;
	bool iwarp;		 /* on an iWARP device: RFC 5040's operations only (iwarp.c) */
	uint32_t mcast_attached; /* groups it is attached to: no destroy before detach */
	/* The parent domain it was made through (pd_ext.c), or NULL. Kept here because
	 * ibqp->pd may be gone at destroy: pyverbs unimports an imported PD before it
	 * destroys the QPs made on it, which the kernel allows. */
	struct ibv_pd *parent;
	/* XRC receive QPs (xrc.c): the domain; on a handle ibv_open_qp returned, the handle
	 * that created the QP (whose qp is the QP); on that one, the handles open (itself
	 * included) and the domain's next receive QP. */
	struct {
		struct urnic_vxrc_domain *dom;
		struct urnic_vqp *real;
		struct urnic_vqp *next;
		int handles;
	} xrc;
};

static inline struct urnic_dev *urnic_ctx_dev(struct ibv_context *ctx)
{
	return urnic_container_of(ctx, struct urnic_vcontext, vctx.context)->dev;
}

/* The PD an ibv_pd names: itself; for a parent domain the protection domain it stands
 * for wherever a PD is used (ibv_alloc_parent_domain(3)); for an imported PD the
 * original. */
static inline struct urnic_vpd *to_vpd(struct ibv_pd *pd)
{
	struct urnic_vpd *v = urnic_container_of(pd, struct urnic_vpd, ibpd);

	if (v->base)
		v = v->base;
	return v->shared ? v->shared : v;
}

static inline bool urnic_pd_is_parent(struct ibv_pd *pd)
{
	return urnic_container_of(pd, struct urnic_vpd, ibpd)->base != NULL;
}

static inline struct urnic_vmr *to_vmr(struct ibv_mr *mr)
{
	struct urnic_vmr *v = urnic_container_of(mr, struct urnic_vmr, ibmr);

	return v->shared ? v->shared : v;
}

static inline struct urnic_vcq *to_vcq(struct ibv_cq *cq)
{
	return urnic_container_of(cq, struct urnic_vcq, ibcq);
}

static inline struct urnic_vqp *to_vqp(struct ibv_qp *qp)
{
	return urnic_container_of(qp, struct urnic_vqp, ibqp);
}

/* The handle that holds the QP: itself, unless ibv_open_qp returned it (xrc.c). */
static inline struct urnic_vqp *urnic_vqp_real(struct urnic_vqp *v)
{
	return v->xrc.real ? v->xrc.real : v;
}

static inline struct urnic_vsrq *to_vsrq(struct ibv_srq *srq)
{
	return urnic_container_of(srq, struct urnic_vsrq, ibsrq);
}

static inline struct urnic_vah *to_vah(struct ibv_ah *ah)
{
	return urnic_container_of(ah, struct urnic_vah, ibah);
}

/* rdma-core exports without a public prototype (libibverbs/driver.h, sysfs.h). */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       int *type);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);
const char *ibv_get_sysfs_path(void);

/* Extended verbs installed in every context. */
struct ibv_cq_ex *urnic_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr);
int urnic_query_rt_values(struct ibv_context *context, struct ibv_values_ex *values);
struct ibv_qp *urnic_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr);
/* A zeroed QP wrapper holding one of the device's QPs (qp.c); NULL with errno set
 * (ENOMEM when the device has none left). */
struct urnic_vqp *urnic_vqp_new(struct urnic_dev *d);
/* flow.c: ibv_create_flow(3), ibv_destroy_flow(3). */
struct ibv_flow *urnic_create_flow(struct ibv_qp *qp, struct ibv_flow_attr *attr);
int urnic_destroy_flow(struct ibv_flow *flow);

/* wq.c: receive WQs and their indirection tables (ibv_create_wq(3),
 * ibv_create_rwq_ind_table(3)); an RSS QP spreads its frames over a table's WQs. */
enum { URNIC_LOG_IND_TBL_MAX = 8 };
struct urnic_vind {
	struct ibv_rwq_ind_table ibt;
	uint32_t n;
	uint32_t users; /* RSS QPs that use it */
	struct ibv_wq *wq[1u << URNIC_LOG_IND_TBL_MAX];
	uint32_t qpn[1u << URNIC_LOG_IND_TBL_MAX]; /* each WQ's QP (wq.c) */
};
static inline struct urnic_vind *to_vind(struct ibv_rwq_ind_table *t)
{
	return urnic_container_of(t, struct urnic_vind, ibt);
}
struct ibv_wq *urnic_create_wq(struct ibv_context *context, struct ibv_wq_init_attr *attr);
int urnic_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr);
int urnic_destroy_wq(struct ibv_wq *wq);
struct ibv_rwq_ind_table *urnic_create_rwq_ind_table(struct ibv_context *context,
						     struct ibv_rwq_ind_table_init_attr *attr);
int urnic_destroy_rwq_ind_table(struct ibv_rwq_ind_table *t);
void urnic_wr_ops_init(struct urnic_vqp *v);

/* Async events (async.c): queue one for the context's async_fd; the engine's events,
 * installed in every opened device. */
void urnic_async_event(struct ibv_context *context, enum ibv_event_type type, void *element);
/* Before element (a QP, SRQ or CQ) is freed: its records the application has not read
 * will not be delivered; returns how many it has read, which the destroy waits to see
 * acknowledged (ibv_get_async_event(3)). */
uint32_t urnic_async_forget(struct ibv_context *context, const void *element);
/* Waits until *completed (the object's ibv_ack_async_event count, under mutex/cond)
 * reaches read, urnic_async_forget's answer: ibv_destroy_qp(3) and ibv_destroy_srq(3)
 * wait for the events the application got to be acknowledged. */
void urnic_async_wait_acked(pthread_mutex_t *mutex, pthread_cond_t *cond, const uint32_t *completed,
			    uint32_t read);
void urnic_async_fini(struct urnic_vcontext *c);
extern const struct urnic_dev_events urnic_verbs_events;

/* Port events (async.c): every open context is watched from ibv_open_device to
 * ibv_close_device; the port state (ACTIVE, or DOWN with rxe's physical state) of a
 * device's address as last seen. */
void urnic_async_watch(struct ibv_context *context);
void urnic_async_unwatch(struct ibv_context *context);
enum ibv_port_state urnic_port_state(const struct urnic_dev *d, uint8_t *phys_state);
/* The interface that holds d's address (its netdev, as the kernel's GID table names
 * one for each RoCE GID), by the rule of the port state; 0 when none does. */
unsigned int urnic_port_ifindex(const struct urnic_dev *d);

/* RoCEv2 address vector -> destination (ah.c; IBTA Annex A17.4: the GID is the IP).
 * Returns 0 or -EINVAL. */
/* A RoCEv2 GID's IP address as struct urnic_peer keeps one (IPv4: ::ffff:a.b.c.d, the
 * first four bytes; the rest zero), or -EINVAL if it is not of the device's family. */
int urnic_gid_to_ip(const struct urnic_dev *d, const uint8_t gid[16], uint8_t ip[16]);
int urnic_peer_from_ah(const struct urnic_dev *d, const struct ibv_ah_attr *ah,
		       struct urnic_peer *peer);

/* Memory windows (memory.c): the context ops behind ibv_alloc_mw, ibv_bind_mw,
 * ibv_dealloc_mw. */
struct ibv_mw *urnic_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int urnic_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);
int urnic_dealloc_mw(struct ibv_mw *mw);

/* A zeroed wrapper of size bytes for a new MR or MW and the 32 random bits of its key
 * (memory.c); NULL with errno set (the CSPRNG's failure, or ENOMEM) if either fails. */
void *urnic_key_calloc(size_t size, uint32_t *key_rand);

/* Device memory (dm.c): the context ops behind ibv_alloc_dm, ibv_free_dm, ibv_reg_dm_mr. */
struct ibv_dm *urnic_alloc_dm(struct ibv_context *context, struct ibv_alloc_dm_attr *attr);
int urnic_free_dm(struct ibv_dm *dm);
struct ibv_mr *urnic_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t dm_offset,
			       size_t length, unsigned int access);

/* Import (import.c): a context's cmd_fd names what it shares with the contexts
 * ibv_import_device makes of a dup of it; its PDs and MRs are offered by handle.
 * urnic_import_open gives a new context its own (0 or an errno), urnic_import_close
 * lets go of it. urnic_import_offer_* register a new PD or MR (its handle set);
 * urnic_import_release_* end a PD or MR, original or imported: it is withdrawn and
 * freed once no import names it any more. */
int urnic_import_open(struct urnic_vcontext *c);
void urnic_import_close(struct urnic_vcontext *c);
void urnic_import_offer_pd(struct urnic_vpd *v);
void urnic_import_offer_mr(struct urnic_vmr *v);
void urnic_import_release_pd(struct ibv_pd *pd);
void urnic_import_release_mr(struct ibv_mr *mr);

/* Thread domains and parent domains (pd_ext.c): the context ops behind ibv_alloc_td,
 * ibv_dealloc_td and ibv_alloc_parent_domain; ibv_dealloc_pd of a parent domain. */
struct ibv_td *urnic_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr);
int urnic_dealloc_td(struct ibv_td *td);
struct ibv_pd *urnic_alloc_parent_domain(struct ibv_context *context,
					 struct ibv_parent_domain_init_attr *attr);
int urnic_dealloc_parent_domain(struct ibv_pd *pd);
/* A QP, CQ or SRQ is made in pd: if pd is a parent domain, it is held (no dealloc until
 * urnic_parent_release) and its allocators, if it has them, are returned for the
 * object's rings; NULL otherwise (calloc). */
const struct urnic_ring_mem *urnic_parent_hold(struct ibv_pd *pd);
void urnic_parent_release(struct ibv_pd *pd); /* pd NULL: nothing */

/* Completion queues (cq.c): one of cqe completions with its rings from mem (NULL:
 * calloc), timestamped if asked; NULL and errno. */
struct urnic_vcq *urnic_cq_create(struct ibv_context *context, int cqe, void *cq_context,
				  struct ibv_comp_channel *channel, int comp_vector,
				  const struct urnic_ring_mem *mem, bool timestamps);

/* Shared receive queues (srq.c). */
struct ibv_srq *urnic_create_srq_ex(struct ibv_context *context, struct ibv_srq_init_attr_ex *attr);
int urnic_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
/* Tag matching (tm.c): a tag-matching SRQ's part of ibv_create_srq_ex, and
 * ibv_post_srq_ops. */
int urnic_tm_srq_attach(struct urnic_vsrq *v, const struct ibv_srq_init_attr_ex *ex);
int urnic_post_srq_ops(struct ibv_srq *srq, struct ibv_ops_wr *wr, struct ibv_ops_wr **bad_wr);

/* XRC (xrc.c, IBTA Annex A14): the domains, the context ops ibv_open_xrcd,
 * ibv_close_xrcd, ibv_get_srq_num and ibv_open_qp reach, and what ibv_create_qp_ex,
 * ibv_destroy_qp, ibv_create_srq_ex and ibv_destroy_srq hand over for XRC objects. */
struct ibv_xrcd *urnic_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *attr);
int urnic_close_xrcd(struct ibv_xrcd *xrcd);
int urnic_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);
struct ibv_qp *urnic_open_qp(struct ibv_context *context, struct ibv_qp_open_attr *attr);
struct ibv_qp *urnic_xrc_create_recv_qp(struct ibv_context *context,
					struct ibv_qp_init_attr_ex *ex);
int urnic_xrc_destroy_recv_qp(struct urnic_vqp *v);
int urnic_xrc_srq_attach(struct urnic_vsrq *v, const struct ibv_srq_init_attr_ex *ex);
void urnic_xrc_srq_detach(struct urnic_vsrq *v);
void urnic_tm_srq_detach(struct urnic_vsrq *v);

/* Copies receive WRs into a ring (an RQ or an SRQ) under its lock (post.c). */
int urnic_post_recv_ring(struct urnic_wq *rq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);

/* An iWARP device's verbs, as siw's (iwarp.c): whether d is one; its device and port
 * attributes over the RoCEv2 ones; the opcodes and ibv_wr_* operations it takes; its
 * ibv_modify_qp (a positive errno). */
bool urnic_iw_dev(const struct urnic_dev *d);
void urnic_iw_device_attr(const struct urnic_dev *d, struct ibv_device_attr *a);
void urnic_iw_port_attr(const struct urnic_dev *d, struct ibv_port_attr *p);
bool urnic_iw_opcode_ok(uint32_t op);
uint64_t urnic_iw_send_ops(void);
int urnic_iw_modify_qp(struct urnic_vqp *v, struct ibv_qp_attr *attr, int mask);

/* A UET device's verbs (uet.c): whether d is one; its device attributes over the RoCEv2
 * ones; the ibv_wr_* operations it does not carry. Its part ID under
 * urnic's vendor ID (0xffffff, as rxe: none) is the port it speaks on, UDP 4793; a
 * RoCEv2 device's is 0, as rxe's. */
enum { URNIC_UET_VENDOR_PART_ID = 4793 };
bool urnic_uet_dev(const struct urnic_dev *d);
void urnic_uet_device_attr(struct ibv_device_attr *a);
uint64_t urnic_uet_no_send_ops(void);

/* Fills the work request ops; shared by ibv_post_send and the ibv_wr_* API. */
int urnic_fill_send_wqe(struct urnic_qp *qp, struct urnic_send_wqe *w,
			const struct ibv_send_wr *wr);

/* After publishing send work: send now or wake the engine. last_len: the bytes of the
 * last request posted; a small one may wait for the next pass in a streak of posts
 * (urnic_dev_doorbell). */
void urnic_send_doorbell(struct urnic_vqp *v, uint32_t last_len);

/* Data path ops installed in every context (post.c). */
int urnic_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int urnic_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
int urnic_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int urnic_req_notify_cq(struct ibv_cq *cq, int solicited_only);

#endif
