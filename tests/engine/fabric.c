/* SPDX-License-Identifier: MIT */
/*
 * fabric.c - the in-process fabric of the engine tests. See fabric.h.
 *
 * A pass is what src/dev/pipeline.c does with the device lock held: progress, timers,
 * progress, flush. Delivery order is send order unless a rule or a random fault says
 * otherwise; faults draw from one xorshift64* PRNG seeded by the test, so a failing
 * run replays exactly.
 */
#include "fabric.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/roce/cc.h"
#include "engine/roce/roce.h"
#include "engine/uet/uet_rc.h"
#include "wire/byteorder.h"
#include "wire/uet.h"

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n, sz);

	CHECK(p != NULL);
	return p;
}

uint32_t fab_random(struct fabric *f)
{
	f->rng ^= f->rng >> 12;
	f->rng ^= f->rng << 25;
	f->rng ^= f->rng >> 27;
	return (uint32_t)((f->rng * 0x2545f4914f6cdd1dull) >> 32);
}

static bool chance(struct fabric *f, uint32_t ppm)
{
	return ppm && fab_random(f) % 1000000u < ppm;
}

/* ---- the queue ---- */

static void enqueue(struct fabric *f, const struct fab_inflight *in)
{
	if (f->qlen == f->qcap) {
		f->qcap = f->qcap ? f->qcap * 2 : 256;
		f->q = realloc(f->q, f->qcap * sizeof(*f->q));
		CHECK(f->q != NULL);
	}
	f->q[f->qlen++] = *in;
}

static uint8_t *dup_bytes(const uint8_t *buf, uint32_t len)
{
	uint8_t *p = malloc(len ? len : 1);

	CHECK(p != NULL);
	memcpy(p, buf, len);
	return p;
}

static int host_by_ip(struct fabric *f, const uint8_t *ip)
{
	for (int i = 0; i < f->nhosts; i++)
		if (memcmp(f->hosts[i].ip, ip, 4) == 0)
			return i;
	return -1;
}

void fab_icrc_fix_id(const uint8_t *src_ip, const uint8_t *dst_ip, uint16_t sport, uint16_t ip_id,
		     uint8_t *buf, uint32_t len)
{
	struct urnic_icrc_flow flow = { 0 };
	struct urnic_frag frag = { buf, len - URNIC_ICRC_BYTES };

	CHECK(len >= URNIC_ICRC_BYTES);
	memcpy(flow.src, src_ip, 4);
	memcpy(flow.dst, dst_ip, 4);
	flow.sport = sport;
	flow.dport = URNIC_ROCE_UDP_PORT;
	flow.ip_id = ip_id;
	urnic_put_le32(buf + len - URNIC_ICRC_BYTES, urnic_icrc_flow(&flow, &frag, 1, frag.len));
}

void fab_icrc_fix(const uint8_t *src_ip, const uint8_t *dst_ip, uint16_t sport, uint8_t *buf,
		  uint32_t len)
{
	fab_icrc_fix_id(src_ip, dst_ip, sport, 0, buf, len);
}

static void trace_add(struct fabric *f, const struct fab_pktinfo *pi)
{
	if (f->ntrace == f->trace_cap) {
		f->trace_cap = f->trace_cap ? f->trace_cap * 2 : 1024;
		f->trace = realloc(f->trace, f->trace_cap * sizeof(*f->trace));
		CHECK(f->trace != NULL);
	}
	f->trace[f->ntrace++] = *pi;
}

static bool rule_matches(const struct fab_rule *r, const struct fab_pktinfo *pi)
{
	if ((r->match & FAB_M_SRC) && r->src != pi->src)
		return false;
	if ((r->match & FAB_M_OPCODE) && r->opcode != pi->opcode)
		return false;
	if ((r->match & FAB_M_PSN) && r->psn != pi->psn)
		return false;
	if ((r->match & FAB_M_INDEX) && r->index != pi->index)
		return false;
	if ((r->match & FAB_M_PRED) && !r->pred(pi, r->arg))
		return false;
	return true;
}

static void corrupt(uint8_t *buf, uint32_t hdr_bytes, uint32_t payload_bytes)
{
	/* A payload byte, else the low PSN byte: both decode, both are under the ICRC. */
	uint32_t at = payload_bytes ? hdr_bytes + payload_bytes / 2 : 11;

	buf[at] ^= 0x5a;
}

void fab_bottleneck(struct fabric *f, uint64_t line_bps, const struct fab_link *link)
{
	f->line_bps = line_bps;
	f->link = *link;
	f->link.free_ns = 0;
	f->link.marked = f->link.dropped = f->link.max_queue_bytes = 0;
	f->link.arrivals = f->link.queue_sum = 0;
	f->link.late_arrivals = f->link.late_queue_sum = f->link.late_max_queue_bytes = 0;
}

static uint64_t wire_ns(uint32_t len, uint64_t bps)
{
	return ((uint64_t)len * 8u * 1000000000u + bps - 1) / bps;
}

/* The NIC and the bottleneck (fab_bottleneck): when the packet arrives, its fate at the
 * link (FAB_PASS, FAB_MARK_CE or FAB_DROP), the queue it found. */
static enum fab_action through_links(struct fabric *f, struct fab_host *h, struct fab_pktinfo *pi,
				     uint64_t *at_ns)
{
	struct fab_link *l = &f->link;
	uint64_t t = f->now_ns, start, q, p;

	if (f->line_bps) {
		h->tx_free_ns =
			(h->tx_free_ns > t ? h->tx_free_ns : t) + wire_ns(pi->len, f->line_bps);
		t = h->tx_free_ns;
	}
	*at_ns = t;
	if (!l->rate_bps || pi->dst != l->to)
		return FAB_PASS;
	start = l->free_ns > t ? l->free_ns : t;
	q = (start - t) * l->rate_bps / 8000000000u;
	if (q > l->max_queue_bytes)
		l->max_queue_bytes = q;
	l->arrivals++;
	l->queue_sum += q;
	if (l->late_from_ns && t >= l->late_from_ns) {
		l->late_arrivals++;
		l->late_queue_sum += q;
		if (q > l->late_max_queue_bytes)
			l->late_max_queue_bytes = q;
	}
	if (q + pi->len > l->limit_bytes) {
		l->dropped++;
		return FAB_DROP;
	}
	l->free_ns = start + wire_ns(pi->len, l->rate_bps);
	*at_ns = l->free_ns;
	if (!(pi->tos & URNIC_ECN_MASK) || q < l->kmin_bytes)
		return FAB_PASS;
	p = q >= l->kmax_bytes
		    ? 1000000u
		    : l->pmax_ppm * (q - l->kmin_bytes) / (l->kmax_bytes - l->kmin_bytes);
	if (!chance(f, (uint32_t)p))
		return FAB_PASS;
	l->marked++;
	return FAB_MARK_CE;
}

/* One packet leaves an engine: trace it, apply rules and faults, queue it. */
static void send_one(struct fabric *f, struct fab_host *h, const struct urnic_txpkt *p)
{
	uint32_t len = urnic_txpkt_bytes(p);
	struct fab_inflight in = { 0 };
	struct fab_pktinfo pi = { 0 };
	enum fab_action act = FAB_PASS;
	struct fab_rule *rule = NULL;
	struct urnic_pkt pkt;
	uint8_t *buf = malloc(len);
	uint16_t ip_id = 0;

	CHECK(buf != NULL);
	/* The packet left as urnic_tx_commit laid it out: the headers, then the fragments,
	 * which add up to the payload the headers announce. A fragment read from an
	 * on-demand region points into the engine's bounce buffer, which holds only the
	 * last such payload by now. */
	{
		const uint8_t *bounce = h->e->odp_bounce;
		uint32_t off = p->hdr_bytes;

		CHECK(memcmp(p->wire, p->hdr, p->hdr_bytes) == 0);
		for (uint32_t i = 0; i < p->nfrags; i++) {
			const uint8_t *base = p->frags[i].base;

			if (base < bounce || base >= bounce + sizeof(h->e->odp_bounce))
				CHECK(memcmp(p->wire + off, base, p->frags[i].len) == 0);
			off += (uint32_t)p->frags[i].len;
		}
		CHECK_EQ(off, p->hdr_bytes + p->payload_bytes);
	}
	memcpy(buf, p->wire, len);
	/* A sender that counts the IPv4 ID (rxe) gives every packet the next one, lost or
	 * not, and its ICRC covers it (A17.3.3). */
	if (h->counts_ip_id) {
		ip_id = h->next_ip_id++;
		fab_icrc_fix_id(h->ip, p->dst.ip, p->dst.sport, ip_id, buf, len);
	}

	pi.index = f->npkts++;
	pi.t_ns = f->now_ns;
	pi.src = h->idx;
	pi.dst = host_by_ip(f, p->dst.ip);
	pi.sport = p->dst.sport;
	pi.len = len;
	if (f->uet) {
		struct urnic_uet_pkt u;

		/* The engine only sends what its decoder takes. */
		CHECK_EQ(urnic_uet_decode(&u, buf, len), URNIC_UET_R_OK);
		pi.opcode = u.pds.type;
		pi.psn = u.pds.type == URNIC_UET_ACK_CC ? u.pds.cack_psn : u.pds.psn;
		pi.payload_bytes = (uint32_t)u.payload_bytes;
		pi.ackreq = (u.pds.flags & URNIC_UET_F_AR) != 0;
		goto decoded;
	}
	CHECK(urnic_pkt_decode(&pkt, buf, len) > 0); /* the engine only sends valid packets */
	pi.opcode = pkt.bth.opcode;
	pi.psn = pkt.bth.psn;
	pi.dqpn = pkt.bth.dqpn;
	pi.ackreq = pkt.bth.ackreq;
	pi.se = pkt.bth.se;
	pi.has_aeth = urnic_opcode_info(pkt.bth.opcode)->flags & URNIC_OPF_AETH;
	pi.syndrome = pkt.aeth.syndrome;
	pi.msn = pkt.aeth.msn;
	pi.payload_bytes = pkt.payload_bytes;
decoded:
	pi.tos = p->dst.traffic_class;
	pi.direct_flags = p->direct_flags;
	pi.direct_nseg = p->direct_nseg;
	if (f->lanes && (p->direct_flags || p->direct_nseg)) {
		in.noted = true;
		in.note.pid = FAB_PID(h->idx);
		in.note.flags = p->direct_flags;
		in.note.nseg = p->direct_nseg;
		memcpy(in.note.seg, p->direct_seg, p->direct_nseg * sizeof(in.note.seg[0]));
	}

	for (uint32_t i = 0; i < f->nrules; i++) {
		struct fab_rule *r = &f->rules[i];

		if (!rule_matches(r, &pi))
			continue;
		if (r->seen++ < r->skip)
			continue;
		if (r->count && r->hits >= r->count)
			continue;
		r->hits++;
		rule = r;
		act = r->action;
		break;
	}
	if (rule && rule->capture && !rule->cap_len) {
		CHECK(len <= FAB_CAPTURE_BYTES);
		memcpy(rule->cap, buf, len);
		rule->cap_len = len;
		rule->cap_info = pi;
	}
	if (!rule && (f->fault_src < 0 || f->fault_src == h->idx)) {
		if (chance(f, f->drop_ppm))
			act = FAB_DROP;
		else if (chance(f, f->corrupt_ppm))
			act = FAB_CORRUPT;
		else if (chance(f, f->dup_ppm))
			act = FAB_DUP;
		else if (chance(f, f->reorder_ppm))
			act = FAB_HOLD;
	}

	in.src = h->idx;
	in.dst = pi.dst;
	in.sport = pi.sport;
	in.len = len;
	in.buf = buf;
	in.at_ns = f->now_ns;
	in.hold = 0;
	in.tos = pi.tos;
	if (pi.dst < 0) {
		pi.fate = FAB_FATE_NO_ROUTE;
		act = FAB_DROP;
	} else if (act == FAB_PASS && (f->line_bps || f->link.rate_bps)) {
		act = through_links(f, h, &pi, &in.at_ns);
		if (act == FAB_DROP)
			pi.fate = FAB_FATE_OVERFLOW;
	}
	switch (act) {
	case FAB_PASS:
		pi.fate = FAB_FATE_SENT;
		enqueue(f, &in);
		break;
	case FAB_DROP:
		if (pi.fate != FAB_FATE_NO_ROUTE && pi.fate != FAB_FATE_OVERFLOW)
			pi.fate = FAB_FATE_DROPPED;
		free(buf);
		break;
	case FAB_DUP:
		pi.fate = FAB_FATE_DUPLICATED;
		enqueue(f, &in);
		in.buf = dup_bytes(buf, len);
		in.at_ns = f->now_ns + (rule ? rule->delay_ns : 0);
		in.hold = rule ? rule->hold : 1 + fab_random(f) % 4;
		enqueue(f, &in);
		break;
	case FAB_CORRUPT:
		pi.fate = FAB_FATE_CORRUPTED;
		corrupt(buf, p->hdr_bytes, pi.payload_bytes);
		enqueue(f, &in);
		break;
	case FAB_HOLD:
		pi.fate = FAB_FATE_HELD;
		in.hold = rule ? rule->hold : 1 + fab_random(f) % 4;
		enqueue(f, &in);
		break;
	case FAB_DELAY:
		pi.fate = FAB_FATE_DELAYED;
		in.at_ns = f->now_ns + rule->delay_ns;
		enqueue(f, &in);
		break;
	case FAB_MARK_CE:
		if (pi.tos & URNIC_ECN_MASK) { /* ECT(0), ECT(1) or CE already */
			in.tos |= URNIC_ECN_CE;
			pi.fate = FAB_FATE_MARKED;
		} else {
			pi.fate = FAB_FATE_SENT;
		}
		enqueue(f, &in);
		break;
	case FAB_MUTATE:
		pi.fate = FAB_FATE_MUTATED;
		rule->mutate(buf, len, rule->arg);
		fab_icrc_fix_id(h->ip, f->hosts[pi.dst].ip, pi.sport, ip_id, buf, len);
		enqueue(f, &in);
		break;
	}
	trace_add(f, &pi);
}

static void flush_cb(struct urnic_engine *e)
{
	struct fab_host *h = e->hooks.io;

	for (uint32_t i = 0; i < e->tx.n; i++)
		send_one(h->f, h, &e->tx.pkts[i]);
	e->tx.n = 0;
}

/* ---- setup ---- */

struct fabric *fabric_new(int nhosts, uint64_t seed)
{
	struct fabric *f = xcalloc(1, sizeof(*f));

	CHECK(nhosts >= 1 && nhosts <= FAB_MAX_HOSTS);
	f->rng = seed ? seed : 1;
	f->nhosts = nhosts;
	f->fault_src = -1;
	f->now_ns = 1000000000ull; /* 1 s: a deadline of 0 means "none" to the engine */
	for (int i = 0; i < nhosts; i++) {
		struct fab_host *h = &f->hosts[i];

		h->f = f;
		h->idx = i;
		h->ip[0] = 10;
		h->ip[3] = (uint8_t)(i + 1);
		h->e = xcalloc(1, sizeof(*h->e));
		CHECK_EQ(urnic_engine_init(h->e, false, h->ip, flush_cb, h,
					   seed * 31 + (uint64_t)i + 1),
			 0);
		h->e->cfg.audit_idle = true; /* every engine test checks the active set */
	}
	return f;
}

void fabric_free(struct fabric *f)
{
	for (int i = 0; i < f->nhosts; i++) {
		struct fab_host *h = &f->hosts[i];

		/* Pools: every QP and MR a test made is gone (house style 7). */
		CHECK_EQ(h->nqps, 0);
		for (uint32_t k = 0; k < URNIC_MAX_QP; k++)
			CHECK(h->e->qpt.qps[k] == NULL);
		CHECK_EQ(h->e->mrs.nlive, 0);
		CHECK_EQ(h->e->tx.n, 0);
		urnic_engine_fini(h->e);
		free(h->e);
	}
	for (uint32_t i = 0; i < f->qlen; i++)
		free(f->q[i].buf);
	free(f->q);
	free(f->trace);
	free(f);
}

/* The engines' direct placement hook under fab_lanes: the peer's memory is ours. */
static int direct_write(struct urnic_engine *e, const struct urnic_qp *qp,
			const struct urnic_direct_note *d, const uint8_t *src, uint32_t len)
{
	struct fab_host *h = e->hooks.io;
	int peer = host_by_ip(h->f, qp->attr.peer.ip);
	uint64_t at = 0;

	if (peer < 0 || d->pid != FAB_PID(peer))
		return -ENOENT;
	if (h->f->direct_fail)
		return -EFAULT;
	for (uint32_t i = 0; i < d->nseg; i++)
		at += d->seg[i].len;
	if (at != len)
		return -EINVAL;
	at = 0;
	for (uint32_t i = 0; i < d->nseg; i++) {
		memcpy((void *)(uintptr_t)d->seg[i].addr, src + at, d->seg[i].len);
		at += d->seg[i].len;
	}
	h->f->direct_writes++;
	return 0;
}

/* Its other half: the one segment the note names, of the peer's memory, into ours. */
static int direct_read(struct urnic_engine *e, const struct urnic_qp *qp,
		       const struct urnic_direct_note *d, const struct urnic_direct_seg *to,
		       uint32_t nto, bool by_lane)
{
	struct fab_host *h = e->hooks.io;
	int peer = host_by_ip(h->f, qp->attr.peer.ip);
	uint64_t len = 0, rlen = 0;
	uint32_t k = 0;
	uint64_t koff = 0;

	(void)by_lane; /* every fabric host is reached as through a lane */
	if (peer < 0 || d->pid != FAB_PID(peer) || !d->nseg)
		return -ENOENT;
	if (h->f->pull_fail)
		return -EFAULT;
	for (uint32_t i = 0; i < nto; i++)
		len += to[i].len;
	for (uint32_t i = 0; i < d->nseg; i++)
		rlen += d->seg[i].len;
	if (len != rlen)
		return -EINVAL;
	/* Byte by byte across both lists: the segments need not line up. */
	for (uint32_t i = 0; i < nto; i++)
		for (uint64_t b = 0; b < to[i].len; b++) {
			while (koff == d->seg[k].len) {
				k++;
				koff = 0;
			}
			((uint8_t *)(uintptr_t)to[i].addr)[b] =
				((const uint8_t *)(uintptr_t)d->seg[k].addr)[koff++];
		}
	h->f->direct_reads++;
	return 0;
}

static bool direct_ready(struct urnic_engine *e, const struct urnic_qp *qp)
{
	struct fab_host *h = e->hooks.io;

	return host_by_ip(h->f, qp->attr.peer.ip) >= 0;
}

void fab_lanes(struct fabric *f)
{
	f->lanes = true;
	for (int i = 0; i < f->nhosts; i++) {
		f->hosts[i].e->hooks.direct_write = direct_write;
		f->hosts[i].e->hooks.direct_read = direct_read;
		f->hosts[i].e->hooks.direct_ready = direct_ready;
	}
}

struct fab_rule *fab_add_rule(struct fabric *f, const struct fab_rule *r)
{
	struct fab_rule *slot;

	CHECK(f->nrules < FAB_MAX_RULES);
	slot = &f->rules[f->nrules++];
	*slot = *r;
	slot->seen = slot->hits = slot->cap_len = 0;
	return slot;
}

void fab_clear_rules(struct fabric *f)
{
	f->nrules = 0;
}

void fab_uet(struct fabric *f)
{
	f->uet = true;
	for (int i = 0; i < f->nhosts; i++)
		f->hosts[i].e->cfg.uet = true;
}

void fab_trace_clear(struct fabric *f)
{
	f->ntrace = 0;
}

void fab_trace_dump(const struct fabric *f, uint32_t from, uint32_t to)
{
	static const char *const fates[] = {
		"sent",	   "DROPPED", "dup",	  "CORRUPT", "held",
		"delayed", "mutated", "no-route", "CE",	     "OVERFLOW"
	};
	_Static_assert(sizeof(fates) / sizeof(fates[0]) == FAB_FATE_OVERFLOW + 1, "enum fab_fate");

	for (uint32_t i = from; i < to && i < f->ntrace; i++) {
		const struct fab_pktinfo *pi = &f->trace[i];
		const char *name = urnic_opcode_info(pi->opcode)->name;

		fprintf(stderr, "%6llu t=%llu %d->%d qp %06x %-28s psn %06x%s len %u",
			(unsigned long long)pi->index, (unsigned long long)(pi->t_ns / 1000),
			pi->src, pi->dst, pi->dqpn, name ? name : "?", pi->psn,
			pi->ackreq ? " A" : "  ", pi->payload_bytes);
		if (pi->has_aeth)
			fprintf(stderr, " aeth %02x msn %u", pi->syndrome, pi->msn);
		fprintf(stderr, " %s\n", pi->fate <= FAB_FATE_OVERFLOW ? fates[pi->fate] : "?");
	}
}

/* ---- running ---- */

static bool pass(struct fabric *f)
{
	bool did = false;

	for (int i = 0; i < f->nhosts; i++) {
		struct fab_host *h = &f->hosts[i];
		struct urnic_engine *e = h->e;

		did |= urnic_engine_pass(e, f->now_ns, &h->deadline);
		if (e->tx.n) {
			flush_cb(e);
			did = true;
		}
	}
	return did;
}

/* A packet to host d, as its transport would hand it to the engine. */
static void rx(struct fabric *f, struct fab_host *d, const uint8_t *src_ip, uint16_t sport,
	       uint8_t tos, const uint8_t *buf, uint32_t len, const struct urnic_direct_note *note)
{
	struct urnic_rx_meta m = { .sport = sport,
				   .tos = tos,
				   .ttl = URNIC_DEFAULT_TTL,
				   .now_ns = f->now_ns,
				   .direct = note };

	memcpy(m.src_ip, src_ip, 4);
	memcpy(m.dst_ip, d->ip, 4);
	if (f->uet)
		urnic_uet_rx(d->e, &m, buf, len);
	else
		urnic_roce_rx(d->e, &m, buf, len);
}

static bool deliver(struct fabric *f)
{
	struct fab_inflight *batch = f->q;
	uint32_t n = f->qlen;
	bool did = false;

	if (!n)
		return false;
	f->q = NULL;
	f->qlen = f->qcap = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct fab_inflight in = batch[i];
		struct fab_host *d = &f->hosts[in.dst];

		if (in.at_ns > f->now_ns || in.hold) {
			enqueue(f, &in);
			continue;
		}
		rx(f, d, f->hosts[in.src].ip, in.sport, in.tos, in.buf, in.len,
		   in.noted ? &in.note : NULL);
		free(in.buf);
		f->ndelivered++;
		did = true;
		/* Packets held back so far have now been overtaken once more. */
		for (uint32_t k = 0; k < f->qlen; k++)
			if (f->q[k].hold)
				f->q[k].hold--;
	}
	free(batch);
	return did;
}

/* Nothing moved: release held packets, else jump to the next deadline. Returns false
 * when the fabric is quiescent. */
static bool idle(struct fabric *f)
{
	uint64_t next = 0;

	for (uint32_t i = 0; i < f->qlen; i++) {
		if (f->q[i].hold) {
			/* Nothing else will come to overtake it. */
			for (uint32_t k = 0; k < f->qlen; k++)
				f->q[k].hold = 0;
			return true;
		}
	}
	for (uint32_t i = 0; i < f->qlen; i++)
		if (!next || f->q[i].at_ns < next)
			next = f->q[i].at_ns;
	for (int i = 0; i < f->nhosts; i++) {
		uint64_t d = f->hosts[i].deadline;

		if (d && (!next || d < next))
			next = d;
	}
	if (!next)
		return false;
	f->now_ns = next > f->now_ns ? next : f->now_ns + 1;
	return true;
}

bool fabric_run(struct fabric *f, bool (*until)(struct fabric *f, void *arg), void *arg,
		uint64_t max_steps)
{
	for (uint64_t step = 0; step < max_steps; step++) {
		bool did;

		if (until && until(f, arg))
			return true;
		f->steps++;
		did = pass(f);
		did |= deliver(f);
		if (!did && !idle(f))
			return until ? until(f, arg) : true;
	}
	return until ? until(f, arg) : false;
}

void fabric_settle(struct fabric *f)
{
	CHECK(fabric_run(f, NULL, NULL, 10000000));
}

void fab_flush(struct fabric *f)
{
	for (int i = 0; i < f->nhosts; i++)
		if (f->hosts[i].e->tx.n)
			flush_cb(f->hosts[i].e);
}

void fab_inject(struct fabric *f, const uint8_t *src_ip, int dst, uint16_t sport, uint8_t *buf,
		uint32_t len, bool fix_icrc)
{
	struct fab_host *d = &f->hosts[dst];

	if (fix_icrc)
		fab_icrc_fix(src_ip, d->ip, sport, buf, len);
	rx(f, d, src_ip, sport, 0, buf, len, NULL);
}

/* ---- memory ---- */

struct urnic_mr *fab_reg(struct fabric *f, int host, struct urnic_pd *pd, void *buf, uint64_t len,
			 uint32_t access)
{
	struct urnic_engine *e = f->hosts[host].e;
	struct urnic_mr *mr = NULL;

	/* As src/verbs/memory.c: the iova is the process address, 32 random key bits
	 * (from the test's seeded generator, so runs repeat). */
	CHECK_EQ(urnic_mr_register(&e->mrs, pd, buf, (uint64_t)(uintptr_t)buf, len, access,
				   urnic_engine_random(e), &mr),
		 0);
	return mr;
}

void fab_dereg(struct fabric *f, int host, struct urnic_mr *mr)
{
	urnic_mr_deregister(&f->hosts[host].e->mrs, mr);
}

void fab_fill(uint8_t *p, uint64_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (uint64_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 16);
	}
}

void fab_buf_new(struct fabric *f, struct fab_buf *b, int host, struct urnic_pd *pd, uint64_t len,
		 uint32_t access)
{
	b->p = xcalloc(1, len ? len : 1);
	b->len = len;
	b->host = host;
	b->mr = fab_reg(f, host, pd, b->p, len, access);
}

void fab_buf_free(struct fabric *f, struct fab_buf *b)
{
	fab_dereg(f, b->host, b->mr);
	free(b->p);
	b->p = NULL;
	b->mr = NULL;
}

/* ---- QPs ---- */

struct fab_qp *fab_qp_new(struct fabric *f, int host, struct urnic_pd *pd, uint32_t max_send_wr,
			  uint32_t max_recv_wr, bool sq_sig_all)
{
	return fab_qp_new_type(f, host, pd, URNIC_QPT_RC, NULL, max_send_wr, max_recv_wr,
			       sq_sig_all);
}

struct fab_qp *fab_qp_new_type(struct fabric *f, int host, struct urnic_pd *pd,
			       enum urnic_qp_type type, struct urnic_srq *srq, uint32_t max_send_wr,
			       uint32_t max_recv_wr, bool sq_sig_all)
{
	struct fab_qp *q = xcalloc(1, sizeof(*q));
	struct fab_host *h = &f->hosts[host];

	/* As src/verbs/qp.c ibv_create_qp. */
	CHECK_EQ(urnic_wq_init(&q->qp.sq, max_send_wr, sizeof(struct urnic_send_wqe)), 0);
	CHECK_EQ(urnic_wq_init(&q->qp.rq, max_recv_wr, sizeof(struct urnic_recv_wqe)), 0);
	CHECK_EQ(urnic_cq_init(&q->scq, FAB_CQE), 0);
	CHECK_EQ(urnic_cq_init(&q->rcq, FAB_CQE), 0);
	q->qp.sq.max_sge = URNIC_MAX_SGE;
	q->qp.rq.max_sge = URNIC_MAX_SGE;
	q->qp.sq.max_inline = URNIC_MAX_INLINE;
	q->qp.type = type;
	q->qp.srq = srq;
	q->qp.state = URNIC_QPS_RESET;
	q->qp.sq_sig_all = sq_sig_all;
	q->qp.pd = pd;
	q->qp.send_cq = &q->scq;
	q->qp.recv_cq = &q->rcq;
	q->qp.attr.path_mtu = type == URNIC_QPT_UD ? FAB_UD_MTU : 256;
	q->h = h;
	CHECK_EQ(urnic_engine_qp_add(h->e, &q->qp), 0);
	/* As src/verbs/qp.c: a UD QP's UDP source port is fixed at creation. */
	if (type == URNIC_QPT_UD)
		q->qp.attr.peer.sport = (uint16_t)(0xc000 | ((q->qp.qpn * 0x61c88647u) >> 18));
	h->nqps++;
	return q;
}

void fab_qp_free(struct fab_qp *q)
{
	urnic_engine_qp_remove(q->h->e, &q->qp, q->h->f->now_ns);
	urnic_wq_fini(&q->qp.sq);
	urnic_wq_fini(&q->qp.rq);
	urnic_cq_fini(&q->scq);
	urnic_cq_fini(&q->rcq);
	CHECK(q->qp.sq.slots == NULL && q->qp.rq.slots == NULL && q->scq.ring == NULL &&
	      q->rcq.ring == NULL);
	q->h->nqps--;
	free(q);
}

struct fab_conn fab_conn_default(void)
{
	return (struct fab_conn){
		.mtu = 1024,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.min_rnr_timer = 12,
		.max_rd_atomic = 16,
		.max_dest_rd_atomic = 16,
		.access = URNIC_ACCESS_LOCAL_WRITE | URNIC_ACCESS_REMOTE_WRITE |
			  URNIC_ACCESS_REMOTE_READ | URNIC_ACCESS_REMOTE_ATOMIC,
		.psn_a = 0x100,
		.psn_b = 0x200,
	};
}

int fab_modify(struct fab_qp *q, const struct urnic_qp_attr *attr, enum urnic_qp_state next,
	       uint32_t mask)
{
	int ret = urnic_qp_check_modify(&q->qp, attr, q->qp.state, next, mask);

	if (ret == 0)
		urnic_engine_qp_apply(q->h->e, &q->qp, attr, next, mask, q->h->f->now_ns);
	return ret;
}

void fab_connect_one(struct fab_qp *q, const struct fab_qp *peer, const struct fab_conn *c,
		     uint32_t sq_psn, uint32_t rq_psn)
{
	struct urnic_qp_attr a = q->qp.attr;
	uint32_t rc_only;
	bool uc;

	a.pkey_index = 0;
	a.port_num = 1;
	a.access = c->access;
	CHECK_EQ(fab_modify(q, &a, URNIC_QPS_INIT,
			    URNIC_QP_STATE | URNIC_QP_PKEY_INDEX | URNIC_QP_PORT |
				    URNIC_QP_ACCESS_FLAGS),
		 0);
	CHECK_EQ(q->qp.state, URNIC_QPS_INIT);

	memset(&a.peer, 0, sizeof(a.peer));
	memcpy(a.peer.ip, peer->h->ip, 4);
	a.peer.hop_limit = 64;
	/* The kernel's flow-label convention gives some port in 0xc000..0xffff. */
	a.peer.sport = (uint16_t)(0xc000 | ((q->qp.qpn ^ peer->qp.qpn) & 0x3fff));
	a.path_mtu = c->mtu;
	a.dest_qp_num = peer->qp.qpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = c->max_dest_rd_atomic;
	a.min_rnr_timer = c->min_rnr_timer;
	/* IBTA 10.3.1 table 91: UC has no RNR timer, READ/atomic resources or retries; an
	 * XRC send QP (Annex A14) no responder attributes, an XRC receive QP no requester
	 * ones but its timeout. */
	uc = q->qp.type == URNIC_QPT_UC;
	rc_only = uc || q->qp.type == URNIC_QPT_XRC_SEND
			  ? 0
			  : URNIC_QP_MAX_DEST_RD_ATOMIC | URNIC_QP_MIN_RNR_TIMER;
	CHECK_EQ(fab_modify(q, &a, URNIC_QPS_RTR,
			    URNIC_QP_STATE | URNIC_QP_AV | URNIC_QP_PATH_MTU | URNIC_QP_DEST_QPN |
				    URNIC_QP_RQ_PSN | rc_only),
		 0);
	CHECK_EQ(q->qp.state, URNIC_QPS_RTR);

	a.sq_psn = sq_psn;
	a.timeout = c->timeout;
	a.retry_cnt = c->retry_cnt;
	a.rnr_retry = c->rnr_retry;
	a.max_rd_atomic = c->max_rd_atomic;
	rc_only = uc ? 0
		     : URNIC_QP_TIMEOUT | URNIC_QP_RETRY_CNT | URNIC_QP_RNR_RETRY |
				  URNIC_QP_MAX_QP_RD_ATOMIC;
	if (q->qp.type == URNIC_QPT_XRC_RECV)
		rc_only = URNIC_QP_TIMEOUT;
	CHECK_EQ(fab_modify(q, &a, URNIC_QPS_RTS, URNIC_QP_STATE | URNIC_QP_SQ_PSN | rc_only), 0);
	CHECK_EQ(q->qp.state, URNIC_QPS_RTS);
}

void fab_ud_ready(struct fab_qp *q, uint32_t qkey, uint32_t sq_psn)
{
	struct urnic_qp_attr a = q->qp.attr;

	a.pkey_index = 0;
	a.port_num = 1;
	a.qkey = qkey;
	CHECK_EQ(fab_modify(q, &a, URNIC_QPS_INIT,
			    URNIC_QP_STATE | URNIC_QP_PKEY_INDEX | URNIC_QP_PORT | URNIC_QP_QKEY),
		 0);
	CHECK_EQ(fab_modify(q, &a, URNIC_QPS_RTR, URNIC_QP_STATE), 0);
	a.sq_psn = sq_psn;
	CHECK_EQ(fab_modify(q, &a, URNIC_QPS_RTS, URNIC_QP_STATE | URNIC_QP_SQ_PSN), 0);
	CHECK_EQ(q->qp.state, URNIC_QPS_RTS);
}

struct urnic_peer fab_peer(struct fabric *f, int host)
{
	struct urnic_peer p = { 0 };

	memcpy(p.ip, f->hosts[host].ip, 4);
	p.hop_limit = 64;
	return p;
}

struct urnic_srq *fab_srq_new(struct urnic_pd *pd, uint32_t max_wr)
{
	struct urnic_srq *srq = xcalloc(1, sizeof(*srq));

	CHECK_EQ(urnic_srq_init(srq, max_wr, URNIC_MAX_SGE), 0);
	srq->pd = pd;
	return srq;
}

void fab_srq_free(struct urnic_srq *srq)
{
	urnic_srq_fini(srq);
	free(srq);
}

void fab_connect(struct fab_qp *a, struct fab_qp *b, const struct fab_conn *c)
{
	fab_connect_one(a, b, c, c->psn_a, c->psn_b);
	fab_connect_one(b, a, c, c->psn_b, c->psn_a);
}

/* ---- posting and polling, as src/verbs/post.c ---- */

int fab_post_send(struct fab_qp *q, const struct fab_send_wr *wr)
{
	struct urnic_wq *sq = &q->qp.sq;
	struct urnic_send_wqe *w;
	uint32_t prod, cons;
	uint64_t total = 0;

	if (q->qp.state != URNIC_QPS_RTS && q->qp.state != URNIC_QPS_ERR)
		return EINVAL;
	if (wr->num_sge > sq->max_sge)
		return EINVAL;
	prod = atomic_load_explicit(&sq->prod, memory_order_relaxed);
	cons = atomic_load_explicit(&sq->cons, memory_order_acquire);
	if (prod - cons >= sq->max_wr)
		return ENOMEM;
	for (uint32_t i = 0; i < wr->num_sge; i++)
		total += wr->sge[i].length;
	if (total > (1ull << 31))
		return EINVAL;
	w = urnic_wq_slot(sq, prod);
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->flags = wr->flags;
	w->imm_be = wr->imm_be;
	w->length = (uint32_t)total;
	w->started = false;
	w->done = false;
	w->status = URNIC_WC_SUCCESS;
	w->remote_addr = wr->remote_addr;
	w->rkey = wr->rkey;
	w->compare_add = wr->compare_add;
	w->swap = wr->swap;
	w->ud_dst = wr->ud_dst;
	w->ud_remote_qpn = wr->remote_qpn;
	w->ud_remote_qkey = wr->remote_qkey;
	w->xrc_srqn = wr->xrc_srqn;
	w->mw_rkey = wr->mw_rkey;
	w->mr_lkey = wr->mr_lkey;
	w->mw_access = wr->mw_access;
	w->remote_len = wr->remote_len;
	w->flush_type = wr->flush_type;
	w->flush_level = wr->flush_level;
	if ((wr->flags & URNIC_SEND_INLINE) && wr->opcode != URNIC_WR_RDMA_READ &&
	    wr->opcode != URNIC_WR_ATOMIC_CMP_AND_SWP &&
	    wr->opcode != URNIC_WR_ATOMIC_FETCH_AND_ADD) {
		uint32_t off = 0;

		if (total > sq->max_inline)
			return EINVAL;
		for (uint32_t i = 0; i < wr->num_sge; i++) {
			memcpy(w->inline_data + off, (const void *)(uintptr_t)wr->sge[i].addr,
			       wr->sge[i].length);
			off += wr->sge[i].length;
		}
		w->num_sge = 0;
	} else {
		w->flags &= ~(uint32_t)URNIC_SEND_INLINE;
		w->num_sge = wr->num_sge;
		for (uint32_t i = 0; i < wr->num_sge; i++)
			w->sge[i] = wr->sge[i];
	}
	atomic_store_explicit(&sq->prod, prod + 1, memory_order_release);
	urnic_engine_doorbell(q->h->e, q->qp.qpn);
	return 0;
}

static int post_recv_ring(struct urnic_wq *rq, uint64_t wr_id, const struct urnic_sge *sge,
			  uint32_t nsge)
{
	struct urnic_recv_wqe *w;
	uint32_t prod, cons;
	uint64_t total = 0;

	if (nsge > rq->max_sge)
		return EINVAL;
	prod = atomic_load_explicit(&rq->prod, memory_order_relaxed);
	cons = atomic_load_explicit(&rq->cons, memory_order_acquire);
	if (prod - cons >= rq->max_wr)
		return ENOMEM;
	w = urnic_wq_slot(rq, prod);
	w->wr_id = wr_id;
	w->num_sge = nsge;
	for (uint32_t i = 0; i < nsge; i++) {
		w->sge[i] = sge[i];
		total += sge[i].length;
	}
	w->length = total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
	atomic_store_explicit(&rq->prod, prod + 1, memory_order_release);
	return 0;
}

int fab_post_recv(struct fab_qp *q, uint64_t wr_id, const struct urnic_sge *sge, uint32_t nsge)
{
	if (q->qp.state == URNIC_QPS_RESET || q->qp.srq)
		return EINVAL;
	int ret = post_recv_ring(&q->qp.rq, wr_id, sge, nsge);

	urnic_engine_doorbell(q->h->e, q->qp.qpn);
	return ret;
}

int fab_post_srq_recv(struct urnic_srq *srq, uint64_t wr_id, const struct urnic_sge *sge,
		      uint32_t nsge)
{
	return post_recv_ring(&srq->rq, wr_id, sge, nsge);
}

int fab_poll(struct urnic_cq *cq, struct urnic_cqe *out, int n)
{
	return urnic_cq_poll(cq, out, n);
}

struct cqe_wait {
	struct urnic_cq *cq;
	struct urnic_cqe *out;
	int want;
	int got;
};

static bool cqes_arrived(struct fabric *f, void *arg)
{
	struct cqe_wait *w = arg;

	(void)f;
	w->got += urnic_cq_poll(w->cq, w->out + w->got, w->want - w->got);
	return w->got >= w->want;
}

void fab_wait_cqes(struct fabric *f, struct urnic_cq *cq, struct urnic_cqe *out, int n)
{
	struct cqe_wait w = { cq, out, n, 0 };

	if (!fabric_run(f, cqes_arrived, &w, 10000000)) {
		fprintf(stderr, "fab_wait_cqes: %d of %d completions\n", w.got, n);
		CHECK(w.got == n);
	}
}

/* ---- the usual pair ---- */

void fab_pair_open(struct fab_pair *p, const struct fab_conn *c, uint64_t seed)
{
	memset(p, 0, sizeof(*p));
	p->f = fabric_new(2, seed);
	p->pd[0].handle = 1;
	p->pd[1].handle = 1;
	p->a = fab_qp_new(p->f, 0, &p->pd[0], 1024, 1024, true);
	p->b = fab_qp_new(p->f, 1, &p->pd[1], 1024, 1024, true);
	if (c)
		fab_connect(p->a, p->b, c);
}

void fab_pair_close(struct fab_pair *p)
{
	fab_qp_free(p->a);
	fab_qp_free(p->b);
	fabric_free(p->f);
	memset(p, 0, sizeof(*p));
}
