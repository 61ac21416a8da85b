/* SPDX-License-Identifier: MIT */
/*
 * test_spin.c - the engine thread's polling window (src/dev/spin.h, urnic_spin_next).
 *
 * A packet after a short sleep grows the window by 1.5 times the sleep, up to
 * URNIC_SPIN_MAX_NS; a doorbell leaves it; a timer or other wake-up, a sleep of the
 * maximum or more, or a configured window of 0 gives the configured window back.
 */
#include "check.h"
#include "dev/spin.h"

enum { US = 1000, BASE = 50 * US };

static void test_grows_to_cover_the_gap(void)
{
	/* ib_read_lat -e at a 10 us window: a round trip of ~17 us slept through. */
	uint64_t spin = 10 * US;

	spin = urnic_spin_next(spin, 10 * US, 8 * US, URNIC_WOKE_PACKET);
	CHECK_EQ(spin, 22 * US);
	CHECK_EQ(urnic_spin_next(BASE, BASE, 30 * US, URNIC_WOKE_PACKET), 95 * US);
}

static void test_capped(void)
{
	uint64_t spin = BASE;

	for (int i = 0; i < 10; i++)
		spin = urnic_spin_next(spin, BASE, 100 * US, URNIC_WOKE_PACKET);
	CHECK_EQ(spin, URNIC_SPIN_MAX_NS);
}

static void test_back_to_base(void)
{
	uint64_t grown = urnic_spin_next(BASE, BASE, 60 * US, URNIC_WOKE_PACKET);

	CHECK(grown > BASE);
	CHECK_EQ(urnic_spin_next(grown, BASE, URNIC_SPIN_MAX_NS, URNIC_WOKE_PACKET), BASE);
	CHECK_EQ(urnic_spin_next(grown, BASE, 5 * US, URNIC_WOKE_OTHER), BASE);
	CHECK_EQ(urnic_spin_next(grown, BASE, 5 * US, URNIC_WOKE_DOORBELL), grown);
}

static void test_off_stays_off(void)
{
	CHECK_EQ(urnic_spin_next(0, 0, 5 * US, URNIC_WOKE_PACKET), 0);
	CHECK_EQ(urnic_spin_next(0, 0, 5 * US, URNIC_WOKE_DOORBELL), 0);
}

int main(void)
{
	RUN(test_grows_to_cover_the_gap);
	RUN(test_capped);
	RUN(test_back_to_base);
	RUN(test_off_stays_off);
	return 0;
}
