#!/bin/sh
# SPDX-License-Identifier: MIT
# abi.sh - the drop-in librdmacm.so.1 against Debian's: the same SONAME and version nodes
# with the same parents, and every default-version symbol of the system library defined
# under the same node, except the calls listed in not_yet (none now: the rsockets calls
# are all there). Debian's binaries are BIND_NOW: a missing symbol they import kills
# them at load.
# Usage: abi.sh <built librdmacm.so.1> [system librdmacm.so.1]. Exit 77: no system copy.
set -eu
LC_ALL=C
export LC_ALL
ours=${1:?usage: abi.sh LIBRDMACM [SYSTEM_LIBRDMACM]}
sys=${2:-/usr/lib/x86_64-linux-gnu/librdmacm.so.1}
[ -e "$sys" ] || { echo "abi.sh: no $sys (librdmacm1): skipped"; exit 77; }
not_yet=""
syms() { objdump -T "$1" | awk 'NF >= 2 && $(NF-1) ~ /^RDMACM_/ && $NF !~ /^RDMACM_/ { print $NF "@" $(NF-1) }' | sort -u; }
nodes() { objdump -p "$1" | awk '/^Version definitions:/ { on = 1; next } on && /^$/ { on = 0 }
	on && /^[0-9]/ { if (n) print n, p; n = $4; p = "-"; next }
	on && /^[ \t]/ { p = $1 } END { if (n) print n, p }'; }
soname() { objdump -p "$1" | awk '$1 == "SONAME" { print $2 }'; }
fail=0
[ "$(soname "$ours")" = "$(soname "$sys")" ] || { echo "SONAME $(soname "$ours")"; fail=1; }
if [ "$(nodes "$ours")" != "$(nodes "$sys")" ]; then
	echo "version nodes differ:"; nodes "$ours"; echo "system:"; nodes "$sys"; fail=1
fi
have=$(syms "$ours")
for s in $(syms "$sys"); do
	name=${s%@*}
	case " $(echo $not_yet) " in *" $name "*) continue ;; esac
	echo "$have" | grep -qx "$s" || { echo "missing: $s"; fail=1; }
done
for n in $not_yet; do
	echo "$have" | grep -q "^$n@" && { echo "$n is exported now: remove it from not_yet"; fail=1; }
done
[ $fail = 0 ] && echo "abi.sh: $(echo "$have" | wc -l) symbols, nodes and SONAME as the system's"
exit $fail
