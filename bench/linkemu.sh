# shellcheck shell=sh
# bench/linkemu.sh - what the benchmarks over urnic-linkemu share (bench/dcqcn.sh,
# bench/paths.sh): two network namespaces joined by the emulator's TUN devices, made and
# removed run by run, and the counters the runs print. Sourced; the caller sets EMU (the
# emulator), die() and a work directory W.
#
#   emu_init NAME   names the namespaces after NAME and the shell's pid, and removes
#                   them, the emulator, the processes in them and W on exit
#   emu_up LOG OPTS...
#                   adds the namespaces, starts the emulator with OPTS (its output in
#                   LOG) and brings its device lemu up in both with MTU 4200 (the
#                   devices' path MTU is 4096); addresses and routes are the caller's
#   emu_down        stops the emulator (its figures go to LOG) and removes the namespaces
#   ctr NAME FILE...
#                   the sum of urnic counter NAME over the files (URNIC_PRINT_COUNTERS)

emu_init() {
	NA=urnic-$1-a.$$
	NB=urnic-$1-b.$$
	EPID=
	trap emu_cleanup EXIT
	trap 'exit 130' INT TERM
}

emu_cleanup() {
	ip netns pids "$NA" 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns pids "$NB" 2>/dev/null | xargs -r kill 2>/dev/null
	[ -n "${EPID:-}" ] && kill "$EPID" 2>/dev/null
	ip netns del "$NA" 2>/dev/null
	ip netns del "$NB" 2>/dev/null
	rm -rf "$W"
}

emu_up() {
	_log=$1
	shift
	if ! ip netns add "$NA" || ! ip netns add "$NB"; then
		die "cannot add network namespaces (root?)"
	fi
	ip -n "$NA" link set lo up
	ip -n "$NB" link set lo up
	"$EMU" --ns-a "$NA" --ns-b "$NB" "$@" >"$_log" 2>&1 &
	EPID=$!
	for _ in $(seq 50); do grep -q ready "$_log" && break; sleep 0.1; done
	grep -q ready "$_log" || die "urnic-linkemu: $(cat "$_log")"
	ip -n "$NA" link set lemu mtu 4200 up
	ip -n "$NB" link set lemu mtu 4200 up
}

emu_down() {
	kill -INT "$EPID"
	wait "$EPID"
	EPID=
	ip netns del "$NA"
	ip netns del "$NB"
}

ctr() {
	_n=$1
	shift
	awk -v n="$_n" '$1 == n { s += $2 } END { print s + 0 }' "$@"
}
