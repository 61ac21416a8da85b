// SPDX-License-Identifier: MIT
/*
 * test_cm_hostile.c - a device's connection manager (dev/cm.h) against a peer that sends
 * it whatever it likes over plain UDP: packets to QP 1 that are no MAD, MADs the codec
 * refuses, messages for comm IDs nobody holds, a REP never asked for, a DREQ for nothing
 * (answered with a DREP, as Linux's cm_issue_drep), a REQ for no listener (REJ 8) and a
 * flood of REQs against a listener's backlog. Each is refused and counted under its own
 * name, the CM holds no more connections than the backlog, and it still serves a good
 * REQ afterwards. Run with URNIC_ADDR naming one address; the peer is that address + 1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "dev_counter.h"
#include "dev/cm.h"
#include "wire/byteorder.h"
#include "wire/cma.h"
#include "wire/mad.h"

enum { BACKLOG = 8, FLOOD = 200, PORT = 7177 };

static struct urnic_dev *dev;
static int peer_fd;
static uint8_t peer_ip[4];
static uint32_t peer_psn;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned requests;
static uint32_t req_conns[BACKLOG + 2];

static bool on_event(void *ctx, struct urnic_dev *d, const struct urnic_cm_event *ev)
{
	(void)ctx;
	(void)d;
	pthread_mutex_lock(&mu);
	if (ev->type == URNIC_CM_EVENT_CONNECT_REQUEST && requests < BACKLOG + 2)
		req_conns[requests++] = ev->conn;
	pthread_mutex_unlock(&mu);
	return true;
}

static const struct urnic_dev_cm_sink sink = { on_event, NULL };

/* Waits until counter c reaches want; returns its value then (or at the deadline). */
static uint64_t wait_ctr(enum urnic_counter c, uint64_t want)
{
	for (int i = 0; i < 2000 && dev_counter(dev, c) < want; i++)
		usleep(1000);
	return dev_counter(dev, c);
}

/* Sends a RoCEv2 packet from the peer: BTH (opcode, DestQP 1), DETH (qkey, sqpn),
 * payload, pad, an ICRC the device accepts (IP ID 0: the socket sets DF). */
static void send_raw(uint8_t opcode, uint32_t qkey, uint32_t sqpn, const void *payload,
		     uint32_t len)
{
	struct urnic_pkt h = { 0 };
	struct urnic_icrc_flow flow = { .sport = URNIC_ROCE_UDP_PORT,
					.dport = URNIC_ROCE_UDP_PORT };
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(URNIC_ROCE_UDP_PORT) };
	uint8_t buf[512];
	struct urnic_frag frag;
	uint32_t pad = (4 - (len & 3)) & 3;
	ssize_t n;

	h.bth.opcode = opcode;
	h.bth.pkey = 0xffff;
	h.bth.dqpn = URNIC_GSI_QPN;
	h.bth.psn = peer_psn++ & 0xffffff;
	h.bth.pad = (uint8_t)pad;
	h.deth.qkey = qkey;
	h.deth.sqpn = sqpn;
	n = urnic_pkt_encode_hdr(&h, buf, sizeof(buf));
	CHECK(n > 0 && (size_t)n + len + pad + 4 <= sizeof(buf));
	memcpy(buf + n, payload, len);
	memset(buf + n + len, 0, pad);
	memcpy(flow.src, peer_ip, 4);
	memcpy(flow.dst, dev->addr, 4);
	frag = (struct urnic_frag){ buf, (size_t)n + len + pad };
	urnic_put_le32(buf + frag.len, urnic_icrc_flow(&flow, &frag, 1, frag.len));
	memcpy(&to.sin_addr, dev->addr, 4);
	CHECK(sendto(peer_fd, buf, frag.len + 4, 0, (struct sockaddr *)&to, sizeof(to)) ==
	      (ssize_t)(frag.len + 4));
}

static void send_mad(const struct urnic_cm_mad *mad)
{
	uint8_t b[URNIC_MAD_BYTES];

	CHECK_EQ(urnic_cm_encode(mad, b, sizeof(b)), URNIC_MAD_BYTES);
	send_raw(URNIC_OP_UD_SEND_ONLY, URNIC_GSI_QKEY, URNIC_GSI_QPN, b, sizeof(b));
}

/* The next CM MAD the device sends the peer, decoded; false after 2 s without one. */
static bool recv_mad(struct urnic_cm_mad *mad)
{
	struct timeval tv = { 2, 0 };
	uint8_t buf[512];
	struct urnic_pkt pkt;
	ssize_t n;

	setsockopt(peer_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = recv(peer_fd, buf, sizeof(buf), 0);
	if (n <= 0)
		return false;
	CHECK(urnic_pkt_decode(&pkt, buf, (size_t)n) > 0);
	CHECK(urnic_cm_decode_pkt(mad, &pkt, NULL) == URNIC_MAD_BYTES);
	return true;
}

static void req(struct urnic_cm_mad *m, uint32_t comm_id, uint16_t port)
{
	struct urnic_cm_req *r = &m->msg.req;

	urnic_cm_mad_init(m, URNIC_CM_ATTR_REQ, 0x1000 + comm_id);
	r->local_comm_id = comm_id;
	r->service_id = urnic_cma_service_id(URNIC_RDMA_PS_TCP, port);
	r->local_ca_guid = 0x1122334455667788ull;
	r->local_qpn = 0x100 + (comm_id & 0xfff);
	r->starting_psn = 0x123;
	r->remote_cm_response_timeout = 20;
	r->local_cm_response_timeout = 20;
	r->retry_count = 7;
	r->rnr_retry_count = 7;
	r->max_cm_retries = 15;
	r->path_mtu = 3;
	r->pkey = 0xffff;
	r->primary.hop_limit = 64;
	r->primary.local_ack_timeout = 18;
	r->primary.remote_gid[10] = r->primary.remote_gid[11] = 0xff;
	memcpy(r->primary.remote_gid + 12, dev->addr, 4);
	r->primary.local_gid[10] = r->primary.local_gid[11] = 0xff;
	memcpy(r->primary.local_gid + 12, peer_ip, 4);
}

static void test_not_mads(void)
{
	uint8_t junk[URNIC_MAD_BYTES] = { 1, 7, 2, 3 };
	uint64_t not_mad = dev_counter(dev, URNIC_CTR_drop_gsi_not_mad);
	uint64_t qkey = dev_counter(dev, URNIC_CTR_drop_gsi_bad_qkey);
	uint64_t refused = dev_counter(dev, URNIC_CTR_drop_gsi_refused);
	uint64_t decode = dev_counter(dev, URNIC_CTR_cm_drop_decode);

	send_raw(URNIC_OP_UD_SEND_ONLY, URNIC_GSI_QKEY, 1, junk, 255); /* a byte short */
	send_raw(URNIC_OP_UD_SEND_ONLY, URNIC_GSI_QKEY, 1, junk, 0);
	send_raw(URNIC_OP_UD_SEND_ONLY_WITH_IMMEDIATE, URNIC_GSI_QKEY, 1, junk, sizeof(junk));
	send_raw(URNIC_OP_UD_SEND_ONLY, URNIC_GSI_QKEY, 0x42, junk, sizeof(junk)); /* not QP 1 */
	send_raw(URNIC_OP_UD_SEND_ONLY, 0x11111111, 1, junk, sizeof(junk));
	send_raw(URNIC_OP_UD_SEND_ONLY, URNIC_GSI_QKEY, 1, junk, sizeof(junk)); /* no CM MAD */
	CHECK_EQ(wait_ctr(URNIC_CTR_drop_gsi_not_mad, not_mad + 4), not_mad + 4);
	CHECK_EQ(wait_ctr(URNIC_CTR_drop_gsi_bad_qkey, qkey + 1), qkey + 1);
	CHECK_EQ(wait_ctr(URNIC_CTR_drop_gsi_refused, refused + 1), refused + 1);
	CHECK_EQ(dev_counter(dev, URNIC_CTR_cm_drop_decode), decode + 1);
}

/* Messages for comm IDs nobody here holds: dropped, a DREQ answered with a DREP. */
static void test_unknown_ids(void)
{
	static const uint16_t attrs[] = { URNIC_CM_ATTR_REP, URNIC_CM_ATTR_RTU, URNIC_CM_ATTR_MRA,
					  URNIC_CM_ATTR_REJ, URNIC_CM_ATTR_DREP };
	uint64_t unknown = dev_counter(dev, URNIC_CTR_cm_drop_unknown_conn);
	uint64_t drep = dev_counter(dev, URNIC_CTR_cm_drep_unknown);
	struct urnic_cm_mad m;

	for (unsigned i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		urnic_cm_mad_init(&m, attrs[i], 0x77 + i);
		/* Every such message starts with the two comm IDs (IBTA 12.6). */
		m.msg.rtu.local_comm_id = 0x5150 + i;
		m.msg.rtu.remote_comm_id = 0x00abcdef; /* slot 0's bits, no connection */
		if (attrs[i] == URNIC_CM_ATTR_REP) {
			m.msg.rep.local_qpn = 0x99;
			m.msg.rep.rnr_retry_count = 7;
		}
		if (attrs[i] == URNIC_CM_ATTR_REJ)
			m.msg.rej.reason = 28;
		send_mad(&m);
	}
	urnic_cm_mad_init(&m, URNIC_CM_ATTR_DREQ, 0x99);
	m.msg.dreq.local_comm_id = 0x6160;
	m.msg.dreq.remote_comm_id = 0x00abcdef;
	m.msg.dreq.remote_qpn_eecn = 0x123;
	send_mad(&m);
	CHECK(recv_mad(&m));
	CHECK_EQ(m.hdr.attr_id, URNIC_CM_ATTR_DREP);
	CHECK_EQ(m.msg.drep.remote_comm_id, 0x6160);
	CHECK_EQ(wait_ctr(URNIC_CTR_cm_drop_unknown_conn, unknown + 5), unknown + 5);
	CHECK_EQ(dev_counter(dev, URNIC_CTR_cm_drep_unknown), drep + 1);
}

static uint32_t conns(void)
{
	uint64_t now;
	struct urnic_cm *cm = urnic_dev_cm_begin(dev, &now);
	uint32_t n = urnic_cm_conns_in_use(cm);

	urnic_dev_cm_end(dev);
	return n;
}

static void test_req_no_listener(void)
{
	struct urnic_cm_mad m;

	req(&m, 0x4242, PORT + 1);
	send_mad(&m);
	CHECK(recv_mad(&m));
	CHECK_EQ(m.hdr.attr_id, URNIC_CM_ATTR_REJ);
	CHECK_EQ(m.msg.rej.reason, URNIC_CM_REJ_INVALID_SERVICE_ID);
	CHECK_EQ(m.msg.rej.remote_comm_id, 0x4242);
	CHECK_EQ(conns(), 0);
}

/* FLOOD REQs from distinct comm IDs: BACKLOG connections wait for the application, the
 * rest are dropped without a REJ (as Linux's ucma), nothing else is held. */
static void test_req_flood(uint32_t listener)
{
	uint64_t full = dev_counter(dev, URNIC_CTR_cm_req_backlog_full);
	struct urnic_cm_mad m;
	struct urnic_cm *cm;
	uint64_t now;

	for (uint32_t i = 0; i < FLOOD; i++) {
		req(&m, 0x10000 + i, PORT);
		send_mad(&m);
		if (i % 32 == 31)
			usleep(2000); /* the socket's buffer, not the CM, is not under test */
	}
	CHECK_EQ(wait_ctr(URNIC_CTR_cm_req_backlog_full, full + FLOOD - BACKLOG),
		 full + FLOOD - BACKLOG);
	CHECK_EQ(conns(), BACKLOG);
	pthread_mutex_lock(&mu);
	CHECK_EQ(requests, BACKLOG);
	pthread_mutex_unlock(&mu);
	/* The application answers them all: a REJ each, and the backlog is free again. */
	cm = urnic_dev_cm_begin(dev, &now);
	for (uint32_t i = 0; i < BACKLOG; i++) {
		CHECK_EQ(urnic_cm_reject(cm, req_conns[i], URNIC_CM_REJ_CONSUMER_DEFINED, NULL, 0,
					 now),
			 0);
		CHECK_EQ(urnic_cm_destroy(cm, req_conns[i], now), 0);
	}
	urnic_dev_cm_end(dev);
	for (uint32_t i = 0; i < BACKLOG; i++) {
		CHECK(recv_mad(&m));
		CHECK_EQ(m.hdr.attr_id, URNIC_CM_ATTR_REJ);
		CHECK_EQ(m.msg.rej.reason, URNIC_CM_REJ_CONSUMER_DEFINED);
	}
	CHECK_EQ(conns(), 0);
	/* And serves a good REQ after it. */
	req(&m, 0x20000, PORT);
	send_mad(&m);
	for (int i = 0; i < 2000 && conns() == 0; i++)
		usleep(1000);
	CHECK_EQ(conns(), 1);
	pthread_mutex_lock(&mu);
	CHECK_EQ(requests, BACKLOG + 1);
	pthread_mutex_unlock(&mu);
	(void)listener;
}

int main(void)
{
	struct urnic_dev **devs;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(URNIC_ROCE_UDP_PORT) };
	int pmtu = IP_PMTUDISC_DO;
	struct urnic_cm *cm;
	uint32_t listener;
	uint64_t now;

	CHECK(urnic_dev_cm_devices(&devs) >= 1);
	dev = devs[0];
	CHECK_EQ(urnic_dev_cm_open(dev, &sink), 0);
	memcpy(peer_ip, dev->addr, 4);
	peer_ip[3]++;
	peer_fd = socket(AF_INET, SOCK_DGRAM, 0);
	CHECK(peer_fd >= 0);
	CHECK(setsockopt(peer_fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)) == 0);
	memcpy(&sin.sin_addr, peer_ip, 4);
	CHECK(bind(peer_fd, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	cm = urnic_dev_cm_begin(dev, &now);
	CHECK_EQ(urnic_cm_listen(cm, urnic_cma_service_id(URNIC_RDMA_PS_TCP, PORT), BACKLOG, 0,
				 &listener),
		 0);
	urnic_dev_cm_end(dev);

	test_not_mads();
	test_unknown_ids();
	test_req_no_listener();
	test_req_flood(listener);
	urnic_dev_cm_close(dev);
	printf("ok\n");
	return 0;
}
