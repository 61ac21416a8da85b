# shellcheck shell=sh
# SPDX-License-Identifier: MIT
# mw.sh - sourced by the middleware tests after tests/system/common.sh: Debian's UCX and
# MPI packages run unmodified over `urnic run`, and urnic's own counters prove that
# their traffic went over urnic rather than shared memory or TCP.
#
# Two kinds of hosts:
#   two addresses on one machine: SRV_ADDR and CLI_ADDR from sys_setup (a private
#     network namespace), one urnic device each;
#   two "machines" (mw_hosts_up): named network namespaces urnic-mpi-a-PID (10.77.0.1)
#     and urnic-mpi-b-PID (10.77.0.2) joined by a veth pair; on_host runs a command in
#     one of them with its own hostname, IPC and PID namespaces too, so that UCX's
#     shared memory transports, which compare those, see two machines (UCX 1.13,
#     uct/sm/base/sm_iface.c) and MPI launchers see two host names.

MW_NS_A=
MW_NS_B=
MW_A=10.77.0.1
MW_B=10.77.0.2

# need PROGRAM PACKAGE: skips the test when PROGRAM is not installed
need() {
	command -v "$1" >/dev/null || skip "$1 not found (Debian package $2; scripts/deps.sh)"
}

# urnic_run ARGS...: execs `urnic run ARGS` with the counters printed at exit, the
# sanitizer's runtime preloaded when the build is sanitized, as the user MW_AS names
# (a command prefix such as setpriv's; empty: as the caller). SAN_ENV and MW_AS are
# lists of words without blanks: split on purpose.
MW_AS=
urnic_run() {
	# shellcheck disable=SC2086
	exec $MW_AS env URNIC_PRINT_COUNTERS=1 $SAN_ENV "$URNIC" run "$@"
}

# dev_counter LOG ADDR NAME: counter NAME of the device on ADDR in a log holding the
# URNIC_PRINT_COUNTERS=1 reports of several processes (0 when not printed)
dev_counter() {
	awk -v a="($2)" -v n="$3" '
		/^urnic: counters of / { mine = ($NF == a) }
		mine && $1 == n && $2 ~ /^[0-9]+$/ { v = $2; f = 1 }
		END { print f ? v : 0 }' "$1"
}

# moved LOG FROM TO LEAST: fails unless at least LEAST bytes went over urnic from the
# device on FROM to the one on TO, sent (FROM's tx_bytes, TO's rx_bytes) or, between
# processes of one host, placed directly (wire/addr.h: each side's direct_bytes, what it
# copied as a READ's or WRITE's responder or a READ's requester); says the figures
moved() {
	_d=$(($(dev_counter "$1" "$2" direct_bytes) + $(dev_counter "$1" "$3" direct_bytes)))
	_tx=$(dev_counter "$1" "$2" tx_bytes)
	_rx=$(dev_counter "$1" "$3" rx_bytes)
	[ $((_tx + _d)) -ge "$4" ] && [ $((_rx + _d)) -ge "$4" ] ||
		fail "urnic $2 -> $3: tx_bytes $_tx, rx_bytes $_rx, direct_bytes $_d: less than the $4 the test moved"
	say "urnic $2 -> $3: tx_bytes $_tx, rx_bytes $_rx, direct_bytes $_d (at least $4)"
}

# carried LOG ADDR NAME LEAST: fails unless counter NAME of the device on ADDR reached
# LEAST (the traffic went over urnic); says the figure otherwise
carried() {
	_v=$(dev_counter "$1" "$2" "$3")
	[ "$_v" -ge "$4" ] || fail "urnic on $2: $3 = $_v, less than the $4 the test moved"
	say "urnic on $2: $3 = $_v (at least $4)"
}

# mw_hosts_up: the two namespace "machines" (root only: named network namespaces)
mw_hosts_up() {
	[ "$(id -u)" = 0 ] || skip "named network namespaces need root"
	command -v unshare >/dev/null || skip "unshare not found (util-linux)"
	MW_NS_A=urnic-mpi-a-$$
	MW_NS_B=urnic-mpi-b-$$
	trap 'sys_cleanup; mw_hosts_down' EXIT
	for _ns in $MW_NS_A $MW_NS_B; do
		ip netns add "$_ns" || fail "ip netns add $_ns"
		ip -n "$_ns" link set lo up
	done
	ip link add va netns "$MW_NS_A" type veth peer name vb netns "$MW_NS_B" ||
		fail "veth between $MW_NS_A and $MW_NS_B"
	ip -n "$MW_NS_A" addr add $MW_A/24 dev va
	ip -n "$MW_NS_B" addr add $MW_B/24 dev vb
	ip -n "$MW_NS_A" link set va up
	ip -n "$MW_NS_B" link set vb up
	# A device's port is ACTIVE once its interface is running, which the kernel says a
	# moment after both ends are up (linkwatch); UCX skips a port that is DOWN.
	_ticks=50
	until ip -n "$MW_NS_A" -o link show va | grep -q 'state UP' &&
		ip -n "$MW_NS_B" -o link show vb | grep -q 'state UP'; do
		[ $_ticks -gt 0 ] || fail "the veth pair is not running after 5 s"
		sleep 0.1
		_ticks=$((_ticks - 1))
	done
	# The agent by which mpirun and mpiexec start their daemons on the other host, as
	# they would through ssh: `agent [-opts] HOST COMMAND...` (COMMAND is shell text).
	MW_AGENT=$SYS_WORK/agent
	cat >"$MW_AGENT" <<EOF || fail "cannot write $MW_AGENT"
#!/bin/sh
while [ "\${1#-}" != "\$1" ]; do shift; done
case \$1 in a) ns=$MW_NS_A ;; b) ns=$MW_NS_B ;; *) echo "agent: no host \$1" >&2; exit 255 ;; esac
host=\$1
shift
exec ip netns exec \$ns unshare -uip --fork --kill-child --mount-proc \\
	sh -c 'hostname "\$0" && exec sh -c "\$*"' "\$host" "\$@"
EOF
	chmod +x "$MW_AGENT" || fail "chmod $MW_AGENT"
}

mw_hosts_down() {
	for _ns in $MW_NS_A $MW_NS_B; do
		ip netns del "$_ns" 2>/dev/null
	done
}

# on_host HOST COMMAND: runs the shell text COMMAND on host a or b (exec: call it in a
# subshell, `(on_host a ...) &`, to have its pid in $!)
on_host() {
	exec "$MW_AGENT" "$@"
}
