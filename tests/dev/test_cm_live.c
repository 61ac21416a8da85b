// SPDX-License-Identifier: MIT
/*
 * test_cm_live.c - two devices' connection managers over lo (dev/cm.h): CM MADs leave
 * QP 1 of one device as UD SENDs and reach the other's CM through the engine's GSI
 * (engine/gsi.c); connect, accept, RTU, disconnect and both TimeWaits, a REQ for no
 * listener rejected with reason 8, and packets for QP 1 that are not MADs dropped and
 * counted. Run with URNIC_ADDR naming two addresses.
 */
#include <pthread.h>
#include <string.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "dev_counter.h"
#include "dev/cm.h"
#include "wire/cma.h"

struct got {
	struct urnic_dev *dev;
	struct urnic_cm_event ev;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static struct got log_[64];
static unsigned nlog, taken;

static bool on_event(void *ctx, struct urnic_dev *d, const struct urnic_cm_event *ev)
{
	(void)ctx;
	pthread_mutex_lock(&mu);
	if (nlog < 64)
		log_[nlog++] = (struct got){ d, *ev };
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	/* The listener whose requests nobody will answer (test_refused). */
	return !(ev->type == URNIC_CM_EVENT_CONNECT_REQUEST && ev->user == 0xdead);
}

static const struct urnic_dev_cm_sink sink = { on_event, NULL };

/* The next event in order, of any type and device. */
static struct urnic_cm_event next_any(void)
{
	struct timespec until;
	struct got g;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&mu);
	while (taken == nlog)
		CHECK(pthread_cond_timedwait(&cv, &mu, &until) == 0);
	g = log_[taken++];
	pthread_mutex_unlock(&mu);
	return g.ev;
}

/* The next event in order; it must be of type t and come from device d. */
static struct urnic_cm_event next_event(struct urnic_dev *d, enum urnic_cm_event_type t)
{
	struct timespec until;
	struct got g;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&mu);
	while (taken == nlog)
		CHECK(pthread_cond_timedwait(&cv, &mu, &until) == 0);
	g = log_[taken++];
	pthread_mutex_unlock(&mu);
	if (g.dev != d || g.ev.type != t)
		fprintf(stderr, "event %s from %s, expected %s from %s\n",
			urnic_cm_event_name(g.ev.type), g.dev->name, urnic_cm_event_name(t),
			d->name);
	CHECK(g.dev == d && g.ev.type == t);
	return g.ev;
}

static void connect_param(struct urnic_dev *from, struct urnic_dev *to, uint16_t port,
			  struct urnic_cm_connect_param *p)
{
	*p = (struct urnic_cm_connect_param){
		.service_id = urnic_cma_service_id(URNIC_RDMA_PS_TCP, port),
		.qpn = 0x11,
		.starting_psn = 0x05b7fc,
		.transport = URNIC_CM_TRANSPORT_RC,
		.responder_resources = 1,
		.initiator_depth = 1,
		.remote_cm_response_timeout = URNIC_CM_RDMA_RESPONSE_TIMEOUT,
		.local_cm_response_timeout = URNIC_CM_RDMA_RESPONSE_TIMEOUT,
		.packet_life_time = URNIC_CM_RDMA_PACKET_LIFETIME,
		.max_cm_retries = URNIC_CM_RDMA_MAX_RETRIES,
		.retry_count = 7,
		.rnr_retry_count = 7,
		.path_mtu = 3,
		.pkey = 0xffff,
		.hop_limit = 64,
		.private_data = "req?",
		.private_data_len = 4,
		.user = 0xa,
	};
	memcpy(p->peer.gid, to->gid[1], 16);
	memcpy(p->local_gid, from->gid[1], 16);
}

static void test_connect_disconnect(struct urnic_dev *a, struct urnic_dev *b)
{
	struct urnic_cm_connect_param p;
	struct urnic_cm_accept_param ap = { .qpn = 0x22,
					    .starting_psn = 0x13e344,
					    .responder_resources = 1,
					    .initiator_depth = 1,
					    .rnr_retry_count = 7 };
	struct urnic_cm_conn_info info;
	struct urnic_cm_event ev, ev2;
	uint32_t listener, conn, pconn;
	struct urnic_cm *cm;
	uint64_t now;

	cm = urnic_dev_cm_begin(b, &now);
	CHECK_EQ(urnic_cm_listen(cm, urnic_cma_service_id(URNIC_RDMA_PS_TCP, 7174), 4, 0xb,
				 &listener),
		 0);
	urnic_dev_cm_end(b);
	connect_param(a, b, 7174, &p);
	cm = urnic_dev_cm_begin(a, &now);
	CHECK_EQ(urnic_cm_connect(cm, &p, now, &conn), 0);
	urnic_dev_cm_end(a);

	ev = next_event(b, URNIC_CM_EVENT_CONNECT_REQUEST);
	CHECK_EQ(ev.user, 0xb);
	CHECK_EQ(ev.mad.msg.req.local_qpn, 0x11);
	CHECK_EQ(memcmp(ev.peer.gid, a->gid[1], 16), 0);
	CHECK_EQ(ev.peer.udp_sport, 0xd872); /* QP 1's port, as rxe's */
	pconn = ev.conn;
	cm = urnic_dev_cm_begin(b, &now);
	CHECK_EQ(urnic_cm_accept(cm, pconn, &ap, now), 0);
	urnic_dev_cm_end(b);

	ev = next_event(a, URNIC_CM_EVENT_CONNECT_RESPONSE);
	CHECK_EQ(ev.conn, conn);
	CHECK_EQ(ev.user, 0xa);
	cm = urnic_dev_cm_begin(a, &now);
	CHECK_EQ(urnic_cm_query(cm, conn, &info), 0);
	CHECK_EQ(info.remote_qpn, 0x22);
	CHECK_EQ(info.sq_psn, 0x13e344);
	CHECK_EQ(urnic_cm_establish(cm, conn, NULL, 0, now), 0);
	urnic_dev_cm_end(a);
	next_event(a, URNIC_CM_EVENT_ESTABLISHED);
	next_event(b, URNIC_CM_EVENT_ESTABLISHED);

	cm = urnic_dev_cm_begin(a, &now);
	CHECK_EQ(urnic_cm_disconnect(cm, conn, NULL, 0, now), 0);
	urnic_dev_cm_end(a);
	next_event(b, URNIC_CM_EVENT_DISCONNECTED);
	cm = urnic_dev_cm_begin(b, &now);
	CHECK_EQ(urnic_cm_disconnect(cm, pconn, NULL, 0, now), 0);
	urnic_dev_cm_end(b);
	next_event(a, URNIC_CM_EVENT_DISCONNECTED);
	/* TimeWait runs on the engine threads' timers: nobody calls in meanwhile. The two
	 * started within a pass of each other and may end in either order. */
	ev = next_any();
	CHECK_EQ(ev.type, URNIC_CM_EVENT_TIMEWAIT_EXIT);
	ev2 = next_any();
	CHECK_EQ(ev2.type, URNIC_CM_EVENT_TIMEWAIT_EXIT);
	CHECK(ev.conn == pconn ? ev2.conn == conn : ev.conn == conn && ev2.conn == pconn);

	cm = urnic_dev_cm_begin(a, &now);
	CHECK_EQ(urnic_cm_destroy(cm, conn, now), 0);
	CHECK_EQ(urnic_cm_conns_in_use(cm), 0);
	urnic_dev_cm_end(a);
	cm = urnic_dev_cm_begin(b, &now);
	CHECK_EQ(urnic_cm_destroy(cm, pconn, now), 0);
	CHECK_EQ(urnic_cm_unlisten(cm, listener), 0);
	CHECK_EQ(urnic_cm_conns_in_use(cm), 0);
	urnic_dev_cm_end(b);
	/* REQ, REP, RTU, DREQ, DREP: five MADs, each taken once. */
	CHECK_EQ(dev_counter(a, URNIC_CTR_tx_gsi_mads) + dev_counter(b, URNIC_CTR_tx_gsi_mads), 5);
	CHECK_EQ(dev_counter(a, URNIC_CTR_rx_gsi_mads) + dev_counter(b, URNIC_CTR_rx_gsi_mads), 5);
	/* The CM's own counters are the device's cm_* ones. */
	CHECK_EQ(dev_counter(a, URNIC_CTR_cm_rx_mads) + dev_counter(b, URNIC_CTR_cm_rx_mads), 5);
	CHECK_EQ(dev_counter(a, URNIC_CTR_cm_tx_mads), 3);
}

static void test_no_listener(struct urnic_dev *a, struct urnic_dev *b)
{
	struct urnic_cm_connect_param p;
	struct urnic_cm_event ev;
	struct urnic_cm *cm;
	uint32_t conn;
	uint64_t now;

	connect_param(a, b, 7175, &p);
	cm = urnic_dev_cm_begin(a, &now);
	CHECK_EQ(urnic_cm_connect(cm, &p, now, &conn), 0);
	urnic_dev_cm_end(a);
	ev = next_event(a, URNIC_CM_EVENT_REJECTED);
	CHECK_EQ(ev.status, URNIC_CM_REJ_INVALID_SERVICE_ID);
	cm = urnic_dev_cm_begin(a, &now);
	CHECK_EQ(urnic_cm_destroy(cm, conn, now), 0);
	urnic_dev_cm_end(a);
}

/* A request the sink refuses (its listener is going) is rejected by the device at once,
 * and the connection is gone from the table. */
static void test_refused(struct urnic_dev *a, struct urnic_dev *b)
{
	struct urnic_cm_connect_param p;
	struct urnic_cm_event ev;
	struct urnic_cm *cm;
	uint32_t listener, conn;
	uint64_t now;

	cm = urnic_dev_cm_begin(b, &now);
	CHECK_EQ(urnic_cm_listen(cm, urnic_cma_service_id(URNIC_RDMA_PS_TCP, 7178), 4, 0xdead,
				 &listener),
		 0);
	urnic_dev_cm_end(b);
	connect_param(a, b, 7178, &p);
	cm = urnic_dev_cm_begin(a, &now);
	CHECK_EQ(urnic_cm_connect(cm, &p, now, &conn), 0);
	urnic_dev_cm_end(a);
	next_event(b, URNIC_CM_EVENT_CONNECT_REQUEST);
	ev = next_event(a, URNIC_CM_EVENT_REJECTED);
	CHECK_EQ(ev.status, URNIC_CM_REJ_CONSUMER_DEFINED);
	cm = urnic_dev_cm_begin(b, &now);
	CHECK_EQ(urnic_cm_conns_in_use(cm), 0);
	CHECK_EQ(urnic_cm_unlisten(cm, listener), 0);
	urnic_dev_cm_end(b);
	cm = urnic_dev_cm_begin(a, &now);
	CHECK_EQ(urnic_cm_destroy(cm, conn, now), 0);
	urnic_dev_cm_end(a);
}

/* A UD SEND_ONLY to QP 1 with a 4-byte payload and a good ICRC is no MAD. */
static void test_not_mad(struct urnic_dev *b)
{
	/* BTH: UD_SEND_ONLY, P_Key 0xffff, DestQP 1, PSN 0; DETH: GSI Q_Key, source QP 1. */
	uint8_t pkt[] = { 0x64, 0x00, 0xff, 0xff, 0, 0, 0,   1,	  0,   0,   0, 0, 0x80, 0x01,
			  0x00, 0x00, 0,    0,	  0, 1, 'n', 'o', 'p', 'e', 0, 0, 0,	0 };
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(4791) };
	uint64_t before = dev_counter(b, URNIC_CTR_drop_gsi_not_mad) +
			  dev_counter(b, URNIC_CTR_drop_bad_icrc);
	uint64_t taken_before = dev_counter(b, URNIC_CTR_rx_gsi_mads);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	memcpy(&to.sin_addr, b->addr, 4);
	CHECK(fd >= 0);
	CHECK(sendto(fd, pkt, sizeof(pkt), 0, (struct sockaddr *)&to, sizeof(to)) ==
	      (ssize_t)sizeof(pkt));
	close(fd);
	for (int i = 0; i < 1000; i++) {
		if (dev_counter(b, URNIC_CTR_drop_gsi_not_mad) +
			    dev_counter(b, URNIC_CTR_drop_bad_icrc) >
		    before)
			break;
		usleep(1000);
	}
	/* The ICRC is not computed here: a packet that fails it never reaches QP 1, and one
	 * that passed would be refused as no MAD. Either way it is counted, never taken. */
	CHECK(dev_counter(b, URNIC_CTR_drop_gsi_not_mad) + dev_counter(b, URNIC_CTR_drop_bad_icrc) >
	      before);
	CHECK_EQ(dev_counter(b, URNIC_CTR_rx_gsi_mads), taken_before);
}

static void pipe_put(int fd, char c)
{
	CHECK(write(fd, &c, 1) == 1);
}

static char pipe_get(int fd)
{
	char c = 0;

	CHECK(read(fd, &c, 1) == 1);
	return c;
}

/* The listener of the shared address: the second process on it (slot 1). */
static int shared_listener(struct urnic_dev *d, int rd, int wr)
{
	struct urnic_cm_accept_param ap = {
		.qpn = 0x122, .starting_psn = 7, .responder_resources = 1, .initiator_depth = 1
	};
	struct urnic_cm_port held, again;
	struct urnic_cm_event ev;
	uint16_t port = 7176;
	struct urnic_cm *cm;
	uint32_t listener;
	uint64_t now;

	CHECK_EQ(urnic_dev_cm_open(d, &sink), 0);
	CHECK_EQ(d->udp->share.slot, 1);
	CHECK_EQ(urnic_dev_cm_port_hold(d, URNIC_RDMA_PS_TCP, &port, &held), 0);
	CHECK_EQ(urnic_dev_cm_port_hold(d, URNIC_RDMA_PS_TCP, &port, &again), -EADDRINUSE);
	cm = urnic_dev_cm_begin(d, &now);
	CHECK_EQ(urnic_cm_listen(cm, urnic_cma_service_id(URNIC_RDMA_PS_TCP, port), 4, 0xb,
				 &listener),
		 0);
	urnic_dev_cm_end(d);
	pipe_put(wr, 'L');
	ev = next_event(d, URNIC_CM_EVENT_CONNECT_REQUEST);
	cm = urnic_dev_cm_begin(d, &now);
	CHECK_EQ(urnic_cm_accept(cm, ev.conn, &ap, now), 0);
	urnic_dev_cm_end(d);
	next_event(d, URNIC_CM_EVENT_ESTABLISHED);
	next_event(d, URNIC_CM_EVENT_DISCONNECTED);
	CHECK_EQ(pipe_get(rd), 'D');
	urnic_dev_cm_port_release(&held);
	urnic_dev_cm_close(d);
	return 0;
}

/* Two processes on one address (share.h): the first (slot 0) receives every REQ and
 * must hand the second's over by the port it holds (its RTU and DREQ reach it by their
 * comm ID's slot); the second holds the port against the first. */
static int test_shared(void)
{
	struct urnic_dev **devs;
	int to_child[2], to_parent[2];
	struct urnic_cm_connect_param p;
	struct urnic_cm_port busy;
	struct urnic_cm *cm;
	uint16_t port = 7176;
	uint32_t conn;
	uint64_t now;
	pid_t pid;
	int st;

	CHECK(pipe(to_child) == 0 && pipe(to_parent) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		CHECK_EQ(pipe_get(to_child[0]), 'G');
		CHECK(urnic_dev_cm_devices(&devs) >= 1);
		_exit(shared_listener(devs[0], to_child[0], to_parent[1]));
	}
	CHECK(urnic_dev_cm_devices(&devs) >= 1);
	CHECK_EQ(urnic_dev_cm_open(devs[0], &sink), 0);
	CHECK_EQ(devs[0]->udp->share.slot, 0);
	pipe_put(to_child[1], 'G');
	CHECK_EQ(pipe_get(to_parent[0]), 'L');
	/* The port space is the address's: the other process holds 7176. */
	CHECK_EQ(urnic_dev_cm_port_hold(devs[0], URNIC_RDMA_PS_TCP, &port, &busy), -EADDRINUSE);
	connect_param(devs[0], devs[0], 7176, &p);
	cm = urnic_dev_cm_begin(devs[0], &now);
	CHECK_EQ(urnic_cm_connect(cm, &p, now, &conn), 0);
	urnic_dev_cm_end(devs[0]);
	next_event(devs[0], URNIC_CM_EVENT_CONNECT_RESPONSE);
	cm = urnic_dev_cm_begin(devs[0], &now);
	CHECK_EQ(urnic_cm_establish(cm, conn, NULL, 0, now), 0);
	CHECK_EQ(urnic_cm_disconnect(cm, conn, NULL, 0, now), 0);
	urnic_dev_cm_end(devs[0]);
	next_event(devs[0], URNIC_CM_EVENT_ESTABLISHED);
	pipe_put(to_child[1], 'D');
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(dev_counter(devs[0], URNIC_CTR_rx_forwarded) >= 1); /* the REQ */
	urnic_dev_cm_close(devs[0]);
	printf("ok shared\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct urnic_dev **devs;
	int n;

	if (argc > 1 && strcmp(argv[1], "shared") == 0)
		return test_shared();
	n = urnic_dev_cm_devices(&devs);

	CHECK(n >= 2);
	CHECK_EQ(urnic_dev_cm_open(devs[0], &sink), 0);
	CHECK_EQ(urnic_dev_cm_open(devs[1], &sink), 0);
	CHECK_EQ(urnic_dev_cm_open(devs[1], &(struct urnic_dev_cm_sink){ on_event, &n }), -EINVAL);
	test_connect_disconnect(devs[0], devs[1]);
	test_no_listener(devs[0], devs[1]);
	test_refused(devs[0], devs[1]);
	test_not_mad(devs[1]);
	urnic_dev_cm_close(devs[0]);
	urnic_dev_cm_close(devs[1]);
	CHECK(devs[0]->cm == NULL);
	printf("ok\n");
	return 0;
}
