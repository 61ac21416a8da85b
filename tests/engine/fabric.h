/* SPDX-License-Identifier: MIT */
/*
 * fabric.h - an in-process fabric for the engine tests: engines ("hosts") joined by
 * packet queues, a fake clock, fault injection from a fixed-seed PRNG, and helpers that
 * create PDs, MRs, RC QPs and CQs, connect, post and poll the way src/verbs does.
 *
 *   host 0: engine, 10.0.0.1 --- fabric queue (drop, dup, reorder, delay, corrupt) ---
 *   host 1: engine, 10.0.0.2          (hosts 2, 3: 10.0.0.3, 10.0.0.4 when asked for)
 *
 * UC and UD QPs (fab_qp_new_type, fab_connect for UC, fab_ud_ready) and shared receive
 * queues (fab_srq_new) are made the same way.
 *
 * Each engine's flush callback copies its tx batch (the packets as urnic_tx_commit laid
 * them out) into byte buffers addressed to the host that owns the destination IP. fabric_run() does
 * what src/dev/device.c does in one pass (progress, timers, progress, flush) for every
 * host, then delivers what is in flight with urnic_engine_rx(), and when nothing at all
 * is pending jumps the clock to the next timer deadline, so retransmission tests take
 * no wall time. Every packet sent is decoded into a trace (opcode, PSN, AckReq, AETH).
 * Nothing here touches the network; a test is one thread.
 */
#ifndef URNIC_TESTS_ENGINE_FABRIC_H
#define URNIC_TESTS_ENGINE_FABRIC_H

#include <stdbool.h>
#include <stdint.h>

#include "check.h"
#include "engine/engine.h"
#include "mem/mr.h"
#include "queue/wq.h"
#include "wire/pkt.h"
#include "wire/psn.h"

enum {
	FAB_MAX_HOSTS = 4,
	FAB_MAX_RULES = 8,
	FAB_CAPTURE_BYTES = 8192,
	FAB_CQE = 8192, /* CQ capacity of fab_qp_new() */
};

/* What the fabric did with a packet (recorded in the trace). */
enum fab_fate {
	FAB_FATE_SENT = 0, /* delivered (or queued for delivery) */
	FAB_FATE_DROPPED,
	FAB_FATE_DUPLICATED,
	FAB_FATE_CORRUPTED,
	FAB_FATE_HELD,
	FAB_FATE_DELAYED,
	FAB_FATE_MUTATED,
	FAB_FATE_NO_ROUTE,
	FAB_FATE_MARKED,   /* delivered with ECN CE */
	FAB_FATE_OVERFLOW, /* dropped: the bottleneck's queue was full (fab_bottleneck) */
};

/* One packet as it left an engine. */
struct fab_pktinfo {
	uint64_t index; /* order of sending over the whole fabric, from 0 */
	uint64_t t_ns;	/* fabric clock when sent */
	int src, dst;	/* host indexes; dst -1: no host has the address */
	uint16_t sport;
	uint32_t len; /* UDP payload bytes, ICRC included */
	uint8_t opcode;
	uint32_t psn;
	uint32_t dqpn;
	bool ackreq;
	bool se;
	bool has_aeth;
	uint8_t syndrome; /* AETH syndrome */
	uint32_t msn;
	uint32_t payload_bytes;
	uint8_t fate;	      /* enum fab_fate */
	uint8_t tos;	      /* the IP TOS it left with (the address vector's, ECN) */
	uint8_t direct_flags; /* URNIC_DIRECT_* beside it (fab_lanes) */
	uint8_t direct_nseg;
};

enum fab_action {
	FAB_PASS,
	FAB_DROP,
	FAB_DUP,     /* deliver it, then a copy after `hold` deliveries or `delay_ns` */
	FAB_CORRUPT, /* flip a byte the ICRC covers (payload, else the PSN) */
	FAB_HOLD,    /* deliver it after `hold` other packets were delivered (reorder) */
	FAB_DELAY,   /* deliver it delay_ns later on the fabric clock */
	FAB_MUTATE,  /* let mutate() edit the bytes, then recompute the ICRC */
	/* A congested queue's ECN marking (RFC 3168 §5): an ECN-capable packet (ECT) is
	 * delivered with CE; one that is not passes unmarked. */
	FAB_MARK_CE,
};

/* Which fields of a rule must match. */
enum fab_match {
	FAB_M_SRC = 1 << 0,
	FAB_M_OPCODE = 1 << 1,
	FAB_M_PSN = 1 << 2,
	FAB_M_INDEX = 1 << 3,
	FAB_M_PRED = 1 << 4,
};

struct fab_rule {
	uint32_t match; /* enum fab_match; 0 matches every packet */
	int src;
	uint8_t opcode;
	uint32_t psn;
	uint64_t index;
	bool (*pred)(const struct fab_pktinfo *pi, void *arg);
	void *arg;
	uint32_t skip;	/* let this many matching packets through first */
	uint32_t count; /* then act on this many (0: on every one) */
	enum fab_action action;
	uint32_t hold;
	uint64_t delay_ns;
	void (*mutate)(uint8_t *buf, uint32_t len, void *arg);
	bool capture; /* keep a copy of the first packet acted on (before mutation) */
	/* Out. */
	uint32_t seen; /* matching packets */
	uint32_t hits; /* packets acted on */
	uint32_t cap_len;
	struct fab_pktinfo cap_info;
	uint8_t cap[FAB_CAPTURE_BYTES];
};

struct fab_inflight {
	int src, dst;
	uint16_t sport;
	uint32_t len;
	uint8_t *buf;
	uint64_t at_ns; /* deliver no earlier than this */
	uint32_t hold;	/* deliver after this many packets behind it were delivered */
	bool noted;	/* with a direct placement note (fab_lanes) */
	uint8_t tos;	/* the IP TOS it arrives with */
	struct urnic_direct_note note;
};

struct fab_host {
	struct fabric *f;
	int idx;
	uint8_t ip[16];
	struct urnic_engine *e;
	uint64_t deadline; /* last urnic_engine_timers() answer */
	uint32_t nqps;	   /* live fab_qps */
	/* Send as Linux rxe does: each packet's ICRC for the next IPv4 ID of a counter
	 * starting at next_ip_id (A17.3.3); false: ID 0, as urnic's sockets send. */
	bool counts_ip_id;
	uint16_t next_ip_id;
	uint64_t tx_free_ns; /* fab_bottleneck: when its NIC has sent what it was given */
};

/*
 * A bottleneck before one host (fab_bottleneck): every packet to it waits in one FIFO
 * served at rate_bps, behind the bytes already there. A packet that finds more than
 * limit_bytes ahead of it is dropped (tail drop); an ECN-capable one that finds q bytes
 * is marked CE as a RED switch marks (RFC 3168 §5): never below kmin_bytes, with
 * probability rising to pmax_ppm at kmax_bytes, always above.
 */
struct fab_link {
	int to; /* the host behind it; -1: none */
	uint64_t rate_bps;
	uint64_t kmin_bytes, kmax_bytes, limit_bytes;
	uint32_t pmax_ppm;
	uint64_t free_ns; /* when the bytes queued so far have left */
	/* Out. */
	uint64_t marked, dropped, max_queue_bytes;
	uint64_t arrivals, queue_sum; /* the queue each arrival found, summed */
	uint64_t late_from_ns;	      /* ... and from this time on: */
	uint64_t late_arrivals, late_queue_sum, late_max_queue_bytes;
};

struct fabric {
	uint64_t now_ns;
	uint64_t rng;
	int nhosts;
	struct fab_host hosts[FAB_MAX_HOSTS];
	/* In flight. */
	struct fab_inflight *q;
	uint32_t qlen, qcap;
	uint64_t ndelivered;
	/* Random faults (parts per million), applied to packets no rule acted on. */
	uint32_t drop_ppm, dup_ppm, reorder_ppm, corrupt_ppm;
	int fault_src; /* -1: both directions, else only packets from this host */
	struct fab_rule rules[FAB_MAX_RULES];
	uint32_t nrules;
	/* Every packet sent, in order. */
	struct fab_pktinfo *trace;
	uint32_t ntrace, trace_cap;
	uint64_t npkts;
	uint64_t steps;
	/* fab_lanes: packets carry direct placement notes, as shared memory lanes do. */
	bool lanes;
	/* fab_uet: the hosts are UET devices (engine/uet/uet_rc.h); packets are UET
	 * datagrams, traced by their PDS type and PSN (a ACK's: its CACK). */
	bool uet;
	bool direct_fail;	/* the direct writes fail as the kernel may refuse them */
	bool pull_fail;		/* the direct reads (pulls) fail likewise */
	uint32_t direct_writes; /* done */
	uint32_t direct_reads;
	/* fab_bottleneck: each host's packets leave at line_bps (0: at once), one after the
	 * other, as from a NIC; then those to link.to queue at the link. */
	uint64_t line_bps;
	struct fab_link link;
};

/* Puts every host behind a NIC of line_bps and host link->to behind the bottleneck
 * *link (its `Out` fields zeroed): delivery then takes the packets' time on the wire. */
void fab_bottleneck(struct fabric *f, uint64_t line_bps, const struct fab_link *link);

/* Every host's packets travel as through shared memory lanes (transport/local.h): their
 * direct placement notes (wire/addr.h) go with them, each host's pid being FAB_PID(i),
 * and the engines' direct_write hook copies into the peer's memory (one process). */
#define FAB_PID(host) (4000u + (uint32_t)(host))
void fab_lanes(struct fabric *f);

struct fabric *fabric_new(int nhosts, uint64_t seed);
/* Makes every host a UET device: call before creating QPs. */
void fab_uet(struct fabric *f);
/* Frees the fabric; CHECKs that every QP and MR was destroyed and nothing is queued
 * that the engines could not have seen (pool leak check, house style 7). */
void fabric_free(struct fabric *f);

static inline struct urnic_engine *fab_engine(struct fabric *f, int host)
{
	return f->hosts[host].e;
}

static inline uint64_t fab_ctr(struct fabric *f, int host, enum urnic_counter c)
{
	return f->hosts[host].e->stats.counters[c];
}

uint32_t fab_random(struct fabric *f);

/* Rules: returns the rule as stored, to read its hits and capture later. */
struct fab_rule *fab_add_rule(struct fabric *f, const struct fab_rule *r);
void fab_clear_rules(struct fabric *f);
void fab_trace_clear(struct fabric *f);
/* Prints trace entries [from, to) to stderr, for debugging a failing test. */
void fab_trace_dump(const struct fabric *f, uint32_t from, uint32_t to);

/* Runs passes until until(f, arg) is true (checked before each pass) or the fabric is
 * quiescent (nothing to send, nothing in flight, no timer armed) or max_steps passes.
 * Returns until's last answer (true if until is NULL and the fabric went quiet). */
bool fabric_run(struct fabric *f, bool (*until)(struct fabric *f, void *arg), void *arg,
		uint64_t max_steps);
/* Runs until quiescent; CHECKs it gets there. */
void fabric_settle(struct fabric *f);
/* Puts what the engines have batched on the wire (into the trace), delivering nothing:
 * for a test that stopped fabric_run() right after an engine queued a packet. */
void fab_flush(struct fabric *f);

/* Delivers bytes to a host now, as if from src_ip:sport; with fix_icrc the ICRC is
 * recomputed for that flow first (buf is modified). */
void fab_inject(struct fabric *f, const uint8_t *src_ip, int dst, uint16_t sport, uint8_t *buf,
		uint32_t len, bool fix_icrc);
void fab_icrc_fix(const uint8_t *src_ip, const uint8_t *dst_ip, uint16_t sport, uint8_t *buf,
		  uint32_t len);
/* The same for a sender that gave the packet IPv4 ID ip_id (IBTA A17.3.3: the ICRC
 * covers it); fab_icrc_fix is ID 0, an unconnected DF socket's. */
void fab_icrc_fix_id(const uint8_t *src_ip, const uint8_t *dst_ip, uint16_t sport, uint16_t ip_id,
		     uint8_t *buf, uint32_t len);

/* ---- memory ---- */

struct urnic_mr *fab_reg(struct fabric *f, int host, struct urnic_pd *pd, void *buf, uint64_t len,
			 uint32_t access);
void fab_dereg(struct fabric *f, int host, struct urnic_mr *mr);

static inline struct urnic_sge fab_sge(const struct urnic_mr *mr, uint64_t off, uint32_t len)
{
	return (struct urnic_sge){ mr->iova + off, len, mr->key };
}

/* ---- QPs ---- */

struct fab_qp {
	struct urnic_qp qp;
	struct urnic_cq scq, rcq;
	struct fab_host *h;
};

struct fab_qp *fab_qp_new(struct fabric *f, int host, struct urnic_pd *pd, uint32_t max_send_wr,
			  uint32_t max_recv_wr, bool sq_sig_all);
/* Any transport; a UD QP gets FAB_UD_MTU as its port MTU (its message limit). With
 * srq set, the QP takes its receives from it. */
struct fab_qp *fab_qp_new_type(struct fabric *f, int host, struct urnic_pd *pd,
			       enum urnic_qp_type type, struct urnic_srq *srq, uint32_t max_send_wr,
			       uint32_t max_recv_wr, bool sq_sig_all);
void fab_qp_free(struct fab_qp *q);

enum { FAB_UD_MTU = 1024 };

/* RESET -> INIT (qkey) -> RTR -> RTS (sq_psn) of a UD QP, as ibv_ud_pingpong does. */
void fab_ud_ready(struct fab_qp *q, uint32_t qkey, uint32_t sq_psn);
/* The address of a host, as an address handle gives it. */
struct urnic_peer fab_peer(struct fabric *f, int host);

/* A shared receive queue of max_wr WQEs in host's PD pd. */
struct urnic_srq *fab_srq_new(struct urnic_pd *pd, uint32_t max_wr);
void fab_srq_free(struct urnic_srq *srq);
int fab_post_srq_recv(struct urnic_srq *srq, uint64_t wr_id, const struct urnic_sge *sge,
		      uint32_t nsge);

/* Connection attributes, in the units of struct urnic_qp_attr (path MTU in bytes). */
struct fab_conn {
	uint32_t mtu;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint32_t access;
	uint32_t psn_a; /* a's sq_psn == b's rq_psn */
	uint32_t psn_b; /* b's sq_psn == a's rq_psn */
};

/* MTU 1024, timeout 14 (67 ms), retry_cnt 7, rnr_retry 7, min_rnr_timer 12 (640 us),
 * 16 READ/atomics each way, every remote right, PSNs 0x100 and 0x200. */
struct fab_conn fab_conn_default(void);

/* check_modify + qp_apply, as src/verbs/qp.c does. Returns check_modify's answer. */
int fab_modify(struct fab_qp *q, const struct urnic_qp_attr *attr, enum urnic_qp_state next,
	       uint32_t mask);
/* RESET -> INIT -> RTR -> RTS of q towards peer (CHECKs every step); RC or UC, with
 * the attributes table 91 has for each. */
void fab_connect_one(struct fab_qp *q, const struct fab_qp *peer, const struct fab_conn *c,
		     uint32_t sq_psn, uint32_t rq_psn);
void fab_connect(struct fab_qp *a, struct fab_qp *b, const struct fab_conn *c);

/* Work requests, filled like src/verbs/post.c. Returns 0 or a positive errno. */
struct fab_send_wr {
	uint64_t wr_id;
	uint32_t opcode; /* enum urnic_wr_opcode */
	uint32_t flags;	 /* enum urnic_send_flag */
	uint32_t imm_be;
	uint64_t remote_addr;
	uint32_t rkey;
	uint64_t compare_add;
	uint64_t swap;
	/* BIND_MW: the window by its current R_Key (rkey is the new one), the region, the
	 * range (remote_addr, remote_len) and rights. FLUSH: the range length, placement
	 * type and selectivity level. */
	uint32_t mw_rkey;
	uint32_t mr_lkey;
	uint32_t mw_access;
	uint64_t remote_len;
	uint8_t flush_type;
	uint8_t flush_level;
	uint32_t num_sge;
	struct urnic_sge sge[URNIC_MAX_SGE];
	/* UD: destination, its QP, the Q_Key for the DETH. */
	struct urnic_peer ud_dst;
	uint32_t remote_qpn;
	uint32_t remote_qkey;
	/* XRC send QPs: the SRQ at the target (its XRCETH). */
	uint32_t xrc_srqn;
};

int fab_post_send(struct fab_qp *q, const struct fab_send_wr *wr);
int fab_post_recv(struct fab_qp *q, uint64_t wr_id, const struct urnic_sge *sge, uint32_t nsge);

/* Runs until n completions were polled from cq into out (CHECKs it). */
void fab_wait_cqes(struct fabric *f, struct urnic_cq *cq, struct urnic_cqe *out, int n);
/* Polls what is there without running. */
int fab_poll(struct urnic_cq *cq, struct urnic_cqe *out, int n);

/* ---- the usual two-host setup ---- */

struct fab_pair {
	struct fabric *f;
	struct urnic_pd pd[2];
	struct fab_qp *a; /* host 0 */
	struct fab_qp *b; /* host 1 */
};

void fab_pair_open(struct fab_pair *p, const struct fab_conn *c, uint64_t seed);
/* Destroys both QPs and the fabric (with its leak checks). MRs must be gone. */
void fab_pair_close(struct fab_pair *p);

/* A buffer with its MR. */
struct fab_buf {
	uint8_t *p;
	uint64_t len;
	struct urnic_mr *mr;
	int host;
};

void fab_buf_new(struct fabric *f, struct fab_buf *b, int host, struct urnic_pd *pd, uint64_t len,
		 uint32_t access);
void fab_buf_free(struct fabric *f, struct fab_buf *b);
void fab_fill(uint8_t *p, uint64_t len, uint32_t seed);

#define FAB_ALL_ACCESS                                                                             \
	(URNIC_ACCESS_LOCAL_WRITE | URNIC_ACCESS_REMOTE_WRITE | URNIC_ACCESS_REMOTE_READ |         \
	 URNIC_ACCESS_REMOTE_ATOMIC)

/* Checks one completion's fields. */
#define CHECK_CQE(cqe, wrid, st, op, len)                                                          \
	do {                                                                                       \
		CHECK_EQ((cqe).wr_id, (wrid));                                                     \
		CHECK_EQ((cqe).status, (st));                                                      \
		CHECK_EQ((cqe).opcode, (op));                                                      \
		CHECK_EQ((cqe).byte_len, (len));                                                   \
	} while (0)

#endif
