/* SPDX-License-Identifier: MIT */
/*
 * ports.c - the process's table of rdma_cm ports (ports.h): a list of (address, port
 * space, port) with their REUSEADDR flag and a count of holders, under its own lock;
 * each entry on a device's address holds the port for the process in the port space
 * that all processes on the address share (dev/cm.h, transport/cm_ports.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cm/ports.h"
#include "cm/iw_cm.h"
#include "dev/cm.h"

struct port_ent {
	struct port_ent *next;
	uint8_t addr[16];
	int ps;
	uint16_t port;
	bool reuse;
	bool listening;
	int holders;
	/* Held in the port space of the address's device, or of every device for "any",
	 * which all processes on those addresses share (dev/cm.h). */
	int nholds;
	struct urnic_cm_port holds[URNIC_RDMA_MAX_DEVS];
};

static struct port_ent *ports;
static pthread_mutex_t ports_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t next_ephemeral;

static bool is_any(const uint8_t a[16])
{
	static const uint8_t zero[16];
	static const uint8_t v4any[16] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(a, zero, 16) || !memcmp(a, v4any, 16);
}

/* cma.c cma_check_port: 0, or the error of the first holder (addr, ps, port) conflicts
 * with for a taker with reuse: -EADDRNOTAVAIL when either address is "any",
 * -EADDRINUSE for the same address. Ids that both asked for REUSEADDR share a port
 * while none listens on it (*same: their entry). */
static int conflict(const uint8_t addr[16], int ps, uint16_t port, bool reuse,
		    struct port_ent **same)
{
	*same = NULL;
	for (struct port_ent *e = ports; e; e = e->next) {
		if (e->ps != ps || e->port != port)
			continue;
		if (reuse && e->reuse && !e->listening && !memcmp(e->addr, addr, 16)) {
			*same = e;
			continue;
		}
		if (is_any(e->addr) || is_any(addr))
			return -EADDRNOTAVAIL;
		if (!memcmp(e->addr, addr, 16))
			return -EADDRINUSE;
	}
	return 0;
}

static void release(struct port_ent *e)
{
	while (e->nholds > 0)
		urnic_dev_cm_port_release(&e->holds[--e->nholds]);
}

/* Holds the port in the port space of d's address, or of every device's for "any" (d
 * NULL), as a port bound to the wildcard address is taken on all of them: 0, or
 * -EADDRINUSE when another process has it on one of them. */
static int hold(struct urnic_dev *d, int ps, uint16_t port, struct port_ent *e)
{
	struct urnic_rdma_dev *all;
	int n = d ? 1 : urnic_rdma_devs(&all), rc = 0;

	e->nholds = 0;
	for (int i = 0; i < n && !rc && i < URNIC_RDMA_MAX_DEVS; i++) {
		struct urnic_dev *on = d;

		if (!on) {
			if (urnic_rdma_dev_uet(&all[i]))
				continue; /* no rdma_cm port space there (dev/cm.c) */
			rc = urnic_rdma_dev_open_cm(&all[i]);
			on = all[i].d;
		}
		/* The device refuses an iWARP device's CM: its ports are TCP ports, bound when
		 * the id listens or connects on it (iw_cm.h), in no rdma_cm port space. */
		if (rc == -EPROTONOSUPPORT && !d) {
			rc = 0;
			continue;
		}
		if (!rc)
			rc = urnic_dev_cm_port_hold(on, (uint16_t)ps, &port, &e->holds[e->nholds]);
		if (!rc)
			e->nholds++;
	}
	if (rc)
		release(e);
	return rc;
}

/* A new entry for (addr, ps, *port) held in the address's port space; for port 0, the
 * first ephemeral port free both here and there. */
static int take_new(struct urnic_dev *d, const uint8_t addr[16], int ps, uint16_t *port, bool reuse)
{
	uint32_t range = URNIC_RDMA_PORT_HI - URNIC_RDMA_PORT_LO + 1;
	struct port_ent *same, *e = calloc(1, sizeof(*e));
	int rc = -EADDRINUSE;

	if (!e)
		return -ENOMEM;
	if (*port) {
		rc = hold(d, ps, *port, e);
	} else {
		if (!next_ephemeral)
			next_ephemeral = (uint32_t)random() % range;
		for (uint32_t i = 0; i < range && rc == -EADDRINUSE; i++) {
			uint16_t p = (uint16_t)(URNIC_RDMA_PORT_LO + (next_ephemeral++ % range));

			if (conflict(addr, ps, p, false, &same))
				continue;
			rc = hold(d, ps, p, e);
			if (!rc)
				*port = p;
		}
	}
	if (rc) {
		free(e);
		return rc;
	}
	memcpy(e->addr, addr, 16);
	e->ps = ps;
	e->port = *port;
	e->reuse = reuse;
	e->holders = 1;
	e->next = ports;
	ports = e;
	return 0;
}

int urnic_rdma_port_take(struct urnic_dev *d, const uint8_t addr[16], int ps, uint16_t *port,
			 bool reuse)
{
	struct port_ent *same = NULL;
	int rc = 0;

	pthread_mutex_lock(&ports_lock);
	if (*port)
		rc = conflict(addr, ps, *port, reuse, &same);
	if (rc == 0 && same)
		same->holders++;
	else if (rc == 0)
		rc = take_new(d, addr, ps, port, reuse);
	pthread_mutex_unlock(&ports_lock);
	return rc;
}

void urnic_rdma_port_drop(const uint8_t addr[16], int ps, uint16_t port)
{
	pthread_mutex_lock(&ports_lock);
	for (struct port_ent **pp = &ports, *e; (e = *pp); pp = &e->next) {
		if (e->ps == ps && e->port == port && !memcmp(e->addr, addr, 16)) {
			if (--e->holders == 0) {
				*pp = e->next;
				release(e);
				free(e);
			}
			break;
		}
	}
	pthread_mutex_unlock(&ports_lock);
}

int urnic_rdma_port_listen(const uint8_t addr[16], int ps, uint16_t port)
{
	int rc = -ENOENT;

	pthread_mutex_lock(&ports_lock);
	for (struct port_ent *e = ports; e; e = e->next) {
		if (e->ps == ps && e->port == port && !memcmp(e->addr, addr, 16)) {
			rc = e->holders > 1 ? -EADDRINUSE : 0;
			if (!rc)
				e->listening = true;
			break;
		}
	}
	pthread_mutex_unlock(&ports_lock);
	return rc;
}
