#!/bin/sh
# SPDX-License-Identifier: MIT
# pidns_counters.sh - two urnic processes of one user with the same pid, each in a PID
# namespace of its own, sharing /dev/shm (as containers of one pod, or the MPI tests'
# namespace "machines" do): each keeps a counters file of its own (urnic.1.urnic0, and
# a name beside it for the second), and neither unlinks the other's, which a stale
# file of a killed process would be. Both are ibv_rc_pingpong servers waiting for a
# client, their devices open; `urnic counters` would miss one whose file was taken.
# Environment: LIBDIR, SANITIZE, CC, SLOT (common.sh).
. "$(dirname "$0")/common.sh"
sys_setup "$@"
unshare -p -f true 2>/dev/null || skip "unshare -p is not permitted here"
command -v ibv_rc_pingpong >/dev/null || skip "ibv_rc_pingpong not found (ibverbs-utils)"

# Files named for pid 1 left by earlier runs of this test would stand in for ours.
rm -f /dev/shm/urnic.1.urnic0 /dev/shm/urnic.1.urnic0.*
before=$(ls /dev/shm)
# SAN_ENV: words without blanks, split on purpose.
# shellcheck disable=SC2086
# --kill-child: the server, init of its PID namespace, ignores the SIGTERM that ends
# unshare; it goes with it (SIGKILL) instead of waiting for a client for ever.
start() {
	unshare -p --kill-child -- env LD_LIBRARY_PATH="$LIBDIR" URNIC_ADDR="$1" $SAN_ENV \
		ibv_rc_pingpong -g 1 -p "$2" >"$SYS_WORK/$1.log" 2>&1 &
	track $!
}
start "$SRV_ADDR" "$PP_PORT"
first=$!
wait_listen $first "$PP_PORT" 20 || fail "the first server did not start: $(cat "$SYS_WORK"/*.log)"
start "$CLI_ADDR" $((PP_PORT + 1))
second=$!
wait_listen $second $((PP_PORT + 1)) 20 || fail "the second server did not start"
sleep 0.3
new=$(ls /dev/shm | grep -vxF "$before" | grep '^urnic\.1\.urnic0')
say "files of the two pid-1 processes: $(echo "$new" | tr '\n' ' ')"
[ "$(echo "$new" | grep -c .)" = 2 ] ||
	fail "two processes with pid 1 have $(echo "$new" | grep -c .) counters files"
grep -h "another PID namespace" "$SYS_WORK"/*.log ||
	fail "the second process did not say why its file has another name"
# Neither server may outlive the test, nor its file (pid 1 is alive here: no sweep
# would take them).
stop_pid $first
stop_pid $second
sleep 0.2
for f in $new; do
	rm -f "/dev/shm/$f"
done
say ok
