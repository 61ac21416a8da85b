#!/bin/sh
# SPDX-License-Identifier: MIT
# abi_check.sh - the drop-in verbs libraries export the system libraries' ABI.
#
# For libibverbs.so.1 and the stub libmlx5.so.1 / libefa.so.1 that sit next to it, checks
# against the system copy (objdump -T / -p) that:
#   - every default-version symbol (name@@NODE) is defined with the same node and kind
#     (function / object): Debian's binaries are BIND_NOW, a missing one kills them at load;
#   - every version node exists with the same parent: verneed entries are not weak;
#   - the SONAME is the same;
#   - the stub providers do not NEED libibverbs and reference nothing outside libc.
# Extra exports are reported but allowed: a binary linked with BIND_NOW fails to load if
# any symbol version it names is missing, never because of one it does not name.
#
# Usage: abi_check.sh <built libibverbs.so.1> [<libmlx5.so.1> [<libefa.so.1>]]
#   The providers default to the directory of the first argument.
#   SYSLIBDIR (default /usr/lib/x86_64-linux-gnu) holds the reference libraries.
# Exit: 0 all good, 1 mismatches (listed on stdout), 2 usage, 77 no reference library (skip).

set -eu
LC_ALL=C
export LC_ALL

OBJDUMP=${OBJDUMP:-objdump}
SYSLIBDIR=${SYSLIBDIR:-/usr/lib/x86_64-linux-gnu}

if [ $# -lt 1 ] || [ $# -gt 3 ]; then
	echo "usage: $0 <libibverbs.so.1> [<libmlx5.so.1> [<libefa.so.1>]]" >&2
	exit 2
fi
dir=$(dirname "$1")
ours_ibv=$1
ours_mlx5=${2:-$dir/libmlx5.so.1}
ours_efa=${3:-$dir/libefa.so.1}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/abi_check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0

# exports LIB: "name@@NODE kind" for every defined default-version symbol.
exports() {
	"$OBJDUMP" -T "$1" | awk -F '\t' '
	NF == 2 {
		n = split($1, a, " ")
		flags = ""
		for (i = 2; i < n; i++)
			flags = flags a[i]
		if (split($2, b, " ") != 3 || a[n] == "*UND*" || a[n] == "*ABS*")
			next
		if (b[2] ~ /^\(/ || b[2] == "Base")
			next
		kind = flags ~ /F/ ? "function" : (flags ~ /O/ ? "object" : "other")
		print b[3] "@@" b[2], kind
	}' | sort -u
}

# nodes LIB: "NODE parent" (parent "-" when none) for every version definition but the base.
nodes() {
	"$OBJDUMP" -p "$1" | awk '
	/^Version definitions:/ { on = 1; next }
	on && /^$/ { on = 0 }
	!on { next }
	/^[0-9]/ {
		if ($2 == "0x01")
			next
		if (cur != "")
			print cur, parent
		cur = $4; parent = "-"
		next
	}
	/^[ \t]/ && cur != "" && parent == "-" { parent = $1 }
	END { if (cur != "") print cur, parent }' | sort
}

dynamic() {	# dynamic LIB TAG: values of a dynamic-section tag (NEEDED, SONAME)
	"$OBJDUMP" -p "$1" | awk -v tag="$2" '$1 == tag { print $2 }'
}

problem() {
	echo "  $*"
	fail=1
}

# check NAME REFERENCE OURS IS_PROVIDER
check() {
	name=$1 ref=$2 ours=$3 provider=$4
	if [ ! -r "$ref" ]; then
		echo "abi_check: reference $ref not found; skipping" >&2
		exit 77
	fi
	echo "$name: $ours against $ref"
	if [ ! -r "$ours" ]; then
		problem "$ours: not found"
		return
	fi
	exports "$ref" > "$tmp/ref.exp"
	exports "$ours" > "$tmp/ours.exp"
	nodes "$ref" > "$tmp/ref.nodes"
	nodes "$ours" > "$tmp/ours.nodes"

	# Missing or wrong-node symbols: name@@NODE lines of the reference absent from ours.
	cut -d' ' -f1 "$tmp/ref.exp" > "$tmp/ref.names"
	cut -d' ' -f1 "$tmp/ours.exp" > "$tmp/ours.names"
	comm -23 "$tmp/ref.names" "$tmp/ours.names" > "$tmp/missing"
	while read -r sym; do
		base=${sym%@@*}
		have=$(grep "^$base@@" "$tmp/ours.names" | head -n 1 || true)
		if [ -n "$have" ]; then
			problem "$sym: exported as $have"
		else
			problem "$sym: not exported"
		fi
	done < "$tmp/missing"
	# Same symbol, other kind.
	join "$tmp/ref.exp" "$tmp/ours.exp" | awk '$2 != $3 { print $1 ": " $3 ", expected " $2 }' |
		while read -r line; do echo "  $line"; done > "$tmp/kind"
	if [ -s "$tmp/kind" ]; then
		cat "$tmp/kind"
		fail=1
	fi
	comm -13 "$tmp/ref.names" "$tmp/ours.names" | sed 's/^/  note: extra export /'

	# Version nodes and their parents.
	comm -23 "$tmp/ref.nodes" "$tmp/ours.nodes" > "$tmp/badnodes"
	while read -r node parent; do
		have=$(awk -v n="$node" '$1 == n { print $2 }' "$tmp/ours.nodes")
		if [ -z "$have" ]; then
			problem "version node $node: not defined"
		else
			problem "version node $node: parent $have, expected $parent"
		fi
	done < "$tmp/badnodes"

	rs=$(dynamic "$ref" SONAME)
	os=$(dynamic "$ours" SONAME)
	[ "$rs" = "$os" ] || problem "SONAME '$os', expected '$rs'"

	if [ "$provider" = 1 ]; then
		for lib in $(dynamic "$ours" NEEDED); do
			case $lib in
			libc.so.*) ;;
			*) problem "NEEDED $lib: a stub provider may only need libc" ;;
			esac
		done
		"$OBJDUMP" -T "$ours" | awk -F '\t' '
		NF == 2 && $1 ~ /\*UND\*/ && $1 !~ / w / {
			split($2, b, " ")
			if (b[2] !~ /^\(?GLIBC_/)
				print "  undefined " b[3] " (" b[2] ")"
		}' > "$tmp/und"
		if [ -s "$tmp/und" ]; then
			cat "$tmp/und"
			fail=1
		fi
	fi
	n=$(wc -l < "$tmp/ref.names")
	m=$(wc -l < "$tmp/ref.nodes")
	echo "  $n symbols, $m version nodes checked"
}

check libibverbs "$SYSLIBDIR/libibverbs.so.1" "$ours_ibv" 0
check libmlx5 "$SYSLIBDIR/libmlx5.so.1" "$ours_mlx5" 1
check libefa "$SYSLIBDIR/libefa.so.1" "$ours_efa" 1

if [ $fail != 0 ]; then
	echo "abi_check: FAILED"
	exit 1
fi
echo "abi_check: OK"
