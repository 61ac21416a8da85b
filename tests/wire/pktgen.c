/* SPDX-License-Identifier: MIT */
/*
 * pktgen.c - random packets for every opcode in the table, and field-wise comparison.
 *
 * Field widths follow IBTA Vol.1 9.2-9.3 (24-bit QPNs, PSNs, MSNs, 2-bit PadCnt), so a
 * generated packet is exactly what urnic_pkt_decode can return. Tests only.
 */
#include "pktgen.h"

#include <string.h>

#include "wire/byteorder.h"
#include "wire/psn.h"

uint64_t wire_rng_u64(struct wire_rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint32_t wire_rng_u32(struct wire_rng *r)
{
	return (uint32_t)(wire_rng_u64(r) >> 32);
}

uint32_t wire_rng_below(struct wire_rng *r, uint32_t n)
{
	return (uint32_t)(((uint64_t)wire_rng_u32(r) * n) >> 32);
}

static bool coin(struct wire_rng *r)
{
	return wire_rng_u64(r) & 1;
}

void wire_pkt_random(struct urnic_pkt *pkt, uint8_t opcode, struct wire_rng *r)
{
	uint32_t flags = urnic_opcode_info(opcode)->flags;

	memset(pkt, 0, sizeof(*pkt));
	pkt->bth.opcode = opcode;
	pkt->bth.se = coin(r);
	pkt->bth.mig = coin(r);
	pkt->bth.pad = (uint8_t)wire_rng_below(r, 4);
	pkt->bth.tver = URNIC_BTH_TVER;
	pkt->bth.pkey = (uint16_t)wire_rng_u32(r);
	pkt->bth.fecn = coin(r);
	pkt->bth.becn = coin(r);
	pkt->bth.dqpn = wire_rng_u32(r) & 0xffffffu;
	pkt->bth.ackreq = coin(r);
	pkt->bth.psn = wire_rng_u32(r) & URNIC_PSN_MASK;
	if (flags & URNIC_OPF_XRCETH)
		pkt->xrc_srqn = wire_rng_u32(r) & 0xffffffu;
	if (flags & URNIC_OPF_RDETH)
		pkt->rdeth_eecnxt = wire_rng_u32(r) & 0xffffffu;
	if (flags & URNIC_OPF_DETH) {
		pkt->deth.qkey = wire_rng_u32(r);
		pkt->deth.sqpn = wire_rng_u32(r) & 0xffffffu;
	}
	if (flags & URNIC_OPF_RETH) {
		pkt->reth.va = wire_rng_u64(r);
		pkt->reth.rkey = wire_rng_u32(r);
		pkt->reth.len = wire_rng_u32(r);
	}
	if (flags & URNIC_OPF_ATMETH) {
		pkt->atmeth.va = wire_rng_u64(r);
		pkt->atmeth.rkey = wire_rng_u32(r);
		pkt->atmeth.swap_add = wire_rng_u64(r);
		pkt->atmeth.compare = wire_rng_u64(r);
	}
	if (flags & URNIC_OPF_AETH) {
		pkt->aeth.syndrome = (uint8_t)wire_rng_u32(r);
		pkt->aeth.msn = wire_rng_u32(r) & 0xffffffu;
	}
	if (flags & URNIC_OPF_ATMACK)
		pkt->atmack_orig = wire_rng_u64(r);
	if (flags & URNIC_OPF_IMMDT)
		pkt->imm_be = wire_rng_u32(r);
	if (flags & URNIC_OPF_IETH)
		pkt->ieth_rkey = wire_rng_u32(r);
	if (flags & URNIC_OPF_FETH)
		pkt->feth = wire_rng_u32(r);
}

const struct urnic_icrc_flow wire_test_flow = {
	.ipv6 = false,
	.src = { 10, 50, 0, 12 },
	.dst = { 10, 50, 0, 11 },
	.ip_id = 0,
	.sport = 0xc000,
	.dport = URNIC_ROCE_UDP_PORT,
};

size_t wire_pkt_build(const struct urnic_pkt *pkt, const uint8_t *payload, size_t payload_bytes,
		      uint8_t *buf, size_t cap)
{
	ssize_t hdr = urnic_pkt_encode_hdr(pkt, buf, cap);
	size_t len, i;
	struct urnic_frag frag;

	if (hdr < 0)
		return 0;
	len = (size_t)hdr;
	if (cap - len < payload_bytes + pkt->bth.pad + URNIC_ICRC_BYTES)
		return 0;
	for (i = 0; i < payload_bytes; i++)
		buf[len + i] = payload ? payload[i] : (uint8_t)i;
	len += payload_bytes;
	memset(buf + len, 0, pkt->bth.pad);
	len += pkt->bth.pad;
	frag.base = buf;
	frag.len = len;
	urnic_put_le32(buf + len, urnic_icrc_flow(&wire_test_flow, &frag, 1, len));
	return len + URNIC_ICRC_BYTES;
}

const char *wire_pkt_diff(const struct urnic_pkt *a, const struct urnic_pkt *b)
{
#define SAME(f)                                                                                    \
	do {                                                                                       \
		if (a->f != b->f)                                                                  \
			return #f;                                                                 \
	} while (0)
	SAME(bth.opcode);
	SAME(bth.se);
	SAME(bth.mig);
	SAME(bth.pad);
	SAME(bth.tver);
	SAME(bth.pkey);
	SAME(bth.fecn);
	SAME(bth.becn);
	SAME(bth.dqpn);
	SAME(bth.ackreq);
	SAME(bth.psn);
	SAME(xrc_srqn);
	SAME(rdeth_eecnxt);
	SAME(deth.qkey);
	SAME(deth.sqpn);
	SAME(reth.va);
	SAME(reth.rkey);
	SAME(reth.len);
	SAME(atmeth.va);
	SAME(atmeth.rkey);
	SAME(atmeth.swap_add);
	SAME(atmeth.compare);
	SAME(aeth.syndrome);
	SAME(aeth.msn);
	SAME(atmack_orig);
	SAME(imm_be);
	SAME(ieth_rkey);
	SAME(feth);
	SAME(payload_bytes);
#undef SAME
	return NULL;
}
