/* SPDX-License-Identifier: MIT */
/*
 * fpdu_tx.h - frames one DDP segment as an FPDU (RFC 5044 4): headers, payload gathered
 * from an iovec, pad and CRC, no larger than the MULPDU; and how siw cuts a message into
 * segments of that size (siw_qp_tx.c: an FPDU fills the TCP MSS, the last one ends
 * where the message does).
 */
#ifndef URNIC_ENGINE_IWARP_FPDU_TX_H
#define URNIC_ENGINE_IWARP_FPDU_TX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "wire/ddp.h"
#include "wire/fpdu.h"

/* The largest FPDU for a TCP MSS: the MSS rounded down to 4 bytes (FPDUs are 4-byte
 * multiples), and no more than a 65535-byte ULPDU needs; 0 when the MSS cannot hold even
 * a header. */
size_t urnic_fpdu_tx_mulpdu(uint32_t mss);
/* Payload bytes for the next segment of a message with remaining bytes left, headers of
 * hdr_bytes; *last says whether it ends the message (DDP's L bit). */
size_t urnic_fpdu_tx_fit(size_t mulpdu, size_t hdr_bytes, size_t remaining, bool *last);
/* The FPDU of h and the iovec's bytes into buf: bytes written, or -EMSGSIZE (larger than
 * mulpdu), -ENOBUFS (cap), -EINVAL (headers). */
ssize_t urnic_fpdu_tx_frame(uint8_t *buf, size_t cap, const struct urnic_ddp_hdr *h,
			    const struct iovec *iov, unsigned iovcnt, size_t mulpdu,
			    unsigned flags);

#endif
