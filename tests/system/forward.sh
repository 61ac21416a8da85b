#!/bin/sh
# SPDX-License-Identifier: MIT
# forward.sh - packets the reuseport steering hands to the wrong process on a shared
# address reach their QP's owner through the forwarding socket (transport/share.h).
#
#   forward.sh: three ibv_rc_pingpong servers on one address (127.0.0.2). A claims
#   slot 0, B slot 1; A leaves, so the kernel moves B to index 0 of the reuseport
#   group; C claims slot 0 again but is index 1. Every packet for C's QPs is then
#   steered to B, which forwards it to C. A client on 127.0.0.3 runs 200 checked
#   4 KiB round trips with C (both sides exit 0, no invalid data, no ICRC or header
#   drops), then C2 (slot 0 again, index 1 again) 50 of 64 KiB: 64 packets a message,
#   more than a unix datagram queue holds (10) unless they travel in batches. Then a
#   client finishes B's single round, and B's counters must show rx_forwarded > 0 (else
#   the steering did not miss and nothing was tested), drop_forward_full 0, and no
#   retransmission on either client. Before that, FORGE (share_forge.c) sends B's
#   forwarding socket a well-formed batch with 200 descriptors as user 65534: B must
#   drop it unread (drop_forward_foreign 1, no bad header or ICRC counted) and close
#   the descriptors (its count of open ones must not grow by them), since an abstract
#   unix name is open to every user.
#
#   forward.sh FORGE
# Environment: LIBDIR, SANITIZE, CC, SLOT (common.sh).
. "$(dirname "$0")/common.sh"
sys_setup "$@"
# Steering misses happen on the socket: with lanes the client would reach C directly.
lanes_off
FORGE=${1:?usage: forward.sh FORGE}
pp_chk_probe
PORT_A=$((PP_PORT + 1))
PORT_B=$((PP_PORT + 2))
W=$SYS_WORK

# server NAME PORT OPTS...: a server on SRV_ADDR, listening when this returns
server() {
	_name=$1
	_port=$2
	shift 2
	# shellcheck disable=SC2086
	(ibv "$SRV_ADDR" ibv_rc_pingpong -g 1 -p "$_port" $PP_CHK "$@") >"$W/$_name.log" 2>&1 &
	SRV_PID=$!
	track $SRV_PID
	wait_listen $SRV_PID "$_port" 10 || fail "server $_name not listening on $_port"
}

# client NAME PORT OPTS...: a client of the server on PORT, run to its end
client() {
	_name=$1
	_port=$2
	shift 2
	# shellcheck disable=SC2086
	(ibv "$CLI_ADDR" ibv_rc_pingpong -g 1 -p "$_port" $PP_CHK "$@" "$SRV_ADDR") \
		>"$W/$_name.log" 2>&1 &
	_cpid=$!
	track $_cpid
	wait_exit $_cpid 60 || fail "client $_name exited with status $?"
}

# ok NAME: the log of a finished pingpong shows a clean run
ok() {
	grep -q 'bytes in .* seconds' "$W/$1.log" || fail "$1: no 'bytes in ... seconds'"
	! grep -q 'invalid data' "$W/$1.log" || fail "$1: payload validation failed"
	for _c in drop_bad_icrc drop_bad_header retry_exceeded retransmit_pkts; do
		[ "$(counter "$W/$1.log" $_c)" = 0 ] || fail "$1: $_c = $(counter "$W/$1.log" $_c)"
	done
}

# round_trips SERVER CLIENT OPTS...: a server on slot 0 (index 1: steered to B) and a
# client, both to a clean end
round_trips() {
	rt_server=$1
	rt_client=$2
	shift 2
	server "$rt_server" "$PP_PORT" "$@"
	rt_pid=$SRV_PID
	client "$rt_client" "$PP_PORT" "$@"
	wait_exit $rt_pid 10 || fail "server $rt_server exited with status $?"
	ok "$rt_server"
	ok "$rt_client"
}

server a "$PORT_A" -n 1
A=$SRV_PID
server b "$PORT_B" -n 1
B=$SRV_PID
stop_pid $A
say "A (slot 0) left: B (slot 1) is now index 0 of the reuseport group"
round_trips c d -n 200 -s 4096
round_trips c2 d2 -n 50 -s 65536
FOREIGN=0
if setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
	fds0=$(ls "/proc/$B/fd" | wc -l)
	setpriv --reuid=65534 --regid=65534 --clear-groups "$FORGE" "urnic.$SRV_ADDR.1" 200 \
		>"$W/forge.log" 2>&1 || fail "share_forge: $(cat "$W/forge.log")"
	FOREIGN=1
	sleep 0.5 # B's engine thread wakes on it at once
	fds1=$(ls "/proc/$B/fd" | wc -l)
	[ "$fds1" -lt $((fds0 + 5)) ] ||
		fail "B kept the forged batch's descriptors: $fds0 open before, $fds1 after"
	say "the forged batch of user 65534 left B with $fds1 descriptors ($fds0 before)"
else
	say "NOTE: cannot run as another user here; the forged batch is not sent"
fi
client e "$PORT_B" -n 1
wait_exit $B 10 || fail "server b exited with status $?"
ok b
fwd=$(counter "$W/b.log" rx_forwarded)
[ "$fwd" -gt 0 ] || fail "B forwarded nothing: the steering did not miss, nothing was tested"
full=$(counter "$W/b.log" drop_forward_full)
[ "$full" = 0 ] || fail "B dropped $full packets on a full forwarding queue"
foreign=$(counter "$W/b.log" drop_forward_foreign)
[ "$foreign" = "$FOREIGN" ] || fail "B counted drop_forward_foreign $foreign, not $FOREIGN"
say "ok: C's and C2's round trips passed through B (rx_forwarded $fwd," \
	"drop_forward_full 0, drop_forward_foreign $foreign); $(grep -h 'iters in' "$W/d.log"); $(grep -h 'iters in' "$W/d2.log")"
