/* SPDX-License-Identifier: MIT */
/*
 * udp_tx.c - the send side of the UDP transport (udp.h): a batch's packets as sendmmsg
 * messages, runs to one peer as UDP GSO sends, with the ICRC of each RoCEv2 IPv4 GSO
 * segment set for the IP ID Linux gives it (IBTA Annex A17.3.3, icrc_gso.h; a UET
 * packet has no ICRC, so its segments are sent as the engine built them).
 */
#include "transport/udp.h"
#include "transport/udp_int.h"

#include "wire/byteorder.h"
#include "wire/icrc_gso.h"
#include "wire/mad.h"
#include "wire/pkt.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <string.h>
#include <time.h>

static int sport_fd(const struct urnic_udp *u, uint16_t port)
{
	if (port == u->port)
		return u->fd;
	for (uint32_t i = 0; i < u->nsports; i++)
		if (u->sports[i].port == port)
			return u->sports[i].fd;
	return u->fd;
}
/* The source port a packet for sport leaves from (sport_fd's socket's). */
static uint16_t sent_port(const struct urnic_udp *u, uint16_t port)
{
	for (uint32_t i = 0; i < u->nsports; i++)
		if (u->sports[i].port == port)
			return port;
	return u->port;
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
			    (tos ? CMSG_SPACE(sizeof(tos)) : 0) +
			    (ttl ? CMSG_SPACE(sizeof(ttl)) : 0);
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

static bool has_note(const struct urnic_txpkt *p)
{
	return p->direct_flags || p->direct_nseg;
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

			if (!u->ipv6 && u->roce)
				set_ip_id(u, p, k, (uint16_t)nseg);
			total += urnic_txpkt_bytes(p);
			nseg++;
			k++;
			/* A short segment ends a GSO run; a direct placement note is one
			 * packet's (local.h). */
			if (!u->gso || urnic_txpkt_bytes(p) < seg || has_note(p))
				break;
		} while (k < b->n && nseg < URNIC_UDP_GSO_MAX_SEGS && !has_note(&b->pkts[k]) &&
			 same_flow(first, &b->pkts[k]) && urnic_txpkt_bytes(&b->pkts[k]) <= seg &&
			 total + urnic_txpkt_bytes(&b->pkts[k]) <= URNIC_UDP_GSO_MAX_BYTES);
		m->msg_name = &u->tx_to[nmsg];
		m->msg_namelen =
			urnic_udp_fill_addr(&u->tx_to[nmsg], u->ipv6, first->dst.ip, u->port);
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

/*
 * Messages i .. i + n - 1 to the capture (pcap.h) as they left: a GSO run as its
 * segments with IPv4 IDs 0, 1, ... (set_ip_id), the TOS of add_cmsgs and the TTL the
 * kernel gives them (a unicast socket's default, a group's hop limit, else
 * IP_MULTICAST_TTL's default 1); with reason, as they failed to leave.
 */
static void trace_msgs(const struct urnic_udp *u, const struct urnic_txbatch *b, uint32_t i,
		       uint32_t n, const char *reason)
{
	for (; n; n--, i++) {
		const struct urnic_txpkt *first = &b->pkts[u->tx_first_pkt[i]];
		struct urnic_pcap_dgram g = {
			.out = true,
			.src = u->addr,
			.dst = first->dst.ip,
			.sport = sent_port(u, first->dst.sport),
			.dport = u->port,
			.tos = first->dst.traffic_class,
			.ttl = URNIC_DEFAULT_TTL,
			.reason = reason,
		};

		if (urnic_mcast_ip(u->ipv6, first->dst.ip))
			g.ttl = first->dst.hop_limit ? first->dst.hop_limit : 1;
		urnic_pcap_write(u->pcap, &g, u->tx_iov[i].iov_base, (uint32_t)u->tx_iov[i].iov_len,
				 u->tx_gso[i] ? urnic_txpkt_bytes(first) : 0);
	}
}

/* The share slot (share.h) of the process that owns every destination QP of message i,
 * or -1: a CM MAD (QP 1: its port says whose it is, cm_ports.h), a multicast group, or
 * a run to QPs of several processes leave by the socket. */
static int local_slot(const struct urnic_udp *u, const struct urnic_txbatch *b, uint32_t i,
		      uint32_t end)
{
	int slot = -1;

	if (urnic_mcast_ip(u->ipv6, b->pkts[u->tx_first_pkt[i]].dst.ip))
		return -1;
	for (uint32_t k = u->tx_first_pkt[i]; k < end; k++) {
		uint32_t dqpn = urnic_get_be24(b->pkts[k].wire + URNIC_BTH_DQPN_OFFSET);
		int s = (int)urnic_qpn_owner(dqpn);

		if (dqpn == URNIC_GSI_QPN || (slot >= 0 && s != slot))
			return -1;
		slot = s;
	}
	return slot;
}

/* Puts the messages whose peer is a urnic process on this host into its lane
 * (local.h); their fd becomes -1, which the sends skip. */
static void send_local(struct urnic_udp *u, struct urnic_txbatch *b, uint32_t nmsg,
		       uint64_t *counters)
{
	for (uint32_t i = 0; i < nmsg; i++) {
		const struct urnic_txpkt *first = &b->pkts[u->tx_first_pkt[i]];
		uint32_t end = i + 1 < nmsg ? u->tx_first_pkt[i + 1] : b->n;
		int slot = local_slot(u, b, i, end);
		struct urnic_local_env env = {
			.sport = sent_port(u, first->dst.sport),
			.seg = u->tx_gso[i] ? (uint16_t)urnic_txpkt_bytes(first) : 0,
			.tos = first->dst.traffic_class,
			.ttl = URNIC_DEFAULT_TTL,
			.direct_flags = first->direct_flags,
			.direct_nseg = first->direct_nseg,
			.direct_seg = first->direct_seg,
		};

		if (slot < 0 || !urnic_local_send(&u->local, first->dst.ip, (uint32_t)slot, &env,
						  u->tx_iov[i].iov_base,
						  (uint32_t)u->tx_iov[i].iov_len, 0, counters)) {
			/* A READ response that says its data was placed, an offer to pull, a
			 * word that a pull is done: none is a packet any peer could take.
			 * Without the lane it is lost, and the requester asks again
			 * (urnic_udp_direct_write and _read made sure of the lane). */
			if (first->direct_flags & (URNIC_DIRECT_PLACED | URNIC_DIRECT_PULL |
						   URNIC_DIRECT_PULLED | URNIC_DIRECT_WRITE)) {
				counters[URNIC_CTR_drop_local_direct]++;
				u->tx_fd[i] = -1;
			}
			continue;
		}
		counters[URNIC_CTR_tx_local] += end - u->tx_first_pkt[i];
		if (u->pcap)
			trace_msgs(u, b, i, 1, NULL);
		u->tx_fd[i] = -1;
	}
}

/* The lane slot of QP dqpn's process, or -1 where no lane goes (QP 1, a group). A
 * capture or the faulty wire keeps direct placement off (local.direct, dev). */
static int direct_slot(const struct urnic_udp *u, const uint8_t *dst_ip, uint32_t dqpn)
{
	if (dqpn == URNIC_GSI_QPN || urnic_mcast_ip(u->ipv6, dst_ip))
		return -1;
	return (int)urnic_qpn_owner(dqpn);
}

int urnic_udp_direct_write(struct urnic_udp *u, const uint8_t *dst_ip, uint32_t dqpn,
			   const struct urnic_direct_note *d, const uint8_t *src, uint64_t len,
			   uint64_t *counters)
{
	int slot = direct_slot(u, dst_ip, dqpn);

	return slot < 0 ? -ENOENT
			: urnic_local_direct_write(&u->local, dst_ip, (uint32_t)slot, d, src, len,
						   counters);
}

int urnic_udp_direct_read(struct urnic_udp *u, const uint8_t *dst_ip, uint32_t dqpn,
			  const struct urnic_direct_note *d, const struct urnic_direct_seg *to,
			  uint32_t nto, bool by_lane, uint64_t *counters)
{
	int slot = direct_slot(u, dst_ip, dqpn);

	return slot < 0 ? -ENOENT
			: urnic_local_direct_read(&u->local, dst_ip, (uint32_t)slot, d, to, nto,
						  by_lane, counters);
}

bool urnic_udp_direct_ready(struct urnic_udp *u, const uint8_t *dst_ip, uint32_t dqpn)
{
	int slot = direct_slot(u, dst_ip, dqpn);

	return slot >= 0 && urnic_local_direct_ready(&u->local, dst_ip, (uint32_t)slot);
}

void urnic_udp_send(struct urnic_udp *u, struct urnic_txbatch *b, uint64_t *counters)
{
	uint32_t nmsg, i = 0;

	memset(u->tx_ip_id, 0, b->n * sizeof(u->tx_ip_id[0]));
again:
	nmsg = build_msgs(u, b, i);
	if (u->local.on)
		send_local(u, b, nmsg, counters);
	i = 0;
	/* One sendmmsg per run of messages that leave from the same socket. */
	while (i < nmsg) {
		int fd = u->tx_fd[i];
		uint32_t j = i + 1;
		int sent;

		while (j < nmsg && u->tx_fd[j] == fd)
			j++;
		if (fd < 0) { /* sent through a local lane */
			i = j;
			continue;
		}
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
					for (uint32_t k = i; k < b->n && u->roce; k++)
						set_ip_id(u, &b->pkts[k], k, 0);
					goto again;
				}
				/* Unreachable peer and the like: the packet is lost and the
				 * reliability protocol recovers, as on a real wire. */
				counters[URNIC_CTR_drop_tx_failed]++;
				if (u->pcap)
					trace_msgs(u, b, i, 1,
						   urnic_counter_names[URNIC_CTR_drop_tx_failed]);
				i++;
				continue;
			}
			counters[URNIC_CTR_tx_sends]++;
			if (u->pcap)
				trace_msgs(u, b, i, (uint32_t)sent, NULL);
			i += (uint32_t)sent;
		}
	}
	b->n = 0;
}
