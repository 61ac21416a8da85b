/* SPDX-License-Identifier: MIT */
/*
 * dev_counter.h - a device's counter read under its lock, for tests that open devices
 * in their own process and look inside them (tests/dev).
 */
#ifndef URNIC_TESTS_DEV_COUNTER_H
#define URNIC_TESTS_DEV_COUNTER_H

#include <pthread.h>
#include <stdint.h>

#include "dev/device.h"

static inline uint64_t dev_counter(struct urnic_dev *d, enum urnic_counter c)
{
	uint64_t v;

	pthread_mutex_lock(&d->lock);
	v = d->eng->stats.counters[c];
	pthread_mutex_unlock(&d->lock);
	return v;
}

#endif
