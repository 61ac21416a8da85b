/* SPDX-License-Identifier: MIT */
/*
 * cm.h - the IB Communication Manager of one device (IBTA Vol.1 ch. 12) as a sans-I/O
 * state machine: what Linux's drivers/infiniband/core/cm.c does for rdma_cm over RoCEv2.
 *
 * The caller feeds decoded CM MADs (wire/cm.h) with their sender and the time in, runs
 * urnic_cm_tick() at urnic_cm_next_deadline(), and drains two bounded queues after every
 * call: MADs to send to QP 1 of a GID (urnic_cm_out_pop) and events for the application
 * (urnic_cm_event_pop). Nothing here reads a clock, draws random bits or does I/O: time and
 * a seed come in as arguments. Out of scope: path migration (LAP/APR), RD, peer-to-peer
 * REQs, the rdma_cm private-data header (wire/cma.h: the caller's). Context: one thread at
 * a time per struct urnic_cm.
 */
#ifndef URNIC_ENGINE_CM_CM_H
#define URNIC_ENGINE_CM_CM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/cm.h"

struct urnic_cm;

/* Connection states (state.def): URNIC_CM_IDLE, URNIC_CM_REQ_SENT, ... */
enum urnic_cm_state {
#define URNIC_CM_STATE(name) URNIC_CM_##name,
#include "engine/cm/state.def"
#undef URNIC_CM_STATE
	URNIC_CM_STATE_COUNT
};

/* Events for the application (event.def): URNIC_CM_EVENT_CONNECT_REQUEST, ... */
enum urnic_cm_event_type {
#define URNIC_CM_EVENT(name, text) URNIC_CM_EVENT_##name,
#include "engine/cm/event.def"
#undef URNIC_CM_EVENT
	URNIC_CM_EVENT_COUNT
};

/* Counters (stats/cm_counters.def): URNIC_CM_C_rx_mads, ... */
enum urnic_cm_counter {
#define URNIC_CM_COUNTER(name, text) URNIC_CM_C_##name,
#include "stats/cm_counters.def"
#undef URNIC_CM_COUNTER
	URNIC_CM_C_COUNT
};

/* IBTA 12.6, table 109: the REJ reasons this CM sends or that rdma_cm acts on. */
enum urnic_cm_rej_reason {
	URNIC_CM_REJ_TIMEOUT = 1, /* ARI: the rejecting CA's GUID (an abandoned REQ) */
	URNIC_CM_REJ_INVALID_SERVICE_ID = 8,
	URNIC_CM_REJ_INVALID_TRANSPORT_TYPE = 9,
	URNIC_CM_REJ_STALE_CONN = 10,
	URNIC_CM_REJ_CONSUMER_DEFINED = 28,
};

/* IBTA 12.11, table 121: SIDR_REP status. */
enum urnic_cm_sidr_status {
	URNIC_CM_SIDR_SUCCESS = 0,
	URNIC_CM_SIDR_UNSUPPORTED = 1, /* no listener for the service ID */
	URNIC_CM_SIDR_REJECT = 2,
	URNIC_CM_SIDR_NO_QP = 3,
};

/* What rdma_cm puts in a REQ (Linux cma.c) and the MRA service timeout of cm.c's
 * duplicates (CM_MRA_SETTING, 4.096 us * 2^24: about 69 s). */
enum {
	URNIC_CM_RDMA_RESPONSE_TIMEOUT = 20,
	URNIC_CM_RDMA_MAX_RETRIES = 15,
	URNIC_CM_RDMA_PACKET_LIFETIME = 16,
	URNIC_CM_MRA_SETTING = 24,
	URNIC_CM_MAX_CONNS = 1 << 16,
};

/* A REQ for a service ID nobody listens on waits this long for a listener before its
 * REJ 'invalid service ID', in one of this many slots (passive.c; full: rejected now).
 * 50 ms: perftest -R's server reached rdma_listen 2 ms after its handshake too late
 * on a loaded 2-CPU machine. */
enum {
	URNIC_CM_PARK_SLOTS = 16,
	URNIC_CM_PARK_NS = 50000000,
};

/* A peer as the CM sees it: its GID (RoCEv2: its IP address, ::ffff:a.b.c.d for IPv4)
 * and the UDP source port its MADs came from (0: not known; replies go to 4791). */
struct urnic_cm_addr {
	uint8_t gid[16];
	uint16_t udp_sport;
};

struct urnic_cm_config {
	uint32_t max_conns;	/* connection table, 1..URNIC_CM_MAX_CONNS */
	uint32_t max_listeners; /* 1.. */
	uint32_t out_slots;	/* MADs queued for the caller, at least 4 */
	uint32_t event_slots;	/* events queued for the application, at least 4 */
	uint8_t owner;		/* the top 8 bits of every local comm ID (a router's key) */
	uint32_t hi_tid;	/* the upper half of the TIDs this CM starts (a MAD agent's) */
	uint64_t ca_guid;	/* the local CA GUID written into REQ and REP */
	uint8_t ack_delay;	/* the CA's ACK delay: the REP's Target ACK Delay */
	bool prepare_mra;	/* rdma_cm: answer duplicates of an unanswered REQ/REP with MRA */
	uint64_t seed;		/* randomness: comm IDs */
};

/* The REQ (IBTA 12.6.5), as ib_send_cm_req takes it. Exponents are 4.096 us * 2^n. */
struct urnic_cm_connect_param {
	uint64_t service_id;
	struct urnic_cm_addr peer; /* the passive side's GID */
	uint8_t local_gid[16];
	uint32_t qpn;
	uint32_t starting_psn; /* the PSN the passive side sends from: our receive PSN */
	uint8_t transport;     /* URNIC_CM_TRANSPORT_RC or _UC */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t remote_cm_response_timeout; /* exponent: how long the peer may take */
	uint8_t local_cm_response_timeout;  /* exponent: how long we take */
	uint8_t packet_life_time;	    /* exponent: the path's */
	uint8_t max_cm_retries;		    /* 0..15 */
	uint8_t retry_count;		    /* 0..7 */
	uint8_t rnr_retry_count;	    /* 0..7 */
	uint8_t path_mtu;		    /* 1..5: 256..4096 bytes */
	uint8_t srq;
	uint8_t flow_control;
	uint16_t pkey;
	uint32_t flow_label;
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t sl;
	uint8_t packet_rate;
	const void *private_data;
	uint8_t private_data_len; /* at most 92 */
	uint64_t user;		  /* the application's, carried in this connection's events */
};

/* The REP (IBTA 12.6.8), as ib_send_cm_rep takes it. */
struct urnic_cm_accept_param {
	uint32_t qpn;
	uint32_t starting_psn; /* the PSN the active side sends from: our receive PSN */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t rnr_retry_count;
	uint8_t failover_accepted;
	uint8_t flow_control;
	uint8_t srq;
	const void *private_data;
	uint8_t private_data_len; /* at most 196 */
};

/* The SIDR_REQ (IBTA 12.11), as ib_send_cm_sidr_req takes it. */
struct urnic_cm_sidr_param {
	uint64_t service_id;
	struct urnic_cm_addr peer;
	uint16_t pkey;
	uint32_t timeout_ms; /* one wait for the SIDR_REP (cma.c: 1 << (20 - 8)) */
	uint8_t max_cm_retries;
	const void *private_data;
	uint8_t private_data_len; /* at most 216 */
	uint64_t user;
};

/* The SIDR_REP (IBTA 12.11), as ib_send_cm_sidr_rep takes it. */
struct urnic_cm_sidr_reply_param {
	uint8_t status; /* enum urnic_cm_sidr_status */
	uint32_t qpn;
	uint32_t qkey;
	const void *info;
	uint8_t info_len; /* at most 72 */
	const void *private_data;
	uint8_t private_data_len; /* at most 136 */
};

/*
 * An event. conn is the connection's handle (its local comm ID); listener the
 * listener's handle for CONNECT_REQUEST. status: 0; -ETIMEDOUT when retries ran out; the
 * REJ reason for REJECTED; the SIDR_REP status for UNREACHABLE after a SIDR_REP (as
 * rdma_cm reports them). mad is the MAD that caused the event (hdr.attr_id 0 for a timer
 * or an action): the REQ's or SIDR_REQ's fields and private data for CONNECT_REQUEST,
 * the REP's for CONNECT_RESPONSE, the REJ's, DREQ's, RTU's or SIDR_REP's otherwise.
 * The REQ's responder resources are the initiator depth of the passive side, and the
 * reverse (cm.c cm_format_req_event).
 */
struct urnic_cm_event {
	enum urnic_cm_event_type type;
	uint32_t conn;
	uint32_t listener;
	uint64_t user;
	int32_t status;
	struct urnic_cm_addr peer;
	struct urnic_cm_mad mad;
};

/* A MAD to send: 256 bytes for a UD SEND_ONLY to QP dst_qpn (1) of dst.gid, Q_Key
 * URNIC_GSI_QKEY; conn is the connection that sent it (0: an answer no connection
 * holds). */
struct urnic_cm_out {
	struct urnic_cm_addr dst;
	uint32_t dst_qpn;
	uint32_t conn;
	uint8_t mad[URNIC_MAD_BYTES];
};

/* What a connection knows: its state, and what ib_cm_init_qp_attr would hand back for
 * its QP (sq_psn: the PSN our QP sends from; rq_psn: the one it expects). */
struct urnic_cm_conn_info {
	enum urnic_cm_state state;
	bool passive;
	uint32_t local_id;
	uint32_t remote_id;
	uint64_t service_id;
	uint64_t remote_guid;
	uint64_t user;
	struct urnic_cm_addr peer;
	uint32_t local_qpn;
	uint32_t remote_qpn;
	uint32_t sq_psn;
	uint32_t rq_psn;
	uint8_t path_mtu;
	uint8_t responder_resources; /* max_dest_rd_atomic */
	uint8_t initiator_depth;     /* max_rd_atomic */
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t ack_timeout; /* the QP's local ACK timeout (cm.c av.timeout) */
	uint16_t pkey;
	uint64_t deadline_ns; /* the connection's timer, 0 if none */
};

/* Defaults: 1024 connections, 64 listeners, 256 MADs and events queued, rdma_cm's MRA
 * on duplicates, hi_tid 1. The caller still sets ca_guid, owner and seed. */
void urnic_cm_config_init(struct urnic_cm_config *cfg);
/* 0, -EINVAL (a bound out of range) or -ENOMEM. */
int urnic_cm_new(struct urnic_cm **cmp, const struct urnic_cm_config *cfg);
void urnic_cm_free(struct urnic_cm *cm);

/* Listeners (ib_cm_listen, with rdma_listen's backlog): REQs and SIDR_REQs for
 * service_id become connections; at most backlog of them wait for the application's
 * answer (accept, reject, sidr_reply, destroy) at a time; a REQ beyond is dropped, as
 * Linux's ucma drops it, and a SIDR_REQ rejected. 0, -EINVAL, -EADDRINUSE (the service ID
 * has a listener), -ENOSPC (table full). unlisten: 0 or -ENOENT; waiting connections
 * stay. */
int urnic_cm_listen(struct urnic_cm *cm, uint64_t service_id, uint32_t backlog, uint64_t user,
		    uint32_t *listener);
int urnic_cm_unlisten(struct urnic_cm *cm, uint32_t listener);

/*
 * The application's actions. Each returns 0, or -errno with nothing changed: -ENOENT (no
 * such connection), -EINVAL (a parameter out of range, or a state that does not take the
 * action, as cm.c refuses it), -ENOMEM (connection table full), -EAGAIN (the output or
 * event queue has no room: drain them and call again), -EISCONN (establish, established).
 *   connect: REQ, REQ_SENT; *conn the new handle.
 *   accept: REP from REQ_RCVD or MRA_REQ_SENT.
 *   reject: REJ from a state before ESTABLISHED (ib_send_cm_rej); IDLE, or TimeWait after
 *     our REP.
 *   mra: MRA now for the REQ or REP received, with this service timeout.
 *   establish: active side, REP received: RTU, ESTABLISHED. Passive side, REP sent:
 *     ESTABLISHED without the RTU (traffic came first, IB_EVENT_COMM_EST).
 *   disconnect: DREQ from ESTABLISHED; DREP (and TimeWait) from DREQ_RCVD.
 *   destroy: the handle goes; what cm.c's cm_destroy_id sends goes out (REJ, DREQ, DREP,
 *     a SIDR_REP 'rejected'), and a connection owing TimeWait stays in the table until
 *     its TimeWait is over. No event follows.
 *   sidr_request / sidr_reply: SIDR_REQ (SIDR_REQ_SENT); SIDR_REP from SIDR_REQ_RCVD.
 */
int urnic_cm_connect(struct urnic_cm *cm, const struct urnic_cm_connect_param *p, uint64_t now_ns,
		     uint32_t *conn);
int urnic_cm_accept(struct urnic_cm *cm, uint32_t conn, const struct urnic_cm_accept_param *p,
		    uint64_t now_ns);
int urnic_cm_reject(struct urnic_cm *cm, uint32_t conn, uint16_t reason, const void *private_data,
		    uint8_t private_data_len, uint64_t now_ns);
int urnic_cm_mra(struct urnic_cm *cm, uint32_t conn, uint8_t service_timeout, uint64_t now_ns);
int urnic_cm_establish(struct urnic_cm *cm, uint32_t conn, const void *private_data,
		       uint8_t private_data_len, uint64_t now_ns);
int urnic_cm_disconnect(struct urnic_cm *cm, uint32_t conn, const void *private_data,
			uint8_t private_data_len, uint64_t now_ns);
int urnic_cm_destroy(struct urnic_cm *cm, uint32_t conn, uint64_t now_ns);
int urnic_cm_sidr_request(struct urnic_cm *cm, const struct urnic_cm_sidr_param *p, uint64_t now_ns,
			  uint32_t *conn);
int urnic_cm_sidr_reply(struct urnic_cm *cm, uint32_t conn,
			const struct urnic_cm_sidr_reply_param *p, uint64_t now_ns);
/* The process ends: every connection the application still holds goes as destroy()
 * takes it, sending what cm.c's cm_destroy_id sends when the kernel closes a dead
 * process's rdma_cm file (a DREQ for an established one). Returns how many are left for
 * want of room in the output queue: drain it and call again. */
uint32_t urnic_cm_destroy_all(struct urnic_cm *cm, uint64_t now_ns);
/* The application's context for a connection (a passive one starts with its listener's). */
int urnic_cm_set_user(struct urnic_cm *cm, uint32_t conn, uint64_t user);

/*
 * A MAD received from `from` at now_ns. The MAD is checked against the connection its
 * comm IDs name and that connection's state before anything changes; a MAD refused or
 * ignored is counted by reason (stats/cm_counters.def). Returns 0 when the MAD was taken (answered
 * or acted on), -EAGAIN when the queues had no room (dropped: the peer retries), or
 * -EPROTO when it was refused or ignored. _bytes decodes first (-EBADMSG).
 */
int urnic_cm_input(struct urnic_cm *cm, const struct urnic_cm_mad *mad,
		   const struct urnic_cm_addr *from, uint64_t now_ns);
int urnic_cm_input_bytes(struct urnic_cm *cm, const uint8_t *buf, size_t len,
			 const struct urnic_cm_addr *from, uint64_t now_ns);

/* Fires the timers due at now_ns: retransmissions (REQ, REP, DREQ, SIDR_REQ, each up to
 * Max CM Retries times), give-ups, TimeWait exits. Stops early when the queues fill; then
 * next_deadline stays at or before now. next_deadline: when to tick again, 0 if never. */
void urnic_cm_tick(struct urnic_cm *cm, uint64_t now_ns);
uint64_t urnic_cm_next_deadline(const struct urnic_cm *cm);

/* A REQ parked for a listener (from its sender's comm ID and CA GUID) that another
 * process on the address now listens for: it leaves the park without an answer, that
 * process's CM answers it. True if it was parked here. */
bool urnic_cm_unpark(struct urnic_cm *cm, uint32_t remote_comm_id, uint64_t remote_ca_guid);

/* Take the oldest queued MAD or event: true and *out filled, false when empty. */
bool urnic_cm_out_pop(struct urnic_cm *cm, struct urnic_cm_out *out);
bool urnic_cm_event_pop(struct urnic_cm *cm, struct urnic_cm_event *ev);

/* 0 and *info, or -ENOENT. */
int urnic_cm_query(const struct urnic_cm *cm, uint32_t conn, struct urnic_cm_conn_info *info);
/* Connections in the table, the ones waiting out TimeWait after destroy included. */
uint32_t urnic_cm_conns_in_use(const struct urnic_cm *cm);
uint64_t urnic_cm_counter(const struct urnic_cm *cm, enum urnic_cm_counter c);

const char *urnic_cm_state_name(enum urnic_cm_state s);
const char *urnic_cm_event_name(enum urnic_cm_event_type t);
const char *urnic_cm_counter_name(enum urnic_cm_counter c);

/* cm.c's cm_convert_to_ms in ns: 4.096 us * 2^t, approximated as 2^(t - 8) ms, at least
 * 1 ms. */
uint64_t urnic_cm_time_ns(uint8_t t);
/* cm.c's cm_ack_timeout: the QP's local ACK timeout exponent for a CA ACK delay and a
 * packet life time, 4.096 us * 2^t = ack delay + 2 * packet life time, rounded. */
uint8_t urnic_cm_ack_timeout(uint8_t ca_ack_delay, uint8_t packet_life_time);

#endif
