/* SPDX-License-Identifier: MIT */
/*
 * mad.c - the MAD common header codec (mad.h, IBTA Vol.1 13.4.2): BaseVersion,
 * MgmtClass, ClassVersion, R + Method, Status, ClassSpecific, TransactionID,
 * AttributeID, 16 reserved bits, AttributeModifier; big-endian, 24 bytes.
 */
#include <errno.h>

#include "wire/byteorder.h"
#include "wire/mad.h"

ssize_t urnic_mad_hdr_decode(struct urnic_mad_hdr *h, const uint8_t *buf, size_t len)
{
	if (len < URNIC_MAD_HDR_BYTES)
		return -EBADMSG;
	/* IBTA 13.4.2: the reserved bits after the AttributeID are sent as zero; a MAD that
	 * sets them would not re-encode to its own bytes. */
	if (urnic_get_be16(buf + 18))
		return -EBADMSG;
	h->base_version = buf[0];
	h->mgmt_class = buf[1];
	h->class_version = buf[2];
	h->method = buf[3];
	h->status = urnic_get_be16(buf + 4);
	h->class_specific = urnic_get_be16(buf + 6);
	h->tid = urnic_get_be64(buf + 8);
	h->attr_id = urnic_get_be16(buf + 16);
	h->attr_mod = urnic_get_be32(buf + 20);
	return URNIC_MAD_HDR_BYTES;
}

ssize_t urnic_mad_hdr_encode(const struct urnic_mad_hdr *h, uint8_t *buf, size_t cap)
{
	if (cap < URNIC_MAD_HDR_BYTES)
		return -ENOBUFS;
	buf[0] = h->base_version;
	buf[1] = h->mgmt_class;
	buf[2] = h->class_version;
	buf[3] = h->method;
	urnic_put_be16(buf + 4, h->status);
	urnic_put_be16(buf + 6, h->class_specific);
	urnic_put_be64(buf + 8, h->tid);
	urnic_put_be16(buf + 16, h->attr_id);
	urnic_put_be16(buf + 18, 0);
	urnic_put_be32(buf + 20, h->attr_mod);
	return URNIC_MAD_HDR_BYTES;
}
