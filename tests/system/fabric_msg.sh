#!/bin/sh
# SPDX-License-Identifier: MIT
# fabric_msg.sh URNIC - libfabric's verbs MSG endpoint and verbs;ofi_rxm RDM over urnic.
#
# The verbs provider offers MSG endpoints only on devices with an address on an
# interface that is up and not loopback (it skips IFF_LOOPBACK), so the two devices
# sit on a veth pair of the private namespace: 10.79.0.2 on fa, 10.79.0.3 on fb.
# Under `urnic run`, with no FI_VERBS_* setting: GID 0 is the device's address,
# `fi_info -p verbs` lists urnic0's FI_EP_MSG and verbs;ofi_rxm's FI_EP_RDM, and
# fabtests' fi_pingpong runs -e msg on verbs and -e rdm on verbs;ofi_rxm between the
# two addresses with every message checked (-c); the counters show urnic carried it.
# Environment: LIBDIR, SANITIZE, CC, SLOT (common.sh).
URNIC=${1:?usage: fabric_msg.sh URNIC}
. "$(dirname "$0")/common.sh"
sys_setup "$@"
for t in fi_info fi_pingpong; do
	command -v $t >/dev/null || skip "$t not found (libfabric-bin)"
done
[ "$URNIC_SYS_NETNS" = private ] || skip "needs a private network namespace for its veth pair"
for v in $(env | sed -n 's/^\(FI_VERBS_[A-Z_]*\)=.*/\1/p'); do
	unset "$v"
done

SRV=10.79.0.2
CLI=10.79.0.3
ip link add fa type veth peer name fb || skip "cannot create a veth pair"
ip addr add $SRV/24 dev fa || fail "address $SRV"
ip addr add $CLI/24 dev fb || fail "address $CLI"
ip link set fa up || fail "fa up"
ip link set fb up || fail "fb up"

# SAN_ENV is a list of words without blanks inside them: split on purpose.
# shellcheck disable=SC2086
run() {
	_addr=$1
	shift
	env $SAN_ENV URNIC_PRINT_COUNTERS=1 "$URNIC" run --addr "$_addr" -- "$@"
}

gid0=$(run $SRV cat /sys/class/infiniband/urnic0/ports/1/gids/0) || fail "no GID 0"
[ "$gid0" = "0000:0000:0000:0000:0000:ffff:0a4f:0002" ] || fail "GID 0 is $gid0"

log=$SYS_WORK/fi_info.log
run $SRV fi_info -p verbs >"$log" 2>&1 || fail "fi_info -p verbs: status $?"
awk '$1 == "provider:" { p = $2 } $1 == "domain:" { d = $2 } $1 == "type:" {
	print p, d, $2 }' "$log" >"$SYS_WORK/eps"
cat "$SYS_WORK/eps"
grep -qxF "verbs urnic0 FI_EP_MSG" "$SYS_WORK/eps" ||
	fail "fi_info lists no verbs MSG endpoint on urnic0"
grep -qxF "verbs;ofi_rxm urnic0 FI_EP_RDM" "$SYS_WORK/eps" ||
	fail "fi_info lists no verbs;ofi_rxm RDM endpoint on urnic0"

# pingpong TAG PORT OPTS...: server on SRV waiting on its control port, client on CLI.
pingpong() {
	_tag=$1
	_port=$2
	shift 2
	_slog=$SYS_WORK/$_tag.server.log
	_clog=$SYS_WORK/$_tag.client.log
	(run $SRV fi_pingpong -B "$_port" "$@") >"$_slog" 2>&1 &
	_spid=$!
	track $_spid
	wait_listen $_spid "$_port" 20 || fail "$_tag: the server did not listen: $(cat "$_slog")"
	# shellcheck disable=SC2086
	timeout 120 sh -c 'exec "$@"' sh "$URNIC" run --addr $CLI -- env $SAN_ENV \
		URNIC_PRINT_COUNTERS=1 fi_pingpong -P "$_port" "$@" $SRV >"$_clog" 2>&1 ||
		fail "$_tag client: status $? ($(tail -n 3 "$_clog"))"
	wait_exit $_spid 30 || fail "$_tag server: status $? (124: did not end)"
	tail -n 2 "$_clog"
	for f in "$_slog" "$_clog"; do
		# fi_pingpong prints a line per size: the largest (1m) must be there.
		grep -Eq '^1m[[:space:]]+100[[:space:]]' "$f" ||
			fail "$(basename "$f"): no 1 MiB result"
		! grep -qi 'error\|mismatch' "$f" || fail "$(basename "$f"): $(grep -i 'error\|mismatch' "$f")"
		tx=$(counter "$f" tx_packets)
		[ "$tx" -gt 1000 ] || fail "$(basename "$f"): urnic sent $tx packets"
		say "$(basename "$f" .log): urnic sent $tx packets"
	done
}

pingpong msg 47592 -p verbs -e msg -c -I 100
pingpong rxm 47593 -p "verbs;ofi_rxm" -e rdm -c -I 100
say ok
