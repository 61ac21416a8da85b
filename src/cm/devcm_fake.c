/* SPDX-License-Identifier: MIT */
/*
 * devcm_fake.c - a stand-in for the device CM (dev/cm.h) for building and testing the
 * library alone (-DURNIC_CM_FAKE=ON): devices urnic0, urnic1, ... on URNIC_ADDR's IPv4
 * addresses as the real list names them, each with the real engine/cm state machine,
 * whose MADs go straight to the CM of the device that holds the destination GID in this
 * process. Timers fire only when a call ends. Not in the default build.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dev/cm.h"

enum { FAKE_MAX = 8 };

static struct urnic_dev fake_devs[FAKE_MAX];
static struct urnic_dev *fake_list[FAKE_MAX];
static struct urnic_cm *fake_cm[FAKE_MAX];
static int fake_refs[FAKE_MAX];
static int fake_n = -1;
static struct urnic_dev_cm_sink fake_sink;
static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static int fake_depth;

static uint64_t fake_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void fake_init(void)
{
	const char *env = getenv("URNIC_ADDR");
	char buf[256], *save = NULL;

	if (fake_n >= 0)
		return;
	fake_n = 0;
	if (!env)
		return;
	snprintf(buf, sizeof(buf), "%s", env);
	for (char *t = strtok_r(buf, ",", &save); t && fake_n < FAKE_MAX;
	     t = strtok_r(NULL, ",", &save)) {
		struct urnic_dev *d = &fake_devs[fake_n];
		struct in_addr a;

		if (inet_pton(AF_INET, t, &a) != 1)
			continue;
		snprintf(d->name, sizeof(d->name), "urnic%d", fake_n);
		snprintf(d->addr_str, sizeof(d->addr_str), "%s", t);
		memcpy(d->addr, &a, 4);
		for (int g = 0; g < 2; g++) {
			d->gid[g][10] = d->gid[g][11] = 0xff;
			memcpy(d->gid[g] + 12, &a, 4);
		}
		d->guid = (uint64_t)(fake_n + 1) << 56;
		d->active_mtu = 3; /* 1024 */
		fake_list[fake_n] = d;
		fake_n++;
	}
}

int urnic_dev_cm_devices(struct urnic_dev ***out)
{
	pthread_mutex_lock(&fake_lock);
	fake_init();
	pthread_mutex_unlock(&fake_lock);
	*out = fake_list;
	return fake_n;
}

static int fake_index(struct urnic_dev *d)
{
	for (int i = 0; i < fake_n; i++)
		if (fake_list[i] == d)
			return i;
	return -1;
}

int urnic_dev_cm_open(struct urnic_dev *d, const struct urnic_dev_cm_sink *sink)
{
	int i, rc = 0;

	pthread_mutex_lock(&fake_lock);
	i = fake_index(d);
	if (i < 0) {
		rc = -ENODEV;
	} else if (fake_sink.event && fake_sink.event != sink->event) {
		rc = -EINVAL;
	} else if (!fake_cm[i]) {
		struct urnic_cm_config cfg;

		urnic_cm_config_init(&cfg);
		cfg.ca_guid = d->guid;
		cfg.owner = (uint8_t)i;
		cfg.seed = fake_now() ^ (uint64_t)i;
		rc = urnic_cm_new(&fake_cm[i], &cfg);
	}
	if (!rc) {
		fake_sink = *sink;
		fake_refs[i]++;
	}
	pthread_mutex_unlock(&fake_lock);
	return rc;
}

void urnic_dev_cm_close(struct urnic_dev *d)
{
	int i;

	pthread_mutex_lock(&fake_lock);
	i = fake_index(d);
	if (i >= 0 && fake_refs[i] > 0 && --fake_refs[i] == 0) {
		urnic_cm_free(fake_cm[i]);
		fake_cm[i] = NULL;
	}
	pthread_mutex_unlock(&fake_lock);
}

struct urnic_cm *urnic_dev_cm_begin(struct urnic_dev *d, uint64_t *now_ns)
{
	int i;

	pthread_mutex_lock(&fake_lock);
	i = fake_index(d);
	if (i < 0 || !fake_cm[i]) {
		pthread_mutex_unlock(&fake_lock);
		return NULL;
	}
	fake_depth++;
	*now_ns = fake_now();
	return fake_cm[i];
}

/* Moves every queued MAD to its destination CM and every event to the sink until all
 * queues are empty. Caller holds fake_lock. */
static void fake_pump(void)
{
	bool moved = true;

	while (moved) {
		moved = false;
		for (int i = 0; i < fake_n; i++) {
			struct urnic_cm_out out;
			struct urnic_cm_event ev;

			if (!fake_cm[i])
				continue;
			urnic_cm_tick(fake_cm[i], fake_now());
			while (urnic_cm_out_pop(fake_cm[i], &out)) {
				struct urnic_cm_addr from = { .udp_sport = 4791 };

				memcpy(from.gid, fake_list[i]->gid[1], 16);
				moved = true;
				for (int j = 0; j < fake_n; j++)
					if (fake_cm[j] &&
					    !memcmp(fake_list[j]->gid[1], out.dst.gid, 16))
						urnic_cm_input_bytes(fake_cm[j], out.mad,
								     sizeof(out.mad), &from,
								     fake_now());
			}
			while (urnic_cm_event_pop(fake_cm[i], &ev)) {
				moved = true;
				if (fake_sink.event)
					fake_sink.event(fake_sink.ctx, fake_list[i], &ev);
			}
		}
	}
}

void urnic_dev_cm_end(struct urnic_dev *d)
{
	(void)d;
	fake_depth--;
	fake_pump();
	pthread_mutex_unlock(&fake_lock);
}
