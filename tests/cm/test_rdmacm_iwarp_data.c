/* SPDX-License-Identifier: MIT */
/*
 * test_rdmacm_iwarp_data.c - an rdma_cm connection between two iWARP devices of the
 * process (iwarp:127.0.51.4 server, iwarp:127.0.51.5 client) carries data: the buffers'
 * addresses and rkeys travel in the MPA private data both ways, then the client SENDs,
 * WRITEs into the server's buffer and READs it back, and a disconnect reaches both sides.
 * The whole stack runs: the CM's MPA setup, the hand-over to the device, the engine's
 * RDMAP/DDP over the TCP connection.
 *
 *   client 127.0.51.5 --- TCP: MPA Request/Reply, then FPDUs ---> server 127.0.51.4
 */
#include <arpa/inet.h>
#include <poll.h>
#include <string.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "check.h"
#include "cm_expect.h"
#include "verbs_loop.h"

#define SRV_ADDR "127.0.51.4"
#define CLI_ADDR "127.0.51.5"

enum { BUF = 4096 };

/* What each side tells the other in its private data. */
struct remote {
	uint64_t addr;
	uint32_t rkey;
	uint32_t zero; /* no padding goes on the wire uninitialised */
};

struct side {
	struct rdma_cm_id *id;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t buf[BUF];
};

/* Every event this test waits for comes within 10 s. */
static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type want)
{
	return expect_within(ch, want, 10000);
}

/* The side's CQ, QP (INIT) and registered buffer. */
static void setup(struct side *s)
{
	struct ibv_qp_init_attr a = { .qp_type = IBV_QPT_RC };

	s->cq = ibv_create_cq(s->id->verbs, 16, NULL, NULL, 0);
	CHECK(s->cq);
	a.send_cq = a.recv_cq = s->cq;
	a.cap.max_send_wr = a.cap.max_recv_wr = 8;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	CHECK_EQ(rdma_create_qp(s->id, NULL, &a), 0);
	s->mr = ibv_reg_mr(s->id->pd, s->buf, BUF,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ);
	CHECK(s->mr);
}

static struct remote me(struct side *s)
{
	return (struct remote){ .addr = (uintptr_t)s->buf, .rkey = s->mr->rkey };
}

/* The next completion of cq, within 5 s, which must be a success. */
static struct ibv_wc completion(struct ibv_cq *cq)
{
	struct ibv_wc wc = loop_next_wc_within(cq, 5000);

	if (wc.status != IBV_WC_SUCCESS)
		fprintf(stderr, "completion %s\n", ibv_wc_status_str(wc.status));
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	return wc;
}

static void post(struct side *s, enum ibv_wr_opcode op, uint32_t off, uint32_t len,
		 const struct remote *r, uint32_t roff)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf + off,
			       .length = len,
			       .lkey = s->mr->lkey };
	struct ibv_send_wr wr = { .opcode = op, .sg_list = &sge, .num_sge = 1 }, *bad;

	wr.send_flags = IBV_SEND_SIGNALED;
	if (r) {
		wr.wr.rdma.remote_addr = r->addr + roff;
		wr.wr.rdma.rkey = r->rkey;
	}
	CHECK_EQ(ibv_post_send(s->id->qp, &wr, &bad), 0);
	CHECK_EQ(completion(s->cq).opcode, op == IBV_WR_SEND	     ? IBV_WC_SEND
					   : op == IBV_WR_RDMA_WRITE ? IBV_WC_RDMA_WRITE
								     : IBV_WC_RDMA_READ);
}

static void test_send_write_read(void)
{
	static struct side srv, cli;
	struct rdma_event_channel *sch = rdma_create_event_channel();
	struct rdma_event_channel *cch = rdma_create_event_channel();
	struct sockaddr_in sa = sin_of(SRV_ADDR, 0), ca = sin_of(CLI_ADDR, 0), dst;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1 };
	struct ibv_sge rsge;
	struct ibv_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct remote to_srv, to_cli, got;
	struct rdma_cm_id *l;
	struct rdma_cm_event *ev;

	CHECK(sch && cch);
	CHECK_EQ(rdma_create_id(sch, &l, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_bind_addr(l, (struct sockaddr *)&sa), 0);
	CHECK_EQ(l->verbs->device->transport_type, IBV_TRANSPORT_IWARP);
	CHECK_EQ(rdma_listen(l, 4), 0);
	dst = sin_of(SRV_ADDR, ntohs(rdma_get_src_port(l)));

	CHECK_EQ(rdma_create_id(cch, &cli.id, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_resolve_addr(cli.id, (struct sockaddr *)&ca, (struct sockaddr *)&dst, 2000),
		 0);
	CHECK_EQ(rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ADDR_RESOLVED)), 0);
	CHECK_EQ(rdma_resolve_route(cli.id, 2000), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ROUTE_RESOLVED)), 0);
	setup(&cli);
	to_srv = me(&cli);
	p.private_data = &to_srv;
	p.private_data_len = sizeof(to_srv);
	CHECK_EQ(rdma_connect(cli.id, &p), 0);

	ev = expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	srv.id = ev->id;
	CHECK_EQ(ev->param.conn.private_data_len, sizeof(got));
	memcpy(&got, ev->param.conn.private_data, sizeof(got));
	CHECK_EQ(got.rkey, to_srv.rkey);
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	setup(&srv);
	rsge = (struct ibv_sge){ .addr = (uintptr_t)srv.buf, .length = 64, .lkey = srv.mr->lkey };
	CHECK_EQ(ibv_post_recv(srv.id->qp, &rwr, &rbad), 0);
	to_cli = me(&srv);
	p.private_data = &to_cli;
	CHECK_EQ(rdma_accept(srv.id, &p), 0);
	ev = expect(cch, RDMA_CM_EVENT_ESTABLISHED);
	memcpy(&got, ev->param.conn.private_data, sizeof(got));
	CHECK_EQ(got.addr, to_cli.addr);
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(sch, RDMA_CM_EVENT_ESTABLISHED)), 0);

	/* SEND: lands in the server's receive. */
	memcpy(cli.buf, "iwarp-send", 11);
	post(&cli, IBV_WR_SEND, 0, 11, NULL, 0);
	CHECK_EQ(completion(srv.cq).byte_len, 11);
	CHECK(!memcmp(srv.buf, "iwarp-send", 11));
	/* WRITE into the server's buffer at 1024, READ it back into the client's at 2048. */
	for (int i = 0; i < 1000; i++)
		cli.buf[100 + i] = (uint8_t)(i * 7 + 1);
	post(&cli, IBV_WR_RDMA_WRITE, 100, 1000, &got, 1024);
	post(&cli, IBV_WR_RDMA_READ, 2048, 1000, &got, 1024);
	CHECK(!memcmp(srv.buf + 1024, cli.buf + 100, 1000));
	CHECK(!memcmp(cli.buf + 2048, cli.buf + 100, 1000));

	CHECK_EQ(rdma_disconnect(cli.id), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(sch, RDMA_CM_EVENT_DISCONNECTED)), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_DISCONNECTED)), 0);
	for (struct side *s = &srv; s; s = s == &srv ? &cli : NULL) {
		rdma_destroy_qp(s->id);
		CHECK_EQ(ibv_dereg_mr(s->mr), 0);
		CHECK_EQ(ibv_destroy_cq(s->cq), 0);
		CHECK_EQ(rdma_destroy_id(s->id), 0);
	}
	CHECK_EQ(rdma_destroy_id(l), 0);
	rdma_destroy_event_channel(sch);
	rdma_destroy_event_channel(cch);
}

int main(void)
{
	RUN(test_send_write_read);
	return 0;
}
