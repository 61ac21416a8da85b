/* SPDX-License-Identifier: MIT */
/*
 * core.h - the engine core: the state of one device's engine, grouped by what it is
 * for, and the services every protocol part uses (count, transmit, complete, move a QP
 * to error). Protocol parts (roce/, later iwarp/ and uet/) include this header and
 * provide one const urnic_qp_ops table per QP type; the core calls them only through
 * that table, so calls go one way. Context: one thread at a time (the device lock).
 */
#ifndef URNIC_ENGINE_CORE_H
#define URNIC_ENGINE_CORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/ip_id.h"
#include "engine/mcast.h"
#include "engine/qp.h"
#include "mem/mr.h"
#include "stats/counters.h"
#include "wire/addr.h"
#include "wire/pkt.h"
#include "wire/txbatch.h"

enum {
	/* How long a responder holds an ACK for the application's answer by default:
	 * 100 us. With 20 us, an application off its CPU for longer (frequent on a VM)
	 * let the hold expire in bursts, each lone ACK making the next round trip
	 * slower (docs/performance.md, "ACK hold"). */
	URNIC_ACK_HOLD_DEFAULT_NS = 100000,
	URNIC_MAX_QP = 4096,		    /* QP table slots per device */
	URNIC_QP_WORDS = URNIC_MAX_QP / 64, /* words of a bit per QP slot */
	URNIC_MAX_XRC_SRQ = 4096,	    /* XRC SRQ table slots per device */
};

_Static_assert((int)URNIC_TX_FRAGS >= (int)URNIC_MAX_SGE, "a packet carries every SGE of a WQE");
_Static_assert((int)URNIC_DIRECT_MAX_SEGS >= (int)URNIC_MAX_SGE,
	       "a direct placement note names every SGE of a WQE");

struct urnic_engine;
struct urnic_raw;

/*
 * What a QP type provides (IBTA 9.7 RC, 9.8 UC, 9.8.4 UD; later iWARP and UET): one
 * const table per type, set in qp->ops when the QP joins the engine. The core validates
 * what is common (state, transport, P_Key, source) and runs the QP's pass; the table
 * does the rest. Every entry runs with the QP's counters selected (urnic_count).
 */
struct urnic_qp_ops {
	const char *name;
	uint32_t opcode_flag; /* the URNIC_OPF_* transport bit its opcodes carry */
	/* Its opcodes' transport bits (IBTA 9.2.1: RC 0x00, UC 0x20, UD 0x60, XRC 0xa0): the
	 * shared packet builders write RC operations, sent under this transport. */
	uint8_t opcode_base;
	bool connected; /* packets come from one peer, whose address is checked */
	/* A packet that passed the common checks; m: its envelope. */
	void (*rx)(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
		   const struct urnic_rx_meta *m);
	/* Whether that packet is one only the QP's peer could have sent (ip_id.h). */
	bool (*from_peer)(const struct urnic_qp *qp, const struct urnic_pkt *pkt);
	/* Sends what the QP has to send (not in error). Returns true if it did anything. */
	bool (*progress)(struct urnic_engine *e, struct urnic_qp *qp);
	/* In RTS: runs due timers, lowers *next to the earliest retransmission deadline
	 * and notes held completions or ACKs (urnic_engine_note_hold). */
	void (*timers)(struct urnic_engine *e, struct urnic_qp *qp, uint64_t *next, uint64_t *hold);
	/* In error: completes what is posted with FLUSH_ERR (IBTA 10.3.1). */
	void (*flush)(struct urnic_engine *e, struct urnic_qp *qp);
	/* Lets go of what is held for the application's answer, before the QP changes
	 * state (parting: it goes away). */
	void (*release_held)(struct urnic_engine *e, struct urnic_qp *qp, bool parting);
	/* The QP enters error (fatal: by itself); called before its state changes. */
	void (*enter_error)(struct urnic_engine *e, struct urnic_qp *qp, bool fatal);
};

typedef void (*urnic_tx_flush_fn)(struct urnic_engine *e);

/* Set by the driver at init (urnic_engine_init) and when it configures the device. */
struct urnic_engine_config {
	bool ipv6;
	uint8_t local_ip[16];
	bool skip_icrc_check; /* fuzzing only, as lwIP's checksum switch */
	/* IPv4 only: accept a packet whose ICRC is right for an IP ID other than the
	 * transport's hint that its source could have sent (urnic_icrc_ipv4_id, ip_id.h;
	 * Linux rxe counts the ID). Default on; false checks the ICRC for the hint only,
	 * all 32 bits (URNIC_ICRC_STRICT=1). */
	bool icrc_any_ipv4_id;
	/* The longest message, in bytes (limits.def max_msg_sz, 1..2^31, IBTA C9-94's
	 * 2^31 by default): longer work requests fail locally, longer READ and WRITE
	 * requests from a peer are refused, so one READ request draws at most this many
	 * response bytes. */
	uint32_t max_msg_bytes;
	/* Tests: after every pass, each QP outside the active set is run as a pass would
	 * and must do nothing (abort otherwise). Single-threaded drivers only. */
	bool audit_idle;
	uint32_t qpn_owner; /* this engine's slot among the processes sharing its address */
	/* An iWARP device (RFC 5040 over TCP, iwarp/iw_qp.h): its QPs are RC only, as siw's,
	 * and speak RDMAP on the TCP connection the driver gives each of them. */
	bool iwarp;
	/* A UET device (UE 1.0 PDS and SES on UDP 4793, uet/uet_rc.h): its RC QPs are
	 * carried by packet delivery contexts, its packets have no ICRC. */
	bool uet;
	/* NSCC off on its QPs (URNIC_CONGESTION=off): they send as the delivery
	 * context's window allows. */
	bool uet_cc_off;
	/* The longest an MPA Responder's QP holds its FPDUs for an Initiator that agreed no
	 * RTR (iwarp/iw_qp.h, URNIC_IW_AWAIT_FIRST_NS by default; 0: until the Initiator's
	 * first FPDU, however long, as RFC 5044 7.1.2 says; URNIC_IW_HOLD_US). */
	uint64_t iw_await_first_ns;
	/* DCQCN (cc/dcqcn.h, roce/cc.c) on the RC, UC and XRC QPs: their packets leave
	 * ECN-capable, one that arrives marked CE gets a CNP, a CNP cuts the QP's rate.
	 * Off: CNPs are counted and ignored, nothing is marked (URNIC_CONGESTION). */
	bool dcqcn;
	struct urnic_dcqcn_params dcqcn_params;
};

/* The QPs, and which of them a pass visits. */
struct urnic_qp_table {
	struct urnic_qp *qps[URNIC_MAX_QP];
	uint32_t end; /* one past the highest slot in use: the scans stop there */
	/* A bit per slot. A QP is `active` from the moment it may have work (a packet for
	 * it passed validation, a modify, a doorbell) until a pass finds it quiet
	 * (pass.c, qp_quiet), so a pass costs what the busy QPs cost, not what the idle
	 * ones do: with 1000 idle QP pairs beside a busy one, every pass used to visit
	 * all of them (bench/engine_cost -i). `awaiting`: the QPs that may have receive
	 * WQEs posted (urnic_engine_app_awaits), left lazily once found without. */
	uint64_t active[URNIC_QP_WORDS];
	uint64_t awaiting[URNIC_QP_WORDS];
	/* iWARP QPs that may have bytes for their connection or a close due
	 * (urnic_iw_tx_ready), left lazily once found with neither. */
	uint64_t iw_tx[URNIC_QP_WORDS];
	/* Posted work, a bit per slot, set by any thread (urnic_engine_doorbell) and
	 * taken into active/awaiting by the next pass. On its own cache lines: the
	 * posting threads write them. */
	_Alignas(64) _Atomic uint64_t doorbells[URNIC_QP_WORDS];
	/* The generation each slot gave its last QP, and the slot the next search for a
	 * free one starts at (urnic_engine_qp_add). */
	uint8_t gen[URNIC_MAX_QP];
	uint32_t next;
};

/* The XRC SRQs, by the number requests name in their XRCETH (IBTA A14): a slot per
 * SRQ, numbered as QPs are (a generation per slot, so a number does not come back
 * soon), and not shared with other processes: a request reaches the process that owns
 * its target QP, and the SRQ it names must be that process's (roce/xrc.c). */
struct urnic_srq_table {
	struct urnic_srq *srqs[URNIC_MAX_XRC_SRQ];
	uint8_t gen[URNIC_MAX_XRC_SRQ];
	uint32_t next;
};

struct urnic_engine_stats {
	uint64_t counters[URNIC_CTR_COUNT];
	uint64_t *shared;	      /* optional mirror a reader process can map */
	struct urnic_qp_counters *qp; /* URNIC_MAX_QP slots, or NULL: not kept */
	bool qp_owned;		      /* allocated by urnic_engine_init */
	uint64_t *cur_qp;	      /* the QP being served: urnic_count also counts here */
};

/*
 * Holding ACKs and send completions for the application's answer (roce/hold.c): the
 * knobs the driver sets, what it tells the engine, and what the engine tells it back.
 */
struct urnic_hold_policy {
	/* The longest a responder holds an ACK for the application's answer; 0: never. */
	uint32_t max_ns;
	/* How late the driver may serve a held ACK's deadline (engine thread asleep while
	 * the application polls); a QP whose timeout is not well above both never holds. */
	uint32_t slack_ns;
	/* The driver's word that an application is polling its CQs right now, so that an
	 * answer can come soon; nothing is held without it (true unless the driver says). */
	bool app_polling;
	/* Since the driver last cleared them: requests taken in (any QP type), and
	 * completions on QPs whose peer answers what they send that came before the
	 * answer (an ACK the peer held for its answer; a UC send completion whose hold
	 * expired). Without a request beside them, the answer is still to come, and the
	 * application may wait for it by polling memory rather than its CQ. */
	uint32_t rx_requests;
	uint32_t answers_due;
	/* Set by urnic_engine_timers(): the earliest held ACK or completion (0: none). It
	 * may be served late by up to slack_ns; the device wakes its engine thread only
	 * for timers.deadline. */
	uint64_t deadline;
};

struct urnic_engine_timers {
	/* Set when a timer expired and left work for the next progress (a retry to send,
	 * a hold to release); urnic_engine_pass() reads it. */
	bool fired;
	uint64_t deadline; /* the earliest retransmission/RNR timer (0: none) */
};

/* The IDs each IPv4 source is seen to send, to believe a recovered one (ip_id.h):
 * learned from packets an RC or UC QP took from its connected peer, and apart from
 * those a UD QP took, which any source can send (UD has no connected peer). */
struct urnic_engine_ip_ids {
	struct urnic_ip_id_table ids;
	struct urnic_ip_id_table ids_ud;
	/* What the packet being received showed about its IPv4 ID, learned once its QP
	 * accepts it (roce/rx.c). */
	struct urnic_ip_id_seen seen;
};

/* The affiliated asynchronous event (IBTA 11.6.3.1) of a QP that falls into error by
 * itself. FATAL is rxe's for every such error; an iWARP QP raises the one siw raises for
 * the same error, which may be none (its state and the CM's DISCONNECTED tell). */
enum urnic_qp_event {
	URNIC_QP_EV_FATAL,	/* IBV_EVENT_QP_FATAL */
	URNIC_QP_EV_REQ_ERR,	/* IBV_EVENT_QP_REQ_ERR */
	URNIC_QP_EV_ACCESS_ERR, /* IBV_EVENT_QP_ACCESS_ERR */
	URNIC_QP_EV_NONE,
};

/* How the engine reaches its driver. */
struct urnic_engine_hooks {
	urnic_tx_flush_fn flush; /* sends and empties the tx batch */
	/* A QP fell into error by itself (not by ibv_modify_qp): the verbs layer raises ev,
	 * never URNIC_QP_EV_NONE. May be NULL. */
	void (*qp_error)(struct urnic_engine *e, struct urnic_qp *qp, enum urnic_qp_event ev);
	/* A QP attached to an SRQ entered the error state, by itself or by modify: no
	 * more WQEs will be taken from the SRQ for it (IBV_EVENT_QP_LAST_WQE_REACHED,
	 * IBTA 10.2.9 / 11.6.3). May be NULL. */
	void (*qp_last_wqe)(struct urnic_engine *e, struct urnic_qp *qp);
	/* An armed SRQ fell below its limit (IBV_EVENT_SRQ_LIMIT_REACHED); the engine has
	 * disarmed it. May be NULL. */
	void (*srq_limit)(struct urnic_engine *e, struct urnic_srq *srq);
	/* Direct placement (wire/addr.h): writes len bytes at src where note d asks, in
	 * the process of qp's peer, and returns 0 when every byte is there (else the READ
	 * is answered with packets). May be NULL: never. */
	int (*direct_write)(struct urnic_engine *e, const struct urnic_qp *qp,
			    const struct urnic_direct_note *d, const uint8_t *src, uint32_t len);
	/* Its other half: reads the segments note d names, in the memory of the process
	 * of qp's peer, into ours at `to`; 0 when every byte is here. by_lane: only if the
	 * answer can go back through a lane to that process. May be NULL: offers to pull
	 * are not taken (nor asked for), WRITEs are not pulled. */
	int (*direct_read)(struct urnic_engine *e, const struct urnic_qp *qp,
			   const struct urnic_direct_note *d, const struct urnic_direct_seg *to,
			   uint32_t nto, bool by_lane);
	/* Whether a packet to qp's peer now goes through a lane that carries notes (a
	 * direct WRITE is no packet for any other way). May be NULL: never. */
	bool (*direct_ready)(struct urnic_engine *e, const struct urnic_qp *qp);
	void *io; /* the device or the test fabric */
};

struct urnic_cm;

struct urnic_engine {
	/* The time the running entry point was given (each takes it as an argument). */
	uint64_t now_ns;
	struct urnic_engine_config cfg;
	struct urnic_qp_table qpt;
	struct urnic_srq_table srqt;
	struct urnic_txbatch tx;
	struct urnic_engine_stats stats;
	struct urnic_hold_policy hold;
	struct urnic_engine_timers timers;
	struct urnic_engine_ip_ids ipid;
	struct urnic_mcast_table mcast; /* multicast groups and their UD QPs (mcast.h) */
	struct urnic_mr_table mrs;
	/* The payload of the packet being built, read here from on-demand regions
	 * (mem/odp.h) before the packet's commit copies it on: such memory is never
	 * touched by a plain load. */
	uint8_t odp_bounce[URNIC_TX_PAYLOAD_MAX];
	struct urnic_engine_hooks hooks;
	uint64_t rng;
	struct urnic_raw *raw; /* raw packet QPs' frames and flow rules (raw.h), or NULL */
	/* QP 1's connection manager (gsi.h), the driver's, or NULL: MADs are dropped. */
	struct urnic_cm *cm;
	/* The direct placement note of the packet being received (wire/addr.h), or NULL. */
	const struct urnic_direct_note *rx_direct;
	uint32_t gsi_psn;   /* the PSN of QP 1's next packet */
	uint16_t gsi_sport; /* its UDP source port, the transport's (gsi.h) */
};

/* ---- services for the protocol parts ---- */

static inline void urnic_count_n(struct urnic_engine *e, enum urnic_counter c, uint64_t n)
{
	e->stats.counters[c] += n;
	if (e->stats.cur_qp)
		e->stats.cur_qp[c] += n;
}

static inline void urnic_count(struct urnic_engine *e, enum urnic_counter c)
{
	urnic_count_n(e, c, 1);
}

/* The QP with this QPN, or NULL. */
struct urnic_qp *urnic_engine_qp_find(struct urnic_engine *e, uint32_t qpn);

/* The XRC SRQ with this number, or NULL (srqt.c). */
struct urnic_srq *urnic_engine_srq_find(struct urnic_engine *e, uint32_t srqn);

/* The QP may have work from now on: the next pass visits it. */
void urnic_engine_qp_wake(struct urnic_engine *e, const struct urnic_qp *qp);

/* The QP whose counters urnic_count() also moves (NULL: none). */
void urnic_engine_serve(struct urnic_engine *e, const struct urnic_qp *qp);

/* 32 random bits (xorshift64*, seeded by the driver from getrandom). */
uint32_t urnic_engine_random(struct urnic_engine *e);

/* A hold for the application's answer ending at `until`: past it, the pass runs
 * progress again to release what is held; else the earliest end goes into *hold. */
void urnic_engine_note_hold(struct urnic_engine *e, uint64_t until, uint64_t *hold);

/* Packet building: the next packet of the tx batch, to the QP's peer (sending the
 * batch first when it is full), and its commit (headers, payload copy, ICRC). */
struct urnic_txpkt *urnic_tx_begin(struct urnic_engine *e, const struct urnic_qp *qp);
void urnic_tx_commit(struct urnic_engine *e, struct urnic_txpkt *p);

/* Completions and errors. urnic_complete pushes cqe to cq; on overrun (IBTA 11.4.2.1)
 * the QP goes to error and it returns false. urnic_qp_to_error moves the QP to error
 * and flushes its work (IBTA 10.3.1), raising IBV_EVENT_QP_FATAL if it was not in
 * error; urnic_qp_to_error_event raises ev instead. */
bool urnic_complete(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_cq *cq,
		    const struct urnic_cqe *cqe, bool solicited);
void urnic_qp_to_error(struct urnic_engine *e, struct urnic_qp *qp);
void urnic_qp_to_error_event(struct urnic_engine *e, struct urnic_qp *qp, enum urnic_qp_event ev);

#endif
