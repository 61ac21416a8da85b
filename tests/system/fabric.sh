#!/bin/sh
# SPDX-License-Identifier: MIT
# fabric.sh URNIC - Debian's libfabric (verbs provider) over urnic with its defaults.
#
# Under `urnic run`: `fi_info -p verbs` lists urnic0's datagram domain and the
# verbs;ofi_rxd RDM endpoint built on it, with GID index 0 (the provider's default)
# the device's address; fabtests' fi_pingpong runs verbs;ofi_rxd RDM between two
# addresses with every message's data checked (-c) and no FI_VERBS_* setting; the
# counters (URNIC_PRINT_COUNTERS) show the traffic went through both devices.
# Environment: LIBDIR, SANITIZE, CC, SLOT (common.sh).
URNIC=${1:?usage: fabric.sh URNIC}
. "$(dirname "$0")/common.sh"
sys_setup "$@"
for t in fi_info fi_pingpong; do
	command -v $t >/dev/null || skip "$t not found (libfabric-bin)"
done

# SAN_ENV is a list of words without blanks inside them: split on purpose.
# shellcheck disable=SC2086
run() {
	_addr=$1
	shift
	env $SAN_ENV URNIC_PRINT_COUNTERS=1 "$URNIC" run --addr "$_addr" -- "$@"
}

log=$SYS_WORK/fi_info.log
run "$SRV_ADDR" fi_info -p verbs >"$log" 2>&1 || fail "fi_info -p verbs: status $?"
cat "$log"
awk '$1 == "provider:" { p = $2 } $1 == "domain:" { d = $2 } $1 == "type:" {
	print p, d, $2 }' "$log" >"$SYS_WORK/eps"
grep -qxF "verbs urnic0-dgram FI_EP_DGRAM" "$SYS_WORK/eps" ||
	fail "fi_info lists no verbs datagram endpoint on urnic0"
grep -qxF "verbs;ofi_rxd urnic0-dgram FI_EP_RDM" "$SYS_WORK/eps" ||
	fail "fi_info lists no verbs;ofi_rxd RDM endpoint on urnic0"

# fi_pingpong: the server waits on its control port (TCP 47592) on every address.
slog=$SYS_WORK/server.log
clog=$SYS_WORK/client.log
opts="-p verbs;ofi_rxd -e rdm -c -I 200"
# opts: words split on purpose.
# shellcheck disable=SC2086
(run "$SRV_ADDR" fi_pingpong $opts) >"$slog" 2>&1 &
spid=$!
track $spid
wait_listen $spid 47592 20 || fail "fi_pingpong's server did not listen: $(cat "$slog")"
# shellcheck disable=SC2086
timeout 120 sh -c 'exec "$@"' sh "$URNIC" run --addr "$CLI_ADDR" -- env $SAN_ENV \
	URNIC_PRINT_COUNTERS=1 fi_pingpong $opts "$SRV_ADDR" >"$clog" 2>&1 ||
	fail "fi_pingpong client: status $? ($(tail -n 3 "$clog"))"
wait_exit $spid 30 || fail "fi_pingpong server: status $? (124: did not end)"
tail -n 4 "$clog"
for f in "$slog" "$clog"; do
	# fi_pingpong prints a line per size: the largest (1m) must be there.
	grep -Eq '^1m[[:space:]]+200[[:space:]]' "$f" || fail "$(basename "$f"): no 1 MiB result"
	grep -qi 'error\|mismatch' "$f" && fail "$(basename "$f"): $(grep -i 'error\|mismatch' "$f")"
	tx=$(counter "$f" tx_packets)
	[ "$tx" -gt 1000 ] || fail "$(basename "$f"): urnic sent $tx packets"
	say "$(basename "$f" .log): urnic sent $tx packets"
done
say ok
