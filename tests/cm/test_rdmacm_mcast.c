/* SPDX-License-Identifier: MIT */
/*
 * test_rdmacm_mcast.c - UD multicast joins through the drop-in librdmacm
 * (rdma_join_multicast(3), rdma_leave_multicast(3)) on the process's two devices (the
 * addresses of URNIC_ADDR, in a private namespace where lo carries IPv4 multicast:
 * verbs_prog.sh --mcast). The MULTICAST_JOIN event's fields are the kernel's for RoCEv2;
 * a datagram sent through the event's address handle reaches the other id's QP, and no
 * longer after it leaves; the argument errors are librdmacm's and cma.c's.
 */
#include <arpa/inet.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "check.h"

#define GROUP "239.1.2.3"
#define MSG 64
#define GRH 40

static char addr[2][64];
static struct rdma_event_channel *ch;

struct side {
	struct rdma_cm_id *id;
	struct ibv_mr *mr;
	uint8_t buf[GRH + MSG];
};

static struct sockaddr_in sin_of(const char *ip)
{
	struct sockaddr_in s = { .sin_family = AF_INET };

	CHECK(inet_pton(AF_INET, ip, &s.sin_addr) == 1);
	return s;
}

static struct rdma_cm_event *get_event(void)
{
	struct rdma_cm_event *ev;
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };

	CHECK(poll(&p, 1, 5000) == 1);
	CHECK(rdma_get_cm_event(ch, &ev) == 0);
	return ev;
}

static struct rdma_cm_id *bound(int dev, enum rdma_port_space ps)
{
	struct rdma_cm_id *id;
	struct sockaddr_in s = sin_of(addr[dev]);

	CHECK(rdma_create_id(ch, &id, NULL, ps) == 0);
	CHECK(rdma_bind_addr(id, (struct sockaddr *)&s) == 0);
	return id;
}

static void with_qp(struct side *s)
{
	struct ibv_qp_init_attr a = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_UD,
	};

	CHECK(rdma_create_qp(s->id, NULL, &a) == 0);
	s->mr = ibv_reg_mr(s->id->qp->pd, s->buf, sizeof(s->buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(s->mr);
	CHECK(rdma_post_recv(s->id, NULL, s->buf, sizeof(s->buf), s->mr) == 0);
}

/* A completion on cq within ms milliseconds: 1, or 0 if none came. */
static int poll_for(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	for (int i = 0; i < ms; i++) {
		int n = ibv_poll_cq(cq, 1, wc);

		CHECK(n >= 0);
		if (n)
			return 1;
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	return 0;
}

/* The argument errors: an unbound id and an RC id are EINVAL (cma.c); a flag beyond
 * the known ones is EINVAL and an unknown comp_mask bit ENOTSUP (librdmacm); leaving a
 * group never joined is EADDRNOTAVAIL. */
static void test_errors(void)
{
	struct sockaddr_in g = sin_of(GROUP);
	struct rdma_cm_id *id, *rc = bound(0, RDMA_PS_TCP);
	struct rdma_cm_join_mc_attr_ex ex = { .comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS |
							   RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS,
					      .join_flags = RDMA_MC_JOIN_FLAG_RESERVED,
					      .addr = (struct sockaddr *)&g };

	CHECK(rdma_create_id(ch, &id, NULL, RDMA_PS_UDP) == 0);
	errno = 0;
	CHECK(rdma_join_multicast(id, (struct sockaddr *)&g, NULL) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(rdma_join_multicast(rc, (struct sockaddr *)&g, NULL) == -1 && errno == EINVAL);
	CHECK(rdma_destroy_id(id) == 0);
	CHECK(rdma_destroy_id(rc) == 0);
	id = bound(0, RDMA_PS_UDP);
	errno = 0;
	CHECK(rdma_join_multicast_ex(id, &ex, NULL) == -1 && errno == EINVAL);
	ex.join_flags = RDMA_MC_JOIN_FLAG_FULLMEMBER;
	ex.comp_mask = RDMA_CM_JOIN_MC_ATTR_RESERVED;
	errno = 0;
	CHECK(rdma_join_multicast_ex(id, &ex, NULL) == -1 && errno == ENOTSUP);
	ex.comp_mask = RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS;
	errno = 0;
	CHECK(rdma_join_multicast_ex(id, &ex, NULL) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(rdma_leave_multicast(id, (struct sockaddr *)&g) == -1 && errno == EADDRNOTAVAIL);
	CHECK(rdma_destroy_id(id) == 0);
	printf("ok errors\n");
}

static void check_join(struct rdma_cm_event *ev, struct rdma_cm_id *id, void *ctx)
{
	const struct ibv_ah_attr *ah = &ev->param.ud.ah_attr;
	static const uint8_t mgid[16] = { [10] = 0xff, [11] = 0xff, 239, 1, 2, 3 };

	CHECK_EQ(ev->event, RDMA_CM_EVENT_MULTICAST_JOIN);
	CHECK(ev->id == id);
	CHECK_EQ(ev->status, 0);
	CHECK(ev->param.ud.private_data == ctx);
	CHECK_EQ(ev->param.ud.qp_num, 0xffffff);
	CHECK_EQ(ev->param.ud.qkey, RDMA_UDP_QKEY);
	CHECK_EQ(ah->is_global, 1);
	CHECK(!memcmp(ah->grh.dgid.raw, mgid, 16));
	CHECK_EQ(ah->grh.sgid_index, 1);
	CHECK_EQ(ah->grh.hop_limit, 64);
	CHECK_EQ(ah->dlid, 0);
	CHECK_EQ(ah->port_num, 1);
}

static void send_to(struct side *s, struct ibv_ah *ah, const char *text)
{
	struct ibv_wc wc;

	memset(s->buf, 0, sizeof(s->buf));
	strcpy((char *)s->buf, text);
	CHECK(rdma_post_ud_send(s->id, NULL, s->buf, MSG, s->mr, IBV_SEND_SIGNALED, ah, 0xffffff) ==
	      0);
	CHECK(poll_for(s->id->send_cq, &wc, 5000));
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
}

/* Both devices join; a datagram through the join's AH reaches the other's QP with the
 * sender's QPN, not a send-only member's QP (never attached: ucma_process_join); after
 * the receiver leaves (a second leave: EADDRNOTAVAIL), none does. */
static void test_join_send_leave(void)
{
	struct sockaddr_in g = sin_of(GROUP);
	struct rdma_cm_join_mc_attr_ex ex = {
		.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS,
		.join_flags = RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER,
		.addr = (struct sockaddr *)&g,
	};
	struct side s[3];
	struct rdma_cm_event *ev;
	struct ibv_ah *ah = NULL;
	struct ibv_wc wc;
	int ctx[3];

	memset(s, 0, sizeof(s));
	for (int i = 0; i < 3; i++) {
		s[i].id = bound(i == 2 ? 1 : i, RDMA_PS_UDP);
		with_qp(&s[i]);
	}
	for (int i = 0; i < 3; i++) {
		if (i < 2)
			CHECK(rdma_join_multicast(s[i].id, (struct sockaddr *)&g, &ctx[i]) == 0);
		else
			CHECK(rdma_join_multicast_ex(s[i].id, &ex, &ctx[i]) == 0);
		ev = get_event();
		check_join(ev, s[i].id, &ctx[i]);
		if (i == 0) {
			ah = ibv_create_ah(s[0].id->qp->pd, &ev->param.ud.ah_attr);
			CHECK(ah);
		}
		CHECK(rdma_ack_cm_event(ev) == 0);
	}
	printf("ok join events\n");
	send_to(&s[0], ah, "to the group");
	CHECK(poll_for(s[1].id->recv_cq, &wc, 5000));
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.byte_len, GRH + MSG);
	CHECK_EQ(wc.src_qp, s[0].id->qp->qp_num);
	CHECK(!strcmp((char *)s[1].buf + GRH, "to the group"));
	CHECK(!poll_for(s[2].id->recv_cq, &wc, 100));
	printf("ok datagram received, not by the send-only member\n");

	CHECK(rdma_post_recv(s[1].id, NULL, s[1].buf, sizeof(s[1].buf), s[1].mr) == 0);
	CHECK(rdma_leave_multicast(s[1].id, (struct sockaddr *)&g) == 0);
	errno = 0;
	CHECK(rdma_leave_multicast(s[1].id, (struct sockaddr *)&g) == -1 && errno == EADDRNOTAVAIL);
	send_to(&s[0], ah, "after the leave");
	CHECK(!poll_for(s[1].id->recv_cq, &wc, 300));
	printf("ok leave\n");

	/* s[0] is still joined: rdma_destroy_qp detaches, rdma_destroy_id leaves. */
	CHECK(ibv_destroy_ah(ah) == 0);
	for (int i = 0; i < 3; i++) {
		rdma_destroy_qp(s[i].id);
		CHECK(ibv_dereg_mr(s[i].mr) == 0);
		CHECK(rdma_destroy_id(s[i].id) == 0);
	}
	printf("ok destroy while joined\n");
}

/* A unicast address is no group: the attach fails and the join reports
 * MULTICAST_ERROR with the join's context; the join stays until it is left. A join
 * without a QP completes with no attach. */
static void test_error_event(void)
{
	struct side s;
	struct sockaddr_in u = sin_of(addr[1]), g = sin_of(GROUP);
	struct rdma_cm_event *ev;
	int ctx;

	memset(&s, 0, sizeof(s));
	s.id = bound(0, RDMA_PS_UDP);
	with_qp(&s);
	CHECK(rdma_join_multicast(s.id, (struct sockaddr *)&u, &ctx) == 0);
	ev = get_event();
	CHECK_EQ(ev->event, RDMA_CM_EVENT_MULTICAST_ERROR);
	CHECK(ev->status != 0);
	CHECK(ev->param.ud.private_data == &ctx);
	CHECK(rdma_ack_cm_event(ev) == 0);
	CHECK(rdma_leave_multicast(s.id, (struct sockaddr *)&u) == 0);
	rdma_destroy_qp(s.id);
	CHECK(ibv_dereg_mr(s.mr) == 0);
	CHECK(rdma_destroy_id(s.id) == 0);

	s.id = bound(0, RDMA_PS_UDP);
	CHECK(rdma_join_multicast(s.id, (struct sockaddr *)&g, &ctx) == 0);
	ev = get_event();
	check_join(ev, s.id, &ctx);
	CHECK(rdma_ack_cm_event(ev) == 0);
	CHECK(rdma_destroy_id(s.id) == 0);
	printf("ok error event\n");
}

/* An id without a channel: the join returns once its event is in id->event. */
static void test_sync(void)
{
	struct rdma_cm_id *id;
	struct sockaddr_in s = sin_of(addr[0]), g = sin_of(GROUP);
	struct rdma_cm_join_mc_attr_ex ex = {
		.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS,
		.join_flags = RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER,
		.addr = (struct sockaddr *)&g,
	};

	CHECK(rdma_create_id(NULL, &id, NULL, RDMA_PS_UDP) == 0);
	CHECK(rdma_bind_addr(id, (struct sockaddr *)&s) == 0);
	CHECK(rdma_join_multicast_ex(id, &ex, id) == 0);
	CHECK(id->event && id->event->event == RDMA_CM_EVENT_MULTICAST_JOIN);
	CHECK(id->event->param.ud.private_data == id);
	CHECK(rdma_leave_multicast(id, (struct sockaddr *)&g) == 0);
	CHECK(rdma_destroy_id(id) == 0);
	printf("ok synchronous send-only join\n");
}

int main(void)
{
	const char *env = getenv("URNIC_ADDR");

	CHECK(env && sscanf(env, "%63[^,],%63s", addr[0], addr[1]) == 2);
	ch = rdma_create_event_channel();
	CHECK(ch);
	test_errors();
	test_join_send_leave();
	test_error_event();
	test_sync();
	rdma_destroy_event_channel(ch);
	return 0;
}
