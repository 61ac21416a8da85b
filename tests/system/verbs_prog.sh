#!/bin/sh
# SPDX-License-Identifier: MIT
# verbs_prog.sh - runs a test program built against <infiniband/verbs.h> over the
# drop-in, with two urnic devices in the one process:
#
#   private namespace, lo up: urnic0 = 127.0.0.2, urnic1 = 127.0.0.3 (URNIC_ADDR)
#   with --ipv6:              urnic0 = fd00::2,   urnic1 = fd00::3 (added to lo)
#
#   with --mcast:             lo also carries IPv4 multicast (a route for 224.0.0.0/4);
#   with --mcast --ipv6:      fd00::2 and fd00::3 on the two ends of a veth pair instead,
#                             and a second pair whose multicast route is preferred
#
#   verbs_prog.sh [--mcast] [--ipv6] PROGRAM: PROGRAM must exit 0 within 60 s with no sanitizer
#   report; its output (an "ok ..." line per step) is shown either way. --ipv6 needs a
#   private namespace (skipped otherwise: nothing on the host is reconfigured).
# Environment: LIBDIR, SANITIZE, CC, SLOT (common.sh).
. "$(dirname "$0")/common.sh"
sys_setup "$@"
MCAST=0
if [ "${1:-}" = --mcast ]; then
	shift
	MCAST=1
	[ "$URNIC_SYS_NETNS" = private ] || skip "--mcast needs a private network namespace"
fi
if [ "${1:-}" = --ipv6 ]; then
	shift
	[ "$URNIC_SYS_NETNS" = private ] || skip "--ipv6 needs a private network namespace"
	SRV_ADDR=fd00::2
	CLI_ADDR=fd00::3
	if [ $MCAST = 1 ]; then
		# lo does not take IPv6 multicast back in (it is sent, never received):
		# a veth pair, urnic0 on one end, urnic1 on the other.
		ip link add vm0 type veth peer name vm1 || fail "cannot make a veth pair"
		ip link set vm0 up && ip link set vm1 up || fail "cannot bring the veths up"
		ip -6 addr add fd00::2/128 dev vm0 nodad || fail "cannot add fd00::2 to vm0"
		ip -6 addr add fd00::3/128 dev vm1 nodad || fail "cannot add fd00::3 to vm1"
		# A decoy: the routing table sends multicast out of vx0 first. urnic0 must
		# send from its own address's interface (IPV6_MULTICAST_IF), as it joins.
		ip link add vx0 type veth peer name vx1 &&
			ip link set vx0 up && ip link set vx1 up &&
			ip -6 route add multicast ff00::/8 dev vx0 table local metric 1 ||
			fail "cannot set up the decoy multicast route"
	else
		for a in fd00::2 fd00::3; do
			ip -6 addr add $a/128 dev lo nodad || fail "cannot add $a to lo"
		done
	fi
elif [ $MCAST = 1 ]; then
	# IPv4 multicast over lo: off by default, and no route for 224.0.0.0/4.
	ip link set lo multicast on || fail "cannot turn multicast on for lo"
	ip route add 224.0.0.0/4 dev lo || fail "cannot route 224.0.0.0/4 to lo"
fi
prog=${1:?usage: verbs_prog.sh [--mcast] [--ipv6] PROGRAM}
[ -x "$prog" ] || fail "$prog is not an executable"
log=$SYS_WORK/$(basename "$prog").log
(ibv "$SRV_ADDR,$CLI_ADDR" "$prog") >"$log" 2>&1 &
pid=$!
track $pid
wait_exit $pid 60
rc=$?
cat "$log"
[ $rc -ne 124 ] || fail "$(basename "$prog") still running after 60 s"
[ $rc -eq 0 ] || fail "$(basename "$prog") exited with status $rc"
grep -q -e 'AddressSanitizer' -e 'runtime error:' "$log" && fail "sanitizer report"
# Both devices print their counters; none of these may appear in either list.
bad=$(awk '$1 ~ /^(drop_bad_icrc|drop_bad_header)$/ && $2 != 0 { print $1, $2 }' "$log")
[ -z "$bad" ] || fail "$bad"
say ok
