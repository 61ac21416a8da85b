#!/bin/sh
# SPDX-License-Identifier: MIT
# perftest.sh - Debian's unmodified perftest over the drop-in: server and client run to
# completion and report a plausible bandwidth or latency.
#
#   private namespace, lo:
#     127.0.0.2 (server)  <--- TOOL -x 1 -F [OPTS] ---  127.0.0.3 (client)
#     with --same-addr both on 127.0.0.2, sharing UDP 4791 (transport/share.h)
#     with --ring both receive from packet rings (URNIC_RING=1, transport/ring.h): every
#     packet must come from a ring (rx_ring), none be lost to a full ring or arrive twice
#     with --pin-client the client runs on one CPU (taskset): perftest times with
#     rdtsc, and a post stamped on one vCPU and its completion on another can differ
#     by more than the run took
#   perftest.sh [--ring] [--pin-client] [--same-addr] TOOL [OPTS...]
#     (environment: LIBDIR, SANITIZE, CC, SLOT)
. "$(dirname "$0")/common.sh"
sys_setup "$@"
RING=0
if [ "${1:-}" = --ring ]; then
	shift
	RING=1
	ring_on
fi
PIN=
if [ "${1:-}" = --pin-client ]; then
	shift
	command -v taskset >/dev/null || fail "taskset not found (util-linux)"
	# the first CPU this test may use
	PIN="taskset -c $(awk '/^Cpus_allowed_list/ { split($2, c, /[-,]/); print c[1] }' /proc/self/status)"
fi
if [ "${1:-}" = --same-addr ]; then
	shift
	CLI_ADDR=$SRV_ADDR
fi
TOOL=${1:?usage: perftest.sh [--ring] [--pin-client] [--same-addr] TOOL [OPTS...]}
shift
command -v "$TOOL" >/dev/null || fail "$TOOL not found (perftest)"
SLOG=$SYS_WORK/server.log
CLOG=$SYS_WORK/client.log

(ibv "$SRV_ADDR" "$TOOL" -x 1 -F -p "$PP_PORT" "$@") >"$SLOG" 2>"$SLOG.err" &
SPID=$!
track $SPID
wait_listen $SPID "$PP_PORT" 10
case $? in
1) cat "$SLOG" "$SLOG.err"; fail "$TOOL server exited before listening" ;;
2) fail "$TOOL server not listening on TCP $PP_PORT after 10 s" ;;
esac
# PIN is empty or two words: split on purpose.
# shellcheck disable=SC2086
(ibv "$CLI_ADDR" $PIN "$TOOL" -x 1 -F -p "$PP_PORT" "$@" "$SRV_ADDR") >"$CLOG" 2>"$CLOG.err" &
CPID=$!
track $CPID
wait_exit $CPID 120
crc=$?
wait_exit $SPID 20
src=$?
if [ $crc -ne 0 ] || [ $src -ne 0 ]; then
	say "--- server"; cat "$SLOG" "$SLOG.err"; say "--- client"; cat "$CLOG" "$CLOG.err"
	fail "$TOOL $*: client exited $crc, server $src"
fi
# The result lines: a size, an iteration count, then figures. None may be zero or NaN.
results=$(awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+/ { print }' "$CLOG")
[ -n "$results" ] || { cat "$CLOG"; fail "$TOOL printed no result line"; }
echo "$results" | awk '{ for (i = 3; i <= NF; i++) if ($i !~ /^[0-9.]+$/ || $i + 0 == 0) bad = 1 }
	END { exit bad }' || { cat "$CLOG"; fail "$TOOL printed a zero or non-numeric figure"; }
for log in "$SLOG.err" "$CLOG.err"; do
	for c in drop_bad_icrc drop_bad_header retry_exceeded rnr_retry_exceeded cq_overflow; do
		v=$(counter "$log" $c)
		[ "$v" = 0 ] || fail "$TOOL: $c = $v in $(basename "$log")"
	done
done
[ $RING = 0 ] || ring_check "$SLOG.err" "$CLOG.err"
say "$TOOL $* ($SRV_ADDR <- $CLI_ADDR): ok"
echo "$results" | sed 's/^/    /'
