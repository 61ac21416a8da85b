/* SPDX-License-Identifier: MIT */
/*
 * engine.h - the sans-I/O RDMA engine of one device: receive dispatch, progress,
 * timers, and the batch of packets it wants sent.
 *
 * The engine never calls the kernel or reads a clock: the device (src/dev) sets now_ns,
 * feeds received UDP payloads to urnic_engine_rx(), calls urnic_engine_progress() and
 * urnic_engine_timers(), and sends what accumulates in the tx batch. Tests drive the
 * same code with an in-process fabric. Context: one thread at a time (the device lock).
 */
#ifndef URNIC_ENGINE_ENGINE_H
#define URNIC_ENGINE_ENGINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/ip_id.h"
#include "engine/mcast.h"
#include "engine/qp.h"
#include "mem/mr.h"
#include "wire/pkt.h"

enum urnic_counter {
#define URNIC_COUNTER(name, desc) URNIC_CTR_##name,
#include "engine/counters.def"
#undef URNIC_COUNTER
	URNIC_CTR_COUNT
};

extern const char *const urnic_counter_names[URNIC_CTR_COUNT];
extern const char *const urnic_counter_descs[URNIC_CTR_COUNT];

enum {
	/* 100 us: on this VM an application is off its CPU for more than 20 us often
	 * enough that a 20 us hold expired in bursts, each lone ACK making the next round
	 * slower (docs/performance.md, session 11). */
	URNIC_ACK_HOLD_DEFAULT_NS = 100000,
	URNIC_TX_HDR_MAX = 64,
	URNIC_TX_PAYLOAD_MAX = 4096, /* the largest path MTU (IBV_MTU_4096, verbs/qp.c) */
	URNIC_TX_BATCH = 64,
	URNIC_MAX_QP = 4096,   /* QP table slots per device */
	URNIC_QP_WORDS = URNIC_MAX_QP / 64, /* words of a bit per QP slot */
	URNIC_QPN_INDEX_BITS = 12,
	URNIC_QPN_OWNER_SHIFT = 20, /* QPN bits 23..20: which process on the address owns it */
	URNIC_QPN_OWNERS = 16,
};

/* One packet to send. The protocol fills in the destination, the headers and the
 * payload fragments (pointing into registered memory or WQE inline data);
 * urnic_tx_commit lays it out at `wire` as it goes on the wire (headers, payload, pad,
 * ICRC), in the engine's tx_wire right behind the batch's previous packet, and the
 * transport sends those bytes. */
struct urnic_txpkt {
	struct urnic_peer dst;
	uint32_t hdr_bytes;
	uint32_t payload_bytes;
	uint32_t nfrags;
	uint32_t trailer_bytes; /* pad + ICRC */
	uint8_t *wire;
	uint8_t hdr[URNIC_TX_HDR_MAX];
	struct urnic_frag frags[URNIC_MAX_SGE];
};

/* The bytes packet p takes on the wire (its UDP payload). */
static inline uint32_t urnic_txpkt_bytes(const struct urnic_txpkt *p)
{
	return p->hdr_bytes + p->payload_bytes + p->trailer_bytes;
}

/* The most a packet takes: headers, payload, pad, ICRC. */
#define URNIC_TX_PKT_MAX (URNIC_TX_HDR_MAX + URNIC_TX_PAYLOAD_MAX + 8)

struct urnic_engine;
typedef void (*urnic_tx_flush_fn)(struct urnic_engine *e);

/* One QP's share of the device counters (counters.def): what happened to the packets
 * addressed to it and during its passes. Slots are indexed like the QP table (the QPN's
 * index bits); the I/O layer may move the table into shared memory so that `urnic
 * counters --qp` reads it live (src/dev/counters_shm.h). qpn 0: slot unused. */
struct urnic_qp_counters {
	uint32_t qpn;
	uint8_t type;  /* enum urnic_qp_type */
	uint8_t state; /* enum urnic_qp_state, as last changed */
	uint16_t reserved;
	uint64_t c[URNIC_CTR_COUNT];
};

/* Linux's default IP TTL / hop limit, which the kernel also gives RoCEv2 address
 * vectors (ib_resolve_eth_dmac takes the route's hop limit, not the caller's). */
#define URNIC_DEFAULT_TTL 64

struct urnic_engine {
	uint64_t now_ns;
	bool ipv6;
	uint8_t local_ip[16];
	bool skip_icrc_check; /* fuzzing only, as lwIP's checksum switch */
	/* IPv4 only: accept a packet whose ICRC is right for an IP ID other than the
	 * hint that its source could have sent (urnic_icrc_ipv4_id, ip_id.h; Linux rxe
	 * counts the ID). Default on; false checks the ICRC for the hint only, all 32 bits
	 * (URNIC_ICRC_STRICT=1). */
	bool icrc_any_ipv4_id;
	/* IPv4 ID to check the next received packet's ICRC for first: the transport sets
	 * segment k of a GRO super-packet to k, the ID Linux gives segment k of the GSO
	 * send it came from (inet_gso_segment). Only a first guess: any other ID is then
	 * recovered as above. */
	uint16_t rx_ip_id_hint;
	/* The received packet's IPv4 TOS / IPv6 traffic class and TTL / hop limit, for the
	 * GRH area of a UD receive: the transport sets them per datagram where the socket
	 * shows them, and puts back rx_tos 0, rx_ttl 64 (Linux's defaults) after it. */
	uint8_t rx_tos, rx_ttl;
	/* The IDs each IPv4 source is seen to send, to believe a recovered one (ip_id.h):
	 * learned from packets an RC or UC QP took from its connected peer, and apart from
	 * those a UD QP took, which any source can send (UD has no connected peer). */
	struct urnic_ip_id_table ip_ids;
	struct urnic_ip_id_table ip_ids_ud;
	/* What the packet being received showed about its IPv4 ID, learned once its QP
	 * accepts it (engine.c, rx_from_peer). */
	struct urnic_ip_id_seen rx_ip_id;
	/* Multicast groups and their attached UD QPs (mcast.h). */
	struct urnic_mcast_table mcast;
	/* Set by urnic_engine_timers() when a timer expired and left work for the next
	 * urnic_engine_progress() (a retry to send); urnic_engine_pass() reads it. */
	bool timers_fired;
	/* The longest message, in bytes (limits.def max_msg_sz, 1..2^31, IBTA C9-94's
	 * 2^31 by default): longer work requests fail locally, longer READ and WRITE
	 * requests from a peer are refused, so one READ request draws at most this many
	 * response bytes. */
	uint32_t max_msg_bytes;
	/* The longest a responder holds an ACK for the application's answer (responder.c,
	 * rc_ack_held); 0: never. */
	uint32_t ack_hold_max_ns;
	/* How late the driver may serve a held ACK's deadline (engine thread asleep while
	 * the application polls); a QP whose timeout is not well above both never holds. */
	uint32_t ack_hold_slack_ns;
	/* The driver's word that an application is polling its CQs right now, so that an
	 * answer can come soon; no ACK is held without it (true unless the driver says). */
	bool app_polling;
	/* Set by urnic_engine_timers(): the earliest retransmission/RNR timer and the
	 * earliest held ACK (0: none). The second may be served late by a few tens of
	 * microseconds; the device wakes its engine thread only for the first. */
	uint64_t timer_deadline;
	uint64_t ack_hold_deadline;
	/* Since the driver last cleared them: requests taken in (any QP type), and
	 * completions on QPs whose peer answers what they send, come before the answer:
	 * an ACK on an RC QP of an answering application (resp.ack_interactive: the peer
	 * held it for its answer, so it left alone when the hold expired), a UC send
	 * completion whose hold expired (uc.c). Without a request beside them, the
	 * answer is still to come, and the application may wait for it by polling memory
	 * rather than its CQ (pipeline.c, watch_due). */
	uint32_t rx_requests;
	uint32_t answers_due;
	uint64_t counters[URNIC_CTR_COUNT];
	uint64_t *counters_shared; /* optional mirror a reader process can map */
	struct urnic_qp_counters *qp_ctrs; /* URNIC_MAX_QP slots, or NULL: not kept */
	bool qp_ctrs_owned;		   /* allocated by urnic_engine_init */
	uint64_t *cur_qp_ctrs; /* the QP being served: urnic_count also counts here */
	struct urnic_mr_table mrs;
	struct urnic_qp *qps[URNIC_MAX_QP];
	uint32_t qp_end; /* one past the highest slot in use: the scans stop there */
	/* The QPs a pass visits, a bit per slot of qps[]. A QP is in `active` from the
	 * moment it may have work (a packet for it passed validation, a modify, a
	 * doorbell) until a pass finds it quiet (engine.c, qp_quiet: nothing posted that
	 * has not completed, nothing owed to the peer, no timer armed), so a pass costs
	 * what the busy QPs cost, not what the idle ones do: with 1000 idle QP pairs
	 * beside a busy one, every pass visited all of them (bench/engine_cost -i,
	 * docs/performance.md, session 13). `awaiting`: the QPs that may have receive
	 * WQEs posted (urnic_engine_app_awaits), left lazily once found without. */
	uint64_t active[URNIC_QP_WORDS];
	uint64_t awaiting[URNIC_QP_WORDS];
	/* Posted work, a bit per slot, set by any thread (urnic_engine_doorbell) and
	 * taken into active/awaiting by the next pass. On its own cache lines: the
	 * posting threads write them. */
	_Alignas(64) _Atomic uint64_t doorbells[URNIC_QP_WORDS];
	/* Tests: after every pass, each QP outside `active` is run as a pass would and
	 * must do nothing (abort otherwise). Single-threaded drivers only: a post racing
	 * the check would look like a QP left out. */
	bool audit_idle;
	/* QPNs (urnic_engine_qp_add): the generation each slot gave its last QP, and the
	 * slot the next search starts at. */
	uint8_t qp_gen[URNIC_MAX_QP];
	uint32_t qp_next;
	uint32_t qpn_owner; /* this engine's slot among the processes sharing its address */
	struct urnic_txpkt tx[URNIC_TX_BATCH];
	uint32_t ntx;
	/* The batch's packets as they go on the wire, back to back in the order of tx[]
	 * (urnic_tx_commit): a run of packets to one peer is one buffer. */
	_Alignas(64) uint8_t tx_wire[URNIC_TX_BATCH * URNIC_TX_PKT_MAX];
	urnic_tx_flush_fn flush;
	/* Called when a QP falls into error by itself (not by ibv_modify_qp): the verbs
	 * layer raises IBV_EVENT_QP_FATAL, as rxe does (IBTA 11.6.3.1). May be NULL. */
	void (*qp_fatal)(struct urnic_engine *e, struct urnic_qp *qp);
	/* A QP attached to an SRQ entered the error state, by itself or by modify: no
	 * more WQEs will be taken from the SRQ for it (IBV_EVENT_QP_LAST_WQE_REACHED,
	 * IBTA 10.2.9 / 11.6.3). May be NULL. */
	void (*qp_last_wqe)(struct urnic_engine *e, struct urnic_qp *qp);
	/* An armed SRQ fell below its limit (IBV_EVENT_SRQ_LIMIT_REACHED); the engine has
	 * disarmed it. May be NULL. */
	void (*srq_limit)(struct urnic_engine *e, struct urnic_srq *srq);
	void *io; /* the device or the test fabric */
	uint64_t rng;
};

int urnic_engine_init(struct urnic_engine *e, bool ipv6, const uint8_t *local_ip,
		      urnic_tx_flush_fn flush, void *io, uint64_t seed);
void urnic_engine_fini(struct urnic_engine *e);

static inline void urnic_count_n(struct urnic_engine *e, enum urnic_counter c, uint64_t n)
{
	e->counters[c] += n;
	if (e->cur_qp_ctrs)
		e->cur_qp_ctrs[c] += n;
}

static inline void urnic_count(struct urnic_engine *e, enum urnic_counter c)
{
	urnic_count_n(e, c, 1);
}

/* Replaces the per-QP counter table (URNIC_MAX_QP slots, zeroed by the caller) and
 * carries the live slots over; NULL stops per-QP counting. The caller keeps ownership of
 * the new table. Context: under the device lock, outside a pass. */
void urnic_engine_set_qp_counters(struct urnic_engine *e, struct urnic_qp_counters *table);

uint32_t urnic_engine_random(struct urnic_engine *e);

/* Work was posted to the QP with this QPN: a send or receive WQE published by a store
 * of its queue's prod before this call. The next pass visits the QP. Context: any
 * thread, without the device lock. The bit is set by a read-modify-write with release
 * order, and the pass takes a word by an exchange with acquire order (engine.c,
 * take_doorbells): the two are ordered on the word, so either the pass's exchange reads
 * this bit, and then it sees the prod stored before it, or it came first and the bit
 * waits for the next pass. (A plain load of the bit first, to skip the write when it
 * is set, would need a full fence before it: the prod store could still be in flight
 * while the load sees a bit that the pass is about to take.) */
static inline void urnic_engine_doorbell(struct urnic_engine *e, uint32_t qpn)
{
	uint32_t i = qpn & (URNIC_MAX_QP - 1);

	atomic_fetch_or_explicit(&e->doorbells[i / 64], 1ull << (i % 64), memory_order_release);
}

/* QP table. */
int urnic_engine_qp_add(struct urnic_engine *e, struct urnic_qp *qp);
void urnic_engine_qp_remove(struct urnic_engine *e, struct urnic_qp *qp);
struct urnic_qp *urnic_engine_qp_find(struct urnic_engine *e, uint32_t qpn);

/* Applies a validated modify (urnic_qp_check_modify) to the QP: RESET clears all
 * protocol state, RTR/RTS set up PSNs and resources, ERR flushes (IBTA 10.3.1). */
void urnic_engine_qp_apply(struct urnic_engine *e, struct urnic_qp *qp,
			   const struct urnic_qp_attr *attr, enum urnic_qp_state next,
			   uint32_t mask);

/* A received UDP payload (BTH .. ICRC) from src_ip:sport. */
void urnic_engine_rx(struct urnic_engine *e, const uint8_t *src_ip, uint16_t sport,
		     const uint8_t *dst_ip, const uint8_t *buf, size_t len);

/* Sends what the QPs have to send (new work, retries, READ responses, ACKs) and
 * flushes work of QPs in error. Returns true if it did anything. */
bool urnic_engine_progress(struct urnic_engine *e);

/* Runs due timers; returns the earliest pending deadline (0: none). */
uint64_t urnic_engine_timers(struct urnic_engine *e);
/* One pass of the engine, as every driver runs it (the device, the test fabric, the
 * fuzz harness): progress, the timers, and progress again only if a timer left a retry
 * to send. Sets *deadline to the earliest pending timer (0: none); returns true if it
 * did anything. The caller receives before and flushes the tx batch after. */
bool urnic_engine_pass(struct urnic_engine *e, uint64_t *deadline);
/* True while some QP has work whose completion its application will poll for: sends
 * not yet completed, or receive WQEs posted. An application spinning on memory instead
 * (a one-sided target) awaits nothing here, and the engine thread must read the socket
 * for it. */
bool urnic_engine_app_awaits(struct urnic_engine *e);

/* Packet building, for the protocol parts. */
struct urnic_txpkt *urnic_tx_begin(struct urnic_engine *e, const struct urnic_qp *qp);
void urnic_tx_commit(struct urnic_engine *e, struct urnic_txpkt *p);

/* Completions and errors, for the protocol parts. */
void urnic_qp_to_error(struct urnic_engine *e, struct urnic_qp *qp);
bool urnic_complete(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_cq *cq,
		    const struct urnic_cqe *cqe, bool solicited);

/* RC protocol parts (src/engine/roce/). */
void urnic_rc_responder_rx(struct urnic_engine *e, struct urnic_qp *qp,
			   const struct urnic_pkt *pkt);
void urnic_rc_completer_rx(struct urnic_engine *e, struct urnic_qp *qp,
			   const struct urnic_pkt *pkt);
bool urnic_rc_requester_progress(struct urnic_engine *e, struct urnic_qp *qp);
/* answered: the requester of the same QP sent in this pass (a held ACK goes behind). */
bool urnic_rc_responder_progress(struct urnic_engine *e, struct urnic_qp *qp, bool answered);
/* The requester of qp just sent: an ACK that left alone shortly before could have been
 * carried, so the QP's ACKs are held from now on (responder.c, rc_ack_held). */
void urnic_rc_responder_answered(struct urnic_engine *e, struct urnic_qp *qp);
void urnic_rc_completer_timers(struct urnic_engine *e, struct urnic_qp *qp, uint64_t *next);
void urnic_rc_flush(struct urnic_engine *e, struct urnic_qp *qp);

/* UC (src/engine/roce/uc.c) and UD (src/engine/roce/ud.c): requester and responder.
 * udp_bytes is the whole UDP payload the packet came in (for the GRH's length). */
bool urnic_uc_requester_progress(struct urnic_engine *e, struct urnic_qp *qp);
void urnic_uc_responder_rx(struct urnic_engine *e, struct urnic_qp *qp,
			   const struct urnic_pkt *pkt);
/* UC send completions held for the peer's answer (uc.c): whether the sent WQEs wait
 * (true) or complete now; and their release before the QP changes state. */
bool urnic_uc_comp_held(struct urnic_engine *e, struct urnic_qp *qp);
void urnic_uc_release_held(struct urnic_engine *e, struct urnic_qp *qp);
bool urnic_ud_requester_progress(struct urnic_engine *e, struct urnic_qp *qp);
void urnic_ud_responder_rx(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
			   const uint8_t *src_ip, const uint8_t *dst_ip, size_t udp_bytes);

/* UD: the GRH area at the start of every receive buffer (IBTA 11.4.1.2, Post Receive
 * Request: the first 40 bytes receive the GRH, here the IP header standing for it). */
enum { URNIC_UD_GRH_BYTES = 40 };

#endif
