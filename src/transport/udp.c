/* SPDX-License-Identifier: MIT */
/*
 * udp.c - the RoCEv2 UDP transport: sockets, batched receive and send. See udp.h.
 */
#include "transport/udp.h"

#include "wire/byteorder.h"
#include "wire/frame.h"
#include "wire/icrc_gso.h"
#include "wire/pkt.h"

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
#include <time.h>
#include <unistd.h>

static socklen_t fill_addr(struct sockaddr_storage *ss, bool ipv6, const uint8_t *ip,
			   uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (ipv6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		memcpy(&s6->sin6_addr, ip, 16);
		return sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		memcpy(&s4->sin_addr, ip, 4);
		return sizeof(*s4);
	}
}

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
			 : memcmp(&((const struct sockaddr_in *)(const void *)a)->sin_addr, ip, 4) == 0)
			idx = if_nametoindex(i->ifa_name);
	}
	freeifaddrs(ifs);
	return idx;
}

static int bound_socket(bool ipv6, const uint8_t *ip, unsigned int ifindex, uint16_t port,
			bool receiver)
{
	struct sockaddr_storage ss;
	socklen_t len = fill_addr(&ss, ipv6, ip, port);
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
	/* Every process on the address joins one group (transport/share.h); a sending
	 * port may be wanted by several of them too (it hashes the two QPNs). */
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
 * is a socket on port 4791 that keeps ours from binding addr: on addr itself or on the
 * wildcard address (IPv4 also on IPv6's, which may be dual-stack, or on its IPv4-mapped
 * form). Sets *uid and *exact (on addr itself). */
static bool holder_line(const char *line, bool v6file, bool ipv6, const uint8_t *addr,
			uint32_t *uid, bool *exact)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t any[16];
	char hex[33];
	unsigned int port;
	uint8_t ip[16];

	if (sscanf(line, " %*u: %32[0-9A-Fa-f]:%x %*s %*s %*s %*s %*s %u", hex, &port, uid) != 3 ||
	    port != URNIC_ROCE_UDP_PORT || strlen(hex) != (v6file ? 32u : 8u))
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
 * all set SO_REUSEPORT, socket(7)). Says whose it is, from /proc/net/udp{,6}. */
static void say_port_holder(bool ipv6, const uint8_t *addr, const char *addr_str)
{
	static const char *const files[] = { "/proc/net/udp", "/proc/net/udp6" };
	uint32_t found_uid = 0, uid;
	bool found = false, exact;
	char line[512];

	for (int i = 0; i < 2 && !found; i++) {
		FILE *f = fopen(files[i], "re");

		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (holder_line(line, i == 1, ipv6, addr, &uid, &exact) &&
			    (exact || !found)) {
				found = true;
				found_uid = uid;
				if (exact)
					break;
			}
		fclose(f);
	}
	if (!found)
		return;
	if (found_uid != (uint32_t)geteuid())
		fprintf(stderr,
			"urnic: UDP port %d on %s is held by another user's socket (uid %u): "
			"this device cannot receive\n",
			URNIC_ROCE_UDP_PORT, addr_str, found_uid);
	else
		fprintf(stderr,
			"urnic: UDP port %d on %s is held by a socket of this user outside "
			"urnic's SO_REUSEPORT group (a program that is not urnic)\n",
			URNIC_ROCE_UDP_PORT, addr_str);
}

int urnic_udp_open(struct urnic_udp *u, bool ipv6, const uint8_t *addr, const char *addr_str)
{
	int fd, ret, lock;

	memset(u, 0, offsetof(struct urnic_udp, rx_msgs));
	for (int g = 0; g < URNIC_UDP_MAX_GROUPS; g++)
		atomic_init(&u->groups[g].fd, -1);
	u->ipv6 = ipv6;
	memcpy(u->addr, addr, ipv6 ? 16 : 4);
	lock = urnic_share_lock(addr_str);
	ret = urnic_share_join(&u->share, addr_str);
	if (ret) {
		urnic_share_unlock(lock);
		return ret;
	}
	u->ifindex = ifindex_of(ipv6, addr);
	fd = bound_socket(ipv6, addr, u->ifindex, URNIC_ROCE_UDP_PORT, true);
	if (fd < 0) {
		if (fd == -EADDRINUSE)
			say_port_holder(ipv6, addr, addr_str);
		urnic_share_leave(&u->share);
		urnic_share_unlock(lock);
		return fd;
	}
	/* The group's steering program: every member attaches the same one. */
	urnic_share_attach_steering(fd);
	urnic_share_unlock(lock);
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
	u->gso = !secure_getenv("URNIC_NO_GSO");
	if (!secure_getenv("URNIC_NO_GRO")) {
		int one = 1;

		u->gro = setsockopt(fd, IPPROTO_UDP, UDP_GRO, &one, sizeof(one)) == 0;
	}
	return 0;
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

int urnic_udp_rx_fds(const struct urnic_udp *u, int fds[3])
{
	if (!u->ring_on) {
		fds[0] = u->fd;
		return 1;
	}
	fds[0] = urnic_ring_fd(&u->ring, 0);
	fds[1] = urnic_ring_fd(&u->ring, 1);
	fds[2] = u->fd; /* what the rings leave to it (ring.h) */
	return 3;
}

void urnic_udp_close(struct urnic_udp *u)
{
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
	socklen_t len = fill_addr(&ss, u->ipv6, ip, URNIC_ROCE_UDP_PORT);
	int one = 1, bufsz = 8 << 20, g, fd, ret;

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

static int sport_fd(const struct urnic_udp *u, uint16_t port)
{
	if (port == URNIC_ROCE_UDP_PORT)
		return u->fd;
	for (uint32_t i = 0; i < u->nsports; i++)
		if (u->sports[i].port == port)
			return u->sports[i].fd;
	return u->fd;
}

uint16_t urnic_udp_prepare_sport(struct urnic_udp *u, uint16_t sport)
{
	int fd;

	for (uint32_t i = 0; i < u->nsports; i++)
		if (u->sports[i].port == sport)
			return sport;
	if (u->nsports == URNIC_UDP_MAX_SPORTS)
		return URNIC_ROCE_UDP_PORT;
	fd = bound_socket(u->ipv6, u->addr, u->ifindex, sport, false);
	if (fd < 0)
		return URNIC_ROCE_UDP_PORT; /* taken by someone else: receivers ignore it */
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

/* One receive call: where packets go, and the envelope of the packet being handed on
 * (its source, destination and ports are set per packet; TOS, TTL and the IPv4 ID hint
 * per datagram, put back to Linux's defaults after each). */
struct rx_pass {
	struct urnic_udp *u;
	const struct urnic_udp_sink *s;
	struct urnic_rx_meta m;
};

static void count(struct rx_pass *p, enum urnic_counter c, uint64_t n)
{
	p->s->counters[c] += n;
}

static void rx_defaults(struct rx_pass *p)
{
	p->m.ip_id_hint = 0;
	p->m.tos = 0;
	p->m.ttl = URNIC_DEFAULT_TTL;
}

/* To the sink: one RoCE packet from src:sport to dst. */
static void hand(struct rx_pass *p, const uint8_t *src, uint16_t sport, const uint8_t *dst,
		 const uint8_t *buf, uint32_t len)
{
	size_t alen = p->u->ipv6 ? 16 : 4;

	memcpy(p->m.src_ip, src, alen);
	memcpy(p->m.dst_ip, dst, alen);
	p->m.sport = sport;
	p->s->rx(p->s->ctx, &p->m, buf, len);
}

static void fault_deliver(void *ctx, const uint8_t *src, uint16_t sport, const uint8_t *buf,
			  uint32_t len)
{
	struct rx_pass *p = ctx;

	hand(p, src, sport, p->u->addr, buf, len);
}

/* A packet for one of our QPs: to the sink, through the faulty wire if there is one
 * (after steering, so that a corrupted QPN is the engine's to catch, not the
 * steering's). */
static void to_engine(struct rx_pass *p, const uint8_t *src, uint16_t sport, uint8_t *buf,
		      uint32_t len)
{
	struct urnic_udp *u = p->u;

	if (u->fault)
		urnic_fault_rx(u->fault, p->m.now_ns, src, sport, buf, len, fault_deliver, p);
	else
		hand(p, src, sport, u->addr, buf, len);
}

/* Hands the gathered batch to its owner, counting each packet in it. */
static void forward_flush(struct rx_pass *p)
{
	struct urnic_udp *u = p->u;
	uint32_t n = u->share.batch_n;

	switch (urnic_share_flush(&u->share)) {
	case 0:
		count(p, URNIC_CTR_rx_forwarded, n);
		break;
	case -EAGAIN:
		count(p, URNIC_CTR_drop_forward_full, n); /* the owner is not draining */
		break;
	case -EPERM:
		/* The slot's name is another user's: never hand it our peers' packets. */
		count(p, URNIC_CTR_drop_forward_foreign_owner, n);
		break;
	default:
		count(p, URNIC_CTR_drop_unknown_qp, n); /* no process owns that QPN */
		break;
	}
}

/* One received RoCE packet: ours, or another process's on this address (gathered into
 * one batch per owner, sent when the owner changes, the batch is full, or the receive
 * ends: recv_batch). */
static void deliver(struct rx_pass *p, const uint8_t *src, uint16_t sport, uint8_t *buf,
		    uint32_t len)
{
	struct urnic_udp *u = p->u;
	int owner = urnic_share_owner(buf, len);
	struct urnic_share_rec r = {
		.sport = sport, .ip_id_hint = p->m.ip_id_hint, .tos = p->m.tos,
		.ttl = p->m.ttl, .pkt = buf, .len = len,
	};

	if (owner < 0 || (uint32_t)owner == u->share.slot) {
		to_engine(p, src, sport, buf, len);
		return;
	}
	memcpy(r.src, src, u->ipv6 ? 16 : 4);
	if (!urnic_share_fits(&u->share, (uint32_t)owner, &r))
		forward_flush(p);
	urnic_share_add(&u->share, (uint32_t)owner, &r);
}

/* A received datagram, or a GRO/GSO super-packet: the original datagrams back to back,
 * each seg bytes but the last (seg 0: one packet). Segment k is handed on with IPv4 ID
 * hint id0 + k: to the sink with the group as the destination for a multicast group's
 * socket, else through deliver(). Returns the number of segments. */
static uint32_t deliver_segments(struct rx_pass *p, const uint8_t *src, uint16_t sport,
				 const uint8_t *group, uint8_t *buf, uint32_t len, uint32_t seg,
				 uint16_t id0)
{
	uint32_t n = 0;

	if (!seg || seg >= len)
		seg = len ? len : 1; /* an empty datagram is still a packet, counted */
	for (uint32_t off = 0; off < len || off == 0; off += seg, n++) {
		uint32_t plen = len - off < seg ? len - off : seg;

		p->m.ip_id_hint = (uint16_t)(id0 + off / seg);
		if (group)
			hand(p, src, sport, group, buf + off, plen);
		else
			deliver(p, src, sport, buf + off, plen);
	}
	return n;
}

/* Packets other processes on this address received for our QPs, in batches of records
 * (share.h), each with the source, IPv4 ID hint, TOS and TTL it arrived with; only from
 * processes of our own user (urnic_share_trusted). */
static int recv_forwarded(struct rx_pass *p)
{
	struct urnic_udp *u = p->u;
	int n;

	u->rx_set = false;
	for (int i = 0; i < URNIC_UDP_RX_BATCH; i++) {
		struct msghdr *m = &u->rx_msgs[i].msg_hdr;

		memset(m, 0, sizeof(*m));
		m->msg_iov = &u->rx_iov[i];
		m->msg_iovlen = 1;
		m->msg_control = u->rx_ctrl[i]; /* the sender's credentials */
		m->msg_controllen = sizeof(u->rx_ctrl[i]);
	}
	n = recvmmsg(u->share.fd, u->rx_msgs, URNIC_UDP_RX_BATCH, MSG_DONTWAIT, NULL);
	if (n <= 0)
		return 0;
	for (int i = 0; i < n; i++) {
		uint32_t len = u->rx_msgs[i].msg_len, off = 0;
		struct urnic_share_rec r;
		int ret;

		if (!urnic_share_trusted(&u->share, &u->rx_msgs[i].msg_hdr)) {
			count(p, URNIC_CTR_drop_forward_foreign, 1);
			continue;
		}
		/* Our rings saw every packet of our slot that reached the interface, this
		 * one too: what another process forwards is a second copy. */
		if (u->ring_on) {
			while (urnic_share_next(u->rx_buf[i], len, &off, &r) > 0)
				count(p, URNIC_CTR_rx_forwarded_dup, 1);
			continue;
		}
		while ((ret = urnic_share_next(u->rx_buf[i], len, &off, &r)) > 0) {
			p->m.ip_id_hint = r.ip_id_hint;
			p->m.tos = r.tos;
			p->m.ttl = r.ttl;
			to_engine(p, r.src, r.sport, (uint8_t *)r.pkt, r.len);
		}
		if (ret < 0 || (u->rx_msgs[i].msg_hdr.msg_flags & MSG_TRUNC))
			count(p, URNIC_CTR_drop_bad_header, 1);
	}
	rx_defaults(p);
	return n;
}

/* The datagram's TOS/traffic class, TTL/hop limit, overflow count and GRO segment size
 * from its control messages. Returns the segment size (0: one packet). */
static uint32_t read_cmsgs(struct rx_pass *p, struct msghdr *m, bool group)
{
	struct urnic_udp *u = p->u;
	uint32_t seg = 0;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		int v;

		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) {
			p->m.tos = *CMSG_DATA(c); /* one byte (ip_cmsg_recv_tos) */
		} else if ((c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TTL) ||
			   (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_HOPLIMIT)) {
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			p->m.ttl = (uint8_t)v;
		} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS) {
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			p->m.tos = (uint8_t)v;
		} else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
			uint32_t ovfl;

			memcpy(&ovfl, CMSG_DATA(c), sizeof(ovfl));
			if (!group) {
				count(p, URNIC_CTR_drop_socket_overflow, ovfl - u->last_ovfl);
				u->last_ovfl = ovfl;
			}
		} else if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == UDP_GRO) {
			int gso_size;

			memcpy(&gso_size, CMSG_DATA(c), sizeof(gso_size));
			seg = gso_size > 0 ? (uint32_t)gso_size : 0;
		}
	}
	return seg;
}

/* One recvmmsg of fd, each datagram (each segment of a GRO one) handed on: from the
 * address's socket through the share steering and the faulty wire (deliver), from a
 * multicast group's socket straight to the sink with the group as the destination
 * (each process has its own group socket; the fault injector is for unicast tests).
 * Returns the number of datagrams. */
static int recv_batch(struct rx_pass *p, int fd, const uint8_t *group)
{
	struct urnic_udp *u = p->u;
	int n;

	/* Most calls find nothing (an application polling, the engine thread's passes):
	 * the headers are set up once and only the lengths the kernel changed are reset,
	 * not 32 headers per call. */
	for (uint32_t i = 0; i < (u->rx_set ? u->rx_used : URNIC_UDP_RX_BATCH); i++) {
		struct msghdr *m = &u->rx_msgs[i].msg_hdr;

		m->msg_name = &u->rx_from[i];
		m->msg_namelen = sizeof(u->rx_from[i]);
		m->msg_iov = &u->rx_iov[i];
		m->msg_iovlen = 1;
		m->msg_control = u->rx_ctrl[i];
		m->msg_controllen = sizeof(u->rx_ctrl[i]);
	}
	u->rx_set = true;
	n = recvmmsg(fd, u->rx_msgs, URNIC_UDP_RX_BATCH, MSG_DONTWAIT, NULL);
	u->rx_used = n > 0 ? (uint32_t)n : 0;
	if (n <= 0)
		return 0;
	for (int i = 0; i < n; i++) {
		struct msghdr *m = &u->rx_msgs[i].msg_hdr;
		uint32_t seg, len = u->rx_msgs[i].msg_len;
		const uint8_t *src;
		uint16_t sport;

		rx_defaults(p);
		seg = read_cmsgs(p, m, group != NULL);
		if (m->msg_flags & MSG_TRUNC) {
			count(p, URNIC_CTR_drop_bad_header, 1);
			continue;
		}
		if (u->ipv6) {
			const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&u->rx_from[i];

			src = (const uint8_t *)&s6->sin6_addr;
			sport = ntohs(s6->sin6_port);
		} else {
			const struct sockaddr_in *s4 = (const struct sockaddr_in *)&u->rx_from[i];

			src = (const uint8_t *)&s4->sin_addr;
			sport = ntohs(s4->sin_port);
		}
		/* Segment k of a GSO send left as IPv4 ID k (icrc_gso.h). */
		deliver_segments(p, src, sport, group, u->rx_buf[i], len, seg, 0);
	}
	if (!group)
		forward_flush(p);
	rx_defaults(p); /* for what is delivered outside a batch (forwarded, delayed) */
	return n;
}

/* Up to a batch of datagrams from the packet rings (ring.h), each checked as the
 * kernel's IP and UDP layers would have (frame.h) and cut at its GSO segment size; the
 * headers give the source, TOS, TTL and the exact IPv4 ID of every segment (a GSO
 * send's segments count up from the first one's, inet_gso_segment). */
static int recv_ring(struct rx_pass *p)
{
	struct urnic_udp *u = p->u;
	struct urnic_ring_frame f;
	int n = 0;

	while (n < URNIC_UDP_RX_BATCH && urnic_ring_next(&u->ring, &f)) {
		struct urnic_frame fr;
		uint8_t src[16] = { 0 };

		n++;
		if (f.lost_before)
			count(p, URNIC_CTR_drop_ring_full, urnic_ring_drops(&u->ring));
		/* Not for this host: the IP layer would drop it (ip_rcv_core), so does the
		 * device, whatever its IP destination says. */
		if (f.other_host) {
			count(p, URNIC_CTR_drop_ring_otherhost, 1);
			urnic_ring_release(&u->ring);
			continue;
		}
		if (f.len < f.wire_len || f.gso_size == UINT32_MAX ||
		    urnic_frame_decode(f.frame, f.len, &fr) < 0) {
			count(p, URNIC_CTR_drop_bad_header, 1);
			urnic_ring_release(&u->ring);
			continue;
		}
		memcpy(src, fr.src, 4);
		p->m.tos = fr.tos;
		p->m.ttl = fr.ttl;
		count(p, URNIC_CTR_rx_ring,
		      deliver_segments(p, src, fr.sport, NULL, f.frame + fr.payload_off,
				       fr.payload_len, f.gso_size, fr.ip_id));
		urnic_ring_release(&u->ring);
	}
	if (n)
		forward_flush(p);
	rx_defaults(p);
	return n;
}

int urnic_udp_recv(struct urnic_udp *u, const struct urnic_udp_sink *s, uint64_t now_ns,
		   bool forwarded)
{
	struct rx_pass p = { .u = u, .s = s, .m = { .now_ns = now_ns } };
	int n = 0;

	rx_defaults(&p);
	if (u->fault)
		n = (int)urnic_fault_release(u->fault, now_ns, fault_deliver, &p);
	/* With the rings, the socket only has what they leave to it (ring.h): read it
	 * now and then, not in every pass (a polling application's turn would be a
	 * system call again). */
	if (u->ring_on)
		n += recv_ring(&p);
	if (!u->ring_on || now_ns - u->sock_read_ns >= URNIC_UDP_RING_SOCKET_NS) {
		u->sock_read_ns = now_ns;
		n += recv_batch(&p, u->fd, NULL);
	}
	for (int g = 0; g < URNIC_UDP_MAX_GROUPS; g++) {
		int fd = atomic_load_explicit(&u->groups[g].fd, memory_order_relaxed);

		if (fd >= 0)
			n += recv_batch(&p, fd, u->groups[g].ip);
	}
	return forwarded ? n + recv_forwarded(&p) : n;
}

static bool same_flow(const struct urnic_txpkt *a, const struct urnic_txpkt *b)
{
	return a->dst.sport == b->dst.sport && a->dst.traffic_class == b->dst.traffic_class &&
	       a->dst.hop_limit == b->dst.hop_limit && memcmp(a->dst.ip, b->dst.ip, 16) == 0;
}

/* The ICRC term of ID ip_id (< URNIC_TX_BATCH) for the length of slot: a carry-less
 * multiplication computed once per length and ID, not once per packet. */
_Static_assert(URNIC_TX_BATCH <= 64, "id_delta_known has a bit per ID");

static uint32_t id_delta(struct urnic_udp *u, unsigned slot, uint16_t ip_id)
{
	if (!(u->id_delta_known[slot] >> ip_id & 1)) {
		u->id_delta[slot][ip_id] = urnic_icrc_ipv4_id_delta(u->id_factor[slot], ip_id);
		u->id_delta_known[slot] |= 1ull << ip_id;
	}
	return u->id_delta[slot][ip_id];
}

/*
 * Sets batch packet k's ICRC for IPv4 ID ip_id. IBTA Annex A17.3.3: the ICRC covers the
 * IPv4 ID. The engine computed it for ID 0, what Linux gives a datagram from an
 * unconnected DF socket; but a GSO send of n segments leaves as IDs 0 .. n-1
 * (inet_gso_segment counts; NICs with UDP segmentation offload do the same), so every
 * segment after the first needs the ICRC of its own ID, or rxe and RNICs drop it.
 */
static void set_ip_id(struct urnic_udp *u, struct urnic_txpkt *p, uint32_t k, uint16_t ip_id)
{
	uint8_t *icrc = p->wire + urnic_txpkt_bytes(p) - URNIC_ICRC_BYTES;
	uint32_t len = urnic_txpkt_bytes(p) - URNIC_ICRC_BYTES;
	unsigned slot = len == u->id_factor_len[0] ? 0 : 1;

	if (ip_id == u->tx_ip_id[k])
		return;
	if (len != u->id_factor_len[slot]) {
		/* one slot keeps the full segment size, the other takes the tails */
		slot = u->id_factor_len[0] ? 1 : 0;
		u->id_factor_len[slot] = len;
		u->id_factor[slot] = urnic_icrc_ipv4_id_factor(len);
		u->id_delta_known[slot] = 0;
	}
	urnic_put_le32(icrc, urnic_get_le32(icrc) ^ id_delta(u, slot, u->tx_ip_id[k]) ^
				     id_delta(u, slot, ip_id));
	u->tx_ip_id[k] = ip_id;
}

/*
 * The control messages of one send: UDP_SEGMENT for a GSO run (gso_size, 0: none), and
 * the address vector's traffic class as the IPv4 TOS / IPv6 traffic class (DSCP and
 * ECN), as rxe puts grh.traffic_class in the IP header (rxe_net.c prepare4/6). To a
 * unicast address the TTL stays the socket's default: the kernel gives RoCEv2 address
 * vectors the route's hop limit whatever the application asked (ib_resolve_eth_dmac).
 */
static void add_cmsgs(const struct urnic_udp *u, struct msghdr *m, char *ctrl, uint16_t gso_size,
		      const struct urnic_peer *dst)
{
	struct cmsghdr *c;
	int tos = dst->traffic_class, ttl = dst->hop_limit;
	/* To a multicast group the TTL is the address vector's hop limit, as rxe sends it
	 * (the kernel replaces it for unicast only); the socket's default would be 1. */
	if (!urnic_mcast_ip(u->ipv6, dst->ip))
		ttl = 0;
	if (!gso_size && !tos && !ttl)
		return;
	m->msg_control = ctrl;
	m->msg_controllen = (gso_size ? CMSG_SPACE(sizeof(gso_size)) : 0) +
			    (tos ? CMSG_SPACE(sizeof(tos)) : 0) + (ttl ? CMSG_SPACE(sizeof(ttl)) : 0);
	c = CMSG_FIRSTHDR(m);
	if (gso_size) {
		c->cmsg_level = IPPROTO_UDP;
		c->cmsg_type = UDP_SEGMENT;
		c->cmsg_len = CMSG_LEN(sizeof(gso_size));
		memcpy(CMSG_DATA(c), &gso_size, sizeof(gso_size));
		c = CMSG_NXTHDR(m, c);
	}
	if (tos) {
		c->cmsg_level = u->ipv6 ? IPPROTO_IPV6 : IPPROTO_IP;
		c->cmsg_type = u->ipv6 ? IPV6_TCLASS : IP_TOS;
		c->cmsg_len = CMSG_LEN(sizeof(tos));
		memcpy(CMSG_DATA(c), &tos, sizeof(tos));
		c = CMSG_NXTHDR(m, c);
	}
	if (ttl) {
		c->cmsg_level = u->ipv6 ? IPPROTO_IPV6 : IPPROTO_IP;
		c->cmsg_type = u->ipv6 ? IPV6_HOPLIMIT : IP_TTL;
		c->cmsg_len = CMSG_LEN(sizeof(ttl));
		memcpy(CMSG_DATA(c), &ttl, sizeof(ttl));
	}
}

/*
 * Builds the messages of a batch: one per packet, or with GSO one per run of packets to
 * the same peer from the same port, all of the run's first packet's size except
 * possibly a shorter last one (the rule of UDP_SEGMENT). Returns the message count.
 *
 * Each message is one buffer: the engine laid the batch's packets out back to back in
 * the batch (urnic_txbatch_commit, which copies the payload as it computes the ICRC), so a
 * run is one iovec. The kernel's gather of three or more iovecs per packet (zero-copy
 * from the memory region) cost more than the copy: for a 64 KiB WRITE's 48 pieces, a
 * RoCE-shaped raw stream ran 33.2 against 35.7 Gb/s (bench/roce_shape).
 */
static uint32_t build_msgs(struct urnic_udp *u, struct urnic_txbatch *b, uint32_t from)
{
	uint32_t nmsg = 0;
	uint32_t k = from;

	while (k < b->n) {
		struct urnic_txpkt *first = &b->pkts[k];
		uint32_t seg = urnic_txpkt_bytes(first), total = 0, nseg = 0;
		struct msghdr *m = &u->tx_msgs[nmsg].msg_hdr;

		memset(m, 0, sizeof(*m));
		u->tx_first_pkt[nmsg] = k;
		do {
			struct urnic_txpkt *p = &b->pkts[k];

			if (!u->ipv6)
				set_ip_id(u, p, k, (uint16_t)nseg);
			total += urnic_txpkt_bytes(p);
			nseg++;
			k++;
			if (!u->gso || urnic_txpkt_bytes(p) < seg)
				break; /* a short segment ends a GSO run */
		} while (k < b->n && nseg < URNIC_UDP_GSO_MAX_SEGS &&
			 same_flow(first, &b->pkts[k]) && urnic_txpkt_bytes(&b->pkts[k]) <= seg &&
			 total + urnic_txpkt_bytes(&b->pkts[k]) <= URNIC_UDP_GSO_MAX_BYTES);
		m->msg_name = &u->tx_to[nmsg];
		m->msg_namelen = fill_addr(&u->tx_to[nmsg], u->ipv6, first->dst.ip,
					   URNIC_ROCE_UDP_PORT);
		u->tx_iov[nmsg] = (struct iovec){ first->wire, total };
		m->msg_iov = &u->tx_iov[nmsg];
		m->msg_iovlen = 1;
		u->tx_gso[nmsg] = nseg > 1;
		add_cmsgs(u, m, u->tx_ctrl[nmsg], nseg > 1 ? (uint16_t)seg : 0, &first->dst);
		u->tx_fd[nmsg] = sport_fd(u, first->dst.sport);
		nmsg++;
	}
	return nmsg;
}

void urnic_udp_send(struct urnic_udp *u, struct urnic_txbatch *b, uint64_t *counters)
{
	uint32_t nmsg, i = 0;

	memset(u->tx_ip_id, 0, b->n * sizeof(u->tx_ip_id[0]));
again:
	nmsg = build_msgs(u, b, i);
	i = 0;
	/* One sendmmsg per run of messages that leave from the same socket. */
	while (i < nmsg) {
		int fd = u->tx_fd[i];
		uint32_t j = i + 1;
		int sent;

		while (j < nmsg && u->tx_fd[j] == fd)
			j++;
		while (i < j) {
			/* One message: sendmsg, which skips sendmmsg's per-call setup
			 * (~0.1 us of a ping-pong's one-way trip on a 2-vCPU VM). */
			if (j - i == 1) {
				ssize_t n = sendmsg(fd, &u->tx_msgs[i].msg_hdr, 0);

				sent = n < 0 ? -1 : 1;
			} else {
				sent = sendmmsg(fd, &u->tx_msgs[i], j - i, 0);
			}
			if (sent < 0) {
				if (errno == EINTR)
					continue;
				if (errno == EAGAIN || errno == ENOBUFS) {
					/* Send buffer full: wait for room rather than drop. */
					struct timespec ts = { 0, 20000 };

					nanosleep(&ts, NULL);
					continue;
				}
				if (u->gso && u->tx_gso[i] &&
				    (errno == EIO || errno == EINVAL || errno == ENOPROTOOPT)) {
					/* No UDP GSO here: send this batch and the next ones
					 * packet by packet. */
					u->gso = false;
					i = u->tx_first_pkt[i];
					for (uint32_t k = i; k < b->n; k++)
						set_ip_id(u, &b->pkts[k], k, 0);
					goto again;
				}
				/* Unreachable peer and the like: the packet is lost and the
				 * reliability protocol recovers, as on a real wire. */
				counters[URNIC_CTR_drop_tx_failed]++;
				i++;
				continue;
			}
			counters[URNIC_CTR_tx_sends]++;
			i += (uint32_t)sent;
		}
	}
	b->n = 0;
}
