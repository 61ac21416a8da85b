#!/bin/sh
# SPDX-License-Identifier: MIT
# asyncwatch.sh - Debian's unmodified ibv_asyncwatch over the drop-in shows the port
# events rxe raises when its netdev goes down and up (rxe_net.c rxe_notify).
#
#   private namespace: 10.77.0.1/24 on urnicw0 === veth === urnicw1 (nothing is sent)
#     ibv_asyncwatch -d urnic0 (URNIC_ADDR=10.77.0.1), then
#       ip link set urnicw0 down -> "event_type IBV_EVENT_PORT_ERR (10), port 1"
#                                   ibv_devinfo: state PORT_DOWN, phys_state DISABLED
#       ip link set urnicw0 up   -> "event_type IBV_EVENT_PORT_ACTIVE (9), port 1"
#                                   ibv_devinfo: state PORT_ACTIVE, phys_state LINK_UP
#       ip link set urnicw1 down -> urnicw0 loses carrier (rxe: NETDEV_CHANGE):
#                                   PORT_ERR, ibv_devinfo: PORT_DOWN, POLLING
#       ip link set urnicw1 up   -> PORT_ACTIVE, LINK_UP
#   Exactly one event per change, none while nothing changes, and the watcher spends
#   (almost) no CPU while it waits. Needs a private namespace (skipped otherwise).
# Environment: LIBDIR, SANITIZE, CC, SLOT (common.sh).
. "$(dirname "$0")/common.sh"
sys_setup "$@"
[ "$URNIC_SYS_NETNS" = private ] || skip "needs a private network namespace"
command -v ibv_asyncwatch >/dev/null || fail "ibv_asyncwatch not found (ibverbs-utils)"
command -v stdbuf >/dev/null || skip "stdbuf (coreutils) not found"
ADDR=10.77.0.1
IF=urnicw0
PEER=urnicw1
ip link add $IF type veth peer name $PEER || skip "cannot create a veth pair"
ip addr add $ADDR/24 dev $IF || fail "ip addr add"
ip link set $PEER up || fail "ip link set $PEER up"
ip link set $IF up || fail "ip link set $IF up"
log=$SYS_WORK/asyncwatch.log

# its stdout is a file: line-buffer it, or the events wait in stdio until exit
(ibv $ADDR stdbuf -oL ibv_asyncwatch -d urnic0) >"$log" 2>&1 &
wpid=$!
track $wpid

# wait_lines N SECONDS: until the log has N event lines
wait_lines() {
	_t=$(($2 * 10))
	while [ "$(grep -c 'event_type' "$log")" -lt "$1" ]; do
		alive $wpid || fail "ibv_asyncwatch exited"
		[ $_t -gt 0 ] || fail "no event $1 after $2 s"
		sleep 0.1
		_t=$((_t - 1))
	done
}

# port_is STATE PHYS: ibv_devinfo in another process sees the port so
port_is() {
	(ibv $ADDR ibv_devinfo -v -d urnic0) >"$SYS_WORK/devinfo.log" 2>&1 ||
		fail "ibv_devinfo failed"
	grep -q "state:.*$1" "$SYS_WORK/devinfo.log" || fail "ibv_devinfo: port not $1"
	grep -q "phys_state:.*$2" "$SYS_WORK/devinfo.log" || fail "ibv_devinfo: phys not $2"
}

t=100
until grep -q 'async event FD' "$log"; do
	alive $wpid || fail "ibv_asyncwatch exited before watching"
	[ $t -gt 0 ] || fail "ibv_asyncwatch did not start in 10 s"
	sleep 0.1
	t=$((t - 1))
done
port_is PORT_ACTIVE LINK_UP
sleep 1
[ "$(grep -c 'event_type' "$log")" = 0 ] || fail "an event without a change"

n=0
for round in "$IF DISABLED" "$PEER POLLING"; do
	set -- $round
	ip link set "$1" down || fail "ip link set $1 down"
	n=$((n + 1))
	wait_lines $n 10
	port_is PORT_DOWN "$2"
	ip link set "$1" up || fail "ip link set $1 up"
	n=$((n + 1))
	wait_lines $n 10
	port_is PORT_ACTIVE LINK_UP
	say "$1 down and up: PORT_ERR ($2) and PORT_ACTIVE seen"
done
sleep 1
cat "$log"
exp='  event_type IBV_EVENT_PORT_ERR (10), port 1
  event_type IBV_EVENT_PORT_ACTIVE (9), port 1
  event_type IBV_EVENT_PORT_ERR (10), port 1
  event_type IBV_EVENT_PORT_ACTIVE (9), port 1'
[ "$(grep 'event_type' "$log")" = "$exp" ] || fail "events are not exactly ERR, ACTIVE, ERR, ACTIVE"

# Idle: a blocked reader and a watch thread asleep on netlink. utime+stime in ticks.
cpu() { awk '{ print $14 + $15 }' "/proc/$wpid/stat"; }
c0=$(cpu)
sleep 2
c1=$(cpu)
[ $((c1 - c0)) -le 5 ] || fail "ibv_asyncwatch used $((c1 - c0)) ticks of CPU in 2 idle seconds"
stop_pid $wpid
grep -q -e 'AddressSanitizer' -e 'runtime error:' "$log" && fail "sanitizer report"
say ok
