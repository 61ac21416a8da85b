/* SPDX-License-Identifier: MIT */
/*
 * test_nscc.c - NSCC (src/cc/nscc.h) and receiver credits (src/cc/rccc.h) closed
 * through a modelled incast: eight senders with
 * 100 Gb/s NICs send as much as their windows allow to one receiver behind a 25 Gb/s
 * last hop, whose queue marks ECN as it grows (RED-like between K_MIN and K_MAX) and
 * trims what does not fit its buffer (a NACK goes back; the payload is sent again).
 *
 *   sender 0..7 --2 us--> [ queue, 25 Gb/s, marks, trims ] --2 us--> receiver
 *        ^                                                              |
 *        +------------------------- ACK, 4 us -------------------------+
 *
 * Each packet is acknowledged with its RTT and its mark. Once the control settles
 * (after SETTLE_NS) nothing is trimmed any more, the queue stays under a bound, the
 * link stays busy, and the senders share it fairly (Jain's index, as issue 30 asks, at
 * least 0.9). Without congestion control, printed beside, the queue sits at its limit
 * and trims go on. With receiver credits the receiver grants its link MTU by MTU and the
 * queue all but empties. On their own: each quadrant moves the window the way nscc.h
 * says; the credit counters wrap at 24 bits and refuse what is stale.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc/nscc.h"
#include "cc/rccc.h"
#include "check.h"
#include "sim_events.h"

enum {
	US = 1000,
	SENDERS = 8,
	PKT = 4096,
	NIC_BPS_G = 100,
	LINK_BPS_G = 25,
	K_MIN = 64 * 1024,  /* marking starts */
	K_MAX = 256 * 1024, /* every packet marked */
	BUFFER = 1024 * 1024,
	HOP_NS = 2 * US,
	ACK_NS = 4 * US,
	SETTLE_NS = 3000 * US,
	END_NS = 8000 * US,
	EVENTS_MAX = 65536,
};

enum kind { ARRIVE_QUEUE, DEPART_QUEUE, ACK, NACK, SEND, GRANT, CREDIT };

enum mode { NONE, NSCC, RCCC };

struct event {
	struct sim_key key;
	enum kind kind;
	unsigned src;
	uint64_t sent_ns;
	bool ce;
	uint32_t wire; /* RCCC: a packet's credit target, a grant's credit */
};

struct sender {
	struct urnic_nscc cc;
	struct urnic_rccc_tx credit;
	uint32_t target; /* RCCC: carried by each packet */
	uint64_t inflight;
	uint64_t next_send;
	bool send_pending;
	uint64_t delivered_after; /* bytes acknowledged after SETTLE_NS */
	uint32_t resend;	  /* trimmed packets to send again */
};

struct incast {
	enum mode mode;
	struct urnic_rccc_rx pull;
	bool grant_pending;
	uint64_t now, rng;
	struct sim_events q;
	struct event events[EVENTS_MAX];
	struct sender s[SENDERS];
	uint64_t queue_bytes, queue_max_after, queue_free_at;
	uint64_t trims, trims_after, marks;
	uint64_t busy_after_ns;
};

static void push_wire(struct incast *x, uint64_t at, enum kind kind, unsigned src, uint64_t sent_ns,
		      bool ce, uint32_t wire)
{
	struct event e = {
		.key.at = at, .kind = kind, .src = src, .sent_ns = sent_ns, .ce = ce, .wire = wire
	};

	sim_events_push(&x->q, &e);
}

static void push(struct incast *x, uint64_t at, enum kind kind, unsigned src, uint64_t sent_ns,
		 bool ce)
{
	push_wire(x, at, kind, src, sent_ns, ce, 0);
}

static uint64_t ser_ns(unsigned gbps)
{
	return (uint64_t)PKT * 8 / gbps; /* ns for one packet at gbps */
}

/* Without congestion control a sender keeps 1.5 BDP of its own NIC in flight; with
 * RCCC it sends what was granted and its speculative allowance. */
static bool room(const struct incast *x, const struct sender *s)
{
	if (x->mode == NSCC)
		return urnic_nscc_room(&s->cc, s->inflight, PKT);
	if (x->mode == RCCC)
		return urnic_rccc_tx_may_send(&s->credit, PKT);
	return s->inflight + PKT <= s->cc.maxwnd;
}

static void try_send(struct incast *x, unsigned i)
{
	struct sender *s = &x->s[i];

	if (s->send_pending || !room(x, s))
		return;
	s->send_pending = true;
	push(x, s->next_send > x->now ? s->next_send : x->now, SEND, i, 0, false);
}

static void on_send(struct incast *x, unsigned i)
{
	struct sender *s = &x->s[i];

	s->send_pending = false;
	if (!room(x, s))
		return;
	if (s->resend)
		s->resend--;
	s->inflight += PKT;
	if (x->mode == RCCC)
		urnic_rccc_tx_sent(&s->credit, PKT);
	s->next_send = x->now + ser_ns(NIC_BPS_G);
	push_wire(x, x->now + HOP_NS, ARRIVE_QUEUE, i, x->now, false, s->target);
	try_send(x, i);
}

/* The last hop: FIFO at LINK_BPS_G, marking by the depth a packet finds (RED-like),
 * trimming what does not fit. */
static void on_arrive(struct incast *x, const struct event *e)
{
	uint64_t start, q = x->queue_bytes;
	bool ce = false;

	if (q + PKT > BUFFER) {
		x->trims++;
		if (x->now >= SETTLE_NS)
			x->trims_after++;
		push(x, x->now + HOP_NS + ACK_NS, NACK, e->src, e->sent_ns, false);
		return;
	}
	if (q > K_MIN)
		ce = q >= K_MAX || x->rng++ % (K_MAX - K_MIN) < q - K_MIN;
	x->marks += ce;
	x->queue_bytes += PKT;
	if (x->now >= SETTLE_NS && x->queue_bytes > x->queue_max_after)
		x->queue_max_after = x->queue_bytes;
	start = x->queue_free_at > x->now ? x->queue_free_at : x->now;
	x->queue_free_at = start + ser_ns(LINK_BPS_G);
	if (start >= SETTLE_NS && start < END_NS) /* the link's busy time in the window */
		x->busy_after_ns += (x->queue_free_at < END_NS ? x->queue_free_at : END_NS) - start;
	push_wire(x, x->queue_free_at, DEPART_QUEUE, e->src, e->sent_ns, ce, e->wire);
}

/* RCCC: the receiver's pacer grants the next MTU when it is due. */
static void pull(struct incast *x)
{
	uint32_t s, wire, bytes;
	uint64_t next;

	if (x->grant_pending)
		return;
	while (urnic_rccc_rx_grant(&x->pull, x->now, &s, &wire, &bytes, &next))
		push_wire(x, x->now + ACK_NS, CREDIT, s, 0, false, wire);
	if (next) {
		x->grant_pending = true;
		push(x, next, GRANT, 0, 0, false);
	}
}

static void run(struct incast *x)
{
	struct urnic_nscc_params p = { .link_bps = (uint64_t)NIC_BPS_G * 1000000000,
				       .base_rtt_ns = 2 * HOP_NS + ACK_NS,
				       .mtu = PKT,
				       .trimming = true };

	sim_events_init(&x->q, x->events, sizeof(struct event), EVENTS_MAX);
	x->rng = 12345;
	urnic_rccc_rx_init(
		&x->pull,
		&(struct urnic_rccc_rx_params){ .link_bps = (uint64_t)LINK_BPS_G * 1000000000,
						.mtu = PKT,
						.pace_permille = 990 },
		0);
	for (unsigned i = 0; i < SENDERS; i++) {
		urnic_nscc_init(&x->s[i].cc, &p, 0);
		/* A round trip of the last hop's worth each, then what is granted; every
		 * sender has far more to send than the run takes. */
		urnic_rccc_tx_init(&x->s[i].credit,
				   (uint64_t)LINK_BPS_G * 1000 * p.base_rtt_ns / 8000);
		x->s[i].target = urnic_rccc_tx_want(&x->s[i].credit, 1ull << 22);
		x->s[i].next_send = i * 100; /* not all in the same nanosecond */
		try_send(x, i);
	}
	while (sim_events_peek(&x->q)) {
		struct event e;
		struct sender *s;

		sim_events_pop(&x->q, &e);
		s = &x->s[e.src];
		x->now = e.key.at;
		if (x->now >= END_NS)
			break;
		switch (e.kind) {
		case SEND:
			on_send(x, e.src);
			break;
		case ARRIVE_QUEUE:
			on_arrive(x, &e);
			break;
		case DEPART_QUEUE:
			x->queue_bytes -= PKT;
			if (x->mode == RCCC) {
				urnic_rccc_rx_demand(&x->pull, e.src, e.wire);
				urnic_rccc_rx_arrived(&x->pull, e.src, PKT, x->now);
				pull(x);
			}
			push(x, x->now + HOP_NS + ACK_NS, ACK, e.src, e.sent_ns, e.ce);
			break;
		case ACK:
			s->inflight -= PKT;
			if (x->now >= SETTLE_NS)
				s->delivered_after += PKT;
			urnic_nscc_ack(&s->cc, x->now, PKT, x->now - e.sent_ns, e.ce, s->inflight);
			try_send(x, e.src);
			break;
		case GRANT:
			x->grant_pending = false;
			pull(x);
			break;
		case CREDIT:
			urnic_rccc_tx_grant(&s->credit, e.wire);
			/* More to ask for as the grants come: the backlog never runs out. */
			if (s->credit.queued - s->credit.used < (1ull << 21))
				s->target = urnic_rccc_tx_want(&s->credit, 1ull << 21);
			try_send(x, e.src);
			break;
		case NACK:
			s->inflight -= PKT;
			s->resend++;
			urnic_nscc_loss(&s->cc, x->now, PKT);
			try_send(x, e.src);
			break;
		}
	}
}

static double jain(const struct incast *x)
{
	double sum = 0, sq = 0;

	for (unsigned i = 0; i < SENDERS; i++) {
		sum += (double)x->s[i].delivered_after;
		sq += (double)x->s[i].delivered_after * (double)x->s[i].delivered_after;
	}
	return sq ? sum * sum / (SENDERS * sq) : 0;
}

static double utilization(const struct incast *x)
{
	return (double)x->busy_after_ns / (double)(END_NS - SETTLE_NS);
}

static void report(const char *what, const struct incast *x)
{
	printf("  %s: busy %.3f, Jain %.3f, queue max %llu KB after %llu us, trims %llu (%llu "
	       "after), marks %llu\n",
	       what, utilization(x), jain(x), (unsigned long long)x->queue_max_after / 1024,
	       (unsigned long long)SETTLE_NS / US, (unsigned long long)x->trims,
	       (unsigned long long)x->trims_after, (unsigned long long)x->marks);
}

static struct incast X;

static void test_incast_settles_fair_without_loss(void)
{
	memset(&X, 0, sizeof(X));
	X.mode = NONE;
	run(&X);
	report("no congestion control", &X);
	CHECK(X.trims_after > 1000); /* the comparison: the buffer overflows for ever */

	memset(&X, 0, sizeof(X));
	X.mode = NSCC;
	run(&X);
	report("NSCC", &X);
	for (unsigned i = 0; i < SENDERS; i++)
		printf("    sender %u: cwnd %llu B, %llu decreases, %llu quick adapts\n", i,
		       (unsigned long long)X.s[i].cc.cwnd,
		       (unsigned long long)X.s[i].cc.st.decreases,
		       (unsigned long long)X.s[i].cc.st.quick_adapts);
	CHECK_EQ(X.trims_after, 0);
	CHECK(jain(&X) >= 0.9);
	CHECK(utilization(&X) >= 0.9);
	CHECK(X.queue_max_after < BUFFER / 2);
}

/* Receiver credits: after the first round trip's speculative burst the senders send
 * only what the receiver grants at 0.99 of its link, round-robin: the queue stays near
 * empty, the link busy, the share even. */
static void test_incast_with_receiver_credits(void)
{
	memset(&X, 0, sizeof(X));
	X.mode = RCCC;
	run(&X);
	report("RCCC", &X);
	CHECK_EQ(X.trims_after, 0);
	CHECK(jain(&X) >= 0.99);
	CHECK(utilization(&X) >= 0.97);
	CHECK(X.queue_max_after <= 4 * PKT);
	CHECK_EQ(X.pull.st.stale, 0);
}

/* The counters wrap at 24 bits: a grant or target half the space behind is stale. */
static void test_rccc_counters_wrap(void)
{
	struct urnic_rccc_rx rx;
	struct urnic_rccc_tx tx;
	uint32_t s, wire, bytes;
	uint64_t next;

	urnic_rccc_tx_init(&tx, 8192);
	CHECK_EQ(urnic_rccc_tx_want(&tx, 4096), 0); /* within the speculative allowance */
	CHECK(urnic_rccc_tx_may_send(&tx, 8192) && !urnic_rccc_tx_may_send(&tx, 8193));
	CHECK_EQ(urnic_rccc_tx_want(&tx, (1ull << 24) + 100),
		 (4096 + (1 << 24) + 100 - 8192) & 0xffffff);
	urnic_rccc_tx_grant(&tx, 0xfff000); /* more than half the space ahead: stale */
	CHECK(tx.credit == 0 && tx.stale == 1);
	urnic_rccc_tx_grant(&tx, 0x700000);
	urnic_rccc_tx_grant(&tx, 0xe00000);
	urnic_rccc_tx_grant(&tx, 0xfff000); /* 16 MB - 4 KB granted */
	CHECK_EQ(tx.credit, 0xfff000);
	urnic_rccc_tx_grant(&tx, 0x000100); /* past the wrap */
	CHECK_EQ(tx.credit, 0x1000100);
	urnic_rccc_tx_grant(&tx, 0xfff000); /* an old one, reordered */
	CHECK(tx.credit == 0x1000100 && tx.stale == 2);

	urnic_rccc_rx_init(
		&rx, &(struct urnic_rccc_rx_params){ .link_bps = 8000000000ull, .mtu = 1000 }, 0);
	CHECK(!urnic_rccc_rx_grant(&rx, 0, &s, &wire, &bytes, &next) && next == 0);
	urnic_rccc_rx_demand(&rx, 3, 2500);
	CHECK(urnic_rccc_rx_grant(&rx, 0, &s, &wire, &bytes, &next));
	CHECK(s == 3 && bytes == 1000 && wire == 1000);
	/* 1000 bytes at 0.99 of 8 Gb/s: the next grant 1010 ns later. */
	CHECK(!urnic_rccc_rx_grant(&rx, 500, &s, &wire, &bytes, &next) && next == 1010);
	CHECK(urnic_rccc_rx_grant(&rx, 1010, &s, &wire, &bytes, &next) && wire == 2000);
	CHECK(urnic_rccc_rx_grant(&rx, 5000, &s, &wire, &bytes, &next) && bytes == 500);
	CHECK(!urnic_rccc_rx_grant(&rx, 9000, &s, &wire, &bytes, &next) && next == 0);
	urnic_rccc_rx_demand(&rx, 3, 1000); /* older than what was read */
	CHECK_EQ(rx.st.stale, 1);
}

/* The quadrants on their own. */
static void test_quadrants(void)
{
	struct urnic_nscc_params p = { .link_bps = 100000000000ull,
				       .base_rtt_ns = 10 * US,
				       .mtu = PKT };
	struct urnic_nscc n;
	uint64_t w, now = 100 * US;

	urnic_nscc_init(&n, &p, 0);
	CHECK(n.bdp == 125000 && n.maxwnd == 187500 && n.cwnd == n.maxwnd);
	CHECK(n.target_ns == 10 * US);
	/* Marked, delay over target, average too: a decrease, then none for a base RTT. */
	n.avg_delay_ns = 30 * US;
	w = n.cwnd;
	urnic_nscc_ack(&n, now += US, PKT, 10 * US + 30 * US, true, w);
	CHECK(n.cwnd < w && n.cwnd >= w / 2 && n.st.decreases == 1);
	w = n.cwnd;
	urnic_nscc_ack(&n, now += US, PKT, 10 * US + 30 * US, true, w);
	CHECK(n.st.decreases == 1);
	/* Marked under target: held. */
	urnic_nscc_ack(&n, now += US, PKT, 10 * US + 1 * US, true, w);
	CHECK(n.st.held == 1);
	/* Unmarked over target: fair increase, applied at the adjustment. */
	for (unsigned i = 0; i < 20; i++)
		urnic_nscc_ack(&n, now += 100, PKT, 10 * US + 20 * US, false, w);
	CHECK_EQ(n.st.fair, 20);
	CHECK(n.cwnd > w);
	/* Unmarked near zero delay for more than a window: fast increase. */
	w = n.cwnd;
	for (unsigned i = 0; i < 200; i++)
		urnic_nscc_ack(&n, now += 100, PKT, 10 * US, false, w);
	CHECK(n.st.fast > 0 && n.cwnd > w);
	/* A loss takes its bytes off and arms quick adapt. */
	w = n.cwnd;
	urnic_nscc_loss(&n, now, PKT);
	CHECK(n.cwnd == w - PKT || n.cwnd == n.p.mtu);
	CHECK(n.qa_pending);
}

int main(void)
{
	RUN(test_quadrants);
	RUN(test_incast_settles_fair_without_loss);
	RUN(test_incast_with_receiver_credits);
	RUN(test_rccc_counters_wrap);
	return 0;
}
