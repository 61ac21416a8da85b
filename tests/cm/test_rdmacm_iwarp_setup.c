/* SPDX-License-Identifier: MIT */
/*
 * test_rdmacm_iwarp_setup.c - rdma_cm over iWARP between the process's two devices
 * (127.0.51.2 server, .3 client): TCP ports, MPA Request and Reply with private data
 * both ways and IRD/ORD, reject with private data, a port nobody listens on, a peer that
 * closes or never answers, an id destroyed before it answers, a peer that sends garbage,
 * a synchronous connect, disconnect seen once on both sides, and no IB CM on the devices.
 *
 * The devices are iWARP (URNIC_ADDR=iwarp:...), and this program stands in for the device's side of
 * the hand-over (dev/iw_conn.h: attach, disconnect, the sink), which it defines and exports: it
 * records what the CM hands over, shuts the socket on disconnect and reports a connection closed
 * when it reads EOF. So it checks the CM's setup and teardown, not the data path.
 */
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "check.h"
#include "cm_expect.h"
#include "dev/cm.h"
#include "dev/iw_conn.h"

#define SRV_ADDR "127.0.51.2"
#define CLI_ADDR "127.0.51.3"

/* ---- the stand-in device side ---- */

struct fake_conn {
	struct urnic_dev *d;
	struct urnic_qp *qp;
	int fd;
	void *user;
	struct urnic_iw_conn_params p;
	int closes;
};

static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static struct urnic_dev_iw_sink fake_sink;
static struct fake_conn conns[32];
static int nconns;
/* A connection whose local port this is ends as the device takes it (a reset). */
static _Atomic uint16_t reset_port;

__attribute__((visibility("default"))) void urnic_dev_iw_set_sink(struct urnic_dev *d,
								  const struct urnic_dev_iw_sink *s)
{
	(void)d;
	pthread_mutex_lock(&fake_lock);
	fake_sink = *s;
	pthread_mutex_unlock(&fake_lock);
}

__attribute__((visibility("default"))) int
urnic_dev_iw_attach(struct urnic_dev *d, struct urnic_qp *qp, int fd,
		    const struct urnic_iw_conn_params *p, const uint8_t *rest, size_t n, void *user)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	(void)rest;
	(void)n;
	CHECK_EQ(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	pthread_mutex_lock(&fake_lock);
	CHECK(nconns < 32);
	conns[nconns++] = (struct fake_conn){ .d = d, .qp = qp, .fd = fd, .user = user, .p = *p };
	if (reset_port && ntohs(a.sin_port) == reset_port) {
		close(fd);
		conns[nconns - 1].fd = -1;
		fake_sink.closed(fake_sink.ctx, d, user, ECONNRESET);
	}
	pthread_mutex_unlock(&fake_lock);
	return 0;
}

__attribute__((visibility("default"))) void urnic_dev_iw_disconnect(struct urnic_dev *d,
								    struct urnic_qp *qp)
{
	(void)d;
	pthread_mutex_lock(&fake_lock);
	for (int i = 0; i < nconns; i++)
		if (conns[i].qp == qp && conns[i].fd >= 0)
			shutdown(conns[i].fd, SHUT_WR);
	pthread_mutex_unlock(&fake_lock);
}

/* The device's receive side: EOF or an error ends the connection, reported once. */
static void *fake_rx(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&fake_lock);
		for (int i = 0; i < nconns; i++) {
			struct fake_conn *c = &conns[i];
			uint8_t b[256];
			ssize_t k;

			if (c->fd < 0)
				continue;
			k = recv(c->fd, b, sizeof(b), MSG_DONTWAIT);
			if (k > 0 || (k < 0 && errno == EAGAIN))
				continue;
			close(c->fd);
			c->fd = -1;
			c->closes++;
			fake_sink.closed(fake_sink.ctx, c->d, c->user, 0);
		}
		pthread_mutex_unlock(&fake_lock);
		usleep(2000);
	}
	return NULL;
}

/* ---- helpers ---- */

/* Every event this test waits for comes within 15 s. */
static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type want)
{
	return expect_within(ch, want, 15000);
}

/* Nothing more arrives on ch within ms. */
static void quiet(struct rdma_event_channel *ch, int ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };

	CHECK_EQ(poll(&p, 1, ms), 0);
}

static void make_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr a = { .qp_type = IBV_QPT_RC };
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr ia;

	a.cap.max_send_wr = a.cap.max_recv_wr = 8;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	CHECK_EQ(rdma_create_qp(id, NULL, &a), 0);
	/* iwcm_init_qp_init_attr: INIT, remote write and read. */
	CHECK_EQ(ibv_query_qp(id->qp, &qa, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS, &ia), 0);
	CHECK_EQ(qa.qp_state, IBV_QPS_INIT);
	CHECK_EQ(qa.qp_access_flags, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
}

static struct rdma_cm_id *server(struct rdma_event_channel *ch, uint16_t *port)
{
	struct sockaddr_in a = sin_of(SRV_ADDR, 0);
	struct rdma_cm_id *id;

	CHECK_EQ(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_bind_addr(id, (struct sockaddr *)&a), 0);
	*port = ntohs(rdma_get_src_port(id));
	CHECK(*port != 0); /* port 0: the host's ephemeral choice */
	CHECK_EQ(rdma_listen(id, 8), 0);
	return id;
}

static struct rdma_cm_id *client(struct rdma_event_channel *ch, uint16_t port)
{
	struct sockaddr_in src = sin_of(CLI_ADDR, 0), dst = sin_of(SRV_ADDR, port);
	struct rdma_cm_id *id;

	CHECK_EQ(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_resolve_addr(id, (struct sockaddr *)&src, (struct sockaddr *)&dst, 2000), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED)), 0);
	CHECK_EQ(rdma_resolve_route(id, 2000), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED)), 0);
	make_qp(id);
	return id;
}

static void connect_with(struct rdma_cm_id *id, const char *pd, uint8_t ird, uint8_t ord)
{
	struct rdma_conn_param p = { .private_data = pd,
				     .private_data_len = (uint8_t)(strlen(pd) + 1),
				     .responder_resources = ird,
				     .initiator_depth = ord };

	CHECK_EQ(rdma_connect(id, &p), 0);
}

static void free_id(struct rdma_cm_id *id)
{
	if (id->qp)
		rdma_destroy_qp(id);
	CHECK_EQ(rdma_destroy_id(id), 0);
}

/* ---- the tests ---- */

/* Private data both ways with no rdma_cm header, IRD/ORD as cma_iw_handler reports what
 * siw_cm_upcall gives it (a request: initiator depth the initiator's IRD, responder
 * resources its ORD; the active ESTABLISHED: the Reply's ORD and IRD; the passive one:
 * its own IRD and ORD), the QP handed to the device, and a disconnect seen once on each
 * side. */
static void test_connect_accept_disconnect(void)
{
	struct rdma_event_channel *sch = rdma_create_event_channel();
	struct rdma_event_channel *cch = rdma_create_event_channel();
	struct rdma_conn_param ap = { .private_data = "server-says-hi",
				      .private_data_len = 15,
				      .responder_resources = 2,
				      .initiator_depth = 3 };
	struct rdma_cm_id *l, *c, *child;
	struct rdma_cm_event *ev;
	uint16_t port;
	int base = nconns;

	CHECK(sch && cch);
	l = server(sch, &port);
	c = client(cch, port);
	connect_with(c, "client-says-hello", 4, 2);
	ev = expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	child = ev->id;
	CHECK(ev->listen_id == l);
	CHECK_EQ(ev->param.conn.private_data_len, 18);
	CHECK(!memcmp(ev->param.conn.private_data, "client-says-hello", 18));
	CHECK_EQ(ev->param.conn.initiator_depth, 4);
	CHECK_EQ(ev->param.conn.responder_resources, 2);
	CHECK_EQ(ntohs(rdma_get_dst_port(child)) != 0, 1);
	CHECK_EQ(ntohs(rdma_get_src_port(child)), port);
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	make_qp(child);
	CHECK_EQ(rdma_accept(child, &ap), 0);

	ev = expect(cch, RDMA_CM_EVENT_ESTABLISHED);
	CHECK_EQ(ev->status, 0);
	CHECK_EQ(ev->param.conn.private_data_len, 15);
	CHECK(!memcmp(ev->param.conn.private_data, "server-says-hi", 15));
	CHECK_EQ(ev->param.conn.initiator_depth, 3);
	CHECK_EQ(ev->param.conn.responder_resources, 2);
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	ev = expect(sch, RDMA_CM_EVENT_ESTABLISHED);
	CHECK_EQ(ev->id, child);
	CHECK_EQ(ev->param.conn.initiator_depth, 2);
	CHECK_EQ(ev->param.conn.responder_resources, 3);
	CHECK_EQ(rdma_ack_cm_event(ev), 0);

	pthread_mutex_lock(&fake_lock);
	CHECK_EQ(nconns, base + 2);
	for (int i = base; i < nconns; i++) {
		CHECK(conns[i].qp && conns[i].fd >= 0 && conns[i].p.mss > 0);
		CHECK(!conns[i].p.crc);
	}
	/* the server's hand-over carries its accept's IRD and ORD, the client's the Reply's
	 * ORD and IRD (siw_proc_mpareply) */
	for (int i = base; i < nconns; i++)
		CHECK((conns[i].p.ird == 2 && conns[i].p.ord == 3) ||
		      (conns[i].p.ird == 3 && conns[i].p.ord == 2));
	CHECK(conns[base].p.ird != conns[base + 1].p.ird);
	pthread_mutex_unlock(&fake_lock);

	CHECK_EQ(rdma_disconnect(c), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(sch, RDMA_CM_EVENT_DISCONNECTED)), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_DISCONNECTED)), 0);
	CHECK_EQ(rdma_disconnect(child), 0); /* the other side too: no second event */
	quiet(sch, 100);
	quiet(cch, 100);
	free_id(child);
	free_id(c);
	free_id(l);
	rdma_destroy_event_channel(sch);
	rdma_destroy_event_channel(cch);
}

/* An accept with IRD and ORD of 0 (rdma_xserver's) is negotiated as siw_accept does:
 * its IRD is raised to the initiator's ORD, its ORD stays within the initiator's IRD. */
static void test_accept_negotiates(void)
{
	struct rdma_event_channel *sch = rdma_create_event_channel();
	struct rdma_event_channel *cch = rdma_create_event_channel();
	struct rdma_conn_param zero = { 0 };
	struct rdma_cm_id *l, *c, *child;
	struct rdma_cm_event *ev;
	uint16_t port;

	l = server(sch, &port);
	c = client(cch, port);
	connect_with(c, "ird4-ord2", 4, 2);
	ev = expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	child = ev->id;
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	make_qp(child);
	CHECK_EQ(rdma_accept(child, &zero), 0);
	ev = expect(cch, RDMA_CM_EVENT_ESTABLISHED);
	CHECK_EQ(ev->param.conn.initiator_depth, 0);	 /* the server's ORD */
	CHECK_EQ(ev->param.conn.responder_resources, 2); /* its IRD: our ORD */
	CHECK_EQ(ev->param.conn.private_data_len, 0);
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(sch, RDMA_CM_EVENT_ESTABLISHED)), 0);
	CHECK_EQ(rdma_disconnect(child), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_DISCONNECTED)), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(sch, RDMA_CM_EVENT_DISCONNECTED)), 0);
	free_id(child);
	free_id(c);
	free_id(l);
	rdma_destroy_event_channel(sch);
	rdma_destroy_event_channel(cch);
}

/* A connection the device reports ended while it takes it: ESTABLISHED comes first, then
 * DISCONNECTED with the device's error, on the active side, and the passive side sees
 * the close. */
static void test_closed_at_once(void)
{
	struct rdma_event_channel *sch = rdma_create_event_channel();
	struct rdma_event_channel *cch = rdma_create_event_channel();
	struct rdma_cm_id *l, *c, *child;
	struct rdma_cm_event *ev;
	uint16_t port;

	l = server(sch, &port);
	c = client(cch, port);
	reset_port = ntohs(rdma_get_src_port(c));
	connect_with(c, "short-lived", 1, 1);
	ev = expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	child = ev->id;
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	make_qp(child);
	CHECK_EQ(rdma_accept(child, NULL), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ESTABLISHED)), 0);
	ev = expect(cch, RDMA_CM_EVENT_DISCONNECTED);
	CHECK_EQ(ev->status, -ECONNRESET);
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(sch, RDMA_CM_EVENT_ESTABLISHED)), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(sch, RDMA_CM_EVENT_DISCONNECTED)), 0);
	reset_port = 0;
	quiet(cch, 50);
	free_id(child);
	free_id(c);
	free_id(l);
	rdma_destroy_event_channel(sch);
	rdma_destroy_event_channel(cch);
}

/* rdma_reject: the Reply with R carries the private data; the client sees REJECTED with
 * ECONNREFUSED (siw's CONNECT_REPLY status). */
static void test_reject(void)
{
	struct rdma_event_channel *sch = rdma_create_event_channel();
	struct rdma_event_channel *cch = rdma_create_event_channel();
	struct rdma_cm_id *l, *c, *child;
	struct rdma_cm_event *ev;
	uint16_t port;
	uint8_t big[200];

	l = server(sch, &port);
	c = client(cch, port);
	connect_with(c, "please", 1, 1);
	ev = expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	child = ev->id;
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	memset(big, 'r', sizeof(big));
	memcpy(big, "go away", 8);
	CHECK_EQ(rdma_reject(child, big, sizeof(big)), 0); /* more than an IB REJ holds */
	ev = expect(cch, RDMA_CM_EVENT_REJECTED);
	CHECK_EQ(ev->status, -ECONNREFUSED);
	CHECK_EQ(ev->param.conn.private_data_len, sizeof(big));
	CHECK(!memcmp(ev->param.conn.private_data, big, sizeof(big)));
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	free_id(child);

	/* A request whose id is destroyed unanswered is rejected. */
	free_id(c);
	c = client(cch, port);
	connect_with(c, "again", 1, 1);
	ev = expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	child = ev->id;
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	CHECK_EQ(rdma_destroy_id(child), 0);
	ev = expect(cch, RDMA_CM_EVENT_REJECTED);
	CHECK_EQ(ev->status, -ECONNREFUSED);
	CHECK_EQ(ev->param.conn.private_data_len, 0);
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	free_id(c);
	free_id(l);
	rdma_destroy_event_channel(sch);
	rdma_destroy_event_channel(cch);
}

/* A port nobody listens on: TCP refuses, cma_iw_handler reports REJECTED. */
static void test_no_listener(void)
{
	struct rdma_event_channel *cch = rdma_create_event_channel();
	struct sockaddr_in a = sin_of(SRV_ADDR, 0);
	struct rdma_cm_id *c, *tmp;
	struct rdma_cm_event *ev;
	uint16_t port;

	/* a port that was free a moment ago */
	CHECK_EQ(rdma_create_id(cch, &tmp, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_bind_addr(tmp, (struct sockaddr *)&a), 0);
	port = ntohs(rdma_get_src_port(tmp));
	CHECK_EQ(rdma_destroy_id(tmp), 0);
	c = client(cch, port);
	connect_with(c, "anyone?", 1, 1);
	ev = expect(cch, RDMA_CM_EVENT_REJECTED);
	CHECK_EQ(ev->status, -ECONNREFUSED);
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	free_id(c);
	rdma_destroy_event_channel(cch);
}

/* A TCP listener that is no iWARP peer: one that closes the connection is a reset
 * (REJECTED, -ECONNRESET, as siw's peer close while the Reply is awaited), one that never
 * answers the Request is a timeout (UNREACHABLE, -ETIMEDOUT, after siw's 10 s). */
static void test_peer_gone_or_silent(void)
{
	struct rdma_event_channel *cch = rdma_create_event_channel();
	struct sockaddr_in a = sin_of(SRV_ADDR, 0);
	socklen_t len = sizeof(a);
	struct rdma_cm_id *c;
	struct rdma_cm_event *ev;
	struct pollfd p;
	int l, fd;

	l = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(l >= 0);
	CHECK_EQ(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	CHECK_EQ(getsockname(l, (struct sockaddr *)&a, &len), 0);
	CHECK_EQ(listen(l, 4), 0);

	c = client(cch, ntohs(a.sin_port));
	connect_with(c, "anyone?", 1, 1);
	fd = accept(l, NULL, NULL);
	CHECK(fd >= 0);
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	CHECK_EQ(poll(&p, 1, 5000), 1); /* the Request */
	close(fd);
	ev = expect(cch, RDMA_CM_EVENT_REJECTED);
	CHECK_EQ(ev->status, -ECONNRESET);
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	free_id(c);

	c = client(cch, ntohs(a.sin_port));
	connect_with(c, "hello?", 1, 1);
	ev = expect(cch, RDMA_CM_EVENT_UNREACHABLE);
	CHECK_EQ(ev->status, -ETIMEDOUT);
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	free_id(c);
	close(l);
	rdma_destroy_event_channel(cch);
}

/* A peer that sends no MPA Request but garbage is closed, and no request is reported. */
static void test_bad_frame(void)
{
	struct rdma_event_channel *sch = rdma_create_event_channel();
	struct sockaddr_in dst;
	struct rdma_cm_id *l;
	struct pollfd p;
	uint16_t port;
	uint8_t junk[64];
	int fd;

	l = server(sch, &port);
	dst = sin_of(SRV_ADDR, port);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(fd >= 0);
	CHECK_EQ(connect(fd, (struct sockaddr *)&dst, sizeof(dst)), 0);
	memset(junk, 'x', sizeof(junk));
	CHECK_EQ(send(fd, junk, sizeof(junk), 0), (ssize_t)sizeof(junk));
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	CHECK_EQ(poll(&p, 1, 5000), 1);
	CHECK(recv(fd, junk, sizeof(junk), 0) <= 0); /* closed by the listener */
	close(fd);
	quiet(sch, 100);
	free_id(l);
	rdma_destroy_event_channel(sch);
}

/* The wildcard: a listener on it serves the iWARP device the connection reaches, and an
 * id bound to it connects from the device its route picks, on the port it bound. */
static void test_wildcard(void)
{
	struct rdma_event_channel *sch = rdma_create_event_channel();
	struct rdma_event_channel *cch = rdma_create_event_channel();
	struct sockaddr_in any = sin_of("0.0.0.0", 0), src = sin_of(CLI_ADDR, 0), dst;
	struct rdma_cm_id *l, *c, *child;
	struct rdma_cm_event *ev;
	uint16_t cport;

	CHECK_EQ(rdma_create_id(sch, &l, NULL, RDMA_PS_TCP), 0);
	CHECK(rdma_bind_addr(l, (struct sockaddr *)&any) == 0);
	CHECK_EQ(rdma_listen(l, 4), 0);
	CHECK(l->verbs == NULL);
	dst = sin_of(SRV_ADDR, ntohs(rdma_get_src_port(l)));

	CHECK_EQ(rdma_create_id(cch, &c, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_bind_addr(c, (struct sockaddr *)&any), 0);
	cport = ntohs(rdma_get_src_port(c));
	CHECK_EQ(rdma_resolve_addr(c, (struct sockaddr *)&src, (struct sockaddr *)&dst, 2000), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ADDR_RESOLVED)), 0);
	CHECK_EQ(rdma_resolve_route(c, 2000), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ROUTE_RESOLVED)), 0);
	make_qp(c);
	connect_with(c, "from-any", 1, 1);
	ev = expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	child = ev->id;
	CHECK(child->verbs && child->verbs->device->transport_type == IBV_TRANSPORT_IWARP);
	CHECK_EQ(ntohs(rdma_get_dst_port(child)), cport);
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	make_qp(child);
	CHECK_EQ(rdma_accept(child, NULL), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ESTABLISHED)), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(sch, RDMA_CM_EVENT_ESTABLISHED)), 0);
	CHECK_EQ(rdma_disconnect(c), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(sch, RDMA_CM_EVENT_DISCONNECTED)), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_DISCONNECTED)), 0);
	free_id(child);
	free_id(c);
	free_id(l);
	rdma_destroy_event_channel(sch);
	rdma_destroy_event_channel(cch);
}

static void *sync_server(void *arg)
{
	struct rdma_event_channel *sch = arg;
	struct rdma_cm_event *ev = expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	struct rdma_cm_id *child = ev->id;

	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	make_qp(child);
	CHECK_EQ(rdma_accept(child, NULL), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(sch, RDMA_CM_EVENT_ESTABLISHED)), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(sch, RDMA_CM_EVENT_DISCONNECTED)), 0);
	free_id(child);
	return NULL;
}

/* An id without a channel (rdma_create_ep's): each call waits for its event. */
static void test_sync_connect(void)
{
	struct rdma_event_channel *sch = rdma_create_event_channel();
	struct sockaddr_in src = sin_of(CLI_ADDR, 0);
	struct sockaddr_in dst;
	struct rdma_cm_id *l, *c;
	uint16_t port;
	pthread_t t;

	l = server(sch, &port);
	dst = sin_of(SRV_ADDR, port);
	CHECK_EQ(pthread_create(&t, NULL, sync_server, sch), 0);
	CHECK_EQ(rdma_create_id(NULL, &c, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_resolve_addr(c, (struct sockaddr *)&src, (struct sockaddr *)&dst, 2000), 0);
	CHECK_EQ(rdma_resolve_route(c, 2000), 0);
	make_qp(c);
	CHECK_EQ(rdma_connect(c, NULL), 0);
	CHECK_EQ(c->event->event, RDMA_CM_EVENT_ESTABLISHED);
	CHECK_EQ(rdma_disconnect(c), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	free_id(c);
	free_id(l);
	rdma_destroy_event_channel(sch);
}

static bool no_event(void *ctx, struct urnic_dev *d, const struct urnic_cm_event *ev)
{
	(void)ctx, (void)d, (void)ev;
	return false;
}

/* An iWARP device refuses to open the IB CM (dev/cm.h): no QP 1, no rdma_cm port space
 * of its own; the wildcard listener above held its port on none of them. */
static void test_no_ib_cm(void)
{
	struct urnic_dev_cm_sink sink = { no_event, NULL };
	struct urnic_dev **all;
	int n = urnic_dev_cm_devices(&all);

	CHECK_EQ(n, 2);
	for (int i = 0; i < n; i++)
		CHECK_EQ(urnic_dev_cm_open(all[i], &sink), -EPROTONOSUPPORT);
}

int main(void)
{
	struct ibv_context **devs;
	pthread_t rx;
	int n;

	devs = rdma_get_devices(&n);
	CHECK(devs && n == 2);
	for (int i = 0; i < n; i++)
		CHECK_EQ(devs[i]->device->transport_type, IBV_TRANSPORT_IWARP);
	rdma_free_devices(devs);
	CHECK_EQ(pthread_create(&rx, NULL, fake_rx, NULL), 0);
	RUN(test_connect_accept_disconnect);
	RUN(test_accept_negotiates);
	RUN(test_closed_at_once);
	RUN(test_reject);
	RUN(test_no_listener);
	RUN(test_peer_gone_or_silent);
	RUN(test_bad_frame);
	RUN(test_wildcard);
	RUN(test_sync_connect);
	RUN(test_no_ib_cm);
	return 0;
}
