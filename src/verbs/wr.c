/* SPDX-License-Identifier: MIT */
/*
 * wr.c - the extended post API: ibv_create_qp_ex with send_ops_flags, ibv_qp_to_qp_ex
 * and the ibv_wr_* builders (ibv_wr_post(3)).
 *
 * Between ibv_wr_start and ibv_wr_complete the QP's send queue lock is held, as in
 * rdma-core's providers; each WR is built as an ibv_send_wr (inline data copied at
 * once, as the man page requires) and written to the ring by the same code as
 * ibv_post_send when the next WR starts or at complete. An error in any WR makes
 * ibv_wr_complete fail and post nothing of the batch (ibv_wr_abort does the same).
 * Besides the builders of Debian's rdma-core 44 (memory window bind, local and remote
 * invalidate, ATOMIC_WRITE), wr_flush is installed where rdma-core 45+ has it, right
 * after wr_atomic_write, for programs built against newer headers.
 */
#include <errno.h>
#include <string.h>

#include "verbs/verbs.h"

_Static_assert(offsetof(struct urnic_qp_ex, wr_flush) == sizeof(struct ibv_qp_ex),
	       "wr_flush follows wr_atomic_write");

static struct urnic_vqp *to_vqp_ex(struct ibv_qp_ex *qpx)
{
	return to_vqp(&qpx->qp_base);
}

/* Writes the WR being built to the ring. */
static void commit_pending(struct urnic_vqp *v)
{
	struct urnic_wq *sq = &v->qp.sq;
	uint32_t cons = atomic_load_explicit(&sq->cons, memory_order_acquire);
	struct urnic_send_wqe *w;
	int ret;

	if (!v->wr_have_pending)
		return;
	v->wr_have_pending = false;
	if (v->wr_error)
		return;
	if (v->wr_prod - cons >= sq->max_wr) {
		v->wr_error = ENOMEM;
		return;
	}
	w = urnic_wq_slot(sq, v->wr_prod);
	ret = urnic_fill_send_wqe(&v->qp, w, &v->wr_pending);
	if (ret) {
		v->wr_error = ret;
		return;
	}
	if ((uint32_t)v->wr_pending.opcode == URNIC_IBV_WR_FLUSH) {
		w->remote_len = v->wr_flush_len;
		w->flush_type = v->wr_flush_type;
		w->flush_level = v->wr_flush_level;
	}
	v->wr_prod++;
}

static struct ibv_send_wr *begin(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode)
{
	struct urnic_vqp *v = to_vqp_ex(qpx);
	struct ibv_send_wr *wr = &v->wr_pending;

	commit_pending(v);
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = qpx->wr_id;
	wr->send_flags = qpx->wr_flags;
	wr->opcode = opcode;
	wr->sg_list = v->wr_sge;
	v->wr_have_pending = true;
	return wr;
}

static void wr_send(struct ibv_qp_ex *qpx)
{
	begin(qpx, IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	begin(qpx, IBV_WR_SEND_WITH_IMM)->imm_data = imm;
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	struct ibv_send_wr *wr = begin(qpx, IBV_WR_RDMA_WRITE);

	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = addr;
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, __be32 imm)
{
	struct ibv_send_wr *wr = begin(qpx, IBV_WR_RDMA_WRITE_WITH_IMM);

	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = addr;
	wr->imm_data = imm;
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	struct ibv_send_wr *wr = begin(qpx, IBV_WR_RDMA_READ);

	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = addr;
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, uint64_t compare,
			      uint64_t swap)
{
	struct ibv_send_wr *wr = begin(qpx, IBV_WR_ATOMIC_CMP_AND_SWP);

	wr->wr.atomic.rkey = rkey;
	wr->wr.atomic.remote_addr = addr;
	wr->wr.atomic.compare_add = compare;
	wr->wr.atomic.swap = swap;
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, uint64_t add)
{
	struct ibv_send_wr *wr = begin(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD);

	wr->wr.atomic.rkey = rkey;
	wr->wr.atomic.remote_addr = addr;
	wr->wr.atomic.compare_add = add;
}

/* ibv_wr_bind_mw(3): a type 2 window, bound to info's range of info->mr with rkey's
 * consumer key; the application updates mw->rkey once it completes. */
static void wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *info)
{
	struct ibv_send_wr *wr = begin(qpx, IBV_WR_BIND_MW);

	wr->bind_mw.mw = mw;
	wr->bind_mw.rkey = rkey;
	wr->bind_mw.bind_info = *info;
}

static void wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	begin(qpx, IBV_WR_LOCAL_INV)->invalidate_rkey = invalidate_rkey;
}

static void wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	begin(qpx, IBV_WR_SEND_WITH_INV)->invalidate_rkey = invalidate_rkey;
}

/* ibv_wr_atomic_write(3): the 8 bytes at atomic_wr are copied now. */
static void wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
			    const void *atomic_wr)
{
	struct urnic_vqp *v = to_vqp_ex(qpx);
	struct ibv_send_wr *wr = begin(qpx, IBV_WR_ATOMIC_WRITE);

	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = addr;
	memcpy(v->wr_inline, atomic_wr, 8);
	v->wr_sge[0] = (struct ibv_sge){ .addr = (uintptr_t)v->wr_inline, .length = 8 };
	wr->num_sge = 1;
	wr->send_flags |= IBV_SEND_INLINE;
}

/* rdma-core 45+ ibv_wr_flush(3): type is a set of placement types (global visibility,
 * persistence), level the selectivity (a range, or the whole region). */
static void wr_flush(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, size_t len, uint8_t type,
		     uint8_t level)
{
	struct urnic_vqp *v = to_vqp_ex(qpx);
	struct ibv_send_wr *wr = begin(qpx, (enum ibv_wr_opcode)URNIC_IBV_WR_FLUSH);

	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = addr;
	v->wr_flush_len = len;
	v->wr_flush_type = type;
	v->wr_flush_level = level;
	if (!type || (type & ~(unsigned)URNIC_FLUSH_TYPE_MASK) || level > URNIC_FLUSH_LEVEL_MR ||
	    len > (1u << 31))
		v->wr_error = EINVAL;
}

/* UD: the destination of the WR being built (ibv_wr_set_ud_addr(3)). */
static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t remote_qpn,
			   uint32_t remote_qkey)
{
	struct urnic_vqp *v = to_vqp_ex(qpx);

	v->wr_pending.wr.ud.ah = ah;
	v->wr_pending.wr.ud.remote_qpn = remote_qpn;
	v->wr_pending.wr.ud.remote_qkey = remote_qkey;
}

/* XRC: the SRQ at the target the WR being built goes to (ibv_wr_set_xrc_srqn(3)). */
static void wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	to_vqp_ex(qpx)->wr_pending.qp_type.xrc.remote_srqn = remote_srqn;
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct urnic_vqp *v = to_vqp_ex(qpx);

	v->wr_sge[0] = (struct ibv_sge){ .addr = addr, .length = length, .lkey = lkey };
	v->wr_pending.num_sge = 1;
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge, const struct ibv_sge *list)
{
	struct urnic_vqp *v = to_vqp_ex(qpx);

	if (num_sge > URNIC_MAX_SGE) {
		v->wr_error = EINVAL;
		return;
	}
	memcpy(v->wr_sge, list, num_sge * sizeof(*list));
	v->wr_pending.num_sge = (int)num_sge;
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
				    const struct ibv_data_buf *list)
{
	struct urnic_vqp *v = to_vqp_ex(qpx);
	size_t off = 0;

	for (size_t i = 0; i < num_buf; i++) {
		if (list[i].length > sizeof(v->wr_inline) - off) {
			v->wr_error = EINVAL; /* beyond max_inline_data */
			return;
		}
		/* An empty buffer may be NULL (UCX's empty messages); memcpy may not be
		 * given one even for no bytes (C11 7.24.1p2). */
		if (list[i].length)
			memcpy(v->wr_inline + off, list[i].addr, list[i].length);
		off += list[i].length;
	}
	v->wr_sge[0] = (struct ibv_sge){ .addr = (uintptr_t)v->wr_inline, .length = (uint32_t)off };
	v->wr_pending.num_sge = 1;
	v->wr_pending.send_flags |= IBV_SEND_INLINE;
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	wr_set_inline_data_list(qpx, 1, &buf);
}

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct urnic_vqp *v = to_vqp_ex(qpx);

	pthread_spin_lock(&v->qp.sq.lock);
	v->wr_prod = atomic_load_explicit(&v->qp.sq.prod, memory_order_relaxed);
	v->wr_error = 0;
	v->wr_have_pending = false;
	/* IBTA 10.3.1 table 90: the send queue accepts work in RTS (and ERR, flushed). */
	if (v->qp.state != URNIC_QPS_RTS && v->qp.state != URNIC_QPS_ERR)
		v->wr_error = EINVAL;
}

static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct urnic_vqp *v = to_vqp_ex(qpx);
	uint32_t last_len = 0;
	int ret;

	commit_pending(v);
	ret = v->wr_error;
	if (!ret) {
		const struct urnic_send_wqe *last = urnic_wq_slot(&v->qp.sq, v->wr_prod - 1);

		last_len = last->length;
		atomic_store_explicit(&v->qp.sq.prod, v->wr_prod, memory_order_release);
	}
	pthread_spin_unlock(&v->qp.sq.lock);
	if (!ret)
		urnic_send_doorbell(v, last_len);
	return ret;
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	struct urnic_vqp *v = to_vqp_ex(qpx);

	v->wr_have_pending = false;
	pthread_spin_unlock(&v->qp.sq.lock);
}

void urnic_wr_ops_init(struct urnic_vqp *v)
{
	struct ibv_qp_ex *x = &v->ibqp_ex;

	x->wr_send = wr_send;
	x->wr_send_imm = wr_send_imm;
	x->wr_rdma_write = wr_rdma_write;
	x->wr_rdma_write_imm = wr_rdma_write_imm;
	x->wr_rdma_read = wr_rdma_read;
	x->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	x->wr_atomic_fetch_add = wr_atomic_fetch_add;
	x->wr_bind_mw = wr_bind_mw;
	x->wr_local_inv = wr_local_inv;
	x->wr_send_inv = wr_send_inv;
	x->wr_atomic_write = wr_atomic_write;
	v->ibqp_ex_flush.wr_flush = wr_flush;
	x->wr_set_ud_addr = wr_set_ud_addr;
	x->wr_set_xrc_srqn = wr_set_xrc_srqn;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	v->has_qp_ex = true;
}

URNIC_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct urnic_vqp *v = to_vqp(qp);

	return v->has_qp_ex ? &v->ibqp_ex : NULL;
}
