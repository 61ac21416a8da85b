/* SPDX-License-Identifier: MIT */
/*
 * cq_ex.c - extended completion queues: ibv_create_cq_ex(3), the ibv_cq_ex poll API
 * (ibv_start_poll, ibv_wc_read_*), completion timestamps and ibv_query_rt_values_ex(3).
 *
 * Every wc_flags field a RoCE device fills is offered, as a RoCE port reports it: no
 * LIDs (SLID, DLID path bits 0), SL 0, no VLAN stripped (CVLAN 0: the kernel's UDP
 * socket takes any tag off), no flow steering (flow tag 0). A timestamp is the device
 * clock (dev/device.h: CLOCK_MONOTONIC ns, hca_core_clock 1 GHz) of the engine's pass
 * that wrote the completion; the wall-clock one adds CLOCK_REALTIME's offset from it,
 * read again at an ibv_start_poll every 10 ms. Tag matching (IBV_WC_EX_WITH_TM_INFO):
 * ibv_wc_read_tm_info gives the TMH's tag and app_ctx of a completion with
 * IBV_WC_TM_MATCH, zeros otherwise (tm.c, engine/roce/tm.c).
 */
#include <errno.h>
#include <time.h>

#include "verbs/verbs.h"

static void load_current(struct urnic_vcq *v, struct ibv_cq_ex *x)
{
	const struct urnic_cqe *c = &v->cq.ring[v->cur_cons & (v->cq.depth - 1)];

	v->cur = c;
	x->wr_id = c->wr_id;
	x->status = (enum ibv_wc_status)c->status;
}

static int start_poll(struct ibv_cq_ex *x, struct ibv_poll_cq_attr *attr)
{
	struct urnic_vcq *v = to_vcq(ibv_cq_ex_to_cq(x));
	uint32_t cons, prod;

	if (attr->comp_mask)
		return EINVAL;
	urnic_dev_polled(urnic_ctx_dev(x->context));
	pthread_spin_lock(&v->cq.poll_lock);
	cons = atomic_load_explicit(&v->cq.cons, memory_order_relaxed);
	prod = atomic_load_explicit(&v->cq.prod, memory_order_acquire);
	if (cons == prod) {
		/* Nothing yet: drive the pipeline from this thread and look again. */
		pthread_spin_unlock(&v->cq.poll_lock);
		urnic_dev_progress(urnic_ctx_dev(x->context),
				   atomic_load(&v->cq.arm) == URNIC_CQ_DISARMED);
		pthread_spin_lock(&v->cq.poll_lock);
		cons = atomic_load_explicit(&v->cq.cons, memory_order_relaxed);
		prod = atomic_load_explicit(&v->cq.prod, memory_order_acquire);
		if (cons == prod) {
			pthread_spin_unlock(&v->cq.poll_lock);
			return ENOENT; /* end_poll must not be called */
		}
	}
	v->cur_cons = cons;
	load_current(v, x);
	return 0;
}

static int next_poll(struct ibv_cq_ex *x)
{
	struct urnic_vcq *v = to_vcq(ibv_cq_ex_to_cq(x));

	if (v->cur_cons + 1 == atomic_load_explicit(&v->cq.prod, memory_order_acquire))
		return ENOENT;
	v->cur_cons++;
	load_current(v, x);
	return 0;
}

static void end_poll(struct ibv_cq_ex *x)
{
	struct urnic_vcq *v = to_vcq(ibv_cq_ex_to_cq(x));

	/* Everything up to and including the current completion is consumed. */
	atomic_store_explicit(&v->cq.cons, v->cur_cons + 1, memory_order_release);
	v->cur = NULL;
	pthread_spin_unlock(&v->cq.poll_lock);
}

static const struct urnic_cqe *cur(struct ibv_cq_ex *x)
{
	return to_vcq(ibv_cq_ex_to_cq(x))->cur;
}

static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *x)
{
	return (enum ibv_wc_opcode)cur(x)->opcode;
}

static uint32_t read_vendor_err(struct ibv_cq_ex *x)
{
	return cur(x)->vendor_err;
}

static uint32_t read_byte_len(struct ibv_cq_ex *x)
{
	return cur(x)->byte_len;
}

static __be32 read_imm_data(struct ibv_cq_ex *x)
{
	return cur(x)->imm_be;
}

static uint32_t read_qp_num(struct ibv_cq_ex *x)
{
	return cur(x)->qp_num;
}

static uint32_t read_src_qp(struct ibv_cq_ex *x)
{
	return cur(x)->src_qp;
}

static unsigned int read_wc_flags(struct ibv_cq_ex *x)
{
	return cur(x)->wc_flags;
}

_Static_assert((int)IBV_WC_TM_ADD == (int)URNIC_WC_TM_ADD &&
		       (int)IBV_WC_TM_NO_TAG == (int)URNIC_WC_TM_NO_TAG &&
		       (int)IBV_WC_TM_ERR == (int)URNIC_WC_TM_ERR &&
		       (int)IBV_WC_TM_RNDV_INCOMPLETE == (int)URNIC_WC_TM_RNDV_INCOMPLETE,
	       "tag matching completion opcodes and statuses");
_Static_assert((int)IBV_WC_TM_SYNC_REQ == (int)URNIC_WC_TM_SYNC_REQ &&
		       (int)IBV_WC_TM_MATCH == (int)URNIC_WC_TM_MATCH &&
		       (int)IBV_WC_TM_DATA_VALID == (int)URNIC_WC_TM_DATA_VALID,
	       "tag matching completion flags");

static void read_tm_info(struct ibv_cq_ex *x, struct ibv_wc_tm_info *tm_info)
{
	tm_info->tag = cur(x)->tm_tag;
	tm_info->priv = cur(x)->tm_priv;
}

static uint32_t read_zero32(struct ibv_cq_ex *x)
{
	return 0; /* SLID: no LIDs on RoCE */
}

static uint8_t read_zero8(struct ibv_cq_ex *x)
{
	return 0; /* DLID path bits: no LIDs on RoCE */
}

static uint8_t read_sl(struct ibv_cq_ex *x)
{
	return cur(x)->sl; /* a UD receive's packet type (queue/wq.h) */
}

static uint16_t read_cvlan(struct ibv_cq_ex *x)
{
	return 0; /* no VLAN stripped */
}

static uint32_t read_flow_tag(struct ibv_cq_ex *x)
{
	return 0; /* no flow steering */
}

static uint64_t read_completion_ts(struct ibv_cq_ex *x)
{
	return cur(x)->ts_ns; /* device clock ticks: ns */
}

static uint64_t read_completion_wallclock_ns(struct ibv_cq_ex *x)
{
	return cur(x)->ts_ns + (uint64_t)to_vcq(ibv_cq_ex_to_cq(x))->wall_offset_ns;
}

/* How long a wall-clock CQ keeps its offset from the device clock before reading the
 * two clocks again, and the error a reading may have: CLOCK_REALTIME is read before the
 * device clock, so the offset found is the true one less the time between the two
 * readings, never more. The largest offset seen is the best; a smaller one replaces it
 * only when smaller by more than the error (the wall clock was set back), else the CQ's
 * wall-clock timestamps would go back by the readings' jitter. */
#define WALL_REFRESH_NS 10000000
#define WALL_ERROR_NS 2000

/* Context: the CQ's poll_lock (ibv_start_poll found a completion). */
static void wall_refresh(struct urnic_vcq *v)
{
	uint64_t m1 = urnic_dev_now_ns(), m2;
	struct timespec ts;
	int64_t off;

	if (v->wall_read_ns && m1 - v->wall_read_ns < WALL_REFRESH_NS)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	m2 = urnic_dev_now_ns();
	if (v->wall_read_ns && m2 - m1 > WALL_ERROR_NS)
		return; /* preempted between the readings: read again next time */
	off = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - (int64_t)m2;
	if (!v->wall_read_ns || off > v->wall_offset_ns || v->wall_offset_ns - off > WALL_ERROR_NS)
		v->wall_offset_ns = off;
	v->wall_read_ns = m1;
}

/* A wall-clock CQ's start_poll: the offset from CLOCK_REALTIME follows the wall clock
 * when it is set, within WALL_REFRESH_NS. */
static int start_poll_wall(struct ibv_cq_ex *x, struct ibv_poll_cq_attr *attr)
{
	int ret = start_poll(x, attr);

	if (ret == 0)
		wall_refresh(to_vcq(ibv_cq_ex_to_cq(x)));
	return ret;
}

/* What ibv_create_cq_ex(3) may ask for: 0 or an errno. */
static int check_attr(struct ibv_context *context, const struct ibv_cq_init_attr_ex *attr)
{
	const uint64_t supported = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
				   IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK |
				   IBV_WC_EX_WITH_CVLAN | IBV_WC_EX_WITH_FLOW_TAG |
				   IBV_WC_EX_WITH_TM_INFO;
	const uint32_t mask = IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD;

	if ((attr->comp_mask & ~mask) || (attr->wc_flags & ~supported) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED)))
		return EOPNOTSUPP;
	if (attr->cqe > INT32_MAX || attr->comp_vector > INT32_MAX)
		return EINVAL;
	/* IBV_CQ_INIT_ATTR_MASK_PD names a parent domain (mlx5: EINVAL for a plain PD). */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (!attr->parent_domain || attr->parent_domain->context != context ||
	     !urnic_pd_is_parent(attr->parent_domain)))
		return EINVAL;
	return 0;
}

struct ibv_cq_ex *urnic_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr)
{
	const uint64_t stamps =
		IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	struct ibv_pd *parent = NULL;
	const struct urnic_ring_mem *mem = NULL;
	struct urnic_vcq *v;
	struct ibv_cq_ex *x;
	int ret = check_attr(context, attr);

	if (ret) {
		errno = ret;
		return NULL;
	}
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		parent = attr->parent_domain;
		mem = urnic_parent_hold(parent); /* its ring from the parent's allocator */
	}
	v = urnic_cq_create(context, (int)attr->cqe, attr->cq_context, attr->channel,
			    (int)attr->comp_vector, mem, attr->wc_flags & stamps);
	if (!v) {
		if (parent)
			urnic_parent_release(parent);
		return NULL;
	}
	v->parent = parent;
	x = &v->ibcq_ex;
	x->comp_mask = 0;
	x->start_poll = attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK
				? start_poll_wall
				: start_poll;
	x->next_poll = next_poll;
	x->end_poll = end_poll;
	x->read_opcode = read_opcode;
	x->read_vendor_err = read_vendor_err;
	x->read_byte_len = read_byte_len;
	x->read_imm_data = read_imm_data;
	x->read_qp_num = read_qp_num;
	x->read_src_qp = read_src_qp;
	x->read_wc_flags = read_wc_flags;
	x->read_slid = read_zero32;
	x->read_sl = read_sl;
	x->read_dlid_path_bits = read_zero8;
	x->read_completion_ts = read_completion_ts;
	x->read_cvlan = read_cvlan;
	x->read_flow_tag = read_flow_tag;
	x->read_completion_wallclock_ns = read_completion_wallclock_ns;
	x->read_tm_info = read_tm_info;
	return x;
}

/* ibv_query_rt_values_ex(3): the raw clock in the units of completion timestamps, whole
 * in tv_nsec with tv_sec 0 as mlx5 reports its cycles (tv_sec * 10^9 + tv_nsec is the
 * same count). comp_mask in: what is asked; out: what was answered. */
int urnic_query_rt_values(struct ibv_context *context, struct ibv_values_ex *values)
{
	(void)context;
	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = (long)urnic_dev_now_ns();
	}
	return 0;
}
