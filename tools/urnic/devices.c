/* SPDX-License-Identifier: MIT */
/*
 * devices.c - `urnic devices`: the devices this process sees, through the verbs API
 * only (ibv_get_device_list, ibv_query_port, ibv_query_gid), as any application sees
 * them: name, kind (roce, iwarp or uet: the device's transport, and for UET its part ID),
 * address, GID (RoCEv2's and UET's GID 1; iWARP's one GID, the MAC, as siw's), port
 * state (ACTIVE while an interface that
 * is up holds the address, else DOWN) and active MTU. A device that cannot be opened (a
 * bad configuration, said above by the library) is listed with the reason.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"

/* The address of a RoCEv2 GID: ::ffff:a.b.c.d is IPv4 a.b.c.d, any other the IPv6
 * address itself (RoCEv2 GIDs are IP addresses, IBTA A17.8). */
static void gid_addr(const union ibv_gid *gid, char *buf, socklen_t len)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (memcmp(gid->raw, v4mapped, sizeof(v4mapped)) == 0)
		inet_ntop(AF_INET, gid->raw + 12, buf, len);
	else
		inet_ntop(AF_INET6, gid->raw, buf, len);
}

/* The port state as ibv_devinfo names it, without its PORT_ prefix (ibv_port_state_str
 * says "active" and "down"). */
static const char *state_name(enum ibv_port_state state)
{
	static const char *const names[] = {
		[IBV_PORT_NOP] = "NOP",	      [IBV_PORT_DOWN] = "DOWN",
		[IBV_PORT_INIT] = "INIT",     [IBV_PORT_ARMED] = "ARMED",
		[IBV_PORT_ACTIVE] = "ACTIVE", [IBV_PORT_ACTIVE_DEFER] = "ACTIVE_DEFER",
	};

	return (unsigned)state < sizeof(names) / sizeof(names[0]) ? names[state] : "?";
}

static int mtu_bytes(enum ibv_mtu mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128 << mtu : 0;
}

/* An iWARP device's GID is its MAC (siw_query_gid); urnic's MAC of an IPv4 address is
 * 02:75 and the address (wire/frame.c, urnic_frame_mac), of an IPv6 one not the whole
 * address: "-". */
static void mac_addr(const union ibv_gid *gid, char *buf, socklen_t len, char *gidstr,
		     socklen_t gidlen)
{
	const uint8_t *m = gid->raw;

	snprintf(gidstr, gidlen, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4],
		 m[5]);
	if (m[0] == 0x02 && m[1] == 0x75)
		inet_ntop(AF_INET, m + 2, buf, len);
	else
		snprintf(buf, len, "-");
}

/* A UET device is an InfiniBand-transport device, as RoCEv2's, with the part ID 4793
 * (its UDP port) under urnic's vendor ID 0xffffff (src/verbs/verbs.h,
 * URNIC_UET_VENDOR_PART_ID). */
static const char *kind_of(struct ibv_context *ctx, bool iwarp)
{
	struct ibv_device_attr a;

	if (iwarp)
		return "iwarp";
	if (ibv_query_device(ctx, &a) == 0 && a.vendor_id == 0xffffff && a.vendor_part_id == 4793)
		return "uet";
	return "roce";
}

static int show(struct ibv_device *dev)
{
	bool iwarp = dev->transport_type == IBV_TRANSPORT_IWARP;
	char addr[INET6_ADDRSTRLEN], gidstr[INET6_ADDRSTRLEN];
	struct ibv_port_attr port;
	struct ibv_context *ctx;
	union ibv_gid gid;
	int ret = URNIC_EXIT_OK;

	ctx = ibv_open_device(dev);
	if (!ctx) {
		int err = errno;

		printf("%-10s (cannot open: %s%s)\n", ibv_get_device_name(dev), strerror(err),
		       err == EADDRINUSE ? "; another process has this address open"
		       : err == EINVAL	 ? "; a bad configuration value, said above"
					 : "");
		return URNIC_EXIT_FAIL;
	}
	if (ibv_query_port(ctx, 1, &port) || ibv_query_gid(ctx, 1, iwarp ? 0 : 1, &gid)) {
		printf("%-10s (cannot query port 1: %s)\n", ibv_get_device_name(dev),
		       strerror(errno));
		ret = URNIC_EXIT_FAIL;
		goto close_device;
	}
	if (iwarp) {
		mac_addr(&gid, addr, sizeof(addr), gidstr, sizeof(gidstr));
	} else {
		gid_addr(&gid, addr, sizeof(addr));
		inet_ntop(AF_INET6, gid.raw, gidstr, sizeof(gidstr));
	}
	printf("%-10s %-6s %-16s %-24s %-8s %d\n", ibv_get_device_name(dev), kind_of(ctx, iwarp),
	       addr, gidstr, state_name(port.state), mtu_bytes(port.active_mtu));
close_device:
	ibv_close_device(ctx);
	return ret;
}

int urnic_cmd_devices(int argc, char **argv)
{
	struct ibv_device **list;
	int n, ret = URNIC_EXIT_OK;

	if (argc > 0) {
		fprintf(stderr, "urnic: devices takes no arguments\n");
		return URNIC_EXIT_USAGE;
	}
	list = ibv_get_device_list(&n);
	if (!list) {
		fprintf(stderr, "urnic: cannot list devices: %s\n", strerror(errno));
		return URNIC_EXIT_FAIL;
	}
	if (n == 0) {
		fprintf(stderr, "urnic: no devices: set URNIC_ADDR=<ip> or list them in "
				"/etc/urnic.conf\n");
		ret = URNIC_EXIT_FAIL;
		goto free_list;
	}
	printf("%-10s %-6s %-16s %-24s %-8s %s\n", "device", "kind", "address", "GID", "state",
	       "active MTU");
	for (int i = 0; i < n; i++)
		if (show(list[i]) != URNIC_EXIT_OK)
			ret = URNIC_EXIT_FAIL;
free_list:
	ibv_free_device_list(list);
	return ret;
}
