/* SPDX-License-Identifier: MIT */
/*
 * local_ring.c - the records of a shared memory lane (local.h): a single-producer
 * single-consumer ring of 64-byte aligned records, written by the sender, read and
 * bounds-checked by the receiver; and the receiver's wake-up word.
 */
#include "transport/local.h"
#include "transport/local_int.h"

#include "stats/counters.h"

#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* Wakes the receiver if it sleeps: the Dekker pair of urnic_local_arm (each side
 * stores, fences, then loads the other's word). */
static void ring_bell(const struct urnic_local_out *e)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&e->lane->waiting, memory_order_relaxed) &&
	    atomic_exchange(&e->lane->waiting, 0))
		(void)send(e->fd, "b", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static bool room(struct urnic_local_out *e, uint64_t total)
{
	bool ok = e->head + total - atomic_load_explicit(&e->lane->tail, memory_order_acquire) <=
		  URNIC_LOCAL_RING_BYTES;

	if (ok)
		e->stalled = false;
	return ok;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Waits for room as the socket path waits for a full send buffer (udp_tx.c): the
 * receiver is woken whether it asked or not (it may be napping beside an application
 * that stopped polling), then looked at every 20 us. */
static bool wait_room(struct urnic_local_out *e, uint64_t total)
{
	struct timespec ts = { 0, 20000 };
	uint64_t until;

	if (e->stalled)
		return false;
	(void)send(e->fd, "b", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	until = mono_ns() + URNIC_LOCAL_FULL_WAIT_NS;
	do {
		nanosleep(&ts, NULL);
		if (room(e, total))
			return true;
	} while (mono_ns() < until);
	e->stalled = true;
	return false;
}

void urnic_local_put(struct urnic_local_out *e, const struct urnic_local_env *env,
		     const uint8_t *pkt, uint32_t len, uint64_t *counters)
{
	uint32_t need = urnic_local_rec_bytes(len, env->direct_nseg), off, to_end;
	uint64_t total;
	struct urnic_local_rec_hdr h = { .len = len,
					 .seg = env->seg,
					 .sport = env->sport,
					 .tos = env->tos,
					 .ttl = env->ttl,
					 .direct_flags = env->direct_flags,
					 .direct_nseg = env->direct_nseg };

	off = (uint32_t)(e->head % URNIC_LOCAL_RING_BYTES);
	to_end = URNIC_LOCAL_RING_BYTES - off;
	total = need > to_end ? (uint64_t)to_end + need : need;
	if (!room(e, total) && !wait_room(e, total)) {
		counters[URNIC_CTR_drop_local_full]++;
		return;
	}
	if (need > to_end) {
		struct urnic_local_rec_hdr wrap = { .len = URNIC_LOCAL_REC_WRAP };

		memcpy(e->lane->ring + off, &wrap, sizeof(wrap));
		e->head += to_end;
		off = 0;
	}
	memcpy(e->lane->ring + off, &h, sizeof(h));
	memcpy(e->lane->ring + off + URNIC_LOCAL_REC_HDR, pkt, len);
	if (env->direct_nseg)
		memcpy(e->lane->ring + off + urnic_local_seg_off(len), env->direct_seg,
		       env->direct_nseg * sizeof(*env->direct_seg));
	e->head += need;
	atomic_store_explicit(&e->lane->head, e->head, memory_order_release);
	ring_bell(e);
}

/* ---- the receiving side ---- */

/* A record's direct placement note, copied out of the lane (the sender may write it
 * meanwhile), with its sender's pid; NULL when the sender has left (its pid may name
 * another process soon). Given even when direct placement went off since the sender
 * looked (the engine then answers as it must: a direct WRITE is asked again). */
static const struct urnic_direct_note *take_note(struct urnic_local *l,
						 const struct urnic_local_in *e,
						 const struct urnic_local_rec_hdr *h, uint32_t off)
{
	struct urnic_direct_note *n = &l->rx_note;

	if (e->gone || e->fd < 0)
		return NULL;
	n->pid = e->pid;
	n->flags = h->direct_flags;
	n->nseg = h->direct_nseg;
	memcpy(n->seg, e->lane->ring + off + urnic_local_seg_off(h->len),
	       n->nseg * sizeof(n->seg[0]));
	return n;
}

/* The records of one lane; a malformed one empties it (drop_local_bad). */
static uint32_t recv_lane(struct urnic_local *l, struct urnic_local_in *e,
			  void (*rx)(void *ctx, const struct urnic_local_rec *r), void *ctx,
			  uint64_t *counters)
{
	uint64_t head = atomic_load_explicit(&e->lane->head, memory_order_acquire);
	uint32_t n = 0;

	if (head - e->tail > URNIC_LOCAL_RING_BYTES)
		goto bad;
	while (e->tail != head && n < URNIC_LOCAL_RX_BUDGET) {
		uint32_t off = (uint32_t)(e->tail % URNIC_LOCAL_RING_BYTES);
		struct urnic_local_rec_hdr h;
		struct urnic_local_rec r;

		/* Records start aligned; a head the peer left unaligned (then our tail,
		 * after a bad record) would put the header's read past the ring's end. */
		if (off % URNIC_LOCAL_REC_ALIGN)
			goto bad;
		memcpy(&h, e->lane->ring + off, sizeof(h));
		if (h.len == URNIC_LOCAL_REC_WRAP) {
			/* The skipped gap is bounded by what was written, like a record:
			 * else tail passes head and the loop reads the ring round and round. */
			if (URNIC_LOCAL_RING_BYTES - off > head - e->tail)
				goto bad;
			e->tail += URNIC_LOCAL_RING_BYTES - off;
			continue;
		}
		/* A note belongs to one packet: a GSO run with one is not our sender's. */
		if (h.len > URNIC_LOCAL_REC_MAX || h.direct_nseg > URNIC_DIRECT_MAX_SEGS ||
		    (h.seg && (h.direct_flags || h.direct_nseg)) ||
		    off + urnic_local_rec_bytes(h.len, h.direct_nseg) > URNIC_LOCAL_RING_BYTES ||
		    urnic_local_rec_bytes(h.len, h.direct_nseg) > head - e->tail)
			goto bad;
		r = (struct urnic_local_rec){ .src = e->src,
					      .sport = h.sport,
					      .seg = h.seg,
					      .tos = h.tos,
					      .ttl = h.ttl,
					      .pkt = e->lane->ring + off + URNIC_LOCAL_REC_HDR,
					      .len = h.len };
		if (h.direct_flags || h.direct_nseg)
			r.direct = take_note(l, e, &h, off);
		rx(ctx, &r);
		e->tail += urnic_local_rec_bytes(h.len, h.direct_nseg);
		atomic_store_explicit(&e->lane->tail, e->tail, memory_order_release);
		n++;
	}
	atomic_store_explicit(&e->lane->tail, e->tail, memory_order_release);
	return n;
bad:
	counters[URNIC_CTR_drop_local_bad]++;
	e->tail = head;
	atomic_store_explicit(&e->lane->tail, e->tail, memory_order_release);
	return n;
}

uint32_t urnic_local_recv(struct urnic_local *l,
			  void (*rx)(void *ctx, const struct urnic_local_rec *r), void *ctx,
			  uint64_t now_ns, bool hold_fresh, uint64_t *counters)
{
	uint32_t n = 0;

	if (!l->on)
		return 0;
	for (int i = 0; i < URNIC_LOCAL_IN; i++) {
		struct urnic_local_in *e = &l->in[i];

		if (!e->lane || (hold_fresh && now_ns - e->taken_ns < URNIC_LOCAL_FRESH_NS))
			continue;
		n += recv_lane(l, e, rx, ctx, counters);
		if (e->gone && e->tail == atomic_load(&e->lane->head))
			urnic_local_in_free(l, e);
	}
	return n;
}

bool urnic_local_arm(struct urnic_local *l)
{
	struct urnic_local_lane *lanes[URNIC_LOCAL_IN];
	bool waiting = false;

	if (!l->on)
		return false;
	atomic_store(&l->arming, 1);
	for (int i = 0; i < URNIC_LOCAL_IN; i++) {
		lanes[i] = atomic_load(&l->in[i].armable);
		if (lanes[i])
			atomic_store(&lanes[i]->waiting, 1);
	}
	atomic_thread_fence(memory_order_seq_cst);
	for (int i = 0; i < URNIC_LOCAL_IN; i++)
		if (lanes[i] && atomic_load_explicit(&lanes[i]->head, memory_order_relaxed) !=
					atomic_load_explicit(&lanes[i]->tail, memory_order_relaxed))
			waiting = true;
	atomic_store(&l->arming, 0);
	return waiting;
}

void urnic_local_disarm(struct urnic_local *l)
{
	if (!l->on)
		return;
	atomic_store(&l->arming, 1);
	for (int i = 0; i < URNIC_LOCAL_IN; i++) {
		struct urnic_local_lane *lane = atomic_load(&l->in[i].armable);

		if (lane)
			atomic_store_explicit(&lane->waiting, 0, memory_order_relaxed);
	}
	atomic_store(&l->arming, 0);
}
