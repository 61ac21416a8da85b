/* SPDX-License-Identifier: MIT */
/*
 * qp.h - queue pairs: attributes, the IBA state machine and the per-QP state of the
 * RC requester, completer and responder.
 *
 * IBTA 10.3 (QP states and transitions, table 91 for the attributes each transition
 * requires and allows), 9.7 (reliable service). The QP struct is shared by src/verbs
 * (creation, modify, posting) and the engine; the engine is the only writer of the
 * req/comp/resp parts. Context: modify and destroy hold the device lock.
 * UC and UD QPs use the same struct: their requester keeps req/comp (completion at
 * send time), their responder the message-in-progress part of resp. A QP created with
 * an SRQ takes its receives from it instead of rq. An XRC send QP is an RC requester
 * whose requests name an SRQ at the target; an XRC receive QP is an RC responder with no
 * queue of its own, whose requests take the SRQ, PD and CQ of the XRC SRQ they name
 * (IBTA Annex A14, engine/roce/xrc.c).
 * Out of scope here: SQD, alternate paths (APM).
 */
#ifndef URNIC_ENGINE_QP_H
#define URNIC_ENGINE_QP_H

#include <stdbool.h>
#include <stdint.h>

#include "cc/dcqcn.h"
#include "mem/mr.h"
#include "queue/srq.h"
#include "queue/wq.h"

/* QP states, numerically equal to enum ibv_qp_state (IBTA 10.3.1). */
#define URNIC_QP_STATES(X)                                                                         \
	X(RESET)                                                                                   \
	X(INIT)                                                                                    \
	X(RTR)                                                                                     \
	X(RTS)                                                                                     \
	X(SQD)                                                                                     \
	X(SQE)                                                                                     \
	X(ERR)

enum urnic_qp_state {
#define X(s) URNIC_QPS_##s,
	URNIC_QP_STATES(X)
#undef X
		URNIC_QPS_COUNT
};

const char *urnic_qp_state_name(enum urnic_qp_state s);

/* QP types, numerically equal to enum ibv_qp_type: XRC send (initiator) and receive
 * (target) QPs, IBTA Annex A14. */
enum urnic_qp_type {
	URNIC_QPT_RC = 2,
	URNIC_QPT_UC = 3,
	URNIC_QPT_UD = 4,
	URNIC_QPT_RAW_PACKET = 8, /* Ethernet frames, steered by flow rules (engine/raw.h) */
	URNIC_QPT_XRC_SEND = 9,
	URNIC_QPT_XRC_RECV = 10,
};

/* Attribute mask bits, numerically equal to enum ibv_qp_attr_mask. */
enum urnic_qp_attr_mask {
	URNIC_QP_STATE = 1 << 0,
	URNIC_QP_CUR_STATE = 1 << 1,
	URNIC_QP_EN_SQD_ASYNC_NOTIFY = 1 << 2,
	URNIC_QP_ACCESS_FLAGS = 1 << 3,
	URNIC_QP_PKEY_INDEX = 1 << 4,
	URNIC_QP_PORT = 1 << 5,
	URNIC_QP_QKEY = 1 << 6,
	URNIC_QP_AV = 1 << 7,
	URNIC_QP_PATH_MTU = 1 << 8,
	URNIC_QP_TIMEOUT = 1 << 9,
	URNIC_QP_RETRY_CNT = 1 << 10,
	URNIC_QP_RNR_RETRY = 1 << 11,
	URNIC_QP_RQ_PSN = 1 << 12,
	URNIC_QP_MAX_QP_RD_ATOMIC = 1 << 13,
	URNIC_QP_ALT_PATH = 1 << 14,
	URNIC_QP_MIN_RNR_TIMER = 1 << 15,
	URNIC_QP_SQ_PSN = 1 << 16,
	URNIC_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
	URNIC_QP_PATH_MIG_STATE = 1 << 18,
	URNIC_QP_CAP = 1 << 19,
	URNIC_QP_DEST_QPN = 1 << 20,
	URNIC_QP_RATE_LIMIT = 1 << 25,
};

/* Host-order attributes; mtu in bytes. Names follow struct ibv_qp_attr. */
struct urnic_qp_attr {
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	uint32_t access; /* enum urnic_access: remote rights the responder grants */
	uint32_t path_mtu;
	uint16_t pkey_index;
	uint8_t port_num;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t sgid_index;
	struct urnic_peer peer;
};

enum {
	URNIC_MAX_RD_ATOMIC = 128,
	/* The requester's window: PSNs sent and not yet acknowledged. rxe keeps 128
	 * (RXE_MAX_UNACKED_PSNS); the protocol bounds it only by half the 24-bit PSN
	 * space, which the responder needs to tell duplicates from new requests. With 128,
	 * eight 64 KiB messages, one QP's passes found the window full and sent what each
	 * ACK freed, a message or two per sendmmsg: ib_write_bw -s 65536 at one QP
	 * 35.3 -> 39.3 Gb/s with 256 (docs/performance.md, "Requester window"); 512 gained no
	 * more and doubles what a go-back-N retry may resend. */
	URNIC_MAX_UNACKED_PSNS = 256,
	/* The window for a READ or WRITE placed directly (wire/addr.h), in bytes: its PSNs
	 * carry no packets, so URNIC_MAX_UNACKED_PSNS, a bound on what is in flight, would
	 * hold one 1 MiB message at a time and leave both CPUs idle between messages (UCX's
	 * rendezvous GETs of an MPI window). Eight such messages keep both copying, and the
	 * responder's queue of copies (a few ms) well inside the retransmission timer: with
	 * 64 WRITEs of 4 MiB queued, ib_write_bw -a timed out and retried them in packets.
	 * At the smallest path MTU, 32768 PSNs: far below half the PSN space. */
	URNIC_MAX_UNACKED_DIRECT_BYTES = 8 << 20,
	URNIC_ACKREQ_EVERY = 64, /* AckReq inside long messages, as rxe (noack_pkts) */
};

/* A responder resource (IBTA 9.7.5.1.3): a READ being answered or an executed atomic,
 * ATOMIC_WRITE or FLUSH kept for duplicate replay (IBTA A19: both are answered by a
 * zero-length READ response and use responder resources, as in rxe). */
enum urnic_res_type {
	URNIC_RES_FREE,
	URNIC_RES_READ,
	URNIC_RES_ATOMIC,
	URNIC_RES_ATOMIC_WRITE,
	URNIC_RES_FLUSH,
};

struct urnic_res {
	uint8_t type;
	uint32_t first_psn;
	uint32_t last_psn;
	/* READ: the whole request and the replay cursor. */
	uint64_t va;
	uint32_t rkey;
	uint32_t key_gen; /* the key's generation when the READ was executed */
	/* The PD the key was checked against: the QP's, or, on an XRC receive QP, that of
	 * the SRQ its request named (each request may name another). */
	const struct urnic_pd *pd;
	uint32_t len;
	uint32_t next_psn; /* next response PSN to send */
	uint32_t sent_bytes;
	bool replying;	       /* READ responses, or the atomic ACK, still to send */
	bool first_psn_replay; /* replay starts mid-READ: MIDDLE/LAST opcodes */
	bool replayed;	       /* answering a duplicate: the requester may have it all */
	bool placed;  /* the data is in the requester's memory (direct placement, addr.h) */
	bool split;   /* ... but for the tail, which the requester was offered to pull */
	bool pulling; /* that offer holds the region (rkey, pull_gen) until it is done */
	uint32_t pull_gen;
	/* ATOMIC: the original value (IBTA 9.4.5 AtomicAckETH). */
	uint64_t orig;
	uint32_t msn;
};

/* Requester (IBTA 9.7.4) and completer (9.7.5.2) state. */
struct urnic_req {
	uint32_t psn;	    /* next PSN to send */
	uint32_t idx;	    /* SQ slot being sent */
	uint32_t off_bytes; /* bytes of that WQE already sent */
	uint32_t rd_atomic; /* READ/atomic requests outstanding */
	/* PSNs of the outstanding READs and WRITEs that asked for direct placement
	 * (sent_direct): they take PSNs but carry no packets, so the window of packets
	 * in flight (URNIC_MAX_UNACKED_PSNS) leaves them out. */
	uint32_t direct_psns;
	/* A go-back-N retry sends again from the oldest unacknowledged PSN, up to retry_end,
	 * the PSN after the last sent before it. The responder answers a duplicate with an
	 * ACK of the last request it executed (IBTA C9-105, rxe's duplicate_request), which
	 * may lie beyond what the retry has sent so far: the completer takes ACKs up to
	 * retry_end while retrying, and the requester then skips what they completed. */
	uint32_t retry_end;
	bool retrying;
	uint32_t noack_pkts;
	uint8_t retry_left;
	uint8_t rnr_left;
	bool need_retry;
	/* An RNR NAK named rnr_psn and no progress since: a sequence NAK for that PSN
	 * was drawn by the packets behind the refused one, not by the retry. */
	bool after_rnr;
	uint32_t rnr_psn;
	uint64_t rto_deadline_ns; /* 0: not armed */
	uint64_t rnr_deadline_ns;
};

struct urnic_comp {
	uint32_t psn;		 /* oldest PSN not yet acknowledged */
	uint32_t idx;		 /* oldest SQ slot not yet completed */
	uint32_t read_off_bytes; /* bytes of the READ at idx received so far */
	bool read_pulled;	 /* its tail was pulled from the responder (wire/addr.h) */
	bool read_retry_started; /* READ gap retried, no progress since (rxe started_retry) */
	/* UC: send completions held for the peer's answer (uc.c, urnic_uc_comp_held). */
	bool uc_interactive;	/* the peer answers what we send: hold */
	uint8_t uc_hold_misses; /* holds in a row that expired unanswered */
	uint64_t uc_hold_ns;	/* the held completions are released by then; 0: none */
	uint64_t uc_alone_ns;	/* when completions were last released without an answer */
};

/* A message on a QP whose SRQ does tag matching, as its first packet's TMH classified it
 * (roce/tm.c): where its data goes and how its receive completes. */
enum urnic_tm_msg_kind {
	URNIC_TM_MSG_NONE,	 /* not a SEND on a tag-matching SRQ */
	URNIC_TM_MSG_NO_TAG,	 /* whole, to a plain WQE: IBV_WC_TM_NO_TAG */
	URNIC_TM_MSG_UNEXPECTED, /* tagged, no tag matched: whole, to a plain WQE */
	URNIC_TM_MSG_EAGER,	 /* matched: the payload after the TMH, to the tagged buffer */
	URNIC_TM_MSG_RNDV,	 /* matched: the data is READ from the sender (no placement) */
};

struct urnic_tm_msg {
	uint8_t kind; /* enum urnic_tm_msg_kind */
	uint32_t handle;
	uint64_t tag;
	uint32_t app_ctx;
};

/* Responder (IBTA 9.7.5.1). */
struct urnic_resp {
	uint32_t epsn; /* next expected request PSN */
	uint32_t msn;
	bool sent_psn_nak;
	/* Multi-packet message in progress (IBTA 9.7.5.1.4 opcode sequence). */
	bool in_send;
	bool in_write;
	bool have_rwqe;
	bool uc_dropping;  /* UC: a message was broken, drop until a FIRST/ONLY (IBTA 9.8) */
	uint32_t rwqe_off; /* bytes placed in the current receive WQE */
	/* With an SRQ: the WQE taken out of the shared ring for the message in progress. */
	struct urnic_recv_wqe srq_wqe;
	struct urnic_tm_msg tm; /* with a tag-matching SRQ: the message in progress */
	/* RDMA WRITE in progress: its R_Key is resolved again for every packet, at the
	 * address the packet's data goes to, and must still name the grant the FIRST
	 * packet resolved (msg.c, urnic_roce_write_check). */
	uint64_t write_va; /* where the next packet's data goes */
	uint32_t write_rkey;
	uint32_t write_gen; /* write_rkey's generation at the FIRST packet */
	uint32_t write_resid;
	uint32_t write_len;
	/* Coalesced ACK waiting to go out (IBTA 9.7.5.1.1: an ACK covers all earlier PSNs),
	 * or a sequence / RNR NAK waiting behind READ responses still owed. */
	bool ack_pending;
	uint32_t ack_psn;
	uint8_t ack_syndrome;
	/* Holding the ACK for the application's answer (hold.c, urnic_roce_hold_ack). */
	bool ack_interactive;	 /* the application answers what it receives: hold */
	bool heard_since_send;	 /* a request came since the requester last sent: the answer */
	uint8_t ack_hold_misses; /* holds in a row that expired unanswered */
	uint64_t ack_hold_ns;	 /* the held ACK leaves by then at the latest; 0: not held */
	bool ack_hold_extended;	 /* once per hold: the application still waited for its ACK */
	uint64_t ack_alone_ns;	 /* when the last ACK left with no request behind it */
	/* The last positive ACK sent, and when (0: none yet): repeated once when the QP goes
	 * away soon after it (responder.c, urnic_rc_parting_ack). */
	uint32_t acked_psn;
	uint64_t acked_ns;
	struct urnic_res res[URNIC_MAX_RD_ATOMIC];
	uint32_t res_head;  /* next resource slot to use, FIFO */
	uint32_t res_count; /* max_dest_rd_atomic rounded up to a power of two */
	uint32_t replying;  /* resources with READ responses or an atomic ACK still to send */
};

/* DCQCN on a connected QP of a device that runs it (roce/cc.c): the notification
 * point's last CNP, and the reaction point, set up by the first CNP (until then the QP
 * sends at will, as an uncut one does). Cleared by RESET. */
struct urnic_qp_cc {
	struct urnic_dcqcn_np np;
	struct urnic_dcqcn_rp rp;
	bool rp_on;
	bool paced; /* its sends wait for the rate (urnic_dcqcn_rp_wake) */
};

struct urnic_qp_ops;
struct urnic_rss;
struct urnic_iw_qp;
struct urnic_uet_qp;

struct urnic_qp {
	uint32_t qpn;
	const struct urnic_qp_ops *ops; /* its type's (engine/core.h), set by urnic_engine_qp_add */
	enum urnic_qp_type type;
	enum urnic_qp_state state;
	bool sq_sig_all;
	struct urnic_pd *pd;
	struct urnic_cq *send_cq;
	struct urnic_cq *recv_cq;
	struct urnic_wq sq;    /* of struct urnic_send_wqe */
	struct urnic_wq rq;    /* of struct urnic_recv_wqe; unused with an SRQ */
	struct urnic_srq *srq; /* receives come from here when set (IBTA 10.2.9) */
	/* XRC receive QPs: their domain. srq, pd and recv_cq are those of the XRC SRQ
	 * the request being executed named (roce/xrc.c), NULL before the first. */
	struct urnic_xrcd *xrcd;
	struct urnic_qp_attr attr;
	struct urnic_req req;
	struct urnic_comp comp;
	struct urnic_resp resp;
	struct urnic_qp_cc cc;
	uint32_t flushed_rq; /* RQ entries already flushed, engine-private */
	void *owner;	     /* the ibv_qp, for async events */
	/* A raw packet RSS QP: its frames go to the queues of this table (engine/raw.h). */
	const struct urnic_rss *rss;
	/* An iWARP QP's connection state (engine/iwarp/iw.h): set by urnic_iw_qp_connect,
	 * freed when the QP is reset or removed; NULL otherwise. */
	struct urnic_iw_qp *iw;
	/* A UET device's RC QP's delivery context and messages (engine/uet/uet_rc.h): set
	 * when the QP enters RTR, freed when it is reset or removed; NULL otherwise. */
	struct urnic_uet_qp *uet;
};

/* Validation of ibv_modify_qp (IBTA 10.3, table 91). Returns 0 or -EINVAL.
 * port_mtu_bytes: the largest path MTU the port allows. */
int urnic_qp_check_modify(const struct urnic_qp *qp, const struct urnic_qp_attr *attr,
			  enum urnic_qp_state cur, enum urnic_qp_state next, uint32_t mask);

/* Retransmission timeout for the 5-bit timeout attribute: 4.096 us * 2^timeout
 * (IBTA 9.7.6.1.3); 0 means no timer. */
uint64_t urnic_qp_rto_ns(uint8_t timeout);

/* IB MTU enum (1..5) <-> bytes. */
uint32_t urnic_mtu_bytes(int ib_mtu);

#endif
