/* SPDX-License-Identifier: MIT */
/*
 * mad.h - the common header of a management datagram (MAD), IBTA Vol.1 13.4.2.
 *
 * A MAD is 256 bytes: this 24-byte header, then the class's data. General services MADs
 * travel as UD SENDs on QP 1, the GSI, under the well-known Q_Key 0x80010000 (IBTA
 * 13.5); on RoCEv2 the MAD is a UD SEND_ONLY payload. The codec only moves fields: which
 * versions, classes and methods are acceptable is the class's decoder's business (cm.h).
 * Out of scope: RMPP, vendor classes, the SMP (directed route) header.
 */
#ifndef URNIC_WIRE_MAD_H
#define URNIC_WIRE_MAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum {
	URNIC_MAD_BYTES = 256,
	URNIC_MAD_HDR_BYTES = 24,
	URNIC_MAD_DATA_BYTES = URNIC_MAD_BYTES - URNIC_MAD_HDR_BYTES,
	URNIC_MAD_BASE_VERSION = 1,
	URNIC_MAD_METHOD_SEND = 0x03, /* IBTA 13.4.5 */
	URNIC_GSI_QPN = 1,
};

#define URNIC_GSI_QKEY 0x80010000u /* IBTA 13.5: QP 1's well-known Q_Key */

/* IBTA 13.4.2: every field of the header but the 16 reserved bits after the
 * AttributeID. method holds the R bit (bit 7, a response) and the Method (bits 6-0). */
struct urnic_mad_hdr {
	uint8_t base_version;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method;
	uint16_t status;
	uint16_t class_specific;
	uint64_t tid;
	uint16_t attr_id;
	uint32_t attr_mod;
};

/* Decode returns URNIC_MAD_HDR_BYTES, or -EBADMSG when len is shorter or the reserved
 * bits are set; encode returns URNIC_MAD_HDR_BYTES or -ENOBUFS. */
ssize_t urnic_mad_hdr_decode(struct urnic_mad_hdr *h, const uint8_t *buf, size_t len);
ssize_t urnic_mad_hdr_encode(const struct urnic_mad_hdr *h, uint8_t *buf, size_t cap);

#endif
