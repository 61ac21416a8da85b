#!/bin/bash
# bench/run.sh - urnic against this machine's ceilings and against its peers, in one run.
#
# Measures, each -r times (default 5, interleaved: every repetition runs the whole set,
# so slow phases of a shared machine spread over all figures) and keeps the median;
# the ceilings that two targets compare with are measured right before and right after
# the urnic figure, and the ratio is taken to their mean:
#   ceilings  raw UDP on loopback with GSO/GRO (4 KiB segments in 60 KiB sends), raw
#             UDP 8-byte ping-pong RTT/2 (blocking recv, two processes pinned to one
#             CPU; on two CPUs for reference), memcpy of 64 MiB buffers, and
#             small-datagram rates (bench/udp_ceiling.c, udp_pingpong.c, memcpy_bw.c);
#   peers     UCX ucx_perftest ucp_put_bw / ucp_put_lat over tcp on lo, libfabric
#             fi_pingpong -p tcp -e rdm (ping-pong only: no streaming mode);
#   urnic     Debian's perftest over build/lib: ib_write_bw/ib_send_bw/ib_read_bw
#             64 KiB, ib_write_lat/ib_send_lat/ib_read_lat 8 B, 8-byte message rate
#             (-q 4 -l 16, and 1 QP without post lists), bandwidth and latency from 8 B to 1 MiB, 1/4/16/64 QPs,
#             and the CPU an idle device with a connected QP uses (bench/idle_cpu.c).
# Prints every urnic figure as a ratio to its ceiling and to the best peer, and the
# targets of the "Fast" issue as MET / NOT MET. Writes to the output directory
# (default build/bench): report.txt (what is printed), results.tsv, sweep.tsv,
# targets.tsv, summary.json, raw/ (every tool's output); and the plots
# docs/bench-bandwidth.png and docs/bench-latency.png.
#
# Installs its Debian packages when missing (as root, or through sudo), builds urnic
# into build/ and the helpers into the output directory. About 6 minutes on 2 vCPUs.
#
# usage: bench/run.sh [-r reps] [-o outdir] [-b urnic_build_dir] [-B] [-p plotdir] [-q]
#   -r N    repetitions of every measurement (default 5; the median is kept)
#   -o DIR  output directory (default build/bench)
#   -b DIR  the urnic build whose lib/libibverbs.so.1 is measured (default build)
#   -B      do not (re)build urnic: use -b as it is
#   -p DIR  where the PNG plots go (default docs)
#   -q      quick: one repetition, fewer iterations (a smoke run, not for figures)
#
# urnic runs with URNIC_LOCAL=0 (unless set otherwise): the ceilings are the UDP path's, and
# so are the targets; between processes of one host urnic's shared memory lanes take its
# place by default (bench/mpi.sh measures both).
#
# Addresses: urnic server 127.0.3.2, client 127.0.3.3, idle devices 127.0.3.20-22, raw
# UDP 127.0.3.10/11 (127.0.3.x, away from the 127.0.0.x the tests use); TCP ports
# 18700+ (perftest), 13700+ (UCX), 47700+ (fi_pingpong).
set -u
export URNIC_LOCAL=${URNIC_LOCAL:-0}

URNIC_TOP=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$URNIC_TOP/bench
# shellcheck source=../scripts/deps.sh
. "$URNIC_TOP/scripts/deps.sh"

REPS=5
OUT=$URNIC_TOP/build/bench
BUILD=$URNIC_TOP/build
DO_BUILD=1
PLOTS=$URNIC_TOP/docs
QUICK=0
while getopts "r:o:b:Bp:qh" opt; do
	case $opt in
	r) REPS=$OPTARG ;;
	o) OUT=$OPTARG ;;
	b) BUILD=$OPTARG ;;
	B) DO_BUILD=0 ;;
	p) PLOTS=$OPTARG ;;
	q) QUICK=1 REPS=1 ;;
	h | *)
		sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'
		[ "$opt" = h ] && exit 0
		exit 2
		;;
	esac
done

SRV=127.0.3.2
CLI=127.0.3.3
IDLE_ADDRS="127.0.3.20 127.0.3.21 127.0.3.22"
UDP_A=127.0.3.10
UDP_B=127.0.3.11
TMO=60                # seconds any one tool may run (a hang costs this much)
SIZES_PEER="8 32 128 512 2048 8192 32768 65536 131072 524288 1048576"
PT_PORT=18700
UCX_PORT=13700
FI_PORT=47700

# Iterations (the quick mode only checks that everything runs).
if [ "$QUICK" = 1 ]; then
	N_BW=2000 N_LAT=1000 N_SWEEP_BW=200 N_SWEEP_LAT=100 N_UCX_BW=2000 N_UCX_LAT=2000
	N_FI=2000 N_FI_SWEEP=50 IDLE_S=2 UDP_S=0.3
else
	N_BW=20000 N_LAT=5000 N_SWEEP_BW=1000 N_SWEEP_LAT=200 N_UCX_BW=10000 N_UCX_LAT=20000
	N_FI=10000 N_FI_SWEEP=200 IDLE_S=5 UDP_S=1
fi

say() { printf '%s\n' "$*" >&2; }
die() {
	say "bench: $*"
	exit 1
}

# ---- packages, urnic, helpers ----

# scripts/deps.sh's installer, with the benchmark's packages added to urnic's.
URNIC_PACKAGES="$URNIC_PACKAGES ucx-utils libfabric-bin gnuplot-nox"
urnic_install_deps || die "could not install the Debian packages"
for t in ib_write_bw ucx_perftest fi_pingpong gnuplot ss cc; do
	command -v $t >/dev/null || die "$t is missing"
done

mkdir -p "$OUT/raw" "$OUT/bin" "$PLOTS" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)
RAW=$OUT/raw
rm -f "$RAW"/* "$OUT/samples.tsv" "$OUT/sweep_samples.tsv"

if [ "$DO_BUILD" = 1 ]; then
	say "bench: building urnic in $BUILD"
	urnic_build "$BUILD" >"$OUT/build.log" 2>&1 || die "urnic build failed: see $OUT/build.log"
fi
LIB=$(cd "$BUILD/lib" 2>/dev/null && pwd) || die "no $BUILD/lib"
[ -e "$LIB/libibverbs.so.1" ] || die "no $LIB/libibverbs.so.1"

# The helpers: bench/CMakeLists.txt builds the same files inside the project; here they
# are compiled directly so the benchmark runs without it.
CFLAGS_BENCH="-O2 -g -std=gnu11 -Wall -Wextra"
for h in udp_ceiling memcpy_bw; do
	cc $CFLAGS_BENCH -o "$OUT/bin/$h" "$BENCH/$h.c" -lpthread || die "cannot build $h"
done
cc $CFLAGS_BENCH -o "$OUT/bin/udp_pingpong" "$BENCH/udp_pingpong.c" -luring ||
	die "cannot build udp_pingpong"
cc $CFLAGS_BENCH -o "$OUT/bin/roce_shape" "$BENCH/roce_shape.c" -lpthread -lisal ||
	die "cannot build roce_shape"
cc $CFLAGS_BENCH -o "$OUT/bin/idle_cpu" "$BENCH/idle_cpu.c" -libverbs || die "cannot build idle_cpu"

# ---- process handling: only the processes started here are ever stopped ----

BG_PIDS=""
cleanup() {
	for p in $BG_PIDS; do
		kill "$p" 2>/dev/null
	done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Waits until something listens on TCP port $1 (at most 10 s).
wait_listen() {
	local i
	for ((i = 0; i < 200; i++)); do
		[ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ] && return 0
		sleep 0.05
	done
	return 1
}

# Stops server pid $1 if it has not ended on its own within 5 s, and reaps it.
reap() {
	local i
	for ((i = 0; i < 100; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# Where the figures come from: the CPU's model, the features urnic's CRC paths depend on
# (src/wire/crc_copy.c), and the path the library chose there. Figures of different
# CPUs are not one series.
cpu_model() {
	awk -F ': ' '/^model name/ { print $2; exit }' /proc/cpuinfo
}
cpu_features() {
	local f out=""
	for f in avx2 avx512f vpclmulqdq; do
		if grep -qw "$f" /proc/cpuinfo; then out="$out $f"; else out="$out no-$f"; fi
	done
	echo "${out# }"
}
crc_path() {
	"$BUILD/bin/urnic-bench-crc-copy" -c 2>/dev/null || echo unknown
}

# urnic_pair LOG TOOL ARGS...: a perftest server on $SRV and its client on $CLI, over
# urnic; the client's output goes to LOG (the server's to LOG.srv).
urnic_pair() {
	local log=$1 tool=$2 spid rc
	shift 2
	PT_PORT=$((PT_PORT + 1))
	LD_LIBRARY_PATH=$LIB URNIC_ADDR=$SRV timeout $TMO \
		"$tool" -x 1 -F -p $PT_PORT "$@" >"$log.srv" 2>&1 &
	spid=$!
	if ! wait_listen $PT_PORT; then
		reap $spid
		return 1
	fi
	LD_LIBRARY_PATH=$LIB URNIC_ADDR=$CLI timeout $TMO \
		"$tool" -x 1 -F -p $PT_PORT "$@" $SRV >"$log" 2>&1
	rc=$?
	reap $spid
	return $rc
}

# ucx_pair LOG ARGS...: ucx_perftest server and client over tcp on lo.
ucx_pair() {
	local log=$1 spid rc
	shift
	UCX_PORT=$((UCX_PORT + 1))
	UCX_TLS=tcp UCX_NET_DEVICES=lo timeout $TMO ucx_perftest -p $UCX_PORT >"$log.srv" 2>&1 &
	spid=$!
	if ! wait_listen $UCX_PORT; then
		reap $spid
		return 1
	fi
	UCX_TLS=tcp UCX_NET_DEVICES=lo timeout $TMO ucx_perftest $SRV -p $UCX_PORT -f "$@" \
		>"$log" 2>&1
	rc=$?
	reap $spid
	return $rc
}

# fi_pair LOG ARGS...: fi_pingpong server and client, tcp provider, RDM endpoints.
fi_pair() {
	local log=$1 spid rc
	shift
	FI_PORT=$((FI_PORT + 1))
	timeout $TMO fi_pingpong -p tcp -e rdm -B $FI_PORT "$@" >"$log.srv" 2>&1 &
	spid=$!
	if ! wait_listen $FI_PORT; then
		reap $spid
		return 1
	fi
	timeout $TMO fi_pingpong -p tcp -e rdm -P $FI_PORT "$@" $SRV >"$log" 2>&1
	rc=$?
	reap $spid
	return $rc
}

# ---- parsing (each prints one number, or nothing) ----

# A perftest bandwidth report line: bytes iterations peak average msgrate.
pt_bw() { awk -v c="$2" '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 5 && NF <= 6 { v = $c } END { if (v != "") print v }' "$1"; }
# A perftest latency line: bytes iters t_min t_max t_typical t_avg t_stdev 99% 99.9%.
pt_lat() { awk -v c="$2" '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 9 { v = $c } END { if (v != "") print v }' "$1"; }
# ucx_perftest -f: iterations p50 average overall bw_avg bw_overall mr_avg mr_overall.
ucx_col() { awk -v c="$2" '$1 ~ /^[0-9]+$/ && NF == 8 { v = $c } END { if (v != "") print v }' "$1"; }
# fi_pingpong: bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec, sizes as 4k, 1m.
fi_rows() {
	awk '$1 ~ /^[0-9.]+[km]?$/ && NF == 8 {
		s = $1; m = 1
		if (s ~ /k$/) { m = 1024; sub(/k$/, "", s) } else if (s ~ /m$/) { m = 1048576; sub(/m$/, "", s) }
		printf "%d %s %s\n", s * m + 0.5, $6, $7 }' "$1"
}
kv() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }

# sample KEY VALUE: one repetition's figure (nothing recorded if VALUE is empty).
sample() {
	[ -n "${2:-}" ] && printf '%s\t%s\t%s\n' "$1" "$REP" "$2" >>"$OUT/samples.tsv"
	return 0
}
# sweep SERIES SIZE VALUE
sweep() {
	[ -n "${3:-}" ] && printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$REP" "$3" >>"$OUT/sweep_samples.tsv"
	return 0
}
# MB/s (2^20, UCX) and MB/s (10^6, fabtests) to Gb/s.
mib_to_gb() { [ -n "${1:-}" ] && awk -v v="$1" 'BEGIN { printf "%.3f", v * 1048576 * 8 / 1e9 }'; }
# mean2 A B: their mean; the one given when the other is empty.
mean2() { awk -v a="${1:-}" -v b="${2:-}" 'BEGIN { if (a == "") print b; else if (b == "") print a; else printf "%.4f", (a + b) / 2 }'; }
# least A B: the smaller of two figures, either of which may be empty.
least() { awk -v a="${1:-}" -v b="${2:-}" 'BEGIN { if (a == "") print b; else if (b == "" || a + 0 <= b + 0) print a; else print b }'; }
mb_to_gb() { [ -n "${1:-}" ] && awk -v v="$1" 'BEGIN { printf "%.3f", v * 8 / 1000 }'; }

# ---- the measurements ----

T_START=$(date +%s)
# The commit of the sources the measured build was configured from.
SRC=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)
COMMIT=$(git -C "${SRC:-$URNIC_TOP}" describe --always --dirty 2>/dev/null || echo unknown)
say "bench: urnic from $LIB ($COMMIT), $REPS repetition(s), output in $OUT"

# The idle device: one process per repetition, all at once (each measures only its own
# CPU time), in the background while the ceilings and peers run.
idle_start() {
	local i=0 a
	IDLE_PIDS=""
	for a in $IDLE_ADDRS; do
		i=$((i + 1))
		[ $i -gt "$REPS" ] && break
		LD_LIBRARY_PATH=$LIB URNIC_ADDR=$a timeout $TMO "$OUT/bin/idle_cpu" -t $IDLE_S \
			>"$RAW/idle-$i.txt" 2>&1 &
		IDLE_PIDS="$IDLE_PIDS $!"
		BG_PIDS="$BG_PIDS $!"
	done
}
idle_collect() {
	local i REP
	for p in $IDLE_PIDS; do wait "$p"; done
	for ((i = 1; i <= REPS && i <= 3; i++)); do
		REP=$i
		sample idle_sleep_cpu_pct "$(kv "$RAW/idle-$i.txt" idle_sleep_cpu_pct)"
		sample idle_armed_cpu_pct "$(kv "$RAW/idle-$i.txt" idle_armed_cpu_pct)"
	done
}

# Each group measures its references right before the urnic figures they are compared
# with, so that a busy phase of the shared machine hits both sides of a ratio alike.
group_bandwidth() {
	local f=$RAW/r$REP q before after
	say "bench: [$REP/$REPS] bandwidth: raw UDP GSO/GRO, UCX put_bw, fi_pingpong, perftest 64 KiB"
	sample loadavg_1min "$(cut -d ' ' -f 1 /proc/loadavg)"
	"$OUT/bin/roce_shape" -a $UDP_A -t $UDP_S >"$f-roce-shape.txt" 2>&1
	sample ref_roce_shape_gbps "$(kv "$f-roce-shape.txt" rx_gbps)"
	ucx_pair "$f-ucx-put-bw-65536.txt" -t ucp_put_bw -s 65536 -n $N_UCX_BW
	sample ucx_put_bw_gbps "$(mib_to_gb "$(ucx_col "$f-ucx-put-bw-65536.txt" 6)")"
	fi_pair "$f-fi-pp-65536.txt" -S 65536 -I $((N_FI / 5))
	sample fi_pp_bw_gbps "$(mb_to_gb "$(fi_rows "$f-fi-pp-65536.txt" | awk '{ print $2 }')")"
	# The ceiling right before and right after ib_write_bw: the pair's denominator is
	# their mean, so that a phase of the shared host that starts or ends between them
	# weighs on both sides of the ratio.
	"$OUT/bin/udp_ceiling" -a $UDP_A -t $UDP_S >"$f-udp-gso.txt" 2>&1
	before=$(kv "$f-udp-gso.txt" rx_gbps)
	sample ceil_udp_gso_gbps "$before"
	urnic_pair "$f-ib_write_bw-65536.txt" ib_write_bw -s 65536 -n $N_BW --report_gbits
	sample urnic_write_bw_gbps "$(pt_bw "$f-ib_write_bw-65536.txt" 4)"
	sample urnic_qp1_gbps "$(pt_bw "$f-ib_write_bw-65536.txt" 4)"
	"$OUT/bin/udp_ceiling" -a $UDP_A -t $UDP_S >"$f-udp-gso-after.txt" 2>&1
	after=$(kv "$f-udp-gso-after.txt" rx_gbps)
	sample ceil_udp_gso_after_gbps "$after"
	sample ceil_udp_gso_pair_gbps "$(mean2 "$before" "$after")"
	urnic_pair "$f-ib_send_bw-65536.txt" ib_send_bw -s 65536 -n $N_BW --report_gbits
	sample urnic_send_bw_gbps "$(pt_bw "$f-ib_send_bw-65536.txt" 4)"
	urnic_pair "$f-ib_read_bw-65536.txt" ib_read_bw -s 65536 -n $N_BW --report_gbits
	sample urnic_read_bw_gbps "$(pt_bw "$f-ib_read_bw-65536.txt" 4)"
	for q in 4 16 64; do
		# 64 QPs against one QP right before and right after them (the pair's mean),
		# as the ceiling around ib_write_bw above: the 1-QP figure above is ~20 s
		# away, and a phase of the shared host between the two decided the ratio.
		if [ $q = 64 ]; then
			urnic_pair "$f-ib_write_bw-65536-q1-before.txt" ib_write_bw -s 65536 \
				-n $N_BW --report_gbits
			before=$(pt_bw "$f-ib_write_bw-65536-q1-before.txt" 4)
		fi
		# The same bytes in all: -n is per QP.
		urnic_pair "$f-ib_write_bw-65536-q$q.txt" ib_write_bw -s 65536 -q $q \
			-n $((N_BW / q)) --report_gbits
		sample urnic_qp${q}_gbps "$(pt_bw "$f-ib_write_bw-65536-q$q.txt" 4)"
	done
	urnic_pair "$f-ib_write_bw-65536-q1-after.txt" ib_write_bw -s 65536 -n $N_BW --report_gbits
	after=$(pt_bw "$f-ib_write_bw-65536-q1-after.txt" 4)
	sample urnic_qp1_pair_gbps "$(mean2 "$before" "$after")"
	"$OUT/bin/memcpy_bw" -m 64 >"$f-memcpy.txt" 2>&1
	sample ceil_memcpy_GBps "$(kv "$f-memcpy.txt" memcpy_GBps)"
}

group_msgrate() {
	local f=$RAW/r$REP s
	say "bench: [$REP/$REPS] message rate: raw UDP 40 B datagrams, UCX put_bw 8 B, perftest 8 B"
	"$OUT/bin/udp_ceiling" -m -a $UDP_A -t $UDP_S >"$f-udp-gso-small.txt" 2>&1
	sample ceil_udp_gso_small_mpps "$(kv "$f-udp-gso-small.txt" rx_mpps)"
	"$OUT/bin/udp_ceiling" -m -g 40 -a $UDP_A -t $UDP_S >"$f-udp-small.txt" 2>&1
	sample ceil_udp_small_mpps "$(kv "$f-udp-small.txt" rx_mpps)"
	ucx_pair "$f-ucx-put-bw-8.txt" -t ucp_put_bw -s 8 -n $((N_UCX_BW * 5))
	s=$(ucx_col "$f-ucx-put-bw-8.txt" 8)
	[ -n "$s" ] && sample ucx_put_msgrate_mpps "$(awk -v v="$s" 'BEGIN { printf "%.4f", v / 1e6 }')"
	urnic_pair "$f-ib_write_bw-8-q4-l16.txt" ib_write_bw -s 8 -q 4 -l 16 -n $((N_BW * 2))
	sample urnic_msgrate_mpps "$(pt_bw "$f-ib_write_bw-8-q4-l16.txt" 5)"
	# perftest's default: one QP, one request per post (the posts batched by urnic).
	urnic_pair "$f-ib_write_bw-8.txt" ib_write_bw -s 8 -n $((N_BW * 2))
	sample urnic_msgrate_1qp_mpps "$(pt_bw "$f-ib_write_bw-8.txt" 5)"
}

group_latency() {
	local f=$RAW/r$REP before after
	say "bench: [$REP/$REPS] latency: raw UDP ping-pong, UCX put_lat, fi_pingpong, perftest 8 B"
	ucx_pair "$f-ucx-put-lat-8.txt" -t ucp_put_lat -s 8 -n $N_UCX_LAT
	sample ucx_put_lat_us "$(ucx_col "$f-ucx-put-lat-8.txt" 2)"
	sample ucx_put_lat_avg_us "$(ucx_col "$f-ucx-put-lat-8.txt" 3)"
	fi_pair "$f-fi-pp-8.txt" -S 8 -I $N_FI
	sample fi_pp_lat_us "$(fi_rows "$f-fi-pp-8.txt" | awk '{ print $3 }')"
	# Blocking, both processes on one CPU (a wakeup is a context switch) and on two (a
	# wakeup also wakes a halted vCPU: ~30 us on this VM); polling (non-blocking recv in
	# a loop, as UCX and a polling RDMA stack wait) on two CPUs, where nothing sleeps.
	# The ceiling is the better of one-CPU blocking and two-CPU polling, per repetition.
	"$OUT/bin/udp_pingpong" -a $UDP_A -b $UDP_B -s 8 -c 0,0 >"$f-udp-pp.txt" 2>&1
	sample ceil_udp_pp_block_us "$(kv "$f-udp-pp.txt" rtt2_median_us)"
	sample ceil_udp_pp_block_mean_us "$(kv "$f-udp-pp.txt" rtt2_mean_us)"
	if [ "$(nproc)" -gt 1 ]; then
		"$OUT/bin/udp_pingpong" -a $UDP_A -b $UDP_B -s 8 -c 0,1 >"$f-udp-pp-xcpu.txt" 2>&1
		sample ceil_udp_pp_xcpu_us "$(kv "$f-udp-pp-xcpu.txt" rtt2_median_us)"
		# The shape of an RC one-way trip (request + held ACK: a GSO pair, GRO in).
		"$OUT/bin/udp_pingpong" -a $UDP_A -b $UDP_B -s 8 -c 0,1 -P -G >"$f-udp-pp-gso.txt" 2>&1
		sample ceil_udp_pp_gso_us "$(kv "$f-udp-pp-gso.txt" rtt2_median_us)"
		# Polling a packet ring instead of recv (root): what URNIC_RING=1 rests on.
		"$OUT/bin/udp_pingpong" -a $UDP_A -b $UDP_B -s 8 -c 0,1 -R >"$f-udp-pp-ring.txt" 2>&1 &&
			sample ceil_udp_pp_ring_us "$(kv "$f-udp-pp-ring.txt" rtt2_median_us)"
		"$OUT/bin/udp_pingpong" -a $UDP_A -b $UDP_B -s 8 -c 0,1 -P >"$f-udp-pp-poll.txt" 2>&1
		sample ceil_udp_pp_poll_us "$(kv "$f-udp-pp-poll.txt" rtt2_median_us)"
		sample ceil_udp_pp_poll_mean_us "$(kv "$f-udp-pp-poll.txt" rtt2_mean_us)"
	fi
	before=$(least "$(kv "$f-udp-pp.txt" rtt2_median_us)" \
		"$(kv "$f-udp-pp-poll.txt" rtt2_median_us 2>/dev/null)")
	sample ceil_udp_pp_us "$before"
	sample ceil_udp_pp_mean_us "$(least "$(kv "$f-udp-pp.txt" rtt2_mean_us)" \
		"$(kv "$f-udp-pp-poll.txt" rtt2_mean_us 2>/dev/null)")"
	# urnic right after the ceiling and the ceiling again right after urnic: the latency
	# target's denominator is the mean of the two (as for bandwidth above).
	URNIC_RING=1 urnic_pair "$f-ib_write_lat-8-ring.txt" ib_write_lat -s 8 -n $N_LAT &&
		! grep -q "no packet ring" "$f-ib_write_lat-8-ring.txt" &&
		sample urnic_write_lat_ring_us "$(pt_lat "$f-ib_write_lat-8-ring.txt" 5)"
	urnic_pair "$f-ib_write_lat-8.txt" ib_write_lat -s 8 -n $N_LAT
	sample urnic_write_lat_us "$(pt_lat "$f-ib_write_lat-8.txt" 5)"
	sample urnic_write_lat_avg_us "$(pt_lat "$f-ib_write_lat-8.txt" 6)"
	"$OUT/bin/udp_pingpong" -a $UDP_A -b $UDP_B -s 8 -c 0,0 >"$f-udp-pp-after.txt" 2>&1
	[ "$(nproc)" -gt 1 ] &&
		"$OUT/bin/udp_pingpong" -a $UDP_A -b $UDP_B -s 8 -c 0,1 -P >"$f-udp-pp-poll-after.txt" 2>&1
	after=$(least "$(kv "$f-udp-pp-after.txt" rtt2_median_us)" \
		"$(kv "$f-udp-pp-poll-after.txt" rtt2_median_us 2>/dev/null)")
	sample ceil_udp_pp_after_us "$after"
	sample ceil_udp_pp_pair_us "$(mean2 "$before" "$after")"
	urnic_pair "$f-ib_send_lat-8.txt" ib_send_lat -s 8 -n $N_LAT
	sample urnic_send_lat_us "$(pt_lat "$f-ib_send_lat-8.txt" 5)"
	urnic_pair "$f-ib_read_lat-8.txt" ib_read_lat -s 8 -n $N_LAT
	sample urnic_read_lat_us "$(pt_lat "$f-ib_read_lat-8.txt" 5)"
}

group_sizes() {
	local f=$RAW/r$REP s n
	say "bench: [$REP/$REPS] sizes 8 B - 1 MiB: UCX, fi_pingpong, ib_write_bw -a, ib_write_lat -a"
	for s in $SIZES_PEER; do
		# About 64 MiB per bandwidth point (at least 200 messages, at most 50000);
		# about 8 MiB per latency point (100 to 5000 round trips).
		n=$((67108864 / s))
		[ $n -gt 50000 ] && n=50000
		[ $n -lt 200 ] && n=200
		ucx_pair "$f-ucx-sweep-bw-$s.txt" -t ucp_put_bw -s $s -n $n
		sweep ucx_put_bw_gbps $s "$(mib_to_gb "$(ucx_col "$f-ucx-sweep-bw-$s.txt" 6)")"
		n=$((8388608 / s))
		[ $n -gt 5000 ] && n=5000
		[ $n -lt 100 ] && n=100
		[ "$QUICK" = 1 ] && n=100
		ucx_pair "$f-ucx-sweep-lat-$s.txt" -t ucp_put_lat -s $s -n $n
		sweep ucx_put_lat_us $s "$(ucx_col "$f-ucx-sweep-lat-$s.txt" 2)"
	done
	fi_pair "$f-fi-pp-all.txt" -S all -I $N_FI_SWEEP
	fi_rows "$f-fi-pp-all.txt" >"$f-fi-pp-all.rows"
	while read -r s mbps us; do
		[ "$s" -ge 8 ] && [ "$s" -le 1048576 ] || continue
		sweep fi_pp_bw_gbps "$s" "$(mb_to_gb "$mbps")"
		sweep fi_pp_lat_us "$s" "$us"
	done <"$f-fi-pp-all.rows"
	urnic_pair "$f-ib_write_bw-a.txt" ib_write_bw -a -n $N_SWEEP_BW --report_gbits
	awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 5 && NF <= 6 && $1 >= 8 && $1 <= 1048576 { print $1, $4, $5 }' \
		"$f-ib_write_bw-a.txt" | while read -r s g m; do
		sweep urnic_write_bw_gbps "$s" "$g"
		sweep urnic_write_mpps "$s" "$m"
	done
	urnic_pair "$f-ib_write_lat-a.txt" ib_write_lat -a -n $N_SWEEP_LAT
	awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 9 && $1 >= 8 && $1 <= 1048576 { print $1, $5 }' \
		"$f-ib_write_lat-a.txt" | while read -r s us; do
		sweep urnic_write_lat_us "$s" "$us"
	done
}

for ((REP = 1; REP <= REPS; REP++)); do
	[ $REP = 1 ] && idle_start
	group_sizes
	[ $REP = 1 ] && idle_collect
	group_bandwidth
	group_msgrate
	group_latency
done

# ---- medians, report, plots ----

# results.tsv: key, median, runs (comma-separated, in repetition order), their repetitions.
sort -t "$(printf '\t')" -k1,1 -k2,2n "$OUT/samples.tsv" | awk -F '\t' '
	function flush() {
		if (key == "") return
		n = split(vals, v, ","); for (i = 1; i <= n; i++) s[i] = v[i] + 0
		for (i = 2; i <= n; i++) { x = s[i]; for (j = i - 1; j >= 1 && s[j] > x; j--) s[j + 1] = s[j]; s[j + 1] = x }
		med = n % 2 ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2
		printf "%s\t%.6g\t%s\t%s\n", key, med, vals, reps
	}
	$1 != key { flush(); key = $1; vals = $3; reps = $2; next }
	{ vals = vals "," $3; reps = reps "," $2 }
	END { flush() }' >"$OUT/results.tsv"

# sweep.tsv: one row per size, the median of each series (NaN where missing).
SERIES="urnic_write_bw_gbps ucx_put_bw_gbps fi_pp_bw_gbps urnic_write_lat_us ucx_put_lat_us fi_pp_lat_us urnic_write_mpps"
awk -F '\t' -v series="$SERIES" '
	{ k = $1 SUBSEP $2; vals[k] = (k in vals) ? vals[k] "," $4 : $4; sizes[$2] = 1 }
	END {
		ns = split(series, S, " ")
		printf "size"; for (i = 1; i <= ns; i++) printf "\t%s", S[i]; printf "\n"
		n = 0; for (z in sizes) Z[++n] = z + 0
		for (i = 2; i <= n; i++) { x = Z[i]; for (j = i - 1; j >= 1 && Z[j] > x; j--) Z[j + 1] = Z[j]; Z[j + 1] = x }
		for (zi = 1; zi <= n; zi++) {
			printf "%d", Z[zi]
			for (i = 1; i <= ns; i++) {
				k = S[i] SUBSEP Z[zi]
				if (!(k in vals)) { printf "\tNaN"; continue }
				m = split(vals[k], v, ","); for (a = 1; a <= m; a++) s[a] = v[a] + 0
				for (a = 2; a <= m; a++) { x = s[a]; for (b = a - 1; b >= 1 && s[b] > x; b--) s[b + 1] = s[b]; s[b + 1] = x }
				printf "\t%.6g", m % 2 ? s[(m + 1) / 2] : (s[m / 2] + s[m / 2 + 1]) / 2
			}
			printf "\n"
		}
	}' "$OUT/sweep_samples.tsv" >"$OUT/sweep.tsv"

T_END=$(date +%s)
awk -F '\t' -v reps="$REPS" -v commit="$COMMIT" -v date="$(date -u '+%Y-%m-%d %H:%M UTC')" \
	-v cpus="$(nproc)" -v secs=$((T_END - T_START)) -v out="$OUT" -v quick="$QUICK" \
	-v cpu="$(cpu_model)" -v feats="$(cpu_features)" -v crc="$(crc_path)" \
	-f "$BENCH/report.awk" "$OUT/results.tsv" "$OUT/sweep.tsv" | tee "$OUT/report.txt"

CEIL=$(awk -F '\t' '$1 == "ceil_udp_gso_gbps" { print $2 }' "$OUT/results.tsv")
PP=$(awk -F '\t' '$1 == "ceil_udp_pp_us" { print $2 }' "$OUT/results.tsv")
if gnuplot -e "sweep='$OUT/sweep.tsv'; outdir='$PLOTS'; ceil='${CEIL:-NaN}'; pp='${PP:-NaN}'; reps='$REPS'" \
	"$BENCH/plot.gp" 2>"$OUT/gnuplot.log"; then
	say "bench: plots: $PLOTS/bench-bandwidth.png $PLOTS/bench-latency.png"
else
	say "bench: gnuplot failed: see $OUT/gnuplot.log"
fi
