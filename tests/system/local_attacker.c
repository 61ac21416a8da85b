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
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "dev/counters_shm.h"

#define MAX_SOCKS 16

static volatile sig_atomic_t done;

static void on_term(int sig)
{
	(void)sig;
	done = 1;
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
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	printf("ready\n");
	fflush(stdout);
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
	fprintf(stderr, "usage: local_attacker hold SPEC... | send ADDR QPN | "
			"counters PATH PID | secure\n");
	return 2;
}
