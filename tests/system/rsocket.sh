#!/bin/sh
# SPDX-License-Identifier: MIT
# rsocket.sh - rsockets over the drop-in librdmacm.so.1 and libibverbs.so.1: Debian's
# unmodified rstream and riostream (rdmacm-utils), server on 127.0.0.2 and client on
# 127.0.0.3 (common.sh), blocking, non-blocking and rpoll-driven, with their data
# verified (-T v); rstream again with both on one address; udpong's datagrams, echoed;
# and an ordinary TCP pair, socat receiving and nc sending a file, under Debian's
# librspreload, the file's checksum compared and the bytes seen on urnic's counters.
# Each pair must exit 0 with no sanitizer report.
# Environment: LIBDIR, SANITIZE, CC, SLOT (common.sh).
. "$(dirname "$0")/common.sh"
sys_setup "$@"
[ -e "$LIBDIR/librdmacm.so.1" ] || fail "$LIBDIR/librdmacm.so.1 does not exist"
PRELOAD=/usr/lib/x86_64-linux-gnu/rsocket/librspreload.so
PORT=$((7300 + SLOT))
S=$SRV_ADDR
C=$CLI_ADDR

# wait_port PID PORT ADDR: the server holds rdma_cm port PORT of the TCP port space
# (262) on ADDR.
wait_port() { wait_cm_port "$1" "$3" 262 "$2"; }

check_log() {
	! grep -q -e 'AddressSanitizer' -e 'runtime error:' "$1" ||
		fail "sanitizer report in $(basename "$1")"
}

# rsp ADDR CMD...: CMD under librspreload (after ASan's runtime when sanitized).
rsp() {
	_addr=$1
	shift
	_pre=$PRELOAD
	[ "$SANITIZE" != ON ] || _pre="$ASAN_LIB $PRELOAD"
	exec env LD_LIBRARY_PATH="$LIBDIR" URNIC_ADDR="$_addr" URNIC_PRINT_COUNTERS=1 \
		ASAN_OPTIONS=detect_leaks=0:exitcode=99 LD_PRELOAD="$_pre" "$@"
}

# pair TAG SECONDS SADDR CADDR PORT "SERVER ARGS" "CLIENT ARGS" [RUNNER]: both halves
# to completion; the client starts once the server holds PORT (0: after a second).
pair() {
	_tag=$1
	_run=${8:-ibv}
	_slog=$SYS_WORK/$_tag.server.log
	_clog=$SYS_WORK/$_tag.client.log
	# shellcheck disable=SC2086 # argument lists split on purpose
	($_run "$3" $6) >"$_slog" 2>&1 &
	_spid=$!
	track $_spid
	if [ "$5" = 0 ]; then
		sleep 1
	else
		wait_port $_spid "$5" "$3" || fail "$_tag: the server holds no rdma_cm port $5"
	fi
	# shellcheck disable=SC2086
	($_run "$4" $7) >"$_clog" 2>&1 &
	_cpid=$!
	track $_cpid
	wait_exit $_cpid "$2"
	_crc=$?
	wait_exit $_spid 20
	_src=$?
	[ $_crc = 0 ] && [ $_src = 0 ] ||
		fail "$_tag: client exited with status $_crc, server with status $_src"
	check_log "$_slog"
	check_log "$_clog"
	say "$_tag: ok"
}

for t in rstream riostream; do
	command -v $t >/dev/null || skip "$t not found (rdmacm-utils)"
done

# rstream's latency and bandwidth runs at both ends of its sweep, verified (its whole
# default sweep takes 10 s and more on a loaded machine: 100000 round trips of 64 B).
pair rstream-64 60 "$S" "$C" $PORT "rstream -b $S -p $PORT -T v -S 64 -C 2000" \
	"rstream -s $S -b $C -p $PORT -T v -S 64 -C 2000"
pair rstream-1m 60 "$S" "$C" $PORT "rstream -b $S -p $PORT -T v -S 1000000 -C 50" \
	"rstream -s $S -b $C -p $PORT -T v -S 1000000 -C 50"
for mode in n a b; do
	pair rstream-$mode 60 "$S" "$C" $PORT "rstream -b $S -p $PORT -T v -T $mode -S 100000 -C 200" \
		"rstream -s $S -b $C -p $PORT -T v -T $mode -S 100000 -C 200"
done
# One address for both: the client takes its source from the route (its -b would bind
# the server's port, as over the kernel's rdma_cm).
pair rstream-shared 60 "$S" "$S" $PORT "rstream -b $S -p $PORT -T v -S 4096 -C 1000" \
	"rstream -s $S -p $PORT -T v -S 4096 -C 1000"
# riostream's riowrite: the peer's memory written directly; custom sizes only (its
# default sweep spins on a byte of the buffer, 2 x 100000 times per size).
for mode in b n a; do
	pair riostream-$mode 60 "$S" "$C" $PORT \
		"riostream -b $S -p $PORT -T v -T $mode -S 100000 -C 50 -I 3" \
		"riostream -s $S -b $C -p $PORT -T v -T $mode -S 100000 -C 50 -I 3"
done

# udpong: datagram rsockets, every message echoed (-T e) so that none may be lost; its
# server serves until it is stopped. The datagrams must have gone over UD: sent by the
# socket (tx_sends) or through a local lane (tx_local, URNIC_LOCAL).
command -v udpong >/dev/null || skip "udpong not found (rdmacm-utils)"
for mode in b n a; do
	_slog=$SYS_WORK/udpong-$mode.server.log
	_clog=$SYS_WORK/udpong-$mode.client.log
	(ibv "$S" udpong -b "$S" -p $PORT) >"$_slog" 2>&1 &
	_spid=$!
	track $_spid
	sleep 0.5
	(ibv "$C" udpong -s "$S" -p $PORT -C 300 -T e -T $mode) >"$_clog" 2>&1 &
	_cpid=$!
	track $_cpid
	wait_exit $_cpid 60 || fail "udpong-$mode: the client exited with status $?"
	alive $_spid || fail "udpong-$mode: the server died (see its log)"
	stop_pid $_spid
	check_log "$_slog"
	check_log "$_clog"
	grep -q '^custom ' "$_clog" || fail "udpong-$mode: no result line"
	[ $(($(counter "$_clog" tx_sends) + $(counter "$_clog" tx_local))) -ge 300 ] || fail "udpong-$mode: datagrams not sent over UD"
	say "udpong-$mode: ok"
done

# An ordinary TCP program under librspreload: a file through nc to socat.
if [ -e "$PRELOAD" ] && command -v nc >/dev/null && command -v socat >/dev/null; then
	head -c 3000000 /dev/urandom >"$SYS_WORK/in.bin"
	echo "exec nc -N -s $C $S $PORT <$SYS_WORK/in.bin" >"$SYS_WORK/send.sh"
	pair preload 60 "$S" "$C" $PORT \
		"socat -u TCP4-LISTEN:$PORT,bind=$S CREATE:$SYS_WORK/out.bin" \
		"sh $SYS_WORK/send.sh" rsp
	[ "$(md5sum <"$SYS_WORK/in.bin")" = "$(md5sum <"$SYS_WORK/out.bin")" ] ||
		fail "preload: the file arrived changed"
	[ "$(counter "$SYS_WORK/preload.server.log" rx_bytes)" -gt 3000000 ] ||
		fail "preload: the file did not travel over urnic (rx_bytes)"
else
	say "preload: not run (librspreload, nc or socat missing)"
fi
say ok
