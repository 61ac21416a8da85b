// SPDX-License-Identifier: MIT
/*
 * test_iw_conn.c - an iWARP device's TCP connections (dev/iw_conn.h), live: two iWARP
 * devices in one process, a TCP connection made here between them and handed to an RC
 * QP on each (urnic_dev_iw_attach, as the connection manager does once MPA is done),
 * then SEND, WRITE and READ with the data checked (the target's application calls
 * nothing for WRITE and READ: its engine thread serves them), a disconnect heard by
 * both sinks, a peer's reset and a peer's bytes that are no FPDUs (Terminate, FIN)
 * heard by the sink, and the verbs of an iWARP QP as siw's. Run with
 * URNIC_ADDR=iwarp:127.0.50.2,iwarp:127.0.50.3:
 *
 *   urnic0 (127.0.50.2) QP a  ---- TCP 127.0.50.2:* -> 127.0.50.3:* ----  QP b urnic1 (127.0.50.3)
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "dev/iw_conn.h"
#include "verbs/verbs.h"

#define BUF_BYTES (512 * 1024)

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
};

static struct side a, b;

/* What the sinks heard: the device, the user pointer given to attach, the errno. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	struct urnic_dev *d;
	void *user;
	int err;
} heard[16];
static int nheard;

static void closed(void *ctx, struct urnic_dev *d, void *user, int err)
{
	(void)ctx;
	pthread_mutex_lock(&mu);
	if (nheard < 16)
		heard[nheard] = (typeof(heard[0])){ d, user, err };
	nheard++;
	pthread_mutex_unlock(&mu);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static struct ibv_wc poll_one(struct ibv_cq *cq)
{
	uint64_t until = now_ms() + 10000;
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0)
		CHECK(now_ms() < until);
	CHECK_EQ(n, 1);
	return wc;
}

static void open_side(struct side *s, struct ibv_device *dev)
{
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RC,
					 .cap = { .max_send_wr = 16,
						  .max_recv_wr = 16,
						  .max_send_sge = 2,
						  .max_recv_sge = 2 } };
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT,
				    .qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
						       IBV_ACCESS_REMOTE_WRITE |
						       IBV_ACCESS_REMOTE_READ };

	CHECK(s->ctx = ibv_open_device(dev));
	CHECK(s->pd = ibv_alloc_pd(s->ctx));
	CHECK(s->cq = ibv_create_cq(s->ctx, 64, NULL, NULL, 0));
	init.send_cq = init.recv_cq = s->cq;
	CHECK(s->qp = ibv_create_qp(s->pd, &init));
	/* As rdma_cm moves an iWARP QP: state, access and port (siw ignores the port). */
	attr.port_num = 1;
	CHECK_EQ(ibv_modify_qp(s->qp, &attr, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PORT), 0);
	CHECK(s->buf = calloc(1, BUF_BYTES));
	CHECK(s->mr = ibv_reg_mr(s->pd, s->buf, BUF_BYTES,
				 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					 IBV_ACCESS_REMOTE_READ));
}

static int bound_socket(const char *ip)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	CHECK(fd >= 0);
	CHECK_EQ(inet_pton(AF_INET, ip, &sa.sin_addr), 1);
	CHECK_EQ(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* The connection the CM would have made: 127.0.50.2 connects to 127.0.50.3, whose
 * receive buffer is rcvbuf bytes (0: the kernel's). */
static void tcp_pair(int *fa, int *fb, int rcvbuf)
{
	int l = bound_socket("127.0.50.3");
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);

	if (rcvbuf)
		CHECK_EQ(setsockopt(l, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)), 0);
	CHECK_EQ(listen(l, 1), 0);
	CHECK_EQ(getsockname(l, (struct sockaddr *)&sa, &len), 0);
	*fa = bound_socket("127.0.50.2");
	CHECK_EQ(connect(*fa, (struct sockaddr *)&sa, sizeof(sa)), 0);
	CHECK((*fb = accept(l, NULL, NULL)) >= 0);
	close(l);
}

static uint32_t mss_of(int fd)
{
	int mss = 0;
	socklen_t len = sizeof(mss);

	CHECK_EQ(getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, &len), 0);
	CHECK(mss > 0);
	return (uint32_t)mss;
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;

	CHECK_EQ(ibv_query_qp(qp, &attr, IBV_QP_STATE, &init), 0);
	return attr.qp_state;
}

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7 + (i >> 9));
}

static void post_send(struct ibv_send_wr *wr, uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)a.buf, len, a.mr->lkey };
	struct ibv_send_wr *bad;

	wr->sg_list = &sge;
	wr->num_sge = 1;
	wr->send_flags = IBV_SEND_SIGNALED;
	wr->wr.rdma.remote_addr = raddr;
	wr->wr.rdma.rkey = rkey;
	CHECK_EQ(ibv_post_send(a.qp, wr, &bad), 0);
}

/* urnic_dev_iw_attach on both ends: the QPs enter RTS with CRC on, the socket's MSS
 * and IRD/ORD 8. A second attach of the same QP is refused, the fd still the caller's. */
static void test_attach(void)
{
	struct urnic_dev_iw_sink sink = { closed, NULL };
	struct urnic_iw_conn_params pa, pb;
	int fa, fb;

	urnic_dev_iw_set_sink(urnic_ctx_dev(a.ctx), &sink);
	urnic_dev_iw_set_sink(urnic_ctx_dev(b.ctx), &sink);
	tcp_pair(&fa, &fb, 0);
	pa = (struct urnic_iw_conn_params){ .crc = true, .mss = mss_of(fa), .ird = 8, .ord = 8 };
	pb = (struct urnic_iw_conn_params){ .crc = true, .mss = mss_of(fb), .ird = 8, .ord = 8 };
	CHECK_EQ(urnic_dev_iw_attach(urnic_ctx_dev(a.ctx), &to_vqp(a.qp)->qp, fa, &pa, NULL, 0, &a),
		 0);
	CHECK_EQ(urnic_dev_iw_attach(urnic_ctx_dev(b.ctx), &to_vqp(b.qp)->qp, fb, &pb, NULL, 0, &b),
		 0);
	CHECK_EQ(qp_state(a.qp), IBV_QPS_RTS);
	CHECK_EQ(qp_state(b.qp), IBV_QPS_RTS);
	CHECK_EQ(urnic_dev_iw_attach(urnic_ctx_dev(a.ctx), &to_vqp(a.qp)->qp, fb, &pa, NULL, 0, &a),
		 -EISCONN);
}

/* A SEND larger than many FPDUs lands whole in the posted receive. */
static void test_send(void)
{
	struct ibv_sge rsge = { (uintptr_t)b.buf, BUF_BYTES, b.mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_SEND };
	const uint32_t len = 100000;
	struct ibv_wc wc;

	CHECK_EQ(ibv_post_recv(b.qp, &rwr, &rbad), 0);
	fill(a.buf, len, 1);
	post_send(&wr, len, 0, 0);
	wc = poll_one(a.cq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_SEND);
	wc = poll_one(b.cq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_RECV);
	CHECK_EQ(wc.wr_id, 2);
	CHECK_EQ(wc.byte_len, len);
	CHECK(memcmp(a.buf, b.buf, len) == 0);
}

/* A WRITE is placed in b's memory with nothing called on b's side. */
static void test_write(void)
{
	struct ibv_send_wr wr = { .wr_id = 3, .opcode = IBV_WR_RDMA_WRITE };
	const uint32_t len = 300000;
	struct ibv_wc wc;

	memset(b.buf, 0, BUF_BYTES);
	fill(a.buf, len, 2);
	post_send(&wr, len, (uintptr_t)b.buf + 4096, b.mr->rkey);
	wc = poll_one(a.cq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_RDMA_WRITE);
	/* The WRITE completes once TCP took it (RFC 5040 5.1); it lands a little later. */
	for (uint64_t until = now_ms() + 10000; memcmp(a.buf, b.buf + 4096, len) != 0;)
		CHECK(now_ms() < until);
	CHECK_EQ(b.buf[4095], 0);
	CHECK_EQ(b.buf[4096 + len], 0);
}

/* A READ brings b's memory back, b's engine thread answering alone. */
static void test_read(void)
{
	struct ibv_send_wr wr = { .wr_id = 4, .opcode = IBV_WR_RDMA_READ };
	const uint32_t len = 200000;
	struct ibv_wc wc;

	fill(b.buf, len, 3);
	memset(a.buf, 0, BUF_BYTES);
	post_send(&wr, len, (uintptr_t)b.buf, b.mr->rkey);
	wc = poll_one(a.cq);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_RDMA_READ);
	CHECK_EQ(wc.byte_len, len);
	CHECK(memcmp(a.buf, b.buf, len) == 0);
}

/* What RFC 5040 lacks, and what siw refuses, is refused. */
static void test_verbs_as_siw(void)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND_WITH_IMM }, *bad;
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_UD,
					 .send_cq = a.cq,
					 .recv_cq = a.cq,
					 .cap = { .max_send_wr = 1, .max_recv_wr = 1 } };
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RTS };
	struct ibv_device_attr dattr;

	CHECK(!ibv_create_qp(a.pd, &init));
	CHECK_EQ(errno, EOPNOTSUPP);
	init.qp_type = IBV_QPT_UC;
	CHECK(!ibv_create_qp(a.pd, &init));
	CHECK_EQ(errno, EOPNOTSUPP);
	CHECK_EQ(ibv_post_send(a.qp, &wr, &bad), EINVAL);
	CHECK(bad == &wr);
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	CHECK_EQ(ibv_post_send(a.qp, &wr, &bad), EINVAL);
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	CHECK_EQ(ibv_post_send(a.qp, &wr, &bad), EINVAL);
	CHECK_EQ(ibv_query_device(a.ctx, &dattr), 0);
	CHECK_EQ(dattr.atomic_cap, IBV_ATOMIC_NONE);
	CHECK_EQ(a.ctx->device->transport_type, IBV_TRANSPORT_IWARP);
	CHECK_EQ(a.ctx->device->node_type, IBV_NODE_RNIC);
	/* RTS comes from the CM's attach only; RTR is none of iWARP's. */
	init.qp_type = IBV_QPT_RC;
	struct ibv_qp *qp = ibv_create_qp(a.pd, &init);

	CHECK(qp);
	attr.qp_state = IBV_QPS_INIT;
	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE), 0);
	attr.qp_state = IBV_QPS_RTS;
	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE), EINVAL);
	attr.qp_state = IBV_QPS_RTR;
	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE), EINVAL);
	attr.qp_state = IBV_QPS_ERR;
	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE), 0);
	attr.qp_state = IBV_QPS_RESET;
	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE), 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

/* a disconnects: its FIN reaches b, whose sink hears 0 and whose QP is in error; b's
 * close ends a's, whose sink hears 0 too. */
static void test_disconnect(void)
{
	uint64_t until = now_ms() + 10000;
	int n;

	urnic_dev_iw_disconnect(urnic_ctx_dev(a.ctx), &to_vqp(a.qp)->qp);
	do {
		pthread_mutex_lock(&mu);
		n = nheard;
		pthread_mutex_unlock(&mu);
		CHECK(now_ms() < until);
		usleep(1000);
	} while (n < 2);
	usleep(20000);
	pthread_mutex_lock(&mu);
	CHECK_EQ(nheard, 2);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < 2; i++) {
		struct side *s = heard[i].user;

		CHECK(s == &a || s == &b);
		CHECK(heard[i].d == urnic_ctx_dev(s->ctx));
		CHECK_EQ(heard[i].err, 0);
	}
	CHECK(heard[0].user != heard[1].user);
	CHECK_EQ(qp_state(a.qp), IBV_QPS_ERR);
	CHECK_EQ(qp_state(b.qp), IBV_QPS_ERR);
}

/* A fresh RC QP in INIT on a's device, attached to one end of a new pair whose other
 * end the test keeps as a plain socket (*peer). */
static struct ibv_qp *attach_raw(int *peer, void *user, int rcvbuf)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.send_cq = a.cq,
		.recv_cq = a.cq,
		.cap = { .max_send_wr = 32, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 }
	};
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT };
	struct urnic_iw_conn_params p = { .crc = true, .ird = 8, .ord = 8 };
	struct ibv_qp *qp;
	int fd;

	CHECK(qp = ibv_create_qp(a.pd, &init));
	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE), 0);
	tcp_pair(&fd, peer, rcvbuf);
	/* mss 0: the device takes the socket's own. */
	CHECK_EQ(urnic_dev_iw_attach(urnic_ctx_dev(a.ctx), &to_vqp(qp)->qp, fd, &p, NULL, 0, user),
		 0);
	CHECK_EQ(qp_state(qp), IBV_QPS_RTS);
	return qp;
}

/* The sink's next word after `before` words, within 10 s. */
static int wait_heard(int before, void *user)
{
	uint64_t until = now_ms() + 10000;
	int n, err;

	do {
		pthread_mutex_lock(&mu);
		n = nheard;
		pthread_mutex_unlock(&mu);
		CHECK(now_ms() < until);
		usleep(1000);
	} while (n == before);
	CHECK_EQ(n, before + 1);
	CHECK(heard[before].user == user);
	err = heard[before].err;
	return err;
}

/* The peer resets the connection: the QP enters error, the sink hears ECONNRESET. */
static void test_peer_reset(void)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	int peer, before = nheard;
	struct ibv_qp *qp = attach_raw(&peer, &test_peer_reset, 0);

	CHECK_EQ(setsockopt(peer, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
	close(peer);
	CHECK_EQ(wait_heard(before, &test_peer_reset), ECONNRESET);
	CHECK_EQ(qp_state(qp), IBV_QPS_ERR);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

/* The peer sends bytes that are no FPDU: the QP's stream fails, its Terminate goes out
 * and then its FIN; the peer's close then ends it, the sink hearing EPROTO. */
static void test_peer_garbage(void)
{
	static const uint8_t junk[64] = { 0x00, 0x30, 0xff, 0xff };
	int peer, before = nheard;
	struct ibv_qp *qp = attach_raw(&peer, &test_peer_garbage, 0);
	uint8_t buf[4096];
	size_t got = 0;
	ssize_t r;

	CHECK_EQ(write(peer, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	while ((r = read(peer, buf, sizeof(buf))) > 0) /* the Terminate, then our FIN */
		got += (size_t)r;
	CHECK_EQ(r, 0);
	CHECK(got > 0);
	CHECK_EQ(qp_state(qp), IBV_QPS_ERR);
	close(peer);
	CHECK_EQ(wait_heard(before, &test_peer_garbage), EPROTO);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

/* ibv_modify_qp to SQD, as librdmacm's rdma_disconnect moves an iWARP QP: a graceful
 * close (siw's CLOSING): FIN to the peer, then error; the peer's close is an orderly end. */
static void test_modify_sqd(void)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_SQD };
	int peer, before = nheard;
	struct ibv_qp *qp = attach_raw(&peer, &test_modify_sqd, 0);
	uint8_t buf[64];

	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE), 0);
	CHECK_EQ(read(peer, buf, sizeof(buf)), 0); /* the FIN, nothing before it */
	CHECK_EQ(qp_state(qp), IBV_QPS_ERR);
	close(peer);
	CHECK_EQ(wait_heard(before, &test_modify_sqd), 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

/* WRITEs beyond what the peer's socket holds: the socket fills (tcp_tx_full), the QP
 * waits for room with the WRITEs TCP has not taken outstanding (RFC 5040 5.1: a WRITE
 * completes once the LLP has it), and once the peer reads, every byte goes and every
 * WRITE completes, in order. */
static void test_socket_full(void)
{
	const uint64_t *ctr = urnic_ctx_dev(a.ctx)->eng->stats.counters;
	uint64_t full0 = ctr[URNIC_CTR_tcp_tx_full], total = 0, want = 16ull * BUF_BYTES;
	int peer, before = nheard;
	struct ibv_qp *qp = attach_raw(&peer, &test_socket_full, 64 * 1024);
	static uint8_t sink[1 << 16];
	uint64_t until = now_ms() + 10000;
	struct ibv_wc wc;
	int done = 0;

	for (int i = 0; i < 16; i++) {
		struct ibv_sge sge = { (uintptr_t)a.buf, BUF_BYTES, a.mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 100 + (uint64_t)i,
					  .sg_list = &sge,
					  .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE,
					  .send_flags = IBV_SEND_SIGNALED },
				   *bad;

		wr.wr.rdma.remote_addr = 0x10000;
		wr.wr.rdma.rkey = 0x1234;
		CHECK_EQ(ibv_post_send(qp, &wr, &bad), 0);
	}
	/* Poll (which drives the pipeline) until the socket was found full and the
	 * completions of what TCP took are all in. */
	for (;;) {
		bool full = ctr[URNIC_CTR_tcp_tx_full] != full0;

		CHECK(now_ms() < until);
		if (ibv_poll_cq(a.cq, 1, &wc) == 1) {
			CHECK_EQ(wc.status, IBV_WC_SUCCESS);
			CHECK_EQ(wc.wr_id, 100 + (uint64_t)done++);
		} else if (full) {
			break;
		}
	}
	CHECK(done < 16);
	usleep(10000);
	CHECK_EQ(ibv_poll_cq(a.cq, 1, &wc), 0); /* the socket is still full */
	while (total < want) {			/* FPDUs: the payload and its headers, CRCs, pads */
		ssize_t r = read(peer, sink, sizeof(sink));

		CHECK(r > 0);
		total += (uint64_t)r;
	}
	while (done < 16) {
		wc = poll_one(a.cq);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK_EQ(wc.wr_id, 100 + (uint64_t)done);
		done++;
	}
	close(peer);
	CHECK_EQ(wait_heard(before, &test_socket_full), 0);
	CHECK_EQ(qp_state(qp), IBV_QPS_ERR);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

int main(void)
{
	struct ibv_device **list;
	int n;

	list = ibv_get_device_list(&n);
	CHECK(list && n == 2);
	open_side(&a, list[0]);
	open_side(&b, list[1]);
	RUN(test_attach);
	RUN(test_send);
	RUN(test_write);
	RUN(test_read);
	RUN(test_verbs_as_siw);
	RUN(test_disconnect);
	RUN(test_peer_reset);
	RUN(test_peer_garbage);
	RUN(test_modify_sqd);
	RUN(test_socket_full);
	for (struct side *s = &a; s; s = s == &a ? &b : NULL) {
		CHECK_EQ(ibv_destroy_qp(s->qp), 0);
		CHECK_EQ(ibv_dereg_mr(s->mr), 0);
		CHECK_EQ(ibv_destroy_cq(s->cq), 0);
		CHECK_EQ(ibv_dealloc_pd(s->pd), 0);
		CHECK_EQ(ibv_close_device(s->ctx), 0);
		free(s->buf);
	}
	ibv_free_device_list(list);
	return 0;
}
