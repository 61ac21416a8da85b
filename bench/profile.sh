#!/bin/bash
# bench/profile.sh - where urnic's time goes in one perftest run: perf stat (CPU time,
# context switches, system calls by name) and perf record (cost categories, top
# symbols) of both processes, per message.
#
# usage: bench/profile.sh [-b urnic_build_dir] [-o outdir] [-- perftest args]
#   default test: ib_write_bw -s 65536 -n 50000 --report_gbits; e.g. -- -s 8 -n 200000.
#   The tool is ib_write_bw unless PERFTEST=ib_send_bw (etc.) is set.
# Needs perf (Debian package linux-perf; installed when missing) and root or
# kernel.perf_event_paranoid <= 1 for the kernel symbols and system-call tracepoints.
# urnic runs with URNIC_LOCAL=0 (unless set otherwise): the UDP path, not shared memory lanes.
set -u
export URNIC_LOCAL=${URNIC_LOCAL:-0}
URNIC_TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$URNIC_TOP/scripts/deps.sh"
BUILD=$URNIC_TOP/build
OUT=$URNIC_TOP/build/bench/profile
while getopts "b:o:h" opt; do
	case $opt in
	b) BUILD=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*)
		sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'
		exit 2
		;;
	esac
done
shift $((OPTIND - 1))
ARGS=("$@")
[ ${#ARGS[@]} = 0 ] && ARGS=(-s 65536 -n 50000 --report_gbits)
TOOL=${PERFTEST:-ib_write_bw}
URNIC_PACKAGES="$URNIC_PACKAGES linux-perf"
urnic_install_deps || exit 1
LIB=$(cd "$BUILD/lib" && pwd) || exit 1
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
PORT=18690
SRV=127.0.3.2
CLI=127.0.3.3
EV=task-clock,context-switches,raw_syscalls:sys_enter
for s in recvmmsg sendmmsg ppoll futex sched_yield read write; do
	EV=$EV,syscalls:sys_enter_$s
done

wait_listen() {
	for ((i = 0; i < 200; i++)); do
		[ -n "$(ss -Hltn "sport = :$1")" ] && return 0
		sleep 0.05
	done
	return 1
}

# run MODE: a server and a client under perf MODE (stat or record).
run() {
	local mode=$1 spid
	PORT=$((PORT + 1))
	if [ "$mode" = stat ]; then
		set -- perf stat -e "$EV" -o
	else
		set -- perf record -F 4999 -g -q -o
	fi
	LD_LIBRARY_PATH=$LIB URNIC_ADDR=$SRV "$@" "$OUT/srv.$mode" -- \
		$TOOL -x 1 -F -p $PORT "${ARGS[@]}" >"$OUT/srv.$mode.txt" 2>&1 &
	spid=$!
	wait_listen $PORT || return 1
	LD_LIBRARY_PATH=$LIB URNIC_ADDR=$CLI "$@" "$OUT/cli.$mode" -- \
		$TOOL -x 1 -F -p $PORT "${ARGS[@]}" $SRV >"$OUT/cli.$mode.txt" 2>&1
	wait $spid
}

run stat || exit 1
run record || exit 1

MSGS=$(awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 5 { n = $2 } END { print n }' "$OUT/cli.stat.txt")
echo "$TOOL ${ARGS[*]} over urnic ($LIB): $MSGS messages"
grep -A1 '#bytes' "$OUT/cli.stat.txt" | tail -1
for side in cli srv; do
	[ $side = cli ] && echo "== client (requester, $CLI)" || echo "== server (responder, $SRV)"
	awk -v n="$MSGS" '
		/task-clock/ { gsub(/,/, "", $1); printf "  CPU %.0f ms = %.2f us per message\n", $1, $1 * 1000 / n }
		/context-switches|sys_enter/ { gsub(/,/, "", $1); name = $2; sub(/.*sys_enter_?/, "", name)
			if (name == "") name = "all system calls"
			printf "  %-22s %9d = %6.3f per message\n", name, $1, $1 / n }' "$OUT/$side.stat"
	echo "  perf record: share of this process's samples"
	perf report -i "$OUT/$side.record" --no-children -g none --sort dso,sym --stdio \
		--percent-limit 0 2>/dev/null | grep -v '^#' | awk '
	/%/ {
		p = $1; sub(/%/, "", p); dso = $2; line = $0
		if (line ~ /crc32|icrc|copy_vpclmul|copy_pclmul|copy_then_crc/) c = "ICRC (ISA-L crc32, urnic_icrc; the send side: copy and CRC in one pass)"
		else if (line ~ /_copy_to_iter|_copy_from_iter|copy_user|__skb_datagram_iter|skb_copy/) c = "kernel copies user<->skb"
		else if (line ~ /memmove|memcpy/) c = "user memcpy (receive buffer -> memory region)"
		else if (line ~ /finish_task_switch|try_to_wake_up|_raw_spin_unlock_irqrestore|schedule|futex|__lll_lock|ttwu|irqentry_exit|sched_yield/) c = "scheduler: wakeups, switches, futex"
		else if (dso ~ /vdso/) c = "vDSO clock reads (perftest calibrates its clock for ~0.2 s)"
		else if (line ~ /ib_[a-z]+_(bw|lat)/) c = "perftest itself"
		else if (dso ~ /libibverbs/) c = "urnic engine and verbs"
		else if (dso ~ /kernel/) c = "kernel: syscalls, UDP/IP, other"
		else c = "other user code (libc, ...)"
		s[c] += p
	}
	END { for (c in s) printf "    %5.1f%%  %s\n", s[c], c | "sort -rn" }'
	echo "  top symbols:"
	perf report -i "$OUT/$side.record" --no-children -g none --sort dso,sym --stdio \
		--percent-limit 2 2>/dev/null | grep '%' | awk '{ printf "    %s\n", $0 }' | cut -c1-100
done
