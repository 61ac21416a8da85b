// SPDX-License-Identifier: MIT
/*
 * time.c - the CM's times, as Linux's cm.c computes them from IBTA's exponents
 * (4.096 us * 2^n, IBTA 12.6.5 and 12.7): response timeouts, packet life times, MRA
 * service timeouts, the QP's local ACK timeout.
 */
#include "engine/cm/core.h"

uint64_t urnic_cm_time_ns(uint8_t t)
{
	/* cm_convert_to_ms: 1 << max(t - 8, 0) ms; exponents are 5 bits. */
	unsigned shift = t > 8 ? (unsigned)(t & 31) - 8 : 0;

	return (1ull << shift) * 1000000ull;
}

uint8_t urnic_cm_ack_timeout(uint8_t ca_ack_delay, uint8_t packet_life_time)
{
	/* 4.096 us * 2^ack_timeout = 4.096 us * 2^ack_delay + 2 * 4.096 us * 2^life_time:
	 * the larger of ack_delay and life_time + 1, one more when the other is within
	 * half of it (cm.c cm_ack_timeout). */
	int ack_timeout = packet_life_time + 1;

	if (ack_timeout >= ca_ack_delay)
		ack_timeout += ca_ack_delay >= ack_timeout - 1;
	else
		ack_timeout = ca_ack_delay + (ack_timeout >= ca_ack_delay - 1);
	return (uint8_t)(ack_timeout < 31 ? ack_timeout : 31);
}
