#!/bin/sh
# SPDX-License-Identifier: MIT
# iwarp_rdmacm.sh - Debian's unmodified rdmacm-utils and perftest over the drop-in
# librdmacm.so.1 and libibverbs.so.1 on two iWARP devices (URNIC_ADDR=iwarp:<ip>), server
# and client each as its own process: the rdma_cm port is a TCP port, setup is MPA
# (src/cm/iw_cm.h).
#
#   iwarp_rdmacm.sh [TOOL...]: rping (-v -V -C 100) and ucmatose by default; also
#   ucmatose-any (its server on the wildcard), rdma_server and rdma_xserver (synchronous
#   ids; rdma_xserver listens on the wildcard and accepts with IRD and ORD 0), cmtime
#   (100 connections, each QP destroyed right after its disconnect), perftest's ib_* -R
#   tools (RDMA Write, Read and Send; no atomics on iWARP), rstream and riostream
#   (rsockets as SENDs, rsocket.c's RS_OPT_MSG_SEND: iWARP has no immediate data;
#   blocking, non-blocking and rpoll-driven, data verified with -T v). The server
#   on 127.0.0.2 and the client on 127.0.0.3 (--shared: both on 127.0.0.2) in a private
#   network namespace (common.sh).
#   Both must exit 0 with no sanitizer report and with connections set up by the iWARP CM
#   and no setup failed (its iwcm_* counters); rping verifies its data (-V).
# Environment: LIBDIR, SANITIZE, CC, SLOT (common.sh).
. "$(dirname "$0")/common.sh"
sys_setup "$@"
# --shared: the client on the server's address too (two processes, one iWARP address)
SHARED=0
if [ "${1:-}" = --shared ]; then
	shift
	SHARED=1
fi
[ $# -gt 0 ] || set -- rping ucmatose
[ -e "$LIBDIR/librdmacm.so.1" ] || fail "$LIBDIR/librdmacm.so.1 does not exist"
PORT=$((7174 + SLOT))
S=$SRV_ADDR
C=$CLI_ADDR
[ $SHARED = 0 ] || C=$SRV_ADDR

# wait_tcp PID PORT: the server listens on TCP port PORT of $S or the wildcard (10 s).
wait_tcp() {
	_t=100
	while [ $_t -gt 0 ]; do
		ss -Hltn 2>/dev/null | awk '{ print $4 }' | grep -qx -e "$S:$2" -e "0.0.0.0:$2" &&
			return 0
		alive "$1" || return 1
		sleep 0.1
		_t=$((_t - 1))
	done
	return 1
}

# check_log LOG: no sanitizer report; the iWARP CM (URNIC_PRINT_COUNTERS=1) handed
# connections to the device and counted no failed setup.
check_log() {
	! grep -q -e 'AddressSanitizer' -e 'runtime error:' "$1" ||
		fail "sanitizer report in $(basename "$1")"
	[ "$(counter "$1" iwcm_established)" -gt 0 ] ||
		fail "no iwcm_established in $(basename "$1")"
	for _c in iwcm_mpa_failed iwcm_attach_failed iwcm_no_device iwcm_no_listener; do
		[ "$(counter "$1" $_c)" = 0 ] || fail "$_c = $(counter "$1" $_c) in $(basename "$1")"
	done
}

# pair TAG SECONDS "SERVER ARGS" "CLIENT ARGS" [serves]: both halves, to completion;
# serves: the server serves until it is stopped (rdma-core 44's cmtime), alive is right.
pair() {
	_slog=$SYS_WORK/$1.server.log
	_clog=$SYS_WORK/$1.client.log
	# shellcheck disable=SC2086 # argument lists split on purpose
	(ibv "iwarp:$S" $3) >"$_slog" 2>&1 &
	_spid=$!
	track $_spid
	wait_tcp $_spid $PORT || fail "$1: the server listens on no TCP port $PORT"
	# shellcheck disable=SC2086
	(ibv "iwarp:$C" $4) >"$_clog" 2>&1 &
	_cpid=$!
	track $_cpid
	wait_exit $_cpid "$2"
	_crc=$?
	if [ "${5:-}" = serves ]; then
		alive $_spid || fail "$1: the server died (see its log)"
		stop_pid $_spid
		_src=0
	else
		wait_exit $_spid 20
		_src=$?
	fi
	[ $_crc = 0 ] && [ $_src = 0 ] ||
		fail "$1: client exited with status $_crc, server with status $_src"
	[ "${5:-}" = serves ] || check_log "$_slog"
	check_log "$_clog"
	say "$1: ok"
}

for tool in "$@"; do
	case $tool in ucmatose-any | rping-late) ;; *) false ;; esac || command -v "$tool" >/dev/null ||
		fail "$tool not found (rdmacm-utils)"
	case $tool in
	rping)
		pair rping 60 "rping -s -a $S -p $PORT -C 100 -v -V" \
			"rping -c -a $S -I $C -p $PORT -C 100 -v -V"
		grep -q 'ping data' "$SYS_WORK/rping.client.log" ||
			fail "rping: the client printed no data (-v)"
		;;
	rping-late) # the client first: its refused connect is tried again (iw_cm.c, retry)
		_clog=$SYS_WORK/rping-late.client.log
		# shellcheck disable=SC2086
		(ibv "iwarp:$C" rping -c -a $S -I $C -p $PORT -C 10 -v -V) >"$_clog" 2>&1 &
		_cpid=$!
		track $_cpid
		sleep 0.02
		(ibv "iwarp:$S" rping -s -a $S -p $PORT -C 10 -v -V) \
			>"$SYS_WORK/rping-late.server.log" 2>&1 &
		_spid=$!
		track $_spid
		wait_exit $_cpid 30 || fail "rping-late: the client failed (see its log)"
		wait_exit $_spid 20 || fail "rping-late: the server failed"
		[ "$(counter "$_clog" iwcm_tcp_retry)" -gt 0 ] ||
			fail "rping-late: the client connected without a retry (the server was first)"
		say "rping-late: ok"
		;;
	ucmatose)
		pair ucmatose 60 "ucmatose -b $S -p $PORT -c 4 -C 10" \
			"ucmatose -s $S -b $C -p $PORT -c 4 -C 10"
		;;
	ucmatose-any)
		command -v ucmatose >/dev/null || fail "ucmatose not found (rdmacm-utils)"
		pair ucmatose-any 60 "ucmatose -p $PORT -c 4 -C 10" \
			"ucmatose -s $S -b $C -p $PORT -c 4 -C 10"
		;;
	rdma_server)
		pair rdma_server 60 "rdma_server -s $S -p $PORT" "rdma_client -s $S -p $PORT"
		;;
	rdma_xserver)
		pair rdma_xserver 60 "rdma_xserver -p $PORT -c r" \
			"rdma_xclient -s $S -p $PORT -c r"
		;;
	cmtime) # disconnects and destroys each QP at once: DISCONNECTED is the local one
		pair cmtime 60 "cmtime -b $S -p $PORT -c 100" \
			"cmtime -s $S -b $C -p $PORT -c 100" serves
		grep -q '^disconnect *:' "$SYS_WORK/cmtime.client.log" ||
			fail "cmtime: no timing table in the client's log"
		;;
	rstream) # small and large transfers, each of the three ways to wait
		for m in b n a; do
			pair rstream-$m 60 "rstream -b $S -p $PORT -T v -T $m -S 4096 -C 200" \
				"rstream -s $S -b $C -p $PORT -T v -T $m -S 4096 -C 200"
		done
		pair rstream-1m 60 "rstream -b $S -p $PORT -T v -S 1000000 -C 20" \
			"rstream -s $S -b $C -p $PORT -T v -S 1000000 -C 20"
		;;
	riostream) # riomap's announcements as SENDs, riowrite's plain RDMA WRITEs
		for m in b n a; do
			pair riostream-$m 60 "riostream -b $S -p $PORT -T v -T $m -S 100000 -C 50 -I 3" \
				"riostream -s $S -b $C -p $PORT -T v -T $m -S 100000 -C 50 -I 3"
		done
		;;
	ib_*) # perftest over rdma_cm (-R), its server on the wildcard
		pair "$tool" 120 "$tool -R -F -n 200 -p $PORT" "$tool -R -F -n 200 -p $PORT $S"
		grep -q -e '^ *[0-9]\+ \+200 ' "$SYS_WORK/$tool.client.log" ||
			fail "$tool: no result line in the client's log"
		;;
	*)
		fail "unknown tool $tool"
		;;
	esac
done
say ok
