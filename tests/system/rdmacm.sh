#!/bin/sh
# SPDX-License-Identifier: MIT
# rdmacm.sh - Debian's unmodified rdmacm-utils over the drop-in librdmacm.so.1 and
# libibverbs.so.1, server and client, each as its own process.
#
#   rdmacm.sh [--shared] TOOL...: for each TOOL (rping, ucmatose, udaddy, rdma_server,
#   rdma_xserver, cmtime, mckey, or a perftest tool, ib_*, run with -R), its server on
#   127.0.0.2 and its client on 127.0.0.3 in a
#   private network namespace (common.sh); --shared: both on 127.0.0.2 behind an idle
#   rping server started first, so that every REQ of theirs reaches that process first
#   and is handed over (transport/cm_ports.h).
#
#   Both must exit 0 with no sanitizer report; rping verifies its data (-V), and every
#   log must show no CM MAD refused (cm_drop_*: a clean loopback refuses none).
#   rping-big: rping's largest buffer, whose RDMA READs of 65535 bytes the client's
#   process places straight into the server's, and whose RDMA WRITEs back the client's
#   process copies straight from the server's (direct placement through the shared
#   memory lanes, wire/addr.h): counted on both sides, the data verified.
# Environment: LIBDIR, SANITIZE, CC, SLOT (common.sh).
. "$(dirname "$0")/common.sh"
sys_setup "$@"
SHARED=0
if [ "${1:-}" = --shared ]; then
	shift
	SHARED=1
fi
[ $# -gt 0 ] || set -- rping
[ -e "$LIBDIR/librdmacm.so.1" ] || fail "$LIBDIR/librdmacm.so.1 does not exist"
PORT=$((7174 + SLOT))
S=$SRV_ADDR
C=$CLI_ADDR
[ $SHARED = 0 ] || C=$SRV_ADDR

# wait_port PID PORT: the server holds rdma_cm port PORT on $S in the TCP port space
# (262, RDMA_PS_TCP) or the UDP one (273, RDMA_PS_UDP).
wait_port() { wait_cm_port "$1" "$S" '2[67][23]' "$2"; }

# wait_group PID GROUP: the receiver's device has joined the IPv4 group GROUP on lo (the
# IP join of its QP's attach, done as it reads its MULTICAST_JOIN event).
wait_group() {
	_t=100
	while [ $_t -gt 0 ]; do
		ip maddr show dev lo 2>/dev/null | grep -q -e "inet  *$2\$" && return 0
		alive "$1" || return 1
		sleep 0.1
		_t=$((_t - 1))
	done
	return 1
}

# check_log LOG: no sanitizer report, no CM MAD refused.
check_log() {
	! grep -q -e 'AddressSanitizer' -e 'runtime error:' "$1" ||
		fail "sanitizer report in $(basename "$1")"
	for _c in $(awk '$1 ~ /^cm_drop_/ && $2 != 0 { print $1 }' "$1"); do
		fail "$_c = $(counter "$1" "$_c") in $(basename "$1")"
	done
}

# pair TAG SECONDS PORT "SERVER ARGS" "CLIENT ARGS": the two halves of a tool, to
# completion; the server is ready once it holds PORT (a multicast receiver, PORT
# mcast:GROUP: once it has joined GROUP).
pair() {
	_tag=$1
	_secs=$2
	_port=$3
	shift
	_slog=$SYS_WORK/$_tag.server.log
	_clog=$SYS_WORK/$_tag.client.log
	# A shared address's first process (slot 0, which every REQ for QP 1 reaches) is
	# an idle rping server: the tool's server and client are the second and third.
	if [ $SHARED = 1 ]; then
		(ibv "$S" rping -s -a "$S" -p $((PORT + 1000))) >"$SYS_WORK/$_tag.first.log" 2>&1 &
		_fpid=$!
		track $_fpid
		wait_port $_fpid $((PORT + 1000)) || fail "$_tag: the first process holds no port"
	fi
	# shellcheck disable=SC2086 # argument lists split on purpose
	(ibv "$S" $3) >"$_slog" 2>&1 &
	_spid=$!
	track $_spid
	case $_port in
	mcast:*)
		wait_group $_spid "${_port#mcast:}" ||
			fail "$_tag: the receiver has not joined ${_port#mcast:}"
		;;
	*)
		wait_port $_spid "$_port" || fail "$_tag: the server holds no rdma_cm port $_port"
		;;
	esac
	# shellcheck disable=SC2086
	(ibv "$C" $4) >"$_clog" 2>&1 &
	_cpid=$!
	track $_cpid
	wait_exit $_cpid "$_secs"
	_crc=$?
	if [ "$_tag" = cmtime ]; then
		# rdma-core 44's cmtime server serves until it is stopped: alive is right.
		alive $_spid || fail "cmtime: the server died (see its log)"
		stop_pid $_spid
		_src=0
	else
		wait_exit $_spid 20
		_src=$?
	fi
	[ $_crc = 0 ] && [ $_src = 0 ] ||
		fail "$_tag: client exited with status $_crc, server with status $_src"
	check_log "$_slog"
	check_log "$_clog"
	[ $SHARED = 0 ] || stop_pid $_fpid
	say "$_tag: ok"
}

for tool in "$@"; do
	command -v "${tool%-big}" >/dev/null || fail "${tool%-big} not found (rdmacm-utils)"
	case $tool in
	rping)
		pair rping 60 $PORT "rping -s -a $S -p $PORT -C 1000 -V -S 64" \
			"rping -c -a $S -I $C -p $PORT -C 1000 -V -S 64"
		;;
	rping-big) # the server READs the client's 65535 bytes and WRITEs them back: direct
		pair rping-big 60 $PORT "rping -s -a $S -p $PORT -C 200 -V -S 65535" \
			"rping -c -a $S -I $C -p $PORT -C 200 -V -S 65535"
		_placed=$(counter "$SYS_WORK/rping-big.server.log" read_direct_placed)
		_direct=$(counter "$SYS_WORK/rping-big.client.log" read_direct)
		_wsent=$(counter "$SYS_WORK/rping-big.server.log" write_direct)
		_wplaced=$(counter "$SYS_WORK/rping-big.client.log" write_direct_placed)
		say "rping-big: read_direct $_direct (client), read_direct_placed $_placed" \
			"(server); write_direct $_wsent (server), write_direct_placed $_wplaced (client)"
		[ "$_placed" -gt 0 ] && [ "$_direct" -ge "$_placed" ] ||
			fail "rping-big: READs not placed directly through the lanes"
		[ "$_wplaced" -gt 0 ] && [ "$_wsent" -ge "$_wplaced" ] ||
			fail "rping-big: WRITEs not placed directly through the lanes"
		;;
	ucmatose)
		pair ucmatose 60 $PORT "ucmatose -b $S -p $PORT -c 10 -C 20" \
			"ucmatose -s $S -b $C -p $PORT -c 10 -C 20"
		;;
	udaddy) # its port is 7174 in the UDP port space, always
		pair udaddy 60 7174 "udaddy -b $S -c 4 -C 10" "udaddy -s $S -b $C -c 4 -C 10"
		;;
	rdma_server) # binds the address getaddrinfo gives for -s, RAI_PASSIVE
		pair rdma_server 60 $PORT "rdma_server -s $S -p $PORT" \
			"rdma_client -s $S -p $PORT"
		;;
	rdma_xserver) # binds any address (RAI_PASSIVE, no node)
		pair rdma_xserver 60 $PORT "rdma_xserver -p $PORT -c r" \
			"rdma_xclient -s $S -p $PORT -c r"
		;;
	cmtime)
		pair cmtime 120 $PORT "cmtime -b $S -p $PORT -c 100" \
			"cmtime -s $S -b $C -p $PORT -c 100"
		grep -q '^connect *:' "$SYS_WORK/cmtime.client.log" ||
			fail "cmtime: no timing table in the client's log"
		say "cmtime: $(grep -E '^(connect|disconnect) *:' "$SYS_WORK/cmtime.client.log" |
			tr -s ' ' | tr '\n' ';')"
		;;
	mckey) # UD multicast: the receiver joins 239.1.2.3, the sender joins and sends to it
		if [ "$URNIC_SYS_NETNS" != private ]; then
			say "mckey: not run (lo's multicast route needs a private network namespace)"
			continue
		fi
		ip link set lo multicast on || fail "cannot turn multicast on for lo"
		ip route replace 224.0.0.0/4 dev lo || fail "cannot route 224.0.0.0/4 to lo"
		pair mckey 60 mcast:239.1.2.3 "mckey -m 239.1.2.3 -b $S -C 20" \
			"mckey -m 239.1.2.3 -b $C -s -C 20"
		grep -q 'joined dgid: ::ffff:239.1.2.3' "$SYS_WORK/mckey.server.log" ||
			fail "mckey: the receiver's log shows no join"
		# -o: the sender joins as a send-only full member (its QP is not attached)
		pair mckey-o 60 mcast:239.1.2.4 "mckey -m 239.1.2.4 -b $S -C 20" \
			"mckey -m 239.1.2.4 -b $C -s -o -C 20"
		;;
	ib_*) # perftest over rdma_cm (-R): its own first connection carries the handshake
		pair "$tool" 120 $PORT "$tool -R -F -n 200 -p $PORT" \
			"$tool -R -F -n 200 -p $PORT $S"
		grep -q -e '^ *[0-9]\+ \+200 ' "$SYS_WORK/$tool.client.log" ||
			fail "$tool: no result line in the client's log"
		;;
	*)
		fail "unknown tool $tool"
		;;
	esac
done
say ok
