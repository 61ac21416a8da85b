#!/bin/sh
# SPDX-License-Identifier: MIT
# devinfo.sh - Debian's ibv_devices / ibv_devinfo see the drop-in's one device.
#
#   devinfo.sh devices: ibv_devices lists urnic0 (and nothing else)
#   devinfo.sh devinfo: ibv_devinfo shows urnic0 with port 1 PORT_ACTIVE, link layer
#       Ethernet; ibv_devinfo -v shows GID[1] = ::ffff:<URNIC_ADDR>, RoCE v2
# Environment: LIBDIR, SANITIZE, CC, SLOT (common.sh).
MODE=${1:?usage: devinfo.sh devices|devinfo}
. "$(dirname "$0")/common.sh"
sys_setup "$@"

case $MODE in
devices)
	command -v ibv_devices >/dev/null || fail "ibv_devices not found (ibverbs-utils)"
	(ibv "$SRV_ADDR" ibv_devices) >"$SYS_WORK/ibv_devices.log" 2>&1 ||
		fail "ibv_devices exited with status $?"
	cat "$SYS_WORK/ibv_devices.log"
	grep -Eq '^[[:space:]]+urnic0[[:space:]]+[0-9a-f]{16}$' "$SYS_WORK/ibv_devices.log" ||
		fail "ibv_devices does not list urnic0 with a node GUID"
	n=$(grep -Ec '^[[:space:]]+[^-[:space:]][^[:space:]]*[[:space:]]+[0-9a-f]{16}$' \
		"$SYS_WORK/ibv_devices.log")
	[ "$n" = 1 ] || fail "ibv_devices lists $n devices, expected 1 (URNIC_ADDR=$SRV_ADDR)"
	;;
devinfo)
	command -v ibv_devinfo >/dev/null || fail "ibv_devinfo not found (ibverbs-utils)"
	log=$SYS_WORK/ibv_devinfo.log
	(ibv "$SRV_ADDR" ibv_devinfo) >"$log" 2>&1 || fail "ibv_devinfo exited with status $?"
	cat "$log"
	grep -Eq '^hca_id:[[:space:]]+urnic0$' "$log" || fail "ibv_devinfo: no hca_id urnic0"
	grep -Eq '^[[:space:]]+port:[[:space:]]+1$' "$log" || fail "ibv_devinfo: no port 1"
	grep -Eq '^[[:space:]]+state:[[:space:]]+PORT_ACTIVE \(4\)$' "$log" ||
		fail "ibv_devinfo: port 1 is not PORT_ACTIVE"
	grep -Eq '^[[:space:]]+link_layer:[[:space:]]+Ethernet$' "$log" ||
		fail "ibv_devinfo: link_layer is not Ethernet"

	vlog=$SYS_WORK/ibv_devinfo_v.log
	(ibv "$SRV_ADDR" ibv_devinfo -v) >"$vlog" 2>&1 ||
		fail "ibv_devinfo -v exited with status $?"
	grep -E 'GID|state|link_layer|mtu' "$vlog"
	gid1="::ffff:$SRV_ADDR"
	grep -Eq "^[[:space:]]+GID\[[[:space:]]*1\]:[[:space:]]+$gid1, RoCE v2\$" "$vlog" ||
		fail "ibv_devinfo -v: GID[1] is not '$gid1, RoCE v2'"
	;;
*)
	fail "unknown mode '$MODE'"
	;;
esac
say ok
