/* SPDX-License-Identifier: MIT */
/*
 * crc_copy.h - copy a buffer and compute its CRC-32 in the same pass.
 *
 * The ICRC send path copies each packet's payload into the send buffer and computes the
 * ICRC over it (IBTA Annex A17.3.3; icrc.c). Done one after the other, the payload is read
 * twice; urnic_crc32_copy() loads each 64 bytes once, folds them into the CRC and stores
 * them, so the copy costs about nothing on top of the CRC.
 * The CRC is ISA-L's crc32_gzip_refl(): IEEE 802.3, reflected polynomial 0xEDB88320,
 * inverted on entry and exit, so calls chain. urnic_crc32() is the same CRC without the
 * copy, for the receive path. Context: any thread; no state but the choice of
 * implementation, made once at the first call of either.
 */
#ifndef URNIC_WIRE_CRC_COPY_H
#define URNIC_WIRE_CRC_COPY_H

#include <stddef.h>
#include <stdint.h>

/*
 * Copies len bytes from src to dst (which must not overlap, as for memcpy) and returns
 * crc32_gzip_refl(crc, src, len). Writes nothing outside dst[0..len). src and dst need
 * no alignment.
 */
uint32_t urnic_crc32_copy(uint32_t crc, void *dst, const void *src, size_t len);

/*
 * Returns crc32_gzip_refl(crc, buf, len), computed as the implementation urnic_crc32_copy()
 * uses would, without the stores: ISA-L's own code where it folds as wide as the CPU
 * allows, the 256-bit folding of URNIC_CRC_COPY_VPCLMUL256 on CPUs with AVX2 and
 * VPCLMULQDQ but no AVX-512 (ISA-L 2.30 folds 128 bits at a time there).
 */
uint32_t urnic_crc32(uint32_t crc, const void *buf, size_t len);

/* The implementations urnic_crc32_copy() chooses from, the fastest last: it takes the last
 * one the CPU runs. */
enum urnic_crc_copy_impl {
	URNIC_CRC_COPY_PORTABLE,   /* memcpy, then crc32_gzip_refl */
	URNIC_CRC_COPY_PCLMUL,	   /* 128-bit PCLMULQDQ + SSE4.1 */
	URNIC_CRC_COPY_PCLMUL_AVX, /* the same, VEX-encoded (AVX) */
	URNIC_CRC_COPY_VPCLMUL256, /* 256-bit VPCLMULQDQ + AVX2, VEX-encoded, no AVX-512 */
	URNIC_CRC_COPY_VPCLMUL,	   /* 512-bit VPCLMULQDQ + AVX-512 */
	URNIC_CRC_COPY_IMPLS
};

typedef uint32_t urnic_crc32_copy_fn(uint32_t crc, void *dst, const void *src, size_t len);
typedef uint32_t urnic_crc32_fn(uint32_t crc, const void *buf, size_t len);

/*
 * For tests and benchmarks: impl's function, NULL if this CPU cannot run it; the CRC-only
 * function urnic_crc32() uses where urnic_crc32_copy() uses impl (ISA-L's
 * crc32_gzip_refl for all but URNIC_CRC_COPY_VPCLMUL256), NULL likewise; impl's name
 * ("portable", "pclmul", "pclmul-avx", "vpclmul256", "vpclmul"; "?" out of range).
 */
urnic_crc32_copy_fn *urnic_crc32_copy_get(enum urnic_crc_copy_impl impl);
urnic_crc32_fn *urnic_crc32_get(enum urnic_crc_copy_impl impl);
const char *urnic_crc32_copy_name(enum urnic_crc_copy_impl impl);

/* The implementation urnic_crc32_copy() and urnic_crc32() use on this CPU (chosen on the
 * first call of this or of either). */
enum urnic_crc_copy_impl urnic_crc32_copy_chosen(void);

#endif
