/* SPDX-License-Identifier: MIT */
/*
 * attacker.h - what the hostile attacker's scenarios (validation.c, requests.c,
 * sequence.c, flood.c, frames.c, lifetime.c, unreliable.c, limits.c) take from its
 * harness (attacker.c): the state A (the target process and what it reported, the
 * shadow copy of its memory, the last reply), packets built and sent by hand, replies
 * or silence, counter snapshots, the EXPECT/REQUIRE checks and the requests that must
 * work. Internal to hostile_attacker.
 */
#ifndef URNIC_TESTS_HOSTILE_ATTACKER_H
#define URNIC_TESTS_HOSTILE_ATTACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "counters_file.h"
#include "hostile.h"
#include "wire/pkt.h"
#include "wire/psn.h"

enum {
	MTU = 1024,
	REPLY_MS = 2000, /* how long an expected reply may take */
	SILENCE_MS = 30, /* after the target has processed a packet, its reply is already out */
	MAX_ANS = 70000, /* answer lines kept from one command */
	PKT_MAX = 9000,
};

/* ---- state ---- */

struct mrinfo {
	uint64_t addr;
	uint64_t len;
	uint32_t rkey;
};

struct qpinfo {
	uint32_t qpn;  /* the target's */
	uint32_t dest; /* ours, as the target knows it */
	uint32_t rq_psn, sq_psn;
	uint32_t epsn; /* the next PSN the target's responder expects from us */
	uint32_t msn;  /* the target's responder MSN as we count it */
	uint32_t rq_off[HOSTILE_MAX_RECV * 64]; /* posted receive slots, FIFO */
	uint32_t rq_head, rq_tail;
};

struct topts {
	int qps, recv, max_dest_rd_atomic, min_rnr_timer, timeout, retry, rnr_retry;
	int uc;		 /* the last uc QPs are UC (target --uc), or the uc before the UD ones */
	int ud;		 /* the last ud QPs are UD (target --ud) */
	int srq;	 /* the first srq QPs share an SRQ (target --srq) */
	int recv_bytes;	 /* the length of a receive WQE (target --recv-bytes), 0: a slot */
	const char *env; /* NAME=VALUE for the target's environment (URNIC_LIMITS=...), or NULL */
};

struct reply {
	struct urnic_pkt pkt;
	uint8_t buf[65536];
	size_t len;
	uint16_t sport;
	bool icrc_ok;
	bool decoded;
};

/* Everything the attacker knows; one per process (attacker.c). */
struct attacker {
	const char *target_path, *scenario;
	char addr_s[64], taddr_s[64], spoof_s[64];
	uint8_t addr[4], taddr[4], spoof[4];
	int fd, spoof_fd;
	/* the target */
	pid_t pid;
	int to_fd, from_fd;
	char lbuf[1 << 17];
	size_t lhave;
	char *ans[MAX_ANS];
	int nans;
	char dev[64];
	char ctr_path[256];
	struct mrinfo mr[HOSTILE_MAX_REGIONS];
	struct qpinfo qp[HOSTILE_MAX_QPS];
	int nqps;
	struct topts o;
	/* regions: HR_COUNT at start-up, then those add_region registered */
	int nregions;
	char rname[HOSTILE_MAX_REGIONS][32];
	uint8_t *shadow[HOSTILE_MAX_REGIONS];
	uint64_t base_lo[HOSTILE_MAX_REGIONS], base_hi[HOSTILE_MAX_REGIONS];
	uint64_t rx_sent; /* datagrams we sent to the target */
	uint16_t ip_id;	  /* the IPv4 ID an X_IPV4_ID packet's ICRC is for; 0x2bcd at start */
	unsigned probes;
	int failures;
	struct reply r; /* the last reply received */
};

extern struct attacker A;

/* ---- reporting ---- */

void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A failed check at file:line (fail_at: the caller's file); counted in A.failures. */
void fail_in(const char *file, int line, const char *expr, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define fail_at(line, ...) fail_in(__FILE__, line, __VA_ARGS__)

/* A failed EXPECT is counted and the scenario goes on; a failed REQUIRE ends it. */
#define EXPECT(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond))                                                                       \
			fail_at(__LINE__, #cond, __VA_ARGS__);                                     \
	} while (0)
#define REQUIRE(cond, ...)                                                                         \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fail_at(__LINE__, #cond, __VA_ARGS__);                                     \
			stop_target();                                                             \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

uint64_t now_ms(void);
void sleep_ms(unsigned ms);

/* The target's resident set (VmRSS, KiB), or -1. */
long target_rss_kb(void);
/* Sends n prepared datagrams on A.fd with sendmmsg, waiting out a full socket buffer. */
void send_all(struct mmsghdr *msg, uint32_t n);
/* Waits (at most 5 s) until the target has taken in all but `left` of the datagrams
 * sent (A.rx_sent): a flood or spray that overflowed its socket would test the kernel,
 * not the device, and a datagram lost there is not a guess tried. */
void keep_up(uint64_t left);

/* ---- the target process and its command pipe ---- */

void tcmd(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void start_target(const struct topts *o);
void stop_target(void);
struct topts topts_default(int qps);
/* A "qp I qpn ..." line (start-up, `create`) into A.qp[I]; false if it is not one. */
bool parse_qp_line(const char *line);
/* `reg NAME LEN FLAGS` on the target (target.c): the new region's index, its shadow as
 * the target filled it, its guards in the baseline. */
int add_region(const char *name, uint64_t len, const char *flags);

/* ---- counters ---- */

uint64_t ctr(const char *name);
uint64_t snap_of(const struct urnic_ctrfile *s, const char *name);
void settle(void);
uint64_t wait_ctr(const char *name, uint64_t want);
void snap(struct urnic_ctrfile *s);

#define EXPECT_CTR(snap, name, delta)                                                              \
	do {                                                                                       \
		uint64_t d_ = ctr(name) - snap_of(&(snap), name);                                  \
		EXPECT(d_ == (uint64_t)(delta), "counter %s moved by %llu, expected %llu", name,   \
		       (unsigned long long)d_, (unsigned long long)(delta));                       \
	} while (0)

/* ---- packets ---- */

enum xflag {
	X_BAD_ICRC = 1 << 0,	 /* one bit of the ICRC flipped */
	X_SPOOF = 1 << 1,	 /* from the spoofed source address */
	X_OTHER_SPORT = 1 << 2,	 /* ICRC computed for another UDP source port */
	X_FLIP_PAYLOAD = 1 << 3, /* a payload byte flipped after the ICRC was computed */
	X_IPV4_ID = 1 << 4,	 /* ICRC for IPv4 ID A.ip_id, as rxe counts it (sent with 0) */
};

struct urnic_pkt hdr(int qi, uint8_t opcode, uint32_t psn);
struct urnic_pkt write32(int qi, uint64_t off, uint8_t *data);
void send_raw(const uint8_t *buf, size_t len, bool spoof);
size_t build(const struct urnic_pkt *h0, const void *payload, uint32_t len, unsigned flags,
	     uint8_t *out, size_t cap);
void xmit(const struct urnic_pkt *h, const void *payload, uint32_t len, unsigned flags);

/* ---- replies ---- */

bool get_reply(int timeout_ms);
const char *opname(uint8_t op);
void describe(char *s, size_t cap);
bool expect_reply(int qi, uint8_t opcode, uint32_t psn, int syndrome, int64_t msn,
		  const char *what);
void expect_silence(const char *what);
void expect_silent_drop(const struct urnic_ctrfile *s, const char *what);
void expect_nak(int qi, uint32_t psn, uint8_t syndrome, const char *what);
void expect_qp_state(int qi, const char *state);

/* ---- requests that must work ---- */

void fill(uint8_t *p, uint32_t len, uint32_t seed);
void expect_read_responses(int qi, uint32_t psn, uint64_t off, uint32_t len, uint32_t msn, bool mid,
			   const char *what);
/* The same for a READ of region r. */
void expect_read_responses_in(int r, int qi, uint32_t psn, uint64_t off, uint32_t len, uint32_t msn,
			      bool mid, const char *what);
void send_read(int qi, uint32_t psn, uint64_t va, uint32_t rkey, uint32_t len);
void good_read(int qi, uint64_t off, uint32_t len, const char *what);
void probe(int qi);
void good_write_x(int qi, uint64_t off, uint32_t len, uint32_t seed, unsigned flags,
		  const char *what);
void good_write(int qi, uint64_t off, uint32_t len, uint32_t seed, const char *what);
void good_send(int qi, uint32_t len, uint32_t seed, const char *what);
/* A UC WRITE_ONLY of len bytes to region r + off at any PSN: silence, and its bytes in
 * the target's memory (read back). */
void good_uc_write(int qi, int r, uint64_t off, uint32_t len, uint32_t seed, uint32_t psn,
		   const char *what);

/* ---- completions ---- */

struct wcx {
	int qp;
	unsigned long long wr_id;
	int status, opcode;
	unsigned byte_len;
	int flags;
};

int target_wcs(struct wcx *w, int n);

/* ---- the scenarios (attacker.c's table names them, in CTest's order) ---- */

/* validation.c: single forged packets the receive checks must drop */
void sc_bad_icrc(void);
void sc_icrc_ipv4_id(void);
void sc_unknown_qp(void);
void sc_bad_pkey(void);
void sc_foreign_source_and_transport(void);
void sc_truncated_headers(void);
void sc_ip_id_poison(void);

/* requests.c: requests the responder must refuse (or execute exactly once) */
void sc_remote_access(void);
void sc_misaligned_atomic(void);
void sc_length_errors(void);
void sc_unsupported_opcodes(void);

/* sequence.c: packets out of sequence for the responder or the completer */
void sc_op_sequence(void);
void sc_psn_window(void);
void sc_duplicate_read(void);
void sc_completer(void);

/* flood.c: many requests at once */
void sc_rnr_flood(void);
void sc_read_flood(void);

/* frames.c: whole Ethernet frames into a target's packet rings */
void sc_ring_frames(void);

/* lifetime.c: grants that end while a peer uses them */
void sc_write_after_dereg(void);
void sc_uc_write_after_dereg(void);
void sc_window_after_qp_destroy(void);

/* unreliable.c: UC requests, which get no NAK */
void sc_uc_key_guess(void);
void sc_uc_injection(void);

/* limits.c: the device's configured limits */
void sc_read_amplification(void);

/* datagram.c: UD, SRQ and multicast */
void sc_ud_qkey(void);
void sc_ud_flood(void);
void sc_srq(void);
void sc_mcast(void);
void sc_mcast_unicast_qpn(void);

#endif
