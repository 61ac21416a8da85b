/* SPDX-License-Identifier: MIT */
/*
 * core.h - the CM's insides, for the files of src/engine/cm only: the connection table,
 * the listeners, the two queues, and the helpers the message files share.
 *
 * Calls between the files go one way (scripts/check-calls): the queues, names, times and
 * the table at the bottom; conn.c (state changes, timers, sending) on them; one file per
 * message pair on conn.c; input.c, tick.c and cm.c on top.
 */
#ifndef URNIC_ENGINE_CM_CORE_H
#define URNIC_ENGINE_CM_CORE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "engine/cm/cm.h"

/* One connection (Linux: a cm_id_private with its timewait_info). */
struct cm_conn {
	enum urnic_cm_state state;
	bool in_use;
	bool app_owned; /* the application holds the handle; false: waiting out TimeWait */
	bool passive;
	bool sidr;
	bool in_rid;	      /* in the remote comm ID index */
	bool in_qpn;	      /* in the remote QPN index (live connections: stale checks) */
	bool disconnect_told; /* DISCONNECTED reported once */
	uint8_t transport;
	uint32_t local_id;
	uint32_t remote_id;
	uint32_t listener; /* index + 1 of the listener whose backlog slot it holds, or 0 */
	uint32_t gen;	   /* the generation bits of local_id */
	uint64_t tid;	   /* the REQ's TID, then a DREQ's: what answers echo */
	uint64_t service_id;
	uint64_t remote_guid; /* SIDR: a key of the requester's GID instead */
	uint64_t user;
	struct urnic_cm_addr peer;
	uint32_t local_qpn;
	uint32_t remote_qpn;
	uint32_t sq_psn;
	uint32_t rq_psn;
	uint16_t pkey;
	uint8_t path_mtu;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t av_timeout; /* cm.c av.timeout: the QP's ACK timeout; TimeWait's length */
	uint8_t service_timeout;
	uint8_t max_retries;
	uint8_t retries_left;
	uint64_t timeout_ns;  /* one wait for the answer (cm.c timeout_ms) */
	uint64_t deadline_ns; /* the timer: 0 none */
	uint32_t rid_next;    /* hash chains: index + 1, 0 ends */
	uint32_t qpn_next;
	bool sent_valid;
	uint16_t sent_attr;	       /* the attribute ID of sent[] */
	uint8_t sent[URNIC_MAD_BYTES]; /* the last MAD sent: retransmitted or repeated */
};

struct cm_listener {
	bool in_use;
	uint64_t service_id;
	uint32_t backlog;
	uint32_t pending; /* connections holding one of its backlog slots */
	uint64_t user;
};

struct cm_out_ring {
	struct urnic_cm_out *slots;
	uint32_t cap, head, count;
};

struct cm_event_ring {
	struct urnic_cm_event *slots;
	uint32_t cap, head, count;
};

/* A REQ that found no listener, waiting a moment for one (passive.c). */
struct cm_parked {
	bool used;
	uint64_t until;
	struct urnic_cm_addr from;
	struct urnic_cm_mad mad;
};

struct urnic_cm {
	struct urnic_cm_config cfg;
	struct cm_parked parked[URNIC_CM_PARK_SLOTS];
	struct cm_conn *conns;
	uint32_t idx_bits; /* local comm ID: owner << 24 | ((gen << idx_bits | index) ^ operand) */
	uint32_t operand;  /* 24 random bits (cm.c's random_id_operand) */
	uint32_t *free_ring; /* free slot indexes, oldest freed first */
	uint32_t free_head, free_count;
	uint32_t in_use;
	uint32_t *rid_buckets; /* heads of the hash chains, index + 1 */
	uint32_t *qpn_buckets;
	uint32_t bucket_mask;
	struct cm_listener *listeners;
	struct cm_out_ring out;
	struct cm_event_ring events;
	uint64_t next_deadline; /* no later than the earliest timer; 0 none */
	uint64_t rng;
	uint64_t counters[URNIC_CM_C_COUNT];
};

static inline void cm_count(struct urnic_cm *cm, enum urnic_cm_counter c)
{
	cm->counters[c]++;
}

/* Whether the queues can take `mads` more MADs and `events` more events. */
static inline bool cm_room(const struct urnic_cm *cm, uint32_t mads, uint32_t events)
{
	return cm->out.count + mads <= cm->out.cap && cm->events.count + events <= cm->events.cap;
}

/* Whether a MAD naming c came from c's peer; counts it dropped when not. A connection's
 * comm IDs are no secret, so its messages are taken from its peer's GID only. */
static inline bool cm_from_peer(struct urnic_cm *cm, const struct cm_conn *c,
				const struct urnic_cm_addr *from)
{
	if (!memcmp(c->peer.gid, from->gid, sizeof(from->gid)))
		return true;
	cm_count(cm, URNIC_CM_C_drop_wrong_peer);
	return false;
}

static inline uint32_t cm_index(const struct urnic_cm *cm, const struct cm_conn *c)
{
	return (uint32_t)(c - cm->conns);
}

/* 32 random bits: xorshift64* over the config's seed (no random source is read). */
static inline uint32_t cm_random(struct urnic_cm *cm)
{
	cm->rng ^= cm->rng >> 12;
	cm->rng ^= cm->rng << 25;
	cm->rng ^= cm->rng >> 27;
	return (uint32_t)((cm->rng * 0x2545f4914f6cdd1dull) >> 32);
}

/* queue.c: the output and event rings. */
int urnic_cm_queue_init(struct urnic_cm *cm);
void urnic_cm_queue_fini(struct urnic_cm *cm);
/* Encodes m for dst into the output ring (the caller checked room): 0 or -EINVAL. */
int urnic_cm_out_push(struct urnic_cm *cm, const struct urnic_cm_mad *m,
		      const struct urnic_cm_addr *dst, uint32_t conn);
void urnic_cm_out_push_raw(struct urnic_cm *cm, const uint8_t *mad, const struct urnic_cm_addr *dst,
			   uint32_t conn);
/* A zeroed event of type t for c (NULL: none), to fill and push. */
struct urnic_cm_event *urnic_cm_event_push(struct urnic_cm *cm, enum urnic_cm_event_type t,
					   const struct cm_conn *c);

/* state.c */
bool urnic_cm_transition_ok(enum urnic_cm_state from, enum urnic_cm_state to);

/* listener.c: backlog slots. */
struct cm_listener *urnic_cm_listener_find(struct urnic_cm *cm, uint64_t service_id);
/* Takes a backlog slot of l for c: false when the backlog is full. */
bool urnic_cm_backlog_take(struct urnic_cm *cm, struct cm_listener *l, struct cm_conn *c);
void urnic_cm_backlog_put(struct urnic_cm *cm, struct cm_conn *c);

/* table.c: slots, comm IDs, and the indexes of remote comm IDs and QPNs. */
int urnic_cm_table_init(struct urnic_cm *cm);
void urnic_cm_table_fini(struct urnic_cm *cm);
struct cm_conn *urnic_cm_conn_alloc(struct urnic_cm *cm);
void urnic_cm_conn_release(struct urnic_cm *cm, struct cm_conn *c);
/* The connection local_id names, or NULL. */
struct cm_conn *urnic_cm_conn_find(const struct urnic_cm *cm, uint32_t local_id);
/* The one whose remote comm ID and CA GUID (SIDR: GID key) are these, or NULL. */
struct cm_conn *urnic_cm_find_remote_id(const struct urnic_cm *cm, uint32_t remote_id,
					uint64_t guid, bool sidr);
/* The live one whose remote QPN and CA GUID are these, or NULL. */
struct cm_conn *urnic_cm_find_remote_qpn(const struct urnic_cm *cm, uint32_t qpn, uint64_t guid);
void urnic_cm_index_rid(struct urnic_cm *cm, struct cm_conn *c);
void urnic_cm_index_qpn(struct urnic_cm *cm, struct cm_conn *c);
void urnic_cm_unindex_rid(struct urnic_cm *cm, struct cm_conn *c);
void urnic_cm_unindex_qpn(struct urnic_cm *cm, struct cm_conn *c);
uint64_t urnic_cm_gid_key(const uint8_t *gid);

/* conn.c: what every message file does to a connection. */
void urnic_cm_set_state(struct urnic_cm *cm, struct cm_conn *c, enum urnic_cm_state next);
void urnic_cm_arm(struct urnic_cm *cm, struct cm_conn *c, uint64_t at_ns);
void urnic_cm_disarm(struct cm_conn *c);
/* Sends m (urnic_cm_send), moves c to next and arms m's retransmission until its answer
 * comes: max_retries more sends, timeout_ns apart. */
void urnic_cm_send_awaiting(struct urnic_cm *cm, struct cm_conn *c, const struct urnic_cm_mad *m,
			    enum urnic_cm_state next, uint64_t now_ns);
void urnic_cm_enter_timewait(struct urnic_cm *cm, struct cm_conn *c, uint64_t now_ns);
void urnic_cm_reset_to_idle(struct urnic_cm *cm, struct cm_conn *c);
/* The TID of a message c starts: cm.c's cm_form_tid. */
uint64_t urnic_cm_form_tid(const struct urnic_cm *cm, const struct cm_conn *c);
/* Sends m to c's peer, and keeps it in c->sent to send again. */
void urnic_cm_send(struct urnic_cm *cm, struct cm_conn *c, const struct urnic_cm_mad *m);
/* An event for c, with the MAD that caused it (NULL: none). */
void urnic_cm_tell(struct urnic_cm *cm, struct cm_conn *c, enum urnic_cm_event_type t,
		   int32_t status, const struct urnic_cm_mad *m);
/* The connection the application's handle names, or NULL. */
struct cm_conn *urnic_cm_handle(struct urnic_cm *cm, uint32_t conn);
/* Copies n bytes of private data into dst (cap bytes): -EINVAL when n > cap. */
int urnic_cm_copy_pdata(uint8_t *dst, size_t cap, const void *src, uint8_t n);

/* reply.c: answers to a MAD no connection takes (cm.c cm_issue_rej, cm_issue_drep). */
void urnic_cm_issue_rej(struct urnic_cm *cm, const struct urnic_cm_mad *rcvd,
			const struct urnic_cm_addr *to, uint16_t reason, uint8_t msg_code);
void urnic_cm_issue_drep(struct urnic_cm *cm, const struct urnic_cm_mad *dreq,
			 const struct urnic_cm_addr *to);
void urnic_cm_issue_sidr_rep(struct urnic_cm *cm, const struct urnic_cm_mad *sidr_req,
			     const struct urnic_cm_addr *to, uint8_t status);

/* The message files: a handler per received message, and what other files send. */
/* passive.c: holds a REQ that found no listener for URNIC_CM_PARK_NS (false: no room, it
 * is rejected now); the tick takes it to the listener that appeared, or rejects it
 * (reason 8) when its time is up, and lowers *next to the earliest wait left. */
bool urnic_cm_park(struct urnic_cm *cm, const struct urnic_cm_mad *m,
		   const struct urnic_cm_addr *from, uint64_t now_ns);
void urnic_cm_park_tick(struct urnic_cm *cm, uint64_t now_ns, uint64_t *next);

int urnic_cm_rx_req(struct urnic_cm *cm, const struct urnic_cm_mad *m,
		    const struct urnic_cm_addr *from, uint64_t now_ns);
int urnic_cm_rx_rtu(struct urnic_cm *cm, const struct urnic_cm_mad *m,
		    const struct urnic_cm_addr *from, uint64_t now_ns);
int urnic_cm_rx_rep(struct urnic_cm *cm, const struct urnic_cm_mad *m,
		    const struct urnic_cm_addr *from, uint64_t now_ns);
int urnic_cm_rx_mra(struct urnic_cm *cm, const struct urnic_cm_mad *m,
		    const struct urnic_cm_addr *from, uint64_t now_ns);
int urnic_cm_rx_rej(struct urnic_cm *cm, const struct urnic_cm_mad *m,
		    const struct urnic_cm_addr *from, uint64_t now_ns);
int urnic_cm_rx_dreq(struct urnic_cm *cm, const struct urnic_cm_mad *m,
		     const struct urnic_cm_addr *from, uint64_t now_ns);
int urnic_cm_rx_drep(struct urnic_cm *cm, const struct urnic_cm_mad *m,
		     const struct urnic_cm_addr *from, uint64_t now_ns);
int urnic_cm_rx_sidr_req(struct urnic_cm *cm, const struct urnic_cm_mad *m,
			 const struct urnic_cm_addr *from, uint64_t now_ns);
int urnic_cm_rx_sidr_rep(struct urnic_cm *cm, const struct urnic_cm_mad *m,
			 const struct urnic_cm_addr *from, uint64_t now_ns);
/* MRA for the REQ or REP c received (mra.c). */
void urnic_cm_send_mra(struct urnic_cm *cm, struct cm_conn *c, uint8_t service_timeout);
/* REJ from c (reject.c, cm_format_rej): the state decides the message code. */
void urnic_cm_send_rej(struct urnic_cm *cm, struct cm_conn *c, uint16_t reason, const void *ari,
		       uint8_t ari_len, const void *pdata, uint8_t pdata_len);
/* DREQ and DREP from c (disconnect.c). */
void urnic_cm_send_dreq(struct urnic_cm *cm, struct cm_conn *c, const void *pdata,
			uint8_t pdata_len, uint64_t now_ns);
void urnic_cm_send_drep(struct urnic_cm *cm, struct cm_conn *c, const void *pdata,
			uint8_t pdata_len, uint64_t now_ns);
/* DREQ retries ran out (disconnect.c): TimeWait, DISCONNECTED with -ETIMEDOUT. */
void urnic_cm_dreq_timeout(struct urnic_cm *cm, struct cm_conn *c, uint64_t now_ns);
/* SIDR_REP from c (sidr.c). */
void urnic_cm_send_sidr_rep(struct urnic_cm *cm, struct cm_conn *c,
			    const struct urnic_cm_sidr_reply_param *p);

#endif
