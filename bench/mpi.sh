#!/bin/bash
# bench/mpi.sh - MPI over urnic against MPI over TCP, in one run: examples/mpi's
# mpi_example (8-byte ping-pong latency, the median of its round trips; 1 MiB bandwidth
# in windows of 16 non-blocking sends; every byte checked), two ranks on this machine:
#
#   urnic   Open MPI, pml ucx, and MPICH, ch4:ucx, by README's recipe: one urnic
#           address per rank (`urnic run --per-rank`), UCX's shared memory off
#           (UCX_TLS=^sm); the two ranks' devices exchange their packets through
#           urnic's shared memory lanes (URNIC_LOCAL, the default); and Open MPI again
#           with URNIC_LOCAL=0, through the UDP socket, as two hosts would
#   TCP     Open MPI's own TCP transport: --mca pml ob1 --mca btl tcp,self on lo (the
#           reference of the targets); and, for reference, MPICH over UCX's tcp (which
#           now and then hangs in MPI_Finalize here: that run is dropped after 30 s)
#   shm     the ceiling of the machine: MPI's own transports between two processes of
#           one host, which copy the data once, kernel to kernel (CMA: process_vm_readv
#           and _writev), as urnic's direct placement does: Open MPI's vader (btl sm)
#           and UCX's shared memory (posix, cma) under Open MPI
#
# Each configuration runs -r times (default 5), interleaved: every repetition runs them
# all, so slow phases of a shared machine spread over every figure; the median is kept.
# Prints latency and bandwidth of each, and urnic's over Open MPI TCP's with urnic's
# targets for MPI (docs/performance.md, "MPI over urnic"): bandwidth >= 2x, latency <= 0.7x.
# A program that prints figures, not a test. Writes raw outputs and report.txt to the
# output directory (default build/bench-mpi).
#
# usage: bench/mpi.sh [-r reps] [-b urnic_build_dir] [-o outdir] [-a ADDR,ADDR] [-q]
#   -r N    repetitions (default 5)
#   -b DIR  the urnic build (default build): DIR/bin/urnic, DIR/bin/mpi_example.*
#   -o DIR  output directory (default build/bench-mpi)
#   -a A,B  the two ranks' urnic addresses (default 127.0.3.40,127.0.3.41, away from
#           bench/run.sh's and the tests')
#   -q      quick: one repetition, fewer iterations (a smoke run, not for figures)
set -u

URNIC_TOP=$(cd "$(dirname "$0")/.." && pwd)
REPS=5
BUILD=$URNIC_TOP/build
OUT=$URNIC_TOP/build/bench-mpi
ADDRS=127.0.3.40,127.0.3.41
QUICK=0
while getopts "r:b:o:a:qh" opt; do
	case $opt in
	r) REPS=$OPTARG ;;
	b) BUILD=$OPTARG ;;
	o) OUT=$OPTARG ;;
	a) ADDRS=$OPTARG ;;
	q) QUICK=1 REPS=1 ;;
	h | *)
		sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'
		[ "$opt" = h ] && exit 0
		exit 2
		;;
	esac
done

say() { printf '%s\n' "$*" >&2; }
die() {
	say "bench/mpi: $*"
	exit 1
}

URNIC=$BUILD/bin/urnic
[ -x "$URNIC" ] || die "no $URNIC: build urnic first (cmake --build $BUILD)"
for t in mpirun.openmpi mpiexec.mpich ucx_info; do
	command -v $t >/dev/null ||
		die "$t is missing (Debian: openmpi-bin mpich ucx-utils; scripts/deps.sh)"
done
for m in openmpi mpich; do
	[ -x "$BUILD/bin/mpi_example.$m" ] ||
		die "no $BUILD/bin/mpi_example.$m (libopenmpi-dev, libmpich-dev; then rebuild)"
done
mkdir -p "$OUT/raw" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)
rm -f "$OUT"/raw/* "$OUT/samples.tsv"

if [ "$QUICK" = 1 ]; then
	ARGS="-n 2000 -r 5 -a 16"
else
	ARGS="-n 20000 -r 30 -a 16"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OMPI="mpirun.openmpi -np 2 --oversubscribe"
ONE=$BUILD/bin/mpi_example.openmpi
MP=$BUILD/bin/mpi_example.mpich
RUN="$URNIC run --addr $ADDRS --per-rank --"

# name|description|command (the example's arguments are appended)
CONFIGS=(
	"urnic_ompi|Open MPI, pml ucx, over urnic|$OMPI --mca pml ucx -x UCX_TLS=^sm $RUN $ONE"
	"urnic_ompi_sock|... with URNIC_LOCAL=0 (UDP socket)|$OMPI --mca pml ucx -x UCX_TLS=^sm -x URNIC_LOCAL=0 $RUN $ONE"
	"urnic_mpich|MPICH, ch4:ucx, over urnic|mpiexec.mpich -n 2 -genv UCX_TLS ^sm $RUN $MP"
	"tcp_ompi|Open MPI, btl tcp on lo|$OMPI --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo $ONE"
	"tcp_mpich|MPICH, ch4:ucx, UCX tcp on lo|mpiexec.mpich -n 2 -genv UCX_TLS tcp -genv UCX_NET_DEVICES lo $MP"
	"shm_vader|Open MPI, btl vader (shared memory)|$OMPI --mca pml ob1 --mca btl vader,self $ONE"
	"shm_ucx|Open MPI, pml ucx, UCX sm only|$OMPI --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any -x UCX_TLS=sm,self $ONE"
)

say "bench/mpi: $REPS repetition(s) of ${#CONFIGS[@]} configurations, mpi_example $ARGS"
for ((rep = 1; rep <= REPS; rep++)); do
	for c in "${CONFIGS[@]}"; do
		name=${c%%|*}
		cmd=${c##*|}
		log=$OUT/raw/$name.$rep.log
		# shellcheck disable=SC2086 # cmd and ARGS are lists of words
		timeout 30 $cmd $ARGS >"$log" 2>&1
		rc=$?
		lat=$(awk '/^pingpong/ { print $4 }' "$log")
		bw=$(awk '/^bandwidth/ { print $4 }' "$log")
		if [ $rc != 0 ] || ! grep -q '^all data checked: ok$' "$log" || [ -z "$lat$bw" ]; then
			say "bench/mpi: $name, repetition $rep, failed (status $rc): see $log"
			continue
		fi
		printf '%s\t%s\t%s\t%s\n' "$name" "$rep" "$lat" "$bw" >>"$OUT/samples.tsv"
		say "  $rep $name: $lat us, $bw MB/s"
	done
done
[ -s "$OUT/samples.tsv" ] || die "no run succeeded"

# median NAME COLUMN: the median of a configuration's samples (column 3 latency, 4 bw),
# with two decimals for latency, none for bandwidth
median() {
	awk -F'\t' -v n="$1" -v c="$2" '$1 == n { print $c }' "$OUT/samples.tsv" | sort -g |
		awk -v f="$([ "$2" = 3 ] && echo %.2f || echo %.0f)" '{ v[NR] = $1 }
		END {
			if (NR % 2) printf f, v[(NR + 1) / 2]
			else if (NR) printf f, (v[NR / 2] + v[NR / 2 + 1]) / 2
			else printf "-"
		}'
}
verdict() { awk -v x="$1" -v t="$2" -v op="$3" 'BEGIN { ok = op == "ge" ? x >= t : x <= t
	print ok ? "MET" : "NOT MET" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

{
	printf 'MPI over urnic against MPI over TCP: mpi_example, 2 ranks, median of %d\n' "$REPS"
	printf '%s, %s CPUs, load %s\n' "$(uname -r)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
	printf '%-34s %14s %16s\n' configuration "latency 8 B" "bandwidth 1 MiB"
	for c in "${CONFIGS[@]}"; do
		name=${c%%|*}
		desc=${c#*|}
		desc=${desc%%|*}
		printf '%-34s %11s us %11s MB/s\n' "$desc" "$(median "$name" 3)" "$(median "$name" 4)"
	done
	if grep -qs 'no shared memory lanes' "$OUT"/raw/urnic_ompi.*.log; then
		printf 'note: urnic found no shared memory lanes: the socket was used\n'
	fi
	tl=$(median tcp_ompi 3)
	tb=$(median tcp_ompi 4)
	for u in urnic_ompi urnic_ompi_sock urnic_mpich; do
		l=$(ratio "$(median $u 3)" "$tl")
		b=$(ratio "$(median $u 4)" "$tb")
		printf '%-15s / tcp_ompi: latency %s (target <= 0.7: %s), bandwidth %s (target >= 2: %s)\n' \
			"$u" "$l" "$(verdict "$l" 0.7 le)" "$b" "$(verdict "$b" 2 ge)"
	done
	# The machine's own single-copy MPI: what two processes of this host reach at all.
	for s in shm_vader shm_ucx; do
		printf '%-15s / tcp_ompi: bandwidth %s; urnic_ompi / %s: bandwidth %s\n' "$s" \
			"$(ratio "$(median $s 4)" "$tb")" "$s" "$(ratio "$(median urnic_ompi 4)" "$(median $s 4)")"
	done
} | tee "$OUT/report.txt"
