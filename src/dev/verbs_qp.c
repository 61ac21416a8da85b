/* SPDX-License-Identifier: MIT */
/*
 * verbs_qp.c - the device's side of the verbs layer's QPs, CQs, SRQs and multicast
 * groups (verbs_qp.h): the engine's QP table and state machine, its multicast table,
 * clock and event hooks, and the transport's UDP source ports and group sockets.
 *
 * The UDP source port follows the kernel's conventions: a connected QP (RC, UC) takes
 * rdma_get_udp_sport(flow label, its QPN, the peer's) when it gets its address vector
 * or destination QP; a UD QP, which talks to many peers, one port chosen at creation,
 * 0xc000 + hash_32(qpn, 14) as rxe_qp.c does. The port really used goes into the ICRC,
 * so the transport is asked for it then. A UD QP's messages are limited to the port MTU
 * (C10-93.1.1; rxe uses mtu_cap), kept in its path_mtu: UD has no path MTU attribute
 * (IBTA 10.3.1 table 91).
 */
#include "dev/verbs_qp.h"
#include "dev/iw_dev.h"
#include "dev/raw_port.h"
#include "engine/uet/uet_rc.h"

#include <errno.h>

/* rxe_qp.c: the UDP source port of a QP until an address vector sets the flow's. */
static uint16_t create_sport(uint32_t qpn)
{
	/* include/linux/hash.h hash_32(): GOLDEN_RATIO_32 multiply, top 14 bits. */
	return (uint16_t)(0xc000 | ((qpn * 0x61c88647u) >> (32 - 14)));
}

int urnic_dev_qp_create(struct urnic_dev *d, struct urnic_qp *qp, const struct urnic_ring_mem *mem,
			uint32_t max_send_wr, uint32_t max_send_sge, uint32_t max_recv_wr,
			uint32_t max_recv_sge)
{
	int ret;

	ret = urnic_wq_init_mem(&qp->sq, max_send_wr, sizeof(struct urnic_send_wqe), mem,
				URNIC_RING_SQ);
	if (!ret)
		ret = urnic_wq_init_mem(&qp->rq, max_recv_wr, sizeof(struct urnic_recv_wqe), mem,
					URNIC_RING_RQ);
	if (ret)
		goto free_rings;
	qp->sq.max_sge = max_send_sge;
	qp->rq.max_sge = max_recv_sge;
	qp->sq.max_inline = URNIC_MAX_INLINE;
	qp->state = URNIC_QPS_RESET;
	qp->attr.path_mtu = 256; /* IBTA: a new QP's path MTU; rxe starts the same */
	if (qp->type == URNIC_QPT_UD)
		qp->attr.path_mtu = urnic_mtu_bytes(d->active_mtu);

	pthread_mutex_lock(&d->lock);
	/* A raw packet QP's frames need the port's packet socket (raw_port.h). */
	ret = qp->type == URNIC_QPT_RAW_PACKET ? urnic_dev_raw_get(d) : 0;
	if (ret == 0) {
		ret = urnic_engine_qp_add(d->eng, qp);
		if (ret && qp->type == URNIC_QPT_RAW_PACKET)
			urnic_dev_raw_put(d);
	}
	if (ret == 0 && qp->type == URNIC_QPT_UD)
		qp->attr.peer.sport = urnic_udp_prepare_sport(d->udp, create_sport(qp->qpn));
	pthread_mutex_unlock(&d->lock);
	if (ret)
		goto free_rings;
	return 0;

free_rings:
	urnic_wq_fini(&qp->sq);
	urnic_wq_fini(&qp->rq);
	return ret;
}

void urnic_dev_qp_destroy(struct urnic_dev *d, struct urnic_qp *qp)
{
	pthread_mutex_lock(&d->lock);
	urnic_dev_iw_forget(d, qp); /* an iWARP QP's connection closes with it */
	/* The parting ACK (urnic_rc_parting_ack) is dated from now. */
	urnic_engine_qp_remove(d->eng, qp, urnic_dev_now_ns());
	urnic_dev_notify_cqs(d); /* completions released with it (UC sends held) */
	if (qp->type == URNIC_QPT_RAW_PACKET)
		urnic_dev_raw_put(d);
	pthread_mutex_unlock(&d->lock);
	urnic_wq_fini(&qp->sq);
	urnic_wq_fini(&qp->rq);
}

/*
 * A QP moved to RESET starts over (IBTA 10.3.1: its work queues are emptied): the
 * completions it left unpolled go too, as the mlx4 and mlx5 providers clean their CQs,
 * so that a QP brought back from the error state does not hand its old flushed work to
 * the next poll. Receives taken from an SRQ stay: their buffers belong to the SRQ and
 * would be lost. Context: the device lock (the engine pushes).
 */
static void discard_completions(struct urnic_qp *qp)
{
	struct urnic_cq *cqs[2] = { qp->send_cq, qp->recv_cq };

	for (int i = 0; i < 2; i++) {
		if (!cqs[i] || (i == 1 && cqs[1] == cqs[0]))
			continue;
		pthread_spin_lock(&cqs[i]->poll_lock);
		urnic_cq_discard_qp(cqs[i], qp->qpn, qp->srq != NULL);
		pthread_spin_unlock(&cqs[i]->poll_lock);
	}
}

int urnic_dev_qp_modify(struct urnic_dev *d, struct urnic_qp *qp, struct urnic_qp_attr *attr,
			enum urnic_qp_state cur, enum urnic_qp_state next, uint32_t mask,
			enum urnic_qp_state *state)
{
	int ret;

	pthread_mutex_lock(&d->lock);
	if ((mask & URNIC_QP_CUR_STATE) && cur != qp->state) {
		pthread_mutex_unlock(&d->lock);
		return -EINVAL;
	}
	cur = qp->state;
	if (!(mask & URNIC_QP_STATE))
		next = cur;
	ret = urnic_qp_check_modify(qp, attr, cur, next, mask);
	if (ret == 0 && (mask & (URNIC_QP_AV | URNIC_QP_DEST_QPN))) {
		uint32_t rqpn =
			(mask & URNIC_QP_DEST_QPN) ? attr->dest_qp_num : qp->attr.dest_qp_num;
		uint16_t sport = urnic_udp_roce_sport(attr->peer.flow_label, qp->qpn, rqpn);

		/* UET: the engine picks each packet's entropy value (engine/uet/reps.h);
		 * the QP's own is one of them, whose socket exists (device.c). */
		if (d->kind == URNIC_KIND_UET)
			sport = (uint16_t)(URNIC_UET_EV_BASE + sport % URNIC_UET_EVS);
		attr->peer.sport = urnic_udp_prepare_sport(d->udp, sport);
		mask |= URNIC_QP_AV;
	}
	if (ret == 0 && next == URNIC_QPS_RESET)
		urnic_dev_iw_forget(d, qp); /* a reset iWARP QP has no connection */
	if (ret == 0) {
		urnic_engine_qp_apply(d->eng, qp, attr, next, mask, urnic_dev_now_ns());
		*state = qp->state;
		if (next == URNIC_QPS_RESET)
			discard_completions(qp);
	}
	urnic_dev_notify_cqs(d); /* the flush of a move to the error state */
	pthread_mutex_unlock(&d->lock);
	if (ret == 0 && next == URNIC_QPS_ERR)
		urnic_dev_kick(d); /* the engine thread flushes its work */
	return ret;
}

void urnic_dev_qp_set_owner(struct urnic_dev *d, struct urnic_qp *qp, void *owner)
{
	pthread_mutex_lock(&d->lock);
	qp->owner = owner;
	pthread_mutex_unlock(&d->lock);
}

void urnic_dev_qp_query(struct urnic_dev *d, const struct urnic_qp *qp, enum urnic_qp_state *state,
			struct urnic_qp_attr *attr)
{
	pthread_mutex_lock(&d->lock);
	*state = qp->state;
	*attr = qp->attr;
	pthread_mutex_unlock(&d->lock);
}

/* ---- multicast ---- */

int urnic_dev_mcast_attach(struct urnic_dev *d, uint32_t qpn, const uint8_t ip[16],
			   uint32_t *attached)
{
	bool joined, left;
	int ret, added;

	if (!urnic_mcast_ip(d->ipv6, ip))
		return -EINVAL; /* ib_attach_mcast: rdma_is_multicast_addr */
	pthread_mutex_lock(&d->lock);
	ret = added = urnic_mcast_attach(&d->eng->mcast, d->ipv6, ip, qpn, &joined);
	if (ret > 0 && joined) {
		ret = d->udp ? urnic_udp_join(d->udp, ip) : -ENODEV;
		if (ret)
			urnic_mcast_detach(&d->eng->mcast, d->ipv6, ip, qpn, &left);
	}
	if (ret >= 0 && added > 0)
		(*attached)++;
	pthread_mutex_unlock(&d->lock);
	if (ret >= 0 && joined)
		urnic_dev_kick(d); /* the engine thread sleeps on the new socket too */
	return ret < 0 ? ret : 0;
}

int urnic_dev_mcast_detach(struct urnic_dev *d, uint32_t qpn, const uint8_t ip[16],
			   uint32_t *attached)
{
	bool left;
	int ret;

	if (!urnic_mcast_ip(d->ipv6, ip))
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	ret = urnic_mcast_detach(&d->eng->mcast, d->ipv6, ip, qpn, &left);
	if (!ret) {
		(*attached)--;
		if (left && d->udp)
			urnic_udp_leave(d->udp, ip);
	}
	pthread_mutex_unlock(&d->lock);
	return ret;
}

/* ---- completion queues ---- */

int urnic_dev_cq_create(struct urnic_dev *d, struct urnic_cq *cq, uint32_t cqe,
			const struct urnic_ring_mem *mem, bool timestamps)
{
	int ret = urnic_cq_init_mem(cq, cqe, mem);

	if (ret)
		return ret;
	/* Completion timestamps: the engine's time of the pass that produced them. */
	if (timestamps)
		cq->clock_ns = &d->eng->now_ns;
	cq->due = &d->cq_due; /* its channel's events: written by the device */
	return 0;
}

void urnic_dev_cq_destroy(struct urnic_dev *d, struct urnic_cq *cq)
{
	/* The engine may be delivering an event to this CQ. */
	pthread_mutex_lock(&d->lock);
	urnic_cq_detach_channel(cq);
	pthread_mutex_unlock(&d->lock);
	urnic_cq_fini(cq);
}

int urnic_dev_cq_resize(struct urnic_dev *d, struct urnic_cq *cq, uint32_t cqe)
{
	struct urnic_cq_ring r;
	int ret;

	/* The allocator may be the application's: called with no lock held. */
	ret = urnic_cq_ring_alloc(cq, cqe, &r);
	if (ret)
		return ret;
	/* The engine pushes completions under the device lock, pollers under poll_lock
	 * (an extended poll holds it from ibv_start_poll to ibv_end_poll). */
	pthread_mutex_lock(&d->lock);
	pthread_spin_lock(&cq->poll_lock);
	ret = urnic_cq_ring_swap(cq, &r);
	pthread_spin_unlock(&cq->poll_lock);
	pthread_mutex_unlock(&d->lock);
	urnic_cq_ring_free(&r); /* the old ring, or the new one refused */
	return ret;
}

/* ---- shared receive queues ---- */

int urnic_dev_srq_create(struct urnic_srq *srq, uint32_t max_wr, uint32_t max_sge,
			 const struct urnic_ring_mem *mem)
{
	return urnic_srq_init_mem(srq, max_wr, max_sge, mem);
}

void urnic_dev_srq_destroy(struct urnic_srq *srq)
{
	urnic_srq_fini(srq);
}

int urnic_dev_xrc_srq_add(struct urnic_dev *d, struct urnic_srq *srq)
{
	int ret;

	pthread_mutex_lock(&d->lock);
	ret = urnic_engine_srq_add(d->eng, srq);
	pthread_mutex_unlock(&d->lock);
	return ret;
}

void urnic_dev_xrc_srq_remove(struct urnic_dev *d, struct urnic_srq *srq)
{
	pthread_mutex_lock(&d->lock);
	urnic_engine_srq_remove(d->eng, srq);
	pthread_mutex_unlock(&d->lock);
}

void urnic_dev_srq_set_limit(struct urnic_dev *d, struct urnic_srq *srq, uint32_t limit)
{
	pthread_mutex_lock(&d->lock);
	srq->limit = limit;
	pthread_mutex_unlock(&d->lock);
}

uint32_t urnic_dev_srq_get_limit(struct urnic_dev *d, const struct urnic_srq *srq)
{
	uint32_t limit;

	pthread_mutex_lock(&d->lock);
	limit = srq->limit;
	pthread_mutex_unlock(&d->lock);
	return limit;
}

/* ---- events ---- */

static const struct urnic_dev_events *events;

static void on_qp_error(struct urnic_engine *e, struct urnic_qp *qp, enum urnic_qp_event ev)
{
	(void)e;
	if (events->qp_error)
		events->qp_error(qp, ev);
}

static void on_qp_last_wqe(struct urnic_engine *e, struct urnic_qp *qp)
{
	(void)e;
	if (events->qp_last_wqe)
		events->qp_last_wqe(qp);
}

static void on_srq_limit(struct urnic_engine *e, struct urnic_srq *srq)
{
	(void)e;
	if (events->srq_limit)
		events->srq_limit(srq);
}

void urnic_dev_events_set(struct urnic_dev *d, const struct urnic_dev_events *ev)
{
	events = ev;
	d->eng->hooks.qp_error = on_qp_error;
	d->eng->hooks.qp_last_wqe = on_qp_last_wqe;
	d->eng->hooks.srq_limit = on_srq_limit;
}
