#!/bin/sh
# SPDX-License-Identifier: MIT
# uet_devinfo.sh - a UET device (URNIC_ADDR=uet:<ip>) as tools see it, and what it
# refuses, cleanly: none of this needs the UET engine to carry packets.
#
#   private namespace (or the host's lo), one address:
#     uet:127.0.81.3 = urnic0, UDP 4793
#   - `urnic devices` lists urnic0 of kind uet with the RoCEv2 GID of the address
#   - ibv_devinfo -v: transport InfiniBand, link layer Ethernet, atomic_cap ATOMIC_NONE,
#     GID[1] ::ffff:127.0.81.3 of type RoCE v2, as a RoCEv2 device's
#   - ibv_ud_pingpong cannot create its UD QP (EOPNOTSUPP: RC only) and exits, no crash
#   - rping (rdma_cm) is refused: a message naming the device, rdma_bind_addr fails
#   - a second process on the address cannot take UDP 4793 and says so
# Environment: LIBDIR, SANITIZE, CC, SLOT, URNIC_TOOL (common.sh).
. "$(dirname "$0")/common.sh"
sys_setup "$@"
ADDR=127.0.81.3
: "${URNIC_TOOL:?URNIC_TOOL not set}"

log=$SYS_WORK/devices.log
(ibv "uet:$ADDR" "$URNIC_TOOL" devices) >"$log" 2>&1 || fail "urnic devices exited $?"
cat "$log"
grep -Eq "^urnic0 +uet +127\.0\.81\.3 +::ffff:127\.0\.81\.3 +ACTIVE +[0-9]+$" "$log" ||
	fail "urnic devices does not list urnic0 of kind uet on $ADDR"

command -v ibv_devinfo >/dev/null || fail "ibv_devinfo not found (ibverbs-utils)"
vlog=$SYS_WORK/ibv_devinfo_v.log
(ibv "uet:$ADDR" ibv_devinfo -v) >"$vlog" 2>&1 || fail "ibv_devinfo -v exited with status $?"
grep -E 'transport|atomic_cap|link_layer|GID' "$vlog"
grep -Eq '^[[:space:]]+transport:[[:space:]]+InfiniBand \(0\)$' "$vlog" ||
	fail "ibv_devinfo: transport is not InfiniBand"
grep -Eq '^[[:space:]]+link_layer:[[:space:]]+Ethernet$' "$vlog" ||
	fail "ibv_devinfo: link_layer is not Ethernet"
grep -Eq '^[[:space:]]+atomic_cap:[[:space:]]+ATOMIC_NONE \(0\)$' "$vlog" ||
	fail "ibv_devinfo: atomic_cap is not ATOMIC_NONE"
grep -Eq "^[[:space:]]+GID\[[[:space:]]*1\]:[[:space:]]+::ffff:$ADDR, RoCE v2\$" "$vlog" ||
	fail "ibv_devinfo -v: GID[1] is not '::ffff:$ADDR, RoCE v2'"

# No UD QP: the tool fails to create it and exits nonzero, with no sanitizer report.
if command -v ibv_ud_pingpong >/dev/null; then
	ulog=$SYS_WORK/ud.log
	(ibv "uet:$ADDR" timeout 20 ibv_ud_pingpong -g 1 -p "$PP_PORT") >"$ulog" 2>&1
	rc=$?
	cat "$ulog"
	[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "ibv_ud_pingpong exited $rc on a uet device"
	grep -q "Couldn't create QP" "$ulog" || fail "ibv_ud_pingpong: no 'Couldn't create QP'"
	! grep -q -e AddressSanitizer -e 'runtime error:' "$ulog" || fail "sanitizer report"
fi

# No rdma_cm: said once, and the bind fails (EOPNOTSUPP).
if command -v rping >/dev/null; then
	clog=$SYS_WORK/rping.log
	(ibv "uet:$ADDR" timeout 20 rping -s -a "$ADDR" -C 1) >"$clog" 2>&1
	rc=$?
	cat "$clog"
	[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "rping exited $rc on a uet device"
	grep -q "rdma_cm is not offered on UET devices" "$clog" ||
		fail "rping: no message saying rdma_cm is not offered"
	grep -q "Operation not supported" "$clog" || fail "rping: not EOPNOTSUPP"
fi

# One process per UET address: the second one's QP cannot take UDP 4793.
command -v ibv_rc_pingpong >/dev/null || fail "ibv_rc_pingpong not found (ibverbs-utils)"
(ibv "uet:$ADDR" ibv_rc_pingpong -g 1 -p "$PP_PORT") >"$SYS_WORK/first.log" 2>&1 &
FPID=$!
track $FPID
wait_listen $FPID "$PP_PORT" 10 || fail "the first ibv_rc_pingpong is not listening"
slog=$SYS_WORK/second.log
(ibv "uet:$ADDR" timeout 20 ibv_rc_pingpong -g 1 -p $((PP_PORT + 1))) >"$slog" 2>&1
rc=$?
cat "$slog"
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "a second process on uet:$ADDR exited $rc"
grep -q "UDP port 4793 on $ADDR" "$slog" || fail "the second process does not name $ADDR:4793"
stop_pid $FPID
say ok
