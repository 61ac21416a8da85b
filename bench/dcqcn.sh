#!/bin/sh
# bench/dcqcn.sh - RoCEv2 through a congested link, DCQCN off and on, in one run: two
# senders in network namespace A (10.10.0.1, 10.10.0.3), each `ib_write_bw -s 65536 -D
# SECONDS` to its own server on 10.10.0.2 in namespace B, all through one link of RATE
# (urnic-linkemu: a FIFO at that rate with a 1 MiB buffer, tail drop, ECN marking as RED
# with Kmin 5 KB, Kmax 200 KB, Pmax 1 %; this kernel has no qdisc that marks). Prints,
# per mode: the two senders' MB/s and their sum against the link, what the link marked
# and dropped, the mean and largest queue an arrival found, RC retransmissions, CNPs
# and rate cuts. A program that prints figures, not a test; needs root (namespaces).
#
# usage: bench/dcqcn.sh [-b urnic_build_dir] [-d seconds] [-r rate_bps] [-k kmin,kmax]
set -u
URNIC_TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$URNIC_TOP/build
DUR=4
RATE=2000000000
KMIN=5000
KMAX=200000
die() { echo "dcqcn.sh: $*" >&2; exit 1; }
while getopts b:d:r:k: o; do
	case $o in
	b) BUILD=$OPTARG ;;
	d) DUR=$OPTARG ;;
	r) RATE=$OPTARG ;;
	k) KMIN=${OPTARG%,*} KMAX=${OPTARG#*,} ;;
	*) die "usage: bench/dcqcn.sh [-b build] [-d seconds] [-r rate_bps] [-k kmin,kmax]" ;;
	esac
done
EMU=$BUILD/bin/urnic-linkemu
LIB=$BUILD/lib
[ -x "$EMU" ] || die "no $EMU: build urnic first (cmake --build $BUILD)"
command -v ib_write_bw >/dev/null || die "ib_write_bw not found (perftest)"
W=$(mktemp -d) || die mktemp
# shellcheck source=bench/linkemu.sh
. "$URNIC_TOP/bench/linkemu.sh"
emu_init dcqcn

# run MODE: one run, its figures on one line
run() {
	mode=$1
	emu_up "$W/emu.$mode" --rate "$RATE" --kmin "$KMIN" --kmax "$KMAX"
	ip -n "$NA" addr add 10.10.0.1/32 dev lemu
	ip -n "$NA" addr add 10.10.0.3/32 dev lemu
	ip -n "$NB" addr add 10.10.0.2/32 dev lemu
	ip -n "$NA" route add 10.10.0.0/24 dev lemu
	ip -n "$NB" route add 10.10.0.0/24 dev lemu
	for p in 0 1; do
		ip netns exec "$NB" env LD_LIBRARY_PATH="$LIB" URNIC_ADDR=10.10.0.2 \
			URNIC_PRINT_COUNTERS=1 URNIC_CONGESTION="$mode" \
			ib_write_bw -x 1 -F -s 65536 -D "$DUR" -p $((18515 + p)) \
			>"$W/srv$p.$mode" 2>&1 &
	done
	sleep 0.5
	pids=
	for p in 0 1; do
		ip netns exec "$NA" env LD_LIBRARY_PATH="$LIB" URNIC_ADDR=10.10.0.$((1 + 2 * p)) \
			URNIC_PRINT_COUNTERS=1 URNIC_CONGESTION="$mode" \
			ib_write_bw -x 1 -F -s 65536 -D "$DUR" -p $((18515 + p)) 10.10.0.2 \
			>"$W/cli$p.$mode" 2>&1 &
		pids="$pids $!"
	done
	# shellcheck disable=SC2086 # the pids
	wait $pids
	sleep 1
	emu_down
	bw0=$(awk '$1 == 65536 { print $4 }' "$W/cli0.$mode")
	bw1=$(awk '$1 == 65536 { print $4 }' "$W/cli1.$mode")
	# shellcheck disable=SC2046 # the emulator's "name value" pairs
	set -- $(tail -1 "$W/emu.$mode")
	printf '%-6s %8s %8s %8.0f %6.2f %9s %9s %8.0f %8.0f %9s %7s %7s\n' "$mode" \
		"${bw0:-?}" "${bw1:-?}" "$(echo "${bw0:-0} + ${bw1:-0}" | bc)" \
		"$(echo "(${bw0:-0} + ${bw1:-0}) * 8000000 / $RATE" | bc -l)" "$6" "$8" \
		"$(echo "${12} / 1000" | bc -l)" "$(echo "${10} / 1000" | bc -l)" \
		"$(ctr retransmit_pkts "$W"/cli?."$mode")" "$(ctr tx_cnp "$W"/srv?."$mode")" \
		"$(ctr cc_rate_cuts "$W"/cli?."$mode")"
}

echo "# bench/dcqcn.sh: two ib_write_bw -s 65536 -D $DUR through one $((RATE / 1000000)) Mb/s" \
	"link, 1 MiB buffer, RED ECN $KMIN-$KMAX B; $(git -C "$URNIC_TOP" rev-parse --short HEAD 2>/dev/null)"
printf '%-6s %8s %8s %8s %6s %9s %9s %8s %8s %9s %7s %7s\n' mode "MB/s 1" "MB/s 2" sum \
	"/link" marked dropped "q mean" "q max" retransm CNPs cuts
printf '%-6s %8s %8s %8s %6s %9s %9s %8s %8s %9s %7s %7s\n' "" "" "" "" "" "" "" KB KB "" "" ""
run none
run dcqcn
