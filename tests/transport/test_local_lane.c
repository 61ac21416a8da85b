/* SPDX-License-Identifier: MIT */
/*
 * test_local_lane.c - shared memory lanes between two devices of one process
 * (src/transport/local.h), 127.0.63.1 (sender, "tx") -> 127.0.63.2 (receiver, "rx"),
 * slot 0: a lane is offered by the first send and used once the receiver took it;
 * records keep their bytes and envelope through wrap-arounds and a full lane; a
 * malformed record or a hostile offer is counted and costs nothing else; either side
 * leaving ends the lane cleanly; a sleeping receiver is rung.
 */
#include <poll.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <fcntl.h>
#include <unistd.h>

#include "check.h"
#include "stats/counters.h"
#include "transport/local.h"

/* A failed check with what was expected in words. */
#define CHECKF(expr, ...)                                                                          \
	do {                                                                                       \
		if (!(expr)) {                                                                     \
			fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #expr);   \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

static const uint8_t ip_tx[4] = { 127, 0, 63, 1 }, ip_rx[4] = { 127, 0, 63, 2 };
static uint64_t ctr_tx[URNIC_CTR_COUNT], ctr_rx[URNIC_CTR_COUNT];
static struct urnic_local tx, rx;
static uint8_t pkt[URNIC_LOCAL_REC_MAX];

/* Records sent into the lane and not yet received, in order: the model rx_check
 * compares every delivered record with. */
#define PENDING 8192
static struct {
	uint32_t seq[PENDING], len[PENDING];
	uint32_t head, tail;
	uint32_t next_seq;
} q;

static uint8_t byte_of(uint32_t seq, uint32_t i)
{
	return (uint8_t)(seq * 131u + i * 7u + (i >> 8));
}

static struct urnic_local_env env_of(uint32_t seq)
{
	return (struct urnic_local_env){ .sport = (uint16_t)(49152 + seq % 16000),
					 .seg = (uint16_t)(seq % 3 ? 0 : 1024 + seq % 3000),
					 .tos = (uint8_t)(seq * 5),
					 .ttl = (uint8_t)(1 + seq % 255) };
}

static void rx_check(void *ctx, const struct urnic_local_rec *r)
{
	struct urnic_local_env want;
	uint32_t seq, len;

	(void)ctx;
	CHECKF(q.tail != q.head, "a record (len %u) that was not sent, or delivered twice", r->len);
	seq = q.seq[q.tail % PENDING];
	len = q.len[q.tail % PENDING];
	q.tail++;
	want = env_of(seq);
	CHECKF(r->len == len, "record %u: len %u, sent %u", seq, r->len, len);
	CHECKF(r->sport == want.sport && r->seg == want.seg && r->tos == want.tos &&
		       r->ttl == want.ttl,
	       "record %u: envelope sport %u seg %u tos %u ttl %u, sent %u %u %u %u", seq, r->sport,
	       r->seg, r->tos, r->ttl, want.sport, want.seg, want.tos, want.ttl);
	CHECKF(!memcmp(r->src, ip_tx, 4), "record %u: source %u.%u.%u.%u, not the sender's", seq,
	       r->src[0], r->src[1], r->src[2], r->src[3]);
	for (uint32_t i = 0; i < len; i++)
		CHECKF(r->pkt[i] == byte_of(seq, i), "record %u: byte %u of %u is %#x, sent %#x",
		       seq, i, len, r->pkt[i], byte_of(seq, i));
}

/* Sends the next record of len bytes; returns urnic_local_send's answer. Only a record
 * the lane took (1, and no drop counted) is expected at the receiver. */
static int send_rec(uint32_t len, uint64_t now_ns)
{
	uint32_t seq = q.next_seq++;
	struct urnic_local_env env = env_of(seq);
	uint64_t full = ctr_tx[URNIC_CTR_drop_local_full];
	int ret;

	for (uint32_t i = 0; i < len; i++)
		pkt[i] = byte_of(seq, i);
	ret = urnic_local_send(&tx, ip_rx, 0, &env, pkt, len, now_ns, ctr_tx);
	if (ret == 1 && ctr_tx[URNIC_CTR_drop_local_full] == full) {
		CHECKF(q.head - q.tail < PENDING, "test model overflow");
		q.seq[q.head % PENDING] = seq;
		q.len[q.head % PENDING] = len;
		q.head++;
	}
	return ret;
}

/* Receives until the lane is empty; checks that exactly what was sent arrived. */
static void drain(void)
{
	uint32_t n;

	do
		n = urnic_local_recv(&rx, rx_check, NULL, 0, false, ctr_rx);
	while (n);
	CHECKF(q.tail == q.head, "%u records sent into the lane were not delivered",
	       q.head - q.tail);
}

static struct urnic_local_in *in_lane(void)
{
	struct urnic_local_in *found = NULL;

	for (int i = 0; i < URNIC_LOCAL_IN; i++)
		if (rx.in[i].lane) {
			CHECKF(!found, "more than one lane at the receiver");
			found = &rx.in[i];
		}
	CHECKF(found, "the receiver holds no lane");
	return found;
}

static int in_used(const struct urnic_local *l)
{
	int n = 0;

	for (int i = 0; i < URNIC_LOCAL_IN; i++)
		n += l->in[i].fd >= 0 || l->in[i].lane;
	return n;
}

static bool readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, timeout_ms) == 1;
}

/* Offers a lane (the first send goes by UDP) and lets the receiver take it: the
 * listener's accept and the lane's message are two events, so up to two passes. */
static void lane_up(uint64_t now_ns)
{
	CHECKF(send_rec(100, now_ns) == 0, "the first send must offer a lane and go by UDP");
	for (int i = 0; i < 2 && !in_used(&rx); i++)
		urnic_local_service(&rx, now_ns, ctr_rx);
	for (int i = 0; i < 2 && send_rec(100, now_ns) == 0; i++)
		urnic_local_service(&rx, now_ns, ctr_rx);
	CHECKF(atomic_load(&in_lane()->lane->state) == URNIC_LOCAL_LANE_TAKEN,
	       "the receiver did not take the offered lane");
	drain();
}

static void pair_open(void)
{
	memset(ctr_tx, 0, sizeof(ctr_tx));
	memset(ctr_rx, 0, sizeof(ctr_rx));
	memset(&q, 0, sizeof(q));
	CHECK_EQ(urnic_local_open(&tx, false, ip_tx, 0), 0);
	CHECK_EQ(urnic_local_open(&rx, false, ip_rx, 0), 0);
}

static void pair_close(void)
{
	urnic_local_close(&tx);
	urnic_local_close(&rx);
}

static void test_offer_then_records_in_order(void)
{
	static const uint32_t lens[] = { 0, 1, 31, 32, 33, 1500, 4136, URNIC_LOCAL_REC_MAX };
	uint32_t n;

	pair_open();
	CHECKF(send_rec(60, 1) == 0, "no lane yet: the first send goes by UDP");
	CHECKF(send_rec(60, 1) == 0, "the lane is offered, not taken: still UDP");
	CHECKF(readable(urnic_local_fd(&rx), 1000), "the offer does not wake the receiver");
	urnic_local_service(&rx, 1, ctr_rx);
	urnic_local_service(&rx, 1, ctr_rx);
	CHECKF(atomic_load(&in_lane()->lane->state) == URNIC_LOCAL_LANE_TAKEN,
	       "two service passes did not take the lane");
	CHECKF(urnic_local_recv(&rx, rx_check, NULL, 0, false, ctr_rx) == 0,
	       "records nobody put in");
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		CHECKF(send_rec(lens[i], 2) == 1, "send of %u bytes into a taken lane", lens[i]);
	n = urnic_local_recv(&rx, rx_check, NULL, 0, false, ctr_rx);
	CHECK_EQ(n, sizeof(lens) / sizeof(lens[0]));
	CHECK_EQ(q.tail, q.head);
	CHECK_EQ(urnic_local_recv(&rx, rx_check, NULL, 0, false, ctr_rx), 0);
	CHECK_EQ(ctr_tx[URNIC_CTR_drop_local_full] + ctr_rx[URNIC_CTR_drop_local_bad], 0);
	CHECK_EQ(ctr_tx[URNIC_CTR_local_refused] + ctr_rx[URNIC_CTR_local_refused], 0);
	pair_close();
}

/* Sizes from a fixed LCG, small ones often, up to one GSO send. */
static uint32_t next_len(uint32_t *x)
{
	*x = *x * 1664525u + 1013904223u;
	if ((*x >> 28) < 4)
		return (*x >> 8) % 200;
	return (*x >> 8) % (URNIC_LOCAL_REC_MAX + 1);
}

static void test_wrap_around(void)
{
	uint32_t x = 7, rounds = 0;
	struct urnic_local_in *e;

	pair_open();
	lane_up(1);
	e = in_lane();
	while (atomic_load(&e->lane->head) < 6ull * URNIC_LOCAL_RING_BYTES) {
		uint32_t burst = 1 + rounds++ % 23;

		for (uint32_t i = 0; i < burst; i++)
			CHECK_EQ(send_rec(next_len(&x), 2), 1);
		drain();
	}
	CHECK_EQ(ctr_tx[URNIC_CTR_drop_local_full], 0);
	CHECK_EQ(ctr_rx[URNIC_CTR_drop_local_bad], 0);
	CHECK_EQ(atomic_load(&e->lane->tail), atomic_load(&e->lane->head));
	pair_close();
}

/* Sends records of len until one is dropped as full; returns how many the lane took. */
static uint32_t fill(uint32_t len)
{
	uint64_t full = ctr_tx[URNIC_CTR_drop_local_full];
	uint32_t took = 0;

	while (ctr_tx[URNIC_CTR_drop_local_full] == full) {
		CHECKF(send_rec(len, 2) == 1, "a full lane still answers 1 (dropped, counted)");
		took += ctr_tx[URNIC_CTR_drop_local_full] == full;
		CHECKF(took <= URNIC_LOCAL_RING_BYTES / 64, "the lane never fills");
	}
	return took;
}

static void test_full_lane(void)
{
	uint32_t rec = (URNIC_LOCAL_REC_HDR + 4000 + 63) / 64 * 64, took, n = 0;

	pair_open();
	lane_up(1);
	took = fill(4000);
	CHECKF(took == URNIC_LOCAL_RING_BYTES / rec, "an empty lane took %u records of %u bytes",
	       took, rec);
	CHECK_EQ(send_rec(4000, 2), 1);
	CHECK_EQ(ctr_tx[URNIC_CTR_drop_local_full], 2);
	/* Half out, then full again across the ring's end, then all out. */
	while (n < took / 2)
		n += urnic_local_recv(&rx, rx_check, NULL, 0, false, ctr_rx);
	took = fill(3000);
	CHECKF(took > 0, "room freed by the receiver is not reused");
	drain();
	for (int i = 0; i < 10; i++)
		CHECKF(send_rec(URNIC_LOCAL_REC_MAX, 2) == 1, "send after draining");
	CHECK_EQ(ctr_tx[URNIC_CTR_drop_local_full], 3);
	drain();
	CHECK_EQ(ctr_rx[URNIC_CTR_drop_local_bad], 0);
	pair_close();
}

/* Puts three records into the lane, overwrites the length of the second at the
 * receiver's side, and checks that the first arrives, the rest is dropped and counted
 * once, and that the lane carries records afterwards. */
static void corrupt_second(uint32_t len0, uint32_t len1, uint32_t bad_len, const char *what)
{
	struct urnic_local_in *e = in_lane();
	uint64_t bad = ctr_rx[URNIC_CTR_drop_local_bad];
	uint32_t off;
	struct urnic_local_rec_hdr h;

	CHECK_EQ(send_rec(len0, 2), 1);
	off = (uint32_t)(atomic_load(&e->lane->head) % URNIC_LOCAL_RING_BYTES);
	CHECK_EQ(send_rec(len1, 2), 1);
	CHECK_EQ(send_rec(200, 2), 1);
	memcpy(&h, e->lane->ring + off, sizeof(h));
	CHECKF(h.len == len1, "%s: the second record is not at %u", what, off);
	h.len = bad_len;
	memcpy(e->lane->ring + off, &h, sizeof(h));
	q.head -= 2; /* the corrupt record and the one behind it are lost */
	CHECKF(urnic_local_recv(&rx, rx_check, NULL, 0, false, ctr_rx) == 1,
	       "%s: not only the first", what);
	CHECKF(ctr_rx[URNIC_CTR_drop_local_bad] == bad + 1, "%s: drop_local_bad not counted once",
	       what);
	CHECK_EQ(urnic_local_recv(&rx, rx_check, NULL, 0, false, ctr_rx), 0);
	CHECK_EQ(send_rec(300, 2), 1);
	CHECKF(urnic_local_recv(&rx, rx_check, NULL, 0, false, ctr_rx) == 1,
	       "%s: lane dead afterwards", what);
	CHECK_EQ(ctr_rx[URNIC_CTR_drop_local_bad], bad + 1);
}

/* Sends and receives records until the sender's next record starts gap bytes before
 * the ring's end (gap a multiple of 64). */
static void gap_to(uint32_t gap)
{
	for (;;) {
		uint32_t g =
			URNIC_LOCAL_RING_BYTES -
			(uint32_t)(atomic_load(&in_lane()->lane->head) % URNIC_LOCAL_RING_BYTES);
		uint32_t d = g >= gap ? g - gap : g; /* short of the gap: to the end first */

		if (g == gap)
			return;
		if (d > URNIC_LOCAL_REC_MAX)
			d = URNIC_LOCAL_REC_MAX;
		CHECK_EQ(send_rec(d - URNIC_LOCAL_REC_HDR, 2), 1);
		drain();
	}
}

/* A position the peer leaves unaligned is refused, not followed: the receiver's next
 * header read would start there (up to a header's length past the ring's end). */
static void unaligned_head(void)
{
	struct urnic_local_in *e = in_lane();
	uint64_t bad = ctr_rx[URNIC_CTR_drop_local_bad];

	CHECK_EQ(send_rec(100, 2), 1);
	CHECK_EQ(urnic_local_recv(&rx, rx_check, NULL, 0, false, ctr_rx), 1);
	atomic_store(&e->lane->head, atomic_load(&e->lane->head) + 8);
	CHECK_EQ(urnic_local_recv(&rx, rx_check, NULL, 0, false, ctr_rx), 0);
	CHECKF(e->tail % URNIC_LOCAL_REC_ALIGN != 0, "the receiver did not take the peer's head");
	CHECK_EQ(send_rec(100, 2), 1); /* written where the sender's own position says */
	q.head--;
	CHECK_EQ(urnic_local_recv(&rx, rx_check, NULL, 0, false, ctr_rx), 0);
	CHECKF(ctr_rx[URNIC_CTR_drop_local_bad] == bad + 2, "unaligned tail not refused");
	CHECK_EQ(send_rec(300, 2), 1);
	CHECKF(urnic_local_recv(&rx, rx_check, NULL, 0, false, ctr_rx) == 1,
	       "lane dead after realigning");
}

static void test_malformed_record(void)
{
	pair_open();
	lane_up(1);
	corrupt_second(100, 100, URNIC_LOCAL_REC_MAX + 1, "longer than a GSO send");
	corrupt_second(100, 100, 20000, "longer than what the sender wrote");
	corrupt_second(100, 100, URNIC_LOCAL_REC_WRAP, "a wrap mark past the sender's position");
	/* The first record fills the ring to its end: the second is at the start. */
	gap_to(1024);
	corrupt_second(1024 - URNIC_LOCAL_REC_HDR, 100, URNIC_LOCAL_REC_WRAP,
		       "a wrap mark at the ring's start");
	/* The second fills 4096 bytes to the end and the third is at the start, so the
	 * sender wrote past the end of a longer second: only the ring's end bounds it. */
	gap_to(4096 + 1024);
	corrupt_second(1024 - URNIC_LOCAL_REC_HDR, 4096 - URNIC_LOCAL_REC_HDR, 4096 + 32,
		       "a record across the ring's end");
	unaligned_head();
	pair_close();
}

/* ---- offers from a raw socket, as a hostile or broken process of our user makes ---- */

static int raw_connect(const uint8_t *ip)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int n = snprintf(sun.sun_path + 1, sizeof(sun.sun_path) - 1,
			 "urnic.lane.%02x%02x%02x%02x.0", ip[0], ip[1], ip[2], ip[3]);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	CHECK(fd >= 0);
	CHECKF(!connect(fd, (struct sockaddr *)&sun,
			(socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)),
	       "nobody listens on the receiver's lane name");
	return fd;
}

/* One byte with nfds descriptors, as an offer is passed. */
static void raw_offer(int fd, const int *fds, int nfds)
{
	char byte = 'L';
	struct iovec iov = { &byte, 1 };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(2 * sizeof(int))];
	} ctrl;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	if (nfds) {
		m.msg_control = ctrl.buf;
		m.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
	}
	CHECK_EQ(sendmsg(fd, &m, MSG_NOSIGNAL), 1);
}

struct raw_lane {
	int fd;
	struct urnic_local_lane *lane;
};

/* A memfd of size bytes holding a lane header with magic, sealed with seals. */
static struct raw_lane raw_lane(size_t size, unsigned int seals, uint32_t magic)
{
	struct raw_lane r = { .fd = memfd_create("hostile", MFD_CLOEXEC | MFD_ALLOW_SEALING) };
	void *map;

	CHECK(r.fd >= 0);
	CHECK(!ftruncate(r.fd, (off_t)size));
	map = mmap(NULL, URNIC_LOCAL_LANE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, 0);
	CHECK(map != MAP_FAILED);
	r.lane = map;
	r.lane->magic = magic;
	r.lane->version = URNIC_LOCAL_VERSION;
	r.lane->ring_bytes = URNIC_LOCAL_RING_BYTES;
	memcpy(r.lane->src, ip_tx, 4);
	atomic_store(&r.lane->state, URNIC_LOCAL_LANE_OFFERED);
	CHECK(!seals || !fcntl(r.fd, F_ADD_SEALS, seals));
	return r;
}

static void raw_lane_free(struct raw_lane *r)
{
	CHECKF(atomic_load(&r->lane->state) != URNIC_LOCAL_LANE_TAKEN,
	       "the receiver took a refused lane");
	munmap(r->lane, URNIC_LOCAL_LANE_BYTES);
	close(r->fd);
}

/* The receiver's passes over conn's offer: refused, counted, the connection closed. */
static void expect_refused(int conn, const char *what)
{
	uint64_t refused = ctr_rx[URNIC_CTR_local_refused];
	char c;

	for (int i = 0; i < 3; i++)
		urnic_local_service(&rx, 1, ctr_rx);
	CHECKF(ctr_rx[URNIC_CTR_local_refused] == refused + 1, "%s: local_refused %llu, was %llu",
	       what, (unsigned long long)ctr_rx[URNIC_CTR_local_refused],
	       (unsigned long long)refused);
	CHECKF(in_used(&rx) == 0, "%s: the receiver keeps the connection or a lane", what);
	CHECKF(readable(conn, 1000) && recv(conn, &c, 1, MSG_DONTWAIT) == 0,
	       "%s: the connection is not closed", what);
	close(conn);
}

static void test_hostile_offers(void)
{
	const unsigned int sealed = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
	struct raw_lane a, b;
	int conn;

	pair_open();
	a = raw_lane(URNIC_LOCAL_LANE_BYTES, 0, URNIC_LOCAL_MAGIC);
	conn = raw_connect(ip_rx);
	raw_offer(conn, &a.fd, 1);
	expect_refused(conn, "an unsealed memfd");
	raw_lane_free(&a);

	a = raw_lane(URNIC_LOCAL_LANE_BYTES + 4096, sealed, URNIC_LOCAL_MAGIC);
	conn = raw_connect(ip_rx);
	raw_offer(conn, &a.fd, 1);
	expect_refused(conn, "a memfd of the wrong size");
	raw_lane_free(&a);

	a = raw_lane(URNIC_LOCAL_LANE_BYTES, sealed, URNIC_LOCAL_MAGIC ^ 1);
	conn = raw_connect(ip_rx);
	raw_offer(conn, &a.fd, 1);
	expect_refused(conn, "a lane with a bad magic");
	raw_lane_free(&a);

	conn = raw_connect(ip_rx);
	raw_offer(conn, NULL, 0);
	expect_refused(conn, "an offer without a memfd");

	a = raw_lane(URNIC_LOCAL_LANE_BYTES, sealed, URNIC_LOCAL_MAGIC);
	b = raw_lane(URNIC_LOCAL_LANE_BYTES, sealed, URNIC_LOCAL_MAGIC);
	conn = raw_connect(ip_rx);
	raw_offer(conn, (int[]){ a.fd, b.fd }, 2);
	expect_refused(conn, "an offer of two memfds");
	raw_lane_free(&a);
	raw_lane_free(&b);

	conn = raw_connect(ip_rx);
	shutdown(conn, SHUT_WR);
	expect_refused(conn, "a connection that hangs up without an offer");

	CHECK_EQ(ctr_rx[URNIC_CTR_local_refused], 6);
	lane_up(1);
	CHECK_EQ(send_rec(URNIC_LOCAL_REC_MAX, 2), 1);
	drain();
	pair_close();
}

static void test_sender_gone(void)
{
	int before;

	pair_open();
	lane_up(1);
	for (int i = 0; i < URNIC_LOCAL_RX_BUDGET + 36; i++)
		CHECK_EQ(send_rec((uint32_t)i * 97, 2), 1);
	before = (int)(in_lane() - rx.in);
	urnic_local_close(&tx);
	CHECKF(readable(urnic_local_fd(&rx), 1000), "the sender's hang-up does not wake");
	urnic_local_service(&rx, 3, ctr_rx);
	CHECKF(rx.in[before].gone && rx.in[before].lane,
	       "the lane is not kept while it holds records");
	CHECK_EQ(urnic_local_recv(&rx, rx_check, NULL, 0, false, ctr_rx), URNIC_LOCAL_RX_BUDGET);
	CHECKF(rx.in[before].lane, "the lane was freed with 36 records in it");
	CHECK_EQ(urnic_local_recv(&rx, rx_check, NULL, 0, false, ctr_rx), 36);
	CHECK_EQ(q.tail, q.head);
	CHECKF(in_used(&rx) == 0, "the emptied lane of a sender that left is not freed");
	/* A new sender on the same address gets the same entry. */
	CHECK_EQ(urnic_local_open(&tx, false, ip_tx, 0), 0);
	lane_up(4);
	CHECK_EQ(in_lane() - rx.in, before);
	CHECK_EQ(send_rec(5000, 4), 1);
	drain();
	pair_close();
}

static void test_receiver_gone(void)
{
	const uint64_t t = 1000000000000ull;

	pair_open();
	lane_up(t);
	urnic_local_close(&rx);
	CHECKF(readable(urnic_local_fd(&tx), 1000), "the receiver's hang-up does not wake");
	urnic_local_service(&tx, t, ctr_tx);
	CHECKF(send_rec(100, t) == 0, "a send after the receiver left does not go by UDP");
	CHECK_EQ(urnic_local_open(&rx, false, ip_rx, 0), 0);
	CHECKF(send_rec(100, t + URNIC_LOCAL_RETRY_NS - 1) == 0, "UDP until the retry time");
	CHECKF(!readable(urnic_local_fd(&rx), 0), "the sender offered again before the retry time");
	urnic_local_service(&rx, t, ctr_rx);
	CHECKF(in_used(&rx) == 0, "the sender offered again before the retry time");
	lane_up(t + URNIC_LOCAL_RETRY_NS);
	CHECK_EQ(send_rec(URNIC_LOCAL_REC_MAX, t + URNIC_LOCAL_RETRY_NS), 1);
	drain();
	CHECK_EQ(ctr_tx[URNIC_CTR_local_refused] + ctr_rx[URNIC_CTR_local_refused], 0);
	pair_close();
}

static void test_bell(void)
{
	pair_open();
	lane_up(1);
	for (int i = 0; i < 3; i++)
		urnic_local_service(&rx, 1, ctr_rx);
	CHECKF(!readable(urnic_local_fd(&rx), 0), "the receiver's fd is readable with nothing new");
	CHECK_EQ(send_rec(100, 2), 1);
	CHECKF(!readable(urnic_local_fd(&rx), 0), "a receiver that is awake was rung");
	CHECKF(urnic_local_arm(&rx), "arm with a record waiting says sleep");
	urnic_local_disarm(&rx);
	drain();
	CHECKF(!urnic_local_arm(&rx), "arm with an empty lane says a record waits");
	CHECK_EQ(send_rec(200, 2), 1);
	CHECKF(readable(urnic_local_fd(&rx), 1000), "a send did not ring the sleeping receiver");
	CHECKF(urnic_local_arm(&rx), "arm with a record waiting says sleep");
	urnic_local_disarm(&rx);
	urnic_local_service(&rx, 2, ctr_rx);
	CHECKF(!readable(urnic_local_fd(&rx), 0), "service did not take the bell's byte");
	drain();
	pair_close();
}

int main(void)
{
	RUN(test_offer_then_records_in_order);
	RUN(test_wrap_around);
	RUN(test_full_lane);
	RUN(test_malformed_record);
	RUN(test_hostile_offers);
	RUN(test_sender_gone);
	RUN(test_receiver_gone);
	RUN(test_bell);
	return 0;
}
