#!/bin/bash
# bench/iwarp.sh - urnic's iWARP bandwidth against a plain TCP stream between the same two
# addresses, in one run: each repetition measures the TCP ceiling (bench/tcp_ceiling.c:
# one connection, 256 KiB writes, TCP_NODELAY as an iWARP connection has), Debian's
# ib_write_bw -R -s 65536 over two iWARP devices (rdma_cm over MPA), the TCP ceiling again,
# and the same ib_write_bw over RoCEv2 for reference. The ratio is the iWARP figure over
# the mean of the two ceilings around it; medians of -r repetitions are printed, with the
# target of the iWARP issue (at least 0.7 of the TCP stream):
#
#   tcp_gbps 15.10  iwarp_write_bw_gbps 11.80  roce_write_bw_gbps 12.40  ratio 0.78  MET
#
# usage: bench/iwarp.sh [-r reps] [-b urnic_build_dir] [-n iterations] [-a a.b.c]
# Addresses: a.b.c.2 (server) and a.b.c.3 (client), 127.0.4 unless -a says; TCP ports
# 18790+ (perftest's rdma_cm service, and the ceiling's stream).
set -u

URNIC_TOP=$(cd "$(dirname "$0")/.." && pwd)
REPS=5
BUILD=$URNIC_TOP/build
N=5000
NET=127.0.4
while getopts "r:b:n:a:" o; do
	case $o in
	r) REPS=$OPTARG ;;
	b) BUILD=$OPTARG ;;
	n) N=$OPTARG ;;
	a) NET=$OPTARG ;;
	*)
		echo "usage: bench/iwarp.sh [-r reps] [-b build] [-n iterations] [-a a.b.c]" >&2
		exit 2
		;;
	esac
done
for v in "$REPS" "$N"; do
	case $v in '' | *[!0-9]* | 0)
		echo "bench/iwarp.sh: '$v' is not a positive number" >&2
		exit 2
		;;
	esac
done
LIB=$BUILD/lib
CEIL=$BUILD/bin/urnic-bench-tcp-ceiling
for f in "$LIB/libibverbs.so.1" "$LIB/librdmacm.so.1" "$CEIL"; do
	[ -e "$f" ] || {
		echo "bench/iwarp.sh: no $f (build first: cmake --build $BUILD)" >&2
		exit 1
	}
done
command -v ib_write_bw >/dev/null || {
	echo "bench/iwarp.sh: ib_write_bw not found (apt-get install perftest)" >&2
	exit 1
}
SRV=$NET.2 CLI=$NET.3 PORT=18790 TMO=60
OUT=$(mktemp -d "${TMPDIR:-/tmp}/urnic-iwarp-bench.XXXXXX")
trap 'rm -rf "$OUT"' EXIT

wait_listen() {
	local i
	for i in $(seq 100); do
		ss -ltn "sport = :$1" | grep -q LISTEN && return 0
		sleep 0.05
	done
	return 1
}
# pair KIND LOG: ib_write_bw -R between the two addresses on devices of KIND (iwarp:
# or nothing for RoCEv2); the Gb/s column of its result line, or nothing.
pair() {
	local kind=$1 log=$2 spid
	PORT=$((PORT + 1))
	LD_LIBRARY_PATH=$LIB URNIC_ADDR=$kind$SRV timeout $TMO \
		ib_write_bw -R -F -s 65536 -n "$N" --report_gbits -p $PORT >"$log.srv" 2>&1 &
	spid=$!
	if [ "$kind" = iwarp: ]; then wait_listen $PORT || sleep 0.5; else sleep 0.5; fi
	LD_LIBRARY_PATH=$LIB URNIC_ADDR=$kind$CLI timeout $TMO \
		ib_write_bw -R -F -s 65536 -n "$N" --report_gbits -p $PORT $SRV >"$log" 2>&1
	wait $spid
	awk '$1 == 65536 && NF >= 5 { v = $4 } END { if (v != "") print v }' "$log"
}
ceiling() {
	PORT=$((PORT + 1))
	"$CEIL" -a $CLI -b $SRV -p $PORT -t 2 | awk '$1 == "rx_gbps" { print $2 }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for r in $(seq "$REPS"); do
	before=$(ceiling)
	iw=$(pair iwarp: "$OUT/iwarp-$r.txt")
	after=$(ceiling)
	roce=$(pair "" "$OUT/roce-$r.txt")
	if [ -z "$iw" ] || [ -z "$before" ] || [ -z "$after" ]; then
		echo "bench/iwarp.sh: repetition $r failed; ib_write_bw over iWARP said:" >&2
		tail -5 "$OUT/iwarp-$r.txt" "$OUT/iwarp-$r.txt.srv" >&2
		exit 1
	fi
	tcp=$(awk -v a="$before" -v b="$after" 'BEGIN { printf "%.2f", (a + b) / 2 }')
	echo "$tcp $iw ${roce:-0} $(awk -v i="$iw" -v t="$tcp" 'BEGIN { printf "%.3f", i / t }')" \
		>>"$OUT/samples"
	printf 'rep %d: tcp_gbps %s  iwarp_write_bw_gbps %s  roce_write_bw_gbps %s\n' \
		"$r" "$tcp" "$iw" "${roce:--}"
done
tcp=$(cut -d' ' -f1 "$OUT/samples" | median)
iw=$(cut -d' ' -f2 "$OUT/samples" | median)
roce=$(cut -d' ' -f3 "$OUT/samples" | median)
ratio=$(cut -d' ' -f4 "$OUT/samples" | median)
verdict=$(awk -v r="$ratio" 'BEGIN { print (r >= 0.7) ? "MET" : "NOT MET" }')
printf 'median of %d: tcp_gbps %s  iwarp_write_bw_gbps %s  roce_write_bw_gbps %s  ratio %s  %s (>= 0.7)\n' \
	"$REPS" "$tcp" "$iw" "$roce" "$ratio" "$verdict"
