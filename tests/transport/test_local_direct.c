/* SPDX-License-Identifier: MIT */
/*
 * test_local_direct.c - direct placement through a shared memory lane
 * (src/transport/local.h, wire/addr.h), between two lane ends of one process,
 * 127.0.63.11 (sender, "tx") -> 127.0.63.12 (receiver, "rx"), slot 0: a record's flags
 * and segments reach the receiver as a note with the sender's pid; a GSO run with a
 * note is refused; urnic_local_direct_write writes only through a lane taken by the
 * process the note names, exactly the bytes the segments cover, and counts what the
 * kernel refuses; urnic_local_direct_read likewise reads the segments a note names, and
 * urnic_local_direct_ready says whether a lane would carry a note.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "stats/counters.h"
#include "transport/local.h"

static const uint8_t ip_tx[4] = { 127, 0, 63, 11 }, ip_rx[4] = { 127, 0, 63, 12 };
static uint64_t ctr_tx[URNIC_CTR_COUNT], ctr_rx[URNIC_CTR_COUNT];
static struct urnic_local tx, rx;

/* What the receiver was handed, one record at a time. */
static struct {
	uint32_t n, len;
	bool noted;
	struct urnic_direct_note note;
} got;

static void rx_take(void *ctx, const struct urnic_local_rec *r)
{
	(void)ctx;
	got.n++;
	got.len = r->len;
	got.noted = r->direct != NULL;
	if (r->direct)
		got.note = *r->direct;
}

static int send_note(uint16_t seg, uint8_t flags, const struct urnic_direct_seg *s, uint8_t n)
{
	static uint8_t pkt[2048];
	struct urnic_local_env env = { .sport = 49152,
				       .seg = seg,
				       .ttl = 64,
				       .direct_flags = flags,
				       .direct_nseg = n,
				       .direct_seg = s };

	return urnic_local_send(&tx, ip_rx, 0, &env, pkt, seg ? 2048 : 28, 1, ctr_tx);
}

static uint32_t recv_all(void)
{
	memset(&got, 0, sizeof(got));
	return urnic_local_recv(&rx, rx_take, NULL, 0, false, ctr_rx);
}

/* The first send offers the lane; the receiver takes it in up to two passes. */
static void lane_up(void)
{
	memset(ctr_tx, 0, sizeof(ctr_tx));
	memset(ctr_rx, 0, sizeof(ctr_rx));
	CHECK_EQ(urnic_local_open(&tx, false, ip_tx, 0), 0);
	CHECK_EQ(urnic_local_open(&rx, false, ip_rx, 0), 0);
	CHECK_EQ(send_note(0, 0, NULL, 0), 0);
	for (int i = 0; i < 4 && send_note(0, 0, NULL, 0) == 0; i++)
		urnic_local_service(&rx, 1, ctr_rx);
	CHECK_EQ(send_note(0, 0, NULL, 0), 1);
	recv_all();
}

static void test_notes(void)
{
	struct urnic_direct_seg s[URNIC_DIRECT_MAX_SEGS];

	for (uint32_t i = 0; i < URNIC_DIRECT_MAX_SEGS; i++)
		s[i] = (struct urnic_direct_seg){ 0x7f0000001000ull + i * 4096, 100 + i };
	lane_up();
	CHECK_EQ(send_note(0, 0, s, URNIC_DIRECT_MAX_SEGS), 1);
	CHECK_EQ(recv_all(), 1);
	CHECK(got.noted && got.len == 28);
	CHECK_EQ(got.note.pid, (uint32_t)getpid());
	CHECK_EQ(got.note.flags, 0);
	CHECK_EQ(got.note.nseg, URNIC_DIRECT_MAX_SEGS);
	CHECK(!memcmp(got.note.seg, s, sizeof(s)));
	CHECK_EQ(send_note(0, URNIC_DIRECT_PLACED, NULL, 0), 1);
	CHECK_EQ(recv_all(), 1);
	CHECK(got.noted && got.note.flags == URNIC_DIRECT_PLACED && got.note.nseg == 0);
	CHECK_EQ(send_note(0, 0, NULL, 0), 1);
	CHECK_EQ(recv_all(), 1);
	CHECK(!got.noted);
	/* A note belongs to one packet: a run that carries one is not our sender's. */
	CHECK_EQ(send_note(1024, URNIC_DIRECT_PLACED, NULL, 0), 1);
	CHECK_EQ(recv_all(), 0);
	CHECK_EQ(ctr_rx[URNIC_CTR_drop_local_bad], 1);
	/* Direct placement gone off at the receiver since the sender looked: the note
	 * still arrives, for the engine to answer it as it must. */
	rx.direct = false;
	CHECK_EQ(send_note(0, URNIC_DIRECT_PLACED, s, 1), 1);
	CHECK_EQ(recv_all(), 1);
	CHECK(got.noted);
	urnic_local_close(&tx);
	urnic_local_close(&rx);
}

/* A receiver with direct placement off says so in the lanes it takes: its senders send
 * no notes (urnic_local_direct_ready), and nothing is written or read through them. */
static void test_accepts(void)
{
	static uint8_t buf[4096];
	struct urnic_direct_note d = { .pid = (uint32_t)getpid(), .nseg = 1 };
	struct urnic_direct_seg to = { (uintptr_t)buf, 100 };

	d.seg[0] = (struct urnic_direct_seg){ (uintptr_t)buf + 1000, 100 };
	memset(ctr_tx, 0, sizeof(ctr_tx));
	CHECK_EQ(urnic_local_open(&tx, false, ip_tx, 0), 0);
	CHECK_EQ(urnic_local_open(&rx, false, ip_rx, 0), 0);
	rx.direct = false;
	CHECK_EQ(send_note(0, 0, NULL, 0), 0);
	for (int i = 0; i < 4 && send_note(0, 0, NULL, 0) == 0; i++)
		urnic_local_service(&rx, 1, ctr_rx);
	CHECK_EQ(send_note(0, 0, NULL, 0), 1);
	CHECK(!urnic_local_direct_ready(&tx, ip_rx, 0));
	CHECK_EQ(urnic_local_direct_write(&tx, ip_rx, 0, &d, buf, 100, ctr_tx), -ENOENT);
	CHECK_EQ(urnic_local_direct_read(&tx, ip_rx, 0, &d, &to, 1, true, ctr_tx), -ENOENT);
	urnic_local_close(&tx);
	urnic_local_close(&rx);
}

static void test_direct_write(void)
{
	static uint8_t src[3 * 4096], dst[3 * 4096];
	struct urnic_direct_note d = { .pid = (uint32_t)getpid(), .nseg = 2 };
	uint8_t *hole;

	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 7 + 1);
	/* No lane to the receiver yet: nothing written. */
	CHECK_EQ(urnic_local_open(&tx, false, ip_tx, 0), 0);
	d.seg[0] = (struct urnic_direct_seg){ (uintptr_t)dst, 5000 };
	d.seg[1] = (struct urnic_direct_seg){ (uintptr_t)dst + 8000, 4288 };
	CHECK_EQ(urnic_local_direct_write(&tx, ip_rx, 0, &d, src, 9288, ctr_tx), -ENOENT);
	urnic_local_close(&tx);
	lane_up();
	CHECK_EQ(urnic_local_direct_write(&tx, ip_rx, 0, &d, src, 9288, ctr_tx), 0);
	CHECK(!memcmp(dst, src, 5000) && !memcmp(dst + 8000, src + 5000, 4288));
	for (size_t i = 5000; i < 8000; i++)
		CHECK_EQ(dst[i], 0);
	/* The segments must cover exactly the bytes. */
	CHECK_EQ(urnic_local_direct_write(&tx, ip_rx, 0, &d, src, 9287, ctr_tx), -EINVAL);
	/* Only the process that took the lane: its response must reach the one written to. */
	d.pid = (uint32_t)getpid() + 1;
	CHECK_EQ(urnic_local_direct_write(&tx, ip_rx, 0, &d, src, 9288, ctr_tx), -ENOENT);
	CHECK_EQ(urnic_local_direct_write(&tx, ip_tx, 0, &d, src, 9288, ctr_tx), -ENOENT);
	d.pid = (uint32_t)getpid();
	/* Memory that is not there: refused by the kernel, counted, still on. */
	hole = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(hole != MAP_FAILED);
	d.seg[1].addr = (uintptr_t)hole;
	CHECK(urnic_local_direct_write(&tx, ip_rx, 0, &d, src, 9288, ctr_tx) < 0);
	CHECK_EQ(ctr_tx[URNIC_CTR_direct_failed], 1);
	CHECK(tx.direct);
	munmap(hole, 4096);
	tx.direct = false;
	d.seg[1].addr = (uintptr_t)dst + 8000;
	CHECK_EQ(urnic_local_direct_write(&tx, ip_rx, 0, &d, src, 9288, ctr_tx), -ENOENT);
	urnic_local_close(&tx);
	urnic_local_close(&rx);
}

/* The other half: the peer's segments into ours, through a lane taken by that process
 * (by_lane) or whenever lanes are on (a WRITE's data, answered by any path). */
static void test_direct_read(void)
{
	static uint8_t src[3 * 4096], dst[3 * 4096];
	struct urnic_direct_note d = { .pid = (uint32_t)getpid(), .nseg = 2 };
	struct urnic_direct_seg to[2] = { { (uintptr_t)dst, 100 },
					  { (uintptr_t)dst + 5000, 6900 } };

	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 5 + 3);
	memset(dst, 0, sizeof(dst));
	d.seg[0] = (struct urnic_direct_seg){ (uintptr_t)src + 10, 3000 };
	d.seg[1] = (struct urnic_direct_seg){ (uintptr_t)src + 4010, 4000 };
	/* No lane taken yet: only what needs none. */
	CHECK_EQ(urnic_local_open(&tx, false, ip_tx, 0), 0);
	CHECK_EQ(urnic_local_direct_read(&tx, ip_rx, 0, &d, to, 2, true, ctr_tx), -ENOENT);
	CHECK_EQ(urnic_local_direct_read(&tx, ip_rx, 0, &d, to, 2, false, ctr_tx), 0);
	CHECK(!memcmp(dst, src + 10, 100) && !memcmp(dst + 5000, src + 110, 2900) &&
	      !memcmp(dst + 7900, src + 4010, 4000));
	urnic_local_close(&tx);
	memset(dst, 0, sizeof(dst));
	lane_up();
	CHECK_EQ(urnic_local_direct_read(&tx, ip_rx, 0, &d, to, 2, true, ctr_tx), 0);
	CHECK(!memcmp(dst, src + 10, 100) && !memcmp(dst + 5000, src + 110, 2900) &&
	      !memcmp(dst + 7900, src + 4010, 4000));
	for (size_t i = 100; i < 5000; i++)
		CHECK_EQ(dst[i], 0);
	to[1].len = 6899;
	CHECK_EQ(urnic_local_direct_read(&tx, ip_rx, 0, &d, to, 2, true, ctr_tx), -EINVAL);
	to[1].len = 6900;
	d.pid++;
	CHECK_EQ(urnic_local_direct_read(&tx, ip_rx, 0, &d, to, 2, true, ctr_tx), -ENOENT);
	d.pid--;
	d.seg[0].addr = 0x1000; /* nothing mapped there */
	CHECK(urnic_local_direct_read(&tx, ip_rx, 0, &d, to, 2, true, ctr_tx) < 0);
	CHECK_EQ(ctr_tx[URNIC_CTR_direct_failed], 1);
	CHECK(urnic_local_direct_ready(&tx, ip_rx, 0));
	CHECK(!urnic_local_direct_ready(&tx, ip_tx, 0));
	tx.direct = false;
	CHECK(!urnic_local_direct_ready(&tx, ip_rx, 0));
	CHECK_EQ(urnic_local_direct_read(&tx, ip_rx, 0, &d, to, 2, false, ctr_tx), -ENOENT);
	urnic_local_close(&tx);
	urnic_local_close(&rx);
}

int main(void)
{
	RUN(test_notes);
	RUN(test_direct_write);
	RUN(test_direct_read);
	RUN(test_accepts);
	return 0;
}
