#!/bin/sh
# SPDX-License-Identifier: MIT
# uet_perftest.sh - Debian's ibv_rc_pingpong and perftest over two UET devices: RC QPs
# carried by UE 1.0 PDS (RUD) and SES on UDP 4793 (engine/uet/uet_rc.h), connected by
# the tools' own TCP exchange (no rdma_cm on UET).
#
#   private namespace (or the host's lo), lo:
#     uet:127.0.81.1 (server) <--- UDP 4793, sources 0xd000..0xd01f ---> uet:127.0.81.2 (client)
#   - ibv_rc_pingpong (-c: the server checks the payload where the tool can)
#   - ib_write_bw, ib_send_bw, ib_read_bw with -s 65536 -n 2000, and with -s 8
#   - every run: both sides exit 0 with nonzero figures, ACK_CCs went both ways (the
#     client's uet_acks_rcvd > 0: the packets went over UET), no delivery context failed
# Environment: LIBDIR, SANITIZE, CC, SLOT (common.sh).
. "$(dirname "$0")/common.sh"
sys_setup "$@"
SRV_ADDR=127.0.81.1
CLI_ADDR=127.0.81.2

# ibv ADDR CMD ARGS...: common.sh's, on the UET device at ADDR (ADDR stays the plain IP
# the tools connect their TCP exchange to).
ibv() {
	_addr=$1
	shift
	_extra=
	[ "$_addr" = "$SRV_ADDR" ] && _extra=$SRV_ENV
	# shellcheck disable=SC2086 # SAN_ENV and _extra are lists of assignments
	exec env LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		URNIC_ADDR="uet:$_addr" URNIC_PRINT_COUNTERS=1 $SAN_ENV $_extra "$@"
}
SRV_ENV=

# uet_check SERVER_LOG CLIENT_LOG: the run went over UET (each side sent or received
# ACK_CCs; the client, which sends requests in every tool, received some) and lost no
# context.
uet_check() {
	_acks=$(counter "$2" uet_acks_rcvd)
	[ "$_acks" -gt 0 ] || fail "uet_acks_rcvd = $_acks in $(basename "$2")"
	for _log in "$@"; do
		_acks=$(($(counter "$_log" uet_acks_rcvd) + $(counter "$_log" uet_acks_sent)))
		[ "$_acks" -gt 0 ] || fail "no ACK_CC sent or received in $(basename "$_log")"
		for _c in uet_failed uet_drop_bad_header uet_drop_bad_ses uet_drop_unknown_pdc; do
			_v=$(counter "$_log" $_c)
			[ "$_v" = 0 ] || fail "$_c = $_v in $(basename "$_log")"
		done
	done
}

pp_run pingpong 120 -n 1000
uet_check "$SYS_WORK/pingpong.server.log" "$SYS_WORK/pingpong.client.log"
pp_run pingpong_64k 120 -s 65536 -n 200
uet_check "$SYS_WORK/pingpong_64k.server.log" "$SYS_WORK/pingpong_64k.client.log"

# perf TAG TOOL OPTS...: server and client to completion, figures checked.
perf() {
	_tag=$1
	_tool=$2
	shift 2
	command -v "$_tool" >/dev/null || fail "$_tool not found (perftest)"
	_slog=$SYS_WORK/$_tag.server.log
	_clog=$SYS_WORK/$_tag.client.log
	(ibv "$SRV_ADDR" "$_tool" -x 1 -F -p "$PP_PORT" "$@") >"$_slog" 2>"$_slog.err" &
	_spid=$!
	track $_spid
	wait_listen $_spid "$PP_PORT" 10
	case $? in
	1) cat "$_slog" "$_slog.err"; fail "$_tag: server exited before listening" ;;
	2) fail "$_tag: server not listening on TCP $PP_PORT after 10 s" ;;
	esac
	(ibv "$CLI_ADDR" "$_tool" -x 1 -F -p "$PP_PORT" "$@" "$SRV_ADDR") >"$_clog" 2>"$_clog.err" &
	_cpid=$!
	track $_cpid
	wait_exit $_cpid 120
	_crc=$?
	wait_exit $_spid 20
	_src=$?
	if [ $_crc -ne 0 ] || [ $_src -ne 0 ]; then
		say "--- server"; cat "$_slog" "$_slog.err"; say "--- client"; cat "$_clog" "$_clog.err"
		fail "$_tag: client exited $_crc, server $_src"
	fi
	_res=$(awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+/ { print }' "$_clog")
	[ -n "$_res" ] || { cat "$_clog"; fail "$_tag: no result line"; }
	echo "$_res" | awk '{ for (i = 3; i <= NF; i++) if ($i !~ /^[0-9.]+$/ || $i + 0 == 0) bad = 1 }
		END { exit bad }' || { cat "$_clog"; fail "$_tag: a zero or non-numeric figure"; }
	for _log in "$_slog.err" "$_clog.err"; do
		for _c in retry_exceeded rnr_retry_exceeded cq_overflow; do
			_v=$(counter "$_log" $_c)
			[ "$_v" = 0 ] || fail "$_tag: $_c = $_v in $(basename "$_log")"
		done
	done
	uet_check "$_slog.err" "$_clog.err"
	say "$_tag: ok"
	echo "$_res" | sed 's/^/    /'
}

for tool in ib_write_bw ib_send_bw ib_read_bw; do
	perf "${tool}_64k" $tool -s 65536 -n 2000
	perf "${tool}_8" $tool -s 8 -n 5000
done

# A capture of a UET transfer (the server's URNIC_PCAP, GSO sends cut into their
# datagrams) as Wireshark sees it with urnic's dissector: every frame UET, requests,
# ACK_CCs and more than one entropy value, nothing malformed and no expert finding.
if command -v tshark >/dev/null; then
	_pcap=$SYS_WORK/uet.pcap
	_lua=$(dirname "$0")/../../tools/wireshark/uet.lua
	SRV_ENV="URNIC_PCAP=$_pcap"
	perf pcap_write ib_write_bw -s 65536 -n 100
	_f=$(ls "$_pcap"* | head -1)
	_t() { tshark -X lua_script:"$_lua" -r "$_f" "$@" 2>/dev/null; }
	_all=$(_t | wc -l)
	_bad=$(_t -Y '_ws.malformed || _ws.expert' | wc -l)
	_req=$(_t -Y 'uet.pds.type == 2' | wc -l)
	_ack=$(_t -Y 'uet.pds.type == 8' | wc -l)
	_evs=$(_t -Y 'uet.pds.type == 2' -T fields -e udp.srcport | sort -u | wc -l)
	[ "$_all" -gt 1600 ] && [ "$_bad" = 0 ] && [ "$_req" -ge 1600 ] && [ "$_ack" -gt 0 ] &&
		[ "$_evs" -gt 1 ] ||
		fail "capture: $_all frames, $_bad malformed or flagged, $_req requests, $_ack ACK_CC, $_evs entropy values"
	say "capture: $_all frames dissected as UET ($_req requests, $_ack ACK_CC, $_evs entropy values), none malformed"
fi
say ok
