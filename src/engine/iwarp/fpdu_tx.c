/* SPDX-License-Identifier: MIT */
/*
 * fpdu_tx.c - FPDU send framing (fpdu_tx.h). siw's siw_prepare_fpdu() trims a segment so
 * that length field, headers, payload and CRC fill the MSS exactly, with no pad: the
 * headers with the length field are 4-byte multiples, so a 4-byte MULPDU keeps that true.
 */
#include <errno.h>
#include <string.h>

#include "engine/iwarp/fpdu_tx.h"

_Static_assert((URNIC_FPDU_LEN_BYTES + URNIC_DDP_TAGGED_BYTES) % 4 == 0 &&
		       (URNIC_FPDU_LEN_BYTES + URNIC_DDP_UNTAGGED_BYTES) % 4 == 0,
	       "a full segment needs no pad");

size_t urnic_fpdu_tx_mulpdu(uint32_t mss)
{
	size_t max = urnic_fpdu_bytes(URNIC_FPDU_ULPDU_MAX), m = mss & ~(uint32_t)3;

	if (m < urnic_fpdu_bytes(URNIC_DDP_UNTAGGED_BYTES + URNIC_RDMAP_READ_REQ_BYTES))
		return 0;
	return m < max ? m : max;
}

size_t urnic_fpdu_tx_fit(size_t mulpdu, size_t hdr_bytes, size_t remaining, bool *last)
{
	size_t room = mulpdu - URNIC_FPDU_LEN_BYTES - hdr_bytes - URNIC_FPDU_CRC_BYTES;

	if (mulpdu < URNIC_FPDU_LEN_BYTES + hdr_bytes + URNIC_FPDU_CRC_BYTES)
		room = 0;
	/* siw compares without the pad; with a 4-byte MULPDU and headers the padded size
	 * fits exactly when the unpadded one does, and a full segment's room is 4-aligned. */
	*last = urnic_fpdu_bytes(hdr_bytes + remaining) <= mulpdu;
	return *last ? remaining : room & ~(size_t)3;
}

ssize_t urnic_fpdu_tx_frame(uint8_t *buf, size_t cap, const struct urnic_ddp_hdr *h,
			    const struct iovec *iov, unsigned iovcnt, size_t mulpdu, unsigned flags)
{
	size_t payload = 0, off;
	ssize_t hb;
	unsigned i;
	uint8_t hdr[URNIC_DDP_UNTAGGED_BYTES + URNIC_RDMAP_READ_REQ_BYTES];

	hb = urnic_ddp_encode(h, hdr, sizeof(hdr));
	if (hb < 0)
		return hb;
	for (i = 0; i < iovcnt; i++)
		payload += iov[i].iov_len;
	if ((size_t)hb + payload > URNIC_FPDU_ULPDU_MAX ||
	    urnic_fpdu_bytes((size_t)hb + payload) > mulpdu)
		return -EMSGSIZE;
	if (cap < urnic_fpdu_bytes((size_t)hb + payload))
		return -ENOBUFS;
	memcpy(buf + URNIC_FPDU_LEN_BYTES, hdr, (size_t)hb);
	off = URNIC_FPDU_LEN_BYTES + (size_t)hb;
	for (i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len) /* an empty piece may have no base */
			memcpy(buf + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	return urnic_fpdu_encode(buf, cap, buf + URNIC_FPDU_LEN_BYTES, (size_t)hb + payload, flags);
}
