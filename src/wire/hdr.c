/* SPDX-License-Identifier: MIT */
/*
 * hdr.c - RoCEv2 transport header codecs: BTH and the extension headers, and the whole
 * packet decode / header encode driven by the opcode table.
 *
 * Layouts are IBTA Vol.1 9.2 (BTH) and 9.3 (RDETH, DETH, RETH, AtomicETH, AETH,
 * AtomicAckETH, ImmDt, IETH), Annex A14 (XRCETH), A17 (RoCEv2 FECN/BECN) and A19 (FETH),
 * as Linux rxe lays them out (rxe_hdr.h). Every wire bit is either a struct field or a reserved bit
 * that must be zero, so encode(decode(bytes)) == bytes. The ICRC is icrc.c's business.
 */
#include <errno.h>
#include <string.h>

#include "wire/byteorder.h"
#include "wire/pkt.h"
#include "wire/psn.h"

/* BTH byte 1 (IBTA 9.2). */
#define BTH_SE 0x80u
#define BTH_MIG 0x40u
#define BTH_PAD_SHIFT 4
#define BTH_PAD_MASK 0x3u
#define BTH_TVER_MASK 0x0fu
/* BTH byte 4: RoCEv2 puts FECN/BECN in the top bits of IBTA's Resv8a (Annex A17). */
#define BTH_FECN 0x80u
#define BTH_BECN 0x40u
#define BTH_RESV6 0x3fu
/* BTH byte 8. */
#define BTH_ACKREQ 0x80u
#define BTH_RESV7 0x7fu

#define QPN_MASK 0xffffffu

static bool bit(uint8_t byte, unsigned mask)
{
	return (byte & mask) != 0;
}

ssize_t urnic_bth_decode(struct urnic_bth *bth, const uint8_t *buf, size_t len)
{
	if (len < URNIC_BTH_BYTES)
		return -EBADMSG;
	/* IBTA 9.2: TVer must be 0; reserved bits are sent as 0, and a packet that sets
	 * them is dropped rather than decoded into something encode cannot reproduce. */
	if ((buf[1] & BTH_TVER_MASK) != URNIC_BTH_TVER || (buf[4] & BTH_RESV6) ||
	    (buf[8] & BTH_RESV7))
		return -EBADMSG;

	bth->opcode = buf[0];
	bth->se = bit(buf[1], BTH_SE);
	bth->mig = bit(buf[1], BTH_MIG); /* accepted either way, as rxe does */
	bth->pad = (uint8_t)((buf[1] >> BTH_PAD_SHIFT) & BTH_PAD_MASK);
	bth->tver = (uint8_t)(buf[1] & BTH_TVER_MASK);
	bth->pkey = urnic_get_be16(buf + 2);
	bth->fecn = bit(buf[4], BTH_FECN);
	bth->becn = bit(buf[4], BTH_BECN);
	bth->dqpn = urnic_get_be24(buf + 5);
	bth->ackreq = bit(buf[8], BTH_ACKREQ);
	bth->psn = urnic_get_be24(buf + 9);
	return URNIC_BTH_BYTES;
}

/* Out-of-range fields are truncated to their wire width (as rxe's bth_init() does). */
ssize_t urnic_bth_encode(const struct urnic_bth *bth, uint8_t *buf, size_t cap)
{
	if (cap < URNIC_BTH_BYTES)
		return -ENOBUFS;
	buf[0] = bth->opcode;
	buf[1] = (uint8_t)((bth->se ? BTH_SE : 0) | (bth->mig ? BTH_MIG : 0) |
			   (unsigned)(bth->pad & BTH_PAD_MASK) << BTH_PAD_SHIFT |
			   (bth->tver & BTH_TVER_MASK));
	urnic_put_be16(buf + 2, bth->pkey);
	buf[4] = (uint8_t)((bth->fecn ? BTH_FECN : 0) | (bth->becn ? BTH_BECN : 0));
	urnic_put_be24(buf + 5, bth->dqpn & QPN_MASK);
	buf[8] = bth->ackreq ? BTH_ACKREQ : 0;
	urnic_put_be24(buf + 9, bth->psn & URNIC_PSN_MASK);
	return URNIC_BTH_BYTES;
}

/* RDETH (IBTA 9.3): Resv8, EE context 24. RD only: decoded, never produced. */
static ssize_t rdeth_decode(uint32_t *eecnxt, const uint8_t *buf, size_t len)
{
	if (len < URNIC_RDETH_BYTES || buf[0] != 0)
		return -EBADMSG;
	*eecnxt = urnic_get_be24(buf + 1);
	return URNIC_RDETH_BYTES;
}

static ssize_t rdeth_encode(uint32_t eecnxt, uint8_t *buf, size_t cap)
{
	if (cap < URNIC_RDETH_BYTES)
		return -ENOBUFS;
	buf[0] = 0;
	urnic_put_be24(buf + 1, eecnxt & QPN_MASK);
	return URNIC_RDETH_BYTES;
}

ssize_t urnic_deth_decode(struct urnic_deth *deth, const uint8_t *buf, size_t len)
{
	/* IBTA 9.3 DETH: Q_Key 32, Resv8, SrcQP 24. */
	if (len < URNIC_DETH_BYTES || buf[4] != 0)
		return -EBADMSG;
	deth->qkey = urnic_get_be32(buf);
	deth->sqpn = urnic_get_be24(buf + 5);
	return URNIC_DETH_BYTES;
}

ssize_t urnic_deth_encode(const struct urnic_deth *deth, uint8_t *buf, size_t cap)
{
	if (cap < URNIC_DETH_BYTES)
		return -ENOBUFS;
	urnic_put_be32(buf, deth->qkey);
	buf[4] = 0;
	urnic_put_be24(buf + 5, deth->sqpn & QPN_MASK);
	return URNIC_DETH_BYTES;
}

/* XRCETH (IBTA Annex A14): Resv8, XRC SRQ number 24, the same layout as the RDETH. */
ssize_t urnic_xrceth_decode(uint32_t *srqn, const uint8_t *buf, size_t len)
{
	if (len < URNIC_XRCETH_BYTES || buf[0] != 0)
		return -EBADMSG;
	*srqn = urnic_get_be24(buf + 1);
	return URNIC_XRCETH_BYTES;
}

ssize_t urnic_xrceth_encode(uint32_t srqn, uint8_t *buf, size_t cap)
{
	if (cap < URNIC_XRCETH_BYTES)
		return -ENOBUFS;
	buf[0] = 0;
	urnic_put_be24(buf + 1, srqn & QPN_MASK);
	return URNIC_XRCETH_BYTES;
}

ssize_t urnic_reth_decode(struct urnic_reth *reth, const uint8_t *buf, size_t len)
{
	/* IBTA 9.3 RETH: VA 64, R_Key 32, DMA length 32. */
	if (len < URNIC_RETH_BYTES)
		return -EBADMSG;
	reth->va = urnic_get_be64(buf);
	reth->rkey = urnic_get_be32(buf + 8);
	reth->len = urnic_get_be32(buf + 12);
	return URNIC_RETH_BYTES;
}

ssize_t urnic_reth_encode(const struct urnic_reth *reth, uint8_t *buf, size_t cap)
{
	if (cap < URNIC_RETH_BYTES)
		return -ENOBUFS;
	urnic_put_be64(buf, reth->va);
	urnic_put_be32(buf + 8, reth->rkey);
	urnic_put_be32(buf + 12, reth->len);
	return URNIC_RETH_BYTES;
}

ssize_t urnic_atmeth_decode(struct urnic_atmeth *a, const uint8_t *buf, size_t len)
{
	/* IBTA 9.3 AtomicETH: VA 64, R_Key 32, Swap (or Add) Data 64, Compare Data 64; packed. */
	if (len < URNIC_ATMETH_BYTES)
		return -EBADMSG;
	a->va = urnic_get_be64(buf);
	a->rkey = urnic_get_be32(buf + 8);
	a->swap_add = urnic_get_be64(buf + 12);
	a->compare = urnic_get_be64(buf + 20);
	return URNIC_ATMETH_BYTES;
}

ssize_t urnic_atmeth_encode(const struct urnic_atmeth *a, uint8_t *buf, size_t cap)
{
	if (cap < URNIC_ATMETH_BYTES)
		return -ENOBUFS;
	urnic_put_be64(buf, a->va);
	urnic_put_be32(buf + 8, a->rkey);
	urnic_put_be64(buf + 12, a->swap_add);
	urnic_put_be64(buf + 20, a->compare);
	return URNIC_ATMETH_BYTES;
}

ssize_t urnic_aeth_decode(struct urnic_aeth *aeth, const uint8_t *buf, size_t len)
{
	/* IBTA 9.3 AETH: Syndrome 8, MSN 24; no reserved bits. */
	if (len < URNIC_AETH_BYTES)
		return -EBADMSG;
	aeth->syndrome = buf[0];
	aeth->msn = urnic_get_be24(buf + 1);
	return URNIC_AETH_BYTES;
}

ssize_t urnic_aeth_encode(const struct urnic_aeth *aeth, uint8_t *buf, size_t cap)
{
	if (cap < URNIC_AETH_BYTES)
		return -ENOBUFS;
	buf[0] = aeth->syndrome;
	urnic_put_be24(buf + 1, aeth->msn & 0xffffffu);
	return URNIC_AETH_BYTES;
}

/* The 4- and 8-byte headers with one opaque field: ImmDt, IETH, FETH, AtomicAckETH. */
static ssize_t be32_decode(uint32_t *v, const uint8_t *buf, size_t len)
{
	if (len < 4)
		return -EBADMSG;
	*v = urnic_get_be32(buf);
	return 4;
}

/* IBTA A17.9.3: a CNP's 16 bytes after the BTH are reserved, sent as zeros; like the
 * BTH's reserved bits, a CNP that sets them is dropped rather than believed. */
static ssize_t cnp_resv_decode(const uint8_t *buf, size_t len)
{
	if (len < URNIC_CNP_RESV_BYTES)
		return -EBADMSG;
	for (size_t i = 0; i < URNIC_CNP_RESV_BYTES; i++)
		if (buf[i])
			return -EBADMSG;
	return URNIC_CNP_RESV_BYTES;
}

static ssize_t cnp_resv_encode(uint8_t *buf, size_t cap)
{
	if (cap < URNIC_CNP_RESV_BYTES)
		return -ENOBUFS;
	memset(buf, 0, URNIC_CNP_RESV_BYTES);
	return URNIC_CNP_RESV_BYTES;
}

static ssize_t be32_encode(uint32_t v, uint8_t *buf, size_t cap)
{
	if (cap < 4)
		return -ENOBUFS;
	urnic_put_be32(buf, v);
	return 4;
}

/* ImmDt (IBTA 9.3) stays in network byte order, as ibv_wc.imm_data does. */
static ssize_t immdt_decode(uint32_t *imm_be, const uint8_t *buf, size_t len)
{
	if (len < URNIC_IMMDT_BYTES)
		return -EBADMSG;
	memcpy(imm_be, buf, URNIC_IMMDT_BYTES);
	return URNIC_IMMDT_BYTES;
}

static ssize_t immdt_encode(uint32_t imm_be, uint8_t *buf, size_t cap)
{
	if (cap < URNIC_IMMDT_BYTES)
		return -ENOBUFS;
	memcpy(buf, &imm_be, URNIC_IMMDT_BYTES);
	return URNIC_IMMDT_BYTES;
}

static ssize_t atmack_decode(uint64_t *orig, const uint8_t *buf, size_t len)
{
	if (len < URNIC_ATMACK_BYTES)
		return -EBADMSG;
	*orig = urnic_get_be64(buf);
	return URNIC_ATMACK_BYTES;
}

static ssize_t atmack_encode(uint64_t orig, uint8_t *buf, size_t cap)
{
	if (cap < URNIC_ATMACK_BYTES)
		return -ENOBUFS;
	urnic_put_be64(buf, orig);
	return URNIC_ATMACK_BYTES;
}

/* Run one header codec at buf + off; stop at the first error. */
#define STEP(call)                                                                                 \
	do {                                                                                       \
		n = (call);                                                                        \
		if (n < 0)                                                                         \
			return n;                                                                  \
		off += (size_t)n;                                                                  \
	} while (0)

/*
 * The extension headers after the BTH, in IBTA 9.2 order: XRCETH (XRC requests, Annex
 * A14: right after the BTH), RDETH, DETH, RETH or AtomicETH (FLUSH: FETH first, IBTA
 * A19.4.1), AETH, AtomicAckETH, ImmDt, IETH. Returns the bytes consumed or -EBADMSG.
 */
static ssize_t ext_decode(struct urnic_pkt *pkt, uint32_t flags, const uint8_t *buf, size_t len)
{
	size_t off = 0;
	ssize_t n;

	if (flags & URNIC_OPF_XRCETH)
		STEP(urnic_xrceth_decode(&pkt->xrc_srqn, buf + off, len - off));
	if (flags & URNIC_OPF_RDETH)
		STEP(rdeth_decode(&pkt->rdeth_eecnxt, buf + off, len - off));
	if (flags & URNIC_OPF_DETH)
		STEP(urnic_deth_decode(&pkt->deth, buf + off, len - off));
	if (flags & URNIC_OPF_FETH)
		STEP(be32_decode(&pkt->feth, buf + off, len - off));
	if (flags & URNIC_OPF_RETH)
		STEP(urnic_reth_decode(&pkt->reth, buf + off, len - off));
	if (flags & URNIC_OPF_ATMETH)
		STEP(urnic_atmeth_decode(&pkt->atmeth, buf + off, len - off));
	if (flags & URNIC_OPF_AETH)
		STEP(urnic_aeth_decode(&pkt->aeth, buf + off, len - off));
	if (flags & URNIC_OPF_ATMACK)
		STEP(atmack_decode(&pkt->atmack_orig, buf + off, len - off));
	if (flags & URNIC_OPF_IMMDT)
		STEP(immdt_decode(&pkt->imm_be, buf + off, len - off));
	if (flags & URNIC_OPF_IETH)
		STEP(be32_decode(&pkt->ieth_rkey, buf + off, len - off));
	if (flags & URNIC_OPF_CNP)
		STEP(cnp_resv_decode(buf + off, len - off));
	return (ssize_t)off;
}

static ssize_t ext_encode(const struct urnic_pkt *pkt, uint32_t flags, uint8_t *buf, size_t cap)
{
	size_t off = 0;
	ssize_t n;

	if (flags & URNIC_OPF_XRCETH)
		STEP(urnic_xrceth_encode(pkt->xrc_srqn, buf + off, cap - off));
	if (flags & URNIC_OPF_RDETH)
		STEP(rdeth_encode(pkt->rdeth_eecnxt, buf + off, cap - off));
	if (flags & URNIC_OPF_DETH)
		STEP(urnic_deth_encode(&pkt->deth, buf + off, cap - off));
	if (flags & URNIC_OPF_FETH)
		STEP(be32_encode(pkt->feth, buf + off, cap - off));
	if (flags & URNIC_OPF_RETH)
		STEP(urnic_reth_encode(&pkt->reth, buf + off, cap - off));
	if (flags & URNIC_OPF_ATMETH)
		STEP(urnic_atmeth_encode(&pkt->atmeth, buf + off, cap - off));
	if (flags & URNIC_OPF_AETH)
		STEP(urnic_aeth_encode(&pkt->aeth, buf + off, cap - off));
	if (flags & URNIC_OPF_ATMACK)
		STEP(atmack_encode(pkt->atmack_orig, buf + off, cap - off));
	if (flags & URNIC_OPF_IMMDT)
		STEP(immdt_encode(pkt->imm_be, buf + off, cap - off));
	if (flags & URNIC_OPF_IETH)
		STEP(be32_encode(pkt->ieth_rkey, buf + off, cap - off));
	if (flags & URNIC_OPF_CNP)
		STEP(cnp_resv_encode(buf + off, cap - off));
	return (ssize_t)off;
}
#undef STEP

/*
 * Fields the opcode does not carry come back zero. *pkt is written only on success
 * (validate, then mutate). A packet whose opcode carries no payload but has payload
 * bytes decodes; rejecting it is the responder's length check (rxe's check_length()).
 */
ssize_t urnic_pkt_decode(struct urnic_pkt *pkt, const uint8_t *buf, size_t len)
{
	const struct urnic_opcode_info *info;
	struct urnic_pkt p;
	size_t hdr_bytes, tail_bytes;
	ssize_t n;

	memset(&p, 0, sizeof(p));
	n = urnic_bth_decode(&p.bth, buf, len);
	if (n < 0)
		return n;
	info = urnic_opcode_info(p.bth.opcode);
	if (!info->name)
		return -EBADMSG; /* unsupported transport or reserved opcode: drop */
	/* Room for every header, then the ICRC (Annex A17.3.3) after pad and payload. */
	if (len < (size_t)info->hdr_bytes + URNIC_ICRC_BYTES)
		return -EBADMSG;
	n = ext_decode(&p, info->flags, buf + URNIC_BTH_BYTES, len - URNIC_BTH_BYTES);
	if (n < 0)
		return n;
	hdr_bytes = URNIC_BTH_BYTES + (size_t)n;
	if (hdr_bytes != info->hdr_bytes)
		return -EBADMSG; /* table and codecs disagree: cannot happen */
	/* IBTA 9.2: PadCnt bytes sit between the payload and the ICRC. */
	tail_bytes = len - hdr_bytes - URNIC_ICRC_BYTES;
	if (p.bth.pad > tail_bytes)
		return -EBADMSG;
	p.payload = buf + hdr_bytes;
	if (tail_bytes - p.bth.pad > UINT32_MAX)
		return -EBADMSG;
	p.payload_bytes = (uint32_t)(tail_bytes - p.bth.pad);
	p.bytes = (uint32_t)(hdr_bytes + tail_bytes + URNIC_ICRC_BYTES);
	*pkt = p;
	return (ssize_t)hdr_bytes;
}

ssize_t urnic_pkt_encode_hdr(const struct urnic_pkt *pkt, uint8_t *buf, size_t cap)
{
	const struct urnic_opcode_info *info = urnic_opcode_info(pkt->bth.opcode);
	ssize_t n;

	if (!info->name)
		return -EINVAL;
	if (cap < info->hdr_bytes)
		return -ENOBUFS;
	n = urnic_bth_encode(&pkt->bth, buf, cap);
	if (n < 0)
		return n;
	n = ext_encode(pkt, info->flags, buf + URNIC_BTH_BYTES, cap - URNIC_BTH_BYTES);
	if (n < 0)
		return n;
	return URNIC_BTH_BYTES + n;
}
