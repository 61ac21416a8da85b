#!/bin/sh
# SPDX-License-Identifier: MIT
# ucx.sh URNIC MODE - Debian's UCX (ucx-utils) over urnic, through `urnic run`:
#
#   info       `urnic run -- ucx_info -d` lists rc_verbs and ud_verbs on urnic0:1, as
#              root and as nobody (setpriv: `urnic run` makes a user namespace)
#   tag_lat    UCP: ucx_perftest -t tag_lat with UCX_TLS=rc_verbs,ud_verbs, server on
#              SRV_ADDR and client on CLI_ADDR (the private namespace's loopback)
#   tag_bw     UCP: -t tag_bw -s 1048576, the same way
#   tag_user   tag_lat with both sides run as nobody
#   am_lat_ud  UCT: -t am_lat -x ud_verbs -d urnic0:1
#   put_bw_rc  UCT: -t put_bw -x rc_verbs -d urnic0:1 -D zcopy -s 65536
#   defaults   UCP -t tag_bw with UCX's defaults, no UCX_TLS, between two namespace
#              "machines" (mw.sh): UCX chooses among all it has, shared memory, TCP and
#              urnic's, and must choose urnic's
#
# Each run must go over urnic: the devices' counters (URNIC_PRINT_COUNTERS=1) show at
# least the bytes perftest sent, sent or placed directly (mw.sh, moved). Environment: LIBDIR, SANITIZE, CC, SLOT (common.sh).
URNIC=${1:?usage: ucx.sh URNIC MODE}
MODE=${2:?usage: ucx.sh URNIC MODE}
# shellcheck source=../system/common.sh
. "$(dirname "$0")/../system/common.sh"
# shellcheck source=mw.sh
. "$(dirname "$0")/mw.sh"
sys_setup "$@"
need ucx_info ucx-utils
need ucx_perftest ucx-utils
PORT=$((13900 + SLOT % 100))

# nobody_ok: true when the test can run programs as nobody (root, with setpriv); then
# MW_AS=$NOBODY runs urnic_run as nobody
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
nobody_ok() {
	[ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
		setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$URNIC"
}

# info LOG WHO: ucx_info -d over urnic lists both transports on urnic0:1
info() {
	# One "# Transport:" line then its "# Device:" line per transport and device.
	for _tl in rc_verbs ud_verbs; do
		awk -v tl="$_tl" '$2 == "Transport:" { t = $3 }
			$2 == "Device:" && t == tl && $3 == "urnic0:1" { f = 1 }
			END { exit !f }' "$1" ||
			fail "ucx_info -d as $2 lists no $_tl on urnic0:1"
	done
	say "ucx_info -d as $2: rc_verbs and ud_verbs on urnic0:1"
}

if [ "$MODE" = info ]; then
	log=$SYS_WORK/ucx_info.log
	(urnic_run --addr "$SRV_ADDR" -- ucx_info -d) >"$log" 2>&1 ||
		fail "urnic run -- ucx_info -d exited with status $?"
	info "$log" "$(id -un)"
	if nobody_ok; then
		ulog=$SYS_WORK/ucx_info_nobody.log
		(MW_AS=$NOBODY urnic_run --addr "$SRV_ADDR" -- ucx_info -d) >"$ulog" 2>&1
		rc=$?
		if grep -q 'cannot create a user namespace' "$ulog"; then
			say "NOTE: this host refuses user namespaces to nobody; not checked as a user"
		else
			[ $rc = 0 ] || fail "urnic run -- ucx_info -d as nobody exited with status $rc"
			info "$ulog" nobody
		fi
	else
		say "NOTE: not root (or no setpriv): checked as $(id -un) only"
	fi
	say ok
	exit 0
fi

# perftest TAG SERVER_CMD CLIENT_CMD [NETNS]: runs the server command (shell text, in
# the background) until it listens on PORT (in network namespace NETNS when given), then
# the client command to completion, then waits for the server's end.
# Logs: $SYS_WORK/TAG.server.log and TAG.client.log.
perftest() {
	_slog=$SYS_WORK/$1.server.log
	_clog=$SYS_WORK/$1.client.log
	(eval "$2") >"$_slog" 2>&1 &
	_spid=$!
	track $_spid
	wait_listen $_spid "$PORT" 15 "${4:-}" || fail "$1: the server is not listening on $PORT"
	(eval "$3") >"$_clog" 2>&1 &
	_cpid=$!
	track $_cpid
	wait_exit $_cpid 25 || fail "$1: the client exited with status $?"
	wait_exit $_spid 10 || fail "$1: the server exited with status $?"
	grep -q '^Final:' "$_clog" || fail "$1: no Final: line from the client"
	grep -h '^Final:' "$_clog"
}

# Sizes and iterations of each run; the least bytes each side's device must carry.
case $MODE in
tag_lat | tag_user)
	ARGS="-t tag_lat -n 20000"
	LEAST=$((20000 * 8))
	;;
tag_bw)
	ARGS="-t tag_bw -s 1048576 -n 300"
	LEAST=$((300 * 1048576))
	;;
am_lat_ud)
	ARGS="-t am_lat -x ud_verbs -d urnic0:1 -n 20000"
	LEAST=$((20000 * 8))
	;;
put_bw_rc)
	ARGS="-t put_bw -x rc_verbs -d urnic0:1 -D zcopy -s 65536 -n 3000"
	LEAST=$((3000 * 65536))
	;;
defaults)
	ARGS="-t tag_bw -s 1048576 -n 300"
	LEAST=$((300 * 1048576))
	;;
*) fail "unknown mode $MODE" ;;
esac

if [ "$MODE" = defaults ]; then
	mw_hosts_up
	S=$MW_A
	C=$MW_B
	run="env URNIC_PRINT_COUNTERS=1 $SAN_ENV $URNIC run -- ucx_perftest -p $PORT"
	perftest "$MODE" "on_host a '$run'" "on_host b '$run $ARGS $S'" "$MW_NS_A"
else
	S=$SRV_ADDR
	C=$CLI_ADDR
	if [ "$MODE" = tag_user ]; then
		if nobody_ok; then
			# shellcheck disable=SC2034 # read by urnic_run (mw.sh)
			MW_AS=$NOBODY
		else
			say "NOTE: not root (or no setpriv): run as $(id -un)"
		fi
	fi
	tls="env UCX_TLS=rc_verbs,ud_verbs"
	perftest "$MODE" "urnic_run --addr $S -- $tls ucx_perftest -p $PORT" \
		"urnic_run --addr $C -- $tls ucx_perftest -p $PORT $ARGS $S"
fi
log=$SYS_WORK/all.log
cat "$SYS_WORK/$MODE.server.log" "$SYS_WORK/$MODE.client.log" >"$log"
moved "$log" "$C" "$S" "$LEAST"
say ok
