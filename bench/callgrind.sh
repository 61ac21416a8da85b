#!/bin/bash
# bench/callgrind.sh - urnic's own instructions per message, counted by valgrind's
# callgrind (the machine's load, steal time and the kernel do not move this figure):
# bench/engine_cost.c (two engines over the engine tests' in-process fabric, RC, MTU
# 4096) for 64 KiB and 8-byte RDMA WRITEs, SENDs and READs, split by function into
# the engine's logic, the ICRC, the payload placement and the fabric that stands in for
# the kernel. Complements bench/profile.sh (perf: where CPU time goes, kernel included).
#
# usage: bench/callgrind.sh [-b urnic_build_dir] [-o outdir] [-n messages]
#   Each case runs `-n` messages (default 300 of 64 KiB, 100x as many of 8 bytes).
#   Keeps the callgrind.out.* files in outdir (default build/bench/callgrind) for
#   callgrind_annotate / kcachegrind. Needs valgrind (installed when missing).
set -u
URNIC_TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../scripts/deps.sh
. "$URNIC_TOP/scripts/deps.sh"
BUILD=$URNIC_TOP/build
OUT=$URNIC_TOP/build/bench/callgrind
N=300
while getopts "b:o:n:h" opt; do
	case $opt in
	b) BUILD=$OPTARG ;;
	o) OUT=$OPTARG ;;
	n) N=$OPTARG ;;
	*)
		sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'
		exit 2
		;;
	esac
done
URNIC_PACKAGES="$URNIC_PACKAGES valgrind"
urnic_install_deps || exit 1
PROG=$BUILD/bin/urnic-bench-engine-cost
[ -x "$PROG" ] || { echo "callgrind.sh: $PROG not built (cmake --build $BUILD)" >&2; exit 1; }
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)

# split FILE MESSAGES: instructions per message by category, from callgrind_annotate's
# self costs (every function, inlined parts by the function they sit in) and the
# inclusive cost of the placement (urnic_roce_recv_write for WRITE, urnic_sge_scatter for
# SEND and READ responses: the copy into the memory region).
split() {
	{
		callgrind_annotate --threshold=100 "$1" 2>/dev/null | sed 's/^/S /'
		callgrind_annotate --threshold=100 --inclusive=yes "$1" 2>/dev/null | sed 's/^/I /'
	} | awk -v n="$2" '
	$2 ~ /^[0-9,]+$/ {
		kind = $1; ir = $2; gsub(/,/, "", ir)
		rest = $0; sub(/^[SI] +[0-9,]+ +\( *[0-9.]+%\) +/, "", rest)
		split(rest, wo, " "); where = wo[1]; obj = wo[2]
		if (split(where, fw, ":") < 2) next
		file = fw[1]; fn = fw[2]
		placing = fn == "urnic_roce_recv_write" || fn == "urnic_sge_scatter"
		if (kind == "I") { if (placing) place_incl += ir; next }
		if (placing) place_self += ir
		if (fn ~ /crc|icrc/ || obj ~ /libisal/) icrc += ir
		else if (file ~ /(^|\/)src\//) engine += ir
		else if (file ~ /(^|\/)(tests\/engine|bench)\//) fabric += ir
		else other += ir
	}
	END {
		engine -= place_self
		other -= place_incl - place_self
		printf "    %-58s %9.0f\n", "engine logic (src/: decode, checks, headers, state)", engine / n
		printf "    %-58s %9.0f\n", "ICRC (src/wire/icrc*.c, ISA-L crc32)", icrc / n
		printf "    %-58s %9.0f\n", "payload placement (into the region: its memcpy)", place_incl / n
		printf "    %-58s %9.0f\n", "urnic in all", (engine + icrc + place_incl) / n
		printf "    %-58s %9.0f\n", "in-process fabric and libc (the kernel'"'"'s stand-in)", (fabric + other) / n
	}'
}

echo "urnic engine cost (bench/callgrind.sh): instructions per message, both hosts, callgrind"
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(git -C "$URNIC_TOP" describe --always --dirty 2>/dev/null)"
for c in "write 65536 $N" "send 65536 $N" "read 65536 $N" "write 8 $((N * 100))" \
	"send 8 $((N * 100))"; do
	set -- $c
	f=$OUT/callgrind.out.$1.$2
	valgrind --tool=callgrind --callgrind-out-file="$f" "$PROG" -o "$1" -s "$2" -n "$3" \
		>"$f.txt" 2>&1 || { echo "callgrind.sh: $PROG failed, see $f.txt" >&2; exit 1; }
	echo "  $1 $2 bytes ($(grep -o '[0-9]* packets host 0 -> 1, [0-9]* back' "$f.txt")" \
		"for $3 messages):"
	split "$f" "$3"
done
