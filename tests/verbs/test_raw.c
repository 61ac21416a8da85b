/* SPDX-License-Identifier: MIT */
/*
 * test_raw.c - raw packet QPs and flow steering on one device over lo (127.0.25.1):
 *
 *   sender QP --frame--> lo --+--> QP "match" (flow: dst MAC, IPv4, UDP port 5678)
 *                             +--> QP "other" (flow: UDP port 9999)   nothing arrives
 *
 * A frame built here (Ethernet, IPv4, UDP, payload) is received whole, byte_len its
 * length, by the QP whose flow matches, and by neither the other QP nor the sender.
 * Also: the errnos of ibv_create_flow(3), a send shorter than an Ethernet header, and
 * ibv_create_qp(3) without CAP_NET_RAW (EPERM) while a UD QP is still created. Needs
 * root (CAP_NET_RAW): exits 77 otherwise.
 */
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

enum { BUF = 2048, FRAME = 200, DEPTH = 16 };

struct side {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static uint8_t mac[6];

static struct ibv_context *open_dev(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c;

	CHECK(l && l[0]);
	c = ibv_open_device(l[0]);
	ibv_free_device_list(l);
	return c;
}

static struct ibv_qp *raw_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = DEPTH,
			 .max_recv_wr = DEPTH,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &ia);
}

/* RESET -> INIT (a port only) -> RTR -> RTS (nothing more), ibv_modify_qp(3). */
static void to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT), 0);
	a.qp_state = IBV_QPS_RTR;
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	CHECK_EQ(qp->state, IBV_QPS_RTS);
}

static void side_init(struct side *s)
{
	struct ibv_recv_wr rw = { 0 }, *bad;
	struct ibv_sge sge;

	s->buf = calloc(1, BUF);
	s->cq = ibv_create_cq(ctx, 2 * DEPTH, NULL, NULL, 0);
	CHECK(s->buf && s->cq);
	s->mr = ibv_reg_mr(pd, s->buf, BUF, IBV_ACCESS_LOCAL_WRITE);
	s->qp = raw_qp(s->cq);
	CHECK(s->mr && s->qp);
	to_rts(s->qp);
	sge = (struct ibv_sge){ (uintptr_t)s->buf + BUF / 2, BUF / 2, s->mr->lkey };
	rw.sg_list = &sge;
	rw.num_sge = 1;
	CHECK_EQ(ibv_post_recv(s->qp, &rw, &bad), 0);
}

static void side_fini(struct side *s)
{
	CHECK_EQ(ibv_destroy_qp(s->qp), 0);
	CHECK_EQ(ibv_dereg_mr(s->mr), 0);
	CHECK_EQ(ibv_destroy_cq(s->cq), 0);
	free(s->buf);
}

/* A flow on dst MAC + IPv4 ether type and one on the UDP destination port. */
static struct ibv_flow *flow(struct ibv_qp *qp, uint16_t port, bool eth)
{
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
		struct ibv_flow_spec_tcp_udp udp;
	} f = { 0 };
	struct ibv_flow_spec_tcp_udp *udp = eth ? &f.udp : (struct ibv_flow_spec_tcp_udp *)&f.eth;

	f.attr.type = IBV_FLOW_ATTR_NORMAL;
	f.attr.size = sizeof(f);
	f.attr.num_of_specs = eth ? 2 : 1;
	f.attr.port = 1;
	if (eth) {
		f.eth.type = IBV_FLOW_SPEC_ETH;
		f.eth.size = sizeof(f.eth);
		memcpy(f.eth.val.dst_mac, mac, 6);
		memset(f.eth.mask.dst_mac, 0xff, 6);
		f.eth.val.ether_type = htons(0x0800);
		f.eth.mask.ether_type = 0xffff;
	}
	udp->type = IBV_FLOW_SPEC_UDP;
	udp->size = sizeof(*udp);
	udp->val.dst_port = htons(port);
	udp->mask.dst_port = 0xffff;
	return ibv_create_flow(qp, &f.attr);
}

static size_t build_frame(uint8_t *f)
{
	memset(f, 0, FRAME);
	memcpy(f, mac, 6);
	memcpy(f + 6, (uint8_t[6]){ 0x02, 0, 0, 0, 0, 1 }, 6);
	f[12] = 0x08;
	f[14] = 0x45;
	f[16] = 0, f[17] = FRAME - 14;
	f[22] = 64, f[23] = 17;
	memcpy(f + 26, (uint8_t[8]){ 10, 0, 0, 1, 10, 0, 0, 2 }, 8);
	f[34] = 1234 >> 8, f[35] = 1234 & 0xff;
	f[36] = 5678 >> 8, f[37] = 5678 & 0xff;
	f[38] = 0, f[39] = FRAME - 34;
	for (int i = 42; i < FRAME; i++)
		f[i] = (uint8_t)i;
	return FRAME;
}

static int poll_for(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n)
			return n;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			return 0;
	}
}

static void post_frame(struct side *s, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)s->buf, len, s->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	CHECK_EQ(ibv_post_send(s->qp, &wr, &bad), 0);
}

static void frame_reaches_only_the_matching_qp(void)
{
	struct side snd, match, other;
	struct ibv_flow *fm, *fo;
	struct ibv_wc wc;
	size_t len;

	side_init(&snd);
	side_init(&match);
	side_init(&other);
	fm = flow(match.qp, 5678, true);
	fo = flow(other.qp, 9999, false);
	CHECK(fm && fo);
	len = build_frame(snd.buf);
	post_frame(&snd, (uint32_t)len);
	CHECK_EQ(poll_for(snd.cq, &wc, 2000), 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_SEND);
	CHECK_EQ(poll_for(match.cq, &wc, 2000), 1);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.opcode, IBV_WC_RECV);
	CHECK_EQ(wc.byte_len, len);
	CHECK(!memcmp(match.buf + BUF / 2, snd.buf, len));
	CHECK_EQ(poll_for(other.cq, &wc, 100), 0);
	CHECK_EQ(poll_for(snd.cq, &wc, 10), 0);

	/* Without its flow the QP gets nothing more. */
	CHECK_EQ(ibv_destroy_flow(fm), 0);
	{
		struct ibv_recv_wr rw = { 0 }, *bad;
		struct ibv_sge sge = { (uintptr_t)match.buf + BUF / 2, BUF / 2, match.mr->lkey };

		rw.sg_list = &sge;
		rw.num_sge = 1;
		CHECK_EQ(ibv_post_recv(match.qp, &rw, &bad), 0);
	}
	post_frame(&snd, (uint32_t)len);
	CHECK_EQ(poll_for(snd.cq, &wc, 2000), 1);
	CHECK_EQ(poll_for(match.cq, &wc, 100), 0);
	CHECK_EQ(ibv_destroy_flow(fo), 0);
	side_fini(&snd);
	side_fini(&match);
	side_fini(&other);
}

static void send_shorter_than_an_ethernet_header_fails(void)
{
	struct side s;
	struct ibv_wc wc;

	side_init(&s);
	post_frame(&s, 10);
	CHECK_EQ(poll_for(s.cq, &wc, 2000), 1);
	CHECK_EQ(wc.status, IBV_WC_LOC_LEN_ERR);
	side_fini(&s);
}

static void create_flow_errnos(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD, .cap = { 1, 1, 1, 1, 0 }
	};
	struct ibv_qp *raw = raw_qp(cq), *ud = ibv_create_qp(pd, &ia);
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_tunnel vxlan;
	} f = { 0 };

	CHECK(cq && raw && ud);
	f.attr.num_of_specs = 1;
	f.attr.port = 1;
	f.vxlan.type = IBV_FLOW_SPEC_VXLAN_TUNNEL;
	f.vxlan.size = sizeof(f.vxlan);
	errno = 0;
	CHECK(!ibv_create_flow(raw, &f.attr) && errno == EOPNOTSUPP);
	f.attr.num_of_specs = 0;
	CHECK(!ibv_create_flow(ud, &f.attr) && errno == EOPNOTSUPP);
	f.attr.port = 2;
	CHECK(!ibv_create_flow(raw, &f.attr) && errno == EINVAL);
	f.attr.port = 1;
	f.attr.comp_mask = 1;
	CHECK(!ibv_create_flow(raw, &f.attr) && errno == EINVAL);
	CHECK_EQ(ibv_destroy_qp(raw), 0);
	CHECK_EQ(ibv_destroy_qp(ud), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
}

/* In a child that gave up root: EPERM as the kernel answers, RoCEv2 QPs still made. */
static void without_cap_net_raw_eperm(void)
{
	pid_t pid = fork();
	int st;

	CHECK(pid >= 0);
	if (pid == 0) {
		struct ibv_context *c;
		struct ibv_pd *p;
		struct ibv_cq *cq;
		struct ibv_qp *qp;
		struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RAW_PACKET,
					       .cap = { 1, 1, 1, 1, 0 } };

		CHECK_EQ(setresuid(65534, 65534, 65534), 0);
		setenv("URNIC_ADDR", "127.0.25.2", 1);
		c = open_dev();
		p = ibv_alloc_pd(c);
		cq = ibv_create_cq(c, 4, NULL, NULL, 0);
		CHECK(c && p && cq);
		ia.send_cq = ia.recv_cq = cq;
		errno = 0;
		CHECK(!ibv_create_qp(p, &ia) && errno == EPERM);
		ia.qp_type = IBV_QPT_UD;
		qp = ibv_create_qp(p, &ia);
		CHECK(qp);
		/* Closed before _exit, which runs no atexit handler: the device's counters
		 * file, nobody's, would stay, and root's sweep leaves another user's file. */
		CHECK(!ibv_destroy_qp(qp) && !ibv_destroy_cq(cq) && !ibv_dealloc_pd(p));
		CHECK_EQ(ibv_close_device(c), 0);
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
	if (geteuid() != 0) {
		printf("SKIP: raw packet QPs need root (CAP_NET_RAW)\n");
		return 77;
	}
	/* A locally administered MAC of our own: other programs' frames on lo differ. */
	mac[0] = 0x02;
	mac[1] = 0x75;
	mac[2] = (uint8_t)(getpid() >> 8);
	mac[3] = (uint8_t)getpid();
	mac[4] = (uint8_t)time(NULL);
	mac[5] = 0x01;
	RUN(without_cap_net_raw_eperm);
	ctx = open_dev();
	CHECK(ctx);
	pd = ibv_alloc_pd(ctx);
	CHECK(pd);
	RUN(frame_reaches_only_the_matching_qp);
	RUN(send_shorter_than_an_ethernet_header_fails);
	RUN(create_flow_errnos);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	return 0;
}
