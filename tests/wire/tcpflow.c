/* SPDX-License-Identifier: MIT */
/*
 * tcpflow.c - TCP stream reassembly for the golden captures (tcpflow.h): Ethernet with
 * 802.1Q tags skipped, IPv4, TCP; segments sorted by sequence number from the ISN.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tcpflow.h"
#include "wire/byteorder.h"

static struct tcp_flow *flow_get(struct tcp_flows *t, const uint8_t *ip, uint16_t sport,
				 uint16_t dport)
{
	struct tcp_flow *f;
	unsigned i;

	for (i = 0; i < t->n; i++)
		if (!memcmp(t->flows[i].src, ip + 12, 4) && !memcmp(t->flows[i].dst, ip + 16, 4) &&
		    t->flows[i].sport == sport && t->flows[i].dport == dport)
			return &t->flows[i];
	CHECK(t->n < TCP_MAX_FLOWS);
	f = &t->flows[t->n++];
	memset(f, 0, sizeof(*f));
	memcpy(f->src, ip + 12, 4);
	memcpy(f->dst, ip + 16, 4);
	f->sport = sport;
	f->dport = dport;
	return f;
}

/* The SYN's MSS option (kind 2, length 4), if any. */
static uint16_t syn_mss(const uint8_t *tcp, size_t doff)
{
	size_t o = 20;

	while (o < doff && tcp[o] != 0) {
		if (tcp[o] == 1) {
			o++;
			continue;
		}
		if (o + 1 >= doff || tcp[o + 1] < 2)
			break;
		if (tcp[o] == 2 && tcp[o + 1] == 4 && o + 4 <= doff)
			return urnic_get_be16(tcp + o + 2);
		o += tcp[o + 1];
	}
	return 0;
}

static void frame_tcp(struct tcp_flows *t, const struct wire_frame *fr)
{
	const uint8_t *p = fr->data, *ip, *tcp;
	size_t off = 12, ihl, doff, ip_len;
	struct tcp_flow *f;
	uint32_t seq;

	while (off + 2 <= fr->len && urnic_get_be16(p + off) == 0x8100)
		off += 4;
	if (off + 2 > fr->len || urnic_get_be16(p + off) != 0x0800)
		return;
	ip = p + off + 2;
	CHECK(fr->len >= off + 2 + 20);
	ihl = (size_t)(ip[0] & 0x0f) * 4;
	ip_len = urnic_get_be16(ip + 2);
	if (ip[9] != 6)
		return;
	CHECK(ip_len <= fr->len - off - 2 && ip_len >= ihl + 20);
	tcp = ip + ihl;
	doff = (size_t)(tcp[12] >> 4) * 4;
	CHECK(ip_len >= ihl + doff);
	seq = urnic_get_be32(tcp + 4);
	f = flow_get(t, ip, urnic_get_be16(tcp), urnic_get_be16(tcp + 2));
	if (tcp[13] & 0x02) { /* SYN: data starts one past it */
		f->have_isn = true;
		f->isn = seq + 1;
		f->mss = syn_mss(tcp, doff);
	}
	if (ip_len == ihl + doff)
		return;
	CHECK(f->have_isn && f->nsegs < TCP_MAX_SEGS);
	f->segs[f->nsegs++] = (struct tcp_seg){ seq, tcp + doff, ip_len - ihl - doff };
}

static uint32_t sort_isn;

static int seg_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct tcp_seg *)a)->seq - sort_isn;
	uint32_t y = ((const struct tcp_seg *)b)->seq - sort_isn;

	return x < y ? -1 : x > y;
}

static void flow_assemble(struct tcp_flow *f)
{
	unsigned i;

	sort_isn = f->isn;
	qsort(f->segs, f->nsegs, sizeof(f->segs[0]), seg_cmp);
	f->stream = malloc(1);
	CHECK(f->stream);
	for (i = 0; i < f->nsegs; i++) {
		size_t rel = f->segs[i].seq - f->isn, skip;

		if (rel + f->segs[i].len <= f->len)
			continue; /* retransmitted */
		CHECK(rel <= f->len);
		skip = f->len - rel;
		f->stream = realloc(f->stream, f->len + f->segs[i].len - skip);
		CHECK(f->stream);
		memcpy(f->stream + f->len, f->segs[i].data + skip, f->segs[i].len - skip);
		f->len += f->segs[i].len - skip;
	}
}

void tcp_flows_read(struct tcp_flows *t, const char *path)
{
	struct wire_frame fr;
	unsigned i;
	int rc;

	t->n = 0;
	CHECK_EQ(wire_pcap_open(&t->pc, path), 0);
	while ((rc = wire_pcap_next(&t->pc, &fr)) == 1)
		frame_tcp(t, &fr);
	CHECK_EQ(rc, 0);
	for (i = 0; i < t->n; i++)
		flow_assemble(&t->flows[i]);
}

struct tcp_flow *tcp_flows_peer(struct tcp_flows *t, const struct tcp_flow *f)
{
	unsigned i;

	for (i = 0; i < t->n; i++)
		if (t->flows[i].sport == f->dport && t->flows[i].dport == f->sport &&
		    !memcmp(t->flows[i].src, f->dst, 4) && !memcmp(t->flows[i].dst, f->src, 4))
			return &t->flows[i];
	return NULL;
}

void tcp_flows_free(struct tcp_flows *t)
{
	unsigned i;

	for (i = 0; i < t->n; i++)
		free(t->flows[i].stream);
	wire_pcap_close(&t->pc);
	t->n = 0;
}
