#!/bin/sh
# bench/paths.sh - RoCEv2 over four parallel links, the topology issue 30 checks a
# multipath transport on: namespace A (10.20.0.1) and B (10.20.0.2) joined by
# urnic-linkemu with --links 4 (bench/linkemu.c: each link RATE with a 1 MiB buffer,
# RED ECN marking 64-256 KB, a propagation delay, ECMP by the packet's 5-tuple). One
# `ib_write_bw -s 65536 -D SECONDS -q QPS` per scenario:
#
#   clean, 1 QP | clean, QPS QPs | the same with DCQCN | 1 % loss on every link
#   | link 0 losing 20 % | link 0 ten times slower | link 0 down halfway
#
# and per scenario the MB/s, their share of the four links' aggregate, what each link
# carried (its share of packets), lost, dropped and marked, and the RC retransmissions.
# RoCEv2 pins a QP's packets to one UDP source port, so one QP uses one link, a loss
# costs go-back-N, and a link that goes down fails its QPs ("failed": perftest's
# completion error, retry exceeded). The same scenarios then run over the UET transport
# (`uet:` devices, UDP 4793: each QP sprays bursts of packets over entropy values, REPS
# moves off paths that lose or mark, loss costs only what was lost; NSCC on). A program
# that prints figures, not a test (-c, the short run CTest uses, checks that the topology
# passes traffic: more than one link used by QPS QPs, data verified end to end).
# Needs root (network namespaces).
#
# usage: bench/paths.sh [-b urnic_build_dir] [-d seconds] [-r rate_bps] [-q qps] [-c]
set -u
URNIC_TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$URNIC_TOP/build
DUR=3
RATE=1000000000
QPS=8
CHECK=
die() {
	echo "paths.sh: $*" >&2
	exit 1
}
while getopts b:d:r:q:c o; do
	case $o in
	b) BUILD=$OPTARG ;;
	d) DUR=$OPTARG ;;
	r) RATE=$OPTARG ;;
	q) QPS=$OPTARG ;;
	c) CHECK=1 DUR=1 ;;
	*) die "usage: bench/paths.sh [-b build] [-d seconds] [-r rate_bps] [-q qps] [-c]" ;;
	esac
done
case $DUR$RATE$QPS in *[!0-9]*) die "-d, -r and -q take whole numbers" ;; esac
EMU=$BUILD/bin/urnic-linkemu
LIB=$BUILD/lib
[ -x "$EMU" ] || die "no $EMU: build urnic first (cmake --build $BUILD)"
command -v ib_write_bw >/dev/null || die "ib_write_bw not found (perftest)"
if [ "$(id -u)" != 0 ]; then
	[ -n "$CHECK" ] && exit 77
	die "needs root (network namespaces)"
fi
W=$(mktemp -d) || die mktemp
PORT=$((20000 + $$ % 10000))
# shellcheck source=bench/linkemu.sh
. "$URNIC_TOP/bench/linkemu.sh"
emu_init paths

# run TAG LABEL QPS EMU_OPTS...: one scenario, its figures on one line (files: TAG)
run() {
	name=$1
	label=$2
	qps=$3
	shift 3
	emu_up "$W/emu.$name" --links 4 --rate "$RATE" --delay 20 --kmin 65536 --kmax 262144 \
		--pmax 10 "$@"
	ip -n "$NA" addr add 10.20.0.1/32 dev lemu
	ip -n "$NB" addr add 10.20.0.2/32 dev lemu
	ip -n "$NA" route add 10.20.0.0/24 dev lemu
	ip -n "$NB" route add 10.20.0.0/24 dev lemu
	ip netns exec "$NB" env LD_LIBRARY_PATH="$LIB" URNIC_ADDR="${KIND}10.20.0.2" \
		URNIC_CONGESTION="$CONG" URNIC_PRINT_COUNTERS=1 \
		ib_write_bw -x 1 -F -s 65536 -D "$DUR" -q "$qps" -p "$PORT" >"$W/srv.$name" 2>&1 &
	sleep 0.5
	# A QP whose link went down fails its work (retry exceeded), and perftest can wait
	# for ever on a peer whose QPs failed: the client has DUR + 20 s.
	timeout -s KILL $((DUR + 20)) ip netns exec "$NA" env LD_LIBRARY_PATH="$LIB" \
		URNIC_ADDR="${KIND}10.20.0.1" URNIC_CONGESTION="$CONG" URNIC_PRINT_COUNTERS=1 \
		ib_write_bw -x 1 -F -s 65536 -D "$DUR" -q "$qps" -p "$PORT" 10.20.0.2 \
		>"$W/cli.$name" 2>&1
	rc=$?
	sleep 0.5
	ip netns pids "$NB" 2>/dev/null | xargs -r kill 2>/dev/null
	emu_down
	bw=$(awk '$1 == 65536 { print $4 }' "$W/cli.$name")
	[ "$rc" = 0 ] && [ -n "$bw" ] || bw=failed
	shares=$(awk '$1 == "link" { p[$2] = $4; t += $4 }
		END { for (i = 0; i < 4; i++) printf "%5.2f ", t ? p[i] / t : 0 }' "$W/emu.$name")
	# shellcheck disable=SC2046 # the emulator's "name value" pairs
	set -- $(tail -1 "$W/emu.$name")
	if [ "$bw" = failed ]; then
		of=-
	else
		of=$(echo "$bw * 8000000 / ($RATE * 4)" | bc -l | xargs printf '%.2f')
	fi
	printf '%-18s %8s %5s  %s %7s %7s %7s %8s\n' "$label" "$bw" "$of" "$shares" "${14}" \
		"$8" "$6" "$(ctr "$RTX" "$W/cli.$name")"
	LAST_BW=$bw
}

echo "# bench/paths.sh: ib_write_bw -s 65536 -D $DUR over RoCEv2, four links of" \
	"$((RATE / 1000000)) Mb/s (ECMP by 5-tuple, 20 us, RED ECN 64-256 KB, 1 MiB);" \
	"$(git -C "$URNIC_TOP" rev-parse --short HEAD 2>/dev/null)"
printf '%-18s %8s %5s  %-23s %7s %7s %7s %8s\n' scenario MB/s "/4" \
	"packets on link 0..3" lost dropped marked retransm
CONG=none
KIND=
RTX=retransmit_pkts
if [ -n "$CHECK" ]; then
	run spread "clean, $QPS QPs" "$QPS"
	[ "$LAST_BW" != failed ] || die "the transfer over the links failed: $(tail -3 "$W/cli."*)"
	used=$(awk '$1 == "link" && $4 > 100 { n++ } END { print n + 0 }' "$W/emu."*)
	[ "$used" -ge 2 ] || die "$QPS QPs used $used of the 4 links: ECMP does not spread"
	echo "paths.sh: $QPS QPs over $used of 4 links, $LAST_BW MB/s"
	exit 0
fi
CONG=none
run one "clean, 1 QP" 1
run spread "clean, $QPS QPs" "$QPS"
CONG=dcqcn
run dcqcn "clean, DCQCN" "$QPS"
CONG=none
run loss "1% loss, all" "$QPS" --loss 10000
run lossy "link 0: 20% loss" "$QPS" --loss 0:200000
run slow "link 0: 1/10 rate" "$QPS" --rate 0:$((RATE / 10))
run down "link 0: down" "$QPS" --down 0:$((DUR * 500))
# The UET transport: RC QPs over PDS RUD and SES on UDP 4793, with NSCC (a bare
# `dcqcn` leaves uet devices to it).
KIND=uet:
RTX=uet_tx_resent
CONG=dcqcn
run uone "UET clean, 1 QP" 1
run uspread "UET clean, $QPS QPs" "$QPS"
run uloss "UET 1% loss, all" "$QPS" --loss 10000
run ulossy "UET link 0: 20%" "$QPS" --loss 0:200000
run uslow "UET link 0: 1/10" "$QPS" --rate 0:$((RATE / 10))
run udown "UET link 0: down" "$QPS" --down 0:$((DUR * 500))
