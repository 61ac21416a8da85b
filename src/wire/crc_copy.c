/* SPDX-License-Identifier: MIT */
/*
 * crc_copy.c - memcpy and crc32_gzip_refl() in one pass over the data (crc_copy.h).
 *
 * The ICRC send path copies each packet into the send buffer; computing the CRC in the
 * same pass saves a read of the payload. Each vector is loaded once, stored to dst and
 * folded into the CRC by carry-less multiplication, as in Intel's "Fast CRC Computation
 * for Generic Polynomials Using PCLMULQDQ Instruction" (Gopal et al., 2009), in its
 * bit-reflected form (the Linux kernel's arch/x86/crypto/crc32-pclmul_asm.S). Five
 * implementations: 4 x 512-bit VPCLMULQDQ accumulators (256 bytes a turn); 4 x 256-bit
 * ones (128 bytes) in VEX encoding, for CPUs with AVX2 and VPCLMULQDQ but no AVX-512
 * (AMD Zen 3); 8 x 128-bit PCLMULQDQ ones (128 bytes) in SSE and in VEX encoding; memcpy
 * followed by ISA-L. The first call picks the best the CPU runs. Buffers under 256 bytes
 * and the last < 16 bytes of the others go to memcpy and ISA-L, quick on short buffers.
 * urnic_crc32() runs the 256-bit folding without the stores where that is the choice, and
 * ISA-L's crc32_gzip_refl everywhere else: its AVX-512 code folds as the 512-bit one here.
 */
#include "wire/crc_copy.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include <immintrin.h>
#include <isa-l/crc.h>

/*
 * The folding algebra. A 16-byte block is the polynomial X = H x^64 + L of its message
 * bits (reflected: bit 0 of byte 0 has the highest degree), H in its low quadword. Moving
 * X forward over the D bits of data that follow multiplies it by x^D, and
 *   X x^D = H x^(D+64) + L x^D == (H k1 + L k2) x^32 mod P,
 *   k1 = x^(D+32) mod P, k2 = x^(D-32) mod P,
 * a product of 96 bits which, times x^32, lines up with the block D bits on and is XORed
 * into it. The x^32 costs nothing: a constant stored as bitrev32(k) << 1 makes a reflected
 * PCLMULQDQ put its product exactly there.
 *
 * Computed by shifting x^n modulo P = 0x104C11DB7 (bit reversal of 0xEDB88320); the
 * D = 512 and 128, 96 -> 64 and Barrett values are Linux's R1..R5, RU and P
 * (crc32-pclmul_asm.S). Each is used at some length the test runs, and a wrong bit in any
 * of them fails it (tests/wire/test_crc_copy.c).
 */
#define K_X2080 0x11542778aLL /* D = 2048: a 256-byte turn of the 512-bit loop */
#define K_X2016 0x1322d1430LL
#define K_X1568 0x1821d8bc0LL /* D = 1536 */
#define K_X1504 0x12e958ac4LL
#define K_X1056 0x1e88ef372LL /* D = 1024: a 128-byte turn of the 128-bit loop */
#define K_X992 0x14a7fe880LL
#define K_X928 0x1ea89367eLL /* D = 896 */
#define K_X864 0x1d7cfc6acLL
#define K_X800 0x0df068dc2LL /* D = 768 */
#define K_X736 0x18cb44e58LL
#define K_X672 0x1c7569e54LL /* D = 640 */
#define K_X608 0x0ae0b5394LL
#define K_X544 0x154442bd4LL /* D = 512: a 64-byte block */
#define K_X480 0x1c6e41596LL
#define K_X416 0x03db1ecdcLL /* D = 384 */
#define K_X352 0x174359406LL
#define K_X288 0x0f1da05aaLL /* D = 256 */
#define K_X224 0x15a546366LL
#define K_X160 0x1751997d0LL /* D = 128: a 16-byte block */
#define K_X96 0x0ccaa009eLL
#define K_X64 0x163cd6124LL  /* 96 -> 64 bits */
#define K_MU 0x1f7011641LL   /* bitrev33(floor(x^64 / P)), for Barrett */
#define K_POLY 0x1db710641LL /* bitrev33(P) */

/*
 * Block i of 8 consecutive 16-byte blocks moved on to the last one, D = 128 (7 - i): all
 * at once rather than one after the other, to shorten the dependency chain at the end.
 * The last four are the lanes of a 512-bit register (the zero one adds nothing).
 */
static const int64_t to_last[8][2] __attribute__((aligned(64))) = {
	{ K_X928, K_X864 }, { K_X800, K_X736 }, { K_X672, K_X608 }, { K_X544, K_X480 },
	{ K_X416, K_X352 }, { K_X288, K_X224 }, { K_X160, K_X96 },  { 0, 0 },
};

/* One turn of the 512-bit loop. From there it beats memcpy + ISA-L (9.5 ns against 10.2
 * at 256 bytes, bench/crc_copy.c); below, those two are what is left anyway. */
#define SHORT_BYTES 256

/*
 * The 128-bit code is inlined into each of its callers (always_inline), so it comes out
 * VEX-encoded where the caller may use AVX: legacy SSE instructions run at half speed
 * after code that left the upper halves of the vector registers dirty (measured on a Zen
 * 5 after ISA-L's crc32_gzip_refl, which does not end with vzeroupper).
 */
#define INLINE static inline __attribute__((always_inline))
#define TARGET_PCLMUL __attribute__((target("sse4.1,pclmul")))
#define TARGET_PCLMUL_AVX __attribute__((target("avx,pclmul")))
#define TARGET_VPCLMUL __attribute__((target("avx512f,avx512vl,pclmul,vpclmulqdq")))
#define TARGET_VPCLMUL256 __attribute__((target("avx2,pclmul,vpclmulqdq")))

static uint32_t copy_then_crc(uint32_t crc, void *dst, const void *src, size_t len)
{
	if (!len) /* memcpy's pointers must be valid even for 0 bytes */
		return crc;
	memcpy(dst, src, len);
	return crc32_gzip_refl(crc, src, len);
}

static uint32_t crc_isal(uint32_t crc, const void *buf, size_t len)
{
	return crc32_gzip_refl(crc, buf, len);
}

/* x moved on by D bits, k holding x^(D+32) in its low quadword and x^(D-32) high. */
TARGET_PCLMUL INLINE __m128i fold16(__m128i x, __m128i k)
{
	return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

/*
 * The CRC register (uninverted) of a message whose folded remainder is x: x * x^32 mod P.
 * The low quadword times x^96 folds 128 bits to 96, the top 32 of those times x^64 fold to
 * 64, and a Barrett reduction (q = floor(U_hi * mu / x^32), U - q P) leaves 32, which the
 * reflected order puts in bits 32..63 (Intel's paper, section 4; crc32-pclmul_asm.S).
 */
TARGET_PCLMUL INLINE uint32_t reduce16(__m128i x)
{
	const __m128i k = _mm_set_epi64x(K_X64, K_X96);
	const __m128i barrett = _mm_set_epi64x(K_MU, K_POLY);
	const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
	__m128i t, u, q;

	t = _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_srli_si128(x, 8));
	u = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(t, mask32), k, 0x10),
			  _mm_srli_si128(t, 4));
	q = _mm_and_si128(_mm_clmulepi64_si128(_mm_and_si128(u, mask32), barrett, 0x10), mask32);
	u = _mm_xor_si128(u, _mm_clmulepi64_si128(q, barrett, 0x00));
	return (uint32_t)_mm_extract_epi32(u, 1);
}

/*
 * The 16-byte blocks from s + at to s + len after the wide loop, then the last < 16 bytes
 * through ISA-L; each also stored at the same offset from d if store (a constant: the
 * callers are inlined), d untouched otherwise.
 */
TARGET_PCLMUL INLINE uint32_t finish(__m128i x, uint8_t *d, const uint8_t *s, size_t at, size_t len,
				     bool store)
{
	const __m128i k128 = _mm_set_epi64x(K_X96, K_X160);
	uint32_t crc;

	for (; len - at >= 16; at += 16) {
		__m128i y = _mm_loadu_si128((const __m128i *)(s + at));

		if (store)
			_mm_storeu_si128((__m128i *)(d + at), y);
		x = _mm_xor_si128(fold16(x, k128), y);
	}
	crc = ~reduce16(x);
	if (at == len)
		return crc;
	return store ? copy_then_crc(crc, d + at, s + at, len - at)
		     : crc32_gzip_refl(crc, s + at, len - at);
}

/* 8 accumulators of 16 bytes, 128 bytes a turn: enough to cover PCLMULQDQ's latency. */
TARGET_PCLMUL INLINE uint32_t pclmul_body(uint32_t crc, void *dst, const void *src, size_t len)
{
	const __m128i k1024 = _mm_set_epi64x(K_X992, K_X1056);
	const uint8_t *s = src;
	uint8_t *d = dst;
	__m128i x[8], acc;
	size_t n;

	if (len < SHORT_BYTES)
		return copy_then_crc(crc, dst, src, len);
#pragma GCC unroll 8
	for (int i = 0; i < 8; i++) {
		x[i] = _mm_loadu_si128((const __m128i *)(s + 16 * i));
		_mm_storeu_si128((__m128i *)(d + 16 * i), x[i]);
	}
	/* ISA-L's convention: the register starts as ~crc, over the first 32 message bits. */
	x[0] = _mm_xor_si128(x[0], _mm_cvtsi32_si128((int)~crc));
	for (s += 128, d += 128, n = len - 128; n >= 128; n -= 128, s += 128, d += 128) {
#pragma GCC unroll 8
		for (int i = 0; i < 8; i++) {
			__m128i y = _mm_loadu_si128((const __m128i *)(s + 16 * i));

			_mm_storeu_si128((__m128i *)(d + 16 * i), y);
			x[i] = _mm_xor_si128(fold16(x[i], k1024), y);
		}
	}
	acc = x[7];
#pragma GCC unroll 7
	for (int i = 0; i < 7; i++)
		acc = _mm_xor_si128(acc, fold16(x[i], _mm_load_si128((const __m128i *)to_last[i])));
	return finish(acc, d, s, 0, n, true);
}

TARGET_PCLMUL static uint32_t copy_pclmul(uint32_t crc, void *dst, const void *src, size_t len)
{
	return pclmul_body(crc, dst, src, len);
}

TARGET_PCLMUL_AVX static uint32_t copy_pclmul_avx(uint32_t crc, void *dst, const void *src,
						  size_t len)
{
	return pclmul_body(crc, dst, src, len);
}

/* Each 128-bit lane of x moved on by D bits and XORed with y (vpternlogq 0x96: a^b^c). */
TARGET_VPCLMUL INLINE __m512i fold64(__m512i x, __m512i k, __m512i y)
{
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
					 _mm512_clmulepi64_epi128(x, k, 0x11), y, 0x96);
}

TARGET_VPCLMUL INLINE __m512i pair(long long k1, long long k2)
{
	return _mm512_broadcast_i32x4(_mm_set_epi64x(k2, k1));
}

/* 4 accumulators of 64 bytes, 256 bytes a turn, as ISA-L's crc32_gzip_refl_by16_10. */
TARGET_VPCLMUL static uint32_t copy_vpclmul(uint32_t crc, void *dst, const void *src, size_t len)
{
	const __m512i k2048 = pair(K_X2080, K_X2016), k512 = pair(K_X544, K_X480);
	const uint8_t *s = src;
	uint8_t *d = dst;
	__m512i x0, x1, x2, x3, t;
	__m256i h;
	size_t n;

	if (len < SHORT_BYTES)
		return copy_then_crc(crc, dst, src, len);
	x0 = _mm512_loadu_si512(s);
	x1 = _mm512_loadu_si512(s + 64);
	x2 = _mm512_loadu_si512(s + 128);
	x3 = _mm512_loadu_si512(s + 192);
	_mm512_storeu_si512(d, x0);
	_mm512_storeu_si512(d + 64, x1);
	_mm512_storeu_si512(d + 128, x2);
	_mm512_storeu_si512(d + 192, x3);
	x0 = _mm512_xor_si512(x0, _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)~crc)));
	for (s += 256, d += 256, n = len - 256; n >= 256; n -= 256, s += 256, d += 256) {
		__m512i y0 = _mm512_loadu_si512(s);
		__m512i y1 = _mm512_loadu_si512(s + 64);
		__m512i y2 = _mm512_loadu_si512(s + 128);
		__m512i y3 = _mm512_loadu_si512(s + 192);

		_mm512_storeu_si512(d, y0);
		_mm512_storeu_si512(d + 64, y1);
		_mm512_storeu_si512(d + 128, y2);
		_mm512_storeu_si512(d + 192, y3);
		x0 = fold64(x0, k2048, y0);
		x1 = fold64(x1, k2048, y1);
		x2 = fold64(x2, k2048, y2);
		x3 = fold64(x3, k2048, y3);
	}
	/* The four moved on to the last, over 192, 128 and 64 bytes. */
	x3 = fold64(x0, pair(K_X1568, K_X1504), x3);
	x3 = fold64(x1, pair(K_X1056, K_X992), x3);
	x3 = fold64(x2, k512, x3);
	for (; n >= 64; n -= 64, s += 64, d += 64) {
		__m512i y = _mm512_loadu_si512(s);

		_mm512_storeu_si512(d, y);
		x3 = fold64(x3, k512, y);
	}
	/* Lanes 0..2 moved on to lane 3 (to_last[4..7]), and the four XORed. */
	t = fold64(x3, _mm512_load_si512(to_last[4]), _mm512_setzero_si512());
	h = _mm256_xor_si256(_mm512_castsi512_si256(t), _mm512_extracti64x4_epi64(t, 1));
	return finish(_mm_ternarylogic_epi64(_mm256_castsi256_si128(h),
					     _mm256_extracti128_si256(h, 1),
					     _mm512_extracti32x4_epi32(x3, 3), 0x96),
		      d, s, 0, n, true);
}

/* Each 128-bit lane of x moved on by D bits and XORed with y, in VEX-256. */
TARGET_VPCLMUL256 INLINE __m256i fold32(__m256i x, __m256i k, __m256i y)
{
	return _mm256_xor_si256(_mm256_xor_si256(_mm256_clmulepi64_epi128(x, k, 0x00), y),
				_mm256_clmulepi64_epi128(x, k, 0x11));
}

TARGET_VPCLMUL256 INLINE __m256i pair256(long long k1, long long k2)
{
	return _mm256_broadcastsi128_si256(_mm_set_epi64x(k2, k1));
}

/* The 32 bytes at s + at, stored at d + at if store. */
TARGET_VPCLMUL256 INLINE __m256i load32(uint8_t *d, const uint8_t *s, size_t at, bool store)
{
	__m256i y = _mm256_loadu_si256((const __m256i *)(s + at));

	if (store)
		_mm256_storeu_si256((__m256i *)(d + at), y);
	return y;
}

/*
 * 4 accumulators of 32 bytes, 128 bytes a turn, over len >= SHORT_BYTES. 8 (256 bytes a
 * turn) ran no faster here (45 GB/s at 4 KiB either way, bench/crc_copy.c): the loop is
 * bound by VPCLMULQDQ's throughput, not its latency. At the end the first two move on by
 * 64 bytes onto the last two, the third by 32 onto the fourth; then the 32-byte blocks
 * left, then the low lane onto the high one and the 16-byte blocks as finish() does.
 */
TARGET_VPCLMUL256 INLINE uint32_t vpclmul256_body(uint32_t crc, uint8_t *d, const uint8_t *s,
						  size_t len, bool store)
{
	const __m256i k1024 = pair256(K_X1056, K_X992), k256 = pair256(K_X288, K_X224);
	__m256i x[4];
	__m128i lo;
	size_t at;

#pragma GCC unroll 4
	for (int i = 0; i < 4; i++)
		x[i] = load32(d, s, 32 * (size_t)i, store);
	x[0] = _mm256_xor_si256(x[0], _mm256_zextsi128_si256(_mm_cvtsi32_si128((int)~crc)));
	for (at = 128; len - at >= 128; at += 128) {
#pragma GCC unroll 4
		for (int i = 0; i < 4; i++)
			x[i] = fold32(x[i], k1024, load32(d, s, at + 32 * (size_t)i, store));
	}
	x[2] = fold32(x[0], pair256(K_X544, K_X480), x[2]);
	x[3] = fold32(x[1], pair256(K_X544, K_X480), x[3]);
	x[3] = fold32(x[2], k256, x[3]);
	for (; len - at >= 32; at += 32)
		x[3] = fold32(x[3], k256, load32(d, s, at, store));
	lo = _mm_xor_si128(fold16(_mm256_castsi256_si128(x[3]), _mm_set_epi64x(K_X96, K_X160)),
			   _mm256_extracti128_si256(x[3], 1));
	return finish(lo, d, s, at, len, store);
}

TARGET_VPCLMUL256 static uint32_t copy_vpclmul256(uint32_t crc, void *dst, const void *src,
						  size_t len)
{
	if (len < SHORT_BYTES)
		return copy_then_crc(crc, dst, src, len);
	return vpclmul256_body(crc, dst, src, len, true);
}

/* Loads only: dst is never formed. */
TARGET_VPCLMUL256 static uint32_t crc_vpclmul256(uint32_t crc, const void *buf, size_t len)
{
	if (len < SHORT_BYTES)
		return crc32_gzip_refl(crc, buf, len);
	return vpclmul256_body(crc, NULL, buf, len, false);
}

static bool has_pclmul(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("sse4.1") && __builtin_cpu_supports("pclmul");
}

static bool has_pclmul_avx(void)
{
	return has_pclmul() && __builtin_cpu_supports("avx");
}

static bool has_vpclmul256(void)
{
	return has_pclmul() && __builtin_cpu_supports("avx2") &&
	       __builtin_cpu_supports("vpclmulqdq");
}

static bool has_vpclmul(void)
{
	return has_pclmul() && __builtin_cpu_supports("avx512f") &&
	       __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("vpclmulqdq");
}

static bool always(void)
{
	return true;
}

/* Each implementation with the CRC-only function urnic_crc32() uses beside it. */
static const struct {
	const char *name;
	urnic_crc32_copy_fn *fn;
	urnic_crc32_fn *crc;
	bool (*supported)(void);
} impls[] = {
	[URNIC_CRC_COPY_PORTABLE] = { "portable", copy_then_crc, crc_isal, always },
	[URNIC_CRC_COPY_PCLMUL] = { "pclmul", copy_pclmul, crc_isal, has_pclmul },
	[URNIC_CRC_COPY_PCLMUL_AVX] = { "pclmul-avx", copy_pclmul_avx, crc_isal, has_pclmul_avx },
	[URNIC_CRC_COPY_VPCLMUL256] = { "vpclmul256", copy_vpclmul256, crc_vpclmul256,
					has_vpclmul256 },
	[URNIC_CRC_COPY_VPCLMUL] = { "vpclmul", copy_vpclmul, crc_isal, has_vpclmul },
};
_Static_assert(sizeof(impls) / sizeof(impls[0]) == URNIC_CRC_COPY_IMPLS,
	       "one entry per enum urnic_crc_copy_impl");

/* Set at the first call; racing first calls store the same pointers. */
static _Atomic(urnic_crc32_copy_fn *) chosen;
static _Atomic(urnic_crc32_fn *) chosen_crc;

urnic_crc32_copy_fn *urnic_crc32_copy_get(enum urnic_crc_copy_impl impl)
{
	if ((unsigned)impl >= URNIC_CRC_COPY_IMPLS || !impls[impl].supported())
		return NULL;
	return impls[impl].fn;
}

urnic_crc32_fn *urnic_crc32_get(enum urnic_crc_copy_impl impl)
{
	if ((unsigned)impl >= URNIC_CRC_COPY_IMPLS || !impls[impl].supported())
		return NULL;
	return impls[impl].crc;
}

const char *urnic_crc32_copy_name(enum urnic_crc_copy_impl impl)
{
	return (unsigned)impl < URNIC_CRC_COPY_IMPLS ? impls[impl].name : "?";
}

enum urnic_crc_copy_impl urnic_crc32_copy_chosen(void)
{
	int i = URNIC_CRC_COPY_IMPLS - 1;

	while (!impls[i].supported())
		i--;
	atomic_store_explicit(&chosen_crc, impls[i].crc, memory_order_relaxed);
	atomic_store_explicit(&chosen, impls[i].fn, memory_order_relaxed);
	return (enum urnic_crc_copy_impl)i;
}

uint32_t urnic_crc32_copy(uint32_t crc, void *dst, const void *src, size_t len)
{
	urnic_crc32_copy_fn *fn = atomic_load_explicit(&chosen, memory_order_relaxed);

	if (!fn)
		fn = impls[urnic_crc32_copy_chosen()].fn;
	return fn(crc, dst, src, len);
}

/* Short buffers go straight to ISA-L, as every implementation would send them. */
uint32_t urnic_crc32(uint32_t crc, const void *buf, size_t len)
{
	urnic_crc32_fn *fn;

	if (len < SHORT_BYTES)
		return crc32_gzip_refl(crc, buf, len);
	fn = atomic_load_explicit(&chosen_crc, memory_order_relaxed);
	if (!fn)
		fn = impls[urnic_crc32_copy_chosen()].crc;
	return fn(crc, buf, len);
}
