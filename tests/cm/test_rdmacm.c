/* SPDX-License-Identifier: MIT */
/*
 * test_rdmacm.c - the drop-in librdmacm through its public API: event strings, event
 * channel fd semantics, option and argument errors, ports (conflicts, ephemeral range),
 * rdma_getaddrinfo, and a connection between the process's two devices (127.0.41.1 and
 * .2): request with private data, accept, traffic, disconnect; and a reject. The
 * connection cases need a device CM (the real one, or the URNIC_CM_FAKE build's).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "check.h"
#include "cm_expect.h"

#define SRV_ADDR "127.0.41.1"
#define CLI_ADDR "127.0.41.2"

static void test_event_str(void)
{
	CHECK(!strcmp(rdma_event_str(RDMA_CM_EVENT_ADDR_RESOLVED), "RDMA_CM_EVENT_ADDR_RESOLVED"));
	CHECK(!strcmp(rdma_event_str(RDMA_CM_EVENT_TIMEWAIT_EXIT), "RDMA_CM_EVENT_TIMEWAIT_EXIT"));
	CHECK(!strcmp(rdma_event_str(RDMA_CM_EVENT_ESTABLISHED), "RDMA_CM_EVENT_ESTABLISHED"));
	CHECK(!strcmp(rdma_event_str((enum rdma_cm_event_type)99), "UNKNOWN EVENT"));
}

/* An empty channel: not readable, and a nonblocking get fails with EAGAIN. */
static void test_channel_fd(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev;
	struct pollfd p;

	CHECK(ch && ch->fd >= 0);
	p.fd = ch->fd;
	p.events = POLLIN;
	CHECK_EQ(poll(&p, 1, 0), 0);
	CHECK(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK) == 0);
	errno = 0;
	CHECK_EQ(rdma_get_cm_event(ch, &ev), -1);
	CHECK_EQ(errno, EAGAIN);
	rdma_destroy_event_channel(ch);
}

static void *wait_event(void *arg)
{
	struct rdma_cm_event *ev;

	rdma_get_cm_event(arg, &ev);
	return NULL;
}

/* rping destroys its channel while its CM thread still waits in rdma_get_cm_event: over
 * Linux that thread sleeps on (and rping's would exit(-1) on an error); it must touch
 * no freed memory either (ASan saw a heap-use-after-free once, before the channel
 * counted its readers). */
static void test_channel_destroyed_under_reader(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	pthread_t t;

	CHECK(ch);
	CHECK_EQ(pthread_create(&t, NULL, wait_event, ch), 0);
	usleep(20000); /* the thread is asleep in read(2) */
	rdma_destroy_event_channel(ch);
	usleep(20000);
	CHECK_EQ(pthread_tryjoin_np(t, NULL), EBUSY);
	CHECK_EQ(pthread_detach(t), 0);
}

/* ... and a reader that asks only after the destruction (rping's CM thread between two
 * events) sleeps too, on a channel kept for it, while later channels come and go. */
static void test_channel_read_after_destroy(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	pthread_t t;

	CHECK(ch);
	rdma_destroy_event_channel(ch);
	CHECK_EQ(pthread_create(&t, NULL, wait_event, ch), 0);
	usleep(20000);
	for (int i = 0; i < 20; i++) {
		struct rdma_event_channel *other = rdma_create_event_channel();

		CHECK(other);
		rdma_destroy_event_channel(other);
	}
	usleep(20000);
	CHECK_EQ(pthread_tryjoin_np(t, NULL), EBUSY);
	CHECK_EQ(pthread_detach(t), 0);
}

static void test_errors(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id;
	uint8_t tos = 32;
	int one = 1;

	CHECK(ch);
	CHECK_EQ(rdma_create_id(ch, &id, NULL, (enum rdma_port_space)0x4242), -1);
	CHECK_EQ(errno, EINVAL);
	CHECK_EQ(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_set_option(id, RDMA_OPTION_ID, 77, &one, sizeof(one)), -1);
	CHECK_EQ(errno, EINVAL);
	CHECK_EQ(rdma_set_option(id, 9, RDMA_OPTION_ID_TOS, &tos, 1), -1);
	CHECK_EQ(errno, EINVAL);
	CHECK_EQ(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, 1), 0);
	CHECK_EQ(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof(one)),
		 0);
	CHECK_EQ(rdma_resolve_route(id, 100), -1);
	CHECK_EQ(errno, EINVAL);
	CHECK_EQ(rdma_connect(id, NULL), -1);
	CHECK_EQ(errno, EINVAL);
	CHECK_EQ(rdma_join_multicast(id, NULL, NULL), -1);
	CHECK_EQ(errno, EINVAL); /* no address */
	CHECK_EQ(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}

static void test_ports(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *a, *b, *c;
	struct sockaddr_in s = sin_of(SRV_ADDR, 20886), any = sin_of("0.0.0.0", 20886);
	struct sockaddr_in none = sin_of("10.255.41.7", 0), eph = sin_of(SRV_ADDR, 0);
	int one = 1;

	CHECK(ch);
	CHECK_EQ(rdma_create_id(ch, &a, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_create_id(ch, &b, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_create_id(ch, &c, NULL, RDMA_PS_UDP), 0);
	CHECK_EQ(rdma_bind_addr(a, (struct sockaddr *)&s), 0);
	CHECK(a->verbs != NULL);
	CHECK_EQ(ntohs(rdma_get_src_port(a)), 20886);
	CHECK_EQ(rdma_bind_addr(b, (struct sockaddr *)&s), -1);
	CHECK_EQ(errno, EADDRINUSE);
	CHECK_EQ(rdma_bind_addr(b, (struct sockaddr *)&any), -1);
	CHECK_EQ(errno, EADDRNOTAVAIL); /* cma.c cma_check_port: "any" against an address */
	CHECK_EQ(rdma_bind_addr(c, (struct sockaddr *)&s), 0); /* another port space */
	CHECK_EQ(rdma_bind_addr(b, (struct sockaddr *)&none), -1);
	CHECK(errno == EADDRNOTAVAIL || errno == ENODEV);
	CHECK_EQ(rdma_destroy_id(a), 0);
	CHECK_EQ(rdma_bind_addr(b, (struct sockaddr *)&s), 0); /* free again */
	CHECK_EQ(rdma_destroy_id(b), 0);
	CHECK_EQ(rdma_create_id(ch, &a, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_bind_addr(a, (struct sockaddr *)&eph), 0);
	CHECK(ntohs(rdma_get_src_port(a)) >= 32768 && ntohs(rdma_get_src_port(a)) <= 60999);
	CHECK_EQ(rdma_destroy_id(a), 0);
	CHECK_EQ(rdma_destroy_id(c), 0);

	/* REUSEADDR on both: one port for two ids until one of them listens. */
	CHECK_EQ(rdma_create_id(ch, &a, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_create_id(ch, &b, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_set_option(a, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof(one)),
		 0);
	CHECK_EQ(rdma_set_option(b, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof(one)),
		 0);
	CHECK_EQ(rdma_bind_addr(a, (struct sockaddr *)&s), 0);
	CHECK_EQ(rdma_bind_addr(b, (struct sockaddr *)&s), 0);
	CHECK_EQ(rdma_listen(a, 1), -1);
	CHECK_EQ(errno, EADDRINUSE);
	CHECK_EQ(rdma_destroy_id(b), 0);
	CHECK_EQ(rdma_listen(a, 1), 0);
	CHECK_EQ(rdma_create_id(ch, &b, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_set_option(b, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof(one)),
		 0);
	CHECK_EQ(rdma_bind_addr(b, (struct sockaddr *)&s), -1);
	CHECK_EQ(errno, EADDRINUSE);
	CHECK_EQ(rdma_destroy_id(b), 0);
	CHECK_EQ(rdma_destroy_id(a), 0);
	rdma_destroy_event_channel(ch);
}

static void test_getaddrinfo(void)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *res;

	CHECK_EQ(rdma_getaddrinfo(SRV_ADDR, "7471", &hints, &res), 0);
	CHECK(res->ai_src_addr && !res->ai_dst_addr);
	CHECK_EQ(res->ai_family, AF_INET);
	CHECK_EQ(res->ai_qp_type, IBV_QPT_RC);
	CHECK_EQ(ntohs(((struct sockaddr_in *)res->ai_src_addr)->sin_port), 7471);
	rdma_freeaddrinfo(res);
	hints.ai_flags = RAI_NUMERICHOST;
	hints.ai_port_space = RDMA_PS_UDP;
	CHECK_EQ(rdma_getaddrinfo(SRV_ADDR, "7471", &hints, &res), 0);
	CHECK(res->ai_dst_addr && !res->ai_src_addr);
	CHECK_EQ(res->ai_qp_type, IBV_QPT_UD);
	rdma_freeaddrinfo(res);
	CHECK_EQ(rdma_getaddrinfo("no-such-host.invalid", "1", &hints, &res), -1);
	CHECK_EQ(rdma_getaddrinfo(NULL, NULL, NULL, &res), -1);
	CHECK_EQ(errno, EINVAL);
}

/* Neither node nor service: the hints' addresses and fields, as rdma-core answers
 * (pyverbs' AddrInfo(src=group) makes a multicast group's address so). */
static void test_getaddrinfo_hints_only(void)
{
	struct sockaddr_in g = sin_of("230.41.0.1", 0);
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_UDP,
				       .ai_qp_type = IBV_QPT_UD,
				       .ai_src_addr = (struct sockaddr *)&g,
				       .ai_src_len = sizeof(g) };
	struct rdma_addrinfo *res = NULL;

	CHECK_EQ(rdma_getaddrinfo(NULL, NULL, &hints, &res), 0);
	CHECK(res && res->ai_src_addr && res->ai_src_addr != hints.ai_src_addr);
	CHECK_EQ(res->ai_src_len, sizeof(g));
	CHECK(!memcmp(res->ai_src_addr, &g, sizeof(g)));
	CHECK(!res->ai_dst_addr && !res->ai_next);
	CHECK_EQ(res->ai_port_space, RDMA_PS_UDP);
	CHECK_EQ(res->ai_qp_type, IBV_QPT_UD);
	rdma_freeaddrinfo(res);
}

/* The next event of ch within 10 s, which must be want; returned unacked. */
static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type want)
{
	return expect_within(ch, want, 10000);
}

static void make_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr a = { .qp_type = IBV_QPT_RC };
	struct ibv_cq *cq = ibv_create_cq(id->verbs, 16, NULL, NULL, 0);

	CHECK(cq);
	a.send_cq = a.recv_cq = cq;
	a.cap.max_send_wr = a.cap.max_recv_wr = 8;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	CHECK_EQ(rdma_create_qp(id, NULL, &a), 0);
	CHECK(id->qp && id->qp->state == IBV_QPS_INIT);
}

static void drop_qp(struct rdma_cm_id *id)
{
	struct ibv_cq *cq = id->qp->send_cq;

	rdma_destroy_qp(id);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
}

/* The client's id, resolved to the server's port from the client's address. */
static struct rdma_cm_id *client(struct rdma_event_channel *ch, uint16_t port)
{
	struct sockaddr_in src = sin_of(CLI_ADDR, 0), dst = sin_of(SRV_ADDR, port);
	struct rdma_cm_id *id;

	CHECK_EQ(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_resolve_addr(id, (struct sockaddr *)&src, (struct sockaddr *)&dst, 2000), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED)), 0);
	CHECK_EQ(rdma_resolve_route(id, 2000), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED)), 0);
	CHECK_EQ(id->route.num_paths, 1);
	/* The device's PD, as librdmacm's ucma_get_device gives it (pyverbs' PD(cmid)). */
	CHECK(id->pd && id->pd->context == id->verbs);
	return id;
}

/* One SEND from a to b over the connected QPs. */
static void traffic(struct rdma_cm_id *a, struct rdma_cm_id *b)
{
	static char sbuf[64] = "over rdma_cm", rbuf[64];
	struct ibv_mr *smr = ibv_reg_mr(a->qp->pd, sbuf, sizeof(sbuf), 0);
	struct ibv_mr *rmr = ibv_reg_mr(b->qp->pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_wc wc;
	int n = 0;

	CHECK(smr && rmr);
	CHECK_EQ(rdma_post_recv(b, NULL, rbuf, sizeof(rbuf), rmr), 0);
	CHECK_EQ(rdma_post_send(a, NULL, sbuf, sizeof(sbuf), smr, IBV_SEND_SIGNALED), 0);
	for (int i = 0; i < 5000 && n == 0; i++) {
		n = ibv_poll_cq(b->qp->recv_cq, 1, &wc);
		if (!n)
			usleep(1000);
	}
	CHECK_EQ(n, 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK(!strcmp(rbuf, "over rdma_cm"));
	for (int i = 0; i < 5000 && ibv_poll_cq(a->qp->send_cq, 1, &wc) == 0; i++)
		usleep(1000);
	CHECK_EQ(ibv_dereg_mr(smr), 0);
	CHECK_EQ(ibv_dereg_mr(rmr), 0);
}

/* rdma_init_qp_attr of a passive id before its accept: the REQ's QP and the access the
 * connection grants (ib_cm_init_qp_attr); no attributes for SQD. */
static void check_qp_attr(struct rdma_cm_id *child, struct rdma_cm_id *c)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT };
	int mask;

	CHECK_EQ(rdma_init_qp_attr(child, &a, &mask), 0);
	CHECK(mask & IBV_QP_ACCESS_FLAGS);
	CHECK(a.qp_access_flags & IBV_ACCESS_REMOTE_WRITE);
	CHECK_EQ(a.port_num, 1);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	CHECK_EQ(rdma_init_qp_attr(child, &a, &mask), 0);
	CHECK_EQ(a.dest_qp_num, c->qp->qp_num);
	CHECK(mask & IBV_QP_AV && mask & IBV_QP_DEST_QPN && mask & IBV_QP_RQ_PSN);
	CHECK(a.ah_attr.is_global && a.ah_attr.grh.sgid_index == 1);
	CHECK(a.path_mtu >= IBV_MTU_256 && a.path_mtu <= IBV_MTU_4096);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_SQD;
	CHECK_EQ(rdma_init_qp_attr(child, &a, &mask), -1);
	CHECK_EQ(errno, EINVAL);
}

static void test_connect(void)
{
	struct rdma_event_channel *sch = rdma_create_event_channel(),
				  *cch = rdma_create_event_channel();
	struct sockaddr_in s = sin_of(SRV_ADDR, 20887);
	struct rdma_conn_param cp = { .private_data = "hello",
				      .private_data_len = 6,
				      .responder_resources = 2,
				      .initiator_depth = 1,
				      .retry_count = 7,
				      .rnr_retry_count = 7 };
	struct rdma_cm_id *l, *c, *child;
	struct rdma_cm_event *ev;

	CHECK(sch && cch);
	CHECK_EQ(rdma_create_id(sch, &l, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_bind_addr(l, (struct sockaddr *)&s), 0);
	CHECK(l->pd && l->pd->context == l->verbs);
	CHECK_EQ(rdma_listen(l, 4), 0);
	c = client(cch, 20887);
	make_qp(c);
	CHECK_EQ(rdma_connect(c, &cp), 0);
	ev = expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	CHECK(ev->listen_id == l && ev->id != l);
	CHECK(!strcmp(ev->param.conn.private_data, "hello"));
	/* The peer's initiator depth is our responder resources (cm_format_req_event). */
	CHECK_EQ(ev->param.conn.responder_resources, 1);
	CHECK_EQ(ev->param.conn.initiator_depth, 2);
	CHECK_EQ(ev->param.conn.qp_num, c->qp->qp_num);
	CHECK_EQ(ntohs(rdma_get_src_port(ev->id)), 20887);
	CHECK_EQ(ntohs(rdma_get_dst_port(ev->id)), ntohs(rdma_get_src_port(c)));
	child = ev->id;
	CHECK(child->verbs == l->verbs);
	CHECK(child->pd == l->pd);
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	check_qp_attr(child, c);
	make_qp(child);
	CHECK_EQ(rdma_accept(child, &cp), 0);
	ev = expect(cch, RDMA_CM_EVENT_ESTABLISHED);
	CHECK_EQ(ev->param.conn.responder_resources, 1);
	CHECK_EQ(ev->param.conn.initiator_depth, 2);
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(sch, RDMA_CM_EVENT_ESTABLISHED)), 0);
	CHECK_EQ(c->qp->state, IBV_QPS_RTS);
	traffic(c, child);
	traffic(child, c);
	CHECK_EQ(rdma_disconnect(c), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(sch, RDMA_CM_EVENT_DISCONNECTED)), 0);
	CHECK_EQ(rdma_disconnect(child), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_DISCONNECTED)), 0);
	drop_qp(c);
	drop_qp(child);
	CHECK_EQ(rdma_destroy_id(child), 0);
	CHECK_EQ(rdma_destroy_id(c), 0);

	/* A reject with private data: the client sees REJECTED, reason 28. */
	c = client(cch, 20887);
	make_qp(c);
	CHECK_EQ(rdma_connect(c, &cp), 0);
	ev = expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	child = ev->id;
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	CHECK_EQ(rdma_reject(child, "no", 3), 0);
	ev = expect(cch, RDMA_CM_EVENT_REJECTED);
	CHECK_EQ(ev->status, 28);
	CHECK(!strcmp(ev->param.conn.private_data, "no"));
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	CHECK_EQ(rdma_destroy_id(child), 0);
	drop_qp(c);
	CHECK_EQ(rdma_destroy_id(c), 0);

	/* rdma_reject_ece: reason 35, vendor option not supported. */
	c = client(cch, 20887);
	CHECK_EQ(rdma_connect(c, &cp), 0);
	ev = expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	child = ev->id;
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	CHECK_EQ(rdma_reject_ece(child, NULL, 0), 0);
	ev = expect(cch, RDMA_CM_EVENT_REJECTED);
	CHECK_EQ(ev->status, 35);
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	CHECK_EQ(rdma_destroy_id(child), 0);
	CHECK_EQ(rdma_destroy_id(c), 0);
	CHECK_EQ(rdma_destroy_id(l), 0);
	rdma_destroy_event_channel(sch);
	rdma_destroy_event_channel(cch);
}

/* UD over the UDP port space: SIDR_REQ, the passive QP's number and Q_Key in the
 * client's ESTABLISHED, and a datagram to it. */
static void test_ud(void)
{
	struct rdma_event_channel *sch = rdma_create_event_channel(),
				  *cch = rdma_create_event_channel();
	struct sockaddr_in s = sin_of(SRV_ADDR, 20888), src = sin_of(CLI_ADDR, 0);
	struct rdma_conn_param cp = { .private_data = "ud?", .private_data_len = 4 };
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 }
	};
	static char sbuf[64] = "datagram", rbuf[64 + 40];
	struct rdma_cm_id *l, *c, *child;
	struct rdma_cm_event *ev;
	struct ibv_mr *smr, *rmr;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	uint32_t qpn, qkey;
	int n = 0;

	CHECK_EQ(rdma_create_id(sch, &l, NULL, RDMA_PS_UDP), 0);
	CHECK_EQ(rdma_bind_addr(l, (struct sockaddr *)&s), 0);
	CHECK_EQ(rdma_listen(l, 4), 0);
	CHECK_EQ(rdma_create_id(cch, &c, NULL, RDMA_PS_UDP), 0);
	CHECK_EQ(rdma_resolve_addr(c, (struct sockaddr *)&src, (struct sockaddr *)&s, 2000), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ADDR_RESOLVED)), 0);
	CHECK_EQ(rdma_resolve_route(c, 2000), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ROUTE_RESOLVED)), 0);
	CHECK_EQ(rdma_create_qp(c, NULL, &qa), 0);
	CHECK(c->send_cq && c->recv_cq && c->qp->state == IBV_QPS_RTS);
	CHECK_EQ(rdma_connect(c, &cp), 0);
	ev = expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	CHECK(!strcmp(ev->param.ud.private_data, "ud?"));
	child = ev->id;
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	CHECK_EQ(rdma_create_qp(child, NULL, &qa), 0);
	rmr = ibv_reg_mr(child->qp->pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(rmr);
	CHECK_EQ(rdma_post_recv(child, NULL, rbuf, sizeof(rbuf), rmr), 0);
	CHECK_EQ(rdma_accept(child, NULL), 0);
	ev = expect(cch, RDMA_CM_EVENT_ESTABLISHED);
	qpn = ev->param.ud.qp_num;
	qkey = ev->param.ud.qkey;
	CHECK_EQ(qpn, child->qp->qp_num);
	CHECK_EQ(qkey, RDMA_UDP_QKEY);
	ah = ibv_create_ah(c->qp->pd, &ev->param.ud.ah_attr);
	CHECK(ah);
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	smr = ibv_reg_mr(c->qp->pd, sbuf, sizeof(sbuf), 0);
	CHECK(smr);
	CHECK_EQ(rdma_post_ud_send(c, NULL, sbuf, sizeof(sbuf), smr, IBV_SEND_SIGNALED, ah, qpn),
		 0);
	for (int i = 0; i < 5000 && n == 0; i++) {
		n = ibv_poll_cq(child->recv_cq, 1, &wc);
		if (!n)
			usleep(1000);
	}
	CHECK_EQ(n, 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK(!strcmp(rbuf + 40, "datagram"));
	for (int i = 0; i < 5000 && ibv_poll_cq(c->send_cq, 1, &wc) == 0; i++)
		usleep(1000);
	CHECK_EQ(ibv_destroy_ah(ah), 0);
	CHECK_EQ(ibv_dereg_mr(smr), 0);
	CHECK_EQ(ibv_dereg_mr(rmr), 0);
	rdma_destroy_qp(c);
	rdma_destroy_qp(child);
	CHECK_EQ(rdma_destroy_id(child), 0);
	CHECK_EQ(rdma_destroy_id(c), 0);
	CHECK_EQ(rdma_destroy_id(l), 0);
	rdma_destroy_event_channel(sch);
	rdma_destroy_event_channel(cch);
}

/* The synchronous calls (rdma_create_ep, rdma_get_request): the server in a thread. */
static void *sync_server(void *arg)
{
	struct rdma_cm_id *l = arg, *id;

	/* The QP comes from the listener's rdma_create_ep attributes, as rdma_server's. */
	CHECK_EQ(rdma_get_request(l, &id), 0);
	CHECK(id->event && !strcmp(id->event->param.conn.private_data, "sync"));
	CHECK(id->qp && id->recv_cq && id->qp->state == IBV_QPS_INIT);
	CHECK_EQ(rdma_accept(id, NULL), 0);
	CHECK_EQ(id->qp->state, IBV_QPS_RTS);
	return id;
}

static void test_sync(void)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *sres, *cres;
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 }
	};
	struct rdma_conn_param cp = { .private_data = "sync",
				      .private_data_len = 5,
				      .responder_resources = 1,
				      .initiator_depth = 1 };
	struct rdma_cm_id *l, *c;
	pthread_t t;
	void *child;

	CHECK_EQ(rdma_getaddrinfo(SRV_ADDR, "20889", &hints, &sres), 0);
	CHECK_EQ(rdma_create_ep(&l, sres, NULL, &qa), 0);
	CHECK(l->qp == NULL);
	CHECK_EQ(rdma_listen(l, 2), 0);
	hints.ai_flags = 0;
	hints.ai_src_addr = (struct sockaddr *)&(struct sockaddr_in){ 0 };
	*(struct sockaddr_in *)hints.ai_src_addr = sin_of(CLI_ADDR, 0);
	hints.ai_src_len = sizeof(struct sockaddr_in);
	CHECK_EQ(rdma_getaddrinfo(SRV_ADDR, "20889", &hints, &cres), 0);
	CHECK_EQ(rdma_create_ep(&c, cres, NULL, &qa), 0);
	CHECK(c->qp && c->send_cq_channel);
	CHECK_EQ(pthread_create(&t, NULL, sync_server, l), 0);
	CHECK_EQ(rdma_connect(c, &cp), 0);
	CHECK_EQ(pthread_join(t, &child), 0);
	traffic(c, child);
	CHECK_EQ(rdma_disconnect(c), 0);
	rdma_destroy_ep(c);
	rdma_destroy_ep(child);
	rdma_destroy_ep(l);
	rdma_freeaddrinfo(sres);
	rdma_freeaddrinfo(cres);
}

/* No source: the routing's (127.0.0.1 through lo for a local destination) becomes the
 * process's first device, 127.0.41.1; a listener on any address takes a port for all. */
static void test_route_src(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in dst = sin_of(CLI_ADDR, 20890), any = sin_of("0.0.0.0", 0);
	struct rdma_cm_id *id, *l;
	struct sockaddr_in *src;

	CHECK_EQ(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED)), 0);
	src = (struct sockaddr_in *)rdma_get_local_addr(id);
	CHECK_EQ(ntohl(src->sin_addr.s_addr), 0x7f002901);
	CHECK(ntohs(src->sin_port) >= 32768);
	CHECK(id->verbs != NULL);
	CHECK_EQ(rdma_destroy_id(id), 0);
	CHECK_EQ(rdma_create_id(ch, &l, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_bind_addr(l, (struct sockaddr *)&any), 0);
	CHECK(l->verbs == NULL);
	CHECK_EQ(rdma_listen(l, 0), 0);
	CHECK_EQ(rdma_destroy_id(l), 0);
	rdma_destroy_event_channel(ch);
}

/* A listener destroyed with a request it never took: the request is rejected. */
static void test_listener_gone(void)
{
	struct rdma_event_channel *sch = rdma_create_event_channel(),
				  *cch = rdma_create_event_channel();
	struct sockaddr_in s = sin_of(SRV_ADDR, 20891);
	struct rdma_cm_id *l, *c;
	struct rdma_cm_event *ev;

	CHECK_EQ(rdma_create_id(sch, &l, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_bind_addr(l, (struct sockaddr *)&s), 0);
	CHECK_EQ(rdma_listen(l, 1), 0);
	c = client(cch, 20891);
	make_qp(c);
	CHECK_EQ(rdma_connect(c, NULL), 0);
	CHECK_EQ(rdma_destroy_id(l), 0);
	ev = expect(cch, RDMA_CM_EVENT_REJECTED);
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	drop_qp(c);
	CHECK_EQ(rdma_destroy_id(c), 0);
	rdma_destroy_event_channel(sch);
	rdma_destroy_event_channel(cch);
}

/* A synchronous connect to a port nobody listens on: the REJ (invalid service ID) is
 * ECONNREFUSED, and the event stays in id->event. */
static void test_sync_refused(void)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct sockaddr_in src = sin_of(CLI_ADDR, 0);
	struct rdma_cm_id *c;

	hints.ai_src_addr = (struct sockaddr *)&src;
	hints.ai_src_len = sizeof(src);
	CHECK_EQ(rdma_getaddrinfo(SRV_ADDR, "20899", &hints, &res), 0);
	CHECK_EQ(rdma_create_ep(&c, res, NULL, NULL), 0);
	errno = 0;
	CHECK_EQ(rdma_connect(c, NULL), -1);
	CHECK_EQ(errno, ECONNREFUSED);
	CHECK(c->event && c->event->event == RDMA_CM_EVENT_REJECTED);
	CHECK_EQ(c->event->status, 8);
	rdma_destroy_ep(c);
	rdma_freeaddrinfo(res);
}

int main(void)
{
	RUN(test_event_str);
	RUN(test_channel_fd);
	RUN(test_channel_destroyed_under_reader);
	RUN(test_channel_read_after_destroy);
	RUN(test_errors);
	RUN(test_ports);
	RUN(test_getaddrinfo);
	RUN(test_getaddrinfo_hints_only);
	RUN(test_route_src);
	RUN(test_connect);
	RUN(test_ud);
	RUN(test_sync);
	RUN(test_listener_gone);
	RUN(test_sync_refused);
	return 0;
}
