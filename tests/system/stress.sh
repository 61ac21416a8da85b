#!/bin/sh
# SPDX-License-Identifier: MIT
# stress.sh - verbs_stress (16 RC QPs, SEND/WRITE/READ/atomics, every byte checked)
# between two processes over a faulty network, in one of three topologies:
#
#   stress.sh PROGRAM lo FAULTSPEC|none      faults from urnic's own transport
#     private namespace (unshare -n), lo up:
#     127.0.0.2 server urnic0 <== RoCEv2 ==> 127.0.0.3 client urnic0
#     both with URNIC_FAULT=FAULTSPEC (transport/fault.h: each drops, corrupts,
#     duplicates, reorders and delays what it receives).
#
#   stress.sh PROGRAM veth PERMILLE          random loss on a wire between two hosts
#     netns A (server)                              netns B (client)
#     10.78.1.2/24 va ============ veth ============ vb 10.78.1.3/24
#     nft input: udp dport 4791                     nft input: udp dport 4791
#       numgen random mod 1000 < PERMILLE drop        (the same rule)
#
#   stress.sh PROGRAM router PERMILLE        random loss in a router between subnets
#     netns A (server)          netns R (router, ip_forward=1)          netns B (client)
#     10.78.1.2/24 --veth-- 10.78.1.1/24 | 10.78.2.1/24 --veth-- 10.78.2.2/24
#                               nft forward: udp dport 4791,
#                               numgen random mod 1000 < PERMILLE drop
#
#   Over veth and the router GSO is off (URNIC_NO_GSO=1), so that nft drops RoCE
#   packets, not 64 KiB GSO datagrams, and the loss rate means what it says.
#   Passes when both sides exit 0 having checked every byte, no sanitizer reports
#   (and under ASan, no leak), no retries exhausted; the fault asked for happened
#   (its fault_* counter, or nft's drop counter) and the devices recovered from it
#   (retransmissions after loss, reordering and corruption; bad ICRCs counted for
#   corruption, and no bad ICRC without it). Prints the transfer totals and the
#   recovery counters. Every namespace, veth and process it makes is removed on exit.
# Environment: LIBDIR, SANITIZE, CC, SLOT (common.sh). veth and router need root.
. "$(dirname "$0")/common.sh"
PROG=${1:?usage: stress.sh PROGRAM lo|veth|router ARG}
MODE=${2:?usage: stress.sh PROGRAM lo|veth|router ARG}
ARG=${3:?usage: stress.sh PROGRAM lo|veth|router ARG}
[ -x "$PROG" ] || fail "$PROG is not an executable"

# Each run stays well under 30 s on a loaded 2-vCPU machine, also under ASan.
OPS=1000
[ "${SANITIZE:-OFF}" = ON ] && OPS=300
STRESS_OPTS="-q 16 -n $OPS -t 40"
# Loss over veth (MTU 1500, so 1 KiB RoCE packets): urnic has no congestion control
# yet, go-back-N resends whole windows of 16 QPs into the receiver's socket buffer, and
# the retry budget (retry_cnt 7) only comes back when a work request completes; so
# messages are kept to 16 KiB at 0.1-1% and 4 KiB at 5% (router.sh too runs -s 4096
# at 5%), with a 134 ms ACK timeout (IBTA exponent 15) for a loaded machine.
if [ "$MODE" != lo ]; then
	STRESS_OPTS="-q 16 -n $OPS -s 16384 -t 40"
	[ "$ARG" -ge 50 ] && STRESS_OPTS="-q 16 -n $OPS -s 4096 -t 40"
	: "${STRESS_T:=15}"
fi
TCP_PORT=18611

NA=
NR=
NB=
stress_cleanup() {
	sys_cleanup
	for ns in $NA $NR $NB; do ip netns del "$ns" 2>/dev/null; done
}

case $MODE in
lo)
	sys_setup "$@"
	trap stress_cleanup EXIT
	TCP_PORT=$PP_PORT
	FAULT=$ARG
	[ "$FAULT" = none ] && FAULT=
	# run NAME ADDR ARGS...: the program as one host, over the faulty transport
	run() {
		_addr=$2
		shift 2
		export URNIC_FAULT="$FAULT"
		# shellcheck disable=SC2086
		ibv "$_addr" "$PROG" $STRESS_OPTS -p "$TCP_PORT" "$@"
	}
	;;
veth | router)
	: "${LIBDIR:?LIBDIR not set}"
	[ "$(id -u)" = 0 ] || skip "named network namespaces need root"
	command -v nft >/dev/null || skip "nft not found (nftables)"
	SYS_WORK=$(mktemp -d "${TMPDIR:-/tmp}/urnic-stress.XXXXXX") || fail "mktemp"
	NA=urnic-sa-$$
	NB=urnic-sb-$$
	[ "$MODE" = router ] && NR=urnic-sr-$$
	trap stress_cleanup EXIT
	trap 'exit 130' INT TERM HUP PIPE
	FAULT=
	for ns in $NA $NR $NB; do
		ip netns add "$ns" || fail "ip netns add $ns"
		ip -n "$ns" link set lo up
	done
	if [ "$MODE" = veth ]; then
		ip link add va netns "$NA" type veth peer name vb netns "$NB" || fail "veth A-B"
		ip -n "$NA" addr add 10.78.1.2/24 dev va
		ip -n "$NB" addr add 10.78.1.3/24 dev vb
		SRV_ADDR=10.78.1.2
		CLI_ADDR=10.78.1.3
		LOSS_NS="$NA $NB"
		HOOK=input
	else
		ip link add va netns "$NA" type veth peer name ra netns "$NR" || fail "veth A-R"
		ip link add vb netns "$NB" type veth peer name rb netns "$NR" || fail "veth B-R"
		ip -n "$NA" addr add 10.78.1.2/24 dev va
		ip -n "$NR" addr add 10.78.1.1/24 dev ra
		ip -n "$NR" addr add 10.78.2.1/24 dev rb
		ip -n "$NB" addr add 10.78.2.2/24 dev vb
		ip -n "$NR" link set ra up
		ip -n "$NR" link set rb up
		ip netns exec "$NR" sysctl -qw net.ipv4.ip_forward=1 || fail "ip_forward"
		SRV_ADDR=10.78.1.2
		CLI_ADDR=10.78.2.2
		LOSS_NS=$NR
		HOOK=forward
	fi
	ip -n "$NA" link set va up
	ip -n "$NB" link set vb up
	if [ "$MODE" = router ]; then
		ip -n "$NA" route add default via 10.78.1.1
		ip -n "$NB" route add default via 10.78.2.1
	fi
	for ns in $LOSS_NS; do
		ip netns exec "$ns" nft -f - <<NFT || fail "nft in $ns"
table inet urnic_stress {
	chain loss {
		type filter hook $HOOK priority 0;
		udp dport 4791 numgen random mod 1000 < $ARG counter drop
	}
}
NFT
	done
	SAN_ENV=
	if [ "${SANITIZE:-OFF}" = ON ]; then
		SAN_ENV="LD_PRELOAD=$(${CC:-cc} -print-file-name=libasan.so)"
	fi
	run() {
		_ns=$1
		_addr=$2
		shift 2
		# shellcheck disable=SC2086
		exec ip netns exec "$_ns" env LD_LIBRARY_PATH="$LIBDIR" URNIC_ADDR="$_addr" \
			URNIC_NO_GSO=1 URNIC_PRINT_COUNTERS=1 $SAN_ENV \
			"$PROG" $STRESS_OPTS -T ${STRESS_T:-14} -p "$TCP_PORT" "$@"
	}
	;;
*)
	fail "unknown mode $MODE"
	;;
esac
# Our own program is built with ASan in the sanitizer build: leaks are checked too
# (Debian's binaries in the other tests are not, hence common.sh's detect_leaks=0).
if [ "${SANITIZE:-OFF}" = ON ]; then
	export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99
	export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
	SAN_ENV=$(printf '%s\n' $SAN_ENV | grep -v '^ASAN_OPTIONS=' | tr '\n' ' ')
fi

(run "$NA" "$SRV_ADDR") >"$SYS_WORK/server.log" 2>&1 &
spid=$!
track $spid
(run "$NB" "$CLI_ADDR" "$SRV_ADDR") >"$SYS_WORK/client.log" 2>&1 &
cpid=$!
track $cpid
wait_exit $cpid 60
crc=$?
wait_exit $spid 15
src=$?
for side in server client; do
	grep -h '^verbs_stress' "$SYS_WORK/$side.log"
done
[ $crc -ne 124 ] || fail "client still running after 60 s (killed)"
[ $src -ne 124 ] || fail "server still running 15 s after the client (killed)"
[ $crc -eq 0 ] && [ $src -eq 0 ] || fail "client exited with status $crc, server with $src"

S=$SYS_WORK/server.log
C=$SYS_WORK/client.log
sum() { echo $(($(counter "$S" "$1") + $(counter "$C" "$1"))); }
for log in "$S" "$C"; do
	n=$(basename "$log")
	grep -q 'all intact: ok' "$log" || fail "no 'all intact: ok' in $n"
	! grep -q -e 'AddressSanitizer' -e 'LeakSanitizer' -e 'runtime error:' "$log" ||
		fail "sanitizer report in $n"
	for c in retry_exceeded rnr_retry_exceeded cq_overflow; do
		v=$(counter "$log" $c)
		[ "$v" = 0 ] || fail "$c = $v in $n"
	done
done

recov=
for c in retransmit_pkts retry_timeout nak_seq_sent nak_seq_rcvd rnr_nak_sent dup_request \
	drop_psn_after_nak drop_stale_response drop_dup_no_resource drop_bad_icrc rx_icrc_ipv4_id \
	drop_bad_header drop_socket_overflow fault_dropped fault_corrupted fault_duplicated \
	fault_reordered fault_delayed fault_overflow; do
	v=$(sum $c)
	[ "$v" = 0 ] || recov="$recov $c=$v"
done
say "counters (server+client): tx_packets=$(sum tx_packets) rx_packets=$(sum rx_packets)$recov"

retx=$(sum retransmit_pkts)
icrc=$(sum drop_bad_icrc)
bad=$((icrc + $(sum drop_bad_header)))
corrupted=$(sum fault_corrupted)
if [ "$MODE" = lo ]; then
	expect() { # expect KEY COUNTER: the fault KEY was asked for, so COUNTER moved
		case ",$FAULT" in
		*,$1=*) [ "$(sum "$2")" -gt 0 ] || fail "$1 asked for but $2 = 0" ;;
		esac
	}
	expect drop fault_dropped
	expect corrupt fault_corrupted
	expect dup fault_duplicated
	expect reorder fault_reordered
	expect delay fault_delayed
	case ",$FAULT" in
	*,corrupt=*)
		[ "$icrc" -gt 0 ] || fail "$corrupted packets corrupted, none failed the ICRC"
		# Each corrupted packet fails the ICRC or the header check, except a flip of
		# BTH FECN/BECN alone, which the ICRC leaves out (Annex A17.3.3).
		[ $((bad * 10)) -ge $((corrupted * 9)) ] ||
			fail "$corrupted packets corrupted, only $bad dropped as bad"
		;;
	*) [ "$bad" = 0 ] || fail "$bad packets with a bad ICRC or header, none corrupted" ;;
	esac
	case ",$FAULT" in
	*,drop=* | *,reorder=* | *,corrupt=*)
		[ "$retx" -gt 0 ] || fail "faults that lose packets, but nothing retransmitted" ;;
	esac
else
	[ "$bad" = 0 ] || fail "$bad packets with a bad ICRC or header on a clean wire"
	dropped=0
	for ns in $LOSS_NS; do
		d=$(ip netns exec "$ns" nft list chain inet urnic_stress loss |
			sed -n 's/.*counter packets \([0-9]*\).*/\1/p')
		dropped=$((dropped + ${d:-0}))
	done
	say "loss $ARG/1000 ($MODE): nft dropped $dropped packets, retransmitted $retx"
	[ "$dropped" -gt 0 ] || fail "nft dropped nothing"
	[ "$retx" -gt 0 ] || fail "$dropped packets lost, nothing retransmitted"
fi
say ok
