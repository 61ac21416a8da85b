/* SPDX-License-Identifier: MIT */
/*
 * fuzz_lane.c - the lane decoder (src/transport/local.c, recv_lane through
 * urnic_local_recv): arbitrary head and tail positions and ring bytes, as a peer of our
 * user may leave them in a shared memory lane (local.h).
 *
 * The lane is built by hand (no sockets): one receiving entry whose lane is a mapping of
 * URNIC_LOCAL_LANE_BYTES with a PROT_NONE page after the ring, so a header read past the
 * ring's end faults. Every record handed to rx lies wholly inside the ring, and the
 * records, the receiver's tail and drop_local_bad after each call are those of a naive
 * walk of local.h's rules: records start aligned, a header's len is at most
 * URNIC_LOCAL_REC_MAX or URNIC_LOCAL_REC_WRAP (the rest of the ring skipped), at most
 * URNIC_DIRECT_MAX_SEGS direct placement segments, none and no flags on a GSO run, a
 * record (with its segments from the 8-byte boundary after the packet) ends inside the
 * ring and at or before head, at most URNIC_LOCAL_RX_BUDGET per call; a lane that breaks
 * a rule is emptied (tail = head) and counted once. A record with flags or segments
 * comes with a note that holds them and the sender's pid. A broken rule aborts.
 *
 * Input: records as the engine targets' (harness.h: ctl, 2-byte big-endian length, body),
 * each a round of the peer's writes followed by the receiver's calls. A body is the new
 * head (8 bytes, little-endian); the receiver's starting tail (8 bytes, first round, when
 * ctl has LANE_TAIL); where the bytes go (4 bytes, mod the ring, when ctl has LANE_AT;
 * else at the receiver's tail); then the bytes, written round the ring's end. The ring is
 * zero before the first round.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "stats/counters.h"
#include "transport/local.h"

enum {
	LANE_TAIL = 1,	      /* the first round sets the receiver's starting tail */
	LANE_CALLS_SHIFT = 1, /* bits 1-2: urnic_local_recv calls in the round, less one */
	LANE_FRESH = 8,	      /* the calls come while the lane is fresh: nothing taken */
	LANE_AT = 16,	      /* the bytes go at an offset the round names */
	LANE_PID = 4242,      /* the sender's pid, as SO_PEERCRED would have said */
	CHUNK = 4096,	      /* the ring is zeroed again by chunks the input wrote */
	CHUNKS = URNIC_LOCAL_RING_BYTES / CHUNK,
};

struct seen {
	const uint8_t *ring;
	const uint8_t *src;
	uint32_t n;
	uint32_t off[URNIC_LOCAL_RX_BUDGET];
	uint32_t len[URNIC_LOCAL_RX_BUDGET];
};

/* What the naive walk expects of one call. */
struct expect {
	uint32_t n;
	uint32_t off[URNIC_LOCAL_RX_BUDGET];
	uint32_t len[URNIC_LOCAL_RX_BUDGET];
	uint64_t tail;
	bool bad;
};

static struct urnic_local l;
static uint8_t *ring;
static bool dirty[CHUNKS];

static void must(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_lane: %s\n", what);
		abort();
	}
}

/* The lane, with the ring's end on a page boundary and an inaccessible page after it. */
static struct urnic_local_lane *lane_map(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t front = (offsetof(struct urnic_local_lane, ring) + page - 1) / page * page;
	uint8_t *base = mmap(NULL, front + URNIC_LOCAL_RING_BYTES + page, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	must(base != MAP_FAILED, "cannot map a lane");
	must(!mprotect(base + front + URNIC_LOCAL_RING_BYTES, page, PROT_NONE),
	     "cannot protect the page after the ring");
	return (struct urnic_local_lane *)(base + front - offsetof(struct urnic_local_lane, ring));
}

static void rx(void *ctx, const struct urnic_local_rec *r)
{
	struct seen *s = ctx;
	struct urnic_local_rec_hdr h;

	uintptr_t at = (uintptr_t)r->pkt, start = (uintptr_t)s->ring;

	must(at >= start && r->len <= URNIC_LOCAL_RING_BYTES &&
		     at - start <= URNIC_LOCAL_RING_BYTES - (uintptr_t)r->len,
	     "a record outside the ring");
	must(at - start >= URNIC_LOCAL_REC_HDR, "a record without room for its header");
	must(s->n < URNIC_LOCAL_RX_BUDGET, "more records than the budget in one call");
	memcpy(&h, r->pkt - URNIC_LOCAL_REC_HDR, sizeof(h));
	must(h.len == r->len && h.seg == r->seg && h.sport == r->sport && h.tos == r->tos &&
		     h.ttl == r->ttl && r->src == s->src,
	     "a record differs from its header");
	must(!(h.direct_flags || h.direct_nseg) == !r->direct, "a note without a reason");
	if (r->direct) {
		uint32_t segs = ((uint32_t)URNIC_LOCAL_REC_HDR + r->len + 7) / 8 * 8;

		must(r->direct->flags == h.direct_flags && r->direct->nseg == h.direct_nseg &&
			     r->direct->pid == LANE_PID &&
			     !memcmp(r->direct->seg, r->pkt - URNIC_LOCAL_REC_HDR + segs,
				     h.direct_nseg * sizeof(r->direct->seg[0])),
		     "a note differs from its record");
	}
	s->off[s->n] = (uint32_t)(r->pkt - s->ring) - URNIC_LOCAL_REC_HDR;
	s->len[s->n++] = r->len;
}

/* local.h's rules, walked from tail to head as the receiver's next call must. */
static void walk(uint64_t tail, uint64_t head, struct expect *x)
{
	x->n = 0;
	x->bad = head - tail > URNIC_LOCAL_RING_BYTES;
	while (!x->bad && tail != head && x->n < URNIC_LOCAL_RX_BUDGET) {
		uint64_t left = head - tail, size;
		uint32_t off = (uint32_t)(tail % URNIC_LOCAL_RING_BYTES), len;

		if (off % URNIC_LOCAL_REC_ALIGN) {
			x->bad = true;
			break;
		}
		uint16_t seg;
		uint8_t flags, nseg;
		uint64_t end;

		memcpy(&len, ring + off, sizeof(len));
		if (len == URNIC_LOCAL_REC_WRAP) {
			size = URNIC_LOCAL_RING_BYTES - off;
			x->bad = size > left;
			tail += x->bad ? 0 : size;
			continue;
		}
		/* len 4, seg 2, sport 2, tos, ttl, flags, nseg */
		memcpy(&seg, ring + off + 4, sizeof(seg));
		flags = ring[off + 10];
		nseg = ring[off + 11];
		end = (uint64_t)URNIC_LOCAL_REC_HDR + len;
		if (nseg)
			end = (end + 7) / 8 * 8 + 16ull * nseg;
		size = (end + URNIC_LOCAL_REC_ALIGN - 1) / URNIC_LOCAL_REC_ALIGN *
		       URNIC_LOCAL_REC_ALIGN;
		if (len > URNIC_LOCAL_REC_MAX || nseg > 32 || (seg && (flags || nseg)) ||
		    size > left || off + size > URNIC_LOCAL_RING_BYTES) {
			x->bad = true;
			break;
		}
		x->off[x->n] = off;
		x->len[x->n++] = len;
		tail += size;
	}
	x->tail = x->bad ? head : tail;
}

static void call(struct urnic_local_lane *lane, uint8_t ctl)
{
	static uint64_t counters[URNIC_CTR_COUNT];
	struct urnic_local_in *e = &l.in[0];
	struct seen s = { .ring = ring, .src = e->src };
	uint64_t head = atomic_load(&lane->head), tail = e->tail;
	uint64_t bad = counters[URNIC_CTR_drop_local_bad];
	bool fresh = ctl & LANE_FRESH;
	/* taken_ns is 0: a lane URNIC_LOCAL_FRESH_NS old is no longer held. */
	uint32_t n = urnic_local_recv(&l, rx, &s,
				      fresh ? URNIC_LOCAL_FRESH_NS - 1 : URNIC_LOCAL_FRESH_NS, true,
				      counters);
	struct expect x;

	must(n == s.n, "the count returned differs from the records handed over");
	must(atomic_load(&lane->tail) == e->tail, "the lane's tail is not the receiver's");
	if (fresh) {
		must(n == 0 && e->tail == tail && counters[URNIC_CTR_drop_local_bad] == bad,
		     "a fresh lane was read");
		return;
	}
	walk(tail, head, &x);
	must(n == x.n, "not the records the rules give");
	for (uint32_t i = 0; i < n; i++)
		must(s.off[i] == x.off[i] && s.len[i] == x.len[i],
		     "a record other than the rules give");
	must(e->tail == x.tail, "the tail is not where the rules leave it");
	must(counters[URNIC_CTR_drop_local_bad] - bad == x.bad,
	     "drop_local_bad does not count the lanes the rules refuse");
}

/* Writes the round's bytes at off, round the ring's end; the chunks touched are zeroed
 * after the input. */
static void put(uint32_t off, const uint8_t *p, size_t len)
{
	while (len) {
		size_t k = URNIC_LOCAL_RING_BYTES - off < len ? URNIC_LOCAL_RING_BYTES - off : len;

		memcpy(ring + off, p, k);
		for (size_t c = off / CHUNK; c <= (off + k - 1) / CHUNK; c++)
			dirty[c] = true;
		p += k;
		len -= k;
		off = 0;
	}
}

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct urnic_local_lane *lane;
	struct urnic_local_in *e = &l.in[0];
	size_t off = 0;

	if (!lane) {
		lane = lane_map();
		ring = lane->ring;
	}
	l.on = true;
	l.direct = true;
	/* A connection that is still there (its fd is never read here): notes are taken. */
	*e = (struct urnic_local_in){ .fd = 0, .lane = lane, .pid = LANE_PID };
	for (int i = 1; i < URNIC_LOCAL_IN; i++)
		l.in[i] = (struct urnic_local_in){ .fd = -1 };
	atomic_store(&lane->head, 0);
	atomic_store(&lane->tail, 0);
	for (bool first = true; size - off >= FUZZ_REC_HDR; first = false) {
		uint8_t ctl = data[off];
		size_t len = (size_t)data[off + 1] << 8 | data[off + 2];
		const uint8_t *p = data + off + FUZZ_REC_HDR;
		size_t need = 8 + (first && (ctl & LANE_TAIL) ? 8 : 0) + (ctl & LANE_AT ? 4 : 0);
		uint32_t at;

		if (len > size - off - FUZZ_REC_HDR || len < need)
			break;
		off += FUZZ_REC_HDR + len;
		if (first && (ctl & LANE_TAIL)) {
			e->tail = le(p + 8, 8);
			atomic_store(&lane->tail, e->tail);
		}
		at = (uint32_t)(ctl & LANE_AT ? le(p + need - 4, 4) : e->tail);
		put(at % URNIC_LOCAL_RING_BYTES, p + need, len - need);
		atomic_store(&lane->head, le(p, 8));
		for (unsigned c = 0; c <= (ctl >> LANE_CALLS_SHIFT & 3u); c++)
			call(lane, ctl);
	}
	for (size_t c = 0; c < CHUNKS; c++)
		if (dirty[c]) {
			memset(ring + c * CHUNK, 0, CHUNK);
			dirty[c] = false;
		}
	return 0;
}
