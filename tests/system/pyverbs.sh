#!/bin/sh
# SPDX-License-Identifier: MIT
# pyverbs.sh - rdma-core's own test suite (Debian's python3-pyverbs, the tests that
# rdma-core's providers are checked with) over the urnic drop-in, and what it puts on
# the wire.
#
#   private namespace, lo: 127.0.0.2 = urnic0, both ends of every test's QPs
#     /usr/bin/python3 run_tests.py --dev urnic0 --gid 1 -v  (RoCEv2 GID ::ffff:127.0.0.2)
#     tshark -i lo -f 'udp port 4791' -F pcap, all the while
#
# The suite is copied from /usr/share/doc/rdma-core/tests (some files are gzipped there)
# without its vendor modules (mlx5, efa: those devices' direct verbs; CUDA: a GPU).
# pyverbs_summary.py judges the log: no failure or error, every skip explained by a
# line of pyverbs-skips.txt, at least MIN_PASS passes; it prints the counts. Then every
# captured frame must dissect as RoCEv2 without a malformed or warned-about field, every
# XRC request must carry an XRCETH, and pcap_icrc must find every ICRC correct. The
# suite's huge-page tests want 2 MiB pages reserved: if none are and this user may, 64
# are reserved for the run and given back.
# UDP GSO is off (URNIC_NO_GSO=1) so that lo's tap sees packets, as capture.sh says.
#
# The rdma_cm tests (test_rdmacm.py) take the device's interface from
# /sys/class/infiniband/urnic0/device/net and use its first address for both ends, as
# on a host with rxe on an Ethernet port: they run apart, after the rest, in the private
# namespace only, on a veth end whose one IPv4 address is the device's
#     urv0 (veth, peer urv1): 10.77.0.2/24 = urnic0
#     urnic run --addr 10.77.0.2 -- run_tests.py ... -k test_rdmacm
# (`urnic run` shows the sysfs view naming urv0), judged alike: all must pass.
#   Usage: pyverbs.sh PCAP_ICRC MIN_PASS URNIC  (environment: LIBDIR, SANITIZE, CC, SLOT;
#   common.sh)
PCAP_ICRC=${1:?usage: pyverbs.sh PATH_TO_pcap_icrc MIN_PASS PATH_TO_urnic}
MIN_PASS=${2:?usage: pyverbs.sh PATH_TO_pcap_icrc MIN_PASS PATH_TO_urnic}
URNIC=${3:?usage: pyverbs.sh PATH_TO_pcap_icrc MIN_PASS PATH_TO_urnic}
URNIC_NO_GSO=1
export URNIC_NO_GSO
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/common.sh"
sys_setup "$@"
# The capture is of lo: the packets must go through the socket (no lanes).
lanes_off
[ -x "$PCAP_ICRC" ] || fail "$PCAP_ICRC is not an executable"

SUITE=/usr/share/doc/rdma-core/tests
PY=/usr/bin/python3 # Debian's python, the one python3-pyverbs is built for
[ -e "$SUITE/run_tests.py" ] || fail "$SUITE/run_tests.py not found (apt-get install python3-pyverbs)"
"$PY" -c 'import pyverbs.device' 2>/dev/null || fail "$PY cannot import pyverbs (python3-pyverbs)"

T=$SYS_WORK/tests
cp -r "$SUITE" "$T" || fail "cannot copy $SUITE"
find "$T" -name '*.gz' -exec gunzip -f {} + || fail "gunzip"
rm -f "$T"/test_mlx5_*.py "$T"/test_efa*.py "$T"/test_cuda_*.py
mv "$T/test_rdmacm.py" "$SYS_WORK/" || fail "no test_rdmacm.py in $SUITE"

HUGE=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
HUGE_WAS=
if [ -w "$HUGE" ] && [ "$(cat "$HUGE")" = 0 ]; then
	HUGE_WAS=0
	echo 64 >"$HUGE" 2>/dev/null
	say "reserved $(cat "$HUGE") huge pages of 2 MiB for the run"
fi
give_back() {
	[ -n "$HUGE_WAS" ] && echo "$HUGE_WAS" >"$HUGE"
	sys_cleanup
}
trap give_back EXIT

PCAP=$SYS_WORK/pyverbs.pcap
FILTER="udp port 4791"
[ "$URNIC_SYS_NETNS" = private ] || FILTER="$FILTER and host $SRV_ADDR"
cap_start "$PCAP" "$FILTER"

LOG=$SYS_WORK/pyverbs.log
# Counters printed at each close would land between a test's name and its outcome.
(cd "$SYS_WORK" && ibv "$SRV_ADDR" env URNIC_PRINT_COUNTERS=0 "$PY" "$T/run_tests.py" --dev urnic0 --gid 1 -v) \
	>"$LOG" 2>&1 &
pid=$!
track $pid
wait_exit $pid 900
rc=$?
cap_stop
[ $rc = 124 ] && fail "the suite did not finish in 900 s"

"$PY" "$HERE/pyverbs_summary.py" "$LOG" "$HERE/pyverbs-skips.txt" --min-pass "$MIN_PASS" ||
	{
		grep -n -A30 -E '^(ERROR|FAIL):' "$LOG" | head -150
		fail "the pyverbs suite did not pass (run_tests.py exit status $rc)"
	}

frames=$($CAP_TSHARK -r "$PCAP" -Y 'udp.port == 4791' 2>/dev/null | wc -l)
ib=$($CAP_TSHARK -r "$PCAP" -Y 'infiniband.bth.opcode' 2>/dev/null | wc -l)
$CAP_TSHARK -r "$PCAP" -Y '_ws.malformed || _ws.expert.severity >= warning' \
	>"$SYS_WORK/malformed.log" 2>/dev/null
bad=$(wc -l <"$SYS_WORK/malformed.log")
say "captured $frames UDP 4791 frames: $ib RoCEv2 with a BTH, $bad malformed or with expert warnings"
$CAP_TSHARK -r "$PCAP" -Y infiniband -T fields -e infiniband.bth.opcode 2>/dev/null |
	sort -n | uniq -c | awk '{ printf "  opcode %s: %s frames\n", $2, $1 }'
[ "$frames" -gt 0 ] || fail "nothing captured"
[ "$ib" = "$frames" ] || fail "only $ib of $frames frames dissect as RoCEv2 with a BTH"
[ "$bad" = 0 ] || { head -20 "$SYS_WORK/malformed.log"; fail "$bad malformed/warning frames"; }
# XRC requests (IBTA Annex A14: every opcode of transport 0b101 but the responses,
# 173-178) each with an XRCETH that xrceth.lua decodes (common.sh).
XRC_REQ='infiniband.bth.opcode >= 160 && infiniband.bth.opcode <= 183 &&
	!(infiniband.bth.opcode >= 173 && infiniband.bth.opcode <= 178)'
xrc=$($CAP_TSHARK -r "$PCAP" -Y "$XRC_REQ" 2>/dev/null | wc -l)
xrceth=$($CAP_TSHARK -r "$PCAP" -Y "($XRC_REQ) && xrceth.srq" 2>/dev/null | wc -l)
say "$xrc XRC requests, $xrceth with an XRCETH"
[ "$xrc" -gt 0 ] || fail "no XRC request captured"
[ "$xrceth" = "$xrc" ] || fail "$((xrc - xrceth)) XRC requests without an XRCETH"
"$PCAP_ICRC" "$PCAP" || fail "pcap_icrc: bad ICRCs (or no RoCEv2 packets) in the capture"

# The rdma_cm tests, on a veth end of their own (see the top).
if [ "$URNIC_SYS_NETNS" = private ]; then
	RC_ADDR=10.77.0.2
	{ ip link add urv0 type veth peer name urv1 && ip addr add "$RC_ADDR/24" dev urv0 &&
		ip link set urv1 up && ip link set urv0 up; } || fail "cannot set up veth urv0"
	mv "$SYS_WORK/test_rdmacm.py" "$T/" || fail "mv test_rdmacm.py"
	CMLOG=$SYS_WORK/pyverbs_rdmacm.log
	# SAN_ENV is a list of words without blanks inside them: split on purpose.
	# shellcheck disable=SC2086
	(cd "$SYS_WORK" && exec env URNIC_PRINT_COUNTERS=0 $SAN_ENV "$URNIC" run --addr "$RC_ADDR" \
		-- "$PY" "$T/run_tests.py" --dev urnic0 --gid 1 -v -k test_rdmacm) >"$CMLOG" 2>&1 &
	pid=$!
	track $pid
	wait_exit $pid 300
	rc=$?
	[ $rc = 124 ] && fail "the rdma_cm tests did not finish in 300 s"
	"$PY" "$HERE/pyverbs_summary.py" "$CMLOG" "$HERE/pyverbs-skips.txt" --min-pass 10 ||
		{
			grep -n -A30 -E '^(ERROR|FAIL):' "$CMLOG" | head -150
			fail "pyverbs' rdma_cm tests did not pass (run_tests.py exit status $rc)"
		}
else
	say "NOTE: no private namespace for a veth: pyverbs' rdma_cm tests not run"
fi
say ok
