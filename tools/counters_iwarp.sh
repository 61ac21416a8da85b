#!/bin/sh
# counters_iwarp.sh URNIC - `urnic counters` shows an iWARP device's connection manager
# counters (iwcm_*, src/stats/iwcm_counters.def) beside its engine's, as it shows a
# RoCE device's cm_* counters.
#
# Runs Debian's rping over the drop-in libibverbs.so.1 and librdmacm.so.1 between
# iwarp:127.0.72.6 (server) and iwarp:127.0.72.7 (client), and while it runs reads both
# processes' counters: the server's device must show the TCP connection it accepted, the
# MPA Request it handed up, the connection established and the Responder's hold for the
# Initiator's first FPDU (iw_await_first); the client's the connect and the connection
# established; in text and in JSON. Both rpings are killed at the end, whatever happened.
set -u
urnic=$1
lib=$(dirname "$urnic")/../lib
export LD_LIBRARY_PATH="$lib"
command -v rping >/dev/null || { echo "SKIP: no rping (rdmacm-utils)"; exit 77; }
. "$(dirname "$0")/asan_env.sh"
tmp=$(mktemp -d)
# Killed, the rpings cannot remove their counters files: done here.
trap 'kill $spid $cpid 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp";
	rm -f /dev/shm/urnic.$spid.* /dev/shm/urnic.$cpid.*' EXIT

# $san is a list of words without blanks inside them: split on purpose.
# shellcheck disable=SC2086
env URNIC_ADDR=iwarp:127.0.72.6 $san rping -s -a 127.0.72.6 -p 17276 -C 1000000 >"$tmp/s" 2>&1 &
spid=$!
sleep 0.5
# shellcheck disable=SC2086
env URNIC_ADDR=iwarp:127.0.72.7 $san rping -c -a 127.0.72.6 -p 17276 -C 1000000 >"$tmp/c" 2>&1 &
cpid=$!

# shows PID REGEX...: `urnic counters PID` prints a line matching each REGEX.
shows() {
	_pid=$1
	shift
	"$urnic" counters "$_pid" >"$tmp/text.$_pid" 2>/dev/null || return 1
	for _re in "$@"; do
		grep -Eq "$_re" "$tmp/text.$_pid" || return 1
	done
}

srv='^  iwcm_accepted_tcp +1  iWARP CM: ' cli='^  iwcm_connect +1  iWARP CM: '
est='^  iwcm_established +1  iWARP CM: connections handed to the device$'
# Until both connections are up and have carried data, up to 20 s.
i=0
while [ $i -lt 100 ]; do
	shows $spid "$srv" '^  iwcm_requests +1  ' "$est" '^  iw_await_first +1  ' \
		'^  tcp_rx_bytes +[1-9]' &&
		shows $cpid "$cli" "$est" '^  tcp_rx_bytes +[1-9]' && break
	sleep 0.2
	i=$((i + 1))
done
if [ $i = 100 ]; then
	echo "FAIL: the iWARP CM's counters are not in urnic counters"
	cat "$tmp/text.$spid" "$tmp/text.$cpid" "$tmp/s" "$tmp/c"
	exit 1
fi
grep -E '^  (iwcm_|iw_await)' "$tmp/text.$spid" "$tmp/text.$cpid"
# JSON carries every counter, those of the CM among them; nothing failed in setup.
"$urnic" counters --json "$cpid" >"$tmp/json" || { echo "FAIL: urnic counters --json"; exit 1; }
if ! grep -q '"iwcm_established": 1' "$tmp/json" || ! grep -q '"iwcm_mpa_failed": 0' "$tmp/json"; then
	echo "FAIL: the JSON counters of pid $cpid lack the iWARP CM's"
	cat "$tmp/json"
	exit 1
fi
echo "PASS: iwcm_* and iw_await_first of pids $spid and $cpid in urnic counters"
