/* SPDX-License-Identifier: MIT */
/*
 * iw_dev.c - the iWARP CM and the device (dev/iw_conn.h): a set-up connection's socket
 * handed to the device for its QP, and the device's word that a connection ended, which
 * becomes RDMA_CM_EVENT_DISCONNECTED on the id.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "cm/iw_cm.h"

static bool sink_set[URNIC_RDMA_MAX_DEVS];

/* The sink (iw_conn.h): under the device lock, so it only finds the id and queues. */
static void closed(void *ctx, struct urnic_dev *d, void *user, int err)
{
	struct urnic_rdma_iw w = { .number = (uint64_t)(uintptr_t)user };
	struct urnic_rdma_id *id;

	(void)ctx;
	urnic_rdma_iw_count(urnic_rdma_dev_by_urnic(d), URNIC_RDMA_IW_C_disconnected);
	/* Before ESTABLISHED is queued: it is queued after it (urnic_rdma_iw_post). The id's
	 * iw lives while the id is not destroying (rdma_destroy_id marks it first). */
	pthread_mutex_lock(&urnic_rdma_lock);
	id = urnic_rdma_find_number(w.number);
	if (id && !id->destroying && id->iw && !id->iw->up_posted) {
		id->iw->early_close = err + 1;
		pthread_mutex_unlock(&urnic_rdma_lock);
		return;
	}
	pthread_mutex_unlock(&urnic_rdma_lock);
	w.dev = urnic_rdma_dev_by_urnic(d);
	urnic_rdma_iw_post(&w, RDMA_CM_EVENT_DISCONNECTED, err ? -err : 0, NULL, 0, 0, 0);
}

static const struct urnic_dev_iw_sink sink = { .closed = closed };

/* Names this library the device's sink, once. */
int urnic_rdma_iw_sink(struct urnic_rdma_dev *rd)
{
	struct urnic_rdma_dev *all;
	int n = urnic_rdma_devs(&all);
	long i = rd - all;

	if (i < 0 || i >= n || i >= URNIC_RDMA_MAX_DEVS)
		return -ENODEV;
	pthread_mutex_lock(&urnic_rdma_iw_lock);
	if (!sink_set[i]) {
		urnic_dev_iw_set_sink(rd->d, &sink);
		sink_set[i] = true;
	}
	pthread_mutex_unlock(&urnic_rdma_iw_lock);
	return 0;
}

/* The socket and the QP go to the device (iw_conn.h); the connection is then its. Its
 * IRD and ORD are those setup settled (an initiator's: the Reply's ORD and IRD, as
 * siw_proc_mpareply's relaxed negotiation takes them). */
int urnic_rdma_iw_hand_over(struct urnic_rdma_iw *w, const uint8_t *rest, size_t n)
{
	const struct urnic_mpa_params *p = &w->mpa.params;
	struct urnic_iw_conn_params cp = { .crc = p->crc, .ird = p->ird, .ord = p->ord };
	struct urnic_qp *qp = urnic_dev_iw_qp(w->dev->d, w->qpn);
	int mss = 0;
	socklen_t len = sizeof(mss);
	int rc;

	if (!qp)
		return -EINVAL;
	/* RFC 5044 7.1.2: the Responder sends no FPDU before the Initiator's first, which in
	 * RFC 6581's peer-to-peer mode is the RTR: the QP takes it (engine/iwarp/iw_rtr.c),
	 * so that it is in RTS, and takes posts, once rdma_accept returns, as siw's. siw as
	 * an Initiator resets a connection whose Responder spoke before it read the Reply;
	 * without an RTR the hold ends at its bound (URNIC_IW_AWAIT_FIRST_NS). */
	cp.await_first = !w->mpa.initiator;
	if (p->p2p && w->mpa.initiator)
		cp.rtr_out = p->rtr;
	else if (p->p2p)
		cp.rtr_in = p->rtr;
	if (getsockopt(w->fd, IPPROTO_TCP, TCP_MAXSEG, &mss, &len) || mss <= 0)
		mss = 1460;
	cp.mss = (uint32_t)mss;
	urnic_rdma_iw_unwatch(w);
	rc = urnic_dev_iw_attach(w->dev->d, qp, w->fd, &cp, rest, n, (void *)(uintptr_t)w->number);
	if (rc)
		return rc;
	w->fd = -1;
	w->phase = URNIC_RDMA_IW_UP;
	urnic_rdma_iw_count(w->dev, URNIC_RDMA_IW_C_established);
	return 0;
}
