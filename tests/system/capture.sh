#!/bin/sh
# SPDX-License-Identifier: MIT
# capture.sh - what urnic puts on the wire is RoCEv2 that tshark dissects cleanly, with
# a correct ICRC on every packet.
#
#   private namespace, lo:  tshark -i lo -f 'udp port 4791' -F pcap
#     127.0.0.2 (server) <--- ibv_rc_pingpong -g 1, twice: defaults (4096 bytes,
#     127.0.0.3 (client) ---> MTU 1024) and -s 65536 -n 20 -m 1024
#   Then: (a) tshark decodes every captured UDP 4791 frame as InfiniBand (RRoCE, UDP 4791 is
#   RoCEv2 by default) with a BTH opcode, only RC SEND_* and ACKNOWLEDGE opcodes, no
#   malformed frame and no expert warning or error (rpcrdma heuristics off, as the
#   lab's verify-pcaps.sh); the frame count equals the two devices' tx_packets;
#   (b) pcap_icrc finds every ICRC correct.
#   Mode ud_uc: the same over ibv_ud_pingpong (defaults, -s 1000) and ibv_uc_pingpong
#   (defaults, -s 65536 -n 20): only UD SEND_ONLY (100) with a DETH carrying the tools'
#   Q_Key 0x11111111, and UC SEND_FIRST/MIDDLE/LAST/ONLY (32-34, 36); no ACK at all.
#   UDP GSO is off for this test (URNIC_NO_GSO=1): on lo a GSO send is captured as one
#   64 KiB datagram before the receiver splits it, where a real NIC's tap sees the
#   segments; the packets themselves are the same either way. The device's own capture
#   (URNIC_PCAP) shows the segments with GSO on: trace.sh.
#   Mode verbs PROGRAM: a verbs test program with two devices in one process
#   (urnic0 = 127.0.0.2, urnic1 = 127.0.0.3, as verbs_prog.sh runs it), here
#   verbs_mw_a19: RC WRITE, READ, SEND with Invalidate (22, 23), ATOMIC_WRITE (29) and
#   FLUSH (28) with their zero-length READ responses ONLY (16). Wireshark 4.0 (Debian 12)
#   names 28 and 29 but has no FETH or ATOMIC_WRITE layout, so their sizes are checked
#   too (UDP length 44: BTH FETH RETH ICRC; 48: BTH RETH, 8 bytes, ICRC), and the four
#   28-byte zero-length READ responses that answer them counted.
#   Mode xrc PROGRAM: the same with verbs_xrc (IBTA Annex A14): only XRC opcodes (160-180),
#   every one the program sends among them; Wireshark 4.0 names them but has no XRC
#   header layouts, so xrceth.lua (common.sh) lays them out: every request has an XRCETH
#   with a zero reserved byte (else an expert error) and the number of an SRQ the
#   program printed ("ok srqs A .. B .. none ..").
#   Usage: capture.sh PCAP_ICRC [rc|ud_uc|verbs PROGRAM|xrc PROGRAM]  (environment:
#   LIBDIR, SANITIZE, CC, SLOT; common.sh)
PCAP_ICRC=${1:?usage: capture.sh PATH_TO_pcap_icrc [rc|ud_uc|verbs PROGRAM|xrc PROGRAM]}
MODE=${2:-rc}
PROG=${3:-}
URNIC_NO_GSO=1
export URNIC_NO_GSO
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/pp_tool.sh"
sys_setup "$@"
# The capture is of lo: the packets must go through the socket (no lanes).
lanes_off
case $MODE in rc | ud_uc) ;; verbs | xrc) [ -x "$PROG" ] || fail "$PROG is not an executable" ;;
*) fail "unknown mode $MODE" ;; esac
command -v tshark >/dev/null || fail "tshark not found"
[ -x "$PCAP_ICRC" ] || fail "$PCAP_ICRC is not an executable"

FILTER="udp port 4791"
[ "$URNIC_SYS_NETNS" = private ] || FILTER="$FILTER and host $SRV_ADDR and host $CLI_ADDR"
PCAP=$SYS_WORK/pingpong.pcap
cap_start "$PCAP" "$FILTER"

if [ "$MODE" = rc ]; then
	pp_run default 120
	pp_run s65536_n20_m1024 120 -s 65536 -n 20 -m 1024
elif [ "$MODE" = verbs ] || [ "$MODE" = xrc ]; then
	# Both devices in one process: its log has both counter lists (.client.log).
	(ibv "$SRV_ADDR,$CLI_ADDR" "$PROG") >"$SYS_WORK/prog.client.log" 2>&1 &
	pid=$!
	track $pid
	wait_exit $pid 60
	rc=$?
	grep '^ok' "$SYS_WORK/prog.client.log"
	[ $rc -eq 0 ] || { cat "$SYS_WORK/prog.client.log"; fail "$(basename "$PROG") exited with status $rc"; }
else
	pp_tool ibv_ud_pingpong
	pp_run ud_default 120
	pp_run ud_s1000 120 -s 1000
	pp_tool ibv_uc_pingpong
	pp_run uc_default 120
	pp_run uc_s65536_n20 120 -s 65536 -n 20
fi

cap_stop

tx=0
for log in "$SYS_WORK"/*.server.log "$SYS_WORK"/*.client.log; do
	[ -e "$log" ] || continue
	tx=$((tx + $(awk '$1 == "tx_packets" && $2 ~ /^[0-9]+$/ { s += $2 } END { print s + 0 }' "$log")))
done

# (a) dissection
# Payloads are not guessed at (tests/interop/run.sh says why).
TS="$CAP_TSHARK -r $PCAP"
frames=$($TS -Y 'udp.port == 4791' 2>/dev/null | wc -l)
ib=$($TS -Y infiniband 2>/dev/null | wc -l)
$TS -Y infiniband -T fields -e infiniband.bth.opcode >"$SYS_WORK/opcodes" 2>/dev/null ||
	fail "tshark cannot read $PCAP"
bth=$(grep -c '^[0-9][0-9]*$' "$SYS_WORK/opcodes")
$TS -Y '_ws.malformed || _ws.expert.severity >= warning' >"$SYS_WORK/malformed.log" 2>/dev/null
bad=$(wc -l <"$SYS_WORK/malformed.log")
say "captured $frames UDP 4791 frames; tshark: $ib InfiniBand (RoCEv2), $bth with a BTH opcode," \
	"$bad malformed or with expert warnings; the devices sent $tx"
echo "  BTH opcodes (count, opcode):"
sort -n "$SYS_WORK/opcodes" | uniq -c | sed 's/^/  /'
[ "$frames" -gt 0 ] || fail "nothing captured"
[ "$ib" = "$frames" ] || fail "only $ib of $frames frames dissect as InfiniBand"
[ "$bth" = "$frames" ] || fail "only $bth of $frames frames have one BTH opcode"
[ "$bad" = 0 ] || { head -20 "$SYS_WORK/malformed.log"; fail "$bad malformed/warning frames"; }
[ "$frames" = "$tx" ] || fail "captured $frames frames but the devices counted $tx tx_packets"
if [ "$MODE" = rc ]; then
	# RC SEND_FIRST/MIDDLE/LAST/ONLY (0, 1, 2, 4) and ACKNOWLEDGE (17), nothing else
	allowed='^(0|1|2|4|17)$'
	need="0 1 2 17"
elif [ "$MODE" = verbs ]; then
	# RC SEND (0-4), SEND with Invalidate (22, 23), WRITE (6-10), READ request and
	# responses (12-16), ACK (17), atomics (18-20), FLUSH (28), ATOMIC_WRITE (29)
	allowed='^([0-9]|1[0-9]|20|22|23|28|29)$'
	need="0 10 12 16 17 22 23 28 29"
elif [ "$MODE" = xrc ]; then
	# XRC SEND FIRST/MIDDLE/LAST (160-162), ONLY (164), ONLY with immediate (165), WRITE
	# FIRST/LAST (166, 168), ONLY with immediate (171), READ request (172) and responses
	# FIRST/MIDDLE/LAST (173-175), ACK (177), atomic ACK (178), CmpSwap (179), FetchAdd (180)
	allowed='^(16[0-9]|17[0-9]|180)$'
	need="160 161 162 164 165 166 168 171 172 173 174 175 177 178 179 180"
else
	# UD SEND_ONLY (100), UC SEND_FIRST/MIDDLE/LAST/ONLY (32, 33, 34, 36); no ACK
	allowed='^(100|32|33|34|36)$'
	need="100 32 33 34"
	$TS -Y 'infiniband.bth.opcode == 100' -T fields -e infiniband.deth.q_key \
		>"$SYS_WORK/qkeys" 2>/dev/null || fail "tshark cannot read $PCAP"
	ud=$(grep -c . "$SYS_WORK/qkeys")
	good=$(grep -Eic '^0x(00000000)?11111111$' "$SYS_WORK/qkeys")
	say "$ud UD frames, $good with a DETH Q_Key 0x11111111"
	[ "$ud" -gt 0 ] || fail "no UD frame"
	[ "$good" = "$ud" ] || fail "$((ud - good)) UD frames without the tools' DETH Q_Key"
fi
others=$(grep -Evc "$allowed" "$SYS_WORK/opcodes")
[ "$others" = 0 ] || fail "$others frames with opcodes outside $allowed"
for op in $need; do
	grep -qx "$op" "$SYS_WORK/opcodes" || fail "no frame with BTH opcode $op"
done
if [ "$MODE" = verbs ]; then
	for want in 28:44 29:48; do
		op=${want%:*}
		len=${want#*:}
		odd=$($TS -Y "infiniband.bth.opcode == $op && udp.length != $len" 2>/dev/null | wc -l)
		[ "$odd" = 0 ] || fail "$odd frames of opcode $op are not $len UDP bytes"
	done
	zero=$($TS -Y 'infiniband.bth.opcode == 16 && udp.length == 28' 2>/dev/null | wc -l)
	say "$zero zero-length READ responses ONLY (FLUSH and ATOMIC_WRITE answers)"
	[ "$zero" = 4 ] || fail "expected 4 zero-length READ responses (2 FLUSH, 2 ATOMIC_WRITE)"
fi
if [ "$MODE" = xrc ]; then
	# The XRCETH of every request (IBTA A14: Resv8, then the SRQ number), as xrceth.lua
	# decodes it; responses carry none.
	srqs=$(sed -n 's/^ok srqs A 0x\([0-9a-f]*\) B 0x\([0-9a-f]*\) none 0x\([0-9a-f]*\)$/\1 \2 \3/p' \
		"$SYS_WORK/prog.client.log")
	set -- $srqs
	[ $# = 3 ] || fail "the program printed no SRQ numbers"
	$TS -Y 'infiniband.bth.opcode <= 172 || infiniband.bth.opcode >= 179' -T fields \
		-e xrceth.srq 2>/dev/null | sed 's/^0x/00/' >"$SYS_WORK/xrceth" ||
		fail "tshark cannot read $PCAP"
	req=$(wc -l <"$SYS_WORK/xrceth") # a request without an XRCETH is an empty line
	to_a=$(grep -cx "00$1" "$SYS_WORK/xrceth")
	to_b=$(grep -cx "00$2" "$SYS_WORK/xrceth")
	to_none=$(grep -cx "00$3" "$SYS_WORK/xrceth")
	say "$req XRC requests: XRCETH to SRQ A $to_a, to B $to_b, to no SRQ $to_none"
	[ "$to_a" -gt 0 ] && [ "$to_b" -gt 0 ] && [ "$to_none" = 1 ] ||
		fail "requests to each SRQ and one to no SRQ expected"
	[ $((to_a + to_b + to_none)) = "$req" ] || {
		grep -vx -e "00$1" -e "00$2" -e "00$3" "$SYS_WORK/xrceth" | head -5
		fail "requests whose XRCETH names no SRQ the program used"
	}
fi

# (b) ICRC
"$PCAP_ICRC" "$PCAP" || fail "pcap_icrc: bad ICRCs (or no RoCEv2 packets) in the capture"
say ok
