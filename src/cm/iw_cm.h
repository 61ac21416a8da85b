/* SPDX-License-Identifier: MIT */
/*
 * iw_cm.h - rdma_cm over iWARP devices, as the kernel's cma.c drives iw_cm and siw: the
 * rdma_cm port is a TCP port on the device's address, a connection is a TCP connection
 * set up by MPA (RFC 5044 7.1, RFC 6581) with the application's private data and no
 * rdma_cm header, and once set up the socket goes to the device (dev/iw_conn.h). The
 * calls (iw_calls.c) work on the id; the process's iWARP CM thread (iw_cm.c) drives the
 * sockets during setup and queues the events. Context: any application thread.
 */
#ifndef URNIC_CM_IW_CM_H
#define URNIC_CM_IW_CM_H

#include "cm/rdmacm.h"
#include "dev/iw_setup.h"

/* Where an id's socket is (enum, printed by name in iw_cm.c). */
enum urnic_rdma_iw_phase {
	URNIC_RDMA_IW_BOUND,  /* bound, not listening or connecting */
	URNIC_RDMA_IW_LISTEN, /* listening */
	URNIC_RDMA_IW_TCP,    /* active: TCP connect under way */
	URNIC_RDMA_IW_MPA,    /* MPA frames awaited */
	URNIC_RDMA_IW_DECIDE, /* passive: the Request is up, the application answers */
	URNIC_RDMA_IW_UP,     /* the device has the socket */
	URNIC_RDMA_IW_DOWN,   /* over: refused, rejected, failed or disconnected */
};

/* An iWARP id's socket: the bound or listening one, or its connection's. A connection
 * accepted from a listener is the CM thread's until its Request makes the passive id. */
struct urnic_rdma_iw {
	int fd;		 /* -1 once the device has it, or closed */
	uint32_t slot;	 /* in the CM thread's table, + 1; 0: not watched */
	uint64_t number; /* the id's (a listener's, until the passive id exists) */
	struct urnic_rdma_dev *dev;
	uint8_t phase; /* enum urnic_rdma_iw_phase */
	bool owned;    /* an id holds it */
	uint32_t qpn;  /* the QP the connection is for */
	uint64_t deadline_ns;
	/* Active: the destination, when rdma_connect started, and when a refused connect is
	 * tried again (0: not; iw_cm.c, retry). */
	struct sockaddr_storage dst;
	socklen_t dst_len;
	uint64_t connect_ns;
	uint64_t retry_ns;
	/* Under urnic_rdma_lock: ESTABLISHED is queued; the device reported the end of the
	 * connection before that (its err + 1; 0: not). */
	bool up_posted;
	bool down_posted; /* DISCONNECTED is queued */
	int early_close;
	struct urnic_mpa_conn mpa;
};

/* The lock of every struct urnic_rdma_iw; taken before urnic_rdma_lock and the device
 * lock, never under them. */
extern pthread_mutex_t urnic_rdma_iw_lock;

/* Whether rd is an iWARP device: its verbs transport, as librdmacm tells them apart (an
 * id is an iWARP one when it holds a struct urnic_rdma_iw). */
bool urnic_rdma_dev_iwarp(const struct urnic_rdma_dev *rd);

/* iw_cm.c (under urnic_rdma_iw_lock): the CM thread's table and events. */
int urnic_rdma_iw_watch(struct urnic_rdma_iw *w, uint32_t events);
void urnic_rdma_iw_unwatch(struct urnic_rdma_iw *w);
void urnic_rdma_iw_post(struct urnic_rdma_iw *w, enum rdma_cm_event_type type, int status,
			const uint8_t *pd, size_t len, uint16_t ird, uint16_t ord);
void urnic_rdma_iw_end(struct urnic_rdma_iw *w);
void urnic_rdma_iw_tcp_failed(struct urnic_rdma_iw *w, int err);
int urnic_rdma_iw_hand_over(struct urnic_rdma_iw *w, const uint8_t *rest, size_t n);
int urnic_rdma_iw_flush(struct urnic_rdma_iw *w);
int urnic_rdma_iw_sink(struct urnic_rdma_dev *rd);
uint64_t urnic_rdma_iw_now_ns(void);
/* iw_counters.c: counting (for the process, and on rd's device as its iwcm_<name>
 * counter; rd may be NULL), and the counter's value and name, the refusals per reason. */
void urnic_rdma_iw_count(struct urnic_rdma_dev *rd, enum urnic_rdma_iw_counter c);
void urnic_rdma_iw_count_refusal(enum urnic_mpa_conn_reason r);
uint64_t urnic_rdma_iw_counter(enum urnic_rdma_iw_counter c, const char **name);
uint64_t urnic_rdma_iw_refusals(enum urnic_mpa_conn_reason r);

/* iw_calls.c: the rdma_* calls on an iWARP id (0 or -errno), and its events. */
int urnic_rdma_iw_bind(struct urnic_rdma_id *id);
int urnic_rdma_iw_listen(struct urnic_rdma_id *id, int backlog);
int urnic_rdma_iw_listen_any(struct urnic_rdma_id *id, int backlog);
int urnic_rdma_iw_connect(struct urnic_rdma_id *id, const struct rdma_conn_param *p);
int urnic_rdma_iw_accept(struct urnic_rdma_id *id, const struct rdma_conn_param *p);
int urnic_rdma_iw_reject(struct urnic_rdma_id *id, const void *pd, uint8_t len);
int urnic_rdma_iw_disconnect(struct urnic_rdma_id *id);
void urnic_rdma_iw_destroy(struct urnic_rdma_id *id);
int urnic_rdma_iw_translate(struct urnic_rdma_item *it, struct urnic_rdma_event *e);

#endif
