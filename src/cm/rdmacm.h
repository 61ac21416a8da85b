/* SPDX-License-Identifier: MIT */
/*
 * rdmacm.h - the drop-in librdmacm's own state: an rdma_cm_id with what the kernel's
 * ucma/cma would keep for it, event channels and their queues, and the process's device
 * table. The device CM (dev/cm.h) reports events to one sink that only queues them; the
 * application's rdma_get_cm_event() turns them into rdma_cm events and does the QP work
 * librdmacm's ucma does (ucma_process_conn_resp). Context: any application thread.
 */
#ifndef URNIC_CM_RDMACM_H
#define URNIC_CM_RDMACM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "dev/cm.h"

enum { URNIC_RDMA_MAX_DEVS = 16, URNIC_RDMA_PDATA_MAX = 256 };

/* Where an id is, as the kernel's cma.c tracks it (enum rdma_cm_state). */
enum urnic_rdma_state {
	URNIC_RDMA_IDLE,
	URNIC_RDMA_ADDR_QUERY,
	URNIC_RDMA_ADDR_RESOLVED,
	URNIC_RDMA_ROUTE_RESOLVED,
	URNIC_RDMA_ADDR_BOUND,
	URNIC_RDMA_LISTEN,
	URNIC_RDMA_CONNECT,
	URNIC_RDMA_CONNECTED,
	URNIC_RDMA_DISCONNECT,
};

/* One device of the process, opened once and shared by every id on it (as librdmacm's
 * cma_device). */
struct urnic_rdma_dev {
	struct urnic_dev *d;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	bool cm_open;
};

/* A multicast join of an id (librdmacm's cma_multicast): the group, the application's
 * context, and whether the id's QP is attached to the group. */
struct urnic_rdma_mc {
	struct urnic_rdma_mc *next;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	void *context;
	uint16_t join_flags;
	union ibv_gid mgid;
	bool attached;
};

/* An iWARP connection's event (iw_cm.c), with what cma_iw_handler reports in its conn
 * param: initiator_depth and responder_resources as the iw_cm event's IRD and ORD. */
struct urnic_rdma_iw_ev {
	bool set;
	uint16_t ird, ord;
	uint8_t pd_len;
	uint8_t pd[URNIC_RDMA_PDATA_MAX - 1];
};

struct urnic_rdma_item {
	struct urnic_rdma_item *next;
	struct urnic_rdma_id *id;
	struct urnic_rdma_mc *mc; /* a join's MULTICAST_JOIN or MULTICAST_ERROR */
	bool local;		  /* made here (ADDR_RESOLVED, ...), not by the device CM */
	enum rdma_cm_event_type type;
	int status;
	struct urnic_rdma_dev *dev;
	struct urnic_cm_event ev;
	struct urnic_rdma_iw_ev iw; /* iWARP ids' events: type and status above */
};

struct urnic_rdma_channel {
	struct rdma_event_channel ch; /* the application's: ch.fd */
	pthread_mutex_t lock;
	struct urnic_rdma_item *head, *tail;
	/* The owner's reference and one per thread inside rdma_get_cm_event: with the
	 * last, a destroyed channel is buried (channel.c, channel_put), and its memory and
	 * fd go when a later one takes its grave. */
	_Atomic int refs;
	_Atomic bool dead;
	bool buried; /* under the graves' lock */
};

struct urnic_rdma_event {
	struct rdma_cm_event ev;
	struct urnic_rdma_id *id;
	uint8_t pdata[URNIC_RDMA_PDATA_MAX];
};

struct urnic_rdma_listen {
	struct urnic_rdma_dev *dev;
	uint32_t handle;
};

struct urnic_rdma_id {
	struct rdma_cm_id id;
	struct urnic_rdma_id *next; /* the registry (id.c) */
	uint64_t number;	    /* the CM's user value */
	bool sync;		    /* created without a channel: calls wait for their event */
	enum urnic_rdma_state state;
	struct urnic_rdma_dev *dev;
	bool has_conn;
	uint32_t conn;
	struct urnic_rdma_listen listens[URNIC_RDMA_MAX_DEVS];
	int nlistens;
	struct urnic_rdma_id *listen_id; /* a passive connection's listener */
	uint16_t port;			 /* bound, host order; 0 none */
	bool port_held;
	uint8_t port_addr[16]; /* the address the port is held on (ports.h) */
	struct ibv_sa_path_rec path;
	uint8_t tos;
	bool tos_set;
	int reuseaddr;
	int afonly;
	uint8_t ack_timeout;
	bool ack_timeout_set;
	uint8_t resp_res, init_depth; /* a passive connection's, from the REQ */
	uint32_t seq_num;
	uint32_t qkey;
	uint32_t ece_vendor, ece_options;
	int events_out; /* handed to the application, not yet acked */
	bool destroying;
	bool swallow_established; /* the CM's ESTABLISHED after our RTU: already reported */
	bool disconnected;	  /* DISCONNECTED reported once, as cma.c does */
	uint8_t conn_resp_res, conn_init_depth; /* the active side's, for RTR/RTS */
	/* A passive rdma_create_ep's QP attributes and PD, for the QP rdma_get_request
	 * makes on each new connection (librdmacm's qp_init_attr). */
	struct ibv_qp_init_attr *ep_qp_attr;
	struct urnic_rdma_mc *mcs; /* the id's multicast joins (mcast.c) */
	struct urnic_rdma_iw *iw;  /* an iWARP id's socket and MPA setup (iw_cm.h) */
};

/* The one lock of the library's state (registry, devices, event counts) and its
 * condition for rdma_destroy_id. Never held across urnic_dev_cm_begin. */
extern pthread_mutex_t urnic_rdma_lock;
extern pthread_cond_t urnic_rdma_cond;

static inline struct urnic_rdma_id *urnic_rdma_id_of(struct rdma_cm_id *id)
{
	return (struct urnic_rdma_id *)id;
}

static inline struct urnic_rdma_channel *urnic_rdma_channel_of(struct rdma_event_channel *c)
{
	return (struct urnic_rdma_channel *)c;
}

/* Returns -1 with errno set from a -errno value, or 0. */
int urnic_rdma_ret(int rc);

/* devices.c */
int urnic_rdma_devs(struct urnic_rdma_dev **out);
struct urnic_rdma_dev *urnic_rdma_dev_by_addr(const struct sockaddr *sa);
struct urnic_rdma_dev *urnic_rdma_dev_by_urnic(struct urnic_dev *d);
struct urnic_rdma_dev *urnic_rdma_dev_by_ctx(struct ibv_context *ctx);
int urnic_rdma_dev_open_cm(struct urnic_rdma_dev *rd);
/* Whether rd is a UET device, which offers no rdma_cm (dev/cm.c refuses its CM with
 * EOPNOTSUPP): a wildcard bind or listen passes it over. */
bool urnic_rdma_dev_uet(const struct urnic_rdma_dev *rd);

/* channel.c */
void urnic_rdma_queue(struct urnic_rdma_channel *c, struct urnic_rdma_item *it);
int urnic_rdma_queue_local(struct urnic_rdma_id *id, enum rdma_cm_event_type type, int status);
void urnic_rdma_purge(struct urnic_rdma_channel *c, struct urnic_rdma_id *id);
void urnic_rdma_move(struct urnic_rdma_channel *from, struct urnic_rdma_channel *to,
		     struct urnic_rdma_id *id);
bool urnic_rdma_sink_event(void *ctx, struct urnic_dev *d, const struct urnic_cm_event *ev);
int urnic_rdma_wait_event(struct urnic_rdma_id *id, enum rdma_cm_event_type want);

/* id.c */
void urnic_rdma_register(struct urnic_rdma_id *id);
void urnic_rdma_unregister(struct urnic_rdma_id *id);
struct urnic_rdma_id *urnic_rdma_find_conn(struct urnic_dev *d, uint32_t conn);
struct urnic_rdma_id *urnic_rdma_find_number(uint64_t number);
struct urnic_rdma_id *urnic_rdma_id_new(struct rdma_event_channel *ch, void *context,
					enum rdma_port_space ps, enum ibv_qp_type qp_type);
int urnic_rdma_set_dev(struct urnic_rdma_id *id, struct urnic_rdma_dev *rd);

/* event.c: an item of the queue as the application sees it; 0, or 1 to drop it. */
int urnic_rdma_translate(struct urnic_rdma_item *it, struct urnic_rdma_event *e);

/* conn.c */
int urnic_rdma_rtr_rts(struct urnic_rdma_id *id, uint8_t resp_res, uint8_t init_depth);
void urnic_rdma_cm_destroy(struct urnic_rdma_id *id);
void urnic_rdma_fill_conn_param(struct urnic_rdma_id *id, const struct urnic_cm_event *ev,
				struct rdma_conn_param *p, uint8_t *pdata);

int urnic_rdma_query(struct urnic_rdma_id *id, struct urnic_cm_conn_info *info);

/* mcast.c: a join's event as the application receives it; rdma_destroy_id's leaves and
 * rdma_destroy_qp's detaches. */
void urnic_rdma_mc_event(struct urnic_rdma_item *it, struct urnic_rdma_event *e);
void urnic_rdma_mc_leave_all(struct urnic_rdma_id *id);
void urnic_rdma_mc_detach_all(struct urnic_rdma_id *id);

/* qp.c */
int urnic_rdma_qp_to_err(struct urnic_rdma_id *id);

#endif
