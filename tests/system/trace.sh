#!/bin/sh
# SPDX-License-Identifier: MIT
# trace.sh - URNIC_PCAP: the capture each device writes of what it sends and receives
# is the wire after segmentation, dissects cleanly and has every ICRC right; what the
# receive path refused is in it, commented with its drop counter.
#
#   private namespace, lo:
#     127.0.0.2 server: `urnic trace -w server.pcapng -- TOOL ...`
#     127.0.0.3 client: URNIC_PCAP=client.pcapng TOOL ... 127.0.0.2
#   Mode gso: ib_write_bw -s 65536 -n 200, which leaves in UDP GSO sends (the client's
#   tx_sends must be under half its tx_packets, or the test shows nothing). Each file:
#   every frame dissects as InfiniBand (RRoCE) with a BTH opcode, no malformed frame and
#   no expert warning (capture.sh's rules); no IP datagram is longer than the MTU (4096)
#   plus RoCE's headers, and full-MTU segments are there; pcap_icrc finds every ICRC
#   right and no frame marked refused; the outbound frames are the device's tx_packets
#   and the inbound ones its rx_packets. A path that cannot be created fails the QP.
#   Mode drops: ibv_rc_pingpong -s 65536 -n 50 with the server's faulty wire corrupting
#   2% of what it receives (URNIC_FAULT), and a 5- and an 8-byte datagram sent to its
#   port. The server's file: for every drop_* counter, as many frames commented with
#   its name as it counted, drop_bad_icrc (the engine's), drop_bad_header (the 5 bytes)
#   and drop_unknown_qp (the 8, refused by the transport) among them; pcap_icrc
#   --drops: a bad ICRC only on refused frames and
#   every frame refused for its ICRC with a bad one; the frames not refused dissect
#   cleanly; the directions add up to tx_packets and rx_packets as above, the 8-byte
#   datagram, which rx_packets does not count, besides.
#   Usage: trace.sh PCAP_ICRC URNIC gso|drops  (environment: LIBDIR, SANITIZE, CC, SLOT)
PCAP_ICRC=${1:?usage: trace.sh PCAP_ICRC URNIC gso|drops}
URNIC=${2:?usage: trace.sh PCAP_ICRC URNIC gso|drops}
MODE=${3:?usage: trace.sh PCAP_ICRC URNIC gso|drops}
. "$(dirname "$0")/common.sh"
sys_setup "$@"
# GSO sends and their segmentation are the socket path's (no lanes).
lanes_off
command -v tshark >/dev/null || fail "tshark not found"
[ -x "$PCAP_ICRC" ] || fail "$PCAP_ICRC is not an executable"
SPCAP=$SYS_WORK/server.pcapng
CPCAP=$SYS_WORK/client.pcapng
SLOG=$SYS_WORK/server.log
CLOG=$SYS_WORK/client.log
WIRESHARK_CONFIG_DIR=$SYS_WORK/wireshark
export WIRESHARK_CONFIG_DIR
mkdir -p "$WIRESHARK_CONFIG_DIR" || fail "mkdir $WIRESHARK_CONFIG_DIR"

# run_pair SERVER_ENV TOOL ARGS...: the server under `urnic trace` (its environment
# plus SERVER_ENV, words), the client with URNIC_PCAP, to completion.
run_pair() {
	senv=$1
	shift
	# SAN_ENV and senv are lists of words without blanks inside them: split on purpose.
	# shellcheck disable=SC2086
	env URNIC_PRINT_COUNTERS=1 $SAN_ENV $senv "$URNIC" trace --addr "$SRV_ADDR" -w "$SPCAP" \
		-- "$@" -p "$PP_PORT" >"$SLOG" 2>"$SLOG.err" &
	spid=$!
	track $spid
	wait_listen $spid "$PP_PORT" 10
	case $? in
	1) cat "$SLOG" "$SLOG.err"; fail "$1 server exited before listening" ;;
	2) fail "$1 server not listening on TCP $PP_PORT after 10 s" ;;
	esac
	# The server's device is bound (its QP exists before it listens): datagrams it
	# must refuse, from lo's 127.0.0.1. Five bytes are too short for a BTH (the
	# engine's drop_bad_header); eight name a DestQP ("age") of a process that is not
	# on the address (share.h: the transport's drop_unknown_qp).
	if [ "$MODE" = drops ]; then
		bash -c "printf 'junk\\n' >/dev/udp/$SRV_ADDR/4791;
			printf 'garbage\\n' >/dev/udp/$SRV_ADDR/4791" ||
			fail "cannot send to $SRV_ADDR:4791"
	fi
	(
		URNIC_PCAP=$CPCAP
		export URNIC_PCAP
		ibv "$CLI_ADDR" "$@" -p "$PP_PORT" "$SRV_ADDR"
	) >"$CLOG" 2>"$CLOG.err" &
	cpid=$!
	track $cpid
	wait_exit $cpid 120
	crc=$?
	wait_exit $spid 20
	src=$?
	if [ $crc -ne 0 ] || [ $src -ne 0 ]; then
		say "--- server"; cat "$SLOG" "$SLOG.err"; say "--- client"; cat "$CLOG" "$CLOG.err"
		fail "$*: client exited $crc, server $src"
	fi
	grep -q "^urnic trace: capturing to $SPCAP\$" "$SLOG.err" ||
		{ cat "$SLOG.err"; fail "urnic trace did not name $SPCAP"; }
}

TS="$CAP_TSHARK -r"

# directions PCAP LOG [EXTRA]: outbound frames are the log's tx_packets, inbound its
# rx_packets (what reached the engine) and EXTRA refused before (default 0).
directions() {
	$TS "$1" -T fields -e frame.packet_flags_direction >"$SYS_WORK/dir" 2>/dev/null ||
		fail "tshark cannot read $1"
	out=$(grep -c '^0x0*2$' "$SYS_WORK/dir")
	in=$(grep -c '^0x0*1$' "$SYS_WORK/dir")
	tx=$(counter "$2" tx_packets)
	rx=$(($(counter "$2" rx_packets) + ${3:-0}))
	say "$(basename "$1"): $out outbound, $in inbound frames; tx_packets $tx," \
		"rx_packets + ${3:-0} $rx"
	[ "$out" = "$tx" ] || fail "$(basename "$1"): $out outbound frames, $tx tx_packets"
	[ "$in" = "$rx" ] || fail "$(basename "$1"): $in inbound frames, $rx rx_packets + ${3:-0}"
}

# dissects PCAP FILTER: every frame FILTER keeps is RoCEv2 with a BTH opcode, none
# malformed or with an expert warning.
dissects() {
	frames=$($TS "$1" -Y "$2" 2>/dev/null | wc -l)
	ib=$($TS "$1" -Y "($2) && infiniband.bth.opcode" 2>/dev/null | wc -l)
	$TS "$1" -Y "($2) && (_ws.malformed || _ws.expert.severity >= warning)" \
		>"$SYS_WORK/malformed.log" 2>/dev/null
	bad=$(wc -l <"$SYS_WORK/malformed.log")
	say "$(basename "$1"): $frames frames ($2), $ib with a BTH opcode, $bad malformed"
	[ "$frames" -gt 0 ] || fail "$(basename "$1"): no frames"
	[ "$ib" = "$frames" ] || fail "$(basename "$1"): only $ib of $frames frames are RoCEv2"
	[ "$bad" = 0 ] || { head -20 "$SYS_WORK/malformed.log"; fail "$bad malformed frames"; }
}

# reasons PCAP LOG: for every drop_* counter the log shows, as many frames commented
# with its name, and no other comment (a frame may name several).
reasons() {
	$TS "$1" -Y frame.comment -T fields -e frame.comment >"$SYS_WORK/comments" 2>/dev/null ||
		fail "tshark cannot read $1"
	tr ' ' '\n' <"$SYS_WORK/comments" | grep . | sort | uniq -c >"$SYS_WORK/reasons"
	say "$(basename "$1"): refused frames by comment:"
	sed 's/^/    /' "$SYS_WORK/reasons"
	awk '$1 ~ /^drop_/ && $1 != "drop_tx_failed" && $2 ~ /^[0-9]+$/ && $2 > 0 { print $1, $2 }' \
		"$2" | sort -u >"$SYS_WORK/counted"
	while read -r name n; do
		got=$(awk -v c="$name" '$2 == c { print $1 }' "$SYS_WORK/reasons")
		[ "${got:-0}" = "$n" ] || fail "$name: counted $n, ${got:-0} frames commented so"
	done <"$SYS_WORK/counted"
	while read -r n name; do
		grep -q "^$name " "$SYS_WORK/counted" || fail "$n frames commented $name, not counted"
	done <"$SYS_WORK/reasons"
}

if [ "$MODE" = gso ]; then
	command -v ib_write_bw >/dev/null || fail "ib_write_bw not found (perftest)"
	# A capture that cannot be written fails the device's start, with the path said.
	(
		URNIC_PCAP=/nonexistent/x.pcapng
		export URNIC_PCAP
		ibv "$SRV_ADDR" ibv_rc_pingpong -g 1 -p "$PP_PORT"
	) >"$SYS_WORK/nopath.log" 2>&1
	grep -q "cannot capture to /nonexistent/x.pcapng" "$SYS_WORK/nopath.log" ||
		{ cat "$SYS_WORK/nopath.log"; fail "no error for a capture path that cannot be made"; }

	run_pair "" ib_write_bw -x 1 -F -s 65536 -n 200
	sends=$(counter "$CLOG.err" tx_sends)
	tx=$(counter "$CLOG.err" tx_packets)
	say "client: $tx packets in $sends sends"
	[ $((sends * 2)) -lt "$tx" ] || fail "no GSO batching: $tx packets in $sends sends"
	for f in "$SPCAP" "$CPCAP"; do
		dissects "$f" "frame"
		# IPv4 20, UDP 8, BTH 12, RETH 16 (or AETH 4), ICRC 4 around at most 4096.
		long=$($TS "$f" -Y 'ip.len > 4156' 2>/dev/null | wc -l)
		full=$($TS "$f" -Y 'ip.len >= 4136' 2>/dev/null | wc -l)
		say "$(basename "$f"): $long datagrams over 4156 bytes, $full of a full MTU"
		[ "$long" = 0 ] || fail "$(basename "$f"): $long datagrams longer than an MTU"
		[ "$full" -gt 0 ] || fail "$(basename "$f"): no full-MTU segment"
	done
	# A late ACK may find its QP gone (drop_unknown_qp): perftest tears down without
	# a handshake, as ibv_rc_pingpong does (common.sh, pp_pair).
	reasons "$SPCAP" "$SLOG.err"
	reasons "$CPCAP" "$CLOG.err"
	"$PCAP_ICRC" --drops "$SPCAP" "$CPCAP" || fail "pcap_icrc: bad ICRCs in the captures"
	directions "$SPCAP" "$SLOG.err"
	directions "$CPCAP" "$CLOG.err"
	say ok
	exit 0
fi

[ "$MODE" = drops ] || fail "unknown mode $MODE"
command -v bash >/dev/null || fail "bash not found (its /dev/udp sends the datagrams)"
command -v ibv_rc_pingpong >/dev/null || fail "ibv_rc_pingpong not found (ibverbs-utils)"
run_pair "URNIC_FAULT=corrupt=2%,seed=5" ibv_rc_pingpong -g 1 -s 65536 -n 50
reasons "$SPCAP" "$SLOG.err"
for need in drop_bad_icrc drop_bad_header drop_unknown_qp; do
	grep -q "^$need " "$SYS_WORK/counted" || fail "no $need"
done
for want in 13:drop_bad_header 16:drop_unknown_qp; do
	n=$($TS "$SPCAP" -Y "udp.length == ${want%:*} && frame.comment == \"${want#*:}\"" \
		2>/dev/null | wc -l)
	[ "$n" = 1 ] || fail "the $((${want%:*} - 8))-byte datagram is not in the capture as ${want#*:}"
done
"$PCAP_ICRC" --drops "$SPCAP" "$CPCAP" || fail "pcap_icrc: ICRCs and drop comments disagree"
dissects "$SPCAP" "!frame.comment"
dissects "$CPCAP" "!frame.comment"
# The 8-byte datagram never reached the engine: the transport refused it.
directions "$SPCAP" "$SLOG.err" 1
directions "$CPCAP" "$CLOG.err"
say ok
