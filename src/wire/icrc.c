/* SPDX-License-Identifier: MIT */
/*
 * icrc.c - the RoCEv2 invariant CRC (IBTA Annex A17.3.3; rxe_icrc.c; reference 2.4).
 *
 * CRC-32 (IEEE 802.3, reflected, as zlib and ISA-L's crc32_gzip_refl) over 8 bytes of
 * 0xff for the masked LRH, the IP header and UDP header with their variant fields set to
 * ones, the BTH with byte 4 set to 0xff, and the rest of the UDP payload before the ICRC.
 * The caller's buffers are never written: masked bytes are fed from small stack copies.
 * urnic_icrc_ipv4_id() finds the IPv4 identification a sender used from the ICRC alone,
 * for receivers that cannot see the IP header (a UDP socket).
 * Out of scope: RoCEv1 (GRH instead of IP/UDP) and IPv4 options beyond copying them.
 */
#include <errno.h>
#include <string.h>

#include "wire/byteorder.h"
#include "wire/crc_copy.h"
#include "wire/pkt.h"

/* crc32(8 x 0xff) in zlib convention: rxe's seed 0xdebb20e3 is its complement, the raw
 * register value (rxe_icrc.c). Checked against ISA-L in tests/wire/test_icrc.c. */
#define ICRC_SEED 0x2144df1cu

#define IPV4_HDR_BYTES 20
#define IPV6_HDR_BYTES 40
#define UDP_HDR_BYTES 8
#define IPPROTO_UDP_NUM 17
#define IPV4_DF 0x4000u

/* ISA-L's crc32_gzip_refl, or the same CRC folded 256 bits at a time on CPUs with
 * VPCLMULQDQ but no AVX-512 (crc_copy.h). */
static uint32_t crc(uint32_t prev, const void *buf, size_t len)
{
	return urnic_crc32(prev, buf, len);
}

/* Annex A17.3.3: the IP fields routers may change are replaced by ones. */
static void mask_ip(uint8_t *ip, size_t len)
{
	if ((ip[0] >> 4) == 4) {
		ip[1] = 0xff; /* TOS (DSCP + ECN) */
		if (len > 8)
			ip[8] = 0xff; /* TTL */
		if (len > 11)
			ip[10] = ip[11] = 0xff; /* header checksum */
	} else {
		ip[0] |= 0x0f; /* traffic class, high nibble */
		if (len > 3)
			ip[1] = ip[2] = ip[3] = 0xff; /* traffic class low nibble, flow label */
		if (len > 7)
			ip[7] = 0xff; /* hop limit */
	}
}

static uint32_t crc_udp(uint32_t c, const uint8_t *udp)
{
	uint8_t u[UDP_HDR_BYTES];

	memcpy(u, udp, UDP_HDR_BYTES);
	u[6] = u[7] = 0xff; /* UDP checksum */
	return crc(c, u, sizeof(u));
}

/* The BTH comes first; its byte 4 (FECN, BECN, Resv6) is variant. */
static uint32_t crc_bth_first(uint32_t c, const uint8_t *bth, size_t len)
{
	uint8_t b[URNIC_BTH_BYTES];

	if (len > URNIC_BTH_BYTES)
		len = URNIC_BTH_BYTES;
	if (len)
		memcpy(b, bth, len);
	if (len > 4)
		b[4] = 0xff;
	return crc(c, b, len);
}

uint32_t urnic_icrc_raw(const uint8_t *ip, size_t ip_bytes, const uint8_t *udp,
			const uint8_t *payload, size_t payload_bytes)
{
	uint8_t h[IPV6_HDR_BYTES]; /* covers every masked byte of either version */
	size_t head = ip_bytes < sizeof(h) ? ip_bytes : sizeof(h);
	uint32_t c = ICRC_SEED;

	if (head) {
		memcpy(h, ip, head);
		mask_ip(h, head);
		c = crc(c, h, head);
		c = crc(c, ip + head, ip_bytes - head); /* IPv4 options, unmasked */
	}
	c = crc_udp(c, udp);
	c = crc_bth_first(c, payload, payload_bytes);
	if (payload_bytes > URNIC_BTH_BYTES)
		c = crc(c, payload + URNIC_BTH_BYTES, payload_bytes - URNIC_BTH_BYTES);
	return c;
}

/* The IP header a socket sender's kernel writes, already masked (reference 2.1), into h;
 * returns its length. */
static size_t flow_ip(uint8_t *h, const struct urnic_icrc_flow *flow, size_t udp_bytes)
{
	if (flow->ipv6) {
		h[0] = 0x6f; /* version 6, traffic class masked */
		h[1] = h[2] = h[3] = 0xff;
		urnic_put_be16(h + 4, (uint16_t)udp_bytes); /* payload length */
		h[6] = IPPROTO_UDP_NUM;
		h[7] = 0xff; /* hop limit */
		memcpy(h + 8, flow->src, 16);
		memcpy(h + 24, flow->dst, 16);
		return IPV6_HDR_BYTES;
	}
	h[0] = 0x45; /* version 4, IHL 5: no options */
	h[1] = 0xff; /* TOS */
	urnic_put_be16(h + 2, (uint16_t)(IPV4_HDR_BYTES + udp_bytes));
	urnic_put_be16(h + 4, flow->ip_id);
	urnic_put_be16(h + 6, IPV4_DF); /* IP_PMTUDISC_DO, as rxe: DF, offset 0 */
	h[8] = 0xff;			/* TTL */
	h[9] = IPPROTO_UDP_NUM;
	h[10] = h[11] = 0xff; /* header checksum */
	memcpy(h + 12, flow->src, 4);
	memcpy(h + 16, flow->dst, 4);
	return IPV4_HDR_BYTES;
}

/*
 * total_bytes must equal the sum of the fragment lengths: it sizes the IP and UDP length
 * fields. Fragments may split anywhere, even inside the BTH, so the first 12 bytes are
 * gathered into a masked copy before the rest is fed in place. That copy sits behind
 * the masked IP and UDP headers, and the three go to the CRC in one call: ISA-L has a
 * fixed cost per call, most of a small packet's ICRC (callgrind, bench/callgrind.sh).
 * A packet of up to ICRC_GATHER_BYTES is copied whole, for a single call (an ACK, a
 * small WRITE: 42 -> 25-33 ns here).
 */
#define ICRC_GATHER_BYTES 128
uint32_t urnic_icrc_flow(const struct urnic_icrc_flow *flow, const struct urnic_frag *frags,
			 size_t nfrags, size_t total_bytes)
{
	size_t udp_bytes = UDP_HDR_BYTES + total_bytes + URNIC_ICRC_BYTES;
	uint8_t h[IPV6_HDR_BYTES + UDP_HDR_BYTES + ICRC_GATHER_BYTES];
	size_t len = flow_ip(h, flow, udp_bytes), bth_at, i, skip, want;
	uint32_t c;

	urnic_put_be16(h + len, flow->sport);
	urnic_put_be16(h + len + 2, flow->dport);
	urnic_put_be16(h + len + 4, (uint16_t)udp_bytes);
	urnic_put_be16(h + len + 6, 0xffff); /* checksum, masked */
	len += UDP_HDR_BYTES;
	bth_at = len;
	/* A small packet is gathered whole: one call instead of two. */
	want = total_bytes <= ICRC_GATHER_BYTES ? total_bytes : URNIC_BTH_BYTES;
	for (i = 0; i < nfrags && len - bth_at < want; i++) {
		size_t n = want - (len - bth_at);

		if (n > frags[i].len)
			n = frags[i].len;
		if (n)
			memcpy(h + len, frags[i].base, n);
		len += n;
	}
	if (len - bth_at > 4)
		h[bth_at + 4] = 0xff; /* BTH byte 4: FECN, BECN, Resv6 */
	c = crc(ICRC_SEED, h, len);

	skip = len - bth_at;
	for (i = 0; i < nfrags; i++) {
		const uint8_t *p = frags[i].base;
		size_t flen = frags[i].len;

		if (skip >= flen) {
			skip -= flen;
			continue;
		}
		c = crc(c, p + skip, flen - skip);
		skip = 0;
	}
	return c;
}

/*
 * IPv4 identification recovery.
 *
 * The ICRC covers the IPv4 ID (A17.3.3 masks only TOS, TTL and the header checksum), and
 * a UDP socket does not report it. Senders that keep it 0 (urnic, and Linux for an
 * unconnected DF socket) are checked exactly; Linux rxe counts it per packet, so its
 * ICRC can only be checked by finding the ID that explains it.
 *
 * CRC-32 is linear: for messages of equal length, crc(A) ^ crc(B) is the unconditioned
 * CRC register of A ^ B. With A the packet as received and B the same with ID 0, A ^ B is
 * zero but for the two ID bytes, followed by T more covered bytes. In zlib's reflected
 * representation (bit 31 = x^0) the register after the two bytes w = id0 | id1 << 8 fed
 * from a zero register is w * x^16 mod P, and each following zero byte multiplies it by
 * x^8. So w = delta * x^-(8T + 16) mod P, and delta belongs to a genuine ID exactly when
 * that product has no bit set above bit 15. One in 65536 corrupted packets is therefore
 * accepted instead of one in 2^32; the Ethernet FCS below is unaffected.
 */
#define CRC32_POLY_REFLECTED 0xedb88320u

/* x^-(2^k) mod P, zlib representation: x^-1 = (P - 1) / x, then repeated squaring.
 * tests/wire/test_icrc.c recomputes the table. */
static const uint32_t x_inv_pow2[24] = {
	0xdb710641, 0x6d930ac3, 0x6d3d2d4d, 0x6567cb95, 0xd7125358, 0x5b358fd3,
	0x2e9bb40b, 0x12a59a49, 0x8df9403d, 0x5139de12, 0xba340226, 0x29c45641,
	0x12fbc105, 0xecd30c55, 0x3755ebd8, 0x24ee460c, 0x23783fcf, 0x479933fc,
	0xa39442a5, 0x9ea0056d, 0xf42608f6, 0x20cacf04, 0x2a0cf83d, 0xeffd8645,
};

/* a(x) * b(x) mod P, both reflected (zlib's multmodp). */
uint32_t urnic_crc32_mulmod(uint32_t a, uint32_t b)
{
	uint32_t m = 1u << 31, p = 0;

	while (a) {
		if (a & m) {
			p ^= b;
			a &= ~m;
		}
		m >>= 1;
		b = (b & 1) ? (b >> 1) ^ CRC32_POLY_REFLECTED : b >> 1;
	}
	return p;
}

int urnic_icrc_ipv4_id(uint32_t icrc_id0, uint32_t icrc_rx, size_t covered_udp_payload,
		       uint16_t *ip_id)
{
	/* Bytes after the ID: the rest of a 20-byte IPv4 header, UDP, covered payload. */
	uint64_t shift_bits =
		8 * (uint64_t)(IPV4_HDR_BYTES - 6 + UDP_HDR_BYTES + covered_udp_payload) + 16;
	uint32_t w = icrc_id0 ^ icrc_rx;
	unsigned k;

	if (shift_bits >> (sizeof(x_inv_pow2) / sizeof(x_inv_pow2[0])))
		return -EMSGSIZE;
	for (k = 0; shift_bits; k++, shift_bits >>= 1)
		if (shift_bits & 1)
			w = urnic_crc32_mulmod(x_inv_pow2[k], w);
	if (w >> 16)
		return -EBADMSG;
	*ip_id = (uint16_t)((w & 0xff) << 8 | w >> 8); /* first byte on the wire is high */
	return 0;
}
