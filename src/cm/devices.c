/* SPDX-License-Identifier: MIT */
/*
 * devices.c - the process's urnic devices as librdmacm sees them: each opened once
 * through the public verbs API (the ibv device of the same name), with a PD for ids that
 * bring none, and its CM opened on first use with the library's one event sink.
 * rdma_get_devices() and rdma_free_devices() hand out the contexts.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "cm/rdmacm.h"

static struct urnic_rdma_dev devs[URNIC_RDMA_MAX_DEVS];
static int ndevs = -1;
/* Devices open under their own lock: opening calls into the device, which the sink's
 * urnic_rdma_lock must never wait for. */
static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;

static const struct urnic_dev_cm_sink sink = { .event = urnic_rdma_sink_event };

int urnic_rdma_ret(int rc)
{
	if (rc >= 0)
		return 0;
	errno = -rc;
	return -1;
}

/* Opens the ibv context of each urnic device, once. Caller holds dev_lock. */
static void devs_init(void)
{
	struct urnic_dev **list;
	struct ibv_device **ibv;
	int n, nibv = 0;

	if (ndevs >= 0)
		return;
	ndevs = 0;
	n = urnic_dev_cm_devices(&list);
	ibv = ibv_get_device_list(&nibv);
	for (int i = 0; i < n && ndevs < URNIC_RDMA_MAX_DEVS; i++) {
		struct ibv_context *ctx = NULL;

		for (int j = 0; ibv && j < nibv && !ctx; j++)
			if (!strcmp(ibv_get_device_name(ibv[j]), list[i]->name))
				ctx = ibv_open_device(ibv[j]);
		if (!ctx)
			continue;
		devs[ndevs].d = list[i];
		devs[ndevs].ctx = ctx;
		devs[ndevs].pd = ibv_alloc_pd(ctx);
		ndevs++;
	}
	if (ibv)
		ibv_free_device_list(ibv);
}

int urnic_rdma_devs(struct urnic_rdma_dev **out)
{
	pthread_mutex_lock(&dev_lock);
	devs_init();
	pthread_mutex_unlock(&dev_lock);
	*out = devs;
	return ndevs;
}

/* The device whose address is sa's (IPv4, or IPv6 with a v4-mapped one), or NULL. */
struct urnic_rdma_dev *urnic_rdma_dev_by_addr(const struct sockaddr *sa)
{
	struct urnic_rdma_dev *all;
	uint8_t a[16];
	bool v6 = sa->sa_family == AF_INET6;
	int n = urnic_rdma_devs(&all);

	memset(a, 0, sizeof(a));
	if (sa->sa_family == AF_INET) {
		a[10] = a[11] = 0xff;
		memcpy(a + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (v6) {
		memcpy(a, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	} else {
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		struct urnic_dev *d = all[i].d;

		if (!memcmp(d->gid[0], a, 16) || !memcmp(d->gid[1], a, 16))
			return &all[i];
		if (d->ipv6 && !memcmp(d->addr, a, 16))
			return &all[i];
		if (!d->ipv6 && !memcmp(d->addr, a + 12, 4) &&
		    !memcmp(a, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12))
			return &all[i];
	}
	return NULL;
}

struct urnic_rdma_dev *urnic_rdma_dev_by_urnic(struct urnic_dev *d)
{
	for (int i = 0; i < ndevs; i++)
		if (devs[i].d == d)
			return &devs[i];
	return NULL;
}

struct urnic_rdma_dev *urnic_rdma_dev_by_ctx(struct ibv_context *ctx)
{
	struct urnic_rdma_dev *all;
	int n = urnic_rdma_devs(&all);

	for (int i = 0; i < n; i++)
		if (all[i].ctx == ctx)
			return &all[i];
	return NULL;
}

bool urnic_rdma_dev_uet(const struct urnic_rdma_dev *rd)
{
	return rd && rd->d->kind == URNIC_KIND_UET;
}

/* The device's CM, opened once for the process with the library's sink. */
int urnic_rdma_dev_open_cm(struct urnic_rdma_dev *rd)
{
	int rc = 0;

	pthread_mutex_lock(&dev_lock);
	if (!rd->cm_open) {
		rc = urnic_dev_cm_open(rd->d, &sink);
		rd->cm_open = rc == 0;
	}
	pthread_mutex_unlock(&dev_lock);
	return rc;
}

__attribute__((visibility("default"))) struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct urnic_rdma_dev *all;
	int n = urnic_rdma_devs(&all);
	struct ibv_context **v = calloc((size_t)n + 1, sizeof(*v));

	if (!v) {
		errno = ENOMEM;
		return NULL;
	}
	for (int i = 0; i < n; i++)
		v[i] = all[i].ctx;
	if (num_devices)
		*num_devices = n;
	return v;
}

__attribute__((visibility("default"))) void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}
