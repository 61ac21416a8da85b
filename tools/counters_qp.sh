#!/bin/sh
# counters_qp.sh URNIC - `urnic counters` shows each live QP's counters, only the
# counters that are not zero unless --all, and the process's network namespace.
#
# Runs Debian's ibv_rc_pingpong over the drop-in between 127.0.31.2 (server) and
# 127.0.31.3 (client), and while it runs reads the client's counters file: the JSON
# form must list its RC QP in RTS with packets sent and received, and `--qp` must print
# the same QP in text. Both pingpongs are killed at the end, whatever happened.
set -u
urnic=$1
lib=$(dirname "$urnic")/../lib
export LD_LIBRARY_PATH="$lib"
. "$(dirname "$0")/asan_env.sh"
tmp=$(mktemp -d)
# Killed, the pingpongs cannot remove their counters files: done here.
trap 'kill $spid $cpid 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp";
	rm -f /dev/shm/urnic.$spid.* /dev/shm/urnic.$cpid.*' EXIT

# $san is a list of words without blanks inside them: split on purpose.
# shellcheck disable=SC2086
env URNIC_ADDR=127.0.31.2 $san ibv_rc_pingpong -g 1 -p 18631 -n 1000000 >"$tmp/s" 2>&1 &
spid=$!
sleep 0.5
# shellcheck disable=SC2086
env URNIC_ADDR=127.0.31.3 $san ibv_rc_pingpong -g 1 -p 18631 -n 1000000 127.0.31.2 >"$tmp/c" 2>&1 &
cpid=$!

# Wait until the client's QP has moved packets, up to 20 s.
i=0
while [ $i -lt 100 ]; do
	"$urnic" counters --json "$cpid" >"$tmp/json" 2>/dev/null &&
		grep -q '"type": "RC", "state": "RTS", "counters": {"rx_packets": [1-9]' "$tmp/json" &&
		break
	sleep 0.2
	i=$((i + 1))
done
if ! grep -q '"type": "RC", "state": "RTS", "counters": {"rx_packets": [1-9]' "$tmp/json"; then
	echo "FAIL: no live RC QP with packets in the JSON counters of pid $cpid"
	cat "$tmp/json" "$tmp/s" "$tmp/c"
	exit 1
fi
grep -q '"tx_packets": [1-9]' "$tmp/json" || { echo "FAIL: QP sent nothing"; exit 1; }
"$urnic" counters --qp "$cpid" >"$tmp/text" || { echo "FAIL: urnic counters --qp"; exit 1; }
if ! grep -Eq '^  QP 0x[0-9a-f]{6} RC RTS$' "$tmp/text" ||
	! grep -Eq '^    tx_packets +[1-9]' "$tmp/text"; then
	echo "FAIL: --qp does not show the QP"
	cat "$tmp/text"
	exit 1
fi
grep -E '^  QP |^    (rx|tx)_packets' "$tmp/text"

# The device's own counters: by default none that is zero, with --all every one (a
# clean loopback pingpong drops nothing); the namespace is the caller's.
if grep -Eq '^  [a-z_0-9]+ +0  ' "$tmp/text" || ! grep -Eq '^  tx_packets +[1-9]' "$tmp/text"; then
	echo "FAIL: urnic counters shows zero counters, or not tx_packets, without --all"
	cat "$tmp/text"
	exit 1
fi
"$urnic" counters --all "$cpid" >"$tmp/all" || { echo "FAIL: urnic counters --all"; exit 1; }
if ! grep -Eq '^  drop_bad_icrc +0  ' "$tmp/all" || ! grep -Eq '^  tx_packets +[1-9]' "$tmp/all"; then
	echo "FAIL: --all does not show every counter"
	cat "$tmp/all"
	exit 1
fi
if ! grep -Eq "^urnic0 \(127\.0\.31\.3\), pid $cpid, net:\[[0-9]+\] \(this namespace\)$" "$tmp/text" ||
	! grep -q '"netns": "net:\[[0-9]*\]", "netns_is_callers": true' "$tmp/json"; then
	echo "FAIL: the process's network namespace is not named as the caller's"
	head -1 "$tmp/text"
	head -3 "$tmp/json"
	exit 1
fi
echo "PASS: per-QP counters of pid $cpid in JSON and text, non-zero by default, namespace"
