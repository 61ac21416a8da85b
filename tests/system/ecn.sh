#!/bin/sh
# SPDX-License-Identifier: MIT
# ecn.sh - DCQCN over the UDP socket (URNIC_CONGESTION=dcqcn, src/engine/roce/cc.h), with
# a congested queue's ECN marks made by nftables:
#
#   private namespace, lo (no lanes: URNIC_LOCAL=0):
#     127.0.0.3 (client) --- ib_write_bw -s 65536 -n 500 --->  127.0.0.2 (server)
#     nft output: udp dport 4791, ECN ECT(0): one packet in MARK_EVERY set to CE
#
# On: every RoCEv2 packet leaves ECT(0) but the CNPs (DSCP 48, not ECN-capable); a
# CE-marked one draws a CNP (BTH opcode 0x81) to its sender's QP, at most one per QP per
# interval, which cuts the sender's rate (cc_rate_cuts). The capture, taken on lo after
# the marking, shows it all; tshark dissects it with no malformed frame and pcap_icrc
# finds every ICRC right, TOS masked as IBTA A17.3.3 says. Off (the default): nothing
# leaves ECN-capable, so nothing is marked, and no CNP is sent. Then, mid-run, `urnic
# counters --qp` shows the client QP's rate and alpha. UDP GSO is off, as in
# capture.sh: on lo a GSO send is captured (and marked) as one super-datagram.
#   Usage: ecn.sh PCAP_ICRC  (environment: LIBDIR, SANITIZE, CC, SLOT: common.sh)
. "$(dirname "$0")/common.sh"
sys_setup "$@"
PCAP_ICRC=${1:?usage: ecn.sh PATH_TO_pcap_icrc}
[ -x "$PCAP_ICRC" ] || fail "$PCAP_ICRC is not an executable"
lanes_off
URNIC_NO_GSO=1
export URNIC_NO_GSO
[ "$URNIC_SYS_NETNS" = private ] ||
	skip "no private network namespace: will not add nftables rules to the host"
command -v nft >/dev/null || fail "nft not found (nftables)"
command -v ib_write_bw >/dev/null || fail "ib_write_bw not found (perftest)"
MARK_EVERY=200

if ! nft add table inet urnic_ecn ||
	! nft add chain inet urnic_ecn c '{ type filter hook output priority 0; policy accept; }' ||
	! nft add rule inet urnic_ecn c udp dport 4791 ip ecn ect0 \
		numgen inc mod $MARK_EVERY == 0 ip ecn set ce counter; then
	fail "cannot install the nftables ECN marking rule"
fi
marked() {
	nft list chain inet urnic_ecn c |
		awk '/counter packets/ { for (i = 1; i < NF; i++) if ($i == "packets") n = $(i + 1) }
			END { print n + 0 }'
}

# bw TAG OPTS ENV... : ib_write_bw -s 65536 OPTS (-n N or -D SECONDS) between the two
# addresses, each side's counters in $SYS_WORK/TAG.{server,client}.log. With BW_DURING
# set, that command runs with the client's pid 2 s into the run.
bw() {
	_tag=$1
	_opts=$2
	shift 2
	case $_opts in
	-n\ *) _iters=${_opts#-n } ;;
	*) _iters='[0-9]+' ;;
	esac
	_s=$SYS_WORK/$_tag.server.log
	_c=$SYS_WORK/$_tag.client.log
	# shellcheck disable=SC2086 # OPTS' words
	(ibv "$SRV_ADDR" env "$@" ib_write_bw -x 1 -F -s 65536 $_opts -p "$PP_PORT") >"$_s" 2>&1 &
	_spid=$!
	track $_spid
	wait_listen $_spid "$PP_PORT" 10 || { cat "$_s"; fail "$_tag: server not listening"; }
	# shellcheck disable=SC2086
	(ibv "$CLI_ADDR" env "$@" ib_write_bw -x 1 -F -s 65536 $_opts -p "$PP_PORT" \
		"$SRV_ADDR") >"$_c" 2>&1 &
	_cpid=$!
	track $_cpid
	if [ -n "${BW_DURING:-}" ]; then
		sleep 2
		$BW_DURING $_cpid
	fi
	wait_exit $_cpid 120 || { cat "$_s" "$_c"; fail "$_tag: client failed"; }
	wait_exit $_spid 20 || { cat "$_s" "$_c"; fail "$_tag: server failed"; }
	grep -Eq "^ *65536 +$_iters " "$_c" || { cat "$_c"; fail "$_tag: no result line"; }
	if grep -q -e 'AddressSanitizer' -e 'runtime error:' "$_s" "$_c"; then
		cat "$_s" "$_c"
		fail "$_tag: sanitizer report"
	fi
}
sum() { echo $(($(counter "$SYS_WORK/$1.server.log" "$2") + $(counter "$SYS_WORK/$1.client.log" "$2"))); }

# Off: nothing ECN-capable, nothing marked, no CNP.
bw off "-n 500" URNIC_CONGESTION=none
[ "$(marked)" = 0 ] || fail "off: $(marked) packets were ECN-capable and marked"
for c in rx_ecn_ce tx_cnp rx_cnp rx_cnp_cc_off cc_rate_cuts; do
	[ "$(sum off $c)" = 0 ] || fail "off: $c = $(sum off $c)"
done
say "off: nothing marked, no CNP"

# On, captured after the marking.
PCAP=$SYS_WORK/ecn.pcap
cap_start "$PCAP" "udp port 4791"
bw on "-n 500" URNIC_CONGESTION=dcqcn
cap_stop
m=$(marked)
ce=$(sum on rx_ecn_ce)
cnps=$(sum on tx_cnp)
say "on: nft marked $m packets CE; received CE $ce; CNPs sent $cnps, received" \
	"$(sum on rx_cnp); client: cuts $(counter "$SYS_WORK/on.client.log" cc_rate_cuts)," \
	"increases $(counter "$SYS_WORK/on.client.log" cc_rate_increases)," \
	"waits $(counter "$SYS_WORK/on.client.log" cc_paced);" \
	"$(grep -E '^ *65536 +500 ' "$SYS_WORK/on.client.log" | awk '{ print $4 }') MB/s" \
	"(off: $(grep -E '^ *65536 +500 ' "$SYS_WORK/off.client.log" | awk '{ print $4 }'))"
[ "$m" -gt 0 ] || fail "on: nothing was ECN-capable to mark"
[ "$ce" -gt 0 ] && [ "$ce" -le "$m" ] || fail "on: received $ce CE marks of $m"
[ "$cnps" -gt 0 ] && [ "$cnps" -le "$ce" ] || fail "on: $cnps CNPs for $ce CE marks"
[ "$(sum on rx_cnp)" -gt 0 ] && [ "$(sum on rx_cnp)" -le "$cnps" ] ||
	fail "on: $(sum on rx_cnp) CNPs received of $cnps sent"
[ "$(counter "$SYS_WORK/on.client.log" cc_rate_cuts)" -gt 0 ] ||
	fail "on: the client's rate was never cut"
for c in rx_cnp_cc_off drop_bad_header drop_bad_icrc drop_opcode_qp_type; do
	[ "$(sum on $c)" = 0 ] || fail "on: $c = $(sum on $c)"
done

# The wire: CNPs as A17.9.3 has them, everything else ECT(0) or marked CE. Wireshark 4.0
# names the InfiniBand CNP (0x80) only: RoCEv2's 0x81 is "Unknown (129)", its BTH byte 4
# (FECN, BECN) a reserved byte, the rest "vendor specific" data; none of it malformed.
T="$CAP_TSHARK -r $PCAP"
# shellcheck disable=SC2086 # CAP_TSHARK's words
$T -Y _ws.malformed -T fields -e frame.number >"$SYS_WORK/malformed" ||
	fail "tshark could not read the capture"
[ ! -s "$SYS_WORK/malformed" ] || fail "tshark: malformed frames $(head -5 "$SYS_WORK/malformed")"
# shellcheck disable=SC2086
$T -Y 'udp.dstport == 4791' -T fields -e infiniband.bth.opcode -e ip.dsfield.dscp \
	-e ip.dsfield.ecn -e infiniband.reserved -e infiniband.bth.psn >"$SYS_WORK/fields" ||
	fail "tshark could not list the capture's fields"
awk -v want="$cnps" '
	$1 == 129 { n++; if ($2 != 48 || $3 != 0 || $4 != "40" || $5 != 0) bad++ }
	$1 != 129 { if ($3 != 2 && $3 != 3) notect++; if ($3 == 3) ce++ }
	END {
		printf "capture: %d CNPs (%d sent), %d CE-marked\n", n, want, ce
		exit !(n == want && !bad && !notect && ce > 0)
	}' "$SYS_WORK/fields" ||
	fail "the capture's CNPs or ECN fields are not as sent ($SYS_WORK/fields)"
"$PCAP_ICRC" "$PCAP" || fail "pcap_icrc: bad ICRCs in the capture"

# Live: `urnic counters --qp` of the client shows its QP's DCQCN state mid-run.
if [ -n "${URNIC_TOOL:-}" ] && [ -x "$URNIC_TOOL" ]; then
	live_qp() {
		"$URNIC_TOOL" counters --qp "$1" >"$SYS_WORK/live.qp" 2>&1 ||
			{ cat "$SYS_WORK/live.qp"; fail "live: urnic counters --qp $1 failed"; }
	}
	BW_DURING=live_qp
	bw live "-D 3" URNIC_CONGESTION=dcqcn
	BW_DURING=
	# The QP's lines: its rate (Mb/s, up to the port's 100000; set from its first
	# CNP on), its cuts so far; alpha (printed when not 0: it decays between CNPs).
	qpv() { awk -v n="$1" '/^  QP / { qp = 1 } qp && $1 == n { print $2; exit }' \
		"$SYS_WORK/live.qp"; }
	rate=$(qpv cc_rate_mbps)
	say "live: the client's QP at ${rate:-?} Mb/s after $(qpv cc_rate_cuts) cuts," \
		"alpha $(qpv cc_alpha | grep . || echo 0)/1024"
	[ -n "$rate" ] && [ "$rate" -gt 0 ] && [ "$rate" -le 100000 ] ||
		{ cat "$SYS_WORK/live.qp"; fail "live: no DCQCN rate on the client's QP"; }
	[ "$(qpv cc_rate_cuts)" -gt 0 ] ||
		{ cat "$SYS_WORK/live.qp"; fail "live: no cut counted on the client's QP"; }
fi
say ok
