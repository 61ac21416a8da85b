/* SPDX-License-Identifier: MIT */
/*
 * local_attacker.c - what another local user can do to a urnic process without any
 * privilege, for tests/system/local_user.sh (run as that user):
 *
 *   local_attacker hold SPEC...   binds each SPEC, prints "ready", and counts what
 *                                 arrives until SIGTERM, then prints "received N":
 *                                 udp:ADDR:PORT  a UDP socket with SO_REUSEPORT (as a
 *                                                urnic device binds its port)
 *                                 unix:NAME      an abstract unix datagram socket
 *   local_attacker send ADDR QPN  one RoCEv2 packet (BTH of a SEND ONLY, a zero ICRC)
 *                                 to ADDR:4791 for QPN, as any host may send
 *   local_attacker counters PATH PID
 *                                 a file at PATH that looks like process PID's counters
 *                                 file (src/dev/counters_shm.h), device urnic0 on
 *                                 6.6.6.6, every counter 424242
 *   local_attacker secure         prints getauxval(AT_SECURE): 1 when the kernel runs
 *                                 this program as privileged (file capabilities)
 *   local_attacker lane NAME      listens on the abstract unix seqpacket NAME (a device's
 *                                 lane name, transport/local.h), prints "ready", takes
 *                                 every connection and what comes on it until SIGTERM,
 *                                 then prints "connections N bytes B fds F"
 *   local_attacker offer NAME     connects to the lane listener NAME and passes it a
 *                                 sealed memfd laid out as a lane, as a urnic sender
 *                                 does; then prints "passed P hangup H state S": P 1
 *                                 when the lane was sent before the listener hung up, H
 *                                 1 when it closed the connection (within a second), S
 *                                 the lane's state word (1 offered, 2 taken by it)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "dev/counters_shm.h"
#include "transport/local.h"

#define MAX_SOCKS 16

static volatile sig_atomic_t done;

static void on_term(int sig)
{
	(void)sig;
	done = 1;
}

/* Stops at SIGTERM or SIGINT from now on, and tells local_user.sh it may go on. */
static void ready(void)
{
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	printf("ready\n");
	fflush(stdout);
}

static int bind_spec(const char *spec)
{
	int fd, one = 1;

	if (strncmp(spec, "udp:", 4) == 0) {
		struct sockaddr_in a = { .sin_family = AF_INET };
		char addr[64];
		const char *colon = strrchr(spec + 4, ':');

		if (!colon || (size_t)(colon - spec - 4) >= sizeof(addr))
			return -1;
		memcpy(addr, spec + 4, (size_t)(colon - spec - 4));
		addr[colon - spec - 4] = 0;
		if (inet_pton(AF_INET, addr, &a.sin_addr) != 1)
			return -1;
		a.sin_port = htons((uint16_t)atoi(colon + 1));
		fd = socket(AF_INET, SOCK_DGRAM, 0);
		if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
		    bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
			return -1;
		return fd;
	}
	if (strncmp(spec, "unix:", 5) == 0) {
		struct sockaddr_un un = { .sun_family = AF_UNIX };
		size_t n = strlen(spec + 5);

		if (n + 2 > sizeof(un.sun_path))
			return -1;
		memcpy(un.sun_path + 1, spec + 5, n); /* sun_path[0] == 0: abstract */
		fd = socket(AF_UNIX, SOCK_DGRAM, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&un,
				   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) < 0)
			return -1;
		return fd;
	}
	errno = EINVAL;
	return -1;
}

static int hold(int n, char **specs)
{
	struct pollfd p[MAX_SOCKS];
	unsigned long received = 0;
	static char buf[70000];

	if (n < 1 || n > MAX_SOCKS)
		return 2;
	for (int i = 0; i < n; i++) {
		p[i] = (struct pollfd){ .fd = bind_spec(specs[i]), .events = POLLIN };
		if (p[i].fd < 0) {
			fprintf(stderr, "local_attacker: cannot bind %s: %s\n", specs[i],
				strerror(errno));
			return 1;
		}
	}
	ready();
	while (!done) {
		if (poll(p, (nfds_t)n, 100) <= 0)
			continue;
		for (int i = 0; i < n; i++)
			if ((p[i].revents & POLLIN) && recv(p[i].fd, buf, sizeof(buf), 0) >= 0)
				received++;
	}
	printf("received %lu\n", received);
	return 0;
}

static int send_one(const char *addr, const char *qpn_str)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(4791) };
	unsigned long qpn = strtoul(qpn_str, NULL, 0);
	uint8_t pkt[16] = { 0x04, 0, 0xff, 0xff }; /* SEND ONLY, P_Key 0xffff (IBTA 9.2) */
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	pkt[5] = (uint8_t)(qpn >> 16);
	pkt[6] = (uint8_t)(qpn >> 8);
	pkt[7] = (uint8_t)qpn;
	if (inet_pton(AF_INET, addr, &a.sin_addr) != 1 || fd < 0 ||
	    sendto(fd, pkt, sizeof(pkt), 0, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("local_attacker send");
		return 1;
	}
	return 0;
}

static int fake_counters(const char *path, const char *pid)
{
	struct urnic_shm_header h = { .pid = (uint32_t)atoi(pid), .ncounters = 8 };
	uint64_t v[8];
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);

	memcpy(h.magic, URNIC_SHM_MAGIC, sizeof(h.magic));
	snprintf(h.dev, sizeof(h.dev), "urnic0");
	snprintf(h.addr, sizeof(h.addr), "6.6.6.6");
	for (int i = 0; i < 8; i++)
		v[i] = 424242;
	if (fd < 0 || write(fd, &h, sizeof(h)) != (ssize_t)sizeof(h) ||
	    write(fd, v, sizeof(v)) != (ssize_t)sizeof(v)) {
		perror("local_attacker counters");
		return 1;
	}
	close(fd);
	return 0;
}

/* The lane's layout is transport/local.h's struct urnic_local_lane. */
#define LANE_STATE_OFF offsetof(struct urnic_local_lane, state)
#define LANE_BYTES URNIC_LOCAL_LANE_BYTES

static socklen_t abstract_name(struct sockaddr_un *un, const char *name)
{
	size_t n = strlen(name);

	memset(un, 0, sizeof(*un));
	un->sun_family = AF_UNIX;
	if (n + 2 > sizeof(un->sun_path))
		return 0;
	memcpy(un->sun_path + 1, name, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

/* Reads one message from fd: adds its bytes and passed descriptors (closed at once).
 * Returns false at the end of the connection. */
static bool take_msg(int fd, unsigned long *bytes, unsigned long *fds)
{
	char buf[256];
	struct iovec iov = { buf, sizeof(buf) };
	union {
		struct cmsghdr align;
		char b[CMSG_SPACE(16 * sizeof(int))];
	} ctrl;
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctrl.b,
			    .msg_controllen = sizeof(ctrl.b) };
	ssize_t n = recvmsg(fd, &m, MSG_DONTWAIT);

	if (n <= 0)
		return n < 0 && errno == EAGAIN;
	*bytes += (unsigned long)n;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t k = 0; k < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); k++) {
			int got;

			memcpy(&got, CMSG_DATA(c) + k * sizeof(int), sizeof(int));
			close(got);
			(*fds)++;
		}
	}
	return true;
}

static int lane_listen(const char *name)
{
	struct pollfd p[MAX_SOCKS];
	struct sockaddr_un un;
	socklen_t len = abstract_name(&un, name);
	unsigned long conns = 0, bytes = 0, fds = 0;
	nfds_t np = 1;

	p[0] = (struct pollfd){ .fd = socket(AF_UNIX, SOCK_SEQPACKET, 0), .events = POLLIN };
	if (!len || p[0].fd < 0 || bind(p[0].fd, (struct sockaddr *)&un, len) < 0 ||
	    listen(p[0].fd, 64) < 0) {
		fprintf(stderr, "local_attacker: cannot listen on @%s: %s\n", name,
			strerror(errno));
		return 1;
	}
	ready();
	while (!done) {
		if (poll(p, np, 100) <= 0)
			continue;
		if ((p[0].revents & POLLIN) && np < MAX_SOCKS) {
			int fd = accept(p[0].fd, NULL, NULL);

			if (fd >= 0) {
				conns++;
				p[np++] = (struct pollfd){ .fd = fd, .events = POLLIN };
			}
		}
		for (nfds_t i = 1; i < np; i++) {
			if (!p[i].revents || take_msg(p[i].fd, &bytes, &fds))
				continue;
			close(p[i].fd);
			p[i--] = p[--np];
		}
	}
	printf("connections %lu bytes %lu fds %lu\n", conns, bytes, fds);
	return 0;
}

/* A lane as lane_create in src/transport/local.c makes it: sealed, of the right size
 * and header, in the state "offered". Returns the memfd, its mapping in *map. */
static int lane_make(uint8_t **map)
{
	int mfd = memfd_create("urnic-lane", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	uint32_t hdr[3] = { URNIC_LOCAL_MAGIC, URNIC_LOCAL_VERSION, URNIC_LOCAL_RING_BYTES },
		 offered = URNIC_LOCAL_LANE_OFFERED;
	void *m;

	if (mfd < 0 || ftruncate(mfd, (off_t)LANE_BYTES) < 0 ||
	    fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		return -1;
	m = mmap(NULL, LANE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	if (m == MAP_FAILED)
		return -1;
	*map = m;
	memcpy(*map, hdr, sizeof(hdr));
	memcpy(*map + LANE_STATE_OFF, &offered, sizeof(offered));
	return mfd;
}

static int lane_offer(const char *name)
{
	struct sockaddr_un un;
	socklen_t len = abstract_name(&un, name);
	char byte = 'L';
	struct iovec iov = { &byte, 1 };
	union {
		struct cmsghdr align;
		char b[CMSG_SPACE(sizeof(int))];
	} ctrl;
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctrl.b,
			    .msg_controllen = sizeof(ctrl.b) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0), mfd, passed = 0, hangup = 0;
	uint8_t *map = NULL;
	uint32_t state;
	struct pollfd p;

	if (!len || fd < 0 || connect(fd, (struct sockaddr *)&un, len) < 0) {
		fprintf(stderr, "local_attacker: cannot connect to @%s: %s\n", name,
			strerror(errno));
		return 1;
	}
	mfd = lane_make(&map);
	if (mfd < 0) {
		perror("local_attacker: the lane");
		return 1;
	}
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &mfd, sizeof(int));
	/* The listener may have hung up already, having seen who connected. */
	if (sendmsg(fd, &m, MSG_NOSIGNAL) == 1)
		passed = 1;
	else if (errno == EPIPE || errno == ECONNRESET)
		hangup = 1;
	else {
		perror("local_attacker: passing the lane");
		return 1;
	}
	close(mfd);
	/* The receiver's answer: it takes the lane (state 2) or hangs up. */
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	for (int t = 0; t < 10 && !hangup; t++) {
		char b;

		if (poll(&p, 1, 100) > 0 &&
		    ((p.revents & (POLLHUP | POLLERR)) || recv(fd, &b, 1, MSG_DONTWAIT) == 0))
			hangup = 1;
	}
	memcpy(&state, map + LANE_STATE_OFF, sizeof(state));
	printf("passed %d hangup %d state %u\n", passed, hangup, state);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "hold") == 0)
		return hold(argc - 2, argv + 2);
	if (argc == 4 && strcmp(argv[1], "send") == 0)
		return send_one(argv[2], argv[3]);
	if (argc == 4 && strcmp(argv[1], "counters") == 0)
		return fake_counters(argv[2], argv[3]);
	if (argc == 2 && strcmp(argv[1], "secure") == 0) {
		printf("%lu\n", getauxval(AT_SECURE));
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "lane") == 0)
		return lane_listen(argv[2]);
	if (argc == 3 && strcmp(argv[1], "offer") == 0)
		return lane_offer(argv[2]);
	fprintf(stderr, "usage: local_attacker hold SPEC... | send ADDR QPN | "
			"counters PATH PID | secure | lane NAME | offer NAME\n");
	return 2;
}
