/* SPDX-License-Identifier: MIT */
/*
 * fault.c - the faulty wire on the receive path: parsing the spec, the decisions, the
 * delay line and the reorder set. See fault.h.
 */
#include "transport/fault.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void defaults(struct urnic_fault_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->delay_ppm = URNIC_FAULT_PPM;
	c->reorder_depth = 4;
	c->reorder_max_ns = 1000000; /* 1 ms: a held-back packet on an idle link */
	c->delay_slots = URNIC_FAULT_DELAY_SLOTS;
}

/* "1%", "0.5%" or "0.01" -> parts per million. */
static int parse_prob(const char *v, uint32_t *ppm)
{
	char *end;
	double p = strtod(v, &end);

	if (end == v)
		return -EINVAL;
	if (*end == '%') {
		p /= 100.0;
		end++;
	}
	if (*end || !(p >= 0.0 && p <= 1.0))
		return -EINVAL;
	*ppm = (uint32_t)(p * URNIC_FAULT_PPM + 0.5);
	return 0;
}

/* "2ms", "500us", "100ns", "1s" -> nanoseconds. */
static int parse_time(const char *v, uint64_t *ns)
{
	char *end;
	double t = strtod(v, &end);
	double unit;

	if (end == v || !(t >= 0.0 && t < 1e6))
		return -EINVAL;
	if (strcmp(end, "ns") == 0)
		unit = 1.0;
	else if (strcmp(end, "us") == 0)
		unit = 1e3;
	else if (strcmp(end, "ms") == 0)
		unit = 1e6;
	else if (strcmp(end, "s") == 0)
		unit = 1e9;
	else
		return -EINVAL;
	*ns = (uint64_t)(t * unit + 0.5);
	return 0;
}

static int parse_uint(const char *v, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 0);
	if (end == v || *end || errno || n > max || *v == '-')
		return -EINVAL;
	*out = n;
	return 0;
}

static int parse_one(struct urnic_fault_conf *c, const char *key, const char *v)
{
	uint64_t n;
	int ret;

	if (strcmp(key, "drop") == 0)
		return parse_prob(v, &c->drop_ppm);
	if (strcmp(key, "corrupt") == 0)
		return parse_prob(v, &c->corrupt_ppm);
	if (strcmp(key, "dup") == 0)
		return parse_prob(v, &c->dup_ppm);
	if (strcmp(key, "reorder") == 0)
		return parse_prob(v, &c->reorder_ppm);
	if (strcmp(key, "delay_p") == 0)
		return parse_prob(v, &c->delay_ppm);
	if (strcmp(key, "delay") == 0)
		return parse_time(v, &c->delay_ns);
	if (strcmp(key, "reorder_max") == 0)
		return parse_time(v, &c->reorder_max_ns);
	if (strcmp(key, "reorder_depth") == 0) {
		ret = parse_uint(v, 1000, &n);
		if (ret || n == 0)
			return -EINVAL;
		c->reorder_depth = (uint32_t)n;
		return 0;
	}
	if (strcmp(key, "delay_slots") == 0) {
		ret = parse_uint(v, 1u << 16, &n);
		if (ret || n == 0)
			return -EINVAL;
		c->delay_slots = (uint32_t)n;
		return 0;
	}
	if (strcmp(key, "seed") == 0) {
		ret = parse_uint(v, UINT64_MAX, &c->seed);
		c->seeded = ret == 0;
		return ret;
	}
	return -EINVAL;
}

int urnic_fault_parse(struct urnic_fault_conf *c, const char *spec)
{
	char buf[512];
	char *save = NULL;

	defaults(c);
	if (strlen(spec) >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, spec, strlen(spec) + 1);
	for (char *tok = strtok_r(buf, ", \t\n", &save); tok;
	     tok = strtok_r(NULL, ", \t\n", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq)
			return -EINVAL;
		*eq = 0;
		if (parse_one(c, tok, eq + 1))
			return -EINVAL;
	}
	return 0;
}

bool urnic_fault_active(const struct urnic_fault_conf *c)
{
	return c->drop_ppm || c->corrupt_ppm || c->dup_ppm || c->reorder_ppm ||
	       (c->delay_ns && c->delay_ppm);
}

void urnic_fault_format(const struct urnic_fault_conf *c, char *out, size_t size)
{
	snprintf(out, size,
		 "drop=%.4g%%,corrupt=%.4g%%,dup=%.4g%%,reorder=%.4g%%,reorder_depth=%" PRIu32
		 ",reorder_max=%" PRIu64 "us,delay=%" PRIu64 "us,delay_p=%.4g%%,seed=%" PRIu64,
		 c->drop_ppm / 1e4, c->corrupt_ppm / 1e4, c->dup_ppm / 1e4, c->reorder_ppm / 1e4,
		 c->reorder_depth, c->reorder_max_ns / 1000, c->delay_ns / 1000, c->delay_ppm / 1e4,
		 c->seed);
}

int urnic_fault_init(struct urnic_fault *f, const struct urnic_fault_conf *c, uint64_t seed,
		     uint64_t *counters)
{
	size_t slots = URNIC_FAULT_REORDER_SLOTS + (size_t)c->delay_slots;

	memset(f, 0, sizeof(*f));
	f->conf = *c;
	if (!f->conf.seeded) {
		f->conf.seed = seed;
		f->conf.seeded = true;
	}
	/* xorshift must not start at 0. */
	f->rng = f->conf.seed ^ 0x9e3779b97f4a7c15ull;
	if (!f->rng)
		f->rng = 1;
	f->counters = counters;
	f->storage = malloc(slots * URNIC_FAULT_PKT_MAX);
	f->delay = calloc(c->delay_slots, sizeof(*f->delay));
	if (!f->storage || !f->delay) {
		free(f->storage);
		free(f->delay);
		f->storage = NULL;
		f->delay = NULL;
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < URNIC_FAULT_REORDER_SLOTS; i++)
		f->reorder[i].buf = f->storage + (size_t)i * URNIC_FAULT_PKT_MAX;
	for (uint32_t i = 0; i < c->delay_slots; i++)
		f->delay[i].buf =
			f->storage + (size_t)(URNIC_FAULT_REORDER_SLOTS + i) * URNIC_FAULT_PKT_MAX;
	return 0;
}

void urnic_fault_fini(struct urnic_fault *f)
{
	free(f->storage);
	free(f->delay);
	f->storage = NULL;
	f->delay = NULL;
	f->nreorder = 0;
	f->delay_count = 0;
}

static uint32_t rnd(struct urnic_fault *f)
{
	/* xorshift64*, as the engine's generator: reproducible from the seed. */
	f->rng ^= f->rng >> 12;
	f->rng ^= f->rng << 25;
	f->rng ^= f->rng >> 27;
	return (uint32_t)((f->rng * 0x2545f4914f6cdd1dull) >> 32);
}

/* One draw per configured fault, none for the others: enabling one fault does not
 * change where another strikes less than it must. */
static bool happens(struct urnic_fault *f, uint32_t ppm)
{
	return ppm && rnd(f) % URNIC_FAULT_PPM < ppm;
}

static void count(struct urnic_fault *f, enum urnic_counter c)
{
	f->counters[c]++;
}

static void hold(struct urnic_fault_held *h, uint64_t due_ns, uint32_t after, const uint8_t *src,
		 uint16_t sport, const uint8_t *buf, uint32_t len)
{
	h->due_ns = due_ns;
	h->after_pkts = after;
	h->len = len;
	h->sport = sport;
	memcpy(h->src, src, 16);
	memcpy(h->buf, buf, len);
}

/* Puts a packet in the reorder set: it will let 1..depth later packets pass. Returns
 * false when the set is full. */
static bool hold_back(struct urnic_fault *f, uint64_t now_ns, const uint8_t *src, uint16_t sport,
		      const uint8_t *buf, uint32_t len)
{
	if (f->nreorder == URNIC_FAULT_REORDER_SLOTS)
		return false;
	hold(&f->reorder[f->nreorder++], now_ns + f->conf.reorder_max_ns,
	     1 + rnd(f) % f->conf.reorder_depth, src, sport, buf, len);
	return true;
}

/* Delivers reorder-set entry i and removes it (the last entry takes its place). */
static void release_reorder(struct urnic_fault *f, uint32_t i, urnic_fault_deliver_fn deliver,
			    void *ctx)
{
	struct urnic_fault_held h = f->reorder[i];

	f->reorder[i] = f->reorder[--f->nreorder];
	f->reorder[f->nreorder] = h; /* keeps the slot's buffer in the pool */
	deliver(ctx, h.src, h.sport, h.buf, h.len);
}

/* A packet passes: deliver it, then the held-back packets it was the last to overtake. */
static void pass(struct urnic_fault *f, const uint8_t *src, uint16_t sport, const uint8_t *buf,
		 uint32_t len, urnic_fault_deliver_fn deliver, void *ctx)
{
	deliver(ctx, src, sport, buf, len);
	for (uint32_t i = 0; i < f->nreorder;) {
		if (--f->reorder[i].after_pkts == 0)
			release_reorder(f, i, deliver, ctx);
		else
			i++;
	}
}

void urnic_fault_rx(struct urnic_fault *f, uint64_t now_ns, const uint8_t *src, uint16_t sport,
		    uint8_t *buf, uint32_t len, urnic_fault_deliver_fn deliver, void *ctx)
{
	const struct urnic_fault_conf *c = &f->conf;
	bool dup;

	if (happens(f, c->drop_ppm)) {
		count(f, URNIC_CTR_fault_dropped);
		return;
	}
	if (happens(f, c->corrupt_ppm) && len) {
		/* Any byte, any non-zero flip: the receiver's checks must catch it. */
		buf[rnd(f) % len] ^= (uint8_t)(1 + rnd(f) % 255);
		count(f, URNIC_CTR_fault_corrupted);
	}
	dup = happens(f, c->dup_ppm);
	if (len > URNIC_FAULT_PKT_MAX) {
		if (dup || c->reorder_ppm || c->delay_ns)
			count(f, URNIC_CTR_fault_overflow); /* too big to hold: passes as is */
		pass(f, src, sport, buf, len, deliver, ctx);
		return;
	}
	if (happens(f, c->reorder_ppm)) {
		if (hold_back(f, now_ns, src, sport, buf, len)) {
			count(f, URNIC_CTR_fault_reordered);
			goto copy;
		}
		count(f, URNIC_CTR_fault_overflow);
	} else if (c->delay_ns && happens(f, c->delay_ppm)) {
		if (f->delay_count < c->delay_slots) {
			uint32_t tail = (f->delay_head + f->delay_count) % c->delay_slots;

			hold(&f->delay[tail], now_ns + c->delay_ns, 0, src, sport, buf, len);
			f->delay_count++;
			count(f, URNIC_CTR_fault_delayed);
			goto copy;
		}
		count(f, URNIC_CTR_fault_overflow);
	}
	pass(f, src, sport, buf, len, deliver, ctx);
copy:
	/* The duplicate arrives after 1..depth later packets, as a copy from a
	 * retransmitting switch or a looping path would. */
	if (dup) {
		count(f, URNIC_CTR_fault_duplicated);
		if (!hold_back(f, now_ns, src, sport, buf, len)) {
			count(f, URNIC_CTR_fault_overflow);
			deliver(ctx, src, sport, buf, len);
		}
	}
}

uint32_t urnic_fault_release(struct urnic_fault *f, uint64_t now_ns, urnic_fault_deliver_fn deliver,
			     void *ctx)
{
	uint32_t n = 0;

	while (f->delay_count && f->delay[f->delay_head].due_ns <= now_ns) {
		struct urnic_fault_held *h = &f->delay[f->delay_head];

		f->delay_head = (f->delay_head + 1) % f->conf.delay_slots;
		f->delay_count--;
		pass(f, h->src, h->sport, h->buf, h->len, deliver, ctx);
		n++;
	}
	for (uint32_t i = 0; i < f->nreorder;) {
		if (f->reorder[i].due_ns <= now_ns) {
			release_reorder(f, i, deliver, ctx);
			n++;
		} else {
			i++;
		}
	}
	return n;
}

uint64_t urnic_fault_deadline(const struct urnic_fault *f)
{
	uint64_t next = 0;

	if (f->delay_count)
		next = f->delay[f->delay_head].due_ns;
	for (uint32_t i = 0; i < f->nreorder; i++)
		if (!next || f->reorder[i].due_ns < next)
			next = f->reorder[i].due_ns;
	return next;
}
