/* SPDX-License-Identifier: MIT */
/*
 * share_forge.c - what any local process can do to a shared address's forwarding
 * socket (src/transport/share.h): send one well-formed batch, whose record claims to
 * be a packet from 10.9.8.7:4791 (60 bytes of 0xff), to the abstract unix name given.
 * tests/system/forward.sh runs it as another user; the owner must drop the batch
 * (drop_forward_foreign), not decode the packet.
 *
 *   share_forge NAME   e.g. share_forge urnic.127.0.0.2.1
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "transport/share.h"

static struct urnic_share s;

int main(int argc, char **argv)
{
	static const uint8_t src[16] = { [10] = 0xff, [11] = 0xff, 10, 9, 8, 7 };
	uint8_t pkt[60];
	struct urnic_share_rec r = { .sport = 4791, .ttl = 64, .pkt = pkt, .len = sizeof(pkt) };
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd;

	if (argc != 2 || strlen(argv[1]) + 2 > sizeof(un.sun_path)) {
		fprintf(stderr, "usage: share_forge ABSTRACT_NAME\n");
		return 2;
	}
	memset(pkt, 0xff, sizeof(pkt));
	memcpy(r.src, src, sizeof(src));
	urnic_share_add(&s, 0, &r);
	strcpy(un.sun_path + 1, argv[1]); /* sun_path[0] == 0: the abstract namespace */
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(argv[1]));
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (fd < 0 || sendto(fd, s.batch, s.batch_bytes, 0, (struct sockaddr *)&un, len) < 0) {
		perror("share_forge");
		return 1;
	}
	close(fd);
	printf("share_forge: one batch of %u bytes sent to @%s as uid %u\n", s.batch_bytes,
	       argv[1], (unsigned)getuid());
	return 0;
}
