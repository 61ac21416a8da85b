/* SPDX-License-Identifier: MIT */
/*
 * share_forge.c - what any local process can do to a shared address's forwarding
 * socket (src/transport/share.h): send one well-formed batch, whose record claims to
 * be a packet from 10.9.8.7:4791 (60 bytes of 0xff), to the abstract unix name given.
 * tests/system/forward.sh runs it as another user; the owner must drop the batch
 * (drop_forward_foreign), not decode the packet. With NFDS, the datagram also passes
 * that many descriptors (of /dev/null, SCM_RIGHTS): the owner must close them.
 *
 *   share_forge NAME [NFDS]   e.g. share_forge urnic.127.0.0.2.1 200
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "transport/share.h"

#define MAX_FDS 250 /* the kernel takes at most SCM_MAX_FD (253) per message */

static struct urnic_share s;

int main(int argc, char **argv)
{
	static const uint8_t src[16] = { [10] = 0xff, [11] = 0xff, 10, 9, 8, 7 };
	uint8_t pkt[60];
	struct urnic_share_rec r = { .sport = 4791, .ttl = 64, .pkt = pkt, .len = sizeof(pkt) };
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	int nfds = argc == 3 ? atoi(argv[2]) : 0, fd, null_fd = open("/dev/null", O_RDONLY);
	_Alignas(struct cmsghdr) char ctrl[CMSG_SPACE(MAX_FDS * sizeof(int))];
	struct iovec iov;
	struct msghdr m = { .msg_name = &un, .msg_iov = &iov, .msg_iovlen = 1 };

	if (argc < 2 || argc > 3 || strlen(argv[1]) + 2 > sizeof(un.sun_path) || nfds < 0 ||
	    nfds > MAX_FDS || null_fd < 0) {
		fprintf(stderr, "usage: share_forge ABSTRACT_NAME [NFDS <= %d]\n", MAX_FDS);
		return 2;
	}
	memset(pkt, 0xff, sizeof(pkt));
	memcpy(r.src, src, sizeof(src));
	urnic_share_add(&s, 0, &r);
	strcpy(un.sun_path + 1, argv[1]); /* sun_path[0] == 0: the abstract namespace */
	m.msg_namelen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(argv[1]));
	iov = (struct iovec){ s.batch, s.batch_bytes };
	if (nfds) {
		struct cmsghdr *c;

		m.msg_control = ctrl;
		m.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		for (int i = 0; i < nfds; i++)
			memcpy(CMSG_DATA(c) + (size_t)i * sizeof(int), &null_fd, sizeof(int));
	}
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (fd < 0 || sendmsg(fd, &m, 0) < 0) {
		perror("share_forge");
		return 1;
	}
	close(fd);
	printf("share_forge: one batch of %u bytes and %d descriptors sent to @%s as uid %u\n",
	       s.batch_bytes, nfds, argv[1], (unsigned)getuid());
	return 0;
}
