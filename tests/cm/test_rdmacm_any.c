/* SPDX-License-Identifier: MIT */
/*
 * test_rdmacm_any.c - what libfabric's verbs provider relies on in librdmacm, as the
 * kernel's cma.c and rdma-core's librdmacm do it: a loopback address binds as the
 * wildcard, with no device (cma_any_addr); rdma_getaddrinfo with hints alone copies
 * their addresses; a synchronous id moved to a channel acks its last event, so that
 * rdma_destroy_id returns; a loopback destination is the source device itself. Devices
 * 127.0.43.1 and .2 on lo.
 */
#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#include "check.h"

#define SRV_ADDR "127.0.43.1"
#define CLI_ADDR "127.0.43.2"

static struct sockaddr_in sin_of(const char *ip, uint16_t port)
{
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons(port) };

	CHECK(inet_pton(AF_INET, ip, &s.sin_addr) == 1);
	return s;
}

/* 127.0.0.1 and ::1 bind with no device and an ephemeral port, which is then taken as on
 * the wildcard: a device's address cannot have it too (cma.c cma_check_port). */
static void test_loopback_bind(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in lo = sin_of("127.0.0.1", 0), other = sin_of("127.0.43.9", 0), dev;
	struct sockaddr_in6 lo6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct rdma_cm_id *a, *b, *c;
	struct sockaddr_in *src;

	CHECK(ch != NULL);
	CHECK_EQ(rdma_create_id(ch, &a, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_bind_addr(a, (struct sockaddr *)&lo), 0);
	CHECK(a->verbs == NULL);
	src = (struct sockaddr_in *)rdma_get_local_addr(a);
	CHECK_EQ(ntohl(src->sin_addr.s_addr), 0x7f000001);
	CHECK(ntohs(rdma_get_src_port(a)) != 0);
	CHECK_EQ(rdma_create_id(ch, &b, NULL, RDMA_PS_TCP), 0);
	dev = sin_of(SRV_ADDR, ntohs(rdma_get_src_port(a)));
	errno = 0;
	CHECK_EQ(rdma_bind_addr(b, (struct sockaddr *)&dev), -1);
	CHECK_EQ(errno, EADDRNOTAVAIL);
	CHECK_EQ(rdma_bind_addr(b, (struct sockaddr *)&other), 0);
	CHECK(b->verbs == NULL);
	CHECK_EQ(rdma_create_id(ch, &c, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_bind_addr(c, (struct sockaddr *)&lo6), 0);
	CHECK(c->verbs == NULL);
	CHECK_EQ(rdma_destroy_id(c), 0);
	CHECK_EQ(rdma_destroy_id(b), 0);
	CHECK_EQ(rdma_destroy_id(a), 0);
	rdma_destroy_event_channel(ch);
}

/* No node and no service: the result is the hints, their addresses copied. */
static void test_getaddrinfo_hints(void)
{
	struct sockaddr_in dst = sin_of(SRV_ADDR, 20950);
	struct rdma_addrinfo hints = { .ai_family = AF_INET,
				       .ai_qp_type = IBV_QPT_RC,
				       .ai_port_space = RDMA_PS_TCP,
				       .ai_dst_addr = (struct sockaddr *)&dst,
				       .ai_dst_len = sizeof(dst) };
	struct rdma_addrinfo *res;

	CHECK_EQ(rdma_getaddrinfo(NULL, NULL, &hints, &res), 0);
	CHECK(res->ai_dst_addr && res->ai_dst_addr != hints.ai_dst_addr);
	CHECK_EQ(res->ai_dst_len, sizeof(dst));
	CHECK(!memcmp(res->ai_dst_addr, &dst, sizeof(dst)));
	CHECK(res->ai_src_addr == NULL && res->ai_next == NULL);
	CHECK_EQ(res->ai_family, AF_INET);
	CHECK_EQ(res->ai_qp_type, IBV_QPT_RC);
	CHECK_EQ(res->ai_port_space, RDMA_PS_TCP);
	rdma_freeaddrinfo(res);
	errno = 0;
	CHECK_EQ(rdma_getaddrinfo(NULL, NULL, NULL, &res), -1);
	CHECK_EQ(errno, EINVAL);
}

/* A synchronous id resolved, then moved to a channel (libfabric's MSG endpoint): its
 * ADDR_RESOLVED event is acked by the move, and rdma_destroy_id does not wait for it. */
static void test_migrate_sync(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in dst = sin_of(CLI_ADDR, 20951);
	struct rdma_cm_id *id;

	CHECK(ch != NULL);
	CHECK_EQ(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), 0);
	CHECK(id->verbs != NULL && id->event != NULL);
	CHECK_EQ(rdma_migrate_id(id, ch), 0);
	CHECK(id->channel == ch && id->event == NULL);
	CHECK_EQ(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}

/* A loopback destination is the source device itself (cma.c cma_resolve_loopback): the
 * destination GID is the source GID; a device's address, this process's or another's,
 * stays its own GID. */
static void test_resolve_loopback(void)
{
	struct sockaddr_in lo = sin_of("127.0.0.1", 20952), dev = sin_of(CLI_ADDR, 20952);
	struct sockaddr_in other = sin_of("127.0.43.7", 4791);
	struct rdma_cm_id *id;
	struct rdma_addr *ra;
	int fd;

	CHECK_EQ(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_resolve_addr(id, NULL, (struct sockaddr *)&lo, 2000), 0);
	ra = &id->route.addr;
	CHECK(id->verbs != NULL);
	CHECK(!memcmp(&ra->addr.ibaddr.dgid, &ra->addr.ibaddr.sgid, 16));
	CHECK_EQ(rdma_destroy_id(id), 0);
	CHECK_EQ(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dev, 2000), 0);
	ra = &id->route.addr;
	CHECK(!memcmp(ra->addr.ibaddr.dgid.raw + 12, &dev.sin_addr, 4));
	CHECK_EQ(rdma_destroy_id(id), 0);
	/* Another process's device: something holds UDP 4791 on its address. */
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&other, sizeof(other)) == 0);
	other.sin_port = htons(20953);
	CHECK_EQ(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
	CHECK_EQ(rdma_resolve_addr(id, NULL, (struct sockaddr *)&other, 2000), 0);
	ra = &id->route.addr;
	CHECK(!memcmp(ra->addr.ibaddr.dgid.raw + 12, &other.sin_addr, 4));
	CHECK_EQ(rdma_destroy_id(id), 0);
	close(fd);
}

int main(void)
{
	/* A destroy waiting for an event nobody can ack any more hangs: fail instead. */
	alarm(30);
	RUN(test_loopback_bind);
	RUN(test_getaddrinfo_hints);
	RUN(test_migrate_sync);
	RUN(test_resolve_loopback);
	return 0;
}
