#!/bin/sh
# SPDX-License-Identifier: MIT
# router.sh - RoCEv2 is routable: Debian's ibv_rc_pingpong between two hosts in their
# own network namespaces, through a third namespace that routes between two subnets and
# drops a given percentage of the RoCE packets it forwards.
#
#   netns A (server)          netns R (router, ip_forward=1)          netns B (client)
#   10.77.1.2/24 --veth-- 10.77.1.1/24 | 10.77.2.1/24 --veth-- 10.77.2.2/24
#   urnic0 on 10.77.1.2       nft: forward, udp dport 4791,           urnic0 on 10.77.2.2
#                             numgen random mod 1000 < PERMILLE drop
#
#   GSO is off (URNIC_NO_GSO=1) so that the router drops RoCE packets, not the 64 KiB
#   GSO datagrams a veth carries whole, and the loss rate means what it says.
#   router.sh PERMILLE [PINGPONG OPTS...]: both sides exit 0 with data checked (-c), the
#   router's drop counter and the devices' retransmissions are printed, and when
#   PERMILLE > 0 the router dropped packets and some side retransmitted. A run that hits
#   ibv_rc_pingpong's teardown race (a lost final ACK after the peer exited) is run
#   again, at most twice. Everything it creates (namespaces, veths, processes) is
#   removed on exit.
# Environment: LIBDIR, SANITIZE, CC, SLOT (common.sh; no sys_setup: the namespaces here
# are named ones, made with `ip netns`, which needs root).
. "$(dirname "$0")/common.sh"
PERMILLE=${1:?usage: router.sh PERMILLE [OPTS...]}
shift
: "${LIBDIR:?LIBDIR not set}" "${SLOT:=1}"
[ "$(id -u)" = 0 ] || skip "named network namespaces need root"
command -v nft >/dev/null || skip "nft not found (nftables)"
SYS_WORK=$(mktemp -d "${TMPDIR:-/tmp}/urnic-router.XXXXXX") || fail "mktemp"
NA=urnic-a-$$
NR=urnic-r-$$
NB=urnic-b-$$
cleanup() {
	sys_cleanup
	for ns in $NA $NR $NB; do ip netns del "$ns" 2>/dev/null; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP PIPE

for ns in $NA $NR $NB; do
	ip netns add "$ns" || fail "ip netns add $ns"
	ip -n "$ns" link set lo up
done
ip link add va netns "$NA" type veth peer name ra netns "$NR" || fail "veth A-R"
ip link add vb netns "$NB" type veth peer name rb netns "$NR" || fail "veth B-R"
ip -n "$NA" addr add 10.77.1.2/24 dev va
ip -n "$NR" addr add 10.77.1.1/24 dev ra
ip -n "$NR" addr add 10.77.2.1/24 dev rb
ip -n "$NB" addr add 10.77.2.2/24 dev vb
ip -n "$NA" link set va up
ip -n "$NR" link set ra up
ip -n "$NR" link set rb up
ip -n "$NB" link set vb up
ip -n "$NA" route add default via 10.77.1.1
ip -n "$NB" route add default via 10.77.2.1
ip netns exec "$NR" sysctl -qw net.ipv4.ip_forward=1 || fail "ip_forward"
ip netns exec "$NR" nft -f - <<NFT || fail "nft"
table inet loss {
	chain routed {
		type filter hook forward priority 0;
		udp dport 4791 numgen random mod 1000 < $PERMILLE counter drop
	}
}
NFT

run() {
	_ns=$1
	_addr=$2
	shift 2
	# shellcheck disable=SC2086
	exec ip netns exec "$_ns" env LD_LIBRARY_PATH="$LIBDIR" URNIC_ADDR="$_addr" \
		URNIC_NO_GSO=1 URNIC_PRINT_COUNTERS=1 $SAN_ENV ibv_rc_pingpong -g 1 -c "$@"
}
SAN_ENV=
if [ "${SANITIZE:-OFF}" = ON ]; then
	SAN_ENV="LD_PRELOAD=$(${CC:-cc} -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0"
fi
# ibv_rc_pingpong has no closing handshake: a lost ACK of one side's last message after
# the other side exited fails that side with "transport retry counter exceeded" (the
# teardown race of common.sh's pp_pair). The exiting side sends that ACK once more
# (urnic_rc_parting_ack), so the race needs both copies lost. Such a run is run again, at
# most twice; any other failure fails at once.
attempt=1
races=0
while :; do
	(run "$NA" 10.77.1.2 "$@") >"$SYS_WORK/server.log" 2>&1 &
	SPID=$!
	track $SPID
	wait_listen $SPID 18515 10 "$NA"
	case $? in
	1) fail "server exited before listening" ;;
	2) fail "server not listening after 10 s" ;;
	esac
	(run "$NB" 10.77.2.2 "$@" 10.77.1.2) >"$SYS_WORK/client.log" 2>&1 &
	CPID=$!
	track $CPID
	wait_exit $CPID 120
	crc=$?
	wait_exit $SPID 10
	src=$?
	[ $crc -ne 0 ] || [ $src -ne 0 ] || break
	ok=$SYS_WORK/server.log
	bad=$SYS_WORK/client.log
	[ $src -eq 0 ] || { ok=$SYS_WORK/client.log; bad=$SYS_WORK/server.log; }
	if [ $attempt -lt 3 ] && [ $((crc + src)) -eq 1 ] && [ $crc -ne 124 ] && [ $src -ne 124 ] &&
		grep -q 'bytes in .* seconds' "$ok" &&
		grep -q 'transport retry counter exceeded' "$bad"; then
		say "attempt $attempt hit ibv_rc_pingpong's teardown race (the final ACK was" \
			"lost after the peer had exited); running it again"
		attempt=$((attempt + 1))
		races=$((races + 1))
		continue
	fi
	break
done
[ $crc -eq 0 ] && [ $src -eq 0 ] || fail "client exited $crc, server $src"
for log in "$SYS_WORK/server.log" "$SYS_WORK/client.log"; do
	grep -q 'bytes in .* seconds' "$log" || fail "no result line in $(basename "$log")"
	! grep -q 'invalid data' "$log" || fail "payload check failed in $(basename "$log")"
	for c in drop_bad_icrc drop_bad_header retry_exceeded cq_overflow; do
		v=$(counter "$log" $c)
		[ "$v" = 0 ] || fail "$c = $v in $(basename "$log")"
	done
done
dropped=$(ip netns exec "$NR" nft list chain inet loss routed | sed -n 's/.*counter packets \([0-9]*\).*/\1/p')
retx=$(($(counter "$SYS_WORK/server.log" retransmit_pkts) + $(counter "$SYS_WORK/client.log" retransmit_pkts)))
say "loss $PERMILLE/1000 via the router: dropped $dropped, retransmitted $retx," \
	"$(grep -h 'iters in' "$SYS_WORK/client.log")"
if [ "$PERMILLE" -gt 0 ]; then
	[ "${dropped:-0}" -gt 0 ] || fail "the router dropped nothing"
	[ "$retx" -gt 0 ] || fail "nothing was retransmitted although $dropped packets were lost"
fi
say "ok ($races teardown-race re-runs)"
