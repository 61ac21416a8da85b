/* SPDX-License-Identifier: MIT */
/*
 * ports.c - the process's table of rdma_cm ports (ports.h): a list of (address, port
 * space, port) with their REUSEADDR flag and a count of holders, under its own lock.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cm/ports.h"

struct port_ent {
	struct port_ent *next;
	uint8_t addr[16];
	int ps;
	uint16_t port;
	bool reuse;
	bool listening;
	int holders;
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

int urnic_rdma_port_take(const uint8_t addr[16], int ps, uint16_t *port, bool reuse)
{
	struct port_ent *same = NULL, *e;
	uint32_t range = URNIC_RDMA_PORT_HI - URNIC_RDMA_PORT_LO + 1;
	int rc = -EADDRINUSE;

	pthread_mutex_lock(&ports_lock);
	if (*port) {
		rc = conflict(addr, ps, *port, reuse, &same);
	} else {
		if (!next_ephemeral)
			next_ephemeral = (uint32_t)random() % range;
		for (uint32_t i = 0; i < range; i++) {
			uint16_t p = (uint16_t)(URNIC_RDMA_PORT_LO + (next_ephemeral++ % range));

			if (!conflict(addr, ps, p, false, &same)) {
				*port = p;
				rc = 0;
				break;
			}
		}
		same = NULL;
	}
	if (rc == 0 && same) {
		same->holders++;
	} else if (rc == 0) {
		e = calloc(1, sizeof(*e));
		if (!e) {
			rc = -ENOMEM;
		} else {
			memcpy(e->addr, addr, 16);
			e->ps = ps;
			e->port = *port;
			e->reuse = reuse;
			e->holders = 1;
			e->next = ports;
			ports = e;
		}
	}
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
