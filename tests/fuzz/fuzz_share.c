/* SPDX-License-Identifier: MIT */
/*
 * fuzz_share.c - the forwarding batch parser (src/transport/share.c, urnic_share_next):
 * arbitrary bytes as a batch received on the shared address's unix socket.
 *
 * The batch comes from another process of our own user (urnic_share_trusted), but a
 * buggy or hostile one must still not make the receiver read outside the datagram. For
 * every input, as recv_forwarded() walks it: each record lies inside the bytes walked so
 * far and the walk ends cleanly (0) or on a record cut short (-EBADMSG), never past the
 * end; and the records read, written again with urnic_share_add (the sender's side),
 * give back exactly the bytes they were read from. A broken rule aborts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "transport/share.h"

static void must(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_share: %s\n", what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct urnic_share s; /* a 64 KiB batch: not on the stack */
	uint32_t len = size > URNIC_SHARE_BATCH ? URNIC_SHARE_BATCH : (uint32_t)size;
	uint32_t off = 0, parsed = 0;
	struct urnic_share_rec r;
	int ret;

	s.batch_n = 0;
	s.batch_bytes = 0;
	while ((ret = urnic_share_next(data, len, &off, &r)) == 1) {
		must(off > parsed && off <= len, "the walk went backwards or past the end");
		must(r.pkt == data + parsed + URNIC_SHARE_REC_HDR,
		     "a record's packet is misplaced");
		must(r.pkt + r.len == data + off, "a record's packet overruns its record");
		must(urnic_share_fits(&s, 1, &r), "a parsed record does not fit a batch again");
		urnic_share_add(&s, 1, &r);
		parsed = off;
	}
	must(ret == 0 || ret == -EBADMSG, "an unknown result");
	must(ret == 0 ? off == len : off == parsed, "the walk stopped in the wrong place");
	must(s.batch_bytes == parsed && memcmp(s.batch, data, parsed) == 0,
	     "the records written again differ from the bytes they were read from");
	return 0;
}
