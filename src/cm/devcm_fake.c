/* SPDX-License-Identifier: MIT */
/*
 * devcm_fake.c - a stand-in for the device CM (dev/cm.h) for building and testing the
 * library alone (-DURNIC_CM_FAKE=ON): devices urnic0, urnic1, ... on URNIC_ADDR's IPv4
 * addresses as the real list names them, each with the real engine/cm state machine.
 * MADs go straight to the CM of a device of this process that holds the destination
 * GID, else as UDP datagrams to port 4792 of its address (another process's stand-in),
 * which a thread receives; the thread also runs the timers. Not in the default build.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dev/cm.h"

enum { FAKE_MAX = 8, FAKE_PORT = 4792 };

static struct urnic_dev fake_devs[FAKE_MAX];
static struct urnic_dev *fake_list[FAKE_MAX];
static struct urnic_cm *fake_cm[FAKE_MAX];
static int fake_refs[FAKE_MAX];
static int fake_n = -1;
static struct urnic_dev_cm_sink fake_sink;
static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static int fake_depth;
static int fake_fd[FAKE_MAX] = { -1, -1, -1, -1, -1, -1, -1, -1 };
static pthread_t fake_thread;
static bool fake_thread_on;

static void fake_io(int i);

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
		if (!rc)
			fake_io(i);
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

/* A MAD for a device of this process goes to its CM directly. */
static bool fake_local(const struct urnic_cm_out *out, const struct urnic_cm_addr *from)
{
	for (int j = 0; j < fake_n; j++)
		if (fake_cm[j] && !memcmp(fake_list[j]->gid[1], out->dst.gid, 16)) {
			urnic_cm_input_bytes(fake_cm[j], out->mad, sizeof(out->mad), from,
					     fake_now());
			return true;
		}
	return false;
}

static void fake_send(int i, const struct urnic_cm_out *out)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(FAKE_PORT) };

	if (fake_fd[i] < 0)
		return;
	memcpy(&to.sin_addr, out->dst.gid + 12, 4);
	(void)sendto(fake_fd[i], out->mad, sizeof(out->mad), 0, (struct sockaddr *)&to, sizeof(to));
}

static void fake_pump(void);

/* Receives other processes' MADs and runs the timers, every 10 ms at least. */
static void *fake_rx(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd p[FAKE_MAX];
		int n = 0;

		pthread_mutex_lock(&fake_lock);
		for (int i = 0; i < fake_n; i++)
			p[n++] = (struct pollfd){ .fd = fake_fd[i], .events = POLLIN };
		pthread_mutex_unlock(&fake_lock);
		poll(p, (nfds_t)n, 10);
		pthread_mutex_lock(&fake_lock);
		for (int i = 0; i < n; i++) {
			uint8_t buf[512];
			struct sockaddr_in from;
			socklen_t fl = sizeof(from);
			ssize_t len;

			if (!(p[i].revents & POLLIN) || !fake_cm[i])
				continue;
			len = recvfrom(fake_fd[i], buf, sizeof(buf), MSG_DONTWAIT,
				       (struct sockaddr *)&from, &fl);
			if (len > 0) {
				struct urnic_cm_addr a = { .udp_sport = 4791 };

				a.gid[10] = a.gid[11] = 0xff;
				memcpy(a.gid + 12, &from.sin_addr, 4);
				urnic_cm_input_bytes(fake_cm[i], buf, (size_t)len, &a, fake_now());
			}
		}
		fake_pump();
		pthread_mutex_unlock(&fake_lock);
	}
	return NULL;
}

/* The device's socket and the receive thread, on its CM's creation. Caller holds
 * fake_lock. */
static void fake_io(int i)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(FAKE_PORT) };

	memcpy(&a.sin_addr, fake_list[i]->addr, 4);
	fake_fd[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fake_fd[i] >= 0 && bind(fake_fd[i], (struct sockaddr *)&a, sizeof(a))) {
		close(fake_fd[i]);
		fake_fd[i] = -1;
	}
	if (!fake_thread_on && !pthread_create(&fake_thread, NULL, fake_rx, NULL))
		fake_thread_on = true;
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
				if (!fake_local(&out, &from))
					fake_send(i, &out);
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
