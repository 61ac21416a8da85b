/* SPDX-License-Identifier: MIT */
/*
 * opcode.c - the BTH opcode table (from opcode.def) and the RNR NAK timer table.
 *
 * urnic_opcode_table[] is indexed by the BTH OpCode byte (IBTA Vol.1 9.2.1); hdr_bytes
 * is derived from the header flags so the sizes cannot drift from the flags. The RNR
 * timer table is IBTA 9.7.5.2.8 table 45. Pure data: no locks, no initialisation.
 */
#include "wire/pkt.h"

/* BTH plus every extension header an opcode carries (IBTA 9.2-9.3 sizes). */
#define HDR_BYTES(flags)                                                                           \
	(URNIC_BTH_BYTES + (((flags)&URNIC_OPF_XRCETH) ? URNIC_XRCETH_BYTES : 0) +                 \
	 (((flags)&URNIC_OPF_RDETH) ? URNIC_RDETH_BYTES : 0) +                                     \
	 (((flags)&URNIC_OPF_DETH) ? URNIC_DETH_BYTES : 0) +                                       \
	 (((flags)&URNIC_OPF_RETH) ? URNIC_RETH_BYTES : 0) +                                       \
	 (((flags)&URNIC_OPF_ATMETH) ? URNIC_ATMETH_BYTES : 0) +                                   \
	 (((flags)&URNIC_OPF_AETH) ? URNIC_AETH_BYTES : 0) +                                       \
	 (((flags)&URNIC_OPF_ATMACK) ? URNIC_ATMACK_BYTES : 0) +                                   \
	 (((flags)&URNIC_OPF_IMMDT) ? URNIC_IMMDT_BYTES : 0) +                                     \
	 (((flags)&URNIC_OPF_IETH) ? URNIC_IETH_BYTES : 0) +                                       \
	 (((flags)&URNIC_OPF_FETH) ? URNIC_FETH_BYTES : 0) +                                       \
	 (((flags)&URNIC_OPF_CNP) ? URNIC_CNP_RESV_BYTES : 0))

#define TRANSPORT_FLAGS (URNIC_OPF_RC | URNIC_OPF_UC | URNIC_OPF_UD | URNIC_OPF_XRC | URNIC_OPF_CNP)

/* Exactly one transport, and it matches the opcode's base (IBTA 9.2.1: bits 7-5). */
#define TRANSPORT_OK(value, flags)                                                                 \
	(((flags)&TRANSPORT_FLAGS) == (((value)&0xe0) == 0x00	? URNIC_OPF_RC                     \
				       : ((value)&0xe0) == 0x20 ? URNIC_OPF_UC                     \
				       : ((value)&0xe0) == 0x60 ? URNIC_OPF_UD                     \
				       : ((value)&0xe0) == 0x80 ? URNIC_OPF_CNP                    \
				       : ((value)&0xe0) == 0xa0 ? URNIC_OPF_XRC                    \
								: 0u))

/* Position in the message: FIRST, MIDDLE, LAST or ONLY; MIDDLE excludes the others. */
#define POSITION_OK(flags)                                                                         \
	(((flags)&URNIC_OPF_MIDDLE) ? !((flags)&URNIC_OPF_ONLY) : ((flags)&URNIC_OPF_ONLY) != 0)

/* Per-entry checks, at compile time. */
#define URNIC_OPCODE(name, value, flags)                                                           \
	_Static_assert((value) >= 0 && (value) <= 0xff, #name ": not a BTH opcode");               \
	_Static_assert(TRANSPORT_OK(value, flags), #name ": transport flag/base mismatch");        \
	_Static_assert(((flags)&URNIC_OPF_CNP)                                                     \
			       ? !((flags) & (URNIC_OPF_REQ | URNIC_OPF_RESP))                     \
			       : !((flags)&URNIC_OPF_REQ) != !((flags)&URNIC_OPF_RESP),            \
		       #name ": exactly one of REQ/RESP (a CNP is neither)");                      \
	_Static_assert(POSITION_OK(flags), #name ": bad FIRST/MIDDLE/LAST");                       \
	_Static_assert(!((flags)&URNIC_OPF_RETH) || !((flags)&URNIC_OPF_ATMETH),                   \
		       #name ": RETH and AtomicETH are exclusive");                                \
	_Static_assert(!((flags)&URNIC_OPF_FETH) || ((flags)&URNIC_OPF_RETH),                      \
		       #name ": FETH comes with a RETH (IBTA A19.4.1)");                           \
	_Static_assert(!((flags)&URNIC_OPF_XRCETH) ==                                              \
			       !(((flags)&URNIC_OPF_XRC) && ((flags)&URNIC_OPF_REQ)),              \
		       #name ": an XRCETH on every XRC request, on nothing else (IBTA A14)");      \
	_Static_assert(!((flags)&URNIC_OPF_XRCETH) ||                                              \
			       !((flags) & (URNIC_OPF_RDETH | URNIC_OPF_DETH)),                    \
		       #name ": XRCETH excludes RDETH and DETH");                                  \
	_Static_assert(HDR_BYTES(flags) <= 0xff, #name ": hdr_bytes overflows uint8_t");
#include "opcode.def"
#undef URNIC_OPCODE

/* Table completeness (IBTA 9.2.1, as rxe_opcode.c lists them): 25 RC, 12 UC and 2 UD
 * opcodes, the 23 XRC ones of Annex A14 and the CNP of A17.9.3. A value listed twice is caught by
 * the designated initialisers below (-Woverride-init). */
enum {
#define URNIC_OPCODE(name, value, flags) +1
	OPCODE_COUNT = 0
#include "opcode.def"
#undef URNIC_OPCODE
};
_Static_assert(OPCODE_COUNT == 63,
	       "opcode.def must list every RC, UC, UD and XRC opcode and the CNP");

const struct urnic_opcode_info urnic_opcode_table[256] = {
#define URNIC_OPCODE(op_name, value, op_flags)                                                     \
	[value] = {                                                                                \
		.name = #op_name,                                                                  \
		.flags = (op_flags),                                                               \
		.hdr_bytes = (uint8_t)HDR_BYTES(op_flags),                                         \
	},
#include "opcode.def"
#undef URNIC_OPCODE
};

/* Spot checks against rxe_opcode.c lengths. */
_Static_assert(HDR_BYTES(URNIC_OPF_RETH | URNIC_OPF_IMMDT) == 32, "WRITE_ONLY_WITH_IMM");
_Static_assert(HDR_BYTES(URNIC_OPF_AETH | URNIC_OPF_ATMACK) == 24, "ATOMIC_ACKNOWLEDGE");
_Static_assert(HDR_BYTES(URNIC_OPF_ATMETH) == 40, "COMPARE_SWAP / FETCH_ADD");
_Static_assert(HDR_BYTES(URNIC_OPF_DETH | URNIC_OPF_IMMDT) == 24, "UD SEND_ONLY_WITH_IMM");
_Static_assert(HDR_BYTES(URNIC_OPF_FETH | URNIC_OPF_RETH) == 32, "FLUSH");
_Static_assert(HDR_BYTES(URNIC_OPF_XRCETH | URNIC_OPF_RETH | URNIC_OPF_IMMDT) == 36,
	       "XRC WRITE_ONLY_WITH_IMM");
_Static_assert(HDR_BYTES(URNIC_OPF_XRCETH | URNIC_OPF_ATMETH) == 44, "XRC COMPARE_SWAP");
_Static_assert(HDR_BYTES(URNIC_OPF_CNP) == 28, "CNP: BTH and 16 reserved bytes (A17.9.3)");

/*
 * IBTA 9.7.5.2.8 table 45: RNR NAK timer field to the minimum delay, in microseconds.
 * Code 0 is the longest (655.36 ms). Code 25 is 61.44 ms; rxe's rnrnak_usec[] has 61410,
 * a typo we do not copy.
 */
static const uint32_t rnr_timer_us[32] = {
	655360, 10,    20,    30,    40,    60,	    80,	    120,    160,    240,    320,
	480,	640,   960,   1280,  1920,  2560,   3840,   5120,   7680,   10240,  15360,
	20480,	30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};
_Static_assert(sizeof(rnr_timer_us) / sizeof(rnr_timer_us[0]) == 32, "5-bit timer code");

uint32_t urnic_rnr_timer_us(uint8_t code)
{
	/* The timer is the low 5 bits of an RNR NAK syndrome (IBTA 9.7.5.2.8). */
	return rnr_timer_us[code & 0x1f];
}
