#!/bin/sh
# SPDX-License-Identifier: MIT
# pingpong.sh - Debian's unmodified ibv_rc_pingpong, server and client, over the drop-in.
#
#   pingpong.sh [--asan] [OPTS...]: one run of `ibv_rc_pingpong -g 1 [-c] OPTS` in a
#   private network namespace; both sides must exit 0, print "bytes in ... seconds",
#   report no invalid data and count no ICRC/header drops (see pp_pair in common.sh).
#   --asan: the sanitizer hook; skipped (77) unless the build has URNIC_SANITIZE=ON.
#   --same-addr: server and client on one address (127.0.0.2), sharing its UDP 4791
#   (SO_REUSEPORT group, packets steered by destination QPN: transport/share.h).
#   --ring (first): both receive from packet rings (URNIC_RING=1, ring_check).
# Environment: LIBDIR, SANITIZE, CC, SLOT (common.sh).
. "$(dirname "$0")/common.sh"
if [ "${1:-}" = --asan ] && [ "${SANITIZE:-OFF}" != ON ]; then
	skip "the build was not configured with URNIC_SANITIZE=ON"
fi
sys_setup "$@"
RING=0
if [ "${1:-}" = --ring ]; then
	shift
	RING=1
	ring_on
fi
if [ "${1:-}" = --same-addr ]; then
	shift
	CLI_ADDR=$SRV_ADDR
	say "server and client both on $SRV_ADDR"
fi
if [ "${1:-}" = --asan ]; then
	shift
	say "LD_PRELOAD=$ASAN_LIB: the ASan+UBSan library in Debian's unsanitized binary"
fi

tag=rc_pingpong
[ "$CLI_ADDR" != "$SRV_ADDR" ] || tag=rc_pingpong_same_addr
[ $# -eq 0 ] || tag=$(echo "rc_pingpong $*" | tr -s ' ' '_')
[ $RING = 0 ] || tag=${tag}_ring
pp_run "$tag" 120 "$@"
[ $RING = 0 ] || ring_check "$SYS_WORK/$tag".*.log
say ok
