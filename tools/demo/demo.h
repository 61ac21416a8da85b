/* SPDX-License-Identifier: MIT */
/*
 * demo.h - urnic-demo: two hosts on loopback, as two processes, connected by one RC QP
 * pair, running every operation for bandwidth, latency and data integrity.
 *
 *   parent (no verbs) --- report pipe <---- server child  URNIC_ADDR=<server ip>
 *                                     <---- client child  URNIC_ADDR=<client ip>
 *   server child <---- control socketpair ----> client child
 *
 * The client drives: for each run it asks the server to prepare (post receives, fill
 * or reset memory), runs and times it, and asks the server for its verdict. The
 * children send table rows and their device counters to the parent, which prints.
 */
#ifndef URNIC_DEMO_DEMO_H
#define URNIC_DEMO_DEMO_H

#include <infiniband/verbs.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "counters_file.h"

enum demo_op { DEMO_SEND, DEMO_WRITE, DEMO_READ, DEMO_FETCH_ADD, DEMO_CMP_SWAP, DEMO_NOPS };

enum demo_phase {
	DEMO_BW,  /* a window of outstanding work requests */
	DEMO_LAT, /* one at a time, each timed */
};

/* A run: one operation in one phase, the unit the two hosts agree on. Its number
 * seeds the data patterns. */
static inline uint32_t demo_run_id(enum demo_op op, enum demo_phase phase)
{
	return (uint32_t)op * 2 + (uint32_t)phase + 1;
}

extern const char *const demo_op_names[DEMO_NOPS];

static inline bool demo_op_atomic(enum demo_op op)
{
	return op == DEMO_FETCH_ADD || op == DEMO_CMP_SWAP;
}

enum {
	DEMO_WINDOW = 16,   /* outstanding WRs in a bandwidth run */
	DEMO_LAT_BYTES = 8, /* message size of the latency runs */
	DEMO_MAX_SIZE = 8 << 20,
	DEMO_BULK_MAX = 256 << 20, /* the server's bulk region; messages wrap beyond */
	DEMO_TIMEOUT_MS = 10000,   /* no completion for this long: the run failed */
};

struct demo_opts {
	uint32_t size;	/* bytes per message in the bandwidth runs */
	uint32_t iters; /* messages per SEND/WRITE/READ bandwidth run */
	uint32_t atomic_iters;
	uint32_t lat_iters;
	enum ibv_mtu mtu;
	char server_ip[64];
	char client_ip[64];
};

/* Where things are in each host's registered buffer. The same on both hosts but for
 * the bulk region, which only the server has. */
struct demo_layout {
	size_t atomic_off; /* server: FETCH_ADD target, CMP_SWAP target; client: results */
	size_t ping_off;   /* latency runs: outgoing message at +0, incoming at +ping_rx */
	size_t slots_off;  /* DEMO_WINDOW x size: the client's send sources, READ targets */
	size_t bulk_off;   /* server: bulk_slots x size, SEND, WRITE targets and READ sources */
	uint32_t bulk_slots;
	size_t len;
};

enum {
	DEMO_PING_RX = 2048,
	DEMO_CAS_OFF = 8, /* from atomic_off */
};

void demo_layout_init(struct demo_layout *l, const struct demo_opts *o, bool server);

static inline uint32_t demo_run_iters(const struct demo_opts *o, enum demo_op op,
				      enum demo_phase phase)
{
	if (phase == DEMO_LAT)
		return o->lat_iters;
	return demo_op_atomic(op) ? o->atomic_iters : o->iters;
}

/* ---- control messages between the hosts (SOCK_SEQPACKET) ---- */

struct demo_conn {
	uint32_t qpn;
	uint32_t psn;
	uint32_t rkey;
	uint64_t addr;
	uint8_t gid[16];
};

enum demo_msg_type {
	DEMO_MSG_CONN = 1, /* both: struct demo_conn in text */
	DEMO_MSG_START,	   /* client: prepare run (op, phase) */
	DEMO_MSG_READY,	   /* server: prepared (ok) */
	DEMO_MSG_DONE,	   /* client: the run is over (ok) */
	DEMO_MSG_RESULT,   /* server: its checks (ok, checked_bytes, text) */
	DEMO_MSG_QUIT,	   /* client: no more runs */
};

struct demo_msg {
	uint32_t type;
	uint32_t op;
	uint32_t phase;
	int32_t ok;
	uint64_t checked_bytes;
	char text[240];
};

/* ---- records to the parent (pipe writes under PIPE_BUF are atomic) ---- */

enum demo_role {
	DEMO_SERVER,
	DEMO_CLIENT,
};

struct demo_row {
	uint32_t op;
	uint32_t size;
	uint32_t iters;
	uint32_t lat_iters;
	double bw_bits_per_s;
	double ops_per_s;
	double lat_us; /* median; RTT/2 for SEND and WRITE, the round trip otherwise */
	int32_t ok;
	uint64_t checked_bytes;
	uint64_t checked_results; /* atomics: returned values checked */
	char text[240];		  /* what failed, or what was checked */
};

enum demo_record_type {
	DEMO_REC_ROW = 1,
	DEMO_REC_COUNTERS,
};

struct demo_record {
	uint32_t type;
	uint32_t role;
	int32_t err; /* COUNTERS: 0, or -errno reading the file */
	union {
		struct demo_row row;
		struct urnic_ctrfile ctr;
	};
};

_Static_assert(sizeof(struct demo_record) <= PIPE_BUF, "records must be written atomically");

/* ---- one host: verbs resources, connection, helpers (host.c) ---- */

struct demo_host {
	enum demo_role role;
	const char *ip;
	const struct demo_opts *o;
	struct demo_layout lay;
	int ctl;    /* control socket to the peer */
	int report; /* pipe to the parent */

	struct ibv_context *ctx;
	struct ibv_device_attr dev;
	struct ibv_pd *pd;
	struct ibv_cq *send_cq;
	struct ibv_cq *recv_cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	char dev_name[IBV_SYSFS_NAME_MAX];
	struct demo_conn local;
	struct demo_conn remote;
	struct demo_layout peer_lay; /* the other host's layout (addresses there) */
	uint32_t recv_slots;	     /* receives the QP holds: server, SEND bandwidth */
	char err[240];		     /* the first failure, for the report */
	bool err_told;		     /* err went to the client or the parent in a result */
};

/* Child exit statuses: the parent explains 1 and 3 from what the children printed. */
enum {
	DEMO_EXIT_OK = 0,
	DEMO_EXIT_FAIL = 1, /* a check or a verbs call failed; the child said what */
	DEMO_EXIT_USAGE = 2,
	DEMO_EXIT_NO_PEER = 3 /* the other host went away; it says why */
};

int demo_host_open(struct demo_host *h);
int demo_host_connect(struct demo_host *h);
void demo_host_close(struct demo_host *h);

/* Records the first failure in h->err (printf-style) and returns -EIO. Functions of
 * the demo return 0, -EIO (h->err says what failed) or -EPIPE (the other host is gone:
 * it says why). */
int demo_fail(struct demo_host *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int demo_send_msg(struct demo_host *h, const struct demo_msg *m);
/* Sends or receives one control message. Return 0 or -EPIPE. */
int demo_recv_msg(struct demo_host *h, struct demo_msg *m);

uint64_t demo_now_ns(void);

/* Polls `cq` for up to `max` completions, waiting up to DEMO_TIMEOUT_MS for the first.
 * Returns how many, or -1 (h->err says why: timeout, poll error, or a completion
 * with an error status). */
int demo_poll(struct demo_host *h, struct ibv_cq *cq, struct ibv_wc *wc, int max);

/* Reaps send completions without waiting, counting them off *outstanding; waits
 * (demo_poll) only while more than `max_outstanding` remain. */
int demo_reap_sends(struct demo_host *h, uint32_t *outstanding, uint32_t max_outstanding);

/* Waits until the 8 bytes at `off` in the buffer equal `want` (an RDMA WRITE landed),
 * polling the send CQ meanwhile, which moves the device's pipeline and reaps sends. */
int demo_wait_word(struct demo_host *h, size_t off, uint64_t want, uint32_t *outstanding);

int demo_post_send(struct demo_host *h, struct ibv_send_wr *wr);
int demo_post_recv(struct demo_host *h, uint64_t wr_id, size_t off, uint32_t len);

/* Sends the host's counters (its counters file) to the parent. */
void demo_report_counters(struct demo_host *h);

/* One side of the SEND or RDMA WRITE latency ping-pong (pingpong.c); the client times
 * each round trip into lat_ns (NULL on the server). */
int demo_pingpong(struct demo_host *h, enum demo_op op, uint32_t run, uint32_t iters,
		  uint64_t *lat_ns, uint64_t *checked_bytes);

int demo_server_main(struct demo_host *h);
int demo_client_main(struct demo_host *h);

#endif
