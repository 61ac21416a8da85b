/* SPDX-License-Identifier: MIT */
/*
 * test_rdmacm_iwarp_term.c - an RDMA WRITE and an RDMA READ naming an STag the server
 * never gave, between two iWARP devices of the process, each on a connection of its own,
 * seen as siw sees them:
 *
 *   client 127.0.72.2 --TCP--> relay 127.0.72.3 --TCP--> server 127.0.72.1
 *                              (keeps the server's bytes)
 *
 * On the wire (decoded from the relay's copy of the server's stream): the server's one
 * Terminate, QN 2, MSN 1, MO 0, with RFC 5041 7's DDP tagged "invalid STag" (1/1/0) and
 * the WRITE's DDP header for the WRITE, RFC 5040 7's RDMAP remote protection "invalid
 * STag" (0/1/0) and the Read Request's header for the READ (siw_send_terminate's M, D, R
 * and DDP Segment Length). Completions and events as siw gives them: the WRITE completes
 * successfully (siw completes a WRITE once sent), the READ with WR_FLUSH_ERR (siw_sq_flush
 * of its ORQ); the server raises IBV_EVENT_QP_REQ_ERR for the READ (siw_qp_sq_process)
 * and no event for the WRITE's unknown STag (siw_proc_write), the client none for the
 * Terminate (siw_proc_terminate); both QPs end in ERR, both ids see DISCONNECTED, and
 * the counters files say what was refused, sent and received.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "check.h"
#include "cm_expect.h"
#include "counters_file.h"
#include "verbs_loop.h"

#define SRV_ADDR "127.0.72.1"
#define CLI_ADDR "127.0.72.2"
#define RELAY_ADDR "127.0.72.3"

enum { BUF = 4096, WIRE = 1 << 16, LEN = 300 };

struct remote {
	uint64_t addr;
	uint32_t rkey;
	uint32_t zero;
};

struct side {
	struct rdma_cm_id *id;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t buf[BUF];
};

/* ---- the relay: one TCP connection passed through, the server's bytes kept ---- */

struct relay {
	int lfd;
	struct sockaddr_in to;
	uint8_t wire[WIRE]; /* server to client */
	size_t n;
};

static void *relay_run(void *arg)
{
	struct relay *r = arg;
	int c = accept(r->lfd, NULL, NULL), s = socket(AF_INET, SOCK_STREAM, 0);
	struct pollfd p[2] = { { .fd = c, .events = POLLIN }, { .fd = s, .events = POLLIN } };
	bool open[2] = { true, true };
	uint8_t b[4096];

	CHECK(c >= 0 && s >= 0);
	CHECK_EQ(connect(s, (struct sockaddr *)&r->to, sizeof(r->to)), 0);
	while (open[0] || open[1]) {
		CHECK(poll(p, 2, 20000) > 0);
		for (int i = 0; i < 2; i++) {
			ssize_t k;

			if (!open[i] || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			k = read(p[i].fd, b, sizeof(b));
			if (k <= 0) { /* end (or reset): the other way ends too */
				shutdown(p[!i].fd, SHUT_WR);
				open[i] = false;
				p[i].fd = -1;
				continue;
			}
			if (i == 1) {
				CHECK(r->n + (size_t)k <= WIRE);
				memcpy(r->wire + r->n, b, (size_t)k);
				r->n += (size_t)k;
			}
			CHECK_EQ(write(i ? c : s, b, (size_t)k), k);
		}
	}
	close(c);
	close(s);
	return NULL;
}

/* ---- the server's stream: MPA Reply, then FPDUs (RFC 5044 7.1, 4) ---- */

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The ULPDU of the only Terminate in the stream (RDMAP opcode 7), its length in *len. */
static const uint8_t *find_term(const struct relay *r, size_t *len)
{
	const uint8_t *w = r->wire, *t = NULL;
	size_t off = 20, terms = 0;

	CHECK(r->n >= 20 && !memcmp(w, "MPA ID Rep Frame", 16));
	CHECK_EQ(w[16] & 0x20, 0); /* not rejected */
	off += be16(w + 18);
	while (off + 2 <= r->n) {
		size_t ulpdu = be16(w + off);
		size_t fpdu = (2 + ulpdu + 3) / 4 * 4 + 4; /* pad, CRC field */

		CHECK(ulpdu >= 2 && off + fpdu <= r->n);
		if ((w[off + 3] & 0x0f) == 7) {
			t = w + off + 2;
			*len = ulpdu;
			terms++;
		}
		off += fpdu;
	}
	CHECK_EQ(off, r->n);
	CHECK_EQ(terms, 1);
	return t;
}

/* The Terminate's DDP header (RFC 5041 4.3, 5040 4.8: untagged, last, QN 2, MSN 1, MO 0)
 * and control (Layer, EType, Error Code, M, D, R); returns the DDP Segment Length field,
 * the copied header after it in *hdr. */
static uint16_t check_term(const uint8_t *u, size_t len, uint8_t layer, uint8_t etype, uint8_t code,
			   bool r_bit, const uint8_t **hdr, size_t *hdr_len)
{
	CHECK(len >= 26);
	CHECK_EQ(u[0], 0x41); /* T 0, L 1, DDP version 1 */
	CHECK_EQ(u[1], 0x47); /* RDMAP version 1, opcode Terminate */
	CHECK_EQ(be32(u + 6), 2);
	CHECK_EQ(be32(u + 10), 1);
	CHECK_EQ(be32(u + 14), 0);
	CHECK_EQ(u[18], layer << 4 | etype);
	CHECK_EQ(u[19], code);
	CHECK_EQ(u[20], 0x80 | 0x40 | (r_bit ? 0x20 : 0)); /* M, D, R */
	CHECK_EQ(u[21], 0);
	*hdr = u + 24;
	*hdr_len = len - 24;
	return be16(u + 22);
}

/* ---- the connection ---- */

static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type want)
{
	return expect_within(ch, want, 10000);
}

static void setup(struct side *s)
{
	struct ibv_qp_init_attr a = { .qp_type = IBV_QPT_RC };
	int fl = fcntl(s->id->verbs->async_fd, F_GETFL);

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
	CHECK_EQ(fcntl(s->id->verbs->async_fd, F_SETFL, fl | O_NONBLOCK), 0);
}

/* The next async event of ctx within ms (false: none came). */
static bool async_within(struct ibv_context *ctx, int ms, struct ibv_async_event *ev)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };

	if (poll(&p, 1, ms) != 1)
		return false;
	CHECK_EQ(ibv_get_async_event(ctx, ev), 0);
	ibv_ack_async_event(ev);
	return true;
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	CHECK_EQ(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia), 0);
	return a.qp_state;
}

static uint64_t counter(struct ibv_context *ctx, enum urnic_ctrfile_counter c)
{
	struct urnic_ctrfile f;
	char path[300];

	CHECK_EQ(urnic_ctrfile_path(path, sizeof(path), getpid(), ibv_get_device_name(ctx->device)),
		 0);
	CHECK_EQ(urnic_ctrfile_read(path, getpid(), &f), 0);
	CHECK(f.ncounters > (uint32_t)c);
	return f.values[c];
}

struct conn {
	struct rdma_event_channel *sch, *cch;
	struct rdma_cm_id *l;
	struct side srv, cli;
	struct remote at_srv; /* the server's buffer, as its private data gave it */
	struct relay relay;
	pthread_t relay_thread;
};

static void relay_open(struct conn *c, uint16_t srv_port, struct sockaddr_in *dst)
{
	struct sockaddr_in a = sin_of(RELAY_ADDR, 0);
	socklen_t alen = sizeof(a);

	c->relay.lfd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(c->relay.lfd >= 0);
	CHECK_EQ(bind(c->relay.lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	CHECK_EQ(listen(c->relay.lfd, 1), 0);
	CHECK_EQ(getsockname(c->relay.lfd, (struct sockaddr *)&a, &alen), 0);
	c->relay.to = sin_of(SRV_ADDR, srv_port);
	*dst = a;
	CHECK_EQ(pthread_create(&c->relay_thread, NULL, relay_run, &c->relay), 0);
}

static void connect_pair(struct conn *c)
{
	struct sockaddr_in sa = sin_of(SRV_ADDR, 0), ca = sin_of(CLI_ADDR, 0), dst;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1 };
	struct ibv_sge rsge;
	struct ibv_recv_wr rwr = { .wr_id = 77, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct remote to_srv, to_cli;
	struct rdma_cm_event *ev;

	c->sch = rdma_create_event_channel();
	c->cch = rdma_create_event_channel();
	CHECK(c->sch && c->cch);
	CHECK_EQ(rdma_create_id(c->sch, &c->l, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_bind_addr(c->l, (struct sockaddr *)&sa), 0);
	CHECK_EQ(c->l->verbs->device->transport_type, IBV_TRANSPORT_IWARP);
	CHECK_EQ(rdma_listen(c->l, 4), 0);
	relay_open(c, ntohs(rdma_get_src_port(c->l)), &dst);

	CHECK_EQ(rdma_create_id(c->cch, &c->cli.id, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(
		rdma_resolve_addr(c->cli.id, (struct sockaddr *)&ca, (struct sockaddr *)&dst, 2000),
		0);
	CHECK_EQ(rdma_ack_cm_event(expect(c->cch, RDMA_CM_EVENT_ADDR_RESOLVED)), 0);
	CHECK_EQ(rdma_resolve_route(c->cli.id, 2000), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(c->cch, RDMA_CM_EVENT_ROUTE_RESOLVED)), 0);
	setup(&c->cli);
	to_srv = (struct remote){ .addr = (uintptr_t)c->cli.buf, .rkey = c->cli.mr->rkey };
	p.private_data = &to_srv;
	p.private_data_len = sizeof(to_srv);
	CHECK_EQ(rdma_connect(c->cli.id, &p), 0);

	ev = expect(c->sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	c->srv.id = ev->id;
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	setup(&c->srv);
	rsge = (struct ibv_sge){ .addr = (uintptr_t)c->srv.buf,
				 .length = 64,
				 .lkey = c->srv.mr->lkey };
	CHECK_EQ(ibv_post_recv(c->srv.id->qp, &rwr, &rbad), 0);
	to_cli = (struct remote){ .addr = (uintptr_t)c->srv.buf, .rkey = c->srv.mr->rkey };
	p.private_data = &to_cli;
	CHECK_EQ(rdma_accept(c->srv.id, &p), 0);
	ev = expect(c->cch, RDMA_CM_EVENT_ESTABLISHED);
	memcpy(&c->at_srv, ev->param.conn.private_data, sizeof(c->at_srv));
	CHECK_EQ(c->at_srv.rkey, to_cli.rkey);
	CHECK_EQ(rdma_ack_cm_event(ev), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(c->sch, RDMA_CM_EVENT_ESTABLISHED)), 0);
}

/* The client posts op of LEN bytes to the server's buffer + 512 under a wrong STag. */
static uint32_t post_bad(struct conn *c, enum ibv_wr_opcode op)
{
	struct side *s = &c->cli;
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf, .length = LEN, .lkey = s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 5, .opcode = op, .sg_list = &sge, .num_sge = 1 }, *bad;
	uint32_t stag = c->at_srv.rkey ^ 0x00ffff00; /* an index the server never gave */

	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = c->at_srv.addr + 512;
	wr.wr.rdma.rkey = stag;
	CHECK_EQ(ibv_post_send(s->id->qp, &wr, &bad), 0);
	return stag;
}

/* Both ends closed by the error: DISCONNECTED on both ids, both QPs in ERR, the
 * server's receive flushed, and whatever is posted now flushed too. */
static void after_error(struct conn *c)
{
	struct ibv_sge sge = { .addr = (uintptr_t)c->cli.buf,
			       .length = 8,
			       .lkey = c->cli.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 6,
				  .opcode = IBV_WR_SEND,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct ibv_wc wc;

	CHECK_EQ(rdma_ack_cm_event(expect(c->sch, RDMA_CM_EVENT_DISCONNECTED)), 0);
	CHECK_EQ(rdma_ack_cm_event(expect(c->cch, RDMA_CM_EVENT_DISCONNECTED)), 0);
	CHECK_EQ(qp_state(c->srv.id->qp), IBV_QPS_ERR);
	CHECK_EQ(qp_state(c->cli.id->qp), IBV_QPS_ERR);
	wc = loop_next_wc_within(c->srv.cq, 5000);
	CHECK_EQ(wc.wr_id, 77);
	CHECK_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
	CHECK_EQ(ibv_post_send(c->cli.id->qp, &wr, &bad), 0);
	wc = loop_next_wc_within(c->cli.cq, 5000);
	CHECK_EQ(wc.wr_id, 6);
	CHECK_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
}

static void close_pair(struct conn *c)
{
	struct ibv_async_event ev;

	CHECK_EQ(pthread_join(c->relay_thread, NULL), 0);
	close(c->relay.lfd);
	for (struct side *s = &c->srv; s; s = s == &c->srv ? &c->cli : NULL) {
		rdma_destroy_qp(s->id);
		CHECK_EQ(ibv_dereg_mr(s->mr), 0);
		CHECK_EQ(ibv_destroy_cq(s->cq), 0);
		CHECK(!async_within(s->id->verbs, 0, &ev));
		CHECK_EQ(rdma_destroy_id(s->id), 0);
	}
	CHECK_EQ(rdma_destroy_id(c->l), 0);
	rdma_destroy_event_channel(c->sch);
	rdma_destroy_event_channel(c->cch);
}

static void test_write_to_unknown_stag(void)
{
	static struct conn c;
	struct ibv_async_event ev;
	const uint8_t *u, *h;
	size_t len, hlen;
	uint64_t refused, sent, rcvd;
	uint32_t stag;
	struct ibv_wc wc;

	connect_pair(&c);
	refused = counter(c.srv.id->verbs, URNIC_CTRFILE_iw_refused_stag);
	sent = counter(c.srv.id->verbs, URNIC_CTRFILE_iw_term_sent);
	rcvd = counter(c.cli.id->verbs, URNIC_CTRFILE_iw_term_rcvd);
	memset(c.srv.buf, 0x5a, BUF);
	stag = post_bad(&c, IBV_WR_RDMA_WRITE);
	wc = loop_next_wc_within(c.cli.cq, 5000);
	CHECK_EQ(wc.wr_id, 5);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS); /* siw: a WRITE completes once sent */
	CHECK_EQ(wc.opcode, IBV_WC_RDMA_WRITE);
	after_error(&c);
	CHECK(!async_within(c.srv.id->verbs, 50, &ev)); /* siw_proc_write: none */
	CHECK(!async_within(c.cli.id->verbs, 0, &ev));	/* siw_proc_terminate: none */
	for (size_t i = 0; i < BUF; i++)
		CHECK_EQ(c.srv.buf[i], 0x5a);
	CHECK_EQ(counter(c.srv.id->verbs, URNIC_CTRFILE_iw_refused_stag), refused + 1);
	CHECK_EQ(counter(c.srv.id->verbs, URNIC_CTRFILE_iw_term_sent), sent + 1);
	CHECK_EQ(counter(c.cli.id->verbs, URNIC_CTRFILE_iw_term_rcvd), rcvd + 1);
	close_pair(&c);

	/* RFC 5041 7.2: DDP, tagged buffer, invalid STag; the WRITE's tagged header. */
	u = find_term(&c.relay, &len);
	CHECK_EQ(check_term(u, len, 1, 1, 0x00, false, &h, &hlen), LEN);
	CHECK_EQ(hlen, 14);
	CHECK_EQ(h[0], 0xc1); /* T, L, version 1 */
	CHECK_EQ(h[1], 0x40); /* RDMAP version 1, RDMA Write */
	CHECK_EQ(be32(h + 2), stag);
	CHECK_EQ(be64(h + 6), c.at_srv.addr + 512);
}

static void test_read_from_unknown_stag(void)
{
	static struct conn c;
	struct ibv_async_event ev;
	const uint8_t *u, *h;
	size_t len, hlen;
	uint64_t refused, sent, rcvd;
	uint32_t stag;
	struct ibv_wc wc;

	connect_pair(&c);
	refused = counter(c.srv.id->verbs, URNIC_CTRFILE_iw_refused_read_stag);
	sent = counter(c.srv.id->verbs, URNIC_CTRFILE_iw_term_sent);
	rcvd = counter(c.cli.id->verbs, URNIC_CTRFILE_iw_term_rcvd);
	memset(c.cli.buf, 0xa5, BUF);
	stag = post_bad(&c, IBV_WR_RDMA_READ);
	/* siw_qp_sq_process: a Read Response that cannot be made is IBV_EVENT_QP_REQ_ERR. */
	CHECK(async_within(c.srv.id->verbs, 5000, &ev));
	CHECK_EQ(ev.event_type, IBV_EVENT_QP_REQ_ERR);
	CHECK(ev.element.qp == c.srv.id->qp);
	wc = loop_next_wc_within(c.cli.cq, 5000);
	CHECK_EQ(wc.wr_id, 5);
	CHECK_EQ(wc.status, IBV_WC_WR_FLUSH_ERR); /* siw_sq_flush of the ORQ */
	after_error(&c);
	CHECK(!async_within(c.srv.id->verbs, 50, &ev));
	CHECK(!async_within(c.cli.id->verbs, 0, &ev));
	for (size_t i = 0; i < BUF; i++)
		CHECK_EQ(c.cli.buf[i], 0xa5);
	CHECK_EQ(counter(c.srv.id->verbs, URNIC_CTRFILE_iw_refused_read_stag), refused + 1);
	CHECK_EQ(counter(c.srv.id->verbs, URNIC_CTRFILE_iw_term_sent), sent + 1);
	CHECK_EQ(counter(c.cli.id->verbs, URNIC_CTRFILE_iw_term_rcvd), rcvd + 1);
	close_pair(&c);

	/* RFC 5040 7: RDMAP, remote protection, invalid STag; the Read Request whole
	 * (siw_send_terminate, in_tx: DDP Segment Length 0). */
	u = find_term(&c.relay, &len);
	CHECK_EQ(check_term(u, len, 0, 1, 0x00, true, &h, &hlen), 0);
	CHECK_EQ(hlen, 46);
	CHECK_EQ(h[0], 0x41);			/* untagged, L, version 1 */
	CHECK_EQ(h[1], 0x41);			/* RDMAP version 1, Read Request */
	CHECK_EQ(be32(h + 6), 1);		/* QN 1 */
	CHECK_EQ(be32(h + 10), 1);		/* MSN 1: the first Read Request */
	CHECK_EQ(be32(h + 14), 0);		/* MO 0 */
	CHECK_EQ(be32(h + 18), c.cli.mr->lkey); /* sink STag */
	CHECK_EQ(be64(h + 22), (uintptr_t)c.cli.buf);
	CHECK_EQ(be32(h + 30), LEN);
	CHECK_EQ(be32(h + 34), stag);
	CHECK_EQ(be64(h + 38), c.at_srv.addr + 512);
}

int main(void)
{
	RUN(test_write_to_unknown_stag);
	RUN(test_read_from_unknown_stag);
	return 0;
}
