/* SPDX-License-Identifier: MIT */
/*
 * raw_port.c - the raw port of raw_port.h: which interface is the port's wire (the one
 * holding the device's address; lo for loopback addresses), the socket's life, and the
 * frames between it and the engine.
 */
#include "dev/raw_port.h"
#include "dev/config.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/raw.h"
#include "transport/packet.h"

_Static_assert((int)URNIC_RAW_FRAME_MAX == (int)URNIC_PACKET_FRAME_MAX,
	       "the engine's frames are the socket's");

enum { ETH_VLAN_HDR_BYTES = 18, RX_FRAMES_PER_PASS = 256 };

static unsigned int port_ifindex(const struct urnic_dev *d)
{
	static const uint8_t v6_loopback[16] = { [15] = 1 };

	if (d->udp && d->udp->ifindex)
		return d->udp->ifindex;
	if ((!d->ipv6 && d->addr[0] == 127) || (d->ipv6 && !memcmp(d->addr, v6_loopback, 16)))
		return if_nametoindex("lo");
	return 0;
}

int urnic_dev_raw_get(struct urnic_dev *d)
{
	unsigned int ifindex;
	int ret;

	if (d->raw_qps++)
		return 0;
	ifindex = port_ifindex(d);
	ret = ifindex ? urnic_packet_open(&d->raw_port, ifindex) : -ENODEV;
	if (ret == 0)
		ret = urnic_engine_raw_init(d->eng, d->raw_port.mtu + ETH_VLAN_HDR_BYTES);
	if (ret) {
		if (urnic_dev_settings()->stub_trace || ret != -EPERM)
			fprintf(stderr,
				"urnic: %s: a raw packet QP needs a packet socket on %s's "
				"interface: %s%s\n",
				d->name, d->addr_str, strerror(-ret),
				ret == -EPERM ? " (CAP_NET_RAW is required)" : "");
		urnic_packet_close(&d->raw_port);
		d->raw_qps--;
		return ret;
	}
	atomic_store(&d->raw_fd, d->raw_port.fd);
	return 0;
}

void urnic_dev_raw_put(struct urnic_dev *d)
{
	if (--d->raw_qps)
		return;
	atomic_store(&d->raw_fd, -1);
	urnic_packet_close(&d->raw_port);
}

static void frame_in(void *ctx, const uint8_t *frame, size_t len, size_t wire_len)
{
	struct urnic_dev *d = ctx;

	if (len < wire_len) {
		d->eng->stats.counters[URNIC_CTR_drop_raw_too_long]++;
		return;
	}
	urnic_engine_raw_rx(d->eng, frame, len, d->eng->now_ns);
}

void urnic_dev_raw_recv(struct urnic_dev *d, uint64_t now_ns)
{
	if (!d->raw_qps)
		return;
	d->eng->now_ns = now_ns;
	urnic_packet_recv(&d->raw_port, frame_in, d, RX_FRAMES_PER_PASS);
}

void urnic_dev_raw_send(struct urnic_dev *d)
{
	struct urnic_raw_tx *t = &d->eng->raw->tx;
	uint32_t refused;

	if (!d->raw_qps) {
		d->eng->stats.counters[URNIC_CTR_drop_raw_tx_failed] += t->n;
		t->n = 0;
		return;
	}
	refused = urnic_packet_send(
		&d->raw_port, (const uint8_t(*)[URNIC_PACKET_FRAME_MAX])t->frame, t->len, t->n);
	d->eng->stats.counters[URNIC_CTR_drop_raw_tx_failed] += refused;
	t->n = 0;
}

int urnic_dev_flow_add(struct urnic_dev *d, const struct urnic_flow_rule *r, uint32_t *id)
{
	int ret;

	pthread_mutex_lock(&d->lock);
	ret = urnic_engine_flow_add(d->eng, r, id);
	pthread_mutex_unlock(&d->lock);
	return ret;
}

int urnic_dev_flow_del(struct urnic_dev *d, uint32_t id)
{
	int ret;

	pthread_mutex_lock(&d->lock);
	ret = urnic_engine_flow_del(d->eng, id);
	pthread_mutex_unlock(&d->lock);
	return ret;
}
