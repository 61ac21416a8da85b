/* SPDX-License-Identifier: MIT */
/*
 * fuzz_pds.c - reliable unordered delivery (src/engine/uet/pds_tx.c, pds_rx.c) driven by
 * arbitrary input: the initiator sends, resends and runs its timers as the input says
 * and takes ACKs and NACKs whose every field the input chooses (a hostile or broken
 * peer); the target takes request PSNs the input chooses and answers ACKs and probes.
 *
 * After every step the state is checked against what it must be: the initiator's PSNs
 * in order (una <= nxt, at most a window apart), its counts of bytes in flight and of
 * packets lost equal to what its packet table holds, nothing outside [una, nxt) in use,
 * una moving only forward and only over PSNs sent; the target's CACK only forward, each
 * PSN taken as new at most once, no PSN beyond its window taken, every ACK it builds
 * encodable and acknowledging only PSNs it took. A broken rule aborts.
 *
 * Input: a list of steps, each an opcode byte and the bytes it reads (little endian):
 *   0 send (2: bytes)   1 resend the lowest lost   2 ACK (16: CACK delta from una - 8,
 *   ack offset, SACK offset, bitmap, flags)   3 NACK (5: PSN delta, code)   4 timer (2:
 *   microseconds to advance)   5 target takes a PSN (3: delta from its CACK, flags)
 *   6 target ACKs   7 target answers a probe (4: base delta, opaque)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/uet/pds.h"
#include "harness.h"

enum { START = 0xfffffff0u, /* PSNs wrap early */ WINDOW = 64 };

static void must(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_pds: %s\n", what);
		abort();
	}
}

struct in {
	const uint8_t *p;
	size_t left;
};

static uint64_t take(struct in *in, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++) {
		uint8_t b = in->left ? (in->left--, *in->p++) : 0;

		v |= (uint64_t)b << (8 * i);
	}
	return v;
}

static void check_tx(const struct urnic_pds_tx *tx, uint32_t una_before)
{
	uint64_t inflight = 0;
	uint32_t lost = 0, out = tx->nxt - tx->una;

	must(urnic_pds_psn_diff(tx->nxt, tx->una) >= 0 && out <= tx->cfg.window,
	     "una and nxt out of order, or further apart than the window");
	must(urnic_pds_psn_diff(tx->una, una_before) >= 0, "una went back");
	for (uint32_t psn = tx->una; psn != tx->nxt; psn++) {
		const struct urnic_pds_tx_pkt *p = &tx->pkt[psn & (URNIC_PDS_WINDOW - 1)];

		must(p->state != URNIC_PDS_FREE, "a PSN outstanding with a free slot");
		if (p->state == URNIC_PDS_IN_FLIGHT)
			inflight += p->bytes;
		if (p->state == URNIC_PDS_LOST)
			lost++;
	}
	must(inflight == tx->inflight_bytes, "bytes in flight miscounted");
	must(lost == tx->lost, "lost packets miscounted");
}

struct target {
	struct urnic_pds_rx rx;
	uint8_t taken[512]; /* by PSN - START, how often taken as new */
};

static void check_ack(const struct target *t, const struct urnic_uet_pds *a)
{
	uint8_t wire[URNIC_UET_PDS_MAX_BYTES];
	uint32_t base = a->cack_psn + (uint32_t)(int32_t)a->sack_psn_offset;

	must(urnic_uet_pds_encode(a, wire, sizeof(wire)) == URNIC_UET_PDS_MAX_BYTES,
	     "an ACK the codec will not send");
	must(a->cack_psn == t->rx.cack, "an ACK with another CACK");
	for (unsigned i = 0; i < URNIC_PDS_SACK_BITS; i++) {
		uint32_t psn = base + i, k = psn - START;

		if (a->sack_bitmap >> i & 1)
			must(k < sizeof(t->taken) && t->taken[k], "an ACK reports a PSN not taken");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct urnic_pds_tx tx;
	static struct target t;
	struct urnic_pds_cfg cfg;
	struct in in = { data, size };
	uint64_t now = 1000000;

	urnic_pds_cfg_default(&cfg, START);
	cfg.window = WINDOW;
	cfg.retry_max = 3;
	urnic_pds_tx_init(&tx, &cfg);
	memset(&t, 0, sizeof(t));
	urnic_pds_rx_init(&t.rx, &cfg);
	while (in.left) {
		uint8_t op = (uint8_t)take(&in, 1) % 8;
		uint32_t una = tx.una, cack = t.rx.cack, psn;
		struct urnic_uet_pds h = { 0 }, ack;
		struct urnic_pds_acked got;
		uint64_t next;

		switch (op) {
		case 0:
			if (urnic_pds_tx_room(&tx))
				urnic_pds_tx_send(&tx, 1 + (uint32_t)take(&in, 2), 0, now);
			else
				take(&in, 2);
			break;
		case 1:
			if (urnic_pds_tx_next_lost(&tx, &psn)) {
				must(tx.pkt[psn & (URNIC_PDS_WINDOW - 1)].state == URNIC_PDS_LOST,
				     "next_lost names a packet not lost");
				urnic_pds_tx_resend(&tx, psn, 1, now);
			}
			break;
		case 2:
			h.type = (take(&in, 1) & 1) ? URNIC_UET_ACK_CC : URNIC_UET_ACK;
			h.cack_psn = tx.una + (uint32_t)(int32_t)(int8_t)take(&in, 1) - 8;
			h.ack_psn_offset = (int16_t)take(&in, 2);
			h.sack_psn_offset = (int16_t)take(&in, 2);
			h.sack_bitmap = take(&in, 8);
			h.flags = (uint8_t)take(&in, 1) & 0x3e;
			h.probe_opaque = (uint16_t)take(&in, 1);
			urnic_pds_tx_ack(&tx, &h, now, &got);
			must(got.una == tx.una && got.una_before == una, "what an ACK says it did");
			must(urnic_pds_psn_diff(got.una, una) <= WINDOW,
			     "una beyond what was sent");
			must(got.n_evs <= URNIC_PDS_ACKED_EVS, "too many entropy values");
			break;
		case 3:
			h.type = URNIC_UET_NACK;
			h.nack_psn = tx.una + (uint32_t)take(&in, 4) % (2 * WINDOW) - WINDOW / 2;
			h.nack_code = (uint8_t)take(&in, 1);
			urnic_pds_tx_nack(&tx, &h, now);
			break;
		case 4:
			now += take(&in, 2) * 1000;
			if (urnic_pds_tx_timer(&tx, now, &next) == URNIC_PDS_TX_FAILED)
				must(tx.failed && !urnic_pds_tx_room(&tx), "failed yet sending");
			must(!next || next > now || tx.lost, "a timer due now left unrun");
			break;
		case 5:
			if (t.rx.cack - START + 2 * WINDOW >= sizeof(t.taken)) {
				take(&in, 3); /* the record of PSNs taken is full */
				break;
			}
			h.type = URNIC_UET_RUD_REQ;
			h.psn = t.rx.cack + (uint32_t)take(&in, 2) % (2 * WINDOW) - WINDOW / 2;
			h.flags = (uint8_t)take(&in, 1) & 0x1c;
			switch (urnic_pds_rx_packet(&t.rx, &h, 100, false)) {
			case URNIC_PDS_RX_NEW:
				must(h.psn - START < sizeof(t.taken), "took a PSN out of range");
				must(!t.taken[h.psn - START], "took a PSN as new twice");
				must(urnic_pds_psn_diff(h.psn, cack) > 0 &&
					     urnic_pds_psn_diff(h.psn, cack) <= WINDOW,
				     "took a PSN outside its window");
				t.taken[h.psn - START] = 1;
				break;
			case URNIC_PDS_RX_DUPLICATE:
				must(urnic_pds_psn_diff(h.psn, cack) <= 0 || t.taken[h.psn - START],
				     "a duplicate never taken");
				break;
			case URNIC_PDS_RX_OUT_OF_WINDOW:
				must(urnic_pds_psn_diff(h.psn, cack) > WINDOW,
				     "refused a PSN in its window");
				break;
			}
			must(urnic_pds_psn_diff(t.rx.cack, cack) >= 0, "the CACK went back");
			break;
		case 6:
			urnic_pds_rx_ack(&t.rx, &ack);
			check_ack(&t, &ack);
			break;
		default:
			h.type = URNIC_UET_CTRL;
			h.next = URNIC_UET_CTRL_PROBE;
			h.payload = t.rx.cack + (uint32_t)take(&in, 2) % (4 * WINDOW) - 2 * WINDOW;
			h.probe_opaque = (uint16_t)take(&in, 2);
			urnic_pds_rx_probe(&t.rx, &h, &ack);
			check_ack(&t, &ack);
			must((ack.flags & URNIC_UET_F_P) && ack.probe_opaque == h.probe_opaque,
			     "a probe's answer without its opaque value");
			break;
		}
		check_tx(&tx, una);
	}
	return 0;
}
