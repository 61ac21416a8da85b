/* SPDX-License-Identifier: MIT */
/*
 * test_rsocket.c - rsockets through <rdma/rsocket.h> between the process's two devices
 * (127.0.44.1 and .2): the documented errors of calls on a socket not connected, a
 * non-blocking rconnect driven by rpoll to SO_ERROR 0, raccept, data both ways with
 * rsend/rrecv, vectors and MSG_PEEK, rselect beside an ordinary pipe, SHUT_WR seen as
 * the end of the stream, the socket options, and datagrams over rsendto/rrecvfrom.
 * With the argument iwarp, the same streams between two iWARP devices (127.0.53.1 and
 * .2), where every message word goes as a SEND (rsocket.c's RS_OPT_MSG_SEND); no
 * datagrams there (no UD on iWARP).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

#include <rdma/rsocket.h>

#include "check.h"

static const char *srv_addr = "127.0.44.1";
static const char *cli_addr = "127.0.44.2";

static struct sockaddr_in sin_of(const char *ip, uint16_t port)
{
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons(port) };

	CHECK(inet_pton(AF_INET, ip, &s.sin_addr) == 1);
	return s;
}

static void test_errors(void)
{
	char b[4];
	int s;

	errno = 0;
	CHECK_EQ(rsocket(AF_UNIX, SOCK_STREAM, 0), -1);
	CHECK_EQ(errno, ENOTSUP);
	CHECK_EQ(rsend(12345, b, 1, 0), -1);
	CHECK_EQ(errno, EBADF);
	s = rsocket(AF_INET, SOCK_STREAM, 0);
	CHECK(s >= 0);
	CHECK_EQ(rrecv(s, b, sizeof(b), 0), -1);
	CHECK_EQ(errno, ENOTCONN);
	CHECK_EQ(rsend(s, b, 1, 0), -1);
	CHECK_EQ(errno, ENOTCONN);
	CHECK_EQ(rshutdown(s, SHUT_RDWR), -1);
	CHECK_EQ(errno, ENOTCONN);
	CHECK_EQ(raccept(s, NULL, NULL), -1);
	CHECK_EQ(errno, EBADF);
	CHECK_EQ(rclose(s), 0);
}

/* A connected pair: *srv accepted from a listener on srv_addr, *cli connected to it
 * without blocking, rpoll waiting for it to be writable. */
static void connect_pair(uint16_t port, int *srv, int *cli)
{
	struct sockaddr_in a = sin_of(srv_addr, port), c = sin_of(cli_addr, 0);
	int l = rsocket(AF_INET, SOCK_STREAM, 0), one = 1, err = -1;
	socklen_t len = sizeof(err);
	struct pollfd p;

	CHECK(l >= 0);
	CHECK_EQ(rsetsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
	CHECK_EQ(rbind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	CHECK_EQ(rlisten(l, 4), 0);
	*cli = rsocket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	CHECK(*cli >= 0);
	CHECK_EQ(rfcntl(*cli, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	CHECK_EQ(rbind(*cli, (struct sockaddr *)&c, sizeof(c)), 0);
	CHECK_EQ(rconnect(*cli, (struct sockaddr *)&a, sizeof(a)), -1);
	CHECK_EQ(errno, EINPROGRESS);
	/* The listener is readable once the request waits; raccept answers it. */
	p = (struct pollfd){ .fd = l, .events = POLLIN };
	CHECK_EQ(rpoll(&p, 1, 5000), 1);
	*srv = raccept(l, NULL, NULL);
	CHECK(*srv >= 0);
	p = (struct pollfd){ .fd = *cli, .events = POLLOUT };
	CHECK_EQ(rpoll(&p, 1, 5000), 1);
	CHECK(p.revents & POLLOUT);
	CHECK_EQ(rgetsockopt(*cli, SOL_SOCKET, SO_ERROR, &err, &len), 0);
	CHECK_EQ(err, 0);
	CHECK_EQ(rfcntl(*cli, F_SETFL, 0), 0);
	CHECK_EQ(rclose(l), 0);
}

static void test_stream(void)
{
	static char big[120000], got[120000];
	struct sockaddr_in peer;
	socklen_t plen = sizeof(peer);
	struct iovec v[2];
	char b[16];
	int srv, cli, val = 0;
	socklen_t len = sizeof(val);

	connect_pair(7411, &srv, &cli);
	CHECK_EQ(rgetpeername(srv, (struct sockaddr *)&peer, &plen), 0);
	CHECK_EQ(peer.sin_addr.s_addr, sin_of(cli_addr, 0).sin_addr.s_addr);
	CHECK_EQ(rgetsockopt(cli, IPPROTO_TCP, TCP_NODELAY, &val, &len), 0);
	CHECK_EQ(rgetsockopt(cli, SOL_RDMA, RDMA_SQSIZE, &val, &len), 0);
	CHECK(val >= 16);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 7);
	/* Each half within the half of the receive buffer granted; reading the first has the
	 * receiver grant the next. */
	CHECK_EQ(rsend(cli, big, sizeof(big) / 2, 0), (ssize_t)sizeof(big) / 2);
	CHECK_EQ(rrecv(srv, got, 5, MSG_PEEK), 5);
	CHECK_EQ(rrecv(srv, got, sizeof(big) / 2, MSG_WAITALL), (ssize_t)sizeof(big) / 2);
	v[0] = (struct iovec){ big + sizeof(big) / 2, 1000 };
	v[1] = (struct iovec){ big + sizeof(big) / 2 + 1000, sizeof(big) / 2 - 1000 };
	CHECK_EQ(rwritev(cli, v, 2), (ssize_t)sizeof(big) / 2);
	CHECK_EQ(rrecv(srv, got + sizeof(big) / 2, sizeof(big) / 2, MSG_WAITALL),
		 (ssize_t)sizeof(big) / 2);
	CHECK(!memcmp(big, got, sizeof(big)));
	CHECK_EQ(rsend(srv, "pong", 4, 0), 4);
	CHECK_EQ(rread(cli, b, sizeof(b)), 4);
	CHECK(!memcmp(b, "pong", 4));
	/* The peer's SHUT_WR: the data before it, then the end of the stream. */
	CHECK_EQ(rsend(cli, "tail", 4, 0), 4);
	CHECK_EQ(rshutdown(cli, SHUT_WR), 0);
	CHECK_EQ(rrecv(srv, b, sizeof(b), MSG_WAITALL), 4);
	CHECK_EQ(rrecv(srv, b, sizeof(b), 0), 0);
	CHECK_EQ(rsend(cli, "x", 1, 0), -1);
	CHECK_EQ(errno, EPIPE);
	CHECK_EQ(rclose(cli), 0);
	CHECK_EQ(rclose(srv), 0);
}

/* rselect over an rsocket and a pipe: each readable when it has data, not before. */
static void test_select(void)
{
	struct timeval tv = { 0, 100000 };
	int srv, cli, pfd[2];
	fd_set r;
	char b;

	connect_pair(7412, &srv, &cli);
	CHECK_EQ(pipe(pfd), 0);
	FD_ZERO(&r);
	FD_SET(srv, &r);
	FD_SET(pfd[0], &r);
	CHECK_EQ(rselect((srv > pfd[0] ? srv : pfd[0]) + 1, &r, NULL, NULL, &tv), 0);
	CHECK_EQ(write(pfd[1], "p", 1), 1);
	CHECK_EQ(rsend(cli, "r", 1, 0), 1);
	tv = (struct timeval){ 5, 0 };
	for (int seen = 0; seen != 3;) {
		FD_ZERO(&r);
		if (!(seen & 1))
			FD_SET(srv, &r);
		if (!(seen & 2))
			FD_SET(pfd[0], &r);
		CHECK(rselect((srv > pfd[0] ? srv : pfd[0]) + 1, &r, NULL, NULL, &tv) > 0);
		if (FD_ISSET(srv, &r)) {
			CHECK_EQ(rrecv(srv, &b, 1, 0), 1);
			seen |= 1;
		}
		if (FD_ISSET(pfd[0], &r)) {
			CHECK_EQ(read(pfd[0], &b, 1), 1);
			seen |= 2;
		}
	}
	close(pfd[0]);
	close(pfd[1]);
	CHECK_EQ(rclose(cli), 0);
	CHECK_EQ(rclose(srv), 0);
}

/* Datagrams: the first goes over UDP with our QPN, the rest over UD once answered. */
static void test_dgram(void)
{
	struct sockaddr_in a = sin_of(srv_addr, 7413), c = sin_of(cli_addr, 7414), from;
	int s = rsocket(AF_INET, SOCK_DGRAM, 0), t = rsocket(AF_INET, SOCK_DGRAM, 0);
	socklen_t flen;
	char b[64];

	CHECK(s >= 0 && t >= 0);
	CHECK_EQ(rbind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	CHECK_EQ(rbind(t, (struct sockaddr *)&c, sizeof(c)), 0);
	for (int i = 0; i < 20; i++) {
		CHECK_EQ(rsendto(t, "ping", 5, 0, (struct sockaddr *)&a, sizeof(a)), 5);
		flen = sizeof(from);
		CHECK_EQ(rrecvfrom(s, b, sizeof(b), 0, (struct sockaddr *)&from, &flen), 5);
		CHECK(!strcmp(b, "ping"));
		CHECK_EQ(from.sin_port, c.sin_port);
		CHECK_EQ(rsendto(s, "pong", 5, 0, (struct sockaddr *)&from, flen), 5);
		CHECK_EQ(rrecv(t, b, sizeof(b), 0), 5);
		CHECK(!strcmp(b, "pong"));
	}
	CHECK_EQ(rclose(s), 0);
	CHECK_EQ(rclose(t), 0);
}

int main(int argc, char **argv)
{
	bool iwarp = argc > 1 && !strcmp(argv[1], "iwarp");

	if (iwarp) {
		srv_addr = "127.0.53.1";
		cli_addr = "127.0.53.2";
	}
	RUN(test_errors);
	RUN(test_stream);
	RUN(test_select);
	if (!iwarp)
		RUN(test_dgram);
	return 0;
}
