/* SPDX-License-Identifier: MIT */
/*
 * iw_badstag.c - rping's exchange (rdma-core's librdmacm/examples/rping.c: the client
 * sends {buf, rkey, size} in a Send, the server RDMA READs that buffer) with one STag
 * made wrong, for run.sh's siw_badstag scenario against Linux's siw:
 *
 *   -s (server): reads the client's buffer with the STag it advertised, its key byte
 *      changed. The client's RNIC must answer with a Terminate (RFC 5040 7.4.1: RDMAP,
 *      Remote Protection Error, Invalid STag), which ends the connection: the READ is
 *      flushed with the rest of the send queue, IBV_WC_WR_FLUSH_ERR, as siw completes
 *      it (siw_sq_flush of its outstanding READs; urnic does the same, iw_term.c).
 *   -c (client): advertises its buffer with a wrong STag. The server's READ is refused
 *      here with that Terminate, and this side's QP goes to error: its posted receive
 *      is flushed (IBV_WC_WR_FLUSH_ERR).
 *
 * It takes rping's options (-s, -c, -a ADDR, -I ADDR, -p PORT; -v, -V, -C N and -S N are
 * accepted and ignored) so that run.sh starts it where it starts rping; -K keeps the
 * STag right, for a run of two of these (one wrong STag between them). Prints one
 * result line; exits 0 once the expected completion came, 1 otherwise, 2 on bad usage.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { TIMEOUT_MS = 60000, BUF_BYTES = 64, WR_SEND = 1, WR_RECV = 2 };

static uint32_t bad_key = 0x5a; /* xored into the STag's key byte; 0 with -K */

/* rping's advertisement, big-endian on the wire. */
struct rping_info {
	uint64_t buf;
	uint32_t rkey;
	uint32_t size;
};

static void die(const char *what)
{
	fprintf(stderr, "iw_badstag: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The next CM event, which must be want; its id in *id. */
static void expect_event(struct rdma_event_channel *ch, enum rdma_cm_event_type want,
			 struct rdma_cm_id **id)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, TIMEOUT_MS) != 1) {
		fprintf(stderr, "iw_badstag: no %s in %d s\n", rdma_event_str(want),
			TIMEOUT_MS / 1000);
		exit(1);
	}
	if (rdma_get_cm_event(ch, &ev))
		die("rdma_get_cm_event");
	if (ev->event != want) {
		fprintf(stderr, "iw_badstag: %s (status %d) where %s was due\n",
			rdma_event_str(ev->event), ev->status, rdma_event_str(want));
		exit(1);
	}
	if (id)
		*id = ev->id;
	rdma_ack_cm_event(ev);
}

/* The next completion, within the timeout. */
static struct ibv_wc poll_one(struct ibv_cq *cq)
{
	struct timespec t0, t;
	struct ibv_wc wc;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0)
			die("ibv_poll_cq");
		if (n == 1)
			return wc;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 > TIMEOUT_MS) {
			fprintf(stderr, "iw_badstag: no completion in %d s\n", TIMEOUT_MS / 1000);
			exit(1);
		}
		usleep(100);
	}
}

struct conn {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *info_mr, *buf_mr;
	struct rping_info info;
	uint8_t buf[BUF_BYTES];
};

/* PD, CQ, an RC QP on id, the advertisement's and the data buffer's regions, one
 * receive posted for the peer's Send. */
static void setup(struct conn *c, struct rdma_cm_id *id, int buf_access)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 2, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC
	};
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .wr_id = WR_RECV, .sg_list = &sge, .num_sge = 1 }, *bad;

	c->pd = ibv_alloc_pd(id->verbs);
	c->cq = c->pd ? ibv_create_cq(id->verbs, 8, NULL, NULL, 0) : NULL;
	if (!c->cq)
		die("ibv_alloc_pd/ibv_create_cq");
	qa.send_cq = qa.recv_cq = c->cq;
	if (rdma_create_qp(id, c->pd, &qa))
		die("rdma_create_qp");
	c->info_mr = ibv_reg_mr(c->pd, &c->info, sizeof(c->info), IBV_ACCESS_LOCAL_WRITE);
	c->buf_mr = ibv_reg_mr(c->pd, c->buf, sizeof(c->buf), buf_access);
	if (!c->info_mr || !c->buf_mr)
		die("ibv_reg_mr");
	sge = (struct ibv_sge){ (uintptr_t)&c->info, sizeof(c->info), c->info_mr->lkey };
	if (ibv_post_recv(id->qp, &rwr, &bad))
		die("ibv_post_recv");
}

static int server(struct rdma_event_channel *ch, const char *addr, const char *port)
{
	struct rdma_cm_id *listener, *id;
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1 };
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP }, *ai;
	struct conn c = { 0 };
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_RDMA_READ,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct ibv_wc wc;
	uint32_t rkey;

	if (rdma_getaddrinfo(addr, port, &hints, &ai))
		die("rdma_getaddrinfo");
	if (rdma_create_id(ch, &listener, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(listener, ai->ai_src_addr) || rdma_listen(listener, 1))
		die("listen");
	printf("iw_badstag: server listening on %s port %s\n", addr, port);
	expect_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST, &id);
	setup(&c, id, IBV_ACCESS_LOCAL_WRITE);
	if (rdma_accept(id, &cp))
		die("rdma_accept");
	expect_event(ch, RDMA_CM_EVENT_ESTABLISHED, NULL);
	wc = poll_one(c.cq);
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
	    wc.byte_len != sizeof(c.info)) {
		fprintf(stderr, "iw_badstag: the client's advertisement: status %d, %u bytes\n",
			wc.status, wc.byte_len);
		return 1;
	}
	rkey = be32toh(c.info.rkey);
	wr.wr.rdma.remote_addr = be64toh(c.info.buf);
	wr.wr.rdma.rkey = rkey ^ bad_key; /* the key byte of the STag */
	sge = (struct ibv_sge){ (uintptr_t)c.buf, BUF_BYTES, c.buf_mr->lkey };
	if (ibv_post_send(id->qp, &wr, &bad))
		die("ibv_post_send");
	wc = poll_one(c.cq);
	printf("iw_badstag: server: RDMA READ with STag 0x%08x (advertised 0x%08x): status %d "
	       "(%s)\n",
	       wr.wr.rdma.rkey, rkey, wc.status, ibv_wc_status_str(wc.status));
	return wc.status == IBV_WC_WR_FLUSH_ERR ? 0 : 1;
}

static int client(struct rdma_event_channel *ch, const char *src, const char *dst, const char *port)
{
	struct rdma_cm_id *id;
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1 };
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *ai;
	struct conn c = { 0 };
	struct rping_info adv;
	struct ibv_mr *adv_mr;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .wr_id = WR_SEND,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct ibv_wc wc;
	struct sockaddr_in sin = { .sin_family = AF_INET };

	if (rdma_getaddrinfo(dst, port, &hints, &ai))
		die("rdma_getaddrinfo");
	if (inet_pton(AF_INET, src, &sin.sin_addr) != 1) {
		fprintf(stderr, "iw_badstag: -I '%s' is not an IPv4 address\n", src);
		return 2;
	}
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, (struct sockaddr *)&sin, ai->ai_dst_addr, 2000))
		die("rdma_resolve_addr");
	expect_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL);
	if (rdma_resolve_route(id, 2000))
		die("rdma_resolve_route");
	expect_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL);
	setup(&c, id, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	adv_mr = ibv_reg_mr(c.pd, &adv, sizeof(adv), 0);
	if (!adv_mr)
		die("ibv_reg_mr");
	if (rdma_connect(id, &cp))
		die("rdma_connect");
	expect_event(ch, RDMA_CM_EVENT_ESTABLISHED, NULL);
	/* siw 6.1's Responder reads no FPDU that is queued before it hands its socket to the
	 * QP, which it does after its Reply left (docs/interop.md, siw_server): a Send right
	 * behind the Reply is never taken. rping's own client sends later than this one. */
	usleep(200 * 1000);
	adv = (struct rping_info){ htobe64((uintptr_t)c.buf), htobe32(c.buf_mr->rkey ^ bad_key),
				   htobe32(BUF_BYTES) };
	sge = (struct ibv_sge){ (uintptr_t)&adv, sizeof(adv), adv_mr->lkey };
	if (ibv_post_send(id->qp, &wr, &bad))
		die("ibv_post_send");
	/* The Send completes; then the server's READ with the wrong STag makes this side
	 * terminate the connection, and the receive posted for its answer is flushed. */
	for (int i = 0; i < 2; i++) {
		/* an error completion's opcode means nothing: wr_id tells them apart */
		wc = poll_one(c.cq);
		if (wc.wr_id == WR_SEND && wc.status == IBV_WC_SUCCESS)
			continue;
		printf("iw_badstag: client: advertised STag 0x%08x (ours 0x%08x); then %s "
		       "status %d (%s)\n",
		       c.buf_mr->rkey ^ bad_key, c.buf_mr->rkey,
		       wc.wr_id == WR_SEND ? "send" : "receive", wc.status,
		       ibv_wc_status_str(wc.status));
		return wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id == WR_RECV ? 0 : 1;
	}
	fprintf(stderr, "iw_badstag: client: a second Send completion\n");
	return 1;
}

int main(int argc, char **argv)
{
	const char *addr = NULL, *src = NULL, *port = "7174";
	struct rdma_event_channel *ch;
	int opt, mode = 0;

	while ((opt = getopt(argc, argv, "sca:I:p:vVC:S:K")) != -1) {
		switch (opt) {
		case 's':
		case 'c':
			mode = opt;
			break;
		case 'a':
			addr = optarg;
			break;
		case 'I':
			src = optarg;
			break;
		case 'p':
			port = optarg;
			break;
		case 'K':
			bad_key = 0;
			break;
		case 'v':
		case 'V':
		case 'C':
		case 'S':
			break; /* rping's; nothing to do here */
		default:
			mode = 0;
			optind = argc;
			break;
		}
	}
	if (!mode || !addr || (mode == 'c' && !src)) {
		fprintf(stderr,
			"usage: iw_badstag -s -a ADDR [-p PORT] | -c -I SRC -a DST [-p PORT]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	ch = rdma_create_event_channel();
	if (!ch)
		die("rdma_create_event_channel");
	return mode == 's' ? server(ch, addr, port) : client(ch, src, addr, port);
}
