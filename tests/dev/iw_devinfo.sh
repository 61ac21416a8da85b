#!/bin/sh
# iw_devinfo.sh URNIC LIBDIR - an iWARP device (URNIC_ADDR=iwarp:<ip>) as rdma-core's
# tools see it over the drop-in, as they see Linux siw: Debian's ibv_devinfo -v shows
# transport iWARP (1), siw's vendor and capabilities (no atomics, MEM_MGT_EXTENSIONS,
# one SGE for READs), an Ethernet port with one GID and 2^32 - 1 byte messages;
# ibv_devices lists it; `urnic devices` says its kind. Opening the device binds nothing
# (127.0.50.4). Not in the sanitizer build: Debian's binaries cannot load a library
# built with AddressSanitizer.
URNIC=$1
LIBDIR=$2
ADDR=127.0.50.4
fails=0

# want 'REGEX' FILE WHAT: a line of FILE matches REGEX.
want() {
	if grep -Eq -- "$1" "$2"; then
		echo "ok $3"
	else
		echo "FAIL: $3: no line matches /$1/"
		sed 's/^/    /' "$2"
		fails=$((fails + 1))
	fi
}

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
env URNIC_ADDR=iwarp:$ADDR "$URNIC" devices >"$T/devices.log" 2>&1
want "^urnic0 +iwarp +$ADDR +02:75:7f:00:32:04 +ACTIVE" "$T/devices.log" "urnic devices: kind iwarp"
if [ "$SANITIZE" = ON ] || ! command -v ibv_devinfo >/dev/null; then
	[ $fails -eq 0 ] || exit 1
	echo "ibv_devinfo: skipped"
	exit 0
fi
env LD_LIBRARY_PATH=$LIBDIR URNIC_ADDR=iwarp:$ADDR ibv_devinfo -v >"$T/devinfo.log" 2>&1 ||
	{ echo "FAIL: ibv_devinfo -v exits $?"; cat "$T/devinfo.log"; exit 1; }
want '^[[:space:]]+transport:[[:space:]]+iWARP \(1\)$' "$T/devinfo.log" "transport iWARP"
want '^[[:space:]]+vendor_id:[[:space:]]+0x626d74$' "$T/devinfo.log" "siw's vendor id"
want '^[[:space:]]+atomic_cap:[[:space:]]+ATOMIC_NONE \(0\)$' "$T/devinfo.log" "no atomics"
want '^[[:space:]]+max_sge_rd:[[:space:]]+1$' "$T/devinfo.log" "one SGE for a READ"
want '^[[:space:]]+MEM_MGT_EXTENSIONS$' "$T/devinfo.log" "MEM_MGT_EXTENSIONS"
want '^[[:space:]]+max_mw:[[:space:]]+0$' "$T/devinfo.log" "no memory windows"
want '^[[:space:]]+link_layer:[[:space:]]+Ethernet$' "$T/devinfo.log" "Ethernet port"
want '^[[:space:]]+gid_tbl_len:[[:space:]]+1$' "$T/devinfo.log" "one GID"
want '^[[:space:]]+max_msg_sz:[[:space:]]+0xffffffff$' "$T/devinfo.log" "siw's max_msg_sz"
want '^[[:space:]]+state:[[:space:]]+PORT_ACTIVE \(4\)$' "$T/devinfo.log" "port active"
env LD_LIBRARY_PATH=$LIBDIR URNIC_ADDR=iwarp:$ADDR ibv_devices >"$T/devices2.log" 2>&1
want '^[[:space:]]+urnic0[[:space:]]+[0-9a-f]{16}$' "$T/devices2.log" "ibv_devices lists it"
# A RoCEv2 device beside it stays InfiniBand transport.
env LD_LIBRARY_PATH=$LIBDIR URNIC_ADDR=iwarp:$ADDR,127.0.50.5 ibv_devinfo -d urnic1 >"$T/roce.log" 2>&1
want '^[[:space:]]+transport:[[:space:]]+InfiniBand \(0\)$' "$T/roce.log" "RoCEv2 beside it"
[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
