/* SPDX-License-Identifier: MIT */
/*
 * engine.c - receive validation and dispatch, the transmit batch, completions, errors,
 * and the QP table of one device.
 *
 * Every received packet is checked before it may change anything, in the order of
 * rxe_recv.c and IBTA 9.6 (packet header validation): headers decode (length, opcode,
 * TVer, reserved bits), ICRC (Annex A17.3.3), destination QP exists and is in a state
 * that receives (IBTA 10.3.1 table 90), the opcode belongs to the QP's transport, P_Key
 * matches (10.9.3), source address is the connected peer (rxe check_addr; not for UD,
 * which hears from anyone). Then the packet goes to its transport: RC responder or
 * completer, UC or UD responder. Each refusal has a counter (counters.def).
 */
#include "engine/engine.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/roce/rc.h"
#include "mem/mw.h"
#include "wire/byteorder.h"
#include "wire/crc_copy.h"
#include "wire/psn.h"

const char *const urnic_counter_names[URNIC_CTR_COUNT] = {
#define URNIC_COUNTER(name, desc) [URNIC_CTR_##name] = #name,
#include "engine/counters.def"
#undef URNIC_COUNTER
};

const char *const urnic_counter_descs[URNIC_CTR_COUNT] = {
#define URNIC_COUNTER(name, desc) [URNIC_CTR_##name] = desc,
#include "engine/counters.def"
#undef URNIC_COUNTER
};

int urnic_engine_init(struct urnic_engine *e, bool ipv6, const uint8_t *local_ip,
		      urnic_tx_flush_fn flush, void *io, uint64_t seed)
{
	int ret;

	memset(e, 0, sizeof(*e));
	e->ipv6 = ipv6;
	memcpy(e->local_ip, local_ip, ipv6 ? 16 : 4);
	e->flush = flush;
	e->io = io;
	e->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
	e->icrc_any_ipv4_id = true;
	e->rx_ttl = URNIC_DEFAULT_TTL;
	e->ack_hold_max_ns = URNIC_ACK_HOLD_DEFAULT_NS;
	e->max_msg_bytes = 1u << 31;
	e->app_polling = true;
	e->qp_ctrs = calloc(URNIC_MAX_QP, sizeof(*e->qp_ctrs));
	if (!e->qp_ctrs)
		return -ENOMEM;
	e->qp_ctrs_owned = true;
	ret = urnic_mr_table_init(&e->mrs, 1 << 16);
	if (ret)
		goto free_qp_ctrs;
	return 0;

free_qp_ctrs:
	free(e->qp_ctrs);
	e->qp_ctrs = NULL;
	return ret;
}

void urnic_engine_fini(struct urnic_engine *e)
{
	urnic_mr_table_fini(&e->mrs);
	urnic_engine_set_qp_counters(e, NULL);
}

void urnic_engine_set_qp_counters(struct urnic_engine *e, struct urnic_qp_counters *table)
{
	if (table && e->qp_ctrs)
		memcpy(table, e->qp_ctrs, e->qp_end * sizeof(*table));
	if (e->qp_ctrs_owned)
		free(e->qp_ctrs);
	e->qp_ctrs = table;
	e->qp_ctrs_owned = false;
	e->cur_qp_ctrs = NULL;
}

/* The QP whose counters urnic_count() also moves, until serve_none(). */
static void serve(struct urnic_engine *e, const struct urnic_qp *qp)
{
	e->cur_qp_ctrs = e->qp_ctrs ? e->qp_ctrs[qp->qpn & (URNIC_MAX_QP - 1)].c : NULL;
}

static void serve_none(struct urnic_engine *e)
{
	e->cur_qp_ctrs = NULL;
}

static void note_state(struct urnic_engine *e, const struct urnic_qp *qp)
{
	if (e->qp_ctrs)
		e->qp_ctrs[qp->qpn & (URNIC_MAX_QP - 1)].state = (uint8_t)qp->state;
}

/* ---- the QPs a pass visits (engine.h: active, awaiting, doorbells) ---- */

static void slot_set(uint64_t *bits, uint32_t i)
{
	bits[i / 64] |= 1ull << (i % 64);
}

static void slot_clear(uint64_t *bits, uint32_t i)
{
	bits[i / 64] &= ~(1ull << (i % 64));
}

static bool slot_test(const uint64_t *bits, uint32_t i)
{
	return bits[i / 64] >> (i % 64) & 1;
}

/* Words of a bit per slot that hold the table's slots in use. The scans below go
 * through them a word at a time, lowest slot first (the table's order, as before there
 * were sets), each word as it was when its turn came: a bit set behind the scan (a QP
 * woken while another is served) is seen by the next pass. Slots 0 and 1 are QP0/QP1,
 * never in the table (urnic_engine_qp_add). */
static uint32_t slot_words(const struct urnic_engine *e)
{
	return (e->qp_end + 63) / 64;
}

/* The slot of the lowest bit of a non-zero word w. */
static uint32_t slot_of(uint32_t w, uint64_t bits)
{
	return w * 64 + (uint32_t)__builtin_ctzll(bits);
}

/* The QP may have work from now on: the next pass visits it. */
static void qp_wake(struct urnic_engine *e, const struct urnic_qp *qp)
{
	uint32_t i = qp->qpn & (URNIC_MAX_QP - 1);

	slot_set(e->active, i);
	slot_set(e->awaiting, i);
}

/* Takes the doorbells of posts since the last pass into active and awaiting
 * (urnic_engine_doorbell: the acquire exchange makes the posts' WQEs visible). Inline:
 * every pass runs it twice, and it mostly finds nothing. */
static inline void take_doorbells(struct urnic_engine *e)
{
	for (uint32_t w = 0, words = slot_words(e); w < words; w++) {
		uint64_t b;

		if (!atomic_load_explicit(&e->doorbells[w], memory_order_relaxed))
			continue;
		b = atomic_exchange_explicit(&e->doorbells[w], 0, memory_order_acquire);
		e->active[w] |= b;
		e->awaiting[w] |= b;
	}
}

/* Receive WQEs posted to the QP's own queue and not yet taken (none with an SRQ). */
static bool rq_posted(const struct urnic_qp *qp)
{
	return atomic_load_explicit(&qp->rq.prod, memory_order_acquire) !=
	       atomic_load_explicit(&qp->rq.cons, memory_order_relaxed);
}

/* Send WQEs posted and not yet completed. */
static bool sends_outstanding(const struct urnic_qp *qp)
{
	return atomic_load_explicit(&qp->sq.prod, memory_order_acquire) != qp->comp.idx;
}

/* Nothing for a pass to do on this QP until a packet, a modify or a post: every WQE
 * posted has completed (flushed, in error), no ACK, NAK or READ response is owed, no
 * retry is due and no timer or hold is armed, and in error no receive is left to
 * flush. What each progress function looks at, and no more; the audit (audit_idle)
 * checks that they agree. */
static bool qp_quiet(const struct urnic_qp *qp)
{
	uint32_t prod = atomic_load_explicit(&qp->sq.prod, memory_order_acquire);

	if (prod != qp->comp.idx || prod != qp->req.idx)
		return false;
	if (qp->req.need_retry || qp->req.rto_deadline_ns || qp->req.rnr_deadline_ns ||
	    qp->comp.uc_hold_ns)
		return false;
	if (qp->resp.ack_pending || qp->resp.replying || qp->resp.ack_hold_ns)
		return false;
	return qp->state != URNIC_QPS_ERR || qp->srq || !rq_posted(qp);
}

uint32_t urnic_engine_random(struct urnic_engine *e)
{
	/* xorshift64*: unpredictable enough for key bits once seeded from getrandom(). */
	e->rng ^= e->rng >> 12;
	e->rng ^= e->rng << 25;
	e->rng ^= e->rng >> 27;
	return (uint32_t)((e->rng * 0x2545f4914f6cdd1dull) >> 32);
}

int urnic_engine_qp_add(struct urnic_engine *e, struct urnic_qp *qp)
{
	/* QPN = owner << 20 | generation << 12 | index. Indexes 0 and 1 are QP0/QP1
	 * (IBTA 3.5.3). The owner is the process's slot on a shared address, so QPNs are
	 * unique per address and packets can be steered by them. A QPN must not come back
	 * soon: a peer's packets, a window bound through a QP (IBTA 10.6.7: a type 2B
	 * window serves its QP only) or anything else that names the old QP would reach
	 * the new one. So slots are taken in turn, as rxe allocates QPNs cyclically, and
	 * each slot counts its own generation: a QPN recurs after 255 QPs have had its
	 * slot, at least 255 * 4094 creations while the table has room. */
	for (uint32_t n = 0; n < URNIC_MAX_QP; n++) {
		uint32_t i = (e->qp_next + n) % URNIC_MAX_QP;

		if (i < 2 || e->qps[i])
			continue;
		e->qp_next = i + 1;
		e->qp_gen[i] = (uint8_t)(e->qp_gen[i] + 1);
		if (!e->qp_gen[i])
			e->qp_gen[i] = 1; /* never 0: a QPN is never a bare index */
		qp->qpn = e->qpn_owner << URNIC_QPN_OWNER_SHIFT |
			  (uint32_t)e->qp_gen[i] << URNIC_QPN_INDEX_BITS | i;
		e->qps[i] = qp;
		if (i + 1 > e->qp_end)
			e->qp_end = i + 1;
		qp_wake(e, qp);
		if (e->qp_ctrs) {
			memset(&e->qp_ctrs[i], 0, sizeof(e->qp_ctrs[i]));
			e->qp_ctrs[i].type = (uint8_t)qp->type;
			e->qp_ctrs[i].state = (uint8_t)qp->state;
			e->qp_ctrs[i].qpn = qp->qpn;
		}
		return 0;
	}
	return -ENOMEM;
}

/* An ACK held for the application's answer (responder.c, rc_ack_held) leaves now, and
 * the tx batch with it, and UC send completions held for it are reported (uc.c): the
 * QP changes state or goes away (an ibv_rc_pingpong exits right after its last
 * receive, and its peer must still see the last SEND acknowledged). parting: the QP
 * goes away, and its last ACK is sent again if the peer may still wait for it
 * (responder.c, rc_parting_ack). */
static void release_held(struct urnic_engine *e, struct urnic_qp *qp, bool parting)
{
	if (qp->type == URNIC_QPT_UC && qp->comp.uc_hold_ns) {
		/* Send completions held for the answer (uc.c) are reported first. */
		serve(e, qp);
		urnic_uc_release_held(e, qp);
		serve_none(e);
		return;
	}
	if (qp->type != URNIC_QPT_RC || qp->state < URNIC_QPS_RTR || qp->state == URNIC_QPS_ERR ||
	    (!parting && !qp->resp.ack_pending))
		return;
	serve(e, qp);
	rc_flush_pending_ack(e, qp);
	if (parting)
		rc_parting_ack(e, qp);
	serve_none(e);
	if (e->ntx)
		e->flush(e);
}

void urnic_engine_qp_remove(struct urnic_engine *e, struct urnic_qp *qp)
{
	uint32_t i = qp->qpn & (URNIC_MAX_QP - 1);

	release_held(e, qp, true);
	/* Its type 2B windows could serve no other QP; a later QP must not inherit them. */
	urnic_mw_release_qp(&e->mrs, qp->qpn);

	if (e->qps[i] == qp) {
		e->qps[i] = NULL;
		slot_clear(e->active, i);
		slot_clear(e->awaiting, i);
		if (e->qp_ctrs)
			e->qp_ctrs[i].qpn = 0;
	}
	while (e->qp_end > 2 && !e->qps[e->qp_end - 1])
		e->qp_end--;
}

struct urnic_qp *urnic_engine_qp_find(struct urnic_engine *e, uint32_t qpn)
{
	struct urnic_qp *qp = e->qps[qpn & (URNIC_MAX_QP - 1)];

	return qp && qp->qpn == qpn ? qp : NULL;
}

/* ---- transmit ---- */

struct urnic_txpkt *urnic_tx_begin(struct urnic_engine *e, const struct urnic_qp *qp)
{
	struct urnic_txpkt *p;

	if (e->ntx == URNIC_TX_BATCH)
		e->flush(e);
	p = &e->tx[e->ntx];
	p->wire = e->ntx ? e->tx[e->ntx - 1].wire + urnic_txpkt_bytes(&e->tx[e->ntx - 1])
			 : e->tx_wire;
	p->dst = qp->attr.peer;
	p->hdr_bytes = 0;
	p->payload_bytes = 0;
	p->nfrags = 0;
	p->trailer_bytes = 0;
	return p;
}

/*
 * Lays packet p out in tx_wire and computes its ICRC (IBTA A17.3.3) on the way: the
 * payload is copied from its fragments by urnic_crc32_copy, which folds each block into
 * the CRC as it stores it, so the payload is read once (the ICRC over the fragments and
 * a copy at send time read it twice: docs/performance.md, session 10). The bytes are
 * those a socket sends; IPv4 ID 0, what Linux sends from an unconnected DF socket (the
 * transport adjusts the ICRC of GSO segments, which get IDs 0, 1, 2, ...).
 */
void urnic_tx_commit(struct urnic_engine *e, struct urnic_txpkt *p)
{
	static const uint8_t zeros[3];
	struct urnic_icrc_flow flow = { 0 };
	uint32_t pad = (4 - (p->payload_bytes & 3)) & 3;
	uint32_t total = p->hdr_bytes + p->payload_bytes + pad;
	uint8_t *d = p->wire;
	uint32_t c;

	/* tx_wire holds a batch of the largest packets: nothing larger is built (the path
	 * MTU is at most URNIC_TX_PAYLOAD_MAX), and a bug that did is refused here. */
	if (p->payload_bytes > URNIC_TX_PAYLOAD_MAX || p->hdr_bytes > URNIC_TX_HDR_MAX) {
		urnic_count(e, URNIC_CTR_drop_tx_failed);
		return;
	}
	flow.ipv6 = e->ipv6;
	memcpy(flow.src, e->local_ip, 16);
	memcpy(flow.dst, p->dst.ip, 16);
	flow.sport = p->dst.sport;
	flow.dport = URNIC_ROCE_UDP_PORT;
	memcpy(d, p->hdr, p->hdr_bytes);
	c = urnic_icrc_flow(&flow, &(struct urnic_frag){ d, p->hdr_bytes }, 1, total);
	d += p->hdr_bytes;
	for (uint32_t i = 0; i < p->nfrags; i++) {
		c = urnic_crc32_copy(c, d, p->frags[i].base, p->frags[i].len);
		d += p->frags[i].len;
	}
	c = urnic_crc32_copy(c, d, zeros, pad);
	d += pad;
	urnic_put_le32(d, c);
	p->trailer_bytes = pad + URNIC_ICRC_BYTES;
	e->ntx++;
	urnic_count(e, URNIC_CTR_tx_packets);
	urnic_count_n(e, URNIC_CTR_tx_bytes, total + URNIC_ICRC_BYTES);
}

/* ---- completions and errors ---- */

bool urnic_complete(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_cq *cq,
		    const struct urnic_cqe *cqe, bool solicited)
{
	if (urnic_cq_push(cq, cqe, solicited))
		return true;
	/* IBTA 11.4.2.1 (CQ overrun): the QP goes to the error state. */
	urnic_count(e, URNIC_CTR_cq_overflow);
	if (qp->state != URNIC_QPS_ERR)
		urnic_qp_to_error(e, qp);
	return false;
}

static void flush_rq(struct urnic_engine *e, struct urnic_qp *qp)
{
	uint32_t cons = atomic_load_explicit(&qp->rq.cons, memory_order_relaxed);
	uint32_t prod = atomic_load_explicit(&qp->rq.prod, memory_order_acquire);

	/* With an SRQ only the WQE this QP took out of it is the QP's to flush; the rest
	 * stays in the shared ring for the other QPs (IBTA 10.2.9). */
	if (qp->srq) {
		roce_flush_held_rwqe(e, qp);
		return;
	}
	if (!qp->recv_cq || qp->rq.depth == 0)
		return;
	for (; cons != prod; cons++) {
		const struct urnic_recv_wqe *w = urnic_wq_slot(&qp->rq, cons);
		struct urnic_cqe cqe = {
			.wr_id = w->wr_id,
			.status = URNIC_WC_WR_FLUSH_ERR,
			.opcode = URNIC_WC_RECV,
			.qp_num = qp->qpn,
		};

		if (!urnic_cq_has_room(qp->recv_cq)) {
			urnic_count(e, URNIC_CTR_cq_overflow);
			break;
		}
		/* The slot is free before its completion is visible, as for sends
		 * (roce_complete_swqe): a reaper that reposts at once finds room. */
		atomic_store_explicit(&qp->rq.cons, cons + 1, memory_order_release);
		urnic_cq_push(qp->recv_cq, &cqe, false);
	}
	qp->resp.have_rwqe = false;
}

/* Moves the QP to error and flushes its work (IBTA 10.3.1). fatal: it fell into error
 * by itself (IBV_EVENT_QP_FATAL), not by ibv_modify_qp. */
static void enter_error(struct urnic_engine *e, struct urnic_qp *qp, bool fatal)
{
	bool was_error = qp->state == URNIC_QPS_ERR;

	qp_wake(e, qp);
	/* UC sends held for the answer left: they complete successfully, before the
	 * flush (a CQ overrun while they do ends here again with nothing held). */
	if (qp->type == URNIC_QPT_UC)
		urnic_uc_release_held(e, qp);

	/* The ACK already owed for requests this QP executed still goes out (rxe sends
	 * each ACK as it executes the request; only our coalescing held it back), or the
	 * peer would fail work its receiver has completed. */
	if (fatal && qp->type == URNIC_QPT_RC && qp->state >= URNIC_QPS_RTR)
		rc_flush_pending_ack(e, qp);
	qp->state = URNIC_QPS_ERR;
	note_state(e, qp);
	qp->req.rto_deadline_ns = 0;
	qp->req.rnr_deadline_ns = 0;
	qp->resp.ack_pending = false;
	qp->resp.ack_hold_ns = 0;
	qp->resp.replying = 0;
	urnic_rc_flush(e, qp);
	flush_rq(e, qp);
	if (fatal && e->qp_fatal)
		e->qp_fatal(e, qp);
	/* IBTA 10.2.9 / 11.6.3: a QP on an SRQ that enters error will take no more of its
	 * WQEs; the application learns it from the Last WQE Reached event. */
	if (!was_error && qp->srq && e->qp_last_wqe)
		e->qp_last_wqe(e, qp);
}

void urnic_qp_to_error(struct urnic_engine *e, struct urnic_qp *qp)
{
	enter_error(e, qp, qp->state != URNIC_QPS_ERR);
}

static void reset_protocol_state(struct urnic_qp *qp)
{
	memset(&qp->req, 0, sizeof(qp->req));
	memset(&qp->comp, 0, sizeof(qp->comp));
	memset(&qp->resp, 0, sizeof(qp->resp));
	/* IBTA 10.3.1: RESET empties the work queues. */
	atomic_store(&qp->sq.prod, 0);
	atomic_store(&qp->sq.cons, 0);
	atomic_store(&qp->rq.prod, 0);
	atomic_store(&qp->rq.cons, 0);
}

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

void urnic_engine_qp_apply(struct urnic_engine *e, struct urnic_qp *qp,
			   const struct urnic_qp_attr *attr, enum urnic_qp_state next,
			   uint32_t mask)
{
	struct urnic_qp_attr *a = &qp->attr;

	qp_wake(e, qp);
	if (mask & URNIC_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & URNIC_QP_ACCESS_FLAGS)
		a->access = attr->access;
	if (mask & URNIC_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & URNIC_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & URNIC_QP_AV) {
		a->peer = attr->peer;
		a->sgid_index = attr->sgid_index;
	}
	if (mask & URNIC_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & URNIC_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & URNIC_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & URNIC_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & URNIC_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn & URNIC_PSN_MASK;
	if (mask & URNIC_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn & URNIC_PSN_MASK;
	if (mask & URNIC_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & URNIC_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & URNIC_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & URNIC_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;

	if (!(mask & URNIC_QP_STATE) || next == qp->state)
		return;
	release_held(e, qp, false);
	switch (next) {
	case URNIC_QPS_RESET:
		reset_protocol_state(qp);
		break;
	case URNIC_QPS_RTR:
		qp->resp.epsn = a->rq_psn;
		qp->resp.msn = 0;
		qp->resp.res_count = pow2_at_least(a->max_dest_rd_atomic ? a->max_dest_rd_atomic : 1);
		break;
	case URNIC_QPS_RTS:
		qp->req.psn = a->sq_psn;
		qp->comp.psn = a->sq_psn;
		qp->req.retry_left = a->retry_cnt;
		qp->req.rnr_left = a->rnr_retry;
		break;
	case URNIC_QPS_ERR:
		serve(e, qp);
		enter_error(e, qp, false);
		serve_none(e);
		return;
	default:
		break;
	}
	qp->state = next;
	note_state(e, qp);
}

/* ---- receive ---- */

static bool op_matches_qp_type(uint32_t flags, enum urnic_qp_type t)
{
	switch (t) {
	case URNIC_QPT_RC:
		return flags & URNIC_OPF_RC;
	case URNIC_QPT_UC:
		return flags & URNIC_OPF_UC;
	case URNIC_QPT_UD:
		return flags & URNIC_OPF_UD;
	}
	return false;
}

/*
 * IBTA A17.3.3: the ICRC as the sender must have computed it over the IP and UDP headers
 * the socket does not show us. An IPv4 sender's ID is assumed to be the transport's hint
 * (0 for a datagram from an unconnected DF socket, k for segment k of a GSO send: urnic
 * to urnic); otherwise the ID is recovered from the difference (Linux rxe counts it)
 * and believed only if the source could have sent it (ip_id.h: a GSO segment number, or
 * an ID just ahead of a counting source's last), or only 16 of the CRC's 32 bits would
 * be left to catch corruption. What the check saw goes into e->rx_ip_id, for the table
 * to learn only once a QP has accepted the packet (rx_from_peer).
 */
static bool icrc_ok(struct urnic_engine *e, const struct urnic_pkt *pkt, const uint8_t *src_ip,
		    uint16_t sport, const uint8_t *dst_ip, const uint8_t *buf, size_t len)
{
	const struct urnic_ip_id_table *ids =
	    (urnic_opcode_info(pkt->bth.opcode)->flags & URNIC_OPF_UD) ? &e->ip_ids_ud : &e->ip_ids;
	struct urnic_icrc_flow flow = { 0 };
	struct urnic_frag frag = { buf, len - URNIC_ICRC_BYTES };
	uint32_t rx = urnic_get_le32(buf + frag.len), icrc;
	uint16_t ip_id;

	flow.ipv6 = e->ipv6;
	memcpy(flow.src, src_ip, e->ipv6 ? 16 : 4);
	memcpy(flow.dst, dst_ip, e->ipv6 ? 16 : 4);
	flow.sport = sport;
	flow.dport = URNIC_ROCE_UDP_PORT;
	flow.ip_id = e->ipv6 ? 0 : e->rx_ip_id_hint;
	icrc = urnic_icrc_flow(&flow, &frag, 1, frag.len);
	if (icrc == rx) {
		if (!e->ipv6)
			e->rx_ip_id.kind = URNIC_IP_ID_SEEN_HINT;
		return true;
	}
	if (!e->ipv6 && e->icrc_any_ipv4_id &&
	    urnic_icrc_ipv4_id(icrc, rx, frag.len, &ip_id) == 0 &&
	    urnic_ip_id_plausible(ids, src_ip, ip_id, e->now_ns)) {
		e->rx_ip_id = (struct urnic_ip_id_seen){ URNIC_IP_ID_SEEN_RECOVERED, ip_id };
		urnic_count(e, URNIC_CTR_rx_icrc_ipv4_id);
		return true;
	}
	urnic_count(e, URNIC_CTR_drop_bad_icrc);
	return false;
}

enum {
	/* Requests within this many PSNs of the expected one are learned from: what rxe
	 * (128) or urnic (256, qp.h) may have outstanding, so that the packets a loss makes
	 * the responder discard before go-back-N still move a counting source's last ID
	 * with it (each of them took an ID). A blind forger names such a PSN once in 2^15
	 * tries, besides the QPN, the peer's address and an ID the source could send. */
	IP_ID_PSN_NEAR = 256,
};

/*
 * Whether a packet that passed its QP's checks (state, transport, P_Key, source) is
 * also one only its peer could have sent, for the IPv4 ID table to learn from it: a
 * request near the PSN the responder expects (IBTA 9.7.5.1.1, 9.8), a response to a PSN
 * outstanding (the completer's window, 9.7.5.2), or for UD the QP's Q_Key (10.2.5: UD
 * has no connected peer, so its table is kept apart). A forged packet to a QP that does
 * not exist, from another address or with a PSN its QP would not take teaches nothing.
 */
static bool rx_from_peer(const struct urnic_qp *qp, const struct urnic_pkt *pkt, uint32_t flags)
{
	int32_t d;

	switch (qp->type) {
	case URNIC_QPT_RC:
		if (!(flags & URNIC_OPF_REQ))
			return urnic_psn_diff(pkt->bth.psn, qp->comp.psn) >= -1 &&
			       urnic_psn_diff(pkt->bth.psn, qp->req.psn) < 0;
		/* fall through */
	case URNIC_QPT_UC:
		d = urnic_psn_diff(pkt->bth.psn, qp->resp.epsn);
		return d >= -IP_ID_PSN_NEAR && d <= IP_ID_PSN_NEAR;
	case URNIC_QPT_UD:
		return pkt->deth.qkey == qp->attr.qkey;
	}
	return false;
}

static void learn_ip_id(struct urnic_engine *e, const struct urnic_qp *qp, const uint8_t *src_ip)
{
	urnic_ip_id_learn(qp->type == URNIC_QPT_UD ? &e->ip_ids_ud : &e->ip_ids, src_ip,
			  &e->rx_ip_id, e->now_ns);
	e->rx_ip_id.kind = URNIC_IP_ID_SEEN_NONE; /* once, for a multicast packet's QPs too */
}

/* A packet for this QP, already decoded and its ICRC checked: QP state, transport,
 * P_Key and source are validated before the protocol sees it. */
static void rx_qp(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
		  const uint8_t *src_ip, const uint8_t *dst_ip, size_t len)
{
	const struct urnic_opcode_info *info = urnic_opcode_info(pkt->bth.opcode);
	bool from_peer;

	/* IBTA 10.3.1 table 90: RESET and INIT discard; ERR discards too. */
	if (qp->state == URNIC_QPS_ERR) {
		urnic_count(e, URNIC_CTR_drop_qp_error);
		return;
	}
	if (qp->state < URNIC_QPS_RTR ||
	    ((info->flags & URNIC_OPF_RESP) && qp->state < URNIC_QPS_RTS)) {
		urnic_count(e, URNIC_CTR_drop_qp_state);
		return;
	}
	if (!op_matches_qp_type(info->flags, qp->type)) {
		urnic_count(e, URNIC_CTR_drop_opcode_qp_type);
		return;
	}
	/* IBTA 10.9.3: P_Keys match when the low 15 bits agree and one of the two is a
	 * full member; our only P_Key is the default 0xffff (full member). */
	if ((pkt->bth.pkey & 0x7fff) != 0x7fff) {
		urnic_count(e, URNIC_CTR_drop_bad_pkey);
		return;
	}
	if (qp->type != URNIC_QPT_UD &&
	    memcmp(src_ip, qp->attr.peer.ip, e->ipv6 ? 16 : 4) != 0) {
		urnic_count(e, URNIC_CTR_drop_addr_mismatch);
		return;
	}
	from_peer = rx_from_peer(qp, pkt, info->flags);
	qp_wake(e, qp); /* what the packet leaves to do (an ACK, a response, a send) */
	switch (qp->type) {
	case URNIC_QPT_RC:
		if (info->flags & URNIC_OPF_REQ) {
			e->rx_requests++;
			qp->resp.heard_since_send = true;
			urnic_rc_responder_rx(e, qp, pkt);
		} else {
			/* An ACK of a ping-pong before the peer's answer to what we sent: the
			 * answer may come in a later datagram (a message of several packets)
			 * or, if the peer's hold expired, much later. */
			if (pkt->bth.opcode == URNIC_OP_RC_ACKNOWLEDGE &&
			    qp->resp.ack_interactive && !qp->resp.heard_since_send)
				e->answers_due++;
			urnic_rc_completer_rx(e, qp, pkt);
		}
		break;
	case URNIC_QPT_UC:
		e->rx_requests++;
		urnic_uc_responder_rx(e, qp, pkt);
		break;
	case URNIC_QPT_UD:
		e->rx_requests++;
		urnic_ud_responder_rx(e, qp, pkt, src_ip, dst_ip, len);
		break;
	}
	if (from_peer)
		learn_ip_id(e, qp, src_ip);
}

/* A packet to a multicast group (DestQP 0xFFFFFF, mcast.h) goes to every QP of this
 * device attached to its destination address, each validating it as its own (state, a
 * UD opcode, its Q_Key, a receive WQE), as rxe_rcv_mcast_pkt. */
static void rx_mcast(struct urnic_engine *e, const struct urnic_pkt *pkt, const uint8_t *src_ip,
		     const uint8_t *dst_ip, size_t len)
{
	const struct urnic_mcast_group *g = urnic_mcast_find(&e->mcast, e->ipv6, dst_ip);

	if (!g) {
		urnic_count(e, URNIC_CTR_drop_mcast_no_group);
		return;
	}
	for (uint32_t i = 0; i < g->nqp; i++) {
		struct urnic_qp *qp = urnic_engine_qp_find(e, g->qpn[i]);

		if (!qp)
			continue;
		serve(e, qp);
		if (e->cur_qp_ctrs) {
			e->cur_qp_ctrs[URNIC_CTR_rx_packets]++;
			e->cur_qp_ctrs[URNIC_CTR_rx_bytes] += len;
		}
		rx_qp(e, qp, pkt, src_ip, dst_ip, len);
		serve_none(e);
	}
}

void urnic_engine_rx(struct urnic_engine *e, const uint8_t *src_ip, uint16_t sport,
		     const uint8_t *dst_ip, const uint8_t *buf, size_t len)
{
	struct urnic_pkt pkt;
	struct urnic_qp *qp;

	urnic_count(e, URNIC_CTR_rx_packets);
	e->counters[URNIC_CTR_rx_bytes] += len;
	if (urnic_pkt_decode(&pkt, buf, len) < 0) {
		urnic_count(e, URNIC_CTR_drop_bad_header);
		return;
	}
	e->rx_ip_id.kind = URNIC_IP_ID_SEEN_NONE;
	if (!e->skip_icrc_check && !icrc_ok(e, &pkt, src_ip, sport, dst_ip, buf, len))
		return;
	if (pkt.bth.dqpn == URNIC_MCAST_QPN) {
		rx_mcast(e, &pkt, src_ip, dst_ip, len);
		return;
	}
	/* IBTA 10.5 / A17.4: a packet to a group is multicast and names DestQP 0xFFFFFF; one
	 * that names a QP is addressed to no QP here (a group socket receives it whether or
	 * not that QP joined, and an RC QP never joins). */
	if (urnic_mcast_ip(e->ipv6, dst_ip)) {
		urnic_count(e, URNIC_CTR_drop_mcast_unicast_qpn);
		return;
	}
	qp = urnic_engine_qp_find(e, pkt.bth.dqpn);
	if (!qp) {
		urnic_count(e, URNIC_CTR_drop_unknown_qp);
		return;
	}
	serve(e, qp);
	if (e->cur_qp_ctrs) {
		e->cur_qp_ctrs[URNIC_CTR_rx_packets]++;
		e->cur_qp_ctrs[URNIC_CTR_rx_bytes] += len;
	}
	rx_qp(e, qp, &pkt, src_ip, dst_ip, len);
	serve_none(e);
}

/* ---- progress and timers ---- */

/* One QP's share of a pass: its posted work, its replies, its flushes. */
static bool progress_qp(struct urnic_engine *e, struct urnic_qp *qp)
{
	bool did = false;

	serve(e, qp);
	if (qp->state == URNIC_QPS_ERR) {
		/* Work posted to a QP in error completes with FLUSH_ERR (IBTA 10.3.1). */
		if (sends_outstanding(qp)) {
			urnic_rc_flush(e, qp);
			did = true;
		}
		if (rq_posted(qp)) {
			flush_rq(e, qp);
			did = true;
		}
		return did;
	}
	switch (qp->type) {
	case URNIC_QPT_RC: {
		/* An ACK that is not held leaves before new requests, as rxe sends it on
		 * receipt: an application waiting for events counts on its send completion
		 * coming before the peer's answer (perftest -e re-arms only the CQ it was
		 * woken for). An ACK held for the application's answer leaves right behind
		 * it, in the same GSO send, so that the peer's poll takes in both
		 * (responder.c, rc_ack_held). */
		bool held = qp->resp.ack_pending && qp->resp.ack_hold_ns;
		uint32_t psn = qp->req.psn;
		bool answered = false;

		if (!held && qp->state >= URNIC_QPS_RTR)
			did |= urnic_rc_responder_progress(e, qp, false);
		if (qp->state == URNIC_QPS_RTS) {
			did |= urnic_rc_requester_progress(e, qp);
			answered = qp->req.psn != psn;
			if (answered) {
				qp->resp.heard_since_send = false;
				urnic_rc_responder_answered(e, qp);
			}
		}
		if (held && qp->state >= URNIC_QPS_RTR)
			did |= urnic_rc_responder_progress(e, qp, answered);
		break;
	}
	case URNIC_QPT_UC:
		if (qp->state == URNIC_QPS_RTS)
			did |= urnic_uc_requester_progress(e, qp);
		break;
	case URNIC_QPT_UD:
		if (qp->state == URNIC_QPS_RTS)
			did |= urnic_ud_requester_progress(e, qp);
		break;
	}
	return did;
}

bool urnic_engine_progress(struct urnic_engine *e)
{
	bool did = false;

	take_doorbells(e);
	for (uint32_t w = 0, words = slot_words(e); w < words; w++) {
		for (uint64_t bits = e->active[w]; bits; bits &= bits - 1) {
			uint32_t i = slot_of(w, bits);
			struct urnic_qp *qp = e->qps[i];

			if (!qp) {
				slot_clear(e->active, i);
				continue;
			}
			did |= progress_qp(e, qp);
		}
	}
	serve_none(e);
	return did;
}

/* Does the application wait on this QP for a completion: sends not yet completed, or
 * receive WQEs posted (its own or its SRQ's)? */
static bool qp_awaited(const struct urnic_qp *qp)
{
	if (qp->state < URNIC_QPS_RTR || qp->state == URNIC_QPS_ERR)
		return false;
	if (sends_outstanding(qp))
		return true;
	return qp->srq ? urnic_srq_count(qp->srq) != 0 : rq_posted(qp);
}

bool urnic_engine_app_awaits(struct urnic_engine *e)
{
	take_doorbells(e);
	/* A QP outside both sets has no send outstanding (it is quiet) and no receive
	 * posted since a pass last found its queue empty (a post rings its doorbell). */
	for (uint32_t w = 0, words = slot_words(e); w < words; w++) {
		for (uint64_t bits = e->active[w] | e->awaiting[w]; bits; bits &= bits - 1) {
			uint32_t i = slot_of(w, bits);
			struct urnic_qp *qp = e->qps[i];

			if (!qp) {
				slot_clear(e->awaiting, i);
				continue;
			}
			if (qp_awaited(qp))
				return true;
			if (!qp->srq && !rq_posted(qp))
				slot_clear(e->awaiting, i);
		}
	}
	return false;
}

/* A hold for the application's answer ending at `until`: past it, the next progress
 * releases what is held; else the earliest such end goes into *hold. */
static void note_hold(struct urnic_engine *e, uint64_t until, uint64_t *hold)
{
	if (e->now_ns >= until)
		e->timers_fired = true;
	else if (!*hold || until < *hold)
		*hold = until;
}

/* The timers of the active QPs; a QP found quiet leaves the active set here, after
 * the pass's progress has had its turn. */
uint64_t urnic_engine_timers(struct urnic_engine *e)
{
	uint64_t next = 0, hold = 0;

	for (uint32_t w = 0, words = slot_words(e); w < words; w++) {
		for (uint64_t bits = e->active[w]; bits; bits &= bits - 1) {
			uint32_t i = slot_of(w, bits);
			struct urnic_qp *qp = e->qps[i];

			if (!qp || qp_quiet(qp)) {
				slot_clear(e->active, i);
				continue;
			}
			if (qp->state != URNIC_QPS_RTS)
				continue;
			/* Held UC completions (uc.c): the requester's progress releases them. */
			if (qp->type == URNIC_QPT_UC && qp->comp.uc_hold_ns)
				note_hold(e, qp->comp.uc_hold_ns, &hold);
			if (qp->type != URNIC_QPT_RC)
				continue;
			serve(e, qp);
			urnic_rc_completer_timers(e, qp, &next);
			if (qp->resp.ack_pending && qp->resp.ack_hold_ns)
				note_hold(e, qp->resp.ack_hold_ns, &hold); /* progress sends it */
		}
	}
	serve_none(e);
	e->timer_deadline = next;
	e->ack_hold_deadline = hold;
	return !next || (hold && hold < next) ? hold : next;
}

/* The audit (engine.h, audit_idle): every QP outside the active set must be one that
 * a pass would leave alone, and the sets must give urnic_engine_app_awaits the answer
 * a scan of every QP gives. */
static void audit_idle(struct urnic_engine *e)
{
	bool awaits = urnic_engine_app_awaits(e), any = false;

	for (uint32_t i = 2; i < e->qp_end; i++) {
		struct urnic_qp *qp = e->qps[i];
		uint32_t ntx = e->ntx;

		if (!qp)
			continue;
		any |= qp_awaited(qp);
		if (slot_test(e->active, i))
			continue;
		if (!qp_quiet(qp) || progress_qp(e, qp) || e->ntx != ntx) {
			fprintf(stderr,
				"urnic: audit: QP 0x%x (%s) has work outside the active set\n",
				qp->qpn, urnic_qp_state_name(qp->state));
			abort();
		}
	}
	serve_none(e);
	if (any != awaits) {
		fprintf(stderr, "urnic: audit: app_awaits %d, a scan of every QP says %d\n",
			awaits, any);
		abort();
	}
}

bool urnic_engine_pass(struct urnic_engine *e, uint64_t *deadline)
{
	bool did = urnic_engine_progress(e);

	e->timers_fired = false;
	*deadline = urnic_engine_timers(e);
	if (e->timers_fired)
		did |= urnic_engine_progress(e); /* the retries the timers asked for */
	if (e->audit_idle)
		audit_idle(e);
	return did;
}
