/* SPDX-License-Identifier: MIT */
/*
 * fuzz_cm.c - the CM MAD decoder (src/wire/cm.c, urnic_cm_decode) and, inside a REQ it
 * accepts, the rdma_cm header and service ID decoders (src/wire/cma.c): arbitrary bytes
 * as a MAD that arrived on QP 1.
 *
 * Every input is either refused with a named reason and nothing written, or accepted;
 * what is accepted obeys the header rules, stated again here (IBTA 13.4.2: 256 bytes,
 * base version 1, class 0x07 version 2, method Send, reserved bits zero, a CM message),
 * passes urnic_cm_check, and encodes back to exactly the input bytes. An input that
 * breaks the first header rule is refused for that rule. The rdma_cm header and service
 * ID of an accepted REQ, when they decode, encode back to their bytes and value.
 * A broken rule aborts; ASan sees any read past the input.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "wire/cm.h"
#include "wire/cma.h"

static void must(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_cm: %s\n", what);
		abort();
	}
}

/* The first header rule the bytes break, in the order cm.h gives them; OK for none. */
static enum urnic_cm_reason first_header_rule_broken(const uint8_t *d, size_t n)
{
	unsigned attr;

	if (n < 256)
		return URNIC_CM_R_TRUNCATED;
	if (n > 256)
		return URNIC_CM_R_OVERLONG;
	if (d[18] || d[19])
		return URNIC_CM_R_RESERVED_SET;
	if (d[0] != 1)
		return URNIC_CM_R_BASE_VERSION;
	if (d[1] != 0x07)
		return URNIC_CM_R_MGMT_CLASS;
	if (d[2] != 2)
		return URNIC_CM_R_CLASS_VERSION;
	if (d[3] != 0x03)
		return URNIC_CM_R_METHOD;
	attr = (unsigned)d[16] << 8 | d[17];
	if (attr == 0x19 || attr == 0x1a)
		return URNIC_CM_R_ATTR_UNSUPPORTED;
	if (attr < 0x10 || attr > 0x18)
		return URNIC_CM_R_ATTR_UNKNOWN;
	return URNIC_CM_R_OK;
}

/* An accepted REQ's private data: the rdma_cm header, and the service ID's port space. */
static void check_rdma_cm(const struct urnic_cm_req *req)
{
	struct urnic_cma_hdr h;
	enum urnic_cm_reason why = URNIC_CM_R_COUNT;
	enum urnic_rdma_ps ps;
	uint8_t again[URNIC_CMA_HDR_BYTES];
	uint16_t port;
	int rc;

	if (urnic_cma_hdr_decode(&h, req->private_data, sizeof(req->private_data), &why) > 0) {
		must(why == URNIC_CM_R_OK, "an accepted rdma_cm header with a reason");
		must(urnic_cma_hdr_encode(&h, again, sizeof(again)) == URNIC_CMA_HDR_BYTES,
		     "an accepted rdma_cm header does not encode");
		/* Equal but for what decode does not read (cma.c): the reserved nibble and
		 * an IPv4 address's pad, which encode writes as zeros. */
		uint8_t want[URNIC_CMA_HDR_BYTES];

		memcpy(want, req->private_data, sizeof(want));
		want[1] &= 0xf0;
		if (h.ip_version == 4) {
			memset(want + 4, 0, 12);
			memset(want + 20, 0, 12);
		}
		must(!memcmp(again, want, sizeof(again)),
		     "an rdma_cm header encodes to other bytes");
	} else {
		must(why > URNIC_CM_R_OK && why < URNIC_CM_R_COUNT, "no reason for a refusal");
	}
	rc = urnic_cma_service_id_decode(req->service_id, &ps, &port, &why);
	if (rc == 0)
		must(urnic_cma_service_id(ps, port) == req->service_id,
		     "a service ID decodes to another one");
	else
		must(rc == -EBADMSG && why == URNIC_CM_R_SERVICE_ID, "a service ID refusal");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct urnic_cm_mad m, poison;
	enum urnic_cm_reason why = URNIC_CM_R_COUNT, rule;
	uint8_t again[URNIC_MAD_BYTES];
	ssize_t n;

	memset(&poison, 0xa5, sizeof(poison));
	m = poison;
	n = urnic_cm_decode(&m, data, size, &why);
	rule = first_header_rule_broken(data, size);
	if (n < 0) {
		must(n == -EBADMSG, "an error other than -EBADMSG");
		must(why > URNIC_CM_R_OK && why < URNIC_CM_R_COUNT, "no reason for a refusal");
		must(!memcmp(&m, &poison, sizeof(m)), "a refused MAD wrote the output");
		must(rule == URNIC_CM_R_OK || why == rule,
		     "refused for another rule than the first");
		return 0;
	}
	must(n == URNIC_MAD_BYTES && why == URNIC_CM_R_OK, "accepted with a reason");
	must(rule == URNIC_CM_R_OK, "accepted a MAD that breaks a header rule");
	must(urnic_cm_check(&m) == URNIC_CM_R_OK, "accepted what urnic_cm_check refuses");
	must(urnic_cm_encode(&m, again, sizeof(again)) == URNIC_MAD_BYTES, "does not encode");
	must(!memcmp(again, data, sizeof(again)), "encodes to other bytes");
	if (m.hdr.attr_id == URNIC_CM_ATTR_REQ)
		check_rdma_cm(&m.msg.req);
	return 0;
}
