/* SPDX-License-Identifier: MIT */
/*
 * iwarp_pipe.c - the test ends of iwarp_pipe.h: setup bytes to the MPA machine, then the
 * rest of the stream to the FPDU receive stream, whose events are checked for order
 * (HEAD, contiguous PIECEs, END) and recorded.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "iwarp_pipe.h"

uint64_t iwp_seed = 0x9e3779b97f4a7c15ull;

uint32_t iwp_rand(void)
{
	iwp_seed ^= iwp_seed << 13;
	iwp_seed ^= iwp_seed >> 7;
	iwp_seed ^= iwp_seed << 17;
	return (uint32_t)(iwp_seed >> 16);
}

void iwp_end_init(struct iwp_end *e)
{
	memset(e, 0, sizeof(*e));
	e->fpdus = calloc(IWP_MAX_FPDUS, sizeof(*e->fpdus));
	CHECK(e->fpdus);
}

void iwp_end_free(struct iwp_end *e)
{
	free(e->fpdus);
	e->fpdus = NULL;
}

static void rx_feed(struct iwp_end *e, const uint8_t *p, size_t n)
{
	struct iwp_fpdu *f;
	size_t used;

	while (n && !e->rx_error) {
		enum urnic_fpdu_rx_event ev = urnic_fpdu_rx_next(&e->rx, p, n, &used);

		CHECK(used <= n);
		e->fpdu_bytes += used;
		p += used;
		n -= used;
		f = &e->fpdus[e->nfpdus];
		switch (ev) {
		case URNIC_FPDU_RX_HEAD:
			CHECK(e->nfpdus < IWP_MAX_FPDUS);
			f->hdr = e->rx.hdr;
			f->payload_len = e->rx.payload_len;
			break;
		case URNIC_FPDU_RX_PIECE:
			CHECK(e->rx.data == p - used && e->rx.data_len == used);
			if (e->rx.off < sizeof(f->payload))
				memcpy(f->payload + e->rx.off, e->rx.data,
				       e->rx.off + used > sizeof(f->payload)
					       ? sizeof(f->payload) - e->rx.off
					       : used);
			break;
		case URNIC_FPDU_RX_END:
			f->bytes = e->fpdu_bytes;
			e->fpdu_bytes = 0;
			e->nfpdus++;
			break;
		case URNIC_FPDU_RX_ERROR:
			e->rx_error = true;
			break;
		default:
			CHECK_EQ(n, 0);
		}
	}
}

void iwp_note(struct iwp_end *e, enum urnic_mpa_conn_event ev)
{
	if (ev == URNIC_MPA_EV_NONE)
		return;
	e->last_ev = ev;
	e->events[ev]++;
	if (ev == URNIC_MPA_EV_CONNECTED) {
		urnic_fpdu_rx_init(&e->rx, e->c.params.crc ? URNIC_FPDU_CRC : 0);
		e->rx_on = true;
	}
}

void iwp_feed(struct iwp_end *e, const uint8_t *p, size_t n, size_t max_split, uint64_t now)
{
	size_t k, used;

	while (n) {
		k = iwp_rand() % 4 == 0 ? 1 : 1 + iwp_rand() % max_split;
		if (k > n)
			k = n;
		if (e->rx_on) {
			rx_feed(e, p, k);
		} else {
			iwp_note(e, urnic_mpa_conn_input(&e->c, p, k, &used, now));
			CHECK(used <= k);
			if (e->rx_on)
				rx_feed(e, p + used, k - used);
			else if (used < k)
				/* the rest of the piece goes in again, as TCP would keep it */
				iwp_note(e, urnic_mpa_conn_input(&e->c, p + used, k - used, &used,
								 now));
		}
		p += k;
		n -= k;
	}
}

size_t iwp_pump(struct iwp_end *from, struct iwp_end *to, size_t max_split, uint64_t now)
{
	static uint8_t buf[URNIC_MPA_OUT_MAX];
	size_t n = urnic_mpa_conn_output(&from->c, buf, sizeof(buf));

	iwp_feed(to, buf, n, max_split, now);
	return n;
}
