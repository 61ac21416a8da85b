/* SPDX-License-Identifier: MIT */
/*
 * iwarp_pipe.h - two ends of an iWARP connection for tests: an MPA setup machine and,
 * once connected, an FPDU receive stream, fed bytes in random splits (1-byte pieces
 * among them) as TCP may deliver them; what each end received is recorded.
 */
#ifndef URNIC_TESTS_ENGINE_IWARP_PIPE_H
#define URNIC_TESTS_ENGINE_IWARP_PIPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/iwarp/fpdu_rx.h"
#include "engine/iwarp/mpa_conn.h"

#define IWP_MAX_FPDUS 256

struct iwp_fpdu {
	struct urnic_ddp_hdr hdr;
	size_t payload_len;
	uint8_t payload[4096]; /* the first 4096 bytes, reassembled from the pieces */
	size_t bytes;	       /* the whole FPDU on the wire */
};

struct iwp_end {
	struct urnic_mpa_conn c;
	struct urnic_fpdu_rx rx;
	bool rx_on;
	enum urnic_mpa_conn_event last_ev;
	unsigned events[5];	/* by enum urnic_mpa_conn_event */
	struct iwp_fpdu *fpdus; /* IWP_MAX_FPDUS of them */
	unsigned nfpdus;
	size_t fpdu_bytes; /* bytes of the FPDU being received */
	bool rx_error;
};

/* xorshift state for the splits */
extern uint64_t iwp_seed;
uint32_t iwp_rand(void);

void iwp_end_init(struct iwp_end *e);
void iwp_end_free(struct iwp_end *e);
/* Feeds bytes to the end in random splits (max_split 1: one byte at a time). */
void iwp_feed(struct iwp_end *e, const uint8_t *p, size_t n, size_t max_split, uint64_t now);
/* Records a setup event (CONNECTED starts the receive stream). */
void iwp_note(struct iwp_end *e, enum urnic_mpa_conn_event ev);
/* Moves every byte from's machine has queued to to; how many moved. */
size_t iwp_pump(struct iwp_end *from, struct iwp_end *to, size_t max_split, uint64_t now);

#endif
