/* SPDX-License-Identifier: MIT */
/*
 * iw_link.h - two iWARP engines for tests, each with one RC QP connected to the other's
 * over a byte pipe (the TCP stream after MPA setup):
 *
 *   host 0: engine (iwarp), QP q[0] === bytes, split at random down to one ===
 *   host 1: engine (iwarp), QP q[1]
 *
 * A run does what the device does: a pass of each engine, then for every QP that
 * urnic_iw_tx_ready names, what urnic_iw_tx_peek offers is taken (urnic_iw_tx_done) and
 * fed to the peer's urnic_iw_rx in random pieces. The fabric (fabric.h) is there for
 * its engines, memory helpers and leak checks; no packet crosses it.
 */
#ifndef URNIC_TESTS_ENGINE_IW_LINK_H
#define URNIC_TESTS_ENGINE_IW_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/iwarp/iw_qp.h"
#include "fabric.h"
#include "wire/ddp.h"

struct iwl {
	struct fabric *f;
	struct urnic_pd pd[2];
	struct fab_qp *q[2];
	size_t max_split; /* largest piece fed to urnic_iw_rx (1: a byte at a time) */
	size_t max_take;  /* largest write a "socket" takes at once */
	bool hold[2];	  /* bytes from this side stay in its ring (a test reads them) */
	bool closed[2];	  /* the driver closed this side's connection after close_due */
	uint64_t moved[2];
	struct urnic_srq *srq; /* host 1's, or NULL */
	uint8_t *scratch;
};

/* Both QPs connected with p (RESET -> INIT -> urnic_iw_qp_connect); with srq1, host 1's
 * QP takes its receives from the SRQ srq1 makes in its PD. */
void iwl_open(struct iwl *l, uint64_t seed, const struct urnic_iw_conn_params *p);
void iwl_open_srq(struct iwl *l, uint64_t seed, const struct urnic_iw_conn_params *p,
		  struct urnic_srq *(*srq1)(struct urnic_pd *pd));
/* Each side with its own params: host 0 as MPA Initiator (p0), host 1 as Responder (p1). */
void iwl_open_pair(struct iwl *l, uint64_t seed, const struct urnic_iw_conn_params *p0,
		   const struct urnic_iw_conn_params *p1);
void iwl_close(struct iwl *l);
/* Passes and byte moves until nothing moves (CHECKs it stops within a bound). */
void iwl_settle(struct iwl *l);
/* Feeds bytes to side `to` as if from its peer, in random pieces; what it took. */
size_t iwl_inject(struct iwl *l, int to, const uint8_t *p, size_t n);
/* Copies up to cap of side `from`'s queued bytes into out (not taken); how many. */
size_t iwl_peek(struct iwl *l, int from, uint8_t *out, size_t cap);

/* A hand-built FPDU (no CRC unless crc): header h, payload p/n; bytes written to out. */
size_t iwl_fpdu(uint8_t *out, size_t cap, const struct urnic_ddp_hdr *h, const void *p, size_t n,
		bool crc);

static inline uint64_t iwl_ctr(const struct iwl *l, int side, enum urnic_counter c)
{
	return l->f->hosts[side].e->stats.counters[c];
}

#endif
