/* SPDX-License-Identifier: MIT */
/*
 * udp.c - the sockets of the UDP transport (udp.h): the address's receiving socket on
 * port 4791 (UET: 4793), the sending sockets of the per-flow source ports, multicast
 * groups' sockets, the packet rings' set-up and the fault injector. Receiving is
 * udp_rx.c, sending udp_tx.c.
 */
#include "transport/udp.h"
#include "transport/udp_int.h"

#include "wire/pkt.h"
#include "wire/uet.h"

#include <errno.h>
#include <stdatomic.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* The index of the interface that has address ip, 0 if none (getifaddrs). */
static unsigned int ifindex_of(bool ipv6, const uint8_t *ip)
{
	struct ifaddrs *ifs, *i;
	unsigned int idx = 0;

	if (getifaddrs(&ifs) < 0)
		return 0;
	for (i = ifs; i && !idx; i = i->ifa_next) {
		const struct sockaddr *a = i->ifa_addr;

		if (!a || a->sa_family != (ipv6 ? AF_INET6 : AF_INET))
			continue;
		if (ipv6 ? memcmp(&((const struct sockaddr_in6 *)(const void *)a)->sin6_addr, ip,
				  16) == 0
			 : memcmp(&((const struct sockaddr_in *)(const void *)a)->sin_addr, ip,
				  4) == 0)
			idx = if_nametoindex(i->ifa_name);
	}
	freeifaddrs(ifs);
	return idx;
}

static int bound_socket(bool ipv6, const uint8_t *ip, unsigned int ifindex, uint16_t port,
			bool receiver, bool reuseport)
{
	struct sockaddr_storage ss;
	socklen_t len = urnic_udp_fill_addr(&ss, ipv6, ip, port);
	int one = 1, fd, ret;
	int pmtu = ipv6 ? IPV6_PMTUDISC_DO : IP_PMTUDISC_DO;
	/* Receive: 32 MiB, ~12 ms of a 2.8 GB/s stream, for a receiver the scheduler
	 * keeps off the CPU for a while: UC and UD have no retransmission, so what
	 * overflows is lost (perftest -c UC: 80 packets of 16000 with 8 MiB). */
	int bufsz = receiver ? 32 << 20 : 8 << 20;

	fd = socket(ipv6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* DF set: Linux then sends IP ID 0 from an unconnected socket, which the ICRC
	 * covers (ip_select_ident_segs); RoCE never fragments anyway. */
	if (ipv6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	else
		setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	/* A datagram to a multicast group leaves from this address's interface, not the
	 * routing table's choice (the interface the group was joined on, urnic_udp_join). */
	if (ipv6) {
		int oif = (int)ifindex;

		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		if (oif)
			setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &oif, sizeof(oif));
	} else {
		setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, ip, 4);
	}
	/* Large buffers: a window of packets arrives in one burst. FORCE works as root;
	 * otherwise the kernel caps SO_RCVBUF at net.core.rmem_max. */
	if (setsockopt(fd, SOL_SOCKET, receiver ? SO_RCVBUFFORCE : SO_SNDBUFFORCE, &bufsz,
		       sizeof(bufsz)) < 0)
		setsockopt(fd, SOL_SOCKET, receiver ? SO_RCVBUF : SO_SNDBUF, &bufsz, sizeof(bufsz));
	if (receiver)
		setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	/* Every process on a RoCEv2 address joins one group (transport/share.h); a
	 * sending port may be wanted by several of them too (it hashes the two QPNs). A
	 * UET address's port is one process's: without a BTH there is nothing to steer
	 * by, and the kernel would spread the peers' packets over the group. */
	if (reuseport)
		setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	ret = bind(fd, (struct sockaddr *)&ss, len);
	if (ret < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

/* Asks fd for each datagram's TOS / traffic class and TTL / hop limit, for the GRH area
 * of UD receives (recv_batch). */
static void want_tos_ttl(int fd, bool ipv6)
{
	int one = 1;

	if (ipv6) {
		setsockopt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &one, sizeof(one));
	} else {
		setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IP, IP_RECVTTL, &one, sizeof(one));
	}
}

/* Whether a line of /proc/net/udp or udp6 (proc(5): "sl: local_address:port ... uid")
 * is a socket on port want that keeps ours from binding addr: on addr itself or on the
 * wildcard address (IPv4 also on IPv6's, which may be dual-stack, or on its IPv4-mapped
 * form). Sets *uid and *exact (on addr itself). */
static bool holder_line(const char *line, bool v6file, uint16_t want, bool ipv6,
			const uint8_t *addr, uint32_t *uid, bool *exact)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t any[16];
	char hex[33];
	unsigned int port;
	uint8_t ip[16];

	if (sscanf(line, " %*u: %32[0-9A-Fa-f]:%x %*s %*s %*s %*s %*s %u", hex, &port, uid) != 3 ||
	    port != want || strlen(hex) != (v6file ? 32u : 8u))
		return false;
	/* Each 32-bit word is printed as the host reads it from the address's bytes. */
	for (size_t w = 0; w < strlen(hex) / 8; w++) {
		char word[9];
		uint32_t v;

		memcpy(word, hex + 8 * w, 8);
		word[8] = 0;
		v = (uint32_t)strtoul(word, NULL, 16);
		memcpy(ip + 4 * w, &v, 4);
	}
	if (!v6file) {
		*exact = memcmp(ip, addr, 4) == 0;
		return !ipv6 && (*exact || memcmp(ip, any, 4) == 0);
	}
	if (ipv6) {
		*exact = memcmp(ip, addr, 16) == 0;
		return *exact || memcmp(ip, any, 16) == 0;
	}
	*exact = memcmp(ip, mapped, 12) == 0 && memcmp(ip + 12, addr, 4) == 0;
	return *exact || memcmp(ip, any, 16) == 0;
}

/* The bind of addr:4791 failed with EADDRINUSE: a socket outside our reuseport group
 * holds the port (Linux admits to a group only sockets of the same effective uid that
 * all set SO_REUSEPORT, socket(7)). Says whose it is, from /proc/net/udp{,6}. A UET
 * address's port 4793 admits no second socket at all: a socket of this user there is
 * most likely another urnic process on the same uet: address. */
static void say_port_holder(const struct urnic_udp *u, const char *addr_str)
{
	bool ipv6 = u->ipv6;
	const uint8_t *addr = u->addr;
	static const char *const files[] = { "/proc/net/udp", "/proc/net/udp6" };
	uint32_t found_uid = 0, uid;
	bool found = false, exact;
	char line[512];

	for (int i = 0; i < 2 && !found; i++) {
		FILE *f = fopen(files[i], "re");

		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (holder_line(line, i == 1, u->port, ipv6, addr, &uid, &exact) &&
			    (exact || !found)) {
				found = true;
				found_uid = uid;
				if (exact)
					break;
			}
		fclose(f);
	}
	if (found && found_uid != (uint32_t)geteuid())
		fprintf(stderr,
			"urnic: UDP port %d on %s is held by another user's socket (uid %u): "
			"this device cannot receive\n",
			u->port, addr_str, found_uid);
	else if (!u->roce)
		fprintf(stderr,
			"urnic: UDP port %d on %s is held by another socket (another process "
			"on uet:%s?): a UET address is one process's, it is not shared\n",
			u->port, addr_str, addr_str);
	else if (found)
		fprintf(stderr,
			"urnic: UDP port %d on %s is held by a socket of this user outside "
			"urnic's SO_REUSEPORT group (a program that is not urnic)\n",
			u->port, addr_str);
}

/* A UET address's receiving socket: its own, no group to join (udp.h). The share
 * stays empty (no slot's name, fd -1), so that nothing is forwarded or read from it. */
static int open_alone(struct urnic_udp *u, const char *addr_str)
{
	int fd;

	memset(&u->share, 0, sizeof(u->share));
	u->share.fd = -1;
	for (uint32_t slot = 0; slot < URNIC_SHARE_SLOTS; slot++)
		u->share.peer_fd[slot] = -1;
	snprintf(u->share.addr_str, sizeof(u->share.addr_str), "%s", addr_str);
	u->ifindex = ifindex_of(u->ipv6, u->addr);
	fd = bound_socket(u->ipv6, u->addr, u->ifindex, u->port, true, false);
	if (fd == -EADDRINUSE)
		say_port_holder(u, addr_str);
	return fd;
}

int urnic_udp_open(struct urnic_udp *u, bool ipv6, const uint8_t *addr, const char *addr_str,
		   enum urnic_udp_proto proto)
{
	int fd, ret, lock, one = 1;

	memset(u, 0, offsetof(struct urnic_udp, rx_msgs));
	for (int g = 0; g < URNIC_UDP_MAX_GROUPS; g++)
		atomic_init(&u->groups[g].fd, -1);
	u->ipv6 = ipv6;
	memcpy(u->addr, addr, ipv6 ? 16 : 4);
	u->roce = proto == URNIC_UDP_ROCE;
	u->port = u->roce ? URNIC_ROCE_UDP_PORT : URNIC_UET_UDP_PORT;
	if (!u->roce) {
		fd = open_alone(u, addr_str);
		if (fd < 0)
			return fd;
		goto bound;
	}
	lock = urnic_share_lock(addr_str);
	ret = urnic_share_join(&u->share, addr_str);
	if (ret) {
		urnic_share_unlock(lock);
		return ret;
	}
	u->ifindex = ifindex_of(ipv6, addr);
	fd = bound_socket(ipv6, addr, u->ifindex, u->port, true, true);
	if (fd < 0) {
		if (fd == -EADDRINUSE)
			say_port_holder(u, addr_str);
		urnic_share_leave(&u->share);
		urnic_share_unlock(lock);
		return fd;
	}
	/* The group's steering program: every member attaches the same one. */
	urnic_share_attach_steering(fd);
	urnic_share_unlock(lock);
bound:
	u->fd = fd;
	/* The buffers the data path writes are faulted in here, not by the first packets:
	 * ~580 first-touch page faults in the first milliseconds of a stream cost a short
	 * ib_write_bw (-n 5000) 8 %. The send side's, the engine's tx batch, is zeroed
	 * by urnic_engine_init. */
	memset(u->rx_buf, 0, sizeof(u->rx_buf));
	for (int i = 0; i < URNIC_UDP_RX_BATCH; i++) {
		u->rx_iov[i] = (struct iovec){ u->rx_buf[i], URNIC_UDP_RX_BUF };
	}
	want_tos_ttl(fd, ipv6);
	u->gso = true;
	u->gro = setsockopt(fd, IPPROTO_UDP, UDP_GRO, &one, sizeof(one)) == 0;
	return 0;
}

void urnic_udp_offloads(struct urnic_udp *u, bool gso, bool gro)
{
	int zero = 0;

	if (!gso)
		u->gso = false;
	if (!gro && u->gro)
		u->gro = setsockopt(u->fd, IPPROTO_UDP, UDP_GRO, &zero, sizeof(zero)) != 0;
}

/* The kernel's release as numbers, e.g. 6.18 -> 618. */
static int kernel_release(void)
{
	struct utsname un;
	int major = 0, minor = 0;

	if (uname(&un) < 0 || sscanf(un.release, "%d.%d", &major, &minor) != 2)
		return 0;
	return major * 100 + minor;
}

int urnic_udp_use_ring(struct urnic_udp *u)
{
	unsigned int ifindex;
	int ret;

	if (u->ring_on)
		return 0;
	if (!u->roce)
		return -EPROTONOSUPPORT; /* the rings' filter and steering read a BTH */
	if (u->ipv6)
		return -EAFNOSUPPORT;
	/* Before 6.2 the kernel cannot describe a UDP GSO datagram in a virtio-net
	 * header and drops it from the ring instead (virtio_net_hdr_from_skb). */
	if (kernel_release() < 602)
		return -EOPNOTSUPP;
	/* 127.0.0.0/8 is lo's whether or not the address is configured on it. */
	ifindex = u->ifindex ? u->ifindex : u->addr[0] == 127 ? if_nametoindex("lo") : 0;
	ret = urnic_ring_open(&u->ring, ifindex, u->addr, u->share.slot, u->fd);
	if (ret == 0)
		u->ring_on = true;
	return ret;
}

int urnic_udp_use_local(struct urnic_udp *u)
{
	if (u->local.on)
		return 0;
	if (!u->roce)
		return -EPROTONOSUPPORT; /* lanes are found by the BTH's QPN (local.h) */
	return urnic_local_open(&u->local, u->ipv6, u->addr, u->share.slot);
}

int urnic_udp_rx_fds(const struct urnic_udp *u, int fds[URNIC_UDP_RX_FDS])
{
	int n = 0;

	if (u->ring_on) {
		fds[n++] = urnic_ring_fd(&u->ring, 0);
		fds[n++] = urnic_ring_fd(&u->ring, 1);
	}
	fds[n++] = u->fd; /* with rings: what they leave to it (ring.h) */
	if (u->local.on)
		fds[n++] = urnic_local_fd(&u->local);
	return n;
}

void urnic_udp_close(struct urnic_udp *u)
{
	urnic_local_close(&u->local);
	if (u->ring_on) {
		urnic_ring_close(&u->ring, u->fd);
		u->ring_on = false;
	}
	for (int g = 0; g < URNIC_UDP_MAX_GROUPS; g++)
		if (atomic_load(&u->groups[g].fd) >= 0)
			close(atomic_exchange(&u->groups[g].fd, -1));
	for (uint32_t i = 0; i < u->nsports; i++)
		close(u->sports[i].fd);
	u->nsports = 0;
	if (u->fd >= 0)
		close(u->fd);
	u->fd = -1;
	urnic_share_leave(&u->share);
	if (u->fault) {
		urnic_fault_fini(u->fault);
		free(u->fault);
		u->fault = NULL;
	}
}

int urnic_udp_set_fault(struct urnic_udp *u, const struct urnic_fault_conf *c, uint64_t seed,
			uint64_t *counters)
{
	struct urnic_fault *f = calloc(1, sizeof(*f));
	int ret;

	if (!f)
		return -ENOMEM;
	ret = urnic_fault_init(f, c, seed, counters);
	if (ret) {
		free(f);
		return ret;
	}
	u->fault = f;
	return 0;
}

uint64_t urnic_udp_deadline(const struct urnic_udp *u)
{
	return u->fault ? urnic_fault_deadline(u->fault) : 0;
}

int urnic_udp_join(struct urnic_udp *u, const uint8_t *ip)
{
	struct sockaddr_storage ss;
	socklen_t len = urnic_udp_fill_addr(&ss, u->ipv6, ip, u->port);
	int one = 1, bufsz = 8 << 20, g, fd, ret;

	if (!u->roce)
		return -EOPNOTSUPP; /* UET has no multicast service (UE 1.0 has none) */
	for (g = 0; g < URNIC_UDP_MAX_GROUPS && atomic_load(&u->groups[g].fd) >= 0; g++)
		;
	if (g == URNIC_UDP_MAX_GROUPS)
		return -ENOMEM;
	fd = socket(u->ipv6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Every process (and device) in the group has its own socket on group:4791, and
	 * the kernel gives each a copy (SO_REUSEADDR; REUSEPORT would share them out). */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof(bufsz));
	want_tos_ttl(fd, u->ipv6);
	if (u->ipv6) {
		struct ipv6_mreq mr = { .ipv6mr_interface = u->ifindex };

		memcpy(&mr.ipv6mr_multiaddr, ip, 16);
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		ret = bind(fd, (struct sockaddr *)&ss, len);
		if (!ret)
			ret = setsockopt(fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &mr, sizeof(mr));
	} else {
		struct ip_mreqn mr = { .imr_ifindex = (int)u->ifindex };

		memcpy(&mr.imr_multiaddr, ip, 4);
		memcpy(&mr.imr_address, u->addr, 4);
		ret = bind(fd, (struct sockaddr *)&ss, len);
		if (!ret)
			ret = setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof(mr));
	}
	if (ret < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	memcpy(u->groups[g].ip, ip, u->ipv6 ? 16 : 4);
	atomic_store(&u->groups[g].fd, fd);
	return 0;
}

void urnic_udp_leave(struct urnic_udp *u, const uint8_t *ip)
{
	for (int g = 0; g < URNIC_UDP_MAX_GROUPS; g++) {
		int fd = atomic_load(&u->groups[g].fd);

		if (fd >= 0 && memcmp(u->groups[g].ip, ip, u->ipv6 ? 16 : 4) == 0) {
			atomic_store(&u->groups[g].fd, -1);
			close(fd); /* the kernel leaves the group with the last socket */
			return;
		}
	}
}

uint16_t urnic_udp_prepare_sport(struct urnic_udp *u, uint16_t sport)
{
	int fd;

	for (uint32_t i = 0; i < u->nsports; i++)
		if (u->sports[i].port == sport)
			return sport;
	if (u->nsports == URNIC_UDP_MAX_SPORTS)
		return u->port;
	fd = bound_socket(u->ipv6, u->addr, u->ifindex, sport, false, true);
	if (fd < 0)
		return u->port; /* taken by someone else: receivers ignore it */
	u->sports[u->nsports++] = (struct urnic_udp_sport){ sport, fd };
	return sport;
}

uint16_t urnic_udp_roce_sport(uint32_t flow_label, uint32_t lqpn, uint32_t rqpn)
{
	/* include/rdma/ib_verbs.h rdma_calc_flow_label() and rdma_flow_label_to_udp_sport(). */
	uint32_t fl = flow_label & 0xfffff;

	if (!fl) {
		uint64_t v = (uint64_t)lqpn * rqpn;

		v ^= v >> 20;
		v ^= v >> 40;
		fl = (uint32_t)(v & 0xfffff);
	}
	return (uint16_t)(((fl & 0x3fff) ^ ((fl & 0xfc000) >> 14)) | 0xc000);
}
