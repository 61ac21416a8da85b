/* SPDX-License-Identifier: MIT */
/*
 * udp_rx.c - the receive side of the UDP transport (udp.h): recvmmsg batches of the
 * address's socket, GRO super-packets cut back into RoCE (or UET) packets, the packet
 * rings, the multicast groups' sockets and the packets other processes on the address
 * forward (share.h); each packet to the sink, through the fault injector if there is
 * one. A UET device's packets are all its own: no BTH to steer by, no group.
 */
#include "transport/cm_ports.h"
#include "transport/udp.h"

#include "wire/frame.h"
#include "wire/pkt.h"

#include <errno.h>
#include <stdatomic.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <string.h>

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

/* A packet the transport refuses, counted in c: to the capture (pcap.h), if there is
 * one, with the envelope it came with and the counter's name. */
static void trace_drop(struct rx_pass *p, const struct urnic_share_rec *r, const uint8_t *dst,
		       enum urnic_counter c)
{
	struct urnic_pcap_dgram g = {
		.src = r->src,
		.dst = dst,
		.sport = r->sport,
		.dport = p->u->port,
		.tos = r->tos,
		.ttl = r->ttl,
		.ip_id = r->ip_id_hint,
		.reason = urnic_counter_names[c],
	};

	if (p->u->pcap)
		urnic_pcap_write(p->u->pcap, &g, r->pkt, r->len, 0);
}

/* The records of a batch (share.h) to the capture, refused for c. */
static void trace_batch(struct rx_pass *p, const uint8_t *batch, uint32_t len, enum urnic_counter c)
{
	struct urnic_share_rec r;
	uint32_t off = 0;

	while (p->u->pcap && urnic_share_next(batch, len, &off, &r) > 0)
		trace_drop(p, &r, p->u->addr, c);
}

/* Hands the gathered batch to its owner, counting each packet in it. */
static void forward_flush(struct rx_pass *p)
{
	struct urnic_udp *u = p->u;
	uint32_t n = u->share.batch_n, bytes = u->share.batch_bytes;
	enum urnic_counter c = urnic_udp_forward_counter(urnic_share_flush(&u->share));

	count(p, c, n);
	if (c == URNIC_CTR_rx_forwarded)
		return;
	/* The flush emptied the batch, but left its bytes. */
	trace_batch(p, u->share.batch, bytes, c);
}

/* One received RoCE packet: ours, or another process's on this address (gathered into
 * one batch per owner, sent when the owner changes, the batch is full, or the receive
 * ends: recv_batch). */
static void deliver(struct rx_pass *p, const uint8_t *src, uint16_t sport, uint8_t *buf,
		    uint32_t len)
{
	struct urnic_udp *u = p->u;
	int owner;
	struct urnic_share_rec r = {
		.sport = sport,
		.ip_id_hint = p->m.ip_id_hint,
		.tos = p->m.tos,
		.ttl = p->m.ttl,
		.pkt = buf,
		.len = len,
	};

	if (!u->roce) {
		to_engine(p, src, sport, buf, len);
		return;
	}
	owner = urnic_share_owner(&u->share, buf, len);
	memcpy(r.src, src, u->ipv6 ? 16 : 4);
	if (owner == URNIC_CM_PORT_UNHELD)
		urnic_udp_unheld_keep(u, &r, p->m.now_ns);
	if (owner < 0 || (uint32_t)owner == u->share.slot) {
		to_engine(p, src, sport, buf, len);
		return;
	}
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
			trace_batch(p, u->rx_buf[i], len, URNIC_CTR_drop_forward_foreign);
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
		if (u->ipv6) {
			const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&u->rx_from[i];

			src = (const uint8_t *)&s6->sin6_addr;
			sport = ntohs(s6->sin6_port);
		} else {
			const struct sockaddr_in *s4 = (const struct sockaddr_in *)&u->rx_from[i];

			src = (const uint8_t *)&s4->sin_addr;
			sport = ntohs(s4->sin_port);
		}
		if (m->msg_flags & MSG_TRUNC) {
			struct urnic_share_rec r = { .sport = sport,
						     .tos = p->m.tos,
						     .ttl = p->m.ttl,
						     .pkt = u->rx_buf[i],
						     .len = len };

			count(p, URNIC_CTR_drop_bad_header, 1);
			memcpy(r.src, src, u->ipv6 ? 16 : 4);
			trace_drop(p, &r, group ? group : u->addr, URNIC_CTR_drop_bad_header);
			continue;
		}
		/* Segment k of a GSO send left as IPv4 ID k (icrc_gso.h). */
		deliver_segments(p, src, sport, group, u->rx_buf[i], len, seg, 0);
	}
	if (!group)
		forward_flush(p);
	rx_defaults(p); /* for what is delivered outside a batch (forwarded, delayed) */
	return n;
}

/* A ring's frame refused before it could be read as a datagram, to the capture whole
 * (what the ring holds of it). */
static void trace_frame(struct rx_pass *p, const struct urnic_ring_frame *f, enum urnic_counter c)
{
	if (p->u->pcap)
		urnic_pcap_write_frame(p->u->pcap, f->frame, f->len, urnic_counter_names[c]);
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
			trace_frame(p, &f, URNIC_CTR_drop_ring_otherhost);
			urnic_ring_release(&u->ring);
			continue;
		}
		if (f.len < f.wire_len || f.gso_size == UINT32_MAX ||
		    urnic_frame_decode(f.frame, f.len, &fr) < 0) {
			count(p, URNIC_CTR_drop_bad_header, 1);
			trace_frame(p, &f, URNIC_CTR_drop_bad_header);
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

/* A record of a local lane (local.h): a packet or a GSO run, as a GRO datagram. */
static void local_rec(void *ctx, const struct urnic_local_rec *r)
{
	struct rx_pass *p = ctx;

	p->m.tos = r->tos;
	p->m.ttl = r->ttl;
	p->m.direct = r->direct;
	count(p, URNIC_CTR_rx_local,
	      deliver_segments(p, r->src, r->sport, NULL, r->pkt, r->len, r->seg, 0));
	p->m.direct = NULL;
}

/* The local lanes' records; with service, the lanes' offers, ends and wake-ups too (a
 * lane taken, refused or ended counts as one received, so that the pass publishes the
 * counters). Read after the socket: a new lane's first records may follow packets the
 * sender sent before it and the socket still holds, which are taken first while a
 * socket read fills its whole batch (sock_backlog). */
static int recv_local(struct rx_pass *p, bool service)
{
	struct urnic_udp *u = p->u;
	bool changed = service && urnic_local_service(&u->local, p->m.now_ns, p->s->counters);
	uint32_t n;

	n = urnic_local_recv(&u->local, local_rec, p, p->m.now_ns, u->sock_backlog, p->s->counters);
	if (n) {
		u->local_rx_ns = p->m.now_ns;
		forward_flush(p);
	}
	rx_defaults(p);
	return (int)n + changed;
}

/* Whether this pass reads the socket. With the rings, only what they leave to it
 * lands there (ring.h); while local lanes carry the traffic, little does. Either way a
 * polling application's pass would be a system call again, so it is read now and
 * then; the engine thread's passes after a wake-up (forwarded) always read it. */
static bool socket_due(struct urnic_udp *u, uint64_t now_ns, bool forwarded)
{
	bool lanes_busy =
		u->local.on && u->sock_empty && now_ns - u->local_rx_ns < URNIC_UDP_LOCAL_BUSY_NS;

	if (!(u->ring_on || (lanes_busy && !forwarded)))
		return true;
	return now_ns - u->sock_read_ns >= URNIC_UDP_RING_SOCKET_NS;
}

int urnic_udp_recv(struct urnic_udp *u, const struct urnic_udp_sink *s, uint64_t now_ns,
		   bool forwarded)
{
	struct rx_pass p = { .u = u, .s = s, .m = { .now_ns = now_ns } };
	int n = 0;

	rx_defaults(&p);
	if (u->fault)
		n = (int)urnic_fault_release(u->fault, now_ns, fault_deliver, &p);
	if (u->ring_on)
		n += recv_ring(&p);
	if (socket_due(u, now_ns, forwarded)) {
		int got = recv_batch(&p, u->fd, NULL);

		u->sock_read_ns = now_ns;
		u->sock_empty = got == 0;
		u->sock_backlog = got == URNIC_UDP_RX_BATCH;
		n += got;
	}
	if (u->local.on)
		n += recv_local(&p, forwarded);
	for (int g = 0; g < URNIC_UDP_MAX_GROUPS; g++) {
		int fd = atomic_load_explicit(&u->groups[g].fd, memory_order_relaxed);

		if (fd >= 0)
			n += recv_batch(&p, fd, u->groups[g].ip);
	}
	return forwarded && u->share.fd >= 0 ? n + recv_forwarded(&p) : n;
}
