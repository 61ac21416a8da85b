/* SPDX-License-Identifier: MIT */
/*
 * test_rnr.c - RNR NAK timer codes map to IBTA 9.7.5.2.8 table 45.
 *
 * Code 0 is the longest delay (655.36 ms); 1..31 grow from 0.01 ms to 491.52 ms. Code 25
 * is 61.44 ms: rxe's table says 61410, a typo urnic does not copy (reference 2.8).
 */
#include "check.h"
#include "wire/pkt.h"

static void table_45_entries(void)
{
	CHECK_EQ(urnic_rnr_timer_us(0), 655360);
	CHECK_EQ(urnic_rnr_timer_us(1), 10);
	CHECK_EQ(urnic_rnr_timer_us(2), 20);
	CHECK_EQ(urnic_rnr_timer_us(14), 1280);
	CHECK_EQ(urnic_rnr_timer_us(24), 40960);
	CHECK_EQ(urnic_rnr_timer_us(25), 61440);
	CHECK_EQ(urnic_rnr_timer_us(26), 81920);
	CHECK_EQ(urnic_rnr_timer_us(31), 491520);
}

static void codes_1_to_31_increase(void)
{
	uint8_t c;

	for (c = 2; c < 32; c++)
		CHECK(urnic_rnr_timer_us(c) > urnic_rnr_timer_us((uint8_t)(c - 1)));
	CHECK(urnic_rnr_timer_us(0) > urnic_rnr_timer_us(31));
}

static void only_the_low_five_bits_count(void)
{
	/* An RNR NAK syndrome is 0x20 | timer: passing it whole gives the timer's delay. */
	CHECK_EQ(urnic_rnr_timer_us(URNIC_AETH_RNR_NAK | 25), 61440);
	CHECK_EQ(urnic_rnr_timer_us(0xff), 491520);
}

int main(void)
{
	RUN(table_45_entries);
	RUN(codes_1_to_31_increase);
	RUN(only_the_low_five_bits_count);
	return 0;
}
